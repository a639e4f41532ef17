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
//!
//! Reading the windows is here; reading the labels and applying the protocol is in the `labels`
//! submodule, and the columns computed as windows are read (the memory share, the job- and
//! application-relative features) in `derived`, both re-exported here.

use jobsight_base::choice::{Choice, Named};
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
use jobsight_warehouse::catalog::Table;

mod derived;
mod labels;

use derived::{stored_columns, with_job_relative, with_memory_share};

pub use derived::{AppBaselines, MEMORY_SHARE, derived_metrics, relative};
pub use labels::{
    Interval, LabelLine, Truth, is_anomaly, label_window, read_label_lines, read_labels_csv,
    read_labels_table,
};

pub use jobsight_warehouse::catalog::WINDOW_STATS;

/// The label of windows without an anomaly.
pub const HEALTHY: &str = "healthy";

/// The suffix of a job-relative feature: `cpu_user:mean@job` is `cpu_user:mean` of the window
/// against the same job's typical window on the same node in the same run (the median of its
/// first and last fifth of windows).
pub const JOB_RELATIVE: &str = "@job";

/// The suffix of an application-relative feature: `cpu_user:mean@app` is `cpu_user:mean` of the
/// window against the typical window of its application's other runs ([`super::typical`]).
pub const APP_RELATIVE: &str = "@app";

/// The application of a job without a name: never given a baseline (it stands for many).
pub use jobsight_base::slurm_text::NO_NAME;

/// Which features a model is trained on when none are given (issue 20: absolute levels depend on
/// the application and its input; a window against its own job's typical window does not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
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

impl Choice for FeatureSet {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: FeatureSet::Absolute,
            name: "absolute",
            help: "Every `<metric>:<stat>` as measured",
        },
        Named {
            value: FeatureSet::Relative,
            name: "relative",
            help: "Every `<metric>:<stat>@job`: the window against its job's typical window on its node",
        },
        Named {
            value: FeatureSet::Both,
            name: "both",
            help: "Both",
        },
        Named {
            value: FeatureSet::Application,
            name: "application",
            help: "Every `<metric>:<stat>@job` and every `<metric>:<stat>@app`: the window against its job's typical window and against its application's (the other runs')",
        },
    ];
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

    /// Whether the feature named `name` belongs to this set.
    pub fn holds(self, name: &str) -> bool {
        let job = name.ends_with(JOB_RELATIVE);
        let app = name.ends_with(APP_RELATIVE);
        match self {
            FeatureSet::Absolute => !job && !app,
            FeatureSet::Relative => job,
            FeatureSet::Both => !app,
            FeatureSet::Application => job || app,
        }
    }

    /// The set holding both `self` and `other` (what is read for two forests), if one does.
    pub fn with(self, other: FeatureSet) -> Option<FeatureSet> {
        use FeatureSet::*;
        match (self, other) {
            (a, b) if a == b => Some(a),
            (Relative, Application) | (Application, Relative) => Some(Application),
            (Application, _) | (_, Application) => None,
            _ => Some(Both),
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

/// One window of one node of one job: `[start_us, end_us)`, microseconds since the epoch.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WindowKey {
    pub job_id: Arc<str>,
    /// The run of the job (`restart_count`): a requeued job's runs are judged one by one. `None`
    /// in windows written before the run was recorded.
    pub run: Option<u32>,
    pub node: Arc<str>,
    pub start_us: i64,
    pub end_us: i64,
}

/// Windows with their feature values, row-major, NaN where a statistic is missing.
#[derive(Debug, Clone, Default)]
pub struct Windows {
    /// `<metric>:<stat>`, one per column.
    pub features: Vec<String>,
    /// Sorted by job, run, node, start.
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
                    .filter(|p| {
                        p[0].job_id == p[1].job_id && p[0].run == p[1].run && p[0].node == p[1].node
                    })
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

/// Column `name` of `batch` as type `to`, converted once per batch; `path` names the part in errors.
fn column_as(
    batch: &RecordBatch,
    name: &str,
    path: &Path,
    to: &DataType,
) -> Result<ArrayRef, ModelError> {
    let array = batch
        .column_by_name(name)
        .ok_or_else(|| ModelError::read(path, format!("no column {name}")))?;
    cast(array, to).map_err(|e| ModelError::read(path, format!("column {name}: {e}")))
}

/// A column as plain strings.
pub(crate) fn text_column(
    batch: &RecordBatch,
    name: &str,
    path: &Path,
) -> Result<ArrayRef, ModelError> {
    column_as(batch, name, path, &DataType::Utf8)
}

/// A time column as microseconds since the epoch.
pub(crate) fn micros_column(
    batch: &RecordBatch,
    name: &str,
    path: &Path,
) -> Result<ArrayRef, ModelError> {
    let time = DataType::Timestamp(TimeUnit::Microsecond, None);
    cast(&column_as(batch, name, path, &time)?, &DataType::Int64)
        .map_err(|e| ModelError::read(path, format!("column {name}: {e}")))
}

/// The run column (`restart_count`) of a windows batch as whole numbers; `None` in parts written
/// before it was recorded.
fn run_column(
    batch: &RecordBatch,
    path: &Path,
) -> Result<Option<datafusion::arrow::array::UInt32Array>, ModelError> {
    let Some(array) = batch.column_by_name("restart_count") else {
        return Ok(None);
    };
    let cast = cast(array, &DataType::UInt32)
        .map_err(|e| ModelError::read(path, format!("column restart_count: {e}")))?;
    Ok(Some(
        cast.as_primitive::<datafusion::arrow::datatypes::UInt32Type>()
            .clone(),
    ))
}

fn float_column(batch: &RecordBatch, name: &str, path: &Path) -> Result<ArrayRef, ModelError> {
    column_as(batch, name, path, &DataType::Float64)
}

/// Opens every Parquet part of `table` on `days`, reading only `columns`.
pub(crate) fn batches(
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
    let stored = StoredLayout::behind(&requested);
    let width = stored.features.len();
    let mut interner = Interner::default();
    let mut pending = Pending::new(&stored.features);
    // Hands over what is held, with the columns computed from the stored ones.
    let mut hand_over = |pending: &mut Pending, last: bool| -> Result<(), ModelError> {
        match pending.take(last) {
            Some(taken) => {
                let measured_windows = with_memory_share(taken, &requested);
                each(with_job_relative(measured_windows, &requested, app))
            }
            None => Ok(()),
        }
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
        // Windows written before runs were recorded have no run.
        let runs = run_column(batch, path)?;
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
                if pending.windows.keys.len() >= max_rows {
                    hand_over(&mut pending, false)?;
                }
                current = Some(interner.intern(ids.value(i)));
            }
            let job = interner.intern(ids.value(i));
            let run = runs
                .as_ref()
                .and_then(|r| r.is_valid(i).then(|| r.value(i)));
            let node = interner.intern(nodes.value(i));
            let metric = names.value(i);
            let (start, end) = (starts.value(i), ends.value(i));
            pending.note(&job, &node, metric, start, end);
            let Some(columns) = stored.column_of.get(metric) else {
                continue;
            };
            let row = pending.row(WindowKey {
                job_id: job,
                run,
                node,
                start_us: start,
                end_us: end,
            });
            for &(s, c) in columns {
                if stats[s].is_valid(i) {
                    pending.windows.values[row * width + c] = stats[s].value(i);
                }
            }
        }
        Ok(())
    })?;
    // The last job ends with the last file.
    hand_over(&mut pending, true)
}

/// The stored columns a read needs for the features asked of it, each once, and where each
/// stored (metric, statistic) goes: the statistic's index in [`WINDOW_STATS`] and the column's.
struct StoredLayout {
    features: Vec<String>,
    column_of: HashMap<String, Vec<(usize, usize)>>,
}

impl StoredLayout {
    fn behind(requested: &[String]) -> StoredLayout {
        let mut features: Vec<String> = Vec::new();
        for f in requested {
            for m in stored_columns(measured(f)) {
                if !features.contains(&m) {
                    features.push(m);
                }
            }
        }
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
        StoredLayout {
            features,
            column_of,
        }
    }
}

/// One shared copy of each job id and node name read: every row of the table repeats them.
#[derive(Default)]
struct Interner(HashMap<String, Arc<str>>);

impl Interner {
    fn intern(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.0.get(s) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(s);
        self.0.insert(s.to_string(), a.clone());
        a
    }
}

/// The windows read of the jobs not handed over yet, and the row of each.
struct Pending {
    windows: Windows,
    row_of: HashMap<WindowKey, usize>,
    /// Whether anything was handed over yet: a read that finds nothing still hands over once.
    delivered: bool,
}

impl Pending {
    fn new(features: &[String]) -> Pending {
        Pending {
            windows: Windows {
                features: features.to_vec(),
                ..Windows::default()
            },
            row_of: HashMap::new(),
            delivered: false,
        }
    }

    /// What is held (whole jobs) in key order, so that results never depend on the order of
    /// files and row groups; `None` when there is nothing to hand over (nothing held, and either
    /// something was handed over already or more is to come).
    fn take(&mut self, last: bool) -> Option<Windows> {
        if self.windows.keys.is_empty() && (self.delivered || !last) {
            return None;
        }
        self.delivered = true;
        self.row_of.clear();
        let empty = Windows {
            features: self.windows.features.clone(),
            ..Windows::default()
        };
        let taken = std::mem::replace(&mut self.windows, empty);
        let mut order: Vec<usize> = (0..taken.keys.len()).collect();
        order.sort_by(|&a, &b| taken.keys[a].cmp(&taken.keys[b]));
        Some(taken.subset(&order))
    }

    /// Notes that `job`'s `node` reported `metric`, in a window from `start` to `end` (µs).
    fn note(&mut self, job: &Arc<str>, node: &Arc<str>, metric: &str, start: i64, end: i64) {
        let metrics = self
            .windows
            .metrics_of
            .entry((job.clone(), node.clone()))
            .or_default();
        if !metrics.contains(metric) {
            metrics.insert(metric.to_string());
        }
        self.windows.widths_s.insert((end - start) / 1_000_000);
    }

    /// The row of the window `key`, added (all NaN) if new.
    fn row(&mut self, key: WindowKey) -> usize {
        let (windows, row_of) = (&mut self.windows, &mut self.row_of);
        let width = windows.features.len();
        *row_of.entry(key.clone()).or_insert_with(|| {
            windows.keys.push(key);
            windows.values.extend(std::iter::repeat_n(f64::NAN, width));
            windows.keys.len() - 1
        })
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
            let app = jobsight_base::text::clean(application_of(&name), 64);
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
