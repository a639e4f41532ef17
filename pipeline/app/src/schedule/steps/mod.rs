//! One function per step: the work of each [`Step`] variant, a call into its stage, and
//! [`execute`], which picks the function and passes on what one step hands the next
//! ([`Handover`]).
//!
//! `per_job` has the steps that work on the jobs a run ingests, one job at a time, with a `job`
//! line on the log for each; `nightly` the steps over stored history (whole days, the workflows,
//! emails, models, retention), which the nightly DAG runs (the per-job DAG runs notify too);
//! `running` the running DAG's steps over the jobs that run now.
//! Each returns the jobs it worked on and named counts, or the error that makes the step fail
//! (the run then tries it again: see `run`).

mod nightly;
mod per_job;
mod running;

use std::path::Path;

use chrono::NaiveDate;

use super::context::{Counts, StepRun};
use super::state::IngestedJob;
use super::step::{On, Step};

/// What one step of a run hands the steps after it, since the stages never call each other:
/// the jobs the ingest step finished (for the features, classify and predict steps of the
/// ingested jobs), the rules' verdicts of each classify step (for the predict step after it),
/// and the running jobs listed, measured and judged (for the running steps after each).
#[derive(Default)]
pub(super) struct Handover {
    pub(super) ingested: Vec<IngestedJob>,
    pub(super) judged: Vec<Judged>,
    pub(super) running: running::Running,
}

/// The rules' verdicts on one job (per-job path) or on one whole day, from a classify step.
pub(super) struct Judged {
    /// The classify step's `on`, which the predict step after it matches.
    pub(super) on: On,
    pub(super) day: NaiveDate,
    /// The job's own part and its cluster:id for the log; `None` for a whole day.
    pub(super) job: Option<(String, String)>,
    pub(super) verdicts: Vec<jobsight_rules::Verdict>,
}

/// Runs one step: the call into its stage. Returns the jobs it worked on and named counts, or
/// the error that makes it fail. The ingest step adds the jobs it finishes to `handover` and to
/// the carried-over list at `carried_path`; the features and classify steps of the ingested jobs
/// work on those; each classify step leaves its verdicts in `handover` for the predict step.
pub(super) fn execute(
    run: &StepRun,
    handover: &mut Handover,
    carried_path: &Path,
) -> Result<Counts, String> {
    let ingested = &mut handover.ingested;
    match run.step {
        Step::Ingest { limit } => per_job::claim_and_ingest(run, *limit, ingested, carried_path),
        Step::Features { on: On::Ingested } => per_job::features_of_ingested(run, ingested),
        Step::Features { on: On::Running } => running::measure(run, &mut handover.running),
        Step::Classify { on } => {
            // A retried step starts over: its verdicts replace those of an attempt that failed.
            handover.judged.retain(|j| j.on != *on);
            let judged = &mut handover.judged;
            match on {
                On::Ingested => per_job::classify_ingested(run, &handover.ingested, judged),
                On::Days(n) => nightly::classify_days(run, *n, judged),
                On::Running => running::judge(run, &mut handover.running),
            }
        }
        Step::Predict { on } => {
            let judged: Vec<&Judged> = handover.judged.iter().filter(|j| j.on == *on).collect();
            let predicted = match on {
                On::Ingested => per_job::predict_ingested(run, &judged),
                On::Days(_) => nightly::predict_days(run, &judged),
                On::Running => Err("the models judge finished jobs only".into()),
            };
            if predicted.is_ok() {
                // Their one reader is done: a whole day's verdicts are not held through the
                // report step after it.
                handover.judged.retain(|j| j.on != *on);
            }
            predicted
        }
        Step::Features { on: On::Days(n) } => nightly::features_of_days(run, *n),
        Step::Notify { critical_only } => nightly::send_emails(run, *critical_only),
        Step::Summarize { days } => nightly::summarize_days(run, *days),
        Step::Report { days } => nightly::write_report_pages(run, *days),
        Step::Compact { days } => nightly::compact_days(run, *days),
        Step::SlurmWorkflows { days } => nightly::rebuild_slurm_workflows(run, *days),
        Step::WorkflowScore => nightly::score_workflow_tasks(run),
        Step::Retrain => nightly::retrain_models(run),
        Step::Retain { keep_days } => nightly::remove_old_partitions(run, *keep_days),
        Step::ListRunning => running::list(run, &mut handover.running),
        Step::Act => running::act(run, &handover.running),
        Step::RunningPage => running::page(run, &handover.running),
    }
}
