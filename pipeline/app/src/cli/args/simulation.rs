//! The arguments of the commands that work on a simulated cluster: `demo` and `simulate` (their
//! functions are in `commands::simulation`).

use crate::cli::choice_arg::choice;
use std::path::PathBuf;

/// The arguments of `jobsight demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Directory to work in (must not already hold a spool); default: a new temporary
    /// directory, kept afterwards so you can look at it.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Number of finished jobs to simulate.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub jobs: u32,
    /// Number of nodes of the simulated cluster.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(4..=100_000))]
    pub nodes: u32,
    /// Seed of the simulation: the same seed gives the same jobs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The hook binary to run; default: `jobsight-epilog` beside this program.
    #[arg(long, env = "JOBSIGHT_EPILOG_BIN")]
    pub epilog_bin: Option<PathBuf>,
}

/// The arguments of `jobsight simulate`.
#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// Cluster name.
    #[arg(long, default_value = "sim")]
    pub cluster: String,
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(4..=100_000))]
    pub nodes: u32,
    /// Finished jobs in the day; default: four per node.
    #[arg(long)]
    pub jobs: Option<u32>,
    /// Metrics per node: 16 node-level series, then per-core utilisation (GPU series extra).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(16..=1000))]
    pub metrics: u32,
    /// Seconds between samples.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub step: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Share of jobs with an injected HPAS anomaly (0 to 0.85; 15 % more are inefficient).
    /// Raise it for a day to train or evaluate models on: the default gives only a few jobs
    /// per anomaly type.
    #[arg(long, default_value_t = 0.15, value_parser = parse_anomaly_share)]
    pub anomaly_share: f64,
    /// The first job id of the day; give each simulated day its own range for unique ids.
    /// Slurm's ids are 32-bit: the day's ids must fit below 4294967295.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=jobsight_sim::MAX_JOB_ID))]
    pub first_job_id: u64,
    /// The simulated day (UTC).
    #[arg(long, default_value = "2026-11-20")]
    pub day: chrono::NaiveDate,
    /// Where jobs run: `anywhere`, a random run of neighbouring nodes whatever else runs there
    /// (jobs share nodes); `free-nodes`, as a scheduler would, each job on the nodes free
    /// earliest and waiting in the queue until they are (no node runs two jobs at once; with
    /// enough jobs, a fully busy cluster). The output says how busy the nodes were.
    #[arg(long, value_parser = choice::<jobsight_sim::Placement>(), default_value = "anywhere")]
    pub placement: jobsight_sim::Placement,
}

fn parse_anomaly_share(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|share| (0.0..=jobsight_sim::MAX_ANOMALY_SHARE).contains(share))
        .ok_or_else(|| {
            format!(
                "{s:?} is not a share between 0 and {} (e.g. 0.5)",
                jobsight_sim::MAX_ANOMALY_SHARE
            )
        })
}
