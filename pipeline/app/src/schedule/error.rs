//! The schedule's errors: what keeps a run of a DAG from starting (a DAG file, the rule book, the
//! models, another run holding the DAG's lock) or from being recorded. A failing step is not one
//! of them: the run records the step as failed and goes on with the next.

use std::path::PathBuf;

use super::dag;

#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error(transparent)]
    Dag(#[from] dag::DagError),
    #[error("cannot use {path}: {source}")]
    State {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("another run of DAG {dag} is under way (it holds {path}); try again later")]
    Busy { dag: String, path: PathBuf },
    #[error("cannot load the rule book: {0}")]
    Rules(#[from] jobsight_rules::RulesError),
    #[error("cannot load the models: {0}")]
    Models(#[from] jobsight_model::ModelError),
    #[error("cannot record the run of DAG {dag} in the runs table: {reason}")]
    Record { dag: String, reason: String },
    #[error("DAG {dag} has no step that works on whole days: there is nothing to backfill")]
    NothingToBackfill { dag: String },
}
