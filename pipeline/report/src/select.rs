//! What the pages compare and chart, chosen before anything is drawn: the healthy run each job is
//! compared with ([`reference_runs`], [`References`]) and the order of a job's metrics
//! ([`job_metrics_ranked`]), which decides which telemetry is loaded at all
//! ([`metrics_to_load`]). The render crate's pages rank and compare with these same functions, so
//! what the stage loads is what a page charts.
//!
//! One module per choice (`reference`, `rank`); each item is re-exported here, so callers keep
//! naming `select::…` whichever module holds it.

mod rank;
mod reference;

pub use rank::{deviation, family, job_metrics_ranked, metrics_to_load, ranked_metrics};
pub use reference::{References, reference_runs};
