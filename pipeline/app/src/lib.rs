//! jobsight's application: the `jobsight` binary's library. It composes the pipeline's crates,
//! each a layer of its own (the workspace's README has the layout):
//!
//! - the **stages**, which never call one another: `jobsight_ingest` (with the spool),
//!   `jobsight_features`, `jobsight_rules` (with classify), `jobsight_model`, `jobsight_notify`,
//!   `jobsight_summary`, `jobsight_report`, `jobsight_workflow`;
//! - below them the simulated cluster (`jobsight_sim`), the warehouse (`jobsight_warehouse`:
//!   the catalogue, SQL, the PostgreSQL endpoint) and the shared leaves (`jobsight_base`).
//!
//! This crate is the top: [`cli`] (arguments, one function per command), [`config`] (every
//! stage's settings, resolved once), [`access`] (who may see which jobs), [`schedule`] (the one place that knows the order of the
//! stages' work: DAGs, the daemon, the `runs` table, handing one stage's results to the next),
//! [`output`] (what the commands print) and [`demo`] (the pipeline on a simulated cluster).
//!
//! Each crate below is re-exported under its module name (`jobsight::ingest`, `jobsight::query`,
//! ...), so that the tests, the benchmarks and this crate name every part one way.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod access;
pub mod bootstrap;
pub mod cli;
pub mod config;
pub mod demo;
pub mod output;
pub mod running;
pub mod schedule;
pub mod web;

pub use jobsight_features as features;
pub use jobsight_ingest as ingest;
pub use jobsight_ingest::spool;
pub use jobsight_model as model;
pub use jobsight_notify as notify;
pub use jobsight_report as report;
pub use jobsight_rules as rules;
pub use jobsight_rules::classify;
pub use jobsight_sim as simulate;
pub use jobsight_summary as summary;
pub use jobsight_warehouse::{catalog, query, serve};
pub use jobsight_workflow as workflow;
