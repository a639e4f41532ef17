//! `jobsight demo`: the pipeline, run end to end on a simulated cluster.
//!
//! It simulates a day of finished jobs ([`crate::simulate`]), runs the real `jobsight-epilog`
//! binary once per hook invocation with the exact environment Slurm would give it, claims the
//! spool ([`crate::spool`]) and reports what it found, counting from the claimed records (not from
//! the simulation), so the numbers prove the hook and the claim worked. Then it ingests the
//! models trained on a second simulated day (never on the day they judge), then runs the real
//! per-job DAG ([`crate::schedule`]) with the simulator standing in for sacct and the node
//! exporters ([`crate::ingest::simulator::SimulatedCluster`]) and the nightly DAG for the day,
//! and shows what landed in the warehouse with SQL ([`crate::query`]): features, findings,
//! predictions, the models' evaluation on the day, and the emails in a file outbox.
//!
//! Needs no services and no configuration; writes only under its directory.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::catalog::CatalogError;
use crate::classify::ClassifyError;
use crate::features::{self, FeaturesError};
use crate::ingest::simulator::{self, SimulatedCluster};
use crate::model::predict::Models;
use crate::model::{self, Kind, LabelsFrom, ModelError, TrainOptions};
use crate::notify;
use crate::output::{self, Format};
use crate::query::{self, QueryError, SqlFormat};
use crate::rules::{self, RulesError};
use crate::schedule;
use crate::simulate::{self, ClusterSpec};
use crate::spool::{Spool, SpoolError};
use std::sync::Arc;

/// The simulated day, sampling step and metric count of the demo: coarse enough to run in
/// seconds, fine enough to show each anomaly's signature.
const DEMO_DAY: chrono::NaiveDate = match chrono::NaiveDate::from_ymd_opt(2026, 11, 20) {
    Some(day) => day,
    None => panic!("valid date"),
};
const DEMO_STEP_S: u64 = 30;
const DEMO_METRICS: usize = 24;

/// The models' windows in the demo. The evaluation protocol's 60 s windows assume about one
/// sample a second (as in the HPAS runs); at one sample every 30 s they would hold two samples
/// each and outnumber the samples, so the demo's windows are 5 minutes wide, every 2.5 minutes.
const DEMO_WINDOWS: features::WindowSpec = features::WindowSpec {
    window_s: 300,
    stride_s: 150,
};

/// The day the models learn from: a smaller cluster on which most jobs carry an anomaly, so that
/// every type the simulator injects has a few jobs; its seed is the demo's plus this offset.
const TRAINING_NODES: usize = 8;
const TRAINING_JOBS: usize = 200;
const TRAINING_ANOMALY_SHARE: f64 = 0.5;
const TRAINING_SEED_OFFSET: u64 = 1000;
/// The application the training day leaves out: the demo's day has it, the models never saw it.
/// Sequence search: the most unlike the others (reads, metadata, little bandwidth).
const UNSEEN_APPLICATION: &str = "blast";

/// Small enough to train in seconds in a debug build; the defaults are for real training sets.
const DEMO_TREES: u16 = 50;
const DEMO_WINDOWS_PER_CLASS: usize = 500;
const DEMO_SAMPLES_PER_TREE: usize = 1000;

/// What the demo asks the warehouse, as an admin would.
const DEMO_QUERIES: [(&str, &str); 3] = [
    (
        "jobs by final state:",
        "SELECT state, count(*) AS jobs, round(sum(cpus * (CAST(\"end\" AS BIGINT) - CAST(start AS BIGINT)) / 3.6e9), 1) AS core_hours FROM jobs GROUP BY state ORDER BY jobs DESC",
    ),
    (
        "ground truth the simulator recorded (labels):",
        "SELECT anomaly, count(*) AS jobs FROM labels GROUP BY anomaly ORDER BY jobs DESC, anomaly",
    ),
    (
        "the memory leaks, seen in the telemetry of the leaking node inside the labelled window:",
        "SELECT l.job_id, t.node, round((max(t.value) - min(t.value)) / 1e9, 1) AS mem_growth_gb FROM labels l JOIN telemetry t ON t.job_id = l.job_id AND t.node = split_part(l.params, '=', 2) AND t.ts BETWEEN l.start AND l.\"end\" WHERE l.anomaly = 'memleak' AND t.metric = 'mem_used_bytes' GROUP BY l.job_id, t.node ORDER BY l.job_id",
    ),
];

/// What the demo shows of the features.
const FEATURE_QUERIES: [(&str, &str); 2] = [
    (
        "the largest wastes of allocated CPU, with the simulator's truth beside them (job_summary):",
        "SELECT s.job_id, l.anomaly AS truth, s.duty_cycle, round(s.cpu_eff, 2) AS cpu_eff, round(s.mem_eff, 2) AS mem_eff, round(s.time_eff, 2) AS time_eff, round(s.wasted_core_hours, 1) AS wasted_core_h FROM job_summary s JOIN labels l ON l.job_id = s.job_id ORDER BY s.wasted_core_hours DESC NULLS LAST LIMIT 8",
    ),
    (
        "the largest memory growth per node (features.max_rise of mem_used_bytes; slope over the whole job beside it):",
        "SELECT f.job_id, f.node, l.anomaly AS truth, round(f.max_rise / 1e9, 1) AS rise_gb, round(f.slope_per_h / 1e9, 2) AS slope_gb_per_h FROM features f JOIN labels l ON l.job_id = f.job_id WHERE f.metric = 'mem_used_bytes' ORDER BY f.max_rise DESC NULLS LAST LIMIT 5",
    ),
];

/// What the demo shows of the one verdict per job.
const PREDICTION_QUERIES: [(&str, &str); 3] = [
    (
        "one verdict per job (rules and models together) against the simulator's truth (predictions, labels):",
        "SELECT l.anomaly AS truth, count(*) AS jobs, sum(CASE WHEN p.verdict = l.anomaly THEN 1 ELSE 0 END) AS same_verdict, string_agg(DISTINCT p.verdict, ' ') AS verdicts FROM predictions p JOIN labels l ON l.job_id = p.job_id GROUP BY l.anomaly ORDER BY jobs DESC, truth",
    ),
    (
        "the same for the application the models never saw (blast), judged on job-relative features:",
        "SELECT l.anomaly AS truth, count(*) AS jobs, sum(CASE WHEN p.verdict = l.anomaly THEN 1 ELSE 0 END) AS same_verdict, string_agg(DISTINCT p.verdict, ' ') AS verdicts FROM predictions p JOIN labels l ON l.job_id = p.job_id JOIN jobs j ON j.job_id = p.job_id WHERE j.name LIKE 'blast-%' GROUP BY l.anomaly ORDER BY jobs DESC, truth",
    ),
    (
        "one job per verdict: where, when, how sure, and which rules agreed (predictions):",
        "SELECT job_id, verdict, round(confidence, 2) AS confidence, source, node, window_start, window_end, agreeing_rules FROM (SELECT *, row_number() OVER (PARTITION BY verdict ORDER BY confidence DESC, job_id) AS k FROM predictions WHERE verdict <> 'healthy') WHERE k = 1 ORDER BY verdict",
    ),
];

/// What the demo shows of the email ledger.
const NOTIFY_QUERIES: [(&str, &str); 1] = [(
    "the ledger of what was sent (notifications): messages and findings per kind",
    "SELECT kind, count(DISTINCT key) AS messages, count(DISTINCT user) AS users, count(finding) AS findings, min(status) AS status FROM notifications GROUP BY kind ORDER BY kind",
)];

/// What the demo shows of the classification.
const CLASSIFY_QUERIES: [(&str, &str); 4] = [
    (
        "findings per rule, with the simulator's truth of the flagged jobs (findings, labels):",
        "SELECT f.rule, f.severity, f.\"group\", count(DISTINCT f.job_id) AS jobs, string_agg(DISTINCT l.anomaly, ' ') AS truth FROM findings f JOIN labels l ON l.job_id = f.job_id GROUP BY f.rule, f.severity, f.\"group\" ORDER BY jobs DESC, f.rule",
    ),
    (
        "what the owners of three flagged jobs will read (message and fix, rendered with the job's own numbers):",
        "SELECT job_id, rule, node, message, fix FROM (SELECT *, row_number() OVER (PARTITION BY rule ORDER BY job_id) AS k FROM findings WHERE rule IN ('memory-leak', 'serial-on-many-cores', 'memory-overrequest')) WHERE k = 1 ORDER BY rule",
    ),
    (
        "job classes (classes):",
        "SELECT class, name, count(*) AS jobs FROM classes GROUP BY class, name ORDER BY jobs DESC, class LIMIT 12",
    ),
    (
        "the thresholds block of one job (thresholds):",
        "SELECT characteristic, round(value, 3) AS value, level, low_below, high_from FROM thresholds WHERE job_id = (SELECT min(job_id) FROM findings WHERE rule = 'memory-leak') ORDER BY characteristic",
    ),
];

#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// Directory for the spool; a new temporary directory (kept afterwards) when `None`.
    pub dir: Option<PathBuf>,
    pub spec: ClusterSpec,
    pub seed: u64,
    /// The `jobsight-epilog` binary to run.
    pub epilog_bin: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error(
        "the hook binary {path} does not exist: build it with `cargo build --workspace` or pass --epilog-bin"
    )]
    EpilogMissing { path: PathBuf },
    #[error("{path} already holds a spool: give the demo an empty or new directory")]
    NotEmpty { path: PathBuf },
    #[error("cannot create the demo directory: {0}")]
    TempDir(io::Error),
    #[error("cannot run {path} for job {job_id}: {source}")]
    Spawn {
        path: PathBuf,
        job_id: u64,
        source: io::Error,
    },
    #[error("{path} exited with {status} for job {job_id}: the hook must always exit 0")]
    HookExit {
        path: PathBuf,
        job_id: u64,
        status: std::process::ExitStatus,
    },
    #[error(transparent)]
    Spool(#[from] SpoolError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error(transparent)]
    Features(#[from] FeaturesError),
    #[error(transparent)]
    Classify(#[from] ClassifyError),
    #[error(transparent)]
    Rules(#[from] RulesError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("cannot create {path}: {source}")]
    CreateDir { path: PathBuf, source: io::Error },
    #[error(transparent)]
    Notify(#[from] notify::NotifyError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Schedule(#[from] schedule::ScheduleError),
    #[error(transparent)]
    Dag(#[from] schedule::dag::DagError),
    #[error("cannot start the query runtime: {0}")]
    Runtime(io::Error),
    #[error("cannot write the report: {0}")]
    Output(io::Error),
}

/// The default location of `jobsight-epilog`: beside the running `jobsight` binary, which is
/// where `cargo build` and an installation put it.
pub fn default_epilog_bin() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("jobsight-epilog")))
        .unwrap_or_else(|| PathBuf::from("jobsight-epilog"))
}

/// Latency percentile (nearest rank) of a sorted list.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// Runs the demo and writes its report to `out`.
pub fn run(options: &DemoOptions, out: &mut dyn Write) -> Result<(), DemoError> {
    if !options.epilog_bin.is_file() {
        return Err(DemoError::EpilogMissing {
            path: options.epilog_bin.clone(),
        });
    }
    let dir = match &options.dir {
        Some(dir) => dir.clone(),
        None => tempfile::Builder::new()
            .prefix("jobsight-demo-")
            .tempdir()
            .map_err(DemoError::TempDir)?
            .keep(),
    };
    let spool_path = dir.join("spool");
    if spool_path.exists() {
        return Err(DemoError::NotEmpty { path: dir });
    }
    let spool = Spool::init(&spool_path, 0o755)?;
    let w = |out: &mut dyn Write, text: String| {
        out.write_all(text.as_bytes()).map_err(DemoError::Output)
    };

    let spec = &options.spec;
    w(
        out,
        format!(
            "jobsight demo: simulated cluster \"{}\" ({} nodes x {} CPUs), {} finished jobs, seed {}\nspool: {}\n\n",
            spec.name,
            spec.nodes,
            spec.cpus_per_node,
            spec.jobs,
            options.seed,
            spool_path.display()
        ),
    )?;

    // 1. Every hook invocation Slurm would make, through the real binary.
    let jobs = simulate::simulate_day(spec, options.seed);
    let mut latencies = Vec::new();
    let (mut ctld_runs, mut node_runs, mut complaints) = (0usize, 0usize, 0usize);
    let started = Instant::now();
    for job in &jobs {
        for env in simulate::hook_environments(&spec.name, job) {
            let is_ctld = env
                .iter()
                .any(|(k, v)| k == "SLURM_SCRIPT_CONTEXT" && v == b"epilog_slurmctld");
            let t0 = Instant::now();
            let result = hook_command(&options.epilog_bin, &spool_path, &env)
                .output()
                .map_err(|source| DemoError::Spawn {
                    path: options.epilog_bin.clone(),
                    job_id: job.job_id,
                    source,
                })?;
            latencies.push(t0.elapsed());
            if !result.status.success() {
                return Err(DemoError::HookExit {
                    path: options.epilog_bin.clone(),
                    job_id: job.job_id,
                    status: result.status,
                });
            }
            complaints += usize::from(!result.stderr.is_empty());
            if is_ctld {
                ctld_runs += 1
            } else {
                node_runs += 1
            }
        }
    }
    let hook_time = started.elapsed();
    latencies.sort_unstable();
    w(
        out,
        format!(
            "1. Slurm hooks: ran jobsight-epilog {} times ({} as EpilogSlurmctld, {} as Epilog on the job's nodes) in {:.2} s;\n   per run (fork + exec + enqueue): p50 {}, p99 {}, max {}; {} run(s) reported a problem on stderr\n",
            ctld_runs + node_runs,
            ctld_runs,
            node_runs,
            hook_time.as_secs_f64(),
            ms(percentile(&latencies, 50.0)),
            ms(percentile(&latencies, 99.0)),
            ms(percentile(&latencies, 100.0)),
            complaints
        ),
    )?;

    // 2. The pipeline claims what the hooks enqueued.
    let report = spool.claim(None)?;
    w(
        out,
        format!("\n2. Claim: {}\n", output::claim_summary(&report)),
    )?;
    let mut by_exit: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_user: BTreeMap<String, usize> = BTreeMap::new();
    for c in &report.claimed {
        let exit = c
            .record
            .exit_code
            .as_ref()
            .and_then(|e| e.code.zip(e.signal))
            .map_or("unknown".into(), |(code, sig)| format!("{code}:{sig}"));
        *by_exit.entry(exit).or_default() += 1;
        let user = c.record.user.as_ref().map_or("-".into(), |u| u.escaped());
        *by_user.entry(user).or_default() += 1;
    }
    w(
        out,
        format!(
            "   by exit code:signal: {}\n   by user: {}\n",
            join(&by_exit),
            join(&by_user)
        ),
    )?;
    let requeued = report
        .duplicates
        .iter()
        .filter(|d| !d.path.to_string_lossy().contains("epilog_slurmd"))
        .count();
    w(
        out,
        format!(
            "   duplicates: {} Epilog records of jobs already claimed from EpilogSlurmctld, {} later run(s) of requeued jobs\n     (Slurm 22.05 reports the same restart count for both runs of a requeued job; see README)\n",
            report.duplicates.len() - requeued,
            requeued
        ),
    )?;
    let hostile: Vec<_> = report
        .claimed
        .iter()
        .filter(|c| {
            c.record
                .job_name
                .as_ref()
                .is_some_and(|n| n.escaped() != n.as_str().unwrap_or(""))
        })
        .collect();
    if let Some(example) = hostile.first() {
        w(
            out,
            format!(
                "   {} job name(s) with control characters or invalid UTF-8 were stored byte for byte and are shown escaped, e.g. job {}: \"{}\"\n",
                hostile.len(),
                example.record.job_id,
                example
                    .record
                    .job_name
                    .as_ref()
                    .map(|n| n.escaped())
                    .unwrap_or_default()
            ),
        )?;
    }
    w(
        out,
        format!(
            "\n   first claimed records:\n{}",
            indent(&first_lines(
                &output::render_claimed(&report, Format::Table),
                6
            ))
        ),
    )?;

    // 3. What the queue looks like now.
    let status = spool.status(jobsight_base::now())?;
    w(
        out,
        format!("\n3. {}", output::render_status(&status, Format::Table)),
    )?;

    // 4. Models first, trained on another simulated day of the same kind of cluster: the per-job
    // DAG judges each job with them as it comes in, and a model never sees the jobs it judges.
    let started = Instant::now();
    let features_settings = features::Settings {
        cores_per_node: Some(spec.cpus_per_node),
        windows: Some(DEMO_WINDOWS),
        ..features::Settings::default()
    };
    let trained = train_models(&dir, spec, options.seed, &features_settings)?;
    w(
        out,
        format!(
            "\n4. Models: trained on a second simulated day ({} nodes, {} jobs, {:.0} % of them with an injected anomaly, seed {}; no `{}` job: the models never see that application), never on this one, in {:.1} s\n   $ jobsight --data {} model train --kind diagnosis --trees {} --max-windows-per-class {} --max-samples-per-tree {} --out {}\n{}",
            TRAINING_NODES,
            TRAINING_JOBS,
            TRAINING_ANOMALY_SHARE * 100.0,
            trained.seed,
            UNSEEN_APPLICATION,
            started.elapsed().as_secs_f64(),
            trained.warehouse.display(),
            DEMO_TREES,
            DEMO_WINDOWS_PER_CLASS,
            DEMO_SAMPLES_PER_TREE,
            trained.diagnosis.display(),
            indent(&trained.header)
        ),
    )?;

    // The site's settings: the demo's warehouse, spool, models and file outbox; all else default.
    let warehouse = dir.join("warehouse");
    let mut settings = crate::config::Options::default().resolve(Path::new("(demo defaults)"))?;
    settings.data = warehouse.clone();
    settings.spool = spool_path.clone();
    settings.features = features_settings;
    settings.rules.cores_per_node = Some(spec.cpus_per_node);
    settings.model.diagnosis = Some(trained.diagnosis.clone());
    settings.model.unsupervised = Some(trained.unsupervised.clone());
    settings.notify.outbox = dir.join("outbox");
    settings.report.dir = dir.join("reports");
    let book = Arc::new(rules::RuleBook::load(None)?);
    let models = Arc::new(Models::load(
        Some(&trained.diagnosis),
        Some(&trained.unsupervised),
    )?);
    let dags = schedule::dag::load_all(None)?;
    let log_path = dir.join("pipeline.log");
    let log_file = std::fs::File::create(&log_path).map_err(|source| DemoError::CreateDir {
        path: log_path.clone(),
        source,
    })?;
    let log = schedule::Log::new(schedule::LogFormat::Text, Box::new(log_file));
    let stop = std::sync::atomic::AtomicBool::new(false);
    // The simulator stands in for sacct and for the node exporters; everything else is the
    // pipeline as a site runs it.
    let simulated = || {
        SimulatedCluster::new(
            &jobs,
            spec,
            DEMO_DAY,
            DEMO_STEP_S,
            DEMO_METRICS,
            options.seed,
        )
    };
    let context = |at: chrono::DateTime<chrono::Utc>| schedule::Context {
        settings: settings.clone(),
        clock: schedule::Clock::Fixed(at),
        book: Arc::clone(&book),
        models: Some(Arc::clone(&models)),
        accounting: Box::new(simulated()),
        telemetry: Some(Box::new(simulated())),
    };

    // 5. The per-job DAG, as the daemon runs it every 2 minutes; here once, a minute after the
    // last job ended, so that every job is ready.
    let last_end = jobs.iter().map(|j| j.end_s).max().unwrap_or(0);
    let end_of_day = DEMO_DAY
        .and_hms_opt(0, 0, 0)
        .map(|t| t.and_utc())
        .unwrap_or_default()
        + chrono::TimeDelta::seconds(last_end as i64 + 60);
    let per_job = schedule::dag::find(&dags, "per-job")?;
    let run = schedule::run_dag(
        &context(end_of_day),
        per_job,
        &schedule::RunRequest {
            scheduled_for: end_of_day,
            trigger: schedule::Trigger::Manual,
            days: None,
        },
        &log,
        &stop,
    )?;
    let ingest = run.steps.first();
    let count = |step: Option<&schedule::StepReport>, key: &str| {
        step.and_then(|s| s.counts.get(key)).copied().unwrap_or(0)
    };
    w(
        out,
        format!(
            "\n5. The per-job DAG (`jobsight dag run per-job`; the simulator stands in for sacct and the node exporters): {} jobs stored with {} telemetry rows ({} metrics per node every {} s), each then given its features, judged by the rules and the models, and its critical findings emailed\n{}   one log line per job and step: {}\n   warehouse: {}\n",
            ingest.map_or(0, |s| s.jobs),
            count(ingest, "telemetry_rows"),
            DEMO_METRICS,
            DEMO_STEP_S,
            indent(&output::render_runs(std::slice::from_ref(&run))),
            log_path.display(),
            warehouse.display()
        ),
    )?;
    // The simulator's answer key, which no real cluster has: what the models are judged against.
    let claimed: Vec<&simulate::SimJob> = report
        .claimed
        .iter()
        .filter_map(|c| {
            jobs.iter().find(|j| {
                j.job_id == c.record.job_id
                    && j.restart_count == c.record.restart_count.unwrap_or(0)
            })
        })
        .collect();
    simulator::write_labels(&warehouse, &claimed, spec, DEMO_DAY, "demo")?;
    let runtime = tokio::runtime::Runtime::new().map_err(DemoError::Runtime)?;
    show_queries(out, &runtime, &warehouse, &DEMO_QUERIES)?;

    // 6. The nightly DAG, at 02:30 after each day the jobs ended on: the day as a whole, then
    // the digests.
    let nightly = schedule::dag::find(&dags, "nightly")?;
    let mut nights = Vec::new();
    for day in features::days_with_jobs(&warehouse) {
        let night = (day + chrono::Days::new(1))
            .and_hms_opt(2, 30, 0)
            .map(|t| t.and_utc())
            .unwrap_or_default();
        nights.push(schedule::run_dag(
            &context(night),
            nightly,
            &schedule::RunRequest {
                scheduled_for: night,
                trigger: schedule::Trigger::Manual,
                days: None,
            },
            &log,
            &stop,
        )?);
    }
    w(
        out,
        format!(
            "\n6. The nightly DAG (`jobsight dag run nightly`) after each day the jobs ended on: the day as a whole\n{}",
            indent(&output::render_runs(&nights))
        ),
    )?;
    // Each day's figures, added up over the nights.
    let mut totals: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut jobs_of: BTreeMap<String, u64> = BTreeMap::new();
    for run in &nights {
        for s in &run.steps {
            *jobs_of.entry(s.step.clone()).or_default() += s.jobs;
            for (k, v) in &s.counts {
                *totals.entry((s.step.clone(), k.clone())).or_default() += v;
            }
        }
    }
    let total = |step: &str, key: &str| {
        totals
            .get(&(step.to_string(), key.to_string()))
            .copied()
            .unwrap_or(0)
    };
    let jobs_in = |step: &str| jobs_of.get(step).copied().unwrap_or(0);
    w(
        out,
        format!(
            "\n   Features: {} jobs, {} rows per job x node x metric, {} job summaries ({} cannot be judged for lack of telemetry), {} window rows for the models ({} s windows every {} s)\n",
            jobs_in("features"),
            total("features", "rows"),
            jobs_in("features"),
            total("features", "not_judgeable"),
            total("features", "window_rows"),
            DEMO_WINDOWS.window_s,
            DEMO_WINDOWS.stride_s,
        ),
    )?;
    show_queries(out, &runtime, &warehouse, &FEATURE_QUERIES)?;
    // The diagnosis on this day's labelled windows: jobs the model has never seen.
    match model::evaluate_model(&warehouse, &trained.diagnosis, &LabelsFrom::Table) {
        Ok(report) => w(
            out,
            format!(
                "\n   The diagnosis judged on this day's labelled windows, which it has never seen:\n   $ jobsight --data {} model eval --model {}\n{}",
                warehouse.display(),
                trained.diagnosis.display(),
                indent(&model::render_report(&report))
            ),
        )?,
        Err(ModelError::NoData(why)) => w(out, format!("\n   no evaluation on this day: {why}\n"))?,
        Err(e) => return Err(e.into()),
    }
    let verdicts = verdict_counts(&runtime, &warehouse)?;
    w(
        out,
        format!(
            "\n   Classification with the built-in rule book ({} rules in {} groups, {} classes, {} characteristics; `jobsight rules list`): {} findings ({} critical) on {} jobs, {} class memberships;\n   and one verdict per job from rules and models together: {}\n",
            book.rules.len(),
            book.rules
                .iter()
                .map(|r| r.group)
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            book.classes.len(),
            book.characteristics.len(),
            total("classify", "findings"),
            total("classify", "critical"),
            jobs_in("classify"),
            total("classify", "classes"),
            join(&verdicts),
        ),
    )?;
    show_queries(out, &runtime, &warehouse, &CLASSIFY_QUERIES)?;
    show_queries(out, &runtime, &warehouse, &PREDICTION_QUERIES)?;

    // 7. Email: what the two DAGs' notify steps sent, into a file outbox (no mail server needed).
    let sent = settings.notify.outbox.join("sent");
    let mut messages: Vec<(String, String)> = std::fs::read_dir(&sent)
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let meta = std::fs::read(e.path().join("meta.json")).ok()?;
                    let meta: serde_json::Value = serde_json::from_slice(&meta).ok()?;
                    Some((
                        e.file_name().to_string_lossy().into_owned(),
                        format!(
                            "to {}: {}",
                            meta["to"].as_array().map_or(String::new(), |to| to
                                .iter()
                                .filter_map(|t| t.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")),
                            meta["subject"].as_str().unwrap_or("")
                        ),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    messages.sort();
    let listed: Vec<String> = messages
        .iter()
        .take(12)
        .map(|(key, what)| jobsight_base::text::printable(&format!("   {key:<32} {what}")))
        .collect();
    w(
        out,
        format!(
            "\n7. Email: {} message(s) in {} (critical emails from the per-job DAG, digests and the admins' report from the nightly one; SMTP when configured), each a `message.eml` with text and HTML:\n{}\n{}",
            messages.len(),
            sent.display(),
            listed.join("\n"),
            if messages.len() > listed.len() {
                format!("   ... and {} more\n", messages.len() - listed.len())
            } else {
                String::new()
            }
        ),
    )?;
    show_queries(out, &runtime, &warehouse, &NOTIFY_QUERIES)?;

    // 8. The pages behind the emails' links, from the nightly DAG's report step.
    w(
        out,
        format!(
            "\n8. Report pages (the nightly `report` step; `jobsight report job JOB_ID` writes one on demand): {} job pages, {} user pages, {} daily system report(s) and {} workflow run page(s) (the day's job arrays and dependency chains, with Gantt charts) in {}, {} job(s) without a page; open {} in a browser (static HTML, inline SVG charts, relative links: works offline)\n",
            total("report", "job_pages"),
            total("report", "user_pages"),
            total("report", "system_reports"),
            // Pages, not writes: a run's page is rewritten on each day one of its jobs ended.
            std::fs::read_dir(settings.report.dir.join("workflows"))
                .map_or(0, |entries| entries.count()),
            settings.report.dir.display(),
            total("report", "failed"),
            settings.report.dir.join("index.html").display(),
        ),
    )?;
    w(
        out,
        format!(
            "Everything above is in {} (remove it with `rm -r`).\n",
            dir.display()
        ),
    )?;
    Ok(())
}

/// Jobs per verdict in `predictions`.
fn verdict_counts(
    runtime: &tokio::runtime::Runtime,
    warehouse: &Path,
) -> Result<BTreeMap<String, usize>, DemoError> {
    let batches = runtime.block_on(query::run(
        warehouse,
        "SELECT verdict, count(*) AS n FROM predictions GROUP BY verdict",
    ))?;
    let mut counts = BTreeMap::new();
    for line in query::render(&batches, SqlFormat::Json)?.lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        if let (Some(v), Some(n)) = (row["verdict"].as_str(), row["n"].as_u64()) {
            counts.insert(v.to_string(), n as usize);
        }
    }
    Ok(counts)
}

/// Features of every day of `warehouse` with jobs.
fn compute_features(
    warehouse: &Path,
    settings: &features::Settings,
) -> Result<features::Computed, DemoError> {
    let mut computed = features::Computed::default();
    for day in features::days_with_jobs(warehouse) {
        computed.add(&features::compute_day(warehouse, day, settings, |_, _| {})?);
    }
    Ok(computed)
}

/// The demo's models and where they came from.
struct TrainedModels {
    seed: u64,
    warehouse: PathBuf,
    diagnosis: PathBuf,
    unsupervised: PathBuf,
    /// The diagnosis model's description, as `jobsight model info` shows it.
    header: String,
}

/// Simulates the training day into `dir/training`, computes its features and windows with
/// `settings`, and trains both models into `dir/models`.
fn train_models(
    dir: &Path,
    spec: &ClusterSpec,
    seed: u64,
    settings: &features::Settings,
) -> Result<TrainedModels, DemoError> {
    let training_spec = ClusterSpec {
        name: spec.name.clone(),
        nodes: TRAINING_NODES,
        cpus_per_node: spec.cpus_per_node,
        jobs: TRAINING_JOBS,
        node_epilog_share: 0.0,
        anomaly_share: TRAINING_ANOMALY_SHARE,
        without_application: Some(UNSEEN_APPLICATION),
        ..ClusterSpec::default()
    };
    let seed = seed.wrapping_add(TRAINING_SEED_OFFSET);
    let warehouse = dir.join("training");
    let jobs = simulate::simulate_day(&training_spec, seed);
    let refs: Vec<&simulate::SimJob> = jobs.iter().collect();
    simulator::write_jobs(
        &warehouse,
        &refs,
        &training_spec,
        DEMO_DAY,
        DEMO_STEP_S,
        DEMO_METRICS,
        seed,
        "training",
        |_, _| {},
    )?;
    compute_features(&warehouse, settings)?;
    let models = dir.join("models");
    std::fs::create_dir_all(&models).map_err(|source| DemoError::CreateDir {
        path: models.clone(),
        source,
    })?;
    let mut options = TrainOptions {
        max_windows_per_class: DEMO_WINDOWS_PER_CLASS,
        ..TrainOptions::default()
    };
    options.forest.trees = DEMO_TREES;
    options.forest.max_samples_per_tree = DEMO_SAMPLES_PER_TREE;
    let diagnosis = models.join("diagnosis.model");
    let unsupervised = models.join("anomaly-score.model");
    let file = model::train(
        &warehouse,
        Kind::Diagnosis,
        &LabelsFrom::Table,
        &options,
        &diagnosis,
        &mut |_| {},
    )?;
    model::train(
        &warehouse,
        Kind::Unsupervised,
        &LabelsFrom::Table,
        &options,
        &unsupervised,
        &mut |_| {},
    )?;
    Ok(TrainedModels {
        seed,
        warehouse,
        diagnosis,
        unsupervised,
        header: model::render_header(&file.header),
    })
}

/// The hook as Slurm runs it: a clean environment (no PATH, no HOME) with only the job's variables.
fn hook_command(bin: &Path, spool: &Path, env: &simulate::HookEnv) -> Command {
    use std::os::unix::ffi::OsStringExt;
    let mut command = Command::new(bin);
    command
        .arg("--spool")
        .arg(spool)
        .env_clear()
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, std::ffi::OsString::from_vec(value.clone()));
    }
    command
}

/// Runs each query on the warehouse and writes its title, the command an admin would type, and
/// the result table.
fn show_queries(
    out: &mut dyn Write,
    runtime: &tokio::runtime::Runtime,
    warehouse: &Path,
    queries: &[(&str, &str)],
) -> Result<(), DemoError> {
    for (title, sql) in queries {
        let batches = runtime.block_on(query::run(warehouse, sql))?;
        let text = format!(
            "\n   {title}\n   $ jobsight sql \"{sql}\"\n{}",
            indent(&query::render(&batches, SqlFormat::Table)?)
        );
        out.write_all(text.as_bytes()).map_err(DemoError::Output)?;
    }
    Ok(())
}

/// `key count` pairs, comma-separated.
fn join(counts: &BTreeMap<String, usize>) -> String {
    counts
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn first_lines(text: &str, n: usize) -> String {
    text.lines().take(n).map(|l| format!("{l}\n")).collect()
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("   {l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let v: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&v, 50.0), Duration::from_millis(50));
        assert_eq!(percentile(&v, 99.0), Duration::from_millis(99));
        assert_eq!(percentile(&v, 100.0), Duration::from_millis(100));
        assert_eq!(percentile(&[], 50.0), Duration::ZERO);
    }
}
