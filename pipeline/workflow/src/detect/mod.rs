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
//! application's (`jobsight::output::workflow`).

mod classifiers;
mod error;
mod evaluation;
mod task_score;
mod tasks;

pub use classifiers::{
    RunForest, dense, fit_forest, fit_task_trees, labelled_task_rows, run_features, task_features,
    task_votes,
};
pub use error::DetectError;
pub use evaluation::{LabelScores, WorkflowEval, evaluate, folds};
pub use task_score::{FLAG_ABOVE, History, host_scores, runtime_vs_run, score, write_scores};
pub use tasks::{FIGURES, Task, figures, kind_of, read_tasks};

#[cfg(test)]
mod tests {
    use super::*;

    use std::collections::BTreeMap;

    use jobsight_base::stats;

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
