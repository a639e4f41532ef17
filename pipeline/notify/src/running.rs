//! Warnings about jobs that still run: the running DAG decides what to say (a condition that held
//! for its dwell, a second warning, a cancellation under the site's policy),
//! [`crate::prepare_running`] plans them, and they are sent through the same outbox and ledger as
//! the digests ([`crate::send`]).
//!
//! Each warning has its own key, `running.<user>.job-<id>.<rule>.<stage>`, so a job is warned
//! at most once per condition and stage however often the DAG runs: a key already in the
//! ledger or the outbox is not planned again. The ledger row names the finished-job rule the
//! warning stands for (`at_end`), so the emails after the job's end do not say it again.
//! Opt-outs hold as for digests; the daily cap does not (a warning is urgent, like a critical
//! email).

use chrono::{DateTime, Utc};

use crate::plan::{self, JobReport, MessageKind};

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
