//! The summaries' one error: a query or a table that failed, or a query runtime that would not
//! start.

use jobsight_warehouse::catalog::CatalogError;
use jobsight_warehouse::query::QueryError;

#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("cannot start the query runtime: {0}")]
    Runtime(std::io::Error),
}
