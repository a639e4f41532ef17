//! A page that only says something: a refusal, a missing page, an error.

use minijinja::Value;
use serde_json::json;

use super::format::c;
use super::served::with_served;
use super::{Page, PageCheck, PageTemplates};
use super::{PageError, sample};
use crate::templates::Templates;
use jobsight_report::Settings;

/// The message page's template, checked against a sample message (this folder's `check`).
pub(super) const PAGE: Page = Page {
    template: "message.html",
    text: include_str!("message.html"),
    check: PageCheck::Sample(check),
};

/// `check`'s rendering of the template to a signed-in person and to nobody.
fn check(pages: &Templates, _: &Settings) -> Result<(), PageError> {
    let refused = message_page("refused", "not yours");
    pages.render(
        PAGE.template,
        &with_served(refused, &sample::admin(), json!({})),
    )?;
    pages.render(PAGE.template, &message_page("not signed in", "no user"))?;
    Ok(())
}

impl PageTemplates {
    /// A message page without a signed-in person (a refused request).
    pub fn render_message(&self, value: &Value) -> Result<String, String> {
        self.templates
            .render(PAGE.template, value)
            .map_err(|e| e.to_string())
    }
}

/// A page that only says something: a refusal, a missing page, an error.
pub fn message_page(title: &str, text: &str) -> Value {
    crate::templates::value(json!({
        "title": c(title), "root": "/", "text": jobsight_base::text::clean(text, 2_000),
    }))
}
