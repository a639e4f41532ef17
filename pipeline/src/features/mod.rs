//! Features: what every rule, class and model reads. From a day's `jobs` and `telemetry` it writes
//! - `features`: one row per job × node × metric, after trimming start-up and tear-down: count,
//!   min, max, mean, std, cv, skewness, kurtosis, the 5/25/50/75/95th percentiles, the sampling
//!   interval and coverage, the growth slope and largest rise, tacc_stats' catastrophe figure and
//!   the idle share
//!   ([`series`] defines each);
//! - `features_job`: one row per job × metric across the job's nodes: mean, min, max, lowest and
//!   highest node mean, cv of the node means, tacc_stats' node imbalance ([`reference`]);
//! - `job_summary`: one row per job: telemetry coverage and whether the job can be judged (with
//!   the reason when not), SUPReMM's CPU duty-cycle category, and efficiency figures: CPU
//!   efficiency, memory and wall time used against the request, GPU use, core-hours and wasted
//!   core-hours ([`job`]);
//! - `windows`, when asked for (`--windows 60:15`): the same statistics per job × node × metric
//!   over sliding windows of the kept span, one row per window, for the models.
//!
//! Two implementations compute the statistics. The reference is readable SQL run by DataFusion
//! ([`reference`]); an admin can run it by hand with `jobsight sql`. The pipeline uses a single
//! pass ([`scan`]) that reads each Parquet row group once, in parallel, and finishes each job as
//! soon as its samples are all read; tests check that both agree. Every metric in `telemetry` gets
//! its statistics, so a site adds a metric by adding it to its Prometheus templates, not here.
//!
//! A day's run writes part `features` of each table's day partition, replacing an earlier run and
//! removing the per-job parts written for that day by `jobsight ingest` (part `job-<name>`), which
//! it supersedes. The per-job path ([`compute_job`]) computes one job from its own telemetry files.
//! A failed run leaves the earlier parts as they were (parts are written atomically).

pub mod job;
pub mod reference;
pub mod scan;
pub mod series;

use std::collections::BTreeMap;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::arrow::array::{
    ArrayRef, BooleanBuilder, Float64Builder, RecordBatch, StringBuilder,
    TimestampMicrosecondBuilder, UInt64Builder,
};
use datafusion::arrow::error::ArrowError;

use crate::catalog::{self, CatalogError, Table};
use crate::query::QueryError;
pub use job::JobFeatures;

/// Seconds trimmed from each end of a job by default.
pub const DEFAULT_TRIM_S: u64 = 60;
/// Bin width for aligning nodes in the imbalance figure, by default.
pub const DEFAULT_BIN_S: u64 = 60;
/// Below this node coverage a job is not judged, by default.
pub const DEFAULT_MIN_COVERAGE: f64 = 0.8;

/// How features are computed (the `[features]` section of the configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Seconds left out at each end of a job; jobs shorter than twice this keep all samples.
    pub trim_s: u64,
    /// Bin width lining up the nodes' samples for the imbalance figure.
    pub bin_s: u64,
    /// A job whose least-covered node has less than this share of the expected samples is not
    /// judged.
    pub min_coverage: f64,
    /// CPUs of a node, for CPU efficiency from node-level CPU shares; unknown: no CPU efficiency.
    pub cores_per_node: Option<u32>,
    /// Metrics that get an idle share, with the value below which a sample counts as idle.
    pub idle_below: BTreeMap<String, f64>,
    /// Sliding windows for the models (table `windows`); none by default, because a window row
    /// per few samples multiplies the day's rows.
    pub windows: Option<WindowSpec>,
}

/// Sliding windows: width and stride in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSpec {
    pub window_s: u64,
    pub stride_s: u64,
}

impl std::str::FromStr for WindowSpec {
    type Err = String;

    /// `WIDTH` or `WIDTH:STRIDE` in seconds (stride defaults to the width).
    fn from_str(text: &str) -> Result<WindowSpec, String> {
        let (width, stride) = text.split_once(':').unwrap_or((text, text));
        let number = |s: &str| {
            s.trim()
                .parse::<u64>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("{s:?} is not a positive number of seconds"))
        };
        Ok(WindowSpec {
            window_s: number(width)?,
            stride_s: number(stride)?,
        })
    }
}

/// `WIDTH:STRIDE`, as [`WindowSpec::from_str`](std::str::FromStr) reads it.
impl Display for WindowSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.window_s, self.stride_s)
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            trim_s: DEFAULT_TRIM_S,
            bin_s: DEFAULT_BIN_S,
            min_coverage: DEFAULT_MIN_COVERAGE,
            cores_per_node: None,
            idle_below: default_idle_below(),
            windows: None,
        }
    }
}

/// Utilisation metrics (shares 0–1) and the level below which a sample is idle.
pub fn default_idle_below() -> BTreeMap<String, f64> {
    BTreeMap::from([
        ("cpu_user".to_string(), 0.05),
        ("gpu_util".to_string(), 0.05),
    ])
}

#[derive(Debug, thiserror::Error)]
pub enum FeaturesError {
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("cannot read {path}: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("{table} of day {day}: {reason}")]
    Build {
        day: NaiveDate,
        table: &'static str,
        reason: String,
    },
    #[error("job {job_id} is not in the jobs of day {day}")]
    UnknownJob { job_id: String, day: NaiveDate },
}

impl FeaturesError {
    pub(crate) fn read(path: &Path, reason: impl Display) -> FeaturesError {
        FeaturesError::Read {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }
}

/// What computing features did.
#[derive(Debug, Default, Clone)]
pub struct Computed {
    pub days: usize,
    pub jobs: usize,
    /// Rows of `features` (job × node × metric).
    pub rows: usize,
    /// Rows of `features_job` (job × metric).
    pub job_rows: usize,
    /// Jobs that cannot be judged for lack of telemetry.
    pub not_judgeable: usize,
    /// Samples of jobs that are not in `jobs` (left out) and samples trimmed away.
    pub unattributed: u64,
    pub trimmed_away: u64,
    /// Rows of `windows` (job × node × metric × window), when windows were asked for.
    pub window_rows: usize,
}

impl Computed {
    /// Adds another day's counts.
    pub fn add(&mut self, other: &Computed) {
        self.days += other.days;
        self.jobs += other.jobs;
        self.rows += other.rows;
        self.job_rows += other.job_rows;
        self.not_judgeable += other.not_judgeable;
        self.unattributed += other.unattributed;
        self.trimmed_away += other.trimmed_away;
        self.window_rows += other.window_rows;
    }
}

/// The three tables' batches for `jobs` (in job id order).
pub fn batches(
    jobs: &[JobFeatures],
) -> Result<(RecordBatch, RecordBatch, RecordBatch), ArrowError> {
    let f64s = |values: &mut dyn Iterator<Item = Option<f64>>| -> ArrayRef {
        let mut b = Float64Builder::new();
        for v in values {
            b.append_option(v);
        }
        Arc::new(b.finish())
    };
    let strings = |values: &mut dyn Iterator<Item = Option<&str>>| -> ArrayRef {
        let mut b = StringBuilder::new();
        for v in values {
            b.append_option(v);
        }
        Arc::new(b.finish())
    };
    let u64s = |values: &mut dyn Iterator<Item = Option<u64>>| -> ArrayRef {
        let mut b = UInt64Builder::new();
        for v in values {
            b.append_option(v);
        }
        Arc::new(b.finish())
    };
    let bools = |values: &mut dyn Iterator<Item = bool>| -> ArrayRef {
        let mut b = BooleanBuilder::new();
        for v in values {
            b.append_value(v);
        }
        Arc::new(b.finish())
    };

    let rows: Vec<(&JobFeatures, &job::SeriesRow)> = jobs
        .iter()
        .flat_map(|j| j.series.iter().map(move |s| (j, s)))
        .collect();
    let stat = |get: fn(&job::SeriesRow) -> Option<f64>| f64s(&mut rows.iter().map(|r| get(r.1)));
    let mut columns: Vec<ArrayRef> = vec![
        strings(&mut rows.iter().map(|r| Some(r.0.job_id.as_str()))),
        strings(&mut rows.iter().map(|r| Some(&*r.1.node))),
        strings(&mut rows.iter().map(|r| Some(&*r.1.metric))),
        u64s(&mut rows.iter().map(|r| Some(r.1.stats.n))),
        u64s(&mut rows.iter().map(|r| Some(r.1.stats.n_nonfinite))),
        bools(&mut rows.iter().map(|r| r.0.trimmed)),
        stat(|s| s.stats.min),
        stat(|s| s.stats.max),
        stat(|s| s.stats.mean),
        stat(|s| s.stats.std),
        stat(|s| s.stats.cv),
        stat(|s| s.stats.skewness),
        stat(|s| s.stats.kurtosis),
    ];
    for i in 0..series::PERCENTILES.len() {
        columns.push(f64s(&mut rows.iter().map(|r| r.1.stats.percentiles[i])));
    }
    columns.extend([
        stat(|s| s.stats.interval_s),
        stat(|s| s.coverage),
        stat(|s| s.stats.slope_per_h),
        stat(|s| s.stats.catastrophe),
        stat(|s| s.stats.max_rise),
        stat(|s| s.stats.idle_share),
    ]);
    let times = |get: fn(&job::SeriesRow) -> Option<i64>| -> ArrayRef {
        let mut b = TimestampMicrosecondBuilder::new().with_timezone("UTC");
        for r in &rows {
            b.append_option(get(r.1));
        }
        Arc::new(b.finish())
    };
    columns.extend([
        times(|s| s.stats.rise_from),
        times(|s| s.stats.rise_to),
        times(|s| s.stats.cliff_at),
    ]);
    let features = RecordBatch::try_new(Table::Features.schema(), columns)?;

    let across: Vec<(&JobFeatures, &job::AcrossRow)> = jobs
        .iter()
        .flat_map(|j| j.across.iter().map(move |a| (j, a)))
        .collect();
    let fig = |get: fn(&job::AcrossRow) -> Option<f64>| f64s(&mut across.iter().map(|r| get(r.1)));
    let features_job = RecordBatch::try_new(
        Table::FeaturesJob.schema(),
        vec![
            strings(&mut across.iter().map(|r| Some(r.0.job_id.as_str()))),
            strings(&mut across.iter().map(|r| Some(&*r.1.metric))),
            u64s(&mut across.iter().map(|r| Some(r.1.nodes))),
            fig(|a| a.mean),
            fig(|a| a.min),
            fig(|a| a.max),
            fig(|a| a.node_mean_min),
            fig(|a| a.node_mean_max),
            fig(|a| a.node_cv),
            fig(|a| a.imbalance),
        ],
    )?;

    let sum =
        |get: fn(&job::Summary) -> Option<f64>| f64s(&mut jobs.iter().map(|j| get(&j.summary)));
    let summary = RecordBatch::try_new(
        Table::JobSummary.schema(),
        vec![
            strings(&mut jobs.iter().map(|j| Some(j.job_id.as_str()))),
            sum(|s| Some(s.elapsed_s)),
            bools(&mut jobs.iter().map(|j| j.trimmed)),
            u64s(&mut jobs.iter().map(|j| j.summary.nodes_expected)),
            u64s(&mut jobs.iter().map(|j| Some(j.summary.nodes_seen))),
            strings(&mut jobs.iter().map(|j| j.summary.nodes_missing.as_deref())),
            u64s(&mut jobs.iter().map(|j| Some(j.summary.metrics))),
            u64s(&mut jobs.iter().map(|j| Some(j.summary.samples))),
            sum(|s| s.coverage_min),
            sum(|s| s.coverage_mean),
            bools(&mut jobs.iter().map(|j| j.summary.judgeable)),
            strings(
                &mut jobs
                    .iter()
                    .map(|j| j.summary.not_judgeable_reason.as_deref()),
            ),
            strings(&mut jobs.iter().map(|j| j.summary.duty_cycle)),
            sum(|s| s.cpu_used_cores),
            sum(|s| s.cpu_eff),
            sum(|s| s.mem_used_max_mb),
            sum(|s| s.mem_eff),
            sum(|s| s.time_eff),
            sum(|s| s.gpu_util),
            sum(|s| s.core_hours),
            sum(|s| s.wasted_core_hours),
        ],
    )?;
    Ok((features, features_job, summary))
}

/// The `windows` batch of `jobs`.
pub fn windows_batch(jobs: &[JobFeatures]) -> Result<RecordBatch, ArrowError> {
    let rows: Vec<(&JobFeatures, &job::WindowRow)> = jobs
        .iter()
        .flat_map(|j| j.windows.iter().map(move |w| (j, w)))
        .collect();
    let mut texts = [
        StringBuilder::new(),
        StringBuilder::new(),
        StringBuilder::new(),
    ];
    let mut start = TimestampMicrosecondBuilder::new().with_timezone("UTC");
    let mut end = TimestampMicrosecondBuilder::new().with_timezone("UTC");
    let mut n = UInt64Builder::new();
    let mut n_nonfinite = UInt64Builder::new();
    let mut floats: Vec<Float64Builder> = (0..12).map(|_| Float64Builder::new()).collect();
    for (job, w) in &rows {
        texts[0].append_value(&job.job_id);
        texts[1].append_value(&*w.node);
        texts[2].append_value(&*w.metric);
        start.append_value(w.start_us);
        end.append_value(w.end_us);
        n.append_value(w.stats.n);
        n_nonfinite.append_value(w.stats.n_nonfinite);
        let s = &w.stats;
        let values = [
            s.min,
            s.max,
            s.mean,
            s.std,
            s.skewness,
            s.kurtosis,
            s.percentiles[0],
            s.percentiles[1],
            s.percentiles[2],
            s.percentiles[3],
            s.percentiles[4],
            s.slope_per_h,
        ];
        for (builder, value) in floats.iter_mut().zip(values) {
            builder.append_option(value);
        }
    }
    let mut columns: Vec<ArrayRef> = texts
        .iter_mut()
        .map(|b| Arc::new(b.finish()) as ArrayRef)
        .collect();
    columns.push(Arc::new(start.finish()));
    columns.push(Arc::new(end.finish()));
    columns.push(Arc::new(n.finish()));
    columns.push(Arc::new(n_nonfinite.finish()));
    columns.extend(floats.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
    RecordBatch::try_new(Table::Windows.schema(), columns)
}

/// Computes the features of `jobs` from the telemetry `files` (all of a day, or one job's).
fn compute_jobs(
    files: &[PathBuf],
    jobs: &[scan::JobMeta],
    settings: &Settings,
    progress: impl Fn(usize, usize) + Sync,
) -> Result<(Vec<JobFeatures>, scan::ScanCounts), FeaturesError> {
    let (mut computed, counts) = scan::run(
        files,
        jobs,
        |meta, samples| job::compute(meta, samples, settings),
        progress,
    )?;
    computed.sort_by(|a, b| a.job_id.cmp(&b.job_id));
    Ok((computed, counts))
}

/// Writes the three tables' parts named `part` for `day`.
fn write(
    data: &Path,
    day: NaiveDate,
    part: &str,
    computed: &[JobFeatures],
) -> Result<(), FeaturesError> {
    let (features, features_job, summary) =
        batches(computed).map_err(|e| FeaturesError::Build {
            day,
            table: Table::Features.name(),
            reason: e.to_string(),
        })?;
    catalog::write_part(data, Table::Features, day, part, &[features])?;
    catalog::write_part(data, Table::FeaturesJob, day, part, &[features_job])?;
    catalog::write_part(data, Table::JobSummary, day, part, &[summary])?;
    if computed.iter().any(|j| !j.windows.is_empty()) {
        let windows = windows_batch(computed).map_err(|e| FeaturesError::Build {
            day,
            table: Table::Windows.name(),
            reason: e.to_string(),
        })?;
        catalog::write_part(data, Table::Windows, day, part, &[windows])?;
    }
    Ok(())
}

/// The tables features writes.
pub const TABLES: [Table; 3] = [Table::Features, Table::FeaturesJob, Table::JobSummary];

/// Computes one day's features with the single pass and writes them (part `features`), then
/// removes the day's per-job parts. `progress(done, total)` counts row groups read.
pub fn compute_day(
    data: &Path,
    day: NaiveDate,
    settings: &Settings,
    progress: impl Fn(usize, usize) + Sync,
) -> Result<Computed, FeaturesError> {
    let jobs = scan::read_jobs(data, day, settings.trim_s)?;
    let files = scan::parts(data, Table::Telemetry, day)?;
    let (computed, counts) = compute_jobs(&files, &jobs, settings, progress)?;
    write(data, day, "features", &computed)?;
    for table in TABLES {
        catalog::remove_job_parts(data, table, day)?;
    }
    Ok(Computed {
        days: 1,
        jobs: computed.len(),
        rows: computed.iter().map(|j| j.series.len()).sum(),
        job_rows: computed.iter().map(|j| j.across.len()).sum(),
        not_judgeable: computed.iter().filter(|j| !j.summary.judgeable).count(),
        unattributed: counts.unattributed,
        trimmed_away: counts.trimmed_away,
        window_rows: computed.iter().map(|j| j.windows.len()).sum(),
    })
}

/// The per-job path: computes one job of `day` from its own telemetry `files` and writes it as
/// part `job-<part>` (`part` itself when it starts with `job-`, as the ingest step's names do),
/// e.g. right after `jobsight ingest` stored the job. The next day run replaces it.
pub fn compute_job(
    data: &Path,
    day: NaiveDate,
    job_id: &str,
    files: &[PathBuf],
    part: &str,
    settings: &Settings,
) -> Result<JobFeatures, FeaturesError> {
    let part = if part.starts_with("job-") {
        part.to_string()
    } else {
        format!("job-{part}")
    };
    // The job's own row: reading the whole day's jobs for every job would grow with the day.
    let mut jobs: Vec<scan::JobMeta> = scan::read_jobs_in(data, day, settings.trim_s, Some(&part))?
        .into_iter()
        .filter(|j| j.job_id == job_id)
        .collect();
    if jobs.is_empty() {
        // Not written by the per-job path under this name (imported in bulk, say): the day's.
        jobs = scan::read_jobs(data, day, settings.trim_s)?
            .into_iter()
            .filter(|j| j.job_id == job_id)
            .collect();
    }
    if jobs.is_empty() {
        return Err(FeaturesError::UnknownJob {
            job_id: job_id.to_string(),
            day,
        });
    }
    let (computed, _) = compute_jobs(files, &jobs, settings, |_, _| {})?;
    write(data, day, &part, &computed)?;
    computed
        .into_iter()
        .next()
        .ok_or_else(|| FeaturesError::UnknownJob {
            job_id: job_id.to_string(),
            day,
        })
}

/// The days that have jobs, oldest first.
pub fn days_with_jobs(data: &Path) -> Vec<NaiveDate> {
    catalog::days(data, Table::Jobs)
}
