//! What nightly compaction buys: admin queries over one busy day of per-job parts, before and
//! after the `compact` step folds them into day files, in the same run, as ratios.
//!
//! Data: BENCH_JOBS jobs (default 10,000, a busy day's job flow on a mid-size cluster) ending on
//! one day, written exactly as the per-job path writes them: one `jobs` part and one `telemetry`
//! part per job (`catalog::write_part`, `ingest::TelemetrySink`), each job with BENCH_METRICS
//! metrics (default 8) every 10 s for 10 minutes on one node. That is 2 × BENCH_JOBS small
//! Parquet files; after compaction it is one file per table.
//!
//! Each query runs through `jobsight sql`'s own path (`query::run`: a fresh session, the tables
//! registered by listing their directories, then the query), so the time includes what a new
//! session pays to list and open the files. Best of three runs each.
//! Run: `cargo bench -p jobsight --bench compaction`.

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{NaiveDate, TimeZone, Utc};
use jobsight_ingest::{JobRow, TelemetrySink};
use jobsight_warehouse::catalog::{self, Table};

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

const QUERIES: [(&str, &str); 4] = [
    (
        "jobs of the day by state",
        "SELECT state, count(*), sum(cpus) FROM jobs WHERE day = '2026-11-22' GROUP BY state",
    ),
    (
        "one job's row",
        "SELECT * FROM jobs WHERE day = '2026-11-22' AND job_id = '4242'",
    ),
    (
        "telemetry per metric",
        "SELECT metric, avg(value), max(value) FROM telemetry WHERE day = '2026-11-22' GROUP BY metric",
    ),
    (
        "one job's telemetry",
        "SELECT metric, max(value) FROM telemetry WHERE day = '2026-11-22' AND job_id = '4242' GROUP BY metric",
    ),
];

fn generate(data: &Path, day: NaiveDate, jobs: u64, metrics: u64) {
    let day_start = Utc
        .from_utc_datetime(&day.and_hms_opt(0, 0, 0).expect("midnight"))
        .timestamp();
    let states = ["COMPLETED", "COMPLETED", "COMPLETED", "FAILED", "TIMEOUT"];
    for j in 0..jobs {
        // Jobs end spread over the day; each ran 10 minutes on one of 256 nodes.
        let end = day_start + 600 + (j as i64 * 85_000 / jobs as i64);
        let start = end - 600;
        let node = format!("n{:04}", j % 256);
        let job_id = j.to_string();
        let name = format!("job-bench-{j}-r0-{start}");
        let row = JobRow {
            cluster: "bench".into(),
            job_id: job_id.clone(),
            array_job_id: None,
            array_task_id: None,
            restart_count: 0,
            user: Some(format!("user{}", j % 97)),
            account: Some(format!("acct{}", j % 13)),
            partition: Some("batch".into()),
            qos: None,
            num_nodes: Some(1),
            nodes: Some(node.clone()),
            cpus: Some(32),
            gpus: None,
            req_mem_mb: Some(64_000),
            time_limit_s: Some(3600),
            submit: Utc.timestamp_opt(start - 120, 0).single(),
            start: Utc.timestamp_opt(start, 0).single(),
            end: Utc.timestamp_opt(end, 0).single().expect("end"),
            state: Some(states[j as usize % states.len()].into()),
            exit_code: Some(0),
            exit_signal: None,
            name: Some(format!("app{}", j % 31)),
            source: "bench".into(),
            dependency: None,
            ..JobRow::default()
        };
        let batch = JobRow::batch(std::slice::from_ref(&row)).expect("jobs batch");
        catalog::write_part(data, Table::Jobs, day, &name, &[batch]).expect("jobs part");
        let mut sink = TelemetrySink::new(data, &name, 1 << 22);
        for m in 0..metrics {
            let metric = format!("metric_{m}");
            for s in 0..60 {
                let ts = (start + s * 10) * 1_000_000;
                let value = (j + m) as f64 + (s as f64 * 0.1).sin();
                sink.push(day, &job_id, &node, &metric, ts, value)
                    .expect("telemetry");
            }
        }
        sink.finish().expect("telemetry part");
        if (j + 1) % 2000 == 0 {
            eprintln!("  {} of {jobs} jobs written", j + 1);
        }
    }
}

fn files(data: &Path, day: NaiveDate) -> usize {
    [Table::Jobs, Table::Telemetry]
        .iter()
        .map(|t| {
            catalog::part_files(data, *t, day, None)
                .expect("list")
                .len()
        })
        .sum()
}

/// Best of three, and the rows the query returned (the same before and after, or the
/// comparison means nothing).
fn time_queries(runtime: &tokio::runtime::Runtime, data: &Path) -> Vec<(Duration, usize)> {
    QUERIES
        .iter()
        .map(|(_, sql)| {
            let mut best = Duration::MAX;
            let mut rows = 0;
            for _ in 0..3 {
                let started = Instant::now();
                let batches = runtime
                    .block_on(jobsight_warehouse::query::run(data, sql))
                    .expect("query");
                best = best.min(started.elapsed());
                rows = batches.iter().map(|b| b.num_rows()).sum();
            }
            (best, rows)
        })
        .collect()
}

fn main() {
    let jobs = env_number("BENCH_JOBS", 10_000);
    let metrics = env_number("BENCH_METRICS", 8);
    let tmp = tempfile::tempdir().expect("temporary directory");
    let data = tmp.path().join("data");
    let day = NaiveDate::from_ymd_opt(2026, 11, 22).expect("day");
    eprintln!(
        "compaction: writing {jobs} jobs' per-job parts ({metrics} metrics, 60 samples each)"
    );
    let started = Instant::now();
    generate(&data, day, jobs, metrics);
    let written = started.elapsed();
    let before_files = files(&data, day);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let before = time_queries(&runtime, &data);

    let started = Instant::now();
    let mut rows = 0;
    for table in [Table::Jobs, Table::Telemetry] {
        rows += catalog::compact_day(&data, table, day)
            .expect("compaction")
            .rows;
    }
    let compaction = started.elapsed();
    let after_files = files(&data, day);
    let after = time_queries(&runtime, &data);

    println!(
        "compaction bench: {jobs} jobs, {rows} rows ({} telemetry); written as per-job parts in {:.1} s",
        jobs * metrics * 60,
        written.as_secs_f64()
    );
    println!(
        "compact step: {before_files} files -> {after_files} in {:.1} s",
        compaction.as_secs_f64()
    );
    println!(
        "| query | per-job parts ({before_files} files) | compacted ({after_files} files) | speed-up |"
    );
    println!("|---|---|---|---|");
    for (i, (label, _)) in QUERIES.iter().enumerate() {
        let ((b, rb), (a, ra)) = (before[i], after[i]);
        assert_eq!(
            rb, ra,
            "{label}: different rows before and after compaction"
        );
        println!(
            "| {label} | {:.3} s | {:.3} s | {:.1}x |",
            b.as_secs_f64(),
            a.as_secs_f64(),
            b.as_secs_f64() / a.as_secs_f64()
        );
    }
}
