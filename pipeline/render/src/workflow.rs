//! What a person reads of the workflow stage (`jobsight_workflow`): the evaluation of the task
//! score and the run classifier ([`render_eval`], `jobsight workflow eval` and `jobsight model
//! eval --workflows`) and a workflow model file's header ([`render_header`], `jobsight model
//! info` and after `model train --workflows`). The figures, a label's precision and recall among
//! them, are the stage's; only their turning into text is here.

use std::collections::BTreeSet;

use jobsight_base::text::printable;

use jobsight_workflow::detect::WorkflowEval;
use jobsight_workflow::model::Header;

/// The evaluation for people (`jobsight workflow eval`, `jobsight model eval --workflows`).
pub fn render_eval(e: &WorkflowEval) -> String {
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
    out += "task anomaly score (unsupervised: 15 signals of each task against its kind's history, pooled over its host in its run, weighted by how much each follows the host, against history; the flag also needs the run's other hosts):\n";
    out += &format!(
        "  ROC-AUC {}, average precision {} (Flow-Bench paper's best unsupervised ROC-AUC: 1000 Genome 0.610, Montage 0.570, Predict Future Sales 0.663)\n",
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
        out += "task classifier (supervised where tasks are labelled: a forest over each host of a run, its median z-scores against history and against the run's hosts, its evidence and its tasks' run times against their kinds in the run; a task gets its host's votes):\n";
        out += &format!(
            "  ROC-AUC {auc:.3}, average precision {}, accuracy {}, F1 of the anomalous tasks {} (Flow-Bench paper: supervised GNNs about 0.80 accuracy per workflow)\n",
            f3(e.supervised_task_average_precision),
            f3(e.supervised_task_accuracy),
            f3(e.supervised_task_f1),
        );
        if !e.supervised_task_accuracy_by_run_label.is_empty() {
            out += &format!(
                "  accuracy by run label, healthy / anomalous tasks: {}\n",
                e.supervised_task_accuracy_by_run_label
                    .iter()
                    .map(|a| format!(
                        "{} {} / {}",
                        printable(&a.run_label),
                        f3(a.healthy),
                        f3(a.anomalous)
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    out += "run labels (random forest on the run's shape: each phase's delays over its tasks, hosts, time and DAG):\n";
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
    for (l, s) in labels.iter().zip(e.run_label_scores()) {
        out += &format!(
            "  {l:width$} {:>9.3} {:>6.3} {:>6.3} {:>4}\n",
            s.precision, s.recall, s.f1, s.support
        );
    }
    out
}

/// The header for people (`model info`).
pub fn render_header(h: &Header) -> String {
    format!(
        "workflow model (format {} v{}), made {} by jobsight {} with smartcore {}\n\
         trained on {}: {} runs, {} tasks ({} labelled, {} anomalous); seed {}\n\
         task classifier: {} trees; run labels: {}\n",
        h.format,
        h.version,
        h.created,
        h.jobsight,
        h.smartcore,
        printable(&h.data),
        h.runs,
        h.tasks,
        h.labelled_tasks,
        h.anomalous_tasks,
        h.seed,
        h.task_trees,
        if h.run_labels.is_empty() {
            "none (fewer than two labels)".to_string()
        } else {
            h.run_labels
                .iter()
                .map(|(l, n)| format!("{} ({n} runs)", printable(l)))
                .collect::<Vec<_>>()
                .join(", ")
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model trained on six runs of each of two labels says so, label by label.
    #[test]
    fn the_header_names_the_runs_of_each_label() {
        let header = Header {
            format: jobsight_workflow::model::FORMAT.into(),
            version: jobsight_workflow::model::FORMAT_VERSION,
            jobsight: "0.1.0".into(),
            smartcore: "0.7.0".into(),
            created: "2026-11-20T00:00:00+00:00".into(),
            data: "/data".into(),
            runs: 12,
            tasks: 72,
            labelled_tasks: 72,
            anomalous_tasks: 18,
            run_labels: vec![("cpu".into(), 6), ("normal".into(), 6)],
            task_trees: 1,
            seed: 7,
            body_bytes: 0,
            body_fnv1a: String::new(),
        };
        assert!(render_header(&header).contains("cpu (6 runs), normal (6 runs)"));
    }
}
