//! The detector's one error: a query that failed, a table that could not be read or written, too
//! few labelled runs to evaluate, or a classifier that would not fit.

use jobsight_warehouse::query::QueryError;

#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error("workflow_tasks: {0}")]
    Read(String),
    #[error(
        "found {runs} labelled workflow run(s) ({labels}); an evaluation needs at least {needed} of at least two labels: import them with `jobsight import pegasus`"
    )]
    TooFewRuns {
        runs: usize,
        labels: String,
        needed: usize,
    },
    #[error("the run classifier failed: {0}")]
    Fit(String),
}
