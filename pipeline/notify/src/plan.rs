//! The pure core of the notify stage: which messages to send now, to whom, about which findings,
//! and why every other finding is not mailed. No I/O, no clock: `now` and the history come in.
//!
//! The rules, after Princeton's Job Defense Shield and what its users asked for:
//! - one digest per user per period (a day or an ISO week) with every finding not yet reported,
//!   grouped by job, most important first; with `critical = "immediate"` a critical finding also
//!   gets its own email when the job ends;
//! - a job is left out when it ran less than `min_run_s`, when its telemetry was not enough to
//!   judge it and Slurm accounting gave none of its CPU and memory figures either (a false alarm
//!   destroys trust), or when its user or account opted out;
//! - a kind of finding (a rule, or a model's anomaly type) is not mailed to the same user again
//!   within `min_days_between` days, except critical ones;
//! - digests go out on workdays only (weekdays and a holiday file); critical emails any day;
//! - at most `max_emails_per_user_per_day` emails to one user in a day; what does not fit waits;
//! - findings already reported to the user (the `notifications` ledger, or a message still in
//!   the outbox) are never reported again, and a period's digest is never planned twice.
//!
//! What is not mailed now but not dropped either (not a workday, the period's digest already out,
//! the cap reached) stays unreported and goes into a later digest while it is within
//! `lookback_days`; every finding left out is listed with its reason in [`Plan::skipped`].

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc, Weekday};

use jobsight_base::severity::Severity;

/// What a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MessageKind {
    /// A user's digest for a period.
    Digest,
    /// A user's email about one job's critical finding, sent when the job ends.
    Critical,
    /// The admins' daily digest.
    AdminDigest,
    /// The admins' email about one job's critical finding.
    AdminCritical,
    /// A user's warning about a job that still runs ([`crate::running`]).
    Running,
}

impl MessageKind {
    pub fn name(self) -> &'static str {
        match self {
            MessageKind::Digest => "digest",
            MessageKind::Critical => "critical",
            MessageKind::AdminDigest => "admin-digest",
            MessageKind::AdminCritical => "admin-critical",
            MessageKind::Running => "running",
        }
    }
}

/// How often users get their digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Period {
    Daily,
    Weekly,
}

impl Period {
    /// The period `day` falls in, as it appears in message keys: `2026-11-20` or `2026-W47`.
    pub fn id(self, day: NaiveDate) -> String {
        match self {
            Period::Daily => day.format("%Y-%m-%d").to_string(),
            Period::Weekly => {
                let week = day.iso_week();
                format!("{}-W{:02}", week.year(), week.week())
            }
        }
    }
}

/// When a critical finding reaches its user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CriticalMode {
    /// Its own email when the job ends (any day), then not again in the digest.
    Immediate,
    /// In the next digest, like every other finding.
    Digest,
}

/// The rules of [`plan`], resolved from the configuration.
#[derive(Debug, Clone)]
pub struct Policy {
    pub period: Period,
    pub critical: CriticalMode,
    pub min_days_between: i64,
    pub workdays: Vec<Weekday>,
    pub holidays: BTreeSet<NaiveDate>,
    pub min_run_s: u64,
    pub min_severity: Severity,
    pub opt_out_users: BTreeSet<String>,
    pub opt_out_accounts: BTreeSet<String>,
    pub max_emails_per_user_per_day: usize,
    pub lookback_days: i64,
    pub admin_digest: bool,
    pub admin_immediate: bool,
}

impl Policy {
    /// Whether the job's user or account asked not to be mailed.
    pub fn opted_out(&self, job: &JobReport) -> bool {
        job.user
            .as_ref()
            .is_some_and(|u| self.opt_out_users.contains(u))
            || job
                .account
                .as_ref()
                .is_some_and(|a| self.opt_out_accounts.contains(a))
    }
}

impl Policy {
    pub fn is_workday(&self, day: NaiveDate) -> bool {
        self.workdays.contains(&day.weekday()) && !self.holidays.contains(&day)
    }
}

/// One thing to tell a user about a job: a rule's finding or a model's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The rule id, or `diagnosis:<type>` for a model's verdict: what the spacing rule counts.
    pub kind: String,
    pub severity: Severity,
    pub title: String,
    pub message: String,
    pub fix: String,
    pub tools: String,
    pub node: Option<String>,
    /// The run of the job it is about (`restart_count`); `None` where that is not recorded (and
    /// for a running job's warning).
    pub run: Option<u32>,
}

/// A finished job with its figures and everything found about it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobReport {
    pub job_id: String,
    pub cluster: String,
    pub user: Option<String>,
    pub account: Option<String>,
    pub name: Option<String>,
    pub state: Option<String>,
    pub partition: Option<String>,
    pub nodes: Option<String>,
    pub cpus: Option<u32>,
    pub start: Option<DateTime<Utc>>,
    pub end: Option<DateTime<Utc>>,
    /// `None` when the job has no `job_summary` row.
    pub judgeable: Option<bool>,
    pub not_judgeable_reason: Option<String>,
    pub cpu_eff: Option<f64>,
    pub mem_eff: Option<f64>,
    pub time_eff: Option<f64>,
    pub core_hours: Option<f64>,
    pub wasted_core_hours: Option<f64>,
    /// Where the CPU and memory figures came from (`job_summary.cpu_eff_source`, `mem_source`).
    pub cpu_eff_source: Option<String>,
    pub mem_source: Option<String>,
    /// Whether the job shared a node with other jobs (`job_summary.shared`), when known.
    pub shared: Option<bool>,
    /// The job's measured energy and where it came from (`job_summary.energy_kwh`,
    /// `energy_source`, `energy_share`).
    pub energy_kwh: Option<f64>,
    pub energy_source: Option<String>,
    pub energy_share: Option<f64>,
    /// What a better request is made of (the `#SBATCH` lines a digest suggests, as the job's
    /// page does): Slurm's request and the job's measured use.
    pub num_nodes: Option<i64>,
    pub gpus: Option<i64>,
    pub req_mem_mb: Option<i64>,
    pub time_limit_s: Option<i64>,
    pub mem_used_max_mb: Option<f64>,
    pub cpu_used_cores: Option<f64>,
    pub gpu_util: Option<f64>,
    /// Whether any finding of the run reported is critical, reported in this message or before
    /// (its page holds back task advice for such a job, and the message does too).
    pub critical_finding: bool,
    pub items: Vec<Item>,
    /// The run reported (`restart_count`): a requeued job is reported as the run that ended
    /// last, as its page shows it, with the findings of its earlier runs marked as theirs.
    pub restart_count: Option<u32>,
    /// How each run of the job id that ended in the period ended (run, state), for the line that
    /// marks an earlier run's finding.
    pub run_states: Vec<(u32, String)>,
}

impl JobReport {
    /// For `run`, when it is an earlier run of this job than the one reported: (that run, the
    /// run reported). `None` for the run reported, or where either run is not recorded.
    pub fn earlier_run(&self, run: Option<u32>) -> Option<(u32, u32)> {
        let (run, last) = (run?, self.restart_count?);
        (run < last).then_some((run, last))
    }

    pub fn run_s(&self) -> Option<i64> {
        Some((self.end? - self.start?).num_seconds())
    }

    /// Whether its CPU or memory figures came from Slurm accounting: a job its telemetry could
    /// not judge was then judged on those (the rules that read them applied to it), not on
    /// missing data.
    pub fn judged_on_accounting(&self) -> bool {
        [&self.cpu_eff_source, &self.mem_source]
            .iter()
            .any(|source| source.as_deref() == Some("accounting"))
    }

    /// The job's most severe item.
    pub fn top_severity(&self) -> Option<Severity> {
        self.items.iter().map(|i| i.severity).max()
    }
}

// The ledger's row is the `notifications` table's row, defined with the table.
pub use jobsight_warehouse::catalog::rows::LedgerRow;

/// A message to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// Unique per recipient and period: the idempotency key (and the Message-ID).
    pub key: String,
    pub kind: MessageKind,
    pub user: Option<String>,
    pub period: String,
    /// Jobs to report, most important first, each with only the items reported now.
    pub jobs: Vec<JobReport>,
}

/// Why a finding (or a whole job) is not in any message of this run.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum SkipReason {
    NoUser,
    UnsafeUser,
    OptedOut,
    ShortRun,
    InsufficientTelemetry,
    BelowSeverity,
    AlreadyReported,
    /// The same kind was mailed to the user on this day, fewer than `min_days_between` ago.
    TooSoon(NaiveDate),
    /// Waits for a workday.
    NotWorkday,
    /// This period's digest is already out; waits for the next period.
    PeriodDone,
    /// The user's cap for today is reached; waits.
    Cap,
}

impl SkipReason {
    /// Whether the finding is reported later (it stays unreported) or never.
    pub fn waits(&self) -> bool {
        matches!(
            self,
            SkipReason::NotWorkday | SkipReason::PeriodDone | SkipReason::Cap
        )
    }

    pub fn describe(&self) -> String {
        match self {
            SkipReason::NoUser => "job has no user".into(),
            SkipReason::UnsafeUser => {
                "user name or job id is not plain (letters, digits, . _ -)".into()
            }
            SkipReason::OptedOut => "user or account opted out".into(),
            SkipReason::ShortRun => "job ran less than notify.min_run_s".into(),
            SkipReason::InsufficientTelemetry => "telemetry not enough to judge the job".into(),
            SkipReason::BelowSeverity => "below notify.min_severity".into(),
            SkipReason::AlreadyReported => "already reported".into(),
            SkipReason::TooSoon(day) => {
                format!("same kind mailed on {day}, within notify.min_days_between")
            }
            SkipReason::NotWorkday => "waits for a workday".into(),
            SkipReason::PeriodDone => "this period's digest is out; waits for the next".into(),
            SkipReason::Cap => "user's email cap for today reached; waits".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub job_id: String,
    pub user: Option<String>,
    /// The finding's kind, or `None` when the whole job is left out.
    pub kind: Option<String>,
    pub reason: SkipReason,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    pub messages: Vec<Planned>,
    pub skipped: Vec<Skipped>,
}

/// Whether `user` is a plain login name, safe in an address template and a file name.
pub fn is_safe_user(user: &str) -> bool {
    jobsight_base::text::is_login_name(user)
}

/// Whether a job id is plain enough for a message key (digits, `_` of arrays, `+` of
/// heterogeneous jobs).
pub fn is_safe_job_id(job_id: &str) -> bool {
    !job_id.is_empty()
        && job_id.len() <= 64
        && job_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '.' | '-'))
}

/// The period of a critical email about one job: `job-<id>`, and for a later run of a requeued
/// job `job-<id>.r<run>`, so that each run's critical finding has its own email (and the key of
/// a first run stays what it was before runs were told apart).
fn job_period(job: &JobReport) -> String {
    match job.restart_count {
        Some(run) if run > 0 => format!("job-{}.r{run}", job.job_id),
        _ => format!("job-{}", job.job_id),
    }
}

/// The message key of a recipient and period.
pub fn key(kind: MessageKind, user: Option<&str>, period: &str) -> String {
    match user {
        Some(user) => format!("{}.{user}.{period}", kind.name()),
        None => format!("{}.{period}", kind.name()),
    }
}

/// Plans the users' messages of a run at `now` over `jobs` (every job that ended within the
/// lookback), given the `history` (ledger rows and messages still in the outbox).
/// `with_digests = false` plans only the immediate critical emails (the per-job step).
pub fn plan(
    jobs: &[JobReport],
    history: &[LedgerRow],
    policy: &Policy,
    now: DateTime<Utc>,
    with_digests: bool,
) -> Plan {
    let today = now.date_naive();
    let mut plan = Plan::default();
    let mailed = what_was_mailed(history, today);
    let per_user = reportable_jobs(jobs, &mailed, policy, today, &mut plan.skipped);
    plan_messages(plan, per_user, &mailed, policy, today, with_digests)
}

/// What the history says, for [`plan`]: the (user, job, kind) already reported, the message keys
/// already used, the last day each user got each kind, and each user's message keys of today.
struct Mailed<'a> {
    reported: BTreeSet<(&'a str, &'a str, &'a str)>,
    keys: BTreeSet<&'a str>,
    last_mailed: BTreeMap<(&'a str, &'a str), NaiveDate>,
    today_keys: BTreeMap<&'a str, BTreeSet<&'a str>>,
}

/// The history of `today`'s run, indexed.
fn what_was_mailed(history: &[LedgerRow], today: NaiveDate) -> Mailed<'_> {
    let reported: BTreeSet<(&str, &str, &str)> = history
        .iter()
        .filter_map(|r| {
            Some((
                r.user.as_deref()?,
                r.job_id.as_deref()?,
                r.finding.as_deref()?,
            ))
        })
        .collect();
    let keys: BTreeSet<&str> = history.iter().map(|r| r.key.as_str()).collect();
    // The last day each user got each kind, and how many messages each user got today.
    let mut last_mailed: BTreeMap<(&str, &str), NaiveDate> = BTreeMap::new();
    let mut today_keys: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for row in history {
        let Some(user) = row.user.as_deref() else {
            continue;
        };
        let day = row.sent_at.unwrap_or(row.queued_at).date_naive();
        if let Some(kind) = row.finding.as_deref() {
            let last = last_mailed.entry((user, kind)).or_insert(day);
            *last = (*last).max(day);
        }
        if day == today {
            today_keys.entry(user).or_default().insert(&row.key);
        }
    }
    Mailed {
        reported,
        keys,
        last_mailed,
        today_keys,
    }
}

/// Each user's reportable jobs, each with the items that pass the rules that apply per job and
/// per item; every job and item left out goes to `skipped` with its reason.
fn reportable_jobs<'a>(
    jobs: &'a [JobReport],
    mailed: &Mailed<'a>,
    policy: &Policy,
    today: NaiveDate,
    skipped: &mut Vec<Skipped>,
) -> BTreeMap<&'a str, Vec<JobReport>> {
    let Mailed {
        reported,
        last_mailed,
        ..
    } = mailed;
    // In the order the jobs ended, so that which job of a run carries a kind of finding (and
    // which later ones are spaced out) does not depend on how the jobs were batched into runs.
    let mut in_order: Vec<&JobReport> = jobs.iter().collect();
    in_order.sort_by(|a, b| {
        (a.end, a.job_id.len(), &a.job_id).cmp(&(b.end, b.job_id.len(), &b.job_id))
    });
    let mut per_user: BTreeMap<&str, Vec<JobReport>> = BTreeMap::new();
    for job in in_order {
        let mut skip_job = |reason| {
            skipped.push(Skipped {
                job_id: job.job_id.clone(),
                user: job.user.clone(),
                kind: None,
                reason,
            })
        };
        if job.items.is_empty() {
            continue;
        }
        let Some(user) = job.user.as_deref() else {
            skip_job(SkipReason::NoUser);
            continue;
        };
        if !is_safe_user(user) || !is_safe_job_id(&job.job_id) {
            skip_job(SkipReason::UnsafeUser);
            continue;
        }
        if policy.opted_out(job) {
            skip_job(SkipReason::OptedOut);
            continue;
        }
        if job.run_s().is_none_or(|s| s < policy.min_run_s as i64) {
            skip_job(SkipReason::ShortRun);
            continue;
        }
        if job.judgeable != Some(true) && !job.judged_on_accounting() {
            skip_job(SkipReason::InsufficientTelemetry);
            continue;
        }
        let mut kept = job.clone();
        kept.items.clear();
        for item in &job.items {
            let reason = if item.severity < policy.min_severity {
                Some(SkipReason::BelowSeverity)
            } else if reported.contains(&(user, job.job_id.as_str(), item.kind.as_str())) {
                Some(SkipReason::AlreadyReported)
            } else if item.severity < Severity::Critical {
                last_mailed
                    .get(&(user, item.kind.as_str()))
                    .filter(|&&day| (today - day).num_days() < policy.min_days_between)
                    .map(|&day| SkipReason::TooSoon(day))
            } else {
                None
            };
            match reason {
                Some(reason) => skipped.push(Skipped {
                    job_id: job.job_id.clone(),
                    user: job.user.clone(),
                    kind: Some(item.kind.clone()),
                    reason,
                }),
                None => kept.items.push(item.clone()),
            }
        }
        if !kept.items.is_empty() {
            kept.items
                .sort_by(|a, b| b.severity.cmp(&a.severity).then(a.kind.cmp(&b.kind)));
            per_user.entry(user).or_default().push(kept);
        }
    }
    per_user
}

/// The messages of each user (`per_user`, from [`reportable_jobs`]): the immediate critical
/// emails, then the digest of what is left, or why each item waits.
fn plan_messages(
    mut plan: Plan,
    per_user: BTreeMap<&str, Vec<JobReport>>,
    mailed: &Mailed<'_>,
    policy: &Policy,
    today: NaiveDate,
    with_digests: bool,
) -> Plan {
    let Mailed {
        keys, today_keys, ..
    } = mailed;
    let workday = policy.is_workday(today);
    let period = policy.period.id(today);
    for (user, user_jobs) in per_user {
        // Spacing is between messages, also between the messages of this run: a kind of finding
        // (below critical) that one message tells is left out of this user's later ones. Within
        // one message every job keeps its items. The immediate emails go in the order the jobs
        // ended (`user_jobs` is in that order), so which one carries a kind does not depend on
        // how the jobs were batched into runs.
        let mut told: BTreeSet<String> = BTreeSet::new();
        let mut tell = |mut job: JobReport, told: &mut BTreeSet<String>| {
            job.items.retain(|item| {
                let spaced = item.severity < Severity::Critical && told.contains(&item.kind);
                if spaced {
                    plan.skipped.push(Skipped {
                        job_id: job.job_id.clone(),
                        user: job.user.clone(),
                        kind: Some(item.kind.clone()),
                        reason: SkipReason::TooSoon(today),
                    });
                }
                !spaced
            });
            job
        };
        let mut sent_today = today_keys.get(user).map_or(0, BTreeSet::len);
        let mut waiting: Vec<JobReport> = Vec::new();
        for job in user_jobs {
            let critical = job.top_severity() == Some(Severity::Critical);
            if policy.critical == CriticalMode::Immediate && critical {
                let period = job_period(&job);
                let key = key(MessageKind::Critical, Some(user), &period);
                if keys.contains(key.as_str()) {
                    continue;
                }
                // The last free slot is kept for the digest, which carries what does not fit.
                let free = policy
                    .max_emails_per_user_per_day
                    .saturating_sub(sent_today);
                if free > 1 || (free == 1 && !with_digests) {
                    sent_today += 1;
                    let job = tell(job, &mut told);
                    told.extend(
                        job.items
                            .iter()
                            .filter(|i| i.severity < Severity::Critical)
                            .map(|i| i.kind.clone()),
                    );
                    plan.messages.push(Planned {
                        key,
                        kind: MessageKind::Critical,
                        user: Some(user.to_string()),
                        period,
                        jobs: vec![job],
                    });
                    continue;
                }
            }
            waiting.push(job);
        }
        if !with_digests {
            continue;
        }
        let mut waiting: Vec<JobReport> = waiting
            .into_iter()
            .map(|job| tell(job, &mut told))
            .filter(|job| !job.items.is_empty())
            .collect();
        sort_jobs(&mut waiting);
        let has_critical = waiting
            .iter()
            .any(|j| j.top_severity() == Some(Severity::Critical));
        let key = key(MessageKind::Digest, Some(user), &period);
        let reason = if waiting.is_empty() {
            None
        } else if keys.contains(key.as_str()) {
            Some(SkipReason::PeriodDone)
        } else if !workday && !has_critical {
            Some(SkipReason::NotWorkday)
        } else if sent_today >= policy.max_emails_per_user_per_day {
            Some(SkipReason::Cap)
        } else {
            None
        };
        match reason {
            Some(reason) => {
                for job in &waiting {
                    for item in &job.items {
                        plan.skipped.push(Skipped {
                            job_id: job.job_id.clone(),
                            user: Some(user.to_string()),
                            kind: Some(item.kind.clone()),
                            reason: reason.clone(),
                        });
                    }
                }
            }
            None if !waiting.is_empty() => plan.messages.push(Planned {
                key,
                kind: MessageKind::Digest,
                user: Some(user.to_string()),
                period: period.clone(),
                jobs: waiting,
            }),
            None => {}
        }
    }
    plan
}

/// Most important first: the top severity, then the core-hours wasted, then the job id.
pub fn sort_jobs(jobs: &mut [JobReport]) {
    jobs.sort_by(|a, b| {
        b.top_severity()
            .cmp(&a.top_severity())
            .then(
                b.wasted_core_hours
                    .unwrap_or(0.0)
                    .total_cmp(&a.wasted_core_hours.unwrap_or(0.0)),
            )
            .then(a.job_id.cmp(&b.job_id))
    });
}

/// The admins' messages of a run: the daily digest (critical findings not yet in an admin digest;
/// once a day, on the first run with digests) and, with `admin_immediate`, one email per job with
/// a critical finding. Opt-outs, run time and spacing do not apply: admins see everything.
pub fn plan_admin(
    jobs: &[JobReport],
    history: &[LedgerRow],
    policy: &Policy,
    now: DateTime<Utc>,
    with_digests: bool,
) -> Vec<Planned> {
    let keys: BTreeSet<&str> = history.iter().map(|r| r.key.as_str()).collect();
    let reported: BTreeSet<(&str, &str)> = history
        .iter()
        .filter(|r| r.kind == MessageKind::AdminDigest.name())
        .filter_map(|r| Some((r.job_id.as_deref()?, r.finding.as_deref()?)))
        .collect();
    let mut messages = Vec::new();
    let critical_only = |job: &JobReport| {
        let mut job = job.clone();
        job.items.retain(|i| i.severity == Severity::Critical);
        job
    };
    if policy.admin_immediate {
        for job in jobs.iter().map(critical_only) {
            if job.items.is_empty() || !is_safe_job_id(&job.job_id) {
                continue;
            }
            let period = job_period(&job);
            let key = key(MessageKind::AdminCritical, None, &period);
            if !keys.contains(key.as_str()) {
                messages.push(Planned {
                    key,
                    kind: MessageKind::AdminCritical,
                    user: None,
                    period,
                    jobs: vec![job],
                });
            }
        }
    }
    let period = Period::Daily.id(now.date_naive());
    let key = key(MessageKind::AdminDigest, None, &period);
    if policy.admin_digest && with_digests && !keys.contains(key.as_str()) {
        let mut critical: Vec<JobReport> = jobs
            .iter()
            .map(|job| {
                let mut job = critical_only(job);
                job.items
                    .retain(|i| !reported.contains(&(job.job_id.as_str(), i.kind.as_str())));
                job
            })
            .filter(|job| !job.items.is_empty())
            .collect();
        sort_jobs(&mut critical);
        messages.push(Planned {
            key,
            kind: MessageKind::AdminDigest,
            user: None,
            period,
            jobs: critical,
        });
    }
    messages
}

/// The first day whose jobs a run at `now` looks at.
pub fn first_day(policy: &Policy, now: DateTime<Utc>) -> NaiveDate {
    now.date_naive() - Duration::days(policy.lookback_days.max(1) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    pub(crate) fn policy() -> Policy {
        Policy {
            period: Period::Daily,
            critical: CriticalMode::Immediate,
            min_days_between: 7,
            workdays: vec![
                Weekday::Mon,
                Weekday::Tue,
                Weekday::Wed,
                Weekday::Thu,
                Weekday::Fri,
            ],
            holidays: BTreeSet::new(),
            min_run_s: 600,
            min_severity: Severity::Warning,
            opt_out_users: BTreeSet::new(),
            opt_out_accounts: BTreeSet::new(),
            max_emails_per_user_per_day: 3,
            lookback_days: 7,
            admin_digest: true,
            admin_immediate: false,
        }
    }

    fn at(day: NaiveDate, hour: u32) -> DateTime<Utc> {
        Utc.from_utc_datetime(&day.and_hms_opt(hour, 0, 0).unwrap())
    }

    fn job(id: &str, user: &str, end: DateTime<Utc>, kinds: &[(&str, Severity)]) -> JobReport {
        JobReport {
            job_id: id.into(),
            cluster: "c".into(),
            user: Some(user.into()),
            account: Some("acct".into()),
            start: Some(end - Duration::hours(2)),
            end: Some(end),
            judgeable: Some(true),
            wasted_core_hours: Some(1.0),
            items: kinds
                .iter()
                .map(|(k, s)| Item {
                    kind: k.to_string(),
                    severity: *s,
                    title: k.to_string(),
                    message: String::new(),
                    fix: String::new(),
                    tools: String::new(),
                    node: None,
                    run: None,
                })
                .collect(),
            ..Default::default()
        }
    }

    /// What a run records: the ledger rows of its messages (as the outbox would on sending).
    fn record(plan: &Plan, now: DateTime<Utc>) -> Vec<LedgerRow> {
        let mut rows = Vec::new();
        for m in &plan.messages {
            for j in &m.jobs {
                for i in &j.items {
                    rows.push(LedgerRow {
                        key: m.key.clone(),
                        kind: m.kind.name().into(),
                        user: m.user.clone(),
                        address: String::new(),
                        period: m.period.clone(),
                        job_id: Some(j.job_id.clone()),
                        finding: Some(i.kind.clone()),
                        severity: Some(i.severity.name().into()),
                        queued_at: now,
                        sent_at: Some(now),
                        status: "sent".into(),
                        transport: "file".into(),
                    });
                }
            }
        }
        rows
    }

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
    }

    #[test]
    fn a_warning_while_the_job_ran_is_not_repeated_after_its_end() {
        let now = at(day(20), 23);
        let jobs = vec![job(
            "7",
            "alice",
            at(day(20), 10),
            &[
                ("hung-job", Severity::Critical),
                ("serial", Severity::Warning),
            ],
        )];
        // What the running DAG's warning left in the ledger: the finished-job rule it stood for.
        let warned = LedgerRow {
            key: "running.alice.job-7.running-hung.warning".into(),
            kind: MessageKind::Running.name().into(),
            user: Some("alice".into()),
            address: "alice@example.org".into(),
            period: "job-7".into(),
            job_id: Some("7".into()),
            finding: Some("hung-job".into()),
            severity: Some("critical".into()),
            queued_at: at(day(20), 8),
            sent_at: Some(at(day(20), 8)),
            status: "sent".into(),
            transport: "smtp".into(),
        };
        let plan = plan(&jobs, &[warned], &policy(), now, true);
        let reported: Vec<&str> = plan
            .messages
            .iter()
            .flat_map(|m| &m.jobs)
            .flat_map(|j| &j.items)
            .map(|i| i.kind.as_str())
            .collect();
        assert_eq!(reported, ["serial"], "{:?}", plan.messages);
        assert!(
            plan.skipped
                .iter()
                .any(|s| s.kind.as_deref() == Some("hung-job")
                    && s.reason == SkipReason::AlreadyReported)
        );
    }

    #[test]
    fn one_digest_per_user_with_every_job_most_important_first() {
        let now = at(day(20), 23);
        let jobs = vec![
            job(
                "1",
                "alice",
                at(day(20), 10),
                &[("serial", Severity::Warning)],
            ),
            job(
                "2",
                "alice",
                at(day(20), 11),
                &[("hung", Severity::Critical)],
            ),
            job("3", "bob", at(day(20), 12), &[("idle", Severity::Warning)]),
        ];
        let mut policy = policy();
        policy.critical = CriticalMode::Digest;
        let plan = plan(&jobs, &[], &policy, now, true);
        let summary: Vec<(String, Vec<String>)> = plan
            .messages
            .iter()
            .map(|m| {
                (
                    m.key.clone(),
                    m.jobs.iter().map(|j| j.job_id.clone()).collect(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (
                    "digest.alice.2026-11-20".to_string(),
                    vec!["2".into(), "1".into()]
                ),
                ("digest.bob.2026-11-20".to_string(), vec!["3".into()]),
            ]
        );
    }

    #[test]
    fn leaves_out_short_untrusted_opted_out_and_unsafe_jobs() {
        let now = at(day(20), 23);
        let mut short = job(
            "1",
            "alice",
            at(day(20), 10),
            &[("serial", Severity::Warning)],
        );
        short.start = Some(at(day(20), 10) - Duration::minutes(5));
        let mut blind = job(
            "2",
            "alice",
            at(day(20), 10),
            &[("serial", Severity::Warning)],
        );
        blind.judgeable = Some(false);
        let mut no_summary = job(
            "3",
            "alice",
            at(day(20), 10),
            &[("serial", Severity::Warning)],
        );
        no_summary.judgeable = None;
        let opted = job(
            "4",
            "carol",
            at(day(20), 10),
            &[("serial", Severity::Warning)],
        );
        let unsafe_user = job(
            "5",
            "x@evil.org,bob",
            at(day(20), 10),
            &[("s", Severity::Warning)],
        );
        let info = job("6", "dave", at(day(20), 10), &[("note", Severity::Info)]);
        let mut policy = policy();
        policy.opt_out_users.insert("carol".into());
        let plan = plan(
            &[short, blind, no_summary, opted, unsafe_user, info],
            &[],
            &policy,
            now,
            true,
        );
        assert!(plan.messages.is_empty(), "{:?}", plan.messages);
        let reasons: Vec<SkipReason> = plan.skipped.iter().map(|s| s.reason.clone()).collect();
        assert_eq!(
            reasons,
            vec![
                SkipReason::ShortRun,
                SkipReason::InsufficientTelemetry,
                SkipReason::InsufficientTelemetry,
                SkipReason::OptedOut,
                SkipReason::UnsafeUser,
                SkipReason::BelowSeverity,
            ]
        );
    }

    #[test]
    fn critical_findings_go_at_once_and_not_again_in_the_digest() {
        let now = at(day(21), 3); // a Saturday
        let jobs = vec![
            job(
                "1",
                "alice",
                at(day(21), 2),
                &[("hung", Severity::Critical)],
            ),
            job(
                "2",
                "alice",
                at(day(21), 2),
                &[("serial", Severity::Warning)],
            ),
        ];
        let first = plan(&jobs, &[], &policy(), now, false);
        assert_eq!(first.messages.len(), 1);
        assert_eq!(first.messages[0].key, "critical.alice.job-1");
        let history = record(&first, now);
        let again = plan(&jobs, &history, &policy(), now, true);
        // The warning waits for Monday; the critical one is not repeated.
        assert!(again.messages.is_empty(), "{:?}", again.messages);
        assert!(
            again
                .skipped
                .iter()
                .any(|s| s.job_id == "2" && s.reason == SkipReason::NotWorkday)
        );
        assert!(
            again
                .skipped
                .iter()
                .any(|s| s.job_id == "1" && s.reason == SkipReason::AlreadyReported)
        );
    }

    /// A requeued job's later run with a critical finding of its own gets its own critical
    /// email; what the first run's email told is not told again.
    #[test]
    fn each_run_of_a_requeued_job_has_its_own_critical_email() {
        let now = at(day(20), 12);
        let mut first = job(
            "1",
            "alice",
            at(day(20), 10),
            &[("node-fail", Severity::Critical)],
        );
        first.restart_count = Some(0);
        first.items[0].run = Some(0);
        let sent = plan(std::slice::from_ref(&first), &[], &policy(), now, false);
        assert_eq!(sent.messages[0].key, "critical.alice.job-1");
        let history = record(&sent, now);
        let mut second = job(
            "1",
            "alice",
            at(day(20), 11),
            &[("out-of-memory", Severity::Critical)],
        );
        second.restart_count = Some(1);
        second.items[0].run = Some(1);
        second.items.insert(0, first.items[0].clone());
        let again = plan(&[second], &history, &policy(), now, false);
        assert_eq!(again.messages.len(), 1, "{:?}", again.messages);
        assert_eq!(again.messages[0].key, "critical.alice.job-1.r1");
        let kinds: Vec<&str> = again.messages[0].jobs[0]
            .items
            .iter()
            .map(|i| i.kind.as_str())
            .collect();
        assert_eq!(kinds, ["out-of-memory"]);
    }

    #[test]
    fn the_cap_keeps_a_slot_for_the_digest() {
        let now = at(day(20), 23);
        let jobs: Vec<JobReport> = (1..=5)
            .map(|i| {
                job(
                    &i.to_string(),
                    "alice",
                    at(day(20), 10),
                    &[("hung", Severity::Critical)],
                )
            })
            .collect();
        let plan = plan(&jobs, &[], &policy(), now, true);
        let kinds: Vec<MessageKind> = plan.messages.iter().map(|m| m.kind).collect();
        assert_eq!(
            kinds,
            vec![
                MessageKind::Critical,
                MessageKind::Critical,
                MessageKind::Digest
            ]
        );
        assert_eq!(plan.messages[2].jobs.len(), 3);
    }

    /// A simulated month: every day each user runs jobs with the same problems. Over the month the
    /// rules must hold, whatever the mix: no kind twice to a user within 7 days (critical apart),
    /// no digest on a weekend or holiday, never more than the cap a day, nothing reported twice,
    /// and every finding either reported or left out with a reason.
    #[test]
    fn a_month_of_days_keeps_every_anti_spam_rule() {
        let mut policy = policy();
        policy.holidays.insert(day(26)); // a Thursday
        let mut history: Vec<LedgerRow> = Vec::new();
        let mut all_jobs: Vec<JobReport> = Vec::new();
        let mut next_id = 100;
        for offset in 0..30 {
            let today = day(1) + Duration::days(offset);
            for (user, kinds) in [
                ("alice", vec![("serial", Severity::Warning)]),
                (
                    "bob",
                    vec![("idle", Severity::Warning), ("hung", Severity::Critical)],
                ),
                ("carol", vec![("memleak", Severity::Critical)]),
            ] {
                for _ in 0..2 {
                    next_id += 1;
                    all_jobs.push(job(&next_id.to_string(), user, at(today, 9), &kinds));
                }
            }
            let window: Vec<JobReport> = all_jobs
                .iter()
                .filter(|j| j.end.unwrap().date_naive() >= first_day(&policy, at(today, 23)))
                .cloned()
                .collect();
            // The per-job step during the day, then the nightly digest.
            for (hour, digests) in [(10, false), (23, true)] {
                let now = at(today, hour);
                let plan = plan(&window, &history, &policy, now, digests);
                for m in &plan.messages {
                    assert!(
                        m.kind != MessageKind::Digest
                            || policy.is_workday(today)
                            || m.jobs
                                .iter()
                                .any(|j| j.top_severity() == Some(Severity::Critical)),
                        "digest on a day off: {}",
                        m.key
                    );
                }
                history.extend(record(&plan, now));
            }
        }
        // Spacing and duplicates over the whole month.
        let mut last: BTreeMap<(String, String), NaiveDate> = BTreeMap::new();
        let mut seen = BTreeSet::new();
        let mut per_user_day: BTreeMap<(String, NaiveDate), BTreeSet<String>> = BTreeMap::new();
        for row in &history {
            let user = row.user.clone().unwrap();
            let day = row.sent_at.unwrap().date_naive();
            let finding = row.finding.clone().unwrap();
            assert!(
                seen.insert((user.clone(), row.job_id.clone().unwrap(), finding.clone())),
                "reported twice: {row:?}"
            );
            per_user_day
                .entry((user.clone(), day))
                .or_default()
                .insert(row.key.clone());
            if row.severity.as_deref() != Some("critical") {
                if let Some(previous) = last.get(&(user.clone(), finding.clone())) {
                    assert!(
                        *previous == day || (day - *previous).num_days() >= 7,
                        "{finding} to {user} on {previous} and {day}"
                    );
                }
                last.insert((user, finding), day);
            }
        }
        for ((user, day), keys) in &per_user_day {
            assert!(keys.len() <= 3, "{user} got {} emails on {day}", keys.len());
        }
        // Alice's warning went out at most every 7 days, and never on the holiday or a weekend.
        let alice_days: BTreeSet<NaiveDate> = history
            .iter()
            .filter(|r| r.user.as_deref() == Some("alice"))
            .map(|r| r.sent_at.unwrap().date_naive())
            .collect();
        assert!(
            alice_days.len() >= 4 && alice_days.len() <= 5,
            "{alice_days:?}"
        );
        assert!(alice_days.iter().all(|d| policy.is_workday(*d)));
        // Every critical memleak job of carol's was reported: critical findings are never spaced.
        let carol_jobs: BTreeSet<&str> = history
            .iter()
            .filter(|r| r.user.as_deref() == Some("carol"))
            .filter_map(|r| r.job_id.as_deref())
            .collect();
        assert_eq!(carol_jobs.len(), 60);
    }

    #[test]
    fn admins_get_one_report_a_day_and_immediate_emails_when_asked() {
        let now = at(day(21), 23); // a Saturday: admins' reports go out every day
        let jobs = vec![
            job(
                "1",
                "alice",
                at(day(21), 10),
                &[("hung", Severity::Critical)],
            ),
            job(
                "2",
                "bob",
                at(day(21), 11),
                &[("serial", Severity::Warning)],
            ),
        ];
        let mut policy = policy();
        policy.admin_immediate = true;
        let first = plan_admin(&jobs, &[], &policy, now, true);
        let keys: Vec<&str> = first.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["admin-critical.job-1", "admin-digest.2026-11-21"]);
        // Only critical findings, and not again once reported.
        assert_eq!(first[1].jobs.len(), 1);
        let history = record(
            &Plan {
                messages: first,
                skipped: vec![],
            },
            now,
        );
        assert!(plan_admin(&jobs, &history, &policy, now, true).is_empty());
        let next_day = plan_admin(&jobs, &history, &policy, at(day(22), 23), true);
        assert_eq!(next_day.len(), 1);
        assert!(next_day[0].jobs.is_empty(), "reported yesterday");
    }

    #[test]
    fn weekly_periods_are_iso_weeks() {
        assert_eq!(Period::Weekly.id(day(20)), "2026-W47");
        assert_eq!(Period::Daily.id(day(20)), "2026-11-20");
    }

    #[test]
    fn safe_names() {
        assert!(is_safe_user("alice.b-2_x"));
        for bad in ["", "-x", ".x", "a b", "a@b", "a,b", "a\nb", "ä"] {
            assert!(!is_safe_user(bad), "{bad:?}");
        }
        assert!(is_safe_job_id("123_4"));
        assert!(!is_safe_job_id("1/../2"));
    }
}
