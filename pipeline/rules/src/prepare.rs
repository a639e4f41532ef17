//! What the engine adds to a job's data before any rule reads it: the derived `job.` fields
//! (`elapsed_s`, `cpus_per_node`, `exclusive`, `window_s`, ...), the per-node times as durations,
//! and the job-level folds of the per-node statistics (the worst node counts).

use std::collections::BTreeMap;

use crate::lang::Value;
use crate::{JobData, Settings};

/// How per-node statistics fold into the job-level `<metric>.<stat>` (the worst node counts).
pub const JOB_STAT_FOLDS: [(&str, Fold); 9] = [
    ("max_rise", Fold::Max),
    ("slope_per_h", Fold::Max),
    ("catastrophe", Fold::Min),
    ("idle_share", Fold::Mean),
    ("p05", Fold::Min),
    ("p95", Fold::Max),
    ("std", Fold::Max),
    ("coverage", Fold::Min),
    ("rise_s", Fold::Max),
];

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fold {
    Min,
    Max,
    Mean,
}

/// Adds the fields the engine derives: `job.elapsed_s`, `cpus_per_node`, `exclusive`, ..., and
/// the job-level folds of the per-node statistics.
pub fn prepare(data: &mut JobData, settings: &Settings) {
    let num = |data: &JobData, key: &str| match data.job.get(key) {
        Some(Value::Num(v)) => Some(*v),
        _ => None,
    };
    let (start, end, submit) = (num(data, "start"), num(data, "end"), num(data, "submit"));
    let (cpus, nodes, gpus) = (num(data, "cpus"), num(data, "num_nodes"), num(data, "gpus"));
    let per_node = |x: Option<f64>| match (x, nodes) {
        (Some(x), Some(n)) if n > 0.0 => Value::num(x / n),
        _ => Value::Missing,
    };
    let cpus_per_node = per_node(cpus);
    let cores = settings.cores_per_node.map(f64::from);
    let derived = [
        (
            "elapsed_s",
            match (start, end) {
                (Some(s), Some(e)) => Value::num(e - s),
                _ => Value::Missing,
            },
        ),
        (
            "wait_s",
            match (submit, start) {
                (Some(s), Some(t)) => Value::num(t - s),
                _ => Value::Missing,
            },
        ),
        ("cores_per_node", Value::from_opt(cores)),
        (
            "exclusive",
            match (&cpus_per_node, cores) {
                (Value::Num(c), Some(k)) => Value::Bool(*c >= k),
                _ => Value::Missing,
            },
        ),
        ("cpus_per_node", cpus_per_node.clone()),
        ("gpus_per_node", per_node(gpus)),
        (
            "req_mem_gb",
            Value::from_opt(num(data, "req_mem_mb").map(|m| m / 1024.0)),
        ),
    ];
    for (key, value) in derived {
        data.job.insert(key.to_string(), value);
    }
    // A running job's judged span is set by the running DAG; a finished job's is its run.
    if !matches!(data.job.get("window_s"), Some(Value::Num(_))) {
        let elapsed = data.job["elapsed_s"].clone();
        data.job.insert("window_s".into(), elapsed);
    }
    // Per-node times as durations.
    let start_us = start.map(|s| (s * 1e6) as i64);
    for series in data.nodes.values_mut().flat_map(|m| m.values_mut()) {
        if let (Some(from), Some(to)) = (series.rise_from, series.rise_to) {
            series
                .stats
                .insert("rise_s".into(), (to - from) as f64 / 1e6);
        }
        if let (Some(at), Some(start)) = (series.cliff_at, start_us) {
            series
                .stats
                .insert("cliff_after_s".into(), (at - start) as f64 / 1e6);
        }
    }
    // The worst node, per metric.
    let mut folded: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for (stat, fold) in JOB_STAT_FOLDS {
        let mut values: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for metrics in data.nodes.values() {
            for (metric, series) in metrics {
                if let Some(v) = series.stats.get(stat).filter(|v| v.is_finite()) {
                    values.entry(metric).or_default().push(*v);
                }
            }
        }
        for (metric, v) in values {
            let x = match fold {
                Fold::Min => v.iter().copied().fold(f64::INFINITY, f64::min),
                Fold::Max => v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                Fold::Mean => v.iter().sum::<f64>() / v.len() as f64,
            };
            folded
                .entry(metric.to_string())
                .or_default()
                .insert(stat.to_string(), x);
        }
    }
    for (metric, stats) in folded {
        data.across.entry(metric).or_default().extend(stats);
    }
}
