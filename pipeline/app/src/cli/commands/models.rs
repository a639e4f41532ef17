//! The commands that train and judge: `model` (train, evaluate, inspect), `workflow` (runs built
//! from Slurm jobs, their tasks scored) and `rules` (list, check, backtest the rule book).

use std::io::{StdoutLock, Write};

use anyhow::Context as _;

use jobsight_render::Format;
use jobsight_rules::RuleBook;
use jobsight_rules::classify::backtest;

use crate::cli::Env;
use crate::cli::args::{LabelArgs, ModelAction, RulesAction, WorkflowAction};
use crate::cli::progress::Progress;

/// `jobsight model`.
pub(in crate::cli) fn model(
    action: ModelAction,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let data = env.settings.data.clone();
    if let ModelAction::Bootstrap {
        suite,
        work,
        apps,
        anomalies,
        seconds,
        max_seconds,
        from_start,
        healthy,
        nodes,
        user,
        partition,
        wait_s,
        install,
        options,
        format,
    } = action
    {
        let suite = match suite {
            Some(s) => s,
            None => std::env::current_exe()
                .ok()
                .and_then(|exe| Some(exe.parent()?.parent()?.join("share/jobsight/training")))
                .context("say where the training suite is with --suite DIR")?,
        };
        let work = work.unwrap_or_else(|| {
            std::path::PathBuf::from(format!(
                "jobsight-training-{}",
                chrono::Utc::now().format("%Y%m%dT%H%M%SZ")
            ))
        });
        let install = if install {
            let model = &env.settings.model;
            let (Some(d), Some(u)) = (&model.diagnosis, &model.unsupervised) else {
                anyhow::bail!(
                    "--install puts the models at [model] diagnosis and unsupervised: set both in the configuration"
                );
            };
            Some((d.clone(), u.clone()))
        } else {
            None
        };
        if let Some(max) = max_seconds {
            anyhow::ensure!(
                max >= seconds,
                "--max-seconds {max} is below --seconds {seconds}: jobs run from --seconds to --max-seconds"
            );
        }
        let mut submit = vec![
            "--apps".to_string(),
            apps,
            "--anomalies".into(),
            anomalies,
            "--seconds".into(),
            match max_seconds {
                Some(max) if max != seconds => format!("{seconds}:{max}"),
                _ => seconds.to_string(),
            },
            "--healthy".into(),
            healthy.to_string(),
            "--nodes".into(),
            nodes.to_string(),
            "--seed".into(),
            options.seed.to_string(),
        ];
        // Only when asked for: a suite folder older than the option still works without it.
        if from_start > 0 {
            submit.extend(["--from-start".to_string(), from_start.to_string()]);
        }
        for (flag, value) in [("--user", user), ("--partition", partition)] {
            if let Some(v) = value {
                submit.extend([flag.to_string(), v]);
            }
        }
        let bootstrap = crate::bootstrap::Bootstrap {
            suite,
            work,
            data,
            submit,
            wait: std::time::Duration::from_secs(wait_s),
            options: options.options()?,
            install,
        };
        let outcome = crate::bootstrap::run(&bootstrap, &mut |line| eprintln!("{line}"))?;
        let text = match format {
            Format::Table => jobsight_render::model::render_bootstrap(&outcome),
            Format::Json => serde_json::to_string(&outcome.evaluations)? + "\n",
        };
        stdout.write_all(text.as_bytes())?;
        return Ok(());
    }
    run_model(action, &data, stdout)?;
    Ok(())
}

/// `jobsight label`.
pub(in crate::cli) fn label(
    args: LabelArgs,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    use jobsight_model::dataset::{LabelLine, read_label_lines};
    use jobsight_model::labelling::keep_labels;
    let data = &env.settings.data;
    let by = args
        .by
        .or_else(|| std::env::var("SUDO_USER").ok())
        .or_else(|| std::env::var("USER").ok())
        .filter(|b| !b.trim().is_empty())
        .context("say who gives the labels with --by (neither SUDO_USER nor USER is set)")?;
    let by = jobsight_base::text::clean(&by, 64);
    let time = |flag: &str, value: Option<&String>| -> anyhow::Result<Option<i64>> {
        value
            .map(|v| {
                chrono::DateTime::parse_from_rfc3339(v)
                    .map(|t| t.timestamp_micros())
                    .with_context(|| format!("--{flag} {v:?} is not an RFC 3339 time"))
            })
            .transpose()
    };
    let labels = match &args.import {
        Some(file) => read_label_lines(file)?,
        None => {
            let (start_us, end_us) = (
                time("start", args.start.as_ref())?,
                time("end", args.end.as_ref())?,
            );
            let label = args.label.clone().unwrap_or_default();
            args.jobs
                .iter()
                .map(|job| LabelLine {
                    job_id: job.clone(),
                    anomaly: label.clone(),
                    start_us,
                    end_us,
                    node: args.node.clone(),
                })
                .collect()
        }
    };
    let kept = keep_labels(data, &labels, &by, chrono::Utc::now())?;
    let rows: usize = kept.rows_per_job.values().sum();
    writeln!(
        stdout,
        "kept {rows} label(s) of {} job(s) by {by} in {}; `jobsight model train` and the nightly retrain read them",
        kept.rows_per_job.len(),
        data.display()
    )?;
    if kept.repeated > 0 {
        writeln!(
            stdout,
            "left out {} label(s) that repeated an earlier one exactly (job, type, span and node)",
            kept.repeated
        )?;
    }
    Ok(())
}

/// `jobsight model`'s work on the warehouse at `data`.
fn run_model(
    action: ModelAction,
    data: &std::path::Path,
    stdout: &mut impl Write,
) -> anyhow::Result<()> {
    use jobsight_model::LabelsFrom;
    let mut progress = |phase: &str| eprintln!("{phase} ...");
    match action {
        ModelAction::Train {
            workflows: true,
            out,
            options,
            ..
        } => {
            use jobsight_workflow::{detect, model as workflow_model};
            let runtime =
                tokio::runtime::Runtime::new().context("cannot start the query runtime")?;
            let (tasks, runs) =
                runtime.block_on(detect::read_tasks(data, detect::RunLabels::Read))?;
            progress("training the task classifier and the run labels");
            let mut m = workflow_model::train(&tasks, &runs, data, options.seed)?;
            m.write(&out)?;
            writeln!(stdout, "wrote {}", out.display())?;
            stdout.write_all(jobsight_render::workflow::render_header(&m.header).as_bytes())?;
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
            let file = jobsight_model::train(
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
            stdout.write_all(jobsight_render::model::render_header(&file.header).as_bytes())?;
        }
        ModelAction::Eval {
            workflows: true,
            cv,
            options,
            format,
            ..
        } => evaluate_workflows(data, cv.unwrap_or(5) as usize, options.seed, format, stdout)?,
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
            active,
            active_batch,
            no_history,
            with_score,
            options,
            format,
            workflows: false,
        } => {
            let labels = LabelsFrom::parse(labels_from.as_deref());
            let report = match path {
                Some(path) => jobsight_model::evaluate_model(data, &path, &labels)?,
                None => {
                    anyhow::ensure!(
                        cv.is_some() || hold_out.is_some() || leave_out_application,
                        "say what to evaluate: --model FILE, --cv K, --hold-out APPLICATION or \
                         --leave-out-application"
                    );
                    anyhow::ensure!(
                        active == 0 || kind == jobsight_model::Kind::Diagnosis,
                        "--active asks for labels for the diagnosis; the anomaly score needs none"
                    );
                    anyhow::ensure!(
                        !with_score || kind == jobsight_model::Kind::Diagnosis,
                        "--with-score judges the anomaly score together with the diagnosis (--kind diagnosis)"
                    );
                    anyhow::ensure!(
                        !no_history || kind == jobsight_model::Kind::Unsupervised || with_score,
                        "--no-history judges the anomaly score's cut (--kind unsupervised, or the diagnosis --with-score); the diagnosis alone has none"
                    );
                    let cv = jobsight_model::CrossValidation {
                        folds: cv.unwrap_or(5) as usize,
                        hold_out,
                        leave_out_each: leave_out_application,
                        export,
                        verdicts,
                        contaminate,
                        active,
                        active_batch: active_batch.map_or(0, |b| b as usize),
                        no_history,
                        with_score,
                    };
                    jobsight_model::cross_validate(
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
                Format::Table => {
                    stdout.write_all(jobsight_render::model::render_report(&report).as_bytes())?
                }
                Format::Json => writeln!(stdout, "{}", serde_json::to_string_pretty(&report)?)?,
            }
        }
        ModelAction::Bootstrap { .. } => unreachable!("handled by `model`"),
        ModelAction::Info {
            model: path,
            format,
        } => show_model_info(&path, format, stdout)?,
    }
    Ok(())
}

/// `jobsight model eval --workflows`: the workflow models cross-validated by run.
fn evaluate_workflows(
    data: &std::path::Path,
    folds: usize,
    seed: u64,
    format: Format,
    stdout: &mut impl Write,
) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the query runtime")?;
    let (tasks, runs) = runtime.block_on(jobsight_workflow::detect::read_tasks(
        data,
        jobsight_workflow::detect::RunLabels::Read,
    ))?;
    let report = jobsight_workflow::detect::evaluate(&tasks, &runs, folds, seed)?;
    let text = match format {
        Format::Table => jobsight_render::workflow::render_eval(&report),
        Format::Json => serde_json::to_string(&report)? + "\n",
    };
    stdout.write_all(text.as_bytes())?;
    Ok(())
}

/// `jobsight model info`: the header of a job model or of a workflow model.
fn show_model_info(
    path: &std::path::Path,
    format: Format,
    stdout: &mut impl Write,
) -> anyhow::Result<()> {
    if let Some(header) = jobsight_workflow::model::WorkflowModel::header(path)? {
        match format {
            Format::Table => {
                stdout.write_all(jobsight_render::workflow::render_header(&header).as_bytes())?
            }
            Format::Json => writeln!(stdout, "{}", serde_json::to_string_pretty(&header)?)?,
        }
        return Ok(());
    }
    let header = jobsight_model::file::ModelFile::header(path)?;
    match format {
        Format::Table => {
            stdout.write_all(jobsight_render::model::render_header(&header).as_bytes())?
        }
        Format::Json => writeln!(stdout, "{}", serde_json::to_string_pretty(&header)?)?,
    }
    Ok(())
}

/// `jobsight workflow`.
pub(in crate::cli) fn workflow(
    action: WorkflowAction,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    use jobsight_workflow::{detect, slurm};
    let data = env.settings.data.clone();
    let runtime = tokio::runtime::Runtime::new().context("cannot start the query runtime")?;
    if let WorkflowAction::Slurm { since, until } = action {
        let days =
            jobsight_warehouse::catalog::days(&data, jobsight_warehouse::catalog::Table::Jobs);
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
    // Scoring reads no run label: `workflows` is not read at all.
    let labels = match action {
        WorkflowAction::Eval { .. } => detect::RunLabels::Read,
        _ => detect::RunLabels::Skip,
    };
    let (tasks, runs) = runtime.block_on(detect::read_tasks(&data, labels))?;
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
                jobsight_workflow::model::WorkflowModel::read(path)?.apply(&tasks, &mut rows)?;
            }
            let (scored, flagged, days) = detect::write_scores(&data, rows)?;
            writeln!(
                stdout,
                "scored {scored} tasks of {} workflow runs into workflow_scores ({days} day partition(s)); {flagged} flagged (their host more than {} spreads slower than history and than the run's other hosts)",
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
                Format::Table => jobsight_render::workflow::render_eval(&report),
                Format::Json => serde_json::to_string(&report)? + "\n",
            };
            stdout.write_all(text.as_bytes())?;
        }
    }
    Ok(())
}

/// `jobsight rules`.
pub(in crate::cli) fn rules(
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
                Format::Table => jobsight_render::rules::render_book(&book),
                Format::Json => {
                    serde_json::to_string_pretty(&jobsight_render::rules::book_json(&book))? + "\n"
                }
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
            let days: Vec<chrono::NaiveDate> = jobsight_features::days_with_jobs(&data)
                .into_iter()
                .filter(|d| *d >= since && until.is_none_or(|u| *d <= u))
                .collect();
            anyhow::ensure!(
                !days.is_empty(),
                "no days with jobs from {since} in {}",
                data.display()
            );
            let bar = Progress::new("backtest", "days");
            let result = backtest::run(
                &data,
                &days,
                &current,
                &candidate_book,
                &settings.rules,
                |day, i, n| bar.item(i, n, day),
            )?;
            drop(bar);
            let text = match format {
                Format::Table => jobsight_render::rules::render_backtest(&result, show),
                Format::Json => serde_json::to_string_pretty(&result)? + "\n",
            };
            stdout.write_all(text.as_bytes())?;
        }
    }
    Ok(())
}
