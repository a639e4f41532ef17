//! Everything computed from one job's trimmed samples once they are all read: the `features` rows
//! (per node and metric), the `features_job` rows (per metric across nodes) and the job's
//! `job_summary` row (coverage and whether the job can be judged, CPU duty-cycle category,
//! efficiency figures). A pure function of the job's metadata and samples.
//!
//! Coverage: a series is expected to hold one sample per sampling interval over the job's kept
//! window (`floor(window / interval) + 1`); its interval is its own median spacing, or the job's
//! median interval when it has fewer than two samples. A node's coverage is the median over the
//! job's metrics of received / expected (a metric the node never sent counts 0), and a node of the
//! allocation with no samples at all is missing. A job can be judged when it has telemetry, no
//! node is missing and every node's coverage reaches `min_coverage`; otherwise the reason is
//! recorded, and later stages refuse to judge it.
//!
//! Efficiency figures: a figure whose inputs are missing is left empty, never guessed. Each of the
//! CPU figures (`cpu_used_cores`, `cpu_eff`, `wasted_core_hours`) and the memory figures
//! (`mem_used_max_mb`, `mem_eff`) is taken from one source, recorded as `cpu_eff_source` and
//! `mem_source`, the first of:
//! 1. `telemetry-job`: the job's own series, as a cgroup exporter gives them
//!    (`job_cpu_cores_used`, cores busy per node; `job_mem_rss_bytes`);
//! 2. `accounting`: Slurm's figures for the run, as seff computes them (CPU time of all steps,
//!    so cores used = CPU time / elapsed; the largest step's memory peak). Slurm measures them in
//!    the job's own cgroups or processes, so they are the job's even on a node it shared, and
//!    even on a node it had to itself, where the node's series also count the operating system
//!    and anything else that ran there;
//! 3. `telemetry-node`: its nodes' series (`cpu_user` and `cpu_system` as shares of the node's
//!    CPUs, times `features.cores_per_node`; `mem_used_bytes`), unless the job is known to have
//!    shared a node (`shared` true: then the nodes' use is not the job's, and no figure is
//!    given). Where sharing is unknown the node's figure counts other jobs' work too, so an
//!    efficiency above 1, which cannot be the job's alone, is left empty (the used cores and
//!    memory stand, an upper bound of the job's).
//!
//! Telemetry the job cannot be judged by (missing nodes, low coverage) yields to accounting when
//! the job has it: Slurm's figures cover the whole run. `cpu_eff` = cores used / allocated CPUs,
//! `mem_eff` = memory peak / requested memory. The job's own figures (sources 1 and 2) are
//! clamped to 1: above it they are the sampling's or accounting's noise (seff prints 100.7 % for
//! a job that touched all of its 1 GB), not use beyond the allocation; `cpu_eff_telemetry`,
//! `mem_eff_telemetry` (the job's series where it has them, else its nodes') and `cpu_eff_acct`,
//! `mem_eff_acct` (seff's) keep the raw figures beside it, for an admin comparing the sources.
//! `shared`: the job shared a node with another job during its run (`jobs.neighbours` above 0),
//! or did not (no neighbours, or its CPUs fill its nodes); unknown otherwise.
//! - `time_eff` = elapsed / time limit; `core_hours` = allocated CPUs × elapsed;
//!   `wasted_core_hours` = core_hours × (1 − `cpu_eff`), empty where `cpu_eff` is;
//! - `gpu_util`: the mean of the job's own GPUs' series (`job_gpu_util`, DCGM's series mapped to
//!   the job), else of its nodes' GPUs (`gpu_util`) unless it shared a node, where other jobs
//!   may have held some of them; `gpu_source` says which (`telemetry-job`, `telemetry-node`);
//!   `gpu_mem_used_max_mb`: the peak of the GPUs' memory in use from the same family, and
//!   `gpu_mem_total_mb` the memory of the job's own GPUs (used + free, DCGM's `FB_FREE` beside
//!   `FB_USED`; none from a node's series, which count every GPU of the node);
//! - `energy_kwh`, `energy_source`, `energy_share`: see [`crate::energy`];
//! - `duty_cycle` (SUPReMM): per-core series `cpu_core<N>_util` (utilisation 0–1); a core's duty
//!   cycle is the share of its samples above 0.5. GOOD when no core is below 0.5, LOW when none
//!   reaches 0.1, otherwise PINNED when the cores at or above 0.1 lie within 0.1 of each other (or
//!   a single such core is at or above 0.5), else UNPINNED. Needs at least 5 samples per core.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::Settings;
use super::energy::{Energy, EnergyInputs, energy};
use super::scan::{JobMeta, NamedSeries};
use jobsight_base::series::{Sample, SeriesStats, bin_means, describe};
use jobsight_base::stats::median;

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

/// Where a job's CPU or memory figures were taken from (see the module doc).
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

    /// The source of one figure from what the job has of it: its own series, its nodes' series,
    /// Slurm accounting (see the module doc for the order).
    fn choose(
        job_series: bool,
        node_series: bool,
        accounting: bool,
        shared: Option<bool>,
        judgeable: bool,
    ) -> Option<Source> {
        // The job's own series it cannot be judged by yield to accounting, which covers the run.
        let telemetry_first = judgeable || !accounting;
        if job_series && telemetry_first {
            Some(Source::TelemetryJob)
        } else if accounting {
            Some(Source::Accounting)
        } else if node_series && shared != Some(true) {
            Some(Source::TelemetryNode)
        } else {
            None
        }
    }
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
    pub trimmed: bool,
    /// Sorted by node, then metric.
    pub series: Vec<SeriesRow>,
    /// Sliding windows, when asked for: by node, metric, then start.
    pub windows: Vec<WindowRow>,
    /// Sorted by metric.
    pub across: Vec<AcrossRow>,
    pub summary: Summary,
}

/// tacc_stats' node imbalance of one metric from each node's binned averages: the largest over
/// nodes of the mean over bins (whose top is positive) of (top − node) / top.
pub fn imbalance(nodes: &[BTreeMap<i64, f64>]) -> Option<f64> {
    let mut top: BTreeMap<i64, f64> = BTreeMap::new();
    for node in nodes {
        for (&bin, &v) in node {
            let t = top.entry(bin).or_insert(v);
            *t = t.max(v);
        }
    }
    nodes
        .iter()
        .filter_map(|node| {
            let behind: Vec<f64> = node
                .iter()
                .filter_map(|(bin, &v)| {
                    let t = top[bin];
                    (t > 0.0).then(|| (t - v) / t)
                })
                .collect();
            (!behind.is_empty()).then(|| behind.iter().sum::<f64>() / behind.len() as f64)
        })
        .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))))
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
    let mut bins: BTreeMap<Arc<str>, Vec<BTreeMap<i64, f64>>> = BTreeMap::new();
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
    } = coverage(job, &series, &metrics, settings);
    let across = across_nodes(&series, &metrics, imbalances);
    let judgeable = reason.is_none();
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
        ..efficiency(job, &series, elapsed_us, judgeable, settings)
    };
    JobFeatures {
        job_id: job.job_id.clone(),
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
    let reason = if samples_received == 0 {
        Some("no telemetry at all".to_string())
    } else if missing_count > 0 {
        let names = missing
            .as_ref()
            .map(|m| format!(": {}", m.join(",")))
            .unwrap_or_default();
        Some(format!(
            "no telemetry from {missing_count} of {} nodes{names}",
            nodes_expected.unwrap_or(nodes_seen)
        ))
    } else {
        match worst_node {
            Some((node, c)) if c < settings.min_coverage => Some(format!(
                "coverage {c:.2} on node {node} is below {:.2}",
                settings.min_coverage
            )),
            _ => None,
        }
    };
    Coverage {
        nodes_expected,
        nodes_seen,
        missing,
        samples_received,
        coverage_min,
        coverage_mean,
        reason,
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

/// Whether the job shared a node with another job during its run: yes when other jobs ran on
/// its nodes (`neighbours`, what ran rather than what was asked for, so it also catches nodes
/// oversubscribed by Slurm), no when none did or when its CPUs fill its nodes; unknown otherwise.
fn shared_nodes(job: &JobMeta, cores_per_node: Option<u32>) -> Option<bool> {
    match job.neighbours {
        Some(n) => Some(n > 0),
        None => {
            let fills = match (job.cpus, job.num_nodes, cores_per_node) {
                (Some(cpus), Some(nodes), Some(cores)) if nodes > 0 && cores > 0 => {
                    f64::from(cpus) / f64::from(nodes) >= f64::from(cores)
                }
                _ => false,
            };
            fills.then_some(false)
        }
    }
}

/// One resource's candidate figures: what is used (cores or MiB) by each source, and the
/// amount allocated that the efficiency divides it by.
struct Candidates {
    job_series: Option<f64>,
    node_series: Option<f64>,
    accounting: Option<f64>,
    allocated: Option<f64>,
}

/// One resource's chosen figures.
struct Chosen {
    source: Option<Source>,
    used: Option<f64>,
    /// The share as the user is told it: clamped to 1 for the job's own figures, left empty
    /// above 1 for its nodes'.
    eff: Option<f64>,
    /// The telemetry's share, the job's own series where it has them, else its nodes'.
    telemetry_share: Option<f64>,
    accounting_share: Option<f64>,
}

impl Candidates {
    fn choose(&self, shared: Option<bool>, judgeable: bool) -> Chosen {
        let share = |used: Option<f64>| {
            used.zip(self.allocated.filter(|&a| a > 0.0))
                .map(|(used, allocated)| used / allocated)
        };
        let source = Source::choose(
            self.job_series.is_some(),
            self.node_series.is_some(),
            self.accounting.is_some(),
            shared,
            judgeable,
        );
        let used = match source {
            Some(Source::TelemetryJob) => self.job_series,
            Some(Source::TelemetryNode) => self.node_series,
            Some(Source::Accounting) => self.accounting,
            None => None,
        };
        let chosen_share = share(used);
        let eff = match source {
            // Node-level use above the allocation cannot be the job's alone: other jobs or the
            // system are counted, the job's share is unknown, and a figure above 100 % would
            // tell the user something false (and the findings that quote it would contradict
            // themselves).
            Some(Source::TelemetryNode) => chosen_share.filter(|&eff| eff <= 1.0),
            // The job's own figures above 1 are measurement noise, not use beyond its share.
            _ => chosen_share.map(|eff| eff.min(1.0)),
        };
        Chosen {
            source,
            used,
            eff,
            telemetry_share: share(self.job_series.or(self.node_series)),
            accounting_share: share(self.accounting),
        }
    }
}

/// The summary's efficiency figures (see the module doc); its other fields are left at their
/// defaults for the caller to set. `judgeable`: whether the job's telemetry covers it.
fn efficiency(
    job: &JobMeta,
    series: &[SeriesRow],
    elapsed_us: i64,
    judgeable: bool,
    settings: &Settings,
) -> Summary {
    // By node name: sums over nodes in one order, so that a job's figures are the same in every
    // run (a hash map's order changed the last bit of cpu_eff from run to run).
    let mean_of = |metric: &str| -> BTreeMap<&Arc<str>, f64> {
        series
            .iter()
            .filter(|s| &*s.metric == metric)
            .filter_map(|s| s.stats.mean.map(|m| (&s.node, m)))
            .collect()
    };
    // The sum over nodes of each node's largest sample, in MiB.
    let peak_mb = |metric: &str| -> Option<f64> {
        let maxima: Vec<f64> = series
            .iter()
            .filter(|s| &*s.metric == metric)
            .filter_map(|s| s.stats.max)
            .collect();
        (!maxima.is_empty()).then(|| maxima.iter().sum::<f64>() / 1048576.0)
    };
    let (user, system) = (mean_of("cpu_user"), mean_of("cpu_system"));
    let elapsed_h = elapsed_us as f64 / 3.6e9;
    let cores_per_node = settings.cores_per_node.map(f64::from);
    let node_cores = match cores_per_node {
        Some(cores) if !user.is_empty() => Some(
            user.iter()
                .map(|(node, u)| (u + system.get(node).copied().unwrap_or(0.0)) * cores)
                .sum::<f64>(),
        ),
        _ => None,
    };
    let job_cores = {
        let busy = mean_of("job_cpu_cores_used");
        (!busy.is_empty()).then(|| busy.values().sum::<f64>())
    };
    // Accounting covers the run whose row this is; `acct_steps` 0 says it measured nothing.
    let measured = job.acct_steps != Some(0);
    let usable = |v: Option<f64>| v.filter(|v| v.is_finite() && *v >= 0.0 && measured);
    let run_elapsed_s = (job.end_us - job.run_start_us) as f64 / 1e6;
    let acct_cores = usable(job.acct_cpu_total_s)
        .filter(|_| run_elapsed_s > 0.0)
        .map(|cpu_s| cpu_s / run_elapsed_s);
    let shared = shared_nodes(job, settings.cores_per_node);
    let cpu = Candidates {
        job_series: job_cores,
        node_series: node_cores,
        accounting: acct_cores,
        allocated: job.cpus.map(f64::from),
    }
    .choose(shared, judgeable);
    let mem = Candidates {
        job_series: peak_mb("job_mem_rss_bytes"),
        node_series: peak_mb("mem_used_bytes"),
        accounting: usable(job.acct_mem_peak_mb),
        allocated: job.req_mem_mb.map(|m| m as f64),
    }
    .choose(shared, judgeable);
    let (job_gpu, node_gpu) = (mean_of("job_gpu_util"), mean_of("gpu_util"));
    // The job's own GPUs; else its nodes' GPUs, unless another job may have held some of them.
    let (gpu_source, gpu) = if !job_gpu.is_empty() {
        (Some(Source::TelemetryJob), job_gpu)
    } else if !node_gpu.is_empty() && shared != Some(true) {
        (Some(Source::TelemetryNode), node_gpu)
    } else {
        (None, BTreeMap::new())
    };
    let gpu_family = match gpu_source {
        Some(Source::TelemetryJob) => Some("job_"),
        Some(_) => Some(""),
        None => None,
    };
    let gpu_mem_used_max_mb =
        gpu_family.and_then(|prefix| peak_mb(&format!("{prefix}gpu_mem_used_bytes")));
    // Only of the job's own GPUs: a node's used + free counts every GPU of the node, also those
    // the job did not ask for.
    let gpu_mem_total_mb = if gpu_source == Some(Source::TelemetryJob) {
        let used = mean_of("job_gpu_mem_used_bytes");
        let free = mean_of("job_gpu_mem_free_bytes");
        let per_node: Vec<f64> = used
            .iter()
            .filter_map(|(node, u)| Some(u + free.get(node)?))
            .collect();
        (!per_node.is_empty()).then(|| per_node.iter().sum::<f64>() / 1048576.0)
    } else {
        None
    };
    let watts = |metric: &str| {
        let means = mean_of(metric);
        (!means.is_empty()).then(|| means.values().sum::<f64>())
    };
    let energy = energy(&EnergyInputs {
        acct_energy_j: usable(job.acct_energy_j),
        run_elapsed_s,
        num_nodes: job.num_nodes,
        cpus: job.cpus,
        cores_per_node: settings.cores_per_node,
        shared,
        node_watts: watts("node_power_watts"),
        own_gpu_watts: watts("job_gpu_power_watts"),
        node_gpu_watts: watts("gpu_power_watts"),
    });
    let core_hours = job.cpus.map(|c| f64::from(c) * elapsed_h);
    Summary {
        cpu_used_cores: cpu.used,
        cpu_eff: cpu.eff,
        mem_used_max_mb: mem.used,
        mem_eff: mem.eff,
        time_eff: job
            .time_limit_s
            .filter(|&l| l > 0)
            .map(|limit| elapsed_us as f64 / 1e6 / limit as f64),
        gpu_util: (!gpu.is_empty()).then(|| gpu.values().sum::<f64>() / gpu.len() as f64),
        core_hours,
        // Only beside a CPU efficiency: where that was withheld (a node busier than the job's
        // share, so not the job's alone) the idle time is unknown too, and "0.0 idle" above a
        // finding of a job that hardly used its CPUs would contradict it.
        wasted_core_hours: core_hours
            .zip(cpu.eff)
            .map(|(hours, eff)| hours * (1.0 - eff)),
        cpu_eff_source: cpu.source,
        mem_source: mem.source,
        cpu_eff_telemetry: cpu.telemetry_share,
        mem_eff_telemetry: mem.telemetry_share,
        cpu_eff_acct: cpu.accounting_share,
        mem_eff_acct: mem.accounting_share,
        shared,
        gpu_source,
        gpu_mem_used_max_mb,
        gpu_mem_total_mb,
        energy,
        ..Summary::default()
    }
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
        // A second node that sent nothing: not judgeable; accounting's figures still.
        let half_seen = JobMeta {
            num_nodes: Some(2),
            nodes: Some("n[1-2]".into()),
            cpus: Some(4),
            ..job
        };
        let s = compute(&half_seen, busy_node(), &two_cores()).summary;
        assert!(!s.judgeable);
        assert_eq!(s.cpu_eff_source, Some(Source::Accounting));
        assert_eq!(s.cpu_eff, Some(0.25));
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
        let node = |v: f64| BTreeMap::from([(0, v), (60, v)]);
        assert_eq!(imbalance(&[node(2.0), node(2.0)]), Some(0.0));
        assert_eq!(imbalance(&[node(2.0), node(0.0)]), Some(1.0));
        assert_eq!(imbalance(&[node(0.0)]), None);
    }
}
