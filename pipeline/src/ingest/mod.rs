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
pub mod settings;
pub mod simulator;
pub mod swf;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use datafusion::arrow::array::{
    ArrayRef, DictionaryArray, Float64Builder, Int32Array, Int32Builder, StringArray,
    StringBuilder, TimestampMicrosecondBuilder, UInt32Builder, UInt64Builder,
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

/// One dictionary-encoded string column under construction, specialised for telemetry: ids arrive
/// in long runs of the same value (one job's node for many rows) or cycle through a few values
/// (metric names), so the last value is checked first and the rest go through a map with a cheap
/// hash. Arrow's generic `StringDictionaryBuilder` hashes and compares every value, which was 30 %
/// of the LDMS store import's time.
#[derive(Debug, Default)]
struct DictColumn {
    keys: Vec<i32>,
    values: Vec<Box<str>>,
    index: std::collections::HashMap<Box<str>, i32, std::hash::BuildHasherDefault<Fnv>>,
    last: Option<i32>,
}

impl DictColumn {
    fn push(&mut self, value: &str) {
        if let Some(last) = self.last
            && *self.values[last as usize] == *value
        {
            self.keys.push(last);
            return;
        }
        let key = match self.index.get(value) {
            Some(&key) => key,
            None => {
                let key = self.values.len() as i32;
                self.values.push(value.into());
                self.index.insert(value.into(), key);
                key
            }
        };
        self.last = Some(key);
        self.keys.push(key);
    }

    /// The column as an Arrow dictionary array; the builder starts empty again.
    fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        let keys = Int32Array::from(std::mem::take(&mut self.keys));
        let values = StringArray::from_iter_values(self.values.iter());
        *self = DictColumn::default();
        Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(
            keys,
            Arc::new(values),
        )?))
    }
}

/// FNV-1a: fast for the short strings of ids and metric names, and no attacker chooses them in a
/// way that matters here (a slow map would only slow one import).
#[derive(Debug, Default, Clone, Copy)]
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }
}

/// Accumulates telemetry samples into `telemetry` record batches with dictionary-encoded ids.
#[derive(Debug)]
pub struct TelemetryBuilder {
    job_id: DictColumn,
    node: DictColumn,
    metric: DictColumn,
    ts: TimestampMicrosecondBuilder,
    value: Float64Builder,
    rows: usize,
}

impl Default for TelemetryBuilder {
    fn default() -> Self {
        TelemetryBuilder {
            job_id: DictColumn::default(),
            node: DictColumn::default(),
            metric: DictColumn::default(),
            ts: TimestampMicrosecondBuilder::new().with_timezone_opt(utc()),
            value: Float64Builder::new(),
            rows: 0,
        }
    }
}

impl TelemetryBuilder {
    pub fn push(&mut self, job_id: &str, node: &str, metric: &str, ts_micros: i64, value: f64) {
        self.job_id.push(job_id);
        self.node.push(node);
        self.metric.push(metric);
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
            self.job_id.finish()?,
            self.node.finish()?,
            self.metric.finish()?,
            Arc::new(self.ts.finish()),
            Arc::new(self.value.finish()),
        ];
        RecordBatch::try_new(Table::Telemetry.schema(), columns)
    }
}

/// Streams telemetry rows into day partitions, writing a part whenever a day's buffer reaches
/// `max_rows`. Memory stays bounded by the buffers however large the input is. Part names are
/// `<prefix>-<day's chunk number>`, so the same input in the same order replaces its own parts.
///
/// Parquet encoding (zstd, dictionaries) costs about as much as parsing the input, so full
/// buffers go to a writer thread and the caller goes on producing rows meanwhile: two cores, twice
/// the speed. The hand-over waits until the writer is free, so at most one buffer is being encoded
/// while one fills: memory stays bounded.
#[derive(Debug)]
pub struct TelemetrySink {
    prefix: String,
    max_rows: usize,
    open: BTreeMap<NaiveDate, (TelemetryBuilder, usize)>,
    writer: Option<Writer>,
    pub rows: u64,
}

/// A full buffer on its way to the writer thread.
type Part = (NaiveDate, String, RecordBatch);

#[derive(Debug)]
struct Writer {
    parts: std::sync::mpsc::SyncSender<Part>,
    thread: std::thread::JoinHandle<(Vec<PathBuf>, Option<CatalogError>)>,
}

impl Writer {
    fn start(data: PathBuf) -> Writer {
        let (parts, received) = std::sync::mpsc::sync_channel::<Part>(0);
        let thread = std::thread::spawn(move || {
            let mut files = Vec::new();
            for (day, name, batch) in received {
                match catalog::write_part(&data, Table::Telemetry, day, &name, &[batch]) {
                    Ok(file) => files.push(file),
                    // Stop at the first error; the sender sees the channel closed.
                    Err(e) => return (files, Some(e)),
                }
            }
            (files, None)
        });
        Writer { parts, thread }
    }

    /// Waits for every part handed over to be written: the files, and the first error.
    fn join(self) -> (Vec<PathBuf>, Option<CatalogError>) {
        drop(self.parts);
        self.thread.join().unwrap_or_else(|_| {
            (
                Vec::new(),
                Some(CatalogError::Schema {
                    table: "telemetry",
                    reason: "the Parquet writer thread panicked".into(),
                }),
            )
        })
    }
}

impl TelemetrySink {
    pub fn new(data: &Path, prefix: &str, max_rows: usize) -> TelemetrySink {
        TelemetrySink {
            prefix: prefix.to_string(),
            max_rows: max_rows.max(1),
            open: BTreeMap::new(),
            writer: Some(Writer::start(data.to_path_buf())),
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
        let Some(writer) = &self.writer else {
            return Err(writer_gone());
        };
        if writer.parts.send((day, name, batch)).is_err() {
            // The writer stopped at an error: report it.
            let (_, error) = self.writer.take().map_or((Vec::new(), None), Writer::join);
            return Err(error.unwrap_or_else(writer_gone));
        }
        Ok(())
    }

    /// Writes what is still buffered, waits for the writer, and returns the files written and
    /// the number of rows.
    pub fn finish(mut self) -> Result<(Vec<PathBuf>, u64), CatalogError> {
        let days: Vec<NaiveDate> = self.open.keys().copied().collect();
        for day in days {
            self.flush(day)?;
        }
        let (files, error) = self.writer.take().map_or((Vec::new(), None), Writer::join);
        match error {
            Some(e) => Err(e),
            None => Ok((files, self.rows)),
        }
    }

    /// Gives up: waits for the writer and returns the files it wrote, for the caller to remove.
    pub fn abort(mut self) -> Vec<PathBuf> {
        self.writer.take().map_or(Vec::new(), |w| w.join().0)
    }
}

fn writer_gone() -> CatalogError {
    CatalogError::Schema {
        table: "telemetry",
        reason: "the Parquet writer stopped".into(),
    }
}
