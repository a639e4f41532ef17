//! What the pages show, read from the warehouse with SQL over one DataFusion session: a day's
//! (or one job's) rows of `jobs`, `job_summary`, `findings`, `classes`, `thresholds` and
//! `predictions`, its telemetry averaged into at most [`POINTS`] bins per series (one scan of the
//! day's telemetry, however many jobs), the healthy references, the history of users, and the
//! daily system report's `summaries` and `runs`.
//!
//! Every value is read as the table holds it; the pages clean and escape it. Job ids and dates
//! reach SQL only as quoted literals ([`literal`]).
//!
//! One module per kind of fact: `jobs` (a scope's jobs and every table's rows about them),
//! `binned` (the charted telemetry), `reference` (healthy runs and bands), `users` (a user's
//! history), `list` (the served job list, who owns a job, what people said of the rules), `workflows` (workflow runs) and `day` (the daily system report's figures), over the
//! query helpers of `sql`. Each item is re-exported here, so callers keep naming `load::…`
//! whichever module holds it.

mod binned;
mod day;
mod jobs;
mod list;
mod reference;
mod sql;
mod users;
mod workflows;

pub use binned::{POINTS, Series, Wanted, telemetry, want};
pub use day::{DayFacts, JobToLabel, PipelineRun, SummedRow, day_report};
pub use jobs::{Facts, JobFacts, NodeFacts, PER_NODE_METRICS, Scope, day_of, facts};
pub use jobsight_warehouse::query::literal;
pub use list::{JobOwner, JobQuery, ListedJob, SortBy, Visible, list, owners, rule_feedback};
pub use reference::{
    GroupBand, HealthyBand, HealthyBands, HealthyRun, MIN_REFERENCE_RUNS, ReferenceGroup,
    band_rows, healthy, reference_run_row, stored_reference,
};
pub use sql::HISTORY_DAYS;
pub(crate) use sql::{each_row, text};
pub use users::{RECENT_JOBS, RecentJob, UserHistory, jobs_between, user_histories};
pub use workflows::{
    RUN_LOOK_AHEAD_DAYS, WorkflowFacts, WorkflowTaskFacts, slurm_runs, workflow, workflow_ids,
};
