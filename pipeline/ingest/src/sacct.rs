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
use std::process::Command;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use slurm_hooks::SpoolRecord;

use super::JobRow;
use super::sacct_steps::{self, StepAccounting};
use jobsight_base::slurm_text::is_final_state as is_final;

#[derive(Debug, thiserror::Error)]
pub enum SacctError {
    #[error("cannot run {program} for job {job_id}: {source}")]
    Run {
        program: String,
        job_id: u64,
        source: std::io::Error,
    },
    #[error("{program} failed for job {job_id} ({status}): {stderr}")]
    Failed {
        program: String,
        job_id: u64,
        status: String,
        stderr: String,
    },
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
    /// The run's steps; `None` when the answer has no `steps` list.
    pub steps: Option<Vec<StepAccounting>>,
    /// The energy the job consumed (its allocated TRES `energy`), joules, where measured.
    pub energy_j: Option<f64>,
}

#[derive(Deserialize)]
struct Output {
    /// Absent when sacct could not answer; `errors` then says why.
    jobs: Option<Vec<Job>>,
    #[serde(default)]
    errors: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct Job {
    job_id: u64,
    name: Option<String>,
    cluster: Option<String>,
    user: Option<String>,
    group: Option<String>,
    account: Option<String>,
    partition: Option<String>,
    qos: Option<String>,
    state: Option<State>,
    time: Option<Time>,
    required: Option<Required>,
    tres: Option<Tres>,
    nodes: Option<String>,
    array: Option<Array>,
    /// Read as untyped JSON: a step figure sacct gets wrong must not make the job unreadable.
    steps: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct State {
    current: Option<String>,
}

#[derive(Deserialize)]
struct Time {
    submission: Option<i64>,
    start: Option<i64>,
    end: Option<i64>,
    /// Minutes.
    limit: Option<u64>,
}

#[derive(Deserialize)]
struct Required {
    #[serde(rename = "CPUs")]
    cpus: Option<u32>,
    /// MB.
    memory: Option<u64>,
}

#[derive(Deserialize)]
struct Tres {
    #[serde(default)]
    allocated: Vec<TresItem>,
}

#[derive(Deserialize)]
struct TresItem {
    #[serde(rename = "type")]
    kind: String,
    name: Option<String>,
    count: Option<i64>,
}

#[derive(Deserialize)]
struct Array {
    job_id: Option<u64>,
    task_id: Option<u32>,
}

/// Epoch seconds to a time; Slurm writes 0 for "not yet". A time beyond what a date can hold is
/// an error (the caller names the job), not "not yet".
fn epoch(seconds: Option<i64>) -> Result<Option<DateTime<Utc>>, i64> {
    match seconds.filter(|&s| s > 0) {
        None => Ok(None),
        Some(s) => DateTime::from_timestamp(s, 0).map(Some).ok_or(s),
    }
}

/// Parses `sacct --json` output.
pub fn parse_json(bytes: &[u8]) -> Result<Vec<Accounting>, SacctError> {
    let output: Output =
        serde_json::from_slice(bytes).map_err(|e| SacctError::Json(e.to_string()))?;
    let Some(jobs) = output.jobs else {
        return Err(SacctError::Json(format!(
            "no jobs, errors: {}",
            serde_json::Value::from(output.errors)
        )));
    };
    jobs.into_iter().map(accounting).collect()
}

/// One job of the answer. A number that does not fit where it goes (a count beyond 32 bits, a
/// time limit whose seconds overflow) makes the answer an error naming the job and the field,
/// never a different number.
fn accounting(j: Job) -> Result<Accounting, SacctError> {
    let job_id = j.job_id;
    let out_of_range = |field: &str, value: &dyn std::fmt::Display| {
        SacctError::Json(format!("job {job_id}: {field} {value} is out of range"))
    };
    let allocated = |kind: &str, name: Option<&str>| -> Result<Option<u64>, SacctError> {
        let count = j.tres.as_ref().and_then(|t| {
            t.allocated
                .iter()
                .find(|i| i.kind == kind && (name.is_none() || i.name.as_deref() == name))
                .and_then(|i| i.count)
        });
        count
            .map(|c| u64::try_from(c).map_err(|_| out_of_range(&format!("allocated {kind}"), &c)))
            .transpose()
    };
    let count32 = |kind: &str, name: Option<&str>| -> Result<Option<u32>, SacctError> {
        allocated(kind, name)?
            .map(|c| u32::try_from(c).map_err(|_| out_of_range(&format!("allocated {kind}"), &c)))
            .transpose()
    };
    let time = j.time.as_ref();
    let steps = sacct_steps::parse_steps(j.steps.as_ref());
    // Not through `allocated`: energy is a measurement, and a wrong one is unknown, not an error.
    let energy_j = sacct_steps::energy(j.tres.as_ref().and_then(|t| {
        let energy = t.allocated.iter().find(|i| i.kind == "energy")?;
        u64::try_from(energy.count?).ok()
    }));
    let time_limit_s = time
        .and_then(|t| t.limit)
        .map(|minutes| {
            minutes
                .checked_mul(60)
                .ok_or_else(|| out_of_range("time limit (minutes)", &minutes))
        })
        .transpose()?;
    Ok(Accounting {
        num_nodes: count32("node", None)?,
        cpus: count32("cpu", None)?.or(j.required.as_ref().and_then(|r| r.cpus)),
        gpus: count32("gres", Some("gpu"))?,
        // The allocated memory is the job's total; `required.memory` may be per CPU.
        req_mem_mb: allocated("mem", None)?.or(j.required.as_ref().and_then(|r| r.memory)),
        time_limit_s,
        submit: epoch(time.and_then(|t| t.submission))
            .map_err(|s| out_of_range("submit time", &s))?,
        start: epoch(time.and_then(|t| t.start)).map_err(|s| out_of_range("start time", &s))?,
        end: epoch(time.and_then(|t| t.end)).map_err(|s| out_of_range("end time", &s))?,
        array_job_id: j
            .array
            .as_ref()
            .and_then(|a| a.job_id)
            .filter(|&id| id != 0),
        array_task_id: j.array.as_ref().and_then(|a| a.task_id),
        job_id,
        cluster: j.cluster,
        name: j.name,
        user: j.user,
        group: j.group,
        account: j.account,
        partition: j.partition,
        qos: j.qos,
        state: j.state.and_then(|s| s.current),
        nodes: j.nodes,
        steps,
        energy_j,
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
/// to: raw id and cluster equal, submitted before the enqueue, the latest of those. When that run
/// was requeued, the job continues in its next run (same id, submitted later), so the chain is
/// followed to the run that ended it: Slurm 22.05 gives the interrupted run's epilog the same
/// restart count as the final run's, and the spool keeps only the first record of the two.
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
    let Some(mut run) = runs
        .iter()
        .copied()
        .filter(|a| a.submit.is_none_or(|s| s <= enqueued_at))
        .max_by_key(|a| a.submit)
    else {
        return Selection::Missing;
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
    let (exit_code, exit_signal) = exit.or(from_record).unzip();
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
        acct_steps: used.steps,
        neighbours: None,
    })
}

/// Runs `sacct` (JSON and text exit codes) for one job of `cluster`.
///
/// Facts from Slurm 22.05.8 behind the flags: `SLURM_TIME_FORMAT=%s` breaks `--json` ("Unable
/// to parse time format"), so the text query asks for UTC with `TZ` instead; without `-D` the text
/// output shows only the latest of several jobs with the same id, while `--json` lists them all.
pub fn query(
    sacct: &Path,
    job_id: u64,
    cluster: Option<&str>,
) -> Result<(Vec<Accounting>, Vec<ExitLine>), SacctError> {
    let id = job_id.to_string();
    let json = run(sacct, job_id, &["--json", "-j", &id], cluster)?;
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

/// Runs `sacct` with `args` (then `-M cluster` when one is named) in UTC and returns what it
/// printed; an error, naming `job_id` (the job the question is about), when it cannot run or
/// fails.
pub(crate) fn run(
    sacct: &Path,
    job_id: u64,
    args: &[&str],
    cluster: Option<&str>,
) -> Result<Vec<u8>, SacctError> {
    let mut command = Command::new(sacct);
    command.args(args).env("TZ", "UTC");
    if let Some(cluster) = cluster {
        command.arg("-M").arg(cluster);
    }
    let program = sacct.display().to_string();
    let out = command.output().map_err(|source| SacctError::Run {
        program: program.clone(),
        job_id,
        source,
    })?;
    if !out.status.success() {
        return Err(SacctError::Failed {
            program,
            job_id,
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(out.stdout)
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

    proptest::proptest! {
        /// Whatever sacct (or something in its place) answers: no panic, and every number either
        /// arrives as it was sent or the answer is an error naming the job.
        #[test]
        fn answers_never_panic_nor_change_a_number(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
            cpus in proptest::prop_oneof![0..5000i64, proptest::num::i64::ANY],
            minutes in proptest::prop_oneof![0..100_000u64, proptest::num::u64::ANY],
            end in proptest::prop_oneof![0..2_000_000_000i64, proptest::num::i64::ANY],
        ) {
            let _ = parse_json(&bytes);
            let answer = format!(
                r#"{{"jobs":[{{"job_id":7,"tres":{{"allocated":[{{"type":"cpu","count":{cpus}}}]}},
                "time":{{"limit":{minutes},"end":{end}}}}}]}}"#
            );
            match parse_json(answer.as_bytes()) {
                Ok(jobs) => {
                    proptest::prop_assert_eq!(jobs[0].cpus.map(i64::from), Some(cpus));
                    proptest::prop_assert_eq!(jobs[0].time_limit_s, Some(minutes * 60));
                    proptest::prop_assert_eq!(
                        jobs[0].end.map(|t| t.timestamp()),
                        Some(end).filter(|&e| e > 0)
                    );
                }
                Err(e) => {
                    let e = e.to_string();
                    proptest::prop_assert!(e.contains("job 7") && e.contains("out of range"), "{}", e);
                    proptest::prop_assert!(
                        u32::try_from(cpus).is_err()
                            || minutes.checked_mul(60).is_none()
                            || (end > 0 && DateTime::from_timestamp(end, 0).is_none())
                    );
                }
            }
        }
    }

    #[test]
    fn parses_real_sacct_json() {
        let jobs = parse_json(FIXTURE.as_bytes()).unwrap();
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

    #[test]
    fn selects_the_run_a_spool_record_means_among_repeated_ids() {
        let jobs = parse_json(FIXTURE.as_bytes()).unwrap();
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
        let mut jobs = parse_json(FIXTURE.as_bytes()).unwrap();
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
        let jobs = parse_json(FIXTURE.as_bytes()).unwrap();
        let Selection::Settled(fail) = select(&jobs, 1, Some("ci"), at(1_795_324_830)) else {
            panic!()
        };
        assert_eq!(exit_of(fail, &lines), Some((3, 0)));
    }
}
