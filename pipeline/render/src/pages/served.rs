//! What every page of the web interface (`jobsight serve --http`) shares: the values each
//! served page gets under `served` (who is signed in, the CSRF token of their forms, whether
//! they are an admin), what a served job page adds (its forms, its download and comparison
//! links), a metric charted alone, and the served paths. The web interface's own pages are
//! folders beside this one (`jobs`, `compare`, `message`); the job, user, day, workflow and index
//! pages are the report's own, with `served` added.

use std::collections::BTreeMap;

use minijinja::Value;
use serde_json::json;

use super::charts::{self, MetricChart, mean_across};
use super::format::c;
use jobsight_report::JobPage;

/// The anomaly labels an admin may give a job from its page: healthy, then HPAS's anomalies
/// and the common inefficiencies the models know.
pub const LABELS: [&str; 10] = [
    "none",
    "cpuoccupy",
    "cachecopy",
    "membw",
    "memleak",
    "memeater",
    "iobandwidth",
    "iometadata",
    "hung",
    "serial",
];

/// Who a served page is for.
#[derive(Debug, Clone)]
pub struct Served {
    pub me: String,
    pub admin: bool,
    /// The accounts they see as a coordinator.
    pub coordinates: Vec<String>,
    /// The CSRF token of their forms.
    pub csrf: String,
}

impl Served {
    fn values(&self) -> serde_json::Value {
        json!({
            "me": c(&self.me), "admin": self.admin, "csrf": self.csrf,
            "coordinates": self.coordinates.iter().map(|a| c(a)).collect::<Vec<_>>(),
            "jobs_href": "/jobs",
        })
    }
}

/// `page` with `served` added (and the served job page's own values, when given).
pub fn with_served(page: Value, served: &Served, extra: serde_json::Value) -> Value {
    let mut values = served.values();
    if let (Some(to), serde_json::Value::Object(from)) = (values.as_object_mut(), extra) {
        to.extend(from);
    }
    minijinja::value::merge_maps([
        Value::from(BTreeMap::from([(
            "served",
            crate::templates::value(values),
        )])),
        page,
    ])
}

/// What a served job page adds: its feedback forms' target, the person's earlier judgements
/// (`subject:item` to `useful` or `wrong`), the download and comparison links, the labels.
pub fn job_extra(page: &JobPage, judged: &BTreeMap<String, String>) -> serde_json::Value {
    let job = &page.job;
    json!({
        "cluster": job.cluster, "job_id": job.job_id,
        "judged": judged,
        "download_href": format!("/download/{}/{}.csv", urlencode(&job.cluster), urlencode(&job.job_id)),
        "labels": LABELS,
        "charts": page.facts.telemetry.get(&job.job_id).map(|s| {
            s.values().flat_map(|m| m.keys()).collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .map(|m| json!({"metric": c(m), "href": format!("/chart/{}/{}/{}.svg",
                    urlencode(&job.cluster), urlencode(&job.job_id), urlencode(m))}))
                .collect::<Vec<_>>()
        }).unwrap_or_default(),
    })
}

/// One metric of a job charted alone (the served chart download): each node's line over hours
/// since the job's start. `None` when the job has no telemetry of `metric`.
pub fn metric_svg(page: &JobPage, metric: &str) -> Option<Result<String, charts::ChartError>> {
    let series = page.facts.telemetry.get(&page.job.job_id)?;
    let nodes: Vec<(String, Vec<(f64, f64)>)> = series
        .iter()
        .filter_map(|(node, m)| m.get(metric).map(|p| (c(node), p.clone())))
        .collect();
    if nodes.is_empty() {
        return None;
    }
    let mut chart = MetricChart {
        title: c(metric),
        ..Default::default()
    };
    if nodes.len() > charts::MAX_NODE_LINES {
        chart.nodes = vec![(
            format!("mean of {} nodes", nodes.len()),
            mean_across(series, metric),
        )];
    } else {
        chart.nodes = nodes;
    }
    Some(charts::metric_chart(&chart))
}

/// `text` for a URL's path segment or query value.
pub fn urlencode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The served path of a job's page.
pub fn job_href(cluster: &str, job_id: &str) -> String {
    format!(
        "/{}",
        jobsight_report::job_path(cluster, job_id)
            .to_string_lossy()
            .replace('\\', "/")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_carry_any_text_safely() {
        assert_eq!(urlencode("a b/&c"), "a%20b%2F%26c");
        assert_eq!(urlencode("1234_5"), "1234_5");
        assert_eq!(job_href("demo", "1001"), "/demo/jobs/1001.html");
    }
}
