//! Why the demo stops: its own problems (the hook binary, the directory, a hook that failed)
//! and those of the stages and the scheduler it runs.

use std::io;
use std::path::PathBuf;

use crate::schedule;
use jobsight_features::FeaturesError;
use jobsight_ingest::spool::SpoolError;
use jobsight_model::ModelError;
use jobsight_rules::RulesError;
use jobsight_rules::classify::ClassifyError;
use jobsight_warehouse::catalog::CatalogError;
use jobsight_warehouse::query::QueryError;

/// What stopped the demo.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error(
        "the hook binary {path} does not exist: build it with `cargo build --workspace` or pass --epilog-bin"
    )]
    EpilogMissing { path: PathBuf },
    #[error("{path} already holds a spool: give the demo an empty or new directory")]
    NotEmpty { path: PathBuf },
    #[error("cannot create the demo directory: {0}")]
    TempDir(io::Error),
    #[error("cannot run {path} for job {job_id}: {source}")]
    Spawn {
        path: PathBuf,
        job_id: u64,
        source: io::Error,
    },
    #[error("{path} exited with {status} for job {job_id}: the hook must always exit 0")]
    HookExit {
        path: PathBuf,
        job_id: u64,
        status: std::process::ExitStatus,
    },
    #[error(transparent)]
    Spool(#[from] SpoolError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error(transparent)]
    Features(#[from] FeaturesError),
    #[error(transparent)]
    Classify(#[from] ClassifyError),
    #[error(transparent)]
    Rules(#[from] RulesError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("cannot create {path}: {source}")]
    CreateDir { path: PathBuf, source: io::Error },
    #[error(transparent)]
    Notify(#[from] jobsight_notify::NotifyError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Schedule(#[from] schedule::ScheduleError),
    #[error(transparent)]
    Dag(#[from] schedule::dag::DagError),
    #[error("cannot start the query runtime: {0}")]
    Runtime(io::Error),
    #[error("cannot write the report: {0}")]
    Output(io::Error),
}
