//! The `telemetry` table's rows: written at millions of rows a second, so instead of a row
//! struct a streaming builder ([`TelemetryBuilder`]) with dictionary-encoded ids.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, DictionaryArray, Float64Builder, Int32Array, StringArray, TimestampMicrosecondBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field, Int32Type};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;

use jobsight_base::stats::{FNV_OFFSET, fnv1a_from};

use super::super::Table;
use super::time_type;

/// The columns of `telemetry`: dictionary-encoded ids, the sample's time and value.
pub fn telemetry_fields() -> Vec<Field> {
    let dict = || DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
    vec![
        Field::new("job_id", dict(), false),
        Field::new("node", dict(), false),
        Field::new("metric", dict(), false),
        Field::new("ts", time_type(), false),
        Field::new("value", DataType::Float64, false),
    ]
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
        let start = if self.0 == 0 { FNV_OFFSET } else { self.0 };
        self.0 = fnv1a_from(start, bytes);
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
            ts: TimestampMicrosecondBuilder::new().with_timezone("UTC"),
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
