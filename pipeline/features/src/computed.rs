//! The rows the features compute for one job: per series (`features`), per metric across nodes
//! (`features_job`), per sliding window (`windows`) and per job (`job_summary`), as [`crate::job`]
//! and [`crate::efficiency`] fill them in.

use std::sync::Arc;

use super::energy::Energy;
use jobsight_base::series::SeriesStats;

/// One `features` row.
#[derive(Debug, Clone)]
pub struct SeriesRow {
    pub node: Arc<str>,
    pub metric: Arc<str>,
    pub stats: SeriesStats,
    pub coverage: Option<f64>,
}

/// One `features_job` row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AcrossRow {
    pub metric: Arc<str>,
    pub nodes: u64,
    pub mean: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub node_mean_min: Option<f64>,
    pub node_mean_max: Option<f64>,
    pub node_cv: Option<f64>,
    pub imbalance: Option<f64>,
}

/// The `job_summary` row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub elapsed_s: f64,
    pub nodes_expected: Option<u64>,
    pub nodes_seen: u64,
    pub nodes_missing: Option<String>,
    pub metrics: u64,
    pub samples: u64,
    pub coverage_min: Option<f64>,
    pub coverage_mean: Option<f64>,
    pub judgeable: bool,
    pub not_judgeable_reason: Option<String>,
    pub duty_cycle: Option<&'static str>,
    pub cpu_used_cores: Option<f64>,
    pub cpu_eff: Option<f64>,
    pub mem_used_max_mb: Option<f64>,
    pub mem_eff: Option<f64>,
    pub time_eff: Option<f64>,
    pub gpu_util: Option<f64>,
    pub core_hours: Option<f64>,
    pub wasted_core_hours: Option<f64>,
    pub cpu_eff_source: Option<Source>,
    pub mem_source: Option<Source>,
    pub cpu_eff_telemetry: Option<f64>,
    pub mem_eff_telemetry: Option<f64>,
    pub cpu_eff_acct: Option<f64>,
    pub mem_eff_acct: Option<f64>,
    pub shared: Option<bool>,
    /// Where `gpu_util` came from: the job's own GPUs (DCGM's job-mapped series) or its nodes'.
    pub gpu_source: Option<Source>,
    /// The GPUs' memory peak (MiB, summed over the job's GPUs) from the series `gpu_source` names.
    pub gpu_mem_used_max_mb: Option<f64>,
    /// Those GPUs' memory (MiB): the mean of used + free per node, summed (their sum is the same
    /// at every sample).
    pub gpu_mem_total_mb: Option<f64>,
    pub energy: Energy,
}

/// One `windows` row: the statistics of one series over one sliding window.
#[derive(Debug, Clone)]
pub struct WindowRow {
    pub node: Arc<str>,
    pub metric: Arc<str>,
    /// Start of the window, microseconds since the epoch; it covers `[start_us, end_us)`.
    pub start_us: i64,
    pub end_us: i64,
    pub stats: SeriesStats,
}

/// Everything computed for one job.
#[derive(Debug, Clone)]
pub struct JobFeatures {
    pub job_id: String,
    /// The run measured (Slurm's restart count), where the jobs row has it.
    pub restart_count: Option<u32>,
    pub trimmed: bool,
    /// Sorted by node, then metric.
    pub series: Vec<SeriesRow>,
    /// Sliding windows, when asked for: by node, metric, then start.
    pub windows: Vec<WindowRow>,
    /// Sorted by metric.
    pub across: Vec<AcrossRow>,
    pub summary: Summary,
}

/// Where a job's CPU or memory figures were taken from (see [`crate::efficiency`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The job's own series (a cgroup exporter's).
    TelemetryJob,
    /// Its nodes' series.
    TelemetryNode,
    /// Slurm accounting.
    Accounting,
}

impl Source {
    /// As `job_summary.cpu_eff_source` and `mem_source` hold it.
    pub fn name(self) -> &'static str {
        match self {
            Source::TelemetryJob => "telemetry-job",
            Source::TelemetryNode => "telemetry-node",
            Source::Accounting => "accounting",
        }
    }
}
