//! The telemetry a page charts: the samples of the wanted (job, metric) pairs of a day, averaged
//! per job, node and metric into at most [`POINTS`] bins of each job's own run, in one scan of
//! the day's telemetry however many jobs.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::NaiveDate;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::SessionContext;

use super::sql::text;
use jobsight_warehouse::query::{Columns, QueryError, literal};

/// Points per telemetry series on a chart: enough to see a phase, few enough for a small page.
pub const POINTS: i64 = 120;

/// A series averaged into bins: node → metric → (hours since the job's start, mean value).
pub type Series = BTreeMap<String, BTreeMap<String, Vec<(f64, f64)>>>;

/// Calls `each` with every row of `sql`'s result, batch by batch as the query makes them (for
/// results too big to hold twice).
async fn each_row_streamed(
    ctx: &SessionContext,
    sql: &str,
    mut each: impl FnMut(&Columns, usize),
) -> Result<(), QueryError> {
    use futures::StreamExt;
    let mut stream = ctx
        .sql(sql)
        .await
        .map_err(QueryError::Query)?
        .execute_stream()
        .await
        .map_err(QueryError::Query)?;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(QueryError::Query)?;
        let c = Columns::of(&batch)?;
        for i in 0..batch.num_rows() {
            each(&c, i);
        }
    }
    Ok(())
}

/// Which telemetry a page run loads, per day: job id → the metrics wanted (`None`: every metric
/// the job has). A page charts a few metrics of the ~50 a node reports, so loading only those is
/// what keeps the report step's memory small on a busy day ([`telemetry`]).
pub type Wanted = BTreeMap<String, Option<BTreeSet<String>>>;

/// Adds `metrics` of `job` to `wanted` (`None`, every metric, absorbs any list).
pub fn want(wanted: &mut Wanted, job: &str, metrics: Option<&[String]>) {
    match (wanted.get_mut(job), metrics) {
        (Some(None), _) => {}
        (Some(slot), None) => *slot = None,
        (Some(Some(have)), Some(more)) => have.extend(more.iter().cloned()),
        (None, metrics) => {
            wanted.insert(
                job.to_string(),
                metrics.map(|m| m.iter().cloned().collect()),
            );
        }
    }
}

/// Jobs at most this many are also named in the telemetry query's filter, so that the Parquet
/// reader skips what is not theirs: one job's page (`jobsight report job`), and each group of a
/// day's job pages ([`crate::CHARTED_JOBS_AT_A_TIME`]). The names are compared with the column
/// as it is stored (dictionary-encoded): cast to text first, every row of the day was cast
/// (2.1 s a query on a 1,000-node day's 326 M rows, against 0.85 s).
const NAMED_JOBS: usize = crate::CHARTED_JOBS_AT_A_TIME;

/// The telemetry `wanted` of `day`'s jobs, averaged per job, node and metric into [`POINTS`]
/// bins of each job's own run. One scan of the day's telemetry per kind of want (a list of
/// metrics, every metric), however many jobs: the wanted (job, metric) pairs are a small
/// in-memory table the samples are joined with, on telemetry's own dictionary columns.
///
/// Measured on a 1,000-node day (2,515 jobs, 320 M samples): loading every metric made 37.6 M
/// bins, 39 s and 4.9 GiB in this query alone; the pages' six metrics per job are about one
/// eighth of that. The points of each series are put in time order here, not by the query:
/// sorting tens of millions of bins took DataFusion's whole 4 GB pool.
pub async fn telemetry(
    ctx: &SessionContext,
    day: NaiveDate,
    wanted: &Wanted,
) -> Result<HashMap<String, Series>, QueryError> {
    let mut out: HashMap<String, Series> = HashMap::new();
    let pairs: Vec<(&str, &str)> = wanted
        .iter()
        .filter_map(|(job, metrics)| metrics.as_ref().map(|m| (job, m)))
        .flat_map(|(job, metrics)| metrics.iter().map(move |m| (job.as_str(), m.as_str())))
        .collect();
    let whole: Vec<(&str, &str)> = wanted
        .iter()
        .filter(|(_, metrics)| metrics.is_none())
        .map(|(job, _)| (job.as_str(), ""))
        .collect();
    for (list, by_metric) in [(pairs, true), (whole, false)] {
        if list.is_empty() {
            continue;
        }
        let mut jobs: Vec<&str> = list.iter().map(|(job, _)| *job).collect();
        jobs.sort_unstable();
        jobs.dedup();
        // The jobs named, and their range: the day's Parquet row groups hold a few jobs each,
        // so the range lets the reader skip the others by their statistics (DataFusion prunes
        // by an `IN` list of at most 20). A group of 250 job pages on a 1,000-node day: 0.15 s a
        // scan with the range, 0.99 s without.
        let named = match (jobs.first(), jobs.last()) {
            (Some(first), Some(last)) if jobs.len() <= NAMED_JOBS => format!(
                " AND t.job_id >= {} AND t.job_id <= {} AND t.job_id IN ({})",
                literal(first),
                literal(last),
                jobs.iter()
                    .map(|j| literal(j))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => String::new(),
        };
        let table = "report_wanted_telemetry";
        ctx.register_batch(table, wanted_batch(&list)?)
            .map_err(QueryError::Query)?;
        let sql = format!(
            "WITH j AS (\
               SELECT arrow_cast(j.job_id, 'Dictionary(Int32, Utf8)') AS job_key, \
               arrow_cast(w.metric, 'Dictionary(Int32, Utf8)') AS metric_key, \
               CAST(j.start AS BIGINT) AS start_us, \
               greatest(CAST(j.elapsed_s AS DOUBLE) * 1000000 / {POINTS}, 1000000.0) AS bin_us \
               FROM jobs j JOIN {table} w ON w.job_id = j.job_id \
               WHERE j.day = '{day}' AND j.start IS NOT NULL), \
             b AS (\
               SELECT t.job_id, t.node, t.metric, \
               floor((CAST(t.ts AS BIGINT) - j.start_us) / j.bin_us) AS bin, \
               min(j.bin_us) AS bin_us, avg(t.value) AS value \
               FROM telemetry t JOIN j ON t.job_id = j.job_key{metric_join} \
               WHERE t.day = '{day}' AND isnan(t.value) = false{named} \
               GROUP BY t.job_id, t.node, t.metric, 4) \
             SELECT CAST(job_id AS VARCHAR) AS job_id, CAST(node AS VARCHAR) AS node, \
             CAST(metric AS VARCHAR) AS metric, bin, bin_us, value FROM b",
            metric_join = if by_metric {
                " AND t.metric = j.metric_key"
            } else {
                ""
            },
        );
        let loaded = each_row_streamed(ctx, &sql, |c, i| {
            let (Some(bin), Some(width), Some(value)) =
                (c.float("bin", i), c.float("bin_us", i), c.float("value", i))
            else {
                return;
            };
            let hours = (bin + 0.5) * width / 3.6e9;
            if hours < 0.0 {
                return;
            }
            out.entry(text(c, "job_id", i))
                .or_default()
                .entry(text(c, "node", i))
                .or_default()
                .entry(text(c, "metric", i))
                .or_default()
                .push((hours, value));
        })
        .await;
        ctx.deregister_table(table).map_err(QueryError::Query)?;
        loaded?;
    }
    for points in out
        .values_mut()
        .flat_map(|nodes| nodes.values_mut())
        .flat_map(|m| m.values_mut())
    {
        // By value too: a requeued job's two runs of a day share bins, and the page must not
        // depend on the order the query returned them in.
        points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    }
    Ok(out)
}

/// The (job id, metric) pairs of a [`telemetry`] query as a batch.
fn wanted_batch(pairs: &[(&str, &str)]) -> Result<RecordBatch, QueryError> {
    use datafusion::arrow::array::StringArray;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    let schema = Schema::new(vec![
        Field::new("job_id", DataType::Utf8, false),
        Field::new("metric", DataType::Utf8, false),
    ]);
    RecordBatch::try_new(
        std::sync::Arc::new(schema),
        vec![
            std::sync::Arc::new(StringArray::from_iter_values(pairs.iter().map(|p| p.0))),
            std::sync::Arc::new(StringArray::from_iter_values(pairs.iter().map(|p| p.1))),
        ],
    )
    .map_err(|e| QueryError::Render(e.to_string()))
}
