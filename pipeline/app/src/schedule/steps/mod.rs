//! One function per step: the work of each [`Step`] variant, a call into its stage, and
//! [`execute`], which picks the function.
//!
//! `per_job` has the steps that work on the jobs a run ingests, one job at a time, with a `job`
//! line on the log for each; `nightly` the steps over stored history (whole days, the workflows,
//! emails, models, retention), which the nightly DAG runs (the per-job DAG runs notify too).
//! Each returns the jobs it worked on and named counts, or the error that makes the step fail
//! (the run then tries it again: see `run`).

mod nightly;
mod per_job;

use std::path::Path;

use super::context::{Counts, StepRun};
use super::state::IngestedJob;
use super::step::{On, Step};

/// Runs one step: the call into its stage. Returns the jobs it worked on and named counts, or
/// the error that makes it fail. The ingest step adds the jobs it finishes to `ingested` and to
/// the carried-over list at `carried_path`; the features and classify steps of the ingested jobs
/// work on `ingested`.
pub(super) fn execute(
    run: &StepRun,
    ingested: &mut Vec<IngestedJob>,
    carried_path: &Path,
) -> Result<Counts, String> {
    match run.step {
        Step::Ingest { limit } => per_job::claim_and_ingest(run, *limit, ingested, carried_path),
        Step::Features { on: On::Ingested } => per_job::features_of_ingested(run, ingested),
        Step::Classify { on: On::Ingested } => per_job::classify_ingested(run, ingested),
        Step::Features { on: On::Days(n) } => nightly::features_of_days(run, *n),
        Step::Classify { on: On::Days(n) } => nightly::classify_days(run, *n),
        Step::Notify { critical_only } => nightly::send_emails(run, *critical_only),
        Step::Summarize { days } => nightly::summarize_days(run, *days),
        Step::Report { days } => nightly::write_report_pages(run, *days),
        Step::Compact { days } => nightly::compact_days(run, *days),
        Step::SlurmWorkflows { days } => nightly::rebuild_slurm_workflows(run, *days),
        Step::WorkflowScore => nightly::score_workflow_tasks(run),
        Step::Retrain => nightly::retrain_models(run),
        Step::Retain { keep_days } => nightly::remove_old_partitions(run, *keep_days),
    }
}
