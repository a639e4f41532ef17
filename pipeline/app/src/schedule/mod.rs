//! The schedule: the only place that knows the order of the pipeline's work.
//!
//! A DAG ([`dag`]) is a cron schedule and an ordered list of [`Step`]s. [`run_dag`] runs one DAG
//! once: it builds nothing itself but takes a [`Context`] (resolved settings, the clock, the rule
//! book and models, the telemetry source), calls each stage as a library, logs one line per step
//! and per job ([`log`]), and records the run and each step in the `runs` table. The stages never
//! call each other: the per-job DAG hands the jobs its ingest step finished to its features and
//! classify steps, and a nightly run works on whole days.
//!
//! Crash safety:
//! - one run per DAG at a time: a lock file under `<data>/.schedule/` that the kernel releases
//!   when its holder dies, however it dies;
//! - each job the ingest step stores is appended to `<data>/.schedule/<dag>.ingested.jsonl`
//!   (and synced) before its spool record leaves `cur/`, and the file is removed only when every
//!   step that works on those jobs succeeded: a run killed anywhere in between leaves them to the
//!   next run, which does them again (every step replaces its own parts, so nothing is
//!   duplicated);
//! - a failing step is tried again `retries` times in the same run, with backoff; the steps after
//!   it still run, and the run is recorded as failed with the error;
//! - the scheduled time of the last run is kept in `<data>/.schedule/<dag>.state.json`, from which
//!   [`dag::due`] catches a missed run up once.
//!
//! [`daemon`] runs every DAG on its schedule; [`status`] says whether the pipeline keeps up.

pub mod daemon;
pub mod dag;
pub mod log;
pub mod status;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::catalog::rows::RunRow;
use crate::catalog::{self, Table};
use crate::config::{Settings, TelemetryKind};
use crate::ingest::per_job::{self, AccountingSource, Outcome, Sacct, TelemetrySource};
use crate::ingest::prometheus::Prometheus;
use crate::model::predict::Models;
use crate::rules::RuleBook;
use crate::spool::Spool;
pub use dag::{CatchUp, Dag, On};
pub use log::{Log, LogFormat};

/// The closed set of steps a DAG can run, each a call into one stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Claim the spool, then sacct and telemetry of each claimed job into the warehouse
    /// ([`crate::ingest::per_job`]).
    Ingest { limit: Option<usize> },
    /// Features (and windows, when configured) of the ingested jobs or of whole days
    /// ([`crate::features`]).
    Features { on: On },
    /// Rules, classes, thresholds and the models' verdicts ([`crate::classify`]).
    Classify { on: On },
    /// The system-wide summaries of the last `days` days into `summaries` ([`crate::summary`]).
    Summarize { days: u32 },
    /// The report pages of the last `days` days: every job, the day's users, the system report
    /// ([`crate::report`]).
    Report { days: u32 },
    /// Folds the small per-job and per-run parts of the last `days` days into one file per
    /// table and day ([`catalog::compact_day`]).
    Compact { days: u32 },
    /// Emails to owners and admins ([`crate::notify`]).
    Notify { critical_only: bool },
    /// Retrains the configured diagnosis model when the warehouse has labels newer than it, and
    /// rotates it when the new one is not worse; refreshes the configured anomaly score's
    /// per-application baselines from the newest days ([`crate::model::retrain`]).
    Retrain,
    /// Removes raw telemetry and windows older than `keep_days`.
    Retain { keep_days: u32 },
    /// Rebuilds the workflow runs of Slurm arrays and dependency chains that ended in the last
    /// `days` days ([`crate::workflow::slurm`]).
    SlurmWorkflows { days: u32 },
    /// Scores every workflow task of the warehouse against its kind's history into
    /// `workflow_scores` ([`crate::workflow::detect`]); nothing when no workflow was imported.
    WorkflowScore,
}

impl Step {
    pub fn name(&self) -> &'static str {
        match self {
            Step::Ingest { .. } => "ingest",
            Step::Features { .. } => "features",
            Step::Classify { .. } => "classify",
            Step::Summarize { .. } => "summarize",
            Step::Report { .. } => "report",
            Step::Compact { .. } => "compact",
            Step::Notify { .. } => "notify",
            Step::Retrain => "retrain",
            Step::Retain { .. } => "retain",
            Step::SlurmWorkflows { .. } => "slurm-workflows",
            Step::WorkflowScore => "workflow-score",
        }
    }

    /// The step with its parameters, as `dag list` shows it.
    pub fn describe(&self) -> String {
        match self {
            Step::Ingest { limit: None } => "ingest".into(),
            Step::Ingest { limit: Some(l) } => format!("ingest (at most {l} jobs)"),
            Step::Features { on } | Step::Classify { on } => match on {
                On::Ingested => format!("{} of the ingested jobs", self.name()),
                On::Days(1) => format!("{} of yesterday", self.name()),
                On::Days(n) => format!("{} of the last {n} days", self.name()),
            },
            Step::Summarize { days: 1 } => "summarize yesterday (usage, efficiency, waste)".into(),
            Step::Summarize { days } => {
                format!("summarize the last {days} days (usage, efficiency, waste)")
            }
            Step::Report { days: 1 } => "report pages of yesterday's jobs, users and system".into(),
            Step::Report { days } => format!("report pages of the last {days} days"),
            Step::Compact { days: 1 } => "compact yesterday's small parts into day files".into(),
            Step::Compact { days } => {
                format!("compact the small parts of the last {days} days into day files")
            }
            Step::Notify {
                critical_only: true,
            } => "notify (critical findings only)".into(),
            Step::Notify { .. } => "notify (digests and critical findings)".into(),
            Step::Retrain => {
                "retrain the diagnosis on new labels; refresh the anomaly score's baselines".into()
            }
            Step::Retain { keep_days } => {
                format!("retain (telemetry and windows of the last {keep_days} days)")
            }
            Step::SlurmWorkflows { days: 1 } => {
                "yesterday's Slurm arrays and dependency chains as workflow runs".into()
            }
            Step::SlurmWorkflows { days } => {
                format!(
                    "the Slurm arrays and dependency chains of the last {days} days as workflow runs"
                )
            }
            Step::WorkflowScore => "score the workflow runs' tasks (workflow_scores)".into(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error(transparent)]
    Dag(#[from] dag::DagError),
    #[error("cannot use {path}: {source}")]
    State {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("another run of DAG {dag} is under way (it holds {path}); try again later")]
    Busy { dag: String, path: PathBuf },
    #[error("cannot load the rule book: {0}")]
    Rules(#[from] crate::rules::RulesError),
    #[error("cannot load the models: {0}")]
    Models(#[from] crate::model::ModelError),
    #[error("cannot record the run of DAG {dag} in the runs table: {reason}")]
    Record { dag: String, reason: String },
    #[error("DAG {dag} has no step that works on whole days: there is nothing to backfill")]
    NothingToBackfill { dag: String },
}

/// Where time comes from: the wall clock, or a fixed time for tests and for re-running a
/// scheduled time on purpose.
#[derive(Debug, Clone, Copy)]
pub enum Clock {
    System,
    Fixed(DateTime<Utc>),
}

impl Clock {
    pub fn now(&self) -> DateTime<Utc> {
        match self {
            Clock::System => jobsight_base::now(),
            Clock::Fixed(t) => *t,
        }
    }
}

/// Everything a run needs, built once per run: a rule or model file changed since the last run
/// is read again.
pub struct Context {
    pub settings: Settings,
    pub clock: Clock,
    pub book: Arc<RuleBook>,
    pub models: Option<Arc<Models>>,
    /// Where jobs' accounting comes from: sacct, or the demo's simulator.
    pub accounting: Box<dyn AccountingSource + Send + Sync>,
    pub telemetry: Option<Box<dyn TelemetrySource + Send + Sync>>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("data", &self.settings.data)
            .field("clock", &self.clock)
            .field("rules", &self.book.version)
            .field("models", &self.models.as_ref().map(|m| m.version()))
            .field("accounting", &self.accounting.name())
            .field("telemetry", &self.telemetry.as_ref().map(|t| t.name()))
            .finish()
    }
}

impl Context {
    /// The context of `settings`: the rule book (built-in plus `rules.dir`), the configured
    /// models, and the configured telemetry source.
    pub fn build(settings: Settings, clock: Clock) -> Result<Context, ScheduleError> {
        let book = Arc::new(RuleBook::load(settings.rules.dir.as_deref())?);
        let models = load_models(&settings)?.map(Arc::new);
        let telemetry: Option<Box<dyn TelemetrySource + Send + Sync>> =
            match settings.ingest.telemetry {
                TelemetryKind::Prometheus => {
                    Some(Box::new(Prometheus::new(settings.prometheus.clone())))
                }
                TelemetryKind::None => None,
            };
        let accounting = Box::new(Sacct {
            program: settings.ingest.sacct.clone(),
        });
        Ok(Context {
            settings,
            clock,
            book,
            models,
            accounting,
            telemetry,
        })
    }

    pub fn data(&self) -> &Path {
        &self.settings.data
    }
}

/// The configured models, loaded and checked; `None` when a site runs none.
pub fn load_models(settings: &Settings) -> Result<Option<Models>, crate::model::ModelError> {
    let m = &settings.model;
    if m.diagnosis.is_none() && m.unsupervised.is_none() {
        return Ok(None);
    }
    let mut models = Models::load(m.diagnosis.as_deref(), m.unsupervised.as_deref())?;
    models.min_windows = m.min_windows;
    models.windows_at_a_time = m.windows_at_a_time;
    Ok(Some(models))
}

/// Why a DAG runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The daemon, at the scheduled time.
    Schedule,
    /// The daemon, for a scheduled time it missed (it stands for `missed` of them).
    CatchUp { missed: usize },
    /// `jobsight dag run NAME`.
    Manual,
    /// `jobsight dag run NAME --since DATE`: the day steps over history; nothing is ingested
    /// and no email is sent.
    Backfill,
}

impl Trigger {
    pub fn name(self) -> &'static str {
        match self {
            Trigger::Schedule => "schedule",
            Trigger::CatchUp { .. } => "catch-up",
            Trigger::Manual => "manual",
            Trigger::Backfill => "backfill",
        }
    }
}

/// One run to make.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub scheduled_for: DateTime<Utc>,
    pub trigger: Trigger,
    /// The days the day steps work on, for a backfill; otherwise the steps' own `days` before
    /// the scheduled day.
    pub days: Option<Vec<NaiveDate>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepOutcome {
    Ok,
    Failed,
    /// Not run: a backfill runs no ingest or notify step, or the daemon was stopping.
    Skipped,
}

impl StepOutcome {
    pub fn name(self) -> &'static str {
        match self {
            StepOutcome::Ok => "ok",
            StepOutcome::Failed => "failed",
            StepOutcome::Skipped => "skipped",
        }
    }
}

/// What one step did.
#[derive(Debug, Clone, Serialize)]
pub struct StepReport {
    pub step: String,
    pub position: u32,
    pub outcome: StepOutcome,
    pub attempts: u32,
    /// Jobs the step worked on.
    pub jobs: u64,
    /// Named counts (claimed, done, pending, findings, sent, ...).
    pub counts: BTreeMap<String, u64>,
    pub error: Option<String>,
    pub started: DateTime<Utc>,
    pub ended: DateTime<Utc>,
    /// Wall time it took (the clock above may be fixed, as in the demo and tests).
    pub seconds: f64,
}

/// What one run did.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub run_id: String,
    pub dag: String,
    pub trigger: &'static str,
    pub scheduled_for: DateTime<Utc>,
    pub started: DateTime<Utc>,
    pub ended: DateTime<Utc>,
    pub outcome: StepOutcome,
    pub steps: Vec<StepReport>,
    /// Wall time it took.
    pub seconds: f64,
}

/// A job the ingest step finished, carried to the steps after it (and across a crash).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IngestedJob {
    pub day: NaiveDate,
    pub job_id: String,
    /// Cluster:id, for the log.
    pub job: String,
    pub part: String,
    pub telemetry_files: Vec<PathBuf>,
}

/// The scheduled time of a DAG's last run and how it ended, kept for catching up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LastRun {
    pub run_id: String,
    pub scheduled_for: DateTime<Utc>,
    pub trigger: String,
    pub started: DateTime<Utc>,
    pub ended: DateTime<Utc>,
    pub outcome: String,
    pub error: Option<String>,
}

/// The jobs in a carried-over list, each once (the last line of a job wins); a line cut short by
/// a crash is left out, because its job's record is still in `cur/` and is ingested again.
fn read_carried(path: &Path) -> Vec<IngestedJob> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut jobs: Vec<IngestedJob> = Vec::new();
    for job in text
        .lines()
        .filter_map(|l| serde_json::from_str::<IngestedJob>(l).ok())
    {
        jobs.retain(|j| !(j.day == job.day && j.part == job.part));
        jobs.push(job);
    }
    jobs
}

/// Appends one job to a carried-over list and syncs it, so that it survives a crash that
/// follows.
fn append_carried(path: &Path, job: &IngestedJob) -> Result<(), String> {
    use std::io::Write;
    let mut line = serde_json::to_string(job).map_err(|e| e.to_string())?;
    line.push('\n');
    let result = (|| {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        file.write_all(line.as_bytes())?;
        file.sync_data()
    })();
    result.map_err(|e| format!("cannot record the job in {}: {e}", path.display()))
}

/// `<data>/.schedule`: locks, last runs and carried-over jobs (not a table).
pub fn state_dir(data: &Path) -> PathBuf {
    data.join(".schedule")
}

fn state_path(data: &Path, dag: &str, what: &str) -> PathBuf {
    state_dir(data).join(format!("{dag}.{what}"))
}

/// The last run of `dag`, if it has run.
pub fn last_run(data: &Path, dag: &str) -> Option<LastRun> {
    let text = std::fs::read_to_string(state_path(data, dag, "state.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes `value` as JSON to `path` atomically ([`jobsight_base::safe_fs::write_replacing`]: a hidden
/// temporary file created where nothing is, fsync, rename).
fn write_json_atomic(path: &Path, value: &impl Serialize) -> Result<(), ScheduleError> {
    let err = |path: PathBuf, source| ScheduleError::State { path, source };
    let text = serde_json::to_vec_pretty(value)
        .map_err(|e| err(path.to_path_buf(), std::io::Error::other(e)))?;
    let parent = path.parent().unwrap_or(Path::new("."));
    let dir = jobsight_base::safe_fs::Dir::create_all(parent)
        .map_err(|e| err(parent.to_path_buf(), e))?;
    jobsight_base::safe_fs::write_replacing(
        &dir,
        path.file_name().unwrap_or_default(),
        err,
        |mut file, tmp| {
            use std::io::Write;
            file.write_all(&text)
                .map_err(|e| err(tmp.to_path_buf(), e))?;
            Ok(file)
        },
    )
    .map(|_| ())
}

/// The lock of one DAG, held while it runs; the kernel releases it when the process dies.
#[derive(Debug)]
pub struct DagLock {
    _file: File,
}

impl DagLock {
    pub fn acquire(data: &Path, dag: &str) -> Result<DagLock, ScheduleError> {
        let dir = state_dir(data);
        std::fs::create_dir_all(&dir).map_err(|source| ScheduleError::State {
            path: dir.clone(),
            source,
        })?;
        let path = state_path(data, dag, "lock");
        match jobsight_base::lockfile::try_lock(&path) {
            Ok(Some(file)) => Ok(DagLock { _file: file }),
            Ok(None) => Err(ScheduleError::Busy {
                dag: dag.to_string(),
                path,
            }),
            Err(source) => Err(ScheduleError::State { path, source }),
        }
    }
}

/// Sleeps `d`, waking early when `stop` is set; returns whether it was.
pub fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) -> bool {
    let end = std::time::Instant::now() + d;
    while std::time::Instant::now() < end {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100).min(end - std::time::Instant::now()));
    }
    stop.load(Ordering::Relaxed)
}

/// Runs `dag` once for `request`: takes the DAG's lock, runs every step in order (retrying a
/// failing one), records the run in `runs` and as the DAG's last run. `stop` (SIGTERM) makes a
/// retry wait end early; the run's steps still all run, so that jobs ingested are also judged.
pub fn run_dag(
    ctx: &Context,
    dag: &Dag,
    request: &RunRequest,
    log: &Log,
    stop: &AtomicBool,
) -> Result<RunReport, ScheduleError> {
    let data = ctx.data().to_path_buf();
    let _lock = DagLock::acquire(&data, &dag.name)?;
    let started = ctx.clock.now();
    let run_timer = std::time::Instant::now();
    let run_id = format!(
        "{}.{}.{}",
        dag.name,
        request.scheduled_for.format("%Y%m%dT%H%M%SZ"),
        started.timestamp_micros()
    );
    let mut fields = vec![
        ("dag", json!(dag.name)),
        ("run", json!(run_id)),
        ("trigger", json!(request.trigger.name())),
        (
            "scheduled_for",
            json!(
                request
                    .scheduled_for
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            ),
        ),
    ];
    if let Trigger::CatchUp { missed } = request.trigger {
        fields.push(("missed", json!(missed)));
    }
    log.event("run-start", &fields);

    // The jobs an earlier run ingested but did not finish judging come first.
    let carried_path = state_path(&data, &dag.name, "ingested.jsonl");
    let mut ingested = read_carried(&carried_path);
    if !ingested.is_empty() {
        log.event(
            "carried",
            &[
                ("dag", json!(dag.name)),
                ("jobs", json!(ingested.len())),
                (
                    "why",
                    json!("ingested by an earlier run that did not finish"),
                ),
            ],
        );
    }
    let mut steps = Vec::with_capacity(dag.steps.len());
    let mut ingested_steps_ok = true;
    for (i, step) in dag.steps.iter().enumerate() {
        let position = i as u32 + 1;
        let step_started = ctx.clock.now();
        let step_timer = std::time::Instant::now();
        // Each step's own peak memory in its log line (steps run one at a time in a run).
        let peak_known = jobsight_base::reset_peak_memory();
        if let Some(why) = skip_reason(step, request) {
            log.event(
                "step-skip",
                &[
                    ("dag", json!(dag.name)),
                    ("step", json!(step.name())),
                    ("why", json!(why)),
                ],
            );
            steps.push(StepReport {
                step: step.name().into(),
                position,
                outcome: StepOutcome::Skipped,
                attempts: 0,
                jobs: 0,
                counts: BTreeMap::new(),
                error: Some(why.into()),
                started: step_started,
                ended: step_started,
                seconds: 0.0,
            });
            continue;
        }
        let mut attempts = 0;
        let result = loop {
            attempts += 1;
            match execute(ctx, dag, step, request, &mut ingested, &carried_path, log) {
                Ok(done) => break Ok(done),
                Err(e) if attempts <= dag.retries && !stop.load(Ordering::Relaxed) => {
                    let wait = dag.retry_after * 2u32.pow(attempts - 1);
                    log.event(
                        "step-retry",
                        &[
                            ("dag", json!(dag.name)),
                            ("step", json!(step.name())),
                            ("attempt", json!(attempts)),
                            ("retry_in_s", json!(wait.as_secs())),
                            ("error", json!(e)),
                        ],
                    );
                    sleep_unless_stopped(wait, stop);
                }
                Err(e) => break Err(e),
            }
        };
        if let Step::Ingest { .. } = step {
            // Where a kill hurts most: jobs out of the spool, not yet judged.
            crate::notify::fault_point("after-ingest");
        }
        let ended = ctx.clock.now();
        let (outcome, jobs, counts, error) = match result {
            Ok((jobs, counts)) => (StepOutcome::Ok, jobs, counts, None),
            Err(e) => {
                if matches!(
                    step,
                    Step::Features { on: On::Ingested } | Step::Classify { on: On::Ingested }
                ) {
                    ingested_steps_ok = false;
                }
                (StepOutcome::Failed, 0, BTreeMap::new(), Some(e))
            }
        };
        let mut fields = vec![
            ("dag", json!(dag.name)),
            ("step", json!(step.name())),
            ("outcome", json!(outcome.name())),
            ("attempts", json!(attempts)),
            ("jobs", json!(jobs)),
            ("seconds", json!(round_s(step_timer))),
        ];
        if let Some(mib) = jobsight_base::peak_memory_mib().filter(|_| peak_known) {
            fields.push(("peak_mib", json!(mib)));
        }
        for (k, v) in &counts {
            fields.push((k.as_str(), json!(v)));
        }
        if let Some(e) = &error {
            fields.push(("error", json!(e)));
        }
        log.event("step", &fields);
        steps.push(StepReport {
            step: step.name().into(),
            position,
            outcome,
            attempts,
            jobs,
            counts,
            error,
            started: step_started,
            ended,
            seconds: round_s(step_timer),
        });
    }
    if ingested_steps_ok {
        let _ = std::fs::remove_file(&carried_path);
    }
    let ended = ctx.clock.now();
    let outcome = if steps.iter().any(|s| s.outcome == StepOutcome::Failed) {
        StepOutcome::Failed
    } else {
        StepOutcome::Ok
    };
    let report = RunReport {
        run_id,
        dag: dag.name.clone(),
        trigger: request.trigger.name(),
        scheduled_for: request.scheduled_for,
        started,
        ended,
        outcome,
        steps,
        seconds: round_s(run_timer),
    };
    record(&data, &report).map_err(|reason| ScheduleError::Record {
        dag: dag.name.clone(),
        reason,
    })?;
    if request.trigger != Trigger::Backfill {
        let failed = report
            .steps
            .iter()
            .filter_map(|s| {
                s.error
                    .as_ref()
                    .filter(|_| s.outcome == StepOutcome::Failed)
                    .map(|e| format!("{}: {e}", s.step))
            })
            .collect::<Vec<_>>();
        write_json_atomic(
            &state_path(&data, &dag.name, "state.json"),
            &LastRun {
                run_id: report.run_id.clone(),
                scheduled_for: report.scheduled_for,
                trigger: report.trigger.into(),
                started,
                ended,
                outcome: outcome.name().into(),
                error: (!failed.is_empty()).then(|| failed.join("; ")),
            },
        )?;
    }
    log.event(
        "run-end",
        &[
            ("dag", json!(dag.name)),
            ("run", json!(report.run_id)),
            ("outcome", json!(outcome.name())),
            ("seconds", json!(report.seconds)),
        ],
    );
    Ok(report)
}

/// What the report pages need from outside the warehouse: the configured diagnosis model's
/// feature importance, read from its file's header (none without a model, or when the file
/// cannot be read: the pages then rank metrics by the findings and the healthy band alone).
pub fn report_inputs(settings: &Settings) -> crate::report::Inputs {
    let importance = settings
        .model
        .diagnosis
        .as_deref()
        .and_then(|path| crate::model::file::ModelFile::header(path).ok())
        .map(|h| {
            h.importance
                .into_iter()
                .map(|i| (i.feature, i.f1_drop))
                .collect()
        })
        .unwrap_or_default();
    crate::report::Inputs { importance }
}

/// Seconds since `timer`, to the millisecond.
fn round_s(timer: std::time::Instant) -> f64 {
    (timer.elapsed().as_secs_f64() * 1000.0).round() / 1000.0
}

/// Why a step does not run in this request, if it does not.
fn skip_reason(step: &Step, request: &RunRequest) -> Option<&'static str> {
    if request.trigger != Trigger::Backfill {
        return None;
    }
    match step {
        Step::Ingest { .. } => {
            Some("a backfill works on stored history; new jobs wait for the next run")
        }
        Step::Notify { .. } => Some("a backfill sends no email: old findings would be spam"),
        Step::Retain { .. } => Some("a backfill removes nothing"),
        Step::Retrain => Some("a backfill trains nothing"),
        Step::Features { on: On::Ingested } | Step::Classify { on: On::Ingested } => {
            Some("works on ingested jobs, and a backfill ingests none")
        }
        Step::Features { .. }
        | Step::Classify { .. }
        | Step::Summarize { .. }
        | Step::Report { .. }
        | Step::Compact { .. }
        | Step::SlurmWorkflows { .. }
        | Step::WorkflowScore => None,
    }
}

/// The days a day step covers in this request.
fn days_of(request: &RunRequest, n: u32) -> Vec<NaiveDate> {
    if let Some(days) = &request.days {
        return days.clone();
    }
    let today = request.scheduled_for.date_naive();
    (1..=n as i64)
        .rev()
        .filter_map(|back| today.checked_sub_days(chrono::Days::new(back as u64)))
        .collect()
}

type Counts = (u64, BTreeMap<String, u64>);

/// Runs one step: the call into its stage. Returns the jobs it worked on and named counts, or
/// the error that makes it fail.
fn execute(
    ctx: &Context,
    dag: &Dag,
    step: &Step,
    request: &RunRequest,
    ingested: &mut Vec<IngestedJob>,
    carried_path: &Path,
    log: &Log,
) -> Result<Counts, String> {
    let data = ctx.data();
    let s = &ctx.settings;
    let mut counts = BTreeMap::new();
    let job_event = |job: &str, fields: &mut Vec<(&str, serde_json::Value)>| {
        let mut all = vec![
            ("dag", json!(dag.name)),
            ("step", json!(step.name())),
            ("job", json!(job)),
        ];
        all.append(fields);
        log.event("job", &all);
    };
    match step {
        Step::Ingest { limit } => {
            let spool = Spool::open(&s.spool).map_err(|e| e.to_string())?;
            let report = per_job::run_with(
                &spool,
                data,
                &s.ingest,
                ctx.accounting.as_ref(),
                ctx.telemetry.as_deref().map(|t| t as &dyn TelemetrySource),
                *limit,
                ctx.clock.now(),
                |_, _| {},
                &mut |job, outcome| {
                    let Outcome::Done {
                        day,
                        job_id,
                        part,
                        telemetry_files,
                        ..
                    } = outcome
                    else {
                        return Ok(());
                    };
                    let done = IngestedJob {
                        day: *day,
                        job_id: job_id.clone(),
                        job: job.to_string(),
                        part: part.clone(),
                        telemetry_files: telemetry_files.clone(),
                    };
                    append_carried(carried_path, &done)?;
                    ingested.retain(|j| !(j.day == done.day && j.part == done.part));
                    ingested.push(done);
                    Ok(())
                },
            )
            .map_err(|e| e.to_string())?;
            counts.insert("claimed".into(), report.claim.claimed.len() as u64);
            counts.insert("duplicates".into(), report.claim.duplicates.len() as u64);
            counts.insert("malformed".into(), report.claim.failed.len() as u64);
            for kind in [
                "done",
                "pending",
                "waiting",
                "quarantined",
                "already_stored",
            ] {
                counts.insert(kind.into(), report.count(kind) as u64);
            }
            let rows: u64 = report
                .records
                .iter()
                .map(|r| match r.outcome {
                    Outcome::Done { telemetry_rows, .. } => telemetry_rows,
                    _ => 0,
                })
                .sum();
            counts.insert("telemetry_rows".into(), rows);
            for r in &report.records {
                let job = r.job.clone().unwrap_or_else(|| r.file.clone());
                match &r.outcome {
                    Outcome::Done {
                        day,
                        state,
                        telemetry_rows,
                        note,
                        ..
                    } => {
                        let mut f = vec![
                            ("outcome", json!("done")),
                            ("state", json!(state)),
                            ("day", json!(day.to_string())),
                            ("telemetry_rows", json!(telemetry_rows)),
                        ];
                        if let Some(n) = note {
                            f.push(("note", json!(n)));
                        }
                        job_event(&job, &mut f);
                    }
                    Outcome::Pending {
                        attempts,
                        next_attempt,
                        reason,
                    } => job_event(
                        &job,
                        &mut vec![
                            ("outcome", json!("pending")),
                            ("attempts", json!(attempts)),
                            (
                                "next_attempt",
                                json!(
                                    next_attempt.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                                ),
                            ),
                            ("reason", json!(reason)),
                        ],
                    ),
                    Outcome::Quarantined { reason } => job_event(
                        &job,
                        &mut vec![
                            ("outcome", json!("quarantined")),
                            ("file", json!(r.file)),
                            ("reason", json!(reason)),
                        ],
                    ),
                    Outcome::AlreadyStored { day, .. } => job_event(
                        &job,
                        &mut vec![
                            ("outcome", json!("already stored")),
                            ("day", json!(day.to_string())),
                        ],
                    ),
                    // Jobs waiting for their next attempt would repeat every run: counted only.
                    Outcome::Waiting { .. } => {}
                }
            }
            Ok((report.count("done") as u64, counts))
        }
        Step::Features { on: On::Ingested } => {
            let (mut judgeable, mut not_judgeable, mut failed) = (0, 0, 0);
            for j in ingested.iter() {
                let started = std::time::Instant::now();
                let result = crate::features::compute_job(
                    data,
                    j.day,
                    &j.job_id,
                    &j.telemetry_files,
                    &j.part,
                    &s.features,
                );
                let ms = started.elapsed().as_millis() as u64;
                let verdict = match result {
                    Ok(f) => match f.summary.not_judgeable_reason {
                        None => {
                            judgeable += 1;
                            "judgeable".to_string()
                        }
                        Some(reason) => {
                            not_judgeable += 1;
                            format!("not judgeable: {reason}")
                        }
                    },
                    // One job's failure does not stop the others; the nightly run computes the
                    // whole day again.
                    Err(e) => {
                        failed += 1;
                        format!("not computed: {e}")
                    }
                };
                job_event(
                    &j.job,
                    &mut vec![("features_ms", json!(ms)), ("features", json!(verdict))],
                );
            }
            counts.insert("judgeable".into(), judgeable);
            counts.insert("not_judgeable".into(), not_judgeable);
            counts.insert("failed".into(), failed);
            Ok((ingested.len() as u64, counts))
        }
        Step::Classify { on: On::Ingested } => {
            let (mut findings, mut failed) = (0, 0);
            for j in ingested.iter() {
                let result = crate::classify::classify_job(
                    data, j.day, &j.job_id, &j.part, &ctx.book, &s.rules,
                )
                .map_err(|e| e.to_string())
                .and_then(|verdict| {
                    // The models' verdict joins the rules' (another stage, on these verdicts).
                    if let Some(models) = ctx.models.as_deref() {
                        crate::model::predict::predict_and_write(
                            data,
                            j.day,
                            Some(&j.part),
                            models,
                            &rule_evidence(&ctx.book, std::slice::from_ref(&verdict)),
                        )
                        .map_err(|e| format!("predicting: {e}"))?;
                    }
                    Ok(verdict)
                });
                let text = match result {
                    Ok(v) if v.findings.is_empty() => "no findings".to_string(),
                    Ok(v) => {
                        findings += v.findings.len() as u64;
                        v.findings
                            .iter()
                            .map(|f| format!("{} ({})", f.rule, f.severity.name()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                    Err(e) => {
                        failed += 1;
                        format!("not classified: {e}")
                    }
                };
                job_event(&j.job, &mut vec![("findings", json!(text))]);
            }
            counts.insert("findings".into(), findings);
            counts.insert("failed".into(), failed);
            Ok((ingested.len() as u64, counts))
        }
        Step::Features { on: On::Days(n) } => {
            let mut total = crate::features::Computed::default();
            // A backfill is work over history: on the Ballista cluster when one is configured.
            // A nightly day is one machine's work, fastest by the single pass.
            let method = if request.trigger == Trigger::Backfill {
                crate::features::Method::Auto
            } else {
                crate::features::Method::SinglePass
            };
            for day in days_with_jobs(data, &days_of(request, *n)) {
                let (done, used) = crate::features::compute_day_by(
                    method,
                    &s.engine,
                    data,
                    day,
                    &s.features,
                    |_, _| {},
                )
                .map_err(|e| format!("features of {day}: {e}"))?;
                log.event(
                    "day",
                    &[
                        ("dag", json!(dag.name)),
                        ("step", json!(step.name())),
                        ("day", json!(day.to_string())),
                        ("by", json!(used.name())),
                        ("jobs", json!(done.jobs)),
                        ("rows", json!(done.rows)),
                        ("not_judgeable", json!(done.not_judgeable)),
                    ],
                );
                total.add(&done);
            }
            counts.insert("days".into(), total.days as u64);
            counts.insert("rows".into(), total.rows as u64);
            counts.insert("window_rows".into(), total.window_rows as u64);
            counts.insert("not_judgeable".into(), total.not_judgeable as u64);
            Ok((total.jobs as u64, counts))
        }
        Step::Classify { on: On::Days(n) } => {
            let mut total = crate::classify::Classified::default();
            let mut predictions = 0;
            for day in days_with_jobs(data, &days_of(request, *n)) {
                let verdicts = crate::classify::classify_day(data, day, &ctx.book, &s.rules)
                    .map_err(|e| format!("classifying {day}: {e}"))?;
                let p = match ctx.models.as_deref() {
                    Some(models) => crate::model::predict::predict_and_write(
                        data,
                        day,
                        None,
                        models,
                        &rule_evidence(&ctx.book, &verdicts),
                    )
                    .map_err(|e| format!("predicting {day}: {e}"))?,
                    None => Vec::new(),
                };
                let findings: usize = verdicts.iter().map(|v| v.findings.len()).sum();
                log.event(
                    "day",
                    &[
                        ("dag", json!(dag.name)),
                        ("step", json!(step.name())),
                        ("day", json!(day.to_string())),
                        ("jobs", json!(verdicts.len())),
                        ("findings", json!(findings)),
                    ],
                );
                total.days += 1;
                total.add(&verdicts);
                predictions += p.len() as u64;
            }
            counts.insert("days".into(), total.days as u64);
            counts.insert("findings".into(), total.findings as u64);
            counts.insert("critical".into(), total.critical as u64);
            counts.insert("classes".into(), total.classes as u64);
            counts.insert("predictions".into(), predictions);
            Ok((total.jobs as u64, counts))
        }
        Step::Notify { critical_only } => {
            let options = crate::notify::RunOptions {
                // The scheduled time decides the period and the workday, so a catch-up run
                // plans what the missed run would have planned.
                now: request
                    .scheduled_for
                    .max(ctx.clock.now() - chrono::TimeDelta::days(1)),
                critical_only: *critical_only,
                dry_run: false,
                // The admins' digest lists what the pipeline gave up on.
                given_up: Spool::open(&s.spool)
                    .and_then(|spool| spool.failed())
                    .unwrap_or_default(),
            };
            let report = crate::notify::run(data, &s.notify, &options, &mut |_| {})
                .map_err(|e| e.to_string())?;
            counts.insert("messages".into(), report.prepared.len() as u64);
            counts.insert("sent".into(), report.delivered.sent.len() as u64);
            counts.insert("waiting".into(), report.delivered.waiting.len() as u64);
            counts.insert("failed".into(), report.delivered.failed.len() as u64);
            counts.insert("in_doubt".into(), report.recovered.in_doubt.len() as u64);
            counts.insert("no_address".into(), report.no_address.len() as u64);
            Ok((report.jobs_read as u64, counts))
        }
        Step::Summarize { days } => {
            let days = days_of(request, *days);
            let (Some(first), Some(last)) = (days.iter().min(), days.iter().max()) else {
                return Ok((0, counts));
            };
            let rows = crate::summary::write_days(data, &s.summary, *first, *last)
                .map_err(|e| format!("summarizing {first} to {last}: {e}"))?;
            counts.insert("days".into(), days.len() as u64);
            counts.insert("rows".into(), rows as u64);
            Ok((0, counts))
        }
        Step::Report { days } => {
            let inputs = report_inputs(s);
            let mut total = crate::report::Written::default();
            let days = days_with_jobs(data, &days_of(request, *days));
            for day in &days {
                let written = crate::report::write_day(data, &s.report, &inputs, *day, &mut |_| {})
                    .map_err(|e| format!("report pages of {day}: {e}"))?;
                for (job, reason) in &written.failed {
                    job_event(job, &mut vec![("no_page", json!(reason))]);
                }
                total.jobs += written.jobs;
                total.users += written.users;
                total.days += written.days;
                total.workflows += written.workflows;
                total.failed.extend(written.failed);
            }
            counts.insert("days".into(), days.len() as u64);
            counts.insert("job_pages".into(), total.jobs as u64);
            counts.insert("user_pages".into(), total.users as u64);
            counts.insert("system_reports".into(), total.days as u64);
            counts.insert("workflow_pages".into(), total.workflows as u64);
            counts.insert("failed".into(), total.failed.len() as u64);
            Ok((total.jobs as u64, counts))
        }
        Step::Compact { days } => {
            // Ingest writes the parts compaction folds and removes: not both at once. Busy is an
            // error, so the step's retries wait for the ingest to end.
            // Without a spool (a warehouse filled by imports only) no ingest can be running.
            let _ingest = match Spool::open(&s.spool) {
                Ok(spool) => Some(per_job::lock(&spool).map_err(|e| e.to_string())?),
                Err(_) => None,
            };
            let mut total = catalog::Compacted::default();
            let mut tables_days = 0;
            for day in days_of(request, *days) {
                for table in COMPACTED_TABLES {
                    let done = catalog::compact_day(data, table, day)
                        .map_err(|e| format!("compacting {} of {day}: {e}", table.name()))?;
                    if done.parts == 0 && done.leftovers == 0 {
                        continue;
                    }
                    tables_days += 1;
                    log.event(
                        "compacted",
                        &[
                            ("dag", json!(dag.name)),
                            ("table", json!(table.name())),
                            ("day", json!(day.to_string())),
                            ("parts", json!(done.parts)),
                            ("leftovers", json!(done.leftovers)),
                            ("rows", json!(done.rows)),
                        ],
                    );
                    total.parts += done.parts;
                    total.leftovers += done.leftovers;
                }
            }
            counts.insert("partitions".into(), tables_days);
            counts.insert(
                "stale_temporaries".into(),
                catalog::remove_stale_temporaries(data) as u64,
            );
            counts.insert("parts".into(), total.parts as u64);
            counts.insert("leftovers".into(), total.leftovers as u64);
            Ok((0, counts))
        }
        Step::SlurmWorkflows { days: n } => {
            let days = days_of(request, *n);
            let (Some(first), Some(last)) = (days.iter().min(), days.iter().max()) else {
                return Ok((0, counts));
            };
            // A backfill's day covers as many days as a nightly run, so chains stay whole.
            let first = &(*first).min(
                last.checked_sub_days(chrono::Days::new(u64::from(n.saturating_sub(1))))
                    .unwrap_or(*last),
            );
            let runtime = tokio::runtime::Runtime::new()
                .map_err(|e| format!("cannot start the query runtime: {e}"))?;
            let done = crate::workflow::slurm::rebuild(&runtime, data, *first, *last)
                .map_err(|e| format!("building the Slurm workflows of {first} to {last}: {e}"))?;
            counts.insert("jobs_read".into(), done.jobs_read as u64);
            counts.insert("runs".into(), done.runs as u64);
            counts.insert("tasks".into(), done.tasks as u64);
            counts.insert("days_written".into(), done.days_written as u64);
            counts.insert("days_cleared".into(), done.days_cleared as u64);
            Ok((0, counts))
        }
        Step::WorkflowScore => {
            use crate::workflow::detect;
            if !Table::WorkflowTasks.dir(data).is_dir() {
                counts.insert("tasks".into(), 0);
                return Ok((0, counts));
            }
            let runtime = tokio::runtime::Runtime::new()
                .map_err(|e| format!("cannot start the query runtime: {e}"))?;
            let (tasks, runs) = runtime
                .block_on(detect::read_tasks(data))
                .map_err(|e| format!("reading the workflow tasks: {e}"))?;
            let mut rows = detect::score(&tasks);
            if let Some(path) = &s.model.workflow {
                crate::workflow::model::WorkflowModel::read(path)
                    .and_then(|m| m.apply(&tasks, &mut rows))
                    .map_err(|e| format!("applying the workflow model: {e}"))?;
                counts.insert("with_model".into(), 1);
            }
            let (scored, flagged, days) = detect::write_scores(data, rows)
                .map_err(|e| format!("writing workflow_scores: {e}"))?;
            counts.insert("runs".into(), runs.len() as u64);
            counts.insert("tasks".into(), scored as u64);
            counts.insert("flagged".into(), flagged as u64);
            counts.insert("days".into(), days as u64);
            Ok((0, counts))
        }
        Step::Retrain => {
            use crate::model::retrain::{self, Rebaselined, Retrained};
            if s.model.diagnosis.is_none() && s.model.unsupervised.is_none() {
                counts.insert("no_model".into(), 1);
                log.event(
                    "retrain",
                    &[
                        ("dag", json!(dag.name)),
                        (
                            "outcome",
                            json!("nothing to retrain: no [model] diagnosis or unsupervised configured"),
                        ),
                    ],
                );
                return Ok((0, counts));
            }
            if let Some(model) = &s.model.diagnosis {
                let mut phase = |p: &str| {
                    log.event("retrain", &[("dag", json!(dag.name)), ("phase", json!(p))]);
                };
                let done = retrain::retrain_diagnosis(data, model, &mut phase)
                    .map_err(|e| format!("retraining {}: {e}", model.display()))?;
                let f1 = |v: &Option<f64>| {
                    v.map_or(json!(null), |f| json!((f * 1000.0).round() / 1000.0))
                };
                let mut fields = vec![
                    ("dag", json!(dag.name)),
                    ("model", json!(model.display().to_string())),
                ];
                match &done {
                    Retrained::NoNewLabels => {
                        fields.push(("outcome", json!("no labels newer than the model")));
                    }
                    Retrained::Rotated {
                        previous,
                        old_f1,
                        new_f1,
                    } => {
                        fields.push(("outcome", json!("rotated")));
                        fields.push(("previous", json!(previous.display().to_string())));
                        fields.push(("old_macro_f1", f1(old_f1)));
                        fields.push(("new_macro_f1", f1(new_f1)));
                    }
                    Retrained::Kept {
                        candidate,
                        old_f1,
                        new_f1,
                    } => {
                        fields.push((
                            "outcome",
                            json!("kept the current model: the candidate is worse"),
                        ));
                        fields.push(("candidate", json!(candidate.display().to_string())));
                        fields.push(("old_macro_f1", f1(old_f1)));
                        fields.push(("new_macro_f1", f1(new_f1)));
                    }
                }
                log.event("retrain", &fields);
                let outcome = match done {
                    Retrained::NoNewLabels => "no_new_labels",
                    Retrained::Rotated { .. } => "rotated",
                    Retrained::Kept { .. } => "kept",
                };
                counts.insert(outcome.into(), 1);
            }
            if let Some(model) = &s.model.unsupervised {
                let mut phase = |p: &str| {
                    log.event(
                        "rebaseline",
                        &[("dag", json!(dag.name)), ("phase", json!(p))],
                    );
                };
                let done = retrain::rebaseline_score(data, model, &mut phase)
                    .map_err(|e| format!("refreshing the baselines of {}: {e}", model.display()))?;
                let mut fields = vec![
                    ("dag", json!(dag.name)),
                    ("model", json!(model.display().to_string())),
                ];
                match &done {
                    Rebaselined::Unchanged => {
                        fields.push(("outcome", json!("baselines unchanged")));
                        counts.insert("baselines_unchanged".into(), 1);
                    }
                    Rebaselined::Refreshed {
                        previous,
                        applications,
                        new,
                    } => {
                        fields.push(("outcome", json!("baselines refreshed")));
                        fields.push(("previous", json!(previous.display().to_string())));
                        fields.push(("applications", json!(applications)));
                        fields.push(("new_applications", json!(new)));
                        counts.insert("baselines_refreshed".into(), 1);
                        counts.insert("new_applications".into(), new.len() as u64);
                    }
                }
                log.event("rebaseline", &fields);
            }
            Ok((0, counts))
        }
        Step::Retain { keep_days } => {
            let today = ctx.clock.now().date_naive();
            let oldest_kept = today
                .checked_sub_days(chrono::Days::new(u64::from(*keep_days)))
                .unwrap_or(NaiveDate::MIN);
            let mut removed = 0;
            for table in [Table::Telemetry, Table::Windows] {
                for day in catalog::days(data, table) {
                    if day < oldest_kept {
                        let dir = catalog::partition_dir(data, table, day);
                        std::fs::remove_dir_all(&dir)
                            .map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
                        log.event(
                            "removed",
                            &[
                                ("dag", json!(dag.name)),
                                ("table", json!(table.name())),
                                ("day", json!(day.to_string())),
                            ],
                        );
                        removed += 1;
                    }
                }
            }
            counts.insert("partitions_removed".into(), removed);
            Ok((0, counts))
        }
    }
}

/// The tables whose small parts the compact step folds into day files: those the per-job path
/// and the scheduler write one file per job or per run into. The features, findings and
/// predictions tables get day files from the nightly features and classify steps already.
const COMPACTED_TABLES: [Table; 3] = [Table::Jobs, Table::Telemetry, Table::Runs];

/// The days of `wanted` that have jobs.
fn days_with_jobs(data: &Path, wanted: &[NaiveDate]) -> Vec<NaiveDate> {
    let have = crate::features::days_with_jobs(data);
    wanted
        .iter()
        .copied()
        .filter(|d| have.contains(d))
        .collect()
}

/// Writes the run's rows (one for the run, one per step) as one part of `runs`.
fn record(data: &Path, run: &RunReport) -> Result<(), String> {
    let host = hostname();
    let pid = std::process::id();
    let run_error = run
        .steps
        .iter()
        .filter(|s| s.outcome == StepOutcome::Failed)
        .filter_map(|s| s.error.as_ref().map(|e| format!("{}: {e}", s.step)))
        .collect::<Vec<_>>();
    // The run's identity repeats on every row.
    let row = |step: String, position: u32, outcome: StepOutcome| RunRow {
        run_id: run.run_id.clone(),
        dag: run.dag.clone(),
        step,
        position,
        trigger: run.trigger.to_string(),
        scheduled_for: run.scheduled_for,
        started: run.started,
        ended: run.ended,
        outcome: outcome.name().to_string(),
        attempts: 1,
        jobs: 0,
        counts: "{}".into(),
        error: None,
        host: host.clone(),
        pid,
    };
    // One row for the whole run (step ""), then one per step.
    let mut rows = vec![RunRow {
        jobs: run.steps.iter().map(|s| s.jobs).max().unwrap_or(0),
        error: (!run_error.is_empty()).then(|| run_error.join("; ")),
        ..row(String::new(), 0, run.outcome)
    }];
    for s in &run.steps {
        rows.push(RunRow {
            started: s.started,
            ended: s.ended,
            attempts: s.attempts,
            jobs: s.jobs,
            counts: serde_json::to_string(&s.counts).unwrap_or_default(),
            error: s.error.clone(),
            ..row(s.step.clone(), s.position, s.outcome)
        });
    }
    let batch = RunRow::batch(&rows).map_err(|e| e.to_string())?;
    catalog::write_part(
        data,
        Table::Runs,
        run.started.date_naive(),
        &format!("run-{}", run.run_id),
        &[batch],
    )
    .map_err(|e| e.to_string())?;
    Ok(())
}

/// This machine's short host name, for the `runs` table.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// A backfill: the DAG's day steps over every day from `since` to `until` that has jobs, one run
/// per day, oldest first, with progress and the time left on the log and to `progress(done, of,
/// day)` (the command line's progress bar).
pub fn backfill(
    ctx: &Context,
    dag: &Dag,
    since: NaiveDate,
    until: NaiveDate,
    log: &Log,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(usize, usize, NaiveDate),
) -> Result<Vec<RunReport>, ScheduleError> {
    if !dag.steps.iter().any(|s| {
        matches!(
            s,
            Step::Features { on: On::Days(_) } | Step::Classify { on: On::Days(_) }
        )
    }) {
        return Err(ScheduleError::NothingToBackfill {
            dag: dag.name.clone(),
        });
    }
    let days: Vec<NaiveDate> = crate::features::days_with_jobs(ctx.data())
        .into_iter()
        .filter(|d| (since..=until).contains(d))
        .collect();
    let started = std::time::Instant::now();
    let mut reports = Vec::new();
    for (i, day) in days.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            log.event(
                "backfill-stopped",
                &[
                    ("dag", json!(dag.name)),
                    ("done", json!(i)),
                    ("of", json!(days.len())),
                ],
            );
            break;
        }
        let request = RunRequest {
            scheduled_for: day
                .succ_opt()
                .unwrap_or(*day)
                .and_time(chrono::NaiveTime::MIN)
                .and_utc(),
            trigger: Trigger::Backfill,
            days: Some(vec![*day]),
        };
        progress(i, days.len(), *day);
        reports.push(run_dag(ctx, dag, &request, log, stop)?);
        progress(i + 1, days.len(), *day);
        let elapsed = started.elapsed().as_secs_f64();
        let left = elapsed / (i + 1) as f64 * (days.len() - i - 1) as f64;
        log.event(
            "progress",
            &[
                ("dag", json!(dag.name)),
                ("day", json!(day.to_string())),
                ("done", json!(i + 1)),
                ("of", json!(days.len())),
                ("seconds_left", json!(left.round())),
            ],
        );
    }
    Ok(reports)
}

/// What the models' verdicts are combined with: each job's id and the anomaly types its rules
/// found evidence of. The one place the rules' results reach the model stage.
pub fn rule_evidence(
    book: &RuleBook,
    verdicts: &[crate::rules::Verdict],
) -> Vec<crate::model::predict::RuleEvidence> {
    verdicts
        .iter()
        .map(|v| crate::model::predict::RuleEvidence {
            job_id: v.job_id.clone(),
            anomalies: v.anomalies(book),
        })
        .collect()
}
