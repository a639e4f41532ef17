//! Each job's place in a Slurm workflow run, for the rules that read `workflow.<field>`: whether
//! the job is a step of an array or a dependency chain, how many jobs waited for it, whether it
//! decided the run's makespan, and what the workflow score says about its host
//! (`workflow_tasks`, `workflows` and `workflow_scores`, which the nightly `slurm-workflows` and
//! `workflow-score` steps write before `classify`). Read from the warehouse, not from the
//! workflow stage: a stage never calls another.
//!
//! A job's run ends on its day or later (a chain goes on after a step), so the runs that ended in
//! the [`LOOK_AHEAD_DAYS`] days from the job's day are read; the per-job path, which runs before
//! the night's workflow steps, finds none for a new job, and the nightly re-judging adds them.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{Days, NaiveDate};

use super::ClassifyError;
use crate::JobData;
use crate::lang::Value;
use jobsight_warehouse::catalog::Table;
use jobsight_warehouse::query::{self, Columns};

/// Days after a job's day in which its workflow run may end and still be read.
pub const LOOK_AHEAD_DAYS: u64 = 8;

/// Fills `workflow` of each of `jobs` (of `day`) that is a task of a Slurm workflow run.
pub fn attach(data: &Path, day: NaiveDate, jobs: &mut [JobData]) -> Result<(), ClassifyError> {
    if jobs.is_empty() || !Table::WorkflowTasks.dir(data).is_dir() {
        return Ok(());
    }
    let last = day
        .checked_add_days(Days::new(LOOK_AHEAD_DAYS))
        .unwrap_or(day);
    let scored = Table::WorkflowScores.dir(data).is_dir();
    let (join, scores) = if scored {
        (
            "LEFT JOIN workflow_scores s ON s.workflow_id = t.workflow_id AND s.task_id = t.task_id",
            "s.score, s.flagged, s.runtime_z, CAST(s.history_runs AS BIGINT) AS history_runs",
        )
    } else {
        (
            "",
            "CAST(NULL AS DOUBLE) AS score, CAST(NULL AS BOOLEAN) AS flagged, \
             CAST(NULL AS DOUBLE) AS runtime_z, CAST(NULL AS BIGINT) AS history_runs",
        )
    };
    let sql = format!(
        "SELECT t.task_id, t.workflow_id, CAST(w.tasks AS BIGINT) AS tasks, \
         CAST(t.children AS BIGINT) AS children, t.on_critical_path, t.queue_delay_s, {scores} \
         FROM workflow_tasks t JOIN workflows w ON w.workflow_id = t.workflow_id AND w.day = t.day \
         {join} \
         WHERE w.source = 'slurm' AND t.day >= '{day}' AND t.day <= '{last}'"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ClassifyError::read(data, format!("cannot start a query runtime: {e}")))?;
    let failed =
        |e: query::QueryError| ClassifyError::read(data, format!("the workflow runs: {e}"));
    let batches = runtime.block_on(query::run(data, &sql)).map_err(failed)?;
    let mut by_job: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
    for batch in &batches {
        let c = Columns::of(batch).map_err(failed)?;
        for i in 0..batch.num_rows() {
            let (Some(job), Some(run)) = (c.text("task_id", i), c.text("workflow_id", i)) else {
                continue;
            };
            let number = |v: Option<f64>| v.map_or(Value::Missing, Value::num);
            let flag =
                |v: Option<bool>| v.map_or(Value::Missing, |b| Value::num(f64::from(u8::from(b))));
            let fields = BTreeMap::from([
                ("run".to_string(), Value::Str(run)),
                ("tasks".into(), number(c.int("tasks", i).map(|v| v as f64))),
                (
                    "waiting".into(),
                    number(c.int("children", i).map(|v| v as f64)),
                ),
                (
                    "on_critical_path".into(),
                    flag(c.boolean("on_critical_path", i)),
                ),
                ("score".into(), number(c.float("score", i))),
                ("flagged".into(), flag(c.boolean("flagged", i))),
                ("runtime_z".into(), number(c.float("runtime_z", i))),
                (
                    "history_runs".into(),
                    number(c.int("history_runs", i).map(|v| v as f64)),
                ),
                ("queue_delay_s".into(), number(c.float("queue_delay_s", i))),
            ]);
            by_job.insert(job, fields);
        }
    }
    for job in jobs.iter_mut() {
        if let Some(fields) = by_job.remove(&job.job_id) {
            job.workflow = fields;
        }
    }
    Ok(())
}

/// [`attach`], or judged without workflows (with a warning) when the tables cannot be read.
pub fn attach_or_warn(data: &Path, day: NaiveDate, jobs: &mut [JobData]) {
    if let Err(e) = attach(data, day, jobs) {
        eprintln!("jobsight classify {day}: judged without the jobs' workflow runs: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};
    use jobsight_warehouse::catalog::rows::{WorkflowRow, WorkflowScoreRow, WorkflowTaskRow};
    use jobsight_warehouse::catalog::{self, Table};

    fn task(run: &str, id: &str, children: u32) -> WorkflowTaskRow {
        WorkflowTaskRow {
            workflow_id: run.into(),
            task_id: id.into(),
            host: Some("n1".into()),
            queue_delay_s: Some(30.0),
            children: Some(children),
            on_critical_path: Some(true),
            ..WorkflowTaskRow::default()
        }
    }

    /// A job of a Slurm run ending two days after its own day gets its place and score; a task
    /// of a Pegasus run with the same id does not; a job of no run gets nothing.
    #[test]
    fn jobs_get_their_place_in_slurm_runs() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let day: NaiveDate = "2026-11-20".parse().unwrap();
        let run_day = day.checked_add_days(Days::new(2)).unwrap();
        let end: DateTime<Utc> = run_day.and_hms_opt(3, 0, 0).unwrap().and_utc();
        let run = |id: &str, source: &str| WorkflowRow {
            workflow_id: id.into(),
            workflow: "prep".into(),
            label: None,
            tasks: 2,
            anomalous_tasks: None,
            start: None,
            end,
            makespan_s: None,
            critical_path_tasks: None,
            critical_path_s: None,
            source: source.into(),
            ready_to_start_median_s: None,
            ready_to_start_p95_s: None,
            runtime_median_s: None,
            runtime_p95_s: None,
        };
        let write = |table: Table, name: &str, batch| {
            catalog::write_part(data, table, run_day, name, &[batch]).unwrap();
        };
        write(
            Table::Workflows,
            "x",
            WorkflowRow::batch(&[run("slurm-c-7", "slurm"), run("peg", "pegasus:x")]).unwrap(),
        );
        write(
            Table::WorkflowTasks,
            "x",
            WorkflowTaskRow::batch(&[task("slurm-c-7", "7", 1), task("peg", "8", 1)]).unwrap(),
        );
        let score = |run: &str, id: &str| WorkflowScoreRow {
            workflow_id: run.into(),
            task_id: id.into(),
            score: 2.5,
            flagged: true,
            slack_z: 2.5,
            runtime_z: 1.5,
            stage_in_z: 0.0,
            stage_out_z: 0.0,
            stime_z: 0.0,
            history_runs: 6,
            runtime_vs_run: Some(1.0),
            supervised_share: None,
            run_verdict: None,
        };
        write(
            Table::WorkflowScores,
            "scores",
            WorkflowScoreRow::batch(&[score("slurm-c-7", "7"), score("peg", "8")]).unwrap(),
        );
        let mut jobs: Vec<JobData> = ["7", "8", "9"]
            .iter()
            .map(|id| JobData {
                job_id: id.to_string(),
                ..JobData::default()
            })
            .collect();
        attach(data, day, &mut jobs).unwrap();
        let w = &jobs[0].workflow;
        assert_eq!(w["run"], Value::Str("slurm-c-7".into()));
        assert_eq!(
            (
                w["tasks"].clone(),
                w["waiting"].clone(),
                w["flagged"].clone()
            ),
            (Value::num(2.0), Value::num(1.0), Value::num(1.0))
        );
        assert_eq!(
            (w["score"].clone(), w["history_runs"].clone()),
            (Value::num(2.5), Value::num(6.0))
        );
        assert!(jobs[1].workflow.is_empty(), "a Pegasus task is no job");
        assert!(jobs[2].workflow.is_empty());
    }
}
