//! What a DAG run did: the [`RunReport`] that the application's schedule returns from a run, with
//! a [`StepReport`] per step, and its rows in the `runs` table (one for the run, one per step). It
//! lives beside the table so that whatever renders a run (the render crate) needs no schedule.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::rows::RunRow;
use super::{Table, write_part};

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

/// Writes the run's rows (one for the run, one per step) as one part of `runs`.
pub fn record(data: &Path, run: &RunReport) -> Result<(), String> {
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
    write_part(
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
