//! What the stage hands the application to write a message, and what it gets back: the stage
//! plans and sends, the application writes what a person reads ([`Writer`]).
//!
//! The stage needs the written parts ([`Rendered`]) to build the MIME message and name it in the
//! outbox; the writer needs the planned message and the site's settings the texts use
//! ([`Links`]) and, for the admins, what the run knows besides the jobs ([`AdminFacts`]). The
//! application's writer renders the site's templates (`notify.templates`); a template error stops
//! the run before anything is queued.

use jobsight_base::templates::TemplateError;

use crate::plan::{JobReport, Period, Planned};

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

/// What a person reads of a message, written by the application (the stage plans and sends).
/// An error names the template file and line, as `jobsight check` would.
pub trait Writer {
    /// A user's digest, or an email about one job's critical finding.
    fn digest(&self, message: &Planned, links: &Links) -> Result<Rendered, TemplateError>;

    /// A warning about a job that still runs, or the news that the site's policy cancelled it.
    fn running(
        &self,
        message: &Planned,
        warning: &crate::running::Warning,
        links: &Links,
    ) -> Result<Rendered, TemplateError>;

    /// The admins' digest, or an immediate email about one job. `window` is every job of the
    /// lookback (for the broken nodes and the top `top_wasters` wasters).
    fn admin(
        &self,
        message: &Planned,
        window: &[JobReport],
        facts: &AdminFacts,
        links: &Links,
        top_wasters: usize,
    ) -> Result<Rendered, TemplateError>;
}
