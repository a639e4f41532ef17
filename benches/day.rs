//! One simulated day through the nightly DAG, end to end, with the time and peak memory of each
//! step: the question "does a big cluster's day fit in the night, on this machine?".
//!
//! 1. A BENCH_DAY_NODES-node cluster (default 1,000) whose jobs (BENCH_DAY_JOBS, default four
//!    per node) are placed as a scheduler would (`jobsight simulate --placement free-nodes`: no
//!    node runs two jobs at once), 50 metrics every 10 s. "ingest" is the simulator writing the
//!    jobs and their telemetry as Parquet (what the ingest step stores; its own speed against
//!    sacct and Prometheus is the ingest bench's). Then `jobsight dag run nightly` for the day
//!    with the most jobs, without models: features, Slurm workflows and their scores, rules,
//!    summaries, compaction, report pages, digests (to files), retention.
//! 2. The same with sliding windows and the models (diagnosis and anomaly score, trained first on
//!    another simulated day, not timed), on a BENCH_DAY_MODEL_NODES-node cluster (default 64):
//!    the windows and the models' reading of them are what grows fastest with the day.
//!
//! Each step's peak memory is the DAG's own log field `peak_mib` (the process's peak is reset
//! before each step); the run's peak is the largest of them. Nothing here is compared with
//! another tool: no other tool runs this pipeline; the features bench compares the step that
//! reads the telemetry with DuckDB, polars and pandas.
//! Run: `cargo bench -p jobsight --bench day`; `BENCH_DAY_KEEP=1` keeps part 1's warehouse and
//! configuration (its folder is printed) for running a step again by hand.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");
const DAY: &str = "2026-11-20";

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs jobsight with `args`; its stdout, stderr and wall time. Panics with both when it fails.
fn jobsight(args: &[&str]) -> (String, String, f64) {
    let (ok, stdout, stderr, seconds) = jobsight_may_fail(args);
    assert!(ok, "jobsight {args:?} failed: {stdout}\n{stderr}");
    (stdout, stderr, seconds)
}

/// Runs jobsight with `args`: whether it succeeded, its stdout, stderr and wall time.
fn jobsight_may_fail(args: &[&str]) -> (bool, String, String, f64) {
    let started = Instant::now();
    let out = Command::new(JOBSIGHT)
        .args(args)
        .output()
        .expect("run jobsight");
    let seconds = started.elapsed().as_secs_f64();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        seconds,
    )
}

/// The number before `marker` in `text` ("wrote 12 jobs and 345 telemetry rows" → 345 for
/// " telemetry rows").
fn number_before(text: &str, marker: &str) -> f64 {
    text.split(marker)
        .next()
        .and_then(|head| head.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Simulates the day into `data`; prints what it wrote and returns its wall time and peak.
fn simulate(data: &Path, nodes: u64, jobs: u64, anomaly_share: &str, seed: &str) -> (f64, f64) {
    let (out, _, seconds) = jobsight(&[
        "--data",
        data.to_str().unwrap_or_default(),
        "simulate",
        "--nodes",
        &nodes.to_string(),
        "--jobs",
        &jobs.to_string(),
        "--metrics",
        "50",
        "--step",
        "10",
        "--placement",
        "free-nodes",
        "--anomaly-share",
        anomaly_share,
        "--seed",
        seed,
        "--day",
        DAY,
    ]);
    for line in out.lines() {
        println!("  {line}");
    }
    (seconds, number_before(&out, " MiB"))
}

/// The first row of `query`'s CSV answer over `data` (the header left out).
fn first_row(data: &Path, query: &str) -> String {
    let (out, _, _) = jobsight(&[
        "--data",
        data.to_str().unwrap_or_default(),
        "sql",
        "--format",
        "csv",
        query,
    ]);
    out.lines().nth(1).unwrap_or_default().trim().to_string()
}

/// The day (of the simulated ones) with the most jobs.
fn busiest_day(data: &Path) -> String {
    let row = first_row(
        data,
        "SELECT day, count(*) AS jobs FROM jobs GROUP BY day ORDER BY jobs DESC, day LIMIT 1",
    );
    row.split(',').next().unwrap_or_default().to_string()
}

/// Telemetry rows of `day`.
fn day_rows(data: &Path, day: &str) -> u64 {
    let query = format!("SELECT count(*) FROM telemetry WHERE day = '{day}'");
    first_row(data, &query).parse().unwrap_or(0)
}

/// Runs the nightly DAG for `day` with `config`, and prints each step's time and peak memory
/// after the ingest row.
fn nightly(config: &Path, day: &str, ingest: (f64, f64)) {
    let next = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d")
        .expect("day")
        .succ_opt()
        .expect("next day");
    let now = format!("{next}T02:30:00Z");
    // A failed step is shown in its row; the run goes on with the next steps, as the DAG does.
    let (_, _, log, seconds) = jobsight_may_fail(&[
        "--config",
        config.to_str().unwrap_or_default(),
        "--log-format",
        "json",
        "dag",
        "run",
        "nightly",
        "--now",
        &now,
    ]);
    println!(
        "  {:<18} {:>9} {:>9}  what it did",
        "step", "seconds", "peak MiB"
    );
    println!(
        "  {:<18} {:>9.1} {:>9.0}  the simulator writing the day as Parquet",
        "ingest (simulated)", ingest.0, ingest.1
    );
    let mut peak: f64 = 0.0;
    for line in log.lines() {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if event["event"] != "step" {
            continue;
        }
        let step_peak = event["peak_mib"].as_f64().unwrap_or(f64::NAN);
        peak = peak.max(step_peak);
        let skip = [
            "ts", "event", "dag", "step", "outcome", "attempts", "seconds", "peak_mib",
        ];
        let counts: Vec<String> = event
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let what = if event["outcome"] == "ok" {
            counts.join(", ")
        } else {
            let error = event["error"].as_str().unwrap_or("?");
            format!("FAILED: {}", error.chars().take(300).collect::<String>())
        };
        println!(
            "  {:<18} {:>9.1} {:>9.0}  {what}",
            event["step"].as_str().unwrap_or("?"),
            event["seconds"].as_f64().unwrap_or(f64::NAN),
            step_peak,
        );
    }
    println!(
        "  {:<18} {:>9.1} {:>9.0}  the nightly DAG (one process; the peak is its largest step's)",
        "nightly, in all", seconds, peak
    );
    println!(
        "  {:<18} {:>9.1} {:>9.0}  ingest and the nightly DAG",
        "the day, in all",
        ingest.0 + seconds,
        peak.max(ingest.1)
    );
}

/// The per-job path at the big day's load: the jobs of the same cluster that end in one
/// 2-minute period of a day at this rate (the per-job DAG's schedule), enqueued by the epilog's
/// record, then `jobsight dag run per-job` for them with the big day in the warehouse: claim,
/// accounting and telemetry (the simulator stands in for sacct and the exporters, as in the
/// demo), features, rules, critical emails. Run in this process through the library, as the
/// daemon runs it.
fn per_job_latency(work: &Path, nodes: u64, jobs_per_day: u64) {
    use jobsight::schedule;
    use jobsight_ingest::simulator::SimulatedCluster;
    use jobsight_sim::{ClusterSpec, Placement};
    use std::sync::Arc;

    // The simulated day (job times count from its midnight).
    let day = chrono::NaiveDate::parse_from_str(DAY, "%Y-%m-%d").expect("day");
    let midnight = day.and_hms_opt(0, 0, 0).expect("midnight").and_utc();
    // Other job ids than the big day's, on the same cluster; jobs ending before noon.
    let spec = ClusterSpec {
        first_job_id: 90_000_000,
        name: "sim".into(),
        nodes: nodes as usize,
        jobs: jobs_per_day as usize,
        node_epilog_share: 0.0,
        anomaly_share: 0.15,
        placement: Placement::FreeNodes,
        ..ClusterSpec::default()
    };
    // The run is due at the first job end after noon: the jobs of the 2 minutes up to it.
    let day_jobs = jobsight_sim::simulate_day(&spec, 7);
    let noon = day_jobs
        .iter()
        .map(|j| j.end_s)
        .filter(|&end| end >= 12 * 3600)
        .min()
        .unwrap_or(12 * 3600)
        + 1;
    let batch: Vec<_> = day_jobs
        .into_iter()
        .filter(|j| (noon - 120..noon).contains(&j.end_s))
        .collect();
    let spool_dir = work.join("spool");
    jobsight_ingest::spool::Spool::init(&spool_dir, 0o755).expect("spool");
    let ended: Vec<_> = batch.iter().collect();
    jobsight_ingest::simulated_slurm::enqueue_ended(&spool_dir, &ended, &spec.name, day)
        .expect("enqueue");
    let mut settings = jobsight::config::Options::default()
        .resolve(Path::new("(bench)"))
        .expect("settings");
    settings.data = work.join("warehouse");
    settings.spool = spool_dir;
    settings.features.cores_per_node = Some(32);
    settings.rules.cores_per_node = Some(32);
    settings.notify.outbox = work.join("outbox");
    settings.report.dir = work.join("reports");
    let simulated = || SimulatedCluster::new(&batch, &spec, day, 10, 50, 7);
    let run_at = midnight + chrono::TimeDelta::seconds(noon as i64);
    let context = schedule::Context {
        settings,
        clock: schedule::Clock::Fixed(run_at),
        book: Arc::new(jobsight_rules::RuleBook::load(None).expect("rules")),
        models: None,
        accounting: Box::new(simulated()),
        telemetry: Some(Box::new(simulated())),
    };
    let dags = schedule::dag::load_all(None).expect("DAGs");
    let per_job = schedule::dag::find(&dags, "per-job").expect("the per-job DAG");
    let log = schedule::Log::new(schedule::LogFormat::Json, Box::new(std::io::sink()));
    let stop = std::sync::atomic::AtomicBool::new(false);
    jobsight_base::reset_peak_memory();
    let run = schedule::run_dag(
        &context,
        per_job,
        &schedule::RunRequest {
            scheduled_for: run_at,
            trigger: schedule::Trigger::Manual,
            days: None,
        },
        &log,
        &stop,
    )
    .expect("the per-job DAG");
    let waits = batch.iter().map(|j| noon - j.end_s);
    let (least, most) = (waits.clone().min().unwrap_or(0), waits.max().unwrap_or(0));
    println!(
        "\n  the per-job path with this day in the warehouse: the {} job(s) that ended in the 2 minutes (the per-job DAG's period) before {run_at} at {} jobs a day, judged by one run then",
        batch.len(),
        jobs_per_day
    );
    println!("  {:<18} {:>9}  what it did", "step", "seconds");
    for step in &run.steps {
        let counts: Vec<String> = step
            .counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        println!(
            "  {:<18} {:>9.2}  {:?}: {} job(s); {}",
            step.step,
            step.seconds,
            step.outcome,
            step.jobs,
            counts.join(", ")
        );
    }
    println!(
        "  {:<18} {:>9.2}  peak {} MiB; job end to findings = the wait for the run (here {least} to {most} s; under 120 s with the shipped schedule) + this",
        "per-job run",
        run.seconds,
        jobsight_base::peak_memory_mib().map_or("?".into(), |m| m.to_string()),
    );
}

/// A configuration file for the warehouse in `work`, with `extra` appended.
fn config(work: &Path, extra: &str) -> std::path::PathBuf {
    let path = work.join("jobsight.toml");
    let text = format!(
        "data = \"{data}\"\nspool = \"{spool}\"\n\n[features]\ncores_per_node = 32\n{extra}\n\n[notify]\noutbox = \"{outbox}\"\ndelivery = \"file\"\n\n[report]\ndir = \"{reports}\"\n",
        data = work.join("warehouse").display(),
        spool = work.join("spool").display(),
        outbox = work.join("outbox").display(),
        reports = work.join("reports").display(),
    );
    std::fs::write(&path, text).expect("write the configuration");
    path
}

fn main() {
    let nodes = env_number("BENCH_DAY_NODES", 1000);
    let jobs = env_number("BENCH_DAY_JOBS", 4 * nodes);
    let model_nodes = env_number("BENCH_DAY_MODEL_NODES", 64);

    // 1. The big day, without models.
    let work = tempfile::tempdir_in("/var/tmp").expect("temporary directory");
    let data = work.path().join("warehouse");
    println!(
        "1. {nodes} nodes, {jobs} jobs placed on free nodes, 50 metrics every 10 s; no windows, no models"
    );
    let ingest = simulate(&data, nodes, jobs, "0.15", "1");
    let day = busiest_day(&data);
    println!(
        "  the nightly DAG for {day}, the day with the most jobs: {:.1} M telemetry rows",
        day_rows(&data, &day) as f64 / 1e6
    );
    nightly(&config(work.path(), ""), &day, ingest);
    per_job_latency(work.path(), nodes, jobs);
    if std::env::var_os("BENCH_DAY_KEEP").is_some() {
        println!("  kept: {}", work.keep().display());
    } else {
        drop(work);
    }

    // 2. Windows and models, on a smaller cluster.
    if model_nodes == 0 {
        return;
    }
    let work = tempfile::tempdir_in("/var/tmp").expect("temporary directory");
    let training = work.path().join("training");
    println!(
        "\n2. {model_nodes} nodes, {} jobs placed on free nodes; sliding windows 60:15 and both models (trained first on another simulated day, not timed)",
        4 * model_nodes
    );
    let training_s = training.to_str().unwrap_or_default();
    simulate(&training, 16, 200, "0.5", "11");
    jobsight(&[
        "--data",
        training_s,
        "features",
        "--windows",
        "60:15",
        "--cores-per-node",
        "32",
    ]);
    let diagnosis = work.path().join("diagnosis.model");
    let score = work.path().join("score.model");
    for (kind, out) in [("diagnosis", &diagnosis), ("unsupervised", &score)] {
        jobsight(&[
            "--data",
            training_s,
            "model",
            "train",
            "--kind",
            kind,
            "--out",
            out.to_str().unwrap_or_default(),
        ]);
    }
    let data = work.path().join("warehouse");
    let ingest = simulate(&data, model_nodes, 4 * model_nodes, "0.15", "1");
    let day = busiest_day(&data);
    println!(
        "  the nightly DAG for {day}: {:.1} M telemetry rows",
        day_rows(&data, &day) as f64 / 1e6
    );
    let models = format!(
        "windows = \"60:15\"\n\n[model]\ndiagnosis = \"{}\"\nunsupervised = \"{}\"",
        diagnosis.display(),
        score.display()
    );
    nightly(&config(work.path(), &models), &day, ingest);
}
