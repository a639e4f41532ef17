//! What the running DAG decides about the conditions that hold, before anything is done: for each
//! job and condition, given the audit so far ([`crate::audit`]), whether to warn the owner, warn
//! again or cancel under the site's policy, or record why the policy leaves the job alone
//! ([`plan`]). Pure: the application carries the decisions out (the emails, `scancel`) and
//! records them.
//!
//! The audit table is the policy's memory: a stage happens once per job and condition, the
//! second warning counts from the first warning's row, and a job is cancelled only after both
//! warnings were mailed (or, in dry-run, recorded). A job exempt from the policy gets one
//! `exempt` row, and its warnings still. At most one stage per condition per run, so the owner
//! always hears of a stage before the next.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use crate::audit::{History, Past};
use crate::settings::{CancelPolicy, Settings, StageTimes};
use crate::snapshot::{Condition, LiveJob, Snapshot};

/// The stage names of the `interventions` table.
pub const WARNING: &str = "warning";
pub const SECOND_WARNING: &str = "second-warning";
pub const CANCEL: &str = "cancel";

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
    times: &StageTimes,
) -> DateTime<Utc> {
    let gap = times.cancel_after_s - times.second_warning_after_s;
    seconds_after(first, times.cancel_after_s).max(seconds_after(second, gap))
}

/// The policy in effect: in the emails' test mode (`test_mode`, notify's) the warnings go to the
/// admins, not the owners, so nothing may be cancelled on them and the policy only records (as in
/// a dry run).
pub fn in_effect(settings: &Settings, test_mode: bool) -> Settings {
    let mut settings = settings.clone();
    settings.cancel.dry_run |= test_mode;
    settings
}

/// The jobs the policy cancelled already, under any condition.
pub fn already_cancelled(history: &History) -> BTreeSet<(String, String)> {
    history
        .iter()
        .filter(|(_, rows)| {
            rows.iter()
                .any(|p| p.stage == CANCEL && !p.dry_run && p.outcome.starts_with("cancelled"))
        })
        .map(|((cluster, job, _), _)| (cluster.clone(), job.clone()))
        .collect()
}

/// One decision of a run about one condition of one job of the snapshot, before it is carried
/// out: `job` and `condition` index `snapshot.jobs` and that job's `conditions`.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub job: usize,
    pub condition: usize,
    pub decision: Decision,
    /// When the policy will cancel the job if nothing changes (what the warning tells the
    /// owner); `None`: it will not.
    pub cancel_at: Option<DateTime<Utc>>,
}

/// What to do now about every condition of `snapshot`, given the audit so far, in the
/// snapshot's order. `settings` is the policy [`in_effect`]. Pure: nothing is sent, cancelled or
/// written; the application carries the decisions out (and skips a second cancellation of a
/// job in one run, which depends on whether the first succeeded).
pub fn plan(
    snapshot: &Snapshot,
    history: &History,
    settings: &Settings,
    now: DateTime<Utc>,
) -> Vec<Planned> {
    let mut planned = Vec::new();
    for (j, job) in snapshot.jobs.iter().enumerate() {
        for (c, condition) in job.conditions.iter().enumerate() {
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
            planned.push(Planned {
                job: j,
                condition: c,
                decision,
                cancel_at,
            });
        }
    }
    planned
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::sample;
    use std::path::Path;

    fn settings(policy: &str) -> Settings {
        let options: crate::Options = toml::from_str(policy).unwrap();
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

    /// The plan of a run: one decision per condition that holds, in the snapshot's order, with
    /// the time the policy would cancel; a job without conditions or already warned is not in it.
    #[test]
    fn the_plan_decides_each_condition_once_and_says_when_the_policy_cancels() {
        let snapshot = sample();
        let t0 = snapshot.taken_at;
        let at = |s: i64| t0 + chrono::Duration::seconds(s);
        let none = History::new();
        let plain = plan(&snapshot, &none, &settings(""), t0);
        assert_eq!(plain.len(), 1, "the second job has no condition");
        assert_eq!((plain[0].job, plain[0].condition), (0, 0));
        assert_eq!(plain[0].decision.stage, WARNING);
        assert_eq!(plain[0].cancel_at, None, "no policy, no cancellation");

        let policy = settings("[cancel]\nenabled = true\ndry_run = false\n");
        let first = plan(&snapshot, &none, &policy, t0);
        assert_eq!(
            first[0].cancel_at,
            Some(at(3600)),
            "an hour after the first warning"
        );

        let (job, condition) = (&snapshot.jobs[0], &snapshot.jobs[0].conditions[0]);
        let key = (
            job.cluster.clone(),
            job.job_id.clone(),
            condition.rule.clone(),
        );
        let warned = History::from([(key, vec![past(WARNING, t0, false, "emailed")])]);
        assert!(
            plan(&snapshot, &warned, &policy, at(60)).is_empty(),
            "warned once"
        );
        let second = plan(&snapshot, &warned, &policy, at(2700));
        assert_eq!(second[0].decision.stage, SECOND_WARNING);
        assert_eq!(second[0].cancel_at, Some(at(3600)));
    }
}
