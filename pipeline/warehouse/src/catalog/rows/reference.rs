//! The rows of `reference_runs` and `reference_bands`: what the report chose to compare each job
//! of a day with, kept so that a page served later reads it back instead of choosing again.

use datafusion::arrow::datatypes::Field;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;

use super::super::Table;
use super::Column;

table_row! {
    /// One row of `reference_runs`: what a job of the day is compared with on its page, as the
    /// nightly report chose it: the band's group and the healthy run charted beside it.
    ReferenceRunRow => ReferenceRuns {
        job_id: String,
        /// Whose healthy runs the job's band is taken over: `application` (the job name),
        /// `user` or `cluster`.
        band_group: String,
        /// The job name or the user of `band_group` (empty for `cluster`).
        band_group_name: String,
        /// The newest healthy run of the same job name (the same user's first), if any.
        reference_job_id: Option<String>,
        /// Its `day` ('YYYY-MM-DD').
        reference_day: Option<String>,
        reference_user: Option<String>,
        reference_name: Option<String>,
    }
}

table_row! {
    /// One row of `reference_bands`: a group's healthy band of one metric over the 30 days up to
    /// the day (the 10th to 90th percentile of its healthy runs' job means).
    ReferenceBandRow => ReferenceBands {
        /// `application`, `user` or `cluster`.
        band_group: String,
        /// The job name or the user (empty for `cluster`).
        band_group_name: String,
        metric: String,
        /// Healthy runs with this metric in the group.
        runs: u64,
        low: f64,
        high: f64,
    }
}
