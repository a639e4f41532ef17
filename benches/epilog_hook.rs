//! What every job pays for jobsight: the epilog hook as a whole process (fork + exec + read the
//! environment + build the record + write, fsync, link, fsync the directory), measured against
//! `/bin/true` (fork + exec of the smallest program) on the same machine, in the same run, as a
//! ratio. A third column measures the two-line `/bin/sh` wrapper a site needs only if it passes
//! `--spool` (the default spool needs no wrapper).
//!
//! The three commands are interleaved, so drift in the machine's load affects them alike.
//! Run: `cargo bench -p jobsight-slurm-hooks --bench epilog_hook` (iterations: BENCH_ITERATIONS,
//! default 3000; spool directory: BENCH_SPOOL_PARENT, default the system temporary directory).

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const EPILOG: &str = env!("CARGO_BIN_EXE_jobsight-epilog");

/// The environment EpilogSlurmctld gets on Slurm 22.05.8 for a 4-node job.
fn slurm_env(job_id: u64) -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("SLURM_CLUSTER_NAME", b"ci".to_vec()),
        ("SLURM_JOB_ID", job_id.to_string().into_bytes()),
        ("SLURM_JOBID", job_id.to_string().into_bytes()),
        ("SLURM_JOB_ACCOUNT", b"research".to_vec()),
        ("SLURM_JOB_CPUS_PER_NODE", b"64(x4)".to_vec()),
        ("SLURM_JOB_DERIVED_EC", b"0".to_vec()),
        ("SLURM_JOB_EXIT_CODE2", b"0:0".to_vec()),
        ("SLURM_JOB_EXIT_CODE", b"0".to_vec()),
        ("SLURM_JOB_GID", b"1001".to_vec()),
        ("SLURM_JOB_GROUP", b"alice".to_vec()),
        ("SLURM_JOB_NAME", b"lammps-production-run".to_vec()),
        ("SLURM_JOB_NODELIST", b"node[001-003,017]".to_vec()),
        ("SLURM_JOB_NUM_NODES", b"4".to_vec()),
        ("SLURM_JOB_PARTITION", b"compute".to_vec()),
        ("SLURM_JOB_RESTART_COUNT", b"0".to_vec()),
        ("SLURM_JOB_STDOUT", b"/home/alice/slurm-%j.out".to_vec()),
        ("SLURM_JOB_UID", b"1001".to_vec()),
        ("SLURM_JOB_USER", b"alice".to_vec()),
        ("SLURM_JOB_WORK_DIR", b"/home/alice/lammps".to_vec()),
        ("SLURM_SCRIPT_CONTEXT", b"epilog_slurmctld".to_vec()),
        ("PWD", b"/var/log/slurm".to_vec()),
    ]
}

fn timed(command: &mut Command) -> Duration {
    let start = Instant::now();
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    let elapsed = start.elapsed();
    assert!(status.success(), "{command:?} exited with {status}");
    elapsed
}

struct Stats {
    p50: Duration,
    p99: Duration,
    mean: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort_unstable();
    let at =
        |p: f64| samples[((p * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1];
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    Stats {
        p50: at(0.50),
        p99: at(0.99),
        mean,
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    // `cargo bench` passes harness flags such as --bench; this benchmark takes none.
    let iterations: u64 = std::env::var("BENCH_ITERATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000);
    let parent =
        std::env::var_os("BENCH_SPOOL_PARENT").map_or_else(std::env::temp_dir, PathBuf::from);
    let dir = tempfile::tempdir_in(&parent).expect("temporary spool directory");
    let spool = dir.path().join("spool");
    for sub in slurm_hooks::spool_dir::SUBDIRS {
        std::fs::create_dir_all(spool.join(sub)).expect("spool subdirectory");
    }
    let wrapper = dir.path().join("epilog-wrapper.sh");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nexec {EPILOG} --spool {}\n", spool.display()),
    )
    .expect("wrapper");
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");

    let hook = |bin: &Path, job: u64, spool: Option<&Path>| {
        let mut command = Command::new(bin);
        command
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in slurm_env(job) {
            command.env(k, OsString::from_vec(v));
        }
        if let Some(spool) = spool {
            command.arg("--spool").arg(spool);
        }
        command
    };
    let (mut t_true, mut t_hook, mut t_wrapped) = (Vec::new(), Vec::new(), Vec::new());
    let warmup = 50;
    for i in 0..iterations + warmup {
        let a = timed(Command::new("/bin/true").env_clear().stdin(Stdio::null()));
        let b = timed(&mut hook(Path::new(EPILOG), 2 * i, Some(&spool)));
        let c = timed(&mut hook(&wrapper, 2 * i + 1, None));
        if i >= warmup {
            t_true.push(a);
            t_hook.push(b);
            t_wrapped.push(c);
        }
    }
    let enqueued = std::fs::read_dir(spool.join("new"))
        .expect("list new/")
        .count() as u64;
    assert_eq!(
        enqueued,
        2 * (iterations + warmup),
        "every hook run must have enqueued its record"
    );

    let (t, h, w) = (stats(t_true), stats(t_hook), stats(t_wrapped));
    println!(
        "epilog hook as a whole process, {iterations} runs each, interleaved; spool on {}",
        parent.display()
    );
    println!(
        "{:<34} {:>9} {:>9} {:>9}",
        "command", "p50 ms", "p99 ms", "mean ms"
    );
    for (name, s) in [
        ("/bin/true", &t),
        ("jobsight-epilog --spool DIR", &h),
        ("sh wrapper -> jobsight-epilog", &w),
    ] {
        println!(
            "{name:<34} {:>9.3} {:>9.3} {:>9.3}",
            ms(s.p50),
            ms(s.p99),
            ms(s.mean)
        );
    }
    println!(
        "ratio jobsight-epilog / /bin/true: p50 {:.2}x, p99 {:.2}x, mean {:.2}x; added per job: {:.3} ms (p50)",
        ms(h.p50) / ms(t.p50),
        ms(h.p99) / ms(t.p99),
        ms(h.mean) / ms(t.mean),
        ms(h.p50) - ms(t.p50)
    );
    println!(
        "target p99 < 5 ms: {}",
        if h.p99 < Duration::from_millis(5) {
            "met"
        } else {
            "NOT met"
        }
    );
}
