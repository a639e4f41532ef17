//! Workflow traces: `jobsight import pegasus` and `jobsight workflow score` against pandas doing
//! the same two steps on the same files (`benches/workflows_peers.py`), in the same run, as
//! ratios.
//!
//! Data: BENCH_RUNS runs (default 2,000: 274,000 tasks) of a workflow shaped like Flow-Bench's 1000
//! Genome (137 tasks: create_dir, 100 `individuals`, 2 merges, 2 siftings, 14 `mutation_overlap`,
//! 14 `frequency`, 3 stage-outs, cleanup; the same DAG), each run's tasks spread over 20 workers,
//! a third of the runs with two workers degraded (tasks run 1.5-3x longer for the same CPU time),
//! written as Flow-Bench's parsed CSV files (its column names, 45 columns), one folder per label.
//! Generated from a fixed seed.
//!
//! - **import**: jobsight's importer (CSV to `workflows` and `workflow_tasks` Parquet, with the DAG
//!   places and critical paths) against pandas `read_csv` of every file and one `to_parquet`;
//! - **score**: jobsight reads the tasks (DataFusion), scores them and writes `workflow_scores`,
//!   against pandas reading the Parquet, the same robust z-scores and host medians, `to_parquet`.
//!
//! The two scores' sums are compared, so both compute the same thing. Run:
//! `cargo bench -p jobsight --bench workflows` (BENCH_RUNS=200 for a quick look).

#[path = "bench_support.rs"]
mod support;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use jobsight_sim::Rng;
use jobsight_workflow::{detect, pegasus};
use support::{bench_python, repo_dir};

const HEADER: &str = ",anomaly_type,type,is_clustered,ready,pre_script_start,pre_script_end,submit,stage_in_start,stage_in_end,stage_in_effective_bytes_per_sec,execute_start,execute_end,stage_out_start,stage_out_end,stage_out_effective_bytes_per_sec,post_script_start,post_script_end,wms_delay,pre_script_delay,queue_delay,runtime,post_script_delay,stage_in_delay,stage_in_bytes,stage_out_delay,stage_out_bytes,kickstart_user,kickstart_site,kickstart_hostname,kickstart_transformations,kickstart_executables,kickstart_executables_argv,kickstart_executables_cpu_time,kickstart_status,kickstart_executables_exitcode,kickstart_online_iowait,kickstart_online_bytes_read,kickstart_online_bytes_written,kickstart_online_read_system_calls,kickstart_online_write_system_calls,kickstart_online_utime,kickstart_online_stime,kickstart_online_bytes_read_per_second,kickstart_online_bytes_written_per_second";

/// The workflow's tasks by level: (kind, count, seconds of work).
const LEVELS: [(&str, usize, f64); 8] = [
    ("create_dir", 1, 6.0),
    ("individuals", 100, 1000.0),
    ("individuals_merge", 2, 120.0),
    ("sifting", 2, 60.0),
    ("mutation_overlap", 14, 300.0),
    ("frequency", 14, 400.0),
    ("stage_out", 3, 5.0),
    ("cleanup", 1, 3.0),
];

fn task_ids() -> Vec<Vec<String>> {
    let mut n = 0;
    LEVELS
        .iter()
        .map(|(kind, count, _)| {
            (0..*count)
                .map(|_| {
                    n += 1;
                    format!("{kind}_ID{n:07}")
                })
                .collect()
        })
        .collect()
}

/// Every task of a level waits for every task of the level above (a layered DAG).
fn dag(levels: &[Vec<String>]) -> String {
    let mut adjacency = serde_json::Map::new();
    for pair in levels.windows(2) {
        for parent in &pair[0] {
            adjacency.insert(parent.clone(), serde_json::json!(pair[1]));
        }
    }
    serde_json::Value::Object(adjacency).to_string()
}

fn generate(dir: &Path, runs: u64) -> u64 {
    let levels = task_ids();
    std::fs::write(dir.join("dag.json"), dag(&levels)).expect("dag");
    let mut rng = Rng::new(21);
    let mut tasks = 0;
    for run in 0..runs {
        let anomalous = run % 3 == 0;
        let label = if !anomalous {
            "normal"
        } else if run % 2 == 0 {
            "cpu_2"
        } else {
            "hdd_5"
        };
        let degraded = [rng.below(20), rng.below(20)];
        let folder = dir.join("traces").join(label);
        std::fs::create_dir_all(&folder).expect("folder");
        let mut csv = String::from(HEADER);
        csv.push('\n');
        let mut clock = 1_660_000_000.0 + run as f64 * 10_000.0;
        for (level, ids) in levels.iter().enumerate() {
            let work = LEVELS[level].2;
            let mut level_end: f64 = clock;
            for id in ids {
                let host = rng.below(20);
                let slow = anomalous && degraded.contains(&host);
                let jitter = 0.9 + rng.below(200) as f64 / 1000.0;
                let cpu = work * jitter;
                // Healthy tasks spend 90-97 % of their run time on the CPU.
                let healthy = 1.03 + rng.below(80) as f64 / 1000.0;
                let runtime = cpu
                    * if slow {
                        1.5 + rng.below(150) as f64 / 100.0
                    } else {
                        healthy
                    };
                let (ready, submit) = (clock, clock + 2.0);
                let start = submit + 5.0 + rng.below(30) as f64;
                let end = start + runtime;
                level_end = level_end.max(end + 5.0);
                let label = if slow { label } else { "None" };
                tasks += 1;
                let _ = writeln!(
                    csv,
                    "{id},{label},compute,0,{ready},,,{submit},{s},{si},1000.0,{start},{end},{end},{so},100.0,{end},{pe},1.0,,5.0,{runtime},5.0,4.0,1000.0,2.0,100.0,u,condorpool,worker-{host},t,/bin/x,-a b,{cpu},0,0,0.1,1000.0,100.0,10.0,5.0,{cpu},{st},100.0,10.0",
                    s = submit + 1.0,
                    si = submit + 5.0,
                    so = end + 2.0,
                    pe = end + 5.0,
                    st = cpu * 0.02,
                );
            }
            clock = level_end;
        }
        std::fs::write(folder.join(format!("bench-wf-run{run:05}.csv")), csv).expect("trace");
    }
    tasks
}

fn main() {
    let runs: u64 = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let work = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let tasks = generate(work.path(), runs);
    println!(
        "generated {runs} runs, {tasks} tasks in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let traces = work.path().join("traces");
    let data = work.path().join("warehouse");

    let started = Instant::now();
    let imported = pegasus::import(
        &data,
        &traces,
        Some(&work.path().join("dag.json")),
        |_, _, _| {},
    )
    .expect("import");
    let import_s = started.elapsed().as_secs_f64();
    assert_eq!(imported.tasks as u64, tasks);

    let started = Instant::now();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (read, _) = runtime
        .block_on(detect::read_tasks(&data, detect::RunLabels::Skip))
        .expect("read");
    let read_s = started.elapsed().as_secs_f64();
    let scores = detect::score(&read);
    let compute_s = started.elapsed().as_secs_f64() - read_s;
    let score_sum: f64 = scores.iter().map(|(_, r)| r.score).sum();
    let (scored, flagged, _) = detect::write_scores(&data, scores).expect("write");
    let score_s = started.elapsed().as_secs_f64();
    assert_eq!(scored as u64, tasks);
    println!(
        "score: reading the tasks {read_s:.2} s, scoring {compute_s:.2} s, writing {:.2} s",
        score_s - read_s - compute_s
    );

    println!(
        "{:<44} {:>10} {:>10} {:>8}",
        "step", "jobsight", "pandas", "ratio"
    );
    let Some(python) = bench_python("pandas, pyarrow") else {
        println!("import {import_s:.2} s, score {score_s:.2} s; pandas not available: no peer");
        return;
    };
    let out = Command::new(python)
        .arg(repo_dir().join("benches/workflows_peers.py"))
        .arg(&traces)
        .arg(work.path().join("pandas"))
        .output()
        .expect("peer");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let peer: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("the peer's JSON line");
    let peer_sum = peer["score_sum"].as_f64().unwrap_or(f64::NAN);
    assert!(
        (peer_sum - score_sum).abs() <= 1e-6 * score_sum.abs().max(1.0),
        "the scores differ: jobsight {score_sum}, pandas {peer_sum}"
    );
    assert_eq!(peer["flagged"].as_u64(), Some(flagged as u64));
    for (step, ours, theirs) in [
        (
            "import (CSV traces to Parquet)",
            import_s,
            peer["import_seconds"].as_f64(),
        ),
        (
            "score (robust z, host medians, Parquet)",
            score_s,
            peer["score_seconds"].as_f64(),
        ),
    ] {
        let theirs = theirs.unwrap_or(f64::NAN);
        println!(
            "{step:<44} {ours:>9.2}s {theirs:>9.2}s {:>7.2}x",
            theirs / ours
        );
    }
    println!("{tasks} tasks, {flagged} flagged; score sums agree ({score_sum:.3})");
}
