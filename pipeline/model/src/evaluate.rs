//! Evaluation figures of a diagnosis, as E2EWatch reports them: per-class precision, recall and
//! F1, macro F1, the confusion matrix, the anomaly miss rate (anomalous windows called healthy),
//! the false-alarm rate (healthy windows called an anomaly) and the unknown rate. "Unknown" is
//! never right: it lowers the recall of the true class but is neither a miss nor a false alarm.
//!
//! Cross-validation splits by job, never by window: the windows of one run overlap and look alike,
//! so putting them on both sides would flatter the figures. Jobs are dealt into folds round-robin
//! after sorting by what they contain (their set of anomaly types) and a seeded hash, so every
//! fold gets its share of each kind of job.

use serde::{Deserialize, Serialize};

/// One class's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassScore {
    pub class: String,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    /// Windows truly of this class.
    pub support: u64,
}

/// Figures over a set of windows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scores {
    pub windows: u64,
    pub per_class: Vec<ClassScore>,
    pub macro_f1: f64,
    pub miss_rate: f64,
    pub false_alarm_rate: f64,
    pub unknown_rate: f64,
    /// Rows: true class; columns: predicted class, then "unknown".
    pub confusion: Vec<Vec<u64>>,
}

/// Figures of predictions (`None`: unknown) against the truth; class 0 is healthy.
pub fn scores(classes: &[String], truth: &[u32], predicted: &[Option<u32>]) -> Scores {
    let k = classes.len();
    let mut confusion = vec![vec![0u64; k + 1]; k];
    for (&t, p) in truth.iter().zip(predicted) {
        let column = p.map_or(k, |p| p as usize);
        if let Some(row) = confusion.get_mut(t as usize) {
            row[column.min(k)] += 1;
        }
    }
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let per_class: Vec<ClassScore> = (0..k)
        .map(|c| {
            let tp = confusion[c][c];
            let support: u64 = confusion[c].iter().sum();
            let called: u64 = confusion.iter().map(|row| row[c]).sum();
            let (precision, recall) = (ratio(tp, called), ratio(tp, support));
            let f1 = if precision + recall > 0.0 {
                2.0 * precision * recall / (precision + recall)
            } else {
                0.0
            };
            ClassScore {
                class: classes[c].clone(),
                precision,
                recall,
                f1,
                support,
            }
        })
        .collect();
    let present: Vec<&ClassScore> = per_class.iter().filter(|c| c.support > 0).collect();
    let macro_f1 = present.iter().map(|c| c.f1).sum::<f64>() / present.len().max(1) as f64;
    let anomalous: u64 = confusion
        .iter()
        .skip(1)
        .map(|r| r.iter().sum::<u64>())
        .sum();
    let missed: u64 = confusion.iter().skip(1).map(|r| r[0]).sum();
    let healthy: u64 = confusion.first().map_or(0, |r| r.iter().sum());
    let alarms: u64 = confusion.first().map_or(0, |r| r[1..k].iter().sum());
    let unknown: u64 = confusion.iter().map(|r| r[k]).sum();
    let windows = truth.len() as u64;
    Scores {
        windows,
        per_class,
        macro_f1,
        miss_rate: ratio(missed, anomalous),
        false_alarm_rate: ratio(alarms, healthy),
        unknown_rate: ratio(unknown, windows),
        confusion,
    }
}

pub use jobsight_base::stats::hash;

/// The fold of each job: `jobs` are (job id, kind of job) pairs.
pub fn folds(jobs: &[(String, String)], k: usize, seed: u64) -> Vec<(String, usize)> {
    let mut order: Vec<&(String, String)> = jobs.iter().collect();
    order.sort_by_key(|(id, kind)| (kind.clone(), hash(id, seed)));
    order
        .into_iter()
        .enumerate()
        .map(|(i, (id, _))| (id.clone(), i % k.max(1)))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn figures_by_hand() {
        let classes: Vec<String> = ["healthy", "memleak", "cpuoccupy"]
            .map(String::from)
            .to_vec();
        // healthy: 4 (1 false alarm); memleak: 3 (1 missed, 1 unknown); cpuoccupy: 2.
        let truth = [0, 0, 0, 0, 1, 1, 1, 2, 2];
        let predicted = [
            Some(0),
            Some(0),
            Some(0),
            Some(2),
            Some(1),
            Some(0),
            None,
            Some(2),
            Some(2),
        ];
        let s = scores(&classes, &truth, &predicted);
        assert_eq!(s.confusion[1], vec![1, 1, 0, 1]);
        assert_eq!(s.per_class[1].recall, 1.0 / 3.0);
        assert_eq!(s.per_class[1].precision, 1.0);
        assert_eq!(s.per_class[2].precision, 2.0 / 3.0);
        assert_eq!(s.miss_rate, 1.0 / 5.0);
        assert_eq!(s.false_alarm_rate, 1.0 / 4.0);
        assert_eq!(s.unknown_rate, 1.0 / 9.0);
        let f1_healthy = 2.0 * 0.75 * 0.75 / 1.5;
        assert!((s.per_class[0].f1 - f1_healthy).abs() < 1e-12);
    }

    #[test]
    fn folds_spread_each_kind_of_job() {
        let jobs: Vec<(String, String)> = (0..20)
            .map(|i| {
                (
                    format!("j{i}"),
                    if i < 10 { "memleak" } else { "none" }.to_string(),
                )
            })
            .collect();
        let folds = folds(&jobs, 5, 7);
        for f in 0..5 {
            let in_fold: Vec<&String> = folds.iter().filter(|x| x.1 == f).map(|x| &x.0).collect();
            assert_eq!(in_fold.len(), 4);
            let leaks = in_fold
                .iter()
                .filter(|id| id[1..].parse::<u32>().unwrap() < 10)
                .count();
            assert_eq!(leaks, 2, "fold {f}: {in_fold:?}");
        }
    }
}
