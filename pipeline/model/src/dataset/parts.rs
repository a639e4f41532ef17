//! The warehouse's Parquet parts as the dataset reads them: every part of a table on some days
//! ([`batches`]), and a batch's columns converted once to the plain types the readers walk
//! (strings, microseconds, whole numbers, floats). The windows, the labels and the jobs' names
//! are all read through here, so that a part that cannot be read says which file and column.

use std::fs::File;
use std::path::Path;

use chrono::NaiveDate;
use datafusion::arrow::array::{ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::parquet::arrow::ProjectionMask;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::ModelError;
use jobsight_warehouse::catalog::Table;

/// Column `name` of `batch` as type `to`, converted once per batch; `path` names the part in errors.
fn column_as(
    batch: &RecordBatch,
    name: &str,
    path: &Path,
    to: &DataType,
) -> Result<ArrayRef, ModelError> {
    let array = batch
        .column_by_name(name)
        .ok_or_else(|| ModelError::read(path, format!("no column {name}")))?;
    cast(array, to).map_err(|e| ModelError::read(path, format!("column {name}: {e}")))
}

/// A column as plain strings.
pub(crate) fn text_column(
    batch: &RecordBatch,
    name: &str,
    path: &Path,
) -> Result<ArrayRef, ModelError> {
    column_as(batch, name, path, &DataType::Utf8)
}

/// A time column as microseconds since the epoch.
pub(crate) fn micros_column(
    batch: &RecordBatch,
    name: &str,
    path: &Path,
) -> Result<ArrayRef, ModelError> {
    let time = DataType::Timestamp(TimeUnit::Microsecond, None);
    cast(&column_as(batch, name, path, &time)?, &DataType::Int64)
        .map_err(|e| ModelError::read(path, format!("column {name}: {e}")))
}

/// The run column (`restart_count`) of a windows batch as whole numbers; `None` in parts written
/// before it was recorded.
pub(super) fn run_column(
    batch: &RecordBatch,
    path: &Path,
) -> Result<Option<datafusion::arrow::array::UInt32Array>, ModelError> {
    let Some(array) = batch.column_by_name("restart_count") else {
        return Ok(None);
    };
    let cast = cast(array, &DataType::UInt32)
        .map_err(|e| ModelError::read(path, format!("column restart_count: {e}")))?;
    Ok(Some(
        cast.as_primitive::<datafusion::arrow::datatypes::UInt32Type>()
            .clone(),
    ))
}

pub(super) fn float_column(
    batch: &RecordBatch,
    name: &str,
    path: &Path,
) -> Result<ArrayRef, ModelError> {
    column_as(batch, name, path, &DataType::Float64)
}

/// Opens every Parquet part of `table` on `days`, reading only `columns`.
pub(crate) fn batches(
    data: &Path,
    table: Table,
    days: &[NaiveDate],
    part: Option<&str>,
    columns: Option<&[&str]>,
    mut on_batch: impl FnMut(&RecordBatch, &Path) -> Result<(), ModelError>,
) -> Result<(), ModelError> {
    for &day in days {
        let files = jobsight_warehouse::catalog::part_files(data, table, day, part)
            .map_err(|e| ModelError::read(&table.dir(data), e))?;
        for path in files {
            let file = File::open(&path).map_err(|e| ModelError::read(&path, e))?;
            let mut builder = ParquetRecordBatchReaderBuilder::try_new(file)
                .map_err(|e| ModelError::read(&path, e))?;
            if let Some(columns) = columns {
                let mask =
                    ProjectionMask::columns(builder.parquet_schema(), columns.iter().copied());
                builder = builder.with_projection(mask);
            }
            let reader = builder.build().map_err(|e| ModelError::read(&path, e))?;
            for batch in reader {
                let batch = batch.map_err(|e| ModelError::read(&path, e))?;
                on_batch(&batch, &path)?;
            }
        }
    }
    Ok(())
}
