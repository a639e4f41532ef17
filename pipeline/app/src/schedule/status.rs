//! `jobsight dag status`: is the pipeline keeping up?
//!
//! For each DAG: its last run (from its state file), the next scheduled time, and whether it is
//! behind (a scheduled run more than [`GRACE`] old has not happened) or its last run failed; a
//! `catch_up = "skip"` DAG's scheduled times from before the daemon's last start were left on
//! purpose and do not count. For
//! the spool: what waits, what was set aside, and the age of the oldest unprocessed job, which is
//! behind when it is older than `schedule.behind_after_s`. The command exits with status 1 when
//! anything is behind or failed, so a monitoring check can call it.

use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;

use super::daemon::ON_TIME;
use super::dag::{CatchUp, Dag};
use super::state::{DaemonStart, LastRun, daemon_start, last_run};
use crate::config::Settings;
use jobsight_ingest::spool::{Spool, SpoolStatus};

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
    /// The daemon's last start, if one was recorded.
    pub daemon: Option<DaemonStart>,
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
    let daemon = daemon_start(&settings.data);
    for dag in dags {
        let last = last_run(&settings.data, &dag.name);
        let overdue = overdue(dag, now, daemon.as_ref());
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
        daemon,
        spool,
        problems,
    }
}

/// The latest scheduled time of `dag` that should have run by `now`. A paused DAG has none; a
/// skip DAG's time the daemon found already late when it started was left by design.
fn overdue(dag: &Dag, now: DateTime<Utc>, daemon: Option<&DaemonStart>) -> Option<DateTime<Utc>> {
    if !dag.enabled {
        return None;
    }
    dag.latest_at_or_before(now - GRACE).filter(|t| {
        dag.catch_up != CatchUp::Skip || daemon.is_none_or(|d| *t >= d.started - ON_TIME)
    })
}

/// The status for people.
pub fn render(status: &Status) -> String {
    let time = |t: &DateTime<Utc>| t.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    let mut out = format!("pipeline status at {}\n", time(&status.now));
    match &status.daemon {
        Some(d) => out.push_str(&format!(
            "daemon last started at {} (pid {})\n\n",
            time(&d.started),
            d.pid
        )),
        None => out.push_str("no daemon start recorded\n\n"),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 27, h, m, s).unwrap()
    }

    fn every_ten_minutes(catch_up: &str) -> Dag {
        Dag::parse(
            "t",
            &format!(
                "schedule = \"0 */10 * * * *\"\ncatch_up = \"{catch_up}\"\n[[step]]\nrun = \"notify\"\n"
            ),
            "t.toml",
        )
        .unwrap()
    }

    /// A daemon started at 14:11:35 left the skip DAG's 14:10 on purpose: six minutes later the
    /// DAG is not behind; once 14:20 is ten minutes old without a run, it is. A catch-up-once DAG
    /// owes its 14:00 run whenever the daemon started, and without a record of the daemon's start
    /// nothing can be called skipped.
    #[test]
    fn a_skip_dag_is_not_behind_for_the_times_before_the_daemon_started() {
        let daemon = DaemonStart {
            pid: 1,
            started: at(14, 11, 35),
        };
        let skip = every_ten_minutes("skip");
        assert_eq!(overdue(&skip, at(14, 17, 1), Some(&daemon)), None);
        assert_eq!(
            overdue(&skip, at(14, 31, 0), Some(&daemon)),
            Some(at(14, 20, 0))
        );
        assert_eq!(overdue(&skip, at(14, 17, 1), None), Some(at(14, 0, 0)));
        let once = every_ten_minutes("once");
        assert_eq!(
            overdue(&once, at(14, 17, 1), Some(&daemon)),
            Some(at(14, 0, 0))
        );
        // Started within a minute of a scheduled time, the daemon runs it: it counts.
        let on_time = DaemonStart {
            pid: 1,
            started: at(14, 10, 30),
        };
        assert_eq!(
            overdue(&skip, at(14, 20, 31), Some(&on_time)),
            Some(at(14, 10, 0))
        );
    }
}
