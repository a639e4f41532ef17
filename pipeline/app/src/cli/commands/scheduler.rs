//! The commands of the scheduler: `dag` (list, run or backfill one DAG, its status), `daemon`
//! (every DAG on its schedule) and `check` (the configuration and everything a run reads).

use std::io::{StdoutLock, Write};

use anyhow::Context as _;

use crate::schedule;
use jobsight_render::Format;
use jobsight_rules::RuleBook;
use jobsight_warehouse::query::{self, SqlFormat};

use crate::cli::Env;
use crate::cli::args::DagAction;
use crate::cli::progress::Progress;

/// `jobsight dag`.
pub(in crate::cli) fn dag(
    action: DagAction,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let settings = &env.settings;
    let data = env.settings.data.clone();
    let dags = schedule::dag::load_all(settings.schedule.dags.as_deref())?;
    match action {
        DagAction::List => {
            for dag in &dags {
                writeln!(
                    stdout,
                    "{} ({} step{}{}): {}\n  schedule {:?} (UTC), catch_up {}, retries {} after {} s; from {}",
                    dag.name,
                    dag.steps.len(),
                    if dag.steps.len() == 1 { "" } else { "s" },
                    if dag.enabled { "" } else { ", PAUSED" },
                    dag.description,
                    dag.cron,
                    match dag.catch_up {
                        schedule::CatchUp::Once => "once",
                        schedule::CatchUp::Skip => "skip",
                    },
                    dag.retries,
                    dag.retry_after.as_secs(),
                    dag.source
                )?;
                for (i, step) in dag.steps.iter().enumerate() {
                    writeln!(stdout, "  {}. {}", i + 1, step.describe())?;
                }
            }
        }
        DagAction::Run {
            name,
            since,
            until,
            now,
            dry_run,
        } => {
            let dag = schedule::dag::find(&dags, &name)?;
            if dry_run && let Some(step) = dag.steps.iter().find(|s| !s.runs_dry()) {
                anyhow::bail!(
                    "DAG {name} cannot run dry: its step {} writes as it works; --dry-run is for the running DAG's steps (list-running, features and classify on \"running\", act, running-page)",
                    step.name()
                );
            }
            let clock = now.map_or(schedule::Clock::System, schedule::Clock::Fixed);
            let ctx = schedule::Context::build(settings.clone(), clock)?;
            let log = schedule::Log::stderr(env.log_format);
            let stop = schedule::daemon::stop_on_signals()?;
            let reports = match since {
                Some(since) => {
                    let until = until
                        .unwrap_or_else(|| clock.now().date_naive().pred_opt().unwrap_or(since));
                    anyhow::ensure!(since <= until, "--since {since} is after --until {until}");
                    let bar = Progress::new(&format!("backfill of {name}"), "days");
                    schedule::backfill(&ctx, dag, since, until, &log, &stop, &mut |i, n, day| {
                        bar.item(i, n, day)
                    })?
                }
                None => {
                    let request = schedule::RunRequest {
                        scheduled_for: clock.now(),
                        trigger: if dry_run {
                            schedule::Trigger::DryRun
                        } else {
                            schedule::Trigger::Manual
                        },
                        days: None,
                    };
                    vec![schedule::run_dag(&ctx, dag, &request, &log, &stop)?]
                }
            };
            stdout.write_all(jobsight_render::render_runs(&reports).as_bytes())?;
            if reports
                .iter()
                .any(|r| r.outcome == schedule::StepOutcome::Failed)
            {
                anyhow::bail!("DAG {name}: a step failed (see above and the runs table)");
            }
        }
        DagAction::Status { format } => {
            let status = schedule::status::status(settings, &dags, jobsight_base::now());
            match format {
                Format::Table => {
                    stdout.write_all(schedule::status::render(&status).as_bytes())?;
                    let runtime =
                        tokio::runtime::Runtime::new().context("cannot start the query runtime")?;
                    let recent = runtime.block_on(query::run(
                            &data,
                            "SELECT dag, trigger, scheduled_for, started, ended, outcome, jobs, error FROM runs WHERE step = '' ORDER BY started DESC LIMIT 10",
                        ))?;
                    writeln!(stdout, "\nlast runs (the runs table):")?;
                    stdout.write_all(query::render(&recent, SqlFormat::Table)?.as_bytes())?;
                }
                Format::Json => {
                    writeln!(stdout, "{}", serde_json::to_string_pretty(&status)?)?;
                }
            }
            if !status.healthy() {
                stdout.flush()?;
                std::process::exit(1);
            }
        }
    }
    Ok(())
}

/// `jobsight daemon`.
pub(in crate::cli) fn daemon(env: &Env) -> anyhow::Result<()> {
    let settings = &env.settings;
    let log = schedule::Log::stderr(env.log_format);
    let stop = schedule::daemon::stop_on_signals()?;
    schedule::daemon::run(settings, settings.schedule.dags.as_deref(), &log, &stop)?;
    Ok(())
}

/// `jobsight check`.
pub(in crate::cli) fn check(env: &Env, stdout: &mut StdoutLock<'_>) -> anyhow::Result<()> {
    let settings = &env.settings;
    writeln!(stdout, "configuration {}: ok", env.config_path.display())?;
    let dags = schedule::dag::load_all(settings.schedule.dags.as_deref())?;
    writeln!(
        stdout,
        "dags: {}",
        dags.iter()
            .map(|d| format!("{} ({} steps, {:?})", d.name, d.steps.len(), d.cron))
            .collect::<Vec<_>>()
            .join(", ")
    )?;
    let book = RuleBook::load(settings.rules.dir.as_deref())?;
    writeln!(
        stdout,
        "rules: {} rules, {} classes, version {}",
        book.rules.len(),
        book.classes.len(),
        book.version
    )?;
    // The cancel policy names running rules of this book.
    crate::running::check_policy(&settings.running, &book).map_err(anyhow::Error::msg)?;
    writeln!(
        stdout,
        "{}",
        jobsight_render::email::check(&settings.notify)?
    )?;
    writeln!(
        stdout,
        "{}",
        jobsight_render::pages::check(&settings.report)?
    )?;
    Ok(())
}
