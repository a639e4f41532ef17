//! A big day's features on a Ballista cluster against one process (issue 72): the question "when
//! one machine is outgrown, does the cluster compute the same features, and what does it cost?".
//!
//! The day: a kept day-bench folder (`BENCH_BALLISTA_WORK`, the folder `BENCH_DAY_KEEP=1 cargo
//! bench -p jobsight --bench day` printed, e.g. its 10,000-node day), or a day simulated here as
//! the day bench simulates it (`BENCH_BALLISTA_NODES`, default 1,000 nodes, four jobs a node, 50
//! metrics every 10 s). Its busiest day's features are computed three ways, one after another:
//! 1. the single pass in one process (`jobsight features --engine single-pass`, what the nightly
//!    DAG runs);
//! 2. the features plans in one process (`--engine plan`: DataFusion here);
//! 3. the same plans on a Ballista scheduler and two executors (`jobsight ballista scheduler`,
//!    `jobsight ballista executor --tasks BENCH_BALLISTA_TASKS`, default 1 each), all on this
//!    machine, through `[engine] ballista`.
//!
//! The three must write the same `features`, `features_job` and `job_summary` files byte for
//! byte (else the run fails, naming the file). Printed: each run's seconds and peak memory (the
//! client's own, and each executor's and the scheduler's VmHWM), and the most shuffle bytes the
//! executors' work folders held at once (polled every 0.2 s). `BENCH_BALLISTA_ROWS` sets
//! `features.plan_rows_at_a_time`.
//! Run: `cargo bench -p jobsight --features ballista --bench ballista_day`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");
const DAY: &str = "2026-11-20";
/// The three tables the features step writes.
const TABLES: [&str; 3] = ["features", "features_job", "job_summary"];

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs jobsight with `args`: its stdout and wall time. Panics with its output when it fails.
fn jobsight(args: &[&str]) -> (String, f64) {
    let started = Instant::now();
    let out = Command::new(JOBSIGHT)
        .args(args)
        .output()
        .expect("run jobsight");
    let seconds = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "jobsight {args:?} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (stdout, seconds)
}

/// The number before `marker` in `text` ("peak memory 123 MiB" → 123 for " MiB").
fn number_before(text: &str, marker: &str) -> f64 {
    text.split(marker)
        .next()
        .and_then(|head| head.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or(f64::NAN)
}

/// The warehouse's day with the most jobs.
fn busiest_day(data: &Path) -> String {
    let (out, _) = jobsight(&[
        "--data",
        data.to_str().unwrap_or_default(),
        "sql",
        "--format",
        "csv",
        "SELECT day, count(*) AS jobs FROM jobs GROUP BY day ORDER BY jobs DESC, day LIMIT 1",
    ]);
    let row = out.lines().nth(1).unwrap_or_default();
    row.split(',').next().unwrap_or_default().trim().to_string()
}

/// The files of the features tables for `day`, by path under `data`, with their bytes' digest.
fn features_files(data: &Path, day: &str) -> Vec<(PathBuf, [u8; 32])> {
    use sha2::Digest;
    let mut files = Vec::new();
    for table in TABLES {
        let folder = data.join(table).join(format!("day={day}"));
        let mut names: Vec<PathBuf> = std::fs::read_dir(&folder)
            .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
            .map(|e| e.expect("folder entry").path())
            .collect();
        names.sort();
        for path in names {
            let bytes = std::fs::read(&path).expect("read a features file");
            let digest: [u8; 32] = sha2::Sha256::digest(&bytes).into();
            files.push((
                path.strip_prefix(data).expect("under data").to_path_buf(),
                digest,
            ));
        }
    }
    files
}

/// Fails unless `run` wrote the same files, byte for byte, as the single pass.
fn assert_same_files(reference: &[(PathBuf, [u8; 32])], data: &Path, day: &str, run: &str) {
    let written = features_files(data, day);
    let names = |files: &[(PathBuf, [u8; 32])]| -> Vec<PathBuf> {
        files.iter().map(|(p, _)| p.clone()).collect()
    };
    assert_eq!(names(reference), names(&written), "{run}: other files");
    for ((path, a), (_, b)) in reference.iter().zip(&written) {
        assert_eq!(
            a,
            b,
            "{run}: {} differs from the single pass's",
            path.display()
        );
    }
}

/// `field` of a process's /proc status, in MiB (e.g. "VmHWM:").
fn process_mib(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kib| kib.parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Waits until something listens on `port` (at most a minute).
fn wait_for_port(port: u16) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "nothing listens on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The scheduler and executors, stopped when dropped.
struct Cluster(Vec<Child>);

impl Drop for Cluster {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn spawn(args: &[&str]) -> Child {
    Command::new(JOBSIGHT)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start a Ballista process")
}

/// Bytes of the files under `folder`.
fn folder_bytes(folder: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => folder_bytes(&e.path()),
            _ => e.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}

/// Polls the executors' work folders until `stop`: the most bytes each held at once.
fn watch_shuffles(folders: Vec<PathBuf>, stop: Arc<AtomicBool>) -> Vec<Arc<AtomicU64>> {
    let peaks: Vec<Arc<AtomicU64>> = folders.iter().map(|_| Arc::default()).collect();
    let watched = peaks.clone();
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            for (folder, peak) in folders.iter().zip(&watched) {
                peak.fetch_max(folder_bytes(folder), Ordering::Relaxed);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    peaks
}

fn main() {
    let kept = std::env::var_os("BENCH_BALLISTA_WORK").map(PathBuf::from);
    let scratch = tempfile::tempdir_in("/var/tmp").expect("temporary directory");
    let work = kept.clone().unwrap_or_else(|| scratch.path().to_path_buf());
    let data = work.join("warehouse");
    if kept.is_none() {
        let nodes = env_number("BENCH_BALLISTA_NODES", 1000);
        println!(
            "simulating {nodes} nodes, {} jobs placed on free nodes, 50 metrics every 10 s",
            4 * nodes
        );
        jobsight(&[
            "--data",
            data.to_str().unwrap_or_default(),
            "simulate",
            "--nodes",
            &nodes.to_string(),
            "--jobs",
            &(4 * nodes).to_string(),
            "--metrics",
            "50",
            "--step",
            "10",
            "--placement",
            "free-nodes",
            "--anomaly-share",
            "0.15",
            "--seed",
            "1",
            "--day",
            DAY,
        ]);
    }
    let day = busiest_day(&data);
    let rows = std::env::var("BENCH_BALLISTA_ROWS")
        .map(|r| format!("plan_rows_at_a_time = {r}\n"))
        .unwrap_or_default();
    let settings = format!(
        "data = {:?}\n\n[features]\ncores_per_node = 32\n{rows}",
        data.display().to_string()
    );
    let local = scratch.path().join("local.toml");
    std::fs::write(&local, &settings).expect("write the configuration");
    let features = |config: &Path, engine: &str| -> (f64, f64, String) {
        let (out, seconds) = jobsight(&[
            "--config",
            config.to_str().unwrap_or_default(),
            "features",
            "--day",
            &day,
            "--engine",
            engine,
        ]);
        (seconds, number_before(&out, " MiB"), out.trim().to_string())
    };
    println!("the features of {day} in {}", data.display());
    println!(
        "  {:<44} {:>8} {:>12}  what it said",
        "run", "seconds", "peak MiB"
    );
    let (single_s, single_mib, said) = features(&local, "single-pass");
    println!(
        "  {:<44} {single_s:>8.1} {single_mib:>12.0}  {said}",
        "1. single pass, one process"
    );
    let reference = features_files(&data, &day);
    let (plan_s, plan_mib, said) = features(&local, "plan");
    assert_same_files(&reference, &data, &day, "the plans here");
    println!(
        "  {:<44} {plan_s:>8.1} {plan_mib:>12.0}  {said}",
        "2. plans, one process (DataFusion here)"
    );

    // 3. A scheduler and two executors on this machine.
    let tasks = env_number("BENCH_BALLISTA_TASKS", 1).to_string();
    let scheduler_port = free_port();
    let mut cluster = Cluster(vec![spawn(&[
        "ballista",
        "scheduler",
        "--bind",
        &format!("127.0.0.1:{scheduler_port}"),
    ])]);
    wait_for_port(scheduler_port);
    let mut folders = Vec::new();
    for name in ["executor-1", "executor-2"] {
        let (flight, grpc) = (free_port(), free_port());
        let folder = scratch.path().join(name);
        cluster.0.push(spawn(&[
            "ballista",
            "executor",
            "--scheduler",
            &format!("127.0.0.1:{scheduler_port}"),
            "--flight-port",
            &flight.to_string(),
            "--grpc-port",
            &grpc.to_string(),
            "--work-dir",
            folder.to_str().unwrap_or_default(),
            "--tasks",
            &tasks,
        ]));
        wait_for_port(grpc);
        wait_for_port(flight);
        folders.push(folder);
    }
    // An executor registers with the scheduler as it starts.
    std::thread::sleep(Duration::from_secs(2));
    let remote = scratch.path().join("ballista.toml");
    std::fs::write(
        &remote,
        format!("{settings}\n[engine]\nballista = \"df://127.0.0.1:{scheduler_port}\"\n"),
    )
    .expect("write the configuration");
    let stop = Arc::new(AtomicBool::new(false));
    let shuffles = watch_shuffles(folders, stop.clone());
    let (cluster_s, client_mib, said) = features(&remote, "plan");
    stop.store(true, Ordering::Relaxed);
    assert_same_files(&reference, &data, &day, "the plans on Ballista");
    let peaks: Vec<String> = cluster
        .0
        .iter()
        .map(|c| format!("{:.0}", process_mib(c.id(), "VmHWM:")))
        .collect();
    let shuffle_mib: Vec<String> = shuffles
        .iter()
        .map(|b| format!("{:.0}", b.load(Ordering::Relaxed) as f64 / 1048576.0))
        .collect();
    println!(
        "  {:<44} {cluster_s:>8.1} {client_mib:>12.0}  {said}",
        format!("3. plans, Ballista: scheduler + 2 executors × {tasks} task(s)")
    );
    println!(
        "     peak MiB: scheduler {}, executors {}; most shuffle MiB held at once per executor: {}",
        peaks[0],
        peaks[1..].join(", "),
        shuffle_mib.join(", ")
    );
    println!(
        "  the three wrote the same files, byte for byte: {}",
        reference.len()
    );
    drop(cluster);
}
