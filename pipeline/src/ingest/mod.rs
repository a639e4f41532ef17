//! Ingest: turns job records and telemetry from every source into rows of the catalogue's tables.
//!
//! Each source (SWF job logs, LDMS CSV runs, and later Prometheus, sacct and the simulator) parses
//! its own format and produces the same row types defined here, which are written through
//! [`crate::catalog::write_part`]. So every source shares one schema, one partitioning and one
//! atomic, idempotent write path. Each source reports what it skipped and why; nothing is dropped
//! silently.

pub mod ldms;
pub mod ldms_store;
pub mod per_job;
pub mod prometheus;
pub mod sacct;
pub mod simulator;
pub mod swf;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use datafusion::arrow::array::{
    ArrayRef, Float64Builder, Int32Builder, StringBuilder, StringDictionaryBuilder,
    TimestampMicrosecondBuilder, UInt32Builder, UInt64Builder,
};
use datafusion::arrow::datatypes::Int32Type;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;

use crate::catalog::{self, CatalogError, Table};

/// Input that was not imported, with where and why: every source reports these instead of
/// dropping anything silently.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub file: PathBuf,
    /// 1-based line number; 0 when the problem concerns the whole file or run.
    pub line: usize,
    pub reason: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.reason)
    }
}

/// One row of the `jobs` table.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobRow {
    pub cluster: String,
    pub job_id: String,
    pub array_job_id: Option<String>,
    pub array_task_id: Option<u32>,
    pub restart_count: u32,
    pub user: Option<String>,
    pub account: Option<String>,
    pub partition: Option<String>,
    pub qos: Option<String>,
    pub num_nodes: Option<u32>,
    pub nodes: Option<String>,
    pub cpus: Option<u32>,
    pub gpus: Option<u32>,
    pub req_mem_mb: Option<u64>,
    pub time_limit_s: Option<u64>,
    pub submit: Option<DateTime<Utc>>,
    pub start: Option<DateTime<Utc>>,
    pub end: DateTime<Utc>,
    pub state: Option<String>,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<i32>,
    pub name: Option<String>,
    pub source: String,
}

impl JobRow {
    /// The partition a job belongs to: the UTC day of its end.
    pub fn day(&self) -> NaiveDate {
        self.end.date_naive()
    }
}

/// One row of the `labels` table.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelRow {
    pub job_id: String,
    pub anomaly: String,
    pub start: Option<DateTime<Utc>>,
    pub end: Option<DateTime<Utc>>,
    pub params: Option<String>,
    pub source: String,
}

fn micros(t: &Option<DateTime<Utc>>) -> Option<i64> {
    t.map(|t| t.timestamp_micros())
}

fn utc() -> Option<Arc<str>> {
    Some("UTC".into())
}

/// Rows of `jobs` as one record batch.
pub fn jobs_batch(rows: &[JobRow]) -> Result<RecordBatch, ArrowError> {
    let strings = |f: &dyn Fn(&JobRow) -> Option<&str>| -> ArrayRef {
        let mut b = StringBuilder::new();
        rows.iter().for_each(|r| b.append_option(f(r)));
        Arc::new(b.finish())
    };
    let u32s = |f: &dyn Fn(&JobRow) -> Option<u32>| -> ArrayRef {
        let mut b = UInt32Builder::new();
        rows.iter().for_each(|r| b.append_option(f(r)));
        Arc::new(b.finish())
    };
    let u64s = |f: &dyn Fn(&JobRow) -> Option<u64>| -> ArrayRef {
        let mut b = UInt64Builder::new();
        rows.iter().for_each(|r| b.append_option(f(r)));
        Arc::new(b.finish())
    };
    let i32s = |f: &dyn Fn(&JobRow) -> Option<i32>| -> ArrayRef {
        let mut b = Int32Builder::new();
        rows.iter().for_each(|r| b.append_option(f(r)));
        Arc::new(b.finish())
    };
    let times = |f: &dyn Fn(&JobRow) -> Option<i64>| -> ArrayRef {
        let mut b = TimestampMicrosecondBuilder::new().with_timezone_opt(utc());
        rows.iter().for_each(|r| b.append_option(f(r)));
        Arc::new(b.finish())
    };
    let columns: Vec<ArrayRef> = vec![
        strings(&|r| Some(&r.cluster)),
        strings(&|r| Some(&r.job_id)),
        strings(&|r| r.array_job_id.as_deref()),
        u32s(&|r| r.array_task_id),
        u32s(&|r| Some(r.restart_count)),
        strings(&|r| r.user.as_deref()),
        strings(&|r| r.account.as_deref()),
        strings(&|r| r.partition.as_deref()),
        strings(&|r| r.qos.as_deref()),
        u32s(&|r| r.num_nodes),
        strings(&|r| r.nodes.as_deref()),
        u32s(&|r| r.cpus),
        u32s(&|r| r.gpus),
        u64s(&|r| r.req_mem_mb),
        u64s(&|r| r.time_limit_s),
        times(&|r| micros(&r.submit)),
        times(&|r| micros(&r.start)),
        times(&|r| Some(r.end.timestamp_micros())),
        strings(&|r| r.state.as_deref()),
        i32s(&|r| r.exit_code),
        i32s(&|r| r.exit_signal),
        strings(&|r| r.name.as_deref()),
        strings(&|r| Some(&r.source)),
    ];
    RecordBatch::try_new(Table::Jobs.schema(), columns)
}

/// Rows of `labels` as one record batch.
pub fn labels_batch(rows: &[LabelRow]) -> Result<RecordBatch, ArrowError> {
    let mut job = StringBuilder::new();
    let mut anomaly = StringBuilder::new();
    let mut start = TimestampMicrosecondBuilder::new().with_timezone_opt(utc());
    let mut end = TimestampMicrosecondBuilder::new().with_timezone_opt(utc());
    let mut params = StringBuilder::new();
    let mut source = StringBuilder::new();
    for r in rows {
        job.append_value(&r.job_id);
        anomaly.append_value(&r.anomaly);
        start.append_option(micros(&r.start));
        end.append_option(micros(&r.end));
        params.append_option(r.params.as_deref());
        source.append_value(&r.source);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(job.finish()),
        Arc::new(anomaly.finish()),
        Arc::new(start.finish()),
        Arc::new(end.finish()),
        Arc::new(params.finish()),
        Arc::new(source.finish()),
    ];
    RecordBatch::try_new(Table::Labels.schema(), columns)
}

/// Accumulates telemetry samples into `telemetry` record batches with dictionary-encoded ids.
pub struct TelemetryBuilder {
    job_id: StringDictionaryBuilder<Int32Type>,
    node: StringDictionaryBuilder<Int32Type>,
    metric: StringDictionaryBuilder<Int32Type>,
    ts: TimestampMicrosecondBuilder,
    value: Float64Builder,
    rows: usize,
}

impl Default for TelemetryBuilder {
    fn default() -> Self {
        TelemetryBuilder {
            job_id: StringDictionaryBuilder::new(),
            node: StringDictionaryBuilder::new(),
            metric: StringDictionaryBuilder::new(),
            ts: TimestampMicrosecondBuilder::new().with_timezone_opt(utc()),
            value: Float64Builder::new(),
            rows: 0,
        }
    }
}

impl std::fmt::Debug for TelemetryBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetryBuilder")
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl TelemetryBuilder {
    pub fn push(&mut self, job_id: &str, node: &str, metric: &str, ts_micros: i64, value: f64) {
        self.job_id.append_value(job_id);
        self.node.append_value(node);
        self.metric.append_value(metric);
        self.ts.append_value(ts_micros);
        self.value.append_value(value);
        self.rows += 1;
    }

    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The rows pushed so far as one batch; the builder starts empty again.
    pub fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        self.rows = 0;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.job_id.finish()),
            Arc::new(self.node.finish()),
            Arc::new(self.metric.finish()),
            Arc::new(self.ts.finish()),
            Arc::new(self.value.finish()),
        ];
        RecordBatch::try_new(Table::Telemetry.schema(), columns)
    }
}

/// Streams telemetry rows into day partitions, writing a part whenever a day's buffer reaches
/// `max_rows`. Memory stays bounded by the buffers however large the input is. Part names are
/// `<prefix>-<day's chunk number>`, so the same input in the same order replaces its own parts.
#[derive(Debug)]
pub struct TelemetrySink {
    data: PathBuf,
    prefix: String,
    max_rows: usize,
    open: BTreeMap<NaiveDate, (TelemetryBuilder, usize)>,
    pub files: Vec<PathBuf>,
    pub rows: u64,
}

impl TelemetrySink {
    pub fn new(data: &Path, prefix: &str, max_rows: usize) -> TelemetrySink {
        TelemetrySink {
            data: data.to_path_buf(),
            prefix: prefix.to_string(),
            max_rows: max_rows.max(1),
            open: BTreeMap::new(),
            files: Vec::new(),
            rows: 0,
        }
    }

    pub fn push(
        &mut self,
        day: NaiveDate,
        job_id: &str,
        node: &str,
        metric: &str,
        ts_micros: i64,
        value: f64,
    ) -> Result<(), CatalogError> {
        let (builder, _) = self
            .open
            .entry(day)
            .or_insert_with(|| (TelemetryBuilder::default(), 0));
        builder.push(job_id, node, metric, ts_micros, value);
        self.rows += 1;
        if builder.len() >= self.max_rows {
            self.flush(day)?;
        }
        Ok(())
    }

    fn flush(&mut self, day: NaiveDate) -> Result<(), CatalogError> {
        let Some((builder, chunk)) = self.open.get_mut(&day) else {
            return Ok(());
        };
        if builder.is_empty() {
            return Ok(());
        }
        let batch = builder.finish().map_err(|e| CatalogError::Schema {
            table: "telemetry",
            reason: e.to_string(),
        })?;
        let name = format!("{}-{:05}", self.prefix, chunk);
        *chunk += 1;
        self.files.push(catalog::write_part(
            &self.data,
            Table::Telemetry,
            day,
            &name,
            &[batch],
        )?);
        Ok(())
    }

    /// Writes what is still buffered and returns the files written.
    pub fn finish(mut self) -> Result<(Vec<PathBuf>, u64), CatalogError> {
        let days: Vec<NaiveDate> = self.open.keys().copied().collect();
        for day in days {
            self.flush(day)?;
        }
        Ok((self.files, self.rows))
    }
}
