//! Features: statistics of the stored telemetry per job × node × metric (`features`) and per job ×
//! metric across the job's nodes (`features_job`), the input of every rule, class and model.
//! (First part of the features stage: the reference definitions in SQL. The temporal, coverage,
//! windowed and efficiency features, and the fast single pass that tests compare against this
//! reference, are still to come; see the README's status.)
//!
//! Input: `jobs` (start and end of each job) and `telemetry`, one day partition at a time (a job's
//! telemetry lives in the day of its end, as the job does). Output: `features`, one row per job,
//! node and metric, then `features_job`, one row per job and metric, in the same day partition;
//! running it again replaces the day's parts.
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
//! Across nodes ([`across_nodes_sql`]): `nodes`, `mean` of the node means, `min` and `max` over all
//! samples, the lowest and highest node mean, `node_cv` = population std / mean of the node means,
//! and tacc_stats' node `imbalance` (0 for a single node, 1 when some node did nothing while
//! another worked).
//!
//! Each is one SQL statement, readable by an admin and runnable by hand with `jobsight sql`.

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
    #[error("{table} of day {day}: result does not fit the table's schema: {reason}")]
    Schema {
        day: NaiveDate,
        table: &'static str,
        reason: String,
    },
}

/// The common start of both statements: `j` the day's jobs, `s` their samples after trimming
/// (with `finite` telling NaN and infinities apart), `f` the finite ones.
fn trimmed_samples(day: NaiveDate, trim_s: u64) -> String {
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
         CAST(t.metric AS VARCHAR) AS metric, t.ts, t.value, j.trimmed,
         NOT isnan(t.value) AND abs(t.value) <> CAST('Infinity' AS DOUBLE) AS finite
  FROM telemetry t JOIN j ON CAST(t.job_id AS VARCHAR) = j.job_id
  WHERE t.day = '{day}'
    AND (NOT j.trimmed
         OR (t.ts >= j.start + INTERVAL '{trim_s} seconds' AND t.ts <= j."end" - INTERVAL '{trim_s} seconds'))
),
f AS (SELECT * FROM s WHERE finite)"#,
        twice_trim_us = 2 * trim_s * 1_000_000,
    )
}

/// The reference SQL for one day's per job × node × metric statistics, columns in the order of
/// the `features` schema.
pub fn node_metric_sql(day: NaiveDate, trim_s: u64) -> String {
    format!(
        r#"{samples},
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
        samples = trimmed_samples(day, trim_s),
    )
}

/// The reference SQL for one day's per job × metric figures across the job's nodes, from the
/// day's `features` (which must be written first) and the trimmed samples, columns in the order
/// of the `features_job` schema. Node imbalance follows tacc_stats: samples are averaged per node
/// in bins of `bin_s` seconds (so that nodes sampled at slightly different times line up), and
/// imbalance = max over nodes of the mean over bins of (max over nodes − node) / max over nodes.
/// Bins whose maximum is not positive say nothing about imbalance and are left out.
pub fn across_nodes_sql(day: NaiveDate, trim_s: u64, bin_s: u64) -> String {
    format!(
        r#"{samples},
binned AS (
  SELECT job_id, metric, node, date_bin(INTERVAL '{bin_s} seconds', ts) AS bin, avg(value) AS v
  FROM f GROUP BY job_id, metric, node, date_bin(INTERVAL '{bin_s} seconds', ts)
),
peak AS (
  SELECT job_id, metric, bin, max(v) AS top FROM binned GROUP BY job_id, metric, bin
),
behind AS (
  SELECT b.job_id, b.metric, b.node, avg((p.top - b.v) / p.top) AS behind
  FROM binned b JOIN peak p ON b.job_id = p.job_id AND b.metric = p.metric AND b.bin = p.bin
  WHERE p.top > 0
  GROUP BY b.job_id, b.metric, b.node
),
imbalance AS (
  SELECT job_id, metric, max(behind) AS imbalance FROM behind GROUP BY job_id, metric
),
nodes AS (
  SELECT job_id, metric, CAST(count(*) AS BIGINT UNSIGNED) AS nodes,
         avg(mean) AS mean, min(min) AS min, max(max) AS max,
         min(mean) AS node_mean_min, max(mean) AS node_mean_max,
         CASE WHEN avg(mean) <> 0 THEN stddev_pop(mean) / avg(mean) END AS node_cv
  FROM features WHERE day = '{day}' AND n > 0
  GROUP BY job_id, metric
)
SELECT n.job_id, n.metric, n.nodes, n.mean, n.min, n.max, n.node_mean_min, n.node_mean_max,
       n.node_cv, i.imbalance
FROM nodes n LEFT JOIN imbalance i ON n.job_id = i.job_id AND n.metric = i.metric
ORDER BY n.job_id, n.metric"#,
        samples = trimmed_samples(day, trim_s),
        day = day.format("%Y-%m-%d"),
    )
}

/// What computing features did.
#[derive(Debug, Default)]
pub struct Computed {
    pub days: usize,
    /// Rows of `features` (job × node × metric).
    pub rows: usize,
    /// Rows of `features_job` (job × metric).
    pub job_rows: usize,
}

/// Bin width for aligning nodes in the imbalance figure, by default.
pub const DEFAULT_BIN_S: u64 = 60;

/// Runs `sql` and writes its result, cast to `table`'s schema, as the day's part of `table`
/// (replacing the earlier one). Returns the rows written.
async fn write_query(
    data: &Path,
    day: NaiveDate,
    table: Table,
    sql: &str,
) -> Result<usize, FeaturesError> {
    let schema = table.schema();
    let batches = query::run(data, sql).await?;
    let mut fitted = Vec::with_capacity(batches.len());
    let mut rows = 0;
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
                table: table.name(),
                reason: e.to_string(),
            })?;
        rows += fitted_batch.num_rows();
        fitted.push(fitted_batch);
    }
    catalog::write_part(data, table, day, "features", &fitted)?;
    Ok(rows)
}

/// Computes the features of every day that has jobs (or of `only` that day) and writes them.
pub async fn compute(
    data: &Path,
    only: Option<NaiveDate>,
    trim_s: u64,
    bin_s: u64,
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
    let mut computed = Computed::default();
    for day in days {
        progress(day);
        let sql = node_metric_sql(day, trim_s);
        computed.rows += write_query(data, day, Table::Features, &sql).await?;
        // Reads the day's features just written.
        let sql = across_nodes_sql(day, trim_s, bin_s);
        computed.job_rows += write_query(data, day, Table::FeaturesJob, &sql).await?;
        computed.days += 1;
    }
    Ok(computed)
}
