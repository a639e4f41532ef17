//! The index of the report folder: every cluster's daily system reports (newest first), its user
//! pages and how many job pages it has, and the workflow runs' pages, each linked.

use std::path::Path;

use minijinja::Value;
use serde_json::json;

use super::{Page, PageCheck, PageTemplates};
use jobsight_report::{IndexListing, ReportError, index_listing, write_page};

/// The index's template, checked by the names it may use: the day report's, as both list pages
/// of the folder.
pub(super) const PAGE: Page = Page {
    template: "index.html",
    text: include_str!("index.html"),
    check: PageCheck::Names(&super::day::NAMES),
};

impl PageTemplates {
    /// The index of the report folder.
    pub fn index(&self, listing: &IndexListing) -> Result<String, String> {
        self.templates
            .render(PAGE.template, &index_page(listing))
            .map_err(|e| e.to_string())
    }

    /// Its values, for the web interface.
    pub fn index_value(&self, listing: &IndexListing) -> Value {
        index_page(listing)
    }
}

/// The index: every cluster's day reports and user pages found in the folder, newest day first.
pub(super) fn write_index(dir: &Path, pages: &PageTemplates) -> Result<(), ReportError> {
    let text = pages
        .index(&index_listing(dir))
        .map_err(ReportError::Render)?;
    write_page(&dir.join("index.html"), &text)
}

/// The index page's values. The listed names are the page files' names already (slugs), so a
/// link is the folder and the name.
pub fn index_page(listing: &IndexListing) -> Value {
    let clusters: Vec<serde_json::Value> = listing
        .clusters
        .iter()
        .map(|cluster| {
            let name = &cluster.name;
            json!({
                "name": name,
                "days": cluster.days.iter().map(|d| json!({"name": d, "href": format!("{name}/days/{d}.html")})).collect::<Vec<_>>(),
                "users": cluster.users.iter().map(|u| json!({"name": u, "href": format!("{name}/users/{u}.html")})).collect::<Vec<_>>(),
                "jobs": cluster.jobs,
            })
        })
        .collect();
    crate::templates::value(json!({
        "title": "jobsight reports",
        "root": "",
        "clusters": clusters,
        "workflows": listing.workflows.iter().map(|w| json!({"name": w, "href": format!("workflows/{w}.html")})).collect::<Vec<_>>(),
    }))
}
