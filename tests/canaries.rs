//! The canary jobs of `jobs/canaries/` on a real single-node Slurm with a real Prometheus and
//! node exporter, processed by the pipeline from the epilog onward: `jobsight-epilog` enqueues
//! each job, `jobsight ingest` claims it, takes its record from sacct and its node's telemetry
//! from Prometheus, computes its features and applies the built-in rules. Each canary must get
//! its expected finding, and the healthy CPU-bound job none.
//!
//! The jobs run one after the other (node-level telemetry cannot separate two jobs on one node),
//! 75 s each; `rules.min_run_s` is lowered to 60 s for them, as `jobs/canaries/README.md` tells a
//! site to do. Needs root and the package registry; takes about 8 minutes.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;

use std::time::Duration;

use common::services::{
    ingest_until_done, install_hook, job_state, prometheus_config, sbatch, sh, start_prometheus,
    start_slurm, test_base, wait_until,
};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");
const PROM_PORT: u16 = 19091;
const EXPORTER_PORT: u16 = 19101;
const CANARY_SECONDS: u64 = 75;

/// Each canary and the findings it must get (empty: none at all).
const CANARIES: [(&str, &[&str]); 5] = [
    ("hung", &["hung-job"]),
    ("serial", &["serial-on-many-cores"]),
    ("leak", &["memory-leak"]),
    ("overrequest", &["memory-overrequest", "time-overrequest"]),
    ("healthy", &[]),
];

#[test]
#[ignore = "needs root: installs and starts a real Slurm and Prometheus (run by .ci/run with --include-ignored)"]
fn each_canary_gets_its_expected_finding_and_the_healthy_job_none() {
    let epilog = common::services::root_and_epilog(JOBSIGHT, "Slurm and Prometheus");
    let base = test_base("canaries-test");
    let spool = base.join("spool");
    let hook = install_hook(
        &base,
        epilog.parent().unwrap(),
        &spool,
        "epilog-slurmctld.sh",
        "slurm",
    );
    let _slurm = start_slurm(&hook, None);
    let _prometheus = start_prometheus(&base.join("prom"), PROM_PORT, EXPORTER_PORT, "1s");
    let cpus: u32 = sh("nproc").trim().parse().unwrap();
    assert!(
        cpus >= 2,
        "the serial canary needs a node with 2 or more CPUs"
    );

    let mut jobs: Vec<(u64, &str, &[&str])> = Vec::new();
    for (canary, expected) in CANARIES {
        let job = sbatch(
            &format!("canaries/{canary}"),
            &[format!("--export=ALL,CANARY_SECONDS={CANARY_SECONDS}").into()],
        );
        eprintln!("canary {canary}: job {job}");
        wait_until(
            &format!("job {job} (canary {canary}) to end"),
            Duration::from_secs(CANARY_SECONDS + 120),
            || job_state(job).is_empty(),
        );
        jobs.push((job, canary, expected));
    }

    let config = prometheus_config(
        &base,
        PROM_PORT,
        2,
        &format!("[features]\ncores_per_node = {cpus}\n[rules]\nmin_run_s = 60\n"),
    );
    let data = base.join("data");
    let (_, log) = ingest_until_done(
        JOBSIGHT,
        &config,
        &data,
        &spool,
        CANARIES.len(),
        Duration::from_secs(120),
    );

    // What the per-job path found, as stored.
    let rows = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT f.job_id, f.rule, f.node, f.window_start, f.window_end, j.start, j.\"end\", f.message
         FROM findings f JOIN jobs j ON j.job_id = f.job_id ORDER BY f.job_id, f.rule",
    );
    let summary = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT job_id, judgeable, cpu_used_cores, mem_used_max_mb, mem_eff, time_eff FROM job_summary ORDER BY job_id",
    );
    eprintln!("job_summary: {summary:?}");
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in &rows {
        eprintln!("finding: {r}");
        found
            .entry(r["job_id"].as_str().unwrap().to_string())
            .or_default()
            .push(r["rule"].as_str().unwrap().to_string());
    }
    for (job, canary, expected) in &jobs {
        let got = found.get(&job.to_string()).cloned().unwrap_or_default();
        if expected.is_empty() {
            assert!(
                got.is_empty(),
                "canary {canary} (job {job}) should have no findings: {got:?}"
            );
        }
        for rule in *expected {
            assert!(
                got.iter().any(|g| g == rule),
                "canary {canary} (job {job}) lacks {rule}: it got {got:?}\n{log}"
            );
        }
    }
    // The leak is placed on the node, inside the job's run time.
    let leak_job = jobs.iter().find(|j| j.1 == "leak").unwrap().0.to_string();
    let leak = rows
        .iter()
        .find(|r| r["job_id"] == leak_job.as_str() && r["rule"] == "memory-leak")
        .unwrap();
    assert_eq!(leak["node"], sh("hostname -s").trim());
    let time = |k: &str| leak[k].as_str().unwrap().to_string();
    assert!(
        time("window_start") >= time("start") && time("window_end") <= time("end"),
        "{leak}"
    );
    // The request canary is told what to ask for.
    let over = jobs
        .iter()
        .find(|j| j.1 == "overrequest")
        .unwrap()
        .0
        .to_string();
    let advice: Vec<&str> = rows
        .iter()
        .filter(|r| r["job_id"] == over.as_str())
        .filter_map(|r| r["message"].as_str())
        .collect();
    assert!(advice.iter().any(|m| m.contains("16.0 GB")), "{advice:?}");
}
