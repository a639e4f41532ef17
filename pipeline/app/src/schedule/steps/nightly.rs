//! The steps over stored history, which the nightly DAG runs: the features and findings of whole
//! days, the Slurm workflows and their scores, summaries, compaction, report pages, emails,
//! retraining and retention. The per-job DAG runs the notify step too, for critical findings.
//!
//! A day step works on the `days` days before the run's scheduled day, or on a backfill's day.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::NaiveDate;
use serde_json::json;

use crate::schedule::context::{Counts, RunRequest, StepRun, Trigger};
use crate::schedule::stage_inputs::{predict_judged, report_inputs};
use crate::schedule::step::On;
use crate::schedule::steps::Judged;
use jobsight_ingest::per_job;
use jobsight_ingest::spool::Spool;
use jobsight_render::pages::PageTemplates;
use jobsight_warehouse::catalog::{self, Table};

/// The tables whose small parts the compact step folds into day files: those the per-job path
/// and the scheduler write one file per job or per run into. The features, findings and
/// predictions tables get day files from the nightly features and classify steps already.
const COMPACTED_TABLES: [Table; 6] = [
    Table::Jobs,
    Table::JobSteps,
    Table::Telemetry,
    Table::Runs,
    Table::Interventions,
    Table::Feedback,
];

/// The days a day step covers in this request.
fn days_of(request: &RunRequest, n: u32) -> Vec<NaiveDate> {
    if let Some(days) = &request.days {
        return days.clone();
    }
    let today = request.scheduled_for.date_naive();
    (1..=n as i64)
        .rev()
        .filter_map(|back| today.checked_sub_days(chrono::Days::new(back as u64)))
        .collect()
}

/// The days of `wanted` that have jobs.
fn days_with_jobs(data: &Path, wanted: &[NaiveDate]) -> Vec<NaiveDate> {
    let have = jobsight_features::days_with_jobs(data);
    wanted
        .iter()
        .copied()
        .filter(|d| have.contains(d))
        .collect()
}

/// The features (and windows) of every job of the last `n` days that have jobs
/// ([`jobsight_features::compute_day_by`]), with a `day` line on the log for each day.
pub(super) fn features_of_days(run: &StepRun, n: u32) -> Result<Counts, String> {
    let data = run.ctx.data();
    let s = &run.ctx.settings;
    let mut counts = BTreeMap::new();
    let mut total = jobsight_features::Computed::default();
    // A backfill is work over history: on the Ballista cluster when one is configured.
    // A nightly day is one machine's work, fastest by the single pass.
    let method = if run.request.trigger == Trigger::Backfill {
        jobsight_features::Method::Auto
    } else {
        jobsight_features::Method::SinglePass
    };
    for day in days_with_jobs(data, &days_of(run.request, n)) {
        let (done, used) =
            jobsight_features::compute_day_by(method, &s.engine, data, day, &s.features, |_, _| {})
                .map_err(|e| format!("features of {day}: {e}"))?;
        run.log.event(
            "day",
            &[
                ("dag", json!(run.dag.name)),
                ("step", json!(run.step.name())),
                ("day", json!(day.to_string())),
                ("by", json!(used.name())),
                ("jobs", json!(done.jobs)),
                ("rows", json!(done.rows)),
                ("not_judgeable", json!(done.not_judgeable)),
            ],
        );
        total.add(&done);
    }
    counts.insert("days".into(), total.days as u64);
    counts.insert("rows".into(), total.rows as u64);
    counts.insert("window_rows".into(), total.window_rows as u64);
    counts.insert("not_judgeable".into(), total.not_judgeable as u64);
    Ok((total.jobs as u64, counts))
}

/// The rules' findings of every job of the last `n` days that have jobs
/// ([`jobsight_rules::classify::classify_day`]), with a `day` line on the log for each day; each
/// day's verdicts go to `judged`, for the predict step.
pub(super) fn classify_days(
    run: &StepRun,
    n: u32,
    judged: &mut Vec<Judged>,
) -> Result<Counts, String> {
    let ctx = run.ctx;
    let data = ctx.data();
    let s = &ctx.settings;
    let mut counts = BTreeMap::new();
    let mut total = jobsight_rules::classify::Classified::default();
    for day in days_with_jobs(data, &days_of(run.request, n)) {
        let verdicts = jobsight_rules::classify::classify_day(data, day, &ctx.book, &s.rules)
            .map_err(|e| format!("classifying {day}: {e}"))?;
        let findings: usize = verdicts.iter().map(|v| v.findings.len()).sum();
        run.log.event(
            "day",
            &[
                ("dag", json!(run.dag.name)),
                ("step", json!(run.step.name())),
                ("day", json!(day.to_string())),
                ("jobs", json!(verdicts.len())),
                ("findings", json!(findings)),
            ],
        );
        total.days += 1;
        total.add(&verdicts);
        judged.push(Judged {
            on: On::Days(n),
            day,
            job: None,
            verdicts,
        });
    }
    counts.insert("days".into(), total.days as u64);
    counts.insert("findings".into(), total.findings as u64);
    counts.insert("critical".into(), total.critical as u64);
    counts.insert("classes".into(), total.classes as u64);
    Ok((total.jobs as u64, counts))
}

/// The models' verdicts on every job of each day the classify step before it judged
/// ([`predict_judged`]), replacing the day's `predictions`, with a `day` line on the log for
/// each day. Without a configured model there is nothing to do.
pub(super) fn predict_days(run: &StepRun, judged: &[&Judged]) -> Result<Counts, String> {
    let ctx = run.ctx;
    let mut counts = BTreeMap::new();
    let Some(models) = ctx.models.as_deref() else {
        counts.insert("predictions".into(), 0);
        return Ok((0, counts));
    };
    let (mut days, mut predictions) = (0, 0);
    for j in judged {
        let p = predict_judged(ctx.data(), j.day, None, models, &ctx.book, &j.verdicts)
            .map_err(|e| format!("predicting {}: {e}", j.day))?;
        run.log.event(
            "day",
            &[
                ("dag", json!(run.dag.name)),
                ("step", json!(run.step.name())),
                ("day", json!(j.day.to_string())),
                ("predictions", json!(p.len())),
            ],
        );
        days += 1;
        predictions += p.len() as u64;
    }
    counts.insert("days".into(), days);
    counts.insert("predictions".into(), predictions);
    Ok((predictions, counts))
}

/// Emails to owners and admins ([`jobsight_render::email::run`]): digests and critical findings, or
/// the critical findings only.
pub(super) fn send_emails(run: &StepRun, critical_only: bool) -> Result<Counts, String> {
    let (ctx, request) = (run.ctx, run.request);
    let s = &ctx.settings;
    let mut counts = BTreeMap::new();
    let options = jobsight_notify::RunOptions {
        // The scheduled time decides the period and the workday, so a catch-up run
        // plans what the missed run would have planned.
        now: request
            .scheduled_for
            .max(ctx.clock.now() - chrono::TimeDelta::days(1)),
        critical_only,
        dry_run: false,
        // The admins' digest lists what the pipeline gave up on.
        given_up: Spool::open(&s.spool)
            .and_then(|spool| spool.failed())
            .unwrap_or_default(),
    };
    // The render crate writes the emails; the stage plans and sends them.
    let writer = jobsight_render::email::EmailTemplates::load(s.notify.templates.as_deref())
        .map_err(|e| e.to_string())?;
    let report = jobsight_render::email::run(ctx.data(), &s.notify, &options, &writer, &mut |_| {})
        .map_err(|e| e.to_string())?;
    counts.insert("messages".into(), report.prepared.len() as u64);
    counts.insert("sent".into(), report.delivered.sent.len() as u64);
    counts.insert("waiting".into(), report.delivered.waiting.len() as u64);
    counts.insert("failed".into(), report.delivered.failed.len() as u64);
    counts.insert("in_doubt".into(), report.recovered.in_doubt.len() as u64);
    counts.insert("no_address".into(), report.no_address.len() as u64);
    Ok((report.jobs_read as u64, counts))
}

/// The system-wide summaries of the last `days` days ([`jobsight_summary::write_days`]).
pub(super) fn summarize_days(run: &StepRun, days: u32) -> Result<Counts, String> {
    let s = &run.ctx.settings;
    let mut counts = BTreeMap::new();
    let days = days_of(run.request, days);
    let (Some(first), Some(last)) = (days.iter().min(), days.iter().max()) else {
        return Ok((0, counts));
    };
    let rows = jobsight_summary::write_days(run.ctx.data(), &s.summary, *first, *last)
        .map_err(|e| format!("summarizing {first} to {last}: {e}"))?;
    counts.insert("days".into(), days.len() as u64);
    counts.insert("rows".into(), rows as u64);
    Ok((0, counts))
}

/// The report pages of the last `days` days that have jobs ([`jobsight_render::pages::write_day`]),
/// with a `job` line on the log for each job whose page could not be written.
pub(super) fn write_report_pages(run: &StepRun, days: u32) -> Result<Counts, String> {
    let data = run.ctx.data();
    let s = &run.ctx.settings;
    let mut counts = BTreeMap::new();
    let inputs = report_inputs(s);
    let mut total = jobsight_report::Written::default();
    let days = days_with_jobs(data, &days_of(run.request, days));
    for day in &days {
        // The templates are read with each day's pages, so that a run with no day to write
        // never fails on a site's broken template (`jobsight check` finds it).
        let pages =
            PageTemplates::load(&s.report).map_err(|e| format!("report pages of {day}: {e}"))?;
        let written =
            jobsight_render::pages::write_day(data, &s.report, &pages, &inputs, *day, &mut |_| {})
                .map_err(|e| format!("report pages of {day}: {e}"))?;
        for (job, reason) in &written.failed {
            run.job_event(job, vec![("no_page", json!(reason))]);
        }
        total.jobs += written.jobs;
        total.users += written.users;
        total.days += written.days;
        total.workflows += written.workflows;
        total.failed.extend(written.failed);
    }
    counts.insert("days".into(), days.len() as u64);
    counts.insert("job_pages".into(), total.jobs as u64);
    counts.insert("user_pages".into(), total.users as u64);
    counts.insert("system_reports".into(), total.days as u64);
    counts.insert("workflow_pages".into(), total.workflows as u64);
    counts.insert("failed".into(), total.failed.len() as u64);
    Ok((total.jobs as u64, counts))
}

/// Folds the small parts of [`COMPACTED_TABLES`] of the last `days` days into day files
/// ([`catalog::compact_day`]), with a `compacted` line on the log for each table and day that
/// had any, and removes stale temporary files.
pub(super) fn compact_days(run: &StepRun, days: u32) -> Result<Counts, String> {
    let data = run.ctx.data();
    let mut counts = BTreeMap::new();
    // Ingest writes the parts compaction folds and removes: not both at once. Busy is an
    // error, so the step's retries wait for the ingest to end.
    // Without a spool (a warehouse filled by imports only) no ingest can be running.
    let _ingest = match Spool::open(&run.ctx.settings.spool) {
        Ok(spool) => Some(per_job::lock(&spool).map_err(|e| e.to_string())?),
        Err(_) => None,
    };
    let mut total = catalog::Compacted::default();
    let mut tables_days = 0;
    for day in days_of(run.request, days) {
        for table in COMPACTED_TABLES {
            let done = catalog::compact_day(data, table, day)
                .map_err(|e| format!("compacting {} of {day}: {e}", table.name()))?;
            if done.parts == 0 && done.leftovers == 0 {
                continue;
            }
            tables_days += 1;
            run.log.event(
                "compacted",
                &[
                    ("dag", json!(run.dag.name)),
                    ("table", json!(table.name())),
                    ("day", json!(day.to_string())),
                    ("parts", json!(done.parts)),
                    ("leftovers", json!(done.leftovers)),
                    ("rows", json!(done.rows)),
                ],
            );
            total.parts += done.parts;
            total.leftovers += done.leftovers;
        }
    }
    counts.insert("partitions".into(), tables_days);
    counts.insert(
        "stale_temporaries".into(),
        catalog::remove_stale_temporaries(data) as u64,
    );
    counts.insert("parts".into(), total.parts as u64);
    counts.insert("leftovers".into(), total.leftovers as u64);
    Ok((0, counts))
}

/// The workflow runs of the Slurm arrays and dependency chains that ended in the last `n` days
/// ([`jobsight_workflow::slurm::rebuild`]).
pub(super) fn rebuild_slurm_workflows(run: &StepRun, n: u32) -> Result<Counts, String> {
    let mut counts = BTreeMap::new();
    let days = days_of(run.request, n);
    let (Some(first), Some(last)) = (days.iter().min(), days.iter().max()) else {
        return Ok((0, counts));
    };
    // A backfill's day covers as many days as a nightly run, so chains stay whole.
    let first = &(*first).min(
        last.checked_sub_days(chrono::Days::new(u64::from(n.saturating_sub(1))))
            .unwrap_or(*last),
    );
    let runtime = tokio::runtime::Runtime::new()
        .map_err(|e| format!("cannot start the query runtime: {e}"))?;
    let done = jobsight_workflow::slurm::rebuild(&runtime, run.ctx.data(), *first, *last)
        .map_err(|e| format!("building the Slurm workflows of {first} to {last}: {e}"))?;
    counts.insert("jobs_read".into(), done.jobs_read as u64);
    counts.insert("runs".into(), done.runs as u64);
    counts.insert("tasks".into(), done.tasks as u64);
    counts.insert("days_written".into(), done.days_written as u64);
    counts.insert("days_cleared".into(), done.days_cleared as u64);
    Ok((0, counts))
}

/// Scores every workflow task of the warehouse against its kind's history into
/// `workflow_scores` ([`jobsight_workflow::detect`]), with the workflow model when one is
/// configured; nothing when no workflow was imported.
pub(super) fn score_workflow_tasks(run: &StepRun) -> Result<Counts, String> {
    use jobsight_workflow::detect;
    let data = run.ctx.data();
    let mut counts = BTreeMap::new();
    if !Table::WorkflowTasks.dir(data).is_dir() {
        counts.insert("tasks".into(), 0);
        return Ok((0, counts));
    }
    let runtime = tokio::runtime::Runtime::new()
        .map_err(|e| format!("cannot start the query runtime: {e}"))?;
    let (tasks, runs) = runtime
        .block_on(detect::read_tasks(data, detect::RunLabels::Skip))
        .map_err(|e| format!("reading the workflow tasks: {e}"))?;
    let mut rows = detect::score(&tasks);
    if let Some(path) = &run.ctx.settings.model.workflow {
        jobsight_workflow::model::WorkflowModel::read(path)
            .and_then(|m| m.apply(&tasks, &mut rows))
            .map_err(|e| format!("applying the workflow model: {e}"))?;
        counts.insert("with_model".into(), 1);
    }
    let (scored, flagged, days) =
        detect::write_scores(data, rows).map_err(|e| format!("writing workflow_scores: {e}"))?;
    counts.insert("runs".into(), runs.len() as u64);
    counts.insert("tasks".into(), scored as u64);
    counts.insert("flagged".into(), flagged as u64);
    counts.insert("days".into(), days as u64);
    Ok((0, counts))
}

/// Retrains the configured diagnosis model and refreshes the configured anomaly score's
/// baselines ([`jobsight_model::retrain`]), with `retrain` and `rebaseline` lines on the log.
pub(super) fn retrain_models(run: &StepRun) -> Result<Counts, String> {
    let s = &run.ctx.settings;
    let mut counts = BTreeMap::new();
    if s.model.diagnosis.is_none() && s.model.unsupervised.is_none() {
        counts.insert("no_model".into(), 1);
        run.log.event(
            "retrain",
            &[
                ("dag", json!(run.dag.name)),
                (
                    "outcome",
                    json!("nothing to retrain: no [model] diagnosis or unsupervised configured"),
                ),
            ],
        );
        return Ok((0, counts));
    }
    if let Some(model) = &s.model.diagnosis {
        retrain_diagnosis_model(run, model, &mut counts)?;
    }
    if let Some(model) = &s.model.unsupervised {
        refresh_score_baselines(run, model, &mut counts)?;
    }
    Ok((0, counts))
}

/// Retrains the diagnosis model at `model` when the warehouse has labels newer than it, and
/// rotates it when the new one is not worse; counts what it did (`no_new_labels`, `rotated` or
/// `kept`).
fn retrain_diagnosis_model(
    run: &StepRun,
    model: &Path,
    counts: &mut BTreeMap<String, u64>,
) -> Result<(), String> {
    use jobsight_model::retrain::{self, Retrained};
    let mut phase = |p: &str| {
        run.log.event(
            "retrain",
            &[("dag", json!(run.dag.name)), ("phase", json!(p))],
        );
    };
    let done = retrain::retrain_diagnosis(run.ctx.data(), model, &mut phase)
        .map_err(|e| format!("retraining {}: {e}", model.display()))?;
    let f1 = |v: &Option<f64>| v.map_or(json!(null), |f| json!((f * 1000.0).round() / 1000.0));
    let mut fields = vec![
        ("dag", json!(run.dag.name)),
        ("model", json!(model.display().to_string())),
    ];
    match &done {
        Retrained::NoNewLabels => {
            fields.push(("outcome", json!("no labels newer than the model")));
        }
        Retrained::Rotated {
            previous,
            old_f1,
            new_f1,
        } => {
            fields.push(("outcome", json!("rotated")));
            fields.push(("previous", json!(previous.display().to_string())));
            fields.push(("old_macro_f1", f1(old_f1)));
            fields.push(("new_macro_f1", f1(new_f1)));
        }
        Retrained::Kept {
            candidate,
            old_f1,
            new_f1,
        } => {
            fields.push((
                "outcome",
                json!("kept the current model: the candidate is worse"),
            ));
            fields.push(("candidate", json!(candidate.display().to_string())));
            fields.push(("old_macro_f1", f1(old_f1)));
            fields.push(("new_macro_f1", f1(new_f1)));
        }
    }
    run.log.event("retrain", &fields);
    let outcome = match done {
        Retrained::NoNewLabels => "no_new_labels",
        Retrained::Rotated { .. } => "rotated",
        Retrained::Kept { .. } => "kept",
    };
    counts.insert(outcome.into(), 1);
    Ok(())
}

/// Refreshes the per-application baselines of the anomaly score at `model` from the newest
/// days; counts what it did (`baselines_unchanged`, or `baselines_refreshed` and
/// `new_applications`).
fn refresh_score_baselines(
    run: &StepRun,
    model: &Path,
    counts: &mut BTreeMap<String, u64>,
) -> Result<(), String> {
    use jobsight_model::retrain::{self, Rebaselined};
    let mut phase = |p: &str| {
        run.log.event(
            "rebaseline",
            &[("dag", json!(run.dag.name)), ("phase", json!(p))],
        );
    };
    let done = retrain::rebaseline_score(run.ctx.data(), model, &mut phase)
        .map_err(|e| format!("refreshing the baselines of {}: {e}", model.display()))?;
    let mut fields = vec![
        ("dag", json!(run.dag.name)),
        ("model", json!(model.display().to_string())),
    ];
    match &done {
        Rebaselined::Unchanged => {
            fields.push(("outcome", json!("baselines unchanged")));
            counts.insert("baselines_unchanged".into(), 1);
        }
        Rebaselined::Refreshed {
            previous,
            applications,
            new,
        } => {
            fields.push(("outcome", json!("baselines refreshed")));
            fields.push(("previous", json!(previous.display().to_string())));
            fields.push(("applications", json!(applications)));
            fields.push(("new_applications", json!(new)));
            counts.insert("baselines_refreshed".into(), 1);
            counts.insert("new_applications".into(), new.len() as u64);
        }
    }
    run.log.event("rebaseline", &fields);
    Ok(())
}

/// Removes the partitions of raw telemetry and windows older than `keep_days` days, with a
/// `removed` line on the log for each.
pub(super) fn remove_old_partitions(run: &StepRun, keep_days: u32) -> Result<Counts, String> {
    let data = run.ctx.data();
    let mut counts = BTreeMap::new();
    let today = run.ctx.clock.now().date_naive();
    let oldest_kept = today
        .checked_sub_days(chrono::Days::new(u64::from(keep_days)))
        .unwrap_or(NaiveDate::MIN);
    let mut removed = 0;
    for table in [Table::Telemetry, Table::Windows] {
        for day in catalog::days(data, table) {
            if day < oldest_kept {
                let dir = catalog::partition_dir(data, table, day);
                std::fs::remove_dir_all(&dir)
                    .map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
                run.log.event(
                    "removed",
                    &[
                        ("dag", json!(run.dag.name)),
                        ("table", json!(table.name())),
                        ("day", json!(day.to_string())),
                    ],
                );
                removed += 1;
            }
        }
    }
    counts.insert("partitions_removed".into(), removed);
    Ok((0, counts))
}
