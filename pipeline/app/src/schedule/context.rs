//! What a run works with: the [`Context`] built once per run (settings, clock, rule book, models,
//! the accounting and telemetry sources), the [`RunRequest`] that says when and why it runs, and
//! the [`StepRun`] that hands all of it to the function of one step.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use serde_json::json;

use super::dag::Dag;
use super::error::ScheduleError;
use super::log::Log;
use super::step::Step;
use crate::config::{Settings, TelemetryKind};
use jobsight_ingest::prometheus::Prometheus;
use jobsight_ingest::sources::{AccountingSource, Sacct, TelemetrySource};
use jobsight_model::predict::Models;
use jobsight_rules::RuleBook;

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
pub fn load_models(settings: &Settings) -> Result<Option<Models>, jobsight_model::ModelError> {
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
    /// `jobsight dag run NAME --dry-run`: the steps read and decide, but write, send and cancel
    /// nothing, and the run is not recorded (for DAGs whose steps all run dry).
    DryRun,
}

impl Trigger {
    pub fn name(self) -> &'static str {
        match self {
            Trigger::Schedule => "schedule",
            Trigger::CatchUp { .. } => "catch-up",
            Trigger::Manual => "manual",
            Trigger::Backfill => "backfill",
            Trigger::DryRun => "dry-run",
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

/// What one step of a run works with: the run's context and request, the DAG, the step itself
/// and the log.
#[derive(Debug)]
pub(super) struct StepRun<'a> {
    pub(super) ctx: &'a Context,
    pub(super) dag: &'a Dag,
    pub(super) step: &'a Step,
    pub(super) request: &'a RunRequest,
    pub(super) log: &'a Log,
}

impl StepRun<'_> {
    /// Logs one `job` line: `job` passed this step, with `fields` after the DAG, step and job.
    pub(super) fn job_event(&self, job: &str, fields: Vec<(&str, serde_json::Value)>) {
        let mut all = vec![
            ("dag", json!(self.dag.name)),
            ("step", json!(self.step.name())),
            ("job", json!(job)),
        ];
        all.extend(fields);
        self.log.event("job", &all);
    }
}

/// What a step did: the jobs it worked on, and named counts (claimed, done, pending, findings,
/// sent, ...).
pub(super) type Counts = (u64, BTreeMap<String, u64>);
