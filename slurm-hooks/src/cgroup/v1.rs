//! Slurm's cgroup v1 layout: one tree per controller,
//! `<root>/<controller>/slurm[_<node>]/uid_<uid>/job_<id>/step_<step>/task_<n>`, and the files
//! each controller keeps there.
//!
//! - `cpuacct` (with `JobAcctGatherType=jobacct_gather/cgroup`): `cpuacct.stat` (user and system
//!   time in USER_HZ ticks), `cpuacct.usage` (all CPU time, ns), `tasks` (threads).
//! - `memory` (with `ConstrainRAMSpace` or the cgroup accounting): `memory.stat`'s hierarchical
//!   `total_*` lines, `memory.usage_in_bytes`, `memory.max_usage_in_bytes` (the peak),
//!   `memory.limit_in_bytes`, `memory.failcnt`, `memory.oom_control`'s `oom_kill`.
//! - `cpuset` (with `ConstrainCores`): `cpuset.cpus`.
//!
//! There is no per-job I/O: Slurm makes no `blkio` tree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::parse;
use super::read::{self, KeyedFile, Problems};
use super::{JobCgroup, JobKey, Layout, MAX_LISTING, MAX_STEPS, Usage, V1Dirs};

/// The controllers searched for jobs, in this order.
const CONTROLLERS: [&str; 3] = ["cpuacct", "memory", "cpuset"];

/// `slurm` (upstream) or `slurm_<node>` (built with `--enable-multiple-slurmd`, as Debian's is).
fn is_slurm_prefix(name: &str) -> bool {
    name == "slurm" || name.starts_with("slurm_")
}

/// The node a prefix names: `slurm_<node>` of several slurmd on one host; none for `slurm`.
fn prefix_node(name: &str) -> Option<String> {
    name.strip_prefix("slurm_").map(str::to_owned)
}

/// Adds every `uid_<uid>/job_<id>` of every controller's Slurm prefixes to `found`, once per node.
pub(super) fn discover(
    root: &Path,
    problems: &mut Problems,
    found: &mut BTreeMap<JobKey, JobCgroup>,
) {
    for controller in CONTROLLERS {
        let tree = root.join(controller);
        for (prefix_name, prefix) in read::subdirs(&tree, MAX_LISTING, problems) {
            if !is_slurm_prefix(&prefix_name) {
                continue;
            }
            for (uid_name, uid_dir) in read::subdirs(&prefix, MAX_LISTING, problems) {
                let Some(uid) = parse::uid_dir(&uid_name) else {
                    continue;
                };
                for (job_name, job_dir) in read::subdirs(&uid_dir, MAX_LISTING, problems) {
                    if let Some(job_id) = parse::job_dir(&job_name) {
                        let key = (job_id, prefix_node(&prefix_name));
                        add(found, key, uid, controller, job_dir);
                    }
                }
            }
        }
    }
}

fn add(
    found: &mut BTreeMap<JobKey, JobCgroup>,
    key: JobKey,
    uid: u32,
    controller: &str,
    dir: PathBuf,
) {
    let job = found.entry(key.clone()).or_insert_with(|| JobCgroup {
        job_id: key.0,
        node: key.1,
        layout: Layout::V1 {
            uid,
            dirs: V1Dirs::default(),
        },
    });
    // The same job under another uid or in another layout is not this one: the first is kept.
    let Layout::V1 { uid: known, dirs } = &mut job.layout else {
        return;
    };
    if *known != uid {
        return;
    }
    let slot = match controller {
        "cpuacct" => &mut dirs.cpuacct,
        "memory" => &mut dirs.memory,
        _ => &mut dirs.cpuset,
    };
    if slot.is_none() {
        *slot = Some(dir);
    }
}

/// Whether every directory that was read is still there: if one went away during the read, its
/// files read as absent, and the cgroup is dropped rather than half reported.
fn still_there(dirs: &V1Dirs) -> bool {
    [&dirs.cpuacct, &dirs.memory, &dirs.cpuset]
        .into_iter()
        .flatten()
        .all(|dir| dir.is_dir())
}

/// The job's figures and, with `steps`, each step's; `None` when the job went away.
pub(super) fn read_job(
    dirs: &V1Dirs,
    clock_ticks: u64,
    steps: bool,
    problems: &mut Problems,
) -> Option<(Usage, Vec<(String, Usage)>)> {
    let total = read_usage(dirs, clock_ticks, problems);
    if !still_there(dirs) {
        return None;
    }
    let mut step_usages = Vec::new();
    let listed = match (steps, dirs.cpuacct.as_ref().or(dirs.memory.as_ref())) {
        (true, Some(dir)) => dir,
        _ => return Some((total, step_usages)),
    };
    for (name, _) in read::subdirs(listed, MAX_LISTING, problems) {
        let Some(step) = parse::step_dir(&name) else {
            continue;
        };
        if step_usages.len() >= MAX_STEPS {
            break;
        }
        // A controller whose tree lacks the step (never made) is simply not read for it.
        let under =
            |dir: &Option<PathBuf>| dir.as_ref().map(|d| d.join(&name)).filter(|d| d.is_dir());
        let step_dirs = V1Dirs {
            cpuacct: under(&dirs.cpuacct),
            memory: under(&dirs.memory),
            cpuset: under(&dirs.cpuset),
        };
        let usage = read_usage(&step_dirs, clock_ticks, problems);
        if still_there(&step_dirs) && step_dirs != V1Dirs::default() {
            step_usages.push((step.to_string(), usage));
        }
    }
    Some((total, step_usages))
}

fn read_usage(dirs: &V1Dirs, clock_ticks: u64, problems: &mut Problems) -> Usage {
    let mut usage = Usage::default();
    if let Some(dir) = &dirs.cpuacct {
        read_cpuacct(dir, clock_ticks, &mut usage, problems);
    }
    if let Some(dir) = &dirs.memory {
        read_memory(dir, &mut usage, problems);
    }
    if let Some(dir) = &dirs.cpuset {
        usage.cpus = cpus(dir, problems);
    }
    // A v1 `tasks` file lists only the cgroup's own threads, and Slurm puts them in the
    // `task_<n>` cgroups below the job: the sum over the tree is the job's.
    if let Some(dir) = dirs.cpuacct.as_ref().or(dirs.memory.as_ref()) {
        usage.tasks = read::count_lines_in_tree(dir, "tasks", problems);
    }
    usage
}

fn read_cpuacct(dir: &Path, clock_ticks: u64, usage: &mut Usage, problems: &mut Problems) {
    let seconds = |ticks: u64| ticks as f64 / clock_ticks as f64;
    if let Some(stat) = KeyedFile::read(dir, "cpuacct.stat", problems) {
        usage.cpu_user_seconds = stat.get("user", problems).map(seconds);
        usage.cpu_system_seconds = stat.get("system", problems).map(seconds);
    }
    usage.cpu_total_seconds =
        read::file_value(dir, "cpuacct.usage", problems, parse::number).map(|ns| ns as f64 / 1e9);
}

fn read_memory(dir: &Path, usage: &mut Usage, problems: &mut Problems) {
    if let Some(stat) = KeyedFile::read(dir, "memory.stat", problems) {
        usage.memory_rss_bytes = stat.get("total_rss", problems);
        let cache = stat.get("total_cache", problems);
        usage.memory_cache_bytes = cache;
        usage.memory_shmem_bytes = stat
            .get("total_shmem", problems)
            .or_else(|| estimated_shmem(&stat, cache, problems));
    }
    let number =
        |name: &str, problems: &mut Problems| read::file_value(dir, name, problems, parse::number);
    usage.memory_used_bytes = number("memory.usage_in_bytes", problems);
    usage.memory_peak_bytes = number("memory.max_usage_in_bytes", problems);
    usage.memory_limit_bytes = number("memory.limit_in_bytes", problems);
    usage.memory_fail_count = number("memory.failcnt", problems);
    // `oom_kill` is there from Linux 4.13.
    usage.oom_kills = KeyedFile::read(dir, "memory.oom_control", problems)
        .and_then(|control| control.get("oom_kill", problems));
}

/// Princeton's estimate of shared memory for kernels whose `memory.stat` has no shmem line: the
/// page cache that is on neither file LRU list.
fn estimated_shmem(stat: &KeyedFile, cache: Option<u64>, problems: &mut Problems) -> Option<u64> {
    let inactive = stat.get("total_inactive_file", problems)?;
    let active = stat.get("total_active_file", problems)?;
    Some(cache?.saturating_sub(inactive).saturating_sub(active))
}

/// The CPUs of the cpuset; an empty list (a child given no CPUs of its own) means its parent's,
/// then its grandparent's, as Princeton's exporter reads it.
fn cpus(dir: &Path, problems: &mut Problems) -> Option<u64> {
    let mut here = dir;
    for _ in 0..3 {
        match read::file_value(here, "cpuset.cpus", problems, parse::count_cpu_list)? {
            0 => here = here.parent()?,
            n => return Some(n),
        }
    }
    None
}
