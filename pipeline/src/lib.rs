//! jobsight's pipeline: everything that happens to a finished Slurm job after the epilog hook has
//! enqueued it.
//!
//! One module per stage. So far: [`spool`] claims enqueued jobs and reports the queue, and [`demo`]
//! runs what exists of the pipeline on a simulated cluster. Telemetry ingest, features, rules,
//! machine-learning diagnosis and notification arrive as later stages (see the README's status).
#![cfg_attr(test, allow(clippy::unwrap_used))]

use chrono::{DateTime, Utc};

pub mod demo;
pub mod output;
pub mod simulate;
pub mod spool;

/// The wall clock. Commands call this once and pass the time down; library functions take the
/// time as a parameter so that tests choose it.
pub fn now() -> DateTime<Utc> {
    DateTime::from(std::time::SystemTime::now())
}
