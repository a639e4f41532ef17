//! The models' data: the `windows` table pivoted into one row per job × node × window, with a
//! column per metric statistic (`<metric>:<stat>`), and the labels that say what each window is.
//!
//! The labelling protocol is fixed, so results are comparable between runs and with published
//! figures: a window is labelled with an anomaly when it lies entirely inside exactly one labelled
//! anomaly interval (of its node, when the label names one), "healthy" when it overlaps none, and
//! is left out otherwise. Only jobs with at least one label row are labelled at all: `none` marks
//! a healthy job; an HPAS anomaly name marks an interval; any other label (the simulator's
//! inefficiencies such as `hung`) marks a job whose behaviour is neither, which is left out of the
//! supervised data.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type, TimeUnit};
use datafusion::parquet::arrow::ProjectionMask;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::ModelError;
use super::typical::AppBaselines;
use jobsight_sim::Anomaly;
use jobsight_warehouse::catalog::Table;

pub use jobsight_warehouse::catalog::WINDOW_STATS;

/// The label of windows without an anomaly.
pub const HEALTHY: &str = "healthy";

/// The suffix of a job-relative feature: `cpu_user:mean@job` is `cpu_user:mean` of the window
/// against the same job's typical window on the same node (the median of its first and last
/// fifth of windows).
pub const JOB_RELATIVE: &str = "@job";

/// The suffix of an application-relative feature: `cpu_user:mean@app` is `cpu_user:mean` of the
/// window against the typical window of its application's other runs ([`super::typical`]).
pub const APP_RELATIVE: &str = "@app";

/// The application of a job without a name: never given a baseline (it stands for many).
pub use jobsight_base::slurm_text::NO_NAME;

/// Which features a model is trained on when none are given (issue 20: absolute levels depend on
/// the application and its input; a window against its own job's typical window does not).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum FeatureSet {
    /// Every `<metric>:<stat>` as measured.
    #[default]
    Absolute,
    /// Every `<metric>:<stat>@job`: the window against its job's typical window on its node.
    Relative,
    /// Both.
    Both,
    /// Every `<metric>:<stat>@job` and every `<metric>:<stat>@app`: the window against its job's
    /// typical window and against its application's (the other runs').
    Application,
}

impl FeatureSet {
    pub fn name(self) -> &'static str {
        match self {
            FeatureSet::Absolute => "absolute",
            FeatureSet::Relative => "relative",
            FeatureSet::Both => "both",
            FeatureSet::Application => "application",
        }
    }

    /// The feature names of this set over `metrics`.
    pub fn names(self, metrics: &BTreeSet<String>) -> Vec<String> {
        let base = metrics
            .iter()
            .flat_map(|m| WINDOW_STATS.iter().map(move |s| format!("{m}:{s}")));
        match self {
            FeatureSet::Absolute => base.collect(),
            FeatureSet::Relative => base.map(|f| f + JOB_RELATIVE).collect(),
            FeatureSet::Both => base.flat_map(|f| [f.clone(), f + JOB_RELATIVE]).collect(),
            FeatureSet::Application => base
                .flat_map(|f| [f.clone() + JOB_RELATIVE, f + APP_RELATIVE])
                .collect(),
        }
    }
}

/// The measured feature a (possibly job- or application-relative) feature is computed from.
pub fn measured(feature: &str) -> &str {
    feature
        .strip_suffix(JOB_RELATIVE)
        .or_else(|| feature.strip_suffix(APP_RELATIVE))
        .unwrap_or(feature)
}

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
fn stored_columns(measured: &str) -> Vec<String> {
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
fn with_memory_share(mut windows: Windows, wanted: &[String]) -> Windows {
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
fn with_job_relative(windows: Windows, wanted: &[String], app: Option<&AppBaselines>) -> Windows {
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
            && windows.keys[end].node == key.node
        {
            end += 1;
        }
        // The job's typical window on this node: the median of each measured column over its
        // first and last fifth of windows ("before and after"), so that an anomaly covering most
        // of the middle of the run does not become its own baseline.
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

/// One window of one node of one job: `[start_us, end_us)`, microseconds since the epoch.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WindowKey {
    pub job_id: Arc<str>,
    pub node: Arc<str>,
    pub start_us: i64,
    pub end_us: i64,
}

/// Windows with their feature values, row-major, NaN where a statistic is missing.
#[derive(Debug, Clone, Default)]
pub struct Windows {
    /// `<metric>:<stat>`, one per column.
    pub features: Vec<String>,
    /// Sorted by job, node, start.
    pub keys: Vec<WindowKey>,
    /// `keys.len() × features.len()` values.
    pub values: Vec<f64>,
    /// The metrics each job's node reported at all (any window).
    pub metrics_of: HashMap<(Arc<str>, Arc<str>), BTreeSet<String>>,
    /// Window widths seen, in seconds (one, unless features were computed twice differently).
    pub widths_s: BTreeSet<i64>,
}

impl Windows {
    /// Column `c` over `rows`, a missing or non-finite value replaced by `fill` (the training
    /// median, so that a gap in the telemetry looks ordinary rather than extreme).
    pub fn filled_column(&self, rows: &[usize], c: usize, fill: f64) -> Vec<f64> {
        rows.iter()
            .map(|&r| {
                let v = self.row(r)[c];
                if v.is_finite() { v } else { fill }
            })
            .collect()
    }

    pub fn row(&self, i: usize) -> &[f64] {
        let n = self.features.len();
        &self.values[i * n..(i + 1) * n]
    }

    /// Where each of a model's `features` sits in these windows' columns (`None`: absent).
    pub fn columns_of(&self, features: &[String]) -> Vec<Option<usize>> {
        let index: HashMap<&str, usize> = self
            .features
            .iter()
            .enumerate()
            .map(|(i, f)| (f.as_str(), i))
            .collect();
        features
            .iter()
            .map(|f| index.get(f.as_str()).copied())
            .collect()
    }

    /// The window width and stride in seconds, checked to be one width: the stride is the
    /// smallest step between consecutive windows of a series (rows are in key order).
    pub fn window(&self) -> Result<(i64, i64), ModelError> {
        let widths: Vec<i64> = self.widths_s.iter().copied().collect();
        match widths.as_slice() {
            [w] => {
                let stride = self
                    .keys
                    .windows(2)
                    .filter(|p| p[0].job_id == p[1].job_id && p[0].node == p[1].node)
                    .map(|p| (p[1].start_us - p[0].start_us) / 1_000_000)
                    .filter(|&s| s > 0)
                    .min()
                    .unwrap_or(*w);
                Ok((*w, stride))
            }
            [] => Err(ModelError::NoData("no windows".into())),
            _ => Err(ModelError::NoData(format!(
                "the windows have different widths ({widths:?} s): compute the features again with one `--windows`"
            ))),
        }
    }

    /// The metric of a feature name `<metric>:<stat>`.
    pub fn metric_of(feature: &str) -> &str {
        feature.rsplit_once(':').map_or(feature, |(m, _)| m)
    }

    /// The rows of each job, by job id.
    pub fn rows_by_job(&self) -> BTreeMap<Arc<str>, Vec<usize>> {
        let mut out: BTreeMap<Arc<str>, Vec<usize>> = BTreeMap::new();
        for (i, k) in self.keys.iter().enumerate() {
            out.entry(k.job_id.clone()).or_default().push(i);
        }
        out
    }

    /// Keeps only the rows in `rows` (in that order).
    /// Appends `rows` of `other` (with the same columns), with what it knows of their nodes'
    /// metrics, and its window widths.
    pub fn append(&mut self, other: &Windows, rows: &[usize]) {
        for &r in rows {
            let key = &other.keys[r];
            let node = (key.job_id.clone(), key.node.clone());
            if !self.metrics_of.contains_key(&node)
                && let Some(metrics) = other.metrics_of.get(&node)
            {
                self.metrics_of.insert(node, metrics.clone());
            }
            self.keys.push(key.clone());
            self.values.extend_from_slice(other.row(r));
        }
        self.widths_s.extend(other.widths_s.iter().copied());
    }

    pub fn subset(&self, rows: &[usize]) -> Windows {
        let mut values = Vec::with_capacity(rows.len() * self.features.len());
        for &r in rows {
            values.extend_from_slice(self.row(r));
        }
        Windows {
            features: self.features.clone(),
            keys: rows.iter().map(|&r| self.keys[r].clone()).collect(),
            values,
            metrics_of: self.metrics_of.clone(),
            widths_s: self.widths_s.clone(),
        }
    }
}

/// Converts a column to plain strings, microseconds or floats once per batch.
fn text_column(batch: &RecordBatch, name: &str, path: &Path) -> Result<ArrayRef, ModelError> {
    let array = batch
        .column_by_name(name)
        .ok_or_else(|| ModelError::read(path, format!("no column {name}")))?;
    cast(array, &DataType::Utf8).map_err(|e| ModelError::read(path, format!("column {name}: {e}")))
}

fn micros_column(batch: &RecordBatch, name: &str, path: &Path) -> Result<ArrayRef, ModelError> {
    let array = batch
        .column_by_name(name)
        .ok_or_else(|| ModelError::read(path, format!("no column {name}")))?;
    let fail = |e| ModelError::read(path, format!("column {name}: {e}"));
    cast(
        &cast(array, &DataType::Timestamp(TimeUnit::Microsecond, None)).map_err(fail)?,
        &DataType::Int64,
    )
    .map_err(fail)
}

fn float_column(batch: &RecordBatch, name: &str, path: &Path) -> Result<ArrayRef, ModelError> {
    let array = batch
        .column_by_name(name)
        .ok_or_else(|| ModelError::read(path, format!("no column {name}")))?;
    cast(array, &DataType::Float64)
        .map_err(|e| ModelError::read(path, format!("column {name}: {e}")))
}

/// Opens every Parquet part of `table` on `days`, reading only `columns`.
fn batches(
    data: &Path,
    table: Table,
    days: &[NaiveDate],
    part: Option<&str>,
    columns: Option<&[&str]>,
    mut on_batch: impl FnMut(&RecordBatch, &Path) -> Result<(), ModelError>,
) -> Result<(), ModelError> {
    for &day in days {
        let files = jobsight_warehouse::catalog::part_files(data, table, day, part)
            .map_err(|e| ModelError::read(&table.dir(data), e))?;
        for path in files {
            let file = File::open(&path).map_err(|e| ModelError::read(&path, e))?;
            let mut builder = ParquetRecordBatchReaderBuilder::try_new(file)
                .map_err(|e| ModelError::read(&path, e))?;
            if let Some(columns) = columns {
                let mask =
                    ProjectionMask::columns(builder.parquet_schema(), columns.iter().copied());
                builder = builder.with_projection(mask);
            }
            let reader = builder.build().map_err(|e| ModelError::read(&path, e))?;
            for batch in reader {
                let batch = batch.map_err(|e| ModelError::read(&path, e))?;
                on_batch(&batch, &path)?;
            }
        }
    }
    Ok(())
}

/// The days that have a `windows` partition, oldest first.
pub fn days_with_windows(data: &Path) -> Vec<NaiveDate> {
    jobsight_warehouse::catalog::days(data, Table::Windows)
}

/// The metrics with windows on `days` (of the jobs in `only`, when given): a cheap pass over two
/// columns.
pub fn window_metrics(
    data: &Path,
    days: &[NaiveDate],
    only: Option<&HashSet<String>>,
    part: Option<&str>,
) -> Result<BTreeSet<String>, ModelError> {
    let wanted = |id: &str| only.is_none_or(|set| set.contains(id));
    let mut metrics = BTreeSet::new();
    batches(
        data,
        Table::Windows,
        days,
        part,
        Some(&["job_id", "metric"]),
        |batch, path| {
            let ids = text_column(batch, "job_id", path)?;
            let names = text_column(batch, "metric", path)?;
            let (ids, names) = (ids.as_string::<i32>(), names.as_string::<i32>());
            for i in 0..batch.num_rows() {
                if ids.is_valid(i)
                    && names.is_valid(i)
                    && wanted(ids.value(i))
                    && !metrics.contains(names.value(i))
                {
                    metrics.insert(names.value(i).to_string());
                }
            }
            Ok(())
        },
    )?;
    Ok(metrics)
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

/// Whether `metric` is one of `patterns`: a name, or a prefix ending in `*` (`cpu_core*`).
pub fn metric_matches(metric: &str, patterns: &[String]) -> bool {
    patterns.iter().any(|p| match p.strip_suffix('*') {
        Some(prefix) => metric.starts_with(prefix),
        None => metric == p,
    })
}

/// Reads the windows of `days` (of the jobs in `only`, if given). The columns are `features` when
/// given (a model's, in its order; a statistic the data lacks stays NaN), else the `set` of every
/// metric statistic the data holds, sorted. Job-relative columns are computed from the job's
/// windows read here: a job's windows are read together, whole day or per-job part;
/// application-relative ones from `app` (NaN without).
pub fn read_windows(
    data: &Path,
    days: &[NaiveDate],
    only: Option<&HashSet<String>>,
    features: Option<&[String]>,
    set: FeatureSet,
    part: Option<&str>,
    app: Option<&AppBaselines>,
) -> Result<Windows, ModelError> {
    let mut out = None;
    read_windows_by_jobs(
        data,
        days,
        only,
        features,
        set,
        part,
        app,
        usize::MAX,
        |w| {
            out = Some(w);
            Ok(())
        },
    )?;
    Ok(out.unwrap_or_default())
}

/// [`read_windows`], handed to `each` a few whole jobs at a time: the windows of the jobs read so
/// far once they reach `max_rows` rows, then the rest, so that a day of any size is judged in
/// flat memory. Each call gets every window of its jobs (job-relative columns need them all):
/// every writer writes a job's windows together, so a job ends where the next one starts in
/// the same file (or the next). A job whose windows lie in two files apart (its per-job part and
/// the day's part, say) may come twice, each time with what one of them holds. With `max_rows` =
/// `usize::MAX`, exactly one call, rows or not.
#[allow(clippy::too_many_arguments)]
pub fn read_windows_by_jobs(
    data: &Path,
    days: &[NaiveDate],
    only: Option<&HashSet<String>>,
    features: Option<&[String]>,
    set: FeatureSet,
    part: Option<&str>,
    app: Option<&AppBaselines>,
    max_rows: usize,
    mut each: impl FnMut(Windows) -> Result<(), ModelError>,
) -> Result<(), ModelError> {
    let wanted = |id: &str| only.is_none_or(|set| set.contains(id));
    // The columns: given, or every metric found.
    let requested: Vec<String> = match features {
        Some(f) => f.to_vec(),
        None => set.names(&window_metrics(data, days, only, part)?),
    };
    // The stored columns behind them, each once.
    let mut features: Vec<String> = Vec::new();
    for f in &requested {
        for m in stored_columns(measured(f)) {
            if !features.contains(&m) {
                features.push(m);
            }
        }
    }
    // Where each (metric, statistic) goes.
    let mut column_of: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
    for (c, f) in features.iter().enumerate() {
        let (metric, stat) = f.rsplit_once(':').unwrap_or((f.as_str(), ""));
        if let Some(s) = WINDOW_STATS.iter().position(|x| *x == stat) {
            column_of
                .entry(metric.to_string())
                .or_default()
                .push((s, c));
        }
    }
    let width = features.len();
    let mut interned: HashMap<String, Arc<str>> = HashMap::new();
    let mut intern = |s: &str| -> Arc<str> {
        if let Some(a) = interned.get(s) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(s);
        interned.insert(s.to_string(), a.clone());
        a
    };
    let mut held = Windows {
        features: features.clone(),
        ..Windows::default()
    };
    let mut row_of: HashMap<(Arc<str>, Arc<str>, i64), usize> = HashMap::new();
    let mut delivered = false;
    // Hands over what is held (whole jobs), in key order, so that results never depend on the
    // order of files and row groups.
    let mut flush = |held: &mut Windows,
                     row_of: &mut HashMap<(Arc<str>, Arc<str>, i64), usize>,
                     last: bool|
     -> Result<(), ModelError> {
        if held.keys.is_empty() && (delivered || !last) {
            return Ok(());
        }
        delivered = true;
        row_of.clear();
        let taken = std::mem::replace(
            held,
            Windows {
                features: features.clone(),
                ..Windows::default()
            },
        );
        let mut order: Vec<usize> = (0..taken.keys.len()).collect();
        order.sort_by(|&a, &b| taken.keys[a].cmp(&taken.keys[b]));
        let measured_windows = with_memory_share(taken.subset(&order), &requested);
        each(with_job_relative(measured_windows, &requested, app))
    };
    let mut current: Option<Arc<str>> = None;
    batches(data, Table::Windows, days, part, None, |batch, path| {
        let ids = text_column(batch, "job_id", path)?;
        let nodes = text_column(batch, "node", path)?;
        let names = text_column(batch, "metric", path)?;
        let starts = micros_column(batch, "window_start", path)?;
        let ends = micros_column(batch, "window_end", path).map_err(|_| {
            ModelError::read(
                path,
                "no column window_end: these windows were computed by an older jobsight; run `jobsight features --windows 60:15` again",
            )
        })?;
        let stats: Vec<ArrayRef> = WINDOW_STATS
            .iter()
            .map(|s| float_column(batch, s, path))
            .collect::<Result<_, _>>()?;
        let (ids, nodes, names) = (
            ids.as_string::<i32>(),
            nodes.as_string::<i32>(),
            names.as_string::<i32>(),
        );
        let (starts, ends) = (
            starts.as_primitive::<Int64Type>(),
            ends.as_primitive::<Int64Type>(),
        );
        let stats: Vec<_> = stats
            .iter()
            .map(|a| a.as_primitive::<Float64Type>())
            .collect();
        for i in 0..batch.num_rows() {
            if !(ids.is_valid(i) && nodes.is_valid(i) && names.is_valid(i)) {
                continue;
            }
            if !wanted(ids.value(i)) || !starts.is_valid(i) || !ends.is_valid(i) {
                continue;
            }
            // A new job: the ones before it are whole (in this file), and may go.
            if current.as_deref() != Some(ids.value(i)) {
                if held.keys.len() >= max_rows {
                    flush(&mut held, &mut row_of, false)?;
                }
                current = Some(intern(ids.value(i)));
            }
            let (job, node) = (intern(ids.value(i)), intern(nodes.value(i)));
            let metric = names.value(i);
            let metrics = held
                .metrics_of
                .entry((job.clone(), node.clone()))
                .or_default();
            if !metrics.contains(metric) {
                metrics.insert(metric.to_string());
            }
            let (start, end) = (starts.value(i), ends.value(i));
            held.widths_s.insert((end - start) / 1_000_000);
            let Some(columns) = column_of.get(metric) else {
                continue;
            };
            let row = *row_of
                .entry((job.clone(), node.clone(), start))
                .or_insert_with(|| {
                    held.keys.push(WindowKey {
                        job_id: job,
                        node,
                        start_us: start,
                        end_us: end,
                    });
                    held.values.extend(std::iter::repeat_n(f64::NAN, width));
                    held.keys.len() - 1
                });
            for &(s, c) in columns {
                if stats[s].is_valid(i) {
                    held.values[row * width + c] = stats[s].value(i);
                }
            }
        }
        Ok(())
    })?;
    // The last job ends with the last file.
    flush(&mut held, &mut row_of, true)
}

/// One labelled anomaly interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    pub anomaly: String,
    pub start_us: i64,
    pub end_us: i64,
    /// The node it affected, when the label says (the simulator's `node=...`); else every node.
    pub node: Option<String>,
}

/// What the labels say about one job.
#[derive(Debug, Clone, PartialEq)]
pub enum Truth {
    /// Healthy (no interval) or with anomaly intervals.
    Labelled(Vec<Interval>),
    /// A label that is neither healthy nor an anomaly type (e.g. `hung`): not used for training.
    Other(String),
}

/// Whether a label names an anomaly type the models learn (the HPAS generators' names).
pub fn is_anomaly(label: &str) -> bool {
    Anomaly::ALL.iter().any(|a| a.name() == label)
}

/// Adds one label row to `truths`.
fn add_label(
    truths: &mut BTreeMap<String, Truth>,
    job_id: &str,
    anomaly: &str,
    start_us: Option<i64>,
    end_us: Option<i64>,
    node: Option<String>,
) {
    let truth = truths
        .entry(job_id.to_string())
        .or_insert_with(|| Truth::Labelled(Vec::new()));
    if anomaly == "none" || anomaly == HEALTHY {
        return;
    }
    if !is_anomaly(anomaly) {
        *truth = Truth::Other(anomaly.to_string());
        return;
    }
    if let (Truth::Labelled(intervals), Some(start_us), Some(end_us)) = (truth, start_us, end_us) {
        intervals.push(Interval {
            anomaly: anomaly.to_string(),
            start_us,
            end_us,
            node,
        });
    }
}

/// The node named by a label's params (`node=NAME`), if any.
fn node_of_params(params: Option<&str>) -> Option<String> {
    params?
        .split([',', ' ', ';'])
        .find_map(|p| p.strip_prefix("node="))
        .map(str::to_string)
}

/// The `labels` table of every day, by job id.
pub fn read_labels_table(data: &Path) -> Result<BTreeMap<String, Truth>, ModelError> {
    let days = jobsight_warehouse::catalog::days(data, Table::Labels);
    let mut truths = BTreeMap::new();
    batches(data, Table::Labels, &days, None, None, |batch, path| {
        let ids = text_column(batch, "job_id", path)?;
        let anomalies = text_column(batch, "anomaly", path)?;
        let starts = micros_column(batch, "start", path)?;
        let ends = micros_column(batch, "end", path)?;
        let params = text_column(batch, "params", path)?;
        let (ids, anomalies, params) = (
            ids.as_string::<i32>(),
            anomalies.as_string::<i32>(),
            params.as_string::<i32>(),
        );
        let (starts, ends) = (
            starts.as_primitive::<Int64Type>(),
            ends.as_primitive::<Int64Type>(),
        );
        for i in 0..batch.num_rows() {
            if !ids.is_valid(i) || !anomalies.is_valid(i) {
                continue;
            }
            add_label(
                &mut truths,
                ids.value(i),
                anomalies.value(i),
                starts.is_valid(i).then(|| starts.value(i)),
                ends.is_valid(i).then(|| ends.value(i)),
                node_of_params(params.is_valid(i).then(|| params.value(i))),
            );
        }
        Ok(())
    })?;
    Ok(truths)
}

/// A labels CSV file with the header `job_id,anomaly,start,end[,node]`, times in RFC 3339.
/// A malformed line is an error naming the file and line: training on half-read labels would
/// silently teach the model the wrong thing.
pub fn read_labels_csv(path: &Path) -> Result<BTreeMap<String, Truth>, ModelError> {
    let text = std::fs::read_to_string(path).map_err(|e| ModelError::read(path, e))?;
    let mut lines = text.lines().enumerate();
    let header: Vec<&str> = match lines.next() {
        Some((_, h)) => h.split(',').map(str::trim).collect(),
        None => return Err(ModelError::read(path, "empty file")),
    };
    let expected = ["job_id", "anomaly", "start", "end"];
    if header.len() < 4 || header[..4] != expected {
        return Err(ModelError::read(
            path,
            format!(
                "line 1: the header must start with job_id,anomaly,start,end (then optionally node), not {}",
                header.join(",")
            ),
        ));
    }
    let time = |field: &str, line: usize| -> Result<Option<i64>, ModelError> {
        if field.is_empty() {
            return Ok(None);
        }
        chrono::DateTime::parse_from_rfc3339(field)
            .map(|t| Some(t.timestamp_micros()))
            .map_err(|e| ModelError::read(path, format!("line {line}: time {field:?}: {e}")))
    };
    let mut truths = BTreeMap::new();
    for (index, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() < 4 || fields.len() > 5 || fields[0].is_empty() || fields[1].is_empty() {
            return Err(ModelError::read(
                path,
                format!(
                    "line {}: expected job_id,anomaly,start,end[,node], got {} field(s)",
                    index + 1,
                    fields.len()
                ),
            ));
        }
        add_label(
            &mut truths,
            fields[0],
            fields[1],
            time(fields[2], index + 1)?,
            time(fields[3], index + 1)?,
            fields
                .get(4)
                .filter(|n| !n.is_empty())
                .map(|n| n.to_string()),
        );
    }
    Ok(truths)
}

/// The label of one window by the protocol (see the module doc): `None` when it is left out.
pub fn label_window<'a>(truth: &'a Truth, key: &WindowKey) -> Option<&'a str> {
    let Truth::Labelled(intervals) = truth else {
        return None;
    };
    let mut overlapping = intervals.iter().filter(|iv| {
        iv.node.as_deref().is_none_or(|n| n == &*key.node)
            && iv.start_us < key.end_us
            && iv.end_us > key.start_us
    });
    match (overlapping.next(), overlapping.next()) {
        (None, _) => Some(HEALTHY),
        (Some(iv), None) if iv.start_us <= key.start_us && key.end_us <= iv.end_us => {
            Some(iv.anomaly.as_str())
        }
        _ => None,
    }
}

/// The application of each job (its Slurm job name), for the hold-out-one-application split.
pub use jobsight_base::slurm_text::application_of;

/// The application of every job in the warehouse's `jobs` table (of `days`, or all; of one
/// per-job `part`, or all), by job id (cleaned of control characters: job names are the users'
/// and end up in reports).
pub fn applications(
    data: &Path,
    days: Option<&[NaiveDate]>,
    part: Option<&str>,
) -> Result<HashMap<String, String>, ModelError> {
    Ok(job_names(data, days, part)?
        .into_iter()
        .map(|(job, name)| {
            let app = jobsight_base::templates::clean(application_of(&name), 64);
            (job, app)
        })
        .collect())
}

/// The name of every job in the warehouse's `jobs` table (of `days`, or all; of one per-job
/// `part`, or all), by job id.
pub fn job_names(
    data: &Path,
    days: Option<&[NaiveDate]>,
    part: Option<&str>,
) -> Result<HashMap<String, String>, ModelError> {
    let days = match days {
        Some(d) => d.to_vec(),
        None => jobsight_warehouse::catalog::days(data, Table::Jobs),
    };
    let mut names = HashMap::new();
    batches(
        data,
        Table::Jobs,
        &days,
        part,
        Some(&["job_id", "name"]),
        |batch, path| {
            let ids = text_column(batch, "job_id", path)?;
            let n = text_column(batch, "name", path)?;
            let (ids, n) = (ids.as_string::<i32>(), n.as_string::<i32>());
            for i in 0..batch.num_rows() {
                if ids.is_valid(i) && n.is_valid(i) {
                    names.insert(ids.value(i).to_string(), n.value(i).to_string());
                }
            }
            Ok(())
        },
    )?;
    Ok(names)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The memory share divides the used bytes' linear statistics by the window's capacity
    /// (used + available means), keeps the scale-free ones, is missing where a series is, and
    /// a node with both series reports it.
    #[test]
    fn memory_share_is_used_over_capacity() {
        let key = |start| WindowKey {
            job_id: Arc::from("1"),
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

    #[test]
    fn an_application_is_its_job_name_without_a_run_number() {
        for (name, app) in [
            ("lammps-42", "lammps"),
            ("lammps_7", "lammps"),
            ("lammps.3", "lammps"),
            ("train.py-12", "train.py"),
            ("train.py", "train.py"),
            ("ExaMiniMD", "ExaMiniMD"),
            ("run2b", "run2b"),
            ("1234", "1234"),
            ("  ", "(no name)"),
            ("café-1", "café"),
        ] {
            assert_eq!(application_of(name), app, "{name}");
        }
    }

    fn key(node: &str, start_s: i64, end_s: i64) -> WindowKey {
        WindowKey {
            job_id: Arc::from("1"),
            node: Arc::from(node),
            start_us: start_s * 1_000_000,
            end_us: end_s * 1_000_000,
        }
    }

    fn interval(anomaly: &str, start_s: i64, end_s: i64, node: Option<&str>) -> Interval {
        Interval {
            anomaly: anomaly.into(),
            start_us: start_s * 1_000_000,
            end_us: end_s * 1_000_000,
            node: node.map(str::to_string),
        }
    }

    #[test]
    fn windows_are_labelled_by_the_protocol() {
        let truth = Truth::Labelled(vec![
            interval("memleak", 100, 400, None),
            interval("cpuoccupy", 300, 600, None),
            interval("cachecopy", 1000, 1200, Some("b")),
        ]);
        // Inside exactly one interval.
        assert_eq!(label_window(&truth, &key("a", 100, 160)), Some("memleak"));
        // Straddles the start of an interval: left out.
        assert_eq!(label_window(&truth, &key("a", 60, 120)), None);
        // Inside the overlap of two intervals: left out.
        assert_eq!(label_window(&truth, &key("a", 310, 370)), None);
        // Overlaps none.
        assert_eq!(label_window(&truth, &key("a", 0, 60)), Some(HEALTHY));
        // The node-specific interval only labels its node.
        assert_eq!(
            label_window(&truth, &key("b", 1050, 1110)),
            Some("cachecopy")
        );
        assert_eq!(label_window(&truth, &key("a", 1050, 1110)), Some(HEALTHY));
        // A job with another behaviour is never labelled.
        assert_eq!(
            label_window(&Truth::Other("hung".into()), &key("a", 0, 60)),
            None
        );
    }

    #[test]
    fn labels_csv_errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.csv");
        std::fs::write(
            &path,
            "job_id,anomaly,start,end,node\n1,memleak,2025-01-01T00:00:00Z,2025-01-01T00:10:00Z,n1\n2,none,,\n3,memleak,yesterday,2025-01-01T00:10:00Z\n",
        )
        .unwrap();
        let err = read_labels_csv(&path).unwrap_err().to_string();
        assert!(err.contains("line 4") && err.contains("yesterday"), "{err}");
        std::fs::write(
            &path,
            "job_id,anomaly,start,end,node\n1,memleak,2025-01-01T00:00:00Z,2025-01-01T00:10:00Z,n1\n2,none,,\n4,hung,,\n",
        )
        .unwrap();
        let truths = read_labels_csv(&path).unwrap();
        assert_eq!(truths["2"], Truth::Labelled(vec![]));
        assert_eq!(truths["4"], Truth::Other("hung".into()));
        let Truth::Labelled(iv) = &truths["1"] else {
            panic!()
        };
        assert_eq!(iv[0].node.as_deref(), Some("n1"));
    }

    #[test]
    fn metrics_are_matched_by_name_or_prefix() {
        let patterns = ["cpu_user".to_string(), "mem_*".to_string()];
        assert!(metric_matches("cpu_user", &patterns));
        assert!(metric_matches("mem_used_bytes", &patterns));
        assert!(
            !metric_matches("cpu_user_share", &patterns),
            "a name is not a prefix"
        );
        assert!(!metric_matches("meminfo.MemFree", &patterns));
    }
}
