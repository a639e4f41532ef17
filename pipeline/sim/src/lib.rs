//! A deterministic simulator of a small cluster's day of finished jobs.
//!
//! Given a seed, it produces the same jobs every time: users, partitions, node lists, CPU counts,
//! exit statuses (successes, failures, cancellations, out-of-memory kills), array tasks and
//! requeued runs, and a few job names with hostile bytes (newlines, terminal escapes, invalid
//! UTF-8), as users really type them. For each job it gives the exact environment that Slurm
//! would pass to `EpilogSlurmctld`, and to `Epilog` on each node when the simulated site runs both
//! hooks, so the demo and the tests drive the real hook binary the way Slurm does.
//!
//! Later stages extend this module with telemetry for the same jobs.
#![cfg_attr(test, allow(clippy::unwrap_used))]

use jobsight_base::choice::{Choice, Named};
use slurm_hooks::hostlist;

/// SplitMix64: tiny, fast, and stable forever (unlike a library RNG whose stream may change with
/// a version bump), so a seed means the same day in every release.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0); the modulo bias is irrelevant at these sizes.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// How a simulated job ended, with the values Slurm 22.05 puts in the epilog environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Completed,
    Failed { code: u32 },
    Cancelled,
    OutOfMemory,
    Timeout,
}

impl Outcome {
    /// (`SLURM_JOB_EXIT_CODE` raw wait status, `SLURM_JOB_EXIT_CODE2`), as observed on Slurm 22.05.8:
    /// a cancelled or timed-out job looks like a success to the epilog; sacct tells them apart.
    pub fn exit_env(self) -> (u32, String) {
        match self {
            Outcome::Completed | Outcome::Cancelled | Outcome::Timeout => (0, "0:0".into()),
            Outcome::Failed { code } => (code << 8, format!("{code}:0")),
            Outcome::OutOfMemory => (253, "0:125".into()),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Failed { .. } => "failed",
            Outcome::Cancelled => "cancelled",
            Outcome::OutOfMemory => "out_of_memory",
            Outcome::Timeout => "timeout",
        }
    }
}

/// One simulated finished job run.
#[derive(Debug, Clone)]
pub struct SimJob {
    pub job_id: u64,
    pub array: Option<(u64, u64)>,
    pub restart_count: u32,
    pub user: String,
    pub uid: u32,
    pub account: String,
    pub partition: String,
    pub name: Vec<u8>,
    pub work_dir: Vec<u8>,
    pub nodes: Vec<String>,
    pub cpus_per_node: u32,
    pub outcome: Outcome,
    /// Whether the simulated site also runs the node `Epilog` for this job.
    pub node_epilogs: bool,
    /// Seconds after the simulated day's midnight (UTC).
    pub submit_s: u64,
    pub start_s: u64,
    pub end_s: u64,
    pub time_limit_s: u64,
    pub req_mem_mb: u64,
    pub gpus: u32,
    /// What the job's telemetry shows: the ground truth recorded in `labels`.
    pub behaviour: Behaviour,
    /// The application it runs and how this run of it behaves when healthy (its profile with
    /// this run's input size and jitter applied).
    pub app: AppProfile,
    /// Memory the run holds per node when healthy, in MiB (the request is this times the
    /// user's margin).
    pub mem_footprint_mb: u64,
    /// The job it was submitted to wait for (`--dependency=afterok:ID`), when it is the next
    /// step of a chain.
    pub dependency: Option<u64>,
}

/// What an application looks like when it runs well. A day of one application is no test of
/// models that must hold on applications they never saw (issue 20), and no real cluster has every
/// job use the same share of its memory request; so each application has its own level of CPU
/// work, instructions per cycle, memory per core and bandwidth, reads and writes (with
/// checkpoints), metadata and network traffic. Figures at input size 1; the simulator varies each
/// run's input size (memory) and jitters its levels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AppProfile {
    pub name: &'static str,
    /// Share of its cores' time the application computes.
    pub effort: f64,
    /// Instructions per cycle.
    pub ipc: f64,
    /// Memory bandwidth per busy core, bytes/s.
    pub mem_bw_per_core: f64,
    /// Resident memory per allocated core, bytes.
    pub mem_per_core: f64,
    /// Steady reads and writes, bytes/s per node.
    pub disk_read: f64,
    pub disk_write: f64,
    /// A checkpoint every so many seconds (0: none), written for 30 s at `checkpoint_write` bytes/s.
    pub checkpoint_every_s: u64,
    pub checkpoint_write: f64,
    /// File-system metadata operations per second per node.
    pub metadata: f64,
    /// Network bytes/s per node of a multi-node run.
    pub net: f64,
}

/// The simulated cluster's applications: molecular dynamics (two codes), a Python training
/// script, plane-wave DFT, a weather model, sequence search. Levels are of the kind each code
/// shows in published job-level monitoring (compute-bound and cache-friendly MD, bandwidth-bound
/// DFT, read-heavy search with many small files, periodic history output and restarts).
pub const PROFILES: [AppProfile; 6] = [
    AppProfile {
        name: "lammps",
        effort: 0.93,
        ipc: 1.6,
        mem_bw_per_core: 0.8e9,
        mem_per_core: 0.6e9,
        disk_read: 0.2e6,
        disk_write: 0.5e6,
        checkpoint_every_s: 600,
        checkpoint_write: 60e6,
        metadata: 2.0,
        net: 60e6,
    },
    AppProfile {
        name: "gromacs",
        effort: 0.96,
        ipc: 2.3,
        mem_bw_per_core: 0.4e9,
        mem_per_core: 0.3e9,
        disk_read: 0.1e6,
        disk_write: 0.2e6,
        checkpoint_every_s: 900,
        checkpoint_write: 30e6,
        metadata: 1.0,
        net: 40e6,
    },
    AppProfile {
        name: "train.py",
        effort: 0.78,
        ipc: 1.2,
        mem_bw_per_core: 0.9e9,
        mem_per_core: 2.5e9,
        disk_read: 40e6,
        disk_write: 0.1e6,
        checkpoint_every_s: 1800,
        checkpoint_write: 100e6,
        metadata: 40.0,
        net: 20e6,
    },
    AppProfile {
        name: "vasp",
        effort: 0.9,
        ipc: 1.1,
        mem_bw_per_core: 1.2e9,
        mem_per_core: 2.0e9,
        disk_read: 1e6,
        disk_write: 2e6,
        checkpoint_every_s: 0,
        checkpoint_write: 0.0,
        metadata: 5.0,
        net: 120e6,
    },
    AppProfile {
        name: "wrf",
        effort: 0.85,
        ipc: 1.4,
        mem_bw_per_core: 0.9e9,
        mem_per_core: 1.2e9,
        disk_read: 2e6,
        disk_write: 5e6,
        checkpoint_every_s: 1200,
        checkpoint_write: 120e6,
        metadata: 10.0,
        net: 80e6,
    },
    AppProfile {
        name: "blast",
        effort: 0.8,
        ipc: 1.9,
        mem_bw_per_core: 0.25e9,
        mem_per_core: 1.5e9,
        disk_read: 30e6,
        disk_write: 1e6,
        checkpoint_every_s: 0,
        checkpoint_write: 0.0,
        metadata: 60.0,
        net: 1e6,
    },
];

/// A job's simulated behaviour. Anomalies follow the HPAS generators' signatures on one node
/// during a window; inefficiencies are the patterns the rules look for, over the whole job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    Healthy,
    /// An HPAS anomaly on node `node` (index into the job's nodes) from `from_s` to `to_s`
    /// seconds after the job's start.
    Anomaly {
        kind: Anomaly,
        node: usize,
        from_s: u64,
        to_s: u64,
    },
    Inefficiency(Inefficiency),
}

/// The anomaly types the simulator generates are the vocabulary every stage shares.
pub use jobsight_base::anomaly::Anomaly;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inefficiency {
    /// No activity at all: the job is certainly not working.
    Hung,
    /// One allocated node does nothing.
    IdleNode,
    /// One core busy per node, whatever was allocated.
    Serial,
    /// The first node works far harder than the others.
    Imbalance,
    /// Uses a small share of the memory it asked for.
    MemOverRequest,
    /// GPUs allocated and never used.
    IdleGpu,
}

impl Inefficiency {
    pub const ALL: [Inefficiency; 6] = [
        Inefficiency::Hung,
        Inefficiency::IdleNode,
        Inefficiency::Serial,
        Inefficiency::Imbalance,
        Inefficiency::MemOverRequest,
        Inefficiency::IdleGpu,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Inefficiency::Hung => "hung",
            Inefficiency::IdleNode => "idle_node",
            Inefficiency::Serial => "serial",
            Inefficiency::Imbalance => "imbalance",
            Inefficiency::MemOverRequest => "mem_overrequest",
            Inefficiency::IdleGpu => "idle_gpu",
        }
    }
}

/// The shape of the simulated cluster.
#[derive(Debug, Clone)]
pub struct ClusterSpec {
    pub name: String,
    pub nodes: usize,
    pub cpus_per_node: u32,
    pub jobs: usize,
    /// Share of jobs whose site also runs `Epilog` on every node (duplicates to deduplicate).
    pub node_epilog_share: f64,
    /// Share of jobs with an injected HPAS anomaly, at most [`MAX_ANOMALY_SHARE`]; another 15 %
    /// show an inefficiency and the rest are healthy. A training or evaluation day raises it so
    /// that every anomaly type has enough jobs.
    pub anomaly_share: f64,
    /// The first job id; the day's jobs count up from it. Simulating several days with different
    /// first ids gives the unique ids a real cluster has.
    pub first_job_id: u64,
    /// An application ([`PROFILES`]) nobody runs this day: a training day without it, to judge
    /// the models on an application they never saw.
    pub without_application: Option<&'static str>,
    /// Where jobs run: see [`Placement`].
    pub placement: Placement,
}

/// How the simulator puts jobs on nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Placement {
    /// A random run of neighbouring nodes at the drawn start, whatever else runs there (jobs
    /// share nodes, so a node can carry several jobs' telemetry at once). What every seed gave
    /// before the other placement existed: the tests and the demo depend on it.
    #[default]
    Anywhere,
    /// As a scheduler would: in order of drawn start, each job on the nodes free earliest,
    /// starting when they are all free (later than drawn when the cluster is full, so jobs wait
    /// in the queue). No node runs two jobs at once: with enough jobs, a fully busy cluster.
    FreeNodes,
}

impl Choice for Placement {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: Placement::Anywhere,
            name: "anywhere",
            help: "A random run of neighbouring nodes at the drawn start, whatever else runs there (jobs share nodes, so a node can carry several jobs' telemetry at once). What every seed gave before the other placement existed: the tests and the demo depend on it",
        },
        Named {
            value: Placement::FreeNodes,
            name: "free-nodes",
            help: "As a scheduler would: in order of drawn start, each job on the nodes free earliest, starting when they are all free (later than drawn when the cluster is full, so jobs wait in the queue). No node runs two jobs at once: with enough jobs, a fully busy cluster",
        },
    ];
}

/// Memory of a simulated node, MiB.
pub const NODE_MEM_MB: u64 = 256 * 1024;

/// The largest job id Slurm gives (`job_id` is a 32-bit number, federation bits included).
pub const MAX_JOB_ID: u64 = u32::MAX as u64;

impl ClusterSpec {
    /// Whether the day's job ids fit below [`MAX_JOB_ID`]: each job takes at most one id (array
    /// tasks one each, a requeued job's two runs one), plus the tasks of an array cut at the end.
    pub fn check(&self) -> Result<(), String> {
        let last = self
            .first_job_id
            .checked_add(self.jobs as u64 + 4)
            .filter(|last| *last <= MAX_JOB_ID);
        if let Some(app) = self.without_application
            && !PROFILES.iter().any(|p| p.name == app)
        {
            return Err(format!("no simulated application is called {app:?}"));
        }
        match last {
            Some(_) if self.first_job_id >= 1 => Ok(()),
            _ => Err(format!(
                "job ids from {} for {} jobs do not fit in Slurm's 1..={MAX_JOB_ID}",
                self.first_job_id, self.jobs
            )),
        }
    }
}

/// The inefficient jobs keep their 15 %, so anomalies can take at most the rest.
pub const MAX_ANOMALY_SHARE: f64 = 0.85;

impl Default for ClusterSpec {
    fn default() -> Self {
        ClusterSpec {
            name: "demo".into(),
            nodes: 16,
            cpus_per_node: 32,
            jobs: 200,
            node_epilog_share: 0.1,
            anomaly_share: 0.15,
            first_job_id: 1000,
            without_application: None,
            placement: Placement::Anywhere,
        }
    }
}

const USERS: [(&str, u32, &str); 5] = [
    ("alice", 2001, "chem"),
    ("bob", 2002, "physics"),
    ("carol", 2003, "physics"),
    ("dave", 2004, "bio"),
    ("erin", 2005, "ml"),
];
const PARTITIONS: [&str; 4] = ["cpu", "cpu", "bigmem", "gpu"];

/// Names that users really submit and that must not trick anything downstream.
const HOSTILE_NAMES: [&[u8]; 4] = [
    b"run\nSubject: forged",
    b"\x1b[2J\x1b[31mred",
    b"caf\xe9-latin1",
    b"x\",\"job_id\":1,\"y\":\"",
];

/// Generates the day's jobs for `spec` from `seed`. The ids count up from `spec.first_job_id`;
/// [`ClusterSpec::check`] says whether they fit (callers with user-given specs check first).
pub fn simulate_day(spec: &ClusterSpec, seed: u64) -> Vec<SimJob> {
    let mut rng = Rng::new(seed);
    let node_names: Vec<String> = (1..=spec.nodes).map(|i| format!("node{i:02}")).collect();
    let mut jobs = Vec::with_capacity(spec.jobs);
    let mut next_id = spec.first_job_id;
    let profiles: Vec<AppProfile> = PROFILES
        .iter()
        .filter(|p| Some(p.name) != spec.without_application)
        .copied()
        .collect();
    while jobs.len() < spec.jobs {
        let (user, uid, account) = *rng.pick(&USERS);
        let partition = rng.pick(&PARTITIONS).to_string();
        let width = 1 + rng.below(4.min(spec.nodes as u64)) as usize;
        let first = rng.below((spec.nodes - width + 1) as u64) as usize;
        let nodes = node_names[first..first + width].to_vec();
        let cpus_per_node = 1 + rng.below(spec.cpus_per_node as u64) as u32;
        let outcome = match rng.below(100) {
            0..=74 => Outcome::Completed,
            75..=84 => Outcome::Failed {
                code: *rng.pick(&[1, 2, 3, 127]),
            },
            85..=89 => Outcome::Cancelled,
            90..=94 => Outcome::Timeout,
            _ => Outcome::OutOfMemory,
        };
        let profile = *rng.pick(&profiles);
        let app = profile.name;
        let name = if rng.chance(0.03) {
            rng.pick(&HOSTILE_NAMES).to_vec()
        } else {
            format!("{app}-{}", rng.below(100)).into_bytes()
        };
        let work_dir = format!("/home/{user}/{app}").into_bytes();
        let node_epilogs = rng.chance(spec.node_epilog_share);
        let base = SimJob {
            job_id: next_id,
            array: None,
            restart_count: 0,
            user: user.into(),
            uid,
            account: account.into(),
            partition,
            name,
            work_dir,
            nodes,
            cpus_per_node,
            outcome,
            node_epilogs,
            submit_s: 0,
            start_s: 0,
            end_s: 0,
            time_limit_s: 0,
            req_mem_mb: 0,
            gpus: 0,
            behaviour: Behaviour::Healthy,
            app: profile,
            mem_footprint_mb: 0,
            dependency: None,
        };
        if rng.chance(0.05) {
            // An array job: tasks get consecutive job ids, the first id is the array's.
            let tasks = 2 + rng.below(3);
            for task in 0..tasks {
                let mut job = base.clone();
                job.job_id = next_id + task;
                job.array = Some((next_id, task));
                jobs.push(job);
            }
            next_id += tasks;
        } else if rng.chance(0.02) {
            // A requeued job: the interrupted run and the final run. Slurm 22.05 already reports the
            // incremented restart count in the interrupted run's epilog, so both say 1.
            let mut interrupted = base.clone();
            interrupted.restart_count = 1;
            interrupted.outcome = Outcome::Cancelled;
            let mut last = base;
            last.restart_count = 1;
            jobs.push(interrupted);
            jobs.push(last);
            next_id += 1;
        } else {
            jobs.push(base);
            next_id += 1;
        }
    }
    jobs.truncate(spec.jobs);
    assign_time_and_behaviour(&mut jobs, spec.anomaly_share, seed);
    if spec.placement == Placement::FreeNodes {
        place_on_free_nodes(&mut jobs, &node_names);
    }
    assign_sizes(&mut jobs, seed);
    assign_dependencies(&mut jobs, seed);
    jobs
}

/// [`Placement::FreeNodes`]: in order of drawn start (then job id), each job takes as many
/// nodes as it drew, those free earliest (the lowest-numbered of equals), and starts when the
/// last of them is free if that is after its drawn start; its run time is kept. Its wait
/// (start − submit) grows by the delay, as in a full queue.
fn place_on_free_nodes(jobs: &mut [SimJob], node_names: &[String]) {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| (jobs[i].start_s, jobs[i].job_id));
    // (free from, node index): the node free earliest first.
    let mut free: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize)>> = (0..node_names
        .len())
        .map(|n| std::cmp::Reverse((0, n)))
        .collect();
    for i in order {
        let job = &mut jobs[i];
        let width = job.nodes.len().min(node_names.len());
        let mut taken: Vec<(u64, usize)> = (0..width)
            .filter_map(|_| free.pop().map(|std::cmp::Reverse(slot)| slot))
            .collect();
        let ready = taken.iter().map(|&(at, _)| at).max().unwrap_or(0);
        let run_s = job.end_s - job.start_s;
        job.start_s = job.start_s.max(ready);
        job.end_s = job.start_s + run_s;
        taken.sort_by_key(|&(_, n)| n);
        job.nodes = taken.iter().map(|&(_, n)| node_names[n].clone()).collect();
        for (_, n) in taken {
            free.push(std::cmp::Reverse((job.end_s, n)));
        }
    }
}

/// The share of the day's node-time (`nodes` × 24 h from the day's start) that `jobs` run on,
/// counting a node once per job on it (above 1 when jobs share nodes).
pub fn busy_share(jobs: &[SimJob], nodes: usize) -> f64 {
    const DAY_S: u64 = 86_400;
    let busy: u64 = jobs
        .iter()
        .map(|j| (j.end_s.min(DAY_S).saturating_sub(j.start_s.min(DAY_S))) * j.nodes.len() as u64)
        .sum();
    busy as f64 / (nodes as u64 * DAY_S).max(1) as f64
}

/// For each of `jobs` (one day's runs), in order: how many other jobs ran on at least one of its
/// nodes while it ran, exactly, from the placement (what `jobs.neighbours` asks Slurm for). Runs
/// of one job id (a requeued job's) are not each other's neighbours; a neighbour on several of
/// its nodes counts once.
pub fn neighbours(jobs: &[&SimJob]) -> Vec<u32> {
    let mut on_node: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for (i, job) in jobs.iter().enumerate() {
        for node in &job.nodes {
            on_node.entry(node.as_str()).or_default().push(i);
        }
    }
    let mut met: Vec<Vec<u64>> = vec![Vec::new(); jobs.len()];
    for runs in on_node.values_mut() {
        runs.sort_by_key(|&i| (jobs[i].start_s, i));
        for (k, &i) in runs.iter().enumerate() {
            // Runs after this one start no earlier: they overlap it until one starts at its end.
            for &j in runs[k + 1..]
                .iter()
                .take_while(|&&j| jobs[j].start_s < jobs[i].end_s)
            {
                if jobs[i].job_id != jobs[j].job_id {
                    met[i].push(jobs[j].job_id);
                    met[j].push(jobs[i].job_id);
                }
            }
        }
    }
    met.into_iter()
        .map(|mut ids| {
            ids.sort_unstable();
            ids.dedup();
            ids.len() as u32
        })
        .collect()
}

/// Chains, from a fourth random stream (so nothing a seed gave before changes): about one job in
/// ten (not an array task) becomes the next step of a chain, waiting (`afterok`) for the same
/// user's job that completed last before it started. Times stay as they were: the dependency
/// was met when the job started.
fn assign_dependencies(jobs: &mut [SimJob], seed: u64) {
    let mut rng = Rng::new(seed ^ 0x5eed_c4a1_0000_0003);
    for i in 0..jobs.len() {
        if jobs[i].array.is_some() || !rng.chance(0.1) {
            continue;
        }
        let parent = jobs
            .iter()
            .filter(|p| {
                p.user == jobs[i].user
                    && p.job_id != jobs[i].job_id
                    && p.outcome == Outcome::Completed
                    && p.end_s <= jobs[i].start_s
            })
            .max_by_key(|p| (p.end_s, p.job_id))
            .map(|p| p.job_id);
        jobs[i].dependency = parent;
    }
}

/// Each run's input size, levels and memory request, from a third random stream (so the jobs,
/// times and behaviours of a seed stay what they were). Memory: the application's footprint
/// per core times the run's input size (a log-uniform ×0.5–×2); the request is the footprint times
/// the user's margin: most ask for a little more (×1.1–×1.6), some for much more (×1.6–×3),
/// a tenth for far more (×3–×10, a copied template), rounded up to whole GiB per node; a job that
/// runs out of memory asked for less than it needs, and one that over-requests for twenty times.
fn assign_sizes(jobs: &mut [SimJob], seed: u64) {
    let mut rng = Rng::new(seed ^ 0x5eed_a990_0000_0002);
    let uniform = |rng: &mut Rng| rng.below(1_000_001) as f64 / 1e6;
    let log_uniform =
        |rng: &mut Rng, lo: f64, hi: f64| (lo.ln() + uniform(rng) * (hi.ln() - lo.ln())).exp();
    let node_mb = NODE_MEM_MB as f64;
    for job in jobs.iter_mut() {
        let jitter = |rng: &mut Rng, scale: f64| 1.0 + (uniform(rng) * 2.0 - 1.0) * scale;
        job.app.effort = (job.app.effort * jitter(&mut rng, 0.03)).min(0.99);
        job.app.ipc *= jitter(&mut rng, 0.08);
        job.app.mem_bw_per_core *= jitter(&mut rng, 0.15);
        let input = log_uniform(&mut rng, 0.5, 2.0);
        let oom = job.outcome == Outcome::OutOfMemory;
        let footprint_mb = (job.app.mem_per_core * job.cpus_per_node as f64 * input / 1048576.0)
            .clamp(if oom { 2048.0 } else { 256.0 }, 0.9 * node_mb);
        let margin = match job.behaviour {
            _ if oom => log_uniform(&mut rng, 0.6, 0.95),
            Behaviour::Inefficiency(Inefficiency::MemOverRequest) => 20.0,
            _ => match rng.below(10) {
                0..=5 => log_uniform(&mut rng, 1.1, 1.6),
                6..=8 => log_uniform(&mut rng, 1.6, 3.0),
                _ => log_uniform(&mut rng, 3.0, 10.0),
            },
        };
        // Whole GiB: up for a margin, down for a run that will not fit.
        let gib = footprint_mb * margin / 1024.0;
        let per_node_gib = if oom { gib.floor() } else { gib.ceil() }.clamp(1.0, node_mb / 1024.0);
        job.mem_footprint_mb = footprint_mb.round() as u64;
        job.req_mem_mb = per_node_gib as u64 * 1024 * job.nodes.len() as u64;
    }
}

/// Timing, requests and behaviour, from a second random stream so that adding them did not change
/// the jobs' identities for a given seed. The draw in percent is healthy below the anomalies'
/// band and inefficient from 85 on, so the default share (15 %) gives the days it always gave.
fn assign_time_and_behaviour(jobs: &mut [SimJob], anomaly_share: f64, seed: u64) {
    let mut rng = Rng::new(seed ^ 0x5eed_7e1e_0000_0001);
    let anomalies_from = 85 - (anomaly_share.clamp(0.0, MAX_ANOMALY_SHARE) * 100.0).round() as u64;
    for job in jobs.iter_mut() {
        job.submit_s = rng.below(22 * 3600);
        job.start_s = job.submit_s + rng.below(3600);
        // Durations from minutes to hours, most of them short (a log-uniform draw).
        let minutes =
            (2.0f64 * (1.0 + rng.below(1000) as f64 / 1000.0 * 5.5).exp()).min(600.0) as u64;
        let requested = minutes * 60 * (1 + rng.below(4));
        job.time_limit_s = (requested / 600 + 1) * 600;
        let duration = match job.outcome {
            Outcome::Timeout => job.time_limit_s,
            _ => (minutes * 60).max(120),
        };
        job.end_s = job.start_s + duration;
        // Once the memory request (now [`assign_sizes`]); the draw stays so that a seed's
        // behaviours stay what they were.
        let _ = rng.below(16);
        job.gpus = if job.partition == "gpu" { 4 } else { 0 };
        job.behaviour = match rng.below(100) {
            draw if draw < anomalies_from => Behaviour::Healthy,
            0..=84 => {
                let kind = *rng.pick(&Anomaly::ALL);
                let from_s = duration / 5 + rng.below((duration / 5).max(1));
                let to_s = (from_s + duration / 3).min(duration);
                Behaviour::Anomaly {
                    kind,
                    node: rng.below(job.nodes.len() as u64) as usize,
                    from_s,
                    to_s,
                }
            }
            _ => {
                let mut kind = *rng.pick(&Inefficiency::ALL);
                if (kind == Inefficiency::IdleGpu && job.gpus == 0)
                    || (matches!(kind, Inefficiency::IdleNode | Inefficiency::Imbalance)
                        && job.nodes.len() < 2)
                {
                    kind = Inefficiency::Serial;
                }
                Behaviour::Inefficiency(kind)
            }
        };
    }
}

/// An environment as (name, raw bytes) pairs.
pub type HookEnv = Vec<(String, Vec<u8>)>;

/// The environments Slurm gives the hooks for `job`: one for `EpilogSlurmctld`, then one per node
/// for `Epilog` when the site runs it. Variable sets follow what Slurm 22.05.8 passes.
pub fn hook_environments(cluster: &str, job: &SimJob) -> Vec<HookEnv> {
    let (raw, text) = job.outcome.exit_env();
    let nodelist = hostlist::compress(&job.nodes);
    let common = |context: &str| -> HookEnv {
        let mut env: HookEnv = vec![
            ("SLURM_CLUSTER_NAME".into(), cluster.into()),
            ("SLURM_JOB_ID".into(), job.job_id.to_string().into()),
            ("SLURM_JOBID".into(), job.job_id.to_string().into()),
            ("SLURM_JOB_USER".into(), job.user.clone().into()),
            ("SLURM_JOB_UID".into(), job.uid.to_string().into()),
            ("SLURM_JOB_GID".into(), job.uid.to_string().into()),
            ("SLURM_JOB_ACCOUNT".into(), job.account.clone().into()),
            ("SLURM_JOB_PARTITION".into(), job.partition.clone().into()),
            (
                "SLURM_JOB_NUM_NODES".into(),
                job.nodes.len().to_string().into(),
            ),
            (
                "SLURM_JOB_CPUS_PER_NODE".into(),
                format!("{}(x{})", job.cpus_per_node, job.nodes.len()).into(),
            ),
            ("SLURM_JOB_EXIT_CODE".into(), raw.to_string().into()),
            ("SLURM_JOB_EXIT_CODE2".into(), text.clone().into()),
            ("SLURM_JOB_DERIVED_EC".into(), "0".into()),
            (
                "SLURM_JOB_RESTART_COUNT".into(),
                job.restart_count.to_string().into(),
            ),
            ("SLURM_JOB_WORK_DIR".into(), job.work_dir.clone()),
            ("SLURM_SCRIPT_CONTEXT".into(), context.into()),
        ];
        env.push(("PWD".into(), "/var/log/slurm".into()));
        env
    };
    let mut ctld = common("epilog_slurmctld");
    ctld.push(("SLURM_JOB_NAME".into(), job.name.clone()));
    ctld.push(("SLURM_JOB_GROUP".into(), job.user.clone().into()));
    ctld.push(("SLURM_JOB_NODELIST".into(), nodelist.clone().into()));
    if let Some((array_id, task)) = job.array {
        ctld.push(("SLURM_ARRAY_JOB_ID".into(), array_id.to_string().into()));
        ctld.push(("SLURM_ARRAY_TASK_ID".into(), task.to_string().into()));
    }
    let mut envs = vec![ctld];
    if job.node_epilogs {
        for node in &job.nodes {
            let mut env = common("epilog_slurmd");
            env.push(("SLURM_NODELIST".into(), nodelist.clone().into()));
            env.push(("SLURMD_NODENAME".into(), node.clone().into()));
            env.push(("SLURM_CONF".into(), "/etc/slurm/slurm.conf".into()));
            envs.push(env);
        }
    }
    envs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_must_fit_below_slurms_largest() {
        let spec = |first_job_id, jobs| ClusterSpec {
            first_job_id,
            jobs,
            ..ClusterSpec::default()
        };
        assert!(spec(1000, 200).check().is_ok());
        assert!(spec(MAX_JOB_ID - 204, 200).check().is_ok());
        assert!(spec(MAX_JOB_ID - 10, 200).check().is_err());
        assert!(spec(u64::MAX, 1).check().is_err());
        assert!(spec(0, 1).check().is_err());
        let jobs = simulate_day(&spec(MAX_JOB_ID - 204, 200), 7);
        assert!(jobs.iter().all(|j| j.job_id <= MAX_JOB_ID));
    }

    #[test]
    fn a_seed_is_a_day() {
        let spec = ClusterSpec::default();
        let a = simulate_day(&spec, 7);
        let b = simulate_day(&spec, 7);
        assert_eq!(a.len(), 200);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert_ne!(format!("{a:?}"), format!("{:?}", simulate_day(&spec, 8)));
    }

    /// On free nodes no node runs two jobs at once, every job keeps its width, run time and
    /// behaviour and starts no earlier than drawn; the same seed anywhere gives the same jobs as
    /// before except their nodes and times, and a full cluster makes jobs wait.
    #[test]
    fn free_node_placement_never_shares_a_node() {
        let anywhere = ClusterSpec {
            nodes: 8,
            jobs: 300,
            ..ClusterSpec::default()
        };
        let free = ClusterSpec {
            placement: Placement::FreeNodes,
            ..anywhere.clone()
        };
        let (a, f) = (simulate_day(&anywhere, 3), simulate_day(&free, 3));
        assert_eq!(a.len(), f.len());
        let mut delayed = 0;
        for (a, f) in a.iter().zip(&f) {
            assert_eq!((a.job_id, a.nodes.len()), (f.job_id, f.nodes.len()));
            assert_eq!(a.end_s - a.start_s, f.end_s - f.start_s);
            assert_eq!(format!("{:?}", a.behaviour), format!("{:?}", f.behaviour));
            assert!(f.start_s >= a.start_s && f.submit_s == a.submit_s);
            delayed += usize::from(f.start_s > a.start_s);
        }
        assert!(
            delayed > 100,
            "300 jobs on 8 nodes must queue: {delayed} waited"
        );
        for node in (1..=8).map(|i| format!("node{i:02}")) {
            let mut runs: Vec<(u64, u64)> = (f.iter())
                .filter(|j| j.nodes.contains(&node))
                .map(|j| (j.start_s, j.end_s))
                .collect();
            runs.sort();
            assert!(
                runs.windows(2).all(|w| w[0].1 <= w[1].0),
                "{node}: {runs:?}"
            );
        }
        assert!(busy_share(&a, 8) > 1.0, "anywhere, jobs share nodes");
        let (a_runs, f_runs): (Vec<&SimJob>, Vec<&SimJob>) =
            (a.iter().collect(), f.iter().collect());
        assert!(neighbours(&f_runs).iter().all(|&n| n == 0));
        assert!(neighbours(&a_runs).iter().filter(|&&n| n > 0).count() > 200);
        // Not 1: the cluster starts the day empty, and a job's first-free nodes idle until its
        // last one is free (no backfill), which on 8 nodes is a large share.
        let busy = busy_share(&f, 8);
        assert!(busy <= 1.0 && busy > 0.7, "{busy}");
    }

    /// Neighbours are the other jobs on one of a job's nodes at the same time, each counted
    /// once; one that starts when the job ends is none.
    #[test]
    fn neighbours_overlap_on_a_node() {
        let mut jobs = simulate_day(&ClusterSpec::default(), 1);
        jobs.truncate(4);
        let run = |job: &mut SimJob, id, nodes: &[&str], start_s, end_s| {
            job.job_id = id;
            job.nodes = nodes.iter().map(|n| n.to_string()).collect();
            (job.start_s, job.end_s) = (start_s, end_s);
        };
        run(&mut jobs[0], 1, &["a", "b"], 0, 100);
        run(&mut jobs[1], 2, &["a", "b"], 50, 150);
        run(&mut jobs[2], 3, &["b"], 100, 200);
        run(&mut jobs[3], 4, &["c"], 0, 300);
        let refs: Vec<&SimJob> = jobs.iter().collect();
        assert_eq!(neighbours(&refs), [1, 2, 1, 0]);
    }

    #[test]
    fn environments_follow_slurm() {
        let spec = ClusterSpec {
            jobs: 400,
            node_epilog_share: 1.0,
            ..ClusterSpec::default()
        };
        let jobs = simulate_day(&spec, 1);
        let job = jobs.iter().find(|j| j.nodes.len() == 3).unwrap();
        let envs = hook_environments("demo", job);
        assert_eq!(envs.len(), 4, "one controller epilog and one per node");
        let has = |env: &HookEnv, var: &str| env.iter().any(|(k, _)| k == var);
        assert!(has(&envs[0], "SLURM_JOB_NODELIST") && !has(&envs[0], "SLURMD_NODENAME"));
        assert!(has(&envs[1], "SLURM_NODELIST") && !has(&envs[1], "SLURM_JOB_NAME"));
        assert!(jobs.iter().any(|j| j.array.is_some()));
        assert!(jobs.iter().any(|j| j.outcome == Outcome::OutOfMemory));
    }
}
