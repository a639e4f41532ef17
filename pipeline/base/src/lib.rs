//! The leaves below every stage of the pipeline: what two or more stages share and none owns.
//! Nothing here knows a table, a query or another stage, and the crate does not depend on
//! DataFusion, so it builds in seconds and every stage (and the application above them) may use
//! it without tying itself to another stage.
//!
//! [`anomaly`] is the vocabulary of anomaly types that labels, models and the simulator share;
//! [`text`] makes what people read safe (escaping, cleaning, slugs) and writes durations;
//! [`templates`] is the error every template names (the engine is the render crate's); [`stats`]
//! and [`series`] hold the statistics every figure is computed with; [`safe_fs`] and [`lockfile`]
//! are the careful file handling; [`options`] the checks every setting needs; [`severity`],
//! [`skipped`] and [`slurm_text`] are small shared types and Slurm's text forms; [`process`] is the
//! clock and the process's memory; [`command`] runs another system's command safely, and
//! [`running_job`] is a job that runs now as Slurm lists it.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod anomaly;
pub mod choice;
pub mod command;
pub mod lockfile;
pub mod options;
pub mod plain;
pub mod process;
pub mod running_job;
pub mod safe_fs;
pub mod series;
pub mod severity;
pub mod skipped;
pub mod slurm_text;
pub mod stats;
pub mod templates;
pub mod test_support;
pub mod text;
pub mod units;

pub use process::{now, peak_memory_mib, reset_peak_memory, resident_memory_mib};

/// The smartcore release the models' trees come from (a different one may not read them): every
/// model file records it, the diagnosis models' and the workflow models' alike.
pub const SMARTCORE_VERSION: &str = "0.7.0";
