//! The email templates: the nine files (built in, or a site's own in `notify.templates`), loaded
//! and checked, and what writes each message of a notify stage's draft ([`EmailTemplates::write`]).
//!
//! The built-in templates live in `pipeline/render/src/email/templates/` and are compiled in;
//! `jobsight notify --write-templates DIR` copies them out ([`write_builtin`]) for a site to start
//! its own from.

use std::path::{Path, PathBuf};

use jobsight_base::templates::TemplateError;

use super::context::{admin_context, digest_context, running_context};
use super::placeholders::{ADMIN_PLACEHOLDERS, DIGEST_PLACEHOLDERS, RUNNING_PLACEHOLDERS};
use super::sample::{sample_admin, sample_digest, sample_running};
use super::values::{Context, to_jinja};
use jobsight_notify::message::Rendered;
use jobsight_notify::running::Stage;
use jobsight_notify::{Draft, Message, Settings};

/// The nine template files: name and built-in text. How a file's values are escaped follows
/// from its name ([`jobsight_base::templates`]): `.html` for HTML, `.subject` as one header line.
pub const FILES: [(&str, &str); 9] = [
    ("digest.subject", include_str!("templates/digest.subject")),
    ("digest.txt", include_str!("templates/digest.txt")),
    ("digest.html", include_str!("templates/digest.html")),
    ("admin.subject", include_str!("templates/admin.subject")),
    ("admin.txt", include_str!("templates/admin.txt")),
    ("admin.html", include_str!("templates/admin.html")),
    ("running.subject", include_str!("templates/running.subject")),
    ("running.txt", include_str!("templates/running.txt")),
    ("running.html", include_str!("templates/running.html")),
];

/// The loaded templates: what writes the notify stage's messages.
#[derive(Debug)]
pub struct EmailTemplates {
    set: crate::templates::Templates,
}

impl EmailTemplates {
    /// The built-in templates, each replaced by the file of the same name in `dir` if it has one.
    pub fn load(dir: Option<&Path>) -> Result<EmailTemplates, TemplateError> {
        Ok(EmailTemplates {
            set: crate::templates::Templates::load(&FILES, dir)?,
        })
    }

    /// Checks every template: the names it uses outside a loop are documented placeholders of
    /// its message (found in any branch, taken or not), and it renders against samples with
    /// every placeholder set, in both shapes (a digest and a critical email), so a misspelt
    /// name inside a loop is found too.
    pub fn check(&self) -> Result<(), TemplateError> {
        for (name, _) in FILES {
            let documented = if name.starts_with("digest") {
                DIGEST_PLACEHOLDERS
            } else if name.starts_with("running") {
                RUNNING_PLACEHOLDERS
            } else {
                ADMIN_PLACEHOLDERS
            };
            let known: Vec<&str> = documented
                .iter()
                .filter(|(scope, _, _)| *scope == "message")
                .map(|(_, n, _)| *n)
                .collect();
            self.set.check_names(name, &known)?;
        }
        for critical in [false, true] {
            self.render_digest(&sample_digest(critical))?;
            self.render_admin(&sample_admin(critical))?;
        }
        for stage in [Stage::Warning, Stage::SecondWarning, Stage::Cancelled] {
            self.render_running(&sample_running(stage))?;
        }
        Ok(())
    }

    fn render(&self, prefix: &str, context: &Context) -> Result<Rendered, TemplateError> {
        let value = to_jinja(context);
        let get = |suffix: &str| self.set.render(&format!("{prefix}.{suffix}"), &value);
        Ok(Rendered {
            subject: get("subject")?,
            text: get("txt")?,
            html: get("html")?,
        })
    }

    pub fn render_digest(&self, context: &Context) -> Result<Rendered, TemplateError> {
        self.render("digest", context)
    }

    pub fn render_admin(&self, context: &Context) -> Result<Rendered, TemplateError> {
        self.render("admin", context)
    }

    pub fn render_running(&self, context: &Context) -> Result<Rendered, TemplateError> {
        self.render("running", context)
    }
}

impl EmailTemplates {
    /// One of a notify draft's messages in the words of these templates: a warning about a
    /// running job, an admins' message (with the draft's window and facts), or a user's digest or
    /// critical email.
    pub fn write(
        &self,
        message: &Message,
        draft: &Draft,
        settings: &Settings,
    ) -> Result<Rendered, TemplateError> {
        let planned = &message.planned;
        if let Some(warning) = &message.warning {
            return self.render_running(&running_context(planned, warning));
        }
        if message.for_admins() {
            return self.render_admin(&admin_context(
                planned,
                &draft.window,
                &draft.facts,
                &settings.links,
                settings.top_wasters,
            ));
        }
        self.render_digest(&digest_context(planned, &settings.links))
    }
}

/// Writes the built-in templates into `dir` (created), refusing to overwrite a file.
pub fn write_builtin(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (name, text) in FILES {
        let path = dir.join(name);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        std::io::Write::write_all(&mut file, text.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_templates_pass_the_check() {
        EmailTemplates::load(None).unwrap().check().unwrap();
    }

    #[test]
    fn a_broken_site_template_is_reported_with_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        write_builtin(dir.path()).unwrap();
        // In a branch the samples never show: still found.
        std::fs::write(
            dir.path().join("digest.txt"),
            "Hello {{ user }}\n{% if not jobs %}{{ jobid }}{% endif %}",
        )
        .unwrap();
        let err = EmailTemplates::load(Some(dir.path()))
            .unwrap()
            .check()
            .unwrap_err();
        assert!(err.path.ends_with("digest.txt"));
        assert_eq!(err.line, Some(2));
        assert!(err.reason.contains("`jobid`"), "{err}");
        // A file that is no template's is refused: a typo would otherwise be ignored.
        std::fs::write(dir.path().join("admin.htm"), "x").unwrap();
        let err = EmailTemplates::load(Some(dir.path())).unwrap_err();
        assert!(err.to_string().contains("admin.htm"), "{err}");
    }
}
