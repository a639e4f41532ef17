//! The running DAG's steps without a cluster: a real `squeue --json` listing (22.05.8 capture,
//! replayed by a script) through list-running, features, classify, act and running-page; a dry
//! run that writes nothing; a failing listing that skips the steps after it instead of trying
//! them. The same DAG against a real Slurm and Prometheus is `tests/services/running.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common;

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

/// A site with `squeue` replaced by `script`, the running DAG read from a site file that runs
/// it as the one step of old (`run = "running"`) with no retry; no Prometheus listens.
fn site(dir: &Path, script: &str) -> PathBuf {
    let squeue = dir.join("squeue");
    common::write_script(&squeue, script);
    let dags = dir.join("dags");
    std::fs::create_dir_all(&dags).unwrap();
    std::fs::write(
        dags.join("running.toml"),
        "schedule = \"0 */10 * * * *\"\ncatch_up = \"skip\"\nretries = 0\n[[step]]\nrun = \"running\"\n",
    )
    .unwrap();
    let config = dir.join("jobsight.toml");
    std::fs::write(
        &config,
        format!(
            "[schedule]\ndags = \"{}\"\n[report]\ndir = \"{}\"\n[running]\nsqueue = \"{}\"\n",
            dags.display(),
            dir.join("reports").display(),
            squeue.display()
        ),
    )
    .unwrap();
    config
}

fn dag_run(config: &Path, data: &Path, extra: &[&str]) -> Output {
    Command::new(JOBSIGHT)
        .arg("--config")
        .arg(config)
        .arg("--data")
        .arg(data)
        .args(["dag", "run", "running"])
        .args(extra)
        .env("JOBSIGHT_NOW", "2026-11-30T12:00:00Z")
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The step lines of `dag run`'s report, as (step, outcome).
fn steps(out: &Output) -> Vec<(String, String)> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("  "))
        .map(|l| {
            let mut words = l.split_whitespace().skip(1);
            (
                words.next().unwrap().to_string(),
                words.next().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn each_step_runs_in_turn_and_a_dry_run_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let capture = common::repo().join("tests/fixtures/squeue-22.05.8.json");
    let config = site(dir.path(), &format!("cat '{}'", capture.display()));
    let data = dir.path().join("data");

    let dry = dag_run(&config, &data, &["--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry));
    let all_ok = [
        ("list-running", "ok"),
        ("features", "ok"),
        ("classify", "ok"),
        ("act", "ok"),
        ("running-page", "skipped"),
    ]
    .map(|(s, o)| (s.to_string(), o.to_string()));
    assert_eq!(steps(&dry), all_ok, "{}", text(&dry));
    assert!(text(&dry).contains("dry-run"), "{}", text(&dry));
    // Nothing written: no snapshot, no page, no runs row, no state, not even the DAG's lock.
    let written: Vec<_> = common::files_under(dir.path())
        .into_iter()
        .filter(|p| p.starts_with(&data) || p.starts_with(dir.path().join("reports")))
        .filter(|p| p.is_file())
        .collect();
    assert!(written.is_empty(), "a dry run wrote {written:?}");

    let real = dag_run(&config, &data, &[]);
    assert!(real.status.success(), "{}", text(&real));
    let mut expected = all_ok.to_vec();
    expected[4].1 = "ok".into();
    assert_eq!(steps(&real), expected, "{}", text(&real));
    let snapshot: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data.join(".schedule/running.json")).unwrap())
            .unwrap();
    let jobs = snapshot["jobs"].as_array().unwrap();
    assert!(!jobs.is_empty(), "{snapshot}");
    // No Prometheus answers: each job listed, and why it was not judged said, not a failure.
    assert!(
        jobs.iter().all(|j| j["not_judged"]
            .as_str()
            .unwrap()
            .contains("cannot reach prometheus")),
        "{snapshot}"
    );
    assert!(dir.path().join("reports/running.html").is_file());
}

#[test]
fn a_failed_listing_skips_the_steps_that_work_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = site(
        dir.path(),
        "echo 'slurm_load_jobs error: Unable to contact slurm controller' >&2; exit 1",
    );
    let data = dir.path().join("data");
    let out = dag_run(&config, &data, &[]);
    assert!(!out.status.success(), "{}", text(&out));
    let got = steps(&out);
    assert_eq!(
        got[0],
        ("list-running".into(), "failed".into()),
        "{}",
        text(&out)
    );
    assert!(
        got[1..].iter().all(|(_, o)| o == "skipped"),
        "{}",
        text(&out)
    );
    let all = text(&out);
    assert!(all.contains("Unable to contact slurm controller"), "{all}");
    assert!(
        all.contains("the list-running step it works on failed")
            && all.contains("the features step it works on was skipped")
            && all.contains("the classify step it works on was skipped"),
        "{all}"
    );
    // One attempt each: the skipped steps were not tried.
    assert!(!all.contains("step-retry"), "{all}");
    assert!(!data.join(".schedule/running.json").exists());
}
