//! jobsight's pipeline: everything that happens to a finished Slurm job after the epilog hook has
//! enqueued it.
//!
//! One module per stage, above the shared leaves of the crate `jobsight_base` (text, templates,
//! statistics, safe files, options). So far: [`spool`] claims enqueued jobs and reports the queue; [`catalog`]
//! owns the warehouse's tables; [`ingest`] turns SWF job logs and LDMS CSV runs into those tables;
//! [`query`] runs SQL over them and [`serve`] serves it to psql and Grafana; [`features`], [`classify`] (with [`rules`] and [`model`]) and
//! [`notify`] judge the jobs and tell their owners; [`summary`] sums up usage, efficiency and
//! waste system-wide; [`report`] writes the pages behind the emails' links (per job, per user,
//! per day) with `jobsight_base::templates`, which the emails use too; [`schedule`] is the one place that knows the
//! order of that work (DAGs, the daemon, the `runs` table); [`demo`] runs the pipeline on a
//! simulated cluster.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod catalog;
pub mod classify;
pub mod cli;
pub mod config;
pub mod demo;
pub mod features;
pub mod ingest;
pub mod model;
pub mod notify;
pub mod output;
pub mod query;
pub mod report;
pub mod rules;
pub mod schedule;
pub mod serve;
pub mod simulate;
pub mod spool;
pub mod summary;
pub mod workflow;

/// The smartcore release the models' trees come from (a different one may not read them): every
/// model file records it.
pub const SMARTCORE_VERSION: &str = "0.7.0";

/// Helpers for unit tests.
#[cfg(test)]
pub(crate) mod tests_support {
    /// This crate's directory, read when the test runs (cargo sets it), not when it was compiled:
    /// test binaries in a shared target directory may have been built from another checkout.
    pub fn manifest_dir() -> String {
        std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into())
    }

    /// Makes a FIFO at `path` (with the `mkfifo` program: the crate forbids unsafe code), for
    /// the tests that a FIFO never blocks a reader.
    pub fn mkfifo(path: &std::path::Path) {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .is_ok_and(|s| s.success());
        assert!(made, "cannot make a FIFO at {}", path.display());
    }
}
