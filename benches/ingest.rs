//! Ingest throughput, size on disk and peak memory, measured on the whole command a user runs:
//! - the LDMS path: `jobsight import ldms-runs` on the 56 real HPAS ExaMiniMD runs (when
//!   `../shared/data` is present);
//! - the simulator path: `jobsight simulate` for a 1,000-node cluster with 50 metrics at 10 s, at a
//!   quarter, half and the whole day's jobs, to show that peak memory stays flat as the day grows
//!   (telemetry streams through bounded per-day buffers into Parquet parts);
//! - the LDMS store path: `jobsight import ldms-store` on a generated store file (BENCH_STORE_NODES
//!   nodes, default 200, every 10 s for a day, 10 metrics) against a simulated day's jobs on those
//!   nodes, and in the same run DuckDB doing the same attribution with SQL (unpivot, interval
//!   join) into zstd Parquet; both must produce the same number of rows.
//!
//! Each run is a separate process so its peak memory (VmHWM, printed by the command) is its own.
//! Run: `cargo bench -p jobsight --bench ingest` (BENCH_NODES, default 1000, scales the simulator).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

#[path = "bench_support.rs"]
mod support;
use support::{bench_python, repo_dir};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

/// Bytes of the files below `dir` whose name contains `needle`.
fn bytes_matching(dir: &Path, needle: &str) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if e.file_name().to_string_lossy().contains(needle) {
                total += e.metadata().map_or(0, |m| m.len());
            }
        }
    }
    total
}

fn dir_bytes(dir: &Path) -> u64 {
    bytes_matching(dir, "")
}

fn ldms_store(nodes: u32) {
    use std::io::Write as _;
    let work = tempfile::tempdir().expect("temporary directory");
    let data = work.path().join("warehouse");
    let args = [
        "simulate",
        "--nodes",
        &nodes.to_string(),
        "--metrics",
        "16",
        "--step",
        "3600",
    ];
    run(&args, &data);
    let (_, jobs) = run(
        &[
            "sql",
            "--format",
            "csv",
            "SELECT job_id, nodes, CAST(start AS BIGINT) AS s, CAST(\"end\" AS BIGINT) AS e FROM jobs WHERE start IS NOT NULL",
        ],
        &data,
    );
    // The job windows, for DuckDB (jobsight reads them from its own jobs table).
    let windows_path = work.path().join("windows.csv");
    let mut windows =
        std::io::BufWriter::new(std::fs::File::create(&windows_path).expect("create"));
    writeln!(windows, "job_id,node,start_us,end_us").expect("write");
    let mut node_names = std::collections::BTreeSet::new();
    let mut window_count = 0;
    let mut reader = jobs.lines();
    reader.next();
    for line in reader {
        // job_id,"nodes",s,e; the node list may be quoted because it holds commas.
        let (id, rest) = line.split_once(',').expect("job_id");
        let (list, times) = rest
            .rsplit_once(',')
            .and_then(|(head, e)| head.rsplit_once(',').map(|(list, s)| (list, (s, e))))
            .expect("times");
        for node in slurm_hooks::hostlist::expand(list.trim_matches('"')).expect("host list") {
            writeln!(windows, "{id},{node},{},{}", times.0, times.1).expect("write");
            node_names.insert(node);
            window_count += 1;
        }
    }
    windows.flush().expect("flush");
    drop(windows);

    // The store: every node every 10 s over the simulated day, rows interleaved in time order.
    let store = work.path().join("store");
    std::fs::create_dir(&store).expect("mkdir");
    let store_file = store.join("meminfo");
    let mut csv = std::io::BufWriter::new(std::fs::File::create(&store_file).expect("create"));
    let columns: Vec<String> = (0..10).map(|c| format!("c{c}")).collect();
    writeln!(
        csv,
        "#Time,Time_usec,ProducerName,component_id,job_id,app_id,{}",
        columns.join(",")
    )
    .expect("write");
    let day_start = 1_795_132_800i64; // 2026-11-20, the simulator's default day
    let mut samples = 0u64;
    for step in 0..8640i64 {
        let t = day_start + step * 10;
        for (k, node) in node_names.iter().enumerate() {
            write!(csv, "{t}.002099,2099,{node},{k},0,0").expect("write");
            for c in 0..10i64 {
                write!(csv, ",{}", (step * 31 + c * 7 + k as i64) % 100_000).expect("write");
            }
            csv.write_all(b"\n").expect("write");
            samples += 1;
        }
    }
    csv.flush().expect("flush");
    drop(csv);
    let csv_mb = std::fs::metadata(&store_file).map_or(0, |m| m.len()) as f64 / 1e6;

    let (seconds, out) = run(
        &["import", "ldms-store", store.to_str().unwrap_or_default()],
        &data,
    );
    let rows = number_before(&out, "telemetry rows");
    let peak = peak_mib(&out);
    row(
        &format!(
            "ldms-store: {} nodes x 10 metrics @10 s, 1 day",
            node_names.len()
        ),
        rows,
        seconds,
        bytes_matching(&data, "ldms-store"),
        peak,
    );
    println!(
        "  = {:.2} M CSV lines/s ({samples} lines, {csv_mb:.0} MB), {} job-node windows",
        samples as f64 / seconds / 1e6,
        window_count
    );
    let Some(python) = bench_python("duckdb") else {
        println!("  duckdb: SKIPPED, could not create a Python environment with duckdb");
        return;
    };
    let script = repo_dir().join("benches/ldms_store_duckdb.py");
    let started = Instant::now();
    let out = Command::new(python)
        .arg(script)
        .arg(&store_file)
        .arg(&windows_path)
        .arg(work.path().join("duckdb.parquet"))
        .output()
        .expect("run duckdb");
    let duck_seconds = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "duckdb failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).expect("duckdb json");
    let duck_rows = result["rows"].as_f64().unwrap_or(f64::NAN);
    let duck_peak = result["peak_mib"].as_f64().unwrap_or(f64::NAN);
    row(
        "ldms-store, same data: DuckDB unpivot + interval join",
        duck_rows,
        duck_seconds,
        bytes_matching(work.path(), "duckdb.parquet"),
        duck_peak,
    );
    assert_eq!(
        duck_rows, rows,
        "jobsight and DuckDB must produce the same rows"
    );
    println!(
        "  = jobsight takes {:.2}x DuckDB's time and {:.2}x its peak memory (below 1 = jobsight better)",
        seconds / duck_seconds,
        peak / duck_peak
    );
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

    let shared = repo_dir().join("../shared/data");
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

    let store_nodes: u32 = std::env::var("BENCH_STORE_NODES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    ldms_store(store_nodes);

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
