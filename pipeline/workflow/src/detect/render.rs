//! The evaluation as text for people (`jobsight workflow eval`'s table format). The rendering
//! of what a person reads is kept here, apart from the figures, because it is due to move to the
//! application crate.

use std::collections::BTreeSet;

use jobsight_base::text::printable;

use super::evaluation::WorkflowEval;

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
