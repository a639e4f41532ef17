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
//!
//! Below it: `json` reads the JSON answer into [`Accounting`] records, `exit_lines` the text
//! answer's exit codes and submit lines, and `selection` picks the record a spool record means;
//! this module holds the records, the `jobs` row built from one, and the query itself. Its
//! tests, here, read the real captures of every release through all three.

mod exit_lines;
mod json;
mod selection;

pub use exit_lines::{ExitLine, dependency_in_submit_line, exit_of, line_of, parse_exit_codes};
pub use json::parse_json;
pub use selection::{Selection, nodes_changed, select};

use std::path::Path;

use chrono::{DateTime, Utc};
use slurm_hooks::SpoolRecord;

use super::JobRow;
use super::sacct_steps::{self, StepAccounting};
use jobsight_base::command::CommandError;

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
    use jobsight_base::slurm_text::is_final_state as is_final;
    use serde_json::Value;

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

    const FIXTURE: &str = include_str!("../../../../tests/fixtures/sacct-22.05.8.json");

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
