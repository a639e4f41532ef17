//! A year of a large cluster's job facts: the admins' queries through `jobsight sql`'s own path
//! side by side with DuckDB on the same Parquet, in the same run, as ratios; and the time and peak
//! memory of the nightly `summarize` step over the whole year.
//!
//! Data: BENCH_JOBS jobs (default 5,000,000) spread over 365 days of one cluster with 2,000 users
//! in 200 accounts and 8 partitions, written as the bulk importers write them (one part per table
//! and day): `jobs`; `job_summary` for the 70 % of jobs with telemetry; and `findings`, one or two
//! for every fifth job. Generated from a fixed seed, so two runs see the same year.
//!
//! Each query runs best of three:
//! - **jobsight:** `query::run`, a fresh session that lists the tables' folders, then the query;
//! - **DuckDB:** a fresh connection that creates the same views (`jobs` with the same derived
//!   columns) over `read_parquet(..., hive_partitioning)`, then the same SQL
//!   (`benches/summaries_peers.py`).
//!
//! Both engines' answers are compared (row count and a checksum of the first numeric column), so
//! the two measure the same work. Run:
//! `cargo bench -p jobsight --bench summaries` (BENCH_JOBS=500000 for a quick look).

#[path = "bench_support.rs"]
mod support;
#[path = "year.rs"]
mod year;

use std::process::Command;
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use jobsight_warehouse::query::{self, Columns};
use support::{bench_python, repo_dir};

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The admins' queries: the documented kinds (queries.md) over a year instead of a fixture.
const QUERIES: [(&str, &str); 7] = [
    (
        "core-hours per user, the year",
        r#"SELECT "user", sum(core_hours) AS h FROM jobs GROUP BY "user" ORDER BY h DESC, "user" LIMIT 20"#,
    ),
    (
        "top wasters of a week (summaries)",
        r#"SELECT "user", sum(idle_core_hours) AS idle, sum(waste_kwh) AS kwh FROM summaries WHERE day BETWEEN '2025-06-02' AND '2025-06-08' GROUP BY "user" ORDER BY idle DESC, "user" LIMIT 10"#,
    ),
    (
        "a user's jobs with a finding",
        r#"SELECT j.job_id, f.rule FROM jobs j JOIN findings f ON f.job_id = j.job_id AND f.day = j.day WHERE j."user" = 'u7' AND f.rule = 'idle-cores' ORDER BY j.job_id"#,
    ),
    (
        "efficiency by partition, a month (summaries)",
        r#"SELECT "partition", sum(core_hours) AS h, sum(cpu_eff * cpu_eff_core_hours) / sum(cpu_eff_core_hours) AS eff FROM summaries WHERE day BETWEEN '2025-06-01' AND '2025-06-30' GROUP BY "partition" ORDER BY "partition""#,
    ),
    (
        "rules that fire most",
        r#"SELECT rule, count(*) AS n FROM findings GROUP BY rule ORDER BY n DESC, rule"#,
    ),
    (
        "telemetry coverage per day",
        r#"SELECT j.day, count(*) AS jobs, sum(CASE WHEN s.judgeable THEN 1 ELSE 0 END) AS judged FROM jobs j LEFT JOIN job_summary s ON s.job_id = j.job_id AND s.day = j.day GROUP BY j.day ORDER BY j.day"#,
    ),
    (
        "jobs and core-hours by month and state",
        r#"SELECT substr(day, 1, 7) AS month, state, count(*) AS n, sum(core_hours) AS h FROM jobs GROUP BY 1, 2 ORDER BY 1, 2"#,
    ),
];

/// Writes the year: one part per table and day.
/// Row count and the sum of the first numeric column of a result (rounded), to check that both
/// engines answered the same.
fn fingerprint(batches: &[datafusion::arrow::record_batch::RecordBatch]) -> (usize, f64) {
    let mut rows = 0;
    let mut sum = 0.0;
    for batch in batches {
        let c = Columns::of(batch).expect("columns");
        let names: Vec<String> = batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        for i in 0..batch.num_rows() {
            rows += 1;
            if let Some(v) = names
                .iter()
                .find_map(|n| c.float(n, i).or_else(|| c.int(n, i).map(|v| v as f64)))
            {
                sum += v;
            }
        }
    }
    (rows, sum)
}

fn main() {
    let jobs = env_number("BENCH_JOBS", 5_000_000);
    let dir = std::path::PathBuf::from("/var/tmp/jobsight-bench-summaries");
    let data = dir.join("data");
    let python = bench_python("duckdb, pyarrow").expect(
        "a Python with duckdb (benches/requirements.txt; set JOBSIGHT_BENCH_VENV to reuse one)",
    );
    // BENCH_REUSE=1 keeps the year (and its summaries) a previous run generated: only the
    // queries run again, for looking at one query; BENCH_QUERY=text runs the queries whose name
    // contains it.
    let reuse = std::env::var("BENCH_REUSE").is_ok_and(|v| v == "1") && dir.join("done").exists();
    let only = std::env::var("BENCH_QUERY").unwrap_or_default();

    let (written, rows, summarize_s) = if reuse {
        let text = std::fs::read_to_string(dir.join("done")).expect("the previous run's figures");
        let mut numbers = text
            .split_whitespace()
            .map(|w| w.parse::<f64>().expect("a number"));
        let mut next = || numbers.next().expect("three numbers");
        let (written, rows, seconds) = (next() as u64, next() as usize, next());
        eprintln!("reusing the year of {written} jobs in {}", data.display());
        (written, rows, seconds)
    } else {
        let _ = std::fs::remove_dir_all(&dir);
        let started = Instant::now();
        let written = year::generate(&data, jobs);
        eprintln!(
            "generated {written} jobs over 365 days in {:.1} s",
            started.elapsed().as_secs_f64()
        );

        // The nightly step over the whole year (a backfill of `summarize`).
        let first =
            NaiveDate::from_ymd_opt(year::FIRST_DAY.0, year::FIRST_DAY.1, year::FIRST_DAY.2)
                .expect("day");
        let last = first + chrono::Duration::days(364);
        let started = Instant::now();
        let rows = jobsight_summary::write_days(
            &data,
            &jobsight_summary::Settings::default(),
            first,
            last,
        )
        .expect("summaries");
        let summarize_s = started.elapsed().as_secs_f64();
        let peak = jobsight_base::peak_memory_mib().unwrap_or(0);
        eprintln!(
            "summaries of the year: {rows} rows in {summarize_s:.1} s, peak memory so far {peak} MiB"
        );
        std::fs::write(dir.join("done"), format!("{written} {rows} {summarize_s}"))
            .expect("the run's figures");
        (written, rows, summarize_s)
    };

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let script = repo_dir().join("benches/summaries_peers.py");
    println!(
        "| query ({written} jobs, a year) | jobsight | DuckDB | DuckDB / jobsight | rows |\n|---|---|---|---|---|"
    );
    // BENCH_SQL=query measures that one query instead (both engines), for looking at a shape.
    let own = std::env::var("BENCH_SQL").ok();
    let queries: Vec<(&str, &str)> = match &own {
        Some(sql) => vec![("BENCH_SQL", sql.as_str())],
        None => QUERIES
            .iter()
            .filter(|(name, _)| name.contains(&only))
            .copied()
            .collect(),
    };
    for (name, sql) in queries {
        let mut best = Duration::MAX;
        let mut ours = (0, 0.0);
        for _ in 0..3 {
            let t = Instant::now();
            let batches = runtime.block_on(query::run(&data, sql)).expect(name);
            best = best.min(t.elapsed());
            ours = fingerprint(&batches);
        }
        let out = Command::new(&python)
            .arg(&script)
            .arg(&data)
            .arg(sql)
            .output()
            .expect("python");
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let answer: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("the peer's JSON");
        let duck_s = answer["seconds"].as_f64().expect("seconds");
        let (duck_rows, duck_sum) = (
            answer["rows"].as_u64().expect("rows") as usize,
            answer["checksum"].as_f64().expect("checksum"),
        );
        assert_eq!(ours.0, duck_rows, "{name}: row counts differ");
        assert!(
            (ours.1 - duck_sum).abs() <= 1e-6 * ours.1.abs().max(1.0),
            "{name}: answers differ ({} vs {duck_sum})",
            ours.1
        );
        if std::env::var("BENCH_SPLIT").is_ok() {
            // Where one query's time goes: the session, the plan, the run; then the same plan
            // again in that session (its file listing and statistics cached, as in `serve --pg`).
            let seconds = |t: Instant| t.elapsed().as_secs_f64();
            let t = Instant::now();
            let ctx = runtime.block_on(query::session(&data)).expect("session");
            let session_s = seconds(t);
            let t = Instant::now();
            let frame = runtime.block_on(ctx.sql(sql)).expect("plan");
            let plan = runtime
                .block_on(frame.create_physical_plan())
                .expect("physical plan");
            let plan_s = seconds(t);
            let t = Instant::now();
            runtime
                .block_on(datafusion::physical_plan::collect(plan, ctx.task_ctx()))
                .expect("run");
            let run_s = seconds(t);
            let t = Instant::now();
            let again = runtime.block_on(ctx.sql(sql)).expect("plan");
            runtime
                .block_on(again.create_physical_plan())
                .expect("physical plan");
            eprintln!(
                "{name}: session {session_s:.3} s, plan {plan_s:.3} s, run {run_s:.3} s; \
                 planned again in the same session {:.3} s",
                seconds(t)
            );
        }
        let ours_s = best.as_secs_f64();
        println!(
            "| {name} | {ours_s:.3} s | {duck_s:.3} s | {:.2} | {} |",
            duck_s / ours_s,
            ours.0
        );
    }
    let whose = if reuse {
        " (the run that generated the year)"
    } else {
        ""
    };
    println!(
        "\nnightly `summarize` over the year{whose}: {rows} rows in {summarize_s:.1} s; peak memory of this run {} MiB",
        jobsight_base::peak_memory_mib().unwrap_or(0)
    );
}
