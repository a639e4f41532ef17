//! The telemetry a page charts: the samples of the wanted (job, metric) pairs of a day, averaged
//! per job, node and metric into at most [`POINTS`] bins of each job's own run.
//!
//! The bins are made here from the day's Parquet files, not by SQL: only the row groups whose
//! `job_id` statistics can hold a wanted job are read, in parallel, and each sample is added to
//! its bin by integer keys. DataFusion's `GROUP BY job_id, node, metric, bin` over the same rows
//! spent most of its time encoding the three names of every row into its row format: on a
//! 1,000-node day (2,543 pages, about 40 metrics charted a job) the report step took 56 s, most
//! of it in that query.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use chrono::NaiveDate;
use datafusion::arrow::array::Array;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::SessionContext;
use rayon::prelude::*;

use super::sql::{each_row, text};
use crate::ReportError;
use jobsight_warehouse::catalog::scan::{
    BATCH_ROWS, JobIdIndex, Names, ScanError, SeriesSlots, TelemetryColumns, Unit, reader,
    translate,
};
use jobsight_warehouse::catalog::{Table, part_files, partition_dir};
use jobsight_warehouse::query::QueryError;

/// Points per telemetry series on a chart: enough to see a phase, few enough for a small page.
pub const POINTS: i64 = 120;

/// A series averaged into bins: node → metric → (hours since the job's start, mean value).
pub type Series = BTreeMap<String, BTreeMap<String, Vec<(f64, f64)>>>;

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

/// The telemetry `wanted` of `day`'s jobs, averaged per job, node and metric into [`POINTS`]
/// bins of each job's own run: a run of `elapsed` seconds has bins `elapsed / POINTS` wide (at
/// least a second) from its start, and a point is a bin's mean at the bin's middle, in hours
/// since the start. Samples before the start and NaN values are left out. A job id with several
/// rows in `jobs` that day (a requeued job's runs) has each sample binned from each run's start.
///
/// The points of each series are in time order (then by value: two runs of a requeued job share
/// bins, and a page must not depend on the order they were read in).
pub async fn telemetry(
    ctx: &SessionContext,
    data: &Path,
    day: NaiveDate,
    wanted: &Wanted,
) -> Result<HashMap<String, Series>, ReportError> {
    let runs = job_runs(ctx, day, wanted).await?;
    let mut metrics = Names::default();
    let jobs: Vec<WantedJob> = runs
        .into_iter()
        .filter_map(|(job_id, runs)| {
            let only = wanted.get(&job_id)?.as_ref().map(|list| {
                let ids: Vec<u32> = list.iter().map(|m| metrics.id(m)).collect();
                let mut set = vec![false; ids.iter().max().map_or(0, |&m| m as usize + 1)];
                for id in ids {
                    set[id as usize] = true;
                }
                set
            });
            Some(WantedJob { job_id, runs, only })
        })
        .collect();
    let bins = bin_day(data, day, &jobs, metrics)?;
    Ok(bins.into_series(&jobs))
}

/// A job whose telemetry is binned: its runs (start, bin width in µs) and the metrics wanted, as
/// a set of metric numbers (`None`: every metric).
struct WantedJob {
    job_id: String,
    runs: Vec<(i64, f64)>,
    only: Option<Vec<bool>>,
}

impl WantedJob {
    fn wants(&self, metric: u32) -> bool {
        match &self.only {
            None => true,
            Some(set) => set.get(metric as usize).copied().unwrap_or(false),
        }
    }
}

/// The runs of the wanted jobs that ended on `day`, by job id: each run's start and the width
/// of its bins (µs), as `jobs` holds them.
async fn job_runs(
    ctx: &SessionContext,
    day: NaiveDate,
    wanted: &Wanted,
) -> Result<BTreeMap<String, Vec<(i64, f64)>>, QueryError> {
    let mut runs: BTreeMap<String, Vec<(i64, f64)>> = BTreeMap::new();
    if wanted.is_empty() {
        return Ok(runs);
    }
    let table = "report_wanted_jobs";
    ctx.register_batch(table, job_id_batch(wanted.keys())?)
        .map_err(QueryError::Query)?;
    let sql = format!(
        "SELECT CAST(j.job_id AS VARCHAR) AS job_id, CAST(j.start AS BIGINT) AS start_us, \
         greatest(CAST(j.elapsed_s AS DOUBLE) * 1000000 / {POINTS}, 1000000.0) AS bin_us \
         FROM jobs j JOIN {table} w ON w.job_id = j.job_id \
         WHERE j.day = '{day}' AND j.start IS NOT NULL"
    );
    let read = each_row(ctx, &sql, |c, i| {
        if let (Some(start), Some(width)) = (c.int("start_us", i), c.float("bin_us", i)) {
            runs.entry(text(c, "job_id", i))
                .or_default()
                .push((start, width));
        }
    })
    .await;
    ctx.deregister_table(table).map_err(QueryError::Query)?;
    read?;
    for list in runs.values_mut() {
        list.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    }
    Ok(runs)
}

/// Job ids as a one-column batch, to join `jobs` with.
fn job_id_batch<'a>(ids: impl Iterator<Item = &'a String>) -> Result<RecordBatch, QueryError> {
    use datafusion::arrow::array::StringArray;
    use datafusion::arrow::datatypes::{Field, Schema};
    let schema = Schema::new(vec![Field::new("job_id", DataType::Utf8, false)]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![Arc::new(StringArray::from_iter_values(ids))],
    )
    .map_err(|e| QueryError::Render(e.to_string()))
}

/// One bin being filled: the sum and count of its samples (none: an empty bin), and its width
/// (the least of the runs' whose bins it gathers).
#[derive(Debug, Clone, Copy, Default)]
struct Bin {
    sum: f64,
    count: u64,
    width: f64,
}

/// Bins past this index go in a map: a sample long after its run's end (a clock that jumped)
/// must not make every series of the job hold a vector that long.
const DENSE_BINS: usize = 4 * POINTS as usize;

/// The bins of one series: by index, and those past [`DENSE_BINS`].
#[derive(Debug, Default)]
struct SeriesBins {
    dense: Vec<Bin>,
    far: BTreeMap<usize, Bin>,
}

impl SeriesBins {
    fn add(&mut self, bin: usize, sum: f64, count: u64, width: f64) {
        let slot = if bin < DENSE_BINS {
            if self.dense.len() <= bin {
                // A run's bins, exactly: grown by doubling, a series held up to twice that.
                let wanted = (bin + 1).max(POINTS as usize + 1);
                self.dense.reserve_exact(wanted - self.dense.len());
                self.dense.resize(bin + 1, Bin::default());
            }
            &mut self.dense[bin]
        } else {
            self.far.entry(bin).or_default()
        };
        if slot.count == 0 {
            *slot = Bin { sum, count, width };
        } else {
            slot.sum += sum;
            slot.count += count;
            slot.width = slot.width.min(width);
        }
    }

    fn absorb(&mut self, other: SeriesBins) {
        for (bin, b) in other.bins() {
            self.add(bin, b.sum, b.count, b.width);
        }
    }

    /// The bins that hold a sample, by index.
    fn bins(&self) -> impl Iterator<Item = (usize, &Bin)> {
        let dense = self.dense.iter().enumerate();
        dense
            .chain(self.far.iter().map(|(&i, b)| (i, b)))
            .filter(|(_, b)| b.count > 0)
    }
}

/// A series: (wanted job, node number, metric number).
type SeriesKey = (u32, u32, u32);

/// The bins of a scan, and the names their numbers stand for.
struct DayBins {
    series: HashMap<SeriesKey, SeriesBins>,
    nodes: Names,
    metrics: Names,
}

impl DayBins {
    /// Each wanted job's series as points: node → metric → (hours since the run's start, mean).
    fn into_series(self, jobs: &[WantedJob]) -> HashMap<String, Series> {
        let mut out: HashMap<String, Series> = HashMap::new();
        // Each series' bins are freed as its points are made.
        for ((job, node, metric), bins) in self.series {
            // A mean that is not a number (infinite samples) is no point.
            let mut points: Vec<(f64, f64)> = bins
                .bins()
                .map(|(bin, b)| ((bin as f64 + 0.5) * b.width / 3.6e9, b.sum / b.count as f64))
                .filter(|(_, mean)| mean.is_finite())
                .collect();
            if points.is_empty() {
                continue;
            }
            points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
            // Kept through the day's pages: without the slack a collect by doubling leaves.
            points.shrink_to_fit();
            out.entry(jobs[job as usize].job_id.clone())
                .or_default()
                .entry(self.nodes.names[node as usize].to_string())
                .or_default()
                .insert(self.metrics.names[metric as usize].to_string(), points);
        }
        out
    }
}

/// Bins the day's telemetry of `jobs`: the row groups that may hold them are read in parallel,
/// and their bins added together in file order (so that sums, and the pages, do not depend on
/// which thread finished first). `metrics` numbers the wanted metrics already.
fn bin_day(
    data: &Path,
    day: NaiveDate,
    jobs: &[WantedJob],
    metrics: Names,
) -> Result<DayBins, ScanError> {
    let mut day_bins = DayBins {
        series: HashMap::new(),
        nodes: Names::default(),
        metrics,
    };
    if jobs.is_empty() {
        return Ok(day_bins);
    }
    let files = part_files(data, Table::Telemetry, day, None)
        .map_err(|e| ScanError::new(&partition_dir(data, Table::Telemetry, day), e))?;
    let mut ids: Vec<&str> = jobs.iter().map(|j| j.job_id.as_str()).collect();
    ids.sort_unstable();
    let units = job_id_index(&files)?.holding(&ids);
    let index: HashMap<&str, u32> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| (j.job_id.as_str(), i as u32))
        .collect();
    let names = Mutex::new((day_bins.nodes, day_bins.metrics));
    let read: Vec<Vec<(SeriesKey, SeriesBins)>> = units
        .par_iter()
        .map(|unit| bin_unit(unit, jobs, &index, &names))
        .collect::<Result<_, _>>()?;
    (day_bins.nodes, day_bins.metrics) = names.into_inner().unwrap_or_else(|e| e.into_inner());
    // A series met first is moved, not copied: a copy is made on this thread while the part was
    // allocated on a worker's, whose freed memory this thread's allocations do not reuse (the
    // report step of a 10,000-node day held both).
    for part in read {
        for (key, bins) in part {
            match day_bins.series.entry(key) {
                Entry::Vacant(slot) => {
                    slot.insert(bins);
                }
                Entry::Occupied(mut slot) => slot.get_mut().absorb(bins),
            }
        }
    }
    Ok(day_bins)
}

/// `batch` without the rows that have a null in a column the bins read: such a sample has no
/// place on a chart (as SQL's join and filters leave it out), and another writer's part may hold
/// one although the table's columns are declared non-null.
fn without_nulls(batch: RecordBatch, path: &Path) -> Result<RecordBatch, ScanError> {
    use datafusion::arrow::compute::{and, filter_record_batch, is_not_null};
    let columns = ["job_id", "node", "metric", "ts", "value"];
    let mut keep = None;
    for name in columns {
        let array = batch
            .column_by_name(name)
            .ok_or_else(|| ScanError::new(path, format!("no column {name}")))?;
        if array.null_count() == 0 {
            continue;
        }
        let valid = is_not_null(array).map_err(|e| ScanError::new(path, e))?;
        keep = Some(match keep {
            None => valid,
            Some(earlier) => and(&earlier, &valid).map_err(|e| ScanError::new(path, e))?,
        });
    }
    match keep {
        None => Ok(batch),
        Some(keep) => filter_record_batch(&batch, &keep).map_err(|e| ScanError::new(path, e)),
    }
}

/// The files an index was made of, as they were: name, size and modification time.
type FileStamps = Vec<(PathBuf, u64, Option<std::time::SystemTime>)>;

/// The [`JobIdIndex`] of each day's telemetry files, kept while the files are the same: a day's
/// report asks for it for each group of 250 pages, and a 10,000-node day's telemetry is 160
/// files. A server keeps serving new parts: a file added, replaced or removed makes the index
/// again.
static INDEXES: Mutex<BTreeMap<FileStamps, Arc<JobIdIndex>>> = Mutex::new(BTreeMap::new());

/// Indexes kept at most; past it the oldest days' go (a server that pages through a year).
const INDEXES_KEPT: usize = 64;

/// The [`JobIdIndex`] of `files` (one day's), made or kept ([`INDEXES`]).
fn job_id_index(files: &[PathBuf]) -> Result<Arc<JobIdIndex>, ScanError> {
    let stamps: FileStamps = files
        .iter()
        .map(|path| {
            let meta = std::fs::metadata(path).map_err(|e| ScanError::new(path, e))?;
            Ok((path.clone(), meta.len(), meta.modified().ok()))
        })
        .collect::<Result<_, ScanError>>()?;
    if let Some(index) = INDEXES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&stamps)
    {
        return Ok(index.clone());
    }
    let index = Arc::new(JobIdIndex::of(files)?);
    let mut kept = INDEXES.lock().unwrap_or_else(|e| e.into_inner());
    // A day's files whose stamps changed leave an index nobody asks for; it goes with the rest.
    if kept.len() >= INDEXES_KEPT {
        kept.clear();
    }
    kept.insert(stamps, index.clone());
    Ok(index)
}

/// The bins of one row group's samples of `jobs`.
fn bin_unit(
    unit: &Unit,
    jobs: &[WantedJob],
    index: &HashMap<&str, u32>,
    names: &Mutex<(Names, Names)>,
) -> Result<Vec<(SeriesKey, SeriesBins)>, ScanError> {
    const NONE: u32 = u32::MAX;
    let path = &unit.path;
    let batches = reader(path)?
        .with_row_groups(vec![unit.row_group])
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| ScanError::new(path, e))?;
    let mut series: SeriesSlots<SeriesBins> = SeriesSlots::default();
    for batch in batches {
        let batch = without_nulls(batch.map_err(|e| ScanError::new(path, e))?, path)?;
        let columns = TelemetryColumns::of(&batch, path)?;
        let (job_dict, node_dict, metric_dict) = (&columns.job, &columns.node, &columns.metric);
        let job_of = translate(job_dict, |id| index.get(id).copied().unwrap_or(NONE));
        if job_of.iter().all(|&j| j == NONE) {
            continue;
        }
        let (node_of, metric_of) = {
            let mut names = names.lock().unwrap_or_else(|e| e.into_inner());
            let (nodes, metrics) = &mut *names;
            (
                translate(node_dict, |n| nodes.id(n)),
                translate(metric_dict, |m| metrics.id(m)),
            )
        };
        let (ts, values) = (columns.ts(), columns.values());
        let (job_keys, node_keys, metric_keys) = (
            job_dict.keys().values(),
            node_dict.keys().values(),
            metric_dict.keys().values(),
        );
        for row in 0..batch.num_rows() {
            let job = job_of[job_keys[row] as usize];
            if job == NONE {
                continue;
            }
            let metric = metric_of[metric_keys[row] as usize];
            let wanted = &jobs[job as usize];
            let value = values[row];
            if !wanted.wants(metric) || value.is_nan() {
                continue;
            }
            // Wrapping as SQL's BIGINT does: a hostile time makes a far bin, not a panic. A bin
            // before the run's start is not charted (nor its series, if all its bins are).
            let bin_of = |&(start, width): &(i64, f64)| {
                let bin = (ts[row].wrapping_sub(start) as f64 / width).floor();
                (bin >= 0.0).then_some((bin as usize, width))
            };
            if !wanted.runs.iter().any(|run| bin_of(run).is_some()) {
                continue;
            }
            let bins = series.slot(job, node_of[node_keys[row] as usize], metric);
            for (bin, width) in wanted.runs.iter().filter_map(bin_of) {
                bins.add(bin, value, 1, width);
            }
        }
    }
    Ok(series.into_series())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Duration, Utc};
    use jobsight_warehouse::catalog::rows::{JobRow, TelemetryBuilder};
    use jobsight_warehouse::catalog::write_part;
    use jobsight_warehouse::query::{Columns, collect, session};

    const DAY: &str = "2026-11-20";

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    fn job(id: &str, start: &str, hours: i64) -> JobRow {
        JobRow {
            cluster: "c".into(),
            job_id: id.into(),
            start: Some(at(start)),
            end: at(start) + Duration::hours(hours),
            source: "test".into(),
            ..JobRow::default()
        }
    }

    /// The bins as SQL makes them, written as plainly as the definition: the runs of `jobs`
    /// joined with the wanted (job, metric) pairs, each sample joined with them and grouped by
    /// job, node, metric and bin.
    async fn bins_by_sql(
        ctx: &SessionContext,
        day: NaiveDate,
        pairs: &[(&str, &str)],
    ) -> HashMap<String, Series> {
        use datafusion::arrow::array::StringArray;
        use datafusion::arrow::datatypes::{Field, Schema};
        let schema = Schema::new(vec![
            Field::new("job_id", DataType::Utf8, false),
            Field::new("metric", DataType::Utf8, false),
        ]);
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(StringArray::from_iter_values(pairs.iter().map(|p| p.0))),
                Arc::new(StringArray::from_iter_values(pairs.iter().map(|p| p.1))),
            ],
        )
        .unwrap();
        ctx.register_batch("w", batch).unwrap();
        let sql = format!(
            "WITH j AS (SELECT j.job_id, w.metric, CAST(j.start AS BIGINT) AS start_us, \
               greatest(CAST(j.elapsed_s AS DOUBLE) * 1000000 / {POINTS}, 1000000.0) AS bin_us \
               FROM jobs j JOIN w ON w.job_id = j.job_id \
               WHERE j.day = '{day}' AND j.start IS NOT NULL) \
             SELECT CAST(t.job_id AS VARCHAR) AS job_id, CAST(t.node AS VARCHAR) AS node, \
               CAST(t.metric AS VARCHAR) AS metric, \
               floor((CAST(t.ts AS BIGINT) - j.start_us) / j.bin_us) AS bin, \
               min(j.bin_us) AS bin_us, avg(t.value) AS value \
             FROM telemetry t JOIN j ON CAST(t.job_id AS VARCHAR) = j.job_id \
               AND CAST(t.metric AS VARCHAR) = j.metric \
             WHERE t.day = '{day}' AND isnan(t.value) = false \
             GROUP BY 1, 2, 3, 4"
        );
        let mut out: HashMap<String, Series> = HashMap::new();
        for batch in collect(ctx, &sql).await.unwrap() {
            let c = Columns::of(&batch).unwrap();
            for i in 0..batch.num_rows() {
                let (bin, width) = (c.float("bin", i).unwrap(), c.float("bin_us", i).unwrap());
                let hours = (bin + 0.5) * width / 3.6e9;
                // As the pages read it: an infinite mean is no value.
                let Some(value) = c.float("value", i) else {
                    continue;
                };
                if hours >= 0.0 {
                    out.entry(text(&c, "job_id", i))
                        .or_default()
                        .entry(text(&c, "node", i))
                        .or_default()
                        .entry(text(&c, "metric", i))
                        .or_default()
                        .push((hours, value));
                }
            }
        }
        for points in out
            .values_mut()
            .flat_map(|n| n.values_mut())
            .flat_map(|m| m.values_mut())
        {
            points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        }
        ctx.deregister_table("w").unwrap();
        out
    }

    /// The scan's bins are SQL's: a job with two of its three metrics wanted, one with every
    /// metric and two runs (requeued), a job not wanted, one whose samples all come before its
    /// start (no series), samples before a start, NaN and infinite values, and series split over
    /// two files.
    #[test]
    fn the_bins_are_those_of_the_sql_definition() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path();
        let day: NaiveDate = DAY.parse().unwrap();
        let jobs = [
            job("7", "2026-11-20T08:00:00Z", 2),
            job("8", "2026-11-20T09:00:00Z", 1),
            job("8", "2026-11-20T10:30:00Z", 3),
            job("9", "2026-11-20T08:00:00Z", 2),
            job("6", "2026-11-20T23:00:00Z", 1),
        ];
        JobRow::write_part(data, day, "jobs", &jobs).unwrap();
        let from = at("2026-11-20T07:50:00Z").timestamp_micros();
        for (part, rows) in [("one", 0..700), ("two", 700..1500)] {
            let mut telemetry = TelemetryBuilder::default();
            for step in rows {
                let ts = from + step * 10_000_000;
                for (job, node) in [
                    ("7", "n1"),
                    ("7", "n2"),
                    ("8", "n3"),
                    ("9", "n1"),
                    ("6", "n4"),
                ] {
                    for (m, metric) in ["cpu", "mem", "net"].iter().enumerate() {
                        let value = if step % 97 == 3 {
                            f64::NAN
                        } else if step == 500 {
                            f64::INFINITY
                        } else {
                            (step as f64 * 0.37 + m as f64).sin() * 100.0
                        };
                        telemetry.push(job, node, metric, ts, value);
                    }
                }
            }
            let batch = telemetry.finish().unwrap();
            write_part(data, Table::Telemetry, day, part, &[batch]).unwrap();
        }
        let wanted: Wanted = [
            (
                "7".to_string(),
                Some(["cpu", "net"].map(String::from).into()),
            ),
            ("8".to_string(), None),
            ("6".to_string(), None),
        ]
        .into();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let (scanned, by_sql) = runtime.block_on(async {
            let ctx = session(data).await.unwrap();
            let scanned = telemetry(&ctx, data, day, &wanted).await.unwrap();
            let pairs = [
                ("7", "cpu"),
                ("7", "net"),
                ("8", "cpu"),
                ("8", "mem"),
                ("8", "net"),
            ];
            (scanned, bins_by_sql(&ctx, day, &pairs).await)
        });
        assert_eq!(scanned.len(), 2);
        assert_eq!(
            scanned["7"]["n2"].keys().collect::<Vec<_>>(),
            ["cpu", "net"]
        );
        assert_eq!(
            scanned.keys().collect::<BTreeSet<_>>(),
            by_sql.keys().collect()
        );
        for (job, nodes) in &by_sql {
            assert_eq!(
                nodes.keys().collect::<Vec<_>>(),
                scanned[job].keys().collect::<Vec<_>>()
            );
            for (node, metrics) in nodes {
                for (metric, points) in metrics {
                    let got = &scanned[job][node][metric];
                    assert_eq!(got.len(), points.len(), "{job} {node} {metric}");
                    for (a, b) in got.iter().zip(points) {
                        assert!(
                            (a.0 - b.0).abs() < 1e-12 && (a.1 - b.1).abs() < 1e-9,
                            "{job} {node} {metric}: {a:?} against SQL's {b:?}"
                        );
                    }
                }
            }
        }
    }
}
