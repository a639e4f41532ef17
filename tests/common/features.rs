//! The check that the features' single pass agrees with the reference SQL, shared by the features
//! test (hand-made and simulated data) and the real-data test (the HPAS LDMS runs). Included with
//! `#[path]` by those two only: `common` itself is also compiled into the hook crate's tests, which
//! do not link the pipeline.

use std::path::Path;

use chrono::NaiveDate;

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

/// A SQL condition restricting to `jobs` (all when empty).
fn only(jobs: &[String]) -> String {
    if jobs.is_empty() {
        return String::new();
    }
    let ids: Vec<String> = jobs.iter().map(|j| format!("'{j}'")).collect();
    format!(" AND job_id IN ({})", ids.join(", "))
}

/// Two JSON numbers equal within `tolerance` relative to the larger (at least 1), or both null.
fn near(a: &serde_json::Value, b: &serde_json::Value, tolerance: f64) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (None, None) => a.is_null() && b.is_null(),
        (Some(x), Some(y)) => (x - y).abs() <= tolerance * x.abs().max(y.abs()).max(1.0),
        _ => false,
    }
}

/// Runs the reference SQL of `day` through `jobsight sql` and the single pass's rows from the
/// tables, and compares every statistic: counts exactly; moments to 1e-9 relative (skewness and
/// kurtosis 1e-6: they divide small central moments); percentiles to DataFusion's truncation
/// bound, 1e-6 × (max − min). `only_jobs` restricts both to those jobs (all when empty). Returns
/// the number of rows compared.
pub fn agree_with_reference(
    data: &Path,
    day: NaiveDate,
    trim_s: u64,
    only_jobs: &[String],
) -> usize {
    use jobsight_features::reference;
    let key = |r: &serde_json::Value| {
        format!(
            "{}/r{}/{}/{}",
            r["job_id"].as_str().unwrap(),
            r["restart_count"],
            r["node"].as_str().unwrap_or(""),
            r["metric"].as_str().unwrap()
        )
    };
    let day_s = day.format("%Y-%m-%d");
    let fast = crate::common::sql_json(
        JOBSIGHT,
        data,
        &format!(
            "SELECT * FROM features WHERE day = '{day_s}'{}",
            only(only_jobs)
        ),
    );
    let slow = crate::common::sql_json(
        JOBSIGHT,
        data,
        &reference::node_metric_sql(day, trim_s, only_jobs),
    );
    assert_eq!(fast.len(), slow.len(), "row counts differ");
    let fast: std::collections::HashMap<String, &serde_json::Value> =
        fast.iter().map(|r| (key(r), r)).collect();
    for r in &slow {
        let f = fast
            .get(&key(r))
            .unwrap_or_else(|| panic!("{} only in the reference", key(r)));
        for column in ["n", "n_nonfinite", "trimmed"] {
            assert_eq!(f[column], r[column], "{column} of {}", key(r));
        }
        // The std is compared on the scale of the mean too: the reference's plain mean leaves a
        // constant series a rounding residue (2.4e-7 on values of 3.2e10) where the pass gives 0.
        let mean = r["mean"].as_f64().unwrap_or(0.0).abs();
        let std_near = |a: &serde_json::Value, b: &serde_json::Value| match (a.as_f64(), b.as_f64())
        {
            (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(mean).max(1.0),
            _ => a.is_null() && b.is_null(),
        };
        assert!(
            std_near(&f["std"], &r["std"]),
            "std of {}: single pass {} vs reference {}",
            key(r),
            f["std"],
            r["std"]
        );
        for (column, tolerance) in [
            ("min", 1e-12),
            ("max", 1e-12),
            ("mean", 1e-9),
            ("cv", 1e-9),
            ("skewness", 1e-6),
            ("kurtosis", 1e-6),
        ] {
            assert!(
                near(&f[column], &r[column], tolerance),
                "{column} of {}: single pass {} vs reference {}",
                key(r),
                f[column],
                r[column]
            );
        }
        let range = r["max"].as_f64().unwrap_or(0.0) - r["min"].as_f64().unwrap_or(0.0);
        for column in ["p05", "p25", "p50", "p75", "p95"] {
            let ok = match (f[column].as_f64(), r[column].as_f64()) {
                (Some(a), Some(b)) => (a - b).abs() <= 1e-6 * range + 1e-9 * a.abs().max(1.0),
                (None, None) => true,
                _ => false,
            };
            assert!(ok, "{column} of {}: {} vs {}", key(r), f[column], r[column]);
        }
    }
    // The single pass and the plan over `js_describe` compute each series with the same core
    // on the same samples: every figure equal, to the last bit (JSON numbers round-trip), with
    // DataFusion's default options and with those the plan is fastest with (which group in one
    // step instead of two).
    for options in [Vec::new(), reference::describe_options_env()] {
        let described = crate::common::sql_json_with(
            JOBSIGHT,
            data,
            &reference::describe_sql(day, trim_s, only_jobs),
            &options,
        );
        assert_eq!(
            fast.len(),
            described.len(),
            "js_describe's row count differs ({options:?})"
        );
        let order = |r: &serde_json::Value| {
            let [job, node, metric] =
                ["job_id", "node", "metric"].map(|c| r[c].as_str().unwrap_or("").to_string());
            (job, r["restart_count"].as_i64(), node, metric)
        };
        assert!(
            described.windows(2).all(|w| order(&w[0]) < order(&w[1])),
            "js_describe's plan is not in job, run, node, metric order ({options:?})"
        );
        for r in &described {
            let f = fast
                .get(&key(r))
                .unwrap_or_else(|| panic!("{} only in js_describe's plan", key(r)));
            for column in reference::described_columns() {
                assert_eq!(f[column], r[column], "{column} of {} ({options:?})", key(r));
            }
        }
    }
    let fast_job = crate::common::sql_json(
        JOBSIGHT,
        data,
        &format!(
            "SELECT * FROM features_job WHERE day = '{day_s}'{}",
            only(only_jobs)
        ),
    );
    let slow_job = crate::common::sql_json(
        JOBSIGHT,
        data,
        &reference::across_nodes_sql(day, trim_s, 60, only_jobs),
    );
    assert_eq!(
        fast_job.len(),
        slow_job.len(),
        "features_job row counts differ"
    );
    let fast_job: std::collections::HashMap<String, &serde_json::Value> =
        fast_job.iter().map(|r| (key(r), r)).collect();
    for r in &slow_job {
        let f = fast_job.get(&key(r)).unwrap();
        assert_eq!(f["nodes"], r["nodes"], "{}", key(r));
        for column in [
            "mean",
            "min",
            "max",
            "node_mean_min",
            "node_mean_max",
            "node_cv",
            "imbalance",
        ] {
            assert!(
                near(&f[column], &r[column], 1e-9),
                "{column} of {}: {} vs {}",
                key(r),
                f[column],
                r[column]
            );
        }
    }
    slow.len()
}
