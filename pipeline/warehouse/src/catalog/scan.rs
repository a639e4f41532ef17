//! Reading a table's Parquet files directly, row group by row group, without DataFusion: for the
//! passes over a whole day's telemetry that SQL's general grouping makes slow (the features'
//! statistics, the report's chart bins). It gives the reader of a file, its columns in the types
//! those passes compute in (dictionary keys for names, microseconds, doubles), names numbered so
//! that rows are grouped by integers, and which row groups can hold a set of job ids (by the
//! `job_id` statistics every part is written with).
//!
//! A column a file lacks, holds in another type or holds with nulls is an error naming the file
//! and the column, never a panic: parts come from older releases and other writers.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, DictionaryArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, Float64Type, Int32Type, TimeUnit, TimestampMicrosecondType,
};
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::parquet::basic::Type as PhysicalType;

/// Reading a part failed: which file, and why.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {path}: {reason}")]
pub struct ScanError {
    pub path: PathBuf,
    pub reason: String,
}

impl ScanError {
    pub fn new(path: &Path, reason: impl std::fmt::Display) -> ScanError {
        ScanError {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }
}

/// Rows per Arrow batch while scanning: large enough that per-batch work (dictionary lookups) is
/// negligible.
pub const BATCH_ROWS: usize = 64 * 1024;

/// The Parquet reader of the file at `path`.
pub fn reader(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>, ScanError> {
    let file = File::open(path).map_err(|e| ScanError::new(path, e))?;
    ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| ScanError::new(path, e))
}

/// The column `name` of a batch read from `path`.
pub fn column<'a>(
    batch: &'a RecordBatch,
    name: &str,
    path: &Path,
) -> Result<&'a ArrayRef, ScanError> {
    batch
        .column_by_name(name)
        .ok_or_else(|| ScanError::new(path, format!("no column {name}")))
}

/// A column that files written before it existed lack (the `jobs` accounting columns): `None`
/// when the file has no such column, so that every row of it reads as unknown; else the column
/// cast to `to`, or an error naming the file and column.
pub fn optional_column(
    batch: &RecordBatch,
    name: &str,
    to: &DataType,
    path: &Path,
) -> Result<Option<ArrayRef>, ScanError> {
    batch
        .column_by_name(name)
        .map(|array| {
            cast(array, to).map_err(|e| ScanError::new(path, format!("column {name}: {e}")))
        })
        .transpose()
}

/// A column cast to `to`, or an error naming the file and column.
pub fn cast_column(
    batch: &RecordBatch,
    name: &str,
    to: &DataType,
    path: &Path,
) -> Result<ArrayRef, ScanError> {
    cast(column(batch, name, path)?, to)
        .map_err(|e| ScanError::new(path, format!("column {name}: {e}")))
}

/// How the warehouse stores names: dictionary-encoded strings with 32-bit keys.
pub fn dict_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// How the passes read times: microseconds since the epoch, UTC.
pub fn micros_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

/// A string column as dictionary keys and values (a plain string column is encoded here); nulls
/// are an error.
pub fn dictionary(
    batch: &RecordBatch,
    name: &str,
    path: &Path,
) -> Result<DictionaryArray<Int32Type>, ScanError> {
    let array = column(batch, name, path)?;
    let array = match array.as_dictionary_opt::<Int32Type>() {
        Some(_) if matches!(array.data_type(), DataType::Dictionary(_, v) if **v == DataType::Utf8) => {
            array.clone()
        }
        _ => cast_column(batch, name, &dict_type(), path)?,
    };
    if array.null_count() > 0 {
        return Err(ScanError::new(path, format!("column {name} has nulls")));
    }
    Ok(array.as_dictionary::<Int32Type>().clone())
}

/// Maps each dictionary value of `dict` through `lookup`: a row's number is then
/// `translated[keys[row]]`.
pub fn translate(
    dict: &DictionaryArray<Int32Type>,
    mut lookup: impl FnMut(&str) -> u32,
) -> Vec<u32> {
    let values = dict.values().as_string::<i32>();
    (0..values.len()).map(|i| lookup(values.value(i))).collect()
}

/// A telemetry batch's columns as the passes read them: the three names as dictionaries, the
/// times in microseconds, the values as doubles; a null time or value is an error.
#[derive(Debug)]
pub struct TelemetryColumns {
    pub job: DictionaryArray<Int32Type>,
    pub node: DictionaryArray<Int32Type>,
    pub metric: DictionaryArray<Int32Type>,
    ts: ArrayRef,
    value: ArrayRef,
}

impl TelemetryColumns {
    pub fn of(batch: &RecordBatch, path: &Path) -> Result<TelemetryColumns, ScanError> {
        let ts = cast_column(batch, "ts", &micros_type(), path)?;
        let value = cast_column(batch, "value", &DataType::Float64, path)?;
        if ts.null_count() > 0 || value.null_count() > 0 {
            return Err(ScanError::new(path, "column ts or value has nulls"));
        }
        Ok(TelemetryColumns {
            job: dictionary(batch, "job_id", path)?,
            node: dictionary(batch, "node", path)?,
            metric: dictionary(batch, "metric", path)?,
            ts,
            value,
        })
    }

    /// Each row's time, microseconds since the epoch.
    pub fn ts(&self) -> &[i64] {
        self.ts.as_primitive::<TimestampMicrosecondType>().values()
    }

    /// Each row's value.
    pub fn values(&self) -> &[f64] {
        self.value.as_primitive::<Float64Type>().values()
    }
}

/// Node and metric names seen in a scan, numbered so that samples are grouped by integers.
#[derive(Debug, Default)]
pub struct Names {
    ids: HashMap<Arc<str>, u32>,
    pub names: Vec<Arc<str>>,
}

impl Names {
    /// The number of `name`, given it now if it has none.
    pub fn id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        let name: Arc<str> = Arc::from(name);
        self.names.push(name.clone());
        self.ids.insert(name, id);
        id
    }

    /// The number of `name` if it has one.
    pub fn get(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }
}

/// What a scan gathers per series (job, node and metric numbers), found by two integer
/// comparisons and two vector lookups for the usual run of rows of one job and node: each
/// (job, node) pair has a table from metric number to its slot. Telemetry is written a job and
/// node at a time, its metrics interleaved sample by sample.
#[derive(Debug)]
pub struct SeriesSlots<T> {
    series: Vec<((u32, u32, u32), T)>,
    pair_tables: Vec<Vec<u32>>,
    pairs: HashMap<(u32, u32), usize>,
    current: Option<((u32, u32), usize)>,
}

impl<T> Default for SeriesSlots<T> {
    fn default() -> Self {
        SeriesSlots {
            series: Vec::new(),
            pair_tables: Vec::new(),
            pairs: HashMap::new(),
            current: None,
        }
    }
}

impl<T: Default> SeriesSlots<T> {
    /// The slot of the series (`job`, `node`, `metric`), new and empty the first time.
    pub fn slot(&mut self, job: u32, node: u32, metric: u32) -> &mut T {
        let table = match self.current {
            Some((pair, table)) if pair == (job, node) => table,
            _ => {
                let next = self.pair_tables.len();
                let table = *self.pairs.entry((job, node)).or_insert(next);
                if table == next {
                    self.pair_tables.push(Vec::new());
                }
                self.current = Some(((job, node), table));
                table
            }
        };
        let slots = &mut self.pair_tables[table];
        if slots.len() <= metric as usize {
            slots.resize(metric as usize + 1, 0);
        }
        if slots[metric as usize] == 0 {
            self.series.push(((job, node, metric), T::default()));
            slots[metric as usize] = self.series.len() as u32;
        }
        &mut self.series[slots[metric as usize] as usize - 1].1
    }

    /// Every series, in the order each was first seen.
    pub fn into_series(self) -> Vec<((u32, u32, u32), T)> {
        self.series
    }
}

/// One row group of one file: the unit of parallel work.
#[derive(Debug, Clone)]
pub struct Unit {
    pub path: PathBuf,
    pub row_group: usize,
}

/// The least and greatest `job_id` of a row group, as its statistics store them.
type JobIdBounds = (Vec<u8>, Vec<u8>);

/// The least and greatest `job_id` of each row group of some files, read from their footers
/// once, so that a group of jobs finds its row groups without opening a file again. A day's
/// telemetry is written job by job, so a row group holds a few jobs and a group of jobs reads a
/// few row groups.
#[derive(Debug, Clone, Default)]
pub struct JobIdIndex {
    /// Each row group, with its bounds where its file has text statistics for `job_id`, and
    /// its number of rows.
    groups: Vec<(Unit, Option<JobIdBounds>, u64)>,
}

impl JobIdIndex {
    /// Reads the footers of `files`.
    pub fn of(files: &[PathBuf]) -> Result<JobIdIndex, ScanError> {
        let mut groups = Vec::new();
        for path in files {
            let builder = reader(path)?;
            let metadata = builder.metadata();
            // Text statistics only: those of another type (a writer that stored ids as
            // numbers) or in the old signed byte order do not order the ids as text does.
            let column = builder.parquet_schema().columns().iter().position(|c| {
                c.path().parts() == ["job_id"] && c.physical_type() == PhysicalType::BYTE_ARRAY
            });
            for (row_group, group) in metadata.row_groups().iter().enumerate() {
                let bounds = column
                    .and_then(|i| group.column(i).statistics())
                    .filter(|s| !s.is_min_max_deprecated())
                    .and_then(|s| Some((s.min_bytes_opt()?.to_vec(), s.max_bytes_opt()?.to_vec())));
                let unit = Unit {
                    path: path.clone(),
                    row_group,
                };
                let rows = u64::try_from(group.num_rows()).unwrap_or(0);
                groups.push((unit, bounds, rows));
            }
        }
        Ok(JobIdIndex { groups })
    }

    /// The row groups that may hold a row of one of `job_ids` (sorted, as text): those whose
    /// bounds have a value of the list between them, and those without bounds.
    pub fn holding(&self, job_ids: &[&str]) -> Vec<Unit> {
        let holds = |(least, greatest): &JobIdBounds| {
            let first = job_ids.partition_point(|id| id.as_bytes() < least.as_slice());
            job_ids
                .get(first)
                .is_some_and(|id| id.as_bytes() <= greatest.as_slice())
        };
        self.groups
            .iter()
            .filter(|(_, bounds, _)| bounds.as_ref().is_none_or(holds))
            .map(|(unit, _, _)| unit.clone())
            .collect()
    }

    /// Each row group's least `job_id` (as text) and its number of rows, in the order of the
    /// files and their row groups; row groups without text statistics are left out.
    pub fn least_ids_and_rows(&self) -> Vec<(&[u8], u64)> {
        self.groups
            .iter()
            .filter_map(|(_, bounds, rows)| Some((bounds.as_ref()?.0.as_slice(), *rows)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::rows::TelemetryBuilder;

    /// Row groups are kept when one of the ids lies within their `job_id` statistics, by text
    /// order ("10" sorts before "9").
    #[test]
    fn row_groups_are_chosen_by_their_job_id_statistics() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("part.parquet");
        let batches: Vec<RecordBatch> = [["10", "11"], ["20", "21"], ["9", "9"]]
            .iter()
            .map(|ids| {
                let mut rows = TelemetryBuilder::default();
                for (i, id) in ids.iter().enumerate() {
                    rows.push(id, "n1", "cpu_user", i as i64 * 10_000_000, 1.0);
                }
                rows.finish().unwrap()
            })
            .collect();
        let file = File::create(&path).unwrap();
        let mut writer =
            datafusion::parquet::arrow::ArrowWriter::try_new(file, batches[0].schema(), None)
                .unwrap();
        for batch in &batches {
            writer.write(batch).unwrap();
            writer.flush().unwrap();
        }
        writer.close().unwrap();
        let groups = |ids: &[&str]| -> Vec<usize> {
            JobIdIndex::of(std::slice::from_ref(&path))
                .unwrap()
                .holding(ids)
                .into_iter()
                .map(|u| u.row_group)
                .collect()
        };
        assert_eq!(groups(&["10"]), [0]);
        assert_eq!(groups(&["105"]), [0]);
        assert_eq!(groups(&["12", "3"]), Vec::<usize>::new());
        assert_eq!(groups(&["11", "9"]), [0, 2]);
        assert_eq!(groups(&[]), Vec::<usize>::new());
        let index = JobIdIndex::of(std::slice::from_ref(&path)).unwrap();
        let starts: Vec<(&str, u64)> = index
            .least_ids_and_rows()
            .into_iter()
            .map(|(id, rows)| (std::str::from_utf8(id).unwrap(), rows))
            .collect();
        assert_eq!(starts, [("10", 2), ("20", 2), ("9", 2)]);
        let missing = tmp.path().join("gone.parquet");
        let error = JobIdIndex::of(std::slice::from_ref(&missing)).unwrap_err();
        assert_eq!(error.path, missing);
    }
}
