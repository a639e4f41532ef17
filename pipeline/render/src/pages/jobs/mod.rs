//! The web interface's job list (`/jobs`): the filters as given, the columns with their sort
//! links, the rows, and whether more matched than are shown.

use jobsight_base::plain;
use minijinja::Value;
use serde_json::json;

use super::format::{c, duration, pct};
use super::served::with_served;
use super::served::{job_href, urlencode};
use super::{Page, PageCheck};
use super::{PageError, sample};
use crate::templates::Templates;
use crate::units::significant;
use crate::usage::{CPU_LEVELS, MEMORY_LEVELS, level};
use jobsight_report::Settings;
use jobsight_report::load::{JobQuery, ListedJob, SortBy, Visible};

/// The job list's template, checked against a sample list (this folder's `check`).
pub(super) const PAGE: Page = Page {
    template: "jobs.html",
    text: include_str!("jobs.html"),
    check: PageCheck::Sample(check),
};

/// `check`'s rendering of the template against a sample query and job.
fn check(pages: &Templates, _: &Settings) -> Result<(), PageError> {
    let query = JobQuery {
        visible: Visible::Own {
            user: "alice".into(),
            accounts: vec!["physics".into()],
        },
        from: sample::sample_day(),
        to: sample::sample_day(),
        user: "alice".into(),
        account: String::new(),
        partition: String::new(),
        state: String::new(),
        verdict: "flagged".into(),
        finding: String::new(),
        sort: SortBy::CpuEff,
        descending: true,
        limit: 10,
    };
    let listed = ListedJob {
        cluster: "cluster".into(),
        job_id: "4242".into(),
        verdict: Some("memleak".into()),
        ..ListedJob::default()
    };
    let list = list_page(&query, 7, &[listed], true);
    pages.render(
        PAGE.template,
        &with_served(list, &sample::admin(), json!({})),
    )?;
    Ok(())
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
