//! Features: per job × node × metric statistics of the stored telemetry, the input of every rule,
//! class and model. (First part of the features stage: the reference definition in SQL. The
//! across-node, temporal, coverage, windowed and efficiency features, and the fast single pass that
//! tests compare against this reference, are still to come; see the README's status.)
//!
//! Input: `jobs` (start and end of each job) and `telemetry`, one day partition at a time (a job's
//! telemetry lives in the day of its end, as the job does). Output: `features`, one row per job,
//! node and metric, in the same day partition; running it again replaces the day's part.
//!
//! Definitions, after trimming `trim_s` (default 60 s) from each end of the job so that start-up
//! and tear-down do not count; a job shorter than twice that keeps all its samples and says so
//! (`trimmed = false`):
//! - `n`: finite samples used; `n_nonfinite`: NaN or infinite samples left out (counted, never
//!   silently dropped);
//! - `min`, `max`, `mean`; `std`: population standard deviation (divisor n, as numpy's default);
//!   `cv` = std / mean (NULL when the mean is 0);
//! - `skewness` = m3 / m2^1.5 and `kurtosis` = m4 / m2² − 3 (excess), from the central moments m2,
//!   m3, m4 with divisor n: scipy.stats' defaults (bias=True, fisher=True). NULL when m2 = 0;
//! - `p05`, `p25`, `p50`, `p75`, `p95`: percentiles with linear interpolation between the closest
//!   ranks at rank p × (n − 1) (numpy's default method), by DataFusion's `percentile_cont`. It is
//!   exact at a rank, but between two ranks DataFusion 55 truncates the interpolation weight to a
//!   multiple of 1e-6, so the result can be up to 1e-6 × (upper − lower) below the exact value and
//!   is never above it (tested: p95 of 1, 2, 3, 4, 10 is 8.799994, not 8.8).
//!
//! Everything is one SQL statement ([`node_metric_sql`]), readable by an admin and runnable by hand
//! with `jobsight sql`.

use std::path::Path;

use chrono::NaiveDate;
use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::compute::cast;

use crate::catalog::{self, CatalogError, Table};
use crate::query::{self, QueryError};

/// Seconds trimmed from each end of a job by default.
pub const DEFAULT_TRIM_S: u64 = 60;

#[derive(Debug, thiserror::Error)]
pub enum FeaturesError {
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("features of day {day}: result does not fit the features schema: {reason}")]
    Schema { day: NaiveDate, reason: String },
}

/// The reference SQL for one day's per job × node × metric statistics, columns in the order of
/// the `features` schema.
pub fn node_metric_sql(day: NaiveDate, trim_s: u64) -> String {
    let day = day.format("%Y-%m-%d");
    format!(
        r#"WITH j AS (
  SELECT job_id, start, "end",
         CAST("end" AS BIGINT) - CAST(start AS BIGINT) > {twice_trim_us} AS trimmed
  FROM jobs
  WHERE day = '{day}' AND start IS NOT NULL
),
s AS (
  SELECT CAST(t.job_id AS VARCHAR) AS job_id, CAST(t.node AS VARCHAR) AS node,
         CAST(t.metric AS VARCHAR) AS metric, t.value, j.trimmed,
         NOT isnan(t.value) AND abs(t.value) <> CAST('Infinity' AS DOUBLE) AS finite
  FROM telemetry t JOIN j ON CAST(t.job_id AS VARCHAR) = j.job_id
  WHERE t.day = '{day}'
    AND (NOT j.trimmed
         OR (t.ts >= j.start + INTERVAL '{trim_s} seconds' AND t.ts <= j."end" - INTERVAL '{trim_s} seconds'))
),
f AS (SELECT * FROM s WHERE finite),
m AS (
  SELECT job_id, node, metric, avg(value) AS mean FROM f GROUP BY job_id, node, metric
),
bad AS (
  SELECT job_id, node, metric, bool_or(trimmed) AS trimmed, count(*) AS n_nonfinite
  FROM s WHERE NOT finite GROUP BY job_id, node, metric
),
stats AS (
  SELECT f.job_id, f.node, f.metric, bool_or(f.trimmed) AS trimmed, count(*) AS n,
         min(f.value) AS min, max(f.value) AS max, avg(f.value) AS mean,
         avg(power(f.value - m.mean, 2)) AS m2, avg(power(f.value - m.mean, 3)) AS m3,
         avg(power(f.value - m.mean, 4)) AS m4,
         percentile_cont(0.05) WITHIN GROUP (ORDER BY f.value) AS p05,
         percentile_cont(0.25) WITHIN GROUP (ORDER BY f.value) AS p25,
         percentile_cont(0.50) WITHIN GROUP (ORDER BY f.value) AS p50,
         percentile_cont(0.75) WITHIN GROUP (ORDER BY f.value) AS p75,
         percentile_cont(0.95) WITHIN GROUP (ORDER BY f.value) AS p95
  FROM f JOIN m ON f.job_id = m.job_id AND f.node = m.node AND f.metric = m.metric
  GROUP BY f.job_id, f.node, f.metric
)
SELECT coalesce(st.job_id, b.job_id) AS job_id, coalesce(st.node, b.node) AS node,
       coalesce(st.metric, b.metric) AS metric,
       CAST(coalesce(st.n, 0) AS BIGINT UNSIGNED) AS n,
       CAST(coalesce(b.n_nonfinite, 0) AS BIGINT UNSIGNED) AS n_nonfinite,
       coalesce(st.trimmed, b.trimmed) AS trimmed,
       st.min, st.max, st.mean, sqrt(st.m2) AS std,
       CASE WHEN st.mean <> 0 THEN sqrt(st.m2) / st.mean END AS cv,
       CASE WHEN st.m2 > 0 THEN st.m3 / power(st.m2, 1.5) END AS skewness,
       CASE WHEN st.m2 > 0 THEN st.m4 / (st.m2 * st.m2) - 3 END AS kurtosis,
       st.p05, st.p25, st.p50, st.p75, st.p95
FROM stats st FULL OUTER JOIN bad b
  ON st.job_id = b.job_id AND st.node = b.node AND st.metric = b.metric
ORDER BY job_id, node, metric"#,
        twice_trim_us = 2 * trim_s * 1_000_000,
    )
}

/// What computing features did.
#[derive(Debug, Default)]
pub struct Computed {
    pub days: usize,
    pub rows: usize,
}

/// Computes the features of every day that has jobs (or of `only` that day) and writes them.
pub async fn compute(
    data: &Path,
    only: Option<NaiveDate>,
    trim_s: u64,
    mut progress: impl FnMut(NaiveDate),
) -> Result<Computed, FeaturesError> {
    let days: Vec<NaiveDate> = match only {
        Some(day) => vec![day],
        None => {
            let batches = query::run(data, "SELECT DISTINCT day FROM jobs ORDER BY day").await?;
            let mut days = Vec::new();
            for batch in &batches {
                let column = cast(
                    batch.column(0),
                    &datafusion::arrow::datatypes::DataType::Utf8,
                )
                .map_err(|e| QueryError::Render(e.to_string()))?;
                let strings = datafusion::arrow::array::AsArray::as_string::<i32>(&column);
                days.extend(
                    strings
                        .iter()
                        .flatten()
                        .filter_map(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok()),
                );
            }
            days
        }
    };
    let schema = Table::Features.schema();
    let mut computed = Computed::default();
    for day in days {
        progress(day);
        let batches = query::run(data, &node_metric_sql(day, trim_s)).await?;
        let mut fitted = Vec::with_capacity(batches.len());
        for batch in &batches {
            let columns: Result<Vec<ArrayRef>, _> = schema
                .fields()
                .iter()
                .zip(batch.columns())
                .map(|(field, column)| cast(column, field.data_type()))
                .collect();
            let fitted_batch = columns
                .and_then(|c| RecordBatch::try_new(schema.clone(), c))
                .map_err(|e| FeaturesError::Schema {
                    day,
                    reason: e.to_string(),
                })?;
            computed.rows += fitted_batch.num_rows();
            fitted.push(fitted_batch);
        }
        catalog::write_part(data, Table::Features, day, "features-node-metric", &fitted)?;
        computed.days += 1;
    }
    Ok(computed)
}
