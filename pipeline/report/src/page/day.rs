//! The daily system report of a cluster: the day's totals and efficiency by partition, account
//! and user (`summaries`), the rules that fired most, the pipeline's runs of the day (`runs`),
//! and the jobs that wasted most.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use datafusion::prelude::SessionContext;
use minijinja::Value;
use serde_json::json;

use super::format::{c, href, pct, with_charts};
use crate::charts::{self, Bar};
use crate::load::{self, Facts, JobFacts};
use crate::{ReportError, day_path, job_path, user_path};
use jobsight_warehouse::query::QueryError;

/// The daily system report's values, from `summaries`, `findings` and `runs` of the day.
pub async fn day_page(
    ctx: &SessionContext,
    cluster: &str,
    day: NaiveDate,
    facts: &Facts,
) -> Result<Value, ReportError> {
    let me = day_path(cluster, &day.to_string());
    let partitions = summed_by(ctx, "\"partition\"", cluster, day).await?;
    let accounts = summed_by(ctx, "account", cluster, day).await?;
    let users = summed_by(ctx, "\"user\"", cluster, day).await?;
    let users = most_idle_users(users, &me, cluster);
    let totals = summed_by(ctx, "cluster", cluster, day).await?;
    let svgs = summary_charts(&partitions, &accounts)?;
    let rules = top_rules(cluster, facts);
    let runs = pipeline_runs(ctx, day).await?;
    let worst = most_wasteful_jobs(cluster, facts, &me);
    Ok(with_charts(
        json!({
            "title": format!("{} on {day}", c(cluster)),
            "root": href(&me, std::path::Path::new("")),
            "cluster": c(cluster), "day": day.to_string(),
            "totals": totals.first(),
            "partitions": partitions, "accounts": accounts, "users": users,
            "rules": rules, "runs": runs, "worst": worst,
            "next_day": (day + chrono::Days::new(1)).to_string(),
        }),
        svgs,
    ))
}

/// The day's `summaries` of `cluster` summed by the column `key`: one row per value of it, in
/// its order.
async fn summed_by(
    ctx: &SessionContext,
    key: &str,
    cluster: &str,
    day: NaiveDate,
) -> Result<Vec<serde_json::Value>, QueryError> {
    let cl = load::literal(cluster);
    let sql = format!(
        "SELECT {key} AS name, sum(jobs) AS jobs, sum(core_hours) AS core_hours, \
         sum(cpu_eff * cpu_eff_core_hours) / sum(cpu_eff_core_hours) AS cpu_eff, \
         sum(mem_eff * mem_eff_core_hours) / sum(mem_eff_core_hours) AS mem_eff, \
         sum(idle_core_hours) AS idle_core_hours, sum(waste_kwh) AS waste_kwh, \
         sum(waste_cost) AS waste_cost, max(currency) AS currency, \
         sum(jobs_flagged) AS flagged, sum(judged_jobs) AS judged \
         FROM summaries WHERE day = '{day}' AND cluster = {cl} \
         GROUP BY {key} ORDER BY {key}"
    );
    summary_rows(load::rows(ctx, &sql).await?)
}

/// The rows of a [`summed_by`] query as the report's tables show them, with the raw figures the
/// charts and the ordering of users read (`*_value`).
fn summary_rows(
    batches: Vec<datafusion::arrow::array::RecordBatch>,
) -> Result<Vec<serde_json::Value>, QueryError> {
    let mut out = Vec::new();
    for b in &batches {
        let col = jobsight_warehouse::query::Columns::of(b)?;
        for i in 0..b.num_rows() {
            let f = |n: &str| col.float(n, i);
            let name = col.text("name", i).unwrap_or_default();
            out.push(json!({
                // As stored, for the page's file name; `name` is what is shown.
                "key": name,
                "name": c(&name),
                "jobs": col.int("jobs", i).unwrap_or(0),
                "judged": col.int("judged", i).unwrap_or(0),
                "flagged": col.int("flagged", i).unwrap_or(0),
                "core_hours": f("core_hours").map_or("-".into(), |v| format!("{v:.1}")),
                "core_hours_value": f("core_hours").unwrap_or(0.0),
                "cpu_eff": pct(f("cpu_eff")), "cpu_eff_value": f("cpu_eff"),
                "mem_eff": pct(f("mem_eff")),
                "idle_core_hours": f("idle_core_hours").map_or("-".into(), |v| format!("{v:.1}")),
                "idle_value": f("idle_core_hours").unwrap_or(0.0),
                "waste_kwh": f("waste_kwh").map_or("-".into(), |v| format!("{v:.1}")),
                "waste_cost": f("waste_cost").map_or("-".into(), |v| format!("{v:.2}")),
                "currency": c(&col.text("currency", i).unwrap_or_default()),
            }));
        }
    }
    Ok(out)
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
) -> Result<Vec<Value>, ReportError> {
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
    let chart = |r: Result<String, charts::ChartError>| {
        r.map(Value::from_safe_string)
            .map_err(|e| ReportError::Query(QueryError::Render(e.to_string())))
    };
    let svgs = vec![
        chart(charts::bar_chart(
            "CPU efficiency by partition (core-hour weighted)",
            "%",
            &eff_bars,
        ))?,
        chart(charts::bar_chart(
            "idle core-hours by account",
            "core-hours",
            &waste_bars,
        ))?,
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
async fn pipeline_runs(
    ctx: &SessionContext,
    day: NaiveDate,
) -> Result<Vec<serde_json::Value>, QueryError> {
    let runs_sql = format!(
        "SELECT dag, step, count(*) AS runs, \
         sum(CASE WHEN outcome = 'ok' THEN 1 ELSE 0 END) AS ok, \
         sum(CASE WHEN outcome <> 'ok' THEN 1 ELSE 0 END) AS not_ok, \
         sum(jobs) AS jobs, max(error) AS error \
         FROM runs WHERE day >= '{day}' AND day <= '{next}' GROUP BY dag, step ORDER BY dag, step",
        next = day + chrono::Days::new(1)
    );
    let mut runs = Vec::new();
    for b in load::rows(ctx, &runs_sql).await? {
        let col = jobsight_warehouse::query::Columns::of(&b)?;
        for i in 0..b.num_rows() {
            runs.push(json!({
                "dag": c(&col.text("dag", i).unwrap_or_default()),
                "step": c(&col.text("step", i).unwrap_or_default()),
                "runs": col.int("runs", i).unwrap_or(0), "ok": col.int("ok", i).unwrap_or(0),
                "not_ok": col.int("not_ok", i).unwrap_or(0), "jobs": col.int("jobs", i).unwrap_or(0),
                "error": col.text("error", i).map(|e| c(&e)),
            }));
        }
    }
    Ok(runs)
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
                "wasted": format!("{:.1}", waste(j)),
                "findings": facts.findings.get(&j.job_id).map_or(0, Vec::len),
            })
        })
        .collect()
}
