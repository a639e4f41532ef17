//! The features step as DataFusion plans, for when the day's telemetry should be read by an
//! engine rather than by this process's single pass: on a Ballista cluster (`[engine] ballista`,
//! a backfill over history) or, to check it, here. Two statements run on the engine
//! ([`reference::plan_series_sql`]: every series described by `js_describe`, the series core the
//! single pass uses, with what the job-level figures need: its idle and busy sample counts and
//! its means per bin, `js_bin_means`; [`reference::plan_left_out_sql`]: the samples left out);
//! what comes back is one row per series, and the job-level figures are finished here by the
//! single pass's own code (tacc_stats' imbalance from the bins, [`job::imbalance`], then
//! [`job::finish`]). The three tables are written as the single pass writes them (part
//! `features`, replacing it), and equal its rows to the last bit (tested). The statements run
//! once per range of job ids ([`id_ranges`]): the engine holds each group's samples until the
//! group ends, and on a cluster each sample crosses a shuffle, so a day read at once would hold
//! and shuffle the whole day.
//!
//! `windows` are not computed by the plans: a day that asks for them ([`Settings::windows`]) is
//! refused with a message saying so.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type};

use super::job::{self, JobFeatures, SeriesRow};
use super::reference::IdRange;
use super::scan;
use super::{Computed, FeaturesError, Settings, reference};
use jobsight_base::series::{BinMean, SeriesStats};
use jobsight_warehouse::catalog::scan::JobIdIndex;
use jobsight_warehouse::catalog::{self, Table};
use jobsight_warehouse::query::{self, Engine, QueryError};

/// Computes one day's features with the plans on `engine` and writes them (part `features`),
/// then removes the day's per-job parts, as [`super::compute_day`] does. The day is read a range
/// of job ids at a time ([`id_ranges`]), so that what the engine holds and shuffles is bounded by
/// `settings.plan_rows_at_a_time` samples, not by the day; `progress(done, total)` counts the
/// ranges.
pub fn compute_day_on(
    engine: &Engine,
    data: &Path,
    day: NaiveDate,
    settings: &Settings,
    progress: impl Fn(usize, usize),
) -> Result<Computed, FeaturesError> {
    if let Some(spec) = settings.windows {
        return Err(FeaturesError::Build {
            day,
            table: Table::Windows.name(),
            reason: format!(
                "the features plan does not compute windows ({spec} asked for); compute this \
                 day with the single pass"
            ),
        });
    }
    let jobs = scan::read_jobs(data, day, settings.trim_s)?;
    let files = scan::parts(data, Table::Telemetry, day)?;
    let ranges = id_ranges(&JobIdIndex::of(&files)?, settings.plan_rows_at_a_time);
    let runtime = query::engine_runtime()
        .map_err(|e| QueryError::Engine(format!("cannot start the query runtime: {e}")))?;
    let ctx = runtime.block_on(async {
        let ctx = engine.session(data).await?;
        // The options the features plan runs fastest with (each sample grouped once, in its
        // job's partition): the series statement took 2.2 → 1.5 s with them on a 64-node day
        // (measured before `js_bin_means` joined it).
        for (key, value) in reference::DESCRIBE_OPTIONS {
            query::collect(&ctx, &format!("SET {key} = {value}")).await?;
        }
        Ok::<_, QueryError>(ctx)
    })?;
    let build = |reason: String| FeaturesError::Build {
        day,
        table: Table::Features.name(),
        reason,
    };
    let mut finished: Vec<Option<JobFeatures>> = jobs.iter().map(|_| None).collect();
    let (mut unattributed, mut trimmed_away) = (0, 0);
    let trim_s = settings.trim_s;
    for (done, ids) in ranges.iter().enumerate() {
        let series_sql =
            reference::plan_series_sql(day, trim_s, ids, settings.bin_s, &settings.idle_below);
        let (series, left_out) = runtime.block_on(async {
            let series = query::collect(&ctx, &series_sql).await?;
            let left_out_sql = reference::plan_left_out_sql(day, trim_s, ids);
            let left_out = query::collect(&ctx, &left_out_sql).await?;
            Ok::<_, QueryError>((series, left_out))
        })?;
        let mut by_job = read_series(&series, settings).map_err(build)?;
        drop(series);
        let (range_unattributed, range_trimmed_away) = read_left_out(&left_out).map_err(build)?;
        unattributed += range_unattributed;
        trimmed_away += range_trimmed_away;
        for (meta, slot) in jobs.iter().zip(&mut finished) {
            if !ids.holds(&meta.job_id) {
                continue;
            }
            let found = by_job
                .remove(&(meta.job_id.clone(), meta.restart_count))
                .unwrap_or_default();
            let imbalances: BTreeMap<Arc<str>, Option<f64>> = found
                .bins
                .iter()
                .map(|(metric, nodes)| (metric.clone(), job::imbalance(nodes)))
                .collect();
            *slot = Some(job::finish(
                meta,
                found.series,
                &imbalances,
                &found.cores,
                settings,
            ));
        }
        progress(done + 1, ranges.len());
    }
    // The ranges cut the ids apart and cover them all: every job was finished once.
    let computed: Vec<JobFeatures> = finished.into_iter().flatten().collect();
    let counts = scan::ScanCounts {
        row_groups: 0,
        unattributed,
        trimmed_away,
    };
    super::write_day(data, day, &computed, counts, 0)
}

/// The day's job ids cut into ranges in text order that each hold about `rows_at_a_time` of the
/// telemetry rows of `index` (the day's files): a range ends where a row group starts once the
/// rows of the row groups starting in it reach the budget. A day's telemetry is written job by
/// job, so a range's samples lie in few row groups, which its scan alone reads. The first range
/// is open at the start and the last at the end, so that every id, and every sample, falls in
/// exactly one. One range (every id) when the day holds fewer rows.
pub fn id_ranges(index: &JobIdIndex, rows_at_a_time: u64) -> Vec<IdRange> {
    let mut starts = index.least_ids_and_rows();
    starts.sort();
    let mut cuts: Vec<String> = Vec::new();
    let mut rows_in_range = 0u64;
    for (least, rows) in starts {
        // A cut must lie after the last one: row groups may start with the same id.
        let after_last = cuts.last().is_none_or(|cut| least > cut.as_bytes());
        if rows_in_range >= rows_at_a_time && after_last {
            // Ids that are not text cannot be compared as text in SQL: no cut there.
            if let Ok(id) = std::str::from_utf8(least) {
                cuts.push(id.to_string());
                rows_in_range = 0;
            }
        }
        rows_in_range += rows;
    }
    let mut from = None;
    let mut ranges: Vec<IdRange> = cuts
        .into_iter()
        .map(|cut| {
            let range = IdRange {
                from: from.take(),
                to: Some(cut.clone()),
            };
            from = Some(cut);
            range
        })
        .collect();
    ranges.push(IdRange { from, to: None });
    ranges
}

/// What the series statement says of one job.
#[derive(Debug, Default)]
struct JobSeries {
    /// By node, then metric, as the statement orders them.
    series: Vec<SeriesRow>,
    /// Per-core series: (finite samples, those above 0.5).
    cores: Vec<(u64, u64)>,
    /// Per metric, each node's means and sample counts per bin start.
    bins: BTreeMap<Arc<str>, Vec<BTreeMap<i64, BinMean>>>,
}

/// A column of `batch` by name, cast to `to`.
fn column(batch: &RecordBatch, name: &str, to: &DataType) -> Result<ArrayRef, String> {
    let array = batch
        .column_by_name(name)
        .ok_or_else(|| format!("the features plan gave no column {name}"))?;
    cast(array, to).map_err(|e| format!("column {name} of the features plan: {e}"))
}

/// A job id and its run, as `scan::JobMeta` has them.
type RunKey = (String, Option<u32>);

/// Reads the series statement's rows into each run's series.
fn read_series(
    batches: &[RecordBatch],
    settings: &Settings,
) -> Result<BTreeMap<RunKey, JobSeries>, String> {
    let mut by_job: BTreeMap<RunKey, JobSeries> = BTreeMap::new();
    // One name per node and metric, shared by the rows, as the single pass shares them.
    let mut names: BTreeMap<String, Arc<str>> = BTreeMap::new();
    for batch in batches {
        let text = |name| column(batch, name, &DataType::Utf8);
        let (ids, nodes, metrics) = (text("job_id")?, text("node")?, text("metric")?);
        let (ids, nodes, metrics) = (
            ids.as_string::<i32>(),
            nodes.as_string::<i32>(),
            metrics.as_string::<i32>(),
        );
        let mut floats = BTreeMap::new();
        for name in catalog::FEATURE_STATS {
            if !matches!(name, "coverage" | "idle_share") {
                floats.insert(name, column(batch, name, &DataType::Float64)?);
            }
        }
        let runs = column(batch, "restart_count", &DataType::Int64)?;
        let runs = runs.as_primitive::<Int64Type>();
        let mut ints = BTreeMap::new();
        for name in ["n", "n_nonfinite", "idle_n", "busy_n"] {
            ints.insert(name, column(batch, name, &DataType::Int64)?);
        }
        // Times as their microseconds since the epoch.
        let mut times = BTreeMap::new();
        for name in ["rise_from", "rise_to", "cliff_at"] {
            times.insert(name, column(batch, name, &DataType::Int64)?);
        }
        let bins = batch
            .column_by_name("bins")
            .and_then(|c| c.as_struct_opt())
            .ok_or("the features plan gave no column bins")?;
        if bins.num_columns() < 3 {
            return Err("the features plan's bins have no counts (js_bin_means' n)".into());
        }
        let (starts, means, counts) = (
            bins.column(0).as_list::<i32>(),
            bins.column(1).as_list::<i32>(),
            bins.column(2).as_list::<i32>(),
        );
        let (start_values, mean_values, count_values) = (
            starts.values().as_primitive::<Int64Type>(),
            means.values().as_primitive::<Float64Type>(),
            counts.values().as_primitive::<Int64Type>(),
        );
        for i in 0..batch.num_rows() {
            let float = |name: &str| {
                let a = floats[name].as_primitive::<Float64Type>();
                a.is_valid(i).then(|| a.value(i))
            };
            let int = |map: &BTreeMap<&str, ArrayRef>, name: &str| {
                let a = map[name].as_primitive::<Int64Type>();
                a.is_valid(i).then(|| a.value(i))
            };
            let count = |name: &str| int(&ints, name).map_or(0, |v| v.max(0) as u64);
            let mut name_of = |text: &str| -> Arc<str> {
                if let Some(name) = names.get(text) {
                    return name.clone();
                }
                let name: Arc<str> = Arc::from(text);
                names.insert(text.to_string(), name.clone());
                name
            };
            let (node, metric) = (name_of(nodes.value(i)), name_of(metrics.value(i)));
            let n = count("n");
            let stats = SeriesStats {
                n,
                n_nonfinite: count("n_nonfinite"),
                min: float("min"),
                max: float("max"),
                mean: float("mean"),
                std: float("std"),
                cv: float("cv"),
                skewness: float("skewness"),
                kurtosis: float("kurtosis"),
                percentiles: ["p05", "p25", "p50", "p75", "p95"].map(float),
                interval_s: float("interval_s"),
                slope_per_h: float("slope_per_h"),
                catastrophe: float("catastrophe"),
                max_rise: float("max_rise"),
                rise_from: int(&times, "rise_from"),
                rise_to: int(&times, "rise_to"),
                cliff_at: int(&times, "cliff_at"),
                // As the series core: the share of finite samples, for metrics with a threshold.
                idle_share: settings
                    .idle_below
                    .contains_key(&*metric)
                    .then_some(n)
                    .filter(|&n| n > 0)
                    .map(|n| count("idle_n") as f64 / n as f64),
            };
            let run = runs
                .is_valid(i)
                .then(|| u32::try_from(runs.value(i)).ok())
                .flatten();
            let found = by_job.entry((ids.value(i).to_string(), run)).or_default();
            if job::is_core_metric(&metric) {
                found.cores.push((n, count("busy_n")));
            }
            let bin_means: BTreeMap<i64, BinMean> = if bins.is_valid(i) && starts.is_valid(i) {
                let span = |list: &ListArray| {
                    let offsets = list.value_offsets();
                    offsets[i] as usize..offsets[i + 1] as usize
                };
                let (at, mean_at, count_at) = (span(starts), span(means), span(counts));
                if mean_at.len() != at.len() || count_at.len() != at.len() {
                    return Err(format!(
                        "the features plan gave {} bin starts, {} means and {} counts",
                        at.len(),
                        mean_at.len(),
                        count_at.len()
                    ));
                }
                at.zip(mean_at)
                    .zip(count_at)
                    .map(|((a, m), c)| {
                        let bin = BinMean {
                            mean: mean_values.value(m),
                            n: count_values.value(c).max(0) as u64,
                        };
                        (start_values.value(a), bin)
                    })
                    .collect()
            } else {
                BTreeMap::new()
            };
            found
                .bins
                .entry(metric.clone())
                .or_default()
                .push(bin_means);
            found.series.push(SeriesRow {
                node,
                metric,
                stats,
                coverage: None,
            });
        }
    }
    Ok(by_job)
}

/// The samples left out: (of jobs not in `jobs`, trimmed away).
fn read_left_out(batches: &[RecordBatch]) -> Result<(u64, u64), String> {
    let mut counts = (0, 0);
    for batch in batches {
        let unattributed = column(batch, "unattributed", &DataType::Int64)?;
        let trimmed = column(batch, "trimmed_away", &DataType::Int64)?;
        let (unattributed, trimmed) = (
            unattributed.as_primitive::<Int64Type>(),
            trimmed.as_primitive::<Int64Type>(),
        );
        for i in 0..batch.num_rows() {
            // A day without telemetry sums nothing: NULL.
            if unattributed.is_valid(i) {
                counts.0 += unattributed.value(i).max(0) as u64;
            }
            if trimmed.is_valid(i) {
                counts.1 += trimmed.value(i).max(0) as u64;
            }
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jobsight_warehouse::catalog::rows::TelemetryBuilder;

    /// A file of one row group per entry of `groups`, each holding `rows` rows of its ids.
    fn index_of(groups: &[(&[&str], usize)]) -> (tempfile::TempDir, JobIdIndex) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("part.parquet");
        let batches: Vec<RecordBatch> = groups
            .iter()
            .map(|(ids, rows)| {
                let mut builder = TelemetryBuilder::default();
                for i in 0..*rows {
                    builder.push(ids[i % ids.len()], "n1", "cpu", i as i64, 1.0);
                }
                builder.finish().unwrap()
            })
            .collect();
        let file = std::fs::File::create(&path).unwrap();
        let mut writer =
            datafusion::parquet::arrow::ArrowWriter::try_new(file, batches[0].schema(), None)
                .unwrap();
        for batch in &batches {
            writer.write(batch).unwrap();
            writer.flush().unwrap();
        }
        writer.close().unwrap();
        let index = JobIdIndex::of(&[path]).unwrap();
        (tmp, index)
    }

    fn range(from: Option<&str>, to: Option<&str>) -> IdRange {
        IdRange {
            from: from.map(str::to_string),
            to: to.map(str::to_string),
        }
    }

    /// Ranges end where a row group starts once the budget is reached, in text order ("10"
    /// before "9"), never twice at one id, and cover every id from the first range's open start
    /// to the last's open end.
    #[test]
    fn a_day_is_cut_where_row_groups_start_once_the_budget_is_reached() {
        // Written out of text order, as a day of jobs "9", "10", ... is.
        let (_tmp, index) = index_of(&[
            (&["9"], 4),
            (&["10", "11"], 4),
            (&["11"], 4),
            (&["12", "2"], 4),
            (&["3"], 4),
            (&["11", "12"], 4),
        ]);
        assert_eq!(id_ranges(&index, 100), [IdRange::ALL]);
        assert_eq!(
            id_ranges(&index, 8),
            [
                range(None, Some("11")),
                range(Some("11"), Some("3")),
                range(Some("3"), None)
            ]
        );
        // A budget of one row cuts at every start but the repeated "11".
        let ranges = id_ranges(&index, 1);
        assert_eq!(ranges.len(), 5, "{ranges:?}");
        for id in ["", "0", "10", "11", "12", "2", "3", "9", "99", "z"] {
            let holding = ranges.iter().filter(|r| r.holds(id)).count();
            assert_eq!(holding, 1, "{id} in {ranges:?}");
        }
        assert!(range(Some("10"), Some("11")).holds("10"));
        assert!(!range(Some("10"), Some("11")).holds("11"));
    }
}
