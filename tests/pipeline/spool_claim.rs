//! `jobsight spool claim` and `jobsight spool status` as a user and a scheduler run them:
//! several claimers at once never get the same record and together get every record; the JSON
//! output is one record per line; errors name the spool.
use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

use slurm_hooks::hook_env::record_from_env;
use slurm_hooks::spool_dir::enqueue;

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

fn jobsight(spool: &Path) -> Command {
    let mut command = Command::new(JOBSIGHT);
    command
        .env_remove("JOBSIGHT_SPOOL")
        .arg("spool")
        .arg("--spool")
        .arg(spool);
    command
}

fn enqueue_jobs(spool: &Path, jobs: std::ops::RangeInclusive<u64>) {
    for job in jobs {
        let env = common::slurmctld_env(job).into_iter().map(|(k, v)| {
            use std::os::unix::ffi::OsStringExt;
            (k.into(), std::ffi::OsString::from_vec(v))
        });
        let record = record_from_env(
            env,
            "ctl",
            chrono::DateTime::from(std::time::SystemTime::now()),
        )
        .unwrap();
        enqueue(spool, &record).unwrap();
    }
}

/// Job ids in `claim --format json` output, checking each line is a whole record.
fn claimed_ids(stdout: &str) -> Vec<u64> {
    stdout
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(value["path"].as_str().unwrap().contains("/cur/"));
            value["record"]["job_id"].as_u64().unwrap()
        })
        .collect()
}

#[test]
fn concurrent_claimers_split_the_records_exactly() {
    const JOBS: u64 = 3000;
    let dir = tempfile::tempdir().unwrap();
    common::run_ok(jobsight(dir.path()).args(["init", "--mode", "755"]));
    enqueue_jobs(dir.path(), 1..=JOBS);
    // Three claimers started together, each in small batches so they interleave.
    let children: Vec<_> = (0..3)
        .map(|_| {
            let mut command = jobsight(dir.path());
            command
                .args(["claim", "--format", "json"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            command.spawn().unwrap()
        })
        .collect();
    let mut all = Vec::new();
    let mut races = 0;
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        all.extend(claimed_ids(&String::from_utf8_lossy(&out.stdout)));
        let summary = String::from_utf8_lossy(&out.stderr).into_owned();
        races += summary
            .split("; ")
            .last()
            .and_then(|s| s.split(' ').next())
            .unwrap()
            .parse::<usize>()
            .unwrap();
    }
    let unique: BTreeSet<u64> = all.iter().copied().collect();
    assert_eq!(all.len(), JOBS as usize, "no record claimed twice");
    assert_eq!(unique, (1..=JOBS).collect(), "every record claimed");
    eprintln!("claimers lost {races} races to each other");
    let status = common::run_ok(jobsight(dir.path()).args(["status", "--format", "json"]));
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["counts"]["cur"], JOBS);
    assert_eq!(status["counts"]["new"], 0);
    assert!(status["oldest_pending"].is_null());
}

#[test]
fn duplicates_and_failures_are_reported_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    common::run_ok(jobsight(dir.path()).arg("init"));
    enqueue_jobs(dir.path(), 1..=3);
    enqueue_jobs(dir.path(), 2..=2);
    std::fs::write(
        dir.path().join("new/00000000000000000000.bad.json"),
        b"\xff\xfe",
    )
    .unwrap();
    let out = jobsight(dir.path()).arg("claim").output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stdout.lines().count(),
        1 + 3,
        "header and three jobs:\n{stdout}"
    );
    assert!(
        stderr.contains("failed: ") && stderr.contains("not a spool record"),
        "{stderr}"
    );
    assert!(
        stderr.contains("duplicate: ")
            && stderr.contains("job 2 of cluster ci (restart 0) was already claimed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("claimed 3 record(s); set aside 1 duplicate(s) and 1 failed"),
        "{stderr}"
    );

    let status = common::run_ok(jobsight(dir.path()).arg("status"));
    for line in [
        "cur               3",
        "failed            1",
        "duplicate         1",
        "oldest pending: none",
    ] {
        assert!(status.contains(line), "missing {line:?} in:\n{status}");
    }
}

#[test]
fn status_shows_the_oldest_pending_record() {
    let dir = tempfile::tempdir().unwrap();
    common::run_ok(jobsight(dir.path()).arg("init"));
    enqueue_jobs(dir.path(), 41..=42);
    let status = common::run_ok(jobsight(dir.path()).arg("status"));
    assert!(status.contains("new               2"), "{status}");
    assert!(
        status.contains("oldest pending: ") && status.contains(".ci.41.0.epilog_slurmctld.ctl."),
        "{status}"
    );
}

#[test]
fn a_directory_that_is_not_a_spool_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = jobsight(dir.path()).arg("claim").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is not a spool directory")
            && stderr.contains("jobsight spool init --spool "),
        "{stderr}"
    );
}

/// The attacks of `ops/hostile-inputs.sh` (SQL that writes, FIFOs and planted links in the spool,
/// link loops in import folders, huge node lists and hostile names for the hook, absurd settings,
/// numbers that would wrap, control and bidirectional characters, a trace named with 100 × 'é' and
/// a NaN run time; round two's endless parses and doubling WITH chains, label files and a
/// `job_0007` cgroup directory) against the binaries this build made: the script
/// fails on the first attack that gets through, and is what was run against the release build.
#[test]
fn the_shipped_binaries_withstand_the_hostile_inputs() {
    let epilog = Path::new(JOBSIGHT).with_file_name("jobsight-epilog");
    assert!(
        epilog.is_file(),
        "{} is missing: build the workspace (`cargo build --workspace`) first",
        epilog.display()
    );
    // The checkout the test runs in, not the one it was compiled in.
    let script = common::repo().join("ops/hostile-inputs.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(JOBSIGHT)
        .env_remove("JOBSIGHT_CONFIG")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("all 12 attack groups handled"), "{stdout}");
}
