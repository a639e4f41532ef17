//! The running DAG's judging of 1,000 running jobs (issue 47's goal: one run in under 30 s on
//! these 2 cores), side by side with what a user would otherwise write: pandas computing the same
//! jobs' window statistics (benches/running_peers.py).
//!
//! Data: a simulated 1,000-node day of 40,000 jobs placed anywhere (jobs share nodes; 16 metrics
//! every 30 s, Prometheus's default step), and the jobs running at 14:00 (the first 1,000; a
//! job's windows are its last day, its last hour and its last half hour, the built-in running
//! rules' windows).
//! 1. End to end on the simulated cluster: `running::watch::measure_all`
//!    then `judge_all` (the running DAG's features and classify steps) with the simulator as the
//!    telemetry source (it generates each job's samples: that time is in the figure).
//! 2. jobsight's own work: the same with the samples already in memory (features of three
//!    windows per job, the running rules), the figure a real run adds to its Prometheus queries.
//! 3. pandas on the same samples, in memory: per job, node and metric the mean, max, standard
//!    deviation and 95th percentile of the three windows (jobsight computes 18 statistics, the
//!    job-level figures and the rules besides).
//!
//! Run: `cargo bench -p jobsight --bench running` (`BENCH_NODES`, `BENCH_JOBS` to change the day).

use std::collections::HashMap;
use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};
use jobsight::running::watch::{Measure, judge_all, measure_all};
use jobsight_base::running_job::RunningJob;
use jobsight_ingest::simulator::SimulatedCluster;
use jobsight_ingest::sources::TelemetrySource;
use jobsight_sim::{ClusterSpec, Placement};

#[path = "bench_support.rs"]
mod support;
use support::{bench_python, repo_dir};

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// One sample: node, metric, time (µs), value.
type Sample = (Arc<str>, Arc<str>, i64, f64);

/// Each job's samples, fetched once: what Prometheus would have answered.
struct InMemory {
    samples: HashMap<String, Vec<Sample>>,
}

impl TelemetrySource for InMemory {
    fn name(&self) -> &'static str {
        "memory"
    }
    fn ready_at(&self, end: DateTime<Utc>) -> DateTime<Utc> {
        end
    }
    fn fetch(
        &self,
        job_id: &str,
        _cluster: &str,
        _nodes: &[String],
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        emit: &mut dyn FnMut(&str, &str, i64, f64),
    ) -> Result<u64, String> {
        let (from, to) = (start.timestamp_micros(), end.timestamp_micros());
        let mut n = 0;
        for (node, metric, ts, v) in self.samples.get(job_id).into_iter().flatten() {
            if (from..=to).contains(ts) {
                emit(node, metric, *ts, *v);
                n += 1;
            }
        }
        Ok(n)
    }
}

fn main() {
    let nodes = env_number("BENCH_NODES", 1000) as usize;
    let jobs_per_day = env_number("BENCH_JOBS", 40_000) as usize;
    let day = chrono::NaiveDate::from_ymd_opt(2026, 11, 20).expect("day");
    let now = day.and_hms_opt(14, 0, 0).expect("time").and_utc();
    let spec = ClusterSpec {
        name: "sim".into(),
        nodes,
        jobs: jobs_per_day,
        node_epilog_share: 0.0,
        anomaly_share: 0.15,
        // Jobs share nodes, as small jobs do on a real cluster: 1,000 of them run at once.
        placement: Placement::Anywhere,
        ..ClusterSpec::default()
    };
    let day_jobs = jobsight_sim::simulate_day(&spec, 11);
    let t = (now - day.and_hms_opt(0, 0, 0).expect("midnight").and_utc()).num_seconds() as u64;
    let running: Vec<_> = day_jobs
        .iter()
        .filter(|j| j.start_s + 60 <= t && t < j.end_s)
        .take(1000)
        .cloned()
        .collect();
    let cluster = SimulatedCluster::new(&day_jobs, &spec, day, 30, 16, 11);
    let listed: Vec<RunningJob> = running
        .iter()
        .map(|j| jobsight_ingest::simulated_slurm::running_job(j, "sim", day))
        .collect();
    let mut settings = jobsight::config::Options::default()
        .resolve(Path::new("(bench)"))
        .expect("settings");
    settings.features.cores_per_node = Some(spec.cpus_per_node);
    settings.rules.cores_per_node = Some(spec.cpus_per_node);
    let book = jobsight_rules::RuleBook::load(None).expect("rules");
    let judge_with = |telemetry: &(dyn TelemetrySource + Send + Sync)| {
        let measure = Measure {
            book: &book,
            features: &settings.features,
            telemetry: Some(telemetry),
            running: &settings.running,
        };
        let started = Instant::now();
        let measured = measure_all(&measure, &listed, now);
        let judged = judge_all(&book, &settings.rules, &measured, None);
        (started.elapsed().as_secs_f64(), judged)
    };
    let nodes_held: usize = listed.iter().map(|j| j.node_names.len()).sum();
    println!(
        "{} running jobs on {nodes_held} nodes at {now} ({nodes}-node cluster, {jobs_per_day} jobs a day)",
        listed.len()
    );
    let (simulated_s, judged) = judge_with(&cluster);
    let flagged = judged.iter().filter(|j| !j.conditions.is_empty()).count();
    let not_judged = judged.iter().filter(|j| j.not_judged.is_some()).count();
    println!(
        "{:<58} {:>8.2} s   ({flagged} with a condition, {not_judged} not judged)",
        "jobsight, simulator as the telemetry source", simulated_s
    );

    // The samples a run fetches, once, into memory (and into a CSV for pandas).
    let lookback = chrono::Duration::seconds(settings.running.lookback_s as i64);
    let mut memory = InMemory {
        samples: HashMap::new(),
    };
    let csv =
        std::env::temp_dir().join(format!("jobsight-running-bench-{}.csv", std::process::id()));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&csv).expect("csv"));
    writeln!(out, "job_id,node,metric,ts,value").expect("csv");
    let mut rows = 0u64;
    for job in &listed {
        let from = (now - lookback).max(job.start);
        let mut samples = Vec::new();
        cluster
            .fetch(
                &job.job_id,
                &job.cluster,
                &job.node_names,
                from,
                now,
                &mut |node, metric, ts, v| {
                    if ts >= from.timestamp_micros() && ts <= now.timestamp_micros() {
                        samples.push((Arc::from(node), Arc::from(metric), ts, v));
                    }
                },
            )
            .unwrap_or_else(|e| {
                // What the judging counted as not judged: left out here too.
                eprintln!("{e}");
                0
            });
        for (node, metric, ts, v) in &samples {
            writeln!(out, "{},{node},{metric},{ts},{v}", job.job_id).expect("csv");
        }
        rows += samples.len() as u64;
        memory.samples.insert(job.job_id.clone(), samples);
    }
    out.flush().expect("csv");
    drop(out);
    let (memory_s, judged_again) = judge_with(&memory);
    let conditions = |judged: &[jobsight_running::snapshot::LiveJob]| {
        judged
            .iter()
            .flat_map(|j| {
                j.conditions
                    .iter()
                    .map(move |c| (j.job_id.clone(), c.rule.clone()))
            })
            .collect::<std::collections::BTreeSet<_>>()
    };
    let (a, b) = (conditions(&judged), conditions(&judged_again));
    assert_eq!(
        a.symmetric_difference(&b).collect::<Vec<_>>(),
        Vec::<&(String, String)>::new(),
        "the same conditions from the same samples"
    );
    println!(
        "{:<58} {:>8.2} s   ({rows} samples)",
        "jobsight, samples in memory (features + running rules)", memory_s
    );

    let script = repo_dir().join("benches/running_peers.py");
    match bench_python("pandas") {
        Some(python) => {
            let peer = Command::new(python)
                .arg(&script)
                .arg(&csv)
                .arg(now.timestamp_micros().to_string())
                .output()
                .expect("pandas");
            let text = String::from_utf8_lossy(&peer.stdout);
            let pandas_s: Option<f64> = text
                .lines()
                .find_map(|l| l.strip_prefix("seconds ")?.trim().parse().ok());
            match pandas_s {
                Some(p) => println!(
                    "{:<58} {:>8.2} s   (jobsight in memory / pandas: {:.2}x)",
                    "pandas, the same samples in memory (4 statistics)",
                    p,
                    memory_s / p
                ),
                None => println!(
                    "pandas failed: {}{}",
                    text,
                    String::from_utf8_lossy(&peer.stderr)
                ),
            }
        }
        None => println!("pandas: no Python environment (benches/requirements.txt)"),
    }
    let _ = std::fs::remove_file(&csv);
    println!(
        "goal: one run over 1,000 running jobs in under 30 s: {}",
        if simulated_s < 30.0 { "met" } else { "NOT met" }
    );
}
