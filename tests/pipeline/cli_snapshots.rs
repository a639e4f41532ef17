//! What users see, pinned: `jobsight --help`, `jobsight spool claim` and `jobsight spool status`
//! on a fixed spool. A change in these snapshots is a change in the user interface: review it
//! (`cargo insta review`, or accept with INSTA_UPDATE=always) rather than edit the files by hand.
use crate::common;

use std::path::Path;
use std::process::Command;

use chrono::DateTime;
use jobsight_ingest::spool::Spool;
use jobsight_render::Format;
use slurm_hooks::hook_env::record_from_env;
use slurm_hooks::spool_dir::enqueue;

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

/// A spool with three jobs enqueued at fixed times, one of them twice and one with a hostile name.
fn fixed_spool(root: &Path) -> Spool {
    let spool = Spool::init(root, 0o755).unwrap();
    let jobs: [(u64, &[u8], i64); 4] = [
        (101, b"lammps-prod", 1_795_000_000),
        (102, b"evil\nname\xff\x1b[31m", 1_795_000_060),
        (103, b"train.py", 1_795_000_120),
        (102, b"evil\nname\xff\x1b[31m", 1_795_000_121),
    ];
    for (job, name, at) in jobs {
        let mut env = common::slurmctld_env(job);
        env.retain(|(k, _)| k != "SLURM_JOB_NAME");
        env.push(("SLURM_JOB_NAME".into(), name.to_vec()));
        let env = env.into_iter().map(|(k, v)| {
            use std::os::unix::ffi::OsStringExt;
            (k.into(), std::ffi::OsString::from_vec(v))
        });
        let record = record_from_env(env, "ctl", DateTime::from_timestamp(at, 0).unwrap()).unwrap();
        enqueue(root, &record).unwrap();
    }
    spool
}

/// Replaces what differs between runs: the temporary directory, and the pid in record names
/// (records are enqueued by this process; only this test enqueues, so attempt numbers are fixed).
fn redact(text: &str, root: &Path) -> String {
    text.replace(&root.display().to_string(), "[SPOOL]")
        .replace(&format!(".{}.", std::process::id()), ".[PID].")
}

#[test]
fn status_and_claim_tables() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("spool");
    let spool = fixed_spool(&root);
    let now = DateTime::from_timestamp(1_795_003_723, 0).unwrap();
    let before = jobsight_render::render_status(&spool.status(now).unwrap(), Format::Table);
    insta::assert_snapshot!("status_before_claim", redact(&before, &root));

    let report = spool.claim(None).unwrap();
    let claimed = jobsight_render::render_claimed(&report, Format::Table);
    let set_aside = jobsight_render::render_set_aside(&report);
    insta::assert_snapshot!(
        "claim_table",
        redact(
            &format!(
                "{claimed}--- stderr ---\n{set_aside}{}\n",
                jobsight_render::claim_summary(&report)
            ),
            &root
        )
    );
    let after = jobsight_render::render_status(&spool.status(now).unwrap(), Format::Table);
    insta::assert_snapshot!("status_after_claim", redact(&after, &root));
}

#[test]
fn help_texts() {
    for args in [
        &["--help"][..],
        &["spool", "--help"],
        &["spool", "claim", "--help"],
        &["demo", "--help"],
        &["ingest", "--help"],
        &["dag", "--help"],
        &["dag", "run", "--help"],
        &["daemon", "--help"],
        &["summary", "--help"],
        &["report", "--help"],
        &["report", "job", "--help"],
        &["ballista", "--help"],
        &["ballista", "executor", "--help"],
    ] {
        let out = common::run_ok(
            Command::new(JOBSIGHT)
                .args(args)
                .env_remove("JOBSIGHT_SPOOL")
                .env("COLUMNS", "100"),
        );
        insta::assert_snapshot!(format!("help_{}", args.join("_").replace("--", "")), out);
    }
}

/// `jobsight summary` of a simulated day with job flow only (no features yet): usage and job
/// flow per user, efficiency and waste empty, and `judged_share` 0 saying why.
#[test]
fn summary_of_a_simulated_day() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    common::run_ok(
        Command::new(JOBSIGHT)
            .arg("--data")
            .arg(&data)
            .args([
                "simulate",
                "--nodes",
                "8",
                "--seed",
                "3",
                "--day",
                "2026-11-20",
            ])
            .env_remove("JOBSIGHT_CONFIG"),
    );
    let out = common::run_ok(
        Command::new(JOBSIGHT)
            .arg("--data")
            .arg(&data)
            .args([
                "summary",
                "--period",
                "day",
                "--by",
                "user",
                "--to",
                "2026-11-20",
            ])
            .env_remove("JOBSIGHT_CONFIG"),
    );
    // A person's summary fits 120 columns, in people's units (issue 67).
    assert!(out.lines().all(|l| l.chars().count() <= 120), "{out}");
    assert!(
        jobsight_base::units::unreadable_numbers(&out).is_empty(),
        "{out}"
    );
    assert!(jobsight_base::units::raw_names(&out).is_empty(), "{out}");
    insta::assert_snapshot!("summary_by_user", out);
}

/// The built-in DAGs as `jobsight dag list` shows them: their schedules and steps.
#[test]
fn dag_list() {
    let out = common::run_ok(
        Command::new(JOBSIGHT)
            .args(["dag", "list"])
            .env_remove("JOBSIGHT_CONFIG"),
    );
    insta::assert_snapshot!("dag_list", out);
}

/// `jobsight dag status` of a pipeline that has never run: every DAG is behind, said plainly,
/// and the exit status is 1.
#[test]
fn dag_status_of_a_pipeline_that_never_ran() {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    Spool::init(&spool, 0o700).unwrap();
    let out = Command::new(JOBSIGHT)
        .arg("--data")
        .arg(dir.path().join("data"))
        .arg("--spool")
        .arg(&spool)
        .args(["dag", "status", "--format", "json"])
        .env_remove("JOBSIGHT_CONFIG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems: Vec<&str> = status["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(
        problems[0].starts_with("DAG nightly has never run; it was due at "),
        "{problems:?}"
    );
    assert!(
        problems[1].starts_with("DAG per-job has never run; it was due at "),
        "{problems:?}"
    );
    assert!(
        problems[2].starts_with("DAG running has never run; it was due at "),
        "{problems:?}"
    );
    // No daemon ever started here, and the text says so under its first line.
    assert!(status["daemon"].is_null(), "{status}");
    let text = Command::new(JOBSIGHT)
        .arg("--data")
        .arg(dir.path().join("data"))
        .arg("--spool")
        .arg(&spool)
        .args(["dag", "status"])
        .env_remove("JOBSIGHT_CONFIG")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert_eq!(
        text.lines().nth(1),
        Some("no daemon start recorded"),
        "{text}"
    );
}

/// `jobsight sql` with no query reads statements until `\q`, here from a pipe: a statement may
/// span lines, `\dt` lists the warehouse's tables, `\d` a table's columns, and a refused
/// statement is an error on stderr after which the shell goes on.
#[test]
fn sql_without_a_query_is_a_shell() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    common::run_ok(
        Command::new(JOBSIGHT)
            .arg("--data")
            .arg(&data)
            .args([
                "simulate",
                "--nodes",
                "4",
                "--jobs",
                "5",
                "--seed",
                "3",
                "--day",
                "2026-11-20",
            ])
            .env_remove("JOBSIGHT_CONFIG"),
    );
    let mut child = Command::new(JOBSIGHT)
        .arg("--data")
        .arg(&data)
        .args(["sql", "--format", "csv"])
        .env_remove("JOBSIGHT_CONFIG")
        .env("JOBSIGHT_SQL_HISTORY", dir.path().join("history"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"\\dt\nSELECT count(*)\n  AS n FROM jobs;\n\\d labels\nDROP TABLE jobs;\nSELECT 2 AS two;\n\\q\nSELECT 3;\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("public,jobs,VIEW"), "{stdout}");
    assert!(stdout.contains("public,findings,BASE TABLE"), "{stdout}");
    assert!(stdout.contains("n\n5\n"), "{stdout}");
    assert!(stdout.contains("labelled_by,Utf8"), "{stdout}");
    assert!(stderr.contains("DROP TABLE is refused"), "{stderr}");
    assert!(stdout.contains("two\n2\n"), "{stdout}");
    assert!(!stdout.contains("\n3\n"), "after \\q: {stdout}");
}
