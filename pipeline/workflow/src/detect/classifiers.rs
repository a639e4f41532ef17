//! The supervised classifiers and what they learn from: the task classifier (seeded single-tree
//! forests over each task's z-scores, its host's, and its run time against its kind in its run)
//! and the run classifier (a random forest over each run's host figures).

use std::collections::{BTreeMap, HashMap};

use smartcore::ensemble::random_forest_classifier::{
    RandomForestClassifier, RandomForestClassifierParameters,
};
use smartcore::linalg::basic::matrix::DenseMatrix;

use jobsight_base::stats;

use super::error::DetectError;
use super::task_score::{History, runtime_vs_run};
use super::tasks::{FIGURES, Task};

/// A host "stands out" on a figure above this z-score (a run-level feature).
const STANDS_OUT: f64 = 2.0;

/// The figures the supervised task classifier learns from: the task's own z-scores, its host's
/// (the unsupervised score's inputs), and the logarithm of its run time against its kind in its
/// run (0 without one).
pub fn task_features(tasks: &[&Task], history: &History, hosts: &[[f64; 5]]) -> Vec<Vec<f64>> {
    let vs_run = runtime_vs_run(tasks);
    tasks
        .iter()
        .zip(hosts)
        .zip(vs_run)
        .map(|((t, h), v)| {
            let mut row: Vec<f64> = history.z(t).to_vec();
            row.extend_from_slice(h);
            row.push(v.filter(|v| *v > 0.0).map_or(0.0, f64::ln));
            row
        })
        .collect()
}

/// The labelled tasks of `tasks`, with their host z-scores.
pub(super) fn labelled_only<'a>(
    tasks: &[&'a Task],
    hosts: &[[f64; 5]],
) -> (Vec<&'a Task>, Vec<[f64; 5]>) {
    tasks
        .iter()
        .zip(hosts)
        .filter(|(t, _)| t.anomalous.is_some())
        .map(|(t, h)| (*t, *h))
        .unzip()
}

/// Training rows one tree of the task classifier learns from (a seeded sample beyond it).
const TASK_ROWS_PER_TREE: usize = 3000;
/// Trees of the task classifier.
const TASK_TREES: u64 = 30;

/// The supervised task classifier: `TASK_TREES` trees, each on its own seeded sample of the
/// labelled training tasks (`y` 1 for anomalous), sampled by the tasks' names (`keys`), not their
/// places, so that the same tasks give the same trees whatever order the warehouse returned them
/// in. Empty when the tasks are not labelled both ways.
pub fn fit_task_trees(
    x: &[Vec<f64>],
    y: &[u32],
    keys: &[String],
    seed: u64,
) -> Result<Vec<RunForest>, DetectError> {
    use rayon::prelude::*;
    if x.is_empty() || !y.contains(&1) || !y.contains(&0) {
        return Ok(Vec::new());
    }
    (0..TASK_TREES)
        .into_par_iter()
        .map(|tree| {
            let mut rows: Vec<usize> = (0..x.len()).collect();
            let tree_seed = seed ^ tree.wrapping_mul(0x9e37_79b9);
            rows.sort_by_key(|&i| (stats::hash(&keys[i], tree_seed), &keys[i]));
            rows.truncate(TASK_ROWS_PER_TREE);
            let xs: Vec<Vec<f64>> = rows.iter().map(|&i| x[i].clone()).collect();
            let ys: Vec<u32> = rows.iter().map(|&i| y[i]).collect();
            let params = RandomForestClassifierParameters::default()
                .with_n_trees(1)
                .with_seed(seed.wrapping_add(tree));
            RunForest::fit(&dense(&xs)?, &ys, params).map_err(|e| DetectError::Fit(e.to_string()))
        })
        .collect()
}

/// Each task's share of `trees` that call it anomalous (0 without trees).
pub fn task_votes(trees: &[RunForest], x: &[Vec<f64>]) -> Result<Vec<f64>, DetectError> {
    if trees.is_empty() || x.is_empty() {
        return Ok(vec![0.0; x.len()]);
    }
    let m = dense(x)?;
    let calls: Vec<Vec<u32>> = trees
        .iter()
        .map(|t| t.predict(&m).map_err(|e| DetectError::Fit(e.to_string())))
        .collect::<Result<_, _>>()?;
    Ok((0..x.len())
        .map(|i| calls.iter().filter(|c| c[i] == 1).count() as f64 / calls.len() as f64)
        .collect())
}

/// The labelled tasks' features, labels (1: anomalous) and names, for the task classifier.
pub fn labelled_task_rows(
    tasks: &[&Task],
    history: &History,
    hosts: &[[f64; 5]],
) -> (Vec<Vec<f64>>, Vec<u32>, Vec<String>) {
    let (tasks, hosts) = labelled_only(tasks, hosts);
    (
        task_features(&tasks, history, &hosts),
        tasks
            .iter()
            .map(|t| u32::from(t.anomalous == Some(true)))
            .collect(),
        tasks
            .iter()
            .map(|t| format!("{}\n{}", t.run, t.task_id))
            .collect(),
    )
}

/// The run-level figures of each run in `runs`: per figure, over its hosts, the largest, the
/// 75th percentile, the median and the share of hosts above [`STANDS_OUT`].
pub fn run_features(tasks: &[&Task], hosts: &[[f64; 5]], runs: &[String]) -> Vec<Vec<f64>> {
    let mut per_run: HashMap<&str, BTreeMap<&str, [f64; 5]>> = HashMap::new();
    for (t, h) in tasks.iter().zip(hosts) {
        let host = t.host.as_deref().unwrap_or("");
        per_run.entry(t.run.as_str()).or_default().insert(host, *h);
    }
    runs.iter()
        .map(|run| {
            let hosts: Vec<[f64; 5]> = per_run
                .get(run.as_str())
                .map(|m| m.values().copied().collect())
                .unwrap_or_default();
            let mut row = Vec::with_capacity(FIGURES.len() * 4);
            for f in 0..FIGURES.len() {
                let mut v: Vec<f64> = hosts.iter().map(|h| h[f]).collect();
                v.sort_by(f64::total_cmp);
                let at = |q: f64| {
                    v.get(((v.len().max(1) - 1) as f64 * q).round() as usize)
                        .copied()
                };
                row.push(v.last().copied().unwrap_or(0.0));
                row.push(at(0.75).unwrap_or(0.0));
                row.push(at(0.5).unwrap_or(0.0));
                row.push(if v.is_empty() {
                    0.0
                } else {
                    v.iter().filter(|x| **x > STANDS_OUT).count() as f64 / v.len() as f64
                });
            }
            row
        })
        .collect()
}

/// A smartcore forest (the run labels') or one tree of the task classifier.
pub type RunForest = RandomForestClassifier<f64, u32, DenseMatrix<f64>, Vec<u32>>;

pub fn dense(rows: &[Vec<f64>]) -> Result<DenseMatrix<f64>, DetectError> {
    let width = rows.first().map_or(0, Vec::len);
    let values: Vec<f64> = rows.iter().flatten().copied().collect();
    DenseMatrix::new(rows.len(), width, values, false).map_err(|e| DetectError::Fit(e.to_string()))
}

pub fn fit_forest(x: &[Vec<f64>], y: &[u32], seed: u64) -> Result<RunForest, DetectError> {
    let params = RandomForestClassifierParameters::default()
        .with_n_trees(200)
        .with_seed(seed);
    RunForest::fit(&dense(x)?, &y.to_vec(), params).map_err(|e| DetectError::Fit(e.to_string()))
}
