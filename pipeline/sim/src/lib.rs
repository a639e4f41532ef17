//! A deterministic simulator of a small cluster's day of finished jobs.
//!
//! Given a seed, it produces the same jobs every time: users, partitions, node lists, CPU counts,
//! exit statuses (successes, failures, cancellations, out-of-memory kills), array tasks and
//! requeued runs, and a few job names with hostile bytes (newlines, terminal escapes, invalid
//! UTF-8), as users really type them. For each job it gives the exact environment that Slurm
//! would pass to `EpilogSlurmctld`, and to `Epilog` on each node when the simulated site runs both
//! hooks, so the demo and the tests drive the real hook binary the way Slurm does.
//!
//! The telemetry of the same jobs is made by the ingest stage's simulated source
//! (`jobsight_ingest::simulator`).
//!
//! The applications the jobs run are in the module `applications`, the draws that make a day's
//! jobs in `day`, and where the jobs run (and which of them share a node) in `placement`.
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod applications;
mod day;
mod placement;

use slurm_hooks::hostlist;

pub use applications::{AppProfile, PROFILES};
pub use day::simulate_day;
pub use placement::{Placement, busy_share, neighbours};

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
