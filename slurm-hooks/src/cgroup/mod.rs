//! Each Slurm job's own CPU, memory, I/O and task figures on this node, read from the cgroups
//! Slurm puts the job in: what `jobsight-exporter` serves to Prometheus.
//!
//! Slurm 22.05 makes two layouts, both found under one root (default `/sys/fs/cgroup`):
//!
//! - cgroup v1 ([`v1`]): `<root>/{cpuacct,memory,cpuset}/slurm[_<node>]/uid_<uid>/job_<id>/`
//!   `step_<step>/task_<n>`. Debian's Slurm is built with `--enable-multiple-slurmd`, which makes
//!   the prefix `slurm_<node>`; upstream's is `slurm`. Both are searched.
//! - cgroup v2 ([`v2`]): `<root>/system.slice/[<node>_]slurmstepd.scope/job_<id>/step_<step>/`
//!   `user/task_<n>`. The scope's `system/` holds slurmstepd itself and is not a job. The path
//!   holds no uid: it comes from `/proc/<pid>/status` of one of the job's processes, once per job.
//!
//! The layouts are looked for at every scrape, so an exporter started before slurmd finds the
//! jobs all the same. A job is read whole or not at all: one whose directory went away during the
//! read (jobs end at any moment) is left out without a word, while a file that cannot be read or
//! holds a bad number costs only that value and is counted in [`Problems`], with its path.

mod parse;
mod read;
mod v1;
mod v2;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

pub use read::Problems;

/// Where the cgroup file systems are mounted.
pub const DEFAULT_CGROUP_ROOT: &str = "/sys/fs/cgroup";
/// Where the processes' status files are.
pub const DEFAULT_PROC_ROOT: &str = "/proc";
/// USER_HZ on every Linux architecture jobsight runs on; used when the auxiliary vector cannot be
/// read.
pub const DEFAULT_CLOCK_TICKS: u64 = 100;

/// The most entries taken from one directory listing: far above the jobs of a node, and a bound
/// where a job's user can make directories (in cgroup v1 the user owns the job's directory).
pub(crate) const MAX_LISTING: usize = 100_000;
/// The most steps read per job.
pub(crate) const MAX_STEPS: usize = 256;

/// What to read and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub cgroup_root: PathBuf,
    pub proc_root: PathBuf,
    /// Also read each step (`step="batch"`, `"extern"`, `"0"`, ...), not only the job's totals.
    pub steps: bool,
    /// The unit of cgroup v1's `cpuacct.stat` (USER_HZ); see [`clock_ticks_per_second`].
    pub clock_ticks_per_second: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cgroup_root: PathBuf::from(DEFAULT_CGROUP_ROOT),
            proc_root: PathBuf::from(DEFAULT_PROC_ROOT),
            steps: false,
            clock_ticks_per_second: DEFAULT_CLOCK_TICKS,
        }
    }
}

/// USER_HZ of this system, from the auxiliary vector the kernel gave this process (what
/// `sysconf(_SC_CLK_TCK)` reads, without libc), else [`DEFAULT_CLOCK_TICKS`].
pub fn clock_ticks_per_second() -> u64 {
    std::fs::read("/proc/self/auxv")
        .ok()
        .and_then(|auxv| parse::auxv_clock_ticks(&auxv))
        .unwrap_or(DEFAULT_CLOCK_TICKS)
}

/// The figures of one cgroup (a job or a step). `None` where the file is absent (a controller
/// that is off, an older kernel, v1 has no I/O) or its value was bad.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub cpu_user_seconds: Option<f64>,
    pub cpu_system_seconds: Option<f64>,
    pub cpu_total_seconds: Option<f64>,
    /// CPUs of the cgroup's cpuset.
    pub cpus: Option<u64>,
    pub memory_rss_bytes: Option<u64>,
    pub memory_cache_bytes: Option<u64>,
    pub memory_shmem_bytes: Option<u64>,
    pub memory_used_bytes: Option<u64>,
    /// The memory limit (Princeton's `cgroup_memory_total_bytes`).
    pub memory_limit_bytes: Option<u64>,
    /// v1 `memory.failcnt`; v2 `memory.events` `oom` (times the limit was hit).
    pub memory_fail_count: Option<u64>,
    pub memory_peak_bytes: Option<u64>,
    pub oom_kills: Option<u64>,
    pub io_read_bytes: Option<u64>,
    pub io_write_bytes: Option<u64>,
    /// Threads in the cgroup and below it.
    pub tasks: Option<u64>,
}

/// One job's figures on this node.
#[derive(Debug, Clone, PartialEq)]
pub struct JobUsage {
    pub job_id: u64,
    /// The Slurm node whose tree holds the job, where the tree names it (`slurm_<node>`,
    /// `<node>_slurmstepd.scope`: several slurmd on one host); `None` for the host's one slurmd.
    pub node: Option<String>,
    /// The job's user: from the v1 path, or from a process of the job under v2 (unknown until
    /// one of its processes has been seen).
    pub uid: Option<u32>,
    pub total: Usage,
    /// Each step by name, sorted; empty unless [`Config::steps`].
    pub steps: Vec<(String, Usage)>,
}

/// A job's cgroup v1 directories, one per controller that has the job.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct V1Dirs {
    pub cpuacct: Option<PathBuf>,
    pub memory: Option<PathBuf>,
    pub cpuset: Option<PathBuf>,
}

/// Where a job's figures are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    V1 { uid: u32, dirs: V1Dirs },
    V2 { dir: PathBuf },
}

/// A job found on this node, before its figures are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobCgroup {
    pub job_id: u64,
    /// As [`JobUsage::node`].
    pub node: Option<String>,
    pub layout: Layout,
}

/// A job on one node: a job of several nodes run by several slurmd of one host is found once
/// under each of them.
pub(crate) type JobKey = (u64, Option<String>);

/// One scrape's result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scrape {
    /// Sorted by job id, then node.
    pub jobs: Vec<JobUsage>,
    pub problems: Problems,
}

/// Reads the jobs' cgroups, scrape after scrape, remembering each v2 job's user.
#[derive(Debug)]
pub struct Collector {
    config: Config,
    uid_of_job: HashMap<JobKey, u32>,
    /// The job ids of SLUID-named job directories (Slurm 26.05 on cgroup v2).
    job_of_sluid: HashMap<String, u64>,
    errors_total: u64,
}

impl Collector {
    pub fn new(mut config: Config) -> Collector {
        if config.clock_ticks_per_second == 0 {
            config.clock_ticks_per_second = DEFAULT_CLOCK_TICKS;
        }
        Collector {
            config,
            uid_of_job: HashMap::new(),
            job_of_sluid: HashMap::new(),
            errors_total: 0,
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Values skipped since the collector was made: unreadable files and bad numbers.
    pub fn errors_total(&self) -> u64 {
        self.errors_total
    }

    /// Finds the jobs and reads them.
    pub fn collect(&mut self) -> Scrape {
        let mut problems = Problems::default();
        let found = self.discover(&mut problems);
        let jobs = self.read_jobs(found, &mut problems);
        self.errors_total = self.errors_total.saturating_add(problems.count);
        Scrape { jobs, problems }
    }

    /// The jobs under the root, in both layouts, sorted by job id and node. A job of several
    /// nodes run by several slurmd of this host (`slurm_<node>` prefixes, `<node>_slurmstepd`
    /// scopes) is found once per node. Should a job appear twice on one node (a v1 and a v2
    /// tree), the first found is kept: v1 before v2, names in sorted order.
    pub fn discover(&mut self, problems: &mut Problems) -> Vec<JobCgroup> {
        let mut found: BTreeMap<JobKey, JobCgroup> = BTreeMap::new();
        v1::discover(&self.config.cgroup_root, problems, &mut found);
        v2::discover(
            &self.config.cgroup_root,
            &self.config.proc_root,
            &mut self.job_of_sluid,
            problems,
            &mut found,
        );
        found.into_values().collect()
    }

    /// Reads the jobs `discover` found; those gone meanwhile are left out.
    pub fn read_jobs(&mut self, found: Vec<JobCgroup>, problems: &mut Problems) -> Vec<JobUsage> {
        let steps = self.config.steps;
        let ticks = self.config.clock_ticks_per_second;
        let mut out = Vec::with_capacity(found.len());
        for job in found {
            let (total, step_usages, uid) = match &job.layout {
                Layout::V1 { uid, dirs } => {
                    let Some((total, step_usages)) = v1::read_job(dirs, ticks, steps, problems)
                    else {
                        continue;
                    };
                    (total, step_usages, Some(*uid))
                }
                Layout::V2 { dir } => {
                    let root = &self.config.cgroup_root;
                    let Some((total, step_usages)) = v2::read_job(dir, root, steps, problems)
                    else {
                        continue;
                    };
                    let uid = self.v2_uid((job.job_id, job.node.clone()), dir, problems);
                    (total, step_usages, uid)
                }
            };
            out.push(JobUsage {
                job_id: job.job_id,
                node: job.node,
                uid,
                total,
                steps: step_usages,
            });
        }
        // Forget the users of jobs that ended, so the cache holds only this node's jobs.
        let present: HashSet<JobKey> = out
            .iter()
            .map(|job| (job.job_id, job.node.clone()))
            .collect();
        self.uid_of_job.retain(|key, _| present.contains(key));
        out
    }

    /// The user of a v2 job: remembered, or looked up in /proc (retried next scrape if none of
    /// the job's processes could be read).
    fn v2_uid(&mut self, key: JobKey, dir: &Path, problems: &mut Problems) -> Option<u32> {
        if let Some(&uid) = self.uid_of_job.get(&key) {
            return Some(uid);
        }
        let uid = v2::find_uid(dir, key.0, &self.config.proc_root, problems)?;
        self.uid_of_job.insert(key, uid);
        Some(uid)
    }
}

#[cfg(test)]
mod tests;
