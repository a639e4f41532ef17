//! Workflow runs: the Slurm runs a day's jobs are steps of, every stored run's id, and one run
//! with its tasks (and their scores, when the runs were scored) for its page.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use datafusion::prelude::SessionContext;

use super::sql::{each_row, text};
use jobsight_warehouse::query::{QueryError, literal};

/// The workflow runs a day's pages show: the Slurm run each of the day's jobs is a step of (runs
/// that ended in the [`RUN_LOOK_AHEAD_DAYS`] days from `day`), and every run that ended on `day`.
/// Call only when `workflows` and `workflow_tasks` exist.
pub async fn slurm_runs(
    ctx: &SessionContext,
    day: NaiveDate,
) -> Result<(HashMap<String, String>, Vec<String>), QueryError> {
    let last = day
        .checked_add_days(chrono::Days::new(RUN_LOOK_AHEAD_DAYS))
        .unwrap_or(day);
    let mut steps = HashMap::new();
    let sql = format!(
        "SELECT t.task_id, t.workflow_id FROM workflow_tasks t \
         JOIN workflows w ON w.workflow_id = t.workflow_id AND w.day = t.day \
         WHERE w.source = 'slurm' AND t.day >= '{day}' AND t.day <= '{last}'"
    );
    each_row(ctx, &sql, |c, i| {
        steps.insert(text(c, "task_id", i), text(c, "workflow_id", i));
    })
    .await?;
    let mut ended = Vec::new();
    let sql = format!("SELECT workflow_id FROM workflows WHERE day = '{day}' ORDER BY workflow_id");
    each_row(ctx, &sql, |c, i| ended.push(text(c, "workflow_id", i))).await?;
    Ok((steps, ended))
}

/// Every workflow run's id.
pub async fn workflow_ids(ctx: &SessionContext) -> Result<Vec<String>, QueryError> {
    let mut ids = Vec::new();
    each_row(ctx, "SELECT DISTINCT workflow_id FROM workflows", |c, i| {
        ids.push(text(c, "workflow_id", i))
    })
    .await?;
    Ok(ids)
}

/// Days after a job's day in which the workflow run it is a step of may end (as the rules read
/// them).
pub const RUN_LOOK_AHEAD_DAYS: u64 = 8;

/// A workflow run for its page (`workflows`, `workflow_tasks`, and `workflow_scores` when the
/// run was scored).
#[derive(Debug, Clone, Default)]
pub struct WorkflowFacts {
    pub workflow_id: String,
    pub workflow: String,
    pub label: Option<String>,
    pub start: Option<DateTime<Utc>>,
    pub end: Option<DateTime<Utc>>,
    pub makespan_s: Option<f64>,
    pub critical_path_s: Option<f64>,
    /// In the order of their first time (ready, else submitted, else started).
    pub tasks: Vec<WorkflowTaskFacts>,
}

/// One task: its times in seconds since the epoch.
#[derive(Debug, Clone, Default)]
pub struct WorkflowTaskFacts {
    pub task_id: String,
    pub host: Option<String>,
    pub label: Option<String>,
    pub ready: Option<f64>,
    pub submit: Option<f64>,
    pub execute_start: Option<f64>,
    pub execute_end: Option<f64>,
    pub end: Option<f64>,
    pub critical: bool,
    pub score: Option<f64>,
    pub flagged: bool,
}

/// One workflow run, if it is stored; `scored` says whether `workflow_scores` exists.
pub async fn workflow(
    ctx: &SessionContext,
    run: &str,
    scored: bool,
) -> Result<Option<WorkflowFacts>, QueryError> {
    let mut facts: Option<WorkflowFacts> = None;
    let sql = format!(
        "SELECT workflow_id, workflow, label, start, \"end\", makespan_s, critical_path_s
         FROM workflows WHERE workflow_id = {} LIMIT 1",
        literal(run)
    );
    each_row(ctx, &sql, |c, i| {
        facts = Some(WorkflowFacts {
            workflow_id: text(c, "workflow_id", i),
            workflow: text(c, "workflow", i),
            label: c.text("label", i),
            start: c.time("start", i),
            end: c.time("end", i),
            makespan_s: c.float("makespan_s", i),
            critical_path_s: c.float("critical_path_s", i),
            tasks: Vec::new(),
        });
    })
    .await?;
    let Some(mut facts) = facts else {
        return Ok(None);
    };
    let epoch = |column: &str| format!("date_part('epoch', t.\"{column}\") AS {column}_s");
    let (score_columns, score_join) = if scored {
        (
            "s.score, s.flagged",
            "LEFT JOIN workflow_scores s ON s.workflow_id = t.workflow_id AND s.task_id = t.task_id",
        )
    } else {
        (
            "CAST(NULL AS DOUBLE) AS score, CAST(NULL AS BOOLEAN) AS flagged",
            "",
        )
    };
    let sql = format!(
        "SELECT t.task_id, t.host, t.label, {}, {}, {}, {}, {}, t.on_critical_path, {score_columns}
         FROM workflow_tasks t {score_join} WHERE t.workflow_id = {}
         ORDER BY coalesce(t.ready, t.submit, t.execute_start), t.task_id",
        epoch("ready"),
        epoch("submit"),
        epoch("execute_start"),
        epoch("execute_end"),
        epoch("end"),
        literal(run)
    );
    each_row(ctx, &sql, |c, i| {
        facts.tasks.push(WorkflowTaskFacts {
            task_id: text(c, "task_id", i),
            host: c.text("host", i),
            label: c.text("label", i),
            ready: c.float("ready_s", i),
            submit: c.float("submit_s", i),
            execute_start: c.float("execute_start_s", i),
            execute_end: c.float("execute_end_s", i),
            end: c.float("end_s", i),
            critical: c.boolean("on_critical_path", i) == Some(true),
            score: c.float("score", i),
            flagged: c.boolean("flagged", i) == Some(true),
        });
    })
    .await?;
    Ok(Some(facts))
}
