//! Everything a person reads of jobsight, rendered in one place: the tables and JSON the
//! commands print, the emails, the report pages and their SVG charts, with their templates
//! beside their code (`src/email/templates/`, and each page's folder in `src/pages/`). The
//! stages return data (structs, record batches) and the modules here turn it into text; the
//! application chooses what to show and where it goes.
//!
//! Every value that came from a job (names, paths, users) is printed through
//! [`slurm_hooks::Text`]'s escaped form, so a job name cannot add lines to a report or send escape
//! sequences to an admin's terminal. JSON output is one document per line.
//!
//! This root has the spool's, the ingest's, the notify run's and the DAG runs' views; one module
//! per stage has the rest: [`summary`] (`jobsight summary`), [`model`] (`jobsight model eval`,
//! `info` and `bootstrap`), [`workflow`] (the workflow evaluation and model file), [`rules`]
//! (`jobsight rules list` and `backtest`) and [`running`] (`jobsight running` and its warning). The
//! SQL results' table, CSV and JSON stay with the warehouse (`jobsight_warehouse::query::render`),
//! which the streaming of `jobsight sql` shares. The notify stage's emails are written by [`email`]
//! (the stage plans and sends them), and the report stage's pages by [`pages`] (the stage gathers
//! their facts; [`pages::write`] renders a day's pages and a job's and writes them with the stage's
//! `write_page`, the workflow and index pages' folders write their own),
//! both through the one template engine of [`templates`].
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod email;
pub mod header;
pub mod job;
pub mod jobs;
pub mod model;
pub mod pages;
pub mod per_node;
pub mod rules;
pub mod running;
pub mod summary;
pub mod templates;
pub mod units;
pub mod usage;
pub mod workflow;

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use jobsight_base::choice::{Choice, Named};
use jobsight_base::text::{human_duration, printable};

use jobsight_ingest::per_job::{IngestReport, Outcome};
use jobsight_ingest::spool::{ClaimReport, SpoolStatus};

/// What a page or an email says beside a job's CPU or memory figure about where it came from
/// (`source` as `job_summary.cpu_eff_source` or `mem_source` names it; `shared` as
/// `job_summary.shared`): `Slurm accounting`, or `node, shared with other jobs` for its nodes'
/// figure when other jobs ran there too, so that it is never read as the job's alone; nothing for
/// the job's own telemetry, or its nodes' when they were its own or nothing says otherwise.
pub fn figure_source_label(source: &str, shared: Option<bool>) -> Option<&'static str> {
    match source {
        "accounting" => Some("Slurm accounting"),
        "telemetry-node" if shared == Some(true) => Some("node, shared with other jobs"),
        _ => None,
    }
}

/// A job's measured energy as a page or an email states it, with where it came from
/// (`job_summary.energy_source`) and, on a node the job shared, the share of the node's energy it
/// was given: `0.521 kWh (Slurm accounting, 25 % of its shared nodes')`. None without a figure.
pub fn energy_text(kwh: Option<f64>, source: Option<&str>, share: Option<f64>) -> Option<String> {
    let kwh = kwh.filter(|k| k.is_finite() && *k >= 0.0)?;
    let from = match source? {
        "accounting" => "Slurm accounting",
        "node-power" => "node power",
        "gpu-power" => "its GPUs alone, the host not counted",
        _ => return None,
    };
    let share = match share {
        Some(s) if s < 1.0 => format!(", {:.0} % of its shared nodes'", s * 100.0),
        _ => String::new(),
    };
    Some(format!("{kwh:.3} kWh ({from}{share})"))
}

/// How a command prints its result: an aligned table for people, or JSON lines for programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
}

impl Choice for Format {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: Format::Table,
            name: "table",
            help: "",
        },
        Named {
            value: Format::Json,
            name: "json",
            help: "",
        },
    ];
}

pub fn render_status(status: &SpoolStatus, format: Format) -> String {
    match format {
        Format::Json => {
            serde_json::to_string(status).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
                + "\n"
        }
        Format::Table => {
            let c = &status.counts;
            let mut out = format!("spool {}\n", printable(&status.spool.display().to_string()));
            for (name, count, meaning) in [
                ("new", c.new, "waiting to be claimed"),
                ("cur", c.cur, "claimed, not yet ingested"),
                ("done", c.done, "ingested into the warehouse"),
                (
                    "failed",
                    c.failed,
                    "unreadable or given up, see the .reason files",
                ),
                ("duplicate", c.duplicate, "further records of a claimed job"),
                (
                    "tmp",
                    c.tmp,
                    "being written (old ones: an interrupted hook)",
                ),
            ] {
                let _ = writeln!(out, "  {name:<10} {count:>8}  {meaning}");
            }
            match &status.oldest_pending {
                Some(o) => {
                    let _ = writeln!(
                        out,
                        "oldest pending: {} (enqueued {}, {} ago)",
                        printable(&o.file),
                        o.enqueued_at
                            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                        human_duration(o.age_seconds)
                    );
                }
                None => out.push_str("oldest pending: none\n"),
            }
            out
        }
    }
}

/// The claimed records on stdout; what was set aside is reported by [`render_set_aside`].
pub fn render_claimed(report: &ClaimReport, format: Format) -> String {
    let mut out = String::new();
    match format {
        Format::Json => {
            for claimed in &report.claimed {
                match serde_json::to_string(claimed) {
                    Ok(line) => {
                        out.push_str(&line);
                        out.push('\n');
                    }
                    Err(e) => {
                        let _ = writeln!(
                            out,
                            "{{\"error\":\"cannot serialise {}: {e}\"}}",
                            claimed.path.display()
                        );
                    }
                }
            }
        }
        Format::Table => {
            let _ = writeln!(
                out,
                "{:<10} {:<8} {:>3} {:<10} {:<9} {:<16} {:<7} NAME",
                "JOB", "CLUSTER", "RST", "USER", "PARTITION", "HOOK", "EXIT"
            );
            for c in &report.claimed {
                let r = &c.record;
                let text = |t: &Option<slurm_hooks::Text>| {
                    t.as_ref().map_or("-".to_string(), |t| t.escaped())
                };
                let job = match (r.array_job_id, r.array_task_id) {
                    (Some(a), Some(t)) => format!("{a}_{t}"),
                    _ => r.job_id.to_string(),
                };
                let exit = r
                    .exit_code
                    .as_ref()
                    .and_then(|e| e.code.zip(e.signal))
                    .map_or("-".into(), |(c, s)| format!("{c}:{s}"));
                let _ = writeln!(
                    out,
                    "{:<10} {:<8} {:>3} {:<10} {:<9} {:<16} {:<7} {}",
                    job,
                    text(&r.cluster),
                    r.restart_count.unwrap_or(0),
                    text(&r.user),
                    text(&r.partition),
                    r.hook.as_str(),
                    exit,
                    text(&r.job_name)
                );
            }
        }
    }
    out
}

/// One line per record set aside, for stderr.
pub fn render_set_aside(report: &ClaimReport) -> String {
    let mut out = String::new();
    for f in &report.failed {
        let line = format!("failed: {}: {}", f.path.display(), f.reason);
        let _ = writeln!(out, "{}", printable(&line));
    }
    for d in &report.duplicates {
        let line = format!("duplicate: {}: {}", d.path.display(), d.reason);
        let _ = writeln!(out, "{}", printable(&line));
    }
    out
}

pub fn claim_summary(report: &ClaimReport) -> String {
    format!(
        "claimed {} record(s); set aside {} duplicate(s) and {} failed; {} taken by another claimer",
        report.claimed.len(),
        report.duplicates.len(),
        report.failed.len(),
        report.lost_races
    )
}

/// The per-job ingest step's outcome per record: a table for people, one JSON document for
/// scripts.
pub fn render_ingest(report: &IngestReport, format: Format) -> String {
    match format {
        Format::Json => {
            serde_json::to_string(&report.records)
                .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
                + "\n"
        }
        Format::Table => {
            let mut out = String::new();
            let time = |t: &DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            for r in &report.records {
                let job = r.job.as_deref().unwrap_or("?");
                let line = match &r.outcome {
                    Outcome::Done {
                        day,
                        state,
                        telemetry_rows,
                        note,
                        ..
                    } => format!(
                        "done         {job:<20} {} day={day}, {telemetry_rows} telemetry rows{}",
                        state.as_deref().unwrap_or("?"),
                        note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default(),
                    ),
                    Outcome::Pending {
                        attempts,
                        next_attempt,
                        reason,
                    } => format!(
                        "pending      {job:<20} {}next at {}: {reason}",
                        if *attempts > 0 {
                            format!("attempt {attempts}, ")
                        } else {
                            String::new()
                        },
                        time(next_attempt)
                    ),
                    Outcome::Waiting {
                        next_attempt,
                        reason,
                    } => format!(
                        "waiting      {job:<20} until {}: {reason}",
                        time(next_attempt)
                    ),
                    Outcome::Quarantined { reason } => {
                        format!("quarantined  {job:<20} {}: {reason}", r.file)
                    }
                    Outcome::AlreadyStored { day, .. } => format!(
                        "stored       {job:<20} already in the compacted day {day}: not stored twice"
                    ),
                };
                out.push_str(&printable(&line));
                out.push('\n');
            }
            out
        }
    }
}

pub fn ingest_summary(report: &IngestReport, data: &std::path::Path) -> String {
    format!(
        "{}; jobs: {} done into {}, {} pending, {} waiting, {} quarantined",
        claim_summary(&report.claim),
        report.count("done"),
        data.display(),
        report.count("pending"),
        report.count("waiting"),
        report.count("quarantined"),
    ) + &match report.count("already_stored") {
        0 => String::new(),
        n => format!(", {n} already stored (compacted day)"),
    } + &together_summary(&report.together)
}

/// How many jobs' telemetry was asked for together, and why a group was not, when any.
fn together_summary(together: &jobsight_ingest::per_job::Together) -> String {
    let mut out = String::new();
    if together.groups > 0 {
        out += &format!(
            "; the telemetry of {} of them asked for in {} groups",
            together.jobs, together.groups
        );
    }
    if let Some(first) = together.failed.first() {
        out += &format!(
            "; {} group(s) asked for one job at a time instead ({})",
            together.failed.len(),
            first
        );
    }
    out
}

/// What a notify run did, for people: messages planned and where they went, findings left out
/// and why, delivery, and the outbox's state.
pub fn render_notify(report: &jobsight_notify::Report, dry_run: bool) -> String {
    use std::collections::BTreeMap;
    let mut out = String::new();
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &report.prepared {
        *kinds.entry(p.planned.kind.name()).or_default() += 1;
    }
    let reruns = report.prepared.iter().filter(|p| !p.queued).count();
    let _ = writeln!(
        out,
        "read {} job(s); {} {} message(s){}{}",
        report.jobs_read,
        if dry_run { "would send" } else { "planned" },
        report.prepared.len(),
        if kinds.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                kinds
                    .iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        if reruns > 0 && !dry_run {
            format!("; {reruns} already in the outbox from an earlier run, not queued again")
        } else {
            String::new()
        }
    );
    for p in &report.prepared {
        let jobs: usize = p.planned.jobs.len();
        let findings: usize = p.planned.jobs.iter().map(|j| j.items.len()).sum();
        let _ = writeln!(
            out,
            "  {:<44} to {:<28} {} job(s), {} finding(s): {}",
            p.planned.key,
            p.to.iter()
                .map(|m| m.email.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            jobs,
            findings,
            printable(&p.rendered.subject)
        );
    }
    let mut reasons: BTreeMap<String, (usize, bool)> = BTreeMap::new();
    for s in &report.skipped {
        let entry = reasons
            .entry(match &s.reason {
                jobsight_notify::plan::SkipReason::TooSoon(_) => {
                    "same kind mailed within notify.min_days_between".to_string()
                }
                r => r.describe(),
            })
            .or_insert((0, s.reason.waits()));
        entry.0 += 1;
    }
    if !reasons.is_empty() {
        let _ = writeln!(out, "left out (job or finding):");
        for (reason, (n, waits)) in &reasons {
            let _ = writeln!(
                out,
                "  {n:>5}  {reason}{}",
                if *waits {
                    " (stays unreported; a later digest has it)"
                } else {
                    ""
                }
            );
        }
    }
    if !report.no_address.is_empty() {
        let _ = writeln!(
            out,
            "no valid address for user(s): {} (notify.recipient / notify.recipients_file)",
            report.no_address.join(", ")
        );
    }
    for key in &report.recovered.sent {
        let _ = writeln!(
            out,
            "settled {key}: it was sent and recorded before the last run died"
        );
    }
    for key in &report.recovered.in_doubt {
        let _ = writeln!(
            out,
            "IN DOUBT {key}: the last run died while sending it; not resent (check the mail log, then `jobsight notify --resend {key}` if it never arrived)"
        );
    }
    if !dry_run {
        let d = &report.delivered;
        let _ = writeln!(
            out,
            "delivered {} message(s); {} waiting in the queue; {} failed",
            d.sent.len(),
            d.waiting.len(),
            d.failed.len()
        );
        for (key, next, error) in &d.waiting {
            let _ = writeln!(
                out,
                "  waiting {key}: next attempt {}{}",
                next.format("%Y-%m-%d %H:%M:%S UTC"),
                if error.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", printable(error))
                }
            );
        }
        for (key, reason) in &d.failed {
            let _ = writeln!(out, "  FAILED {key}: {}", printable(reason));
        }
    }
    let _ = writeln!(
        out,
        "outbox: {} (sent/ holds each delivered message as message.eml)",
        report.outbox.display()
    );
    out
}

/// What `dag run` did, one block per run: each step with its outcome, jobs, counts and error.
pub fn render_runs(reports: &[jobsight_warehouse::catalog::run_report::RunReport]) -> String {
    let mut out = String::new();
    for r in reports {
        out.push_str(&format!(
            "DAG {} ({}, for {}): {} in {:.1} s\n",
            r.dag,
            r.trigger,
            r.scheduled_for.format("%Y-%m-%d %H:%M:%S UTC"),
            r.outcome.name(),
            r.seconds
        ));
        for s in &r.steps {
            let counts: Vec<String> = s
                .counts
                .iter()
                .filter(|(_, v)| **v > 0)
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            out.push_str(&printable(&format!(
                "  {}. {:<15} {:<8} {:>6.1} s  {} job(s){}{}{}",
                s.position,
                s.step,
                s.outcome.name(),
                s.seconds,
                s.jobs,
                if counts.is_empty() {
                    String::new()
                } else {
                    format!("; {}", counts.join(", "))
                },
                if s.attempts > 1 {
                    format!("; {} attempts", s.attempts)
                } else {
                    String::new()
                },
                s.error
                    .as_ref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            )));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What was set aside is reported with its control bytes escaped: a record's bytes quoted in
    /// a reason cannot drive the admin's terminal.
    #[test]
    fn set_aside_lines_are_escaped() {
        let report = ClaimReport {
            failed: vec![jobsight_ingest::spool::SetAside {
                path: "failed/x\u{1b}[2J.json".into(),
                reason: "not a spool record: \u{1b}]0;pwned\u{7}".into(),
            }],
            ..Default::default()
        };
        let text = render_set_aside(&report);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text:?}"
        );
        assert!(text.contains("\\u{1b}]0;pwned\\u{7}"), "{text}");
    }

    /// The summary line says how many jobs' telemetry was asked for together and why a group
    /// was not; a run without groups says nothing of them.
    #[test]
    fn the_ingest_summary_says_what_was_asked_for_together() {
        let mut report = IngestReport::default();
        let data = std::path::Path::new("/data");
        let plain = ingest_summary(&report, data);
        assert!(
            !plain.contains("together") && !plain.contains("group"),
            "{plain}"
        );
        report.together = jobsight_ingest::per_job::Together {
            groups: 3,
            jobs: 40,
            failed: vec!["2 jobs asked together (7, 8): HTTP 503".into()],
        };
        assert_eq!(
            ingest_summary(&report, data).strip_prefix(&plain),
            Some(
                "; the telemetry of 40 of them asked for in 3 groups; 1 group(s) asked for one \
                 job at a time instead (2 jobs asked together (7, 8): HTTP 503)"
            )
        );
    }
}
