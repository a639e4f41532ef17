//! From facts to what a page shows: the values of the job, user and day templates, the charts,
//! the healthy reference, the ranking of metrics and the `#SBATCH` lines a better request would
//! use. Pure functions, except [`day_page`], which reads the warehouse.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, NaiveDate, Utc};
use datafusion::prelude::SessionContext;
use minijinja::Value;
use serde::Serialize;
use serde_json::json;

use super::charts::{self, Bar, MetricChart};
use super::load::{self, Facts, HealthyRun, JobFacts, Series, UserHistory};
use super::{Inputs, Settings, day_path, job_path, user_path, workflow_path};
use jobsight_base::templates::clean;
use jobsight_warehouse::query::QueryError;

/// Longest a job name, node list or rule text is shown.
const MAX_TEXT: usize = 200;

fn c(text: &str) -> String {
    clean(text, MAX_TEXT)
}

fn pct(share: Option<f64>) -> String {
    share.map_or("-".into(), |s| format!("{:.0} %", s * 100.0))
}

fn duration(seconds: Option<i64>) -> String {
    match seconds {
        Some(s) if s >= 0 => {
            let (d, h, m) = (s / 86_400, (s % 86_400) / 3600, (s % 3600) / 60);
            if d > 0 {
                format!("{d}d {h}h {m:02}m")
            } else {
                format!("{h}h {m:02}m")
            }
        }
        _ => "-".into(),
    }
}

fn time(t: Option<DateTime<Utc>>) -> String {
    t.map_or("-".into(), |t| {
        t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
    })
}

/// A link from one page to another, both relative to the report folder: `from` is the
/// linking page's path.
fn href(from: &std::path::Path, to: &std::path::Path) -> String {
    let depth = from.components().count().saturating_sub(1);
    format!("{}{}", "../".repeat(depth), to.display())
}

/// The healthy run each job of `facts` is compared with: the newest healthy run of the same job
/// name by the same user that is not the job itself, else by anyone. Job id → run.
pub fn reference_runs(facts: &Facts, healthy: &[HealthyRun]) -> HashMap<String, HealthyRun> {
    let mut by_app: HashMap<(&str, &str), Vec<&HealthyRun>> = HashMap::new();
    let mut by_name: HashMap<&str, Vec<&HealthyRun>> = HashMap::new();
    for run in healthy {
        by_app
            .entry((run.user.as_str(), run.name.as_str()))
            .or_default()
            .push(run);
        by_name.entry(run.name.as_str()).or_default().push(run);
    }
    let mut out = HashMap::new();
    for job in &facts.jobs {
        let not_itself = |r: &&&HealthyRun| r.job_id != job.job_id;
        let run = by_app
            .get(&(job.user.as_str(), job.name.as_str()))
            .and_then(|runs| runs.iter().find(not_itself))
            .or_else(|| {
                by_name
                    .get(job.name.as_str())
                    .and_then(|runs| runs.iter().find(not_itself))
            });
        if let Some(run) = run {
            out.insert(job.job_id.clone(), (*run).clone());
        }
    }
    out
}

/// The healthy runs the jobs' pages are compared with ([`reference_runs`]) and the telemetry of
/// each run (by the run's day and job id), loaded once however many jobs share a run.
#[derive(Debug, Default)]
pub struct References {
    pub runs: HashMap<String, HealthyRun>,
    pub series: HashMap<(NaiveDate, String), Series>,
}

impl References {
    /// A job's reference run and its telemetry, if the run has any.
    pub fn of(&self, job_id: &str) -> Option<(&HealthyRun, &Series)> {
        let run = self.runs.get(job_id)?;
        let series = self
            .series
            .get(&(run.day, run.job_id.clone()))
            .filter(|s| !s.is_empty())?;
        Some((run, series))
    }
}

/// A job's metrics in the order its page charts them ([`ranked_metrics`]): those it has
/// telemetry loaded for and those the features step described (`features_job`), so that the
/// order is known before any telemetry is read and stays the same once it is.
pub fn job_metrics_ranked(
    job: &JobFacts,
    facts: &Facts,
    inputs: &Inputs,
    band: &BTreeMap<String, (f64, f64)>,
) -> Vec<String> {
    let means = facts.means.get(&job.job_id);
    let mut metrics: Vec<String> = facts
        .telemetry
        .get(&job.job_id)
        .into_iter()
        .flat_map(|s| s.values().flat_map(|m| m.keys().cloned()))
        .chain(means.into_iter().flat_map(|m| m.keys().cloned()))
        .collect();
    metrics.sort();
    metrics.dedup();
    let findings_text: String = facts
        .findings
        .get(&job.job_id)
        .into_iter()
        .flatten()
        .map(|f| format!("{} {} {}", f.rule, f.message, f.evidence))
        .collect();
    ranked_metrics(&metrics, &findings_text, &inputs.importance, means, band)
}

/// The metrics whose telemetry a job's page needs: the first `max_charts` of its ranking; `None`
/// (every metric) for a job the features step did not describe, whose metrics are known only
/// from its telemetry.
pub fn metrics_to_load(
    job: &JobFacts,
    facts: &Facts,
    inputs: &Inputs,
    band: &BTreeMap<String, (f64, f64)>,
    max_charts: usize,
) -> Option<Vec<String>> {
    if facts.means.get(&job.job_id).is_none_or(|m| m.is_empty()) {
        return None;
    }
    let mut ranked = job_metrics_ranked(job, facts, inputs, band);
    ranked.truncate(max_charts);
    Some(ranked)
}

/// A request line of a better job script, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suggestion {
    pub line: String,
    pub why: String,
}

/// The `#SBATCH` lines a better request would use, from what the job used: memory with a 20 %
/// margin when under 70 % of the request was used (jobstats' limit), time with a 50 % margin
/// rounded up to 15 minutes when under half the limit was used, CPUs with a 25 % margin when
/// under half of them worked, and no GPU when the GPUs did nothing. Nothing for a job that did
/// not complete: its usage says nothing about what it needed.
pub fn suggestions(job: &JobFacts, s: Option<&load::SummaryFacts>) -> Vec<Suggestion> {
    let mut out = Vec::new();
    let Some(s) = s.filter(|s| s.judgeable) else {
        return out;
    };
    if job.state != "COMPLETED" {
        return out;
    }
    if let (Some(req), Some(used), Some(eff)) = (job.req_mem_mb, s.mem_used_max_mb, s.mem_eff)
        && eff < 0.7
        && req > 0
    {
        let gb = ((used * 1.2) / 1024.0).ceil().max(1.0) as i64;
        let nodes = job.num_nodes.max(1);
        let per_node = ((gb as f64) / nodes as f64).ceil().max(1.0) as i64;
        out.push(Suggestion {
            line: format!("#SBATCH --mem={per_node}G"),
            why: format!(
                "the job's peak was {:.1} GB of {:.1} GB requested ({}); this asks for the peak and 20 % more{}",
                used / 1024.0,
                req as f64 / 1024.0,
                pct(Some(eff)),
                if nodes > 1 { ", per node" } else { "" }
            ),
        });
    }
    if let (Some(limit), Some(elapsed)) = (job.time_limit_s, job.elapsed_s)
        && limit > 0
        && (elapsed as f64) < 0.5 * limit as f64
    {
        let want = ((elapsed as f64 * 1.5) / 900.0).ceil().max(1.0) as i64 * 900;
        out.push(Suggestion {
            line: format!(
                "#SBATCH --time={}:{:02}:00",
                want / 3600,
                (want % 3600) / 60
            ),
            why: format!(
                "it ran {} of a {} limit; a shorter limit starts sooner (backfill)",
                duration(Some(elapsed)),
                duration(Some(limit))
            ),
        });
    }
    if let (Some(used), Some(eff)) = (s.cpu_used_cores, s.cpu_eff)
        && eff < 0.5
        && job.cpus > 1
    {
        let cores = (used * 1.25).ceil().max(1.0) as i64;
        if cores < job.cpus {
            out.push(Suggestion {
                line: format!("#SBATCH --ntasks={cores}"),
                why: format!(
                    "on average {used:.1} of {} allocated cores worked ({}); check whether the program can use more before asking for them",
                    job.cpus,
                    pct(Some(eff))
                ),
            });
        }
    }
    if let Some(util) = s.gpu_util
        && job.gpus > 0
        && util < 0.05
    {
        out.push(Suggestion {
            line: "#SBATCH --gres=gpu:0   (and a CPU partition)".into(),
            why: format!(
                "the {} GPU(s) were busy {} of the time",
                job.gpus,
                pct(Some(util))
            ),
        });
    }
    out
}

/// The order in which a job's metrics are charted: those its findings name first, then those
/// the model weighs most, then those furthest outside the healthy band, then the usual ones.
pub fn ranked_metrics(
    metrics: &[String],
    findings_text: &str,
    importance: &[(String, f64)],
    means: Option<&BTreeMap<String, f64>>,
    band: &BTreeMap<String, (f64, f64)>,
) -> Vec<String> {
    let weight: HashMap<&str, f64> = importance.iter().fold(HashMap::new(), |mut m, (f, w)| {
        let metric = f.split(':').next().unwrap_or(f);
        *m.entry(metric).or_default() += w.max(0.0);
        m
    });
    let usual = ["cpu", "mem", "gpu", "net", "disk", "io", "fs"];
    let mut scored: Vec<(f64, &String)> = metrics
        .iter()
        .map(|m| {
            let mut score = 0.0;
            if findings_text.contains(m.as_str()) {
                score += 1000.0;
            }
            score += 100.0 * weight.get(m.as_str()).copied().unwrap_or(0.0);
            score += 10.0 * deviation(means.and_then(|x| x.get(m)).copied(), band.get(m)).min(5.0);
            if let Some(p) = usual.iter().position(|u| m.starts_with(u)) {
                score += (usual.len() - p) as f64 * 0.1;
            }
            (score, m)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.into_iter().map(|(_, m)| m.clone()).collect()
}

/// How far a value lies outside a band, in band widths (0 inside it, or without one).
pub fn deviation(value: Option<f64>, band: Option<&(f64, f64)>) -> f64 {
    match (value, band) {
        (Some(v), Some((lo, hi))) => {
            let width = (hi - lo).abs().max(hi.abs() * 0.05).max(1e-9);
            if v < *lo {
                (lo - v) / width
            } else if v > *hi {
                (v - hi) / width
            } else {
                0.0
            }
        }
        _ => 0.0,
    }
}

fn hours_since(start: Option<DateTime<Utc>>, t: DateTime<Utc>) -> Option<f64> {
    Some((t - start?).num_milliseconds() as f64 / 3.6e6)
}

/// The job page's values.
pub fn job_page(
    job: &JobFacts,
    facts: &Facts,
    references: &References,
    band: &BTreeMap<String, (f64, f64)>,
    inputs: &Inputs,
    settings: &Settings,
) -> Result<Value, charts::ChartError> {
    let me = job_path(&job.cluster, &job.job_id);
    let summary = facts.summaries.get(&job.job_id);
    let findings = facts.findings.get(&job.job_id).cloned().unwrap_or_default();
    let predictions = facts
        .predictions
        .get(&job.job_id)
        .cloned()
        .unwrap_or_default();
    let series = facts.telemetry.get(&job.job_id);
    // Usage: requested against used.
    let mut usage = Vec::new();
    if let Some(s) = summary {
        usage.push(json!({
            "what": "cores", "requested": job.cpus.to_string(),
            "used": s.cpu_used_cores.map_or("-".into(), |u| format!("{u:.1}")),
            "share": pct(s.cpu_eff), "width": bar_width(s.cpu_eff), "level": level(s.cpu_eff, 0.65, 0.8),
        }));
        usage.push(json!({
            "what": "memory", "requested": job.req_mem_mb.map_or("-".into(), |m| format!("{:.1} GB", m as f64 / 1024.0)),
            "used": s.mem_used_max_mb.map_or("-".into(), |m| format!("{:.1} GB peak", m / 1024.0)),
            "share": pct(s.mem_eff), "width": bar_width(s.mem_eff), "level": level(s.mem_eff, 0.3, 0.7),
        }));
        usage.push(json!({
            "what": "time", "requested": duration(job.time_limit_s), "used": duration(job.elapsed_s),
            "share": pct(s.time_eff), "width": bar_width(s.time_eff), "level": level(s.time_eff, 0.1, 0.5),
        }));
        if job.gpus > 0 {
            usage.push(json!({
                "what": "GPUs", "requested": job.gpus.to_string(),
                "used": s.gpu_util.map_or("-".into(), |u| format!("{:.1} busy", u * job.gpus as f64)),
                "share": pct(s.gpu_util), "width": bar_width(s.gpu_util), "level": level(s.gpu_util, 0.15, 0.25),
            }));
        }
    }
    // The thresholds block: each characteristic's value on a low / average / high bar.
    let thresholds: Vec<_> = facts
        .thresholds
        .get(&job.job_id)
        .map(|t| {
            let mut t = t.clone();
            t.sort_by(|a, b| a.characteristic.cmp(&b.characteristic));
            t.iter()
                .map(|t| {
                    json!({
                        "title": c(&t.title), "level": c(&t.level),
                        "value": t.value.map_or("-".into(), charts::short_number),
                        "low_below": t.low_below.map_or("-".into(), charts::short_number),
                        "high_from": t.high_from.map_or("-".into(), charts::short_number),
                        "position": threshold_position(t.value, t.low_below, t.high_from),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let classes: Vec<_> = facts
        .classes
        .get(&job.job_id)
        .map(|cl| {
            cl.iter()
                .map(|(id, name)| json!({"id": c(id), "name": c(name)}))
                .collect()
        })
        .unwrap_or_default();
    let mut spans: Vec<(f64, f64)> = Vec::new();
    let findings_json: Vec<_> = findings
        .iter()
        .map(|f| {
            if let Some((a, b)) = f.window
                && let (Some(a), Some(b)) = (hours_since(job.start, a), hours_since(job.start, b))
            {
                spans.push((a, b));
            }
            json!({
                "rule": c(&f.rule), "title": c(&f.title), "group": c(&f.group), "severity": c(&f.severity),
                "node": f.node.as_deref().map(c), "message": c(&f.message), "why": c(&f.why),
                "fix": c(&f.fix), "tools": c(&f.tools), "evidence": c(&f.evidence),
                "window": f.window.map(|(a, b)| format!("{} to {}", a.format("%H:%M"), b.format("%H:%M UTC"))),
            })
        })
        .collect();
    let verdicts: Vec<_> = predictions
        .iter()
        .map(|p| {
            if p.verdict != "healthy"
                && let Some((a, b)) = p.window
                && let (Some(a), Some(b)) = (hours_since(job.start, a), hours_since(job.start, b))
            {
                spans.push((a, b));
            }
            json!({
                "verdict": c(&p.verdict), "confidence": pct(p.confidence), "source": c(&p.source),
                "node": p.node.as_deref().map(c), "reason": c(&p.reason),
                "model_verdict": p.model_verdict.as_deref().map(c), "model_confidence": pct(p.model_confidence),
                "anomaly_score": p.anomaly_score.map(|s| format!("{s:.2}")),
                "windows": p.windows, "anomalous_windows": p.anomalous_windows,
                "agreeing_rules": c(&p.agreeing_rules),
                "window": p.window.map(|(a, b)| format!("{} to {}", a.format("%H:%M"), b.format("%H:%M UTC"))),
                "anomalous": p.verdict != "healthy" && p.verdict != "not-judged",
            })
        })
        .collect();
    // Which metrics to chart: the first of the ranking that have telemetry.
    let means = facts.means.get(&job.job_id);
    let ranked = job_metrics_ranked(job, facts, inputs, band);
    let reference = references.of(&job.job_id);
    let mut chart_svgs = Vec::new();
    let charted = ranked
        .iter()
        .filter(|m| series.is_some_and(|s| s.values().any(|x| x.contains_key(*m))))
        .take(settings.max_charts);
    for metric in charted {
        let Some(series) = series else { break };
        let mut chart = MetricChart {
            title: metric.clone(),
            anomalous: spans.clone(),
            ..Default::default()
        };
        let per_node: Vec<(String, Vec<(f64, f64)>)> = series
            .iter()
            .filter_map(|(node, m)| m.get(metric).map(|p| (node.clone(), p.clone())))
            .collect();
        if per_node.len() > charts::MAX_NODE_LINES {
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
            chart.reference_band = Some(("healthy jobs' mean (p10-p90)".into(), *lo, *hi));
        }
        chart_svgs.push(Value::from_safe_string(charts::metric_chart(&chart)?));
    }
    // Why: the ranked metrics' job mean against the healthy band.
    let weights: HashMap<String, f64> =
        inputs
            .importance
            .iter()
            .fold(HashMap::new(), |mut m, (f, w)| {
                *m.entry(f.split(':').next().unwrap_or(f).to_string())
                    .or_default() += w.max(0.0);
                m
            });
    let why: Vec<_> = ranked
        .iter()
        .filter_map(|m| {
            let v = means.and_then(|x| x.get(m)).copied()?;
            let b = band.get(m);
            Some(json!({
                "metric": c(m), "value": charts::short_number(v),
                "healthy": b.map(|(lo, hi)| format!("{} to {}", charts::short_number(*lo), charts::short_number(*hi))),
                "outside": deviation(Some(v), b) > 0.0,
                "weight": weights.get(m).map(|w| format!("{w:.3}")),
            }))
        })
        .take(8)
        .collect();
    let reference_text = match reference {
        Some((run, _)) => format!(
            "dashed grey: the newest healthy run of {} by {} (job {}, {})",
            c(&run.name),
            c(&run.user),
            c(&run.job_id),
            run.day
        ),
        None if !band.is_empty() => "grey band: the middle 80 % of healthy jobs' means on this cluster over the last 30 days (no healthy run of this job name)".into(),
        None => "no healthy reference yet: no job of the last 30 days that ran without findings has telemetry features".into(),
    };
    let day = job.day.clone();
    Ok(with_charts(
        json!({
            "title": format!("job {}", c(&job.job_id)),
            "root": href(&me, std::path::Path::new("")),
            "user_href": href(&me, &user_path(&job.cluster, &job.user)),
            "day_href": href(&me, &day_path(&job.cluster, &day)),
            "workflow": facts.workflows.get(&job.job_id).map(|run| json!({
                "run": c(run), "href": href(&me, &workflow_path(run)),
            })),
            "job": {
                "job_id": c(&job.job_id), "name": c(&job.name), "user": c(&job.user),
                "account": c(&job.account), "partition": c(&job.partition), "qos": c(&job.qos),
                "cluster": c(&job.cluster), "nodes": c(&job.nodes), "num_nodes": job.num_nodes,
                "cpus": job.cpus, "gpus": job.gpus, "state": c(&job.state),
                "exit": match (job.exit_code, job.exit_signal) {
                    (Some(code), Some(sig)) if sig != 0 => format!("{code} (signal {sig})"),
                    (Some(code), _) => code.to_string(),
                    _ => "-".into(),
                },
                "submit": time(job.submit), "start": time(job.start), "end": time(job.end),
                "wait": duration(job.wait_s), "elapsed": duration(job.elapsed_s),
                "core_hours": job.core_hours.map_or("-".into(), |h| format!("{h:.1}")),
                "wasted_core_hours": summary.and_then(|s| s.wasted_core_hours).map_or("-".into(), |h| format!("{h:.1}")),
                "day": day,
            },
            "coverage": summary.map(|s| json!({
                "judgeable": s.judgeable, "reason": c(&s.not_judgeable_reason),
                "coverage": pct(s.coverage_mean), "missing": c(&s.nodes_missing), "duty_cycle": c(&s.duty_cycle),
            })),
            "usage": usage,
            "suggestions": suggestions(job, summary),
            "thresholds": thresholds,
            "classes": classes,
            "findings": findings_json,
            "verdicts": verdicts,
            "why": why,
            "model_weighs": !inputs.importance.is_empty(),
            "reference": reference_text,
        }),
        chart_svgs,
    ))
}

/// A job page and a user page with every value set, for [`super::check`]: one job with a
/// finding, a verdict, a threshold, a class and telemetry of two nodes.
pub fn samples(settings: &Settings) -> Result<(Value, Value), charts::ChartError> {
    use super::load::{FindingFacts, PredictionFacts, RecentJob, SummaryFacts, ThresholdFacts};
    let start = DateTime::<Utc>::from_timestamp(1_763_625_600, 0).unwrap_or_default();
    let job = JobFacts {
        job_id: "4242".into(),
        day: "2025-11-20".into(),
        cluster: "cluster".into(),
        user: "alice".into(),
        account: "physics".into(),
        partition: "gpu".into(),
        name: "lammps".into(),
        nodes: "node[01-02]".into(),
        num_nodes: 2,
        cpus: 64,
        gpus: 2,
        req_mem_mb: Some(256_000),
        time_limit_s: Some(86_400),
        submit: Some(start),
        start: Some(start),
        end: Some(start + chrono::Duration::hours(6)),
        state: "COMPLETED".into(),
        exit_code: Some(0),
        elapsed_s: Some(6 * 3600),
        wait_s: Some(0),
        core_hours: Some(384.0),
        ..Default::default()
    };
    let mut facts = Facts::default();
    let id = job.job_id.clone();
    facts
        .workflows
        .insert(id.clone(), format!("slurm-{}-{id}", job.cluster));
    facts.summaries.insert(
        id.clone(),
        SummaryFacts {
            judgeable: true,
            cpu_used_cores: Some(2.0),
            cpu_eff: Some(2.0 / 64.0),
            mem_used_max_mb: Some(10_000.0),
            mem_eff: Some(0.04),
            time_eff: Some(0.25),
            gpu_util: Some(0.0),
            wasted_core_hours: Some(372.0),
            ..Default::default()
        },
    );
    let window = Some((
        start + chrono::Duration::hours(1),
        start + chrono::Duration::hours(2),
    ));
    facts.findings.insert(
        id.clone(),
        vec![FindingFacts {
            rule: "hung".into(),
            title: "The job hung".into(),
            group: "hanged".into(),
            severity: "critical".into(),
            node: Some("node01".into()),
            window,
            message: "no CPU activity".into(),
            why: "nothing ran".into(),
            fix: "attach a debugger".into(),
            tools: "gdb".into(),
            evidence: "{}".into(),
        }],
    );
    facts
        .classes
        .insert(id.clone(), vec![("gpu".into(), "GPU job".into())]);
    facts.thresholds.insert(
        id.clone(),
        vec![ThresholdFacts {
            characteristic: "cpu".into(),
            title: "CPU load".into(),
            value: Some(0.03),
            level: "low".into(),
            low_below: Some(0.2),
            high_from: Some(0.8),
        }],
    );
    facts.predictions.insert(
        id.clone(),
        vec![PredictionFacts {
            verdict: "hung".into(),
            confidence: Some(0.9),
            source: "rules+model".into(),
            node: Some("node01".into()),
            window,
            windows: 10,
            anomalous_windows: 4,
            model_verdict: Some("cpuoccupy".into()),
            model_confidence: Some(0.8),
            anomaly_score: Some(3.2),
            agreeing_rules: "hung".into(),
            reason: "rules and model agree".into(),
        }],
    );
    let points: Vec<(f64, f64)> = (0..12).map(|i| (i as f64 * 0.5, (i % 3) as f64)).collect();
    let mut series = Series::new();
    for node in ["node01", "node02"] {
        series
            .entry(node.into())
            .or_default()
            .insert("cpu_user".into(), points.clone());
    }
    facts.telemetry.insert(id.clone(), series.clone());
    facts
        .means
        .insert(id.clone(), BTreeMap::from([("cpu_user".into(), 1.0)]));
    facts.jobs.push(job.clone());
    let band = BTreeMap::from([("cpu_user".to_string(), (10.0, 20.0))]);
    let reference = HealthyRun {
        job_id: "4000".into(),
        day: NaiveDate::from_ymd_opt(2025, 11, 19).unwrap_or_default(),
        user: "alice".into(),
        name: "lammps".into(),
    };
    let references = References {
        runs: HashMap::from([(id, reference.clone())]),
        series: HashMap::from([((reference.day, reference.job_id.clone()), series)]),
    };
    let inputs = Inputs {
        importance: vec![("cpu_user:mean".into(), 0.2)],
    };
    let job_value = job_page(&job, &facts, &references, &band, &inputs, settings)?;
    let history = UserHistory {
        days: vec![("2025-11-20".into(), 1, 1, Some(0.03))],
        repeating: vec![("The job hung".into(), 1, "2025-11-20".into())],
        emails: vec![(
            "2025-11-20".into(),
            "digest".into(),
            "sent".into(),
            "2025-11-21 02:30 UTC".into(),
        )],
        recent: vec![RecentJob {
            job_id: "4242".into(),
            day: "2025-11-20".into(),
            name: "lammps".into(),
            state: "COMPLETED".into(),
            elapsed_s: Some(3600),
            cpu_eff: Some(0.5),
            mem_eff: None,
            findings: 1,
            verdict: Some("hung".into()),
        }],
    };
    let day = NaiveDate::from_ymd_opt(2025, 11, 20).unwrap_or_default();
    let user_value = user_page("cluster", "alice", day, &history)?;
    Ok((job_value, user_value))
}

/// A workflow run's page: its figures, its Gantt chart, its flagged tasks and its critical path.
pub fn workflow_page(run: &load::WorkflowFacts) -> Result<Value, charts::ChartError> {
    let me = workflow_path(&run.workflow_id);
    let origin = run
        .tasks
        .iter()
        .flat_map(|t| [t.ready, t.submit, t.execute_start])
        .flatten()
        .fold(f64::INFINITY, f64::min);
    let since = |v: Option<f64>| v.map(|v| v - origin);
    let gantt: Vec<charts::GanttTask> = run
        .tasks
        .iter()
        .map(|t| charts::GanttTask {
            ready: since(t.ready),
            submit: since(t.submit),
            start: since(t.execute_start),
            finish: since(t.execute_end),
            end: since(t.end),
            flagged: t.flagged,
            critical: t.critical,
        })
        .collect();
    let svg = charts::gantt_chart(
        &format!("{} ({} tasks)", run.workflow_id, run.tasks.len()),
        &gantt,
    )?;
    let secs = |v: Option<f64>| duration(v.map(|v| v.round() as i64));
    let task_json = |t: &load::WorkflowTaskFacts| {
        json!({
            "task": c(&t.task_id),
            "host": c(t.host.as_deref().unwrap_or("-")),
            "label": c(t.label.as_deref().unwrap_or("-")),
            "score": t.score.map_or("-".into(), |s| format!("{s:.1}")),
            "executing": secs(t.execute_start.zip(t.execute_end).map(|(a, b)| b - a)),
        })
    };
    let mut flagged: Vec<&load::WorkflowTaskFacts> =
        run.tasks.iter().filter(|t| t.flagged).collect();
    flagged.sort_by(|a, b| b.score.unwrap_or(0.0).total_cmp(&a.score.unwrap_or(0.0)));
    let critical: Vec<serde_json::Value> = run
        .tasks
        .iter()
        .filter(|t| t.critical)
        .map(task_json)
        .collect();
    let scored = run.tasks.iter().any(|t| t.score.is_some());
    Ok(with_charts(
        json!({
            "title": format!("workflow run {}", c(&run.workflow_id)),
            "root": href(&me, std::path::Path::new("")),
            "run": c(&run.workflow_id),
            "workflow": c(&run.workflow),
            "label": c(run.label.as_deref().unwrap_or("-")),
            "tasks": run.tasks.len(),
            "start": time(run.start),
            "end": time(run.end),
            "makespan": secs(run.makespan_s),
            "critical_path": secs(run.critical_path_s),
            "scored": scored,
            "flagged": flagged.iter().map(|t| task_json(t)).collect::<Vec<_>>(),
            "flagged_shown": flagged.len().min(MAX_FLAGGED_ROWS),
            "critical": critical,
            "phases": charts::GANTT_PHASES.iter().map(|(name, colour)| json!({
                "name": name, "colour": format!("#{:02x}{:02x}{:02x}", colour.0, colour.1, colour.2),
            })).collect::<Vec<_>>(),
        }),
        vec![Value::from_safe_string(svg)],
    ))
}

/// Flagged tasks listed on a workflow page (the chart marks them all).
const MAX_FLAGGED_ROWS: usize = 50;

/// A page's values with its charts (SVG strings, already safe) under `chart_svgs`.
fn with_charts(page: serde_json::Value, svgs: Vec<Value>) -> Value {
    minijinja::value::merge_maps([
        Value::from(BTreeMap::from([("chart_svgs", Value::from(svgs))])),
        jobsight_base::templates::value(page),
    ])
}

/// A bar's width in percent of a share (0 to 100).
fn bar_width(share: Option<f64>) -> f64 {
    (share.unwrap_or(0.0).clamp(0.0, 1.0) * 100.0).round()
}

/// `bad`, `low` or `good` for a usage share, by the limits of jobstats (red, then yellow).
fn level(share: Option<f64>, red_below: f64, low_below: f64) -> &'static str {
    match share {
        None => "unknown",
        Some(s) if s < red_below => "bad",
        Some(s) if s < low_below => "low",
        _ => "good",
    }
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

/// The mean across nodes of one metric, bin by bin.
fn mean_across(series: &Series, metric: &str) -> Vec<(f64, f64)> {
    let mut bins: BTreeMap<i64, (f64, f64, usize)> = BTreeMap::new();
    for m in series.values() {
        for (x, y) in m.get(metric).into_iter().flatten() {
            let e = bins.entry((x * 1e6) as i64).or_insert((*x, 0.0, 0));
            e.1 += y;
            e.2 += 1;
        }
    }
    bins.values().map(|(x, s, n)| (*x, s / *n as f64)).collect()
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

/// The user page's values: their recent jobs with verdicts and efficiency, their trend and
/// repeating findings over the last 30 days, and the emails they were sent.
pub fn user_page(
    cluster: &str,
    user: &str,
    day: NaiveDate,
    history: &UserHistory,
) -> Result<Value, charts::ChartError> {
    let me = user_path(cluster, user);
    let rows: Vec<_> = history
        .recent
        .iter()
        .map(|j| {
            json!({
                "job_id": c(&j.job_id), "day": c(&j.day), "name": c(&j.name), "state": c(&j.state),
                "href": href(&me, &job_path(cluster, &j.job_id)),
                "elapsed": duration(j.elapsed_s), "cpu_eff": pct(j.cpu_eff),
                "mem_eff": pct(j.mem_eff), "findings": j.findings,
                "verdict": j.verdict.as_deref().map(c),
            })
        })
        .collect();
    let days: Vec<String> = history.days.iter().map(|d| d.0.clone()).collect();
    let effs: Vec<Option<f64>> = history.days.iter().map(|d| d.3).collect();
    let trend = charts::trend_chart(
        "CPU efficiency per day (core-hour weighted)",
        "share",
        &days,
        &effs,
    )?;
    Ok(with_charts(
        json!({
            "title": format!("{} on {}", c(user), c(cluster)),
            "root": href(&me, std::path::Path::new("")),
            "day_href": href(&me, &day_path(cluster, &day.to_string())),
            "user": c(user), "cluster": c(cluster), "day": day.to_string(),
            "jobs": rows,
            "history": history.days.iter().map(|(d, n, flagged, eff)| json!({
                "day": d, "jobs": n, "flagged": flagged, "cpu_eff": pct(*eff),
            })).collect::<Vec<_>>(),
            "repeating": history.repeating.iter().map(|(t, n, last)| json!({"title": c(t), "times": n, "last": last})).collect::<Vec<_>>(),
            "emails": history.emails.iter().map(|(p, k, s, at)| json!({"period": c(p), "kind": c(k), "status": c(s), "sent": at})).collect::<Vec<_>>(),
        }),
        vec![Value::from_safe_string(trend)],
    ))
}

/// The daily system report's values, from `summaries`, `findings` and `runs` of the day.
pub async fn day_page(
    ctx: &SessionContext,
    cluster: &str,
    day: NaiveDate,
    facts: &Facts,
) -> Result<Value, super::ReportError> {
    let me = day_path(cluster, &day.to_string());
    let cl = load::literal(cluster);
    let group = |key: &str| {
        format!(
            "SELECT {key} AS name, sum(jobs) AS jobs, sum(core_hours) AS core_hours, \
             sum(cpu_eff * cpu_eff_core_hours) / sum(cpu_eff_core_hours) AS cpu_eff, \
             sum(mem_eff * mem_eff_core_hours) / sum(mem_eff_core_hours) AS mem_eff, \
             sum(idle_core_hours) AS idle_core_hours, sum(waste_kwh) AS waste_kwh, \
             sum(waste_cost) AS waste_cost, max(currency) AS currency, \
             sum(jobs_flagged) AS flagged, sum(judged_jobs) AS judged \
             FROM summaries WHERE day = '{day}' AND cluster = {cl} \
             GROUP BY {key} ORDER BY {key}"
        )
    };
    let read = |batches: Vec<datafusion::arrow::array::RecordBatch>| -> Result<Vec<serde_json::Value>, QueryError> {
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
    };
    let partitions = read(load::rows(ctx, &group("\"partition\"")).await?)?;
    let accounts = read(load::rows(ctx, &group("account")).await?)?;
    let mut users = read(load::rows(ctx, &group("\"user\"")).await?)?;
    users.sort_by(|a, b| {
        b["idle_value"]
            .as_f64()
            .unwrap_or(0.0)
            .total_cmp(&a["idle_value"].as_f64().unwrap_or(0.0))
    });
    users.truncate(10);
    for u in &mut users {
        let key = u["key"].as_str().unwrap_or_default().to_string();
        u["href"] = json!(href(&me, &user_path(cluster, &key)));
    }
    let totals = read(load::rows(ctx, &group("cluster")).await?)?;
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
            .map_err(|e| super::ReportError::Query(QueryError::Render(e.to_string())))
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
    // The rules that fired most on the day's jobs of this cluster.
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
    let rules: Vec<_> = rules
        .iter()
        .take(15)
        .map(|((t, s), n)| json!({"title": c(t), "severity": c(s), "findings": n}))
        .collect();
    // The pipeline's health: the day's runs by DAG and step.
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
    let worst: Vec<_> = {
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
                    "href": href(&me, &job_path(cluster, &j.job_id)),
                    "wasted": format!("{:.1}", waste(j)),
                    "findings": facts.findings.get(&j.job_id).map_or(0, Vec::len),
                })
            })
            .collect()
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::SummaryFacts;

    fn job() -> JobFacts {
        JobFacts {
            job_id: "42".into(),
            state: "COMPLETED".into(),
            cpus: 32,
            num_nodes: 1,
            req_mem_mb: Some(64 * 1024),
            time_limit_s: Some(24 * 3600),
            elapsed_s: Some(2 * 3600 + 10 * 60),
            ..Default::default()
        }
    }

    #[test]
    fn suggestions_follow_what_the_job_used() {
        let s = SummaryFacts {
            judgeable: true,
            cpu_used_cores: Some(1.0),
            cpu_eff: Some(1.0 / 32.0),
            mem_used_max_mb: Some(5.0 * 1024.0),
            mem_eff: Some(5.0 / 64.0),
            ..Default::default()
        };
        let lines: Vec<String> = suggestions(&job(), Some(&s))
            .into_iter()
            .map(|s| s.line)
            .collect();
        assert_eq!(
            lines,
            [
                "#SBATCH --mem=6G",
                "#SBATCH --time=3:15:00",
                "#SBATCH --ntasks=2"
            ]
        );
        // A job that did not complete, or could not be judged, gets none.
        let mut failed = job();
        failed.state = "OUT_OF_MEMORY".into();
        assert!(suggestions(&failed, Some(&s)).is_empty());
        let unjudged = SummaryFacts {
            judgeable: false,
            ..s
        };
        assert!(suggestions(&job(), Some(&unjudged)).is_empty());
    }

    #[test]
    fn threshold_positions_split_the_bar_in_thirds() {
        assert_eq!(threshold_position(Some(0.0), Some(1.0), Some(2.0)), 1.0);
        assert_eq!(threshold_position(Some(1.5), Some(1.0), Some(2.0)), 50.0);
        assert_eq!(threshold_position(Some(10.0), Some(1.0), Some(2.0)), 99.0);
        assert_eq!(threshold_position(None, Some(1.0), Some(2.0)), 50.0);
    }

    #[test]
    fn metrics_named_by_findings_come_first() {
        let metrics: Vec<String> = ["cpu_user", "disk_read_bytes_per_s", "mem_used_bytes"]
            .map(String::from)
            .into();
        let ranked = ranked_metrics(
            &metrics,
            "disk_read_bytes_per_s high",
            &[],
            None,
            &BTreeMap::new(),
        );
        assert_eq!(ranked[0], "disk_read_bytes_per_s");
        assert_eq!(ranked[1], "cpu_user");
    }

    #[test]
    fn links_are_relative() {
        let from = job_path("c", "1");
        assert_eq!(
            href(&from, &user_path("c", "a b")),
            "../../c/users/a~20b.html"
        );
        assert_eq!(
            href(&from, std::path::Path::new("index.html")),
            "../../index.html"
        );
    }
}
