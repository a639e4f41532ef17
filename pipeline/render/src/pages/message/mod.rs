//! A page that only says something: a refusal, a missing page, an error.

use minijinja::Value;
use serde_json::json;

use super::format::c;
use super::{Page, PageCheck};

/// The message page's template, checked against a sample message (`sample::check_served`).
pub(super) const PAGE: Page = Page {
    template: "message.html",
    text: include_str!("message.html"),
    check: PageCheck::Sample,
};

/// A page that only says something: a refusal, a missing page, an error.
pub fn message_page(title: &str, text: &str) -> Value {
    crate::templates::value(json!({
        "title": c(title), "root": "/", "text": jobsight_base::text::clean(text, 2_000),
    }))
}
