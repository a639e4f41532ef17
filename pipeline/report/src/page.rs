//! From facts to what a page shows: the values of the job, user, day and workflow templates, the
//! charts, the healthy reference, the ranking of metrics and the `#SBATCH` lines a better request
//! would use. Pure functions, except [`day_page`], which reads the warehouse.
//!
//! One module per page (`job`, `user`, `day`, `workflow`), one per part of a job's page that
//! other code also needs (`reference`, `rank`, `suggest`), `format` for how every page writes
//! its values, and `sample` for the pages `jobsight check` renders. Each item is re-exported
//! here, so callers keep naming `page::…` whichever module holds it.

mod day;
mod format;
mod job;
mod rank;
mod reference;
mod sample;
mod suggest;
mod user;
mod workflow;

pub use day::day_page;
pub use job::{job_page, threshold_position};
pub use rank::{deviation, job_metrics_ranked, metrics_to_load, ranked_metrics};
pub use reference::{References, reference_runs};
pub use sample::samples;
pub use suggest::{Suggestion, suggestions};
pub use user::user_page;
pub use workflow::workflow_page;
