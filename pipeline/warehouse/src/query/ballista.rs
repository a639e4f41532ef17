//! Scale-out on Apache Ballista (cargo feature `ballista`): the queries that grow with history
//! (`jobsight sql` over a year, the features plan over many days included; `jobsight summary`)
//! run on a Ballista cluster's executors instead of this machine, when the configuration names a
//! scheduler (`[engine] ballista = "df://host:50050"`).
//!
//! Ballista ships query plans between processes by name: a plan that calls `js_p95` or
//! `js_describe` can only run where those functions are compiled in, and DataFusion 55's rule for
//! repeated keys drops ORDER BY keys (repeated_keys.rs) wherever a plan is optimised. So jobsight
//! runs its own scheduler and executors (`jobsight ballista scheduler`, `jobsight ballista
//! executor`), each with jobsight's functions and rules ([`super::jobsight_state`]); stock
//! Ballista processes would refuse the plans (unknown function) or sort them wrongly.
//!
//! The warehouse is read by every executor at the path the client names, so it must be at the
//! same path on every machine: a shared file system (NFS, Lustre, GPFS, CephFS) mounted at the
//! same place. Object stores are not wired up (see docs/ballista.md).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ballista::prelude::SessionContextExt;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::{SchedulerConfig, TaskDistributionPolicy};
use ballista_scheduler::scheduler_process::start_server;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};

use super::{QueryError, jobsight_state, series_functions};

fn failed(what: &str) -> impl Fn(ballista_core::error::BallistaError) -> QueryError + '_ {
    move |e| QueryError::Engine(format!("{what}: {e}"))
}

/// A session whose queries run on the Ballista cluster of the scheduler at `url`
/// (`df://host:port`), with the warehouse at `data` registered as in a local session. The
/// warehouse's path must be the same on the executors.
pub async fn remote_session(data: &Path, url: &str) -> Result<SessionContext, QueryError> {
    reachable(url)?;
    let state = jobsight_state(
        SessionStateBuilder::new()
            .with_default_features()
            .with_config(super::session_config(false)?)
            .build(),
    )?;
    let ctx = SessionContext::remote_with_state(url, state)
        .await
        .map_err(|e| {
            QueryError::Engine(format!("cannot reach the Ballista scheduler at {url}: {e}"))
        })?;
    for (key, value) in BALLISTA_OPTIONS {
        ctx.sql(&format!("SET {key} = {value}"))
            .await
            .map_err(QueryError::Query)?
            .collect()
            .await
            .map_err(QueryError::Query)?;
    }
    // Ballista puts its own functions in place of the session's: the features' come back.
    for function in series_functions::all() {
        ctx.register_udaf(function);
    }
    super::register_tables(&ctx, data, super::Tables::Listed).await?;
    Ok(ctx)
}

/// Whether the scheduler at `url` takes connections: Ballista's own error for a scheduler that is
/// down is a gRPC transport dump, raised only once a query runs.
fn reachable(url: &str) -> Result<(), QueryError> {
    use std::net::{TcpStream, ToSocketAddrs};
    let unreachable = |why: String| {
        QueryError::Engine(format!(
            "cannot reach the Ballista scheduler at {url} ([engine] ballista): {why}"
        ))
    };
    let address = url.strip_prefix("df://").unwrap_or(url);
    let targets: Vec<SocketAddr> = address
        .to_socket_addrs()
        .map_err(|e| unreachable(e.to_string()))?
        .collect();
    let mut last = String::from("the name has no address");
    for target in targets {
        match TcpStream::connect_timeout(&target, std::time::Duration::from_secs(5)) {
            Ok(_) => return Ok(()),
            Err(e) => last = e.to_string(),
        }
    }
    Err(unreachable(last))
}

/// Runs a Ballista scheduler on `bind` until the process is stopped (Ctrl-C, SIGTERM): jobs are
/// planned with jobsight's rules and functions, and their tasks dealt round-robin.
pub async fn run_scheduler(bind: SocketAddr) -> Result<(), QueryError> {
    let config = SchedulerConfig {
        bind_host: bind.ip().to_string(),
        bind_port: bind.port(),
        external_host: bind.ip().to_string(),
        // A query's tasks spread over every executor (Ballista's default fills one executor's
        // slots first, which leaves the others idle on a query of few partitions).
        task_distribution: TaskDistributionPolicy::RoundRobin,
        override_session_builder: Some(Arc::new(|config: SessionConfig| {
            jobsight_state(
                SessionStateBuilder::new()
                    .with_default_features()
                    .with_config(config)
                    .build(),
            )
            .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)))
        })),
        ..SchedulerConfig::default()
    };
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(failed("cannot set up the Ballista scheduler"))?;
    start_server(cluster, bind, Arc::new(config))
        .await
        .map_err(failed("the Ballista scheduler stopped"))
}

/// Ballista options of every remote session. Ballista 55's adaptive planner (on by default) never
/// finishes a query that joins with an input that turns out empty: `jobsight summary` joins
/// `jobs` with `findings` and `predictions`, empty until the first classify, and an admin's join
/// with a filter that matches nothing hangs the same way (seen here with a scheduler, two
/// executors and a 12-job warehouse: no error, no end). The static planner runs them all.
const BALLISTA_OPTIONS: [(&str, &str); 1] = [("ballista.planner.adaptive.enabled", "false")];

/// Where an executor listens and whom it serves.
#[derive(Debug, Clone)]
pub struct Executor {
    /// The scheduler, `host:port`.
    pub scheduler: String,
    /// The address other executors and the client fetch results from (Arrow Flight), and the
    /// one the scheduler hands it tasks on (gRPC).
    pub bind: std::net::IpAddr,
    pub flight_port: u16,
    pub grpc_port: u16,
    /// Where shuffle files go between stages.
    pub work_dir: PathBuf,
    /// Tasks at once (default: the machine's cores).
    pub tasks: Option<usize>,
}

/// Runs a Ballista executor until the process is stopped (Ctrl-C, SIGTERM), with jobsight's
/// functions registered.
pub async fn run_executor(executor: Executor) -> Result<(), QueryError> {
    let (host, port) = executor
        .scheduler
        .rsplit_once(':')
        .and_then(|(h, p)| Some((h.to_string(), p.parse::<u16>().ok()?)))
        .ok_or_else(|| {
            QueryError::Engine(format!(
                "the scheduler address {:?} is not host:port",
                executor.scheduler
            ))
        })?;
    std::fs::create_dir_all(&executor.work_dir).map_err(|e| {
        QueryError::Engine(format!(
            "cannot create the executor's work folder {}: {e}",
            executor.work_dir.display()
        ))
    })?;
    let mut functions = BallistaFunctionRegistry::default();
    for function in series_functions::all() {
        functions
            .aggregate_functions
            .insert(function.name().to_string(), Arc::new(function));
    }
    let defaults = ExecutorProcessConfig::default();
    let config = ExecutorProcessConfig {
        bind_host: executor.bind.to_string(),
        external_host: Some(executor.bind.to_string()),
        port: executor.flight_port,
        grpc_port: executor.grpc_port,
        scheduler_host: host,
        scheduler_port: port,
        work_dir: Some(executor.work_dir.display().to_string()),
        vcores: executor.tasks.unwrap_or(defaults.vcores),
        // The scheduler has an executor drop a query's shuffle files once it is done; these
        // sweep what a crash left behind (Ballista's own default never sweeps).
        job_data_ttl_seconds: 24 * 3600,
        job_data_clean_up_interval_seconds: 3600,
        override_function_registry: Some(Arc::new(functions)),
        ..defaults
    };
    start_executor_process(Arc::new(config))
        .await
        .map_err(failed("the Ballista executor stopped"))
}
