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
//!   core-hours, each CPU and memory figure from the job's own telemetry, its nodes' or Slurm
//!   accounting (which, and whether the job shared its nodes, recorded beside them) ([`job`]);
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
//!
//! The private modules `settings` (how features are computed, as [`options`] reads them from
//! the configuration), `batches` (the Arrow batches of the tables written) and `method` (which
//! computation runs a day) hold what their names say; what the other crates use of them is
//! re-exported here.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod computed;
pub mod efficiency;
pub mod energy;
pub mod job;
pub mod options;
pub mod plan;
pub mod reference;
pub mod scan;

mod batches;
mod method;
mod settings;

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::NaiveDate;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::error::ArrowError;

pub use batches::{batches, windows_batch};
use batches::{features_batch, features_job_batch, summary_batch};
pub use job::JobFeatures;
use jobsight_warehouse::catalog::scan::ScanError;
use jobsight_warehouse::catalog::{self, CatalogError, Table};
use jobsight_warehouse::query::QueryError;
pub use method::{Method, Used, compute_day_by, method_used};
pub use options::Options;
pub use settings::{
    DEFAULT_BIN_S, DEFAULT_MIN_COVERAGE, DEFAULT_PLAN_ROWS_AT_A_TIME, DEFAULT_TRIM_S, Settings,
    WindowSpec, default_idle_below,
};

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

impl From<ScanError> for FeaturesError {
    fn from(e: ScanError) -> FeaturesError {
        FeaturesError::Read {
            path: e.path,
            reason: e.reason,
        }
    }
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

/// Computes the features of `jobs` from the telemetry `files` (all of a day, or one job's).
fn compute_jobs(
    files: &[PathBuf],
    jobs: &[scan::JobMeta],
    settings: &Settings,
    progress: impl Fn(usize, usize) + Sync,
) -> Result<(Vec<JobFeatures>, scan::ScanCounts), FeaturesError> {
    compute_jobs_then(files, jobs, settings, |job| job, progress)
}

/// [`compute_jobs`], with `then` applied to each job as soon as it is computed (on the thread
/// that computed it).
fn compute_jobs_then(
    files: &[PathBuf],
    jobs: &[scan::JobMeta],
    settings: &Settings,
    then: impl Fn(JobFeatures) -> JobFeatures + Sync,
    progress: impl Fn(usize, usize) + Sync,
) -> Result<(Vec<JobFeatures>, scan::ScanCounts), FeaturesError> {
    let (mut computed, counts) = scan::run(
        files,
        jobs,
        |meta, samples| then(job::compute(meta, samples, settings)),
        progress,
    )?;
    computed.sort_by(|a, b| (&a.job_id, a.restart_count).cmp(&(&b.job_id, b.restart_count)));
    Ok((computed, counts))
}

/// The jobs computed, what the scan counted, and the rows of `windows` written.
type WithWindows = (Vec<JobFeatures>, scan::ScanCounts, usize);

/// A day's windows as they are computed: each job's are written to the day's `windows` part as
/// soon as the job is done and then dropped, so that memory holds the jobs being computed, not
/// the day's windows (21.8 M of them, 12 GiB, on a 16-node day when they were held). The part's
/// rows are in the order the jobs finish; readers that need an order sort
/// (`model::dataset` does).
fn compute_jobs_streaming_windows(
    data: &Path,
    day: NaiveDate,
    part: &str,
    files: &[PathBuf],
    jobs: &[scan::JobMeta],
    settings: &Settings,
    progress: impl Fn(usize, usize) + Sync,
) -> Result<WithWindows, FeaturesError> {
    // The computation runs inside the part's writer; its own error waits here while the writer
    // is told to give up (nothing is written then).
    let mut outcome: Option<Result<WithWindows, FeaturesError>> = None;
    let written = catalog::write_part_streaming(data, Table::Windows, day, part, |write| {
        let sink = Mutex::new((write, 0usize, None::<FeaturesError>));
        let computed = compute_jobs_then(
            files,
            jobs,
            settings,
            |mut job| {
                if job.windows.is_empty() {
                    return job;
                }
                let batch = windows_batch(std::slice::from_ref(&job));
                let mut sink = sink.lock().unwrap_or_else(|e| e.into_inner());
                let (write, rows, failed) = &mut *sink;
                if failed.is_none() {
                    *failed = match batch {
                        Ok(batch) => write(&batch).err().map(FeaturesError::from),
                        Err(e) => Some(FeaturesError::Build {
                            day,
                            table: Table::Windows.name(),
                            reason: e.to_string(),
                        }),
                    };
                    *rows += job.windows.len();
                }
                job.windows = Vec::new();
                job
            },
            progress,
        );
        let (_, rows, failed) = sink.into_inner().unwrap_or_else(|e| e.into_inner());
        let result = match (computed, failed) {
            (Ok((computed, counts)), None) => Ok((computed, counts, rows)),
            (Err(e), _) | (_, Some(e)) => Err(e),
        };
        let ok = result.is_ok();
        outcome = Some(result);
        if ok {
            Ok(())
        } else {
            Err(CatalogError::Abandoned {
                table: Table::Windows.name(),
            })
        }
    });
    match (outcome, written) {
        (Some(Err(e)), _) => Err(e),
        (_, Err(e)) => Err(e.into()),
        (Some(Ok(done)), Ok(_)) => Ok(done),
        // The writer calls the computation before it commits; never seen, but not a panic.
        (None, Ok(_)) => Err(FeaturesError::Build {
            day,
            table: Table::Windows.name(),
            reason: "the windows part was written without computing the day".into(),
        }),
    }
}

/// Writes the three tables' parts named `part` for `day`.
fn write(
    data: &Path,
    day: NaiveDate,
    part: &str,
    computed: &[JobFeatures],
) -> Result<(), FeaturesError> {
    write_by(data, day, part, computed, WRITTEN_JOBS_AT_A_TIME)
}

/// [`write`], the rows of a day of more than `at_a_time` jobs built and written that many jobs
/// at a time.
fn write_by(
    data: &Path,
    day: NaiveDate,
    part: &str,
    computed: &[JobFeatures],
    at_a_time: usize,
) -> Result<(), FeaturesError> {
    let at_a_time = at_a_time.max(1);
    let tables: [(Table, BatchOf); 3] = [
        (Table::Features, features_batch),
        (Table::FeaturesJob, features_job_batch),
        (Table::JobSummary, summary_batch),
    ];
    for (table, batch_of) in tables {
        let build = |e: ArrowError| FeaturesError::Build {
            day,
            table: table.name(),
            reason: e.to_string(),
        };
        if computed.len() <= at_a_time {
            let batch = batch_of(computed).map_err(build)?;
            catalog::write_part(data, table, day, part, &[batch])?;
            continue;
        }
        // A big day's rows are built and written a group of jobs at a time: built all at once,
        // the rows and their batch were two more copies of the day's features (4.4 GiB at the
        // peak of a 10,000-node day's step).
        let mut failed = None;
        let written = catalog::write_part_streaming(data, table, day, part, |write| {
            for group in computed.chunks(at_a_time) {
                match batch_of(group) {
                    Ok(batch) => write(&batch)?,
                    Err(e) => {
                        failed = Some(build(e));
                        return Err(CatalogError::Abandoned {
                            table: table.name(),
                        });
                    }
                }
            }
            Ok(())
        });
        if let Some(e) = failed {
            return Err(e);
        }
        written?;
    }
    // The day's windows are written as they are computed (compute_jobs_streaming_windows).
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

/// What builds one table's batch of some jobs.
type BatchOf = fn(&[JobFeatures]) -> Result<RecordBatch, ArrowError>;

/// Jobs whose rows are built and written at a time when a day has more ([`write`]); a day of
/// at most this many is written as one batch.
const WRITTEN_JOBS_AT_A_TIME: usize = 1_000;

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
    let (computed, counts, window_rows) = if settings.windows.is_some() {
        compute_jobs_streaming_windows(data, day, "features", &files, &jobs, settings, progress)?
    } else {
        let (computed, counts) = compute_jobs(&files, &jobs, settings, progress)?;
        (computed, counts, 0)
    };
    write_day(data, day, &computed, counts, window_rows)
}

/// Writes a day's computed jobs (part `features` of each table), removes the day's per-job parts
/// it supersedes, and says what was computed.
fn write_day(
    data: &Path,
    day: NaiveDate,
    computed: &[JobFeatures],
    counts: scan::ScanCounts,
    window_rows: usize,
) -> Result<Computed, FeaturesError> {
    write(data, day, "features", computed)?;
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
        window_rows,
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
        // Not written by the per-job path under this name (imported in bulk, say): the day's,
        // of a requeued job its run that ended last (the part is one run's).
        jobs = scan::read_jobs(data, day, settings.trim_s)?
            .into_iter()
            .filter(|j| j.job_id == job_id)
            .max_by_key(|j| j.end_us)
            .into_iter()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A day's rows written a group of jobs at a time (a big day's) are those written at once.
    #[test]
    fn a_day_written_a_group_of_jobs_at_a_time_holds_the_same_rows() {
        use datafusion::arrow::compute::concat_batches;
        use jobsight_warehouse::catalog::rows::{JobRow, TelemetryBuilder};
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path();
        let day = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let start = day.and_hms_opt(8, 0, 0).unwrap().and_utc();
        let mut telemetry = TelemetryBuilder::default();
        let mut jobs = Vec::new();
        for j in 0..3i64 {
            let id = format!("{}", 10 + j);
            jobs.push(JobRow {
                cluster: "c".into(),
                job_id: id.clone(),
                start: Some(start),
                end: start + chrono::Duration::hours(1),
                cpus: Some(4),
                source: "test".into(),
                ..JobRow::default()
            });
            for step in 0..360i64 {
                let ts = start.timestamp_micros() + step * 10_000_000;
                for (m, metric) in ["cpu_user", "mem_used_bytes"].iter().enumerate() {
                    let value = (step * (j + 1) + m as i64) as f64 % 17.0;
                    telemetry.push(&id, &format!("n{j}"), metric, ts, value);
                }
            }
        }
        JobRow::write_part(data, day, "jobs", &jobs).unwrap();
        let batch = telemetry.finish().unwrap();
        catalog::write_part(data, Table::Telemetry, day, "t", &[batch]).unwrap();
        let settings = Settings::default();
        let metas = scan::read_jobs(data, day, settings.trim_s).unwrap();
        let files = scan::parts(data, Table::Telemetry, day).unwrap();
        let (computed, _) = compute_jobs(&files, &metas, &settings, |_, _| {}).unwrap();
        assert_eq!(computed.len(), 3);
        write_by(data, day, "whole", &computed, usize::MAX).unwrap();
        write_by(data, day, "groups", &computed, 1).unwrap();
        let rows = |table: Table, part: &str| {
            let path = &catalog::part_files(data, table, day, Some(part)).unwrap()[0];
            let reader = catalog::scan::reader(path).unwrap();
            let schema = reader.schema().clone();
            let batches: Vec<RecordBatch> = reader.build().unwrap().map(|b| b.unwrap()).collect();
            concat_batches(&schema, &batches).unwrap()
        };
        for table in TABLES {
            let whole = rows(table, "whole");
            assert!(whole.num_rows() >= 3, "{}", table.name());
            assert_eq!(rows(table, "groups"), whole, "{}", table.name());
        }
    }
}
