//! The names a condition may read: the fields of `job.`, `summary.`, `history.` and `workflow.`,
//! the statistics of a metric over the job and on one node, and the levels of a limit. The
//! checks (`scope`) refuse any other name, and the evaluation (`crate::prepare`, the lookup)
//! fills these in.

/// Fields of `jobs` that conditions read as `job.<field>`, with those the engine derives.
pub const JOB_FIELDS: [&str; 30] = [
    "cluster",
    "job_id",
    "array_job_id",
    "array_task_id",
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
    // Derived.
    "elapsed_s",
    "cpus_per_node",
    "cores_per_node",
    "exclusive",
    "req_mem_gb",
    "gpus_per_node",
    "wait_s",
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
pub const SUMMARY_FIELDS: [&str; 20] = [
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
];

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
