//! Ingest throughput, size on disk and peak memory, measured on the whole command a user runs:
//! - the LDMS path: `jobsight import ldms-runs` on the 56 real HPAS ExaMiniMD runs (when
//!   `../shared/data` is present);
//! - the simulator path: `jobsight simulate` for a 1,000-node cluster with 50 metrics at 10 s, at a
//!   quarter, half and the whole day's jobs, to show that peak memory stays flat as the day grows
//!   (telemetry streams through bounded per-day buffers into Parquet parts).
//!
//! Each run is a separate process so its peak memory (VmHWM, printed by the command) is its own.
//! Run: `cargo bench -p jobsight --bench ingest` (BENCH_NODES, default 1000, scales the simulator).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                total += e.metadata().map_or(0, |m| m.len());
            }
        }
    }
    total
}

/// Runs a jobsight command and returns (seconds, its stdout).
fn run(args: &[&str], data: &Path) -> (f64, String) {
    let started = Instant::now();
    let out = Command::new(JOBSIGHT)
        .arg("--data")
        .arg(data)
        .args(args)
        .output()
        .expect("run jobsight");
    let seconds = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "jobsight {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (seconds, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The number right before `marker` in `text` ("123 telemetry rows" -> 123).
fn number_before(text: &str, marker: &str) -> f64 {
    let head = &text[..text
        .find(marker)
        .unwrap_or_else(|| panic!("{marker:?} not in {text}"))];
    head.split_whitespace()
        .last()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number before {marker:?} in {text}"))
}

fn peak_mib(text: &str) -> f64 {
    text.split("peak memory ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(f64::NAN)
}

fn row(name: &str, rows: f64, seconds: f64, bytes: u64, peak: f64) {
    println!(
        "{name:<44} {:>12.0} {:>8.1} {:>9.2} {:>13.0} {:>9.0}",
        rows,
        seconds,
        rows / seconds / 1e6,
        bytes as f64 / (rows / 1e6),
        peak
    );
}

fn main() {
    let nodes: u32 = std::env::var("BENCH_NODES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    println!(
        "{:<44} {:>12} {:>8} {:>9} {:>13} {:>9}",
        "ingest", "rows", "seconds", "M rows/s", "bytes/M rows", "peak MiB"
    );

    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    if shared.join("hpas-ldms-examinimd.tar.xz").exists() {
        let work = tempfile::tempdir().expect("temporary directory");
        let status = Command::new("tar")
            .arg("xJf")
            .arg(shared.join("hpas-ldms-examinimd.tar.xz"))
            .arg("-C")
            .arg(work.path())
            .status()
            .expect("tar");
        assert!(status.success());
        let data = work.path().join("warehouse");
        let labels = shared.join("hpas-ldms-examinimd.labels.csv");
        let dataset = work.path().join("dataset");
        let args = [
            "import",
            "ldms-runs",
            "--labels",
            labels.to_str().unwrap_or_default(),
            dataset.to_str().unwrap_or_default(),
        ];
        let (seconds, out) = run(&args, &data);
        let rows = number_before(&out, "telemetry rows");
        let samples = number_before(&out, "samples");
        row(
            "ldms-runs: 56 real HPAS runs (CSV values)",
            rows,
            seconds,
            dir_bytes(&data),
            peak_mib(&out),
        );
        println!(
            "  = {:.0} CSV sample lines/s ({samples} lines of ~400 metrics each)",
            samples / seconds
        );
    } else {
        println!("ldms-runs: SKIPPED, {} not present", shared.display());
    }

    for (label, share) in [("1/4", 1), ("1/2", 2), ("full", 4)] {
        let jobs = nodes * share;
        let work = tempfile::tempdir().expect("temporary directory");
        let args = [
            "simulate",
            "--nodes",
            &nodes.to_string(),
            "--jobs",
            &jobs.to_string(),
            "--metrics",
            "50",
            "--step",
            "10",
        ];
        let (seconds, out) = run(&args, work.path());
        let rows = number_before(&out, "telemetry rows");
        row(
            &format!("simulate: {nodes} nodes, 50 metrics @10 s, {label} day"),
            rows,
            seconds,
            dir_bytes(work.path()),
            peak_mib(&out),
        );
    }
}
