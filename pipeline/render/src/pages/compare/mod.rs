//! The web interface's comparison of two jobs (`/compare`): their requests, what they used,
//! their findings and verdicts, and each metric both have on one time axis.

use jobsight_base::plain;
use minijinja::Value;
use serde_json::json;

use super::charts::mean_across;
use super::charts::{self, MetricChart};
use super::format::{c, pct, with_charts};
use super::job::{job_values, usage_rows};
use super::served::job_href;
use super::served::with_served;
use super::{Page, PageCheck};
use super::{PageError, sample};
use crate::templates::Templates;
use jobsight_report::JobPage;
use jobsight_report::Settings;

/// The comparison's template, checked against two sample jobs (this folder's `check`).
pub(super) const PAGE: Page = Page {
    template: "compare.html",
    text: include_str!("compare.html"),
    check: PageCheck::Sample(check),
};

/// `check`'s rendering of the template against the sample job beside itself.
fn check(pages: &Templates, _: &Settings) -> Result<(), PageError> {
    let page = sample::sample_page();
    let value = compare_page(&page, &page)?;
    pages.render(
        PAGE.template,
        &with_served(value, &sample::admin(), json!({})),
    )?;
    Ok(())
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
