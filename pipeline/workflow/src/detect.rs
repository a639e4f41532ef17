//! Anomalous tasks and runs of workflows, and how well they are found: `jobsight workflow eval`.
//!
//! **Task score (unsupervised).** A degraded worker (cores taken away, a disk throttled) slows
//! every task that runs on it. So each task is described against the history of its *kind* (its
//! id without Pegasus's `_ID<digits>`: `individuals_ID0000047` is an `individuals` task), as a
//! robust z-score (median and 1.4826 × MAD of the kind's history) of:
//! - `slack`: the share of its run time not spent on the CPU, 1 − cpu time / runtime;
//! - `runtime`, `stage_in`, `stage_out`, `stime`: the logarithms of its runtime, stage-in and
//!   stage-out delays and kernel time.
//!
//! A task's score is the median `slack` z-score of the tasks that ran on its host in its run
//! (the host's evidence, not one task's noise; the task's own when it has no host; the runtime's
//! z-score where the trace has no CPU time). No labels are used, and nothing is tuned per
//! workflow: the kinds and their history come from the data.
//!
//! **Run label (supervised).** Per run, over its hosts (each host's median z-score of each of the
//! five figures): the largest, the 75th percentile, the median and the share above 2. A random
//! forest (smartcore) learns the runs' labels from these.
//!
//! **Evaluation.** Folds by run (stratified by the run's label; a run's tasks never sit on both
//! sides): each fold's kind histories come from its training runs only, the test runs are scored
//! against them, and the forest is trained on the training runs' figures. Task scores are pooled
//! over the folds for ROC-AUC and average precision (anomalous = a label other than `none`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use serde::Serialize;
use smartcore::ensemble::random_forest_classifier::{
    RandomForestClassifier, RandomForestClassifierParameters,
};
use smartcore::linalg::basic::matrix::DenseMatrix;

use jobsight_base::stats;
use jobsight_base::text::printable;
use jobsight_warehouse::catalog::Table;
use jobsight_warehouse::catalog::rows::WorkflowScoreRow;
use jobsight_warehouse::query::{self, QueryError};

/// The figures each task is described by, against its kind's history.
pub const FIGURES: [&str; 5] = ["slack", "runtime", "stage_in", "stage_out", "stime"];
/// A z-score is bounded, so that one task with a near-zero spread of history cannot dominate.
const Z_LIMIT: f64 = 20.0;
/// A host "stands out" on a figure above this z-score (a run-level feature).
const STANDS_OUT: f64 = 2.0;

#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error("workflow_tasks: {0}")]
    Read(String),
    #[error(
        "found {runs} labelled workflow run(s) ({labels}); an evaluation needs at least {needed} of at least two labels: import them with `jobsight import pegasus`"
    )]
    TooFewRuns {
        runs: usize,
        labels: String,
        needed: usize,
    },
    #[error("the run classifier failed: {0}")]
    Fit(String),
}

/// One task, as the detector sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub run: String,
    pub task_id: String,
    /// The UTC day of the run's end (its partition).
    pub day: Option<chrono::NaiveDate>,
    pub kind: String,
    pub host: Option<String>,
    /// Anomalous by its label (`None`: not labelled).
    pub anomalous: Option<bool>,
    pub label: Option<String>,
    /// The raw figures, in [`FIGURES`] order (`None`: not measured).
    pub figures: [Option<f64>; 5],
}

/// A task's kind: its id without Pegasus's `_ID<digits>` suffix.
pub fn kind_of(task_id: &str) -> &str {
    match task_id.rsplit_once("_ID") {
        Some((kind, n))
            if !kind.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            kind
        }
        _ => task_id,
    }
}

/// The raw figures of a task from its columns.
pub fn figures(
    runtime: Option<f64>,
    cpu_time: Option<f64>,
    stage_in: Option<f64>,
    stage_out: Option<f64>,
    stime: Option<f64>,
) -> [Option<f64>; 5] {
    let log = |v: Option<f64>| v.filter(|v| *v >= 0.0).map(f64::ln_1p);
    let slack = match (cpu_time, runtime) {
        (Some(c), Some(r)) if r > 0.0 && c >= 0.0 => Some(1.0 - c / r),
        _ => None,
    };
    [
        slack,
        log(runtime),
        log(stage_in),
        log(stage_out),
        log(stime),
    ]
}

/// Reads every task of the warehouse with its run's label.
pub async fn read_tasks(
    data: &Path,
) -> Result<(Vec<Task>, BTreeMap<String, Option<String>>), DetectError> {
    let batches = query::run(
        data,
        "SELECT t.workflow_id, t.task_id, t.kind, t.host, t.label, t.runtime_s, t.cpu_time_s,
                t.stage_in_delay_s, t.stage_out_delay_s, t.stime_s, w.label AS run_label,
                to_char(w.\"end\", '%Y-%m-%d') AS run_day
         FROM workflow_tasks t JOIN workflows w ON t.workflow_id = w.workflow_id",
    )
    .await?;
    let mut tasks = Vec::new();
    let mut runs: BTreeMap<String, Option<String>> = BTreeMap::new();
    for batch in &batches {
        read_batch(batch, &mut tasks, &mut runs)?;
    }
    Ok((tasks, runs))
}

fn read_batch(
    batch: &RecordBatch,
    tasks: &mut Vec<Task>,
    runs: &mut BTreeMap<String, Option<String>>,
) -> Result<(), DetectError> {
    let text = |name: &str| -> Result<Vec<Option<String>>, DetectError> {
        let column = batch
            .column_by_name(name)
            .ok_or_else(|| DetectError::Read(format!("no column {name}")))?;
        let column = cast(column, &DataType::Utf8).map_err(|e| DetectError::Read(e.to_string()))?;
        let column = column.as_string::<i32>();
        Ok((0..column.len())
            .map(|i| column.is_valid(i).then(|| column.value(i).to_string()))
            .collect())
    };
    let number = |name: &str| -> Result<Vec<Option<f64>>, DetectError> {
        let column = batch
            .column_by_name(name)
            .ok_or_else(|| DetectError::Read(format!("no column {name}")))?;
        let column =
            cast(column, &DataType::Float64).map_err(|e| DetectError::Read(e.to_string()))?;
        let column = column.as_primitive::<Float64Type>();
        Ok((0..column.len())
            .map(|i| column.is_valid(i).then(|| column.value(i)))
            .collect())
    };
    let (run, task, kind, host, label, run_label, day) = (
        text("workflow_id")?,
        text("task_id")?,
        text("kind")?,
        text("host")?,
        text("label")?,
        text("run_label")?,
        text("run_day")?,
    );
    let (runtime, cpu, stage_in, stage_out, stime) = (
        number("runtime_s")?,
        number("cpu_time_s")?,
        number("stage_in_delay_s")?,
        number("stage_out_delay_s")?,
        number("stime_s")?,
    );
    for i in 0..batch.num_rows() {
        let (Some(run), Some(task)) = (&run[i], &task[i]) else {
            continue;
        };
        runs.insert(run.clone(), run_label[i].clone());
        tasks.push(Task {
            run: run.clone(),
            task_id: task.clone(),
            day: day[i].as_deref().and_then(|d| d.parse().ok()),
            // Parts written before the kind was stored have none: derive it as they did.
            kind: kind[i].clone().unwrap_or_else(|| kind_of(task).to_string()),
            host: host[i].clone(),
            anomalous: label[i].as_ref().map(|l| l != "none"),
            label: label[i].clone(),
            figures: figures(runtime[i], cpu[i], stage_in[i], stage_out[i], stime[i]),
        });
    }
    Ok(())
}

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
fn labelled_only<'a>(tasks: &[&'a Task], hosts: &[[f64; 5]]) -> (Vec<&'a Task>, Vec<[f64; 5]>) {
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

/// Folds by run, stratified by the run's label, seeded: run -> fold.
pub fn folds(
    runs: &BTreeMap<String, Option<String>>,
    k: usize,
    seed: u64,
) -> HashMap<String, usize> {
    let mut by_label: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (run, label) in runs {
        by_label
            .entry(label.as_deref().unwrap_or(""))
            .or_default()
            .push(run);
    }
    let mut out = HashMap::new();
    let mut next = 0;
    for members in by_label.values_mut() {
        members.sort_by_key(|r| (stats::hash(r, seed), *r));
        for run in members.iter() {
            out.insert(run.to_string(), next % k);
            next += 1;
        }
    }
    out
}

/// What `jobsight workflow eval` found.
#[derive(Debug, Clone, Serialize)]
pub struct WorkflowEval {
    pub runs: usize,
    pub runs_by_label: Vec<(String, usize)>,
    pub tasks: usize,
    pub anomalous_tasks: usize,
    pub folds: usize,
    pub task_roc_auc: Option<f64>,
    pub task_average_precision: Option<f64>,
    /// ROC-AUC of each task label against `none`.
    pub task_roc_auc_by_label: Vec<(String, f64)>,
    /// Run labels, and the confusion matrix of the runs (rows: truth, columns: verdict).
    pub run_labels: Vec<String>,
    pub run_confusion: Vec<Vec<usize>>,
    pub run_accuracy: f64,
    pub run_macro_f1: f64,
    /// Accuracy when labels are compared by family (the part before `_`: cpu_2 and cpu_3 are
    /// both `cpu`).
    pub run_family_accuracy: f64,
    /// The supervised task classifier (where tasks are labelled): ROC-AUC and average precision
    /// of its vote share, and accuracy and the anomalous class's F1 at half the votes.
    pub supervised_task_roc_auc: Option<f64>,
    pub supervised_task_average_precision: Option<f64>,
    pub supervised_task_accuracy: Option<f64>,
    pub supervised_task_f1: Option<f64>,
    pub seconds: f64,
}

/// Cross-validates the task score and the run classifier over `k` folds by run.
pub fn evaluate(
    tasks: &[Task],
    runs: &BTreeMap<String, Option<String>>,
    k: usize,
    seed: u64,
) -> Result<WorkflowEval, DetectError> {
    let started = std::time::Instant::now();
    let labelled: BTreeMap<String, String> = runs
        .iter()
        .filter_map(|(r, l)| Some((r.clone(), l.clone()?)))
        .collect();
    let names: Vec<String> = labelled
        .values()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if labelled.len() < k.max(2) || names.len() < 2 {
        return Err(DetectError::TooFewRuns {
            runs: labelled.len(),
            labels: if names.is_empty() {
                "no labels".into()
            } else {
                format!("labels: {}", printable(&names.join(", ")))
            },
            needed: k.max(2),
        });
    }
    let fold_of = folds(runs, k, seed);
    let class = |label: &str| names.iter().position(|n| n == label).unwrap_or(0) as u32;
    let mut scores: Vec<(f64, bool, Option<&str>)> = Vec::new();
    let mut supervised: Vec<(f64, bool)> = Vec::new();
    let mut confusion = vec![vec![0usize; names.len()]; names.len()];
    for fold in 0..k {
        let in_test = |t: &Task| fold_of.get(&t.run) == Some(&fold);
        let history = History::learn(tasks.iter().filter(|t| !in_test(t)));
        let (train, test): (Vec<&Task>, Vec<&Task>) = tasks.iter().partition(|t| !in_test(t));
        let train_hosts = host_scores(&train, &history);
        let test_hosts = host_scores(&test, &history);
        for (t, h) in test.iter().zip(&test_hosts) {
            if let Some(a) = t.anomalous {
                scores.push((h[0], a, t.label.as_deref()));
            }
        }
        // The supervised task classifier, on the labelled tasks of the training runs.
        let (test_l, test_lh) = labelled_only(&test, &test_hosts);
        let (x, y, keys) = labelled_task_rows(&train, &history, &train_hosts);
        let trees = fit_task_trees(&x, &y, &keys, seed.wrapping_add(fold as u64))?;
        let votes = task_votes(&trees, &task_features(&test_l, &history, &test_lh))?;
        for (t, v) in test_l.iter().zip(votes) {
            supervised.push((v, t.anomalous == Some(true)));
        }
        let split = |test_side: bool| -> Vec<String> {
            labelled
                .keys()
                .filter(|r| (fold_of.get(*r) == Some(&fold)) == test_side)
                .cloned()
                .collect()
        };
        let (train_runs, test_runs) = (split(false), split(true));
        if test_runs.is_empty() {
            continue;
        }
        let x_train = run_features(&train, &train_hosts, &train_runs);
        let y_train: Vec<u32> = train_runs.iter().map(|r| class(&labelled[r])).collect();
        let forest = fit_forest(&x_train, &y_train, seed)?;
        let x_test = run_features(&test, &test_hosts, &test_runs);
        let predicted = forest
            .predict(&dense(&x_test)?)
            .map_err(|e| DetectError::Fit(e.to_string()))?;
        for (run, p) in test_runs.iter().zip(predicted) {
            confusion[class(&labelled[run]) as usize][p as usize] += 1;
        }
    }
    let (s, y): (Vec<f64>, Vec<bool>) = scores.iter().map(|(s, a, _)| (*s, *a)).unzip();
    let by_label = {
        let kinds: BTreeSet<&str> = scores
            .iter()
            .filter_map(|(_, a, l)| a.then_some(*l).flatten())
            .collect();
        kinds
            .into_iter()
            .filter_map(|kind| {
                let (s, y): (Vec<f64>, Vec<bool>) = scores
                    .iter()
                    .filter(|(_, a, l)| !a || *l == Some(kind))
                    .map(|(s, a, _)| (*s, *a))
                    .unzip();
                Some((kind.to_string(), stats::roc_auc(&s, &y)?))
            })
            .collect()
    };
    let total: usize = confusion.iter().flatten().sum();
    let right: usize = (0..names.len()).map(|i| confusion[i][i]).sum();
    let family = |n: &str| n.split('_').next().unwrap_or(n).to_string();
    let family_right: usize = confusion
        .iter()
        .enumerate()
        .flat_map(|(i, row)| row.iter().enumerate().map(move |(j, c)| (i, j, *c)))
        .filter(|(i, j, _)| family(&names[*i]) == family(&names[*j]))
        .map(|(_, _, c)| c)
        .sum();
    let f1: Vec<f64> = (0..names.len())
        .map(|c| {
            let tp = confusion[c][c] as f64;
            let predicted: usize = confusion.iter().map(|row| row[c]).sum();
            let actual: usize = confusion[c].iter().sum();
            if predicted + actual == 0 {
                0.0
            } else {
                2.0 * tp / (predicted + actual) as f64
            }
        })
        .collect();
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let mut runs_by_label: BTreeMap<String, usize> = BTreeMap::new();
    for l in labelled.values() {
        *runs_by_label.entry(l.clone()).or_default() += 1;
    }
    let (sv, sy): (Vec<f64>, Vec<bool>) = supervised.iter().copied().unzip();
    let called = |v: f64| v >= 0.5;
    let (mut tp, mut fp, mut fneg, mut right_tasks) = (0usize, 0usize, 0usize, 0usize);
    for (v, a) in &supervised {
        match (called(*v), *a) {
            (true, true) => tp += 1,
            (true, false) => fp += 1,
            (false, true) => fneg += 1,
            (false, false) => {}
        }
        right_tasks += usize::from(called(*v) == *a);
    }
    let any = !supervised.is_empty();
    Ok(WorkflowEval {
        supervised_task_roc_auc: stats::roc_auc(&sv, &sy),
        supervised_task_average_precision: stats::average_precision(&sv, &sy),
        supervised_task_accuracy: any.then(|| ratio(right_tasks, supervised.len())),
        supervised_task_f1: any.then(|| ratio(2 * tp, 2 * tp + fp + fneg)),
        runs: labelled.len(),
        runs_by_label: runs_by_label.into_iter().collect(),
        tasks: tasks.len(),
        anomalous_tasks: tasks.iter().filter(|t| t.anomalous == Some(true)).count(),
        folds: k,
        task_roc_auc: stats::roc_auc(&s, &y),
        task_average_precision: stats::average_precision(&s, &y),
        task_roc_auc_by_label: by_label,
        run_labels: names.clone(),
        run_confusion: confusion,
        run_accuracy: ratio(right, total),
        run_macro_f1: f1.iter().sum::<f64>() / f1.len() as f64,
        run_family_accuracy: ratio(family_right, total),
        seconds: started.elapsed().as_secs_f64(),
    })
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

/// The evaluation for people.
pub fn render(e: &WorkflowEval) -> String {
    let f3 = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    let mut out = format!(
        "workflow runs: {} ({}); {} tasks, {} labelled anomalous; {} folds by run\n",
        e.runs,
        e.runs_by_label
            .iter()
            .map(|(l, n)| format!("{} {n}", printable(l)))
            .collect::<Vec<_>>()
            .join(", "),
        e.tasks,
        e.anomalous_tasks,
        e.folds
    );
    out += "task anomaly score (unsupervised: the CPU share of each task's run time against its kind's history, pooled over its host in its run):\n";
    out += &format!(
        "  ROC-AUC {}, average precision {} (Flow-Bench paper, best unsupervised on 1000 Genome: ROC-AUC 0.610, AP 0.380)\n",
        f3(e.task_roc_auc),
        f3(e.task_average_precision)
    );
    if !e.task_roc_auc_by_label.is_empty() {
        out += &format!(
            "  ROC-AUC per anomaly against healthy tasks: {}\n",
            e.task_roc_auc_by_label
                .iter()
                .map(|(l, v)| format!("{} {v:.3}", printable(l)))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if let Some(auc) = e.supervised_task_roc_auc {
        out += "task classifier (supervised where tasks are labelled: a forest over each task's z-scores, its host's, and its run time against its kind in its run):\n";
        out += &format!(
            "  ROC-AUC {auc:.3}, average precision {}, accuracy {}, F1 of the anomalous tasks {} (Flow-Bench paper: supervised GNNs about 0.80 accuracy per workflow)\n",
            f3(e.supervised_task_average_precision),
            f3(e.supervised_task_accuracy),
            f3(e.supervised_task_f1),
        );
    }
    out += "run labels (random forest on the runs' host figures):\n";
    out += &format!(
        "  accuracy {:.3}, macro F1 {:.3}; by family ({}) accuracy {:.3} (PEARC 2021, CNN on Gantt charts: 0.90-0.93)\n",
        e.run_accuracy,
        e.run_macro_f1,
        {
            let fams: BTreeSet<&str> = e
                .run_labels
                .iter()
                .map(|n| n.split('_').next().unwrap_or(n))
                .collect();
            fams.into_iter().collect::<Vec<_>>().join(" / ")
        },
        e.run_family_accuracy
    );
    let labels: Vec<String> = e.run_labels.iter().map(|l| printable(l)).collect();
    let width = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(5)
        .max(6);
    out += &format!(
        "  confusion (rows: truth; columns: verdict):\n  {:width$}",
        ""
    );
    for l in &labels {
        out += &format!(" {l:>width$}");
    }
    out.push('\n');
    for (l, row) in labels.iter().zip(&e.run_confusion) {
        out += &format!("  {l:width$}");
        for c in row {
            out += &format!(" {c:>width$}");
        }
        out.push('\n');
    }
    // Per label, as the job models' evaluation shows them.
    out += &format!("  {:width$} precision recall     F1 runs\n", "label");
    for (i, l) in labels.iter().enumerate() {
        let support: usize = e.run_confusion.get(i).map_or(0, |r| r.iter().sum());
        let called: usize = e.run_confusion.iter().filter_map(|r| r.get(i)).sum();
        let hit = e
            .run_confusion
            .get(i)
            .and_then(|r| r.get(i))
            .copied()
            .unwrap_or(0);
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let (precision, recall) = (ratio(hit, called), ratio(hit, support));
        let f1 = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        out += &format!("  {l:width$} {precision:>9.3} {recall:>6.3} {f1:>6.3} {support:>4}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(run: &str, kind: &str, host: &str, runtime: f64, cpu: f64, label: &str) -> Task {
        Task {
            run: run.into(),
            task_id: format!("{kind}_ID{runtime}"),
            day: None,
            kind: kind.into(),
            host: Some(host.into()),
            anomalous: Some(label != "none"),
            label: Some(label.into()),
            figures: figures(Some(runtime), Some(cpu), Some(1.0), Some(1.0), Some(1.0)),
        }
    }

    #[test]
    fn kinds() {
        assert_eq!(kind_of("individuals_ID0000047"), "individuals");
        assert_eq!(
            kind_of("create_dir_1000-genome_0_condorpool"),
            "create_dir_1000-genome_0_condorpool"
        );
        assert_eq!(kind_of("_ID12"), "_ID12");
        assert_eq!(kind_of("x_IDab"), "x_IDab");
    }

    #[test]
    fn a_slow_host_scores_every_task_on_it() {
        // Two kinds over three runs on hosts a and b; in run r3, host b has lost cores: its
        // tasks take twice as long for the same CPU time.
        let mut tasks = Vec::new();
        for (r, run) in ["r1", "r2", "r3"].iter().enumerate() {
            for (i, kind) in ["k1", "k1", "k2", "k2"].iter().enumerate() {
                let host = if i % 2 == 0 { "a" } else { "b" };
                let slow = *run == "r3" && host == "b";
                let base = if *kind == "k1" { 100.0 } else { 10.0 } + i as f64;
                let runtime = if slow { 2.0 * base } else { base };
                // Healthy tasks spend 80-91 % of their run time on the CPU.
                let cpu = (0.8 + 0.01 * (i + 4 * r) as f64) * base;
                let label = if slow { "cpu_2" } else { "none" };
                tasks.push(task(run, kind, host, runtime, cpu, label));
            }
        }
        let history = History::learn(tasks.iter());
        let refs: Vec<&Task> = tasks.iter().collect();
        let hosts = host_scores(&refs, &history);
        let score = |run: &str, host: &str| {
            refs.iter()
                .zip(&hosts)
                .find(|(t, _)| t.run == run && t.host.as_deref() == Some(host))
                .map(|(_, h)| h[0])
                .unwrap()
        };
        assert!(score("r3", "b") > 2.0, "{}", score("r3", "b"));
        for (run, host) in [
            ("r1", "a"),
            ("r1", "b"),
            ("r2", "a"),
            ("r2", "b"),
            ("r3", "a"),
        ] {
            assert!(score(run, host) < 2.0, "{run} {host}: {}", score(run, host));
        }
        let s: Vec<f64> = hosts.iter().map(|h| h[0]).collect();
        let y: Vec<bool> = tasks.iter().map(|t| t.anomalous == Some(true)).collect();
        assert_eq!(stats::roc_auc(&s, &y), Some(1.0));
        let runs = vec!["r1".to_string(), "r3".to_string()];
        let features = run_features(&refs, &hosts, &runs);
        assert_eq!(features[0].len(), FIGURES.len() * 4);
        assert!(
            features[1][0] > features[0][0],
            "the slow host is the run's largest slack"
        );
        assert_eq!(features[1][3], 0.5, "one host of two stands out");
        // Against the same kind in the same run: r3's slow k1 task took 202 s, its twin 100 s.
        let rows = super::score(&tasks);
        let slow = rows
            .iter()
            .find(|(_, r)| r.workflow_id == "r3" && r.task_id == "k1_ID202")
            .unwrap();
        let vs_run = slow.1.runtime_vs_run.unwrap();
        assert!((vs_run - 202.0 / 151.0).abs() < 1e-9, "{vs_run}");
    }

    #[test]
    fn without_cpu_time_the_runtime_stands_in() {
        let mut tasks: Vec<Task> = (0..5)
            .map(|i| task("r", "k", "h", 100.0 + i as f64, 50.0, "none"))
            .collect();
        let slow = Task {
            figures: figures(Some(300.0), None, None, None, None),
            ..tasks[0].clone()
        };
        tasks.push(slow.clone());
        let history = History::learn(tasks.iter());
        let z = history.z(&slow);
        assert!(z[0] > 2.0 && z[0] == z[1], "{z:?}");
    }

    #[test]
    fn folds_keep_runs_whole_and_labels_spread() {
        let runs: BTreeMap<String, Option<String>> = (0..20)
            .map(|i| {
                (
                    format!("r{i}"),
                    Some(if i < 10 { "normal" } else { "cpu_2" }.to_string()),
                )
            })
            .collect();
        let f = folds(&runs, 5, 42);
        assert_eq!(f.len(), 20);
        for fold in 0..5 {
            let members: Vec<&String> = f
                .iter()
                .filter(|(_, v)| **v == fold)
                .map(|(k, _)| k)
                .collect();
            assert_eq!(members.len(), 4, "{members:?}");
        }
        assert_eq!(f, folds(&runs, 5, 42), "seeded");
    }
}
