//! `jobsight job` as text for a person: the job's request and use with jobstats' bars, each
//! finding with what to do and its evidence, the verdict with where the job differed most from
//! healthy runs, and the words on a verdict every view shares (the job's page says it alike).

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::{Difference, JobView, MAX_TEXT, Verdict};
use crate::figure_source_label;
use crate::per_node;
use crate::units::{duration, evidence_rows, named_value, percent, significant, size_from_mb};
use crate::usage::{GpuFigures, gpu_use, memory_use};
use jobsight_base::plain;
use jobsight_base::text::clean;

/// How the rules' findings and the models' verdict combine, said once on every view of a job.
pub const HOW_THE_VERDICT_IS_MADE: &str = "The verdict is the models' judgement of the job's \
telemetry (the diagnosis names an anomaly type; the anomaly score calls windows unlike healthy \
runs unknown), joined with the rules: a critical finding (killed for memory, hung, GPUs idle) is \
the verdict whatever the models said, and so is a rule's anomaly type the models did not name \
(\"from the rules\"); when both name it, \"from the models and the rules\". A confidence is \
the models' share of votes, shown only where they voted. Findings about \
how the job asked for resources (memory, time, idle cores) are not anomalies: a healthy job can \
have them, and they are worth acting on all the same.";

/// The view as text for a person.
pub fn render_text(v: &JobView) -> String {
    let mut out = String::new();
    let t = |s: &str| clean(s, MAX_TEXT);
    let _ = writeln!(
        out,
        "Job {} ({}) of {}, account {}, partition {}, cluster {}",
        t(&v.job_id),
        t(&v.name),
        t(&v.user),
        t(&v.account),
        t(&v.partition),
        t(&v.cluster)
    );
    let exit = v.exit_code.map_or(String::new(), |code| {
        format!(", {}", plain::exit_status(code, v.exit_signal))
    });
    let _ = writeln!(out, "  {:<11} {}{exit}", "State", t(&v.state));
    let _ = writeln!(out, "  {:<11} {} ({})", "Nodes", v.num_nodes, t(&v.nodes));
    let _ = writeln!(
        out,
        "  {:<11} {}, waited {}",
        "Submitted",
        time(v.submit),
        v.wait_s.map_or("-".into(), |s| duration(s as f64))
    );
    let _ = writeln!(out, "  {:<11} {} to {}", "Ran", time(v.start), time(v.end));
    if let Some(h) = v.core_hours {
        let _ = writeln!(out, "  {:<11} {}", "Core-hours", significant(h));
    }
    // What to do first: the findings and a better request; the figures and the verdict after.
    render_findings(&mut out, v);
    if !v.suggestions.is_empty() {
        let _ = writeln!(out, "\nA better request for the next run");
        for s in &v.suggestions {
            let _ = writeln!(out, "  {:<26} # {}", s.line, t(&s.why));
        }
    }
    render_usage(&mut out, v);
    per_node::render_text(&mut out, &v.per_node);
    if !v.notes.is_empty() {
        let _ = writeln!(out, "\nAbout this job's data");
        for n in &v.notes {
            let _ = writeln!(out, "  - {}", t(n));
        }
    }
    render_verdict(&mut out, v);
    out
}

/// A time to the second in UTC, `-` when unknown.
fn time(t: Option<DateTime<Utc>>) -> String {
    t.map_or("-".into(), |t| {
        t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
    })
}

/// A share as a 20-character bar, jobstats' way.
fn bar(share: Option<f64>) -> String {
    let Some(s) = share.filter(|s| s.is_finite()) else {
        return String::new();
    };
    let filled = (s.clamp(0.0, 1.0) * 20.0).round() as usize;
    format!("[{}{}]", "#".repeat(filled), " ".repeat(20 - filled))
}

/// A bar for use past the request (or a job killed at it): a problem, not a full bar.
fn over_bar() -> String {
    format!("[{}]", "!".repeat(20))
}

fn render_usage(out: &mut String, v: &JobView) {
    let _ = writeln!(out, "\nWhat it asked for and used");
    let Some(u) = &v.usage else {
        let _ = writeln!(
            out,
            "  not measured yet: the features step has not described this job"
        );
        return;
    };
    let from = |source: &str| {
        figure_source_label(source, u.shared).map_or(String::new(), |l| format!(" ({l})"))
    };
    let shown = |share: Option<f64>| share.map_or("-".into(), percent);
    // (share, as written, past the request or killed at it).
    type Shown = (Option<f64>, String, bool);
    let line = |out: &mut String, what: &str, asked: String, used: String, share: Shown| {
        let drawn = if share.2 { over_bar() } else { bar(share.0) };
        let _ = writeln!(
            out,
            "  {what:<7} {asked:<12} {used:<40} {:>5} {drawn}",
            share.1,
        );
    };
    let memory = memory_use(&v.state, v.req_mem_mb, u.mem_used_max_mb, u.mem_eff);
    line(
        out,
        "cores",
        v.cpus.to_string(),
        u.cpu_used_cores.map_or("-".into(), |c| {
            format!("{} busy on average{}", significant(c), from(&u.cpu_source))
        }),
        (u.cpu_eff, shown(u.cpu_eff), false),
    );
    line(
        out,
        "memory",
        v.req_mem_mb.map_or("-".into(), |m| size_from_mb(m as f64)),
        u.mem_used_max_mb.map_or("-".into(), |m| {
            format!("{} at its peak{}", size_from_mb(m), from(&u.mem_source))
        }),
        (memory.share, memory.text.clone(), memory.level == "over"),
    );
    line(
        out,
        "time",
        v.time_limit_s.map_or("-".into(), |s| duration(s as f64)),
        v.elapsed_s
            .map_or("-".into(), |s| format!("ran {}", duration(s as f64))),
        (u.time_eff, shown(u.time_eff), false),
    );
    if v.gpus > 0 {
        let gpus = gpu_use(
            v.gpus,
            GpuFigures {
                util: u.gpu_util,
                mem_mb: u.gpu_mem_used_max_mb,
                total_mb: u.gpu_mem_total_mb,
                shared: u.shared,
                slurm_util_peak_pct: u.acct_gpu_util_max_pct,
                slurm_mem_peak_mb: u.acct_gpu_mem_max_mb,
            },
        );
        line(
            out,
            "GPUs",
            v.gpus.to_string(),
            gpus.busy,
            (gpus.busy_share, shown(gpus.busy_share), false),
        );
        line(
            out,
            "GPU mem",
            gpus.memory_size,
            gpus.memory,
            (gpus.memory_share, shown(gpus.memory_share), false),
        );
    }
    if let Some(kwh) = u.energy_kwh {
        let _ = writeln!(out, "  {:<7} {} kWh", "energy", significant(kwh));
    }
    if !u.judgeable {
        let _ = writeln!(
            out,
            "  its telemetry could not judge it: {}",
            clean(&u.not_judgeable_reason, MAX_TEXT)
        );
    }
}

fn render_findings(out: &mut String, v: &JobView) {
    if v.findings.is_empty() {
        let _ = writeln!(out, "\nNo rule found a problem in this job.");
        return;
    }
    let _ = writeln!(out, "\nWhat was found ({})", v.findings.len());
    for f in &v.findings {
        let mut place = String::new();
        if let Some(node) = &f.node {
            place += &format!(" on {}", clean(node, MAX_TEXT));
        }
        if let (Some(a), Some(b)) = (f.window_start, f.window_end) {
            place += &format!(", {}", plain::time_span(a, b));
        }
        let _ = writeln!(
            out,
            "  * {} ({}){place}",
            clean(&f.title, MAX_TEXT),
            clean(&f.severity, 40)
        );
        let para = |label: &str, text: &str| {
            wrap(&format!("{label}{}", clean(text, MAX_TEXT)), 86, "    ")
        };
        if let Some(earlier) = &f.earlier_run {
            let _ = writeln!(out, "    {}", para("", earlier));
        }
        let _ = writeln!(out, "    {}", para("What to do: ", &f.fix));
        let _ = writeln!(out, "    {}", para("What was seen: ", &f.message));
        if !f.why.is_empty() {
            let _ = writeln!(out, "    {}", para("Why it matters: ", &f.why));
        }
        if !f.tools.is_empty() {
            let _ = writeln!(out, "    {}", para("Tools that help: ", &f.tools));
        }
        let evidence = evidence_rows(&f.evidence.to_string());
        if !evidence.is_empty() {
            let width = evidence
                .iter()
                .map(|(k, _)| k.chars().count())
                .max()
                .unwrap_or(0);
            let _ = writeln!(out, "    Evidence:");
            for (name, value) in evidence {
                let _ = writeln!(out, "      {name:<width$}  {value}");
            }
        }
    }
}

fn render_verdict(out: &mut String, v: &JobView) {
    let Some(p) = &v.verdict else {
        let _ = writeln!(
            out,
            "\nVerdict: none (no model judged this job and no rule named an anomaly)"
        );
        let _ = writeln!(out, "  {}", how_verdict());
        return;
    };
    let mut line = format!("\nVerdict: {}", verdict_said(p));
    if let Some(node) = &p.node {
        line += &format!(" on {}", clean(node, MAX_TEXT));
    }
    if let (Some(a), Some(b)) = (p.window_start, p.window_end) {
        line += &format!(", {}", plain::time_span(a, b));
    }
    let _ = writeln!(out, "{line}");
    if !p.agreeing_rules.is_empty() {
        let _ = writeln!(
            out,
            "  rules that agree: {}",
            clean(&p.agreeing_rules, MAX_TEXT)
        );
    }
    if !p.reason.is_empty() {
        let _ = writeln!(out, "  {}", clean(&p.reason, MAX_TEXT));
    }
    if v.differed.is_empty() {
        let text = format!(
            "Its metrics were within the range of {} (or there is no such range yet).",
            v.compared_with
        );
        let _ = writeln!(out, "  {}", wrap(&text, 86, "  "));
    } else {
        let text = format!(
            "Where it differed most from {}, against the middle 80 % of their means:",
            v.compared_with
        );
        let _ = writeln!(out, "  {}", wrap(&text, 86, "  "));
        let label = |d: &Difference| clean(&plain::evidence_label(&d.metric), 80);
        let width = v
            .differed
            .iter()
            .map(|d| label(d).chars().count())
            .max()
            .unwrap_or(0);
        for d in &v.differed {
            let _ = writeln!(
                out,
                "    {:<width$}  {:>12}   healthy {} to {}",
                label(d),
                named_value(&d.metric, d.job_mean),
                named_value(&d.metric, d.healthy_low),
                named_value(&d.metric, d.healthy_high),
            );
        }
    }
    let _ = writeln!(out, "  {}", how_verdict());
}

/// A verdict as a person reads it, the same in every view: the problem in plain words, then
/// [`verdict_details`] ("healthy (from the models, confidence 97 %, 0 of 1,436 windows
/// anomalous)").
pub fn verdict_said(p: &Verdict) -> String {
    let name = clean(&plain::verdict(&p.verdict), 80);
    match verdict_details(p) {
        details if details.is_empty() => name,
        details => format!("{name} ({details})"),
    }
}

/// Who found a verdict, the confidence only where models voted, and how many of the judged
/// windows were anomalous or unlike healthy jobs.
pub fn verdict_details(p: &Verdict) -> String {
    let mut said = Vec::new();
    if !p.source.is_empty() && p.source != "none" {
        said.push(format!("from {}", plain::verdict_source(&p.source)));
    }
    if let Some(c) = p.confidence {
        said.push(format!("confidence {}", percent(c)));
    }
    if p.windows > 0 {
        let count = |n: u64| significant(n as f64);
        let mut windows = format!(
            "{} of {} windows anomalous",
            count(p.anomalous_windows),
            count(p.windows)
        );
        if p.unknown_windows > 0 {
            windows += &format!(", {} unlike healthy jobs", count(p.unknown_windows));
        }
        said.push(windows);
    }
    said.join(", ")
}

/// The paragraph on how the verdict is made, wrapped for a terminal.
pub(super) fn how_verdict() -> String {
    wrap(
        &format!("How the verdict is made: {HOW_THE_VERDICT_IS_MADE}"),
        86,
        "  ",
    )
}

/// `text` in lines of at most `width` characters (a longer word stands alone), each line after
/// the first starting with `indent`: a paragraph that reads in an 80-column terminal.
pub(crate) fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut lines: Vec<String> = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("one line at least");
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            lines.push(word.to_string());
        } else {
            if len > 0 {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines.join(&format!("\n{indent}"))
}
