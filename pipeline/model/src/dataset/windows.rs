//! Reading the `windows` table: which days and metrics it holds, and its rows pivoted into
//! [`Windows`] (one row per job × node × window, a column per feature), a whole job at a time
//! so that a day of any size is judged in flat memory. The columns computed rather than stored
//! are added by [`derived`](super::derived) as each batch of whole jobs is handed over.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{Float64Type, Int64Type};

use super::derived::{AppBaselines, stored_columns, with_job_relative, with_memory_share};
use super::parts::{batches, float_column, micros_column, run_column, text_column};
use super::{FeatureSet, WindowKey, Windows, measured};
use crate::ModelError;
use jobsight_warehouse::catalog::{Table, WINDOW_STATS};

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
