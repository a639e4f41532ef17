//! The index of the report folder: every cluster's daily system reports (newest first), its user
//! pages and how many job pages it has, and the workflow runs' pages, each linked.

use minijinja::Value;
use serde_json::json;

use jobsight_report::IndexListing;

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
