//! The summaries' test warehouse: three jobs on 2026-11-20 whose figures are worked out by hand
//! (this crate's `every_figure_is_its_definition`), their findings and summaries, an email and
//! DAG runs; and the documented queries of `tests/sql/examples.slt`. This crate's tests, the report
//! pages' and the PostgreSQL endpoint's read them, so the module is public with the cargo feature
//! `fixture` (a dev-dependency's), never in a build of the pipeline itself.
// A fixture panics on a broken test set-up, like the tests that call it.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use jobsight_warehouse::catalog::rows::{FindingRow, JobRow, JobSummaryRow, LedgerRow, RunRow};

pub fn at(hms: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(&format!("2026-11-20T{hms}Z"))
        .unwrap()
        .with_timezone(&Utc)
}

#[allow(clippy::too_many_arguments)]
pub fn job(
    id: &str,
    user: &str,
    partition: &str,
    cpus: u32,
    gpus: Option<u32>,
    times: [&str; 3],
    limit_s: u64,
    state: &str,
    mem_mb: u64,
) -> JobRow {
    JobRow {
        cluster: "c".into(),
        job_id: id.into(),
        user: Some(user.into()),
        account: Some(format!("acct-{user}")),
        partition: Some(partition.into()),
        num_nodes: Some(1),
        cpus: Some(cpus),
        gpus,
        req_mem_mb: Some(mem_mb),
        time_limit_s: Some(limit_s),
        submit: Some(at(times[0])),
        start: Some(at(times[1])),
        end: at(times[2]),
        state: Some(state.into()),
        source: "test".into(),
        ..JobRow::default()
    }
}

pub fn summary(id: &str, cpu_eff: f64, mem_eff: f64, gpu_util: Option<f64>) -> JobSummaryRow {
    JobSummaryRow {
        job_id: id.into(),
        elapsed_s: 0.0,
        trimmed: false,
        nodes_expected: Some(1),
        nodes_seen: 1,
        nodes_missing: None,
        metrics: 1,
        samples: 1,
        coverage_min: Some(1.0),
        coverage_mean: Some(1.0),
        judgeable: true,
        not_judgeable_reason: None,
        duty_cycle: None,
        cpu_used_cores: None,
        cpu_eff: Some(cpu_eff),
        mem_used_max_mb: Some(2048.0),
        mem_eff: Some(mem_eff),
        time_eff: None,
        gpu_util,
        core_hours: None,
        wasted_core_hours: None,
        ..JobSummaryRow::default()
    }
}

pub fn finding(id: &str, rule: &str) -> FindingRow {
    FindingRow {
        job_id: id.into(),
        restart_count: Some(0),
        rule: rule.into(),
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
        rules_version: "t".into(),
    }
}

/// The test warehouse: three jobs on 2026-11-20 whose figures are worked out by hand in
/// `every_figure_is_its_definition`, carol's GPU job and alice's job after her email on
/// 2026-11-21, the email, and three DAG runs.
pub fn fixture(data: &Path) {
    let day = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    first_day(data, day);
    next_day(data, day);
    email_and_runs(data, day);
}

/// The three jobs of `day` whose every figure is worked out by hand, their summaries and
/// findings.
fn first_day(data: &Path, day: NaiveDate) {
    let jobs = [
        // 4 CPUs for 2 h: 8 core-hours, waited 1 h, used half its time limit.
        job(
            "1",
            "alice",
            "cpu",
            4,
            None,
            ["09:00:00", "10:00:00", "12:00:00"],
            14_400,
            "COMPLETED",
            8192,
        ),
        // 2 CPUs and 1 GPU for 1 h, used all its limit.
        job(
            "2",
            "alice",
            "cpu",
            2,
            Some(1),
            ["10:00:00", "10:00:00", "11:00:00"],
            3600,
            "TIMEOUT",
            4096,
        ),
        // 1 CPU for 60 s: short, never judged.
        job(
            "3",
            "bob",
            "gpu",
            1,
            None,
            ["11:00:00", "11:59:00", "12:00:00"],
            3600,
            "FAILED",
            1024,
        ),
    ];
    JobRow::write_part(data, day, "t", &jobs).unwrap();
    let summaries = [
        summary("1", 0.5, 0.25, None),
        summary("2", 1.0, 0.5, Some(0.2)),
    ];
    JobSummaryRow::write_part(data, day, "t", &summaries).unwrap();
    let findings = [
        finding("1", "idle-cores"),
        finding("1", "memory-overrequest"),
    ];
    FindingRow::write_part(data, day, "t", &findings).unwrap();
}

/// The next day: carol's 8 CPUs and 2 GPUs for 3 h, 10 % busy, GPUs idle; and alice's job after
/// her email (12:30, below), busy 90 %.
fn next_day(data: &Path, day: NaiveDate) {
    let next = day.succ_opt().unwrap();
    let a_day_later = |mut job: JobRow| {
        for t in [&mut job.submit, &mut job.start] {
            *t = t.map(|t| t + Duration::days(1));
        }
        job.end += Duration::days(1);
        job
    };
    let later_jobs = [
        a_day_later(job(
            "4",
            "carol",
            "gpu",
            8,
            Some(2),
            ["09:00:00", "09:00:00", "12:00:00"],
            14_400,
            "COMPLETED",
            2048,
        )),
        a_day_later(job(
            "5",
            "alice",
            "cpu",
            4,
            None,
            ["09:00:00", "09:00:00", "10:00:00"],
            3600,
            "COMPLETED",
            8192,
        )),
    ];
    JobRow::write_part(data, next, "t", &later_jobs).unwrap();
    let later_summaries = [
        summary("4", 0.1, 1.0, Some(0.0)),
        summary("5", 0.9, 0.25, None),
    ];
    JobSummaryRow::write_part(data, next, "t", &later_summaries).unwrap();
    let f = finding("4", "idle-cores");
    FindingRow::write_part(data, next, "t", &[f]).unwrap();
}

/// alice's email about job 1 (12:30 on `day`) and three DAG runs.
fn email_and_runs(data: &Path, day: NaiveDate) {
    let mail = LedgerRow {
        key: "digest.alice.2026-11-20".into(),
        kind: "digest".into(),
        user: Some("alice".into()),
        address: "alice@localhost".into(),
        period: "2026-11-20".into(),
        job_id: Some("1".into()),
        finding: Some("idle-cores".into()),
        severity: Some("warning".into()),
        queued_at: at("12:30:00"),
        sent_at: Some(at("12:30:00")),
        status: "sent".into(),
        transport: "file".into(),
    };
    LedgerRow::write_part(data, day, "t", &[mail]).unwrap();

    let run = |id: &str, dag: &str, outcome: &str| RunRow {
        run_id: id.into(),
        dag: dag.into(),
        step: String::new(),
        position: 0,
        trigger: "schedule".into(),
        scheduled_for: at("02:30:00"),
        started: at("02:30:00"),
        ended: at("02:31:00"),
        outcome: outcome.into(),
        attempts: 1,
        jobs: 0,
        counts: "{}".into(),
        error: None,
        host: "h".into(),
        pid: 1,
    };
    let runs = [
        run("a", "nightly", "ok"),
        run("b", "nightly", "ok"),
        run("c", "per-job", "failed"),
    ];
    RunRow::write_part(data, day, "t", &runs).unwrap();
}

/// One query of `tests/sql/examples.slt`: its description, types, SQL and expected rows.
#[derive(Debug)]
pub struct Example {
    pub about: String,
    pub types: String,
    pub sql: String,
    pub rows: Vec<String>,
}

pub fn examples() -> Vec<Example> {
    let path = format!(
        "{}/tests/sql/examples.slt",
        jobsight_base::test_support::workspace_dir().display()
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let mut out = Vec::new();
    let mut about = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(comment) = line.strip_prefix('#') {
            about.push(comment.trim().to_string());
        } else if let Some(types) = line.strip_prefix("query ") {
            let mut sql = Vec::new();
            for l in lines.by_ref() {
                if l == "----" {
                    break;
                }
                sql.push(l);
            }
            let mut rows = Vec::new();
            while let Some(l) = lines.next_if(|l| !l.trim().is_empty()) {
                rows.push(l.to_string());
            }
            out.push(Example {
                about: about.join(" ").trim().to_string(),
                types: types.trim().to_string(),
                sql: sql.join("\n"),
                rows,
            });
            about.clear();
        } else if line.trim().is_empty() {
            // A blank line ends the file's own header; a query's comment follows it.
            about.clear();
        }
    }
    out
}
