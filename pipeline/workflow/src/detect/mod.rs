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
//!
//! The modules, each reading only those listed before it: `error`, the stage's one error;
//! `tasks`, the tasks as read from the warehouse and their raw figures; `task_score`, the kinds'
//! histories, the unsupervised task score and its table; `classifiers`, the supervised task and
//! run classifiers and what they learn from; and `evaluation`, the cross-validation of both and
//! its figures. Everything public is re-exported here. The evaluation as text for people is the
//! render crate's (`jobsight_render::workflow`).

mod classifiers;
mod error;
mod evaluation;
mod task_score;
mod tasks;

pub use classifiers::{
    RunForest, dense, fit_forest, fit_task_classifier, out_of_fold_votes, run_features, task_votes,
};
pub use error::DetectError;
pub use evaluation::{LabelScores, RunLabelAccuracy, WorkflowEval, evaluate, folds};
pub use task_score::{
    FLAG_ABOVE, History, HostScore, host_scores, runtime_vs_run, score, write_scores,
};
pub use tasks::{Measures, N_SIGNALS, RunLabels, SIGNALS, Task, kind_of, read_tasks, signals};

#[cfg(test)]
mod tests {
    use super::*;

    use std::collections::BTreeMap;

    use jobsight_base::stats;

    /// A number in [-1, 1) from `i`, the same every time.
    fn noise(i: u64) -> f64 {
        let x = i
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((x >> 33) as f64 / (1u64 << 31) as f64) - 1.0
    }

    /// Twelve runs on four hosts, two kinds, three tasks of each kind per host. In runs 3, 7
    /// and 11 host `d` has lost cores (its tasks execute twice as long on the same CPU time);
    /// in run 5 the shared storage is slow for every host (stage-in three times as long). The
    /// queue wait is noise that follows no host.
    fn runs() -> Vec<Task> {
        let mut tasks = Vec::new();
        let mut n = 0;
        for r in 0..12 {
            for host in ["a", "b", "c", "d"] {
                for kind in ["k1", "k2"] {
                    for _ in 0..3 {
                        n += 1;
                        let degraded = host == "d" && r % 4 == 3;
                        let base = if kind == "k1" { 200.0 } else { 40.0 };
                        let exec =
                            base * (1.0 + 0.05 * noise(n)) * if degraded { 2.0 } else { 1.0 };
                        let cpu = 0.9 * base * (1.0 + 0.02 * noise(n + 1000));
                        let stage_in =
                            20.0 * (1.0 + 0.05 * noise(n + 2000)) * if r == 5 { 3.0 } else { 1.0 };
                        let label = if degraded { "cpu_2" } else { "none" };
                        let m = Measures {
                            runtime: Some((exec + stage_in).round()),
                            stage_in: Some(stage_in.round()),
                            stage_out: Some(2.0),
                            queue: Some((30.0 + 25.0 * noise(n + 3000)).round()),
                            cpu_time: Some(cpu),
                            ..Measures::default()
                        };
                        tasks.push(Task {
                            run: format!("r{r:02}"),
                            task_id: format!("{kind}_ID{n:07}"),
                            day: None,
                            kind: kind.into(),
                            host: Some(host.into()),
                            anomalous: Some(degraded),
                            label: Some(label.into()),
                            signals: signals(&m),
                            runtime_s: m.runtime,
                            start: Some(n as f64),
                            depth: Some(u32::from(kind == "k2")),
                        });
                    }
                }
            }
        }
        tasks
    }

    #[test]
    fn kinds() {
        assert_eq!(kind_of("individuals_ID0000047"), "individuals");
        assert_eq!(
            kind_of("xgboost_hp_tuning_ID0000020_pegasus-plan_ID0000016"),
            "xgboost_hp_tuning_ID0000020_pegasus-plan"
        );
        assert_eq!(
            kind_of("create_dir_1000-genome_0_condorpool"),
            "create_dir_1000-genome_0_condorpool"
        );
        assert_eq!(kind_of("_ID12"), "_ID12");
        assert_eq!(kind_of("x_IDab"), "x_IDab");
        assert_eq!(kind_of("x_ID12y_ID3"), "x_ID12y");
        assert_eq!(kind_of("x_ID12_y"), "x_ID12_y");
    }

    #[test]
    fn a_slow_host_is_flagged_on_every_task_and_a_slow_run_on_none() {
        let tasks = runs();
        let history = History::learn(tasks.iter());
        // Execution follows the host; the queue's noise does not; stage-in is the same for
        // every host of a run.
        let (w, learnt) = history.weights("k1");
        assert!(learnt);
        let exec = SIGNALS.iter().position(|s| *s == "exec").unwrap();
        let queue = SIGNALS.iter().position(|s| *s == "queue").unwrap();
        assert!(w[exec] > 0.5, "{w:?}");
        assert!(w[queue] < 0.2, "{w:?}");
        let refs: Vec<&Task> = tasks.iter().collect();
        let hosts = host_scores(&refs, &history);
        for (t, h) in tasks.iter().zip(&hosts) {
            if t.anomalous == Some(true) {
                assert!(h.score() > FLAG_ABOVE, "{} {:?}: {h:?}", t.run, t.host);
                assert!(h.vs_run > FLAG_ABOVE, "{} {:?}: {h:?}", t.run, t.host);
            } else if t.run == "r05" {
                // The slow storage slowed every host of the run: slower than history (the score
                // says so), no slower than the run's other hosts (what the classifier reads).
                assert!(h.vs_run < FLAG_ABOVE, "{} {:?}: {h:?}", t.run, t.host);
            } else {
                assert!(h.score() < FLAG_ABOVE, "{} {:?}: {h:?}", t.run, t.host);
            }
        }
        let (s, y): (Vec<f64>, Vec<bool>) = tasks
            .iter()
            .zip(&hosts)
            .filter(|(t, _)| t.run != "r05")
            .map(|(t, h)| (h.score(), t.anomalous == Some(true)))
            .unzip();
        assert_eq!(stats::roc_auc(&s, &y), Some(1.0));
        let ids = vec!["r00".to_string(), "r03".to_string(), "r05".to_string()];
        // Votes as a perfect task classifier would give them: the run's hosts' shares close
        // each row (largest, second, median, share called).
        let votes: Vec<f64> = tasks
            .iter()
            .map(|t| f64::from(u8::from(t.anomalous == Some(true))))
            .collect();
        let features = run_features(&refs, &history, &hosts, &votes, &ids);
        assert!(features.iter().all(|f| f.len() == features[0].len()));
        let vote_figures = |row: &[f64]| row[row.len() - 4..].to_vec();
        assert_eq!(vote_figures(&features[0]), [0.0; 4]);
        let called = vote_figures(&features[1]);
        assert!(
            called[0] == 1.0 && called[3] > 0.0 && called[3] < 1.0,
            "{called:?}"
        );
        assert!(features[1][0] > FLAG_ABOVE && features[0][0] < FLAG_ABOVE);
        // A slow run is not a slow host: its largest host comparison with the run (the run row's
        // seventh figure, after five of the scores and the largest against history) stays low.
        const LARGEST_AGAINST_RUN: usize = 6;
        assert!(
            features[2][LARGEST_AGAINST_RUN] < FLAG_ABOVE,
            "{:?}",
            features[2]
        );
        // Against the same kind in the same run: the degraded host's k1 tasks took about twice
        // the median of their twelve.
        let rows = score(&tasks);
        let (t, (_, row)) = tasks
            .iter()
            .zip(&rows)
            .find(|(t, _)| t.anomalous == Some(true) && t.kind == "k1")
            .unwrap();
        let vs_run = row.runtime_vs_run.unwrap();
        assert!((1.6..2.3).contains(&vs_run), "{} {vs_run}", t.task_id);
        assert!(row.flagged && row.slack_z > 2.0, "{row:?}");
        // The slow storage's run: slower than history, and no task flagged.
        let slow_run: Vec<_> = tasks
            .iter()
            .zip(&rows)
            .filter(|(t, _)| t.run == "r05")
            .map(|(_, (_, row))| row)
            .collect();
        assert!(slow_run.iter().any(|row| row.score > FLAG_ABOVE));
        assert!(slow_run.iter().all(|row| !row.flagged), "{slow_run:?}");
    }

    #[test]
    fn a_spread_never_falls_below_what_the_trace_resolves() {
        // Every task of the kind took 3 s and no CPU time (Montage's mDiffFit): a 4-s task is one
        // second slower, about one spread, not an outlier; and a CPU time that is always 0 says
        // nothing either way.
        let mut tasks: Vec<Task> = runs().into_iter().filter(|t| t.kind == "k2").collect();
        for t in &mut tasks {
            let m = Measures {
                runtime: Some(3.0),
                cpu_time: Some(0.0),
                ..Measures::default()
            };
            t.signals = signals(&m);
        }
        let history = History::learn(tasks.iter());
        let mut slower = tasks[0].clone();
        slower.signals = signals(&Measures {
            runtime: Some(4.0),
            cpu_time: Some(0.0),
            ..Measures::default()
        });
        let z = history.z(&slower);
        let runtime = z[0].unwrap();
        assert!((0.9..1.1).contains(&runtime), "{runtime}");
        assert_eq!(
            z[SIGNALS.iter().position(|s| *s == "cpu_rate").unwrap()],
            Some(0.0)
        );
        assert_eq!(
            z[SIGNALS.iter().position(|s| *s == "iowait").unwrap()],
            None
        );
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
