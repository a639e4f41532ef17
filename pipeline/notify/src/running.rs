//! Warnings about jobs that still run: the running DAG decides what to say (a condition that
//! held for its dwell, a second warning, a cancellation under the site's policy), and this sends
//! it through the same outbox and ledger as the digests.
//!
//! Each warning has its own key, `running.<user>.job-<id>.<rule>.<stage>`, so a job is warned
//! at most once per condition and stage however often the DAG runs: a key already in the
//! ledger or the outbox is not planned again. The ledger row names the finished-job rule the
//! warning stands for (`at_end`), so the emails after the job's end do not say it again.
//! Opt-outs hold as for digests; the daily cap does not (a warning is urgent, like a critical
//! email).

use std::collections::BTreeSet;
use std::path::Path;

use chrono::{DateTime, Utc};

use crate::plan::{self, JobReport, MessageKind, Planned};
use crate::{NotifyError, Prepared, Report, Settings, Writer, input, outbox::Outbox};

/// Where a job is in the site's cancel policy when its owner is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// The first warning (the only one without a cancel policy).
    Warning,
    /// The second warning, before the policy cancels.
    SecondWarning,
    /// The job was cancelled.
    Cancelled,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Warning => "warning",
            Stage::SecondWarning => "second-warning",
            Stage::Cancelled => "cancelled",
        }
    }
}

/// One warning to send: the job (with one item, the condition's finding, whose `kind` is the
/// finished-job rule it stands for) and what the policy will do next.
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    pub job: JobReport,
    /// The running rule's id.
    pub rule: String,
    pub stage: Stage,
    /// How long the condition has held, seconds.
    pub held_s: u64,
    /// When the site's policy cancels the job if nothing changes; `None`: it will not.
    pub cancel_at: Option<DateTime<Utc>>,
}

impl Warning {
    /// The message key (see the module doc); `None` for a job without a safe user or id.
    pub fn key(&self) -> Option<String> {
        let user = self.job.user.as_deref().filter(|u| plan::is_safe_user(u))?;
        if !plan::is_safe_job_id(&self.job.job_id) {
            return None;
        }
        let period = format!(
            "job-{}.{}.{}",
            self.job.job_id,
            self.rule,
            self.stage.name()
        );
        Some(plan::key(MessageKind::Running, Some(user), &period))
    }
}

/// Sends `warnings` not sent before (see the module doc) and delivers what is due. Returns the
/// report, whose `prepared` are the warnings queued now and `skipped` the others with why.
pub fn send(
    data: &Path,
    settings: &Settings,
    warnings: &[Warning],
    writer: &dyn Writer,
    now: DateTime<Utc>,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, NotifyError> {
    let files = crate::load_site_files(settings)?;
    let outbox = Outbox::open(&settings.outbox)?;
    let mut report = Report {
        outbox: settings.outbox.clone(),
        ..Default::default()
    };
    let _lock = outbox.lock()?;
    report.recovered = outbox.recover(data, &settings.transport, now)?;
    let today = now.date_naive();
    let runtime = tokio::runtime::Runtime::new().map_err(NotifyError::Runtime)?;
    let first = today - chrono::Duration::days(settings.policy.lookback_days.max(1));
    let mut history = input::read_ledger(&runtime, data, first, Some(today))?;
    history.extend(outbox.pending_rows()?);
    let mut sent: BTreeSet<String> = history.into_iter().map(|r| r.key).collect();
    let test_prefix = settings
        .test_mode
        .then(|| format!("test-{}.", now.format("%Y%m%dT%H%M%S")));
    for warning in warnings {
        let job = &warning.job;
        let skip = |reason| plan::Skipped {
            user: job.user.clone(),
            job_id: job.job_id.clone(),
            kind: Some(warning.rule.clone()),
            reason,
        };
        let Some(key) = warning.key() else {
            report.skipped.push(skip(plan::SkipReason::UnsafeUser));
            continue;
        };
        if !sent.insert(key.clone()) {
            report.skipped.push(skip(plan::SkipReason::AlreadyReported));
            continue;
        }
        if settings.policy.opted_out(job) {
            report.skipped.push(skip(plan::SkipReason::OptedOut));
            continue;
        }
        let planned = Planned {
            key: match &test_prefix {
                Some(prefix) => format!("{prefix}{key}"),
                None => key,
            },
            kind: MessageKind::Running,
            user: job.user.clone(),
            period: format!("job-{}", job.job_id),
            jobs: vec![job.clone()],
        };
        let rendered = writer.running(&planned, warning, &settings.links)?;
        let Some(to) = crate::recipients(planned.user.as_deref(), settings, &files) else {
            report.no_address.extend(planned.user.clone());
            continue;
        };
        let eml = crate::build_message(&planned.key, &rendered, settings, &to, now)?;
        report.prepared.push(Prepared {
            planned,
            to,
            rendered,
            eml,
            queued: false,
        });
    }
    crate::queue_and_deliver(data, settings, &outbox, &mut report, now, progress)?;
    Ok(report)
}
