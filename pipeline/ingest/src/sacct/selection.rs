//! Which accounting record a spool record means. Job ids repeat in the accounting database (a
//! controller state reset, several clusters on one slurmdbd, array tasks), and a requeued job has
//! a record per run, so the record is chosen by id, cluster and submit time, and followed through
//! requeues to the run that ended the job.

use chrono::{DateTime, Utc};

use super::Accounting;
use jobsight_base::slurm_text::is_final_state as is_final;

/// Which accounting record a spool record refers to.
#[derive(Debug, PartialEq)]
pub enum Selection<'a> {
    /// Final: write the job.
    Settled(&'a Accounting),
    /// Known but not final yet (still running, completing, requeued): ask again later.
    Pending { reason: String },
    /// Not (yet) in the database: ask again later, give up after a while.
    Missing,
}

/// Picks the record of job `job_id` on `cluster` that a spool record enqueued at `enqueued_at` refers
/// to: raw id and cluster equal, submitted before the enqueue, the latest of those, unless that
/// one is the requeued run of a run that failed (`NODE_FAIL`, `PREEMPTED`, `BOOT_FAIL`) and had
/// not started by the enqueue: Slurm submits the job again as the failed run ends, before that
/// run's epilog writes its record, and starts it only after its requeue hold, so the record
/// means the failed run. ([`RUN_START_SLACK_S`] allows for a node's clock, which stamps a node
/// epilog's record.) When the run was requeued by `scontrol requeue`, the job continues in its
/// next run (same id, submitted later), so the chain is followed to the run that ended it: Slurm
/// 22.05 gives the interrupted run's epilog the same restart count as the final run's, and the
/// spool keeps only the first record of the two.
pub fn select<'a>(
    candidates: &'a [Accounting],
    job_id: u64,
    cluster: Option<&str>,
    enqueued_at: DateTime<Utc>,
) -> Selection<'a> {
    let runs: Vec<&Accounting> = candidates
        .iter()
        .filter(|a| a.job_id == job_id)
        .filter(|a| match (cluster, a.cluster.as_deref()) {
            (Some(want), Some(have)) => want == have,
            _ => true,
        })
        .collect();
    let Some(latest) = runs
        .iter()
        .copied()
        .filter(|a| a.submit.is_none_or(|s| s <= enqueued_at))
        .max_by_key(|a| a.submit)
    else {
        return Selection::Missing;
    };
    let started_by_then = latest
        .start
        .is_some_and(|s| s <= enqueued_at + chrono::Duration::seconds(RUN_START_SLACK_S));
    let mut run = match run_requeued_before(runs.iter().copied(), latest) {
        Some(failed) if !started_by_then => failed,
        _ => latest,
    };
    while run
        .state
        .as_deref()
        .is_some_and(|s| s.starts_with("REQUEUE"))
    {
        let next = runs
            .iter()
            .copied()
            .filter(|a| a.submit > run.submit)
            .min_by_key(|a| a.submit);
        match next {
            Some(next) => run = next,
            None => {
                return Selection::Pending {
                    reason: format!("job {job_id} was requeued; its next run is not in sacct yet"),
                };
            }
        }
    }
    match (&run.state, run.end) {
        (Some(state), Some(_)) if is_final(state) => Selection::Settled(run),
        (state, _) => Selection::Pending {
            reason: format!(
                "sacct says {} for job {job_id}",
                state.as_deref().unwrap_or("no state")
            ),
        },
    }
}

/// When the run of the same job before `run` (a requeued job's earlier run, in `candidates`)
/// had other nodes, a note saying so: the two runs' figures come from different machines. The
/// earlier run is one that ended in a state Slurm requeues from, at most [`REQUEUE_GAP_S`]
/// from `run`'s submission (a requeued run is submitted again when the earlier one ends), so an
/// older job that had the same id (a cluster whose ids started again) is not taken for it.
pub fn nodes_changed(candidates: &[Accounting], run: &Accounting) -> Option<String> {
    let before = run_requeued_before(candidates.iter(), run)?;
    let (now, then) = (run.nodes.as_deref()?, before.nodes.as_deref()?);
    let ran = |list: &str| !list.is_empty() && list != "None assigned";
    let cut = |list: &str| jobsight_base::text::clean(list, 80);
    (ran(now) && ran(then) && now != then).then(|| {
        format!(
            "this run ran on {}, the run before it ({}) on {}",
            cut(now),
            before.state.as_deref().unwrap_or("state unknown"),
            cut(then)
        )
    })
}

/// The run of the same job that `run` was requeued from, among `candidates`: one that ended in a
/// state Slurm requeues from, at most [`REQUEUE_GAP_S`] from `run`'s submission (a requeued run
/// is submitted again when the earlier one ends), so that an older job that had the same id (a
/// cluster whose ids started again) is not taken for it.
fn run_requeued_before<'a>(
    candidates: impl Iterator<Item = &'a Accounting>,
    run: &Accounting,
) -> Option<&'a Accounting> {
    let submit = run.submit?;
    let requeued_from = |state: &str| {
        state.starts_with("REQUEUE") || matches!(state, "NODE_FAIL" | "PREEMPTED" | "BOOT_FAIL")
    };
    candidates
        .filter(|a| a.job_id == run.job_id && a.cluster == run.cluster)
        .filter(|a| a.submit.is_some_and(|s| s < submit))
        .filter(|a| a.state.as_deref().is_some_and(requeued_from))
        .filter(|a| {
            a.end
                .is_some_and(|end| (submit - end).num_seconds().abs() <= REQUEUE_GAP_S)
        })
        .max_by_key(|a| a.submit)
}

/// How far apart, in seconds, a run's end and its requeued run's submission may lie.
const REQUEUE_GAP_S: i64 = 600;

/// How much later than a spool record's enqueue time a run may have started and still be the
/// run the record means: a node epilog's record is stamped by the node's clock. Less than
/// Slurm's requeue hold (`cred_expire`, 120 s by default; 30 s on the two-node test cluster).
const RUN_START_SLACK_S: i64 = 20;
