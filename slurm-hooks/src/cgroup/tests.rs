//! The collector against fake cgroup trees laid out as Slurm 22.05 makes them: v1 under both
//! prefixes (`slurm`, `slurm_<node>`), v2 under both scopes (`slurmstepd.scope`,
//! `<node>_slurmstepd.scope`), jobs that go away during a scrape, hostile file contents, and the
//! time one scrape of 500 jobs takes.

use super::*;
use std::fs;
use std::time::Instant;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn config(root: &Path, proc_root: &Path, steps: bool) -> Config {
    Config {
        cgroup_root: root.to_path_buf(),
        proc_root: proc_root.to_path_buf(),
        steps,
        clock_ticks_per_second: 100,
    }
}

/// A v1 job with steps `batch`, `extern` and `0`, each with a `task_0` of two threads.
fn v1_job(root: &Path, prefix: &str, uid: u32, job: u64) {
    let under = |controller: &str| root.join(format!("{controller}/{prefix}/uid_{uid}/job_{job}"));
    let (cpuacct, memory, cpuset) = (under("cpuacct"), under("memory"), under("cpuset"));
    write(&cpuacct.join("cpuacct.stat"), "user 250\nsystem 50\n");
    write(&cpuacct.join("cpuacct.usage"), "3100000000\n");
    write(&cpuacct.join("tasks"), "");
    write(
        &memory.join("memory.stat"),
        "cache 0\nrss 0\nshmem 0\ntotal_cache 4096\ntotal_rss 1048576\ntotal_shmem 1024\n\
         total_inactive_file 1000\ntotal_active_file 2000\n",
    );
    write(&memory.join("memory.usage_in_bytes"), "2097152\n");
    write(&memory.join("memory.max_usage_in_bytes"), "3145728\n");
    write(&memory.join("memory.limit_in_bytes"), "4294967296\n");
    write(&memory.join("memory.failcnt"), "0\n");
    write(
        &memory.join("memory.oom_control"),
        "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
    );
    write(&memory.join("tasks"), "");
    write(&cpuset.join("cpuset.cpus"), "0-3,8\n");
    for step in ["batch", "extern", "0"] {
        let step_dir = format!("step_{step}");
        write(
            &cpuacct.join(&step_dir).join("cpuacct.stat"),
            "user 100\nsystem 20\n",
        );
        write(
            &cpuacct.join(&step_dir).join("cpuacct.usage"),
            "1200000000\n",
        );
        write(&cpuacct.join(&step_dir).join("tasks"), "");
        write(&cpuacct.join(&step_dir).join("task_0/tasks"), "101\n102\n");
        // No shmem line: the estimate from the cache and the file lists (4096 - 1000 - 2000).
        write(
            &memory.join(&step_dir).join("memory.stat"),
            "total_cache 4096\ntotal_rss 524288\ntotal_inactive_file 1000\ntotal_active_file 2000\n",
        );
        write(
            &memory.join(&step_dir).join("memory.usage_in_bytes"),
            "600000\n",
        );
        // An empty cpuset means the job's.
        write(&cpuset.join(&step_dir).join("cpuset.cpus"), "\n");
    }
}

fn v1_job_total() -> Usage {
    Usage {
        cpu_user_seconds: Some(2.5),
        cpu_system_seconds: Some(0.5),
        cpu_total_seconds: Some(3.1),
        cpus: Some(5),
        memory_rss_bytes: Some(1048576),
        memory_cache_bytes: Some(4096),
        memory_shmem_bytes: Some(1024),
        memory_used_bytes: Some(2097152),
        memory_limit_bytes: Some(4294967296),
        memory_fail_count: Some(0),
        memory_peak_bytes: Some(3145728),
        oom_kills: Some(1),
        io_read_bytes: None,
        io_write_bytes: None,
        tasks: Some(6),
    }
}

/// A v2 job with steps `batch` (its process `pid` of user `uid`) and `extern`.
fn v2_job(root: &Path, scope: &str, job: u64, proc_root: &Path, pid: u32, uid: u32) -> PathBuf {
    let dir = root.join(format!("system.slice/{scope}/job_{job}"));
    write(
        &dir.join("cpu.stat"),
        "usage_usec 3100000\nuser_usec 2500000\nsystem_usec 500000\nnr_periods 0\n",
    );
    write(
        &dir.join("memory.stat"),
        "anon 1048576\nfile 4096\nkernel 8192\nshmem 1024\nswapcached 0\n",
    );
    write(&dir.join("memory.current"), "2097152\n");
    write(&dir.join("memory.peak"), "3145728\n");
    write(&dir.join("memory.max"), "4294967296\n");
    write(
        &dir.join("memory.events"),
        "low 0\nhigh 0\nmax 3\noom 2\noom_kill 1\n",
    );
    write(&dir.join("cpuset.cpus.effective"), "0-3,8\n");
    write(&dir.join("pids.current"), "6\n");
    write(
        &dir.join("io.stat"),
        "8:0 rbytes=100 wbytes=20 rios=1 wios=1 dbytes=0 dios=0\n\
         259:0 rbytes=5 wbytes=7 rios=1 wios=1 dbytes=0 dios=0\n",
    );
    for step in ["batch", "extern"] {
        let step_dir = dir.join(format!("step_{step}"));
        write(
            &step_dir.join("cpu.stat"),
            "usage_usec 1200000\nuser_usec 1000000\nsystem_usec 200000\n",
        );
        write(&step_dir.join("memory.max"), "max\n");
        write(&step_dir.join("memory.current"), "600000\n");
        write(&step_dir.join("slurm/cgroup.procs"), "");
        write(&step_dir.join("user/task_special/cgroup.procs"), "");
        for cgroup in ["", "slurm", "user", "user/task_special"] {
            write(&step_dir.join(cgroup).join("cgroup.threads"), "");
        }
    }
    write(&dir.join("cgroup.threads"), "");
    write(
        &dir.join("step_batch/user/task_0/cgroup.procs"),
        &format!("{pid}\n"),
    );
    write(
        &dir.join("step_batch/user/task_0/cgroup.threads"),
        &format!("{pid}\n"),
    );
    write(
        &proc_root.join(format!("{pid}/status")),
        &format!("Name:\tpython\nUmask:\t0022\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nGid:\t100\n"),
    );
    write(
        &proc_root.join(format!("{pid}/cgroup")),
        &format!("0::/system.slice/{scope}/job_{job}/step_batch/user/task_0\n"),
    );
    // The scope's own directory and slurmstepd's `system/` are not jobs.
    write(&root.join(format!("system.slice/{scope}/cgroup.procs")), "");
    write(
        &root.join(format!("system.slice/{scope}/system/cpu.stat")),
        "usage_usec 1\n",
    );
    dir
}

fn v2_job_total() -> Usage {
    Usage {
        cpu_user_seconds: Some(2.5),
        cpu_system_seconds: Some(0.5),
        cpu_total_seconds: Some(3.1),
        cpus: Some(5),
        memory_rss_bytes: Some(1048576),
        memory_cache_bytes: Some(4096),
        memory_shmem_bytes: Some(1024),
        memory_used_bytes: Some(2097152),
        memory_limit_bytes: Some(4294967296),
        memory_fail_count: Some(2),
        memory_peak_bytes: Some(3145728),
        oom_kills: Some(1),
        io_read_bytes: Some(105),
        io_write_bytes: Some(27),
        tasks: Some(6),
    }
}

#[test]
fn v1_jobs_are_found_under_both_prefixes_and_read() {
    let root = tempfile::tempdir().unwrap();
    let proc_root = tempfile::tempdir().unwrap();
    v1_job(root.path(), "slurm", 1001, 7);
    v1_job(root.path(), "slurm_vm", 1002, 8);
    // Not Slurm's: other cgroups, and names that are not uid_/job_ directories.
    write(
        &root
            .path()
            .join("cpuacct/system.slice/cron.service/cpuacct.usage"),
        "5\n",
    );
    write(
        &root.path().join("cpuacct/slurm/uid_x/job_9/cpuacct.usage"),
        "5\n",
    );
    write(
        &root
            .path()
            .join("cpuacct/slurm/uid_1001/job_x/cpuacct.usage"),
        "5\n",
    );

    let scrape = Collector::new(config(root.path(), proc_root.path(), false)).collect();
    assert_eq!(scrape.problems, Problems::default());
    let ids: Vec<(u64, Option<u32>)> = scrape.jobs.iter().map(|j| (j.job_id, j.uid)).collect();
    assert_eq!(ids, [(7, Some(1001)), (8, Some(1002))]);
    for job in &scrape.jobs {
        assert_eq!(job.total, v1_job_total(), "job {}", job.job_id);
        assert!(job.steps.is_empty());
    }

    let scrape = Collector::new(config(root.path(), proc_root.path(), true)).collect();
    assert_eq!(scrape.problems, Problems::default());
    let steps: Vec<&str> = scrape.jobs[0]
        .steps
        .iter()
        .map(|(s, _)| s.as_str())
        .collect();
    assert_eq!(steps, ["0", "batch", "extern"]);
    let batch = &scrape.jobs[0].steps[1].1;
    assert_eq!(batch.cpu_user_seconds, Some(1.0));
    assert_eq!(batch.cpu_system_seconds, Some(0.2));
    assert_eq!(batch.cpu_total_seconds, Some(1.2));
    assert_eq!(batch.memory_rss_bytes, Some(524288));
    assert_eq!(batch.memory_shmem_bytes, Some(1096));
    assert_eq!(batch.memory_used_bytes, Some(600000));
    assert_eq!(batch.memory_peak_bytes, None);
    assert_eq!(batch.cpus, Some(5));
    assert_eq!(batch.tasks, Some(2));
}

#[test]
fn a_job_directory_spelled_with_leading_zeros_shadows_no_job() {
    let root = tempfile::tempdir().unwrap();
    let proc_root = tempfile::tempdir().unwrap();
    // A forged job_0007 sorted before the real job_7, with other figures and another owner.
    v1_job(root.path(), "slurm", 1001, 7);
    let forged = root.path().join("cpuacct/slurm/uid_1000/job_0007");
    write(&forged.join("cpuacct.usage"), "999000000000\n");
    write(&forged.join("cpuacct.stat"), "user 99900\nsystem 0\n");
    write(&forged.join("tasks"), "");
    let scrape = Collector::new(config(root.path(), proc_root.path(), false)).collect();
    let ids: Vec<(u64, Option<u32>)> = scrape.jobs.iter().map(|j| (j.job_id, j.uid)).collect();
    assert_eq!(ids, [(7, Some(1001))]);
    assert_eq!(scrape.jobs[0].total, v1_job_total());
}

#[test]
fn v2_jobs_are_found_under_both_scopes_and_read() {
    let root = tempfile::tempdir().unwrap();
    let proc_root = tempfile::tempdir().unwrap();
    v2_job(
        root.path(),
        "slurmstepd.scope",
        11,
        proc_root.path(),
        4242,
        1001,
    );
    v2_job(
        root.path(),
        "vm_slurmstepd.scope",
        12,
        proc_root.path(),
        4343,
        1002,
    );
    // Not slurmstepd's scope.
    write(
        &root
            .path()
            .join("system.slice/cron.service/job_13/cpu.stat"),
        "usage_usec 1\n",
    );

    let mut collector = Collector::new(config(root.path(), proc_root.path(), true));
    let scrape = collector.collect();
    assert_eq!(scrape.problems, Problems::default());
    let ids: Vec<(u64, Option<u32>)> = scrape.jobs.iter().map(|j| (j.job_id, j.uid)).collect();
    assert_eq!(ids, [(11, Some(1001)), (12, Some(1002))]);
    let job = &scrape.jobs[0];
    assert_eq!(job.total, v2_job_total());
    let steps: Vec<&str> = job.steps.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(steps, ["batch", "extern"]);
    let batch = &job.steps[0].1;
    assert_eq!(batch.cpu_total_seconds, Some(1.2));
    assert_eq!(batch.memory_used_bytes, Some(600000));
    // `max` of its own: the job's limit applies.
    assert_eq!(batch.memory_limit_bytes, Some(4294967296));
    // No pids controller: the threads of the step's cgroups, one in task_0.
    assert_eq!(batch.tasks, Some(1));
    assert_eq!(batch.io_read_bytes, None);
}

/// Several slurmd on one host (Debian's `--enable-multiple-slurmd`, the multi-node test
/// cluster): a job of two nodes has a tree under each node's prefix or scope, and each is its
/// own job on its own node, not one hiding the other.
#[test]
fn a_job_on_two_nodes_of_one_host_is_found_once_per_node() {
    let root = tempfile::tempdir().unwrap();
    let proc_root = tempfile::tempdir().unwrap();
    v1_job(root.path(), "slurm_node1", 1001, 7);
    v1_job(root.path(), "slurm_node2", 1001, 7);
    v1_job(root.path(), "slurm", 1001, 8);
    v2_job(
        root.path(),
        "node1_slurmstepd.scope",
        11,
        proc_root.path(),
        4242,
        1001,
    );
    v2_job(
        root.path(),
        "node2_slurmstepd.scope",
        11,
        proc_root.path(),
        4343,
        1001,
    );
    let scrape = Collector::new(config(root.path(), proc_root.path(), false)).collect();
    assert_eq!(scrape.problems, Problems::default());
    let found: Vec<(u64, Option<&str>)> = scrape
        .jobs
        .iter()
        .map(|j| (j.job_id, j.node.as_deref()))
        .collect();
    assert_eq!(
        found,
        [
            (7, Some("node1")),
            (7, Some("node2")),
            (8, None),
            (11, Some("node1")),
            (11, Some("node2"))
        ]
    );
    for job in &scrape.jobs[..2] {
        assert_eq!(
            job.total,
            v1_job_total(),
            "job {} on {:?}",
            job.job_id,
            job.node
        );
    }
    let figures = crate::exposition::ExporterFigures {
        scrape_seconds: 0.0,
        errors_total: 0,
    };
    let text = crate::exposition::render(&scrape.jobs, &figures);
    assert!(
        text.contains(r#"cgroup_cpus{jobid="7",step="",task="",slurm_node="node2"} "#),
        "{text}"
    );
    assert!(
        text.contains(r#"cgroup_cpus{jobid="8",step="",task=""} "#),
        "{text}"
    );
}

#[test]
fn a_v2_job_without_the_optional_controllers_still_reads() {
    let root = tempfile::tempdir().unwrap();
    let proc_root = tempfile::tempdir().unwrap();
    let dir = v2_job(
        root.path(),
        "slurmstepd.scope",
        21,
        proc_root.path(),
        4242,
        1001,
    );
    for optional in ["memory.peak", "pids.current", "io.stat"] {
        fs::remove_file(dir.join(optional)).unwrap();
    }
    write(
        &dir.join("step_batch/user/task_0/cgroup.threads"),
        "4242\n4243\n",
    );
    write(&dir.join("step_batch/slurm/cgroup.threads"), "4000\n");
    // Unlimited up to the root: no limit at all.
    write(&dir.join("memory.max"), "max\n");
    write(&dir.parent().unwrap().join("memory.max"), "max\n");
    let scrape = Collector::new(config(root.path(), proc_root.path(), false)).collect();
    assert_eq!(scrape.problems, Problems::default());
    let total = &scrape.jobs[0].total;
    assert_eq!(total.memory_peak_bytes, None);
    assert_eq!(total.io_read_bytes, None);
    assert_eq!(total.memory_limit_bytes, None);
    assert_eq!(total.tasks, Some(3));
}

#[test]
fn a_job_that_goes_away_during_a_scrape_is_left_out_silently() {
    let root = tempfile::tempdir().unwrap();
    let proc_root = tempfile::tempdir().unwrap();
    v1_job(root.path(), "slurm_vm", 1001, 7);
    v1_job(root.path(), "slurm_vm", 1001, 8);
    let gone_v2 = v2_job(
        root.path(),
        "slurmstepd.scope",
        11,
        proc_root.path(),
        4242,
        1001,
    );
    v2_job(
        root.path(),
        "slurmstepd.scope",
        12,
        proc_root.path(),
        4343,
        1001,
    );

    let mut collector = Collector::new(config(root.path(), proc_root.path(), true));
    let mut problems = Problems::default();
    let found = collector.discover(&mut problems);
    assert_eq!(found.len(), 4);
    // Job 8 ends between the listing and the reading: gone from every controller, or only
    // from one (slurmd removes them one after the other).
    fs::remove_dir_all(root.path().join("cpuacct/slurm_vm/uid_1001/job_8")).unwrap();
    fs::remove_dir_all(&gone_v2).unwrap();
    fs::remove_dir_all(proc_root.path().join("4242")).unwrap();
    let jobs = collector.read_jobs(found, &mut problems);
    let ids: Vec<u64> = jobs.iter().map(|j| j.job_id).collect();
    assert_eq!(ids, [7, 12]);
    assert_eq!(problems, Problems::default());

    // The next scrape no longer sees job 8 in cpuacct but still in memory and cpuset: it is read
    // from what is left.
    let scrape = collector.collect();
    let ids: Vec<u64> = scrape.jobs.iter().map(|j| j.job_id).collect();
    assert_eq!(ids, [7, 8, 12]);
    assert_eq!(scrape.jobs[1].total.cpu_total_seconds, None);
    assert_eq!(scrape.jobs[1].total.memory_used_bytes, Some(2097152));
}

#[test]
fn hostile_values_are_skipped_and_counted_with_their_paths() {
    let root = tempfile::tempdir().unwrap();
    let proc_root = tempfile::tempdir().unwrap();
    let dir = v2_job(
        root.path(),
        "slurmstepd.scope",
        31,
        proc_root.path(),
        4242,
        1001,
    );
    write(&dir.join("memory.current"), "garbage\n");
    write(&dir.join("memory.peak"), "-1\n");
    write(
        &dir.join("cpu.stat"),
        "usage_usec 99999999999999999999999\nuser_usec 7\n",
    );
    write(&dir.join("cpuset.cpus.effective"), "0-99999999\n");
    write(&dir.join("io.stat"), "8:0 rbytes=x wbytes=1\n");
    write(&dir.join("memory.stat"), &"anon 1\n".repeat(20_000));
    write(&dir.join("pids.current"), "\u{1b}[2J\n");
    write(&proc_root.path().join("4242/status"), "Uid:\tnobody\n");
    let mut collector = Collector::new(config(root.path(), proc_root.path(), false));
    let scrape = collector.collect();
    let total = &scrape.jobs[0].total;
    assert_eq!(total.memory_used_bytes, None);
    assert_eq!(total.memory_peak_bytes, None);
    assert_eq!(total.cpu_total_seconds, None);
    assert_eq!(total.cpu_user_seconds, Some(0.000007));
    assert_eq!(total.cpus, None);
    assert_eq!(total.io_read_bytes, None);
    assert_eq!(total.memory_rss_bytes, None);
    // pids.current refused, then the threads counted instead.
    assert_eq!(total.tasks, Some(1));
    // The good values stay.
    assert_eq!(total.memory_limit_bytes, Some(4294967296));
    assert_eq!(total.oom_kills, Some(1));
    assert_eq!(scrape.jobs[0].uid, None);
    assert_eq!(scrape.problems.count, 8, "{:#?}", scrape.problems);
    assert_eq!(collector.errors_total(), 8);
    for message in &scrape.problems.messages {
        assert!(message.contains(&*root.path().to_string_lossy()) || message.contains("4242"));
        assert!(!message.contains('\u{1b}'), "{message}");
    }
}

#[test]
fn a_v2_jobs_user_is_remembered_until_the_job_ends() {
    let root = tempfile::tempdir().unwrap();
    let proc_root = tempfile::tempdir().unwrap();
    let dir = v2_job(
        root.path(),
        "slurmstepd.scope",
        41,
        proc_root.path(),
        4242,
        1001,
    );
    let mut collector = Collector::new(config(root.path(), proc_root.path(), false));
    assert_eq!(collector.collect().jobs[0].uid, Some(1001));
    // The process is gone, the job's user is still known.
    fs::remove_dir_all(proc_root.path().join("4242")).unwrap();
    assert_eq!(collector.collect().jobs[0].uid, Some(1001));
    fs::remove_dir_all(&dir).unwrap();
    assert!(collector.collect().jobs.is_empty());
    assert!(collector.uid_of_job.is_empty());
}

#[test]
fn a_reused_pid_does_not_lend_its_user_to_the_job() {
    let root = tempfile::tempdir().unwrap();
    let proc_root = tempfile::tempdir().unwrap();
    v2_job(
        root.path(),
        "slurmstepd.scope",
        51,
        proc_root.path(),
        4242,
        1001,
    );
    write(
        &proc_root.path().join("4242/cgroup"),
        "0::/user.slice/user-0.slice/session-1.scope\n",
    );
    let scrape = Collector::new(config(root.path(), proc_root.path(), false)).collect();
    assert_eq!(scrape.jobs[0].uid, None);
    assert_eq!(scrape.problems, Problems::default());
}

/// The cost of one scrape of 500 v2 jobs (job totals only, as the exporter runs by default),
/// printed for the benchmark figures; the bound only catches a scrape gone quadratic.
#[test]
fn scrape_cost_of_500_v2_jobs() {
    let root = tempfile::tempdir().unwrap();
    let proc_root = tempfile::tempdir().unwrap();
    for job in 0..500u32 {
        v2_job(
            root.path(),
            "slurmstepd.scope",
            1000 + u64::from(job),
            proc_root.path(),
            10_000 + job,
            1001,
        );
    }
    let mut collector = Collector::new(config(root.path(), proc_root.path(), false));
    let mut timings = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let scrape = collector.collect();
        let collected = started.elapsed();
        let text = crate::exposition::render(
            &scrape.jobs,
            &crate::exposition::ExporterFigures {
                scrape_seconds: collected.as_secs_f64(),
                errors_total: collector.errors_total(),
            },
        );
        let total = started.elapsed();
        assert_eq!(scrape.jobs.len(), 500);
        assert!(scrape.jobs.iter().all(|j| j.uid == Some(1001)));
        assert_eq!(scrape.problems, Problems::default());
        timings.push((collected, total, text.len()));
    }
    for (i, (collected, total, bytes)) in timings.iter().enumerate() {
        println!(
            "scrape {} of 500 v2 jobs: collect {:.1} ms, collect + render {:.1} ms, {bytes} bytes",
            i + 1,
            collected.as_secs_f64() * 1e3,
            total.as_secs_f64() * 1e3,
        );
        assert!(total.as_secs_f64() < 2.0, "scrape {} took {total:?}", i + 1);
    }
}

/// A v2 job of Slurm 26.05 without `CgroupJobIdPaths=yes`: its directory is named by its SLUID.
/// The job id comes from the slurmstepd in one of its steps' `slurm/` cgroup, titled
/// `slurmstepd: [21.batch]`, believed only when that process is root's and in this directory.
fn sluid_job(root: &Path, proc_root: &Path, job: u64, sluid: &str, stepd_pid: u32, stepd_uid: u32) {
    let scope = "slurmstepd.scope";
    let numbered = v2_job(root, scope, job, proc_root, 4000 + stepd_pid, 1001);
    let dir = root.join(format!("system.slice/{scope}/{sluid}"));
    fs::rename(&numbered, &dir).unwrap();
    write(
        &proc_root.join(format!("{}/cgroup", 4000 + stepd_pid)),
        &format!("0::/system.slice/{scope}/{sluid}/step_batch/user/task_0\n"),
    );
    write(
        &dir.join("step_batch/slurm/cgroup.procs"),
        &format!("{stepd_pid}\n"),
    );
    write(
        &proc_root.join(format!("{stepd_pid}/status")),
        &format!("Name:\tslurmstepd\nUid:\t{stepd_uid}\t{stepd_uid}\t{stepd_uid}\t{stepd_uid}\n"),
    );
    write(
        &proc_root.join(format!("{stepd_pid}/cmdline")),
        &format!("slurmstepd: [{job}.batch]\0\0\0"),
    );
    write(
        &proc_root.join(format!("{stepd_pid}/cgroup")),
        &format!("0::/system.slice/{scope}/{sluid}/step_batch/slurm\n"),
    );
}

#[test]
fn sluid_directories_of_26_05_are_named_by_their_slurmstepd() {
    let root = tempfile::tempdir().unwrap();
    let proc_root = tempfile::tempdir().unwrap();
    sluid_job(root.path(), proc_root.path(), 21, "sFB1M8GSVFWS00", 500, 0);
    // A user's own process titled like slurmstepd, in the step's slurm/ cgroup: not root's.
    sluid_job(
        root.path(),
        proc_root.path(),
        22,
        "sFB1M8GSVFWS01",
        501,
        1001,
    );
    let mut collector = Collector::new(config(root.path(), proc_root.path(), true));
    let scrape = collector.collect();
    let ids: Vec<(u64, Option<u32>)> = scrape.jobs.iter().map(|j| (j.job_id, j.uid)).collect();
    assert_eq!(ids, [(21, Some(1001))], "{:?}", scrape.problems);
    assert_eq!(scrape.jobs[0].total, v2_job_total());
    // Remembered: found again once slurmstepd's process is gone (between steps).
    fs::remove_dir_all(proc_root.path().join("500")).unwrap();
    let again = collector.collect();
    assert_eq!(
        again.jobs.iter().map(|j| j.job_id).collect::<Vec<_>>(),
        [21]
    );
    assert!(parse::is_sluid("sFB1M8GSVFWS00"));
    assert!(!parse::is_sluid("job_21") && !parse::is_sluid("s1"));
    assert_eq!(parse::stepd_title_job(b"slurmstepd: [7]\0"), Some(7));
    assert_eq!(
        parse::stepd_title_job(b"slurmstepd: [sFB1M8GSVFWS00.0]"),
        None
    );
    assert_eq!(parse::stepd_title_job(b"python [7.batch]"), None);
}
