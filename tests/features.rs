//! `jobsight features` on a hand-made warehouse whose statistics can be checked by hand: trimming
//! of each end, a short job that keeps everything, NaN and infinite samples counted and left out,
//! a constant series (no skewness or kurtosis), a series of only NaN, and exact percentiles.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::Command;

use chrono::{DateTime, NaiveDate, Utc};
use jobsight::catalog::{self, Table};
use jobsight::ingest::{JobRow, TelemetryBuilder, jobs_batch};

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

fn warehouse(data: &Path) {
    let day = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
    let jobs = [job("a", 0, 1000), job("b", 0, 100), job("c", 0, 1000)];
    catalog::write_part(data, Table::Jobs, day, "t", &[jobs_batch(&jobs).unwrap()]).unwrap();
    let mut t = TelemetryBuilder::default();
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
        out.contains("wrote 6 feature rows")
            && out.contains("and 4 across nodes")
            && out.contains("1 day(s)"),
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
    // Linear interpolation between closest ranks: rank p × (n − 1). DataFusion truncates the
    // interpolation weight to a multiple of 1e-6, so a percentile between two ranks is up to
    // 1e-6 × (upper − lower) below the exact value, never above (p95 = 8.799994 here).
    for (column, expected, lower, upper) in [
        ("p05", 1.2, 1.0, 2.0),
        ("p25", 2.0, 2.0, 2.0),
        ("p50", 3.0, 3.0, 3.0),
        ("p75", 4.0, 4.0, 4.0),
        ("p95", 8.8, 4.0, 10.0),
    ] {
        let got = x[column].as_f64().unwrap();
        let bound = 1e-6 * (upper - lower) + 1e-12;
        assert!(
            got <= expected + 1e-12 && expected - got <= bound,
            "{column}: {got} vs {expected} (bound {bound})"
        );
    }

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
