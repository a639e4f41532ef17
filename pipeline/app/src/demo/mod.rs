//! `jobsight demo`: the pipeline, run end to end on a simulated cluster.
//!
//! It simulates a day of finished jobs ([`jobsight_sim`]), runs the real `jobsight-epilog` binary
//! once per hook invocation with the exact environment Slurm would give it, claims the spool
//! ([`jobsight_ingest::spool`]) and reports what it found, counting from the claimed records (not
//! from the simulation), so the numbers prove the hook and the claim worked. Then it ingests the
//! models trained on a second simulated day (never on the day they judge), then runs the real
//! per-job DAG ([`crate::schedule`]) with the simulator standing in for sacct and the node
//! exporters ([`jobsight_ingest::simulator::SimulatedCluster`]) and the nightly DAG for the day,
//! and shows what landed in the warehouse with SQL ([`jobsight_warehouse::query`]): features,
//! findings, predictions, the models' evaluation on the day, and the emails in a file outbox.
//!
//! Needs no services and no configuration; writes only under its directory.
//!
//! [`run`] reads as the list of the demo's parts, each a function below it that does its work and
//! writes its part of the report; the set-up (the simulated day, the directory, the models, the
//! pipeline's settings) is in `setup`, the SQL it shows in `queries`, and the text helpers in
//! `text`.

mod error;
mod queries;
mod setup;
mod text;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use crate::config::Settings;
use crate::schedule;
use jobsight_ingest::simulator;
use jobsight_ingest::spool::{ClaimReport, Spool};
use jobsight_model::{LabelsFrom, ModelError};
use jobsight_render::Format;

use queries::{
    CLASSIFY_QUERIES, DEMO_QUERIES, FEATURE_QUERIES, NOTIFY_QUERIES, PREDICTION_QUERIES,
    show_queries, verdict_counts,
};
use setup::{
    DEMO_DAY, DEMO_METRICS, DEMO_SAMPLES_PER_TREE, DEMO_STEP_S, DEMO_TREES, DEMO_WINDOWS,
    DEMO_WINDOWS_PER_CLASS, Pipeline, TRAINING_ANOMALY_SHARE, TRAINING_JOBS, TRAINING_NODES,
    TrainedModels, UNSEEN_APPLICATION,
};
use text::{first_lines, indent, join, ms, percentile, show};

pub use error::DemoError;
pub use setup::{DemoOptions, default_epilog_bin};

/// Runs the demo and writes its report to `out`.
pub fn run(options: &DemoOptions, out: &mut dyn Write) -> Result<(), DemoError> {
    let demo_dir = setup::prepare(options)?;
    let spec = &options.spec;
    show(
        out,
        format!(
            "jobsight demo: simulated cluster \"{}\" ({} nodes x {} CPUs), {} finished jobs, seed {}\nspool: {}\n\n",
            spec.name,
            spec.nodes,
            spec.cpus_per_node,
            spec.jobs,
            options.seed,
            demo_dir.spool_path.display()
        ),
    )?;
    let jobs = jobsight_sim::simulate_day(spec, options.seed);
    run_hooks(out, options, &demo_dir.spool_path, &jobs)?;
    let claim = claim_records(out, &demo_dir.spool)?;
    show_queue(out, &demo_dir.spool)?;
    let (trained, features_settings) = train_models_first(out, options, &demo_dir.dir)?;
    let pipeline = Pipeline::new(options, &demo_dir, &jobs, features_settings, &trained)?;
    run_per_job_dag(out, &pipeline)?;
    write_truth(&pipeline, &claim)?;
    let runtime = tokio::runtime::Runtime::new().map_err(DemoError::Runtime)?;
    show_queries(out, &runtime, pipeline.warehouse(), &DEMO_QUERIES)?;
    let nights = run_nightly_dags(out, &pipeline)?;
    let totals = NightTotals::add_up(&nights);
    show_features(out, &runtime, &pipeline, &trained, &totals)?;
    show_classification(out, &runtime, &pipeline, &totals)?;
    show_email(out, &runtime, &pipeline)?;
    show_report_pages(out, &pipeline.settings, &totals)?;
    show(
        out,
        format!(
            "Everything above is in {} (remove it with `rm -r`).\n",
            demo_dir.dir.display()
        ),
    )
}

/// Part 1 of the demo: every hook invocation Slurm would make, through the real binary.
fn run_hooks(
    out: &mut dyn Write,
    options: &DemoOptions,
    spool_path: &Path,
    jobs: &[jobsight_sim::SimJob],
) -> Result<(), DemoError> {
    let spec = &options.spec;
    let mut latencies = Vec::new();
    let (mut ctld_runs, mut node_runs, mut complaints) = (0usize, 0usize, 0usize);
    let started = Instant::now();
    for job in jobs {
        for env in jobsight_sim::hook_environments(&spec.name, job) {
            let is_ctld = env
                .iter()
                .any(|(k, v)| k == "SLURM_SCRIPT_CONTEXT" && v == b"epilog_slurmctld");
            let t0 = Instant::now();
            let result = setup::hook_command(&options.epilog_bin, spool_path, &env)
                .output()
                .map_err(|source| DemoError::Spawn {
                    path: options.epilog_bin.clone(),
                    job_id: job.job_id,
                    source,
                })?;
            latencies.push(t0.elapsed());
            if !result.status.success() {
                return Err(DemoError::HookExit {
                    path: options.epilog_bin.clone(),
                    job_id: job.job_id,
                    status: result.status,
                });
            }
            complaints += usize::from(!result.stderr.is_empty());
            if is_ctld {
                ctld_runs += 1
            } else {
                node_runs += 1
            }
        }
    }
    let hook_time = started.elapsed();
    latencies.sort_unstable();
    show(
        out,
        format!(
            "1. Slurm hooks: ran jobsight-epilog {} times ({} as EpilogSlurmctld, {} as Epilog on the job's nodes) in {:.2} s;\n   per run (fork + exec + enqueue): p50 {}, p99 {}, max {}; {} run(s) reported a problem on stderr\n",
            ctld_runs + node_runs,
            ctld_runs,
            node_runs,
            hook_time.as_secs_f64(),
            ms(percentile(&latencies, 50.0)),
            ms(percentile(&latencies, 99.0)),
            ms(percentile(&latencies, 100.0)),
            complaints
        ),
    )?;
    Ok(())
}

/// Part 2 of the demo: the pipeline claims what the hooks enqueued.
fn claim_records(out: &mut dyn Write, spool: &Spool) -> Result<ClaimReport, DemoError> {
    let report = spool.claim(None)?;
    show(
        out,
        format!("\n2. Claim: {}\n", jobsight_render::claim_summary(&report)),
    )?;
    let mut by_exit: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_user: BTreeMap<String, usize> = BTreeMap::new();
    for c in &report.claimed {
        let exit = c
            .record
            .exit_code
            .as_ref()
            .and_then(|e| e.code.zip(e.signal))
            .map_or("unknown".into(), |(code, sig)| format!("{code}:{sig}"));
        *by_exit.entry(exit).or_default() += 1;
        let user = c.record.user.as_ref().map_or("-".into(), |u| u.escaped());
        *by_user.entry(user).or_default() += 1;
    }
    show(
        out,
        format!(
            "   by exit code:signal: {}\n   by user: {}\n",
            join(&by_exit),
            join(&by_user)
        ),
    )?;
    let requeued = report
        .duplicates
        .iter()
        .filter(|d| !d.path.to_string_lossy().contains("epilog_slurmd"))
        .count();
    show(
        out,
        format!(
            "   duplicates: {} Epilog records of jobs already claimed from EpilogSlurmctld, {} later run(s) of requeued jobs\n     (Slurm 22.05 reports the same restart count for both runs of a requeued job; see README)\n",
            report.duplicates.len() - requeued,
            requeued
        ),
    )?;
    let hostile: Vec<_> = report
        .claimed
        .iter()
        .filter(|c| {
            c.record
                .job_name
                .as_ref()
                .is_some_and(|n| n.escaped() != n.as_str().unwrap_or(""))
        })
        .collect();
    if let Some(example) = hostile.first() {
        show(
            out,
            format!(
                "   {} job name(s) with control characters or invalid UTF-8 were stored byte for byte and are shown escaped, e.g. job {}: \"{}\"\n",
                hostile.len(),
                example.record.job_id,
                example
                    .record
                    .job_name
                    .as_ref()
                    .map(|n| n.escaped())
                    .unwrap_or_default()
            ),
        )?;
    }
    show(
        out,
        format!(
            "\n   first claimed records:\n{}",
            indent(&first_lines(
                &jobsight_render::render_claimed(&report, Format::Table),
                6
            ))
        ),
    )?;
    Ok(report)
}

/// Part 3 of the demo: what the queue looks like now.
fn show_queue(out: &mut dyn Write, spool: &Spool) -> Result<(), DemoError> {
    let status = spool.status(jobsight_base::now())?;
    show(
        out,
        format!(
            "\n3. {}",
            jobsight_render::render_status(&status, Format::Table)
        ),
    )?;
    Ok(())
}

/// Part 4 of the demo: models first, trained on another simulated day of the same kind of cluster:
/// the per-job DAG judges each job with them as it comes in, and a model never sees the jobs it
/// judges. Returns them with the features' settings they were trained with, the pipeline's.
fn train_models_first(
    out: &mut dyn Write,
    options: &DemoOptions,
    dir: &Path,
) -> Result<(TrainedModels, jobsight_features::Settings), DemoError> {
    let spec = &options.spec;
    let started = Instant::now();
    let features_settings = jobsight_features::Settings {
        cores_per_node: Some(spec.cpus_per_node),
        windows: Some(DEMO_WINDOWS),
        ..jobsight_features::Settings::default()
    };
    let trained = setup::train_models(dir, spec, options.seed, &features_settings)?;
    show(
        out,
        format!(
            "\n4. Models: trained on a second simulated day ({} nodes, {} jobs, {:.0} % of them with an injected anomaly, seed {}; no `{}` job: the models never see that application), never on this one, in {:.1} s\n   $ jobsight --data {} model train --kind diagnosis --trees {} --max-windows-per-class {} --max-samples-per-tree {} --out {}\n{}",
            TRAINING_NODES,
            TRAINING_JOBS,
            TRAINING_ANOMALY_SHARE * 100.0,
            trained.seed,
            UNSEEN_APPLICATION,
            started.elapsed().as_secs_f64(),
            trained.warehouse.display(),
            DEMO_TREES,
            DEMO_WINDOWS_PER_CLASS,
            DEMO_SAMPLES_PER_TREE,
            trained.diagnosis.display(),
            indent(&trained.header)
        ),
    )?;
    Ok((trained, features_settings))
}

/// Part 5 of the demo: the per-job DAG, as the daemon runs it every 2 minutes; here once, a minute
/// after the last job ended, so that every job is ready.
fn run_per_job_dag(out: &mut dyn Write, pipeline: &Pipeline<'_>) -> Result<(), DemoError> {
    let warehouse = pipeline.warehouse();
    let last_end = pipeline.jobs.iter().map(|j| j.end_s).max().unwrap_or(0);
    let end_of_day = DEMO_DAY
        .and_hms_opt(0, 0, 0)
        .map(|t| t.and_utc())
        .unwrap_or_default()
        + chrono::TimeDelta::seconds(last_end as i64 + 60);
    let per_job = schedule::dag::find(&pipeline.dags, "per-job")?;
    let run = schedule::run_dag(
        &pipeline.context(end_of_day),
        per_job,
        &schedule::RunRequest {
            scheduled_for: end_of_day,
            trigger: schedule::Trigger::Manual,
            days: None,
        },
        &pipeline.log,
        &pipeline.stop,
    )?;
    let ingest = run.steps.first();
    let count = |step: Option<&schedule::StepReport>, key: &str| {
        step.and_then(|s| s.counts.get(key)).copied().unwrap_or(0)
    };
    show(
        out,
        format!(
            "\n5. The per-job DAG (`jobsight dag run per-job`; the simulator stands in for sacct and the node exporters): {} jobs stored with {} telemetry rows ({} metrics per node every {} s), each then given its features, judged by the rules and the models, and its critical findings emailed\n{}   one log line per job and step: {}\n   warehouse: {}\n",
            ingest.map_or(0, |s| s.jobs),
            count(ingest, "telemetry_rows"),
            DEMO_METRICS,
            DEMO_STEP_S,
            indent(&jobsight_render::render_runs(std::slice::from_ref(&run))),
            pipeline.log_path.display(),
            warehouse.display()
        ),
    )?;
    Ok(())
}

/// The simulator's answer key, which no real cluster has: what the models are judged against.
fn write_truth(pipeline: &Pipeline<'_>, claim: &ClaimReport) -> Result<(), DemoError> {
    let jobs = pipeline.jobs;
    let warehouse = pipeline.warehouse();
    let claimed: Vec<&jobsight_sim::SimJob> = claim
        .claimed
        .iter()
        .filter_map(|c| {
            jobs.iter().find(|j| {
                j.job_id == c.record.job_id
                    && j.restart_count == c.record.restart_count.unwrap_or(0)
            })
        })
        .collect();
    simulator::write_labels(warehouse, &claimed, DEMO_DAY, "demo")?;
    Ok(())
}

/// Part 6 of the demo: the nightly DAG, at 02:30 after each day the jobs ended on: the day as a
/// whole, then the digests.
fn run_nightly_dags(
    out: &mut dyn Write,
    pipeline: &Pipeline<'_>,
) -> Result<Vec<schedule::RunReport>, DemoError> {
    let nightly = schedule::dag::find(&pipeline.dags, "nightly")?;
    let mut nights = Vec::new();
    for day in jobsight_features::days_with_jobs(pipeline.warehouse()) {
        let night = (day + chrono::Days::new(1))
            .and_hms_opt(2, 30, 0)
            .map(|t| t.and_utc())
            .unwrap_or_default();
        nights.push(schedule::run_dag(
            &pipeline.context(night),
            nightly,
            &schedule::RunRequest {
                scheduled_for: night,
                trigger: schedule::Trigger::Manual,
                days: None,
            },
            &pipeline.log,
            &pipeline.stop,
        )?);
    }
    show(
        out,
        format!(
            "\n6. The nightly DAG (`jobsight dag run nightly`) after each day the jobs ended on: the day as a whole\n{}",
            indent(&jobsight_render::render_runs(&nights))
        ),
    )?;
    Ok(nights)
}

/// The nightly runs' figures, step by step, added up over the nights.
struct NightTotals {
    counts: BTreeMap<(String, String), u64>,
    jobs: BTreeMap<String, u64>,
}

impl NightTotals {
    fn add_up(nights: &[schedule::RunReport]) -> NightTotals {
        let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
        let mut jobs: BTreeMap<String, u64> = BTreeMap::new();
        for run in nights {
            for s in &run.steps {
                *jobs.entry(s.step.clone()).or_default() += s.jobs;
                for (k, v) in &s.counts {
                    *counts.entry((s.step.clone(), k.clone())).or_default() += v;
                }
            }
        }
        NightTotals { counts, jobs }
    }

    /// The count `key` of `step`, added up over the nights (0 when none had it).
    fn total(&self, step: &str, key: &str) -> u64 {
        self.counts
            .get(&(step.to_string(), key.to_string()))
            .copied()
            .unwrap_or(0)
    }

    /// The jobs `step` worked on, added up over the nights.
    fn jobs_in(&self, step: &str) -> u64 {
        self.jobs.get(step).copied().unwrap_or(0)
    }
}

/// The features the nightly runs computed, and the diagnosis judged on the day's labelled
/// windows.
fn show_features(
    out: &mut dyn Write,
    runtime: &tokio::runtime::Runtime,
    pipeline: &Pipeline<'_>,
    trained: &TrainedModels,
    totals: &NightTotals,
) -> Result<(), DemoError> {
    let warehouse = pipeline.warehouse();
    show(
        out,
        format!(
            "\n   Features: {} jobs, {} rows per job x node x metric, {} job summaries ({} cannot be judged for lack of telemetry), {} window rows for the models ({} s windows every {} s)\n",
            totals.jobs_in("features"),
            totals.total("features", "rows"),
            totals.jobs_in("features"),
            totals.total("features", "not_judgeable"),
            totals.total("features", "window_rows"),
            DEMO_WINDOWS.window_s,
            DEMO_WINDOWS.stride_s,
        ),
    )?;
    show_queries(out, runtime, warehouse, &FEATURE_QUERIES)?;
    // The diagnosis on this day's labelled windows: jobs the model has never seen.
    match jobsight_model::evaluate_model(warehouse, &trained.diagnosis, &LabelsFrom::Table) {
        Ok(report) => show(
            out,
            format!(
                "\n   The diagnosis judged on this day's labelled windows, which it has never seen:\n   $ jobsight --data {} model eval --model {}\n{}",
                warehouse.display(),
                trained.diagnosis.display(),
                indent(&jobsight_render::model::render_report(&report))
            ),
        )?,
        Err(ModelError::NoData(why)) => {
            show(out, format!("\n   no evaluation on this day: {why}\n"))?
        }
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// What the rules and the models made of the day's jobs.
fn show_classification(
    out: &mut dyn Write,
    runtime: &tokio::runtime::Runtime,
    pipeline: &Pipeline<'_>,
    totals: &NightTotals,
) -> Result<(), DemoError> {
    let warehouse = pipeline.warehouse();
    let book = &pipeline.book;
    let verdicts = verdict_counts(runtime, warehouse)?;
    show(
        out,
        format!(
            "\n   Classification with the built-in rule book ({} rules in {} groups, {} classes, {} characteristics; `jobsight rules list`): {} findings ({} critical) on {} jobs, {} class memberships;\n   and one verdict per job from rules and models together: {}\n",
            book.rules.len(),
            book.rules
                .iter()
                .map(|r| r.group)
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            book.classes.len(),
            book.characteristics.len(),
            totals.total("classify", "findings"),
            totals.total("classify", "critical"),
            totals.jobs_in("classify"),
            totals.total("classify", "classes"),
            join(&verdicts),
        ),
    )?;
    show_queries(out, runtime, warehouse, &CLASSIFY_QUERIES)?;
    show_queries(out, runtime, warehouse, &PREDICTION_QUERIES)?;
    Ok(())
}

/// Part 7 of the demo: email: what the two DAGs' notify steps sent, into a file outbox (no mail
/// server needed).
fn show_email(
    out: &mut dyn Write,
    runtime: &tokio::runtime::Runtime,
    pipeline: &Pipeline<'_>,
) -> Result<(), DemoError> {
    let sent = pipeline.settings.notify.outbox.join("sent");
    let mut messages: Vec<(String, String)> = std::fs::read_dir(&sent)
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let meta = std::fs::read(e.path().join("meta.json")).ok()?;
                    let meta: serde_json::Value = serde_json::from_slice(&meta).ok()?;
                    Some((
                        e.file_name().to_string_lossy().into_owned(),
                        format!(
                            "to {}: {}",
                            meta["to"].as_array().map_or(String::new(), |to| to
                                .iter()
                                .filter_map(|t| t.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")),
                            meta["subject"].as_str().unwrap_or("")
                        ),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    messages.sort();
    let listed: Vec<String> = messages
        .iter()
        .take(12)
        .map(|(key, what)| jobsight_base::text::printable(&format!("   {key:<32} {what}")))
        .collect();
    show(
        out,
        format!(
            "\n7. Email: {} message(s) in {} (critical emails from the per-job DAG, digests and the admins' report from the nightly one; SMTP when configured), each a `message.eml` with text and HTML:\n{}\n{}",
            messages.len(),
            sent.display(),
            listed.join("\n"),
            if messages.len() > listed.len() {
                format!("   ... and {} more\n", messages.len() - listed.len())
            } else {
                String::new()
            }
        ),
    )?;
    show_queries(out, runtime, pipeline.warehouse(), &NOTIFY_QUERIES)?;
    Ok(())
}

/// Part 8 of the demo: the pages behind the emails' links, from the nightly DAG's report step.
fn show_report_pages(
    out: &mut dyn Write,
    settings: &Settings,
    totals: &NightTotals,
) -> Result<(), DemoError> {
    show(
        out,
        format!(
            "\n8. Report pages (the nightly `report` step; `jobsight report job JOB_ID` writes one on demand): {} job pages, {} user pages, {} daily system report(s) and {} workflow run page(s) (the day's job arrays and dependency chains, with Gantt charts) in {}, {} job(s) without a page; open {} in a browser (static HTML, inline SVG charts, relative links: works offline)\n",
            totals.total("report", "job_pages"),
            totals.total("report", "user_pages"),
            totals.total("report", "system_reports"),
            // Pages, not writes: a run's page is rewritten on each day one of its jobs ended.
            std::fs::read_dir(settings.report.dir.join("workflows"))
                .map_or(0, |entries| entries.count()),
            settings.report.dir.display(),
            totals.total("report", "failed"),
            settings.report.dir.join("index.html").display(),
        ),
    )?;
    Ok(())
}
