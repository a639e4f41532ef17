//! What the running DAG does about the conditions that hold: warns the owner once per job and
//! condition, and under the site's cancel policy warns again and cancels; every warning and
//! cancellation (and, in dry-run, every one it would have made) is a row of `interventions`.
//!
//! The audit table is the policy's memory: a stage happens once per job and condition, the
//! second warning counts from the first warning's row, and a job is cancelled only after both
//! warnings were mailed (or, in dry-run, recorded). A job exempt from the policy gets one
//! `exempt` row, and its warnings still. At most one stage per condition per run, so the owner
//! always hears of a stage before the next.
//!
//! The order of a cancellation: `scontrol notify` (the reason, in the job's own error output),
//! `scancel`, then the email saying so. A failed `scancel` is recorded with Slurm's answer and
//! tried again next run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chrono::{DateTime, Utc};

use super::settings::{CancelPolicy, Settings};
use super::snapshot::{Condition, LiveJob, Snapshot};
use jobsight_base::severity::Severity;
use jobsight_notify::plan::{Item, JobReport};
use jobsight_notify::running::{Stage, Warning};
use jobsight_warehouse::catalog::{self, Table, rows::InterventionRow};

/// The stage names of the `interventions` table.
const WARNING: &str = "warning";
const SECOND_WARNING: &str = "second-warning";
const CANCEL: &str = "cancel";

/// What one run did.
#[derive(Debug, Default)]
pub struct Acted {
    pub rows: Vec<InterventionRow>,
    pub emailed: usize,
    pub cancelled: usize,
    /// Cancellations the dry run recorded instead.
    pub would_cancel: usize,
}

/// One row of the audit so far, as the decisions read it.
#[derive(Debug, Clone)]
pub struct Past {
    pub stage: String,
    pub decided_at: DateTime<Utc>,
    pub dry_run: bool,
    pub outcome: String,
}

/// The audit of the last 30 days by (cluster, job, condition).
pub type History = BTreeMap<(String, String, String), Vec<Past>>;

/// Reads the audit rows of the 30 days up to `now`.
pub fn read_history(data: &Path, now: DateTime<Utc>) -> Result<History, String> {
    let first = now.date_naive() - chrono::Duration::days(30);
    let sql = format!(
        "SELECT cluster, job_id, condition, stage, decided_at, dry_run, outcome FROM interventions \
         WHERE day >= '{first}'"
    );
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let batches = runtime
        .block_on(jobsight_warehouse::query::run(data, &sql))
        .map_err(|e| format!("reading interventions: {e}"))?;
    let mut history = History::new();
    for batch in &batches {
        let c = jobsight_warehouse::query::Columns::of(batch).map_err(|e| e.to_string())?;
        for i in 0..batch.num_rows() {
            let key = (
                c.text("cluster", i).unwrap_or_default(),
                c.text("job_id", i).unwrap_or_default(),
                c.text("condition", i).unwrap_or_default(),
            );
            history.entry(key).or_default().push(Past {
                stage: c.text("stage", i).unwrap_or_default(),
                decided_at: c.time("decided_at", i).unwrap_or_default(),
                dry_run: c.boolean("dry_run", i).unwrap_or(false),
                outcome: c.text("outcome", i).unwrap_or_default(),
            });
        }
    }
    Ok(history)
}

/// A decision of this run, before it is carried out.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub stage: &'static str,
    pub dry_run: bool,
    /// `Some`: the policy does not act on this job, and why.
    pub exempt: Option<String>,
}

/// Why the policy leaves `job` alone, if it does.
pub fn exemption(job: &LiveJob, policy: &CancelPolicy) -> Option<String> {
    let checks = [
        (&policy.exempt_partitions, &job.partition, "partition"),
        (&policy.exempt_qos, &job.qos, "qos"),
        (&policy.exempt_accounts, &job.account, "account"),
        (&policy.exempt_users, &job.user, "user"),
    ];
    for (set, value, what) in checks {
        if set.contains(value) {
            return Some(format!("{what} {value}"));
        }
    }
    (policy.exempt_interactive && job.interactive).then(|| "interactive".to_string())
}

/// What to do now about one condition of one job, given its audit so far; `None`: nothing.
pub fn decide(
    job: &LiveJob,
    condition: &Condition,
    past: &[Past],
    settings: &Settings,
    now: DateTime<Utc>,
) -> Option<Decision> {
    let had = |stage: &str| past.iter().find(|p| p.stage == stage);
    let policy = &settings.cancel;
    let Some(first) = had(WARNING) else {
        return settings.warn.then_some(Decision {
            stage: WARNING,
            dry_run: false,
            exempt: None,
        });
    };
    let times = policy
        .conditions
        .get(&condition.rule)
        .filter(|_| policy.enabled)?;
    if let Some(reason) = exemption(job, policy) {
        // Recorded once, so that admins see why the policy left it alone.
        let recorded = past.iter().any(|p| p.outcome.starts_with("exempt"));
        return (!recorded).then_some(Decision {
            stage: CANCEL,
            dry_run: policy.dry_run,
            exempt: Some(reason),
        });
    }
    // The owner must have been told: the first warning mailed (a dry run only records).
    if !policy.dry_run && first.outcome != "emailed" {
        return None;
    }
    // The second warning is decided once; the cancellation needs it mailed (or, in a dry run,
    // recorded) and comes no sooner after it than the policy's gap, however late it went out.
    let second = past
        .iter()
        .find(|p| p.stage == SECOND_WARNING && p.dry_run == policy.dry_run);
    match second {
        None if now >= seconds_after(first.decided_at, times.second_warning_after_s) => {
            Some(Decision {
                stage: SECOND_WARNING,
                dry_run: policy.dry_run,
                exempt: None,
            })
        }
        Some(s)
            if (s.dry_run || s.outcome == "emailed")
                && now >= cancel_time(first.decided_at, s.decided_at, times) =>
        {
            let done = past.iter().any(|p| {
                p.stage == CANCEL
                    && p.dry_run == policy.dry_run
                    && (p.outcome.starts_with("cancelled") || p.outcome == "would cancel")
            });
            (!done).then_some(Decision {
                stage: CANCEL,
                dry_run: policy.dry_run,
                exempt: None,
            })
        }
        _ => None,
    }
}

fn seconds_after(t: DateTime<Utc>, s: u64) -> DateTime<Utc> {
    t + chrono::Duration::seconds(s as i64)
}

/// When the policy cancels: `cancel_after_s` after the first warning, and never sooner after the
/// second than the policy's gap between the two (a second warning that went out late, after a
/// dry run or a condition that came back, still leaves the owner that gap).
pub fn cancel_time(
    first: DateTime<Utc>,
    second: DateTime<Utc>,
    times: &super::settings::StageTimes,
) -> DateTime<Utc> {
    let gap = times.cancel_after_s - times.second_warning_after_s;
    seconds_after(first, times.cancel_after_s).max(seconds_after(second, gap))
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

/// Decides, cancels, warns and records, for every condition of `snapshot` (see the module doc).
pub fn act(
    data: &Path,
    settings: &Settings,
    notify: &jobsight_notify::Settings,
    snapshot: &Snapshot,
    history: &History,
    now: DateTime<Utc>,
) -> Result<Acted, String> {
    let settings = &in_effect(settings, notify);
    let mut cancelled = already_cancelled(history);
    let mut acted = Acted::default();
    let mut warnings = Vec::new();
    // Row index -> the warning whose email decides its outcome.
    let mut mailed_by_row: BTreeMap<usize, String> = BTreeMap::new();
    for job in &snapshot.jobs {
        for condition in &job.conditions {
            let key = (
                job.cluster.clone(),
                job.job_id.clone(),
                condition.rule.clone(),
            );
            let past = history.get(&key).map(Vec::as_slice).unwrap_or_default();
            let Some(decision) = decide(job, condition, past, settings, now) else {
                continue;
            };
            let policy_times = settings
                .cancel
                .conditions
                .get(&condition.rule)
                .filter(|_| settings.cancel.enabled && !settings.cancel.dry_run);
            let first_at = past
                .iter()
                .find(|p| p.stage == WARNING)
                .map_or(now, |p| p.decided_at);
            let cancel_at = policy_times
                .filter(|_| exemption(job, &settings.cancel).is_none())
                .map(|t| cancel_time(first_at, now, t));
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

/// The policy in effect: in notify's test mode the warnings go to the admins, not the owners,
/// so nothing may be cancelled on them and the policy only records (as in a dry run).
fn in_effect(settings: &Settings, notify: &jobsight_notify::Settings) -> Settings {
    let mut settings = settings.clone();
    settings.cancel.dry_run |= notify.test_mode;
    settings
}

/// The jobs the policy cancelled already, under any condition.
fn already_cancelled(history: &History) -> BTreeSet<(String, String)> {
    history
        .iter()
        .filter(|(_, rows)| {
            rows.iter()
                .any(|p| p.stage == CANCEL && !p.dry_run && p.outcome.starts_with("cancelled"))
        })
        .map(|((cluster, job, _), _)| (cluster.clone(), job.clone()))
        .collect()
}

/// The run's rows as one part of `interventions`.
fn write_rows(data: &Path, rows: &[InterventionRow], now: DateTime<Utc>) -> Result<(), String> {
    if rows.is_empty() {
        return Ok(());
    }
    let batch = InterventionRow::batch(rows).map_err(|e| e.to_string())?;
    catalog::write_part(
        data,
        Table::Interventions,
        now.date_naive(),
        &format!("run-{}", now.format("%Y%m%dT%H%M%S%.6f")),
        &[batch],
    )
    .map_err(|e| e.to_string())?;
    Ok(())
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
    let _ = jobsight_ingest::squeue::run_command(
        &settings.scontrol,
        &["notify", id, &reason],
        settings.timeout,
    );
    jobsight_ingest::squeue::run_command(&settings.scancel, &[id], settings.timeout).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::running::snapshot::sample;

    fn settings(policy: &str) -> Settings {
        let options: super::super::Options = toml::from_str(policy).unwrap();
        options.resolve(Path::new("/d")).unwrap()
    }

    fn past(stage: &str, at: DateTime<Utc>, dry_run: bool, outcome: &str) -> Past {
        Past {
            stage: stage.into(),
            decided_at: at,
            dry_run,
            outcome: outcome.into(),
        }
    }

    #[test]
    fn without_a_policy_one_warning_per_job_and_condition() {
        let snapshot = sample();
        let (job, condition) = (&snapshot.jobs[0], &snapshot.jobs[0].conditions[0]);
        let s = settings("");
        let now = snapshot.taken_at;
        assert_eq!(decide(job, condition, &[], &s, now).unwrap().stage, WARNING);
        let warned = [past(WARNING, now, false, "emailed")];
        assert_eq!(
            decide(job, condition, &warned, &s, now + chrono::Duration::days(1)),
            None
        );
        let quiet = settings("warn = false");
        assert_eq!(decide(job, condition, &[], &quiet, now), None);
    }

    #[test]
    fn the_policy_warns_again_then_cancels_in_order() {
        let snapshot = sample();
        let (job, condition) = (&snapshot.jobs[0], &snapshot.jobs[0].conditions[0]);
        let s = settings("[cancel]\nenabled = true\ndry_run = false\nexempt_interactive = true\n");
        let t0 = snapshot.taken_at;
        let at = |s: i64| t0 + chrono::Duration::seconds(s);
        let mut history = vec![past(WARNING, t0, false, "emailed")];
        assert_eq!(
            decide(job, condition, &history, &s, at(2699)),
            None,
            "too early"
        );
        let second = decide(job, condition, &history, &s, at(2700)).unwrap();
        assert_eq!((second.stage, second.dry_run), (SECOND_WARNING, false));
        // Never a cancellation without the second warning, however late.
        assert_eq!(
            decide(job, condition, &history, &s, at(9000))
                .unwrap()
                .stage,
            SECOND_WARNING
        );
        history.push(past(SECOND_WARNING, at(2700), false, "emailed"));
        assert_eq!(decide(job, condition, &history, &s, at(3599)), None);
        assert_eq!(
            decide(job, condition, &history, &s, at(3600))
                .unwrap()
                .stage,
            CANCEL
        );
        history.push(past(CANCEL, at(3600), false, "cancelled; emailed"));
        assert_eq!(decide(job, condition, &history, &s, at(4000)), None, "once");
        // A second warning that went out late still leaves the owner the gap (15 minutes).
        let late = [
            past(WARNING, t0, false, "emailed"),
            past(SECOND_WARNING, at(8000), false, "emailed"),
        ];
        assert_eq!(decide(job, condition, &late, &s, at(8899)), None);
        assert_eq!(
            decide(job, condition, &late, &s, at(8900)).unwrap().stage,
            CANCEL
        );
        // A second warning that could not be mailed is not decided again, and stops the policy.
        let unsent = [
            past(WARNING, t0, false, "emailed"),
            past(SECOND_WARNING, at(2700), false, "email not sent: OptedOut"),
        ];
        assert_eq!(decide(job, condition, &unsent, &s, at(9000)), None);
        // A failed scancel is tried again.
        history.pop();
        history.push(past(
            CANCEL,
            at(3600),
            false,
            "cancel failed: scancel: no such job",
        ));
        assert_eq!(
            decide(job, condition, &history, &s, at(4000))
                .unwrap()
                .stage,
            CANCEL
        );
        // A first warning that could not be mailed stops the policy.
        let unmailed = [past(WARNING, t0, false, "email not sent: OptedOut")];
        assert_eq!(decide(job, condition, &unmailed, &s, at(9000)), None);
        // A rule the policy does not name only warns.
        let mut other = condition.clone();
        other.rule = "running-serial".into();
        assert_eq!(decide(job, &other, &history[..1], &s, at(9000)), None);
    }

    #[test]
    fn a_dry_run_records_and_exemptions_are_recorded_once() {
        let snapshot = sample();
        let (job, condition) = (&snapshot.jobs[0], &snapshot.jobs[0].conditions[0]);
        let dry = settings("[cancel]\nenabled = true\n");
        let t0 = snapshot.taken_at;
        let at = |s: i64| t0 + chrono::Duration::seconds(s);
        let mut history = vec![past(WARNING, t0, false, "emailed")];
        let d = decide(job, condition, &history, &dry, at(2700)).unwrap();
        assert_eq!((d.stage, d.dry_run), (SECOND_WARNING, true));
        history.push(past(SECOND_WARNING, at(2700), true, "would warn again"));
        let d = decide(job, condition, &history, &dry, at(3600)).unwrap();
        assert_eq!((d.stage, d.dry_run), (CANCEL, true));
        // Turning the policy on starts its stages again: the dry run's mailed nothing.
        let on = settings("[cancel]\nenabled = true\ndry_run = false\n");
        assert_eq!(
            decide(job, condition, &history, &on, at(3600))
                .unwrap()
                .stage,
            SECOND_WARNING
        );

        let exempt =
            settings("[cancel]\nenabled = true\ndry_run = false\nexempt_partitions = [\"gpu\"]\n");
        let d = decide(job, condition, &history[..1], &exempt, at(3600)).unwrap();
        assert_eq!(d.exempt.as_deref(), Some("partition gpu"));
        let recorded = [
            history[0].clone(),
            past(CANCEL, at(3600), false, "exempt: partition gpu"),
        ];
        assert_eq!(decide(job, condition, &recorded, &exempt, at(7200)), None);
        let mut interactive = job.clone();
        interactive.interactive = true;
        assert_eq!(
            exemption(&interactive, &on.cancel).as_deref(),
            Some("interactive")
        );
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
            let history = read_history(&data, now).unwrap();
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
