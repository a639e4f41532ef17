//! Slurm's cgroup v2 layout: one tree,
//! `<root>/system.slice/[<node>_]slurmstepd.scope/job_<id>/step_<step>/{slurm,user/task_<n>}`,
//! with every controller's files in each directory.
//!
//! - `cpu.stat` (`usage_usec`, `user_usec`, `system_usec`: there even without the cpu
//!   controller);
//! - `memory.stat` (`anon`, `swapcached`, `file`, `shmem`), `memory.current`, `memory.peak`
//!   (Linux 5.19 and later), `memory.max`, `memory.events` (`oom`, `oom_kill`);
//! - `cpuset.cpus.effective`; `pids.current` and `io.stat` only where the scope enables the pids
//!   and io controllers (Slurm's example enables only cpuset, cpu and memory): without them the
//!   threads are counted from `cgroup.threads`, and there is no I/O figure.
//!
//! A job and step total includes its `slurm/` cgroup, where slurmstepd runs.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::parse::{self, Limit};
use super::read::{self, KeyedFile, Problems};
use super::{JobCgroup, JobKey, Layout, MAX_LISTING, MAX_STEPS, Usage};

/// The most processes whose /proc files are read to learn a job's user, per scrape.
const MAX_UID_TRIES: usize = 8;

/// `slurmstepd.scope` (upstream) or `<node>_slurmstepd.scope` (`--enable-multiple-slurmd`).
fn is_stepd_scope(name: &str) -> bool {
    name == "slurmstepd.scope" || name.ends_with("_slurmstepd.scope")
}

/// Adds every `job_<id>` of every slurmstepd scope to `found`, once per node (jobs already found
/// on the node are kept), and
/// every SLUID-named job directory (Slurm 26.05 without `CgroupJobIdPaths=yes`) whose job id
/// [`sluid_job`] finds; `job_of_sluid` remembers those between scrapes.
pub(super) fn discover(
    root: &Path,
    proc_root: &Path,
    job_of_sluid: &mut HashMap<String, u64>,
    problems: &mut Problems,
    found: &mut BTreeMap<JobKey, JobCgroup>,
) {
    let mut seen_sluids = Vec::new();
    for (scope_name, scope) in read::subdirs(&root.join("system.slice"), MAX_LISTING, problems) {
        if !is_stepd_scope(&scope_name) {
            continue;
        }
        let node = scope_name
            .strip_suffix("_slurmstepd.scope")
            .map(str::to_owned);
        // Only `job_<id>`: the scope's `system/` is slurmstepd's own, not a job.
        for (name, dir) in read::subdirs(&scope, MAX_LISTING, problems) {
            let job_id = if let Some(job_id) = parse::job_dir(&name) {
                job_id
            } else if parse::is_sluid(&name) {
                let known = job_of_sluid.get(&name).copied();
                let Some(job_id) = known.or_else(|| sluid_job(&dir, &name, proc_root, problems))
                else {
                    continue;
                };
                job_of_sluid.insert(name.clone(), job_id);
                seen_sluids.push(name);
                job_id
            } else {
                continue;
            };
            found.entry((job_id, node.clone())).or_insert(JobCgroup {
                job_id,
                node: node.clone(),
                layout: Layout::V2 { dir },
            });
        }
    }
    // Forget the SLUIDs of jobs that ended.
    job_of_sluid.retain(|sluid, _| seen_sluids.contains(sluid));
}

/// The job id of a SLUID-named job directory, from what Slurm itself runs there: each step's
/// slurmstepd sits in `<dir>/step_<step>/slurm/` and titles itself `slurmstepd: [<job>.<step>]`.
/// Only a root-owned process that is still in this directory's own cgroup is believed: a job's
/// user can name a process of theirs anything, but cannot run one as root nor move one into
/// slurmstepd's cgroup. `None` until a step's slurmstepd has been seen.
pub(super) fn sluid_job(
    dir: &Path,
    sluid: &str,
    proc_root: &Path,
    problems: &mut Problems,
) -> Option<u64> {
    let in_this_job = format!("/{sluid}/");
    let mut tries = 0;
    for (_, step) in read::subdirs(dir, MAX_LISTING, problems)
        .into_iter()
        .filter(|(name, _)| parse::step_dir(name).is_some())
        .take(MAX_STEPS)
    {
        let Ok(Some(procs)) = read::first_lines(&step.join("slurm/cgroup.procs"), 256) else {
            continue;
        };
        for pid in procs.lines().filter_map(|line| parse::number(line).ok()) {
            tries += 1;
            if tries > MAX_UID_TRIES {
                return None;
            }
            let proc_dir = proc_root.join(pid.to_string());
            // The title is NUL-terminated; what follows it may be long and is not needed.
            let Ok(Some((cmdline, _))) = read::read_bytes(&proc_dir.join("cmdline"), 256) else {
                continue;
            };
            let Some(job_id) = parse::stepd_title_job(&cmdline) else {
                continue;
            };
            if process_uid(proc_root, pid, &in_this_job, problems) == Some(0) {
                return Some(job_id);
            }
        }
    }
    None
}

/// The job's figures and, with `steps`, each step's; `None` when the job went away.
pub(super) fn read_job(
    dir: &Path,
    cgroup_root: &Path,
    steps: bool,
    problems: &mut Problems,
) -> Option<(Usage, Vec<(String, Usage)>)> {
    let total = read_usage(dir, cgroup_root, problems);
    // Its files read as absent if the job went away during the read: drop it, not half of it.
    if !dir.is_dir() {
        return None;
    }
    let mut step_usages = Vec::new();
    if !steps {
        return Some((total, step_usages));
    }
    for (name, step_dir) in read::subdirs(dir, MAX_LISTING, problems) {
        let Some(step) = parse::step_dir(&name) else {
            continue;
        };
        if step_usages.len() >= MAX_STEPS {
            break;
        }
        let usage = read_usage(&step_dir, cgroup_root, problems);
        if step_dir.is_dir() {
            step_usages.push((step.to_string(), usage));
        }
    }
    Some((total, step_usages))
}

fn read_usage(dir: &Path, cgroup_root: &Path, problems: &mut Problems) -> Usage {
    let mut usage = Usage::default();
    let seconds = |micros: u64| micros as f64 / 1e6;
    if let Some(stat) = KeyedFile::read(dir, "cpu.stat", problems) {
        usage.cpu_total_seconds = stat.get("usage_usec", problems).map(seconds);
        usage.cpu_user_seconds = stat.get("user_usec", problems).map(seconds);
        usage.cpu_system_seconds = stat.get("system_usec", problems).map(seconds);
    }
    if let Some(stat) = KeyedFile::read(dir, "memory.stat", problems) {
        // Resident anonymous memory, as Princeton's exporter counts it (swap cache included).
        let swapcached = stat.get("swapcached", problems).unwrap_or(0);
        usage.memory_rss_bytes = stat
            .get("anon", problems)
            .map(|anon| anon.saturating_add(swapcached));
        usage.memory_cache_bytes = stat.get("file", problems);
        usage.memory_shmem_bytes = stat.get("shmem", problems);
    }
    usage.memory_used_bytes = read::file_value(dir, "memory.current", problems, parse::number);
    usage.memory_peak_bytes = read::file_value(dir, "memory.peak", problems, parse::number);
    usage.memory_limit_bytes = memory_limit(dir, cgroup_root, problems);
    if let Some(events) = KeyedFile::read(dir, "memory.events", problems) {
        usage.memory_fail_count = events.get("oom", problems);
        usage.oom_kills = events.get("oom_kill", problems);
    }
    usage.cpus = match read::file_value(
        dir,
        "cpuset.cpus.effective",
        problems,
        parse::count_cpu_list,
    ) {
        Some(n) if n > 0 => Some(n),
        _ => {
            read::file_value(dir, "cpuset.cpus", problems, parse::count_cpu_list).filter(|&n| n > 0)
        }
    };
    usage.tasks = read::file_value(dir, "pids.current", problems, parse::number)
        .or_else(|| read::count_lines_in_tree(dir, "cgroup.threads", problems));
    if let Some((read_bytes, written_bytes)) =
        read::file_value(dir, "io.stat", problems, parse::io_bytes)
    {
        usage.io_read_bytes = Some(read_bytes);
        usage.io_write_bytes = Some(written_bytes);
    }
    usage
}

/// The cgroup's memory limit. `max` means none of its own, so the nearest limited ancestor's
/// applies, as Princeton's exporter reads it; `None` when no cgroup up to the root has one.
fn memory_limit(dir: &Path, cgroup_root: &Path, problems: &mut Problems) -> Option<u64> {
    let mut here = dir;
    for _ in 0..8 {
        match read::file_value(here, "memory.max", problems, parse::limit)? {
            Limit::Bytes(bytes) => return Some(bytes),
            Limit::Unlimited => {
                here = here.parent()?;
                // The root cgroup has no memory.max; nothing outside the root is read.
                if here == cgroup_root || !here.starts_with(cgroup_root) {
                    return None;
                }
            }
        }
    }
    None
}

/// The job's user: the real uid of one of its processes in `step_*/user/task_*`. Batch and
/// numbered steps are tried before `extern`, whose only task is Slurm's `sleep`.
pub(super) fn find_uid(
    job_dir: &Path,
    job_id: u64,
    proc_root: &Path,
    problems: &mut Problems,
) -> Option<u32> {
    let mut steps: Vec<(String, PathBuf)> = read::subdirs(job_dir, MAX_LISTING, problems)
        .into_iter()
        .filter(|(name, _)| parse::step_dir(name).is_some())
        .collect();
    // A stable sort: `extern` last, the others in name order.
    steps.sort_by_key(|(name, _)| name.as_str() == "step_extern");
    // `job_<id>`, or the SLUID that names the job's directory on Slurm 26.05.
    let in_this_job = match job_dir.file_name().and_then(|n| n.to_str()) {
        Some(name) if parse::is_sluid(name) => format!("/{name}/"),
        _ => format!("/job_{job_id}/"),
    };
    let mut tries = 0;
    for (_, step) in steps.iter().take(MAX_STEPS) {
        for (task_name, task) in read::subdirs(&step.join("user"), MAX_LISTING, problems) {
            if !task_name.starts_with("task_") {
                continue;
            }
            let procs = match read::first_lines(&task.join("cgroup.procs"), 256) {
                Ok(Some(procs)) => procs,
                Ok(None) => continue,
                Err(message) => {
                    problems.note(message);
                    continue;
                }
            };
            for pid in procs.lines().filter_map(|line| parse::number(line).ok()) {
                tries += 1;
                if tries > MAX_UID_TRIES {
                    return None;
                }
                if let Some(uid) = process_uid(proc_root, pid, &in_this_job, problems) {
                    return Some(uid);
                }
            }
        }
    }
    None
}

/// The real uid of `pid`, if it is (still) a process of the job whose path holds `in_this_job`.
fn process_uid(
    proc_root: &Path,
    pid: u64,
    in_this_job: &str,
    problems: &mut Problems,
) -> Option<u32> {
    let dir = proc_root.join(pid.to_string());
    let uid = read::file_value(&dir, "status", problems, parse::status_uid)?;
    // Read after the status: had the process ended and its pid been reused in between, the new
    // process would not be in this job's cgroup, and its uid is not taken.
    let cgroup = read::file_text(&dir, "cgroup", problems)?;
    cgroup
        .lines()
        .any(|line| line.starts_with("0::") && line.contains(in_this_job))
        .then_some(uid)
}
