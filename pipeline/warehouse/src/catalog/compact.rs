//! Compaction: a busy day's many small parts (one per job, one per scheduler run) folded into
//! one file per table and day by [`compact_day`], the nightly `compact` step.
//!
//! The day file always has the catalogue's current schema. Parts written before a column was
//! added lack it, so columns are matched by name, and a nullable column a file lacks is filled
//! with nulls ([`in_schema`]): a warehouse keeps compacting across an upgrade that adds columns,
//! and its old rows read as "unknown" in the new columns.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use datafusion::arrow::array::{ArrayRef, new_null_array};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::parquet::basic::{Compression, ZstdLevel};
use datafusion::parquet::file::properties::WriterProperties;

use super::{
    CatalogError, ROW_GROUP_ROWS, Table, part_files, part_name, part_path, partition_dir,
    remove_part_file, write_atomically,
};

/// The name of a day's compacted file: `part-compacted.parquet`.
pub const COMPACTED_PART: &str = "compacted";
/// The Parquet key-value metadata key under which a compacted file lists the parts it holds.
const COMPACTED_KEY: &str = "jobsight.compacted_parts";

/// Whether a part name is one of the many small parts that compaction folds into a day file:
/// what the per-job path writes (`job-...`, telemetry chunks included) and the scheduler's run
/// rows (`run-...`). Parts of the bulk importers (an SWF file, an LDMS run, a simulated day) are
/// already day-sized and are replaced by name when re-imported, so they are left alone.
pub fn is_compactable(part: &str) -> bool {
    part.starts_with("job-") || part.starts_with("run-")
}

/// What [`compact_day`] did to one day's partition of one table.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Compacted {
    /// Small parts folded into the day file by this call.
    pub parts: usize,
    /// Rows of the day file after the call.
    pub rows: u64,
    /// Parts that were already in the day file (left over by a compaction interrupted between
    /// its commit and its clean-up) and were only removed.
    pub leftovers: usize,
}

/// The part names a day's compacted file of `table` holds (empty when there is none). Read from
/// the file's footer, so this is cheap.
pub fn compacted_parts(
    data: &Path,
    table: Table,
    day: NaiveDate,
) -> Result<std::collections::BTreeSet<String>, CatalogError> {
    use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
    let path = part_path(data, table, day, COMPACTED_PART);
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Default::default()),
        Err(source) => {
            return Err(CatalogError::Read {
                path,
                source: source.into(),
            });
        }
    };
    let reader = SerializedFileReader::new(file).map_err(|source| CatalogError::Read {
        path: path.clone(),
        source,
    })?;
    let listed = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == COMPACTED_KEY))
        .and_then(|k| k.value.clone())
        .unwrap_or_default();
    Ok(listed
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// Folds the small parts of one day's partition of `table` (see [`is_compactable`]) into its day
/// file `part-compacted.parquet`, so that a busy day is a handful of files instead of tens of
/// thousands. Rows of an earlier compaction are kept, so a job that arrives after its day was
/// compacted is folded in by the next call.
///
/// The day file's footer lists every part it holds, and renaming it into place is the one commit:
/// a crash before it changes nothing, a crash after it leaves parts that the day file already
/// holds, which the next call (and the per-job ingest, which stores no job twice) recognise by
/// that list and only remove. Between the commit and the removal, readers may see those parts'
/// rows twice.
pub fn compact_day(data: &Path, table: Table, day: NaiveDate) -> Result<Compacted, CatalogError> {
    use datafusion::parquet::file::metadata::KeyValue;

    let mut done = Compacted::default();
    let held = compacted_parts(data, table, day)?;
    let mut fresh: Vec<(String, PathBuf)> = Vec::new();
    for path in part_files(data, table, day, None).map_err(|source| CatalogError::Create {
        path: partition_dir(data, table, day),
        source,
    })? {
        let Some(name) = part_name(&path) else {
            continue;
        };
        if !is_compactable(name) {
            continue;
        }
        if held.contains(name) {
            remove_part_file(&path)?;
            done.leftovers += 1;
        } else {
            fresh.push((name.to_string(), path));
        }
    }
    if fresh.is_empty() {
        return Ok(done);
    }
    let mut names: Vec<String> = held.into_iter().collect();
    names.extend(fresh.iter().map(|(n, _)| n.clone()));
    names.sort();
    let properties = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).unwrap_or_default()))
        .set_dictionary_enabled(true)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_key_value_metadata(Some(vec![KeyValue::new(
            COMPACTED_KEY.to_string(),
            names.join("\n"),
        )]))
        .build();
    let old = part_path(data, table, day, COMPACTED_PART);
    let mut inputs: Vec<PathBuf> = Vec::new();
    if old.is_file() {
        inputs.push(old);
    }
    inputs.extend(fresh.iter().map(|(_, p)| p.clone()));
    let schema = table.schema();
    let mut rows = 0u64;
    let written = write_atomically(
        data,
        table,
        day,
        COMPACTED_PART,
        properties,
        |writer, tmp| {
            for input in &inputs {
                for batch in part_batches(input, table, &schema)? {
                    let batch = batch?;
                    rows += batch.num_rows() as u64;
                    writer.write(&batch).map_err(|source| CatalogError::Write {
                        path: tmp.to_path_buf(),
                        source,
                    })?;
                }
            }
            Ok(())
        },
    )?;
    debug_assert_eq!(written, part_path(data, table, day, COMPACTED_PART));
    for (_, path) in &fresh {
        remove_part_file(path)?;
    }
    done.parts = fresh.len();
    done.rows = rows;
    Ok(done)
}

/// The batches of the part file at `path` (64 Ki rows at a time), each in the catalogue's
/// `schema` for `table` ([`in_schema`]): what compaction and [`super::replace_rows`] read.
pub(super) fn part_batches<'a>(
    path: &'a Path,
    table: Table,
    schema: &'a SchemaRef,
) -> Result<impl Iterator<Item = Result<RecordBatch, CatalogError>> + 'a, CatalogError> {
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let read_err = move |source| CatalogError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(|e| read_err(e.into()))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.with_batch_size(64 * 1024).build())
        .map_err(read_err)?;
    Ok(reader.map(move |batch| {
        let batch = batch.map_err(|e| read_err(e.into()))?;
        in_schema(&batch, schema, table, path)
    }))
}

/// `batch`, read from the file at `path`, as a batch of the catalogue's `schema` for `table`.
/// Columns are taken by name, not position; a nullable column the file lacks (it was written
/// before the column was added) is all nulls. The fields are the catalogue's, so field metadata
/// an older file carries does not travel into the day file. A missing column that may not be
/// null, a column of another type, or a column the catalogue does not know (a file of a newer
/// version, whose data would be lost) is an error naming the file and the column.
pub fn in_schema(
    batch: &RecordBatch,
    schema: &SchemaRef,
    table: Table,
    path: &Path,
) -> Result<RecordBatch, CatalogError> {
    let error = |reason: String| CatalogError::Schema {
        table: table.name(),
        reason: format!("{}: {reason}", path.display()),
    };
    let file_schema = batch.schema();
    if let Some(unknown) =
        (file_schema.fields().iter()).find(|f| schema.field_with_name(f.name()).is_err())
    {
        return Err(error(format!(
            "column {} is not one of the table's",
            unknown.name()
        )));
    }
    let columns = (schema.fields().iter())
        .map(|field| match batch.column_by_name(field.name()) {
            Some(column) if column.data_type() == field.data_type() => Ok(column.clone()),
            Some(column) => Err(error(format!(
                "column {} is {}, the table's is {}",
                field.name(),
                column.data_type(),
                field.data_type()
            ))),
            None if field.is_nullable() => Ok(new_null_array(field.data_type(), batch.num_rows())),
            None => Err(error(format!(
                "no column {}, which may not be null",
                field.name()
            ))),
        })
        .collect::<Result<Vec<ArrayRef>, CatalogError>>()?;
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| error(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::rows::JobRow;
    use crate::catalog::write_part;
    use chrono::DateTime;
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::datatypes::{Float64Type, UInt32Type};
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    /// The `jobs` columns that came with Slurm accounting: absent from older files.
    const ACCOUNTING_COLUMNS: [&str; 8] = [
        "acct_cpu_user_s",
        "acct_cpu_system_s",
        "acct_cpu_total_s",
        "acct_mem_peak_mb",
        "acct_max_rss_mb",
        "acct_energy_j",
        "acct_steps",
        "neighbours",
    ];

    fn job(id: &str, cpu_total_s: Option<f64>) -> JobRow {
        JobRow {
            cluster: "c".into(),
            job_id: id.into(),
            end: DateTime::from_timestamp(1_795_300_000, 0).unwrap(),
            source: "test".into(),
            acct_cpu_total_s: cpu_total_s,
            neighbours: cpu_total_s.map(|_| 2),
            ..JobRow::default()
        }
    }

    /// Writes `rows` without the columns `without`, as an older version (whose schema lacked
    /// them) wrote its parts.
    fn write_older_part(
        data: &Path,
        day: NaiveDate,
        name: &str,
        rows: &[JobRow],
        without: &[&str],
    ) {
        let batch = JobRow::batch(rows).unwrap();
        let kept: Vec<usize> = (batch.schema().fields().iter().enumerate())
            .filter(|(_, f)| !without.contains(&f.name().as_str()))
            .map(|(i, _)| i)
            .collect();
        let older = batch.project(&kept).unwrap();
        let path = part_path(data, Table::Jobs, day, name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut writer =
            ArrowWriter::try_new(File::create(&path).unwrap(), older.schema(), None).unwrap();
        writer.write(&older).unwrap();
        writer.close().unwrap();
    }

    /// Per job id of the day file: its `acct_cpu_total_s` and `neighbours`.
    fn compacted_figures(
        data: &Path,
        day: NaiveDate,
    ) -> std::collections::BTreeMap<String, (Option<f64>, Option<u32>)> {
        let path = part_path(data, Table::Jobs, day, COMPACTED_PART);
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let mut figures = std::collections::BTreeMap::new();
        for batch in reader {
            let batch = batch.unwrap();
            assert_eq!(batch.schema().fields(), Table::Jobs.schema().fields());
            let ids = batch.column_by_name("job_id").unwrap().as_string::<i32>();
            let cpu =
                (batch.column_by_name("acct_cpu_total_s").unwrap()).as_primitive::<Float64Type>();
            let neighbours =
                (batch.column_by_name("neighbours").unwrap()).as_primitive::<UInt32Type>();
            for i in 0..batch.num_rows() {
                figures.insert(
                    ids.value(i).to_string(),
                    (
                        cpu.is_valid(i).then(|| cpu.value(i)),
                        neighbours.is_valid(i).then(|| neighbours.value(i)),
                    ),
                );
            }
        }
        figures
    }

    /// A day with a part written before the accounting columns existed and a part written
    /// after: compaction keeps every row, the old rows with nulls in the new columns. A part that
    /// lacks a column which may not be null stops the compaction with the file's name, and the
    /// day file stays as it was.
    #[test]
    fn parts_of_an_older_schema_are_compacted_with_nulls() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let day = NaiveDate::from_ymd_opt(2026, 11, 22).unwrap();
        write_older_part(
            data,
            day,
            "job-c-1",
            &[job("1", None), job("2", None)],
            &ACCOUNTING_COLUMNS,
        );
        let batch = JobRow::batch(&[job("3", Some(42.5))]).unwrap();
        write_part(data, Table::Jobs, day, "job-c-3", &[batch]).unwrap();

        let done = compact_day(data, Table::Jobs, day).unwrap();
        assert_eq!((done.parts, done.rows), (2, 3));
        let expected = [
            ("1".to_string(), (None, None)),
            ("2".to_string(), (None, None)),
            ("3".to_string(), (Some(42.5), Some(2u32))),
        ];
        assert_eq!(compacted_figures(data, day), expected.clone().into());

        write_older_part(data, day, "job-c-4", &[job("4", None)], &["cluster"]);
        let error = compact_day(data, Table::Jobs, day).unwrap_err().to_string();
        assert!(
            error.contains("part-job-c-4.parquet") && error.contains("no column cluster"),
            "{error}"
        );
        assert_eq!(compacted_figures(data, day), expected.into());
    }
}
