//! The simulator as a telemetry source: a simulated day's jobs ([`jobsight_sim`]) turned into
//! `jobs`, `telemetry` and `labels` rows through the same builders, sink and atomic part writes as
//! the real sources.
//!
//! Each job gets one series per node and metric at a fixed step (default 10 s) over its run time.
//! Healthy jobs use their allocation steadily. Anomalies follow the HPAS generators on one node
//! during a window: memleak (memory grows linearly), memeater (a large jump), cpuoccupy (extra CPU
//! and load), cachecopy (IPC halves, memory bandwidth up), membw (bandwidth triples, IPC down),
//! iobandwidth (writes and iowait), iometadata (metadata operations), netoccupy (traffic). The
//! inefficiencies cover the whole job: hung (no activity), an idle node, serial code (one core per
//! node), imbalance, memory over-requested, idle GPUs. Every job's truth goes to `labels` (`none`
//! for healthy jobs), with the window and node of an anomaly.
//!
//! Each job's `jobs` row also carries what Slurm's accounting would say it used (seff's CPU time
//! and memory peak, one `batch` step, no energy plugin), computed from the same levels as its
//! telemetry without the noise, and its `neighbours`: the other jobs on its nodes while it ran,
//! exactly, from the placement ([`jobsight_sim::neighbours`]). The simulated telemetry is the
//! job's own share of its nodes, so the two agree, shared node or not.
//!
//! `jobsight simulate` writes a whole day; `jobsight demo` writes the jobs it claimed from the spool.

use std::path::Path;

use chrono::{DateTime, NaiveDate, Utc};

use super::{JobRow, LabelRow, TelemetrySink};
use jobsight_sim::{Anomaly, Behaviour, ClusterSpec, Inefficiency, Outcome, Rng, SimJob};
use jobsight_warehouse::catalog::{self, CatalogError};

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

/// Start of the simulated day, as microseconds since the epoch.
fn day_start_micros(day: NaiveDate) -> i64 {
    day.and_hms_opt(0, 0, 0)
        .map_or(0, |t| t.and_utc().timestamp_micros())
}

fn at(day: NaiveDate, seconds: u64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(day_start_micros(day) + seconds as i64 * 1_000_000)
        .unwrap_or_default()
}

fn state(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Completed => "COMPLETED",
        Outcome::Failed { .. } => "FAILED",
        Outcome::Cancelled => "CANCELLED",
        Outcome::OutOfMemory => "OUT_OF_MEMORY",
        Outcome::Timeout => "TIMEOUT",
    }
}

/// The UTC day a simulated job ends on: its `jobs` row's partition.
fn end_day(job: &SimJob, day: NaiveDate) -> NaiveDate {
    at(day, job.end_s).date_naive()
}

/// What Slurm's accounting would say a simulated job used over its run, summed over its one
/// step as seff reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Usage {
    cpu_user_s: f64,
    cpu_system_s: f64,
    /// The step's memory, the sum of its tasks' (one per node) peaks, MiB.
    mem_peak_mb: f64,
    /// The largest task's peak, MiB.
    max_rss_mb: f64,
}

/// The job's usage from the levels its telemetry is drawn from ([`JobShape::levels`]) without
/// the noise: per node, its work's CPU share of the node's cores and the kernel's, plus what an
/// anomaly on that node adds while it runs (cpuoccupy's busy cores, iometadata's kernel time, a
/// leak's growth, a memeater's jump, memory capped at the node's).
fn usage(job: &SimJob, spec: &ClusterSpec) -> Usage {
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

/// The `jobs` row of a simulated job (what sacct would say about it), with `neighbours` other
/// jobs on its nodes while it ran ([`jobsight_sim::neighbours`]).
pub fn job_row(
    job: &SimJob,
    spec: &ClusterSpec,
    neighbours: Option<u32>,
    day: NaiveDate,
) -> JobRow {
    let (raw, _) = job.outcome.exit_env();
    let used = usage(job, spec);
    JobRow {
        cluster: spec.name.clone(),
        job_id: job.job_id.to_string(),
        array_job_id: job.array.map(|(a, _)| a.to_string()),
        array_task_id: job.array.map(|(_, t)| t as u32),
        het_job_id: None,
        het_job_offset: None,
        restart_count: job.restart_count,
        user: Some(job.user.clone()),
        account: Some(job.account.clone()),
        partition: Some(job.partition.clone()),
        qos: Some("normal".into()),
        num_nodes: Some(job.nodes.len() as u32),
        nodes: Some(slurm_hooks::hostlist::compress(&job.nodes)),
        cpus: Some(job.cpus_per_node * job.nodes.len() as u32),
        gpus: Some(job.gpus),
        req_mem_mb: Some(job.req_mem_mb),
        time_limit_s: Some(job.time_limit_s),
        submit: Some(at(day, job.submit_s)),
        start: Some(at(day, job.start_s)),
        end: at(day, job.end_s),
        state: Some(state(job.outcome).into()),
        exit_code: Some(((raw >> 8) & 0xff) as i32),
        exit_signal: Some((raw & 0x7f) as i32),
        name: Some(String::from_utf8_lossy(&job.name).into_owned()),
        source: "simulator".into(),
        dependency: job.dependency.map(|p| format!("afterok:{p}")),
        acct_cpu_user_s: Some(used.cpu_user_s),
        acct_cpu_system_s: Some(used.cpu_system_s),
        acct_cpu_total_s: Some(used.cpu_user_s + used.cpu_system_s),
        acct_mem_peak_mb: Some(used.mem_peak_mb),
        acct_max_rss_mb: Some(used.max_rss_mb),
        // No energy plugin on the simulated cluster, and no GPU figures in its accounting (its
        // GPU jobs have DCGM's series).
        acct_energy_j: None,
        acct_gpu_util_max_pct: None,
        acct_gpu_mem_max_mb: None,
        acct_steps: Some(1),
        neighbours,
        note: None,
    }
}

/// The ground truth of a simulated job.
pub fn label_row(job: &SimJob, day: NaiveDate) -> LabelRow {
    let (anomaly, start, end, params) = match job.behaviour {
        Behaviour::Healthy => ("none".to_string(), job.start_s, job.end_s, None),
        Behaviour::Anomaly {
            kind,
            node,
            from_s,
            to_s,
        } => (
            kind.name().to_string(),
            job.start_s + from_s,
            job.start_s + to_s,
            Some(format!("node={}", job.nodes[node])),
        ),
        Behaviour::Inefficiency(kind) => (kind.name().to_string(), job.start_s, job.end_s, None),
    };
    LabelRow {
        job_id: job.job_id.to_string(),
        anomaly,
        start: Some(at(day, start)),
        end: Some(at(day, end)),
        params,
        source: "simulator".into(),
        labelled_by: None,
        labelled_at: None,
    }
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

/// What writing simulated jobs did.
#[derive(Debug, Default)]
pub struct Written {
    pub jobs: usize,
    pub telemetry_rows: u64,
    pub files: usize,
}

/// Writes `jobs` (jobs, telemetry, labels) into the warehouse at `data`. `part` names this batch
/// of jobs: writing the same jobs with the same name again replaces them.
#[allow(clippy::too_many_arguments)]
pub fn write_jobs(
    data: &Path,
    jobs: &[&SimJob],
    spec: &ClusterSpec,
    day: NaiveDate,
    step_s: u64,
    metrics: usize,
    seed: u64,
    part: &str,
    mut progress: impl FnMut(usize, usize),
) -> Result<Written, CatalogError> {
    let names = metric_names(metrics);
    let mut sink = TelemetrySink::new(data, part, 4 * catalog::ROW_GROUP_ROWS);
    let mut job_rows: std::collections::BTreeMap<NaiveDate, Vec<JobRow>> = Default::default();
    let mut label_rows: std::collections::BTreeMap<NaiveDate, Vec<LabelRow>> = Default::default();
    let neighbours = jobsight_sim::neighbours(jobs);
    for (i, (job, neighbours)) in jobs.iter().zip(neighbours).enumerate() {
        let row = job_row(job, spec, Some(neighbours), day);
        let job_day = row.day();
        let id = row.job_id.clone();
        job_telemetry(
            job,
            spec,
            day,
            step_s,
            &names,
            seed,
            |node, metric, ts, value| sink.push(job_day, &id, node, metric, ts, value),
        )?;
        job_rows.entry(job_day).or_default().push(row);
        label_rows
            .entry(job_day)
            .or_default()
            .push(label_row(job, day));
        progress(i + 1, jobs.len());
    }
    let (files, telemetry_rows) = sink.finish()?;
    let mut written = Written {
        jobs: jobs.len(),
        telemetry_rows,
        files: files.len(),
    };
    for (d, rows) in &job_rows {
        JobRow::write_part(data, *d, part, rows)?;
        written.files += 1;
    }
    for (d, rows) in &label_rows {
        LabelRow::write_part(data, *d, part, rows)?;
        written.files += 1;
    }
    Ok(written)
}

/// A simulated cluster's day as the per-job ingest step's sources: its accounting (what sacct
/// would say) and its node telemetry (what the node exporters would have), so that `jobsight demo`
/// runs the real per-job DAG with no Slurm and no Prometheus.
#[derive(Debug)]
pub struct SimulatedCluster {
    jobs: std::collections::HashMap<(u64, u32), SimJob>,
    /// Each run's neighbours, by job id, restart count and start (a requeued job's runs share
    /// the first two).
    neighbours: std::collections::HashMap<(u64, u32, u64), u32>,
    spec: ClusterSpec,
    day: NaiveDate,
    step_s: u64,
    metrics: Vec<String>,
    seed: u64,
}

impl SimulatedCluster {
    pub fn new(
        jobs: &[SimJob],
        spec: &ClusterSpec,
        day: NaiveDate,
        step_s: u64,
        metrics: usize,
        seed: u64,
    ) -> SimulatedCluster {
        let mut by_run = std::collections::HashMap::new();
        for job in jobs {
            by_run
                .entry((job.job_id, job.restart_count))
                .or_insert_with(|| job.clone());
        }
        let runs: Vec<&SimJob> = jobs.iter().collect();
        let neighbours = runs
            .iter()
            .map(|job| (job.job_id, job.restart_count, job.start_s))
            .zip(jobsight_sim::neighbours(&runs))
            .collect();
        SimulatedCluster {
            jobs: by_run,
            neighbours,
            spec: spec.clone(),
            day,
            step_s,
            metrics: metric_names(metrics),
            seed,
        }
    }

    /// The simulated run of job `job_id` that ran over `[start, end]`.
    /// The run of `job_id` under way at `start`: the run that starts then (a finished job's
    /// fetch), or the one a running job's window begins in (the running DAG's).
    fn run_at(&self, job_id: &str, start: DateTime<Utc>) -> Option<&SimJob> {
        let id: u64 = job_id.parse().ok()?;
        self.jobs.values().find(|j| {
            j.job_id == id
                && at(self.day, j.start_s) <= start
                && start < at(self.day, j.end_s.max(j.start_s + 1))
        })
    }
}

impl super::sources::AccountingSource for SimulatedCluster {
    fn name(&self) -> &'static str {
        "simulator"
    }
    fn job_row(&self, record: &slurm_hooks::SpoolRecord) -> Result<JobRow, String> {
        self.jobs
            .get(&(record.job_id, record.restart_count.unwrap_or(0)))
            .map(|job| {
                let neighbours = self
                    .neighbours
                    .get(&(job.job_id, job.restart_count, job.start_s))
                    .copied();
                job_row(job, &self.spec, neighbours, self.day)
            })
            .ok_or_else(|| format!("job {} is not in the simulated day", record.job_id))
    }
}

impl super::sources::TelemetrySource for SimulatedCluster {
    fn name(&self) -> &'static str {
        "simulator"
    }
    fn ready_at(&self, end: DateTime<Utc>) -> DateTime<Utc> {
        end
    }
    fn fetch(
        &self,
        job_id: &str,
        _cluster: &str,
        _nodes: &[String],
        start: DateTime<Utc>,
        _end: DateTime<Utc>,
        emit: &mut dyn FnMut(&str, &str, i64, f64),
    ) -> Result<u64, String> {
        let job = self
            .run_at(job_id, start)
            .ok_or_else(|| format!("job {job_id} is not in the simulated day"))?;
        let mut rows = 0;
        job_telemetry(
            job,
            &self.spec,
            self.day,
            self.step_s,
            &self.metrics,
            self.seed,
            |node, metric, ts, value| {
                rows += 1;
                emit(node, metric, ts, value);
                Ok(())
            },
        )
        .map_err(|e| e.to_string())?;
        Ok(rows)
    }
}

/// Writes the ground truth of `jobs` into `labels` as part `part` (the answer key a model is
/// evaluated against; no real cluster has one).
pub fn write_labels(
    data: &Path,
    jobs: &[&SimJob],
    day: NaiveDate,
    part: &str,
) -> Result<usize, CatalogError> {
    let mut label_rows: std::collections::BTreeMap<NaiveDate, Vec<LabelRow>> = Default::default();
    for job in jobs {
        let job_day = end_day(job, day);
        label_rows
            .entry(job_day)
            .or_default()
            .push(label_row(job, day));
    }
    for (d, rows) in &label_rows {
        LabelRow::write_part(data, *d, part, rows)?;
    }
    Ok(jobs.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use jobsight_sim::simulate_day;

    fn series(job: &SimJob, spec: &ClusterSpec, metric: &str, node: usize) -> Vec<f64> {
        let day = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let names = metric_names(20);
        let mut out = Vec::new();
        job_telemetry(job, spec, day, 10, &names, 1, |n, m, _, v| {
            if m == metric && n == job.nodes[node] {
                out.push(v);
            }
            Ok(())
        })
        .unwrap();
        out
    }

    fn find(jobs: &[SimJob], want: impl Fn(&SimJob) -> bool) -> &SimJob {
        jobs.iter()
            .find(|j| want(j))
            .expect("the simulated day has such a job")
    }

    #[test]
    fn signatures_show_in_the_series() {
        let spec = ClusterSpec {
            jobs: 2000,
            ..ClusterSpec::default()
        };
        let jobs = simulate_day(&spec, 4);
        // A memory leak grows memory on its node inside its window.
        let leaks: Vec<&SimJob> = jobs
            .iter()
            .filter(|j| {
                matches!(
                    j.behaviour,
                    Behaviour::Anomaly {
                        kind: Anomaly::MemLeak,
                        ..
                    }
                ) && j.end_s - j.start_s > 1200
            })
            .collect();
        assert!(leaks.len() >= 3);
        for leak in leaks {
            let Behaviour::Anomaly {
                node, from_s, to_s, ..
            } = leak.behaviour
            else {
                unreachable!()
            };
            let mem = series(leak, &spec, "mem_used_bytes", node);
            let (a, b) = ((from_s / 10) as usize + 1, (to_s / 10) as usize);
            let before = &mem[..a.saturating_sub(1)];
            let flat = before.iter().cloned().fold(f64::MIN, f64::max)
                - before.iter().cloned().fold(f64::MAX, f64::min);
            assert!(
                mem[b] - mem[a] > 10e9,
                "job {}: grows by > 10 GB in the window",
                leak.job_id
            );
            assert!(
                flat < 0.05 * mem[a],
                "job {}: steady before the window",
                leak.job_id
            );
        }
        // A hung job does nothing.
        let hung = find(&jobs, |j| {
            j.behaviour == Behaviour::Inefficiency(Inefficiency::Hung)
        });
        assert!(series(hung, &spec, "cpu_user", 0).iter().all(|&u| u < 0.01));
        // Serial code keeps one core busy.
        let serial = find(&jobs, |j| {
            j.behaviour == Behaviour::Inefficiency(Inefficiency::Serial) && j.cpus_per_node >= 8
        });
        let core0 = series(serial, &spec, "cpu_core0_util", 0);
        let core1 = series(serial, &spec, "cpu_core1_util", 0);
        assert!(core0.iter().all(|&u| u > 0.9) && core1.iter().all(|&u| u < 0.05));
        // Healthy jobs use their allocation as their application does, and hold their footprint.
        let healthy = find(&jobs, |j| j.behaviour == Behaviour::Healthy);
        let user = series(healthy, &spec, "cpu_user", 0);
        let share = healthy.cpus_per_node as f64 / spec.cpus_per_node as f64;
        let mean = user.iter().sum::<f64>() / user.len() as f64;
        assert!(
            (mean - healthy.app.effort * share).abs() < 0.02 * share + 1e-9,
            "{mean} vs {share}"
        );
        let mem = series(healthy, &spec, "mem_used_bytes", 0);
        let footprint = healthy.mem_footprint_mb as f64 * 1048576.0;
        assert!(
            mem.iter()
                .all(|m| (m - footprint).abs() <= 0.011 * footprint.min(8.0 * 1073741824.0)),
            "{footprint}"
        );
    }

    /// Applications differ, and so do the runs of one: no fixed share of the memory request
    /// (the old simulator gave 174 of 197 jobs exactly 61 %), and most jobs ask for a margin,
    /// some for far more.
    #[test]
    fn applications_and_memory_requests_look_like_a_real_clusters() {
        let spec = ClusterSpec {
            jobs: 2000,
            ..ClusterSpec::default()
        };
        let jobs = simulate_day(&spec, 5);
        let apps: std::collections::BTreeSet<&str> = jobs.iter().map(|j| j.app.name).collect();
        assert_eq!(apps.len(), jobsight_sim::PROFILES.len());
        let shares: Vec<f64> = jobs
            .iter()
            .filter(|j| j.behaviour == Behaviour::Healthy && j.outcome == Outcome::Completed)
            .map(|j| j.mem_footprint_mb as f64 * j.nodes.len() as f64 / j.req_mem_mb as f64)
            .collect();
        let distinct: std::collections::BTreeSet<u64> =
            shares.iter().map(|s| (s * 100.0).round() as u64).collect();
        assert!(distinct.len() > 50, "{} distinct shares", distinct.len());
        let within = |lo: f64, hi: f64| {
            shares.iter().filter(|s| (lo..hi).contains(*s)).count() as f64 / shares.len() as f64
        };
        // About six in ten use 60–90 % (a little margin), a tenth under a third.
        assert!(
            (0.45..0.75).contains(&within(0.55, 0.95)),
            "{}",
            within(0.55, 0.95)
        );
        assert!(
            (0.04..0.2).contains(&within(0.0, 0.33)),
            "{}",
            within(0.0, 0.33)
        );
        // Out-of-memory runs needed more than they asked for.
        assert!(
            jobs.iter()
                .filter(|j| j.outcome == Outcome::OutOfMemory)
                .all(|j| j.mem_footprint_mb * j.nodes.len() as u64 > j.req_mem_mb)
        );
    }

    /// What the simulator's accounting says a job used agrees with its telemetry: the CPU time
    /// is the series' mean share of the node's cores over the run, the memory peak the sum of
    /// the nodes' largest samples, both within the noise; one step, no energy.
    #[test]
    fn accounting_agrees_with_the_telemetry() {
        let spec = ClusterSpec {
            jobs: 400,
            ..ClusterSpec::default()
        };
        let jobs = simulate_day(&spec, 6);
        let day = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
        let healthy = jobs.iter().filter(|j| j.behaviour == Behaviour::Healthy);
        for job in healthy.take(20) {
            let row = job_row(job, &spec, Some(2), day);
            let elapsed = (job.end_s - job.start_s) as f64;
            let (mut cpu_s, mut peak_mb) = (0.0, 0.0);
            for n in 0..job.nodes.len() {
                let busy = mean(&series(job, &spec, "cpu_user", n))
                    + mean(&series(job, &spec, "cpu_system", n));
                cpu_s += busy * spec.cpus_per_node as f64 * elapsed;
                let mem = series(job, &spec, "mem_used_bytes", n);
                peak_mb += mem.into_iter().fold(0.0, f64::max) / 1048576.0;
            }
            let total = row.acct_cpu_total_s.unwrap();
            // The user share's noise is within 0.02 of the job's share of each node, and so
            // is its mean.
            let noise = 0.02 * job.cpus_per_node as f64 * job.nodes.len() as f64 * elapsed;
            assert!(
                (total - cpu_s).abs() <= noise,
                "job {}: {total} s against {cpu_s} s",
                job.job_id
            );
            let peak = row.acct_mem_peak_mb.unwrap();
            assert!(
                (peak - peak_mb).abs() <= 0.011 * peak_mb,
                "job {}: {peak} MiB against {peak_mb} MiB",
                job.job_id
            );
            assert_eq!(
                total,
                row.acct_cpu_user_s.unwrap() + row.acct_cpu_system_s.unwrap()
            );
            assert_eq!(
                (row.acct_steps, row.acct_energy_j, row.neighbours),
                (Some(1), None, Some(2))
            );
        }
    }

    #[test]
    fn every_generated_name_is_a_known_series() {
        let names = metric_names(50);
        assert_eq!(names.len(), 50);
        assert!(names.iter().all(|n| Series::of(n).is_some()), "{names:?}");
        assert_eq!(Series::of("cpu_core33_util"), Some(Series::Core(33.0)));
        assert_eq!(Series::of("cpu_coreX_util"), None);
        assert_eq!(Series::of("bogus"), None);
    }

    #[test]
    fn every_sample_on_the_step_over_the_run() {
        let spec = ClusterSpec::default();
        let jobs = simulate_day(&spec, 2);
        let job = &jobs[0];
        let n = series(job, &spec, "cpu_user", 0).len() as u64;
        assert_eq!(n, (job.end_s - job.start_s) / 10 + 1);
    }
}
