//! What the stage hands the render crate to write a message, and what it takes back: the stage
//! plans and sends, the render crate writes what a person reads (a [`crate::Draft`]'s messages).
//!
//! The stage needs the written parts ([`Rendered`]) to build the MIME message and name it in the
//! outbox; the writing needs the planned message and the site's settings the texts use
//! ([`Links`]) and, for the admins, what the run knows besides the jobs ([`AdminFacts`]). The
//! render crate renders the site's templates (`notify.templates`); a template error stops the
//! run before anything is queued.

use crate::plan::Period;

/// What a message's text parts are made from.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// Site settings the texts need.
#[derive(Debug, Clone)]
pub struct Links {
    /// With `{job_id}` and `{cluster}`.
    pub report_url: String,
    /// With `{user}` and `{cluster}`.
    pub user_url: String,
    pub max_jobs_per_digest: usize,
    pub min_days_between: i64,
    pub lookback_days: i64,
    pub period: Period,
}

/// What the admins' digest says besides the critical jobs.
#[derive(Debug, Clone, Default)]
pub struct AdminFacts {
    pub users_notified: usize,
    pub insufficient_telemetry: usize,
    /// (key, status, reason).
    pub delivery_problems: Vec<(String, String, String)>,
    /// Jobs the pipeline gave up on (the spool's failed/ records): (file, reason).
    pub given_up: Vec<(String, String)>,
}
