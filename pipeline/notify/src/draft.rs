//! A notify run in two halves around the writing: [`prepare`] settles what a dead run left
//! half-sent, reads the warehouse and plans (or, for running jobs, [`prepare_running`] picks
//! the warnings not sent before); the render crate writes each planned [`Message`]; and
//! [`send`] addresses, builds, queues and delivers them. The stage never calls what writes the
//! texts: it hands over the plan and takes back the texts, in the same order.
//!
//! A [`Draft`] holds the outbox's lock from [`prepare`] to the end of [`send`], so another run
//! (the running DAG's warnings beside the per-job DAG) cannot take its messages for a dead run's.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use chrono::{DateTime, Utc};

use crate::message::{AdminFacts, Rendered};
use crate::outbox::Outbox;
use crate::plan::{self, JobReport, MessageKind, Plan, Planned};
use crate::running::Warning;
use crate::{
    NotifyError, Prepared, Report, RunOptions, Settings, SiteFiles, build_message,
    delivery_problems, input, load_site_files, queue_and_deliver, recipients,
};

/// One message to write: what was planned, and for a warning about a running job, the warning.
#[derive(Debug, Clone)]
pub struct Message {
    pub planned: Planned,
    pub warning: Option<Warning>,
}

impl Message {
    /// Whether the admins' templates write it (else a user's: a digest, a critical email, or a
    /// warning about a running job).
    pub fn for_admins(&self) -> bool {
        matches!(
            self.planned.kind,
            MessageKind::AdminDigest | MessageKind::AdminCritical
        )
    }
}

/// A run planned and not yet written: the messages to write, and what the admins' messages
/// need besides.
#[derive(Debug)]
pub struct Draft {
    /// In the order [`send`] takes their texts back.
    pub messages: Vec<Message>,
    /// Every job of the lookback: the admins' messages list the broken nodes and the top
    /// wasters from it.
    pub window: Vec<JobReport>,
    pub facts: AdminFacts,
    report: Report,
    outbox: Outbox,
    files: SiteFiles,
    /// Held to the end of [`send`]; none on a dry run, which takes no lock.
    _lock: Option<fs::File>,
    /// Put before each key in test mode (`test-<time>.`) by [`send`]; `None` for a running
    /// draft, whose keys carry it already.
    test_prefix: Option<String>,
    now: DateTime<Utc>,
    dry_run: bool,
}

/// Recovers, reads and plans one notify run (see the crate's doc). Nothing is queued yet.
pub fn prepare(
    data: &Path,
    settings: &Settings,
    options: &RunOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<Draft, NotifyError> {
    let now = options.now;
    let mut draft = open_draft(data, settings, now, options.dry_run)?;
    let mut policy = settings.policy.clone();
    policy.holidays = draft.files.holidays.clone();

    progress("reading the warehouse");
    let today = now.date_naive();
    let first = plan::first_day(&policy, now);
    let runtime = tokio::runtime::Runtime::new().map_err(NotifyError::Runtime)?;
    let jobs = input::read_jobs(&runtime, data, first, today, now)?;
    draft.report.jobs_read = jobs.len();
    // The history reaches back as far as the spacing rule and the lookback need, and forward to
    // the present: a run that plans an earlier day (a nightly run catching up) must still see the
    // critical email a per-job run sent since, or its digest tells the same finding again.
    let since = first.min(today - chrono::Duration::days(policy.min_days_between.max(1)));
    let mut history = input::read_ledger(&runtime, data, since, None)?;
    history.extend(draft.outbox.pending_rows()?);

    let with_digests = !options.critical_only;
    let Plan { messages, skipped } = plan::plan(&jobs, &history, &policy, now, with_digests);
    draft.report.skipped = skipped;
    let admin = plan::plan_admin(&jobs, &history, &policy, now, with_digests);

    let facts = AdminFacts {
        users_notified: messages
            .iter()
            .filter_map(|m| m.user.as_deref())
            .collect::<BTreeSet<_>>()
            .len(),
        insufficient_telemetry: draft
            .report
            .skipped
            .iter()
            .filter(|s| s.reason == plan::SkipReason::InsufficientTelemetry)
            .count(),
        delivery_problems: delivery_problems(&draft.outbox)?,
        given_up: options.given_up.clone(),
    };
    draft.messages = messages
        .into_iter()
        .chain(admin)
        .map(|planned| Message {
            planned,
            warning: None,
        })
        .collect();
    draft.window = jobs;
    draft.facts = facts;
    draft.test_prefix = test_prefix(settings, now);
    Ok(draft)
}

/// A draft with nothing planned yet: the site files read, the outbox opened, locked and
/// recovered; on a dry run only read, without a lock or a recovery, since a dry run changes
/// nothing, not even by creating the outbox's directories.
fn open_draft(
    data: &Path,
    settings: &Settings,
    now: DateTime<Utc>,
    dry_run: bool,
) -> Result<Draft, NotifyError> {
    let files = load_site_files(settings)?;
    let outbox = if dry_run {
        Outbox::at(&settings.outbox)
    } else {
        Outbox::open(&settings.outbox)?
    };
    let lock = if dry_run { None } else { Some(outbox.lock()?) };
    let recovered = if dry_run {
        Default::default()
    } else {
        outbox.recover(data, &settings.transport, now)?
    };
    Ok(Draft {
        messages: Vec::new(),
        window: Vec::new(),
        facts: AdminFacts::default(),
        report: Report {
            outbox: settings.outbox.clone(),
            recovered,
            ..Default::default()
        },
        outbox,
        files,
        _lock: lock,
        test_prefix: None,
        now,
        dry_run,
    })
}

/// What test mode puts before each key (`test-<time>.`), so that test messages never take a
/// real message's key; `None` outside test mode.
fn test_prefix(settings: &Settings, now: DateTime<Utc>) -> Option<String> {
    settings
        .test_mode
        .then(|| format!("test-{}.", now.format("%Y%m%dT%H%M%S")))
}

/// Plans `warnings` not sent before (see [`crate::running`]) as a [`Draft`] for the render crate to
/// write and [`crate::send`] to queue and deliver; the others are in the draft's report,
/// skipped with why. The draft holds the outbox's lock.
pub fn prepare_running(
    data: &Path,
    settings: &Settings,
    warnings: &[Warning],
    now: DateTime<Utc>,
) -> Result<Draft, NotifyError> {
    // The keys carry the test prefix from here, so the draft's own stays `None`.
    let mut draft = open_draft(data, settings, now, false)?;
    let today = now.date_naive();
    let runtime = tokio::runtime::Runtime::new().map_err(NotifyError::Runtime)?;
    let first = today - chrono::Duration::days(settings.policy.lookback_days.max(1));
    let mut history = input::read_ledger(&runtime, data, first, Some(today))?;
    history.extend(draft.outbox.pending_rows()?);
    let mut sent: BTreeSet<String> = history.into_iter().map(|r| r.key).collect();
    let test_prefix = test_prefix(settings, now);
    for warning in warnings {
        let job = &warning.job;
        let skip = |reason| plan::Skipped {
            user: job.user.clone(),
            job_id: job.job_id.clone(),
            kind: Some(warning.rule.clone()),
            reason,
        };
        let skipped = &mut draft.report.skipped;
        let Some(key) = warning.key() else {
            skipped.push(skip(plan::SkipReason::UnsafeUser));
            continue;
        };
        if !sent.insert(key.clone()) {
            skipped.push(skip(plan::SkipReason::AlreadyReported));
            continue;
        }
        if settings.policy.opted_out(job) {
            skipped.push(skip(plan::SkipReason::OptedOut));
            continue;
        }
        draft.messages.push(Message {
            planned: Planned {
                key: match &test_prefix {
                    Some(prefix) => format!("{prefix}{key}"),
                    None => key,
                },
                kind: MessageKind::Running,
                user: job.user.clone(),
                period: format!("job-{}", job.job_id),
                jobs: vec![job.clone()],
            },
            warning: Some(warning.clone()),
        });
    }
    Ok(draft)
}

/// Addresses, builds, queues and delivers the draft's messages with their texts (`rendered`, one
/// per message, in order), with the `settings` the draft was prepared with. A dry run stops
/// before queueing and changes nothing.
pub fn send(
    data: &Path,
    settings: &Settings,
    draft: Draft,
    rendered: Vec<Rendered>,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, NotifyError> {
    if rendered.len() != draft.messages.len() {
        return Err(NotifyError::Draft(format!(
            "{} message(s) planned but {} written",
            draft.messages.len(),
            rendered.len()
        )));
    }
    let Draft {
        messages,
        mut report,
        outbox,
        files,
        _lock,
        test_prefix,
        now,
        dry_run,
        ..
    } = draft;
    for (message, rendered) in messages.into_iter().zip(rendered) {
        let mut planned = message.planned;
        let Some(to) = recipients(planned.user.as_deref(), settings, &files) else {
            report.no_address.extend(planned.user.clone());
            continue;
        };
        if let Some(prefix) = &test_prefix {
            planned.key = format!("{prefix}{}", planned.key);
        }
        let eml = build_message(&planned.key, &rendered, settings, &to, now)?;
        report.prepared.push(Prepared {
            planned,
            to,
            rendered,
            eml,
            queued: false,
        });
    }
    if dry_run {
        return Ok(report);
    }
    queue_and_deliver(data, settings, &outbox, &mut report, now, progress)?;
    Ok(report)
}
