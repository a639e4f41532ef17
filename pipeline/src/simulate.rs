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
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anomaly {
    MemLeak,
    MemEater,
    CpuOccupy,
    CacheCopy,
    MemBw,
    IoBandwidth,
    IoMetadata,
    NetOccupy,
}

impl Anomaly {
    pub const ALL: [Anomaly; 8] = [
        Anomaly::MemLeak,
        Anomaly::MemEater,
        Anomaly::CpuOccupy,
        Anomaly::CacheCopy,
        Anomaly::MemBw,
        Anomaly::IoBandwidth,
        Anomaly::IoMetadata,
        Anomaly::NetOccupy,
    ];

    /// The HPAS name, as in the labels of real data sets.
    pub fn name(self) -> &'static str {
        match self {
            Anomaly::MemLeak => "memleak",
            Anomaly::MemEater => "memeater",
            Anomaly::CpuOccupy => "cpuoccupy",
            Anomaly::CacheCopy => "cachecopy",
            Anomaly::MemBw => "membw",
            Anomaly::IoBandwidth => "iobandwidth",
            Anomaly::IoMetadata => "iometadata",
            Anomaly::NetOccupy => "netoccupy",
        }
    }
}

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
}

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
const APPS: [&str; 6] = ["lammps", "gromacs", "train.py", "vasp", "wrf", "blast"];

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
        let app = *rng.pick(&APPS);
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
    jobs
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
        job.req_mem_mb = 4096 * (1 + rng.below(16)) * job.nodes.len() as u64;
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
