//! `jobsight dag status`: is the pipeline keeping up?
//!
//! For each DAG: its last run (from its state file), the next scheduled time, and whether it is
//! behind (a scheduled run more than [`GRACE`] old has not happened) or its last run failed. For
//! the spool: what waits, what was set aside, and the age of the oldest unprocessed job, which is
//! behind when it is older than `schedule.behind_after_s`. The command exits with status 1 when
//! anything is behind or failed, so a monitoring check can call it.

use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;

use super::dag::Dag;
use super::state::{LastRun, last_run};
use crate::config::Settings;
use crate::spool::{Spool, SpoolStatus};

/// How late a scheduled run may be before the DAG counts as behind: a run takes time, and a
/// daemon checks its schedules every few seconds.
pub const GRACE: TimeDelta = TimeDelta::minutes(10);

#[derive(Debug, Serialize)]
pub struct DagStatus {
    pub name: String,
    pub enabled: bool,
    pub schedule: String,
    pub last: Option<LastRun>,
    pub next: Option<DateTime<Utc>>,
    /// Why it is behind or unhealthy, if it is.
    pub problem: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Status {
    pub now: DateTime<Utc>,
    pub dags: Vec<DagStatus>,
    pub spool: Result<SpoolStatus, String>,
    /// Every reason the pipeline is behind or unhealthy; empty when it keeps up.
    pub problems: Vec<String>,
}

impl Status {
    pub fn healthy(&self) -> bool {
        self.problems.is_empty()
    }
}

pub fn status(settings: &Settings, dags: &[Dag], now: DateTime<Utc>) -> Status {
    let mut problems = Vec::new();
    let mut out = Vec::new();
    for dag in dags {
        let last = last_run(&settings.data, &dag.name);
        // A paused DAG is never behind.
        let overdue = if dag.enabled {
            dag.latest_at_or_before(now - GRACE)
        } else {
            None
        };
        let problem = match (&last, overdue) {
            (None, Some(t)) => Some(format!(
                "has never run; it was due at {}",
                t.format("%Y-%m-%d %H:%M:%S UTC")
            )),
            (Some(l), Some(t)) if l.scheduled_for < t => {
                let missed = dag
                    .schedule
                    .after(&l.scheduled_for)
                    .take_while(|x| *x <= t)
                    .take(1000)
                    .count();
                Some(format!(
                    "is behind: its last run was for {}, and {missed}{} scheduled run(s) have passed since",
                    l.scheduled_for.format("%Y-%m-%d %H:%M:%S UTC"),
                    if missed == 1000 { "+" } else { "" }
                ))
            }
            (Some(l), _) if l.outcome != "ok" => Some(format!(
                "last run {} ({}): {}",
                l.outcome,
                l.run_id,
                l.error.as_deref().unwrap_or("no error recorded")
            )),
            _ => None,
        };
        if let Some(p) = &problem {
            problems.push(format!("DAG {} {p}", dag.name));
        }
        out.push(DagStatus {
            name: dag.name.clone(),
            enabled: dag.enabled,
            schedule: dag.cron.clone(),
            last,
            next: dag.next_after(now),
            problem,
        });
    }
    let spool = Spool::open(&settings.spool)
        .and_then(|s| s.status(now))
        .map_err(|e| e.to_string());
    match &spool {
        Ok(s) => {
            if let Some(oldest) = &s.oldest_pending
                && oldest.age_seconds > settings.schedule.behind_after.as_secs() as i64
            {
                problems.push(format!(
                    "the oldest unprocessed job ({}) has waited {}, more than schedule.behind_after_s ({})",
                    jobsight_base::text::printable(&oldest.file),
                    jobsight_base::text::human_duration(oldest.age_seconds),
                    jobsight_base::text::human_duration(settings.schedule.behind_after.as_secs() as i64)
                ));
            }
            if s.counts.failed > 0 {
                problems.push(format!(
                    "{} record(s) in {}/failed need an admin (each has a .reason file)",
                    s.counts.failed,
                    s.spool.display()
                ));
            }
        }
        Err(e) => problems.push(format!("the spool cannot be read: {e}")),
    }
    Status {
        now,
        dags: out,
        spool,
        problems,
    }
}

/// The status for people.
pub fn render(status: &Status) -> String {
    let time = |t: &DateTime<Utc>| t.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    let mut out = format!("pipeline status at {}\n\n", time(&status.now));
    out.push_str(&format!(
        "{:<12} {:<16} {:<24} {:<10} {:<24}\n",
        "DAG", "SCHEDULE", "LAST RUN FOR", "OUTCOME", "NEXT"
    ));
    for d in &status.dags {
        out.push_str(&format!(
            "{:<12} {:<16} {:<24} {:<10} {:<24}\n",
            d.name,
            d.schedule,
            d.last
                .as_ref()
                .map_or("never".into(), |l| time(&l.scheduled_for)),
            d.last.as_ref().map_or("-", |l| l.outcome.as_str()),
            if d.enabled {
                d.next.as_ref().map_or("never".into(), time)
            } else {
                "paused".into()
            },
        ));
    }
    out.push('\n');
    match &status.spool {
        Ok(s) => {
            let c = &s.counts;
            out.push_str(&format!(
                "spool {}: {} waiting to be claimed, {} claimed and not done, {} done, {} failed, {} duplicate\n",
                s.spool.display(),
                c.new,
                c.cur,
                c.done,
                c.failed,
                c.duplicate
            ));
            match &s.oldest_pending {
                Some(o) => out.push_str(&format!(
                    "oldest unprocessed job: {}, enqueued {} ago\n",
                    jobsight_base::text::printable(&o.file),
                    jobsight_base::text::human_duration(o.age_seconds)
                )),
                None => out.push_str("no unprocessed job\n"),
            }
        }
        Err(e) => out.push_str(&format!("spool: {e}\n")),
    }
    out.push('\n');
    if status.problems.is_empty() {
        out.push_str("healthy: every DAG ran when it was due and nothing waits too long\n");
    } else {
        out.push_str("BEHIND OR FAILING:\n");
        for p in &status.problems {
            out.push_str(&format!("  - {p}\n"));
        }
    }
    out
}
