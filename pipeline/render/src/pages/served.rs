//! What the web interface (`jobsight serve --http`) shows beyond the report files: the values
//! every served page gets under `served` (who is signed in, the CSRF token of their forms,
//! whether they are an admin), the job list with its filters and sort links, two jobs side by
//! side on one time axis, and the pages that say a request was refused or failed. The job, user,
//! day, workflow and index pages are the report's own, with `served` added.

use std::collections::BTreeMap;

use jobsight_base::plain;
use minijinja::Value;
use serde_json::json;

use super::charts::{self, MetricChart};
use super::format::{c, duration, pct, with_charts};
use super::job::{job_values, mean_across, usage_rows};
use crate::units::significant;
use crate::usage::{CPU_LEVELS, MEMORY_LEVELS, level};
use jobsight_report::JobPage;
use jobsight_report::load::{JobQuery, ListedJob, SortBy, Visible};

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

/// The job list's values: the filters as given (to fill the form again), the columns with
/// their sort links, the rows, and whether more matched than are shown.
pub fn list_page(q: &JobQuery, days: u64, jobs: &[ListedJob], more: bool) -> Value {
    let filters = [
        ("user", &q.user),
        ("account", &q.account),
        ("partition", &q.partition),
        ("state", &q.state),
        ("verdict", &q.verdict),
        ("finding", &q.finding),
    ];
    let query_without_sort: String = filters
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("&{k}={}", urlencode(v)))
        .collect::<String>()
        + &format!("&days={days}");
    // What a person looks for first comes first: on a phone the columns stack in this order.
    let columns: Vec<serde_json::Value> = [
        ("job", "job"),
        ("state", "state"),
        ("verdict", "verdict"),
        ("cpu", "CPU eff."),
        ("memory", "memory eff."),
        ("findings", "findings"),
        ("elapsed", "ran"),
        ("name", "name"),
        ("user", "user"),
        ("account", "account"),
        ("partition", "partition"),
        ("end", "ended"),
        ("core_hours", "core-hours"),
    ]
    .iter()
    .map(|(key, title)| {
        let current = q.sort.name() == *key;
        // Clicking the sorted column turns its order around; another column sorts descending.
        let order = if current && q.descending {
            "asc"
        } else {
            "desc"
        };
        json!({
            "title": title, "current": current,
            "arrow": if current { if q.descending { "▼" } else { "▲" } } else { "" },
            "href": format!("/jobs?sort={key}&order={order}{query_without_sort}"),
        })
    })
    .collect();
    let rows: Vec<serde_json::Value> = jobs
        .iter()
        .map(|j| {
            json!({
                "job_id": c(&j.job_id), "href": job_href(&j.cluster, &j.job_id),
                "cluster": c(&j.cluster), "user": c(&j.user), "account": c(&j.account),
                "partition": c(&j.partition), "name": c(&j.name), "state": c(&j.state),
                "day": c(&j.day), "elapsed": duration(j.elapsed_s),
                "core_hours": j.core_hours.map_or("-".into(), significant),
                "cpu_eff": pct(j.cpu_eff), "mem_eff": pct(j.mem_eff), "findings": j.findings,
                "cpu_level": level(j.cpu_eff, CPU_LEVELS), "mem_level": level(j.mem_eff, MEMORY_LEVELS),
                "flagged": j.findings > 0 || j.verdict.as_deref().is_some_and(|v| v != "healthy" && v != "not-judged"),
                "verdict": j.verdict.as_deref().map(|v| c(&plain::verdict(v))),
            })
        })
        .collect();
    let scope = match &q.visible {
        Visible::All => "every user's jobs".to_string(),
        Visible::Own { accounts, .. } if accounts.is_empty() => "your jobs".to_string(),
        Visible::Own { accounts, .. } => format!(
            "your jobs and those of account{} {}",
            if accounts.len() == 1 { "" } else { "s" },
            accounts.iter().map(|a| c(a)).collect::<Vec<_>>().join(", ")
        ),
    };
    crate::templates::value(json!({
        "title": "jobs",
        "root": "/",
        "scope": scope,
        "from": q.from.to_string(), "to": q.to.to_string(), "days": days,
        "filters": filters.iter().map(|(k, v)| json!({"name": k, "value": c(v)})).collect::<Vec<_>>(),
        "sort": q.sort.name(), "order": if q.descending { "desc" } else { "asc" },
        "columns": columns,
        "jobs": rows,
        "more": more,
        "limit": q.limit,
        "sorts": SortBy::ALL.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
    }))
}

/// Two jobs side by side: their requests, what they used, their findings and verdicts, and each
/// metric both have, charted on one axis of hours since each job's start.
pub fn compare_page(a: &JobPage, b: &JobPage) -> Result<Value, charts::ChartError> {
    let side = |p: &JobPage| {
        let job = &p.job;
        let summary = p.facts.summaries.get(&job.job_id);
        json!({
            "job": job_values(job, summary),
            "href": job_href(&job.cluster, &job.job_id),
            "usage": usage_rows(job, summary),
            "findings": p.facts.findings.get(&job.job_id).into_iter().flatten()
                .map(|f| json!({"title": c(&f.title), "severity": c(&f.severity), "rule": c(&f.rule)}))
                .collect::<Vec<_>>(),
            "verdicts": p.facts.predictions.get(&job.job_id).into_iter().flatten()
                .map(|v| json!({"verdict": c(&plain::verdict(&v.verdict)), "confidence": pct(v.confidence)}))
                .collect::<Vec<_>>(),
        })
    };
    let series = |p: &JobPage| p.facts.telemetry.get(&p.job.job_id).cloned();
    let (sa, sb) = (series(a).unwrap_or_default(), series(b).unwrap_or_default());
    let metrics = |s: &jobsight_report::load::Series| -> std::collections::BTreeSet<String> {
        s.values().flat_map(|m| m.keys().cloned()).collect()
    };
    // Where the two jobs differ most first (their means' difference over the larger), one
    // series of each per-core family: the charts that matter are not the tenth and fourteenth.
    let mean = |p: &JobPage, s: &jobsight_report::load::Series, metric: &str| {
        let from_facts = p.facts.means.get(&p.job.job_id).and_then(|m| m.get(metric));
        from_facts.copied().or_else(|| {
            let points = mean_across(s, metric);
            (!points.is_empty())
                .then(|| points.iter().map(|(_, y)| y).sum::<f64>() / points.len() as f64)
        })
    };
    let mut shared: Vec<(f64, String)> = metrics(&sa)
        .intersection(&metrics(&sb))
        .map(|metric| {
            let difference = match (mean(a, &sa, metric), mean(b, &sb, metric)) {
                (Some(x), Some(y)) if x.is_finite() && y.is_finite() => {
                    let scale = x.abs().max(y.abs());
                    if scale > 0.0 {
                        (x - y).abs() / scale
                    } else {
                        0.0
                    }
                }
                _ => 0.0,
            };
            (difference, metric.clone())
        })
        .collect();
    shared.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
    let mut families = std::collections::HashSet::new();
    shared.retain(|(_, metric)| families.insert(jobsight_report::select::family(metric)));
    let mut svgs = Vec::new();
    for (difference, metric) in &shared {
        let chart = MetricChart {
            title: metric.clone(),
            note: format!("the means differ by {}", crate::units::percent(*difference)),
            nodes: vec![
                (
                    format!("job {}", c(&a.job.job_id)),
                    mean_across(&sa, metric),
                ),
                (
                    format!("job {}", c(&b.job.job_id)),
                    mean_across(&sb, metric),
                ),
            ],
            ..Default::default()
        };
        svgs.push(Value::from_safe_string(charts::metric_chart(&chart)?));
    }
    Ok(with_charts(
        json!({
            "title": format!("job {} and job {}", c(&a.job.job_id), c(&b.job.job_id)),
            "root": "/",
            "a": side(a), "b": side(b),
        }),
        svgs,
    ))
}

/// A page that only says something: a refusal, a missing page, an error.
pub fn message_page(title: &str, text: &str) -> Value {
    crate::templates::value(json!({
        "title": c(title), "root": "/", "text": jobsight_base::text::clean(text, 2_000),
    }))
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
