//! Running a DAG: [`run_dag`] runs each of one DAG's steps once, in order, retrying a failing one,
//! and records the run; [`backfill`] runs a DAG's day steps over history, one run per day.
//!
//! What each step does is in `steps`; this module owns what is the same for all of them: the
//! DAG's lock, the jobs carried over from a run that did not finish, skips, retries, the `step`
//! and `run-*` lines on the log, and the run's rows in `runs` and its state file.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::NaiveDate;
use serde_json::json;

use super::context::{Context, Counts, RunRequest, StepRun, Trigger};
use super::dag::Dag;
use super::error::ScheduleError;
use super::log::Log;
use super::state::{DagLock, IngestedJob, LastRun, read_carried, state_path, write_json_atomic};
use super::step::{On, Step};
use super::steps::{Handover, execute};
use jobsight_warehouse::catalog::run_report::{RunReport, StepOutcome, StepReport, record};

/// Sleeps `d`, waking early when `stop` is set; returns whether it was.
pub fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) -> bool {
    let end = std::time::Instant::now() + d;
    while std::time::Instant::now() < end {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100).min(end - std::time::Instant::now()));
    }
    stop.load(Ordering::Relaxed)
}

/// Runs `dag` once for `request`: takes the DAG's lock, runs every step in order (retrying a
/// failing one), records the run in `runs` and as the DAG's last run. `stop` (SIGTERM) makes a
/// retry wait end early; the run's steps still all run, so that jobs ingested are also judged.
pub fn run_dag(
    ctx: &Context,
    dag: &Dag,
    request: &RunRequest,
    log: &Log,
    stop: &AtomicBool,
) -> Result<RunReport, ScheduleError> {
    let data = ctx.data().to_path_buf();
    // A dry run writes nothing, so it takes no lock: a scheduled run beside it is not refused.
    let _lock = match request.trigger {
        Trigger::DryRun => None,
        _ => Some(DagLock::acquire(&data, &dag.name)?),
    };
    let started = ctx.clock.now();
    let run_timer = std::time::Instant::now();
    let run_id = format!(
        "{}.{}.{}",
        dag.name,
        request.scheduled_for.format("%Y%m%dT%H%M%SZ"),
        started.timestamp_micros()
    );
    log_run_start(log, dag, request, &run_id);

    // The jobs an earlier run ingested but did not finish judging come first.
    let carried_path = state_path(&data, &dag.name, "ingested.jsonl");
    let mut handover = Handover {
        ingested: carried_over(log, dag, &carried_path),
        ..Handover::default()
    };
    let mut steps = Vec::with_capacity(dag.steps.len());
    let mut ingested_steps_ok = true;
    // The steps of this run that did not end well, and how: a step that works on one of them
    // (`Step::needs`) has nothing to work on, and is skipped rather than tried.
    let mut not_done: Vec<(&Step, &'static str)> = Vec::new();
    for (i, step) in dag.steps.iter().enumerate() {
        let run = StepRun {
            ctx,
            dag,
            step,
            request,
            log,
        };
        let unmet = step.needs().and_then(|(before, _)| {
            let (_, how) = not_done.iter().find(|(s, _)| **s == before)?;
            Some(format!("the {} step it works on {how}", before.name()))
        });
        let report = run_step(
            &run,
            i as u32 + 1,
            unmet,
            &mut handover,
            &carried_path,
            stop,
        );
        match report.outcome {
            StepOutcome::Failed => not_done.push((step, "failed")),
            StepOutcome::Skipped => not_done.push((step, "was skipped")),
            StepOutcome::Ok => {}
        }
        if report.outcome == StepOutcome::Failed
            && matches!(
                step,
                Step::Features { on: On::Ingested }
                    | Step::Classify { on: On::Ingested }
                    | Step::Predict { on: On::Ingested }
            )
        {
            ingested_steps_ok = false;
        }
        steps.push(report);
    }
    // The carried-over list goes only once every step that judges its jobs has done so.
    if ingested_steps_ok && request.trigger != Trigger::DryRun {
        let _ = std::fs::remove_file(&carried_path);
    }
    let ended = ctx.clock.now();
    let outcome = if steps.iter().any(|s| s.outcome == StepOutcome::Failed) {
        StepOutcome::Failed
    } else {
        StepOutcome::Ok
    };
    let report = RunReport {
        run_id,
        dag: dag.name.clone(),
        trigger: request.trigger.name(),
        scheduled_for: request.scheduled_for,
        started,
        ended,
        outcome,
        steps,
        seconds: round_s(run_timer),
    };
    // A dry run leaves no trace: not in `runs`, and not as the DAG's last run.
    if request.trigger != Trigger::DryRun {
        record(&data, &report).map_err(|reason| ScheduleError::Record {
            dag: dag.name.clone(),
            reason,
        })?;
    }
    if !matches!(request.trigger, Trigger::Backfill | Trigger::DryRun) {
        write_last_run(&data, &report)?;
    }
    log.event(
        "run-end",
        &[
            ("dag", json!(dag.name)),
            ("run", json!(report.run_id)),
            ("outcome", json!(outcome.name())),
            ("seconds", json!(report.seconds)),
        ],
    );
    Ok(report)
}

/// Logs the `run-start` line of run `run_id`.
fn log_run_start(log: &Log, dag: &Dag, request: &RunRequest, run_id: &str) {
    let mut fields = vec![
        ("dag", json!(dag.name)),
        ("run", json!(run_id)),
        ("trigger", json!(request.trigger.name())),
        (
            "scheduled_for",
            json!(
                request
                    .scheduled_for
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            ),
        ),
    ];
    if let Trigger::CatchUp { missed } = request.trigger {
        fields.push(("missed", json!(missed)));
    }
    log.event("run-start", &fields);
}

/// The jobs in `dag`'s carried-over list at `carried_path`, with a `carried` line on the log
/// when there are any.
fn carried_over(log: &Log, dag: &Dag, carried_path: &Path) -> Vec<IngestedJob> {
    let ingested = read_carried(carried_path);
    if !ingested.is_empty() {
        log.event(
            "carried",
            &[
                ("dag", json!(dag.name)),
                ("jobs", json!(ingested.len())),
                (
                    "why",
                    json!("ingested by an earlier run that did not finish"),
                ),
            ],
        );
    }
    ingested
}

/// Runs one step at `position` in its DAG, unless the request skips it or the step it works on
/// did not end well (`unmet`, why), and logs and reports what it did.
fn run_step(
    run: &StepRun,
    position: u32,
    unmet: Option<String>,
    handover: &mut Handover,
    carried_path: &Path,
    stop: &AtomicBool,
) -> StepReport {
    let (ctx, dag, step, log) = (run.ctx, run.dag, run.step, run.log);
    let step_started = ctx.clock.now();
    let step_timer = std::time::Instant::now();
    // Each step's own peak memory in its log line (steps run one at a time in a run).
    let peak_known = jobsight_base::reset_peak_memory();
    if let Some(why) = skip_reason(step, run.request).map(String::from).or(unmet) {
        log.event(
            "step-skip",
            &[
                ("dag", json!(dag.name)),
                ("step", json!(step.name())),
                ("why", json!(why)),
            ],
        );
        return StepReport {
            step: step.name().into(),
            position,
            outcome: StepOutcome::Skipped,
            attempts: 0,
            jobs: 0,
            counts: BTreeMap::new(),
            error: Some(why),
            started: step_started,
            ended: step_started,
            seconds: 0.0,
        };
    }
    let (attempts, result) = execute_with_retries(run, handover, carried_path, stop);
    if let Step::Ingest { .. } = step {
        // Where a kill hurts most: jobs out of the spool, not yet judged.
        jobsight_notify::fault_point("after-ingest");
    }
    let ended = ctx.clock.now();
    let (outcome, jobs, counts, error) = match result {
        Ok((jobs, counts)) => (StepOutcome::Ok, jobs, counts, None),
        Err(e) => (StepOutcome::Failed, 0, BTreeMap::new(), Some(e)),
    };
    let mut fields = vec![
        ("dag", json!(dag.name)),
        ("step", json!(step.name())),
        ("outcome", json!(outcome.name())),
        ("attempts", json!(attempts)),
        ("jobs", json!(jobs)),
        ("seconds", json!(round_s(step_timer))),
    ];
    if let Some(mib) = jobsight_base::peak_memory_mib().filter(|_| peak_known) {
        fields.push(("peak_mib", json!(mib)));
    }
    // What the process keeps after the step: resident, and of it what its heap still holds.
    if let Some(mib) = jobsight_base::resident_memory_mib() {
        fields.push(("rss_mib", json!(mib)));
        fields.push((
            "heap_mib",
            json!(jobsight_warehouse::query::heap::in_use() >> 20),
        ));
    }
    for (k, v) in &counts {
        fields.push((k.as_str(), json!(v)));
    }
    if let Some(e) = &error {
        fields.push(("error", json!(e)));
    }
    log.event("step", &fields);
    StepReport {
        step: step.name().into(),
        position,
        outcome,
        attempts,
        jobs,
        counts,
        error,
        started: step_started,
        ended,
        seconds: round_s(step_timer),
    }
}

/// Runs the step, and while it fails runs it again, up to the DAG's `retries` more times, after a
/// wait that doubles each time (`stop` cuts a wait short and ends the retries). Returns the
/// attempts made and the last one's result.
fn execute_with_retries(
    run: &StepRun,
    handover: &mut Handover,
    carried_path: &Path,
    stop: &AtomicBool,
) -> (u32, Result<Counts, String>) {
    let dag = run.dag;
    let mut attempts = 0;
    let result = loop {
        attempts += 1;
        match execute(run, handover, carried_path) {
            Ok(done) => break Ok(done),
            Err(e) if attempts <= dag.retries && !stop.load(Ordering::Relaxed) => {
                let wait = dag.retry_after * 2u32.pow(attempts - 1);
                run.log.event(
                    "step-retry",
                    &[
                        ("dag", json!(dag.name)),
                        ("step", json!(run.step.name())),
                        ("attempt", json!(attempts)),
                        ("retry_in_s", json!(wait.as_secs())),
                        ("error", json!(e)),
                    ],
                );
                sleep_unless_stopped(wait, stop);
            }
            Err(e) => break Err(e),
        }
    };
    (attempts, result)
}

/// Keeps `run` as its DAG's last run (`<data>/.schedule/<dag>.state.json`), from which a missed
/// run is caught up.
fn write_last_run(data: &Path, run: &RunReport) -> Result<(), ScheduleError> {
    let failed = run
        .steps
        .iter()
        .filter_map(|s| {
            s.error
                .as_ref()
                .filter(|_| s.outcome == StepOutcome::Failed)
                .map(|e| format!("{}: {e}", s.step))
        })
        .collect::<Vec<_>>();
    write_json_atomic(
        &state_path(data, &run.dag, "state.json"),
        &LastRun {
            run_id: run.run_id.clone(),
            scheduled_for: run.scheduled_for,
            trigger: run.trigger.into(),
            started: run.started,
            ended: run.ended,
            outcome: run.outcome.name().into(),
            error: (!failed.is_empty()).then(|| failed.join("; ")),
        },
    )
}

/// Seconds since `timer`, to the millisecond.
fn round_s(timer: std::time::Instant) -> f64 {
    (timer.elapsed().as_secs_f64() * 1000.0).round() / 1000.0
}

/// Why a step does not run in this request, if it does not.
fn skip_reason(step: &Step, request: &RunRequest) -> Option<&'static str> {
    match request.trigger {
        Trigger::Backfill => backfill_skip_reason(step),
        Trigger::DryRun => match step {
            Step::RunningPage => Some("a dry run writes no page"),
            // Only DAGs whose other steps run dry are run dry (`Step::runs_dry`).
            _ => None,
        },
        Trigger::Schedule | Trigger::CatchUp { .. } | Trigger::Manual => None,
    }
}

/// Why a step does not run in a backfill, if it does not.
fn backfill_skip_reason(step: &Step) -> Option<&'static str> {
    match step {
        Step::Ingest { .. } => {
            Some("a backfill works on stored history; new jobs wait for the next run")
        }
        Step::Notify { .. } => Some("a backfill sends no email: old findings would be spam"),
        Step::Retain { .. } => Some("a backfill removes nothing"),
        Step::Retrain => Some("a backfill trains nothing"),
        Step::ListRunning
        | Step::Features { on: On::Running }
        | Step::Classify { on: On::Running }
        | Step::Act
        | Step::RunningPage => Some("a backfill has no running jobs: they are judged as they run"),
        Step::Features { on: On::Ingested }
        | Step::Classify { on: On::Ingested }
        | Step::Predict { on: On::Ingested } => {
            Some("works on ingested jobs, and a backfill ingests none")
        }
        Step::Features { .. }
        | Step::Classify { .. }
        | Step::Predict { .. }
        | Step::Summarize { .. }
        | Step::Report { .. }
        | Step::Compact { .. }
        | Step::SlurmWorkflows { .. }
        | Step::WorkflowScore => None,
    }
}

/// A backfill: the DAG's day steps over every day from `since` to `until` that has jobs, one run
/// per day, oldest first, with progress and the time left on the log and to `progress(done, of,
/// day)` (the command line's progress bar).
pub fn backfill(
    ctx: &Context,
    dag: &Dag,
    since: NaiveDate,
    until: NaiveDate,
    log: &Log,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(usize, usize, NaiveDate),
) -> Result<Vec<RunReport>, ScheduleError> {
    if !dag.steps.iter().any(|s| {
        matches!(
            s,
            Step::Features { on: On::Days(_) } | Step::Classify { on: On::Days(_) }
        )
    }) {
        return Err(ScheduleError::NothingToBackfill {
            dag: dag.name.clone(),
        });
    }
    let days: Vec<NaiveDate> = jobsight_features::days_with_jobs(ctx.data())
        .into_iter()
        .filter(|d| (since..=until).contains(d))
        .collect();
    let started = std::time::Instant::now();
    let mut reports = Vec::new();
    for (i, day) in days.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            log.event(
                "backfill-stopped",
                &[
                    ("dag", json!(dag.name)),
                    ("done", json!(i)),
                    ("of", json!(days.len())),
                ],
            );
            break;
        }
        let request = RunRequest {
            scheduled_for: day
                .succ_opt()
                .unwrap_or(*day)
                .and_time(chrono::NaiveTime::MIN)
                .and_utc(),
            trigger: Trigger::Backfill,
            days: Some(vec![*day]),
        };
        progress(i, days.len(), *day);
        reports.push(run_dag(ctx, dag, &request, log, stop)?);
        progress(i + 1, days.len(), *day);
        let elapsed = started.elapsed().as_secs_f64();
        let left = elapsed / (i + 1) as f64 * (days.len() - i - 1) as f64;
        log.event(
            "progress",
            &[
                ("dag", json!(dag.name)),
                ("day", json!(day.to_string())),
                ("done", json!(i + 1)),
                ("of", json!(days.len())),
                ("seconds_left", json!(left.round())),
            ],
        );
    }
    Ok(reports)
}
