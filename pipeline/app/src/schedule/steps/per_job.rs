//! The per-job DAG's steps: claim finished jobs from the spool and store their accounting and
//! telemetry, then compute the features of, classify and predict the jobs the run ingested (with
//! those an earlier run ingested but did not finish judging), one job at a time, with a `job`
//! line on the log for each.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use crate::schedule::context::{Counts, StepRun};
use crate::schedule::stage_inputs::predict_judged;
use crate::schedule::state::{IngestedJob, append_carried};
use crate::schedule::step::On;
use crate::schedule::steps::Judged;
use jobsight_ingest::per_job::{self, Outcome, RecordOutcome};
use jobsight_ingest::sources::TelemetrySource;
use jobsight_ingest::spool::Spool;

/// Claims the spool's new records and stores at most `limit` jobs ([`per_job::run_with`]). Each
/// job it finishes goes to `ingested`, and to the carried-over list at `carried_path` (synced)
/// before its record leaves `cur/`.
pub(super) fn claim_and_ingest(
    run: &StepRun,
    limit: Option<usize>,
    ingested: &mut Vec<IngestedJob>,
    carried_path: &Path,
) -> Result<Counts, String> {
    let ctx = run.ctx;
    let s = &ctx.settings;
    let mut counts = BTreeMap::new();
    let spool = Spool::open(&s.spool).map_err(|e| e.to_string())?;
    let report = per_job::run_with(
        &spool,
        ctx.data(),
        &s.ingest,
        ctx.accounting.as_ref(),
        ctx.telemetry.as_deref().map(|t| t as &dyn TelemetrySource),
        limit,
        ctx.clock.now(),
        |_, _| {},
        &mut |job, outcome| {
            let Outcome::Done {
                day,
                job_id,
                part,
                telemetry_files,
                ..
            } = outcome
            else {
                return Ok(());
            };
            let done = IngestedJob {
                day: *day,
                job_id: job_id.clone(),
                job: job.to_string(),
                part: part.clone(),
                telemetry_files: telemetry_files.clone(),
            };
            append_carried(carried_path, &done)?;
            ingested.retain(|j| !(j.day == done.day && j.part == done.part));
            ingested.push(done);
            Ok(())
        },
    )
    .map_err(|e| e.to_string())?;
    // Jobs asked for together are stored a group at a time: the steps after this one take this
    // run's jobs in the order of their records, as before, after the jobs carried over.
    let record_order: std::collections::HashMap<(chrono::NaiveDate, &str), usize> = report
        .records
        .iter()
        .enumerate()
        .filter_map(|(i, r)| match &r.outcome {
            Outcome::Done { day, part, .. } => Some(((*day, part.as_str()), i)),
            _ => None,
        })
        .collect();
    ingested.sort_by_key(|j| record_order.get(&(j.day, j.part.as_str())).copied());
    counts.insert("claimed".into(), report.claim.claimed.len() as u64);
    counts.insert("duplicates".into(), report.claim.duplicates.len() as u64);
    counts.insert("malformed".into(), report.claim.failed.len() as u64);
    for kind in [
        "done",
        "pending",
        "waiting",
        "quarantined",
        "already_stored",
    ] {
        counts.insert(kind.into(), report.count(kind) as u64);
    }
    let rows: u64 = report
        .records
        .iter()
        .map(|r| match r.outcome {
            Outcome::Done { telemetry_rows, .. } => telemetry_rows,
            _ => 0,
        })
        .sum();
    counts.insert("telemetry_rows".into(), rows);
    // Only when there were any: a run of one job has nothing to ask for together.
    let together = &report.together;
    for (key, n) in [
        ("together_groups", together.groups),
        ("together_jobs", together.jobs),
        ("together_failed", together.failed.len()),
    ] {
        if n > 0 {
            counts.insert(key.into(), n as u64);
        }
    }
    for r in &report.records {
        log_ingested(run, r);
    }
    Ok((report.count("done") as u64, counts))
}

/// Logs the `job` line of one record the ingest step tried.
fn log_ingested(run: &StepRun, r: &RecordOutcome) {
    let job = r.job.clone().unwrap_or_else(|| r.file.clone());
    match &r.outcome {
        Outcome::Done {
            day,
            state,
            telemetry_rows,
            note,
            ..
        } => {
            let mut f = vec![
                ("outcome", json!("done")),
                ("state", json!(state)),
                ("day", json!(day.to_string())),
                ("telemetry_rows", json!(telemetry_rows)),
            ];
            if let Some(n) = note {
                f.push(("note", json!(n)));
            }
            run.job_event(&job, f);
        }
        Outcome::Pending {
            attempts,
            next_attempt,
            reason,
        } => run.job_event(
            &job,
            vec![
                ("outcome", json!("pending")),
                ("attempts", json!(attempts)),
                (
                    "next_attempt",
                    json!(next_attempt.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
                ),
                ("reason", json!(reason)),
            ],
        ),
        Outcome::Quarantined { reason } => run.job_event(
            &job,
            vec![
                ("outcome", json!("quarantined")),
                ("file", json!(r.file)),
                ("reason", json!(reason)),
            ],
        ),
        Outcome::AlreadyStored { day, .. } => run.job_event(
            &job,
            vec![
                ("outcome", json!("already stored")),
                ("day", json!(day.to_string())),
            ],
        ),
        // Jobs waiting for their next attempt would repeat every run: counted only.
        Outcome::Waiting { .. } => {}
    }
}

/// The features of each of the `ingested` jobs ([`jobsight_features::compute_job`]).
pub(super) fn features_of_ingested(
    run: &StepRun,
    ingested: &[IngestedJob],
) -> Result<Counts, String> {
    let data = run.ctx.data();
    let s = &run.ctx.settings;
    let mut counts = BTreeMap::new();
    let (mut judgeable, mut not_judgeable, mut failed) = (0, 0, 0);
    for j in ingested.iter() {
        let started = std::time::Instant::now();
        let result = jobsight_features::compute_job(
            data,
            j.day,
            &j.job_id,
            &j.telemetry_files,
            &j.part,
            &s.features,
        );
        let ms = started.elapsed().as_millis() as u64;
        let verdict = match result {
            Ok(f) => match f.summary.not_judgeable_reason {
                None => {
                    judgeable += 1;
                    "judgeable".to_string()
                }
                Some(reason) => {
                    not_judgeable += 1;
                    format!("not judgeable: {reason}")
                }
            },
            // One job's failure does not stop the others; the nightly run computes the
            // whole day again.
            Err(e) => {
                failed += 1;
                format!("not computed: {e}")
            }
        };
        run.job_event(
            &j.job,
            vec![("features_ms", json!(ms)), ("features", json!(verdict))],
        );
    }
    counts.insert("judgeable".into(), judgeable);
    counts.insert("not_judgeable".into(), not_judgeable);
    counts.insert("failed".into(), failed);
    Ok((ingested.len() as u64, counts))
}

/// The rules' findings of each of the `ingested` jobs ([`jobsight_rules::classify::classify_job`]); each
/// job's verdict goes to `judged`, for the predict step.
pub(super) fn classify_ingested(
    run: &StepRun,
    ingested: &[IngestedJob],
    judged: &mut Vec<Judged>,
) -> Result<Counts, String> {
    let ctx = run.ctx;
    let data = ctx.data();
    let s = &ctx.settings;
    let mut counts = BTreeMap::new();
    let (mut findings, mut failed) = (0, 0);
    for j in ingested.iter() {
        let result = jobsight_rules::classify::classify_job(
            data, j.day, &j.job_id, &j.part, &ctx.book, &s.rules,
        );
        let text = match result {
            Ok(v) => {
                findings += v.findings.len() as u64;
                let text = if v.findings.is_empty() {
                    "no findings".to_string()
                } else {
                    v.findings
                        .iter()
                        .map(|f| format!("{} ({})", f.rule, f.severity.name()))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                judged.push(Judged {
                    on: On::Ingested,
                    day: j.day,
                    job: Some((j.part.clone(), j.job.clone())),
                    verdicts: vec![v],
                });
                text
            }
            Err(e) => {
                failed += 1;
                format!("not classified: {e}")
            }
        };
        run.job_event(&j.job, vec![("findings", json!(text))]);
    }
    counts.insert("findings".into(), findings);
    counts.insert("failed".into(), failed);
    Ok((ingested.len() as u64, counts))
}

/// The models' verdicts on each job the classify step before it judged
/// ([`predict_judged`]), into the job's own part of `predictions`. Without a configured model
/// there is nothing to do. A job whose prediction fails is counted and named on its `job` line;
/// the others go on (the nightly run predicts the whole day again).
pub(super) fn predict_ingested(run: &StepRun, judged: &[&Judged]) -> Result<Counts, String> {
    let ctx = run.ctx;
    let mut counts = BTreeMap::new();
    let Some(models) = ctx.models.as_deref() else {
        counts.insert("predictions".into(), 0);
        return Ok((0, counts));
    };
    let (mut predictions, mut failed) = (0, 0);
    for j in judged {
        let Some((part, job)) = &j.job else { continue };
        let text = match predict_judged(
            ctx.data(),
            j.day,
            Some(part),
            models,
            &ctx.book,
            &j.verdicts,
        ) {
            Ok(p) => {
                predictions += p.len() as u64;
                p.iter()
                    .map(|p| match p.confidence {
                        Some(c) => format!("{} ({:.0} %, {})", p.verdict, c * 100.0, p.source),
                        None => format!("{} ({})", p.verdict, p.source),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            }
            Err(e) => {
                failed += 1;
                format!("not predicted: {e}")
            }
        };
        run.job_event(job, vec![("prediction", json!(text))]);
    }
    counts.insert("predictions".into(), predictions);
    counts.insert("failed".into(), failed);
    Ok((judged.len() as u64, counts))
}
