//! Ingest: turns job records and telemetry from every source into rows of the catalogue's tables,
//! starting from the [`spool`] the epilog hook fills.
//!
//! Each source (SWF job logs, LDMS CSV runs, Prometheus, sacct and the simulator) parses
//! its own format and produces the same row types defined here, which are written through
//! [`jobsight_warehouse::catalog::write_part`]. So every source shares one schema, one partitioning and one
//! atomic, idempotent write path. Each source reports what it skipped and why; nothing is dropped
//! silently.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod job_exporters;
pub mod ldms;
mod ldms_sample;
pub mod ldms_store;
pub mod node_coverage;
pub mod per_job;
pub mod prometheus;
pub mod sacct;
pub mod sacct_neighbours;
pub mod sacct_steps;
pub mod settings;
pub mod shared_series;
pub mod simulated_slurm;
pub mod simulator;
pub mod slurm_json;
pub mod sources;
pub mod spool;
pub mod squeue;
pub mod swf;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use datafusion::arrow::record_batch::RecordBatch;

use jobsight_warehouse::catalog::{self, CatalogError, Table};

pub use jobsight_base::skipped::Skipped;

/// The longest line an importer holds in memory (SWF, LDMS CSV): far above any real line (an
/// LDMS row with a thousand metrics is about 20 KB), so that a file without newlines cannot make
/// an import read gigabytes into one line. A longer line is skipped with its length as the reason.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// What [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// Nothing more to read.
    End,
    /// A line (with its `\n`, unless it is the file's unterminated last line) is in the buffer.
    Read,
    /// A line of this many bytes, longer than the limit, was read past and not kept.
    TooLong(usize),
}

/// Reads one line of at most `max` bytes into `line` (cleared first). A longer line is consumed
/// up to its newline without being kept, so memory stays bounded whatever the input.
pub fn read_line(
    reader: &mut impl std::io::BufRead,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    line.clear();
    let (mut total, mut too_long) = (0usize, false);
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(match (total, too_long) {
                (0, _) => Line::End,
                (_, true) => Line::TooLong(total),
                _ => Line::Read,
            });
        }
        let (chunk, ends) = match buffer.iter().position(|&b| b == b'\n') {
            Some(i) => (&buffer[..=i], true),
            None => (buffer, false),
        };
        let n = chunk.len();
        if !too_long && line.len() + n <= max {
            line.extend_from_slice(chunk);
        } else if !too_long {
            too_long = true;
            line.clear();
            line.shrink_to(64 * 1024);
        }
        total += n;
        reader.consume(n);
        if ends {
            return Ok(if too_long {
                Line::TooLong(total)
            } else {
                Line::Read
            });
        }
    }
}

// The typed rows of the tables ingest writes live in the catalogue.
pub use jobsight_warehouse::catalog::rows::{JobRow, JobStepRow, LabelRow, TelemetryBuilder};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded_and_the_rest_is_read_past() {
        let long = "x".repeat(100);
        let text = format!("a,b\n{long}\nlast");
        let mut reader = std::io::BufReader::with_capacity(8, text.as_bytes());
        let mut line = Vec::new();
        assert_eq!(read_line(&mut reader, &mut line, 16).unwrap(), Line::Read);
        assert_eq!(line, b"a,b\n");
        assert_eq!(
            read_line(&mut reader, &mut line, 16).unwrap(),
            Line::TooLong(101)
        );
        assert!(line.is_empty());
        assert_eq!(read_line(&mut reader, &mut line, 16).unwrap(), Line::Read);
        assert_eq!(line, b"last");
        assert_eq!(read_line(&mut reader, &mut line, 16).unwrap(), Line::End);
    }
}
