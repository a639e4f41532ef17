//! The names a condition may read: the fields of `job.`, `summary.`, `history.` and `workflow.`,
//! the statistics of a metric over the job and on one node, and the levels of a limit; and what
//! reading each one reads ([`read_kind`]): Slurm's records, a CPU or memory figure that may come
//! from Slurm accounting, or other telemetry. The checks (`scope`) refuse any other name, and
//! the evaluation (`crate::prepare`, the lookup) fills these in.

/// Fields of `jobs` that conditions read as `job.<field>`, with those the engine derives.
pub const JOB_FIELDS: [&str; 43] = [
    "cluster",
    "job_id",
    "array_job_id",
    "array_task_id",
    "het_job_id",
    "het_job_offset",
    "restart_count",
    "user",
    "account",
    "partition",
    "qos",
    "num_nodes",
    "nodes",
    "cpus",
    "gpus",
    "req_mem_mb",
    "time_limit_s",
    "submit",
    "start",
    "end",
    "state",
    "exit_code",
    "exit_signal",
    "name",
    "source",
    // Slurm accounting's usage of the run (null where it has none) and the jobs beside it.
    "acct_cpu_user_s",
    "acct_cpu_system_s",
    "acct_cpu_total_s",
    "acct_mem_peak_mb",
    "acct_max_rss_mb",
    "acct_energy_j",
    "acct_gpu_util_max_pct",
    "acct_gpu_mem_max_mb",
    "acct_steps",
    "neighbours",
    // Derived.
    "elapsed_s",
    "cpus_per_node",
    "cores_per_node",
    "exclusive",
    "req_mem_gb",
    "gpus_per_node",
    "wait_s",
    // The span of telemetry judged: a running rule's dwell (or the run so far), a finished job's
    // whole run.
    "window_s",
];

/// `workflow.<field>`: the job as a task of a Slurm workflow run (an array or a dependency chain,
/// `workflow_tasks` and `workflow_scores`; `classify::workflow`); empty for a job of none.
/// `run` its run's id, `tasks` the run's jobs, `waiting` the jobs that waited for it, `on_critical_path`
/// 1 when it decided the run's makespan, `score` and `flagged` its host's slack score in the run
/// (`workflow_scores`), `runtime_z` its own run time against its application's, `history_runs`
/// the runs that history was learnt from, `queue_delay_s` its wait from ready to start.
pub const WORKFLOW_FIELDS: [&str; 9] = [
    "run",
    "tasks",
    "waiting",
    "on_critical_path",
    "score",
    "flagged",
    "runtime_z",
    "history_runs",
    "queue_delay_s",
];

/// `history.<field>`: the same application's earlier runs (`classify::history`).
pub const HISTORY_FIELDS: [&str; 8] = [
    "runs",
    "elapsed_s",
    "core_hours",
    "cpu_eff",
    "mem_used_max_mb",
    "changed_metric",
    "changed_ratio",
    "difference",
];

/// Figures of `job_summary` that conditions read as `summary.<field>`.
pub const SUMMARY_FIELDS: [&str; 27] = [
    "elapsed_s",
    "trimmed",
    "nodes_expected",
    "nodes_seen",
    "nodes_missing",
    "metrics",
    "samples",
    "coverage_min",
    "coverage_mean",
    "judgeable",
    "not_judgeable_reason",
    "duty_cycle",
    "cpu_used_cores",
    "cpu_eff",
    "mem_used_max_mb",
    "mem_eff",
    "time_eff",
    "gpu_util",
    "core_hours",
    "wasted_core_hours",
    "cpu_eff_source",
    "mem_source",
    "cpu_eff_telemetry",
    "mem_eff_telemetry",
    "cpu_eff_acct",
    "mem_eff_acct",
    "shared",
];

/// The CPU figures of `job_summary`: taken from the job's telemetry, its nodes' or Slurm
/// accounting, as `summary.cpu_eff_source` says.
pub const CPU_FIGURES: [&str; 3] = ["cpu_eff", "cpu_used_cores", "wasted_core_hours"];

/// The memory figures of `job_summary`, from where `summary.mem_source` says.
pub const MEMORY_FIGURES: [&str; 2] = ["mem_eff", "mem_used_max_mb"];

/// Fields of `job_summary` that are not measured by telemetry: the coverage verdict, the run
/// time, where the figures came from, whether the job shared its nodes (Slurm's records), and
/// seff's efficiencies from accounting.
pub const SUMMARY_WITHOUT_TELEMETRY: [&str; 9] = [
    "judgeable",
    "not_judgeable_reason",
    "elapsed_s",
    "time_eff",
    "cpu_eff_source",
    "mem_source",
    "shared",
    "cpu_eff_acct",
    "mem_eff_acct",
];

/// The value of `summary.cpu_eff_source` and `summary.mem_source` for figures from Slurm
/// accounting.
pub const FROM_ACCOUNTING: &str = "accounting";

/// The value of `summary.cpu_eff_source` and `summary.mem_source` for figures from the nodes'
/// series.
pub const FROM_NODES: &str = "telemetry-node";

/// What reading a variable reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// Nothing measured: Slurm's records (`job.`, `history.`, `workflow.`), limits, classes,
    /// a rule's own lets, and the fields of [`SUMMARY_WITHOUT_TELEMETRY`].
    Records,
    /// One of [`CPU_FIGURES`].
    CpuFigure,
    /// One of [`MEMORY_FIGURES`].
    MemoryFigure,
    /// Other telemetry: a metric, a node's series, the thresholds block, another measured field
    /// of `job_summary`.
    Series,
}

/// What reading the variable `name` reads.
pub fn read_kind(name: &str) -> Reads {
    let parts: Vec<&str> = name.split('.').collect();
    match parts.as_slice() {
        // The history's medians come from Slurm's records; its named difference, when there is
        // telemetry, is text that says so when there is none. A workflow's figures come from
        // Slurm's records too (the run time standing in for the CPU time without telemetry).
        ["job", _] | ["history", _] | ["workflow", _] | ["limit", ..] | ["class", _] | [_] => {
            Reads::Records
        }
        ["summary", field] if CPU_FIGURES.contains(field) => Reads::CpuFigure,
        ["summary", field] if MEMORY_FIGURES.contains(field) => Reads::MemoryFigure,
        ["summary", field] if SUMMARY_WITHOUT_TELEMETRY.contains(field) => Reads::Records,
        _ => Reads::Series,
    }
}

/// Statistics of a metric over the whole job (`<metric>.<stat>`): `features_job`'s figures across
/// nodes, and the per-node statistics folded over nodes (the worst node: largest rise and slope,
/// lowest catastrophe, ...; see [`crate::JOB_STAT_FOLDS`]).
pub const JOB_STATS: [&str; 17] = [
    "mean",
    "min",
    "max",
    "node_mean_min",
    "node_mean_max",
    "node_cv",
    "imbalance",
    "nodes",
    "max_rise",
    "slope_per_h",
    "catastrophe",
    "idle_share",
    "p05",
    "p95",
    "std",
    "coverage",
    "rise_s",
];

/// Statistics of a metric on one node that the engine derives from a `features` row's times
/// (see [`crate::prepare`]).
pub const DERIVED_NODE_STATS: [&str; 2] = ["rise_s", "cliff_after_s"];

/// Statistics of a metric on one node (`node.<metric>.<stat>`): the sample count, the `features`
/// statistics columns, and the derived ones.
pub fn node_stats() -> Vec<&'static str> {
    let mut stats = vec!["n"];
    stats.extend(jobsight_warehouse::catalog::FEATURE_STATS);
    stats.extend(DERIVED_NODE_STATS);
    stats
}

/// Statistics that do not change when a series is scaled (ratios, shapes, counts, times).
pub const SCALE_FREE: [&str; 14] = [
    "n",
    "cv",
    "skewness",
    "kurtosis",
    "interval_s",
    "coverage",
    "catastrophe",
    "idle_share",
    "node_cv",
    "imbalance",
    "nodes",
    "rise_s",
    "cliff_after_s",
    "n_nonfinite",
];

pub const LIMIT_LEVELS: [&str; 4] = ["peak", "normal", "caution", "alert"];
