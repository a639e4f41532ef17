//! The emails of the notify stage, written here: the stage plans who gets what and sends it, and
//! this module writes what a person reads of each message ([`EmailTemplates`]) between the two
//! ([`run`], [`send_running`]), from the template contexts ([`context`]) and the template files
//! ([`templates`]).
//!
//! The built-in templates live in `pipeline/render/src/email/templates/` and are compiled in; a
//! site sets `notify.templates` to a directory with its own nine files (`jobsight notify
//! --write-templates DIR` starts one from the built-in ones, [`write_builtin`]). Every placeholder
//! is listed in [`placeholders::DIGEST_PLACEHOLDERS`] and [`placeholders::ADMIN_PLACEHOLDERS`] (and
//! in docs/email.md); a unit test keeps those lists and the contexts built here equal, and
//! [`EmailTemplates::check`] renders every template against samples ([`sample`]) with all of them,
//! so an unknown name is an error at `jobsight check` ([`check`]).

pub mod context;
pub mod placeholders;
pub mod sample;
pub mod templates;
pub mod values;

pub use templates::{EmailTemplates, write_builtin};

use std::path::Path;

use chrono::{DateTime, Utc};
use jobsight_notify::running::Warning;
use jobsight_notify::{Draft, NotifyError, Report, RunOptions, Settings};
use placeholders::{ADMIN_PLACEHOLDERS, DIGEST_PLACEHOLDERS};

/// One notify run: the stage recovers, reads and plans ([`jobsight_notify::prepare`]), `templates`
/// write every message, and the stage queues and delivers them ([`jobsight_notify::send`]). A
/// template error stops the run before anything is queued.
pub fn run(
    data: &Path,
    settings: &Settings,
    options: &RunOptions,
    templates: &EmailTemplates,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, NotifyError> {
    let draft = jobsight_notify::prepare(data, settings, options, progress)?;
    write_and_send(data, settings, draft, templates, progress)
}

/// Sends the warnings about running jobs not sent before ([`jobsight_notify::prepare_running`]
/// says which), in the words of `templates`, through the same outbox as the digests.
pub fn send_running(
    data: &Path,
    settings: &Settings,
    warnings: &[Warning],
    templates: &EmailTemplates,
    now: DateTime<Utc>,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, NotifyError> {
    let draft = jobsight_notify::prepare_running(data, settings, warnings, now)?;
    write_and_send(data, settings, draft, templates, progress)
}

fn write_and_send(
    data: &Path,
    settings: &Settings,
    draft: Draft,
    templates: &EmailTemplates,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, NotifyError> {
    let rendered = draft
        .messages
        .iter()
        .map(|message| templates.write(message, &draft, settings))
        .collect::<Result<Vec<_>, _>>()?;
    jobsight_notify::send(data, settings, draft, rendered, progress)
}

/// What `jobsight check` says of the notify stage: its site files (the stage's own check), then
/// the templates of `notify.templates`, each checked against the documented placeholders and
/// rendered against the samples. The first error stops it.
pub fn check(settings: &Settings) -> Result<String, NotifyError> {
    let files = jobsight_notify::check(settings)?;
    EmailTemplates::load(settings.templates.as_deref())?.check()?;
    Ok(format!(
        "notify: templates {} pass ({} placeholders documented); {} holiday(s), {} recipient(s) from files; delivery {}",
        settings
            .templates
            .as_ref()
            .map_or("(built-in)".to_string(), |p| p.display().to_string()),
        DIGEST_PLACEHOLDERS.len() + ADMIN_PLACEHOLDERS.len(),
        files.holidays.len(),
        files.recipients.len(),
        settings.transport.name(),
    ))
}
