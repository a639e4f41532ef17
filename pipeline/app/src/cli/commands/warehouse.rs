//! The commands that query, serve and load the warehouse: `sql`, `serve` (PostgreSQL's
//! protocol), `import` (historical and external data) and `ballista` (a scale-out process).

use std::io::{StdoutLock, Write};

use anyhow::Context as _;

use jobsight_ingest::{ldms, ldms_store, swf};
use jobsight_warehouse::query;

use crate::cli::Env;
use crate::cli::args::{BallistaRole, ImportSource, ServeArgs, SqlArgs};
use crate::cli::progress::Progress;

/// `jobsight sql`.
pub(in crate::cli) fn sql(
    args: SqlArgs,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let SqlArgs { query, format } = args;
    let data = env.settings.data.clone();
    let runtime = query::engine_runtime().context("cannot start the query runtime")?;
    let Some(query) = query else {
        return crate::cli::shell::run(&runtime, &data, &env.settings.engine, format, stdout);
    };
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
pub(in crate::cli) fn serve(
    args: ServeArgs,
    env: &Env,
    // Both servers announce through `std::io::stdout()` (reentrant), not this lock.
    _stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let settings = &env.settings;
    // A panic in a connection's task (a malformed message pgwire's decoder does not expect)
    // ends that connection only; the server logs it in one line, not a backtrace per client.
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map_or(String::new(), |l| format!(" at {}:{}", l.file(), l.line()));
        eprintln!(
            "jobsight serve: internal error{at}: {}",
            jobsight_base::text::one_line(&what)
        );
    }));
    // Large stacks on every worker: each client's statement is planned and run on one, and may
    // nest as deep as `query::depth::MAX_NESTING`.
    let runtime = query::engine_runtime().context("cannot start the server's runtime")?;
    let pg = args
        .pg
        .clone()
        .or_else(|| args.http.is_none().then(|| "127.0.0.1:5432".to_string()));
    // Each server says where it listens as soon as it does (a test or a script reads the port
    // from that line); stdout's lock is reentrant, so either may write while the other serves.
    let announce = |line: String| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}").and_then(|()| out.flush());
    };
    runtime.block_on(async {
        let postgres = async {
            let Some(addr) = &pg else { return Ok(()) };
            jobsight_warehouse::serve::serve_pg(
                &settings.data,
                addr,
                &settings.serve,
                |bound| {
                    announce(format!(
                        "serving {} over PostgreSQL on {bound} (user {}, read-only); stop with Ctrl-C",
                        settings.data.display(),
                        settings.serve.pg_user
                    ))
                },
                jobsight_warehouse::serve::stop_signal(),
            )
            .await
            .map_err(anyhow::Error::from)
        };
        let web = async {
            let Some(addr) = &args.http else { return Ok(()) };
            let roles = crate::web::who::Roles::new(
                Box::new(crate::web::who::SystemDirectory {
                    sacctmgr: settings.web.sacctmgr.clone(),
                }),
                &settings.access,
                std::time::Duration::from_secs(settings.web.coordinators_refresh_s),
            );
            let web_settings = crate::web::settings::Settings {
                running_snapshot: Some(settings.running.snapshot.clone()),
                ..settings.web.clone()
            };
            let web = crate::web::Web::new(
                settings.data.clone(),
                web_settings,
                settings.report.clone(),
                crate::schedule::stage_inputs::report_inputs(settings),
                roles,
            )
            .await?;
            crate::web::serve_http(
                std::sync::Arc::new(web),
                addr,
                |bound| {
                    announce(format!(
                        "serving {} over HTTP on {bound} to the users the sign-in proxy at {} names; stop with Ctrl-C",
                        settings.data.display(),
                        settings
                            .web
                            .trusted_proxies
                            .iter()
                            .map(|a| a.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                },
                jobsight_warehouse::serve::stop_signal(),
            )
            .await
            .map_err(anyhow::Error::from)
        };
        let (postgres, web) = tokio::join!(postgres, web);
        postgres.and(web)
    })?;
    Ok(())
}

/// `jobsight import`.
pub(in crate::cli) fn import(
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
                bar.item(i, n, job)
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
                jobsight_workflow::pegasus::import(&data, &dir, dag.as_deref(), |i, n, run| {
                    bar.item(i, n, run)
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
                bar.item(i, n, path.display())
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
fn report_skipped(skipped: &[jobsight_ingest::Skipped]) {
    for s in skipped.iter().take(20) {
        eprintln!("skipped: {s}");
    }
    if skipped.len() > 20 {
        eprintln!("skipped: ... and {} more", skipped.len() - 20);
    }
}

/// `jobsight ballista scheduler|executor`: one process of a Ballista cluster, until stopped.
pub(in crate::cli) fn ballista(
    role: BallistaRole,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let runtime = query::engine_runtime().context("cannot start the Ballista runtime")?;
    #[cfg(feature = "ballista")]
    {
        use jobsight_warehouse::query::ballista;
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
