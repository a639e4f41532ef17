//! The evaluation (`jobsight workflow eval`): folds by run, each fold's histories and
//! classifiers learnt from its training runs only, and the task score's and both classifiers'
//! figures pooled over the folds.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use jobsight_base::stats;
use jobsight_base::text::printable;

use super::classifiers::{
    dense, fit_forest, fit_task_classifier, out_of_fold_votes, run_features, task_votes,
};
use super::error::DetectError;
use super::task_score::{History, host_scores};
use super::tasks::Task;

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
    /// The classifier's accuracy at half the votes on the tasks of each run label, healthy and
    /// anomalous tasks apart (where a degraded host is missed, and where a healthy one is called).
    pub supervised_task_accuracy_by_run_label: Vec<RunLabelAccuracy>,
    pub seconds: f64,
}

/// The task classifier's accuracy on the labelled tasks of the runs of one label.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunLabelAccuracy {
    pub run_label: String,
    /// Accuracy on the healthy tasks and on the anomalous ones (`None` where there are none),
    /// and how many of each.
    pub healthy: Option<f64>,
    pub healthy_tasks: usize,
    pub anomalous: Option<f64>,
    pub anomalous_tasks: usize,
}

/// [`RunLabelAccuracy`] of each run label, from the pooled votes (vote share, anomalous, run
/// label), at half the votes.
fn accuracy_by_run_label(supervised: &[(f64, bool, Option<&str>)]) -> Vec<RunLabelAccuracy> {
    // Per run label: right and all, healthy and anomalous.
    let mut counts: BTreeMap<&str, [[usize; 2]; 2]> = BTreeMap::new();
    for (v, a, label) in supervised {
        let Some(label) = label else { continue };
        let c = &mut counts.entry(label).or_default()[usize::from(*a)];
        c[0] += usize::from((*v >= 0.5) == *a);
        c[1] += 1;
    }
    counts
        .into_iter()
        .map(|(label, [healthy, anomalous])| RunLabelAccuracy {
            run_label: label.to_string(),
            healthy: (healthy[1] > 0).then(|| ratio(healthy[0], healthy[1])),
            healthy_tasks: healthy[1],
            anomalous: (anomalous[1] > 0).then(|| ratio(anomalous[0], anomalous[1])),
            anomalous_tasks: anomalous[1],
        })
        .collect()
}

/// One run label's figures from the pooled confusion matrix, as the job models' evaluation gives
/// each class's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelScores {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    /// The runs truly of this label.
    pub support: usize,
}

impl WorkflowEval {
    /// The precision, recall, F1 and support of each of `run_labels`, in their order, from
    /// `run_confusion`.
    pub fn run_label_scores(&self) -> Vec<LabelScores> {
        (0..self.run_labels.len())
            .map(|i| {
                let support: usize = self.run_confusion.get(i).map_or(0, |r| r.iter().sum());
                let called: usize = self.run_confusion.iter().filter_map(|r| r.get(i)).sum();
                let hit = self
                    .run_confusion
                    .get(i)
                    .and_then(|r| r.get(i))
                    .copied()
                    .unwrap_or(0);
                let (precision, recall) = (ratio(hit, called), ratio(hit, support));
                let f1 = if precision + recall > 0.0 {
                    2.0 * precision * recall / (precision + recall)
                } else {
                    0.0
                };
                LabelScores {
                    precision,
                    recall,
                    f1,
                    support,
                }
            })
            .collect()
    }
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
    let cross_validation = CrossValidation {
        tasks,
        labelled: &labelled,
        names: &names,
        fold_of: folds(runs, k, seed),
        seed,
    };
    let mut pooled = Pooled {
        scores: Vec::new(),
        supervised: Vec::new(),
        confusion: vec![vec![0usize; names.len()]; names.len()],
    };
    for fold in 0..k {
        cross_validation.evaluate_fold(fold, &mut pooled)?;
    }
    let Pooled {
        scores,
        supervised,
        confusion,
    } = pooled;
    let (s, y): (Vec<f64>, Vec<bool>) = scores.iter().map(|(s, a, _)| (*s, *a)).unzip();
    let by_label = roc_auc_by_label(&scores);
    let (run_accuracy, run_macro_f1, run_family_accuracy) = run_figures(&confusion, &names);
    let mut runs_by_label: BTreeMap<String, usize> = BTreeMap::new();
    for l in labelled.values() {
        *runs_by_label.entry(l.clone()).or_default() += 1;
    }
    let (sv, sy): (Vec<f64>, Vec<bool>) = supervised.iter().map(|(v, a, _)| (*v, *a)).unzip();
    let called = |v: f64| v >= 0.5;
    let (mut tp, mut fp, mut fneg, mut right_tasks) = (0usize, 0usize, 0usize, 0usize);
    for (v, a, _) in &supervised {
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
        supervised_task_accuracy_by_run_label: accuracy_by_run_label(&supervised),
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
        run_accuracy,
        run_macro_f1,
        run_family_accuracy,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// What every fold reads: the tasks, the labelled runs (run -> label), the labels in order (a
/// run's class is its label's place among them), each run's fold, and the seed.
struct CrossValidation<'a> {
    tasks: &'a [Task],
    labelled: &'a BTreeMap<String, String>,
    names: &'a [String],
    fold_of: HashMap<String, usize>,
    seed: u64,
}

/// What the folds pool: each labelled test task's score, whether it is anomalous, and its label;
/// the task classifier's vote share on each labelled test task, whether it is anomalous and its
/// run's label; and
/// the runs' confusion matrix (rows: truth, columns: verdict).
struct Pooled<'a> {
    scores: Vec<(f64, bool, Option<&'a str>)>,
    supervised: Vec<(f64, bool, Option<&'a str>)>,
    confusion: Vec<Vec<usize>>,
}

impl<'a> CrossValidation<'a> {
    /// The class of a labelled run: its label's place among the labels.
    fn class_of(&self, run: &str) -> u32 {
        let label = &self.labelled[run];
        self.names.iter().position(|n| n == label).unwrap_or(0) as u32
    }

    /// Learns the kind histories and both classifiers from every run outside `fold`, and adds
    /// what they say of the runs in it to `pooled`.
    fn evaluate_fold(&self, fold: usize, pooled: &mut Pooled<'a>) -> Result<(), DetectError> {
        let (tasks, fold_of, seed) = (self.tasks, &self.fold_of, self.seed);
        let in_test = |t: &Task| fold_of.get(&t.run) == Some(&fold);
        let history = History::learn(tasks.iter().filter(|t| !in_test(t)));
        let (train, test): (Vec<&Task>, Vec<&Task>) = tasks.iter().partition(|t| !in_test(t));
        let train_hosts = host_scores(&train, &history);
        let test_hosts = host_scores(&test, &history);
        for (&t, h) in test.iter().zip(&test_hosts) {
            if let Some(a) = t.anomalous {
                pooled.scores.push((h.score(), a, t.label.as_deref()));
            }
        }
        // The supervised task classifier, on the labelled tasks of the training runs.
        let trees = fit_task_classifier(&train, &train_hosts, seed.wrapping_add(fold as u64))?;
        let test_votes = task_votes(&trees, &test, &test_hosts)?;
        for (t, &v) in test.iter().zip(&test_votes) {
            if t.anomalous.is_none() {
                continue;
            }
            let run_label = self.labelled.get(&t.run).map(String::as_str);
            pooled
                .supervised
                .push((v, t.anomalous == Some(true), run_label));
        }
        let split = |test_side: bool| -> Vec<String> {
            self.labelled
                .keys()
                .filter(|r| (fold_of.get(*r) == Some(&fold)) == test_side)
                .cloned()
                .collect()
        };
        let (train_runs, test_runs) = (split(false), split(true));
        if test_runs.is_empty() {
            return Ok(());
        }
        let train_votes = out_of_fold_votes(&train, &train_hosts, seed.wrapping_add(fold as u64))?;
        let x_train = run_features(&train, &history, &train_hosts, &train_votes, &train_runs);
        let y_train: Vec<u32> = train_runs.iter().map(|r| self.class_of(r)).collect();
        let forest = fit_forest(&x_train, &y_train, seed)?;
        let x_test = run_features(&test, &history, &test_hosts, &test_votes, &test_runs);
        let predicted = forest
            .predict(&dense(&x_test)?)
            .map_err(|e| DetectError::Fit(e.to_string()))?;
        for (run, p) in test_runs.iter().zip(predicted) {
            pooled.confusion[self.class_of(run) as usize][p as usize] += 1;
        }
        Ok(())
    }
}

/// The task score's ROC-AUC per anomaly label, each label's tasks against the healthy ones.
fn roc_auc_by_label(scores: &[(f64, bool, Option<&str>)]) -> Vec<(String, f64)> {
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
}

/// The run classifier's accuracy, macro F1, and accuracy when labels are compared by family,
/// from the confusion matrix of the labels `names`.
fn run_figures(confusion: &[Vec<usize>], names: &[String]) -> (f64, f64, f64) {
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
    (
        ratio(right, total),
        f1.iter().sum::<f64>() / f1.len() as f64,
        ratio(family_right, total),
    )
}

/// `a / b`, 0 when `b` is.
fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracy_by_run_label_keeps_healthy_and_anomalous_tasks_apart() {
        let votes = [
            (0.9, true, Some("hdd_5")),  // found
            (0.2, true, Some("hdd_5")),  // missed
            (0.6, false, Some("hdd_5")), // a healthy host called
            (0.1, false, Some("hdd_5")),
            (0.5, false, Some("normal")), // half the votes calls it
            (0.0, false, Some("normal")),
            (1.0, true, None), // a run without a label: not counted
        ];
        assert_eq!(
            accuracy_by_run_label(&votes),
            vec![
                RunLabelAccuracy {
                    run_label: "hdd_5".into(),
                    healthy: Some(0.5),
                    healthy_tasks: 2,
                    anomalous: Some(0.5),
                    anomalous_tasks: 2,
                },
                RunLabelAccuracy {
                    run_label: "normal".into(),
                    healthy: Some(0.5),
                    healthy_tasks: 2,
                    anomalous: None,
                    anomalous_tasks: 0,
                },
            ]
        );
    }
}
