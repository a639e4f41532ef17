//! A job's efficiency figures and the source of each: its own series, its nodes' series or Slurm
//! accounting, chosen from what the job has and what its telemetry covers. Part of the
//! `job_summary` row that [`crate::job`] computes.
//!
//! What is known, when some nodes are missing or partly covered: a node that sent samples counts at
//! what it sent (its mean over them; its peak), and a missing node counts not at all, so the
//! telemetry's figures are divided by the allocation of the nodes seen (CPUs and requested memory
//! times nodes seen / nodes allocated: Slurm's per-node requests spread a job evenly). Slurm
//! accounting, which covers every node of the run, is then preferred where the job has it.
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
//! Telemetry that does not cover every node (missing nodes, low coverage) yields to accounting when
//! the job has it: Slurm's figures cover the whole run. Not for a run that ended `NODE_FAIL`:
//! Slurm lost the failed node's step statistics with the node, so its accounting figures count
//! the other nodes only and are left unused. `cpu_eff` = cores used / allocated CPUs,
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

use std::collections::BTreeMap;
use std::sync::Arc;

use super::Settings;
use super::computed::{SeriesRow, Source, Summary};
use super::energy::{EnergyInputs, energy};
use super::scan::JobMeta;

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

/// The source of one figure from what the job has of it: its own series, its nodes' series,
/// Slurm accounting (see the module doc for the order).
fn choose_source(
    job_series: bool,
    node_series: bool,
    accounting: bool,
    shared: Option<bool>,
    complete: bool,
) -> Option<Source> {
    // The job's own series that miss a node, or part of one, yield to accounting, which
    // covers the run.
    let telemetry_first = complete || !accounting;
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

/// What the job's telemetry covers, for choosing and scaling its figures.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Covers {
    /// Every allocated node sent telemetry covering the run.
    pub complete: bool,
    /// The share of the allocation the telemetry was seen on (nodes seen / nodes allocated).
    pub telemetry_nodes: f64,
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
    fn choose(&self, shared: Option<bool>, covers: Covers) -> Chosen {
        // Accounting's figures are of the whole allocation, the telemetry's of the nodes seen.
        let share_of = |used: Option<f64>, part: f64| {
            used.zip(self.allocated.filter(|&a| a > 0.0))
                .map(|(used, allocated)| used / (allocated * part))
        };
        let share = |used: Option<f64>| share_of(used, covers.telemetry_nodes);
        let source = choose_source(
            self.job_series.is_some(),
            self.node_series.is_some(),
            self.accounting.is_some(),
            shared,
            covers.complete,
        );
        let used = match source {
            Some(Source::TelemetryJob) => self.job_series,
            Some(Source::TelemetryNode) => self.node_series,
            Some(Source::Accounting) => self.accounting,
            None => None,
        };
        let chosen_share = match source {
            Some(Source::Accounting) => share_of(used, 1.0),
            _ => share(used),
        };
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
            accounting_share: share_of(self.accounting, 1.0),
        }
    }
}

/// The summary's efficiency figures (see the module doc); its other fields are left at their
/// defaults for the caller to set. `covers`: what the job's telemetry covers.
pub(crate) fn efficiency(
    job: &JobMeta,
    series: &[SeriesRow],
    elapsed_us: i64,
    covers: Covers,
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
    // Accounting covers the run whose row this is; `acct_steps` 0 says it measured nothing, and a
    // run that lost a node lost that node's figures with it.
    let measured = job.acct_steps != Some(0) && !job.lost_a_node;
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
    .choose(shared, covers);
    let mem = Candidates {
        job_series: peak_mb("job_mem_rss_bytes"),
        node_series: peak_mb("mem_used_bytes"),
        accounting: usable(job.acct_mem_peak_mb),
        allocated: job.req_mem_mb.map(|m| m as f64),
    }
    .choose(shared, covers);
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
