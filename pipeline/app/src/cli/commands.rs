//! One function per command: each takes its arguments and the resolved settings, calls the library
//! (the scheduler or a stage) and writes what a person reads to stdout; the rendering of what they
//! print lives in [`jobsight_render`] (the SQL results' in `jobsight_warehouse::query::render`).
//!
//! The functions live in one submodule per area, named like the submodule of `args` that holds
//! their arguments; they are re-exported here, so that the command line's `run` dispatches on
//! one list.

mod models;
mod scheduler;
mod simulation;
mod stages;
mod warehouse;

pub(super) use models::{label, model, rules, workflow};
pub(super) use scheduler::{check, daemon, dag};
pub(super) use simulation::{demo, simulate};
pub(super) use stages::{
    classify, features, ingest, job, jobs, notify, report, running, spool, summary,
};
pub(super) use warehouse::{ballista, import, serve, sql};
