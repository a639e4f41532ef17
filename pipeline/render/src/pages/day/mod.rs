//! The daily system report of a cluster: the day's totals and efficiency by partition, account
//! and user (`summaries`), the rules that fired most, the pipeline's runs of the day (`runs`),
//! and the jobs that wasted most. The figures are the report stage's ([`DayFacts`]); which rules
//! and jobs to list, and how every figure reads, are chosen here.

use std::collections::BTreeMap;

use jobsight_base::plain;
use minijinja::Value;
use serde_json::json;

use super::charts::{self, Bar, ChartError};
use super::format::{c, href, pct, with_charts};
use super::{Page, PageCheck, PageTemplates};
use crate::units::significant;
use jobsight_report::load::{DayFacts, Facts, JobFacts, JobToLabel, PipelineRun, SummedRow};
use jobsight_report::{day_path, job_path, user_path};

/// The day report's template, checked by the names it may use (there is no sample day).
pub(super) const PAGE: Page = Page {
    template: "day.html",
    text: include_str!("day.html"),
    check: PageCheck::Names(&NAMES),
};

/// The names the day report's template is given (and the index's, which is checked alike).
pub(super) const NAMES: [&str; 18] = [
    "served",
    "feedback",
    "title",
    "root",
    "cluster",
    "day",
    "next_day",
    "totals",
    "partitions",
    "accounts",
    "users",
    "rules",
    "runs",
    "worst",
    "to_label",
    "chart_svgs",
    "clusters",
    "workflows",
];

impl PageTemplates {
    /// A cluster's daily system report: its figures (`report`) and the day's jobs (`facts`, of
    /// every cluster), from which the page picks the rules that fired most and the jobs that
    /// wasted most.
    pub fn day(&self, report: &DayFacts, facts: &Facts) -> Result<String, String> {
        self.render(PAGE.template, day_page(report, facts))
    }

    /// Its values, for the web interface.
    pub fn day_value(&self, report: &DayFacts, facts: &Facts) -> Result<Value, ChartError> {
        day_page(report, facts)
    }
}

/// The daily system report's values, from the day's figures of its cluster (`report`) and the
/// day's jobs (`facts`).
pub fn day_page(report: &DayFacts, facts: &Facts) -> Result<Value, ChartError> {
    let cluster = report.cluster.as_str();
    let day = report.day;
    let me = day_path(cluster, &day.to_string());
    let partitions = summary_rows(&report.partitions);
    let accounts = summary_rows(&report.accounts);
    let users = most_idle_users(summary_rows(&report.users), &me, cluster);
    let totals = report.totals.as_ref().map(summary_row);
    let svgs = summary_charts(&partitions, &accounts)?;
    let rules = top_rules(cluster, facts);
    let runs = pipeline_runs(&report.runs);
    let worst = most_wasteful_jobs(cluster, facts, &me);
    let to_label = jobs_to_label(&report.to_label);
    Ok(with_charts(
        json!({
            "title": format!("{} on {day}", c(cluster)),
            "root": href(&me, std::path::Path::new("")),
            "cluster": c(cluster), "day": day.to_string(),
            "totals": totals,
            "partitions": partitions, "accounts": accounts, "users": users,
            "rules": rules, "runs": runs, "worst": worst, "to_label": to_label,
            "feedback": report.feedback.iter().map(|(rule, useful, wrong)| json!({
                "rule": c(rule), "useful": useful, "wrong": wrong,
                "precision": pct((useful + wrong > 0).then(|| *useful as f64 / (useful + wrong) as f64)),
            })).collect::<Vec<_>>(),
            "next_day": (day + chrono::Days::new(1)).to_string(),
        }),
        svgs,
    ))
}

/// Summed rows as the report's tables show them, with the raw figures the charts and the
/// ordering of users read (`*_value`).
fn summary_rows(rows: &[SummedRow]) -> Vec<serde_json::Value> {
    rows.iter().map(summary_row).collect()
}

/// One summed row as the report's tables show it ([`summary_rows`]).
fn summary_row(row: &SummedRow) -> serde_json::Value {
    json!({
        // As stored, for the page's file name; `name` is what is shown.
        "key": row.name,
        "name": c(&row.name),
        "jobs": row.jobs,
        "judged": row.judged,
        "flagged": row.flagged,
        "core_hours": row.core_hours.map_or("-".into(), significant),
        "core_hours_value": row.core_hours.unwrap_or(0.0),
        "cpu_eff": pct(row.cpu_eff), "cpu_eff_value": row.cpu_eff,
        "mem_eff": pct(row.mem_eff),
        "idle_core_hours": row.idle_core_hours.map_or("-".into(), significant),
        "idle_value": row.idle_core_hours.unwrap_or(0.0),
        "waste_kwh": row.waste_kwh.map_or("-".into(), significant),
        "waste_cost": row.waste_cost.map_or("-".into(), |v| format!("{v:.2}")),
        "currency": c(&row.currency),
        // Measured energy only where some job had it; the waste above is the estimate.
        "energy_kwh": row.energy_kwh.filter(|&kwh| kwh > 0.0).map(significant),
        "energy_share": match (row.energy_core_hours, row.core_hours) {
            (Some(measured), Some(all)) if all > 0.0 => pct(Some(measured / all)),
            _ => "-".into(),
        },
    })
}

/// The ten users who left the most core-hours idle, each with a link to their page.
fn most_idle_users(
    mut users: Vec<serde_json::Value>,
    me: &std::path::Path,
    cluster: &str,
) -> Vec<serde_json::Value> {
    users.sort_by(|a, b| {
        b["idle_value"]
            .as_f64()
            .unwrap_or(0.0)
            .total_cmp(&a["idle_value"].as_f64().unwrap_or(0.0))
    });
    users.truncate(10);
    for u in &mut users {
        let key = u["key"].as_str().unwrap_or_default().to_string();
        u["href"] = json!(href(me, &user_path(cluster, &key)));
    }
    users
}

/// The report's charts: CPU efficiency by partition and idle core-hours by account.
fn summary_charts(
    partitions: &[serde_json::Value],
    accounts: &[serde_json::Value],
) -> Result<Vec<Value>, ChartError> {
    let eff_bars: Vec<Bar> = partitions
        .iter()
        .map(|p| Bar {
            label: p["name"].as_str().unwrap_or_default().to_string(),
            value: p["cpu_eff_value"].as_f64().unwrap_or(0.0) * 100.0,
            bad: p["cpu_eff_value"].as_f64().is_some_and(|e| e < 0.65),
        })
        .collect();
    let waste_bars: Vec<Bar> = accounts
        .iter()
        .map(|a| Bar {
            label: a["name"].as_str().unwrap_or_default().to_string(),
            value: a["idle_value"].as_f64().unwrap_or(0.0),
            bad: false,
        })
        .collect();
    let svgs = vec![
        Value::from_safe_string(charts::bar_chart(
            "CPU efficiency by partition (core-hour weighted)",
            "%",
            &eff_bars,
        )?),
        Value::from_safe_string(charts::bar_chart(
            "idle core-hours by account",
            "core-hours",
            &waste_bars,
        )?),
    ];
    Ok(svgs)
}

/// The rules that fired most on the day's jobs of `cluster`, with their number of findings.
fn top_rules(cluster: &str, facts: &Facts) -> Vec<serde_json::Value> {
    let mut rules: BTreeMap<(String, String), usize> = BTreeMap::new();
    for job in facts.jobs.iter().filter(|j| j.cluster == cluster) {
        for f in facts.findings.get(&job.job_id).into_iter().flatten() {
            let title = if f.title.is_empty() {
                &f.rule
            } else {
                &f.title
            };
            *rules
                .entry((title.clone(), f.severity.clone()))
                .or_default() += 1;
        }
    }
    let mut rules: Vec<_> = rules.into_iter().collect();
    rules.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    rules
        .iter()
        .take(15)
        .map(|((t, s), n)| json!({"title": c(t), "severity": c(s), "findings": n}))
        .collect()
}

/// The pipeline's health: the day's runs by DAG and step.
fn pipeline_runs(runs: &[PipelineRun]) -> Vec<serde_json::Value> {
    runs.iter()
        .map(|r| {
            json!({
                "dag": c(&r.dag),
                "step": c(&r.step),
                "runs": r.runs, "ok": r.ok,
                "not_ok": r.not_ok, "jobs": r.jobs,
                "error": r.error.as_deref().map(c),
            })
        })
        .collect()
}

/// The week's jobs whose labels would teach the diagnosis most, each with the command that
/// labels it.
fn jobs_to_label(jobs: &[JobToLabel]) -> Vec<serde_json::Value> {
    jobs.iter()
        .map(|j| {
            json!({
                "job_id": c(&j.job_id), "user": c(&j.user), "name": c(&j.name),
                "day": c(&j.day), "verdict": c(&plain::verdict(&j.verdict)),
                "confidence": pct(j.confidence),
                "unknown": format!("{} of {}", j.unknown_windows, j.windows),
                "command": format!("jobsight label {} --as healthy", c(&j.job_id)),
            })
        })
        .collect()
}

/// The ten jobs of `cluster` that wasted the most core-hours (of those that wasted any), each
/// with a link to its page.
fn most_wasteful_jobs(
    cluster: &str,
    facts: &Facts,
    me: &std::path::Path,
) -> Vec<serde_json::Value> {
    let mut jobs: Vec<&JobFacts> = facts.jobs.iter().filter(|j| j.cluster == cluster).collect();
    let waste = |j: &JobFacts| {
        facts
            .summaries
            .get(&j.job_id)
            .and_then(|s| s.wasted_core_hours)
            .unwrap_or(0.0)
    };
    jobs.sort_by(|a, b| waste(b).total_cmp(&waste(a)).then(a.job_id.cmp(&b.job_id)));
    jobs.iter()
        .take(10)
        .filter(|j| waste(j) > 0.0)
        .map(|j| {
            json!({
                "job_id": c(&j.job_id), "user": c(&j.user), "name": c(&j.name),
                "href": href(me, &job_path(cluster, &j.job_id)),
                "wasted": significant(waste(j)),
                "findings": facts.findings.get(&j.job_id).map_or(0, Vec::len),
            })
        })
        .collect()
}
