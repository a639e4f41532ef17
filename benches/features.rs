//! Features throughput and peak memory, side by side with the tools a user would otherwise pick,
//! in the same run on the same Parquet warehouse:
//! - `jobsight features` (the single pass), jobsight's reference SQL run by DataFusion
//!   (`jobsight sql`, one statement per day), and the features as one DataFusion plan over the
//!   series core's SQL function `js_describe` (`features::reference::describe_sql`);
//! - DuckDB running the same reference SQL, polars (lazy, streaming engine) and pandas (group-by),
//!   all computing the same per job × node × metric statistics (benches/features_peers.py);
//! - reading every column of the telemetry files with pyarrow and nothing else: the floor.
//!
//! Data: `jobsight simulate` with 50 metrics every 10 s.
//! 1. Side by side: a whole day of a BENCH_PEER_NODES-node cluster (default 64, about 45 M rows),
//!    small enough that every peer fits in this machine's memory (pandas and polars hold the
//!    table, DuckDB and DataFusion hold every group's values for the percentiles). Every peer's
//!    result is compared with jobsight's `features` (rows matched, largest difference per column).
//! 2. As the day grows: a BENCH_NODES-node cluster (default 1,000; 0 skips it) at a quarter, half and the
//!    whole day's jobs, jobsight and the read-only floor, to show that jobsight's peak memory
//!    stays bounded.
//!
//! Each engine runs as a separate process; its peak memory is the child's maximum resident set
//! (getrusage RUSAGE_CHILDREN, measured by the Python helper's `measure` mode for jobsight).
//! Run: `cargo bench -p jobsight --bench features`.

use std::path::Path;
use std::process::Command;

#[path = "bench_support.rs"]
mod support;
use support::{bench_python, repo_dir};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// `jobsight features` and the read-only floor on `data`, printed; returns jobsight's run.
fn ours_and_floor(python: &Path, script: &str, data: &str) -> Measured {
    let ours = measure(
        python,
        &[
            JOBSIGHT,
            "--data",
            data,
            "features",
            "--cores-per-node",
            "32",
        ],
    );
    print_row("jobsight features (single pass)", &ours, &ours);
    let python_s = python.to_str().unwrap_or_default();
    let read = measure(python, &[python_s, script, "read", data, "-"]);
    print_row("read every column only (pyarrow)", &read, &ours);
    ours
}

/// One measured run: wall time, peak memory, and what it printed.
struct Measured {
    seconds: f64,
    peak_mib: f64,
    stdout: String,
}

/// Runs `command` under the helper's `measure` mode (its own peak memory, not the bench's).
fn measure(python: &Path, command: &[&str]) -> Measured {
    measure_with(python, command, &[])
}

/// [`measure`] with variables set in the command's environment.
fn measure_with(python: &Path, command: &[&str], env: &[(String, String)]) -> Measured {
    let script = repo_dir().join("benches/features_peers.py");
    let out = Command::new(python)
        .arg(&script)
        .arg("measure")
        .arg("--")
        .args(command)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("run the measuring helper");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
    let head: serde_json::Value = serde_json::from_str(first).expect("measure json");
    assert_eq!(head["status"], 0, "{command:?} failed: {rest}");
    Measured {
        seconds: head["seconds"].as_f64().unwrap_or(f64::NAN),
        peak_mib: head["peak_mib"].as_f64().unwrap_or(f64::NAN),
        stdout: rest.to_string(),
    }
}

fn days(python: &Path, data: &Path) -> Vec<chrono::NaiveDate> {
    let m = measure(
        python,
        &[
            JOBSIGHT,
            "--data",
            data.to_str().unwrap_or_default(),
            "sql",
            "--format",
            "csv",
            "SELECT DISTINCT day FROM jobs ORDER BY day",
        ],
    );
    m.stdout
        .lines()
        .skip(1)
        .filter_map(|d| chrono::NaiveDate::parse_from_str(d.trim(), "%Y-%m-%d").ok())
        .collect()
}

fn print_row(name: &str, m: &Measured, baseline: &Measured) {
    println!(
        "  {name:<38} {:>9.1} {:>10.0} {:>12.2} {:>12.2}",
        m.seconds,
        m.peak_mib,
        m.seconds / baseline.seconds,
        m.peak_mib / baseline.peak_mib
    );
}

/// Simulates a day's share of jobs into `data`; returns the telemetry rows.
fn simulate(python: &Path, data: &Path, nodes: u64, jobs: u64) -> f64 {
    let sim = measure(
        python,
        &[
            JOBSIGHT,
            "--data",
            data.to_str().unwrap_or_default(),
            "simulate",
            "--nodes",
            &nodes.to_string(),
            "--jobs",
            &jobs.to_string(),
            "--metrics",
            "50",
            "--step",
            "10",
        ],
    );
    sim.stdout
        .split(" telemetry rows")
        .next()
        .and_then(|head| head.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or(f64::NAN)
}

fn header() {
    println!(
        "  {:<38} {:>9} {:>10} {:>12} {:>12}",
        "engine", "seconds", "peak MiB", "time ratio", "memory ratio"
    );
}

fn main() {
    let nodes = env_number("BENCH_NODES", 1000);
    let peer_nodes = env_number("BENCH_PEER_NODES", 64);
    let python = bench_python("duckdb, polars, pandas, pyarrow")
        .expect("a Python environment with benches/requirements.txt (see JOBSIGHT_BENCH_VENV)");
    let script = repo_dir().join("benches/features_peers.py");
    let script = script.to_str().unwrap_or_default();
    let python_s = python.to_str().unwrap_or_default().to_string();

    // 1. Side by side, on a warehouse every peer can hold in memory.
    let work = tempfile::tempdir_in("/var/tmp").expect("temporary directory");
    let data = work.path().join("warehouse");
    let data_s = data.to_str().unwrap_or_default();
    let rows = simulate(&python, &data, peer_nodes, 4 * peer_nodes);
    println!(
        "side by side: {peer_nodes} nodes, 50 metrics @10 s, a whole day ({} jobs), {:.1} M telemetry rows; ratios to jobsight (below 1 = faster or smaller than jobsight)",
        4 * peer_nodes,
        rows / 1e6
    );
    header();
    let ours = ours_and_floor(&python, script, data_s);
    let days = days(&python, &data);
    // One `jobsight sql` per day (with DataFusion options in `env`): the times summed, the peak
    // the largest.
    let per_day = |sql_of: &dyn Fn(chrono::NaiveDate) -> String, env: &[(String, String)]| {
        let mut total = Measured {
            seconds: 0.0,
            peak_mib: 0.0,
            stdout: String::new(),
        };
        for &day in &days {
            let m = measure_with(
                &python,
                &[
                    JOBSIGHT,
                    "--data",
                    data_s,
                    "sql",
                    "--format",
                    "csv",
                    &sql_of(day),
                ],
                env,
            );
            total.seconds += m.seconds;
            total.peak_mib = total.peak_mib.max(m.peak_mib);
        }
        total
    };
    use jobsight_features::reference;
    let reference = per_day(&|day| reference::node_metric_sql(day, 60, &[]), &[]);
    print_row("jobsight reference SQL (DataFusion)", &reference, &ours);
    // The same statistics (and the temporal ones) as one DataFusion plan over `js_describe`, with
    // DataFusion's default options and with those it runs best with.
    let plan = |day| reference::describe_sql(day, 60, &[]);
    let described = per_day(&plan, &[]);
    print_row("js_describe plan, default options", &described, &ours);
    let described = per_day(&plan, &reference::describe_options_env());
    print_row("js_describe plan (DataFusion)", &described, &ours);
    // DuckDB runs the reference SQL from files.
    let mut sql_files = Vec::new();
    for &day in &days {
        let path = work.path().join(format!("features-{day}.sql"));
        std::fs::write(&path, reference::node_metric_sql(day, 60, &[])).expect("write sql");
        sql_files.push(path.to_string_lossy().into_owned());
    }
    for engine in ["duckdb", "polars", "pandas"] {
        let out = work.path().join(format!("{engine}.parquet"));
        let out_s = out.to_str().unwrap_or_default();
        let mut command = vec![python_s.as_str(), script, engine, data_s, out_s];
        if engine == "duckdb" {
            command.extend(sql_files.iter().map(String::as_str));
        }
        let m = measure(&python, &command);
        print_row(engine, &m, &ours);
        let check = measure(&python, &[&python_s, script, "compare", data_s, out_s]);
        println!("    agreement with jobsight: {}", check.stdout.trim());
    }
    drop(work);

    // 2. Peak memory as the day grows, at full size (BENCH_NODES=0 leaves it out).
    if nodes == 0 {
        return;
    }
    println!(
        "\nas the day grows: {nodes} nodes, 50 metrics @10 s; ratios to jobsight at the same size"
    );
    for (label, share) in [("1/4", 1), ("1/2", 2), ("full", 4)] {
        let work = tempfile::tempdir_in("/var/tmp").expect("temporary directory");
        let data = work.path().join("warehouse");
        let data_s = data.to_str().unwrap_or_default();
        let rows = simulate(&python, &data, nodes, nodes * share);
        println!(
            "{label} day: {} jobs, {:.1} M telemetry rows",
            nodes * share,
            rows / 1e6
        );
        header();
        let ours = ours_and_floor(&python, script, data_s);
        println!(
            "    = {:.1} M rows/s; {}",
            rows / ours.seconds / 1e6,
            ours.stdout.trim()
        );
    }
}
