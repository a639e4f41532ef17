//! Slurm accounting: what `sacct` knows about a finished job, turned into a `jobs` row.
//!
//! Pure core: [`parse_json`] reads `sacct --json` (the fields jobsight uses, with their units on
//! Slurm 22.05: epoch seconds, `time.limit` in minutes, memory in MB; the steps' CPU time, memory
//! and energy are read by [`super::sacct_steps`], leniently), [`parse_exit_codes`] reads
//! the text exit codes (the JSON one says SUCCESS for failed jobs in 22.05), and [`select`] picks
//! the record that belongs to a spool record. Job ids are not unique in the accounting database: after
//! a controller state reset, or with several clusters on one slurmdbd, `sacct -j 2` returns every
//! job 2 and also the tasks of array 2. [`select`] keeps the records whose raw id and cluster match
//! and that were submitted before the spool record was enqueued, takes the latest, and says whether
//! it has settled (a final state and an end time) or must be asked again later.
//!
//! Shell: [`query`] runs `sacct` for one job ([`super::sacct_neighbours`] asks it once more, for
//! the jobs that shared the job's nodes). The per-job ingest step ([`super::per_job`]) calls
//! it for every claimed record, waits with backoff while the run has not settled, and gives a
//! record up (into `failed/`, with its reason) after `ingest.give_up_after_s`.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::Value;
use slurm_hooks::SpoolRecord;

use super::JobRow;
use super::sacct_steps::{self, StepAccounting};
use super::slurm_json;
use jobsight_base::command::CommandError;
use jobsight_base::slurm_text::is_final_state as is_final;

#[derive(Debug, thiserror::Error)]
pub enum SacctError {
    /// sacct could not run, failed or did not answer in time: ask again later.
    #[error("sacct for job {job_id}: {reason}")]
    Failed { job_id: u64, reason: String },
    /// The answer was larger than any job's can be: set the job aside.
    #[error("sacct for job {job_id}: {reason}")]
    TooLarge { job_id: u64, reason: String },
    /// The answer could not be read at all (not JSON, no `jobs` list, too large).
    #[error("sacct --json output not understood: {0}")]
    Json(String),
    #[error("sacct's answer for job {job_id} not understood: {reason}")]
    Text { job_id: u64, reason: String },
}

/// One job run as the accounting database records it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Accounting {
    pub job_id: u64,
    pub cluster: Option<String>,
    pub name: Option<String>,
    pub user: Option<String>,
    pub group: Option<String>,
    pub account: Option<String>,
    pub partition: Option<String>,
    pub qos: Option<String>,
    pub state: Option<String>,
    pub nodes: Option<String>,
    pub num_nodes: Option<u32>,
    pub cpus: Option<u32>,
    pub gpus: Option<u32>,
    pub req_mem_mb: Option<u64>,
    pub time_limit_s: Option<u64>,
    pub submit: Option<DateTime<Utc>>,
    pub start: Option<DateTime<Utc>>,
    pub end: Option<DateTime<Utc>>,
    pub array_job_id: Option<u64>,
    pub array_task_id: Option<u32>,
    /// A heterogeneous job's component: its first component's id and its offset.
    pub het_job_id: Option<u64>,
    pub het_job_offset: Option<u32>,
    /// The run's steps; `None` when the answer has no `steps` list.
    pub steps: Option<Vec<StepAccounting>>,
    /// The energy the job consumed (its allocated TRES `energy`), joules, where measured.
    pub energy_j: Option<f64>,
    /// The exit code and signal of the JSON answer, where the release prints them right (from
    /// 23.02; 22.05 says SUCCESS for failed jobs): used when the text answer has no line.
    pub exit_json: Option<(i32, i32)>,
    /// What could not be read and why (a field of a release this reader does not know, steps
    /// left out), for the job's note.
    pub notes: Vec<String>,
}

/// The largest `sacct --json` answer read for one job id: about 20,000 steps as 25.11 prints
/// them (3.3 KB each). A larger answer is set aside with its size as the reason, so a runaway
/// or hostile answer cannot take the pipeline's memory.
pub const MAX_ANSWER_BYTES: usize = 64 << 20;

/// What one `sacct --json` answer held: the records read, and those set aside.
#[derive(Debug, Default)]
pub struct Answer {
    pub records: Vec<Accounting>,
    /// Records that could not be read: the job id where it could be read, and why (naming the
    /// job and the field).
    pub set_aside: Vec<(Option<u64>, String)>,
}

/// Epoch seconds to a time; Slurm writes 0 for "not yet". A time beyond what a date can hold is
/// an error (the caller names the job), not "not yet".
fn epoch(value: &Value) -> Result<Option<DateTime<Utc>>, String> {
    match slurm_json::number(value)?.value().filter(|&s| s > 0) {
        None => Ok(None),
        Some(s) => i64::try_from(s)
            .ok()
            .and_then(|s| DateTime::from_timestamp(s, 0))
            .map(Some)
            .ok_or_else(|| format!("{s} is out of range")),
    }
}

/// Parses `sacct --json` output of any release (see [`slurm_json`]). An answer that is not JSON,
/// too large or without a `jobs` list is an error; within it, a record that cannot be read is set
/// aside with the reason and the others are kept.
pub fn parse_json(bytes: &[u8]) -> Result<Answer, SacctError> {
    if bytes.len() > MAX_ANSWER_BYTES {
        return Err(SacctError::Json(format!(
            "the answer is {} bytes, over the {} MiB a job's answer may have",
            bytes.len(),
            MAX_ANSWER_BYTES >> 20
        )));
    }
    let root: Value = serde_json::from_slice(bytes).map_err(|e| SacctError::Json(e.to_string()))?;
    let jobs = match root.get("jobs") {
        Some(Value::Array(jobs)) => jobs,
        Some(other) => {
            return Err(SacctError::Json(format!(
                "`jobs` is {} instead of a list",
                slurm_json::kind(other)
            )));
        }
        None => {
            let errors = root.get("errors").map(Value::to_string).unwrap_or_default();
            return Err(SacctError::Json(format!(
                "no jobs, errors: {}",
                jobsight_base::text::printable(&errors.chars().take(500).collect::<String>())
            )));
        }
    };
    let release_note = slurm_json::unknown_parser_note(&root);
    // 22.05 (v0.0.38) and 23.02 (v0.0.39) print SUCCESS and 0 for a job that exited 1 (v0.0.39
    // tests WIFEXITED without the status); from v0.0.40 the JSON's exit code is the job's.
    let exit_codes_valid = slurm_json::parser_version(&root)
        .is_some_and(|v| !matches!(v.as_str(), "v0.0.37" | "v0.0.38" | "v0.0.39"));
    let mut answer = Answer::default();
    for (i, job) in jobs.iter().enumerate() {
        let fields = Fields {
            job,
            job_id: 0,
            lenient: release_note.is_some(),
            notes: release_note.iter().cloned().collect(),
        };
        match accounting(fields, exit_codes_valid) {
            Ok(record) => answer.records.push(record),
            Err((id, reason)) => {
                let reason = match id {
                    Some(_) => reason,
                    None => format!("entry {i} of the answer: {reason}"),
                };
                answer.set_aside.push((id, reason));
            }
        }
    }
    Ok(answer)
}

/// The fields of one record, read through [`slurm_json`]. A field that holds a shape no release
/// prints makes the record an error naming the job and the field; in an answer of a release this
/// reader does not know (`lenient`), it is read as unknown and named in the record's notes
/// instead, except for the fields without which a record means nothing (id, state, times).
struct Fields<'a> {
    job: &'a Value,
    job_id: u64,
    lenient: bool,
    notes: Vec<String>,
}

impl Fields<'_> {
    fn at(&self, path: &str) -> &Value {
        self.job.pointer(path).unwrap_or(&Value::Null)
    }

    fn error(&self, path: &str, why: &str) -> String {
        format!("job {}: {} {why}", self.job_id, field_name(path))
    }

    /// `path` read by `read`; see [`Fields`] for what happens when it cannot be.
    fn read<T>(
        &mut self,
        path: &str,
        read: impl Fn(&Value) -> Result<Option<T>, String>,
    ) -> Result<Option<T>, String> {
        match read(self.at(path)) {
            Ok(value) => Ok(value),
            Err(why) if self.lenient => {
                let note = format!("{} not understood ({why})", field_name(path));
                self.notes.push(note);
                Ok(None)
            }
            Err(why) => Err(self.error(path, &why)),
        }
    }

    /// As [`Fields::read`], but an error in any release.
    fn essential<T>(
        &self,
        path: &str,
        read: impl Fn(&Value) -> Result<Option<T>, String>,
    ) -> Result<Option<T>, String> {
        read(self.at(path)).map_err(|why| self.error(path, &why))
    }

    fn text(&mut self, path: &str) -> Result<Option<String>, String> {
        self.read(path, slurm_json::text)
    }
}

/// `/time/limit` as a person reads it: `time.limit`.
fn field_name(path: &str) -> String {
    path.trim_start_matches('/').replace('/', ".")
}

/// The figures of one `tres.allocated` entry list: (type, name, count).
fn allocated_tres(list: &Value) -> Result<Vec<(String, Option<String>, Value)>, String> {
    let items = match list {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        other => {
            return Err(format!(
                "{} where a TRES list goes",
                slurm_json::kind(other)
            ));
        }
    };
    items
        .iter()
        .map(|item| {
            let kind = slurm_json::text(item.get("type").unwrap_or(&Value::Null))?
                .ok_or("a TRES entry without its type")?;
            let name = slurm_json::text(item.get("name").unwrap_or(&Value::Null))?;
            Ok((
                kind,
                name,
                item.get("count").cloned().unwrap_or(Value::Null),
            ))
        })
        .collect()
}

/// One record of the answer. A number that does not fit where it goes (a count beyond 32 bits, a
/// time limit whose seconds overflow) makes the record an error naming the job and the field,
/// never a different number. The error carries the job's id where it could be read.
fn accounting(
    mut f: Fields<'_>,
    exit_codes_valid: bool,
) -> Result<Accounting, (Option<u64>, String)> {
    let job_id = match slurm_json::number(f.at("/job_id")) {
        Ok(slurm_json::Number::Value(id)) => id,
        Ok(_) => return Err((None, "no job_id".into())),
        Err(why) => return Err((None, format!("job_id {why}"))),
    };
    f.job_id = job_id;
    read_record(f, job_id, exit_codes_valid).map_err(|reason| (Some(job_id), reason))
}

fn read_record(
    mut f: Fields<'_>,
    job_id: u64,
    exit_codes_valid: bool,
) -> Result<Accounting, String> {
    let tres = f
        .read("/tres/allocated", |v| allocated_tres(v).map(Some))?
        .unwrap_or_default();
    let allocated = |f: &Fields, kind: &str, name: Option<&str>| -> Result<Option<u64>, String> {
        let Some((_, _, count)) = tres
            .iter()
            .find(|(k, n, _)| k == kind && (name.is_none() || n.as_deref() == name))
        else {
            return Ok(None);
        };
        slurm_json::number(count)
            .map(slurm_json::Number::value)
            .map_err(|why| f.error(&format!("/tres/allocated/{kind}"), &why))
    };
    let count32 = |f: &Fields, kind: &str, name: Option<&str>| -> Result<Option<u32>, String> {
        allocated(f, kind, name)?
            .map(|c| {
                u32::try_from(c).map_err(|_| {
                    f.error(
                        &format!("/tres/allocated/{kind}"),
                        &format!("{c} is out of range"),
                    )
                })
            })
            .transpose()
    };
    // Not through `allocated`: energy is a measurement, and a wrong one is unknown, not an error.
    let energy_j = sacct_steps::energy(
        tres.iter()
            .find(|(k, _, _)| k == "energy")
            .and_then(|(_, _, count)| slurm_json::number_with(count, false).ok()?.value()),
    );
    let time_limit_s = f
        .read("/time/limit", |v| Ok(slurm_json::number(v)?.value()))?
        .map(|minutes| {
            minutes.checked_mul(60).ok_or_else(|| {
                f.error("/time/limit", &format!("{minutes} minutes is out of range"))
            })
        })
        .transpose()?;
    let required_cpus = f.read("/required/CPUs", slurm_json::number32)?;
    // 22.05's `required.memory`; later releases say per node or per CPU. The allocated memory,
    // the job's total, comes first.
    let required_memory = f.read("/required/memory", |v| Ok(slurm_json::number(v)?.value()))?;
    let per_node = f.read("/required/memory_per_node", |v| {
        Ok(slurm_json::number(v)?.value())
    })?;
    let per_cpu = f.read("/required/memory_per_cpu", |v| {
        Ok(slurm_json::number(v)?.value())
    })?;
    let num_nodes = count32(&f, "node", None)?;
    let cpus = count32(&f, "cpu", None)?.or(required_cpus);
    let requested_total = required_memory
        .or_else(|| per_node.and_then(|m| m.checked_mul(u64::from(num_nodes?))))
        .or_else(|| per_cpu.and_then(|m| m.checked_mul(u64::from(cpus?))));
    let array_job_id = f
        .read("/array/job_id", |v| Ok(slurm_json::number(v)?.value()))?
        .filter(|&id| id != 0);
    let array_task_id = f.read("/array/task_id", slurm_json::number32)?;
    // Every job has `het`; 0 (and an offset not set) where the job is not heterogeneous.
    let het_job_id = f
        .read("/het/job_id", |v| Ok(slurm_json::number(v)?.value()))?
        .filter(|&id| id != 0);
    let het_job_offset = match het_job_id {
        Some(_) => f.read("/het/job_offset", slurm_json::number32)?,
        None => None,
    };
    let exit_json = if exit_codes_valid {
        let code = f.read("/exit_code/return_code", slurm_json::number32)?;
        let signal = f.read("/exit_code/signal/id", slurm_json::number32)?;
        // A job killed by a signal has no return code (24.11's OUT_OF_MEMORY: `"set": false`
        // and signal 125), which sacct's text prints as `0:125`.
        match (code, signal) {
            (None, None) => None,
            (code, signal) => Some((code.unwrap_or(0) as i32, signal.unwrap_or(0) as i32)),
        }
    } else {
        None
    };
    let (steps, steps_left_out) = match sacct_steps::parse_steps(Some(f.at("/steps")), job_id) {
        Some((steps, left_out)) => (Some(steps), left_out),
        None => (None, 0),
    };
    if steps_left_out > 0 {
        f.notes.push(format!(
            "{steps_left_out} of its steps could not be read and are left out"
        ));
    }
    Ok(Accounting {
        num_nodes,
        cpus,
        gpus: count32(&f, "gres", Some("gpu"))?,
        req_mem_mb: allocated(&f, "mem", None)?.or(requested_total),
        time_limit_s,
        submit: f.essential("/time/submission", epoch)?,
        start: f.essential("/time/start", epoch)?,
        end: f.essential("/time/end", epoch)?,
        state: f.essential("/state/current", slurm_json::state)?,
        array_job_id,
        array_task_id,
        het_job_id,
        het_job_offset,
        job_id,
        cluster: f.text("/cluster")?,
        name: f.text("/name")?,
        user: f.text("/user")?,
        group: f.text("/group")?,
        account: f.text("/account")?,
        partition: f.text("/partition")?,
        qos: f.text("/qos")?,
        nodes: f.text("/nodes")?,
        steps,
        energy_j,
        exit_json,
        notes: f.notes,
    })
}

/// One line of `TZ=UTC sacct -n -X -P -D -o JobIDRaw,Submit,ExitCode,SubmitLine` (submit in
/// epoch seconds). The submit line comes last because it may hold `|` itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ExitLine {
    pub job_id: u64,
    pub submit: i64,
    pub code: i32,
    pub signal: i32,
    /// The `--dependency` the job was submitted with, from its submit line (validated by
    /// [`dependency_in_submit_line`]).
    pub dependency: Option<String>,
}

/// Parses the text exit codes; lines that do not fit are ignored (sacct prints nothing else here).
pub fn parse_exit_codes(text: &str) -> Vec<ExitLine> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.trim().splitn(4, '|');
            let job_id = f.next()?.parse().ok()?;
            let submit = f.next()?;
            // `2026-11-22T05:20:24` in UTC (the query sets TZ=UTC), or epoch seconds.
            let submit = submit.parse::<i64>().ok().or_else(|| {
                chrono::NaiveDateTime::parse_from_str(submit, "%Y-%m-%dT%H:%M:%S")
                    .ok()
                    .map(|t| t.and_utc().timestamp())
            })?;
            let (code, signal) = f.next()?.split_once(':')?;
            Some(ExitLine {
                job_id,
                submit,
                code: code.parse().ok()?,
                signal: signal.parse().ok()?,
                dependency: f.next().and_then(dependency_in_submit_line),
            })
        })
        .collect()
}

/// The `--dependency` (`-d`) value of a submit line as sacct prints it (`sbatch --parsable
/// --dependency=afterok:12 job.sh`), when it is a dependency list Slurm would take. sacct joins
/// the arguments with spaces, so the search stops at `--wrap` (what follows is the job's command,
/// not options) and takes a value only when it parses, so an argument of the script that happens
/// to follow a `-d` is not taken for one. Slurm 22.05 keeps the submit line of the command line
/// only: a `#SBATCH --dependency` inside the script is not in it.
pub fn dependency_in_submit_line(line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    while let Some(word) = words.next() {
        let value = if word == "--wrap" || word.starts_with("--wrap=") {
            return None;
        } else if let Some(v) = word.strip_prefix("--dependency=") {
            v
        } else if word == "--dependency" || word == "-d" {
            words.next()?
        } else if let Some(v) = word.strip_prefix("-d").filter(|v| !v.is_empty()) {
            v
        } else {
            continue;
        };
        if jobsight_base::slurm_text::is_dependency_list(value) {
            return Some(value.to_string());
        }
    }
    None
}

/// Which accounting record a spool record refers to.
#[derive(Debug, PartialEq)]
pub enum Selection<'a> {
    /// Final: write the job.
    Settled(&'a Accounting),
    /// Known but not final yet (still running, completing, requeued): ask again later.
    Pending { reason: String },
    /// Not (yet) in the database: ask again later, give up after a while.
    Missing,
}

/// Picks the record of job `job_id` on `cluster` that a spool record enqueued at `enqueued_at` refers
/// to: raw id and cluster equal, submitted before the enqueue, the latest of those, unless that
/// one is the requeued run of a run that failed (`NODE_FAIL`, `PREEMPTED`, `BOOT_FAIL`) and had
/// not started by the enqueue: Slurm submits the job again as the failed run ends, before that
/// run's epilog writes its record, and starts it only after its requeue hold, so the record
/// means the failed run. ([`RUN_START_SLACK_S`] allows for a node's clock, which stamps a node
/// epilog's record.) When the run was requeued by `scontrol requeue`, the job continues in its
/// next run (same id, submitted later), so the chain is followed to the run that ended it: Slurm
/// 22.05 gives the interrupted run's epilog the same restart count as the final run's, and the
/// spool keeps only the first record of the two.
pub fn select<'a>(
    candidates: &'a [Accounting],
    job_id: u64,
    cluster: Option<&str>,
    enqueued_at: DateTime<Utc>,
) -> Selection<'a> {
    let runs: Vec<&Accounting> = candidates
        .iter()
        .filter(|a| a.job_id == job_id)
        .filter(|a| match (cluster, a.cluster.as_deref()) {
            (Some(want), Some(have)) => want == have,
            _ => true,
        })
        .collect();
    let Some(latest) = runs
        .iter()
        .copied()
        .filter(|a| a.submit.is_none_or(|s| s <= enqueued_at))
        .max_by_key(|a| a.submit)
    else {
        return Selection::Missing;
    };
    let started_by_then = latest
        .start
        .is_some_and(|s| s <= enqueued_at + chrono::Duration::seconds(RUN_START_SLACK_S));
    let mut run = match run_requeued_before(runs.iter().copied(), latest) {
        Some(failed) if !started_by_then => failed,
        _ => latest,
    };
    while run
        .state
        .as_deref()
        .is_some_and(|s| s.starts_with("REQUEUE"))
    {
        let next = runs
            .iter()
            .copied()
            .filter(|a| a.submit > run.submit)
            .min_by_key(|a| a.submit);
        match next {
            Some(next) => run = next,
            None => {
                return Selection::Pending {
                    reason: format!("job {job_id} was requeued; its next run is not in sacct yet"),
                };
            }
        }
    }
    match (&run.state, run.end) {
        (Some(state), Some(_)) if is_final(state) => Selection::Settled(run),
        (state, _) => Selection::Pending {
            reason: format!(
                "sacct says {} for job {job_id}",
                state.as_deref().unwrap_or("no state")
            ),
        },
    }
}

/// When the run of the same job before `run` (a requeued job's earlier run, in `candidates`)
/// had other nodes, a note saying so: the two runs' figures come from different machines. The
/// earlier run is one that ended in a state Slurm requeues from, at most [`REQUEUE_GAP_S`]
/// from `run`'s submission (a requeued run is submitted again when the earlier one ends), so an
/// older job that had the same id (a cluster whose ids started again) is not taken for it.
pub fn nodes_changed(candidates: &[Accounting], run: &Accounting) -> Option<String> {
    let before = run_requeued_before(candidates.iter(), run)?;
    let (now, then) = (run.nodes.as_deref()?, before.nodes.as_deref()?);
    let ran = |list: &str| !list.is_empty() && list != "None assigned";
    let cut = |list: &str| jobsight_base::text::clean(list, 80);
    (ran(now) && ran(then) && now != then).then(|| {
        format!(
            "this run ran on {}, the run before it ({}) on {}",
            cut(now),
            before.state.as_deref().unwrap_or("state unknown"),
            cut(then)
        )
    })
}

/// The run of the same job that `run` was requeued from, among `candidates`: one that ended in a
/// state Slurm requeues from, at most [`REQUEUE_GAP_S`] from `run`'s submission (a requeued run
/// is submitted again when the earlier one ends), so that an older job that had the same id (a
/// cluster whose ids started again) is not taken for it.
fn run_requeued_before<'a>(
    candidates: impl Iterator<Item = &'a Accounting>,
    run: &Accounting,
) -> Option<&'a Accounting> {
    let submit = run.submit?;
    let requeued_from = |state: &str| {
        state.starts_with("REQUEUE") || matches!(state, "NODE_FAIL" | "PREEMPTED" | "BOOT_FAIL")
    };
    candidates
        .filter(|a| a.job_id == run.job_id && a.cluster == run.cluster)
        .filter(|a| a.submit.is_some_and(|s| s < submit))
        .filter(|a| a.state.as_deref().is_some_and(requeued_from))
        .filter(|a| {
            a.end
                .is_some_and(|end| (submit - end).num_seconds().abs() <= REQUEUE_GAP_S)
        })
        .max_by_key(|a| a.submit)
}

/// How far apart, in seconds, a run's end and its requeued run's submission may lie.
const REQUEUE_GAP_S: i64 = 600;

/// How much later than a spool record's enqueue time a run may have started and still be the
/// run the record means: a node epilog's record is stamped by the node's clock. Less than
/// Slurm's requeue hold (`cred_expire`, 120 s by default; 30 s on the two-node test cluster).
const RUN_START_SLACK_S: i64 = 20;

/// The text output's line of `acct`, matched by job id and submit time.
pub fn line_of<'a>(acct: &Accounting, lines: &'a [ExitLine]) -> Option<&'a ExitLine> {
    let submit = acct.submit?.timestamp();
    lines
        .iter()
        .find(|l| l.job_id == acct.job_id && l.submit == submit)
}

/// The exit code and signal of `acct` from the text output, matched by job id and submit time.
pub fn exit_of(acct: &Accounting, lines: &[ExitLine]) -> Option<(i32, i32)> {
    line_of(acct, lines).map(|l| (l.code, l.signal))
}

/// The `jobs` row of a claimed job: identity from the spool record, everything else from sacct.
/// `line` is the job's line of the text output ([`line_of`]): its exit code and dependency. The
/// accounting figures (`acct_*`) are seff's, from the run's steps ([`sacct_steps::totals`]);
/// `neighbours` is left for [`super::sacct_neighbours`].
pub fn job_row(record: &SpoolRecord, acct: &Accounting, line: Option<&ExitLine>) -> Option<JobRow> {
    let exit = line.map(|l| (l.code, l.signal));
    let text = |t: &Option<slurm_hooks::Text>| {
        t.as_ref()
            .map(|t| String::from_utf8_lossy(t.as_bytes()).into_owned())
    };
    let from_record = record
        .exit_code
        .as_ref()
        .and_then(|e| e.code.zip(e.signal))
        .map(|(c, s)| (c as i32, s as i32));
    let (exit_code, exit_signal) = exit.or(acct.exit_json).or(from_record).unzip();
    let used = sacct_steps::totals(acct.steps.as_deref(), acct.energy_j);
    Some(JobRow {
        cluster: acct
            .cluster
            .clone()
            .or(text(&record.cluster))
            .unwrap_or_default(),
        job_id: record.job_id.to_string(),
        array_job_id: acct
            .array_job_id
            .or(record.array_job_id)
            .map(|a| a.to_string()),
        array_task_id: acct
            .array_task_id
            .or(record.array_task_id.map(|t| t as u32)),
        restart_count: record.restart_count.unwrap_or(0),
        het_job_id: acct.het_job_id.map(|h| h.to_string()),
        het_job_offset: acct.het_job_offset,
        user: acct.user.clone().or(text(&record.user)),
        account: acct.account.clone().or(text(&record.account)),
        partition: acct.partition.clone().or(text(&record.partition)),
        qos: acct.qos.clone(),
        num_nodes: acct.num_nodes.or(record.num_nodes),
        nodes: acct.nodes.clone().or(record
            .nodes
            .as_ref()
            .and_then(|n| n.given.as_str().map(String::from))),
        cpus: acct.cpus,
        gpus: acct.gpus,
        req_mem_mb: acct.req_mem_mb,
        time_limit_s: acct.time_limit_s,
        submit: acct.submit,
        start: acct.start,
        end: acct.end?,
        state: acct.state.clone(),
        exit_code,
        exit_signal,
        name: acct.name.clone().or(text(&record.job_name)),
        source: "sacct".into(),
        dependency: line.and_then(|l| l.dependency.clone()),
        acct_cpu_user_s: used.cpu_user_s,
        acct_cpu_system_s: used.cpu_system_s,
        acct_cpu_total_s: used.cpu_total_s,
        acct_mem_peak_mb: used.mem_peak_mb,
        acct_max_rss_mb: used.max_rss_mb,
        acct_energy_j: used.energy_j,
        acct_gpu_util_max_pct: used.gpu_util_max_pct,
        acct_gpu_mem_max_mb: used.gpu_mem_max_mb,
        acct_steps: used.steps,
        neighbours: None,
        note: None,
    })
}

/// Runs `sacct` (JSON and text exit codes) for one job of `cluster`.
///
/// Facts from Slurm 22.05.8 behind the flags: `SLURM_TIME_FORMAT=%s` breaks `--json` ("Unable
/// to parse time format"), so the text query asks for UTC with `TZ` instead; without `-D` the text
/// output shows only the latest of several jobs with the same id, while 22.05's `--json` lists
/// them all (26.05's does not: both ask with `-D`).
pub fn query(
    sacct: &Path,
    job_id: u64,
    cluster: Option<&str>,
) -> Result<(Answer, Vec<ExitLine>), SacctError> {
    let id = job_id.to_string();
    // `-D`: every run of the id. 22.05's JSON lists them all anyway; 26.05's lists only the last
    // run of a requeued job without it (seen on the real 26.05.5), whose interrupted run is the
    // one the spool record names.
    let json = run(sacct, job_id, &["--json", "-D", "-j", &id], cluster)?;
    let text = run(
        sacct,
        job_id,
        &[
            "-n",
            "-X",
            "-P",
            "-D",
            "-o",
            "JobIDRaw,Submit,ExitCode,SubmitLine",
            "-j",
            &id,
        ],
        cluster,
    )?;
    Ok((
        parse_json(&json)?,
        parse_exit_codes(&String::from_utf8_lossy(&text)),
    ))
}

/// How long one `sacct` query may take before it is stopped and the job asked again later: far
/// above a busy slurmdbd's answer (seconds), so that a hung one never holds up the DAG.
pub const SACCT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Runs `sacct` with `args` (then `-M cluster` when one is named) in UTC and returns what it
/// printed; an error, naming `job_id` (the job the question is about), when it cannot run, fails,
/// takes longer than [`SACCT_TIMEOUT`] or answers more than [`MAX_ANSWER_BYTES`] (then
/// [`SacctError::TooLarge`]).
pub(crate) fn run(
    sacct: &Path,
    job_id: u64,
    args: &[&str],
    cluster: Option<&str>,
) -> Result<Vec<u8>, SacctError> {
    let mut args = args.to_vec();
    if let Some(cluster) = cluster {
        args.extend(["-M", cluster]);
    }
    jobsight_base::command::run_command_capped(sacct, &args, SACCT_TIMEOUT, MAX_ANSWER_BYTES)
        .map_err(|e| match e {
            CommandError::TooLarge(reason) => SacctError::TooLarge { job_id, reason },
            CommandError::Failed(reason) => SacctError::Failed { job_id, reason },
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dependency of a submit line: in every spelling sbatch takes, only before `--wrap`,
    /// and only a list Slurm would take.
    #[test]
    fn dependencies_from_submit_lines() {
        let dep = dependency_in_submit_line;
        assert_eq!(
            dep("sbatch --parsable --dependency=afterok:12 job.sh").as_deref(),
            Some("afterok:12")
        );
        assert_eq!(
            dep("sbatch -d afterany:7_2:8?afternotok:9 x.sh").as_deref(),
            Some("afterany:7_2:8?afternotok:9")
        );
        assert_eq!(dep("sbatch -dsingleton x.sh").as_deref(), Some("singleton"));
        assert_eq!(
            dep("sbatch --dependency after:5+10,afterok:6_* x.sh").as_deref(),
            Some("after:5+10,afterok:6_*")
        );
        assert_eq!(dep("sbatch -J a job.sh"), None);
        assert_eq!(
            dep("sbatch --wrap ls -d afterok:3"),
            None,
            "the command, not an option"
        );
        assert_eq!(dep("sbatch -d afterok: x.sh"), None);
        assert_eq!(dep("sbatch -d afterok:3;rm x.sh"), None);
        assert_eq!(dep("sbatch -d sometime:3 x.sh"), None);
        assert_eq!(
            dep("sbatch -d afterok:99999999999 x.sh"),
            None,
            "beyond Slurm's ids"
        );
        assert_eq!(dep("sbatch --dependency"), None);
        assert_eq!(
            jobsight_base::slurm_text::dependency_job("12_3"),
            Some((12, Some(3)))
        );
        assert_eq!(
            jobsight_base::slurm_text::dependency_job("12+5"),
            Some((12, None))
        );
        assert_eq!(jobsight_base::slurm_text::dependency_job("12_x"), None);
        let lines = parse_exit_codes(
            "7|1700000000|0:0|sbatch -d afterok:6 -J a|b x.sh\n8|1700000000|1:0|\n",
        );
        assert_eq!(lines[0].dependency.as_deref(), Some("afterok:6"));
        assert_eq!((lines[1].code, lines[1].dependency.clone()), (1, None));
    }

    const FIXTURE: &str = include_str!("../../../tests/fixtures/sacct-22.05.8.json");

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(s, 0).unwrap()
    }

    /// What Slurm means by a signed number where a count or time goes: `Ok(None)` for its
    /// markers (`-2`/`-1`, the 32-bit `NO_VAL`/`INFINITE`), an error for any other negative.
    fn meant(n: i128) -> Result<Option<u64>, ()> {
        match n {
            -2 | -1 | 0xffff_fffe | 0xffff_ffff | 0xffff_ffff_ffff_fffe | 0xffff_ffff_ffff_ffff => {
                Ok(None)
            }
            n if n < 0 => Err(()),
            n => u64::try_from(n).map(Some).map_err(|_| ()),
        }
    }

    proptest::proptest! {
        /// Whatever sacct (or something in its place) answers: no panic, and every number either
        /// arrives as Slurm meant it or the record is set aside with a reason naming the job.
        #[test]
        fn answers_never_panic_nor_change_a_number(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
            cpus in proptest::prop_oneof![0..5000i64, -3..0i64, proptest::num::i64::ANY],
            minutes in proptest::prop_oneof![0..100_000u64, 0xffff_fffd..0xffff_ffffu64, proptest::num::u64::ANY],
            end in proptest::prop_oneof![0..2_000_000_000i64, -3..0i64, proptest::num::i64::ANY],
            wrapped in proptest::bool::ANY,
        ) {
            let _ = parse_json(&bytes);
            // 22.05 prints plain numbers, later releases `{set, infinite, number}`.
            let limit = if wrapped {
                format!(r#"{{"set":true,"infinite":false,"number":{minutes}}}"#)
            } else {
                minutes.to_string()
            };
            let answer = format!(
                r#"{{"jobs":[{{"job_id":7,"tres":{{"allocated":[{{"type":"cpu","count":{cpus}}}]}},
                "time":{{"limit":{limit},"end":{end}}}}}]}}"#
            );
            let want_cpus = meant(i128::from(cpus)).and_then(|c| c.map(u32::try_from).transpose().map_err(|_| ()));
            let want_limit = meant(i128::from(minutes)).and_then(|m| m.map(|m| m.checked_mul(60).ok_or(())).transpose());
            let want_end = meant(i128::from(end)).and_then(|e| {
                e.filter(|&e| e > 0)
                    .map(|e| i64::try_from(e).ok().and_then(|e| DateTime::from_timestamp(e, 0)).ok_or(()))
                    .transpose()
            });
            match parse_json(answer.as_bytes()).map(|a| (a.records, a.set_aside)) {
                Ok((jobs, set_aside)) if set_aside.is_empty() => {
                    proptest::prop_assert_eq!(Ok(jobs[0].cpus), want_cpus);
                    proptest::prop_assert_eq!(Ok(jobs[0].time_limit_s), want_limit);
                    proptest::prop_assert_eq!(Ok(jobs[0].end), want_end);
                }
                Ok((_, set_aside)) => {
                    let e = &set_aside[0].1;
                    proptest::prop_assert_eq!(set_aside[0].0, Some(7));
                    proptest::prop_assert!(e.starts_with("job 7: "), "{}", e);
                    proptest::prop_assert!(want_cpus.is_err() || want_limit.is_err() || want_end.is_err(), "{}", e);
                }
                Err(e) => proptest::prop_assert!(false, "the whole answer refused: {}", e),
            }
        }
    }

    #[test]
    fn parses_real_sacct_json() {
        let jobs = parse_json(FIXTURE.as_bytes()).unwrap().records;
        assert_eq!(jobs.len(), 9);
        let fail = jobs
            .iter()
            .find(|j| j.name.as_deref() == Some("fail"))
            .unwrap();
        assert_eq!(fail.job_id, 1);
        assert_eq!(fail.state.as_deref(), Some("FAILED"));
        assert_eq!(
            (fail.cpus, fail.num_nodes, fail.req_mem_mb),
            (Some(1), Some(1), Some(1024))
        );
        assert_eq!(fail.time_limit_s, Some(120), "2 minutes");
        assert_eq!(fail.submit, Some(at(1_795_324_824)));
        let task = jobs.iter().find(|j| j.job_id == 4).unwrap();
        assert_eq!((task.array_job_id, task.array_task_id), (Some(2), Some(1)));
        let named = jobs
            .iter()
            .find(|j| j.name.as_deref() == Some("x,y|z"))
            .unwrap();
        assert_eq!(named.req_mem_mb, Some(100));
        assert!(parse_json(b"{\"jobs\": 3}").is_err());
        // What sacct 22.05 prints when it cannot answer (e.g. SLURM_TIME_FORMAT=%s with --json).
        let err = parse_json(
            br#"{"meta": {}, "errors": [{"description": "Unable to parse time format"}]}"#,
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("Unable to parse time format"),
            "{err}"
        );
    }

    /// The committed capture `name` of `tests/fixtures/slurm-json/`.
    fn capture(name: &str) -> Vec<u8> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/slurm-json");
        std::fs::read(dir.join(name)).unwrap()
    }

    fn capture_text(name: &str) -> String {
        String::from_utf8(capture(name)).unwrap()
    }

    /// The captures of every release in `tests/fixtures/slurm-json/` (and `../shared/data/
    /// slurm-json/` when it is there), each file name `<release>_<parser>_<what>.json`.
    fn captures() -> Vec<(String, Vec<u8>)> {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        for dir in [
            repo.join("tests/fixtures/slurm-json"),
            repo.join("../shared/data/slurm-json"),
        ] {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                // The shared folder holds the committed ones again: each name once.
                if name.ends_with(".json") && files.iter().all(|(seen, _)| *seen != name) {
                    files.push((name, std::fs::read(entry.path()).unwrap()));
                }
            }
        }
        assert!(
            files.len() >= 15,
            "the captures are missing: {}",
            files.len()
        );
        files
    }

    /// Every record of every release's capture is read, nothing set aside, nothing noted: with
    /// its state, times, exit code, nodes and steps as the capture has them (the expected values
    /// read off the files by hand).
    #[test]
    fn every_capture_of_every_release() {
        // (file, job id, state, elapsed seconds, exit code, nodes, steps, cpus, memory MB)
        #[allow(clippy::type_complexity)]
        let expected: [(&str, u64, &str, Option<i64>, i32, &str, &[&str], u32, u64); 21] = [
            (
                "24.11.5_v0.0.42_sacct-ci-lifecycle",
                4,
                "FAILED",
                Some(1),
                3,
                "vm",
                &["batch"],
                1,
                1024,
            ),
            (
                "24.11.5_v0.0.42_sacct-ci-lifecycle",
                5,
                "OUT_OF_MEMORY",
                Some(0),
                0,
                "vm",
                &["batch"],
                1,
                40,
            ),
            (
                "24.11.5_v0.0.42_sacct-ci-lifecycle",
                9,
                "COMPLETED",
                Some(0),
                0,
                "vm",
                &["batch"],
                1,
                1024,
            ),
            (
                "24.11.5_v0.0.42_sacct-ci-lifecycle",
                8,
                "COMPLETED",
                Some(9),
                0,
                "vm",
                &["batch"],
                1,
                1024,
            ),
            (
                "23.11_v0.0.40_slurmdb-job-completed",
                509,
                "COMPLETED",
                Some(1),
                0,
                "cn2",
                &["batch"],
                1,
                512,
            ),
            (
                "23.11_v0.0.40_slurmdb-job-failed",
                510,
                "FAILED",
                Some(1),
                1,
                "cn2",
                &["batch"],
                1,
                512,
            ),
            (
                "23.11_v0.0.40_slurmdb-job-timeout",
                609,
                "TIMEOUT",
                Some(79),
                0,
                "cn4",
                &["batch"],
                1,
                512,
            ),
            (
                "24.11_v0.0.42_slurmdb-job-completed",
                6362,
                "COMPLETED",
                Some(61),
                0,
                "cn1",
                &["batch"],
                32,
                16384,
            ),
            (
                "24.11_v0.0.42_slurmdb-job-failed",
                6359,
                "FAILED",
                Some(1),
                1,
                "cn1",
                &["batch"],
                1,
                512,
            ),
            (
                "24.11_v0.0.42_slurmdb-job-gpus-multi-nodes",
                6371,
                "RUNNING",
                None,
                0,
                "ia[1-2]",
                &["batch"],
                2,
                1024,
            ),
            (
                "24.11_v0.0.42_slurmdb-job-timeout",
                6357,
                "TIMEOUT",
                Some(65),
                0,
                "cn1",
                &["batch"],
                1,
                512,
            ),
            (
                "25.11_v0.0.44_slurmdb-job-completed",
                5749,
                "COMPLETED",
                Some(30),
                0,
                "cn1",
                &["batch"],
                4,
                2048,
            ),
            (
                "25.11_v0.0.44_slurmdb-job-failed",
                5739,
                "FAILED",
                Some(2),
                1,
                "cn1",
                &["batch"],
                1,
                512,
            ),
            (
                "25.11_v0.0.44_slurmdb-job-gpus-multi-nodes",
                5679,
                "RUNNING",
                None,
                0,
                "gpu[1-2]",
                &["batch"],
                2,
                1024,
            ),
            (
                "25.11_v0.0.44_slurmdb-job-timeout",
                5737,
                "TIMEOUT",
                Some(82),
                0,
                "cn1",
                &["batch"],
                1,
                512,
            ),
            (
                "24.11.5_v0.0.42_sacct-ci",
                1,
                "FAILED",
                Some(1),
                3,
                "vm",
                &["batch"],
                1,
                1024,
            ),
            (
                "26.05.5_v0.0.45_sacct-ci",
                1,
                "FAILED",
                Some(0),
                3,
                "vm",
                &["batch"],
                1,
                1024,
            ),
            (
                "26.05.5_v0.0.45_sacct-ci",
                2,
                "COMPLETED",
                Some(7),
                0,
                "vm",
                &["batch", "0"],
                1,
                1024,
            ),
            (
                "26.05.5_v0.0.45_sacct-ci",
                3,
                "COMPLETED",
                Some(1),
                0,
                "vm",
                &["batch"],
                1,
                1024,
            ),
            (
                "26.05.5_v0.0.45_sacct-ci",
                4,
                "COMPLETED",
                Some(2),
                0,
                "vm",
                &["batch"],
                1,
                1024,
            ),
            (
                "26.05.5_v0.0.45_sacct-ci",
                5,
                "FAILED",
                Some(3),
                3,
                "vm",
                &["batch", "0"],
                2,
                300,
            ),
        ];
        let mut checked = 0;
        for (name, bytes) in captures() {
            if name.contains("squeue") || name.contains("slurm-jobs") {
                continue;
            }
            let answer = parse_json(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                answer.set_aside.is_empty(),
                "{name}: {:?}",
                answer.set_aside
            );
            assert!(!answer.records.is_empty(), "{name}");
            for record in &answer.records {
                assert!(record.notes.is_empty(), "{name}: {:?}", record.notes);
                assert!(
                    record.state.is_some() && record.submit.is_some(),
                    "{name}: {record:?}"
                );
                let Some(want) = expected
                    .iter()
                    .find(|w| name.starts_with(w.0) && w.1 == record.job_id)
                else {
                    continue;
                };
                let (_, _, state, elapsed, exit, nodes, steps, cpus, memory) = *want;
                let elapsed_read = record
                    .end
                    .zip(record.start)
                    .map(|(e, s)| (e - s).num_seconds());
                let step_names: Vec<&str> = record
                    .steps
                    .iter()
                    .flatten()
                    .map(|s| s.step.as_str())
                    .collect();
                assert_eq!(
                    (
                        record.state.as_deref(),
                        elapsed_read,
                        record.exit_json.map(|e| e.0),
                        record.nodes.as_deref(),
                        step_names.as_slice(),
                        record.cpus,
                        record.req_mem_mb,
                        record.energy_j
                    ),
                    (
                        Some(state),
                        elapsed,
                        Some(exit),
                        Some(nodes),
                        steps,
                        Some(cpus),
                        Some(memory),
                        None
                    ),
                    "{name} job {}",
                    record.job_id
                );
                // A settled record has every step ended: no false "steps had not ended".
                if record.state.as_deref().is_some_and(is_final) {
                    let steps = record.steps.as_deref().unwrap();
                    assert!(
                        sacct_steps::unfinished(steps).is_empty(),
                        "{name}: {steps:?}"
                    );
                }
                checked += 1;
            }
        }
        assert_eq!(checked, expected.len(), "every expected record was found");
    }

    /// 26.05's array tasks and the usage of its steps, as `sacct --noconvert` printed them on the
    /// same daemon: job 5 (`srun -n 2 sleep 3`) has step 0 with two tasks.
    #[test]
    fn the_steps_and_array_tasks_of_26_05() {
        let bytes = capture("26.05.5_v0.0.45_sacct-ci.json");
        let jobs = parse_json(&bytes).unwrap().records;
        let task = |id: u64| {
            let j = jobs.iter().find(|j| j.job_id == id).unwrap();
            (j.array_job_id, j.array_task_id)
        };
        assert_eq!(task(4), (Some(3), Some(1)));
        assert_eq!(task(3), (Some(3), Some(2)));
        assert_eq!(task(2), (None, None));
        let five = jobs.iter().find(|j| j.job_id == 5).unwrap();
        let step0 = &five.steps.as_ref().unwrap()[1];
        assert_eq!(
            (step0.ntasks, step0.state.as_deref()),
            (Some(2), Some("COMPLETED"))
        );
        assert!(
            step0.end.is_some() && step0.max_rss_bytes.is_some(),
            "{step0:?}"
        );
        let used = sacct_steps::totals(five.steps.as_deref(), five.energy_j);
        assert_eq!(used.steps, Some(2));
    }

    /// 24.11's jobs of every kind from the real daemon: an OOM-killed job has no return code but
    /// signal 125 (sacct's text: `0:125`), an array task its array and task.
    #[test]
    fn the_lifecycle_of_24_11() {
        let bytes = capture("24.11.5_v0.0.42_sacct-ci-lifecycle.json");
        let jobs = parse_json(&bytes).unwrap().records;
        let job = |id: u64| jobs.iter().find(|j| j.job_id == id).unwrap();
        assert_eq!(job(5).exit_json, Some((0, 125)));
        assert_eq!(job(4).exit_json, Some((3, 0)));
        assert_eq!(
            (job(9).array_job_id, job(9).array_task_id),
            (Some(6), Some(1))
        );
        assert_eq!(job(8).time_limit_s, Some(120), "2 minutes");
    }

    /// A heterogeneous job's component keeps its first component's id and its offset, in the
    /// shape of 22.05 (plain numbers) and of later releases (an offset `{set, number}`); a job
    /// that is not one (`het.job_id` 0, the offset not set) has neither.
    #[test]
    fn a_heterogeneous_job_s_component_is_linked_to_its_first() {
        let bytes = capture("24.11.5_v0.0.42_sacct-ci-lifecycle.json");
        let plain = parse_json(&bytes).unwrap().records;
        assert!(
            plain
                .iter()
                .all(|j| j.het_job_id.is_none() && j.het_job_offset.is_none())
        );
        for (het, offset) in [
            (serde_json::json!({"job_id": 7, "job_offset": 1}), Some(1)),
            (
                serde_json::json!({"job_id": 7, "job_offset": {"set": true, "infinite": false, "number": 1}}),
                Some(1),
            ),
            (
                serde_json::json!({"job_id": 7, "job_offset": {"set": false, "infinite": false, "number": 0}}),
                None,
            ),
        ] {
            let mut answer: Value = serde_json::from_slice(&bytes).unwrap();
            answer["jobs"][0]["het"] = het.clone();
            let records = parse_json(answer.to_string().as_bytes()).unwrap().records;
            assert_eq!(
                (records[0].het_job_id, records[0].het_job_offset),
                (Some(7), offset),
                "{het}"
            );
        }
    }

    /// A release this reader does not know is read as far as it can be and named in every
    /// record's notes; a field it prints in an unknown shape is noted, not a silent null.
    #[test]
    fn an_unknown_release_is_read_and_named() {
        let capture = capture_text("26.05.5_v0.0.45_sacct-ci.json");
        let future = capture
            .replace("data_parser\\/v0.0.45", "data_parser\\/v0.0.47")
            .replace("data_parser/v0.0.45", "data_parser/v0.0.47")
            .replace("\"26.05.5\"", "\"27.05.1\"")
            .replacen("\"qos\": \"normal\"", "\"qos\": {\"name\": \"normal\"}", 1);
        let answer = parse_json(future.as_bytes()).unwrap();
        assert!(answer.set_aside.is_empty(), "{:?}", answer.set_aside);
        assert_eq!(answer.records.len(), 5);
        for record in &answer.records {
            assert!(
                record.notes[0].contains("v0.0.47") && record.notes[0].contains("27.05.1"),
                "{:?}",
                record.notes
            );
            assert!(record.state.is_some() && record.end.is_some());
        }
        let odd = &answer.records[0];
        assert_eq!(odd.qos, None);
        assert!(
            odd.notes
                .iter()
                .any(|n| n.starts_with("qos not understood")),
            "{:?}",
            odd.notes
        );
        // The same shape in a known release: the record is set aside, naming job and field.
        let known = capture.replacen("\"qos\": \"normal\"", "\"qos\": {\"name\": \"normal\"}", 1);
        let answer = parse_json(known.as_bytes()).unwrap();
        assert_eq!(answer.records.len(), 4);
        assert_eq!(answer.set_aside[0].0, Some(1));
        assert!(
            answer.set_aside[0]
                .1
                .starts_with("job 1: qos an object where a text goes"),
            "{:?}",
            answer.set_aside
        );
    }

    /// Hostile answers: deep nesting, a string where a number goes, a job that is not the one
    /// asked about, 10,000 steps, 100 MB. Each is refused or set aside with a reason; nothing
    /// panics, and the readable records of the same answer are kept.
    #[test]
    fn hostile_answers_are_set_aside_with_a_reason() {
        let deep = format!(
            "{{\"jobs\": [{}{}]}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(
            parse_json(deep.as_bytes())
                .unwrap_err()
                .to_string()
                .contains("recursion limit")
        );
        let huge = vec![b' '; MAX_ANSWER_BYTES + 1];
        assert!(
            parse_json(&huge)
                .unwrap_err()
                .to_string()
                .contains("over the 64 MiB")
        );
        let mixed = br#"{"jobs": [
            {"job_id": 8, "state": {"current": ["COMPLETED"]}, "time": {"end": "yesterday"}},
            {"job_id": "8; rm -rf /"},
            {"job_id": 9, "state": {"current": ["COMPLETED"]}, "time": {"start": 10, "end": 20}}]}"#;
        let answer = parse_json(mixed).unwrap();
        assert_eq!(
            answer.records.iter().map(|r| r.job_id).collect::<Vec<_>>(),
            [9]
        );
        assert_eq!(
            answer.set_aside[0],
            (
                Some(8),
                "job 8: time.end a string where a number goes".into()
            )
        );
        assert_eq!(
            answer.set_aside[1],
            (
                None,
                "entry 1 of the answer: job_id a string where a number goes".into()
            )
        );
        let step = r#"{"step": {"id": "9.N"}, "state": ["COMPLETED"], "time": {"start": 10, "end": 20,
            "total": {"seconds": 1, "microseconds": 0}}, "tasks": {"count": 1}}"#;
        let steps: Vec<String> = (0..10_000)
            .map(|n| step.replace("9.N", &format!("9.{n}")))
            .collect();
        let many = format!(
            r#"{{"jobs": [{{"job_id": 9, "state": {{"current": ["COMPLETED"]}}, "time": {{"start": 10, "end": 20}},
            "steps": [{}, {{"step": {{"id": "10.batch"}}}}]}}]}}"#,
            steps.join(",")
        );
        let started = std::time::Instant::now();
        let answer = parse_json(many.as_bytes()).unwrap();
        let record = &answer.records[0];
        assert_eq!(record.steps.as_ref().unwrap().len(), 10_000);
        assert_eq!(
            record.notes,
            ["1 of its steps could not be read and are left out"],
            "another job's step"
        );
        let used = sacct_steps::totals(record.steps.as_deref(), None);
        assert_eq!(used.cpu_total_s, Some(10_000.0));
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    }

    #[test]
    fn selects_the_run_a_spool_record_means_among_repeated_ids() {
        let jobs = parse_json(FIXTURE.as_bytes()).unwrap().records;
        // Job 2 exists four times (an array task of an old run, two old cancels, the new job).
        let enqueued = at(1_795_324_830);
        let Selection::Settled(chosen) = select(&jobs, 2, Some("ci"), enqueued) else {
            panic!()
        };
        assert_eq!(chosen.name.as_deref(), Some("x,y|z"));
        // A record enqueued earlier means an earlier job 2.
        let Selection::Settled(old) = select(&jobs, 2, Some("ci"), at(1_795_322_330)) else {
            panic!()
        };
        assert_eq!(
            (old.name.as_deref(), old.submit),
            (Some("cancel"), Some(at(1_795_322_321)))
        );
        // Array task 4 is not job 2, another cluster is not this one, nothing before the first job.
        assert_eq!(
            select(&jobs, 2, Some("other"), enqueued),
            Selection::Missing
        );
        assert_eq!(
            select(&jobs, 2, Some("ci"), at(1_795_000_000)),
            Selection::Missing
        );
        assert_eq!(select(&jobs, 99, None, enqueued), Selection::Missing);
    }

    /// A run that lost a node ends `NODE_FAIL` and Slurm requeues it, submitting it again, before
    /// the run's epilog writes its record; the next run starts after the requeue hold. The record
    /// means the run that failed, whether the next one is still waiting, running or done (seen
    /// on the real two-node Slurm: the failed run's record was stored as the next run's).
    #[test]
    fn the_record_of_a_run_that_lost_a_node_means_that_run_not_the_requeued_one() {
        let run = |state: &str, submit: i64, start: Option<i64>, end: Option<i64>| Accounting {
            job_id: 1,
            cluster: Some("ci".into()),
            state: Some(state.into()),
            submit: Some(at(submit)),
            start: start.map(at),
            end: end.map(at),
            ..Accounting::default()
        };
        let failed = run("NODE_FAIL", 1000, Some(1000), Some(1032));
        let enqueued = at(1033);
        for next in [
            run("PENDING", 1032, None, None),
            run("RUNNING", 1032, Some(1114), None),
            run("COMPLETED", 1032, Some(1114), Some(1144)),
        ] {
            let jobs = vec![failed.clone(), next.clone()];
            assert_eq!(
                select(&jobs, 1, Some("ci"), enqueued),
                Selection::Settled(&jobs[0]),
                "{next:?}"
            );
        }
        // The next run's own record means the next run.
        let jobs = vec![
            failed.clone(),
            run("COMPLETED", 1032, Some(1114), Some(1144)),
        ];
        assert_eq!(
            select(&jobs, 1, Some("ci"), at(1145)),
            Selection::Settled(&jobs[1])
        );
        // A short job whose node epilog's clock is a minute behind: its record looks older than
        // its start, and it is still the run meant (no run it was requeued from).
        let short = vec![run("COMPLETED", 990, Some(1050), Some(1055))];
        assert_eq!(
            select(&short, 1, Some("ci"), at(996)),
            Selection::Settled(&short[0])
        );
    }

    #[test]
    fn a_requeued_run_leads_to_the_run_that_ended_the_job() {
        // As sacct 22.05 recorded a job requeued while running: the interrupted run (REQUEUED) and
        // the final run, submitted again at the requeue.
        let run = |state: &str, submit: i64, end: i64| Accounting {
            job_id: 8,
            cluster: Some("ci".into()),
            state: Some(state.into()),
            submit: Some(at(submit)),
            end: Some(at(end)),
            ..Accounting::default()
        };
        let older = run("COMPLETED", 100, 200);
        let requeued = run("REQUEUED", 1000, 1006);
        let last = run("COMPLETED", 1008, 1017);
        let enqueued = at(1006); // the interrupted run's epilog
        let jobs = vec![older.clone(), requeued.clone(), last.clone()];
        assert_eq!(
            select(&jobs, 8, Some("ci"), enqueued),
            Selection::Settled(&jobs[2])
        );
        // Requeued onto other nodes: the final run's note says so; onto the same, nothing.
        let on = |a: &Accounting, nodes: &str| Accounting {
            nodes: Some(nodes.into()),
            ..a.clone()
        };
        let moved = vec![
            on(&older, "n1"),
            on(&requeued, "n[1-2]"),
            on(&last, "n[1,3]"),
        ];
        assert_eq!(
            nodes_changed(&moved, &moved[2]).as_deref(),
            Some("this run ran on n[1,3], the run before it (REQUEUED) on n[1-2]")
        );
        let stayed = vec![on(&requeued, "n[1-2]"), on(&last, "n[1-2]")];
        assert_eq!(nodes_changed(&stayed, &stayed[1]), None);
        assert_eq!(nodes_changed(&moved, &moved[0]), None);
        // An older job of the same id (ids started again) is not a run of this one.
        let cancelled = Accounting {
            state: Some("CANCELLED".into()),
            end: Some(at(1007)),
            ..on(&older, "vm")
        };
        let unrelated = vec![cancelled, on(&last, "n[1-2]")];
        assert_eq!(nodes_changed(&unrelated, &unrelated[1]), None);
        // The next run not in the database yet, or still running: ask again later.
        let jobs = vec![older.clone(), requeued.clone()];
        assert!(matches!(
            select(&jobs, 8, Some("ci"), enqueued),
            Selection::Pending { .. }
        ));
        let jobs = vec![older, requeued, run("RUNNING", 1008, 0)];
        assert!(matches!(
            select(&jobs, 8, Some("ci"), enqueued),
            Selection::Pending { .. }
        ));
    }

    #[test]
    fn a_running_job_is_pending() {
        let mut jobs = parse_json(FIXTURE.as_bytes()).unwrap().records;
        jobs.iter_mut()
            .for_each(|j| j.state = Some("COMPLETING".into()));
        let selection = select(&jobs, 1, None, at(1_795_324_830));
        assert_eq!(
            selection,
            Selection::Pending {
                reason: "sacct says COMPLETING for job 1".into()
            }
        );
    }

    #[test]
    fn exit_codes_come_from_the_text_output() {
        let lines =
            parse_exit_codes("1|2026-11-22T05:20:24|3:0\n2|1795324824|0:0\ngarbage\n4|x|0:0\n");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].submit, 1_795_324_824);
        let jobs = parse_json(FIXTURE.as_bytes()).unwrap().records;
        let Selection::Settled(fail) = select(&jobs, 1, Some("ci"), at(1_795_324_830)) else {
            panic!()
        };
        assert_eq!(exit_of(fail, &lines), Some((3, 0)));
    }
}
