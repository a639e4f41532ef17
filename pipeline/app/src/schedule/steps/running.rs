//! The running DAG's one step: [`crate::running::run_once`], with a `job` line on the log for
//! every warning and cancellation it decided.

use std::collections::BTreeMap;

use serde_json::json;

use crate::schedule::context::{Counts, StepRun};

/// Lists and judges the running jobs, writes the snapshot, warns and applies the cancel policy.
pub(super) fn judge_and_act(run: &StepRun) -> Result<Counts, String> {
    let ctx = run.ctx;
    let s = &ctx.settings;
    let inputs = crate::running::Inputs {
        data: ctx.data(),
        running: &s.running,
        features: &s.features,
        rules: &s.rules,
        notify: &s.notify,
        book: &ctx.book,
        telemetry: ctx.telemetry.as_deref(),
    };
    let now = ctx.clock.now();
    let outcome = crate::running::run_once(&inputs, now)?;
    let jobs = &outcome.snapshot.jobs;
    // The "what runs now" page beside the report pages (admins': it lists every user's jobs).
    let report = &ctx.settings.report;
    let page = jobsight_render::pages::PageTemplates::load(report)
        .and_then(|t| t.running(&outcome.snapshot, now))
        .map_err(|e| format!("the running page: {e}"))?;
    jobsight_report::write_page(&report.dir.join("running.html"), &page)
        .map_err(|e| e.to_string())?;
    for row in &outcome.acted.rows {
        run.job_event(
            &format!("{}:{}", row.cluster, row.job_id),
            vec![
                ("condition", json!(row.condition)),
                ("stage", json!(row.stage)),
                ("dry_run", json!(row.dry_run)),
                ("outcome", json!(row.outcome)),
            ],
        );
    }
    let mut counts = BTreeMap::new();
    counts.insert("running".into(), jobs.len() as u64);
    counts.insert(
        "not_judged".into(),
        jobs.iter().filter(|j| j.not_judged.is_some()).count() as u64,
    );
    counts.insert(
        "conditions".into(),
        jobs.iter().map(|j| j.conditions.len() as u64).sum(),
    );
    counts.insert("skipped".into(), outcome.snapshot.skipped.len() as u64);
    counts.insert("interventions".into(), outcome.acted.rows.len() as u64);
    counts.insert("emailed".into(), outcome.acted.emailed as u64);
    counts.insert("cancelled".into(), outcome.acted.cancelled as u64);
    counts.insert("would_cancel".into(), outcome.acted.would_cancel as u64);
    Ok((jobs.len() as u64, counts))
}
