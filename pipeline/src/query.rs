//! `jobsight sql`: DataFusion SQL over every table of the catalogue.
//!
//! Each table of [`crate::catalog::Table`] is registered under its name, with its committed schema
//! and the hive partition column `day` (`WHERE day = '2026-11-22'` prunes whole directories). A
//! table with no files yet is registered empty, so a query over it returns no rows rather than
//! "table not found". Results render as an aligned table, CSV or JSON lines.

use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::error::DataFusionError;
use datafusion::prelude::{ParquetReadOptions, SessionContext};

use crate::catalog::{PARTITION_COLUMN, Table};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SqlFormat {
    Table,
    Csv,
    Json,
}

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("cannot register table {table} from {path}: {source}")]
    Register {
        table: &'static str,
        path: String,
        source: DataFusionError,
    },
    #[error("{0}")]
    Query(DataFusionError),
    #[error("cannot render the result: {0}")]
    Render(String),
}

/// Whether a directory holds at least one Parquet file anywhere below it (symlinks not followed,
/// so a link loop cannot recurse forever).
fn has_parquet(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| match e.file_type() {
        Ok(t) if t.is_dir() => has_parquet(&e.path()),
        Ok(t) if t.is_file() => e.path().extension().is_some_and(|x| x == "parquet"),
        _ => false,
    })
}

/// A DataFusion session with every catalogue table of the warehouse at `data` registered.
pub async fn session(data: &Path) -> Result<SessionContext, QueryError> {
    let ctx = SessionContext::new();
    for table in Table::ALL {
        let dir = table.dir(data);
        let schema = table.schema();
        if has_parquet(&dir) {
            let path = format!("{}/", dir.display());
            let options = ParquetReadOptions::default()
                .schema(&schema)
                .table_partition_cols(vec![(PARTITION_COLUMN.to_string(), DataType::Utf8)]);
            ctx.register_parquet(table.name(), &path, options)
                .await
                .map_err(|source| QueryError::Register {
                    table: table.name(),
                    path,
                    source,
                })?;
        } else {
            let mut fields: Vec<Field> =
                schema.fields().iter().map(|f| f.as_ref().clone()).collect();
            fields.push(Field::new(PARTITION_COLUMN, DataType::Utf8, false));
            let empty = MemTable::try_new(Arc::new(Schema::new(fields)), vec![vec![]]).map_err(
                |source| QueryError::Register {
                    table: table.name(),
                    path: dir.display().to_string(),
                    source,
                },
            )?;
            ctx.register_table(table.name(), Arc::new(empty))
                .map_err(|source| QueryError::Register {
                    table: table.name(),
                    path: dir.display().to_string(),
                    source,
                })?;
        }
    }
    Ok(ctx)
}

/// Runs one SQL statement over the warehouse.
pub async fn run(data: &Path, sql: &str) -> Result<Vec<RecordBatch>, QueryError> {
    let ctx = session(data).await?;
    let frame = ctx.sql(sql).await.map_err(QueryError::Query)?;
    frame.collect().await.map_err(QueryError::Query)
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

/// Renders query results for a terminal or a program.
pub fn render(batches: &[RecordBatch], format: SqlFormat) -> Result<String, QueryError> {
    let plain: Vec<RecordBatch> = batches.iter().map(undictionary).collect::<Result<_, _>>()?;
    let err = |e: datafusion::arrow::error::ArrowError| QueryError::Render(e.to_string());
    match format {
        SqlFormat::Table => {
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
