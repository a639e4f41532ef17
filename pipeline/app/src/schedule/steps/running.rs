//! The running DAG's steps, one call into the stages each, handing over in [`Running`] what the
//! next one works on: list-running (`squeue --json`), features of the running jobs (their
//! telemetry so far), classify of the running jobs (the running rules; the snapshot), act (the
//! running stage's plan carried out: warnings, cancellations, `interventions`) and running-page.
//!
//! A dry run (`jobsight dag run running --dry-run`) lists, measures and judges as a run does,
//! but writes no snapshot, no row, no page, sends nothing and cancels nothing: the act step logs
//! what it would do, one `job` line per decision.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::running::watch::{self, Measured};
use crate::schedule::context::{Counts, StepRun, Trigger};
use jobsight_base::running_job::Listing;
use jobsight_running::Snapshot;
use jobsight_running::plan::{CANCEL, SECOND_WARNING, already_cancelled, in_effect, plan};

/// What the running steps of one run hand each other.
#[derive(Debug, Default)]
pub(in crate::schedule) struct Running {
    /// The time the run judges at: the listing's, for every step after it.
    taken_at: Option<DateTime<Utc>>,
    listing: Option<Listing>,
    measured: Option<Vec<Measured>>,
    snapshot: Option<Snapshot>,
}

fn dry(run: &StepRun) -> bool {
    run.request.trigger == Trigger::DryRun
}

/// Lists the jobs that run now, after checking that the cancel policy names running rules.
pub(super) fn list(run: &StepRun, running: &mut Running) -> Result<Counts, String> {
    let s = &run.ctx.settings;
    crate::running::check_policy(&s.running, &run.ctx.book)?;
    let listing = jobsight_ingest::squeue::list(&s.running.squeue, s.running.timeout)?;
    let counts = BTreeMap::from([
        ("running".to_string(), listing.jobs.len() as u64),
        ("skipped".to_string(), listing.skipped.len() as u64),
    ]);
    let jobs = listing.jobs.len() as u64;
    // A new listing starts the steps after it over.
    *running = Running {
        taken_at: Some(run.ctx.clock.now()),
        listing: Some(listing),
        ..Running::default()
    };
    Ok((jobs, counts))
}

/// Fetches each listed job's telemetry so far and computes the features of its windows.
pub(super) fn measure(run: &StepRun, running: &mut Running) -> Result<Counts, String> {
    let (Some(listing), Some(now)) = (&running.listing, running.taken_at) else {
        return Err("no listing of the running jobs was handed over".into());
    };
    let s = &run.ctx.settings;
    let measure = watch::Measure {
        book: &run.ctx.book,
        features: &s.features,
        telemetry: run.ctx.telemetry.as_deref(),
        running: &s.running,
    };
    let measured = watch::measure_all(&measure, &listing.jobs, now);
    let counts = BTreeMap::from([
        (
            "not_judged".to_string(),
            measured
                .iter()
                .filter(|m| m.live.not_judged.is_some())
                .count() as u64,
        ),
        (
            "windows".to_string(),
            measured.iter().map(|m| m.windows.len() as u64).sum(),
        ),
    ]);
    let jobs = measured.len() as u64;
    running.measured = Some(measured);
    running.snapshot = None;
    Ok((jobs, counts))
}

/// Judges the measured jobs with the running rules into the snapshot, and writes it (not in a
/// dry run).
pub(super) fn judge(run: &StepRun, running: &mut Running) -> Result<Counts, String> {
    let (Some(listing), Some(measured), Some(now)) =
        (&running.listing, &running.measured, running.taken_at)
    else {
        return Err("no measured running jobs were handed over".into());
    };
    let s = &run.ctx.settings;
    // A snapshot that cannot be read only loses the conditions' start times.
    let previous = Snapshot::read(&s.running.snapshot).unwrap_or(None);
    let snapshot = Snapshot {
        taken_at: now,
        rules_version: run.ctx.book.version.clone(),
        jobs: watch::judge_all(&run.ctx.book, &s.rules, measured, previous.as_ref()),
        skipped: listing.skipped.clone(),
    };
    if !dry(run) {
        crate::running::write_snapshot(&snapshot, &s.running.snapshot)?;
    }
    let jobs = &snapshot.jobs;
    let counts = BTreeMap::from([
        (
            "not_judged".to_string(),
            jobs.iter().filter(|j| j.not_judged.is_some()).count() as u64,
        ),
        (
            "conditions".to_string(),
            jobs.iter().map(|j| j.conditions.len() as u64).sum(),
        ),
    ]);
    let n = jobs.len() as u64;
    running.snapshot = Some(snapshot);
    Ok((n, counts))
}

/// Carries out what the running stage decides about the snapshot's conditions, with a `job`
/// line on the log for every warning and cancellation; in a dry run, only the lines of what it
/// would do.
pub(super) fn act(run: &StepRun, running: &Running) -> Result<Counts, String> {
    let Some(snapshot) = &running.snapshot else {
        return Err("no judged running jobs were handed over".into());
    };
    // Each attempt decides at its own time, as each run does: the audit's rows of an attempt
    // that failed after a cancellation are a part named by that time, which a retry must not
    // replace.
    let now = run.ctx.clock.now();
    let s = &run.ctx.settings;
    let data = run.ctx.data();
    let history = jobsight_running::audit::read_history(data, now)?;
    if dry(run) {
        return Ok(show_plan(run, snapshot, &history, now));
    }
    let acted = crate::running::act::act(data, &s.running, &s.notify, snapshot, &history, now)?;
    for row in &acted.rows {
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
    let counts = BTreeMap::from([
        ("interventions".to_string(), acted.rows.len() as u64),
        ("emailed".to_string(), acted.emailed as u64),
        ("cancelled".to_string(), acted.cancelled as u64),
        ("would_cancel".to_string(), acted.would_cancel as u64),
    ]);
    let jobs: BTreeSet<_> = acted.rows.iter().map(|r| (&r.cluster, &r.job_id)).collect();
    Ok((jobs.len() as u64, counts))
}

/// The dry run's act: a `job` line for each decision of the plan, nothing carried out.
fn show_plan(
    run: &StepRun,
    snapshot: &Snapshot,
    history: &jobsight_running::audit::History,
    now: DateTime<Utc>,
) -> Counts {
    let s = &run.ctx.settings;
    let settings = in_effect(&s.running, s.notify.test_mode);
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut jobs = BTreeSet::new();
    // As the act step: one cancellation per job, none of a job cancelled before.
    let mut cancelled = already_cancelled(history);
    for planned in plan(snapshot, history, &settings, now) {
        let job = &snapshot.jobs[planned.job];
        let condition = &job.conditions[planned.condition];
        let decision = &planned.decision;
        if decision.stage == CANCEL
            && decision.exempt.is_none()
            && !decision.dry_run
            && !cancelled.insert((job.cluster.clone(), job.job_id.clone()))
        {
            continue;
        }
        let (count, would) = match (decision.stage, &decision.exempt) {
            (_, Some(reason)) => (
                "would_exempt",
                format!("record that the policy exempts it ({reason})"),
            ),
            (CANCEL, None) if decision.dry_run => (
                "would_cancel",
                "record the cancellation the policy's dry run stands for".into(),
            ),
            (CANCEL, None) => ("would_cancel", "cancel the job and email its owner".into()),
            (SECOND_WARNING, None) if decision.dry_run => (
                "would_warn_again",
                "record the second warning the policy's dry run stands for".into(),
            ),
            (SECOND_WARNING, None) => (
                "would_warn_again",
                "email the owner the second warning".into(),
            ),
            _ => ("would_warn", "email the owner a warning".into()),
        };
        *counts.entry(count.to_string()).or_default() += 1;
        jobs.insert((&job.cluster, &job.job_id));
        let mut fields = vec![
            ("condition", json!(condition.rule)),
            ("stage", json!(decision.stage)),
            ("would", json!(would)),
        ];
        if let Some(at) = planned.cancel_at {
            fields.push((
                "cancel_at",
                json!(at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
            ));
        }
        run.job_event(&format!("{}:{}", job.cluster, job.job_id), fields);
    }
    (jobs.len() as u64, counts)
}

/// Writes the "what runs now" page beside the report pages (admins': it lists every user's
/// jobs).
pub(super) fn page(run: &StepRun, running: &Running) -> Result<Counts, String> {
    let (Some(snapshot), Some(now)) = (&running.snapshot, running.taken_at) else {
        return Err("no judged running jobs were handed over".into());
    };
    let report = &run.ctx.settings.report;
    let page = jobsight_render::pages::PageTemplates::load(report)
        .and_then(|t| t.running(snapshot, now))
        .map_err(|e| format!("the running page: {e}"))?;
    jobsight_report::write_page(&report.dir.join("running.html"), &page)
        .map_err(|e| e.to_string())?;
    Ok((snapshot.jobs.len() as u64, BTreeMap::new()))
}
