//! The web interface on a year of a large cluster: how long a person waits for a job's page, a
//! refusal, their job list and a comparison, through the real server (`jobsight::web`: HTTP, the
//! gate, the owner lookup, the page's queries, the templates and charts), on the year of
//! `benches/summaries.rs` (BENCH_JOBS jobs, default 5,000,000, over 365 days; `year.rs`) with
//! the telemetry of the measured jobs added (their nodes, 12 metrics every 30 s; the year has
//! none otherwise, so a day's telemetry scan is smaller here than on a real day: the report step's
//! telemetry cost at scale is measured by `benches/day.rs`). Of the 30 measured days, the first
//! 20 get their jobs' references stored as the report step stores them with a day's pages
//! (`jobsight_report::write_references`, timed); the other 10 have none, as a day the report
//! never ran for, whose first page finds the 30 days' healthy runs on request.
//!
//! Beside it, in the same run, the one query every served job request starts with (who owns the
//! job: `jobs` over the whole year by job id) in DuckDB on the same Parquet
//! (`benches/summaries_peers.py`, a fresh connection as `jobsight sql`'s fresh session), as a ratio
//! against jobsight's own time for the same SQL (`query::run`).
//!
//! Run: `CARGO_PROFILE_DEV_OPT_LEVEL=3 cargo bench --workspace --locked --features jobsight/ballista --profile dev --bench web`
//! (BENCH_JOBS=500000 for a quick look; BENCH_REUSE=1 keeps the year a previous run wrote).

#[path = "bench_support.rs"]
mod support;
#[path = "year.rs"]
mod year;

use std::collections::{BTreeSet, HashMap};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use jobsight::web::who::{Directory, Roles};
use jobsight_warehouse::catalog::rows::TelemetryBuilder;
use jobsight_warehouse::catalog::{self, Table};
use jobsight_warehouse::query::{self, Columns};
use support::{bench_python, repo_dir};

/// Days whose jobs' pages are measured, spread over the year (two jobs each).
const MEASURED: u64 = 30;
/// Of those, the days the report has stored the references of, as the nightly report step
/// does with each day's pages (the first ones); the others' pages compute them on request.
const REPORTED: usize = 20;
const METRICS: [&str; 12] = [
    "cpu_user",
    "cpu_system",
    "cpu_iowait",
    "mem_used_bytes",
    "load1",
    "net_rx_bytes_per_s",
    "net_tx_bytes_per_s",
    "disk_read_bytes_per_s",
    "disk_write_bytes_per_s",
    "fs_metadata_ops_per_s",
    "gpu_util",
    "ib_rx_bytes_per_s",
];

/// No coordinators: the bench's people are owners or the admin.
struct NoSlurm;

impl Directory for NoSlurm {
    fn coordinators(&self) -> Result<HashMap<String, BTreeSet<String>>, String> {
        Ok(HashMap::new())
    }
    fn groups(&self, _user: &str) -> Result<Vec<String>, String> {
        Ok(Vec::new())
    }
}

/// A measured job: id, owner, day, nodes, start and end (µs).
struct Sample {
    id: String,
    user: String,
    day: NaiveDate,
    nodes: u32,
    start_us: i64,
    end_us: i64,
}

fn samples(data: &Path, runtime: &tokio::runtime::Runtime, jobs: u64) -> Vec<Sample> {
    let step = jobs / MEASURED;
    // Two neighbours per sampled day: the day's first page, and another of the same day.
    let ids: Vec<String> = (0..MEASURED)
        .flat_map(|k| {
            let id = 1_000_001 + k * step + 17;
            [format!("'{id}'"), format!("'{}'", id + 1)]
        })
        .collect();
    let sql = format!(
        "SELECT job_id, \"user\", CAST(day AS VARCHAR) AS day, num_nodes, \
         CAST(start AS BIGINT) AS s, CAST(\"end\" AS BIGINT) AS e FROM jobs \
         WHERE job_id IN ({}) ORDER BY job_id",
        ids.join(", ")
    );
    let batches = runtime.block_on(query::run(data, &sql)).expect("samples");
    let mut out = Vec::new();
    for batch in &batches {
        let c = Columns::of(batch).expect("columns");
        for i in 0..batch.num_rows() {
            out.push(Sample {
                id: c.text("job_id", i).expect("id"),
                user: c.text("user", i).expect("user"),
                day: c.text("day", i).expect("day").parse().expect("a day"),
                nodes: c.int("num_nodes", i).unwrap_or(1).clamp(1, 4) as u32,
                start_us: c.int("s", i).expect("start"),
                end_us: c.int("e", i).expect("end"),
            });
        }
    }
    out
}

/// Each sample's telemetry: its nodes (at most 4), [`METRICS`] every 30 s, at most 6 hours.
fn write_telemetry(data: &Path, samples: &[Sample]) -> usize {
    let mut rows = 0;
    for (k, s) in samples.iter().enumerate() {
        let mut b = TelemetryBuilder::default();
        let span = (s.end_us - s.start_us).min(6 * 3_600_000_000);
        for node in 0..s.nodes {
            for (m, metric) in METRICS.iter().enumerate() {
                let mut t = s.start_us;
                while t <= s.start_us + span {
                    let phase = (t - s.start_us) as f64 / 3.6e9;
                    let v = (1.0 + m as f64) * (1.0 + (phase * 3.0 + node as f64).sin() * 0.3);
                    b.push(
                        &s.id,
                        &format!("n{:04}", node + 10 * k as u32),
                        metric,
                        t,
                        v,
                    );
                    t += 30_000_000;
                }
            }
        }
        rows += b.len();
        let batch = b.finish().expect("telemetry batch");
        catalog::write_part(
            data,
            Table::Telemetry,
            s.day,
            &format!("bench-web-{}", s.id),
            &[batch],
        )
        .expect("telemetry");
    }
    rows
}

/// One GET as `user` from 127.0.0.1 (the trusted proxy here); status and time.
fn get(addr: SocketAddr, user: &str, path: &str) -> (u16, usize, Duration) {
    let t = Instant::now();
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nX-Forwarded-User: {user}\r\nConnection: close\r\n\r\n"
    )
    .expect("request");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("answer");
    let elapsed = t.elapsed();
    let text = String::from_utf8_lossy(&raw);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, raw.len(), elapsed)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// p50, p95 and max of `times`, in ms.
fn spread(times: &mut [Duration]) -> (f64, f64, f64) {
    times.sort();
    let at = |q: f64| ms(times[((times.len() - 1) as f64 * q).round() as usize]);
    (at(0.5), at(0.95), at(1.0))
}

fn main() {
    let jobs = std::env::var("BENCH_JOBS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5_000_000u64);
    let dir = std::path::PathBuf::from("/var/tmp/jobsight-bench-web");
    let data = dir.join("data");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let reuse = std::env::var("BENCH_REUSE").is_ok_and(|v| v == "1") && dir.join("done").exists();
    if !reuse {
        let _ = std::fs::remove_dir_all(&dir);
        let t = Instant::now();
        let written = year::generate(&data, jobs);
        eprintln!(
            "generated {written} jobs over 365 days in {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    let measured = samples(&data, &runtime, jobs);
    if !reuse {
        let rows = write_telemetry(&data, &measured);
        eprintln!("telemetry of {} measured jobs: {rows} rows", measured.len());
        std::fs::write(dir.join("done"), "").expect("done");
    }
    // The references of the reported days, as the report step stores them with a day's pages;
    // the other measured days have none, as a day the report has not run for.
    let days: Vec<NaiveDate> = measured
        .iter()
        .map(|s| s.day)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let (reported, unreported) = days.split_at(REPORTED.min(days.len()));
    let mut storing = Vec::new();
    for day in reported {
        let t = Instant::now();
        jobsight_report::write_references(&data, *day).expect("references");
        storing.push(t.elapsed());
    }
    for day in unreported {
        for table in [Table::ReferenceRuns, Table::ReferenceBands] {
            catalog::remove_part(&data, table, *day, "report").expect("remove");
        }
    }
    let python =
        bench_python("duckdb, pyarrow").expect("a Python with duckdb (benches/requirements.txt)");

    // The server, in this process on its own runtime, as `jobsight serve --http` runs it.
    let web_settings = jobsight::web::Settings {
        trusted_proxies: vec!["127.0.0.1".parse().expect("address")],
        requests_per_minute: 100_000,
        ..jobsight::web::Settings::default()
    };
    let access = jobsight::access::Settings {
        own_jobs_only: true,
        admins: vec!["admin".into()],
        admin_groups: Vec::new(),
    };
    let roles = Roles::new(Box::new(NoSlurm), &access, Duration::from_secs(300));
    let report = jobsight_report::Settings::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let server_data = data.clone();
    std::thread::spawn(move || {
        let runtime = query::engine_runtime().expect("server runtime");
        runtime.block_on(async move {
            let web = jobsight::web::Web::new(
                server_data,
                web_settings,
                report,
                jobsight_report::Inputs::default(),
                roles,
            )
            .await
            .expect("server");
            jobsight::web::serve_http(
                Arc::new(web),
                "127.0.0.1:0",
                |addr| tx.send(addr).expect("address"),
                std::future::pending(),
            )
            .await
            .expect("serve");
        });
    });
    let addr = rx.recv().expect("the server's address");

    let page = |s: &Sample| format!("/big/jobs/{}.html", s.id);
    // The server keeps the latest days' healthy runs and bands ready from its start: give it
    // the time it takes (about a second a day here) before the first request.
    std::thread::sleep(Duration::from_secs(15));
    let (status, _, first) = get(addr, &measured[0].user, &page(&measured[0]));
    assert_eq!(status, 200);
    // The pages of the reported days (their references read back); of each unreported day the
    // first page (its healthy runs and bands computed), then a second job of the same day (the
    // day's kept by the server).
    let (mut stored, mut pages, mut same_day) = (Vec::new(), Vec::new(), Vec::new());
    let mut bytes = 0;
    for pair in measured[2..].chunks(2) {
        for (k, s) in pair.iter().enumerate() {
            let (status, size, t) = get(addr, &s.user, &page(s));
            assert_eq!(status, 200, "{}", s.id);
            if reported.contains(&s.day) {
                stored.push(t);
            } else if k == 1 && s.day == pair[0].day {
                same_day.push(t);
            } else {
                pages.push(t);
            }
            bytes += size;
        }
    }
    // Jobs of the year's last days, which the server keeps warm.
    let recent = runtime
        .block_on(query::run(
            &data,
            "SELECT job_id, \"user\" FROM jobs WHERE day >= '2025-12-26' ORDER BY job_id LIMIT 20",
        ))
        .expect("recent jobs");
    let mut recent_pages = Vec::new();
    for batch in &recent {
        let c = Columns::of(batch).expect("columns");
        for i in 0..batch.num_rows() {
            let (id, user) = (
                c.text("job_id", i).expect("id"),
                c.text("user", i).expect("user"),
            );
            let (status, _, t) = get(addr, &user, &format!("/big/jobs/{id}.html"));
            assert_eq!(status, 200, "{id}");
            recent_pages.push(t);
        }
    }
    let mut refusals: Vec<Duration> = measured
        .iter()
        .map(|s| {
            let (status, _, t) = get(addr, "u99999", &page(s));
            assert_eq!(status, 404);
            t
        })
        .collect();
    let mut lists: Vec<Duration> = measured[..10]
        .iter()
        .map(|s| {
            let (status, _, t) = get(addr, &s.user, "/jobs?days=30");
            assert_eq!(status, 200);
            t
        })
        .collect();
    let mut admin_lists: Vec<Duration> = (0..5)
        .map(|_| {
            let (status, _, t) = get(addr, "admin", "/jobs?days=7&sort=cpu&order=asc");
            assert_eq!(status, 200);
            t
        })
        .collect();
    let mut compares: Vec<Duration> = measured
        .windows(2)
        .take(10)
        .map(|w| {
            let (status, _, t) = get(
                addr,
                "admin",
                &format!("/compare?a={}&b={}", w[0].id, w[1].id),
            );
            assert_eq!(status, 200);
            t
        })
        .collect();

    // The owner lookup, jobsight's own path and DuckDB's, same SQL.
    let lookup = format!(
        "SELECT cluster, job_id, \"user\", account, CAST(day AS VARCHAR) AS day FROM jobs \
         WHERE job_id = '{}' ORDER BY day DESC",
        measured[measured.len() / 2].id
    );
    let mut ours = Duration::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let rows: usize = runtime
            .block_on(query::run(&data, &lookup))
            .expect("lookup")
            .iter()
            .map(|b| b.num_rows())
            .sum();
        assert_eq!(rows, 1);
        ours = ours.min(t.elapsed());
    }
    let out = std::process::Command::new(&python)
        .arg(repo_dir().join("benches/summaries_peers.py"))
        .arg(&data)
        .arg(&lookup)
        .output()
        .expect("python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(answer["rows"].as_u64(), Some(1));
    let duck = answer["seconds"].as_f64().expect("seconds");

    let shown = stored.len() + pages.len() + same_day.len();
    println!("| request ({jobs} jobs, a year) | p50 ms | p95 ms | max ms |\n|---|---|---|---|");
    let (a, b, c) = spread(&mut stored);
    println!(
        "| a job's page of a day the report has run for ({} jobs; {:.0} KB each) | {a:.0} | {b:.0} | {c:.0} |",
        stored.len(),
        bytes as f64 / shown as f64 / 1e3
    );
    let (p50, p95, max) = spread(&mut pages);
    println!(
        "| a job's page of a day the report has not run for, the first of its day ({} jobs) | {p50:.0} | {p95:.0} | {max:.0} |",
        pages.len(),
    );
    let (a, b, c) = spread(&mut recent_pages);
    println!(
        "| a job's page of the last 7 days, which the server keeps warm ({} jobs, no telemetry) | {a:.0} | {b:.0} | {c:.0} |",
        recent_pages.len()
    );
    let (a, b, c) = spread(&mut same_day);
    println!(
        "| a job's page of a day the report has not run for, another of the same day ({} jobs) | {a:.0} | {b:.0} | {c:.0} |",
        same_day.len()
    );
    println!(
        "| the server's first page (cold session) | {:.0} | | |",
        ms(first)
    );
    let (a, b, c) = spread(&mut refusals);
    println!(
        "| another user's job page, refused ({} jobs) | {a:.0} | {b:.0} | {c:.0} |",
        refusals.len()
    );
    let (a, b, c) = spread(&mut lists);
    println!(
        "| a user's job list, 30 days ({} users) | {a:.0} | {b:.0} | {c:.0} |",
        lists.len()
    );
    let (a, b, c) = spread(&mut admin_lists);
    println!(
        "| an admin's list of 7 days sorted by CPU efficiency (5 times) | {a:.0} | {b:.0} | {c:.0} |"
    );
    let (a, b, c) = spread(&mut compares);
    println!(
        "| two jobs compared ({} pairs) | {a:.0} | {b:.0} | {c:.0} |",
        compares.len()
    );
    let (a, b, c) = spread(&mut storing);
    println!(
        "| `report references` for one day: its healthy runs found and its jobs' references stored, without pages ({} days, {} jobs a day) | {a:.0} | {b:.0} | {c:.0} |",
        storing.len(),
        jobs / 365
    );
    println!(
        "\nthe owner lookup over the year's `jobs` (best of 3, fresh session / connection): jobsight {:.0} ms, DuckDB {:.0} ms, DuckDB / jobsight {:.2}",
        ms(ours),
        duck * 1000.0,
        duck / ours.as_secs_f64()
    );
}
