//! The schedule: the only place that knows the order of the pipeline's work.
//!
//! A DAG ([`dag`]) is a cron schedule and an ordered list of [`Step`]s. [`run_dag`] runs one DAG
//! once: it builds nothing itself but takes a [`Context`] (resolved settings, the clock, the rule
//! book and models, the telemetry source), calls each stage as a library, logs one line per step
//! and per job ([`log`]), and records the run and each step in the `runs` table. The stages never
//! call each other: the per-job DAG hands the jobs its ingest step finished to its features,
//! classify and predict steps, a classify step hands its verdicts to the predict step after it,
//! and a nightly run works on whole days.
//!
//! Crash safety:
//! - one run per DAG at a time: a lock file under `<data>/.schedule/` that the kernel releases
//!   when its holder dies, however it dies;
//! - each job the ingest step stores is appended to `<data>/.schedule/<dag>.ingested.jsonl`
//!   (and synced) before its spool record leaves `cur/`, and the file is removed only when every
//!   step that works on those jobs succeeded: a run killed anywhere in between leaves them to the
//!   next run, which does them again (every step replaces its own parts, so nothing is
//!   duplicated);
//! - a failing step is tried again `retries` times in the same run, with backoff; the steps after
//!   it still run, and the run is recorded as failed with the error;
//! - the scheduled time of the last run is kept in `<data>/.schedule/<dag>.state.json`, from which
//!   [`dag::due`] catches a missed run up once.
//!
//! [`daemon`] runs every DAG on its schedule; [`status`] says whether the pipeline keeps up.
//!
//! Where each part lives: `step` is the closed set of steps, which `dag` reads from DAG files;
//! `context` is what a run works with; `run` runs a DAG ([`run_dag`], [`backfill`]) and `steps`
//! each step, one function per step, each a call into one stage; `state` keeps the files under
//! `<data>/.schedule/`; what a run did and its rows in `runs` are the warehouse's `run_report`;
//! `stage_inputs` is what one stage's results give another.

pub mod daemon;
pub mod dag;
pub mod log;
pub mod status;

mod context;
mod error;
mod run;
pub(crate) mod stage_inputs;
mod state;
mod step;
mod steps;

pub use context::{Clock, Context, RunRequest, Trigger, load_models};
pub use dag::{CatchUp, Dag};
pub use error::ScheduleError;
pub use jobsight_warehouse::catalog::run_report::{RunReport, StepOutcome, StepReport, hostname};
pub use log::{Log, LogFormat};
pub use run::{backfill, run_dag, sleep_unless_stopped};
pub use stage_inputs::{predict_judged, report_inputs};
pub use state::{DagLock, IngestedJob, LastRun, last_run, state_dir};
pub use step::{On, Step};
