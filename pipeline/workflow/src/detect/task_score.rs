//! The unsupervised task score: each kind's history (median and spread of each figure), a
//! task's robust z-scores against it, pooled over its host in its run, and the scores as rows of
//! `workflow_scores`. No labels are read.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use jobsight_base::stats;
use jobsight_warehouse::catalog::Table;
use jobsight_warehouse::catalog::rows::WorkflowScoreRow;

use super::error::DetectError;
use super::tasks::Task;

/// A z-score is bounded, so that one task with a near-zero spread of history cannot dominate.
const Z_LIMIT: f64 = 20.0;

/// The history of each kind: median and spread of each figure.
#[derive(Debug, Clone, Default)]
pub struct History {
    by_kind: HashMap<String, [Option<(f64, f64)>; 5]>,
}

impl History {
    /// Learns from `tasks` (no labels read).
    pub fn learn<'a>(tasks: impl Iterator<Item = &'a Task>) -> History {
        let mut values: HashMap<&str, [Vec<f64>; 5]> = HashMap::new();
        for t in tasks {
            let v = values.entry(t.kind.as_str()).or_default();
            for (f, x) in t.figures.iter().enumerate() {
                if let Some(x) = x {
                    v[f].push(*x);
                }
            }
        }
        let by_kind = values
            .into_iter()
            .map(|(kind, mut v)| {
                let robust = |xs: &mut Vec<f64>| {
                    let m = stats::median(xs)?;
                    let mut dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
                    let mad = stats::median(&mut dev)? * 1.4826;
                    Some((m, mad))
                };
                (kind.to_string(), std::array::from_fn(|f| robust(&mut v[f])))
            })
            .collect();
        History { by_kind }
    }

    /// A task's z-scores (0 where the figure or its history is missing or has no spread). A
    /// trace without CPU times has no slack: its runtime's z-score stands in for it.
    pub fn z(&self, task: &Task) -> [f64; 5] {
        let history = self.by_kind.get(&task.kind);
        let mut z: [f64; 5] =
            std::array::from_fn(|f| match (task.figures[f], history.and_then(|h| h[f])) {
                (Some(x), Some((m, s))) if s > 0.0 => ((x - m) / s).clamp(-Z_LIMIT, Z_LIMIT),
                _ => 0.0,
            });
        if task.figures[0].is_none() {
            z[0] = z[1];
        }
        z
    }
}

/// Each task's run time over the median run time of the tasks of its kind in its run (figure 1
/// is the run time's logarithm), in `tasks` order; `None` without a run time.
pub fn runtime_vs_run(tasks: &[&Task]) -> Vec<Option<f64>> {
    let runtime = |t: &Task| t.figures[1].map(f64::exp_m1);
    let mut in_run: HashMap<(&str, &str), Vec<f64>> = HashMap::new();
    for t in tasks {
        if let Some(r) = runtime(t) {
            in_run.entry((&t.run, &t.kind)).or_default().push(r);
        }
    }
    let medians: HashMap<(&str, &str), f64> = in_run
        .into_iter()
        .filter_map(|(k, mut v)| Some((k, stats::median(&mut v)?)))
        .collect();
    tasks
        .iter()
        .map(|t| {
            let m = *medians.get(&(t.run.as_str(), t.kind.as_str()))?;
            runtime(t).filter(|_| m > 0.0).map(|r| r / m)
        })
        .collect()
}

/// Each task's host-level z-scores: the median over the tasks of its host in its run (its own
/// without a host), in `tasks` order.
pub fn host_scores(tasks: &[&Task], history: &History) -> Vec<[f64; 5]> {
    let own: Vec<[f64; 5]> = tasks.iter().map(|t| history.z(t)).collect();
    pooled_by_host(tasks, &own)
}

/// The median of `own` (each task's z-scores, in `tasks` order) over the tasks of each host in
/// each run; a task without a host keeps its own.
fn pooled_by_host(tasks: &[&Task], own: &[[f64; 5]]) -> Vec<[f64; 5]> {
    let mut groups: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (i, t) in tasks.iter().enumerate() {
        if let Some(h) = &t.host {
            groups
                .entry((t.run.as_str(), h.as_str()))
                .or_default()
                .push(i);
        }
    }
    let mut out = own.to_vec();
    for members in groups.values() {
        let pooled: [f64; 5] = std::array::from_fn(|f| {
            let mut v: Vec<f64> = members.iter().map(|&i| own[i][f]).collect();
            stats::median(&mut v).unwrap_or(0.0)
        });
        for &i in members {
            out[i] = pooled;
        }
    }
    out
}

/// A task is flagged when its score passes this z-score. On the 1000 Genome runs (history of
/// all 351) it flags 3.8 % of the healthy tasks and 20 % of the anomalous ones (precision 0.72);
/// a cut of 1 would flag 15 % and 72 %: the score ranks well (ROC-AUC 0.88) but a degraded
/// host's tasks are often only a little slower than the spread of healthy ones.
pub const FLAG_ABOVE: f64 = 2.0;

/// Every task's score against the history of every run given (no labels read), as rows of
/// `workflow_scores`, with the day each belongs to.
pub fn score(tasks: &[Task]) -> Vec<(Option<chrono::NaiveDate>, WorkflowScoreRow)> {
    let history = History::learn(tasks.iter());
    let mut runs_of_kind: HashMap<&str, BTreeSet<&str>> = HashMap::new();
    for t in tasks {
        runs_of_kind.entry(&t.kind).or_default().insert(&t.run);
    }
    let refs: Vec<&Task> = tasks.iter().collect();
    let own: Vec<[f64; 5]> = tasks.iter().map(|t| history.z(t)).collect();
    let hosts = pooled_by_host(&refs, &own);
    let vs_run = runtime_vs_run(&refs);
    tasks
        .iter()
        .zip(own.iter().zip(hosts).zip(vs_run))
        .map(|(t, ((z, h), vs_run))| {
            (
                t.day,
                WorkflowScoreRow {
                    workflow_id: t.run.clone(),
                    task_id: t.task_id.clone(),
                    score: h[0],
                    flagged: h[0] > FLAG_ABOVE,
                    slack_z: z[0],
                    runtime_z: z[1],
                    stage_in_z: z[2],
                    stage_out_z: z[3],
                    stime_z: z[4],
                    history_runs: runs_of_kind
                        .get(t.kind.as_str())
                        .map_or(0, |r| r.len() as u32),
                    runtime_vs_run: vs_run,
                    supervised_share: None,
                    run_verdict: None,
                },
            )
        })
        .collect()
}

/// Writes the scores into `workflow_scores`, one part per day (replacing the day's scores).
/// Returns (tasks scored, tasks flagged, days written).
pub fn write_scores(
    data: &Path,
    rows: Vec<(Option<chrono::NaiveDate>, WorkflowScoreRow)>,
) -> Result<(usize, usize, usize), DetectError> {
    let mut by_day: BTreeMap<chrono::NaiveDate, Vec<WorkflowScoreRow>> = BTreeMap::new();
    let (mut scored, mut flagged) = (0, 0);
    for (day, row) in rows {
        let Some(day) = day else { continue };
        scored += 1;
        flagged += usize::from(row.flagged);
        by_day.entry(day).or_default().push(row);
    }
    for (day, rows) in &by_day {
        let batch = WorkflowScoreRow::batch(rows).map_err(|e| DetectError::Read(e.to_string()))?;
        jobsight_warehouse::catalog::write_part(
            data,
            Table::WorkflowScores,
            *day,
            "scores",
            &[batch],
        )
        .map_err(|e| DetectError::Read(e.to_string()))?;
    }
    Ok((scored, flagged, by_day.len()))
}
