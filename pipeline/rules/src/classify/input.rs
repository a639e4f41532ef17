//! Reads what the rules need about a day's jobs from the warehouse: each job's `jobs` row, its
//! `job_summary` row, and its `features_job` and `features` rows, into [`JobData`].
//!
//! Columns are read by name and converted by type (text, numbers, booleans; times as seconds
//! since the epoch), so a column added to one of these tables becomes a variable without a change
//! here. A job id that appears more than once in `jobs` (runs of a requeued job that ended the
//! same day) is one job to judge per run (`restart_count`), as the features are; a row of the
//! other tables without a run (written before runs were recorded) belongs to the run that ended
//! last.

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::path::Path;

use chrono::NaiveDate;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type, TimeUnit};
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::ClassifyError;
use crate::lang::Value;
use crate::{JobData, NodeSeries};
use jobsight_warehouse::catalog::{self, Table};

/// One column's values, converted once per batch.
enum Column {
    Text(ArrayRef),
    Num(ArrayRef),
    Bool(ArrayRef),
    /// Microseconds since the epoch.
    Time(ArrayRef),
    Other,
}

impl Column {
    fn of(array: &ArrayRef, path: &Path, name: &str) -> Result<Column, ClassifyError> {
        let fail = |e| ClassifyError::read(path, format!("column {name}: {e}"));
        Ok(match array.data_type() {
            DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Dictionary(..) => Column::Text(cast(array, &DataType::Utf8).map_err(fail)?),
            DataType::Boolean => Column::Bool(array.clone()),
            DataType::Timestamp(..) => Column::Time(
                cast(
                    &cast(array, &DataType::Timestamp(TimeUnit::Microsecond, None))
                        .map_err(fail)?,
                    &DataType::Int64,
                )
                .map_err(fail)?,
            ),
            t if t.is_numeric() => Column::Num(cast(array, &DataType::Float64).map_err(fail)?),
            _ => Column::Other,
        })
    }

    fn value(&self, i: usize) -> Value {
        match self {
            Column::Text(a) if a.is_valid(i) => Value::Str(a.as_string::<i32>().value(i).into()),
            Column::Num(a) if a.is_valid(i) => Value::num(a.as_primitive::<Float64Type>().value(i)),
            Column::Bool(a) if a.is_valid(i) => Value::Bool(a.as_boolean().value(i)),
            Column::Time(a) if a.is_valid(i) => {
                Value::num(a.as_primitive::<Int64Type>().value(i) as f64 / 1e6)
            }
            _ => Value::Missing,
        }
    }

    fn micros(&self, i: usize) -> Option<i64> {
        match self {
            Column::Time(a) if a.is_valid(i) => Some(a.as_primitive::<Int64Type>().value(i)),
            _ => None,
        }
    }

    fn text(&self, i: usize) -> Option<&str> {
        match self {
            Column::Text(a) if a.is_valid(i) => Some(a.as_string::<i32>().value(i)),
            _ => None,
        }
    }
}

/// One batch's columns by name, converted once.
type Columns = BTreeMap<String, Column>;

fn columns_of(batch: &RecordBatch, path: &Path) -> Result<Columns, ClassifyError> {
    let mut columns = BTreeMap::new();
    for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
        columns.insert(field.name().clone(), Column::of(array, path, field.name())?);
    }
    Ok(columns)
}

/// Calls `on_row(columns by name, row, job id)` for every row of `batch` whose job id is wanted.
fn each_row_of(
    batch: &RecordBatch,
    path: &Path,
    wanted: &dyn Fn(&str) -> bool,
    on_row: &mut dyn FnMut(&Columns, usize, &str),
) -> Result<(), ClassifyError> {
    let ids = batch
        .column_by_name("job_id")
        .ok_or_else(|| ClassifyError::read(path, "no column job_id"))?;
    let ids = Column::of(ids, path, "job_id")?;
    // The other columns are converted only for a batch that holds a wanted job.
    if !(0..batch.num_rows()).any(|i| ids.text(i).is_some_and(wanted)) {
        return Ok(());
    }
    let columns = columns_of(batch, path)?;
    for i in 0..batch.num_rows() {
        let Some(id) = ids.text(i) else { continue };
        if wanted(id) {
            on_row(&columns, i, id);
        }
    }
    Ok(())
}

/// Calls `on_row(columns by name, row, job id)` for every row of the table's day partition whose
/// job id is wanted.
fn each_row(
    data: &Path,
    table: Table,
    day: NaiveDate,
    part: Option<&str>,
    wanted: &dyn Fn(&str) -> bool,
    mut on_row: impl FnMut(&Columns, usize, &str),
) -> Result<(), ClassifyError> {
    let files = catalog::part_files(data, table, day, part)
        .map_err(|e| ClassifyError::read(&table.dir(data), e))?;
    for path in files {
        let file = File::open(&path).map_err(|e| ClassifyError::read(&path, e))?;
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| b.build())
            .map_err(|e| ClassifyError::read(&path, e))?;
        for batch in reader {
            let batch: RecordBatch = batch.map_err(|e| ClassifyError::read(&path, e))?;
            each_row_of(&batch, &path, wanted, &mut on_row)?;
        }
    }
    Ok(())
}

/// A job id and one of its runs (`restart_count`; `None` where the row has none).
type RunKey = (String, Option<u32>);

/// The run a row is about: its own `restart_count`, else (rows written before the run was
/// recorded) the run of its id that ended last.
fn run_of(columns: &Columns, i: usize, last: Option<&Option<u32>>) -> Option<u32> {
    let own = columns.get("restart_count").map(|c| c.value(i));
    crate::run_number(own.as_ref()).or(last.copied().flatten())
}

/// What the rules read of each run, gathered row by row from the four tables (files or batches).
#[derive(Default)]
struct Gathered {
    jobs: BTreeMap<RunKey, JobData>,
    /// Each id's run that ended last (its end, its run): where a row without a run belongs.
    last_run: BTreeMap<String, (f64, Option<u32>)>,
    summaries: BTreeMap<RunKey, BTreeMap<String, Value>>,
    across: BTreeMap<RunKey, BTreeMap<String, BTreeMap<String, f64>>>,
    nodes: BTreeMap<RunKey, BTreeMap<String, BTreeMap<String, NodeSeries>>>,
}

impl Gathered {
    /// A `jobs` row: each run of a requeued job is judged by itself. Rows of one id and one run
    /// (as the simulator writes a requeued job) are taken together as the one that ended last,
    /// with the earliest start of the rows, as the features take them.
    fn job(&mut self, columns: &Columns, i: usize, id: &str) {
        let row: BTreeMap<String, Value> = columns
            .iter()
            .map(|(name, c)| (name.clone(), c.value(i)))
            .collect();
        self.insert_job(id, run_of(columns, i, None), row);
    }

    fn insert_job(&mut self, id: &str, run: Option<u32>, row: BTreeMap<String, Value>) {
        let end = |r: &BTreeMap<String, Value>| match r.get("end") {
            Some(Value::Num(e)) => *e,
            _ => f64::NEG_INFINITY,
        };
        let row_end = end(&row);
        let last = self
            .last_run
            .entry(id.to_string())
            .or_insert((f64::NEG_INFINITY, run));
        if row_end >= last.0 {
            *last = (row_end, run);
        }
        let entry = self
            .jobs
            .entry((id.to_string(), run))
            .or_insert_with(|| JobData {
                job_id: id.to_string(),
                ..JobData::default()
            });
        let start = match (entry.job.get("start"), row.get("start")) {
            (Some(Value::Num(a)), Some(Value::Num(b))) => Some(Value::Num(a.min(*b))),
            _ => None,
        };
        if entry.job.is_empty() || row_end >= end(&entry.job) {
            entry.job = row;
        }
        if let Some(start) = start {
            entry.job.insert("start".into(), start);
        }
    }

    /// The run a row of another table belongs to.
    fn key(&self, columns: &Columns, i: usize, id: &str) -> RunKey {
        let last = self.last_run.get(id).map(|(_, run)| run);
        (id.to_string(), run_of(columns, i, last))
    }

    fn summary(&mut self, columns: &Columns, i: usize, id: &str) {
        self.summaries.insert(
            self.key(columns, i, id),
            columns
                .iter()
                .filter(|(name, _)| name.as_str() != "job_id")
                .map(|(name, c)| (name.clone(), c.value(i)))
                .collect(),
        );
    }

    fn across(&mut self, columns: &Columns, i: usize, id: &str) {
        let Some(metric) = columns.get("metric").and_then(|c| c.text(i)) else {
            return;
        };
        let stats = columns
            .iter()
            .filter_map(|(name, c)| match c.value(i) {
                Value::Num(v) if matches!(c, Column::Num(_)) && name != "restart_count" => {
                    Some((name.clone(), v))
                }
                _ => None,
            })
            .collect();
        self.across
            .entry(self.key(columns, i, id))
            .or_default()
            .insert(metric.to_string(), stats);
    }

    fn node(&mut self, columns: &Columns, i: usize, id: &str) {
        let (Some(node), Some(metric)) = (
            columns.get("node").and_then(|c| c.text(i)),
            columns.get("metric").and_then(|c| c.text(i)),
        ) else {
            return;
        };
        let mut series = NodeSeries::default();
        // The count and the statistics columns; the derived ones come from the times below.
        for stat in std::iter::once("n").chain(catalog::FEATURE_STATS) {
            if let Some(Value::Num(v)) = columns.get(stat).map(|c| c.value(i)) {
                series.stats.insert(stat.to_string(), v);
            }
        }
        let micros = |name: &str| columns.get(name).and_then(|c| c.micros(i));
        series.rise_from = micros("rise_from");
        series.rise_to = micros("rise_to");
        series.cliff_at = micros("cliff_at");
        self.nodes
            .entry(self.key(columns, i, id))
            .or_default()
            .entry(node.to_string())
            .or_default()
            .insert(metric.to_string(), series);
    }

    fn finish(mut self) -> Vec<JobData> {
        for (key, job) in &mut self.jobs {
            job.summary = self.summaries.remove(key).unwrap_or_default();
            job.across = self.across.remove(key).unwrap_or_default();
            job.nodes = self.nodes.remove(key).unwrap_or_default();
        }
        self.jobs.into_values().collect()
    }
}

/// The day's jobs (all, or those in `only`) with everything the rules read, one per run, by job
/// id and run; with `part`, only from that part's files (one job's, as the per-job path wrote
/// them).
pub fn read_day(
    data: &Path,
    day: NaiveDate,
    only: Option<&[String]>,
    part: Option<&str>,
) -> Result<Vec<JobData>, ClassifyError> {
    let only: Option<HashSet<&str>> = only.map(|ids| ids.iter().map(String::as_str).collect());
    let wanted = |id: &str| only.as_ref().is_none_or(|set| set.contains(id));
    let mut g = Gathered::default();
    each_row(data, Table::Jobs, day, part, &wanted, |c, i, id| {
        g.job(c, i, id)
    })?;
    let known: HashSet<String> = g.last_run.keys().cloned().collect();
    let known = |id: &str| known.contains(id);
    each_row(data, Table::JobSummary, day, part, &known, |c, i, id| {
        g.summary(c, i, id)
    })?;
    each_row(data, Table::FeaturesJob, day, part, &known, |c, i, id| {
        g.across(c, i, id)
    })?;
    each_row(data, Table::Features, day, part, &known, |c, i, id| {
        g.node(c, i, id)
    })?;
    Ok(g.finish())
}

/// The ids of the day's jobs (with `part`, of that part's), sorted, each once.
pub fn job_ids(
    data: &Path,
    day: NaiveDate,
    part: Option<&str>,
) -> Result<Vec<String>, ClassifyError> {
    let mut ids = std::collections::BTreeSet::new();
    each_row(data, Table::Jobs, day, part, &|_| true, |_, _, id| {
        if !ids.contains(id) {
            ids.insert(id.to_string());
        }
    })?;
    Ok(ids.into_iter().collect())
}

/// One job that has not ended (the running DAG's), from its `jobs` fields and the `job_summary`,
/// `features_job` and `features` batches the features stage made of its telemetry so far: the
/// same variables, by the same conversions, as a finished job read back from the warehouse.
/// `label` names the job in errors.
pub fn from_batches(
    job_id: &str,
    job: BTreeMap<String, Value>,
    summary: &RecordBatch,
    features_job: &RecordBatch,
    features: &RecordBatch,
    label: &Path,
) -> Result<JobData, ClassifyError> {
    let mut g = Gathered::default();
    g.insert_job(job_id, crate::run_number(job.get("restart_count")), job);
    let wanted = |id: &str| id == job_id;
    each_row_of(summary, label, &wanted, &mut |c, i, id| g.summary(c, i, id))?;
    each_row_of(features_job, label, &wanted, &mut |c, i, id| {
        g.across(c, i, id)
    })?;
    each_row_of(features, label, &wanted, &mut |c, i, id| g.node(c, i, id))?;
    g.finish()
        .pop()
        .ok_or_else(|| ClassifyError::read(label, format!("job {job_id} vanished")))
}
