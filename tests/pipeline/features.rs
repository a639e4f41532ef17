//! `jobsight features` on a hand-made warehouse whose statistics can be checked by hand: trimming
//! of each end, a short job that keeps everything, NaN and infinite samples counted and left out,
//! a constant series (no skewness or kurtosis), a series of only NaN, exact percentiles, coverage
//! and the refusal to judge a job with too little telemetry. Then the single pass against the
//! reference SQL ([`jobsight_features::reference`]) on the same warehouse and on a simulated day.
//! With the cargo feature `ballista`, the same plan and admin queries on a real Ballista cluster
//! (tests/pipeline/ballista.rs).
use crate::agreement;
#[cfg(feature = "ballista")]
#[path = "ballista.rs"]
mod ballista;
use crate::common;

use std::path::Path;
use std::process::Command;

use chrono::{DateTime, NaiveDate, Utc};
use jobsight_ingest::{JobRow, TelemetryBuilder};
use jobsight_warehouse::catalog::{self, Table};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

fn at(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(s, 0).unwrap()
}

fn job(id: &str, start: i64, end: i64) -> JobRow {
    JobRow {
        cluster: "t".into(),
        job_id: id.into(),
        start: Some(at(start)),
        end: at(end),
        source: "test".into(),
        ..JobRow::default()
    }
}

/// Writes `jobs` as the day's `jobs` part; the telemetry to write with them is the builder's.
fn write_jobs(data: &Path, day: NaiveDate, jobs: &[JobRow]) -> TelemetryBuilder {
    let jobs = JobRow::batch(jobs).unwrap();
    catalog::write_part(data, Table::Jobs, day, "t", &[jobs]).unwrap();
    TelemetryBuilder::default()
}

fn warehouse(data: &Path) {
    let day = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
    let jobs = [job("a", 0, 1000), job("b", 0, 100), job("c", 0, 1000)];
    let mut t = write_jobs(data, day, &jobs);
    let mut push =
        |job: &str, metric: &str, s: i64, v: f64| t.push(job, "n1", metric, s * 1_000_000, v);
    // Job a, metric x: the first and last samples lie in the trimmed minute at each end.
    push("a", "x", 0, 1000.0);
    for (s, v) in [(100, 1.0), (200, 2.0), (300, 3.0), (400, 4.0), (500, 10.0)] {
        push("a", "x", s, v);
    }
    push("a", "x", 600, f64::NAN);
    push("a", "x", 700, f64::INFINITY);
    push("a", "x", 990, 999.0);
    for s in [100, 200, 300] {
        push("a", "const", s, 5.0);
    }
    push("a", "allnan", 100, f64::NAN);
    // Job b is shorter than two minutes: nothing is trimmed.
    push("b", "x", 0, 2.0);
    push("b", "x", 50, 4.0);
    // Job c on two nodes: n1 works at 1.0, n2 at 0.5, sampled a few seconds apart (as LDMS nodes
    // are); before the trimmed end n2 also reports a NaN.
    for s in (120..=900).step_by(60) {
        t.push("c", "n1", "cpu", s * 1_000_000, 1.0);
        t.push("c", "n2", "cpu", (s + 3) * 1_000_000, 0.5);
    }
    t.push("c", "n2", "cpu", 930 * 1_000_000, f64::NAN);
    // A sample of a job that is not in `jobs`: counted as left out, never attributed.
    t.push("stray", "n1", "x", 100 * 1_000_000, 1.0);
    catalog::write_part(data, Table::Telemetry, day, "t", &[t.finish().unwrap()]).unwrap();
}

fn close(actual: &serde_json::Value, expected: f64) -> bool {
    actual
        .as_f64()
        .is_some_and(|a| (a - expected).abs() <= 1e-9 * expected.abs().max(1.0))
}

#[test]
fn statistics_match_the_hand_computed_values() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    warehouse(&data);
    let out = common::run_ok(
        Command::new(JOBSIGHT)
            .arg("--data")
            .arg(&data)
            .arg("features"),
    );
    assert!(
        out.contains("features of 3 job(s) on 1 day(s): 6 rows")
            && out.contains("4 across nodes")
            && out.contains("2 job(s) cannot be judged"),
        "{out}"
    );
    let rows = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT * FROM features ORDER BY job_id, metric",
    );
    let find = |job: &str, metric: &str| {
        rows.iter()
            .find(|r| r["job_id"] == job && r["metric"] == metric)
            .unwrap_or_else(|| panic!("no row for {job}/{metric}: {rows:?}"))
            .clone()
    };

    // [1, 2, 3, 4, 10]: mean 4, deviations -3 -2 -1 0 6, m2 = 50/5, m3 = 180/5, m4 = 1394/5.
    let x = find("a", "x");
    assert_eq!(
        (x["n"].as_u64(), x["n_nonfinite"].as_u64()),
        (Some(5), Some(2)),
        "{x}"
    );
    assert_eq!(x["trimmed"], true);
    for (column, expected) in [
        ("min", 1.0),
        ("max", 10.0),
        ("mean", 4.0),
        ("std", 10f64.sqrt()),
        ("cv", 10f64.sqrt() / 4.0),
        ("skewness", 36.0 / 10f64.powf(1.5)),
        ("kurtosis", 278.8 / 100.0 - 3.0),
    ] {
        assert!(
            close(&x[column], expected),
            "{column}: {} vs {expected}",
            x[column]
        );
    }
    // Linear interpolation between closest ranks at rank p × (n − 1), exact.
    for (column, expected) in [
        ("p05", 1.2),
        ("p25", 2.0),
        ("p50", 3.0),
        ("p75", 4.0),
        ("p95", 8.8),
    ] {
        assert!(close(&x[column], expected), "{column}: {}", x[column]);
    }
    // Samples every 100 s over the kept window 60..940 s: 9 expected, 7 received (NaN and
    // infinity are received samples); the slope of 1, 2, 3, 4, 10 over 100..500 s is 0.02 per
    // second; no idle threshold for metric x.
    assert!(close(&x["interval_s"], 100.0), "{x}");
    assert!(close(&x["coverage"], 7.0 / 9.0), "{x}");
    assert!(close(&x["slope_per_h"], 72.0), "{x}");
    assert!(x["idle_share"].is_null(), "{x}");

    let constant = find("a", "const");
    assert!(
        close(&constant["std"], 0.0) && close(&constant["cv"], 0.0),
        "{constant}"
    );
    assert!(
        constant["skewness"].is_null() && constant["kurtosis"].is_null(),
        "{constant}"
    );

    let nan = find("a", "allnan");
    assert_eq!(
        (nan["n"].as_u64(), nan["n_nonfinite"].as_u64()),
        (Some(0), Some(1)),
        "{nan}"
    );
    assert!(nan["mean"].is_null() && nan["p50"].is_null(), "{nan}");

    let short = find("b", "x");
    assert_eq!(short["trimmed"], false);
    assert_eq!(short["n"].as_u64(), Some(2));
    assert!(
        close(&short["mean"], 3.0) && close(&short["std"], 1.0),
        "{short}"
    );

    // Across nodes: node means 1.0 and 0.5; n2 is half behind n1 in every minute.
    let jobs = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT * FROM features_job ORDER BY job_id, metric",
    );
    let c = jobs
        .iter()
        .find(|r| r["job_id"] == "c")
        .unwrap_or_else(|| panic!("{jobs:?}"));
    assert_eq!(c["nodes"].as_u64(), Some(2), "{c}");
    for (column, expected) in [
        ("mean", 0.75),
        ("min", 0.5),
        ("max", 1.0),
        ("node_mean_min", 0.5),
        ("node_mean_max", 1.0),
        ("node_cv", 0.25 / 0.75),
        ("imbalance", 0.5),
    ] {
        assert!(
            close(&c[column], expected),
            "{column}: {} vs {expected}",
            c[column]
        );
    }
    // One node: no imbalance; an all-NaN series has no node with data, so no row.
    let ax = jobs
        .iter()
        .find(|r| r["job_id"] == "a" && r["metric"] == "x")
        .unwrap();
    assert!(
        close(&ax["imbalance"], 0.0) && close(&ax["node_cv"], 0.0),
        "{ax}"
    );
    assert!(!jobs.iter().any(|r| r["metric"] == "allnan"), "{jobs:?}");

    // Job summaries: job a's node has the median coverage of x (7/9), const (3/9) and allnan
    // (1/9, at the job's interval of 100 s), so it is not judged, and says why; job b (100 s,
    // samples at 0 and 50 s: 3 expected, 2 received) neither; job c is covered.
    let summary = common::sql_json(JOBSIGHT, &data, "SELECT * FROM job_summary ORDER BY job_id");
    assert_eq!(summary.len(), 3, "{summary:?}");
    let (a, b, c) = (&summary[0], &summary[1], &summary[2]);
    assert_eq!(a["judgeable"], false);
    assert_eq!(
        a["not_judgeable_reason"], "coverage 0.33 on node n1 is below 0.80",
        "{a}"
    );
    assert!(close(&a["coverage_min"], 3.0 / 9.0), "{a}");
    assert_eq!(
        (a["metrics"].as_u64(), a["samples"].as_u64()),
        (Some(3), Some(11))
    );
    assert_eq!(b["judgeable"], false, "{b}");
    assert!(close(&b["coverage_min"], 2.0 / 3.0), "{b}");
    assert_eq!(c["judgeable"], true, "{c}");
    assert!(close(&c["coverage_min"], 14.0 / 15.0), "{c}");
    assert_eq!(c["nodes_seen"].as_u64(), Some(2));

    // Sliding windows for the models: 120 s every 60 s over job a's kept span 60..940 s give
    // windows starting at 60, 120, ..., 780 s; the 11 that hold samples of x are rows, e.g. the
    // one from 300 s holds 3 and 4.
    common::run_ok(Command::new(JOBSIGHT).arg("--data").arg(&data).args([
        "features",
        "--windows",
        "120:60",
    ]));
    let windows = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT CAST(window_start AS BIGINT) / 1000000 AS s, n, n_nonfinite, mean FROM windows WHERE job_id = 'a' AND metric = 'x' ORDER BY window_start",
    );
    assert_eq!(windows.len(), 11, "{windows:?}");
    let at_300 = windows.iter().find(|w| w["s"] == 300).unwrap();
    assert_eq!(at_300["n"].as_u64(), Some(2));
    assert!(close(&at_300["mean"], 3.5), "{at_300}");
    assert_eq!(windows[0]["s"], 60);

    // Again: the day's parts are replaced, not added to.
    common::run_ok(
        Command::new(JOBSIGHT)
            .arg("--data")
            .arg(&data)
            .arg("features"),
    );
    let count = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT (SELECT count(*) FROM features) AS n, (SELECT count(*) FROM features_job) AS j",
    );
    assert_eq!(
        (count[0]["n"].as_i64(), count[0]["j"].as_i64()),
        (Some(6), Some(4))
    );
}

#[test]
fn the_single_pass_agrees_with_the_reference_sql() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    warehouse(&data);
    common::run_ok(
        Command::new(JOBSIGHT)
            .arg("--data")
            .arg(&data)
            .arg("features"),
    );
    let day = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
    assert_eq!(agreement::agree_with_reference(&data, day, 60, &[]), 6);
    // The reference's percentiles carry DataFusion 55's truncation of the interpolation weight
    // to a multiple of 1e-6 (p95 of 1, 2, 3, 4, 10 is 8.799994, not 8.8): the bound used above.
    let slow = common::sql_json(
        JOBSIGHT,
        &data,
        &jobsight_features::reference::node_metric_sql(day, 60, &[]),
    );
    let p95 = slow
        .iter()
        .find(|r| r["job_id"] == "a" && r["metric"] == "x")
        .unwrap()["p95"]
        .as_f64()
        .unwrap();
    assert!(p95 < 8.8 && 8.8 - p95 <= 6e-6 + 1e-12, "{p95}");

    // A simulated day: 16 nodes, 20 metrics (4 per-core series), every anomaly and inefficiency.
    let sim = tmp.path().join("sim");
    common::run_ok(
        Command::new(JOBSIGHT)
            .arg("--data")
            .arg(&sim)
            .args(["simulate", "--nodes", "16", "--jobs", "40", "--step", "30"]),
    );
    let out = common::run_ok(Command::new(JOBSIGHT).arg("--data").arg(&sim).args([
        "features",
        "--cores-per-node",
        "32",
    ]));
    assert!(out.contains("0 job(s) cannot be judged"), "{out}");
    let days = common::sql_json(JOBSIGHT, &sim, "SELECT DISTINCT day FROM jobs");
    let mut rows = 0;
    for day in &days {
        let day = NaiveDate::parse_from_str(day["day"].as_str().unwrap(), "%Y-%m-%d").unwrap();
        rows += agreement::agree_with_reference(&sim, day, 60, &[]);
    }
    assert!(rows > 1000, "{rows}");
}

/// The three tables `jobsight features` writes, as JSON rows in key order.
fn feature_tables(data: &Path) -> Vec<Vec<serde_json::Value>> {
    [
        "SELECT * FROM features ORDER BY day, job_id, node, metric",
        "SELECT * FROM features_job ORDER BY day, job_id, metric",
        "SELECT * FROM job_summary ORDER BY day, job_id",
    ]
    .map(|q| common::sql_json(JOBSIGHT, data, q))
    .to_vec()
}

/// `jobsight features --engine METHOD EXTRA...`: the three tables it wrote and what it said.
fn features_by(data: &Path, method: &str, extra: &[&str]) -> (Vec<Vec<serde_json::Value>>, String) {
    let out = common::run_ok(
        Command::new(JOBSIGHT)
            .arg("--data")
            .arg(data)
            .args(["features", "--engine", method])
            .args(extra),
    );
    (feature_tables(data), out)
}

/// Two runs' tables hold the same rows, every column equal to the last bit.
fn assert_same_features(a: &[Vec<serde_json::Value>], b: &[Vec<serde_json::Value>], what: &str) {
    for (a, b) in a.iter().zip(b) {
        assert_eq!(a.len(), b.len(), "row counts differ ({what})");
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x, y, "({what})");
        }
    }
}

/// The features step as a DataFusion plan (`--engine plan`, what a backfill runs on a Ballista
/// cluster) writes the single pass's rows, every column equal to the last bit (the node
/// imbalance from `js_bin_means`' bins too); the samples left out counted alike.
#[test]
fn the_features_plan_writes_what_the_single_pass_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let hand = tmp.path().join("hand");
    warehouse(&hand);
    let sim = tmp.path().join("sim");
    common::run_ok(
        Command::new(JOBSIGHT)
            .arg("--data")
            .arg(&sim)
            .args(["simulate", "--nodes", "8", "--jobs", "20", "--step", "30"]),
    );
    for (data, extra) in [(&hand, vec![]), (&sim, vec!["--cores-per-node", "32"])] {
        let (single, said_single) = features_by(data, "single-pass", &extra);
        let (plan, said_plan) = features_by(data, "plan", &extra);
        assert!(said_single.contains("by the single pass"), "{said_single}");
        assert!(
            said_plan.contains("by the DataFusion plan, here"),
            "{said_plan}"
        );
        let left_out = |said: &str| {
            said.split("; ")
                .find(|p| p.contains("left out"))
                .map(str::to_string)
        };
        assert_eq!(left_out(&said_single), left_out(&said_plan));
        assert_same_features(&single, &plan, &data.display().to_string());
    }
    // The hand-made day: the stray job's sample is the one left out.
    let (_, said) = features_by(&hand, "plan", &[]);
    assert!(
        said.contains("1 sample(s) of jobs not in `jobs` left out"),
        "{said}"
    );
    // The plan computes no windows, and says so rather than skipping them.
    let refused = Command::new(JOBSIGHT)
        .arg("--data")
        .arg(&hand)
        .args(["features", "--engine", "plan", "--windows", "60:15"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && stderr.contains("does not compute windows"),
        "{stderr}"
    );
}

/// The plan reads a day a range of job ids at a time (`features.plan_rows_at_a_time`): with
/// every job's telemetry in its own part, as the per-job ingest stores it, a budget of one row
/// cuts the day at every job, and the tables, and the samples left out (a job not in `jobs`,
/// trimmed ends), are those of one range and of the single pass, to the last bit. Ids whose
/// text order is not their numeric order ("10" before "9") sit on both sides of a cut.
#[test]
fn the_features_plan_reads_a_day_a_range_of_jobs_at_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let day = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
    let ids = ["10", "100", "9", "a", "b"];
    let jobs: Vec<JobRow> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| job(id, 0, 600 + 200 * i as i64))
        .collect();
    write_jobs(&data, day, &jobs);
    for (i, id) in ids.iter().chain(&["11", "stray"]).enumerate() {
        let mut t = TelemetryBuilder::default();
        for s in (0..=1400).step_by(20) {
            for node in ["n1", "n2"] {
                let v = ((s + 7 * i as i64) % 130) as f64 / (1.0 + i as f64);
                t.push(id, node, "cpu", s * 1_000_000, v);
                t.push(id, node, "mem_used_bytes", s * 1_000_000, 1e9 + v * 1e6);
            }
        }
        let part = format!("t-{i}");
        catalog::write_part(&data, Table::Telemetry, day, &part, &[t.finish().unwrap()]).unwrap();
    }
    let cut = tmp.path().join("cut.toml");
    std::fs::write(&cut, "[features]\nplan_rows_at_a_time = 1\n").unwrap();
    let (single, said_single) = features_by(&data, "single-pass", &[]);
    let (whole, said_whole) = features_by(&data, "plan", &[]);
    let said_ranges = common::run_ok(
        Command::new(JOBSIGHT)
            .arg("--config")
            .arg(&cut)
            .arg("--data")
            .arg(&data)
            .args(["features", "--engine", "plan"]),
    );
    let ranges = feature_tables(&data);
    let left_out = |said: &str| {
        said.split("; ")
            .filter(|p| p.contains("left out"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert!(
        said_single.contains("features of 5 job(s)"),
        "{said_single}"
    );
    assert!(
        left_out(&said_single)[0].starts_with("568 sample(s)"),
        "{said_single}"
    );
    assert_eq!(left_out(&said_single), left_out(&said_whole));
    assert_eq!(left_out(&said_single), left_out(&said_ranges));
    assert_eq!(single[0].len(), 20, "{:?}", single[0]);
    assert_same_features(&single, &whole, "the plan, one range");
    assert_same_features(&single, &ranges, "the plan, a range per job");
}

/// A requeued job whose two runs ended the same day: each run is described by itself (its own
/// samples, its own trimming), in `features`, `features_job` and `job_summary`, by the single
/// pass, the reference SQL and the plan alike; and the rules judge each run.
#[test]
fn each_run_of_a_requeued_job_is_described_and_judged_by_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let day = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
    let run = |restart_count, start, end, state: &str| JobRow {
        restart_count,
        state: Some(state.into()),
        cpus: Some(1),
        num_nodes: Some(1),
        nodes: Some("n1".into()),
        ..job("r", start, end)
    };
    let jobs = [run(0, 0, 500, "NODE_FAIL"), run(1, 700, 1300, "COMPLETED")];
    let mut t = write_jobs(&data, day, &jobs);
    // Run 0 idles at 0.1, run 1 works at 0.9; a sample between the runs belongs to the first
    // (and is trimmed away with its end).
    for s in (0..=500).step_by(20) {
        t.push("r", "n1", "cpu_util", s * 1_000_000, 0.1);
    }
    t.push("r", "n1", "cpu_util", 600 * 1_000_000, 0.5);
    for s in (700..=1300).step_by(20) {
        t.push("r", "n1", "cpu_util", s * 1_000_000, 0.9);
    }
    // A second series, for the anomaly score (it learns from two varying metrics or more).
    for s in (0..=1300).step_by(20) {
        t.push(
            "r",
            "n1",
            "mem_used_bytes",
            s * 1_000_000,
            1e9 + (s % 120) as f64 * 1e6,
        );
    }
    catalog::write_part(&data, Table::Telemetry, day, "t", &[t.finish().unwrap()]).unwrap();

    let (single, said) = features_by(&data, "single-pass", &[]);
    assert!(said.contains("features of 2 job(s)"), "{said}");
    let means: Vec<(i64, f64)> = single[0]
        .iter()
        .filter(|r| r["metric"] == "cpu_util")
        .map(|r| {
            (
                r["restart_count"].as_i64().unwrap(),
                r["mean"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(means, [(0, 0.1), (1, 0.9)], "{:?}", single[0]);
    let summary_runs: Vec<Option<i64>> = single[2]
        .iter()
        .map(|r| r["restart_count"].as_i64())
        .collect();
    assert_eq!(summary_runs, [Some(0), Some(1)]);
    // Two metrics of each of the two runs.
    assert_eq!(agreement::agree_with_reference(&data, day, 60, &[]), 4);
    let (plan, _) = features_by(&data, "plan", &[]);
    assert_same_features(&single, &plan, "a requeued job");

    // The rules: each run judged, the first run's node failure kept with its run.
    common::run_ok(
        Command::new(JOBSIGHT)
            .arg("--data")
            .arg(&data)
            .arg("classify"),
    );
    let findings = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT restart_count, rule FROM findings WHERE rule = 'node-fail' ORDER BY restart_count",
    );
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0]["restart_count"], 0, "{findings:?}");
    let classes = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT DISTINCT restart_count FROM thresholds ORDER BY restart_count",
    );
    assert_eq!(classes.len(), 2, "{classes:?}");
    // The job list's finding filter (`/jobs?finding=`) finds the run that has it, not its sibling.
    let with_finding = common::sql_json(
        JOBSIGHT,
        &data,
        &format!(
            "SELECT j.restart_count FROM jobs j WHERE EXISTS \
             (SELECT 1 FROM findings f WHERE {} AND f.rule = 'node-fail')",
            catalog::same_run("f", "j")
        ),
    );
    assert_eq!(with_finding.len(), 1, "{with_finding:?}");
    assert_eq!(with_finding[0]["restart_count"], 0, "{with_finding:?}");
    the_models_judge_each_run_by_itself(&data, tmp.path());
}

/// The models' windows of a requeued job carry their run and lie inside it; the verdicts are one
/// per run, each counting its own run's windows.
fn the_models_judge_each_run_by_itself(data: &Path, work: &Path) {
    let jobsight = || {
        let mut c = Command::new(JOBSIGHT);
        c.arg("--data").arg(data);
        c
    };
    common::run_ok(jobsight().args(["features", "--windows", "60:15"]));
    let windows = common::sql_json(
        JOBSIGHT,
        data,
        "SELECT restart_count, count(*) AS n, min(window_start) AS first, \
         max(window_end) AS last FROM windows WHERE metric = 'cpu_util' \
         GROUP BY restart_count ORDER BY restart_count",
    );
    assert_eq!(windows.len(), 2, "{windows:?}");
    assert_eq!(windows[0]["restart_count"], 0, "{windows:?}");
    assert!(
        windows[0]["last"].as_str().unwrap() <= "1970-01-01T00:08:20",
        "run 0 ends at 500 s: {windows:?}"
    );
    assert!(
        windows[1]["first"].as_str().unwrap() >= "1970-01-01T00:11:40",
        "run 1 starts at 700 s: {windows:?}"
    );
    let model = work.join("score.model");
    common::run_ok(
        jobsight()
            .args(["model", "train", "--kind", "unsupervised", "--out"])
            .arg(&model),
    );
    common::run_ok(
        jobsight()
            .arg("classify")
            .arg("--anomaly-model")
            .arg(&model),
    );
    let verdicts = common::sql_json(
        JOBSIGHT,
        data,
        "SELECT restart_count, windows FROM predictions ORDER BY restart_count",
    );
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    for (run, (verdict, windows)) in verdicts.iter().zip(&windows).enumerate() {
        assert_eq!(verdict["restart_count"], run, "{verdicts:?}");
        assert_eq!(verdict["windows"], windows["n"], "{verdicts:?} {windows:?}");
    }
}
