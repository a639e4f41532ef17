//! The per-job ingest and the running DAG against a real Prometheus that holds a big cluster's
//! day (issue 72).
//!
//! 1. A simulated day of a BENCH_PROM_NODES-node cluster (default 1,000) with BENCH_PROM_JOBS
//!    jobs (default 50,000) placed anywhere (jobs share nodes, as small jobs do).
//! 2. That day's node series as node_exporter would have them, scraped every 30 s at each node's
//!    own moment: CPU seconds by mode for BENCH_PROM_CPUS CPUs (default 4), load, memory, a
//!    network interface, a disk, pressure stall counters and the node's clock; the values are
//!    the simulator's for the job on the node (one of them where several share it), an idle
//!    node's otherwise. Written as OpenMetrics and backfilled into a TSDB by Debian's `promtool
//!    tsdb create-blocks-from openmetrics` as one day-long block (so that Prometheus has nothing
//!    left to compact while it is measured).
//! 3. A real Prometheus started on that TSDB (127.0.0.1:BENCH_PROM_PORT, default 19091, no
//!    scrape targets: nothing but the bench's queries runs in it).
//! 4. The per-job ingest of the jobs that ended in BENCH_PROM_WINDOW_MIN minutes (default 60)
//!    from noon, as the hook enqueued them, with the simulated day as the stand-in for sacct and
//!    that Prometheus as the telemetry source: first each job asked on its own (one `query_range`
//!    per metric per job, `prometheus.batch_jobs = false`), then the jobs of a run asked together
//!    (the default); the two warehouses' telemetry must be the same files, byte for byte.
//!    Measured: seconds, queries (Prometheus's own `prometheus_http_requests_total`), and
//!    Prometheus's CPU seconds (`process_cpu_seconds_total`) and memory (peak resident).
//! 5. The running DAG's measuring of the first 1,000 jobs running at 14:00 (their last day of
//!    telemetry, as `jobsight running` asks for it) against the same Prometheus, each job on its
//!    own and then together.
//!
//! Run: `cargo bench -p jobsight --bench prometheus` (needs Debian's `prometheus` package:
//! `bash ops/prometheus/install-prometheus.sh`). `BENCH_PROM_KEEP=1` keeps the work directory.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Instant;

use chrono::{DateTime, NaiveDate, Utc};
use jobsight_ingest::per_job;
use jobsight_ingest::prometheus::Prometheus;
use jobsight_ingest::simulator::SimulatedCluster;
use jobsight_ingest::sources::TelemetrySource;
use jobsight_sim::{ClusterSpec, Placement, SimJob};

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The scrape interval of the written series, and Prometheus's default query step.
const SCRAPE_S: u64 = 30;
const DAY_S: u64 = 86_400;
/// The simulator's node-level series (the first 13 of its metrics: CPU shares, load, memory,
/// network and disk), in the order the grid holds them.
fn simulated() -> Vec<String> {
    let mut names = jobsight_ingest::simulator::metric_names(0);
    names.truncate(IDLE.len());
    names
}
/// What an idle node shows of each of [`simulated`].
const IDLE: [f32; 13] = [
    0.002, 0.003, 0.0, 0.995, 0.05, 2e9, 2.6e11, 2e3, 2e3, 20.0, 20.0, 1e3, 5e3,
];

/// Each node's value of each simulated series at each scrape of the day.
struct Grid {
    nodes: Vec<String>,
    /// [node][series][scrape]
    values: Vec<Vec<Vec<f32>>>,
}

impl Grid {
    fn of_day(jobs: &[SimJob], spec: &ClusterSpec, day: NaiveDate, nodes: usize) -> Grid {
        let scrapes = (DAY_S / SCRAPE_S) as usize;
        let names: Vec<String> = (1..=nodes).map(|i| format!("node{i:02}")).collect();
        let index: HashMap<&str, usize> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let mut values: Vec<Vec<Vec<f32>>> = (0..nodes)
            .map(|_| {
                IDLE.iter()
                    .map(|&idle| vec![idle; scrapes])
                    .collect::<Vec<_>>()
            })
            .collect();
        let metrics = simulated();
        let midnight = day
            .and_hms_opt(0, 0, 0)
            .expect("midnight")
            .and_utc()
            .timestamp_micros();
        for job in jobs {
            jobsight_ingest::simulator::job_telemetry(
                job,
                spec,
                day,
                SCRAPE_S,
                &metrics,
                11,
                |node, metric, ts, value| {
                    let k = (ts - midnight).div_euclid(SCRAPE_S as i64 * 1_000_000);
                    let (Some(&n), Some(s)) =
                        (index.get(node), metrics.iter().position(|m| m == metric))
                    else {
                        return Ok(());
                    };
                    if (0..scrapes as i64).contains(&k) && value.is_finite() {
                        values[n][s][k as usize] = value as f32;
                    }
                    Ok(())
                },
            )
            .expect("simulated telemetry");
        }
        Grid {
            nodes: names,
            values,
        }
    }

    /// The day as node_exporter's series in OpenMetrics, each node scraped at its own second
    /// of the interval; returns the number of samples.
    fn write_openmetrics(&self, midnight: i64, cpus: usize, path: &Path) -> u64 {
        let mut out = std::io::BufWriter::with_capacity(
            1 << 20,
            std::fs::File::create(path).expect("openmetrics file"),
        );
        let mut samples = 0u64;
        let memory_total = jobsight_sim::NODE_MEM_MB as f64 * 1_048_576.0;
        let step = SCRAPE_S as f64;
        for (n, node) in self.nodes.iter().enumerate() {
            let v = &self.values[n];
            let phase = (n as u64 % SCRAPE_S) as i64;
            let labels = format!("instance=\"{node}:9100\",job=\"node\"");
            let scrapes = v[0].len();
            let at = |k: usize| midnight + phase + (k as u64 * SCRAPE_S) as i64;
            // A counter: the running sum of `rate(k)` over each interval.
            let mut counter = |name: &str, extra: &str, rate: &dyn Fn(usize) -> f64| {
                let mut total = 1000.0;
                for k in 0..scrapes {
                    total += rate(k).max(0.0) * step;
                    writeln!(out, "{name}{{{labels}{extra}}} {total:.3} {}", at(k)).expect("write");
                }
                samples += scrapes as u64;
            };
            for (mode, s) in [("user", 0), ("system", 1), ("iowait", 2), ("idle", 3)] {
                for cpu in 0..cpus {
                    counter(
                        "node_cpu_seconds_total",
                        &format!(",cpu=\"{cpu}\",mode=\"{mode}\""),
                        &|k| f64::from(v[s][k]),
                    );
                }
            }
            for (name, s) in [
                ("node_network_receive_bytes_total", 7),
                ("node_network_transmit_bytes_total", 8),
                ("node_network_receive_packets_total", 9),
                ("node_network_transmit_packets_total", 10),
            ] {
                counter(name, ",device=\"ib0\"", &|k| f64::from(v[s][k]));
            }
            for (name, s) in [
                ("node_disk_read_bytes_total", 11),
                ("node_disk_written_bytes_total", 12),
            ] {
                counter(name, ",device=\"nvme0n1\"", &|k| f64::from(v[s][k]));
            }
            // Not simulated: waiting for a CPU when the load is beyond the CPUs, for I/O as
            // the iowait share, never for memory.
            let cores = cpus as f64;
            counter("node_pressure_cpu_waiting_seconds_total", "", &|k| {
                ((f64::from(v[4][k]) - cores) / cores).clamp(0.0, 1.0)
            });
            counter("node_pressure_memory_waiting_seconds_total", "", &|_| 0.0);
            counter("node_pressure_io_waiting_seconds_total", "", &|k| {
                f64::from(v[2][k])
            });
            let mut gauge = |name: &str, value: &dyn Fn(usize) -> f64| {
                for k in 0..scrapes {
                    writeln!(out, "{name}{{{labels}}} {} {}", value(k), at(k)).expect("write");
                }
                samples += scrapes as u64;
            };
            gauge("node_load1", &|k| f64::from(v[4][k]));
            gauge("node_memory_MemTotal_bytes", &|_| memory_total);
            gauge("node_memory_MemAvailable_bytes", &|k| {
                f64::from(v[6][k]).min(memory_total)
            });
            gauge("node_time_seconds", &|k| at(k) as f64 + 0.004);
        }
        writeln!(out, "# EOF").expect("write");
        out.flush().expect("write");
        samples
    }
}

/// A Prometheus process on `data`, stopped when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(work: &Path, data: &Path, port: u64) -> Server {
        let config = work.join("prometheus.yml");
        std::fs::write(&config, "global:\n  scrape_interval: 30s\n").expect("config");
        let log = std::fs::File::create(work.join("prometheus.log")).expect("log");
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", data.display()))
            .arg("--storage.tsdb.retention.time=10y")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start prometheus (bash ops/prometheus/install-prometheus.sh)");
        let server = Server {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        for _ in 0..600 {
            if curl(&format!("{}/-/ready", server.url)).is_some() {
                return server;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!(
            "prometheus did not become ready; see {}",
            work.join("prometheus.log").display()
        );
    }

    /// Prometheus's own figures: CPU seconds, resident bytes, query_range requests answered.
    fn figures(&self) -> Figures {
        let text = curl(&format!("{}/metrics", self.url)).expect("prometheus /metrics");
        let value = |prefix: &str| -> f64 {
            text.lines()
                .filter(|l| l.starts_with(prefix))
                .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
                .sum()
        };
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let peak_kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(f64::NAN);
        Figures {
            cpu_s: value("process_cpu_seconds_total"),
            resident_mib: value("process_resident_memory_bytes") / 1_048_576.0,
            peak_mib: peak_kib / 1024.0,
            queries: value(
                "prometheus_http_requests_total{code=\"200\",handler=\"/api/v1/query_range\"}",
            ) + value(
                "prometheus_http_requests_total{code=\"400\",handler=\"/api/v1/query_range\"}",
            ) + value(
                "prometheus_http_requests_total{code=\"422\",handler=\"/api/v1/query_range\"}",
            ),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

#[derive(Debug, Clone, Copy)]
struct Figures {
    cpu_s: f64,
    resident_mib: f64,
    peak_mib: f64,
    queries: f64,
}

/// This process's CPU seconds so far (user and system, at the kernel's 100 ticks a second).
fn own_cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn curl(url: &str) -> Option<String> {
    let out = Command::new("curl")
        .args(["-fsS", "--max-time", "30", url])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn prometheus(url: &str, batch_jobs: bool) -> Prometheus {
    Prometheus::new(
        jobsight_ingest::settings::PrometheusOptions {
            url: Some(url.to_string()),
            batch_jobs: Some(batch_jobs),
            ..Default::default()
        }
        .resolve()
        .expect("prometheus settings"),
    )
}

/// Every file under `dir`, by its path below it.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir).expect("below").to_path_buf());
            }
        }
    }
    out.sort();
    out
}

struct Ingested {
    seconds: f64,
    /// The bench's own CPU seconds (jobsight's ingest, and the stand-in for sacct).
    own_cpu: f64,
    done: usize,
    other: usize,
    rows: u64,
    used: Figures,
}

#[allow(clippy::too_many_arguments)]
fn ingest(
    work: &Path,
    label: &str,
    server: &Server,
    batch_jobs: bool,
    jobs: &[&SimJob],
    accounting: &SimulatedCluster,
    midnight: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Ingested {
    let spool = work.join(format!("spool-{label}"));
    let data = work.join(format!("warehouse-{label}"));
    jobsight_ingest::spool::Spool::init(&spool, 0o755).expect("spool");
    jobsight_ingest::simulated_slurm::enqueue_ended(&spool, jobs, "sim", midnight.date_naive())
        .expect("enqueue");
    let spool = jobsight_ingest::spool::Spool::open(&spool).expect("spool");
    let settings = jobsight_ingest::settings::IngestOptions::default()
        .resolve()
        .expect("ingest settings");
    let source = prometheus(&server.url, batch_jobs);
    let before = server.figures();
    let own_before = own_cpu_s();
    let started = Instant::now();
    let report = per_job::run_with(
        &spool,
        &data,
        &settings,
        accounting,
        Some(&source as &dyn TelemetrySource),
        None,
        now,
        |_, _| {},
        &mut |_, _| Ok(()),
    )
    .expect("the per-job ingest");
    let seconds = started.elapsed().as_secs_f64();
    let own_cpu = own_cpu_s() - own_before;
    let after = server.figures();
    let rows = report
        .records
        .iter()
        .map(|r| match &r.outcome {
            per_job::Outcome::Done { telemetry_rows, .. } => *telemetry_rows,
            _ => 0,
        })
        .sum();
    for r in report
        .records
        .iter()
        .filter(|r| !matches!(r.outcome, per_job::Outcome::Done { .. }))
        .take(3)
    {
        eprintln!("  not done: {:?} {:?}", r.job, r.outcome);
    }
    Ingested {
        seconds,
        own_cpu,
        done: report.count("done"),
        other: report.records.len() - report.count("done"),
        rows,
        used: Figures {
            cpu_s: after.cpu_s - before.cpu_s,
            resident_mib: after.resident_mib,
            peak_mib: after.peak_mib,
            queries: after.queries - before.queries,
        },
    }
}

fn main() {
    let nodes = env_number("BENCH_PROM_NODES", 1000) as usize;
    let jobs_per_day = env_number("BENCH_PROM_JOBS", 50_000) as usize;
    let cpus = env_number("BENCH_PROM_CPUS", 4) as usize;
    let window_min = env_number("BENCH_PROM_WINDOW_MIN", 60);
    let port = env_number("BENCH_PROM_PORT", 19091);
    let day = NaiveDate::from_ymd_opt(2026, 11, 20).expect("day");
    let midnight = day.and_hms_opt(0, 0, 0).expect("midnight").and_utc();
    let work_dir = tempfile::tempdir_in("/var/tmp").expect("temporary directory");
    let work = work_dir.path();

    // 1. The day.
    let spec = ClusterSpec {
        name: "sim".into(),
        nodes,
        jobs: jobs_per_day,
        node_epilog_share: 0.0,
        anomaly_share: 0.15,
        placement: Placement::Anywhere,
        ..ClusterSpec::default()
    };
    let started = Instant::now();
    let day_jobs = jobsight_sim::simulate_day(&spec, 11);
    let grid = Grid::of_day(&day_jobs, &spec, day, nodes);
    println!(
        "1. {nodes} nodes, {} jobs placed anywhere; the day's node series made in {:.1} s",
        day_jobs.len(),
        started.elapsed().as_secs_f64()
    );

    // 2. Backfilled.
    let started = Instant::now();
    let text = work.join("day.om");
    let samples = grid.write_openmetrics(midnight.timestamp(), cpus, &text);
    drop(grid);
    let written_s = started.elapsed().as_secs_f64();
    let size = std::fs::metadata(&text).map_or(0, |m| m.len());
    let tsdb = work.join("tsdb");
    let started = Instant::now();
    let status = Command::new("promtool")
        .args([
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            "--max-block-duration=24h",
        ])
        .arg(&text)
        .arg(&tsdb)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("promtool (bash ops/prometheus/install-prometheus.sh)");
    assert!(status.success(), "promtool failed");
    let _ = std::fs::remove_file(&text);
    let series = nodes * (4 * cpus + 13);
    println!(
        "2. {series} series, {:.1} M samples: OpenMetrics written in {written_s:.1} s ({:.1} GB), backfilled by promtool in {:.1} s",
        samples as f64 / 1e6,
        size as f64 / 1e9,
        started.elapsed().as_secs_f64()
    );

    // 3. Prometheus.
    let started = Instant::now();
    let server = Server::start(work, &tsdb, port);
    let idle = server.figures();
    println!(
        "3. Prometheus {} ready in {:.1} s: {:.0} MiB resident",
        server.url,
        started.elapsed().as_secs_f64(),
        idle.resident_mib
    );

    // 4. The per-job ingest of an hour's jobs.
    let from = 12 * 3600;
    let to = from + window_min * 60;
    let ended: Vec<&SimJob> = day_jobs
        .iter()
        .filter(|j| (from..to).contains(&j.end_s))
        .collect();
    let accounting = SimulatedCluster::new(&day_jobs, &spec, day, SCRAPE_S, 16, 11);
    let now = midnight + chrono::TimeDelta::seconds(to as i64 + 120);
    println!(
        "4. the per-job ingest of the {} jobs that ended in the {window_min} minutes from noon (a day of {jobs_per_day} jobs ends {:.0} an hour)",
        ended.len(),
        jobs_per_day as f64 / 24.0
    );
    println!(
        "  {:<28} {:>9} {:>9} {:>10} {:>10} {:>12} {:>12} {:>12}",
        "", "seconds", "s/job", "queries", "per job", "Prom CPU s", "Prom MiB", "own CPU s"
    );
    let mut runs = Vec::new();
    for (label, batch) in [("one job at a time", false), ("jobs together", true)] {
        let run = ingest(
            work,
            if batch { "together" } else { "alone" },
            &server,
            batch,
            &ended,
            &accounting,
            midnight,
            now,
        );
        println!(
            "  {label:<28} {:>9.1} {:>9.3} {:>10.0} {:>10.1} {:>12.1} {:>12.0} {:>12.1}   ({} done, {} not; {} telemetry rows)",
            run.seconds,
            run.seconds / run.done.max(1) as f64,
            run.used.queries,
            run.used.queries / run.done.max(1) as f64,
            run.used.cpu_s,
            run.used.peak_mib,
            run.own_cpu,
            run.done,
            run.other,
            run.rows
        );
        runs.push(run);
    }
    let (alone, together) = (
        work.join("warehouse-alone"),
        work.join("warehouse-together"),
    );
    let (a, b) = (
        files(&alone.join("telemetry")),
        files(&together.join("telemetry")),
    );
    let same = a == b
        && a.iter().all(|f| {
            std::fs::read(alone.join("telemetry").join(f)).ok()
                == std::fs::read(together.join("telemetry").join(f)).ok()
        });
    println!(
        "  telemetry of the two runs: {} files, {}",
        a.len(),
        if same { "the same bytes" } else { "DIFFERENT" }
    );
    let per_job = runs[1].seconds / runs[1].done.max(1) as f64;
    println!(
        "  together: {:.1}x faster; a day of {jobs_per_day} jobs takes {:.0} s of ingest ({:.1} % of the day), Prometheus {:.0} CPU s",
        runs[0].seconds / runs[1].seconds,
        per_job * jobs_per_day as f64,
        100.0 * per_job * jobs_per_day as f64 / DAY_S as f64,
        runs[1].used.cpu_s / runs[1].done.max(1) as f64 * jobs_per_day as f64
    );
    assert!(same, "the two ways gave different telemetry");

    running(&server, &day_jobs, &spec, midnight);

    if std::env::var_os("BENCH_PROM_KEEP").is_some() {
        println!("  kept: {}", work_dir.keep().display());
    }
}

/// Part 5: the running DAG's measuring of the first 1,000 jobs running at 14:00, one job at a
/// time and then together; the features of every window must be the same both ways.
fn running(server: &Server, day_jobs: &[SimJob], spec: &ClusterSpec, midnight: DateTime<Utc>) {
    use jobsight::running::watch::{Measure, judge_all, measure_all};
    use jobsight_base::running_job::RunningJob;

    let now = midnight + chrono::TimeDelta::hours(14);
    let t = (now - midnight).num_seconds() as u64;
    let listed: Vec<RunningJob> = day_jobs
        .iter()
        .filter(|j| j.start_s + 60 <= t && t < j.end_s)
        .take(1000)
        .map(|j| {
            jobsight_ingest::simulated_slurm::running_job(j, &spec.name, midnight.date_naive())
        })
        .collect();
    let mut settings = jobsight::config::Options::default()
        .resolve(Path::new("(bench)"))
        .expect("settings");
    settings.features.cores_per_node = Some(spec.cpus_per_node);
    settings.rules.cores_per_node = Some(spec.cpus_per_node);
    let book = jobsight_rules::RuleBook::load(None).expect("rules");
    let nodes_held: usize = listed.iter().map(|j| j.node_names.len()).sum();
    println!(
        "5. the running DAG's features and classify steps over the {} jobs running at {now} (on {nodes_held} job-node pairs), against the same Prometheus",
        listed.len()
    );
    println!(
        "  {:<28} {:>9} {:>10} {:>12}",
        "", "seconds", "queries", "Prom CPU s"
    );
    let mut all = Vec::new();
    for (label, batch) in [("one job at a time", false), ("jobs together", true)] {
        let source = prometheus(&server.url, batch);
        let measure = Measure {
            book: &book,
            features: &settings.features,
            telemetry: Some(&source),
            running: &settings.running,
        };
        let before = server.figures();
        let started = Instant::now();
        let measured = measure_all(&measure, &listed, now);
        let judged = judge_all(&book, &settings.rules, &measured, None);
        let seconds = started.elapsed().as_secs_f64();
        let after = server.figures();
        let flagged = judged.iter().filter(|j| !j.conditions.is_empty()).count();
        let not_judged: Vec<&str> = judged
            .iter()
            .filter_map(|j| j.not_judged.as_deref())
            .collect();
        println!(
            "  {label:<28} {seconds:>9.1} {:>10.0} {:>12.1}   ({flagged} with a condition, {} not judged{})",
            after.queries - before.queries,
            after.cpu_s - before.cpu_s,
            not_judged.len(),
            not_judged
                .first()
                .map_or(String::new(), |r| format!(", e.g. {r}"))
        );
        let windows: Vec<_> = measured
            .iter()
            .map(|m| {
                m.windows
                    .iter()
                    .map(|w| (w.span_s, w.features.clone(), w.summary.clone()))
                    .collect::<Vec<_>>()
            })
            .collect();
        all.push(windows);
    }
    let same = all[0] == all[1];
    println!(
        "  every window's features the same both ways: {}",
        if same { "yes" } else { "NO" }
    );
    assert!(same, "the running jobs' features differ");
}
