//! What the running DAG does about the conditions that hold, as the running stage decides it
//! (`jobsight_running::plan`): warns the owner once per job and condition, and under the site's
//! cancel policy warns again and cancels; every warning and cancellation (and, in dry-run, every
//! one it would have made) is a row of `interventions` (`jobsight_running::audit`).
//!
//! The order of a cancellation: `scontrol notify` (the reason, in the job's own error output),
//! `scancel`, then the email saying so. A failed `scancel` is recorded with Slurm's answer and
//! tried again next run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chrono::{DateTime, Utc};

use jobsight_base::severity::Severity;
use jobsight_notify::plan::{Item, JobReport};
use jobsight_notify::running::{Stage, Warning};
use jobsight_running::Settings;
use jobsight_running::audit::{History, write_rows};
use jobsight_running::plan::{CANCEL, SECOND_WARNING, WARNING, already_cancelled, in_effect, plan};
use jobsight_running::snapshot::{Condition, LiveJob, Snapshot};
use jobsight_warehouse::catalog::rows::InterventionRow;

/// What one run did.
#[derive(Debug, Default)]
pub struct Acted {
    pub rows: Vec<InterventionRow>,
    pub emailed: usize,
    pub cancelled: usize,
    /// Cancellations the dry run recorded instead.
    pub would_cancel: usize,
}

/// The job as the notify stage reports it, with the condition as its one item (whose kind is
/// the finished-job rule it stands for, so that the emails after the job's end leave it out).
fn job_report(job: &LiveJob, condition: &Condition, now: DateTime<Utc>) -> JobReport {
    JobReport {
        job_id: job.job_id.clone(),
        cluster: job.cluster.clone(),
        user: Some(job.user.clone()),
        account: Some(job.account.clone()),
        name: Some(job.name.clone()),
        state: Some("RUNNING".into()),
        partition: Some(job.partition.clone()),
        nodes: Some(job.nodes.clone()),
        cpus: Some(job.cpus),
        start: Some(job.start),
        end: Some(now),
        items: vec![Item {
            kind: condition
                .at_end
                .clone()
                .unwrap_or_else(|| condition.rule.clone()),
            severity: Severity::parse(&condition.severity).unwrap_or(Severity::Warning),
            title: condition.title.clone(),
            message: condition.message.clone(),
            fix: condition.fix.clone(),
            tools: condition.tools.join(", "),
            node: None,
            run: None,
        }],
        ..JobReport::default()
    }
}

/// Carries out what the running stage decides for every condition of `snapshot`
/// (`jobsight_running::plan::plan`): cancels, warns and records (see the module doc).
pub fn act(
    data: &Path,
    settings: &Settings,
    notify: &jobsight_notify::Settings,
    snapshot: &Snapshot,
    history: &History,
    now: DateTime<Utc>,
) -> Result<Acted, String> {
    let settings = &in_effect(settings, notify.test_mode);
    let mut cancelled = already_cancelled(history);
    let mut acted = Acted::default();
    let mut warnings = Vec::new();
    // Row index -> the warning whose email decides its outcome.
    let mut mailed_by_row: BTreeMap<usize, String> = BTreeMap::new();
    for planned in plan(snapshot, history, settings, now) {
        let job = &snapshot.jobs[planned.job];
        let condition = &job.conditions[planned.condition];
        let (decision, cancel_at) = (planned.decision, planned.cancel_at);
        // One cancellation per job, whichever of its conditions reached it first.
        let job_key = (job.cluster.clone(), job.job_id.clone());
        if decision.stage == CANCEL
            && decision.exempt.is_none()
            && !decision.dry_run
            && cancelled.contains(&job_key)
        {
            continue;
        }
        let outcome = match (decision.stage, &decision.exempt, decision.dry_run) {
            (_, Some(reason), _) => format!("exempt: {reason}"),
            (SECOND_WARNING, None, true) => "would warn again".to_string(),
            (CANCEL, None, true) => {
                acted.would_cancel += 1;
                "would cancel".to_string()
            }
            (CANCEL, None, false) => match cancel(settings, job, condition) {
                Ok(()) => {
                    acted.cancelled += 1;
                    cancelled.insert(job_key.clone());
                    "cancelled".to_string()
                }
                Err(e) => format!("cancel failed: {e}"),
            },
            _ => String::new(),
        };
        let stage = match decision.stage {
            WARNING => Some(Stage::Warning),
            SECOND_WARNING if !decision.dry_run => Some(Stage::SecondWarning),
            CANCEL if outcome == "cancelled" => Some(Stage::Cancelled),
            _ => None,
        };
        let row = InterventionRow {
            decided_at: now,
            cluster: job.cluster.clone(),
            job_id: job.job_id.clone(),
            user: job.user.clone(),
            account: job.account.clone(),
            partition: job.partition.clone(),
            qos: job.qos.clone(),
            condition: condition.rule.clone(),
            stage: decision.stage.to_string(),
            held_s: condition.held_s(now),
            dry_run: decision.dry_run,
            outcome,
            evidence: condition.evidence.clone(),
            rules_version: snapshot.rules_version.clone(),
        };
        if let Some(stage) = stage {
            let warning = Warning {
                job: job_report(job, condition, now),
                rule: condition.rule.clone(),
                stage,
                held_s: condition.held_s(now),
                cancel_at,
            };
            if let Some(key) = warning.key() {
                mailed_by_row.insert(acted.rows.len(), key);
            }
            warnings.push(warning);
        }
        acted.rows.push(row);
    }
    // The rows are written whatever the emails do: a cancellation is never left unrecorded.
    let mut failed = None;
    if !warnings.is_empty() {
        let sent = send(data, notify, &warnings, now).unwrap_or_else(|e| {
            let why = format!("email not sent: {e}");
            failed = Some(e);
            mailed_by_row
                .values()
                .map(|key| (key.clone(), why.clone()))
                .collect()
        });
        for (row, key) in &mailed_by_row {
            let mail = sent
                .get(key)
                .cloned()
                .unwrap_or_else(|| "email not sent".into());
            if mail == "emailed" {
                acted.emailed += 1;
            }
            let r = &mut acted.rows[*row];
            r.outcome = match r.outcome.as_str() {
                "" => mail,
                done => format!("{done}; {mail}"),
            };
        }
    }
    for (i, r) in acted.rows.iter_mut().enumerate() {
        if r.outcome.is_empty() && !mailed_by_row.contains_key(&i) {
            r.outcome = "email not sent: the job has no safe user or id".into();
        }
    }
    if failed.is_some() {
        // A warning that could not be queued (a template or outbox error) is not recorded, so
        // that the next run tries it again; what was done (a cancellation) is.
        let mut i = 0;
        acted.rows.retain(|r| {
            let keep = !(mailed_by_row.contains_key(&i) && r.stage != CANCEL);
            i += 1;
            keep
        });
    }
    write_rows(data, &acted.rows, now)?;
    match failed {
        Some(e) => Err(e),
        None => Ok(acted),
    }
}

/// Sends the warnings; each key's outcome: `emailed`, or `email not sent: <why>`.
fn send(
    data: &Path,
    notify: &jobsight_notify::Settings,
    warnings: &[Warning],
    now: DateTime<Utc>,
) -> Result<BTreeMap<String, String>, String> {
    let writer = jobsight_render::email::EmailTemplates::load(notify.templates.as_deref())
        .map_err(|e| e.to_string())?;
    let report =
        jobsight_render::email::send_running(data, notify, warnings, &writer, now, &mut |_| {})
            .map_err(|e| format!("warnings: {e}"))?;
    let mut outcome = BTreeMap::new();
    let unaddressed: BTreeSet<&String> = report.no_address.iter().collect();
    for w in warnings {
        let Some(key) = w.key() else { continue };
        let user = w.job.user.clone().unwrap_or_default();
        let queued_before = report.skipped.iter().any(|s| {
            s.job_id == w.job.job_id
                && s.kind.as_deref() == Some(w.rule.as_str())
                && s.reason == jobsight_notify::plan::SkipReason::AlreadyReported
        });
        let text = if queued_before
            || report
                .prepared
                .iter()
                .any(|p| p.planned.key.ends_with(&key))
        {
            // Queued now, or by an earlier run whose row was not written.
            "emailed".to_string()
        } else if let Some(s) = report
            .skipped
            .iter()
            .find(|s| s.job_id == w.job.job_id && s.kind.as_deref() == Some(w.rule.as_str()))
        {
            format!("email not sent: {:?}", s.reason)
        } else if unaddressed.contains(&user) {
            "email not sent: no address".into()
        } else {
            "email not sent".into()
        };
        outcome.insert(key, text);
    }
    Ok(outcome)
}

/// Tells the job why (`scontrol notify`: its error output), then cancels it.
fn cancel(settings: &Settings, job: &LiveJob, condition: &Condition) -> Result<(), String> {
    // Slurm's own id (an array task's), as squeue gave it; the accounting name otherwise.
    let id = if job.slurm_id.is_empty() {
        &job.job_id
    } else {
        &job.slurm_id
    };
    if !id.bytes().all(|b| b.is_ascii_digit() || b == b'_') || id.is_empty() {
        return Err(format!("job id {id:?} is not plain"));
    }
    let reason = format!(
        "jobsight: cancelling job {} under the site's policy: {} (see the email to {})",
        job.job_id,
        jobsight_base::text::clean(&condition.title, 200),
        job.user
    );
    // The reason is a courtesy: a job whose output cannot be written is cancelled all the same.
    let _ = jobsight_base::command::run_command(
        &settings.scontrol,
        &["notify", id, &reason],
        settings.timeout,
    );
    jobsight_base::command::run_command(&settings.scancel, &[id], settings.timeout).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use jobsight_running::snapshot::sample;

    fn settings(policy: &str) -> Settings {
        let options: jobsight_running::Options = toml::from_str(policy).unwrap();
        options.resolve(Path::new("/d")).unwrap()
    }

    /// The whole round on a warehouse and a file outbox: a warning mailed and recorded once, the
    /// dry run's second warning and cancellation recorded at their times and nothing after.
    #[test]
    fn every_decision_is_recorded_and_the_warning_mailed_once() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let notify = jobsight_notify::Options {
            outbox: Some(dir.path().join("outbox")),
            ..Default::default()
        }
        .resolve()
        .unwrap();
        let s = settings("[cancel]\nenabled = true\n");
        let snapshot = sample();
        let t0 = snapshot.taken_at;
        let round = |seconds: i64| {
            let now = t0 + chrono::Duration::seconds(seconds);
            let history = jobsight_running::audit::read_history(&data, now).unwrap();
            act(&data, &s, &notify, &snapshot, &history, now).unwrap()
        };
        let first = round(0);
        let stages: Vec<(&str, &str)> = first
            .rows
            .iter()
            .map(|r| (r.stage.as_str(), r.outcome.as_str()))
            .collect();
        assert_eq!(stages, [(WARNING, "emailed")]);
        assert_eq!((first.emailed, first.rows[0].held_s), (1, 95 * 60));
        assert!(round(600).rows.is_empty(), "warned once");
        let second = round(2700);
        assert_eq!(second.rows[0].stage, SECOND_WARNING);
        assert_eq!(
            (second.rows[0].outcome.as_str(), second.emailed),
            ("would warn again", 0)
        );
        let third = round(3600);
        assert_eq!(
            (third.rows[0].stage.as_str(), third.would_cancel),
            (CANCEL, 1)
        );
        assert!(round(4000).rows.is_empty());
        let sent = std::fs::read_dir(dir.path().join("outbox/sent"))
            .unwrap()
            .count();
        assert_eq!(sent, 1, "one email: the dry run mails nothing more");
    }
}
