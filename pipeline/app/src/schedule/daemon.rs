//! `jobsight daemon`: runs every DAG on its schedule until told to stop.
//!
//! Each pass it reads the DAG files again (a changed file takes effect at once; a broken one is
//! reported and the last good version kept), asks [`super::dag::due`] which DAGs are due (a run
//! missed while the daemon was down is caught up once), and runs them one after another with a
//! fresh [`Context`] (so changed rule and model files are read again). Between passes it sleeps
//! until the next scheduled time, at most [`MAX_SLEEP`].
//!
//! SIGTERM and SIGINT stop it cleanly: a run under way finishes all its steps (the jobs its
//! ingest step took are judged before it exits; a retry wait is cut short), no new run starts,
//! and it exits 0. SIGKILL loses nothing either (see [`super`]): the next start carries on.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;

use super::context::{Clock, Context, RunRequest, Trigger};
use super::dag::{self, Dag};
use super::error::ScheduleError;
use super::log::Log;
use super::run::{run_dag, sleep_unless_stopped};
use super::state::{self, last_run};
use crate::config::Settings;

/// The longest sleep between two looks at the DAG files and the clock.
pub const MAX_SLEEP: Duration = Duration::from_secs(5);

/// A scheduled time the daemon woke up for is "on time" within this margin; older ones are
/// catch-ups (which only matters for `catch_up = "skip"`, whose catch-ups are left).
pub const ON_TIME: chrono::TimeDelta = chrono::TimeDelta::seconds(60);

/// Sets the returned flag on SIGTERM and SIGINT.
pub fn stop_on_signals() -> Result<Arc<AtomicBool>, std::io::Error> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    Ok(stop)
}

/// Runs until `stop` is set. Errors only when it cannot start (the DAG files are broken at
/// start); a failing run is logged and recorded, and the daemon goes on.
pub fn run(
    settings: &Settings,
    dags_dir: Option<&Path>,
    log: &Log,
    stop: &AtomicBool,
) -> Result<(), ScheduleError> {
    let mut dags = dag::load_all(dags_dir)?;
    let mut last_error: Option<String> = None;
    let start = state::DaemonStart {
        pid: std::process::id(),
        started: jobsight_base::now(),
    };
    state::record_daemon_start(&settings.data, &start)?;
    log.event(
        "daemon",
        &[
            ("state", json!("started")),
            ("pid", json!(std::process::id())),
            ("data", json!(settings.data.display().to_string())),
            ("dags", json!(names(&dags))),
        ],
    );
    while !stop.load(Ordering::Relaxed) {
        match dag::load_all(dags_dir) {
            Ok(fresh) => {
                if last_error.take().is_some() || names(&fresh) != names(&dags) {
                    log.event("reload", &[("dags", json!(names(&fresh)))]);
                }
                dags = fresh;
            }
            Err(e) => {
                let e = e.to_string();
                if last_error.as_deref() != Some(&e) {
                    log.event(
                        "reload",
                        &[("error", json!(e)), ("kept", json!(names(&dags)))],
                    );
                    last_error = Some(e);
                }
            }
        }
        for dag in &dags {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let now = jobsight_base::now();
            let last = last_run(&settings.data, &dag.name).map(|l| l.scheduled_for);
            let Some((scheduled_for, missed)) = dag::due(dag, last, now, ON_TIME) else {
                continue;
            };
            let trigger = if now - scheduled_for > ON_TIME || missed > 1 {
                Trigger::CatchUp { missed }
            } else {
                Trigger::Schedule
            };
            run_one(settings, dag, scheduled_for, trigger, log, stop);
        }
        let now = jobsight_base::now();
        let next = dags.iter().filter_map(|d| d.next_after(now)).min();
        let wait = next
            .and_then(|t| (t - now).to_std().ok())
            .unwrap_or(MAX_SLEEP)
            .min(MAX_SLEEP);
        sleep_unless_stopped(wait, stop);
    }
    log.event(
        "daemon",
        &[("state", json!("stopped")), ("why", json!("signal"))],
    );
    Ok(())
}

fn names(dags: &[Dag]) -> String {
    dags.iter()
        .map(|d| format!("{}({})", d.name, d.cron))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One run with a fresh context; every failure is logged, none stops the daemon.
fn run_one(
    settings: &Settings,
    dag: &Dag,
    scheduled_for: chrono::DateTime<chrono::Utc>,
    trigger: Trigger,
    log: &Log,
    stop: &AtomicBool,
) {
    let request = RunRequest {
        scheduled_for,
        trigger,
        days: None,
    };
    let result = Context::build(settings.clone(), Clock::System)
        .and_then(|ctx| run_dag(&ctx, dag, &request, log, stop));
    if let Err(e) = result {
        log.event(
            "run-error",
            &[("dag", json!(dag.name)), ("error", json!(e.to_string()))],
        );
    }
}
