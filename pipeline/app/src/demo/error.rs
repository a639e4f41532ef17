//! Why the demo stops: its own problems (the hook binary, the directory, a hook that failed)
//! and those of the stages and the scheduler it runs.

use std::io;
use std::path::PathBuf;

use crate::catalog::CatalogError;
use crate::classify::ClassifyError;
use crate::features::FeaturesError;
use crate::model::ModelError;
use crate::notify;
use crate::query::QueryError;
use crate::rules::RulesError;
use crate::schedule;
use crate::spool::SpoolError;

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
    Notify(#[from] notify::NotifyError),
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
