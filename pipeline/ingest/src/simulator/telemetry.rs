//! What a simulated job's telemetry looks like: the metrics the simulator emits, each node's
//! levels at each sample time with their noise, and what the job's behaviour does to them.
//!
//! Healthy jobs use their allocation steadily. Anomalies follow the HPAS generators on one node
//! during a window: memleak (memory grows linearly), memeater (a large jump), cpuoccupy (extra CPU
//! and load), cachecopy (IPC halves, memory bandwidth up), membw (bandwidth triples, IPC down),
//! iobandwidth (writes and iowait), iometadata (metadata operations), netoccupy (traffic). The
//! inefficiencies cover the whole job: hung (no activity), an idle node, serial code (one core per
//! node), imbalance, memory over-requested, idle GPUs.
//!
//! The job's accounting ([`usage`]) is read from the same levels without the noise, so that what
//! the simulated sacct says agrees with the simulated telemetry.

use chrono::NaiveDate;

use super::day_start_micros;
use jobsight_sim::{Anomaly, Behaviour, ClusterSpec, Inefficiency, Rng, SimJob};
use jobsight_warehouse::catalog::CatalogError;

/// Memory of a simulated node.
const NODE_MEM_BYTES: f64 = jobsight_sim::NODE_MEM_MB as f64 * 1048576.0;
/// Memory bandwidth a simulated node can sustain.
const NODE_PEAK_MEM_BW: f64 = 100e9;
/// The share of a node's CPUs a cpuoccupy anomaly keeps busy beyond the job's work.
const CPUOCCUPY_SHARE: f64 = 0.3;
/// The share of a node's CPU time an iometadata anomaly adds in the kernel.
const IOMETADATA_SYSTEM_SHARE: f64 = 0.1;
/// The share of a node's memory a memeater anomaly takes at once.
const MEMEATER_SHARE: f64 = 0.5;

/// The metrics the simulator emits: sixteen node-level series like node_exporter's and the
/// counters the rules need, then per-core utilisation up to `count` in all, then GPU series for
/// jobs with GPUs.
pub fn metric_names(count: usize) -> Vec<String> {
    let mut names: Vec<String> = [
        "cpu_user",
        "cpu_system",
        "cpu_iowait",
        "cpu_idle",
        "load1",
        "mem_used_bytes",
        "mem_available_bytes",
        "net_rx_bytes_per_s",
        "net_tx_bytes_per_s",
        "net_rx_packets_per_s",
        "net_tx_packets_per_s",
        "disk_read_bytes_per_s",
        "disk_write_bytes_per_s",
        "ipc",
        "mem_bw_bytes_per_s",
        "fs_metadata_ops_per_s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let cores = count.saturating_sub(names.len());
    names.extend((0..cores).map(|i| format!("cpu_core{i}_util")));
    names
}

/// A metric name resolved once per job, so the per-sample loop matches on an enum, not a string.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Series {
    CpuUser,
    CpuSystem,
    CpuIowait,
    CpuIdle,
    Load1,
    MemUsed,
    MemAvailable,
    NetBytes,
    NetPackets,
    DiskRead,
    DiskWrite,
    Ipc,
    MemBw,
    FsMetadata,
    /// `cpu_core<i>_util`.
    Core(f64),
}

impl Series {
    /// The series a metric name stands for; `None` for a name the simulator does not produce.
    fn of(name: &str) -> Option<Series> {
        Some(match name {
            "cpu_user" => Series::CpuUser,
            "cpu_system" => Series::CpuSystem,
            "cpu_iowait" => Series::CpuIowait,
            "cpu_idle" => Series::CpuIdle,
            "load1" => Series::Load1,
            "mem_used_bytes" => Series::MemUsed,
            "mem_available_bytes" => Series::MemAvailable,
            "net_rx_bytes_per_s" | "net_tx_bytes_per_s" => Series::NetBytes,
            "net_rx_packets_per_s" | "net_tx_packets_per_s" => Series::NetPackets,
            "disk_read_bytes_per_s" => Series::DiskRead,
            "disk_write_bytes_per_s" => Series::DiskWrite,
            "ipc" => Series::Ipc,
            "mem_bw_bytes_per_s" => Series::MemBw,
            "fs_metadata_ops_per_s" => Series::FsMetadata,
            other => Series::Core(
                other
                    .strip_prefix("cpu_core")?
                    .strip_suffix("_util")?
                    .parse::<u32>()
                    .ok()? as f64,
            ),
        })
    }
}

/// What Slurm's accounting would say a simulated job used over its run, summed over its one
/// step as seff reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Usage {
    pub(super) cpu_user_s: f64,
    pub(super) cpu_system_s: f64,
    /// The step's memory, the sum of its tasks' (one per node) peaks, MiB.
    pub(super) mem_peak_mb: f64,
    /// The largest task's peak, MiB.
    pub(super) max_rss_mb: f64,
}

/// The job's usage from the levels its telemetry is drawn from ([`JobShape::levels`]) without
/// the noise: per node, its work's CPU share of the node's cores and the kernel's, plus what an
/// anomaly on that node adds while it runs (cpuoccupy's busy cores, iometadata's kernel time, a
/// leak's growth, a memeater's jump, memory capped at the node's).
pub(super) fn usage(job: &SimJob, spec: &ClusterSpec) -> Usage {
    let shape = JobShape::new(job, spec);
    let elapsed = job.end_s.saturating_sub(job.start_s) as f64;
    let cores = shape.node_cores;
    let (mut user_s, mut system_s, mut peaks) = (0.0, 0.0, Vec::new());
    for n in 0..job.nodes.len() {
        let effort = shape.effort(n);
        let user = (effort * shape.share).min(1.0);
        user_s += user * cores * elapsed;
        system_s += system_share(shape.share, effort, job.app.effort) * cores * elapsed;
        let mut peak = shape.footprint;
        if let Behaviour::Anomaly {
            kind,
            node,
            from_s,
            to_s,
        } = job.behaviour
            && node == n
        {
            let window = to_s.saturating_sub(from_s) as f64;
            match kind {
                Anomaly::CpuOccupy => {
                    user_s += (1.0 - user).clamp(0.0, CPUOCCUPY_SHARE) * cores * window;
                }
                Anomaly::IoMetadata => system_s += IOMETADATA_SYSTEM_SHARE * cores * window,
                Anomaly::MemLeak => peak += leak_rate(from_s, to_s) * window,
                Anomaly::MemEater => peak += MEMEATER_SHARE * NODE_MEM_BYTES,
                _ => {}
            }
        }
        peaks.push(peak.min(NODE_MEM_BYTES) / 1048576.0);
    }
    Usage {
        cpu_user_s: user_s,
        cpu_system_s: system_s,
        mem_peak_mb: peaks.iter().sum(),
        max_rss_mb: peaks.iter().copied().fold(0.0, f64::max),
    }
}

/// The kernel's share of a node's CPU time for work at `effort` of an application whose normal
/// effort is `app_effort`, on a job holding `share` of the node.
fn system_share(share: f64, effort: f64, app_effort: f64) -> f64 {
    0.02 * share * (effort / app_effort).min(1.0)
}

/// How fast a memleak anomaly from `from_s` to `to_s` grows memory, bytes/s: up to 50 MB/s, at
/// most half the node over the window, so that it is growth, not a cap.
fn leak_rate(from_s: u64, to_s: u64) -> f64 {
    (0.5 * NODE_MEM_BYTES / (to_s - from_s).max(1) as f64).min(50e6)
}

/// Generates one job's telemetry and hands each sample to `emit(node, metric, ts_micros, value)`.
/// Names in `metrics` that [`metric_names`] would not produce are skipped.
pub fn job_telemetry(
    job: &SimJob,
    spec: &ClusterSpec,
    day: NaiveDate,
    step_s: u64,
    metrics: &[String],
    seed: u64,
    mut emit: impl FnMut(&str, &str, i64, f64) -> Result<(), CatalogError>,
) -> Result<(), CatalogError> {
    let shape = JobShape::new(job, spec);
    let duration = job.end_s.saturating_sub(job.start_s);
    let start_micros = day_start_micros(day) + job.start_s as i64 * 1_000_000;
    // The node's GPUs and the job's own, as DCGM's exporter gives both where a prolog maps
    // GPUs to jobs (`--hpc-job-mapping-dir`): on a node the job shares, only the job's own
    // series are its figure (`job_summary.gpu_util`).
    let gpu_metrics = [
        "gpu_util",
        "gpu_mem_used_bytes",
        "gpu_mem_free_bytes",
        "job_gpu_util",
        "job_gpu_mem_used_bytes",
        "job_gpu_mem_free_bytes",
    ];
    // 40 GiB per GPU (an A100-40GB's 40,960 MiB). Every node gets the job's GPUs: the
    // simulator does not spread them over nodes (nor their use, which `gpu_util` shows).
    let gpu_memory = f64::from(job.gpus) * 40.0 * 1024f64.powi(3);
    let series: Vec<(&str, Series)> = metrics
        .iter()
        .filter_map(|m| Series::of(m).map(|s| (m.as_str(), s)))
        .collect();
    for (n, node) in job.nodes.iter().enumerate() {
        let mut rng = Rng::new(seed ^ job.job_id.wrapping_mul(0x9e37_79b9) ^ (n as u64) << 48);
        let effort = shape.effort(n);
        let mut t = 0;
        while t <= duration {
            let ts = start_micros + t as i64 * 1_000_000;
            // The noise is drawn from `rng` in a fixed order (the node's levels, then the cores in
            // the order of `metrics`), so that a seed always gives the same series.
            let levels = shape.levels(n, effort, t, &mut rng);
            for &(metric, kind) in &series {
                let value = shape.value(&levels, kind, &mut rng);
                emit(node, metric, ts, value)?;
            }
            if job.gpus > 0 {
                let gpu = if shape.ineff == Some(Inefficiency::IdleGpu) {
                    0.0
                } else {
                    0.8 * levels.busy
                };
                let (used, free) = (gpu * 40e9, gpu_memory - gpu * 40e9);
                for (metric, value) in gpu_metrics.iter().zip([gpu, used, free, gpu, used, free]) {
                    emit(node, metric, ts, value)?;
                }
            }
            t += step_s.max(1);
        }
    }
    Ok(())
}

/// Uniform noise in `[-scale, scale]`, in steps of a thousandth of `scale`.
fn noise(rng: &mut Rng, scale: f64) -> f64 {
    (rng.below(2001) as f64 / 1000.0 - 1.0) * scale
}

/// What a job's samples are computed from that stays the same over its whole run.
#[derive(Debug)]
struct JobShape<'a> {
    job: &'a SimJob,
    /// Cores of one of the cluster's nodes.
    node_cores: f64,
    /// The share of a node's cores the job holds.
    share: f64,
    /// Resident memory per node when healthy, in bytes.
    footprint: f64,
    /// The inefficiency the whole job shows, if it shows one.
    ineff: Option<Inefficiency>,
}

impl<'a> JobShape<'a> {
    fn new(job: &'a SimJob, spec: &ClusterSpec) -> JobShape<'a> {
        let node_cores = spec.cpus_per_node as f64;
        JobShape {
            job,
            node_cores,
            share: (job.cpus_per_node as f64 / node_cores).min(1.0),
            footprint: job.mem_footprint_mb as f64 * 1048576.0,
            ineff: match job.behaviour {
                Behaviour::Inefficiency(k) => Some(k),
                _ => None,
            },
        }
    }

    /// How hard node `n` works, before anomalies.
    fn effort(&self, n: usize) -> f64 {
        let job = self.job;
        match self.ineff {
            Some(Inefficiency::Hung) => 0.001,
            Some(Inefficiency::IdleNode) if n == job.nodes.len() - 1 => 0.001,
            Some(Inefficiency::Serial) => 1.0 / job.cpus_per_node.max(1) as f64,
            Some(Inefficiency::Imbalance) if n > 0 => 0.2,
            _ => job.app.effort,
        }
    }

    /// Node `n`'s levels `t` seconds into the run: its application's work at `effort` with noise
    /// from `rng`, then the job's anomaly when it is on this node at `t`.
    fn levels(&self, n: usize, effort: f64, t: u64, rng: &mut Rng) -> NodeLevels {
        let (job, app, share) = (self.job, self.job.app, self.share);
        let multi = job.nodes.len() > 1;
        let user = (effort * share + noise(rng, 0.02 * share)).clamp(0.0, 1.0);
        let system = system_share(share, effort, app.effort);
        let iowait = 0.002;
        let load = effort * job.cpus_per_node as f64 + noise(rng, 0.3);
        // Resident memory jitters by tens of MB, not by a share of its size: 1 % of a
        // 200 GB footprint would be a 2 GB swing per sample, which the leak rule reads as growth.
        let footprint = self.footprint;
        let mem = footprint + noise(rng, 0.01 * footprint.min(8.0 * 1073741824.0));
        // The share of the application's normal work this node does.
        let busy = (effort / app.effort).min(1.0);
        let net = if multi { app.net * busy } else { 2e3 } * (1.0 + noise(rng, 0.1));
        let checkpoint = app.checkpoint_every_s > 0
            && t >= app.checkpoint_every_s
            && t % app.checkpoint_every_s < 30;
        let disk_write = (app.disk_write * (1.0 + noise(rng, 0.2))
            + if checkpoint {
                app.checkpoint_write
            } else {
                0.0
            })
            * busy;
        let disk_read = app.disk_read * busy * (1.0 + noise(rng, 0.2));
        let ipc = app.ipc + noise(rng, 0.1);
        let mem_bw =
            (app.mem_bw_per_core * job.cpus_per_node as f64 * busy).min(0.5 * NODE_PEAK_MEM_BW);
        let metadata = app.metadata * busy;
        let mut levels = NodeLevels {
            effort,
            busy,
            user,
            system,
            iowait,
            load,
            mem,
            net,
            disk_read,
            disk_write,
            ipc,
            mem_bw,
            metadata,
            extra_cores: 0.0,
        };
        if let Behaviour::Anomaly {
            kind,
            node: k,
            from_s,
            to_s,
        } = job.behaviour
            && k == n
            && (from_s..=to_s).contains(&t)
        {
            levels.add_anomaly(kind, t, from_s, to_s, self.node_cores);
        }
        levels.mem = levels.mem.min(NODE_MEM_BYTES);
        levels
    }

    /// The value of series `kind` in `levels`; a per-core series draws its noise from `rng`.
    fn value(&self, levels: &NodeLevels, kind: Series, rng: &mut Rng) -> f64 {
        match kind {
            Series::CpuUser => levels.user,
            Series::CpuSystem => levels.system,
            Series::CpuIowait => levels.iowait,
            Series::CpuIdle => levels.idle(),
            Series::Load1 => levels.load.max(0.0),
            Series::MemUsed => levels.mem,
            Series::MemAvailable => NODE_MEM_BYTES - levels.mem,
            Series::NetBytes => levels.net.max(0.0),
            Series::NetPackets => levels.net.max(0.0) / 4000.0,
            Series::DiskRead => levels.disk_read.max(0.0),
            Series::DiskWrite => levels.disk_write.max(0.0),
            Series::Ipc => levels.ipc,
            Series::MemBw => levels.mem_bw,
            Series::FsMetadata => levels.metadata,
            // The job's cores carry its work, the rest idle, unless a cpuoccupy anomaly
            // takes them.
            Series::Core(i) => {
                let serial = self.ineff == Some(Inefficiency::Serial);
                let allocated = self.job.cpus_per_node as f64;
                if i < allocated {
                    // Serial code keeps core 0 busy and leaves the other allocated cores idle.
                    let busy = if serial {
                        if i < 1.0 { 0.98 } else { 0.01 }
                    } else {
                        levels.effort.min(1.0)
                    };
                    (busy + noise(rng, 0.01)).clamp(0.0, 1.0)
                } else if i < allocated + levels.extra_cores {
                    0.95
                } else {
                    0.01
                }
            }
        }
    }
}

/// One node's levels at one sample time, which every series is read from.
#[derive(Debug)]
struct NodeLevels {
    /// How hard the node works, before anomalies (`JobShape::effort`).
    effort: f64,
    /// The share of the application's normal work the node does.
    busy: f64,
    user: f64,
    system: f64,
    iowait: f64,
    load: f64,
    mem: f64,
    net: f64,
    disk_read: f64,
    disk_write: f64,
    ipc: f64,
    mem_bw: f64,
    metadata: f64,
    /// Cores beyond the job's that a cpuoccupy anomaly keeps busy.
    extra_cores: f64,
}

impl NodeLevels {
    /// The idle share of the node's CPU time: what user, system and iowait leave.
    fn idle(&self) -> f64 {
        (1.0 - self.user - self.system - self.iowait).max(0.0)
    }

    /// Applies an HPAS anomaly of `kind` that runs from `from_s` to `to_s` (seconds after the
    /// job's start), at `t` within that window.
    fn add_anomaly(&mut self, kind: Anomaly, t: u64, from_s: u64, to_s: u64, node_cores: f64) {
        match kind {
            // Leaks up to 50 MB/s, at most half the node over the window: growth, not a cap.
            Anomaly::MemLeak => self.mem += leak_rate(from_s, to_s) * (t - from_s) as f64,
            Anomaly::MemEater => self.mem += MEMEATER_SHARE * NODE_MEM_BYTES,
            Anomaly::CpuOccupy => {
                self.extra_cores = CPUOCCUPY_SHARE * node_cores;
                self.user = (self.user + CPUOCCUPY_SHARE).min(1.0);
                self.load += self.extra_cores;
            }
            Anomaly::CacheCopy => {
                self.ipc *= 0.5;
                self.mem_bw *= 1.5;
            }
            Anomaly::MemBw => {
                self.mem_bw = (self.mem_bw * 3.0).min(NODE_PEAK_MEM_BW);
                self.ipc *= 0.7;
            }
            Anomaly::IoBandwidth => {
                self.disk_write += 500e6;
                self.iowait += 0.1;
            }
            Anomaly::IoMetadata => {
                self.metadata += 5000.0;
                self.system += IOMETADATA_SYSTEM_SHARE;
            }
            Anomaly::NetOccupy => self.net += 1e9,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_generated_name_is_a_known_series() {
        let names = metric_names(50);
        assert_eq!(names.len(), 50);
        assert!(names.iter().all(|n| Series::of(n).is_some()), "{names:?}");
        assert_eq!(Series::of("cpu_core33_util"), Some(Series::Core(33.0)));
        assert_eq!(Series::of("cpu_coreX_util"), None);
        assert_eq!(Series::of("bogus"), None);
    }
}
