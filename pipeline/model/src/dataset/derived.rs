//! The columns computed as windows are read rather than stored: the memory share of a node
//! ([`MEMORY_SHARE`], from two stored series), and the job- and application-relative features
//! (`@job`, `@app`), each window against a typical window. The reader
//! ([`windows`](super::windows)) calls these on each batch of whole jobs it hands over, so that
//! every caller sees the same columns.
//!
//! [`AppBaselines`] lives here, with the `@app` columns it is the input of, rather than in
//! [`crate::typical`] that gathers it: the reader must not depend on the module that reads
//! through it.

use std::collections::{BTreeSet, HashMap};

use super::{APP_RELATIVE, JOB_RELATIVE, Windows, measured};

/// The node's memory in use as a share of its capacity, in [0, 1]: a ratio to the node's
/// capacity means the same on a node of 8 GB or of 200 GB (issue 20). Not a stored series: every
/// source records memory in use and available (their sum is the node's MemTotal), so each
/// window's share is derived from those two series' statistics when windows are read. Linear
/// statistics are divided by the window's capacity (the two means' sum); skewness and kurtosis
/// do not change with scale and are the bytes' own. Only by name ([`derived_metrics`]).
pub const MEMORY_SHARE: &str = "mem_used_share";
const MEMORY_USED: &str = "mem_used_bytes";
const MEMORY_AVAILABLE: &str = "mem_available_bytes";

/// The stored columns a measured feature is computed from: itself, or for the memory share the
/// used bytes' statistic and the two means that make the node's capacity.
pub(super) fn stored_columns(measured: &str) -> Vec<String> {
    match measured.rsplit_once(':') {
        Some((MEMORY_SHARE, stat)) => vec![
            format!("{MEMORY_USED}:{stat}"),
            format!("{MEMORY_USED}:mean"),
            format!("{MEMORY_AVAILABLE}:mean"),
        ],
        _ => vec![measured.to_string()],
    }
}

/// Whether a node that reported `metrics` also has the memory share.
fn has_memory_share(metrics: &BTreeSet<String>) -> bool {
    metrics.contains(MEMORY_USED) && metrics.contains(MEMORY_AVAILABLE)
}

/// Adds the memory-share columns `wanted` names (measured ones) to `windows`, whose columns
/// include their stored columns ([`stored_columns`]); a node's windows without both series get
/// NaN (missing), and every node with both is said to report the share.
pub(super) fn with_memory_share(mut windows: Windows, wanted: &[String]) -> Windows {
    for metrics in windows.metrics_of.values_mut() {
        if has_memory_share(metrics) {
            metrics.insert(MEMORY_SHARE.to_string());
        }
    }
    let mut shares: Vec<&str> = Vec::new();
    for f in wanted.iter().map(|f| measured(f)) {
        if Windows::metric_of(f) == MEMORY_SHARE && !shares.contains(&f) {
            shares.push(f);
        }
    }
    if shares.is_empty() {
        return windows;
    }
    let column = |name: &str| windows.features.iter().position(|f| f == name);
    let used_mean = column(&format!("{MEMORY_USED}:mean"));
    let available_mean = column(&format!("{MEMORY_AVAILABLE}:mean"));
    // Per share column: the used bytes' statistic, and whether it scales with the capacity.
    let sources: Vec<(Option<usize>, bool)> = shares
        .iter()
        .map(|f| {
            let stat = f.rsplit_once(':').map_or("", |(_, s)| s);
            (
                column(&format!("{MEMORY_USED}:{stat}")),
                !matches!(stat, "skewness" | "kurtosis"),
            )
        })
        .collect();
    let width = windows.features.len();
    let out_width = width + shares.len();
    let rows = windows.keys.len();
    let mut values = Vec::with_capacity(rows * out_width);
    for r in 0..rows {
        let row = &windows.values[r * width..(r + 1) * width];
        values.extend_from_slice(row);
        let capacity = match (used_mean, available_mean) {
            (Some(u), Some(a)) => row[u] + row[a],
            _ => f64::NAN,
        };
        for &(source, scales) in &sources {
            let x = source.map_or(f64::NAN, |c| row[c]);
            values.push(match (scales, capacity > 0.0) {
                (false, true) => x,
                (true, true) => x / capacity,
                // No capacity known (a series missing): the share is missing too.
                (_, false) => f64::NAN,
            });
        }
    }
    windows
        .features
        .extend(shares.iter().map(|s| (*s).to_string()));
    windows.values = values;
    windows
}

/// A window's value against its job's typical value on the node, scale-free and bounded:
/// `(x − m) / (|x| + |m|)` in [−1, 1], 0 when both are 0, NaN when either is missing. Bounded so
/// that a metric near zero cannot produce an extreme value, and the same for a leak on a node of
/// 8 GB or of 200 GB.
pub fn relative(x: f64, m: f64) -> f64 {
    if !(x.is_finite() && m.is_finite()) {
        return f64::NAN;
    }
    let scale = x.abs() + m.abs();
    if scale == 0.0 { 0.0 } else { (x - m) / scale }
}

/// Adds the job- and application-relative columns `wanted` names to `windows` (whose columns are
/// the measured ones) and returns the columns in `wanted`'s order; an `@app` column is NaN for a
/// job `app` has no baseline of. Rows must be in key order (by job and node).
pub(super) fn with_job_relative(
    windows: Windows,
    wanted: &[String],
    app: Option<&AppBaselines>,
) -> Windows {
    if windows.features == wanted {
        return windows;
    }
    let source: HashMap<&str, usize> = windows
        .features
        .iter()
        .enumerate()
        .map(|(i, f)| (f.as_str(), i))
        .collect();
    let width = windows.features.len();
    let out_width = wanted.len();
    let rows = windows.keys.len();
    // Where each `@app` column's measured feature sits in the baselines' vectors.
    let app_column: Vec<Option<usize>> = wanted
        .iter()
        .map(|f| {
            let app = app.filter(|_| f.ends_with(APP_RELATIVE))?;
            app.columns.iter().position(|c| c == measured(f))
        })
        .collect();
    let mut values = vec![f64::NAN; rows * out_width];
    let mut start = 0;
    while start < rows {
        let key = &windows.keys[start];
        let mut end = start + 1;
        while end < rows
            && windows.keys[end].job_id == key.job_id
            && windows.keys[end].run == key.run
            && windows.keys[end].node == key.node
        {
            end += 1;
        }
        // The run's typical window on this node (each run of a requeued job has its own): the
        // median of each measured column over its first and last fifth of windows ("before and
        // after"), so that an anomaly covering most of the middle of the run does not become its
        // own baseline.
        let n = end - start;
        let edge = n.div_ceil(5);
        let baseline: Vec<usize> = if n < 5 {
            (start..end).collect()
        } else {
            (start..start + edge).chain(end - edge..end).collect()
        };
        let medians: Vec<f64> = (0..width)
            .map(|c| {
                let mut column: Vec<f64> = baseline
                    .iter()
                    .map(|&r| windows.values[r * width + c])
                    .filter(|v| v.is_finite())
                    .collect();
                jobsight_base::stats::median(&mut column).unwrap_or(f64::NAN)
            })
            .collect();
        let app_baseline = app.and_then(|a| a.of(&key.job_id));
        for r in start..end {
            for (o, f) in wanted.iter().enumerate() {
                let Some(&c) = source.get(measured(f)) else {
                    continue;
                };
                let x = windows.values[r * width + c];
                values[r * out_width + o] = if f.ends_with(JOB_RELATIVE) {
                    relative(x, medians[c])
                } else if f.ends_with(APP_RELATIVE) {
                    match (app_baseline, app_column[o]) {
                        (Some(b), Some(a)) => relative(x, b[a]),
                        _ => f64::NAN,
                    }
                } else {
                    x
                };
            }
        }
        start = end;
    }
    Windows {
        features: wanted.to_vec(),
        values,
        ..windows
    }
}

/// The metrics derived from the `stored` ones that a model can be trained on by name
/// (`--metrics`). No default feature set includes them: measured, the memory share changes
/// nothing where every node has the same memory and made simulated → real worse
/// (docs/models.md, "Memory as a share of the node").
pub fn derived_metrics(stored: &BTreeSet<String>) -> Vec<String> {
    if has_memory_share(stored) {
        vec![MEMORY_SHARE.to_string()]
    } else {
        Vec::new()
    }
}

/// Each job's application baseline: the window its `@app` columns are computed against
/// (gathered by [`crate::typical`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppBaselines {
    /// Measured features, as in [`crate::typical::RunTypicals`].
    pub columns: Vec<String>,
    pub of_job: HashMap<String, Vec<f64>>,
}

impl AppBaselines {
    /// The baseline of `job` in [`AppBaselines::columns`]'s order, if it has one.
    pub fn of(&self, job: &str) -> Option<&[f64]> {
        self.of_job.get(job).map(Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use super::*;
    use crate::dataset::WindowKey;

    /// The memory share divides the used bytes' linear statistics by the window's capacity
    /// (used + available means), keeps the scale-free ones, is missing where a series is, and
    /// a node with both series reports it.
    #[test]
    fn memory_share_is_used_over_capacity() {
        let key = |start| WindowKey {
            job_id: Arc::from("1"),
            run: None,
            node: Arc::from("n1"),
            start_us: start,
            end_us: start + 60_000_000,
        };
        let features: Vec<String> = [
            "mem_used_bytes:mean",
            "mem_used_bytes:max",
            "mem_used_bytes:skewness",
            "mem_available_bytes:mean",
        ]
        .map(String::from)
        .to_vec();
        let stored: BTreeSet<String> = ["mem_used_bytes", "mem_available_bytes"]
            .map(String::from)
            .into();
        let windows = Windows {
            features,
            keys: vec![key(0), key(15_000_000)],
            values: vec![30.0, 40.0, 0.5, 70.0, 30.0, 40.0, 0.5, f64::NAN],
            metrics_of: HashMap::from([((Arc::from("1"), Arc::from("n1")), stored.clone())]),
            widths_s: BTreeSet::from([60]),
        };
        let wanted = ["mem_used_share:max", "mem_used_share:skewness"].map(String::from);
        let out = with_memory_share(windows, &wanted);
        assert_eq!(&out.features[4..], &wanted);
        assert_eq!(&out.row(0)[4..], &[0.4, 0.5]);
        assert!(out.row(1)[4..].iter().all(|v| v.is_nan()));
        assert!(out.metrics_of.values().all(|m| m.contains(MEMORY_SHARE)));
        assert_eq!(derived_metrics(&stored), vec![MEMORY_SHARE.to_string()]);
        assert!(derived_metrics(&BTreeSet::from(["mem_used_bytes".to_string()])).is_empty());
        assert_eq!(
            stored_columns("mem_used_share:p95"),
            [
                "mem_used_bytes:p95",
                "mem_used_bytes:mean",
                "mem_available_bytes:mean"
            ]
        );
    }

    /// Two jobs of different sizes with the same anomaly (a level doubled in their third window)
    /// look alike once each window is taken against its own job's typical window.
    #[test]
    fn job_relative_features_are_the_same_for_two_sizes_of_one_anomaly() {
        let key = |job: &str, start: i64| WindowKey {
            job_id: Arc::from(job),
            run: None,
            node: Arc::from("n1"),
            start_us: start,
            end_us: start + 60,
        };
        let keys: Vec<WindowKey> = (0..5)
            .map(|i| key("small", i * 60))
            .chain((0..5).map(|i| key("big", i * 60)))
            .collect();
        let small = [1.0, 1.0, 2.0, 1.0, 1.0];
        let big = [100.0, 100.0, 200.0, 100.0, f64::NAN];
        let windows = Windows {
            features: vec!["mem:mean".into()],
            keys,
            values: small.iter().chain(&big).copied().collect(),
            ..Windows::default()
        };
        // Rows in key order: "big" sorts first.
        let mut order: Vec<usize> = (0..10).collect();
        order.sort_by(|&a, &b| windows.keys[a].cmp(&windows.keys[b]));
        let windows = windows.subset(&order);
        let wanted: Vec<String> = vec!["mem:mean@job".into(), "mem:mean".into()];
        let out = with_job_relative(windows, &wanted, None);
        assert_eq!(out.features, wanted);
        let rel: Vec<f64> = (0..10).map(|r| out.row(r)[0]).collect();
        let third = 1.0 / 3.0;
        for (i, want) in [0.0, 0.0, third, 0.0].iter().enumerate() {
            assert!((rel[i] - want).abs() < 1e-12, "big {i}: {}", rel[i]);
            assert!(
                (rel[5 + i] - want).abs() < 1e-12,
                "small {i}: {}",
                rel[5 + i]
            );
        }
        assert!(rel[4].is_nan(), "a missing value stays missing");
        assert_eq!(
            out.row(2)[1],
            200.0,
            "the measured column is kept as it was"
        );
        assert_eq!(relative(0.0, 0.0), 0.0);
        assert_eq!(relative(5.0, 0.0), 1.0);
    }

    /// An `@app` column is each window against its job's application baseline, and missing for
    /// a job without one.
    #[test]
    fn application_relative_features_are_against_the_jobs_baseline() {
        let keys: Vec<WindowKey> = ["a", "a", "b"]
            .iter()
            .enumerate()
            .map(|(i, job)| WindowKey {
                job_id: Arc::from(*job),
                run: None,
                node: Arc::from("n1"),
                start_us: i as i64 * 60,
                end_us: i as i64 * 60 + 60,
            })
            .collect();
        let windows = Windows {
            features: vec!["mem:mean".into()],
            keys,
            values: vec![30.0, 10.0, 7.0],
            ..Windows::default()
        };
        let app = AppBaselines {
            columns: vec!["mem:mean".into()],
            of_job: HashMap::from([("a".to_string(), vec![10.0])]),
        };
        let wanted: Vec<String> = vec!["mem:mean@app".into(), "mem:mean@job".into()];
        let out = with_job_relative(windows, &wanted, Some(&app));
        assert_eq!(out.row(0)[0], 0.5, "(30 - 10) / (30 + 10)");
        assert_eq!(out.row(1)[0], 0.0);
        assert!(out.row(2)[0].is_nan(), "job b has no baseline");
        assert_eq!(out.row(2)[1], 0.0, "its job-relative column is unaffected");
        assert_eq!(measured("mem:mean@app"), "mem:mean");
    }
}
