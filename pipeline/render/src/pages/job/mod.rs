//! A job's page: its accounting, what it used of what it asked for, its thresholds, classes,
//! findings and verdicts, its telemetry charted against a healthy reference, the metrics behind
//! the verdict, and the `#SBATCH` lines a better request would use.

use crate::usage::{
    CPU_LEVELS, GPU_LEVELS, GpuFigures, TIME_LEVELS, bar_width, gpu_use, level, memory_use,
};
use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use minijinja::Value;
use serde_json::json;

use super::charts::{self, MetricChart, mean_across};
use super::format::{c, duration, href, pct, prose, time, with_charts};
use super::suggest::suggestions;
use super::{Page, PageCheck, PageTemplates};
use super::{PageError, sample, served};
use crate::job::{verdict, verdict_details};
use crate::templates::Templates;
use crate::units::{evidence_rows, named_value, significant, size_from_mb, threshold_value};
use crate::{energy_text, figure_source_label};
use jobsight_base::plain;
use jobsight_report::load::{Facts, HealthyBands, HealthyRun, JobFacts, Series};
use jobsight_report::select::{References, deviation, family, job_metrics_ranked};
use jobsight_report::{Inputs, Settings, day_path, job_path, user_path, workflow_path};
use jobsight_warehouse::catalog::rows::{FindingRow, JobSummaryRow, PredictionRow};

/// The job page's template, checked against a sample job with every value set (`sample`).
pub(super) const PAGE: Page = Page {
    template: "job.html",
    text: include_str!("job.html"),
    check: PageCheck::Sample(check),
};

/// `check`'s rendering of the template against a sample job with every value set (one job with a
/// finding, a verdict, a threshold, a class and telemetry of two nodes), as a file and as the web
/// interface serves it, with its forms.
fn check(pages: &Templates, settings: &Settings) -> Result<(), PageError> {
    let page = sample::sample_page();
    let job = gathered_job_page(&page, &sample::sample_inputs(), settings)?;
    pages.render(PAGE.template, &job)?;
    let judged = BTreeMap::from([("finding:memory-leak".to_string(), "useful".to_string())]);
    let extra = served::job_extra(&page, &judged);
    pages.render(
        PAGE.template,
        &served::with_served(job, &sample::admin(), extra),
    )?;
    Ok(())
}

impl PageTemplates {
    /// A job's page: `job` is one of `facts.jobs`, compared with its healthy reference run
    /// (`references`) and the healthy band of each metric's job mean of its application, its
    /// user or the cluster (`bands`); `settings.max_charts` of its metrics charted, ranked with
    /// `inputs`' model weights.
    pub fn job(
        &self,
        job: &JobFacts,
        facts: &Facts,
        references: &References,
        bands: &HealthyBands,
        inputs: &Inputs,
        settings: &Settings,
    ) -> Result<String, String> {
        // The chart's or the template's own words: the stage lists them after the job's id.
        let value =
            job_page(job, facts, references, bands, inputs, settings).map_err(|e| e.to_string())?;
        self.templates
            .render(PAGE.template, &value)
            .map_err(|e| e.to_string())
    }

    /// The values of a job's page (what [`PageTemplates::job`] renders), for the web interface to
    /// add to.
    pub fn job_value(
        &self,
        page: &jobsight_report::JobPage,
        inputs: &Inputs,
        settings: &Settings,
    ) -> Result<Value, charts::ChartError> {
        gathered_job_page(page, inputs, settings)
    }
}

/// Hours from the job's start to `t`, if it started.
fn hours_since(start: Option<DateTime<Utc>>, t: DateTime<Utc>) -> Option<f64> {
    Some((t - start?).num_milliseconds() as f64 / 3.6e6)
}

/// The job page's values.
pub fn job_page(
    job: &JobFacts,
    facts: &Facts,
    references: &References,
    bands: &HealthyBands,
    inputs: &Inputs,
    settings: &Settings,
) -> Result<Value, charts::ChartError> {
    let (group_band, group) = bands.for_job(&job.name, &job.user);
    let band = &group_band.band;
    let compared_with = crate::job::reference_group(&group, group_band.runs);
    let me = job_path(&job.cluster, &job.job_id);
    let summary = facts.summaries.get(&job.job_id);
    let findings = facts.findings.get(&job.job_id).cloned().unwrap_or_default();
    let this_run = crate::job::of_run_shown(&findings, job);
    let predictions = facts
        .predictions
        .get(&job.job_id)
        .cloned()
        .unwrap_or_default();
    let series = facts.telemetry.get(&job.job_id);
    let usage = usage_rows(job, summary);
    let thresholds = threshold_rows(job, facts);
    let classes = class_rows(job, facts);
    // The time spans the findings and the verdicts call anomalous, shaded on every chart.
    let mut spans: Vec<(f64, f64)> = Vec::new();
    let findings_json = finding_rows(job, &facts.jobs, &findings, &mut spans);
    let verdicts = verdict_rows(job, &predictions, &mut spans);
    // Which metrics to chart: the first of the ranking that have telemetry.
    let means = facts.means.get(&job.job_id);
    let ranked = job_metrics_ranked(job, facts, inputs, band);
    let reference = references.of(&job.job_id);
    let chart_svgs = metric_charts(&ranked, series, &spans, reference, band, settings)?;
    let why = why_rows(&ranked, means, band, inputs);
    let reference_text = describe_reference(reference, band, &compared_with);
    Ok(with_charts(
        json!({
            "title": format!("job {}", c(&job.job_id)),
            "root": href(&me, std::path::Path::new("")),
            "user_href": href(&me, &user_path(&job.cluster, &job.user)),
            "day_href": href(&me, &day_path(&job.cluster, &job.day)),
            "workflow": facts.workflows.get(&job.job_id).map(|run| json!({
                "run": c(run), "href": href(&me, &workflow_path(run)),
            })),
            "job": job_values(job, summary),
            "coverage": summary.map(|s| json!({
                "judgeable": s.judgeable, "reason": c(s.not_judgeable_reason.as_deref().unwrap_or_default()),
                "coverage": pct(s.coverage_mean), "missing": c(s.nodes_missing.as_deref().unwrap_or_default()),
                "duty_cycle": c(s.duty_cycle.as_deref().unwrap_or_default()),
            })),
            "usage": usage,
            "per_node": crate::per_node::table(&crate::per_node::node_uses(
                facts.per_node.get(&job.job_id),
            )),
            "notes": crate::job::notes(&job.note).iter().map(|n| prose(n)).collect::<Vec<_>>(),
            "suggestions": suggestions(job, summary, &this_run),
            "thresholds": thresholds,
            "classes": classes,
            "findings": findings_json,
            "verdicts": verdicts,
            "why": why,
            "model_weighs": !inputs.importance.is_empty(),
            "reference": reference_text,
            "compared_with": compared_with,
            "how_verdict": crate::job::HOW_THE_VERDICT_IS_MADE,
        }),
        chart_svgs,
    ))
}

/// The values of a gathered job page ([`jobsight_report::JobPage`]): what the web interface and
/// `jobsight check`'s samples render.
pub fn gathered_job_page(
    page: &jobsight_report::JobPage,
    inputs: &Inputs,
    settings: &Settings,
) -> Result<Value, charts::ChartError> {
    job_page(
        &page.job,
        &page.facts,
        &page.references,
        &page.bands,
        inputs,
        settings,
    )
}

/// What the usage block writes after a CPU or memory figure about where it came from
/// ([`figure_source_label`] in parentheses), or nothing.
fn source_note(source: &str, shared: Option<bool>) -> String {
    figure_source_label(source, shared).map_or(String::new(), |label| format!(" ({label})"))
}

/// The usage block: what the job requested against what it used, per resource.
pub(super) fn usage_rows(
    job: &JobFacts,
    summary: Option<&JobSummaryRow>,
) -> Vec<serde_json::Value> {
    let mut usage = Vec::new();
    if let Some(s) = summary {
        let (cpu_note, mem_note) = (
            source_note(s.cpu_eff_source.as_deref().unwrap_or_default(), s.shared),
            source_note(s.mem_source.as_deref().unwrap_or_default(), s.shared),
        );
        usage.push(json!({
            "what": "cores", "requested": job.cpus.to_string(),
            "used": s.cpu_used_cores.map_or("-".into(), |u| format!("{u:.1}{cpu_note}")),
            "share": pct(s.cpu_eff), "width": bar_width(s.cpu_eff), "level": level(s.cpu_eff, CPU_LEVELS),
        }));
        let memory = memory_use(&job.state, job.req_mem_mb, s.mem_used_max_mb, s.mem_eff);
        usage.push(json!({
            "what": "memory", "requested": job.req_mem_mb.map_or("-".into(), |m| size_from_mb(m as f64)),
            "used": s.mem_used_max_mb.map_or("-".into(), |m| format!("{} peak{mem_note}", size_from_mb(m))),
            "share": memory.text, "width": bar_width(memory.share), "level": memory.level,
        }));
        usage.push(json!({
            "what": "time", "requested": duration(job.time_limit_s), "used": duration(job.elapsed_s),
            "share": pct(s.time_eff), "width": bar_width(s.time_eff), "level": level(s.time_eff, TIME_LEVELS),
        }));
        if job.gpus > 0 {
            let gpus = gpu_use(
                job.gpus,
                GpuFigures {
                    util: s.gpu_util,
                    mem_mb: s.gpu_mem_used_max_mb,
                    total_mb: s.gpu_mem_total_mb,
                    shared: s.shared,
                    slurm_util_peak_pct: job.acct_gpu_util_max_pct,
                    slurm_mem_peak_mb: job.acct_gpu_mem_max_mb,
                },
            );
            usage.push(json!({
                "what": "GPUs", "requested": job.gpus.to_string(), "used": gpus.busy,
                "share": pct(gpus.busy_share), "width": bar_width(gpus.busy_share), "level": level(gpus.busy_share, GPU_LEVELS),
            }));
            usage.push(json!({
                "what": "GPU memory", "requested": gpus.memory_size, "used": gpus.memory,
                "share": gpus.memory_share.map_or("-".into(), |s| pct(Some(s))),
                "width": bar_width(gpus.memory_share), "level": "plain",
            }));
        }
    }
    usage
}

/// The thresholds block: each characteristic's value on a low / average / high bar.
fn threshold_rows(job: &JobFacts, facts: &Facts) -> Vec<serde_json::Value> {
    facts
        .thresholds
        .get(&job.job_id)
        .map(|t| {
            let mut t = t.clone();
            t.sort_by(|a, b| a.characteristic.cmp(&b.characteristic));
            t.iter()
                .map(|t| {
                    let shown =
                        |v: Option<f64>| v.map_or("-".into(), |v| threshold_value(&t.limits, v));
                    json!({
                        "title": c(&t.title), "level": c(&t.level),
                        "value": shown(t.value),
                        "low_below": shown(t.low_below),
                        "high_from": shown(t.high_from),
                        "position": threshold_position(t.value, t.low_below, t.high_from),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The classes block: the job's classes, id and name.
fn class_rows(job: &JobFacts, facts: &Facts) -> Vec<serde_json::Value> {
    facts
        .classes
        .get(&job.job_id)
        .map(|cl| {
            cl.iter()
                .map(|(id, name)| json!({"id": c(id), "name": c(name)}))
                .collect()
        })
        .unwrap_or_default()
}

/// The findings block; the time window of each finding goes to `spans` (hours since the job's
/// start).
fn finding_rows(
    job: &JobFacts,
    runs: &[JobFacts],
    findings: &[FindingRow],
    spans: &mut Vec<(f64, f64)>,
) -> Vec<serde_json::Value> {
    findings
        .iter()
        .map(|f| {
            let earlier = crate::job::earlier_run(f, job, runs);
            if earlier.is_none()
                && let Some((a, b)) = f.window()
                && let (Some(a), Some(b)) = (hours_since(job.start, a), hours_since(job.start, b))
            {
                spans.push((a, b));
            }
            json!({
                "rule": c(&f.rule), "title": c(&f.title), "group": c(&plain::evidence_label(&f.group)), "severity": c(&f.severity),
                "node": f.node.as_deref().map(c), "message": prose(&f.message), "why": prose(&f.why),
                "fix": prose(&f.fix), "tools": prose(&f.tools),
                "evidence": evidence_rows(&f.evidence).into_iter()
                    .map(|(name, value)| json!({"name": name, "value": value}))
                    .collect::<Vec<_>>(),
                "window": f.window().map(|(a, b)| plain::time_span(a, b)),
                "earlier_run": earlier.as_deref().map(c),
            })
        })
        .collect()
}

/// The verdicts block; the time window of each verdict other than healthy goes to `spans`
/// (hours since the job's start).
fn verdict_rows(
    job: &JobFacts,
    predictions: &[PredictionRow],
    spans: &mut Vec<(f64, f64)>,
) -> Vec<serde_json::Value> {
    predictions
        .iter()
        .map(|p| {
            if p.verdict != "healthy"
                && let Some((a, b)) = p.window()
                && let (Some(a), Some(b)) = (hours_since(job.start, a), hours_since(job.start, b))
            {
                spans.push((a, b));
            }
            json!({
                "id": c(&p.verdict), "verdict": c(&plain::verdict(&p.verdict)),
                "said": c(&verdict_details(&verdict(p))),
                "confidence": pct(p.confidence), "source": c(plain::verdict_source(&p.source)),
                "node": p.node.as_deref().map(c), "reason": c(&p.reason),
                "model_verdict": p.model_verdict.as_deref().map(|v| c(&plain::verdict(v))),
                "model_confidence": pct(p.model_confidence),
                "anomaly_score": p.anomaly_score.map(significant),
                "windows": p.windows, "anomalous_windows": p.anomalous_windows,
                "agreeing_rules": c(&p.agreeing_rules),
                "window": p.window().map(|(a, b)| plain::time_span(a, b)),
                "anomalous": p.verdict != "healthy" && p.verdict != "not-judged",
            })
        })
        .collect()
}

/// The telemetry charts: the first `settings.max_charts` metrics of the ranking that have
/// telemetry, each with the anomalous `spans` shaded and the healthy reference drawn (the
/// reference run's mean across its nodes, else the cluster's healthy band).
fn metric_charts(
    ranked: &[String],
    series: Option<&Series>,
    spans: &[(f64, f64)],
    reference: Option<(&HealthyRun, &Series)>,
    band: &BTreeMap<String, (f64, f64)>,
    settings: &Settings,
) -> Result<Vec<Value>, charts::ChartError> {
    let mut chart_svgs = Vec::new();
    let charted = ranked
        .iter()
        .filter(|m| series.is_some_and(|s| s.values().any(|x| x.contains_key(*m))))
        .take(settings.max_charts);
    for metric in charted {
        let Some(series) = series else { break };
        let family = family(metric);
        // A family has several members (`cpu_core0_util`, `cpu_core1_util`); `load1` alone is
        // a metric of its own with a digit in its name.
        let members: std::collections::BTreeSet<&String> = series
            .values()
            .flat_map(|m| m.keys())
            .filter(|name| self::family(name) == family)
            .collect();
        let is_family = family != *metric && members.len() > 1;
        let mut chart = MetricChart {
            title: if is_family {
                family.clone()
            } else {
                metric.clone()
            },
            anomalous: spans.to_vec(),
            ..Default::default()
        };
        // Per node; a family of per-core or per-device series (`cpu_core6_util`) is one band
        // across all its series on all nodes: five near-identical core lines say less.
        let in_chart = |name: &str| name == metric || (is_family && self::family(name) == family);
        let per_node: Vec<(String, Vec<(f64, f64)>)> = series
            .iter()
            .flat_map(|(node, m)| {
                m.iter()
                    .filter(|(name, _)| in_chart(name))
                    .map(|(_, p)| (node.clone(), p.clone()))
            })
            .collect();
        if is_family {
            chart.note = format!("lowest, median and highest of {} series", per_node.len());
            chart.band = band_across(&per_node);
            // A healthy run's or band's figure is one core's: not comparable with the band.
            chart_svgs.push(Value::from_safe_string(charts::metric_chart(&chart)?));
            continue;
        }
        if per_node.len() > charts::MAX_NODE_LINES {
            chart.note = format!("lowest, median and highest of {} nodes", per_node.len());
            chart.band = band_across(&per_node);
        } else {
            chart.nodes = per_node;
        }
        if let Some((run, ref_series)) = reference {
            let points = mean_across(ref_series, metric);
            if !points.is_empty() {
                chart.reference_run = Some((format!("healthy run {}", c(&run.job_id)), points));
            }
        }
        if chart.reference_run.is_none()
            && let Some((lo, hi)) = band.get(metric)
        {
            chart.reference_band = Some(("healthy runs' mean (p10-p90)".into(), *lo, *hi));
        }
        chart_svgs.push(Value::from_safe_string(charts::metric_chart(&chart)?));
    }
    Ok(chart_svgs)
}

/// Why: the ranked metrics' job mean against the healthy band, with the model's weight of each.
fn why_rows(
    ranked: &[String],
    means: Option<&BTreeMap<String, f64>>,
    band: &BTreeMap<String, (f64, f64)>,
    inputs: &Inputs,
) -> Vec<serde_json::Value> {
    let weights: HashMap<String, f64> =
        inputs
            .importance
            .iter()
            .fold(HashMap::new(), |mut m, (f, w)| {
                *m.entry(f.split(':').next().unwrap_or(f).to_string())
                    .or_default() += w.max(0.0);
                m
            });
    ranked
        .iter()
        .filter_map(|m| {
            let v = means.and_then(|x| x.get(m)).copied()?;
            let b = band.get(m);
            Some(json!({
                "metric": c(&plain::evidence_label(m)), "value": named_value(m, v),
                "healthy": b.map(|(lo, hi)| format!("{} to {}", named_value(m, *lo), named_value(m, *hi))),
                "outside": deviation(Some(v), b) > 0.0,
                "weight": weights.get(m).map(|w| format!("{w:.3}")),
            }))
        })
        .take(8)
        .collect()
}

/// What the charts' grey reference is, in words.
fn describe_reference(
    reference: Option<(&HealthyRun, &Series)>,
    band: &BTreeMap<String, (f64, f64)>,
    compared_with: &str,
) -> String {
    match reference {
        Some((run, _)) => format!(
            "dashed grey: the newest healthy run of {} by {} (job {}, {})",
            c(&run.name),
            c(&run.user),
            c(&run.job_id),
            run.day
        ),
        None if !band.is_empty() => format!("grey band: the middle 80 % of the means of {compared_with} (no healthy run of this job name to draw)"),
        None => "no healthy reference yet: no job of the last 30 days that ran without findings has telemetry features".into(),
    }
}

/// The job's accounting as the page shows it.
pub(super) fn job_values(job: &JobFacts, summary: Option<&JobSummaryRow>) -> serde_json::Value {
    json!({
        "job_id": c(&job.job_id), "name": c(&job.name), "user": c(&job.user),
        "account": c(&job.account), "partition": c(&job.partition), "qos": c(&job.qos),
        "cluster": c(&job.cluster), "nodes": c(&job.nodes), "num_nodes": job.num_nodes,
        "cpus": job.cpus, "gpus": job.gpus, "state": c(&job.state),
        "exit": job.exit_code.map_or("exit code -".into(), |code| plain::exit_status(code, job.exit_signal)),
        "submit": time(job.submit), "start": time(job.start), "end": time(job.end),
        "wait": duration(job.wait_s), "elapsed": duration(job.elapsed_s),
        "core_hours": job.core_hours.map_or("-".into(), significant),
        "wasted_core_hours": summary.and_then(|s| s.wasted_core_hours).map(significant),
        "energy": summary.and_then(|s| energy_text(s.energy_kwh, Some(s.energy_source.as_deref().unwrap_or_default()), s.energy_share)),
        "day": job.day,
    })
}

/// Where a value sits on a low | average | high bar, in percent: the low third below `low`,
/// the middle third between the limits, the high third above `high`.
pub fn threshold_position(value: Option<f64>, low: Option<f64>, high: Option<f64>) -> f64 {
    let (Some(v), Some(lo), Some(hi)) = (value, low, high) else {
        return 50.0;
    };
    let p = if v < lo {
        if lo > 0.0 {
            (v / lo).clamp(0.0, 1.0) / 3.0
        } else {
            0.0
        }
    } else if v < hi {
        1.0 / 3.0 + ((v - lo) / (hi - lo).max(1e-12)) / 3.0
    } else {
        2.0 / 3.0 + ((v - hi) / hi.abs().max(1e-12)).clamp(0.0, 1.0) / 3.0
    };
    (p * 100.0).clamp(1.0, 99.0).round()
}

/// Min, median and max across nodes, bin by bin.
fn band_across(nodes: &[(String, Vec<(f64, f64)>)]) -> Vec<(f64, f64, f64, f64)> {
    let mut bins: BTreeMap<i64, (f64, Vec<f64>)> = BTreeMap::new();
    for (_, points) in nodes {
        for (x, y) in points {
            bins.entry((x * 1e6) as i64)
                .or_insert((*x, Vec::new()))
                .1
                .push(*y);
        }
    }
    bins.into_values()
        .map(|(x, mut ys)| {
            ys.sort_by(f64::total_cmp);
            (x, ys[0], ys[ys.len() / 2], ys[ys.len() - 1])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A family of per-core series is one chart, a band across all of them on every node, titled
    /// in words; a metric of its own keeps one line per node.
    #[test]
    fn per_core_series_are_one_band() {
        let mut series = Series::new();
        for node in ["n1", "n2"] {
            let metrics = series.entry(node.to_string()).or_default();
            for core in 0..4 {
                let level = f64::from(core) / 4.0;
                metrics.insert(
                    format!("cpu_core{core}_util"),
                    vec![(0.0, level), (1.0, level)],
                );
            }
            metrics.insert("job_mem_bytes".into(), vec![(0.0, 1e9), (1.0, 2e9)]);
            metrics.insert("load1".into(), vec![(0.0, 1.0), (1.0, 2.0)]);
        }
        let ranked = [
            "cpu_core2_util".to_string(),
            "job_mem_bytes".to_string(),
            "load1".to_string(),
        ];
        let svgs = metric_charts(
            &ranked,
            Some(&series),
            &[],
            None,
            &BTreeMap::new(),
            &Settings::default(),
        )
        .unwrap();
        assert_eq!(svgs.len(), 3);
        let band = svgs[0].to_string();
        assert!(
            band.contains("CPU core use: lowest, median and highest of 8 series"),
            "{band}"
        );
        assert!(!band.contains("cpu_core"), "{band}");
        let memory = svgs[1].to_string();
        assert!(
            memory.contains("Job memory") && memory.contains("n2"),
            "{memory}"
        );
        // One metric with a digit in its name is no family: a line per node.
        let load = svgs[2].to_string();
        assert!(
            !load.contains("lowest, median") && load.contains("n2"),
            "{load}"
        );
    }

    /// A figure from accounting says so; a node's figure on a shared node says it is the
    /// node's; the job's own telemetry, and its nodes' when nothing says they were shared, say
    /// nothing.
    #[test]
    fn usage_says_where_a_figure_came_from() {
        let job = JobFacts {
            cpus: 2,
            req_mem_mb: Some(2048),
            ..Default::default()
        };
        let used = |cpu_source: &str, mem_source: &str, shared| {
            let s = JobSummaryRow {
                cpu_used_cores: Some(1.0),
                cpu_eff: Some(0.5),
                mem_used_max_mb: Some(1024.0),
                mem_eff: Some(0.5),
                cpu_eff_source: Some(cpu_source.into()),
                mem_source: Some(mem_source.into()),
                shared,
                ..Default::default()
            };
            let rows = usage_rows(&job, Some(&s));
            (
                rows[0]["used"].as_str().unwrap_or_default().to_string(),
                rows[1]["used"].as_str().unwrap_or_default().to_string(),
            )
        };
        assert_eq!(
            used("accounting", "accounting", Some(true)),
            (
                "1.0 (Slurm accounting)".into(),
                "1 GB peak (Slurm accounting)".into()
            )
        );
        assert_eq!(
            used("telemetry-node", "telemetry-job", Some(true)),
            (
                "1.0 (node, shared with other jobs)".into(),
                "1 GB peak".into()
            )
        );
        assert_eq!(
            used("telemetry-node", "telemetry-node", None),
            ("1.0".into(), "1 GB peak".into())
        );
    }

    /// The head states measured energy with its source and share, and the idle part of the
    /// core-hours only where a CPU efficiency gives it.
    #[test]
    fn the_head_states_energy_and_idle_hours_only_when_known() {
        let job = JobFacts {
            core_hours: Some(32.0),
            ..Default::default()
        };
        let measured = JobSummaryRow {
            wasted_core_hours: Some(30.0),
            energy_kwh: Some(0.5214),
            energy_source: Some("accounting".into()),
            energy_share: Some(0.25),
            ..Default::default()
        };
        let head = job_values(&job, Some(&measured));
        assert_eq!(head["wasted_core_hours"], "30");
        assert_eq!(
            head["energy"],
            "0.521 kWh (Slurm accounting, 25 % of its shared nodes')"
        );
        let gpus = JobSummaryRow {
            energy_kwh: Some(0.0093),
            energy_source: Some("gpu-power".into()),
            energy_share: Some(1.0),
            ..Default::default()
        };
        let head = job_values(&job, Some(&gpus));
        assert_eq!(head["wasted_core_hours"], serde_json::Value::Null);
        assert_eq!(
            head["energy"],
            "0.009 kWh (its GPUs alone, the host not counted)"
        );
        assert_eq!(job_values(&job, None)["energy"], serde_json::Value::Null);
    }

    #[test]
    fn threshold_positions_split_the_bar_in_thirds() {
        assert_eq!(threshold_position(Some(0.0), Some(1.0), Some(2.0)), 1.0);
        assert_eq!(threshold_position(Some(1.5), Some(1.0), Some(2.0)), 50.0);
        assert_eq!(threshold_position(Some(10.0), Some(1.0), Some(2.0)), 99.0);
        assert_eq!(threshold_position(None, Some(1.0), Some(2.0)), 50.0);
    }
}
