//! The generated year of a large cluster's job facts that the summaries and web benchmarks
//! share (included with `#[path]`): BENCH_JOBS jobs over 365 days of one cluster `big` with
//! 2,000 users (`u0`..) in 200 accounts (`a0`..) and 8 partitions, written as the bulk importers
//! write them (one part per table and day): `jobs`; `job_summary` for the 70 % of jobs with
//! telemetry; and `findings`, one or two for every fifth job. Job ids count up from 1,000,001 in
//! end-day order. Generated from a fixed seed, so two runs see the same year.

use std::path::Path;

use chrono::{NaiveDate, TimeZone, Utc};
use jobsight_sim::Rng;
use jobsight_warehouse::catalog::rows::{FindingRow, JobRow, JobSummaryRow};
use jobsight_warehouse::catalog::{self, Table};

pub const FIRST_DAY: (i32, u32, u32) = (2025, 1, 1);
pub const RULES: [&str; 8] = [
    "idle-cores",
    "serial-on-many-cores",
    "memory-overrequest",
    "hung-job",
    "gpu-idle",
    "time-overrequest",
    "io-heavy",
    "node-imbalance",
];

/// Writes the year into `data`; returns how many jobs.
pub fn generate(data: &Path, jobs: u64) -> u64 {
    let mut rng = Rng::new(2025);
    let first = NaiveDate::from_ymd_opt(FIRST_DAY.0, FIRST_DAY.1, FIRST_DAY.2).expect("day");
    let per_day = jobs / 365;
    let mut id = 1_000_000u64;
    let mut written = 0;
    let states = [
        "COMPLETED",
        "COMPLETED",
        "COMPLETED",
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "TIMEOUT",
        "OUT_OF_MEMORY",
    ];
    for d in 0..365 {
        let day = first + chrono::Duration::days(d);
        let midnight = Utc
            .from_utc_datetime(&day.and_hms_opt(0, 0, 0).expect("midnight"))
            .timestamp();
        let (mut job_rows, mut summaries, mut findings) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..per_day {
            id += 1;
            let user = rng.below(2000);
            let nodes = 1 + rng.below(8) as u32;
            let gpus = rng.chance(0.2).then(|| 4 * nodes);
            let elapsed = 60 + rng.below(6 * 3600) as i64;
            let end = midnight + 60 + rng.below(86_000) as i64;
            let start = end - elapsed;
            let at = |s: i64| Utc.timestamp_opt(s, 0).single();
            job_rows.push(JobRow {
                cluster: "big".into(),
                job_id: id.to_string(),
                user: Some(format!("u{user}")),
                account: Some(format!("a{}", user % 200)),
                partition: Some(format!("p{}", rng.below(8))),
                num_nodes: Some(nodes),
                cpus: Some(nodes * 64),
                gpus,
                req_mem_mb: Some(u64::from(nodes) * 65_536),
                time_limit_s: Some(elapsed as u64 + rng.below(4 * 3600)),
                submit: at(start - rng.below(7200) as i64),
                start: at(start),
                end: at(end).expect("end"),
                state: Some((*rng.pick(&states)).into()),
                source: "bench".into(),
                ..JobRow::default()
            });
            if rng.chance(0.7) {
                let cpu_eff = rng.below(1000) as f64 / 1000.0;
                summaries.push(JobSummaryRow {
                    job_id: id.to_string(),
                    elapsed_s: elapsed as f64,
                    trimmed: true,
                    nodes_expected: Some(u64::from(nodes)),
                    nodes_seen: u64::from(nodes),
                    nodes_missing: None,
                    metrics: 13,
                    samples: 1000,
                    coverage_min: Some(1.0),
                    coverage_mean: Some(1.0),
                    judgeable: true,
                    not_judgeable_reason: None,
                    duty_cycle: None,
                    cpu_used_cores: Some(cpu_eff * 64.0 * f64::from(nodes)),
                    cpu_eff: Some(cpu_eff),
                    mem_used_max_mb: Some(rng.below(u64::from(nodes) * 65_536) as f64),
                    mem_eff: Some(rng.below(1000) as f64 / 1000.0),
                    time_eff: None,
                    gpu_util: gpus.map(|_| rng.below(1000) as f64 / 1000.0),
                    core_hours: None,
                    wasted_core_hours: None,
                    ..JobSummaryRow::default()
                });
            }
            if rng.chance(0.2) {
                for _ in 0..1 + rng.below(2) {
                    findings.push(FindingRow {
                        job_id: id.to_string(),
                        restart_count: Some(0),
                        rule: (*rng.pick(&RULES)).into(),
                        title: String::new(),
                        group: "efficiency".into(),
                        method_group: None,
                        severity: "warning".into(),
                        node: None,
                        window_start: None,
                        window_end: None,
                        message: String::new(),
                        fix: String::new(),
                        why: String::new(),
                        tools: String::new(),
                        evidence: "{}".into(),
                        rules_version: "bench".into(),
                    });
                }
            }
        }
        written += job_rows.len() as u64;
        let batch = |b: Result<_, _>| vec![b.expect("batch")];
        catalog::write_part(
            data,
            Table::Jobs,
            day,
            "bench",
            &batch(JobRow::batch(&job_rows)),
        )
        .expect("jobs");
        catalog::write_part(
            data,
            Table::JobSummary,
            day,
            "bench",
            &batch(JobSummaryRow::batch(&summaries)),
        )
        .expect("job_summary");
        catalog::write_part(
            data,
            Table::Findings,
            day,
            "bench",
            &batch(FindingRow::batch(&findings)),
        )
        .expect("findings");
    }
    written
}
