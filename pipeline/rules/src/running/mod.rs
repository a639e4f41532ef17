//! The rules of jobs that still run (group `running`): judged by the running DAG on a live job's
//! telemetry, one window per distinct dwell, never on a finished job ([`crate::evaluate`] leaves
//! them out).

use crate::{Finding, Group, JobData, RuleBook, Settings, judge};

/// The findings of the running rules whose dwell is `dwell_s` on one running job, whose
/// telemetry covers that dwell (the running DAG computes the features once per distinct dwell).
/// `data` must have been [`crate::prepare`]d.
pub fn evaluate_running(
    book: &RuleBook,
    data: &JobData,
    settings: &Settings,
    dwell_s: Option<u64>,
) -> Vec<Finding> {
    judge(book, data, settings, &|rule| {
        rule.group == Group::Running && rule.dwell_s == dwell_s
    })
    .findings
}

/// The distinct dwells of the running rules, each a window the running DAG computes features
/// over.
pub fn running_dwells(book: &RuleBook) -> Vec<Option<u64>> {
    let mut dwells: Vec<Option<u64>> = book
        .rules
        .iter()
        .filter(|r| r.group == Group::Running)
        .map(|r| r.dwell_s)
        .collect();
    dwells.sort();
    dwells.dedup();
    dwells
}
