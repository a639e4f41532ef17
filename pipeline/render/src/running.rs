//! The running jobs as people see them in a terminal: `jobsight running` (a table, or JSON for
//! scripts). Like the "what runs now" page (`pages::running`), it shows each job's use so far
//! against its request, coloured by the job pages' limits ([`crate::usage`]), and the conditions
//! that hold with since when.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::units::{duration, percent};
use super::usage::{CPU_LEVELS, GPU_LEVELS, MEMORY_LEVELS, level};
use jobsight_base::text::clean;
use jobsight_running::snapshot::{LiveJob, Snapshot};

/// A snapshot older than this is called stale: the DAG runs every 10 minutes by default.
pub(crate) const STALE_AFTER_S: i64 = 1800;

pub(crate) fn share(x: Option<f64>) -> String {
    x.map_or("-".into(), percent)
}

/// The level's mark in a terminal: colour on a terminal, words otherwise (`good` says nothing).
fn marked(text: String, level: &str, colour: bool) -> String {
    match (level, colour) {
        ("bad", true) => format!("\u{1b}[31m{text}\u{1b}[0m"),
        ("low", true) => format!("\u{1b}[33m{text}\u{1b}[0m"),
        ("good", true) => format!("\u{1b}[32m{text}\u{1b}[0m"),
        ("bad", false) => format!("{text} bad"),
        ("low", false) => format!("{text} low"),
        _ => text,
    }
}

pub(crate) fn memory(job: &LiveJob) -> String {
    match (job.mem_used_max_mb, job.req_mem_mb) {
        (Some(used), Some(req)) => format!("{:.1}/{:.1} GB", used / 1024.0, req as f64 / 1024.0),
        (Some(used), None) => format!("{:.1} GB", used / 1024.0),
        (None, Some(req)) => format!("-/{:.1} GB", req as f64 / 1024.0),
        (None, None) => "-".into(),
    }
}

/// `jobsight running` for a person: one line per job, then each condition with what to do.
pub fn render_table(
    snapshot: &Snapshot,
    jobs: &[&LiveJob],
    now: DateTime<Utc>,
    colour: bool,
) -> String {
    let age = (now - snapshot.taken_at).num_seconds();
    let mut out = format!(
        "{} running job(s) at {} ({} ago)\n",
        jobs.len(),
        snapshot.taken_at.format("%Y-%m-%d %H:%M:%S UTC"),
        duration(age.max(0) as f64)
    );
    if age > STALE_AFTER_S {
        out += "  stale: the running DAG has not run since (jobsight dag status)\n";
    }
    if jobs.is_empty() {
        out += "  none\n";
        return out;
    }
    let _ = writeln!(
        out,
        "  {:<12} {:<10} {:<16} {:>9} {:>11} {:>9} {:>15} {:>9} {:>6}  conditions",
        "job", "user", "name", "running", "cores used", "CPU", "memory", "of req", "GPU"
    );
    for j in jobs {
        let cores = j
            .cpu_used_cores
            .map_or(format!("-/{}", j.cpus), |c| format!("{c:.1}/{}", j.cpus));
        let cpu = marked(
            format!("{:>9}", share(j.cpu_eff)),
            level(j.cpu_eff, CPU_LEVELS),
            colour,
        );
        let mem = marked(
            format!("{:>9}", share(j.mem_eff)),
            level(j.mem_eff, MEMORY_LEVELS),
            colour,
        );
        let gpu = if j.gpus == 0 {
            format!("{:>6}", "-")
        } else {
            marked(
                format!("{:>6}", share(j.gpu_util)),
                level(j.gpu_util, GPU_LEVELS),
                colour,
            )
        };
        let conditions = if let Some(why) = &j.not_judged {
            format!("not judged: {}", clean(why, 120))
        } else if j.conditions.is_empty() {
            "none".into()
        } else {
            j.conditions
                .iter()
                .map(|c| {
                    format!(
                        "{} for {}",
                        clean(&c.rule, 40),
                        duration(c.held_s(now) as f64)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            out,
            "  {:<12} {:<10} {:<16} {:>9} {:>11} {cpu} {:>15} {mem} {gpu}  {conditions}",
            clean(&j.job_id, 12),
            clean(&j.user, 10),
            clean(&j.name, 16),
            duration(j.elapsed_s as f64),
            cores,
            memory(j),
        );
    }
    for j in jobs {
        for c in &j.conditions {
            let _ = writeln!(
                out,
                "\njob {} ({}): [{}] {}\n  since {} ({})\n  {}\n  What to do: {}",
                clean(&j.job_id, 12),
                clean(&j.user, 32),
                clean(&c.severity, 10),
                clean(&c.title, 200),
                c.since.format("%Y-%m-%d %H:%M UTC"),
                duration(c.held_s(now) as f64),
                clean(&c.message, 1000),
                clean(&c.fix, 1000),
            );
        }
    }
    out
}

/// `jobsight running` for scripts: one JSON document per line and job, plain numbers.
pub fn render_json(jobs: &[&LiveJob]) -> String {
    jobs.iter()
        .map(|j| serde_json::to_string(j).unwrap_or_default() + "\n")
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::email::EmailTemplates;
    use crate::email::sample::sample_running;
    use jobsight_notify::running::Stage;

    #[test]
    fn the_terminal_table() {
        let snapshot = jobsight_running::snapshot::sample();
        let jobs: Vec<&LiveJob> = snapshot.jobs.iter().collect();
        let now = snapshot.taken_at + chrono::Duration::minutes(2);
        let table = render_table(&snapshot, &jobs, now, false);
        insta::assert_snapshot!("running_table", table);
        // In people's units and words (issue 67's check of every text a person reads).
        use jobsight_base::units::{raw_names, unreadable_numbers};
        assert!(unreadable_numbers(&table).is_empty(), "{table}");
        assert!(raw_names(&table).is_empty(), "{table}");
        // On a terminal the levels are colours, and stale snapshots say so.
        let coloured = render_table(&snapshot, &jobs, now + chrono::Duration::hours(1), true);
        assert!(
            coloured.contains("\u{1b}[31m") && coloured.contains("stale"),
            "{coloured}"
        );
        let json = render_json(&jobs);
        assert_eq!(json.lines().count(), 2);
        let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
        assert_eq!(first["conditions"][0]["rule"], "running-gpu-idle");
    }

    #[test]
    fn the_warnings_in_each_stage() {
        let templates = EmailTemplates::load(None).unwrap();
        for stage in [Stage::Warning, Stage::SecondWarning, Stage::Cancelled] {
            let r = templates.render_running(&sample_running(stage)).unwrap();
            insta::assert_snapshot!(
                format!("running_email_{}", stage.name()),
                format!("Subject: {}\n\n{}", r.subject, r.text)
            );
            assert!(
                r.html.contains("scancel 4242") == (stage != Stage::Cancelled),
                "{}",
                r.html
            );
        }
    }
}
