//! jobsight's application: the `jobsight` binary's library. It composes the pipeline's crates,
//! each a layer of its own (the workspace's README has the layout):
//!
//! - the **stages**, which never call one another: `jobsight_ingest` (with the spool),
//!   `jobsight_features`, `jobsight_rules` (with classify), `jobsight_model`, `jobsight_notify`,
//!   `jobsight_summary`, `jobsight_report`, `jobsight_workflow`, `jobsight_running`;
//! - above them `jobsight_render`: every page, email and terminal view made of their results;
//! - below them the simulated cluster (`jobsight_sim`), the warehouse (`jobsight_warehouse`:
//!   the catalogue, SQL, the PostgreSQL endpoint) and the shared leaves (`jobsight_base`).
//!
//! This crate is the top: [`cli`] (arguments, one function per command), [`config`] (every stage's
//! settings, resolved once), [`access`] (who may see which jobs), [`schedule`] (the one place that
//! knows the order of the stages' work: DAGs, the daemon, the `runs` table, handing one stage's
//! results to the next), [`web`] (`serve --http`), [`running`] (the running DAG's work: listing,
//! judging, emailing and cancelling as the running stage decides; one step of the schedule, not yet
//! one step per part), [`bootstrap`] (`model bootstrap`: the training suite under Slurm) and
//! [`demo`] (the pipeline on a simulated cluster).
//!
//! Every crate below is named by its own name (`jobsight_ingest`, `jobsight_warehouse::query`,
//! ...), here, in the tests and in the benchmarks, so that a path says where its code lives.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod access;
pub mod bootstrap;
pub mod cli;
pub mod config;
pub mod demo;
pub mod running;
pub mod schedule;
pub mod web;
