//! Everything computed from one job's trimmed samples once they are all read: the `features` rows
//! (per node and metric), the `features_job` rows (per metric across nodes) and the job's
//! `job_summary` row (coverage and whether the job can be judged, CPU duty-cycle category,
//! efficiency figures). A pure function of the job's metadata and samples.
//!
//! Coverage: a series is expected to hold one sample per sampling interval over the job's kept
//! window (`floor(window / interval) + 1`); its interval is its own median spacing, or the job's
//! median interval when it has fewer than two samples. A node's coverage is the median over the
//! job's metrics of received / expected (a metric the node never sent counts 0), and a node of the
//! allocation with no samples at all is missing. A job can be judged when it has telemetry and at
//! least half of its nodes (one of a one-node job) have coverage of `min_coverage` or more: it is
//! then judged on what is known, a node lost mid-run or one whose exporter was down (named in the
//! job's note by ingest) no longer hides what the other nodes show. Otherwise the reason is
//! recorded, and later stages refuse to judge it.
//!
//! Efficiency figures (CPU, memory, GPU, time, energy) and where each came from: see
//! [`crate::efficiency`].
//!
//! `duty_cycle` (SUPReMM): per-core series `cpu_core<N>_util` (utilisation 0–1); a core's duty
//!   cycle is the share of its samples above 0.5. GOOD when no core is below 0.5, LOW when none
//!   reaches 0.1, otherwise PINNED when the cores at or above 0.1 lie within 0.1 of each other (or
//!   a single such core is at or above 0.5), else UNPINNED. Needs at least 5 samples per core.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::Settings;
pub use super::computed::{AcrossRow, JobFeatures, SeriesRow, Source, Summary, WindowRow};
use super::efficiency::{Covers, efficiency};
use super::scan::{JobMeta, NamedSeries};
use jobsight_base::series::{BinMean, Sample, bin_means, describe};
use jobsight_base::stats::median;

/// tacc_stats' node imbalance of one metric from each node's binned averages: the largest over
/// nodes of the mean over bins (whose top is positive) of (top − node) / top.
///
/// A node takes part in a bin only where it holds at least half as many samples as the bin's
/// fullest node ([`covers_bin`]): a node that started late or stopped early (lost mid-run, or its
/// tasks ended on a site without `PrologFlags=Contain`) is compared where it sent with the others,
/// not on the sliver of a bin its last seconds fell in. Without this, a node lost mid-run was told
/// it worked less than the others whenever a bin began just before it died (seen on the real
/// two-node Slurm).
pub fn imbalance(nodes: &[BTreeMap<i64, BinMean>]) -> Option<f64> {
    let mut most: BTreeMap<i64, u64> = BTreeMap::new();
    for node in nodes {
        for (&bin, b) in node {
            let m = most.entry(bin).or_default();
            *m = (*m).max(b.n);
        }
    }
    // Each node's means in the bins it covered; the rest of the computation sees only these.
    let covered: Vec<Vec<(i64, f64)>> = nodes
        .iter()
        .map(|node| {
            node.iter()
                .filter(|(bin, b)| covers_bin(b.n, most[*bin]))
                .map(|(&bin, b)| (bin, b.mean))
                .collect()
        })
        .collect();
    let mut top: BTreeMap<i64, f64> = BTreeMap::new();
    for &(bin, v) in covered.iter().flatten() {
        let t = top.entry(bin).or_insert(v);
        *t = t.max(v);
    }
    covered
        .iter()
        .filter_map(|node| {
            let behind: Vec<f64> = node
                .iter()
                .filter_map(|(bin, v)| {
                    let t = top[bin];
                    (t > 0.0).then(|| (t - v) / t)
                })
                .collect();
            (!behind.is_empty()).then(|| behind.iter().sum::<f64>() / behind.len() as f64)
        })
        .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))))
}

/// Whether a node with `n` samples in a bin takes part in the bin's imbalance, where the bin's
/// fullest node has `most`: at least half as many (a node sampled at half the others' rate still
/// counts). The reference SQL's `covered` CTE says the same.
pub fn covers_bin(n: u64, most: u64) -> bool {
    2 * n >= most
}

/// The SUPReMM category of the per-core duty cycles (see the module doc).
fn duty_category(duty: &[f64]) -> &'static str {
    if duty.iter().all(|&d| d >= 0.5) {
        return "GOOD";
    }
    let mut high: Vec<f64> = duty.iter().copied().filter(|&d| d >= 0.1).collect();
    if high.is_empty() {
        return "LOW";
    }
    high.sort_by(f64::total_cmp);
    let pinned = if high.len() > 1 {
        high[high.len() - 1] - high[0] < 0.1
    } else {
        high[0] >= 0.5
    };
    if pinned { "PINNED" } else { "UNPINNED" }
}

/// The windows of `spec` that lie wholly inside `[origin, end]`, starting at `origin` and every
/// stride after it, each with its samples (`points` sorted by time). Windows without samples are
/// left out.
fn sliding(
    points: &[Sample],
    origin: i64,
    end: i64,
    spec: super::WindowSpec,
) -> Vec<(i64, Vec<Sample>)> {
    let (width, stride) = (
        spec.window_s as i64 * 1_000_000,
        spec.stride_s as i64 * 1_000_000,
    );
    let mut out = Vec::new();
    let mut first = 0;
    let mut start = origin;
    while start + width <= end.saturating_add(1) {
        // Samples move forward with the window: advance the first index, then take the span.
        while first < points.len() && points[first].0 < start {
            first += 1;
        }
        let last = first + points[first..].partition_point(|p| p.0 < start + width);
        if last > first {
            out.push((start, points[first..last].to_vec()));
        }
        start += stride;
    }
    out
}

/// The core number of a per-core utilisation metric `cpu_core<N>_util`.
fn core_of(metric: &str) -> Option<u32> {
    metric
        .strip_prefix("cpu_core")?
        .strip_suffix("_util")?
        .parse()
        .ok()
}

/// Whether `metric` is a per-core utilisation series (`cpu_core<N>_util`), which the duty cycle
/// reads.
pub fn is_core_metric(metric: &str) -> bool {
    core_of(metric).is_some()
}

/// Computes a job's features from its samples per (node, metric).
pub fn compute(job: &JobMeta, samples: Vec<NamedSeries>, settings: &Settings) -> JobFeatures {
    let bin_us = settings.bin_s.max(1) as i64 * 1_000_000;
    let mut series: Vec<SeriesRow> = Vec::with_capacity(samples.len());
    let mut bins: BTreeMap<Arc<str>, Vec<BTreeMap<i64, BinMean>>> = BTreeMap::new();
    let mut cores: Vec<(u64, u64)> = Vec::new();
    let mut samples = samples;
    samples.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let mut windows = Vec::new();
    for (node, metric, mut points) in samples {
        let idle_below = settings.idle_below.get(&*metric).copied();
        let stats = describe(&mut points, idle_below);
        if let Some(spec) = settings.windows {
            // The kept window's start, or the first sample's for a job kept whole.
            let origin = if job.trimmed {
                job.keep_from_us
            } else {
                job.start_us
            };
            let end = if job.trimmed {
                job.keep_to_us
            } else {
                job.end_us
            };
            for (start_us, mut slice) in sliding(&points, origin, end, spec) {
                windows.push(WindowRow {
                    node: node.clone(),
                    metric: metric.clone(),
                    start_us,
                    end_us: start_us + spec.window_s as i64 * 1_000_000,
                    stats: describe(&mut slice, idle_below),
                });
            }
        }
        bins.entry(metric.clone())
            .or_default()
            .push(bin_means(&points, bin_us));
        if core_of(&metric).is_some() {
            let finite = points.iter().filter(|p| p.1.is_finite());
            let busy = finite.clone().filter(|p| p.1 > 0.5).count() as u64;
            cores.push((finite.count() as u64, busy));
        }
        series.push(SeriesRow {
            node,
            metric,
            stats,
            coverage: None,
        });
    }

    let imbalances: BTreeMap<Arc<str>, Option<f64>> = bins
        .iter()
        .map(|(metric, node_bins)| (metric.clone(), imbalance(node_bins)))
        .collect();
    let mut features = finish(job, series, &imbalances, &cores, settings);
    features.windows = windows;
    features
}

/// The job-level figures from the job's series (sorted by node, then metric; coverage not yet
/// set): each series' coverage, the rows across nodes (with each metric's node imbalance from
/// `imbalances`, computed from the samples by the caller) and the summary. `cores`: for each
/// per-core utilisation series, its finite samples and those above 0.5. The single pass and the
/// features plan ([`super::plan`]) both end here, so the two cannot differ past the samples.
pub fn finish(
    job: &JobMeta,
    mut series: Vec<SeriesRow>,
    imbalances: &BTreeMap<Arc<str>, Option<f64>>,
    cores: &[(u64, u64)],
    settings: &Settings,
) -> JobFeatures {
    let elapsed_us = (job.end_us - job.start_us).max(0);
    let window_us = if job.trimmed {
        job.keep_to_us - job.keep_from_us
    } else {
        elapsed_us
    };
    set_coverage(&mut series, window_us);
    let metrics: BTreeSet<&Arc<str>> = series.iter().map(|s| &s.metric).collect();
    let Coverage {
        nodes_expected,
        nodes_seen,
        missing,
        samples_received,
        coverage_min,
        coverage_mean,
        reason,
        complete,
    } = coverage(job, &series, &metrics, settings);
    let across = across_nodes(&series, &metrics, imbalances);
    let judgeable = reason.is_none();
    // The telemetry's share of the allocation: the nodes it was seen on.
    let telemetry_nodes = nodes_expected
        .filter(|&expected| expected > nodes_seen && nodes_seen > 0)
        .map_or(1.0, |expected| nodes_seen as f64 / expected as f64);
    let summary = Summary {
        elapsed_s: elapsed_us as f64 / 1e6,
        nodes_expected,
        nodes_seen,
        nodes_missing: missing.filter(|m| !m.is_empty()).map(|m| m.join(",")),
        metrics: metrics.len() as u64,
        samples: samples_received,
        coverage_min,
        coverage_mean,
        judgeable,
        not_judgeable_reason: reason,
        duty_cycle: duty_cycle(cores),
        ..efficiency(
            job,
            &series,
            elapsed_us,
            Covers {
                complete,
                telemetry_nodes,
            },
            settings,
        )
    };
    JobFeatures {
        job_id: job.job_id.clone(),
        restart_count: job.restart_count,
        trimmed: job.trimmed,
        series,
        windows: Vec::new(),
        across,
        summary,
    }
}

/// Sets each series' coverage: the samples it holds over those expected in the kept window
/// (`window_us`) at its own interval, or at the job's median interval when it has fewer than two
/// samples.
fn set_coverage(series: &mut [SeriesRow], window_us: i64) {
    let job_interval = median(
        &mut series
            .iter()
            .filter_map(|s| s.stats.interval_s)
            .collect::<Vec<_>>(),
    );
    for row in series {
        let interval = row.stats.interval_s.or(job_interval);
        row.coverage = interval.filter(|&i| i > 0.0).map(|interval| {
            let expected = (window_us as f64 / 1e6 / interval).floor() + 1.0;
            (row.stats.n + row.stats.n_nonfinite) as f64 / expected
        });
    }
}

/// What a job's telemetry covers, for its summary.
struct Coverage {
    nodes_expected: Option<u64>,
    nodes_seen: u64,
    /// The allocated nodes that sent nothing, when the allocation's node list could be read.
    missing: Option<Vec<String>>,
    samples_received: u64,
    /// The lowest and the mean of the nodes' coverage.
    coverage_min: Option<f64>,
    coverage_mean: Option<f64>,
    /// Why the job cannot be judged; `None` when it can.
    reason: Option<String>,
    /// Every allocated node sent telemetry covering the run.
    complete: bool,
}

/// The coverage of the job's nodes from its series (each with its coverage set): a node's is
/// the median over the job's `metrics`, one the node never sent counting 0; and whether the
/// job can be judged (see the module doc).
fn coverage(
    job: &JobMeta,
    series: &[SeriesRow],
    metrics: &BTreeSet<&Arc<str>>,
    settings: &Settings,
) -> Coverage {
    let mut per_node: BTreeMap<&Arc<str>, HashMap<&Arc<str>, f64>> = BTreeMap::new();
    for row in series {
        per_node
            .entry(&row.node)
            .or_default()
            .insert(&row.metric, row.coverage.unwrap_or(0.0));
    }
    let node_coverage: BTreeMap<&Arc<str>, f64> = per_node
        .iter()
        .filter_map(|(node, covered)| {
            let mut values: Vec<f64> = metrics
                .iter()
                .map(|m| covered.get(*m).copied().unwrap_or(0.0))
                .collect();
            median(&mut values).map(|m| (*node, m))
        })
        .collect();
    let allocated: Option<Vec<String>> = job
        .nodes
        .as_deref()
        .and_then(|list| slurm_hooks::hostlist::expand(list).ok());
    let missing: Option<Vec<String>> = allocated.as_ref().map(|all| {
        all.iter()
            .filter(|n| !per_node.keys().any(|seen| ***seen == ***n))
            .cloned()
            .collect()
    });
    let nodes_expected = allocated
        .as_ref()
        .map(|a| a.len() as u64)
        .or(job.num_nodes.map(u64::from));
    let nodes_seen = per_node.len() as u64;
    let samples_received: u64 = series.iter().map(|s| s.stats.n + s.stats.n_nonfinite).sum();
    let coverage_min = node_coverage.values().copied().reduce(f64::min);
    let coverage_mean = (!node_coverage.is_empty())
        .then(|| node_coverage.values().sum::<f64>() / node_coverage.len() as f64);
    let missing_count = match (&missing, nodes_expected) {
        (Some(m), _) => m.len() as u64,
        (None, Some(expected)) => expected.saturating_sub(nodes_seen),
        (None, None) => 0,
    };
    let worst_node = node_coverage
        .iter()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(n, c)| (n.to_string(), *c));
    // Judged on what is known once at least half of the nodes are covered (see the module doc).
    let allocation = nodes_expected.unwrap_or(nodes_seen).max(nodes_seen);
    let covered = node_coverage
        .values()
        .filter(|&&c| c >= settings.min_coverage)
        .count() as u64;
    let enough = covered > 0 && 2 * covered >= allocation;
    let complete = missing_count == 0
        && worst_node
            .as_ref()
            .is_some_and(|(_, c)| *c >= settings.min_coverage);
    let reason = if samples_received == 0 {
        Some("no telemetry at all".to_string())
    } else if enough {
        None
    } else if missing_count > 0 {
        let names = missing
            .as_ref()
            .map(|m| format!(": {}", m.join(",")))
            .unwrap_or_default();
        Some(format!(
            "no telemetry from {missing_count} of {allocation} nodes{names}{}",
            if covered > 0 {
                format!("; {covered} of {allocation} covered, fewer than half")
            } else {
                String::new()
            }
        ))
    } else {
        worst_node.map(|(node, c)| {
            let min = settings.min_coverage;
            if allocation > 1 {
                format!(
                    "coverage below {min:.2} on {} of {allocation} nodes (the lowest {c:.2}, on node {node})",
                    allocation - covered
                )
            } else {
                format!("coverage {c:.2} on node {node} is below {min:.2}")
            }
        })
    };
    Coverage {
        nodes_expected,
        nodes_seen,
        missing,
        samples_received,
        coverage_min,
        coverage_mean,
        reason,
        complete,
    }
}

/// The `features_job` rows: per metric, the figures of its series across the nodes that sent
/// samples of it, with its node imbalance from `imbalances`.
fn across_nodes(
    series: &[SeriesRow],
    metrics: &BTreeSet<&Arc<str>>,
    imbalances: &BTreeMap<Arc<str>, Option<f64>>,
) -> Vec<AcrossRow> {
    let mut across = Vec::new();
    for metric in metrics {
        let rows: Vec<&SeriesRow> = series
            .iter()
            .filter(|s| &s.metric == *metric && s.stats.n > 0)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let means: Vec<f64> = rows.iter().filter_map(|r| r.stats.mean).collect();
        let k = means.len() as f64;
        let mean = means.iter().sum::<f64>() / k;
        let spread = (means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / k).sqrt();
        across.push(AcrossRow {
            metric: (*metric).clone(),
            nodes: rows.len() as u64,
            mean: Some(mean),
            min: rows.iter().filter_map(|r| r.stats.min).reduce(f64::min),
            max: rows.iter().filter_map(|r| r.stats.max).reduce(f64::max),
            node_mean_min: means.iter().copied().reduce(f64::min),
            node_mean_max: means.iter().copied().reduce(f64::max),
            node_cv: (mean != 0.0).then(|| spread / mean),
            imbalance: imbalances.get(*metric).copied().flatten(),
        });
    }
    across
}

/// SUPReMM's category from each core series' finite samples and those above 0.5: none when there
/// are no per-core series or one has fewer than 5 samples.
fn duty_cycle(cores: &[(u64, u64)]) -> Option<&'static str> {
    let duty: Vec<f64> = cores
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|&(n, busy)| busy as f64 / n as f64)
        .collect();
    let enough = cores.iter().all(|(n, _)| *n >= 5);
    (!duty.is_empty() && enough).then(|| duty_category(&duty))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A one-hour job of one CPU on node `n1`, asking for `req_mem_mb`.
    fn one_hour(req_mem_mb: u64) -> JobMeta {
        JobMeta {
            job_id: "1".into(),
            start_us: 0,
            end_us: 3_600_000_000,
            trimmed: false,
            keep_from_us: 0,
            keep_to_us: 3_600_000_000,
            cpus: Some(1),
            num_nodes: Some(1),
            nodes: Some("n1".into()),
            req_mem_mb: Some(req_mem_mb),
            time_limit_s: Some(7200),
            run_start_us: 0,
            ..JobMeta::default()
        }
    }

    /// A steady series of `value` on node `n1`, a sample a minute for an hour.
    fn steady(metric: &str, value: f64) -> NamedSeries {
        let points: Vec<Sample> = (0..60).map(|i| (i * 60_000_000, value)).collect();
        (Arc::from("n1"), Arc::from(metric), points)
    }

    /// The node: two CPUs, one busy (this job's neighbour's), 2 GB in use.
    fn busy_node() -> Vec<NamedSeries> {
        vec![
            steady("cpu_user", 0.5),
            steady("cpu_system", 0.0),
            steady("mem_used_bytes", 2048.0 * 1048576.0),
        ]
    }

    fn two_cores() -> Settings {
        Settings {
            cores_per_node: Some(2),
            ..Settings::default()
        }
    }

    /// A node that used more memory than the job asked for counts more than the job: the
    /// memory efficiency is left empty rather than reported above 100 %; below it stands.
    #[test]
    fn memory_efficiency_never_exceeds_the_request() {
        let samples = || vec![steady("mem_used_bytes", 4096.0 * 1048576.0)];
        let settings = Settings::default();
        let over = compute(&one_hour(1024), samples(), &settings).summary;
        assert_eq!(over.mem_used_max_mb, Some(4096.0));
        assert_eq!(over.mem_eff, None, "4 GB on the node, 1 GB asked for");
        assert_eq!(over.mem_source, Some(Source::TelemetryNode));
        assert_eq!(over.mem_eff_telemetry, Some(4.0), "kept raw beside it");
        assert_eq!(
            over.shared, None,
            "nothing says whether the node was shared"
        );
        let under = compute(&one_hour(8192), samples(), &settings).summary;
        assert_eq!(under.mem_eff, Some(0.5));
    }

    /// The sleeper: a one-CPU job beside a busy one on a two-CPU node. Its node read as
    /// a whole core busy and 2 GB in use; Slurm's accounting says 25 s of CPU and 1031 MB, and
    /// those are its figures, seff's, up to 1 (the raw 1.007 is kept beside it).
    #[test]
    fn a_shared_job_with_accounting_gets_the_accounting_figures() {
        let job = JobMeta {
            acct_cpu_total_s: Some(25.2),
            acct_mem_peak_mb: Some(1031.0),
            acct_steps: Some(2),
            neighbours: Some(1),
            ..one_hour(1024)
        };
        let s = compute(&job, busy_node(), &two_cores()).summary;
        assert_eq!(s.shared, Some(true));
        assert_eq!(s.cpu_eff_source, Some(Source::Accounting));
        assert_eq!(s.mem_source, Some(Source::Accounting));
        assert_eq!(s.cpu_used_cores, Some(25.2 / 3600.0));
        assert_eq!(s.cpu_eff, Some(0.007));
        assert_eq!(s.cpu_eff_acct, Some(0.007));
        assert_eq!(
            s.cpu_eff_telemetry,
            Some(1.0),
            "the node's core, not the job's"
        );
        assert_eq!(s.mem_used_max_mb, Some(1031.0));
        assert_eq!(s.mem_eff, Some(1.0), "seff's 100.7 %, clamped");
        assert_eq!(s.mem_eff_acct, Some(1031.0 / 1024.0));
        assert_eq!(s.mem_eff_telemetry, Some(2.0));
        assert!((s.wasted_core_hours.unwrap() - 0.993).abs() < 1e-12);
        // Accounting that measured no step is no figure, and the node's is not the job's on a
        // node it shared: no figure at all.
        let unmeasured = JobMeta {
            acct_steps: Some(0),
            ..job
        };
        let s = compute(&unmeasured, busy_node(), &two_cores()).summary;
        assert_eq!((s.cpu_eff_source, s.mem_source), (None, None));
        assert_eq!((s.cpu_eff, s.cpu_used_cores), (None, None));
        assert_eq!((s.mem_eff, s.mem_used_max_mb), (None, None));
        assert_eq!(s.cpu_eff_telemetry, Some(1.0), "kept for the comparison");
        // Sharing unknown: the node's figures stand, the efficiency above 1 withheld.
        let unknown = JobMeta {
            neighbours: None,
            ..unmeasured
        };
        let s = compute(&unknown, busy_node(), &two_cores()).summary;
        assert_eq!(s.cpu_eff_source, Some(Source::TelemetryNode));
        assert_eq!((s.mem_eff, s.mem_used_max_mb), (None, Some(2048.0)));
    }

    /// A job that had its node to itself also takes accounting's figures, which are its own
    /// (the node's also count the system); without accounting it keeps its node's.
    #[test]
    fn accounting_wins_over_the_nodes_series_and_they_stand_without_it() {
        let job = JobMeta {
            cpus: Some(2),
            acct_cpu_total_s: Some(3600.0),
            acct_mem_peak_mb: Some(1500.0),
            acct_steps: Some(1),
            neighbours: Some(0),
            ..one_hour(4096)
        };
        let s = compute(&job, busy_node(), &two_cores()).summary;
        assert_eq!(s.shared, Some(false));
        assert_eq!(s.cpu_eff_source, Some(Source::Accounting));
        assert_eq!((s.cpu_used_cores, s.cpu_eff), (Some(1.0), Some(0.5)));
        assert_eq!(s.mem_source, Some(Source::Accounting));
        assert_eq!(
            (s.mem_used_max_mb, s.mem_eff),
            (Some(1500.0), Some(1500.0 / 4096.0))
        );
        assert_eq!(
            (s.cpu_eff_telemetry, s.mem_eff_telemetry),
            (Some(0.5), Some(0.5)),
            "the nodes' figures kept beside them"
        );
        // No accounting: the node's figures, the job having it to itself.
        let unaccounted = JobMeta {
            acct_cpu_total_s: None,
            acct_mem_peak_mb: None,
            acct_steps: None,
            ..job.clone()
        };
        let s = compute(&unaccounted, busy_node(), &two_cores()).summary;
        assert_eq!(s.cpu_eff_source, Some(Source::TelemetryNode));
        assert_eq!((s.cpu_used_cores, s.cpu_eff), (Some(1.0), Some(0.5)));
        assert_eq!(s.mem_source, Some(Source::TelemetryNode));
        assert_eq!((s.mem_used_max_mb, s.mem_eff), (Some(2048.0), Some(0.5)));
        // Its CPUs fill the node: not shared, even without a neighbour count.
        let filled = JobMeta {
            neighbours: None,
            ..unaccounted
        };
        let s = compute(&filled, busy_node(), &two_cores()).summary;
        assert_eq!(
            (s.shared, s.cpu_eff_source),
            (Some(false), Some(Source::TelemetryNode))
        );
        // A second node that sent nothing: judged on the node seen, with accounting's figures,
        // which cover both nodes.
        let half_seen = JobMeta {
            num_nodes: Some(2),
            nodes: Some("n[1-2]".into()),
            cpus: Some(4),
            ..job
        };
        let s = compute(&half_seen, busy_node(), &two_cores()).summary;
        assert!(s.judgeable, "{:?}", s.not_judgeable_reason);
        assert_eq!(s.nodes_missing.as_deref(), Some("n2"));
        assert_eq!(s.cpu_eff_source, Some(Source::Accounting));
        assert_eq!(s.cpu_eff, Some(0.25));
    }

    /// One-CPU-per-node samples of `metric` on `node` at `value`, every 30 s over `[from_s, to_s]`.
    fn node_series(node: &str, metric: &str, value: f64, from_s: i64, to_s: i64) -> NamedSeries {
        let points = (from_s / 30..=to_s / 30)
            .map(|i| (i * 30_000_000, value))
            .collect();
        (node.into(), metric.into(), points)
    }

    /// A job of several nodes is judged on what is known when at least half of its nodes are
    /// covered: a node lost mid-run counts at what it sent, a node that sent nothing counts not
    /// at all (the telemetry's efficiency is of the nodes seen), and a run that ended NODE_FAIL
    /// has no accounting figures (Slurm lost the failed node's with it).
    #[test]
    fn a_job_missing_part_of_its_nodes_is_judged_on_the_nodes_it_has() {
        let two_nodes = JobMeta {
            cpus: Some(2),
            num_nodes: Some(2),
            nodes: Some("n[1-2]".into()),
            acct_cpu_total_s: Some(3600.0),
            acct_steps: Some(2),
            lost_a_node: true,
            ..one_hour(2048)
        };
        let settings = Settings {
            trim_s: 0,
            ..Settings::default()
        };
        // n2 lost at 40 minutes of 60: its coverage is about two thirds.
        let lost = vec![
            node_series("n1", "job_cpu_cores_used", 0.9, 0, 3600),
            node_series("n2", "job_cpu_cores_used", 0.9, 0, 2400),
        ];
        let s = compute(&two_nodes, lost, &settings).summary;
        assert!(s.judgeable, "{:?}", s.not_judgeable_reason);
        assert!(s.coverage_min.unwrap() < 0.8, "{:?}", s.coverage_min);
        assert_eq!(
            s.cpu_eff_source,
            Some(Source::TelemetryJob),
            "not the lost run's accounting"
        );
        assert!((s.cpu_eff.unwrap() - 0.9).abs() < 1e-9, "{:?}", s.cpu_eff);
        assert_eq!(s.cpu_eff_acct, None);
        // n2 sent nothing, and the run has no accounting: n1's work of n1's CPU.
        let missing = vec![node_series("n1", "job_cpu_cores_used", 0.9, 0, 3600)];
        let s = compute(&two_nodes, missing, &settings).summary;
        assert!(s.judgeable);
        assert!((s.cpu_eff.unwrap() - 0.9).abs() < 1e-9, "{:?}", s.cpu_eff);
        assert!((s.mem_eff.is_none()));
        // One node of three covered is not enough: not judged, and the reason names the nodes.
        let three = JobMeta {
            cpus: Some(3),
            num_nodes: Some(3),
            nodes: Some("n[1-3]".into()),
            ..two_nodes.clone()
        };
        let one_of_three = vec![
            node_series("n1", "job_cpu_cores_used", 0.9, 0, 3600),
            node_series("n2", "job_cpu_cores_used", 0.9, 0, 1200),
        ];
        let s = compute(&three, one_of_three, &settings).summary;
        assert!(!s.judgeable);
        assert_eq!(
            s.not_judgeable_reason.as_deref(),
            Some("no telemetry from 1 of 3 nodes: n3; 1 of 3 covered, fewer than half")
        );
        // Two of three partly covered and none missing: the reason says how many and the worst.
        let partial = vec![
            node_series("n1", "job_cpu_cores_used", 0.9, 0, 3600),
            node_series("n2", "job_cpu_cores_used", 0.9, 0, 1200),
            node_series("n3", "job_cpu_cores_used", 0.9, 0, 1800),
        ];
        let s = compute(&three, partial, &settings).summary;
        assert!(!s.judgeable);
        let reason = s.not_judgeable_reason.unwrap();
        assert!(
            reason.starts_with("coverage below 0.80 on 2 of 3 nodes (the lowest 0.3"),
            "{reason}"
        );
        assert!(reason.ends_with("on node n2)"), "{reason}");
    }

    /// The job's own series (a cgroup exporter's) win over the node's and over accounting, on
    /// a shared node too.
    #[test]
    fn job_scope_series_win() {
        let job = JobMeta {
            acct_cpu_total_s: Some(100.0),
            acct_mem_peak_mb: Some(300.0),
            acct_steps: Some(1),
            neighbours: Some(3),
            ..one_hour(1024)
        };
        let mut samples = busy_node();
        samples.push(steady("job_cpu_cores_used", 0.25));
        samples.push(steady("job_mem_rss_bytes", 256.0 * 1048576.0));
        let s = compute(&job, samples, &two_cores()).summary;
        assert_eq!(s.cpu_eff_source, Some(Source::TelemetryJob));
        assert_eq!((s.cpu_used_cores, s.cpu_eff), (Some(0.25), Some(0.25)));
        assert_eq!(s.cpu_eff_telemetry, Some(0.25));
        assert_eq!(s.mem_source, Some(Source::TelemetryJob));
        assert_eq!((s.mem_used_max_mb, s.mem_eff), (Some(256.0), Some(0.25)));
        assert_eq!(s.wasted_core_hours, Some(0.75));
    }

    #[test]
    fn duty_cycle_categories_follow_supremm() {
        assert_eq!(duty_category(&[0.9, 0.6, 0.5]), "GOOD");
        assert_eq!(duty_category(&[0.05, 0.0]), "LOW");
        assert_eq!(duty_category(&[0.95, 0.0, 0.0]), "PINNED");
        assert_eq!(duty_category(&[0.3, 0.0]), "UNPINNED");
        assert_eq!(duty_category(&[0.42, 0.45, 0.0]), "PINNED");
        assert_eq!(duty_category(&[0.2, 0.45, 0.0]), "UNPINNED");
    }

    #[test]
    fn windows_slide_inside_the_kept_span() {
        let spec = super::super::WindowSpec {
            window_s: 60,
            stride_s: 15,
        };
        // Samples every 10 s from 0 to 120 s: windows start at 0, 15, 30, 45, 60 (the last
        // ends at 120 s); a window holds the samples in [start, start + 60 s).
        let points: Vec<Sample> = (0..=12).map(|i| (i * 10_000_000, i as f64)).collect();
        let windows = sliding(&points, 0, 120_000_000, spec);
        let starts: Vec<i64> = windows.iter().map(|w| w.0 / 1_000_000).collect();
        assert_eq!(starts, [0, 15, 30, 45, 60]);
        let values: Vec<f64> = windows[1].1.iter().map(|p| p.1).collect();
        assert_eq!(values, [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
        assert_eq!(windows[4].1.len(), 6);
        // A gap leaves no empty window; a span shorter than a window has none.
        assert_eq!(sliding(&points[..2], 0, 120_000_000, spec).len(), 1);
        assert!(sliding(&points, 0, 30_000_000, spec).is_empty());
    }

    #[test]
    fn imbalance_is_zero_for_equal_nodes_and_one_for_an_idle_node() {
        let bin = |mean: f64| BinMean { mean, n: 30 };
        let node = |v: f64| BTreeMap::from([(0, bin(v)), (60, bin(v))]);
        assert_eq!(imbalance(&[node(2.0), node(2.0)]), Some(0.0));
        assert_eq!(imbalance(&[node(2.0), node(0.0)]), Some(1.0));
        assert_eq!(imbalance(&[node(0.0)]), None);
    }

    /// A node lost mid-run (as on the real two-node Slurm): busy as the other node while it ran,
    /// its last seconds dying (its rate falls to 0) just after a bin began. It is compared over the
    /// bin it covered, not over the few samples of its death; a node that stopped working while it
    /// went on sending still reads behind.
    #[test]
    fn a_node_lost_just_after_a_bin_began_is_not_told_it_worked_less() {
        let series = |values: &[f64]| -> Vec<Sample> {
            values
                .iter()
                .enumerate()
                .map(|(i, &v)| (30_000_000 + i as i64 * 2_000_000, v))
                .collect()
        };
        let bins = |values: &[f64]| bin_means(&series(values), 60_000_000);
        // The run starts 30 s into a minute and works 60 s on node1; node2 works 30 s, and its
        // last three samples, in the next minute's first seconds, fall as it dies.
        let node1 = bins(&[1.0; 30]);
        let mut dying = vec![1.0; 15];
        dying.extend([0.6, 0.2, 0.0]);
        let node2 = bins(&dying);
        assert_eq!(
            node2[&60_000_000].n, 3,
            "node2's sliver of the second minute"
        );
        assert_eq!(imbalance(&[node1.clone(), node2]), Some(0.0));
        // Before this rule the sliver counted as a bin: (0 + (1 − 0.27)) / 2 = 0.37, above
        // `node-imbalance`'s 0.25.
        let idle_after = {
            let mut v = vec![1.0; 15];
            v.extend([0.0; 15]);
            bins(&v)
        };
        assert_eq!(imbalance(&[node1, idle_after]), Some(0.5));
    }
}
