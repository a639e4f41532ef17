//! The emails of the notify stage, written here: the stage plans who gets what and sends it, and
//! this module writes what a person reads of each message ([`EmailTemplates`], the stage's
//! [`jobsight_notify::Writer`]), from the template contexts ([`context`]) and the six template files
//! ([`templates`]).
//!
//! The built-in templates live in `pipeline/render/templates/email/` and are compiled in; a site sets
//! `notify.templates` to a directory with its own six files (`jobsight notify --write-templates
//! DIR` starts one from the built-in ones, [`write_builtin`]). Every placeholder is listed in
//! [`placeholders::DIGEST_PLACEHOLDERS`] and [`placeholders::ADMIN_PLACEHOLDERS`] (and in
//! docs/email.md); a unit test keeps those lists and the contexts built here equal, and
//! [`EmailTemplates::check`] renders every template against samples ([`sample`]) with all of
//! them, so an unknown name is an error at `jobsight check` ([`check`]).

pub mod context;
pub mod placeholders;
pub mod sample;
pub mod templates;
pub mod values;

pub use templates::{EmailTemplates, write_builtin};

use jobsight_notify::{NotifyError, Settings};
use placeholders::{ADMIN_PLACEHOLDERS, DIGEST_PLACEHOLDERS};

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
