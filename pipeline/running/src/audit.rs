//! The policy's memory: the `interventions` table, every warning and cancellation the running
//! DAG decided (and, in a dry run, every one it would have made), read back as the [`History`]
//! the decisions of the next run go by, and written as one part per run.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use jobsight_warehouse::catalog::{self, Table, rows::InterventionRow};

/// One row of the audit so far, as the decisions read it.
#[derive(Debug, Clone)]
pub struct Past {
    pub stage: String,
    pub decided_at: DateTime<Utc>,
    pub dry_run: bool,
    pub outcome: String,
}

/// The audit of the last 30 days by (cluster, job, condition).
pub type History = BTreeMap<(String, String, String), Vec<Past>>;

/// Reads the audit rows of the 30 days up to `now`.
pub fn read_history(data: &Path, now: DateTime<Utc>) -> Result<History, String> {
    let first = now.date_naive() - chrono::Duration::days(30);
    let sql = format!(
        "SELECT cluster, job_id, condition, stage, decided_at, dry_run, outcome FROM interventions \
         WHERE day >= '{first}'"
    );
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let batches = runtime
        .block_on(jobsight_warehouse::query::run(data, &sql))
        .map_err(|e| format!("reading interventions: {e}"))?;
    let mut history = History::new();
    for batch in &batches {
        let c = jobsight_warehouse::query::Columns::of(batch).map_err(|e| e.to_string())?;
        for i in 0..batch.num_rows() {
            let key = (
                c.text("cluster", i).unwrap_or_default(),
                c.text("job_id", i).unwrap_or_default(),
                c.text("condition", i).unwrap_or_default(),
            );
            history.entry(key).or_default().push(Past {
                stage: c.text("stage", i).unwrap_or_default(),
                decided_at: c.time("decided_at", i).unwrap_or_default(),
                dry_run: c.boolean("dry_run", i).unwrap_or(false),
                outcome: c.text("outcome", i).unwrap_or_default(),
            });
        }
    }
    Ok(history)
}

/// The run's rows as one part of `interventions`.
pub fn write_rows(data: &Path, rows: &[InterventionRow], now: DateTime<Utc>) -> Result<(), String> {
    if rows.is_empty() {
        return Ok(());
    }
    let batch = InterventionRow::batch(rows).map_err(|e| e.to_string())?;
    catalog::write_part(
        data,
        Table::Interventions,
        now.date_naive(),
        &format!("run-{}", now.format("%Y%m%dT%H%M%S%.6f")),
        &[batch],
    )
    .map_err(|e| e.to_string())?;
    Ok(())
}
