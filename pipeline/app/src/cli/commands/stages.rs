//! The commands that run one stage by hand, as a DAG step would: `spool` (the epilog hook's
//! queue), `ingest`, `features`, `classify`, `notify`, `summary` and `report`.

use std::io::{StdoutLock, Write};

use anyhow::Context as _;

use crate::config::TelemetryKind;
use crate::schedule;
use jobsight_ingest::per_job;
use jobsight_ingest::prometheus::Prometheus;
use jobsight_ingest::sources;
use jobsight_ingest::spool::Spool;
use jobsight_render::pages::PageTemplates;
use jobsight_rules::RuleBook;

use crate::cli::Env;
use crate::cli::args::{
    ClassifyArgs, FeaturesArgs, IngestArgs, JobArgs, JobsArgs, NotifyArgs, ReportAction,
    RunningArgs, SpoolAction, SummaryArgs,
};
use crate::cli::progress::Progress;

/// `jobsight spool`.
pub(in crate::cli) fn spool(
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
            stdout.write_all(jobsight_render::render_claimed(&report, format).as_bytes())?;
            let mut stderr = std::io::stderr().lock();
            stderr.write_all(jobsight_render::render_set_aside(&report).as_bytes())?;
            writeln!(stderr, "{}", jobsight_render::claim_summary(&report))?;
        }
        SpoolAction::Status { format } => {
            let spool = Spool::open(&spool)?;
            let status = spool.status(jobsight_base::now())?;
            stdout.write_all(jobsight_render::render_status(&status, format).as_bytes())?;
        }
    }
    Ok(())
}

/// `jobsight ingest`.
pub(in crate::cli) fn ingest(
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
        .map(|p| p as &dyn sources::TelemetrySource);
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
    stdout.write_all(jobsight_render::render_ingest(&report, format).as_bytes())?;
    let mut stderr = std::io::stderr().lock();
    stderr.write_all(jobsight_render::render_set_aside(&report.claim).as_bytes())?;
    writeln!(
        stderr,
        "{}",
        jobsight_render::ingest_summary(&report, &data)
    )?;
    Ok(())
}

/// `jobsight features`.
pub(in crate::cli) fn features(
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
        None => jobsight_features::days_with_jobs(&data),
    };
    let started = std::time::Instant::now();
    let mut total = jobsight_features::Computed::default();
    let used = jobsight_features::method_used(engine, &env.settings.engine, features);
    let unit = match used {
        jobsight_features::Used::SinglePass => "row groups",
        jobsight_features::Used::PlanHere | jobsight_features::Used::PlanOnBallista => {
            "ranges of job ids"
        }
    };
    let bar = Progress::new("features of", unit);
    for day in days {
        bar.message(day.to_string());
        let (done, _) = jobsight_features::compute_day_by(
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
pub(in crate::cli) fn classify(
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
        None => jobsight_features::days_with_jobs(&data),
    };
    let started = std::time::Instant::now();
    let mut total = jobsight_rules::classify::Classified::default();
    let mut verdicts_by_kind: std::collections::BTreeMap<String, usize> = Default::default();
    let n = days.len();
    let bar = Progress::new("classifying", "days");
    for (i, day) in days.into_iter().enumerate() {
        bar.item(i, n, day);
        let verdicts = jobsight_rules::classify::classify_day(&data, day, &book, rules_settings)
            .with_context(|| format!("classifying the jobs of {day}"))?;
        let predictions = match &models {
            Some(models) => schedule::predict_judged(&data, day, None, models, &book, &verdicts)
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

/// `jobsight notify`.
pub(in crate::cli) fn notify(
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
        for path in jobsight_render::email::write_builtin(&dir)
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
        jobsight_notify::outbox::Outbox::open(&notify.outbox)?.resend(&data, &key, now)?;
        writeln!(stdout, "{key} is back in the queue")?;
    }
    let run = jobsight_notify::RunOptions {
        now,
        critical_only,
        dry_run,
        // The admins' digest lists what the pipeline gave up on; no spool, nothing to list.
        given_up: Spool::open(&settings.spool)
            .and_then(|spool| spool.failed())
            .unwrap_or_default(),
    };
    // The templates are loaded after a resend: a broken site template stops the run, not that.
    let writer = jobsight_render::email::EmailTemplates::load(notify.templates.as_deref())
        .context("notify failed")?;
    let bar = Progress::phases("notify");
    let report = jobsight_render::email::run(&data, &notify, &run, &writer, &mut |step| {
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
    stdout.write_all(jobsight_render::render_notify(&report, dry_run).as_bytes())?;
    if dry_run && let Some(first) = report.prepared.first() {
        writeln!(
            stdout,
            "\nfirst message, {}:\nSubject: {}\n\n{}",
            first.planned.key, first.rendered.subject, first.rendered.text
        )?;
    }
    Ok(())
}

/// `jobsight summary`.
pub(in crate::cli) fn summary(
    args: SummaryArgs,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    use jobsight_warehouse::catalog::{self, Table};
    let data = &env.settings.data;
    if args.email_effect {
        let effects = jobsight_summary::email_effect(data, args.effect_days)?;
        write!(
            stdout,
            "{}",
            jobsight_render::summary::render_email_effect(&effects, args.effect_days)
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
    let from = args.from.unwrap_or_else(|| args.period.default_from(to));
    anyhow::ensure!(from <= to, "--from {from} is after --to {to}");
    let mut rows = jobsight_summary::summarize_on(
        &env.settings.engine,
        data,
        &env.settings.summary,
        from,
        to,
        args.period,
        args.by,
    )?;
    if let Some(top) = args.top {
        rows = jobsight_summary::top(rows, args.sort, top as usize);
    }
    let text = if args.format == jobsight_warehouse::query::SqlFormat::Table && !args.wide {
        jobsight_render::summary::render_for_people(&rows, args.period, args.by, from, to)
    } else {
        jobsight_render::summary::render(&rows, args.period, args.by, from, to, args.format)?
    };
    write!(stdout, "{text}")?;
    Ok(())
}

/// `jobsight job`.
pub(in crate::cli) fn job(
    args: JobArgs,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let data = &env.settings.data;
    // A job of somebody else's reads exactly as one nobody ran (the same words, from the one
    // lookup of its owner before anything of it is read): the answer tells nothing about it.
    let missing = || {
        anyhow::anyhow!(
            "job {} is not in the warehouse at {}, or is not yours to see: a job is stored a few \
             minutes after it ends, by the per-job DAG (`jobsight dag run per-job`, or the daemon)",
            jobsight_base::text::printable(&args.job_id),
            data.display()
        )
    };
    let visible = |owner: &str| env.access.check_job(&args.job_id, owner).is_ok();
    let (facts, bands) = match jobsight_report::visible_job_facts(data, &args.job_id, visible) {
        Err(jobsight_report::ReportError::NoSuchJob(_)) => return Err(missing()),
        other => other?,
    };
    let view = jobsight_render::job::job_view(&facts, &bands).ok_or_else(missing)?;
    if env.access.check_job(&view.job_id, &view.user).is_err() {
        return Err(missing());
    }
    let text = match args.format {
        jobsight_render::Format::Table => jobsight_render::job::render_text(&view),
        jobsight_render::Format::Json => jobsight_render::job::render_json(&view),
    };
    write!(stdout, "{text}")?;
    Ok(())
}

/// `jobsight jobs`.
pub(in crate::cli) fn jobs(
    args: JobsArgs,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    use jobsight_warehouse::catalog::{self, Table};
    let data = &env.settings.data;
    let Some(until) = args
        .until
        .or_else(|| catalog::days(data, Table::Jobs).last().copied())
    else {
        writeln!(stdout, "no jobs in {} yet", data.display())?;
        return Ok(());
    };
    let since = args.since.unwrap_or(until - chrono::Duration::days(6));
    anyhow::ensure!(since <= until, "--since {since} is after --until {until}");
    // A person who is not an admin lists only their own jobs ([access]).
    let user = env.access.jobs_of(args.user.as_deref())?;
    let jobs =
        jobsight_report::list_jobs(data, user.as_deref(), since, until, args.limit as usize)?;
    let text = match args.format {
        jobsight_render::Format::Table => jobsight_render::jobs::render_list(
            &jobs,
            user.as_deref(),
            since,
            until,
            args.limit as usize,
        ),
        jobsight_render::Format::Json => jobsight_render::jobs::render_list_json(&jobs),
    };
    write!(stdout, "{text}")?;
    Ok(())
}

/// `jobsight running`: the running DAG's newest snapshot.
pub(in crate::cli) fn running(
    args: RunningArgs,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let path = &env.settings.running.snapshot;
    let Some(snapshot) = jobsight_running::Snapshot::read(path).map_err(anyhow::Error::msg)? else {
        writeln!(
            stdout,
            "no snapshot of the running jobs yet ({} is missing): the running DAG writes it every 10 minutes, `jobsight dag run running` now",
            path.display()
        )?;
        return Ok(());
    };
    // A person who is not an admin sees only their own jobs ([access]).
    let user = env.access.jobs_of(args.user.as_deref())?;
    let jobs: Vec<&jobsight_running::snapshot::LiveJob> = snapshot
        .jobs
        .iter()
        .filter(|j| user.as_deref().is_none_or(|u| j.user == u))
        .filter(|j| !args.flagged || !j.conditions.is_empty())
        .collect();
    let text = match args.format {
        jobsight_render::Format::Table => {
            use std::io::IsTerminal;
            let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            jobsight_render::running::render_table(&snapshot, &jobs, jobsight_base::now(), colour)
        }
        jobsight_render::Format::Json => jobsight_render::running::render_json(&jobs),
    };
    write!(stdout, "{text}")?;
    Ok(())
}

/// `jobsight report`.
pub(in crate::cli) fn report(
    action: ReportAction,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    use jobsight_warehouse::catalog::{self, Table};
    let settings = &env.settings;
    let inputs = schedule::report_inputs(settings);
    match action {
        ReportAction::Job { job_id } => {
            let pages = PageTemplates::load(&settings.report)?;
            let path = jobsight_render::pages::write_job(
                &settings.data,
                &settings.report,
                &pages,
                &inputs,
                &job_id,
            )?;
            writeln!(stdout, "{}", path.display())?;
        }
        ReportAction::Workflow { run } => {
            let pages = PageTemplates::load(&settings.report)?;
            let path = jobsight_render::pages::workflow::write_workflow(
                &settings.data,
                &settings.report,
                &pages,
                &run,
            )?;
            writeln!(stdout, "{}", path.display())?;
        }
        ReportAction::References { from, to } => {
            let days: Vec<chrono::NaiveDate> = catalog::days(&settings.data, Table::Jobs)
                .into_iter()
                .filter(|d| from.is_none_or(|f| *d >= f) && to.is_none_or(|t| *d <= t))
                .collect();
            let progress = Progress::phases("storing references");
            let mut jobs = 0;
            for (n, day) in days.iter().enumerate() {
                progress.message(format!("{day} ({} of {})", n + 1, days.len()));
                jobs += jobsight_report::write_references(&settings.data, *day)?;
            }
            drop(progress);
            writeln!(
                stdout,
                "the references of {jobs} jobs of {} days stored in {}",
                days.len(),
                settings.data.display()
            )?;
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
            let pages = PageTemplates::load(&settings.report)?;
            let progress = Progress::phases("writing pages");
            let written = jobsight_render::pages::write_day(
                &settings.data,
                &settings.report,
                &pages,
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
