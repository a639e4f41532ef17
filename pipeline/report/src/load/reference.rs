//! The healthy references of a day's pages: the runs of the last [`HISTORY_DAYS`] that had no
//! finding and no verdict other than healthy, and the cluster's band of each metric's job mean
//! over them.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use datafusion::prelude::SessionContext;

use super::sql::{HISTORY_DAYS, each_row, text};
use jobsight_warehouse::query::QueryError;

/// A job that ran without findings and that the models (if any) called healthy, usable as a
/// reference for the same user's runs of the same job name.
#[derive(Debug, Clone)]
pub struct HealthyRun {
    pub job_id: String,
    pub day: NaiveDate,
    pub user: String,
    pub name: String,
}

/// Healthy runs of the [`HISTORY_DAYS`] up to `day`, newest first; and the cluster's healthy
/// band of each metric's job mean (10th to 90th percentile over those runs).
pub async fn healthy(
    ctx: &SessionContext,
    day: NaiveDate,
) -> Result<(Vec<HealthyRun>, BTreeMap<String, (f64, f64)>), QueryError> {
    let from = day - chrono::Days::new(HISTORY_DAYS);
    let healthy = format!(
        "SELECT j.job_id, j.day, j.\"user\", j.name, j.\"end\" FROM jobs j \
         JOIN job_summary s ON s.job_id = j.job_id AND s.day = j.day \
         LEFT JOIN (SELECT job_id, day, count(*) AS n FROM findings GROUP BY 1, 2) x \
           ON x.job_id = j.job_id AND x.day = j.day \
         LEFT JOIN (SELECT job_id, day, \
             max(CASE WHEN verdict = 'healthy' THEN 0 ELSE 1 END) AS bad FROM predictions GROUP BY 1, 2) p \
           ON p.job_id = j.job_id AND p.day = j.day \
         WHERE j.day >= '{from}' AND j.day <= '{day}' AND s.judgeable \
           AND coalesce(x.n, 0) = 0 AND coalesce(p.bad, 0) = 0"
    );
    let mut runs = Vec::new();
    each_row(
        ctx,
        &format!("{healthy} ORDER BY j.\"end\" DESC, j.job_id"),
        |c, i| {
            if let Some(day) = c.text("day", i).and_then(|d| d.parse().ok()) {
                runs.push(HealthyRun {
                    job_id: text(c, "job_id", i),
                    day,
                    user: text(c, "user", i),
                    name: text(c, "name", i),
                });
            }
        },
    )
    .await?;
    let sql = format!(
        "SELECT f.metric, \
         approx_percentile_cont(0.1) WITHIN GROUP (ORDER BY f.mean) AS lo, \
         approx_percentile_cont(0.9) WITHIN GROUP (ORDER BY f.mean) AS hi \
         FROM features_job f JOIN ({healthy}) h ON h.job_id = f.job_id AND h.day = f.day \
         GROUP BY f.metric"
    );
    let mut band = BTreeMap::new();
    each_row(ctx, &sql, |c, i| {
        if let (Some(lo), Some(hi)) = (c.float("lo", i), c.float("hi", i)) {
            band.insert(text(c, "metric", i), (lo, hi));
        }
    })
    .await?;
    Ok((runs, band))
}
