//! The arguments of the commands that query, serve and load the warehouse: `sql`, `serve`,
//! `import` and `ballista` (their functions are in `commands::warehouse`).

use crate::cli::choice_arg::choice;
use std::path::PathBuf;

use clap::Subcommand;

use jobsight_warehouse::query::SqlFormat;

/// The arguments of `jobsight sql`.
#[derive(Debug, clap::Args)]
pub struct SqlArgs {
    /// The query, e.g. "SELECT count(*) FROM jobs"; without one, an interactive shell opens
    /// (statements end with `;`, `\dt` lists the tables, `\d TABLE` its columns, `\q` quits).
    pub query: Option<String>,
    #[arg(long, value_parser = choice::<SqlFormat>(), default_value = "table")]
    pub format: SqlFormat,
}

/// The arguments of `jobsight serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Where to listen for PostgreSQL clients, HOST:PORT (port 0 picks a free port)
    /// [default: 127.0.0.1:5432 when --http is not given].
    #[arg(long, value_name = "ADDR")]
    pub pg: Option<String>,
    /// Where to serve the web interface, HOST:PORT, behind the site's sign-in proxy
    /// (`[web] trusted_proxies`; docs/web.md).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// The file holding the password clients log in with [default: `[serve] pg_password_file`].
    #[arg(long, env = "JOBSIGHT_PG_PASSWORD_FILE")]
    pub password_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ImportSource {
    /// A job log in the Standard Workload Format (Parallel Workloads Archive) into `jobs`.
    /// Re-importing the same file replaces what it imported before.
    Swf {
        file: PathBuf,
        /// Cluster name to record for these jobs.
        #[arg(long)]
        cluster: String,
    },
    /// A directory of LDMS CSV store runs (each directory with a data/ folder is one job on its
    /// producer node) into `telemetry` and `jobs`, with ground truth into `labels`.
    LdmsRuns {
        dir: PathBuf,
        /// Labels file: job_id,run_dir,app,mode,anomaly,start_s,end_s,params.
        #[arg(long)]
        labels: Option<PathBuf>,
        /// Cluster name to record for these jobs.
        #[arg(long, default_value = "ldms")]
        cluster: String,
    },
    /// Parsed Pegasus workflow traces (Flow-Bench's format: one CSV per run, one row per task)
    /// into `workflows` and `workflow_tasks`. Every *.csv below DIR is one run; its folder is the
    /// run's label, its `anomaly_type` column the tasks' labels. Columns are found by name, so
    /// any workflow's traces import; bad rows are skipped and reported with file and line.
    /// Importing a run again replaces it (docs/workflows.md).
    Pegasus {
        dir: PathBuf,
        /// The workflow's DAG as an adjacency list (JSON: task id to the ids of the tasks that
        /// wait for it), for each task's parents, children and depth.
        #[arg(long)]
        dag: Option<PathBuf>,
    },
    /// A production LDMS CSV store (node-level streams, one file per sampler, rows of all nodes
    /// in time order) into `telemetry`: each sample goes to every job of the warehouse's `jobs`
    /// table that ran on its node at its time (a sorted merge per node). Import the jobs first
    /// (`jobsight ingest`, or `import swf`). Importing a file again replaces what it imported.
    LdmsStore {
        /// Store files, or directories to import every file below.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Only jobs of this cluster.
        #[arg(long)]
        cluster: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum BallistaRole {
    /// The scheduler: plans queries and hands their tasks to the executors.
    Scheduler {
        /// Where clients and executors reach it, HOST:PORT.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50050")]
        bind: std::net::SocketAddr,
    },
    /// An executor: runs tasks the scheduler hands it and serves their results.
    Executor {
        /// The scheduler, HOST:PORT.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50050")]
        scheduler: String,
        /// The address it listens on (and tells the scheduler and other executors).
        #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
        bind: std::net::IpAddr,
        /// Where results are fetched from (Arrow Flight).
        #[arg(long, default_value_t = 50051)]
        flight_port: u16,
        /// Where the scheduler hands it tasks (gRPC).
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Where intermediate results go between a query's stages.
        #[arg(long, value_name = "DIR", default_value = "/var/tmp/jobsight-ballista")]
        work_dir: PathBuf,
        /// Tasks at once [default: the machine's cores].
        #[arg(long)]
        tasks: Option<usize>,
    },
}
