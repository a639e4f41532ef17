//! The running DAG against a real Slurm and a real Prometheus scraping the node exporter and
//! jobsight-exporter (each job's own cgroup series): two jobs share the node, one busy for the
//! whole test, one that works for 10 s and then only waits (`jobs/telemetry/stop-working`).
//! `jobsight dag run running` runs every 10 s, with the hung condition's dwell shortened to 15 s
//! by a site rule file (as a site tunes it).
//!
//! - The waiting job is warned within two runs of its wait crossing the dwell (plus the
//!   telemetry's own delays: the 5 s rate window and the 3 s lag); the busy job never.
//! - Under the cancel policy in dry-run, only audit rows appear (`would warn again`,
//!   `would cancel`) and the job runs on; with the policy on it gets its second warning, is
//!   cancelled (Slurm records CANCELLED), its error output has the reason (`scontrol notify`), its
//!   owner gets the email saying why, and `interventions` has every step.
//! - The warning's ledger row names the finished-job rule (`hung-job`), which the digests after
//!   the job's end therefore leave out (the planner's side is a unit test in the notify stage).
//!
//! Needs root and the package registry; takes about 3 minutes.
use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::services::{job_state, prometheus_config, sbatch, sh, wait_until};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");
const PROM_PORT: u16 = 19091;
const EXPORTER_PORT: u16 = 19101;
const CGROUP_PORT: u16 = 19307;
/// The hung condition's dwell in this test (3600 s built in).
const DWELL_S: i64 = 15;
/// How often the test runs the DAG (every 10 minutes by default).
const PERIOD_S: u64 = 10;
const BURN_S: i64 = 10;

fn sql(data: &Path, query: &str) -> Vec<serde_json::Value> {
    common::sql_json(JOBSIGHT, data, query)
}

/// One run of the running DAG with `config`; its summary.
fn run_dag(config: &Path, data: &Path) -> String {
    run_dag_with(config, data, &[])
}

/// One run of the running DAG with `config` and `extra` arguments; its summary and log.
fn run_dag_with(config: &Path, data: &Path, extra: &[&str]) -> String {
    let out = Command::new(JOBSIGHT)
        .arg("--config")
        .arg(config)
        .arg("--data")
        .arg(data)
        .args(["dag", "run", "running"])
        .args(extra)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprint!("{text}");
    assert!(out.status.success(), "{text}");
    text
}

/// The interventions of `job`, oldest first: (stage, dry_run, outcome, decided_at).
fn interventions(data: &Path, job: u64) -> Vec<(String, bool, String, String)> {
    sql(
        data,
        &format!(
            "SELECT stage, dry_run, outcome, CAST(decided_at AS VARCHAR) AS at FROM interventions \
             WHERE job_id = '{job}' ORDER BY decided_at, stage"
        ),
    )
    .iter()
    .map(|r| {
        (
            r["stage"].as_str().unwrap().to_string(),
            r["dry_run"].as_bool().unwrap(),
            r["outcome"].as_str().unwrap().to_string(),
            r["at"].as_str().unwrap().to_string(),
        )
    })
    .collect()
}

/// Runs the DAG every [`PERIOD_S`] until `done` holds (within `limit`).
fn run_until(
    config: &Path,
    data: &Path,
    what: &str,
    limit: Duration,
    mut done: impl FnMut() -> bool,
) {
    let started = Instant::now();
    loop {
        let run_started = Instant::now();
        run_dag(config, data);
        if done() {
            return;
        }
        assert!(
            started.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_secs(PERIOD_S).saturating_sub(run_started.elapsed()));
    }
}

fn epoch(text: &str) -> i64 {
    chrono::NaiveDateTime::parse_from_str(&text[..19], "%Y-%m-%d %H:%M:%S")
        .or_else(|_| chrono::NaiveDateTime::parse_from_str(&text[..19], "%Y-%m-%dT%H:%M:%S"))
        .unwrap()
        .and_utc()
        .timestamp()
}

#[test]
#[ignore = "needs root: installs and starts a real Slurm and Prometheus (run by .ci/run with --include-ignored)"]
fn a_job_that_stops_working_is_warned_then_cancelled_and_a_busy_one_never() {
    let site = common::services::slurm_site(JOBSIGHT, "running-test", "Slurm and Prometheus");
    let base = site.base.clone();
    let _services = common::services::start_prometheus_and_job_exporter(
        JOBSIGHT,
        &base.join("prom"),
        PROM_PORT,
        EXPORTER_PORT,
        CGROUP_PORT,
    );
    let cpus: f64 = sh("nproc").trim().parse().unwrap();

    // The site's running rules: the built-in file with the hung condition's dwell shortened.
    let rules = base.join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    let built_in =
        std::fs::read_to_string(common::repo().join("pipeline/rules/book/running.toml")).unwrap();
    assert!(built_in.contains("dwell_s = 3600\nat_end = \"hung-job\""));
    std::fs::write(
        rules.join("running.toml"),
        built_in.replace(
            "dwell_s = 3600\nat_end = \"hung-job\"",
            &format!("dwell_s = {DWELL_S}\nat_end = \"hung-job\""),
        ),
    )
    .unwrap();
    let out = base.join("out");
    std::fs::create_dir_all(&out).unwrap();
    sh(&format!("chmod 0777 {}", out.display()));
    let config = |policy: &str| {
        let c = prometheus_config(
            &base,
            PROM_PORT,
            2,
            &format!(
                "cgroup = true\n[features]\ncores_per_node = {cpus}\n[rules]\nmin_run_s = 10\ndir = \"{}\"\n[report]\ndir = \"{}\"\n[running]\n{policy}\n",
                rules.display(),
                base.join("reports").display()
            ),
        );
        let named = base.join(format!(
            "jobsight-{}.toml",
            if policy.contains("dry_run = true") {
                "dry"
            } else {
                "on"
            }
        ));
        std::fs::rename(&c, &named).unwrap();
        named
    };
    let policy = |dry: bool| {
        format!(
            "[running.cancel]\nenabled = true\ndry_run = {dry}\n[running.cancel.conditions.running-hung]\nsecond_warning_after_s = 10\ncancel_after_s = 20\n"
        )
    };
    let (dry, on) = (config(&policy(true)), config(&policy(false)));
    let data = base.join("data");

    let busy = sbatch(
        "telemetry/burn-cpu",
        &["--export=ALL,BURN_SECONDS=280".into(), "--time=6".into()],
    );
    let stopper = sbatch(
        "telemetry/stop-working",
        &[
            format!("--export=ALL,BURN_SECONDS={BURN_S},SLEEP_SECONDS=300").into(),
            format!("--error={}/stop-working.err", out.display()).into(),
        ],
    );
    wait_until("both jobs to run", Duration::from_secs(60), || {
        job_state(busy) == "RUNNING" && job_state(stopper) == "RUNNING"
    });
    let started = epoch(&sh(&format!("TZ=UTC squeue -h -j {stopper} -o %S")).replace('T', " "));

    // Dry run: the warning goes out; the second warning and the cancellation are only recorded.
    run_until(
        &dry,
        &data,
        "the dry run's cancellation",
        Duration::from_secs(150),
        || {
            interventions(&data, stopper)
                .iter()
                .any(|(s, d, o, _)| s == "cancel" && *d && o == "would cancel")
        },
    );
    let rows = interventions(&data, stopper);
    eprintln!("interventions of {stopper}: {rows:?}");
    let warning = rows.iter().find(|r| r.0 == "warning").unwrap();
    assert_eq!(warning.2, "emailed", "{rows:?}");
    // Not before the wait lasted the dwell (a pause is not a hang), and within two runs of its
    // crossing it, after the telemetry's own delays (the 5 s rate window, the 3 s lag).
    let crossing = started + BURN_S + DWELL_S;
    let warned_after = epoch(&warning.3) - crossing;
    eprintln!("warned {warned_after} s after the wait crossed the dwell (runs every {PERIOD_S} s)");
    assert!(
        warned_after >= 0,
        "warned before the dwell was over: {rows:?}"
    );
    assert!(
        warned_after <= 2 * PERIOD_S as i64 + 5 + 3 + 2,
        "warned {warned_after} s after crossing: {rows:?}"
    );
    assert!(
        rows.iter()
            .any(|r| r.0 == "second-warning" && r.1 && r.2 == "would warn again"),
        "{rows:?}"
    );
    assert_eq!(job_state(stopper), "RUNNING", "a dry run cancels nothing");
    assert!(
        interventions(&data, busy).is_empty(),
        "the busy job: {:?}",
        interventions(&data, busy)
    );

    // What `jobsight running` and the page show now.
    let shown = sh(&format!(
        "{JOBSIGHT} --config {} --data {} running",
        dry.display(),
        data.display()
    ));
    assert!(
        shown.contains("2 running job(s)") && shown.contains("running-hung for"),
        "{shown}"
    );
    assert!(base.join("reports/running.html").is_file());

    // A dry run with the policy on shows its next stage and changes nothing: not the audit,
    // the snapshot, the runs, the outbox or the job.
    let before = (
        interventions(&data, stopper),
        std::fs::read(data.join(".schedule/running.json")).unwrap(),
        sql(&data, "SELECT count(*) AS n FROM runs"),
        std::fs::read_dir(base.join("outbox/sent")).unwrap().count(),
    );
    let shown = run_dag_with(&on, &data, &["--dry-run"]);
    assert!(
        shown.contains(&format!(":{stopper}"))
            && shown.contains("stage=second-warning")
            && shown.contains("email the owner the second warning"),
        "{shown}"
    );
    let after = (
        interventions(&data, stopper),
        std::fs::read(data.join(".schedule/running.json")).unwrap(),
        sql(&data, "SELECT count(*) AS n FROM runs"),
        std::fs::read_dir(base.join("outbox/sent")).unwrap().count(),
    );
    assert!(before == after, "the dry run changed something");
    assert_eq!(job_state(stopper), "RUNNING");

    // The policy on: the second warning, then the cancellation.
    run_until(
        &on,
        &data,
        "the cancellation",
        Duration::from_secs(90),
        || job_state(stopper).is_empty(),
    );
    let rows = interventions(&data, stopper);
    eprintln!("interventions of {stopper}: {rows:?}");
    assert!(
        rows.iter()
            .any(|r| r.0 == "second-warning" && !r.1 && r.2 == "emailed"),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|r| r.0 == "cancel" && !r.1 && r.2 == "cancelled; emailed"),
        "{rows:?}"
    );
    let state = sh(&format!("sacct -n -X -P -j {stopper} -o State"))
        .trim()
        .to_string();
    assert!(state.starts_with("CANCELLED"), "sacct: {state}");
    let err = std::fs::read_to_string(out.join("stop-working.err")).unwrap_or_default();
    assert!(
        err.contains("jobsight: cancelling job"),
        "the job's error output: {err:?}"
    );
    assert_eq!(job_state(busy), "RUNNING");
    assert!(
        interventions(&data, busy).is_empty(),
        "the busy job was never warned"
    );

    // The owner's emails: warning, second warning, cancellation, each once.
    let sent = std::fs::read_dir(base.join("outbox/sent"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect::<Vec<_>>();
    let mine: Vec<&String> = sent
        .iter()
        .filter(|k| k.contains(&format!("job-{stopper}.")))
        .collect();
    assert_eq!(mine.len(), 3, "{sent:?}");
    let cancelled = mine.iter().find(|k| k.ends_with(".cancelled")).unwrap();
    let eml = sh(&format!(
        "cat {}/outbox/sent/{cancelled}/message.eml",
        base.display()
    ));
    assert!(
        eml.contains("was cancelled") && eml.contains("looks hung"),
        "{eml}"
    );
    // The ledger names the finished-job rule, so the digests after the end leave it out.
    let ledger = sql(
        &data,
        &format!("SELECT kind, finding FROM notifications WHERE job_id = '{stopper}'"),
    );
    assert!(
        ledger
            .iter()
            .all(|r| r["kind"] == "running" && r["finding"] == "hung-job"),
        "{ledger:?}"
    );
    sh(&format!("scancel {busy}"));
}
