//! One function per command: each takes its arguments and the resolved settings, calls the
//! library (the scheduler or a stage) and writes what a person reads to stdout; the rendering of
//! reports lives in [`crate::output`] and the stages' own `render` functions.

use std::io::{StdoutLock, Write};

use crate::classify;
use crate::config::TelemetryKind;
use crate::demo::{self, DemoOptions};
use crate::ingest::prometheus::Prometheus;
use crate::ingest::{ldms, ldms_store, per_job, simulator, swf};
use crate::output::{self, Format};
use crate::query::{self, SqlFormat};
use crate::rules::{self, RuleBook};
use crate::schedule;
use crate::simulate::ClusterSpec;
use crate::spool::Spool;
use anyhow::Context as _;

use super::Env;
use super::args::*;
use super::progress::Progress;

/// `jobsight spool`.
pub(super) fn spool(
    action: SpoolAction,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let settings = &env.settings;
    let spool = settings.spool.clone();
    match action {
        SpoolAction::Init { mode } => {
            let spool = Spool::init(&spool, mode)?;
            writeln!(stdout, "spool ready at {}", spool.root().display())?;
        }
        SpoolAction::Claim { limit, format } => {
            let spool = Spool::open(&spool)?;
            let report = spool.claim(limit)?;
            stdout.write_all(output::render_claimed(&report, format).as_bytes())?;
            let mut stderr = std::io::stderr().lock();
            stderr.write_all(output::render_set_aside(&report).as_bytes())?;
            writeln!(stderr, "{}", output::claim_summary(&report))?;
        }
        SpoolAction::Status { format } => {
            let spool = Spool::open(&spool)?;
            let status = spool.status(jobsight_base::now())?;
            stdout.write_all(output::render_status(&status, format).as_bytes())?;
        }
    }
    Ok(())
}

/// `jobsight ingest`.
pub(super) fn ingest(
    args: IngestArgs,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let IngestArgs { limit, format, .. } = args;
    let settings = &env.settings;
    let data = env.settings.data.clone();
    let spool = Spool::open(&settings.spool)?;
    let prometheus = match settings.ingest.telemetry {
        TelemetryKind::Prometheus => Some(Prometheus::new(settings.prometheus.clone())),
        TelemetryKind::None => None,
    };
    let source = prometheus
        .as_ref()
        .map(|p| p as &dyn per_job::TelemetrySource);
    let bar = Progress::new("ingesting", "records");
    let report = per_job::run(
        &spool,
        &data,
        &settings.ingest,
        source,
        limit,
        jobsight_base::now(),
        |i, n| bar.set(i, n),
    )?;
    drop(bar);
    stdout.write_all(output::render_ingest(&report, format).as_bytes())?;
    let mut stderr = std::io::stderr().lock();
    stderr.write_all(output::render_set_aside(&report.claim).as_bytes())?;
    writeln!(stderr, "{}", output::ingest_summary(&report, &data))?;
    Ok(())
}

/// `jobsight dag`.
pub(super) fn dag(action: DagAction, env: &Env, stdout: &mut StdoutLock<'_>) -> anyhow::Result<()> {
    let settings = &env.settings;
    let data = env.settings.data.clone();
    let dags = schedule::dag::load_all(settings.schedule.dags.as_deref())?;
    match action {
        DagAction::List => {
            for dag in &dags {
                writeln!(
                    stdout,
                    "{} ({} steps{}): {}\n  schedule {:?} (UTC), catch_up {}, retries {} after {} s; from {}",
                    dag.name,
                    dag.steps.len(),
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
        } => {
            let dag = schedule::dag::find(&dags, &name)?;
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
                        bar.message(day.to_string());
                        bar.set(i, n);
                    })?
                }
                None => {
                    let request = schedule::RunRequest {
                        scheduled_for: clock.now(),
                        trigger: schedule::Trigger::Manual,
                        days: None,
                    };
                    vec![schedule::run_dag(&ctx, dag, &request, &log, &stop)?]
                }
            };
            stdout.write_all(output::render_runs(&reports).as_bytes())?;
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
pub(super) fn daemon(env: &Env) -> anyhow::Result<()> {
    let settings = &env.settings;
    let log = schedule::Log::stderr(env.log_format);
    let stop = schedule::daemon::stop_on_signals()?;
    schedule::daemon::run(settings, settings.schedule.dags.as_deref(), &log, &stop)?;
    Ok(())
}

/// `jobsight demo`.
pub(super) fn demo(args: DemoArgs, stdout: &mut StdoutLock<'_>) -> anyhow::Result<()> {
    let DemoArgs {
        dir,
        jobs,
        nodes,
        seed,
        epilog_bin,
    } = args;
    let options = DemoOptions {
        dir,
        spec: ClusterSpec {
            jobs: jobs as usize,
            nodes: nodes as usize,
            ..ClusterSpec::default()
        },
        seed,
        epilog_bin: epilog_bin.unwrap_or_else(demo::default_epilog_bin),
    };
    demo::run(&options, stdout).context("demo failed")?;
    Ok(())
}

/// `jobsight simulate`.
pub(super) fn simulate(
    args: SimulateArgs,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let SimulateArgs {
        cluster,
        nodes,
        jobs,
        metrics,
        step,
        seed,
        anomaly_share,
        first_job_id,
        day,
        placement,
    } = args;
    let data = env.settings.data.clone();
    let spec = ClusterSpec {
        first_job_id,
        name: cluster.clone(),
        nodes: nodes as usize,
        jobs: jobs.map_or(4 * nodes as usize, |j| j as usize),
        node_epilog_share: 0.0,
        anomaly_share,
        placement,
        ..ClusterSpec::default()
    };
    spec.check()
        .map_err(|e| anyhow::anyhow!("--first-job-id / --jobs: {e}"))?;
    let started = std::time::Instant::now();
    let day_jobs = crate::simulate::simulate_day(&spec, seed);
    let refs: Vec<_> = day_jobs.iter().collect();
    let part = format!(
        "sim-{cluster}-s{seed}-n{nodes}-j{}-m{metrics}-t{step}",
        spec.jobs
    );
    let bar = Progress::new("simulating", "jobs");
    let written = simulator::write_jobs(
        &data,
        &refs,
        &spec,
        day,
        step,
        metrics as usize,
        seed,
        &part,
        |i, n| bar.set(i, n),
    )?;
    drop(bar);
    let seconds = started.elapsed().as_secs_f64();
    writeln!(
        stdout,
        "wrote {} jobs and {} telemetry rows ({} files) of cluster {cluster} into {} in {seconds:.1} s ({:.2} M rows/s); peak memory {} MiB",
        written.jobs,
        written.telemetry_rows,
        written.files,
        data.display(),
        written.telemetry_rows as f64 / seconds / 1e6,
        jobsight_base::peak_memory_mib().map_or("?".into(), |m| m.to_string())
    )?;
    writeln!(
        stdout,
        "jobs ran on {:.1} % of the day's node-time (placement {}; above 100 % when jobs share nodes)",
        100.0 * crate::simulate::busy_share(&day_jobs, spec.nodes),
        clap::ValueEnum::to_possible_value(&placement)
            .map_or("?".into(), |v| v.get_name().to_string())
    )?;
    Ok(())
}

/// `jobsight features`.
pub(super) fn features(
    args: FeaturesArgs,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    // The flags are in the settings already (the overlay).
    let FeaturesArgs { day, engine, .. } = args;
    let data = env.settings.data.clone();
    let features = &env.settings.features;
    let days = match day {
        Some(day) => vec![day],
        None => crate::features::days_with_jobs(&data),
    };
    let started = std::time::Instant::now();
    let mut total = crate::features::Computed::default();
    let used = crate::features::method_used(engine, &env.settings.engine, features);
    let bar = Progress::new("features of", "row groups");
    for day in days {
        bar.message(day.to_string());
        let (done, _) = crate::features::compute_day_by(
            engine,
            &env.settings.engine,
            &data,
            day,
            features,
            |done, all| bar.set(done, all),
        )
        .with_context(|| format!("computing the features of {day} ({})", used.name()))?;
        total.add(&done);
    }
    drop(bar);
    writeln!(
        stdout,
        "features of {} job(s) on {} day(s): {} rows (job x node x metric), {} across nodes (job x metric){}; {} job(s) cannot be judged for lack of telemetry (see job_summary); {} sample(s) of jobs not in `jobs` left out; into {} in {:.1} s by the {}; peak memory {} MiB",
        total.jobs,
        total.days,
        total.rows,
        total.job_rows,
        if total.window_rows > 0 {
            format!(
                ", {} windows (job x node x metric x window)",
                total.window_rows
            )
        } else {
            String::new()
        },
        total.not_judgeable,
        total.unattributed,
        data.display(),
        started.elapsed().as_secs_f64(),
        used.name(),
        jobsight_base::peak_memory_mib().map_or("?".into(), |m| m.to_string())
    )?;
    Ok(())
}

/// `jobsight classify`.
pub(super) fn classify(
    args: ClassifyArgs,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    // The flags are in the settings already (the overlay).
    let ClassifyArgs { day, .. } = args;
    let settings = &env.settings;
    let data = env.settings.data.clone();
    let models = schedule::load_models(settings)?;
    let rules_settings = &settings.rules;
    let book = RuleBook::load(rules_settings.dir.as_deref())?;
    let days = match day {
        Some(day) => vec![day],
        None => crate::features::days_with_jobs(&data),
    };
    let started = std::time::Instant::now();
    let mut total = classify::Classified::default();
    let mut verdicts_by_kind: std::collections::BTreeMap<String, usize> = Default::default();
    let n = days.len();
    let bar = Progress::new("classifying", "days");
    for (i, day) in days.into_iter().enumerate() {
        bar.set(i, n);
        bar.message(day.to_string());
        let verdicts = classify::classify_day(&data, day, &book, rules_settings)
            .with_context(|| format!("classifying the jobs of {day}"))?;
        let predictions = match &models {
            Some(models) => crate::model::predict::predict_and_write(
                &data,
                day,
                None,
                models,
                &schedule::rule_evidence(&book, &verdicts),
            )
            .with_context(|| format!("the models' verdicts on the jobs of {day}"))?,
            None => Vec::new(),
        };
        total.days += 1;
        total.add(&verdicts);
        for p in predictions {
            *verdicts_by_kind.entry(p.verdict).or_default() += 1;
        }
    }
    drop(bar);
    writeln!(
        stdout,
        "classified {} job(s) on {} day(s) with rule set {} ({} rules, {} classes): {}, {} class membership(s); {} job(s) without enough telemetry got only the rules that need none; into {} in {:.1} s",
        total.jobs,
        total.days,
        book.version,
        book.rules.len(),
        book.classes.len(),
        total.findings_by_severity(),
        total.classes,
        total.not_judgeable,
        data.display(),
        started.elapsed().as_secs_f64(),
    )?;
    if let Some(models) = &models {
        let per: Vec<String> = verdicts_by_kind
            .iter()
            .map(|(v, n)| format!("{v} {n}"))
            .collect();
        writeln!(
            stdout,
            "predictions with {}: {}",
            models.version(),
            if per.is_empty() {
                "no jobs".to_string()
            } else {
                per.join(", ")
            }
        )?;
    }
    Ok(())
}

/// `jobsight model`.
pub(super) fn model(
    action: ModelAction,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let data = env.settings.data.clone();
    run_model(action, &data, stdout)?;
    Ok(())
}

/// `jobsight workflow`.
pub(super) fn workflow(
    action: WorkflowAction,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    use crate::workflow::{detect, slurm};
    let data = env.settings.data.clone();
    let runtime = tokio::runtime::Runtime::new().context("cannot start the query runtime")?;
    if let WorkflowAction::Slurm { since, until } = action {
        let days = crate::catalog::days(&data, crate::catalog::Table::Jobs);
        let (Some(first), Some(last)) = (
            since.or(days.first().copied()),
            until.or(days.last().copied()),
        ) else {
            anyhow::bail!(
                "no jobs in {}: nothing to build workflows from",
                data.display()
            );
        };
        anyhow::ensure!(first <= last, "--since {first} is after --until {last}");
        let done = slurm::rebuild(&runtime, &data, first, last)?;
        writeln!(
            stdout,
            "{} Slurm workflow run(s) of {} job(s) (arrays and dependency chains) from {first} to {last} into workflows and workflow_tasks; read {} job(s) from {}",
            done.runs, done.tasks, done.jobs_read, done.read_from,
        )?;
        return Ok(());
    }
    let (tasks, runs) = runtime.block_on(detect::read_tasks(&data))?;
    match action {
        WorkflowAction::Slurm { .. } => unreachable!("handled above"),
        WorkflowAction::Score { model } => {
            anyhow::ensure!(
                !tasks.is_empty(),
                "no workflow tasks in {}: import workflow runs first (jobsight import pegasus, or jobsight workflow slurm)",
                data.display()
            );
            let mut rows = detect::score(&tasks);
            if let Some(path) = &model {
                crate::workflow::model::WorkflowModel::read(path)?.apply(&tasks, &mut rows)?;
            }
            let (scored, flagged, days) = detect::write_scores(&data, rows)?;
            writeln!(
                stdout,
                "scored {scored} tasks of {} workflow runs into workflow_scores ({days} day partition(s)); {flagged} flagged (a host's z-score above {})",
                runs.len(),
                detect::FLAG_ABOVE
            )?;
        }
        WorkflowAction::Eval {
            folds,
            seed,
            format,
        } => {
            let report = detect::evaluate(&tasks, &runs, folds as usize, seed)?;
            let text = match format {
                Format::Table => detect::render(&report),
                Format::Json => serde_json::to_string(&report)? + "\n",
            };
            stdout.write_all(text.as_bytes())?;
        }
    }
    Ok(())
}

/// `jobsight rules`.
pub(super) fn rules(
    action: RulesAction,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let settings = &env.settings;
    let data = env.settings.data.clone();
    match action {
        RulesAction::List { format, .. } => {
            let book = RuleBook::load(settings.rules.dir.as_deref())?;
            let text = match format {
                Format::Table => rules::listing::text(&book),
                Format::Json => serde_json::to_string_pretty(&rules::listing::json(&book))? + "\n",
            };
            stdout.write_all(text.as_bytes())?;
        }
        RulesAction::Check { dir } => {
            anyhow::ensure!(dir.is_dir(), "{} is not a directory", dir.display());
            let book = RuleBook::load(Some(&dir))?;
            writeln!(
                stdout,
                "{}: ok; with the built-in files: {} rules, {} classes, {} characteristics, {} metrics (rule set {})",
                dir.display(),
                book.rules.len(),
                book.classes.len(),
                book.characteristics.len(),
                book.metrics.len(),
                book.version
            )?;
        }
        RulesAction::Backtest {
            candidate,
            since,
            until,
            show,
            format,
            ..
        } => {
            anyhow::ensure!(
                candidate.is_dir(),
                "{} is not a directory",
                candidate.display()
            );
            let current = RuleBook::load(settings.rules.dir.as_deref())?;
            let candidate_book = RuleBook::load(Some(&candidate))
                .with_context(|| format!("the candidate {}", candidate.display()))?;
            let days: Vec<chrono::NaiveDate> = crate::features::days_with_jobs(&data)
                .into_iter()
                .filter(|d| *d >= since && until.is_none_or(|u| *d <= u))
                .collect();
            anyhow::ensure!(
                !days.is_empty(),
                "no days with jobs from {since} in {}",
                data.display()
            );
            let bar = Progress::new("backtest", "days");
            let result = classify::backtest::run(
                &data,
                &days,
                &current,
                &candidate_book,
                &settings.rules,
                |day, i, n| {
                    bar.message(day.to_string());
                    bar.set(i, n);
                },
            )?;
            drop(bar);
            let text = match format {
                Format::Table => classify::backtest::render_text(&result, show),
                Format::Json => serde_json::to_string_pretty(&result)? + "\n",
            };
            stdout.write_all(text.as_bytes())?;
        }
    }
    Ok(())
}

/// `jobsight notify`.
pub(super) fn notify(
    args: NotifyArgs,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let NotifyArgs {
        now,
        critical_only,
        dry_run,
        resend,
        write_templates,
        ..
    } = args;
    let settings = &env.settings;
    let data = env.settings.data.clone();
    if let Some(dir) = write_templates {
        for path in crate::notify::render::write_builtin(&dir)
            .with_context(|| format!("writing the templates into {}", dir.display()))?
        {
            writeln!(stdout, "wrote {}", path.display())?;
        }
        writeln!(
            stdout,
            "set notify.templates = {:?} and check with `jobsight check`",
            dir.display().to_string()
        )?;
        return Ok(());
    }
    // --outbox and --test-mode are in the settings already (the overlay).
    let notify = settings.notify.clone();
    let now = now.unwrap_or_else(chrono::Utc::now);
    if let Some(key) = resend {
        crate::notify::outbox::Outbox::open(&notify.outbox)?.resend(&data, &key, now)?;
        writeln!(stdout, "{key} is back in the queue")?;
    }
    let run = crate::notify::RunOptions {
        now,
        critical_only,
        dry_run,
        // The admins' digest lists what the pipeline gave up on; no spool, nothing to list.
        given_up: Spool::open(&settings.spool)
            .and_then(|spool| spool.failed())
            .unwrap_or_default(),
    };
    let bar = Progress::phases("notify");
    let report = crate::notify::run(&data, &notify, &run, &mut |step| {
        bar.message(step);
    })
    .context("notify failed")?;
    drop(bar);
    writeln!(
        stdout,
        "notify at {} ({}{}):",
        now.format("%Y-%m-%d %H:%M:%S UTC"),
        if critical_only {
            "critical only"
        } else {
            "digests and critical"
        },
        if notify.test_mode {
            ", TEST MODE: to admins only, nothing recorded"
        } else {
            ""
        }
    )?;
    stdout.write_all(output::render_notify(&report, dry_run).as_bytes())?;
    if dry_run && let Some(first) = report.prepared.first() {
        writeln!(
            stdout,
            "\nfirst message, {}:\nSubject: {}\n\n{}",
            first.planned.key, first.rendered.subject, first.rendered.text
        )?;
    }
    Ok(())
}

/// `jobsight check`.
pub(super) fn check(env: &Env, stdout: &mut StdoutLock<'_>) -> anyhow::Result<()> {
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
    writeln!(stdout, "{}", crate::notify::check(&settings.notify)?)?;
    writeln!(stdout, "{}", crate::report::check(&settings.report)?)?;
    Ok(())
}

/// `jobsight sql`.
pub(super) fn sql(args: SqlArgs, env: &Env, stdout: &mut StdoutLock<'_>) -> anyhow::Result<()> {
    let SqlArgs { query, format } = args;
    let data = env.settings.data.clone();
    let runtime = query::engine_runtime().context("cannot start the query runtime")?;
    // Streamed: a result larger than memory goes out batch by batch.
    runtime.block_on(query::write_results(
        &data,
        &env.settings.engine,
        &query,
        format,
        stdout,
    ))?;
    Ok(())
}

/// `jobsight serve`: prints where it listens (a test or a script reads the port from that line),
/// then serves until SIGINT or SIGTERM.
pub(super) fn serve(args: ServeArgs, env: &Env, stdout: &mut StdoutLock<'_>) -> anyhow::Result<()> {
    let settings = &env.settings;
    let runtime = tokio::runtime::Runtime::new().context("cannot start the server's runtime")?;
    let mut announced = Ok(());
    runtime.block_on(crate::serve::serve_pg(
        &settings.data,
        &args.pg,
        &settings.serve,
        |addr| {
            announced = writeln!(
                stdout,
                "serving {} over PostgreSQL on {addr} (user {}, read-only); stop with Ctrl-C",
                settings.data.display(),
                settings.serve.pg_user
            )
            .and_then(|()| stdout.flush());
        },
        crate::serve::stop_signal(),
    ))?;
    announced?;
    Ok(())
}

/// `jobsight report`.
pub(super) fn report(
    action: ReportAction,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    use crate::catalog::{self, Table};
    let settings = &env.settings;
    let inputs = schedule::report_inputs(settings);
    match action {
        ReportAction::Job { job_id } => {
            let path =
                crate::report::write_job(&settings.data, &settings.report, &inputs, &job_id)?;
            writeln!(stdout, "{}", path.display())?;
        }
        ReportAction::Workflow { run } => {
            let path = crate::report::write_workflow(&settings.data, &settings.report, &run)?;
            writeln!(stdout, "{}", path.display())?;
        }
        ReportAction::Day { day } => {
            let Some(day) =
                day.or_else(|| catalog::days(&settings.data, Table::Jobs).last().copied())
            else {
                writeln!(
                    stdout,
                    "no jobs in {} yet: no pages to write",
                    settings.data.display()
                )?;
                return Ok(());
            };
            let progress = Progress::phases("writing pages");
            let written = crate::report::write_day(
                &settings.data,
                &settings.report,
                &inputs,
                day,
                &mut |m| progress.message(m),
            )?;
            drop(progress);
            writeln!(
                stdout,
                "{day}: {} job pages, {} user pages, {} system reports, {} workflow run pages in {} (open index.html)",
                written.jobs,
                written.users,
                written.days,
                written.workflows,
                settings.report.dir.display()
            )?;
            for (job, reason) in &written.failed {
                writeln!(stdout, "job {job}: no page: {reason}")?;
            }
            anyhow::ensure!(
                written.failed.is_empty(),
                "{} job pages could not be written",
                written.failed.len()
            );
        }
    }
    Ok(())
}

/// `jobsight summary`.
pub(super) fn summary(
    args: SummaryArgs,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    use crate::catalog::{self, Table};
    let data = &env.settings.data;
    if args.email_effect {
        let effects = crate::summary::email_effect(data, args.effect_days)?;
        write!(
            stdout,
            "{}",
            crate::summary::render_email_effect(&effects, args.effect_days)
        )?;
        return Ok(());
    }
    let Some(to) = args
        .to
        .or_else(|| catalog::days(data, Table::Jobs).last().copied())
    else {
        writeln!(
            stdout,
            "no jobs in {} yet: nothing to summarise",
            data.display()
        )?;
        return Ok(());
    };
    let from = args.from.unwrap_or(to - chrono::Duration::days(6));
    anyhow::ensure!(from <= to, "--from {from} is after --to {to}");
    let mut rows = crate::summary::summarize_on(
        &env.settings.engine,
        data,
        &env.settings.summary,
        from,
        to,
        args.period,
        args.by,
    )?;
    if let Some(top) = args.top {
        rows = crate::summary::top(rows, args.sort, top as usize);
    }
    let text = crate::summary::render(&rows, args.period, args.by, from, to, args.format)?;
    write!(stdout, "{text}")?;
    Ok(())
}

/// `jobsight import`.
pub(super) fn import(
    source: ImportSource,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let data = env.settings.data.clone();
    match source {
        ImportSource::Swf { file, cluster } => {
            let done = swf::import(&data, &file, &cluster)?;
            report_skipped(&done.log.skipped);
            writeln!(
                stdout,
                "imported {} jobs of cluster {cluster} from {} into {} day partitions of {}; skipped {} line(s)",
                done.log.jobs.len(),
                file.display(),
                done.days,
                data.join("jobs").display(),
                done.log.skipped.len()
            )?;
        }
        ImportSource::LdmsRuns {
            dir,
            labels,
            cluster,
        } => {
            let bar = Progress::new("importing LDMS runs", "runs");
            let done = ldms::import_runs(&data, &dir, labels.as_deref(), &cluster, |i, n, job| {
                bar.message(job.to_string());
                bar.set(i, n);
            })?;
            drop(bar);
            report_skipped(&done.skipped);
            writeln!(
                stdout,
                "imported {} runs: {} samples -> {} telemetry rows, {} labels, into {}; skipped {} row(s); peak memory {} MiB",
                done.runs,
                done.samples,
                done.telemetry_rows,
                done.labels,
                data.display(),
                done.skipped.len(),
                jobsight_base::peak_memory_mib().map_or("?".into(), |m| m.to_string())
            )?;
        }
        ImportSource::Pegasus { dir, dag } => {
            let bar = Progress::new("importing workflow runs", "runs");
            let done =
                crate::workflow::pegasus::import(&data, &dir, dag.as_deref(), |i, n, run| {
                    bar.message(run.to_string());
                    bar.set(i, n);
                })?;
            drop(bar);
            report_skipped(&done.skipped);
            writeln!(
                stdout,
                "imported {} workflow runs: {} tasks ({} labelled anomalous) into {}; skipped {} row(s) or file(s)",
                done.runs,
                done.tasks,
                done.anomalous_tasks,
                data.display(),
                done.skipped.len(),
            )?;
        }
        ImportSource::LdmsStore { paths, cluster } => {
            let runtime =
                tokio::runtime::Runtime::new().context("cannot start the query runtime")?;
            let (windows, problems) =
                runtime.block_on(ldms_store::job_windows(&data, cluster.as_deref()))?;
            for p in &problems {
                eprintln!("jobs: {p}");
            }
            anyhow::ensure!(
                !windows.is_empty(),
                "no jobs with nodes and run times in {}: import the jobs first (jobsight ingest, or jobsight import swf)",
                data.join("jobs").display()
            );
            let files = ldms_store::store_files(&paths);
            anyhow::ensure!(!files.is_empty(), "no store files found in {paths:?}");
            let bar = Progress::new("importing store files", "files");
            let done = ldms_store::import_store(&data, &files, &windows, |i, n, path| {
                bar.message(path.display().to_string());
                bar.set(i, n);
            })?;
            drop(bar);
            report_skipped(&done.skipped);
            writeln!(
                stdout,
                "imported {} store file(s): {} samples -> {} telemetry rows for {} job-node windows; {} samples of no known job; skipped {} row(s); peak memory {} MiB",
                done.files,
                done.samples,
                done.rows,
                windows.len(),
                done.samples_without_job,
                done.skipped.len(),
                jobsight_base::peak_memory_mib().map_or("?".into(), |m| m.to_string())
            )?;
        }
    }
    Ok(())
}

/// Lists skipped input on stderr: the first 20 in full, then a count.
pub(super) fn report_skipped(skipped: &[crate::ingest::Skipped]) {
    for s in skipped.iter().take(20) {
        eprintln!("skipped: {s}");
    }
    if skipped.len() > 20 {
        eprintln!("skipped: ... and {} more", skipped.len() - 20);
    }
}

pub(super) fn run_model(
    action: ModelAction,
    data: &std::path::Path,
    stdout: &mut impl Write,
) -> anyhow::Result<()> {
    use crate::model::{self, LabelsFrom};
    let mut progress = |phase: &str| eprintln!("{phase} ...");
    match action {
        ModelAction::Train {
            workflows: true,
            out,
            options,
            ..
        } => {
            use crate::workflow::{detect, model as workflow_model};
            let runtime =
                tokio::runtime::Runtime::new().context("cannot start the query runtime")?;
            let (tasks, runs) = runtime.block_on(detect::read_tasks(data))?;
            progress("training the task classifier and the run labels");
            let mut m = workflow_model::train(&tasks, &runs, data, options.seed)?;
            m.write(&out)?;
            writeln!(stdout, "wrote {}", out.display())?;
            stdout.write_all(workflow_model::render_header(&m.header).as_bytes())?;
        }
        ModelAction::Train {
            kind,
            labels_from,
            out,
            options,
            ..
        } => {
            let kind = kind.context("--kind is required (or --workflows)")?;
            let labels = LabelsFrom::parse(labels_from.as_deref());
            let file = model::train(
                data,
                kind,
                &labels,
                &options.options()?,
                &out,
                &mut progress,
            )?;
            let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
            writeln!(
                stdout,
                "wrote {} ({:.1} MiB)",
                out.display(),
                size as f64 / 1048576.0
            )?;
            stdout.write_all(model::render_header(&file.header).as_bytes())?;
        }
        ModelAction::Eval {
            workflows: true,
            cv,
            options,
            format,
            ..
        } => {
            let runtime =
                tokio::runtime::Runtime::new().context("cannot start the query runtime")?;
            let (tasks, runs) = runtime.block_on(crate::workflow::detect::read_tasks(data))?;
            let report = crate::workflow::detect::evaluate(
                &tasks,
                &runs,
                cv.unwrap_or(5) as usize,
                options.seed,
            )?;
            let text = match format {
                Format::Table => crate::workflow::detect::render(&report),
                Format::Json => serde_json::to_string(&report)? + "\n",
            };
            stdout.write_all(text.as_bytes())?;
        }
        ModelAction::Eval {
            model: path,
            cv,
            hold_out,
            leave_out_application,
            kind,
            labels_from,
            export,
            verdicts,
            contaminate,
            options,
            format,
            workflows: false,
        } => {
            let labels = LabelsFrom::parse(labels_from.as_deref());
            let report = match path {
                Some(path) => model::evaluate_model(data, &path, &labels)?,
                None => {
                    anyhow::ensure!(
                        cv.is_some() || hold_out.is_some() || leave_out_application,
                        "say what to evaluate: --model FILE, --cv K, --hold-out APPLICATION or \
                         --leave-out-application"
                    );
                    let cv = model::CrossValidation {
                        folds: cv.unwrap_or(5) as usize,
                        hold_out,
                        leave_out_each: leave_out_application,
                        export,
                        verdicts,
                        contaminate,
                    };
                    model::cross_validate(
                        data,
                        kind,
                        &labels,
                        &options.options()?,
                        &cv,
                        &mut progress,
                    )?
                }
            };
            match format {
                Format::Table => stdout.write_all(model::render_report(&report).as_bytes())?,
                Format::Json => writeln!(stdout, "{}", serde_json::to_string_pretty(&report)?)?,
            }
        }
        ModelAction::Info {
            model: path,
            format,
        } => {
            if let Some(header) = crate::workflow::model::WorkflowModel::header(&path)? {
                match format {
                    Format::Table => stdout
                        .write_all(crate::workflow::model::render_header(&header).as_bytes())?,
                    Format::Json => writeln!(stdout, "{}", serde_json::to_string_pretty(&header)?)?,
                }
                return Ok(());
            }
            let header = model::file::ModelFile::header(&path)?;
            match format {
                Format::Table => stdout.write_all(model::render_header(&header).as_bytes())?,
                Format::Json => writeln!(stdout, "{}", serde_json::to_string_pretty(&header)?)?,
            }
        }
    }
    Ok(())
}

/// `jobsight ballista scheduler|executor`: one process of a Ballista cluster, until stopped.
pub(super) fn ballista(role: BallistaRole, stdout: &mut StdoutLock<'_>) -> anyhow::Result<()> {
    let runtime = query::engine_runtime().context("cannot start the Ballista runtime")?;
    #[cfg(feature = "ballista")]
    {
        use crate::query::ballista;
        match role {
            BallistaRole::Scheduler { bind } => {
                writeln!(
                    stdout,
                    "Ballista scheduler with jobsight's SQL functions on {bind}; stop with Ctrl-C"
                )?;
                stdout.flush()?;
                runtime.block_on(ballista::run_scheduler(bind))?;
            }
            BallistaRole::Executor {
                scheduler,
                bind,
                flight_port,
                grpc_port,
                work_dir,
                tasks,
            } => {
                writeln!(
                    stdout,
                    "Ballista executor with jobsight's SQL functions on {bind}:{flight_port} \
                     (tasks on {grpc_port}) for the scheduler at {scheduler}; stop with Ctrl-C"
                )?;
                stdout.flush()?;
                runtime.block_on(ballista::run_executor(ballista::Executor {
                    scheduler,
                    bind,
                    flight_port,
                    grpc_port,
                    work_dir,
                    tasks,
                }))?;
            }
        }
        Ok(())
    }
    #[cfg(not(feature = "ballista"))]
    {
        let _ = (role, stdout, runtime);
        anyhow::bail!(
            "this jobsight was built without Ballista: build it with `cargo build --release --features ballista`"
        )
    }
}
