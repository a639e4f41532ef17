//! Query results for people and programs: the formats `jobsight sql` writes (an aligned table,
//! CSV, JSON lines), text columns escaped for a terminal, and the streaming of a result to its
//! output batch by batch. Everything here is what a person reads of a query. It stays with the
//! warehouse, beside the streaming that `jobsight sql` and `serve --pg` share, rather than in the
//! render crate.

use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use futures::StreamExt;
use jobsight_base::choice::{Choice, Named};

use super::{Engine, QueryError, TABLE_ROWS, frame};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlFormat {
    Table,
    Csv,
    Json,
}

impl Choice for SqlFormat {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: SqlFormat::Table,
            name: "table",
            help: "",
        },
        Named {
            value: SqlFormat::Csv,
            name: "csv",
            help: "",
        },
        Named {
            value: SqlFormat::Json,
            name: "json",
            help: "",
        },
    ];
}

/// Runs one read-only SQL statement and streams its result to `out` in `format`, batch by batch
/// (the aligned table: its first [`TABLE_ROWS`] rows, then a note). Returns the rows written.
pub async fn write_results(
    data: &Path,
    engine: &Engine,
    sql: &str,
    format: SqlFormat,
    out: &mut dyn std::io::Write,
) -> Result<u64, QueryError> {
    let mut stream = frame(data, engine, sql)
        .await?
        .execute_stream()
        .await
        .map_err(QueryError::Query)?;
    let err = |e: datafusion::arrow::error::ArrowError| QueryError::Render(e.to_string());
    let mut rows = 0u64;
    match format {
        SqlFormat::Table => {
            let mut held = Vec::new();
            let mut more = false;
            while let Some(batch) = stream.next().await {
                let batch = batch.map_err(QueryError::Query)?;
                let room = TABLE_ROWS - rows as usize;
                if batch.num_rows() > room {
                    held.push(batch.slice(0, room));
                    rows += room as u64;
                    more = true;
                    break;
                }
                rows += batch.num_rows() as u64;
                held.push(batch);
            }
            out.write_all(render(&held, SqlFormat::Table)?.as_bytes())
                .map_err(QueryError::Output)?;
            if more {
                writeln!(
                    out,
                    "(the first {TABLE_ROWS} rows; --format csv or json writes them all)"
                )
                .map_err(QueryError::Output)?;
            }
        }
        SqlFormat::Csv => {
            let mut writer = datafusion::arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut *out);
            while let Some(batch) = stream.next().await {
                let batch = undictionary(&batch.map_err(QueryError::Query)?)?;
                rows += batch.num_rows() as u64;
                writer.write(&batch).map_err(err)?;
            }
        }
        SqlFormat::Json => {
            let mut writer = datafusion::arrow::json::LineDelimitedWriter::new(&mut *out);
            while let Some(batch) = stream.next().await {
                let batch = undictionary(&batch.map_err(QueryError::Query)?)?;
                rows += batch.num_rows() as u64;
                writer.write(&batch).map_err(err)?;
            }
            writer.finish().map_err(err)?;
        }
    }
    Ok(rows)
}

/// Dictionary columns as plain strings: what CSV and JSON writers and people expect.
fn undictionary(batch: &RecordBatch) -> Result<RecordBatch, QueryError> {
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        match field.data_type() {
            DataType::Dictionary(_, value) => {
                let plain = cast(column, value).map_err(|e| QueryError::Render(e.to_string()))?;
                fields.push(Field::new(
                    field.name(),
                    value.as_ref().clone(),
                    field.is_nullable(),
                ));
                columns.push(plain);
            }
            _ => {
                fields.push(field.as_ref().clone());
                columns.push(column.clone());
            }
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| QueryError::Render(e.to_string()))
}

/// Text columns with their control bytes escaped ([`jobsight_base::text::printable`]): what a terminal
/// shows must not be able to move the cursor, retitle the window or forge a table row.
fn escaped(batch: &RecordBatch) -> Result<RecordBatch, QueryError> {
    use datafusion::arrow::array::{Array, AsArray, StringArray};
    let err = |e: datafusion::arrow::error::ArrowError| QueryError::Render(e.to_string());
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        if matches!(
            field.data_type(),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
        ) {
            let text = cast(column, &DataType::Utf8).map_err(err)?;
            let text = text.as_string::<i32>();
            let clean: StringArray = (0..text.len())
                .map(|i| (!text.is_null(i)).then(|| jobsight_base::text::printable(text.value(i))))
                .collect();
            fields.push(Field::new(
                field.name(),
                DataType::Utf8,
                field.is_nullable(),
            ));
            columns.push(Arc::new(clean) as _);
        } else {
            fields.push(field.as_ref().clone());
            columns.push(column.clone());
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(err)
}

/// Renders query results for a terminal (text escaped) or a program (as they are).
pub fn render(batches: &[RecordBatch], format: SqlFormat) -> Result<String, QueryError> {
    let plain: Vec<RecordBatch> = batches.iter().map(undictionary).collect::<Result<_, _>>()?;
    let err = |e: datafusion::arrow::error::ArrowError| QueryError::Render(e.to_string());
    match format {
        SqlFormat::Table => {
            let plain: Vec<RecordBatch> = plain.iter().map(escaped).collect::<Result<_, _>>()?;
            let table =
                datafusion::arrow::util::pretty::pretty_format_batches(&plain).map_err(err)?;
            Ok(format!("{table}\n"))
        }
        SqlFormat::Csv => {
            let mut out = Vec::new();
            {
                let mut writer = datafusion::arrow::csv::WriterBuilder::new()
                    .with_header(true)
                    .build(&mut out);
                for batch in &plain {
                    writer.write(batch).map_err(err)?;
                }
            }
            String::from_utf8(out).map_err(|e| QueryError::Render(e.to_string()))
        }
        SqlFormat::Json => {
            let mut out = Vec::new();
            {
                let mut writer = datafusion::arrow::json::LineDelimitedWriter::new(&mut out);
                for batch in &plain {
                    writer.write(batch).map_err(err)?;
                }
                writer.finish().map_err(err)?;
            }
            String::from_utf8(out).map_err(|e| QueryError::Render(e.to_string()))
        }
    }
}
