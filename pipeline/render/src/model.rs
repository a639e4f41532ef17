//! What a person reads of the models: an evaluation report ([`render_report`], for `jobsight
//! model eval` and the demo) and a model file's header ([`render_header`], for `jobsight model
//! info` and after `model train`), as plain text. Presentation, not modelling: the figures are the
//! model stage's (`jobsight_model`), and nothing here computes one.

use jobsight_model::DEFAULT_UNKNOWN_BELOW;
use jobsight_model::EvalReport;
use jobsight_model::evaluate::Scores;
use jobsight_model::file::Header;

/// What `jobsight model bootstrap` did: the jobs, the labels, where the models went, and each
/// model's figures with every application left out in turn.
pub fn render_bootstrap(outcome: &jobsight_model::BootstrapOutcome) -> String {
    let mut out = format!(
        "training suite: {} job(s) submitted, {} stored, {} label(s) kept\n",
        outcome.submitted, outcome.stored, outcome.labels
    );
    for (kind, trained, installed) in &outcome.models {
        out.push_str(&match installed {
            Some(target) => format!(
                "{}: installed at {} (trained in {})\n",
                kind.name(),
                target.display(),
                trained.display()
            ),
            None => format!(
                "{}: {} (not installed: --install puts it at [model] {})\n",
                kind.name(),
                trained.display(),
                kind.name()
            ),
        });
    }
    for report in &outcome.evaluations {
        out.push('\n');
        out.push_str(&render_report(report));
    }
    out
}

/// The report as text: one line per class, then the overall figures and the confusion matrix.
pub fn render_report(report: &EvalReport) -> String {
    let mut out = String::new();
    let what = match (&report.model, report.folds, &report.hold_out) {
        (Some(m), _, _) => format!("model {m}"),
        (None, Some(k), _) => format!("{k}-fold cross-validation by job"),
        (None, None, Some(app)) => format!("application {app:?} held out"),
        _ if !report.per_application.is_empty() => format!(
            "leave-one-application-out over {} applications",
            report.per_application.len()
        ),
        _ => "evaluation".into(),
    };
    out.push_str(&format!(
        "{} {what}: {} labelled window(s) of {} job(s)\n",
        report.kind.name(),
        report.scores.windows,
        report.jobs
    ));
    if report.contaminate > 0.0 {
        out.push_str(&format!(
            "contaminated: {:.0} % of each fold's anomalous training jobs labelled healthy ({} window(s) over the folds)\n",
            report.contaminate * 100.0,
            report.contaminated_windows
        ));
    }
    if report.active > 0 {
        out.push_str(&format!(
            "active: the {} window(s) of each fold the model was least sure of labelled and trained on, judged on the rest ({} window(s) over the folds){}\n",
            report.active,
            report.actively_labelled,
            match report.active_batch {
                b if b == 0 || b >= report.active => String::new(),
                b => format!("; asked {b} at a time, trained again after each"),
            }
        ));
    }
    if report.no_history {
        out.push_str(
            "no history: each job judged alone, as its application's first run (no cut from its other runs)\n",
        );
    }
    if report.refine > 0 {
        out.push_str(&format!(
            "refined: up to {} round(s) of setting aside disputed training windows\n",
            report.refine
        ));
    }
    let table = |title: &str, s: &Scores, out: &mut String| {
        out.push_str(&format!(
            "{title}\n  {:<12} {:>9} {:>9} {:>9} {:>9}\n",
            "class", "precision", "recall", "F1", "windows"
        ));
        for c in &s.per_class {
            if c.support == 0 && c.precision == 0.0 {
                continue;
            }
            out.push_str(&format!(
                "  {:<12} {:>9.3} {:>9.3} {:>9.3} {:>9}\n",
                c.class, c.precision, c.recall, c.f1, c.support
            ));
        }
        out.push_str(&format!(
            "  macro F1 {:.3}; anomaly miss rate {:.3}; false-alarm rate {:.3}; unknown rate {:.3}\n",
            s.macro_f1, s.miss_rate, s.false_alarm_rate, s.unknown_rate
        ));
    };
    match report.unknown_below {
        Some(t) => table(
            &format!("verdicts (unknown below {t:.2} of the votes):"),
            &report.scores,
            &mut out,
        ),
        None => table(
            "verdicts (score above 1 = anomalous):",
            &report.scores,
            &mut out,
        ),
    }
    if let Some(forced) = &report.forced {
        table("top class, no unknown:", forced, &mut out);
    }
    if !report.per_application.is_empty() {
        out.push_str(&format!(
            "each application when left out:\n  {:<16} {:>6} {:>9} {:>9} {:>11} {:>9}\n",
            "application", "jobs", "windows", "macro F1", "false alarm", "unknown"
        ));
        for a in &report.per_application {
            out.push_str(&format!(
                "  {:<16} {:>6} {:>9} {:>9.3} {:>11.3} {:>9.3}\n",
                truncate(&a.application, 16),
                a.jobs,
                a.scores.windows,
                a.scores.macro_f1,
                a.scores.false_alarm_rate,
                a.scores.unknown_rate
            ));
        }
    }
    if !report.flagged_share.is_empty() {
        out.push_str("share of windows flagged, by true class:\n");
        for (c, s) in &report.flagged_share {
            out.push_str(&format!("  {c:<12} {s:.3}\n"));
        }
    }
    if let Some(detection) = &report.detection {
        render_detection(
            "the top class as healthy or not (whatever its share of the votes)",
            detection,
            &mut out,
        );
    }
    if let Some(together) = &report.together {
        render_detection(
            "with the anomaly score (a window anomalous when the score flags it or the top class is an anomaly)",
            together,
            &mut out,
        );
    }
    out.push_str("confusion (rows: truth; columns: verdict):\n");
    let mut columns = report.classes.clone();
    columns.push("unknown".into());
    out.push_str(&format!("  {:<12}", ""));
    for c in &columns {
        out.push_str(&format!(" {:>10}", truncate(c, 10)));
    }
    out.push('\n');
    for (c, row) in report.classes.iter().zip(&report.scores.confusion) {
        out.push_str(&format!("  {:<12}", truncate(c, 12)));
        for v in row {
            out.push_str(&format!(" {v:>10}"));
        }
        out.push('\n');
    }
    // A model judged as it is was trained before this run: its header's time, said as such.
    let training = if report.model.is_some() {
        format!("trained in {:.2} s (its header)", report.train_seconds)
    } else {
        format!("training {:.2} s", report.train_seconds)
    };
    out.push_str(&format!(
        "{training}; prediction {:.3} s ({:.0} windows/s)\n",
        report.predict_seconds, report.windows_per_second
    ));
    out
}

/// A way of flagging windows other than the report's own verdict (the diagnosis's top class;
/// with the score, `--with-score`): the share of anomalous windows flagged and of healthy ones,
/// by true class and per application left out.
fn render_detection(title: &str, flagging: &jobsight_model::Detection, out: &mut String) {
    let s = &flagging.scores;
    out.push_str(&format!(
        "{title}: {:.3} of anomalous windows flagged, {:.3} of healthy ones\n",
        1.0 - s.miss_rate,
        s.false_alarm_rate
    ));
    for (c, share) in &flagging.flagged_share {
        out.push_str(&format!("  {c:<12} {share:.3} flagged\n"));
    }
    if !flagging.per_application.is_empty() {
        out.push_str(&format!(
            "  {:<16} {:>6} {:>9} {:>9} {:>11}\n",
            "application", "jobs", "windows", "flagged", "false alarm"
        ));
        for a in &flagging.per_application {
            out.push_str(&format!(
                "  {:<16} {:>6} {:>9} {:>9.3} {:>11.3}\n",
                truncate(&a.application, 16),
                a.jobs,
                a.scores.windows,
                1.0 - a.scores.miss_rate,
                a.scores.false_alarm_rate
            ));
        }
    }
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// A short description of a model file's header, for `jobsight model info`.
pub fn render_header(h: &Header) -> String {
    let mut out = format!(
        "{} model, format {}, made {} by jobsight {} with smartcore {}\n",
        h.kind.name(),
        h.format_version,
        h.created,
        h.jobsight_version,
        h.smartcore_version
    );
    out.push_str(&format!(
        "windows: {} s every {} s; {} feature(s) from {} metric(s)\n",
        h.window_s,
        h.stride_s,
        h.features.len(),
        h.metrics.len()
    ));
    if !h.classes.is_empty() {
        out.push_str(&format!(
            "classes: {}; unknown below {:.2} of the votes\n",
            h.classes.join(", "),
            h.unknown_below.unwrap_or(DEFAULT_UNKNOWN_BELOW)
        ));
    }
    if let Some(set) = h.name_features {
        out.push_str(&format!(
            "a second forest names the anomaly of each window the first calls anomalous, from {} features\n",
            set.name()
        ));
    }
    let t = &h.training;
    out.push_str(&format!(
        "trained on {} window(s) of {} job(s) from {} ({}) in {:.1} s",
        t.windows, t.jobs, t.data, t.labels_from, t.seconds
    ));
    if !t.per_class.is_empty() {
        let per: Vec<String> = t
            .per_class
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        out.push_str(&format!(": {}", per.join(", ")));
    }
    out.push('\n');
    if t.refine > 0 {
        out.push_str(&format!(
            "refined in up to {} round(s): {} training window(s) set aside as disputed\n",
            t.refine, t.set_aside
        ));
    }
    if !t.baselines.is_empty() {
        let per: Vec<String> = t
            .baselines
            .iter()
            .map(|(app, cut, runs)| format!("{app} ×{cut:.2} ({runs} runs)"))
            .collect();
        out.push_str(&format!(
            "application baselines (the score's threshold for each): {}\n",
            per.join(", ")
        ));
    }
    if let Some(e) = &h.evaluation {
        let per: Vec<String> = e
            .per_class
            .iter()
            .filter(|c| c.support > 0)
            .map(|c| format!("{} {:.3}", c.class, c.f1))
            .collect();
        out.push_str(&format!(
            "held-out fifth of the jobs: macro F1 {:.3} (F1 {}); miss rate {:.3}, false alarms {:.3}, unknown {:.3}\n",
            e.macro_f1,
            per.join(", "),
            e.miss_rate,
            e.false_alarm_rate,
            e.unknown_rate
        ));
    }
    if !h.importance.is_empty() {
        out.push_str(
            "most important metrics (macro F1 drop when all of a metric's features are shuffled):\n",
        );
        for i in h.importance.iter().take(10) {
            out.push_str(&format!("  {:<48} {:.3}\n", i.feature, i.f1_drop));
        }
    }
    out
}
