//! The warehouse catalogue: the one place that knows every table's name, location, Arrow schema and
//! partitioning, and how a partition file is written.
//!
//! Layout: `<data>/<table>/day=YYYY-MM-DD/part-<name>.parquet`, where the day is that of the job's
//! end (UTC). Files are zstd-compressed Parquet (Snappy for parts under [`SMALL_PART_ROWS`] rows)
//! with dictionary pages for repeated values and row groups of [`ROW_GROUP_ROWS`] rows, readable
//! by DataFusion, DuckDB, Spark and pandas.
//!
//! Writes are atomic and idempotent: a part is written under a hidden temporary name in its
//! partition directory, fsynced and renamed over `part-<name>.parquet`. Each ingest unit (one SWF
//! file, one LDMS run, one job) always writes the same part names, so re-running it replaces its
//! own files instead of adding rows, and a crash leaves either the old file or the new one.
//!
//! Each table's columns are listed once, by its typed row in [`rows`], which also builds its
//! batches. The schema is also committed as `schemas/<table>.schema.json`; a test regenerates it
//! from [`Table::schema`] and fails on any difference, because a changed on-disk schema breaks
//! every reader of the warehouse.
//!
//! A busy day's many small parts (one per job, one per scheduler run) are folded into one file per
//! table and day by [`compact_day`], the nightly `compact` step. What a DAG run did, and its rows in
//! `runs`, is [`run_report`].

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jobsight_base::safe_fs::{self, Dir, Links};

use chrono::NaiveDate;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::{Compression, ZstdLevel};
use datafusion::parquet::file::properties::WriterProperties;
use slurm_hooks::Text;

mod compact;
mod merge;
pub mod rows;
pub mod run_report;
pub mod scan;

pub use compact::{
    COMPACTED_PART, Compacted, compact_day, compacted_parts, in_schema, is_compactable,
};
pub use merge::replace_rows;

/// Rows per Parquet row group: large enough for fast scans, small enough to stream.
pub const ROW_GROUP_ROWS: usize = 1 << 20;
/// Name of the hive partition column.
pub const PARTITION_COLUMN: &str = "day";

/// The statistics columns of `windows`, in order; the models' features are `<metric>:<stat>`.
pub const WINDOW_STATS: [&str; 12] = [
    "min",
    "max",
    "mean",
    "std",
    "skewness",
    "kurtosis",
    "p05",
    "p25",
    "p50",
    "p75",
    "p95",
    "slope_per_h",
];

/// The statistics columns of `features` (Float64, after the count columns), in order.
pub const FEATURE_STATS: [&str; 18] = [
    "min",
    "max",
    "mean",
    "std",
    "cv",
    "skewness",
    "kurtosis",
    "p05",
    "p25",
    "p50",
    "p75",
    "p95",
    "interval_s",
    "coverage",
    "slope_per_h",
    "catastrophe",
    "max_rise",
    "idle_share",
];

/// Every table of the warehouse, each described by [`Table::description`]. Later stages add
/// theirs here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    Jobs,
    JobSteps,
    Telemetry,
    Labels,
    Features,
    FeaturesJob,
    JobSummary,
    Windows,
    Findings,
    Classes,
    Thresholds,
    Predictions,
    Notifications,
    Runs,
    Summaries,
    Workflows,
    WorkflowTasks,
    WorkflowScores,
    Interventions,
    Feedback,
    ReferenceRuns,
    ReferenceBands,
}

impl Table {
    pub const ALL: [Table; 22] = [
        Table::Jobs,
        Table::JobSteps,
        Table::Telemetry,
        Table::Labels,
        Table::Features,
        Table::FeaturesJob,
        Table::JobSummary,
        Table::Windows,
        Table::Findings,
        Table::Classes,
        Table::Thresholds,
        Table::Predictions,
        Table::Notifications,
        Table::Runs,
        Table::Summaries,
        Table::Workflows,
        Table::WorkflowTasks,
        Table::WorkflowScores,
        Table::Interventions,
        Table::Feedback,
        Table::ReferenceRuns,
        Table::ReferenceBands,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Table::Jobs => "jobs",
            Table::JobSteps => "job_steps",
            Table::Telemetry => "telemetry",
            Table::Labels => "labels",
            Table::Features => "features",
            Table::FeaturesJob => "features_job",
            Table::JobSummary => "job_summary",
            Table::Windows => "windows",
            Table::Findings => "findings",
            Table::Classes => "classes",
            Table::Thresholds => "thresholds",
            Table::Predictions => "predictions",
            Table::Notifications => "notifications",
            Table::Runs => "runs",
            Table::Summaries => "summaries",
            Table::Workflows => "workflows",
            Table::WorkflowTasks => "workflow_tasks",
            Table::WorkflowScores => "workflow_scores",
            Table::Interventions => "interventions",
            Table::Feedback => "feedback",
            Table::ReferenceRuns => "reference_runs",
            Table::ReferenceBands => "reference_bands",
        }
    }

    /// What one row of the table is: shown by the generated table catalogue
    /// (`docs/tables.md`), the one place it is written.
    pub fn description(self) -> &'static str {
        match self {
            Table::Jobs => {
                "One row per job run: identity, request, timing, outcome, and what Slurm accounting measured (`acct_*`, summed over its steps)."
            }
            Table::JobSteps => {
                "One row per step of a job run (`batch`, `extern`, `0`, ...) as Slurm accounting recorded it: CPU time, peak memory, energy (written by the per-job ingest from sacct)."
            }
            Table::Telemetry => {
                "Long-format node telemetry attributed to jobs: one row per job, node, metric and sample."
            }
            Table::Labels => {
                "Ground truth where a data set or an admin has it: which anomaly ran in which job and when (healthy: `none`). `jobsight label` writes an admin's labels with who and when; the models read a job's newest such labels in place of its older ones."
            }
            Table::Features => {
                "Statistics of each job's telemetry per node and metric (written by `jobsight features`)."
            }
            Table::FeaturesJob => {
                "Figures of each job's telemetry per metric across its nodes (written by `jobsight features`)."
            }
            Table::JobSummary => {
                "One row per job: telemetry coverage, whether it can be judged, efficiency figures (written by `jobsight features`)."
            }
            Table::Windows => {
                "Statistics per job run × node × metric over sliding windows, for the models (written by `jobsight features`)."
            }
            Table::Findings => {
                "One row per triggered rule: job, rule, group, severity, node and time window, evidence and the rendered texts (written by `jobsight classify`)."
            }
            Table::Classes => {
                "One row per job and class it belongs to (written by `jobsight classify`)."
            }
            Table::Thresholds => {
                "The thresholds block: one row per job and main characteristic, marked low / average / high (written by `jobsight classify`)."
            }
            Table::Predictions => {
                "One verdict per job run: the models' window verdicts rolled up and combined with the rules (written by `jobsight classify` with the models)."
            }
            Table::Notifications => {
                "The ledger of what was emailed: one row per message and finding it reported, partitioned by the UTC day it was sent (written by `jobsight notify`)."
            }
            Table::Runs => {
                "The pipeline's own history: one row per DAG run and one per step of it, partitioned by the UTC day the run started (written by the scheduler)."
            }
            Table::Summaries => {
                "System-wide efficiency and waste per day × cluster × partition × account × user (written by the nightly `summarize` step; docs/summaries.md)."
            }
            Table::Workflows => {
                "One row per workflow run: its tasks, anomalous tasks where labelled, start, end and makespan (written by `jobsight import pegasus`; docs/workflows.md)."
            }
            Table::WorkflowTasks => {
                "One row per task of a workflow run: its times, delays, bytes, kickstart counters, place in the DAG and label where the data has one (written by `jobsight import pegasus`)."
            }
            Table::WorkflowScores => {
                "One row per task of a workflow run: its anomaly score against its kind's history, pooled over its host (written by `jobsight workflow score`)."
            }
            Table::Interventions => {
                "The audit of what the running DAG did about running jobs: one row per warning and cancellation (done, or in dry-run what it would have done), partitioned by the UTC day of the decision (docs/running.md)."
            }
            Table::Feedback => {
                "What people said about findings and verdicts on the served job pages: one row per judgement (useful or wrong, with an optional note), with who and when (written by `jobsight serve --http`; docs/web.md)."
            }
            Table::ReferenceRuns => {
                "What each job's page compares it with, as the report chose it for the job's day: the group of healthy runs its band is taken over and the healthy run charted beside it (written by the report step with the day's pages, read by the served pages; docs/reports.md)."
            }
            Table::ReferenceBands => {
                "The healthy bands a day's job pages compare with: per group (application, user, cluster) and metric, the 10th to 90th percentile of the job means of the group's healthy runs of the 30 days up to the day (written by the report step with the day's pages)."
            }
        }
    }

    /// The table's directory under the data directory.
    pub fn dir(self, data: &Path) -> PathBuf {
        data.join(self.name())
    }

    /// The Arrow schema of the table's files (without the `day` partition column, which lives in
    /// the directory names).
    pub fn schema(self) -> SchemaRef {
        // The columns are listed once, by the tables' row types.
        let fields = match self {
            Table::Jobs => rows::JobRow::fields(),
            Table::JobSteps => rows::JobStepRow::fields(),
            Table::Telemetry => rows::telemetry_fields(),
            Table::Labels => rows::LabelRow::fields(),
            Table::Features => rows::FeatureRow::fields(),
            Table::FeaturesJob => rows::FeaturesJobRow::fields(),
            Table::JobSummary => rows::JobSummaryRow::fields(),
            Table::Windows => rows::WindowRow::fields(),
            Table::Findings => rows::FindingRow::fields(),
            Table::Classes => rows::ClassRow::fields(),
            Table::Thresholds => rows::ThresholdRow::fields(),
            Table::Predictions => rows::PredictionRow::fields(),
            Table::Notifications => rows::LedgerRow::fields(),
            Table::Runs => rows::RunRow::fields(),
            Table::Summaries => rows::SummaryRow::fields(),
            Table::Workflows => rows::WorkflowRow::fields(),
            Table::WorkflowTasks => rows::WorkflowTaskRow::fields(),
            Table::WorkflowScores => rows::WorkflowScoreRow::fields(),
            Table::Interventions => rows::InterventionRow::fields(),
            Table::Feedback => rows::FeedbackRow::fields(),
            Table::ReferenceRuns => rows::ReferenceRunRow::fields(),
            Table::ReferenceBands => rows::ReferenceBandRow::fields(),
        };
        Arc::new(Schema::new(fields))
    }

    /// What the `day` of a partition is.
    pub fn partition_meaning(self) -> &'static str {
        match self {
            Table::Notifications => "UTC day the message was sent",
            Table::Runs => "UTC day the DAG run started",
            Table::Interventions => "UTC day of the decision",
            Table::Feedback => "UTC day the judgement was given",
            Table::ReferenceBands => "UTC day whose jobs' pages compare with the bands",
            Table::Summaries => "UTC day the summarised jobs ended",
            Table::Workflows | Table::WorkflowTasks | Table::WorkflowScores => {
                "UTC day the workflow run ended"
            }
            _ => "UTC day of the job's end",
        }
    }

    /// The schema as committed in `schemas/<table>.schema.json`: one entry per column, in order.
    pub fn schema_json(self) -> String {
        let columns: Vec<serde_json::Value> = self
            .schema()
            .fields()
            .iter()
            .map(|f| serde_json::json!({"name": f.name(), "type": f.data_type().to_string(), "nullable": f.is_nullable()}))
            .collect();
        let doc = serde_json::json!({
            "table": self.name(),
            "layout": format!("<data>/{}/{PARTITION_COLUMN}=YYYY-MM-DD/part-*.parquet", self.name()),
            "partition_column": {"name": PARTITION_COLUMN, "type": "Utf8", "meaning": self.partition_meaning()},
            "columns": columns,
        });
        serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("cannot create {path}: {source}")]
    Create { path: PathBuf, source: io::Error },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: datafusion::parquet::errors::ParquetError,
    },
    #[error("cannot sync or rename {path}: {source}")]
    Commit { path: PathBuf, source: io::Error },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: datafusion::parquet::errors::ParquetError,
    },
    #[error("batch for table {table} does not match its schema: {reason}")]
    Schema { table: &'static str, reason: String },
    /// What a [`write_part_streaming`] filler returns when its own work failed (that error is
    /// reported by the caller): nothing is written.
    #[error("writing a part of table {table} was given up")]
    Abandoned { table: &'static str },
}

/// The SQL condition joining rows of alias `a` (a per-run table: `job_summary`, `findings`,
/// `features_job`, …) to the `jobs` row of alias `b` they are about: same job id, day and run. A
/// requeued job has one `jobs` row per run that ended that day; a row of `a` without a run
/// (written before runs were recorded) joins each of them, as it did then.
pub fn same_run(a: &str, b: &str) -> String {
    format!(
        "{a}.job_id = {b}.job_id AND {a}.day = {b}.day \
         AND ({a}.restart_count IS NULL OR {a}.restart_count = {b}.restart_count)"
    )
}

/// The directory of one day's partition of a table.
pub fn partition_dir(data: &Path, table: Table, day: NaiveDate) -> PathBuf {
    table
        .dir(data)
        .join(format!("{PARTITION_COLUMN}={}", day.format("%Y-%m-%d")))
}

/// Parts with fewer rows than this are written with Snappy instead of zstd: zstd allocates and
/// zeroes a (de)compression context of about a megabyte for every column chunk, which for a part
/// of a few hundred rows (one job, one workflow run) costs more than the part; perf on the
/// workflow benchmark (4,000 parts) put context creation at 12 % of all its time.
pub const SMALL_PART_ROWS: usize = 20_000;

fn writer_properties(rows: usize) -> WriterProperties {
    let compression = if rows < SMALL_PART_ROWS {
        Compression::SNAPPY
    } else {
        Compression::ZSTD(ZstdLevel::try_new(3).unwrap_or_default())
    };
    WriterProperties::builder()
        .set_compression(compression)
        .set_dictionary_enabled(true)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .build()
}

/// Removes the parts `part-<prefix>-<digits>.parquet` of one day's partition (what a
/// `jobsight_ingest::TelemetrySink` with that prefix wrote), so that a unit re-ingested with fewer
/// chunks leaves no stale rows behind. Returns what it removed.
pub fn remove_parts(
    data: &Path,
    table: Table,
    day: NaiveDate,
    prefix: &str,
) -> Result<Vec<PathBuf>, CatalogError> {
    let start = format!(
        "part-{}-",
        slurm_hooks::spool_dir::file_name_part(&Text::from(prefix), 128)
    );
    remove_parts_named(data, table, day, |name| {
        name.strip_prefix(&start).is_some_and(|rest| {
            rest.strip_suffix(".parquet")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
    })
}

/// Removes the per-job parts (`part-job-*.parquet`) of a table's day partition: what the per-job
/// path wrote before a whole-day run replaced it. Returns how many it removed.
pub fn remove_job_parts(data: &Path, table: Table, day: NaiveDate) -> Result<usize, CatalogError> {
    remove_parts_named(data, table, day, |name| {
        name.starts_with("part-job-") && name.ends_with(".parquet")
    })
    .map(|removed| removed.len())
}

/// Removes the files of one day's partition whose names `remove` picks, relative to the opened
/// partition (a link is removed, never followed). Returns their paths.
fn remove_parts_named(
    data: &Path,
    table: Table,
    day: NaiveDate,
    remove: impl Fn(&str) -> bool,
) -> Result<Vec<PathBuf>, CatalogError> {
    let path = partition_dir(data, table, day);
    let dir = match Dir::open(&path, Links::Refuse) {
        Ok(dir) => dir,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(CatalogError::Create { path, source }),
    };
    let names = dir.names().map_err(|source| CatalogError::Create {
        path: path.clone(),
        source,
    })?;
    let mut removed = Vec::new();
    for name in names {
        if name.to_str().is_some_and(&remove) {
            dir.remove(&name).map_err(|source| CatalogError::Commit {
                path: dir.join(&name),
                source,
            })?;
            removed.push(dir.join(&name));
        }
    }
    Ok(removed)
}

/// Where [`write_part`] puts part `name` of `table` for `day`.
pub fn part_path(data: &Path, table: Table, day: NaiveDate, name: &str) -> PathBuf {
    partition_dir(data, table, day).join(format!(
        "part-{}.parquet",
        slurm_hooks::spool_dir::file_name_part(&Text::from(name), 128)
    ))
}

/// The part's name in a part file's name `part-<name>.parquet`; `None` for another file.
fn part_name(path: &Path) -> Option<&str> {
    path.file_name()?
        .to_str()?
        .strip_prefix("part-")?
        .strip_suffix(".parquet")
}

/// Atomically writes `batches` as `part-<name>.parquet` into the table's partition for `day`,
/// replacing an earlier file of the same name. `name` identifies the ingest unit (sanitised here).
pub fn write_part(
    data: &Path,
    table: Table,
    day: NaiveDate,
    name: &str,
    batches: &[RecordBatch],
) -> Result<PathBuf, CatalogError> {
    for batch in batches {
        check_schema(table, batch)?;
    }
    write_atomically(
        data,
        table,
        day,
        name,
        writer_properties(batches.iter().map(RecordBatch::num_rows).sum()),
        |writer, tmp| {
            for batch in batches {
                writer.write(batch).map_err(|source| CatalogError::Write {
                    path: tmp.to_path_buf(),
                    source,
                })?;
            }
            Ok(())
        },
    )
}

/// Whether `batch` has the columns of `table`, in order.
fn check_schema(table: Table, batch: &RecordBatch) -> Result<(), CatalogError> {
    if batch.schema().fields() == table.schema().fields() {
        return Ok(());
    }
    Err(CatalogError::Schema {
        table: table.name(),
        reason: format!(
            "got {:?}",
            (batch.schema().fields().iter())
                .map(|f| f.name())
                .collect::<Vec<_>>()
        ),
    })
}

/// [`write_part`] for a part too big to hold in memory: `fill` gets a function that writes one
/// batch (checked against the table's schema) and calls it as the batches come; the writer keeps
/// at most a row group. The part replaces the old one atomically when `fill` returns `Ok`, and
/// nothing changes when it returns an error.
pub fn write_part_streaming(
    data: &Path,
    table: Table,
    day: NaiveDate,
    name: &str,
    fill: impl FnOnce(
        &mut (dyn FnMut(&RecordBatch) -> Result<(), CatalogError> + Send),
    ) -> Result<(), CatalogError>,
) -> Result<PathBuf, CatalogError> {
    // Not known in advance: written as a large part is (zstd).
    let properties = writer_properties(SMALL_PART_ROWS);
    write_atomically(data, table, day, name, properties, |writer, tmp| {
        let mut write = |batch: &RecordBatch| {
            check_schema(table, batch)?;
            writer.write(batch).map_err(|source| CatalogError::Write {
                path: tmp.to_path_buf(),
                source,
            })
        };
        fill(&mut write)
    })
}

/// Opens the partition directory of `table` for `day`, creating what is missing: the warehouse
/// root (a path the admin chose) is followed if it is a link, the table's and the day's folders
/// below it never are, and later names are resolved relative to the opened day folder.
fn open_partition(data: &Path, table: Table, day: NaiveDate) -> Result<Dir, CatalogError> {
    let dir = partition_dir(data, table, day);
    let create = |source| CatalogError::Create {
        path: dir.clone(),
        source,
    };
    Dir::create_all(data)
        .and_then(|d| d.sub_or_create(table.name(), 0o755))
        .and_then(|d| d.sub_or_create(dir.file_name().unwrap_or_default(), 0o755))
        .map_err(create)
}

/// Writes part `name` of `table` for `day` through `fill` into a hidden temporary file, fsyncs it
/// and renames it over `part-<name>.parquet` ([`safe_fs::write_replacing`]): readers see the old
/// file or the new one, never half of one, and a killed writer's temporary does not stay.
fn write_atomically(
    data: &Path,
    table: Table,
    day: NaiveDate,
    name: &str,
    properties: WriterProperties,
    fill: impl FnOnce(&mut ArrowWriter<File>, &Path) -> Result<(), CatalogError>,
) -> Result<PathBuf, CatalogError> {
    let dir = open_partition(data, table, day)?;
    let final_path = part_path(data, table, day, name);
    let file_name = final_path.file_name().unwrap_or_default();
    // Hidden and without the .parquet extension: readers never list a half-written file.
    safe_fs::write_replacing(
        &dir,
        file_name,
        |path, source| CatalogError::Commit { path, source },
        |file, tmp| {
            let write_error = |source| CatalogError::Write {
                path: tmp.to_path_buf(),
                source,
            };
            let mut writer = ArrowWriter::try_new(file, table.schema(), Some(properties))
                .map_err(write_error)?;
            fill(&mut writer, tmp)?;
            writer.into_inner().map_err(write_error)
        },
    )
}

/// The Parquet files of one day's partition of `table`, in name order (hidden temporary files
/// skipped): all of them, or with `part` only that part's own file (what the per-job path wrote
/// for one job), so that judging one job reads that job and not the whole day.
pub fn part_files(
    data: &Path,
    table: Table,
    day: NaiveDate,
    part: Option<&str>,
) -> io::Result<Vec<PathBuf>> {
    if let Some(part) = part {
        let path = part_path(data, table, day, part);
        return Ok(if path.is_file() {
            vec![path]
        } else {
            Vec::new()
        });
    }
    let entries = match fs::read_dir(partition_dir(data, table, day)) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "parquet")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| !n.starts_with('.'))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Removes part `name` of `table` for `day` if it is there; says whether it was.
pub fn remove_part(
    data: &Path,
    table: Table,
    day: NaiveDate,
    name: &str,
) -> Result<bool, CatalogError> {
    let path = part_path(data, table, day, name);
    if fs::symlink_metadata(&path).is_err() {
        return Ok(false);
    }
    remove_part_file(&path).map(|()| true)
}

/// Removes one part file that [`part_files`] listed, relative to its opened partition folder (a
/// link in the folder's place is refused, a link at the file's name is removed, never followed).
fn remove_part_file(path: &Path) -> Result<(), CatalogError> {
    let commit = |source| CatalogError::Commit {
        path: path.to_path_buf(),
        source,
    };
    let parent = path.parent().unwrap_or(Path::new("."));
    Dir::open(parent, Links::Refuse)
        .and_then(|dir| dir.remove(path.file_name().unwrap_or_default()))
        .map_err(commit)
}

/// Removes the hidden temporaries that killed writers left in any partition of any table
/// ([`safe_fs::remove_stale_temporaries`]); the nightly `compact` step calls it. Partition folders
/// are opened without following links. Returns how many it removed.
pub fn remove_stale_temporaries(data: &Path) -> usize {
    let mut removed = 0;
    for table in Table::ALL {
        let Ok(table_dir) = Dir::open(&table.dir(data), Links::Refuse) else {
            continue;
        };
        for name in table_dir.names().unwrap_or_default() {
            if let Ok(day) = table_dir.sub(&name) {
                removed += safe_fs::remove_stale_temporaries(&day);
            }
        }
    }
    removed
}

/// The days that have a partition of `table`, oldest first (folders not named `day=YYYY-MM-DD`
/// are ignored).
pub fn days(data: &Path, table: Table) -> Vec<NaiveDate> {
    let mut days: Vec<NaiveDate> = fs::read_dir(table.dir(data))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let day = name.to_str()?.strip_prefix("day=")?.to_string();
            NaiveDate::parse_from_str(&day, "%Y-%m-%d").ok()
        })
        .collect();
    days.sort();
    days
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed schema files are exactly what the code writes. Regenerate after a deliberate
    /// change with `JOBSIGHT_UPDATE_SCHEMAS=1 cargo test --workspace --lib schema`.
    #[test]
    fn schema_files_match_the_code() {
        for table in Table::ALL {
            let path = format!(
                "{}/schemas/{}.schema.json",
                jobsight_base::test_support::workspace_dir().display(),
                table.name()
            );
            let generated = table.schema_json();
            if std::env::var_os("JOBSIGHT_UPDATE_SCHEMAS").is_some() {
                fs::write(&path, &generated).unwrap();
            }
            let committed =
                fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
            assert!(
                committed == generated,
                "{path} differs from Table::{table:?}.schema():\n{generated}"
            );
        }
    }

    fn labels(job: &str, rows: usize) -> RecordBatch {
        use datafusion::arrow::array::{ArrayRef, StringArray, TimestampMicrosecondArray};
        let text = |v: &str| Arc::new(StringArray::from(vec![v; rows])) as ArrayRef;
        let time = || {
            Arc::new(TimestampMicrosecondArray::from(vec![None; rows]).with_timezone("UTC"))
                as ArrayRef
        };
        RecordBatch::try_new(
            Table::Labels.schema(),
            vec![
                text(job),
                text("none"),
                time(),
                time(),
                text("{}"),
                text("test"),
                text("tester"),
                time(),
            ],
        )
        .unwrap()
    }

    fn rows_by_job(data: &Path, day: NaiveDate) -> std::collections::BTreeMap<String, usize> {
        use datafusion::arrow::array::{Array, AsArray};
        use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        let mut counts = std::collections::BTreeMap::new();
        for path in part_files(data, Table::Labels, day, None).unwrap() {
            let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap())
                .unwrap()
                .build()
                .unwrap();
            for batch in reader {
                let batch = batch.unwrap();
                let jobs = batch.column(0).as_string::<i32>();
                for i in 0..jobs.len() {
                    *counts.entry(jobs.value(i).to_string()).or_default() += 1;
                }
            }
        }
        counts
    }

    fn names(data: &Path, day: NaiveDate) -> Vec<String> {
        part_files(data, Table::Labels, day, None)
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    }

    /// Compaction folds the per-job parts into one day file with the same rows, keeps the rows of
    /// an earlier compaction when a late job arrives, and leaves bulk imports' parts alone.
    #[test]
    fn compaction_keeps_every_row_once() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let day = NaiveDate::from_ymd_opt(2026, 11, 22).unwrap();
        for (job, rows) in [("1", 3), ("2", 5), ("3", 1)] {
            write_part(
                data,
                Table::Labels,
                day,
                &format!("job-c-{job}"),
                &[labels(job, rows)],
            )
            .unwrap();
        }
        write_part(data, Table::Labels, day, "swf-log", &[labels("bulk", 2)]).unwrap();
        let before = rows_by_job(data, day);

        let done = compact_day(data, Table::Labels, day).unwrap();
        assert_eq!((done.parts, done.rows, done.leftovers), (3, 9, 0));
        assert_eq!(
            names(data, day),
            ["part-compacted.parquet", "part-swf-log.parquet"]
        );
        assert_eq!(rows_by_job(data, day), before);
        let held: Vec<String> = compacted_parts(data, Table::Labels, day)
            .unwrap()
            .into_iter()
            .collect();
        assert_eq!(held, ["job-c-1", "job-c-2", "job-c-3"]);

        // Nothing new: nothing rewritten.
        assert_eq!(
            compact_day(data, Table::Labels, day).unwrap(),
            Compacted::default()
        );

        // A late job: folded in next time, the earlier rows kept.
        write_part(data, Table::Labels, day, "job-c-4", &[labels("4", 2)]).unwrap();
        let done = compact_day(data, Table::Labels, day).unwrap();
        assert_eq!((done.parts, done.rows), (1, 11));
        let mut expected = before.clone();
        expected.insert("4".into(), 2);
        assert_eq!(rows_by_job(data, day), expected);
        assert_eq!(compacted_parts(data, Table::Labels, day).unwrap().len(), 4);
    }

    /// A compaction stopped after its commit leaves parts the day file already holds: the next
    /// one recognises them by the footer's list and only removes them (no row counted twice).
    #[test]
    fn parts_left_by_an_interrupted_compaction_are_removed_not_added() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let day = NaiveDate::from_ymd_opt(2026, 11, 22).unwrap();
        write_part(data, Table::Labels, day, "job-c-1", &[labels("1", 3)]).unwrap();
        let leftover = dir.path().join("leftover.parquet");
        fs::copy(part_path(data, Table::Labels, day, "job-c-1"), &leftover).unwrap();
        compact_day(data, Table::Labels, day).unwrap();
        // As if the process died between the rename and the removal.
        fs::copy(&leftover, part_path(data, Table::Labels, day, "job-c-1")).unwrap();

        let done = compact_day(data, Table::Labels, day).unwrap();
        assert_eq!((done.parts, done.leftovers), (0, 1));
        assert_eq!(rows_by_job(data, day), [("1".to_string(), 3)].into());
    }

    #[test]
    fn partition_paths() {
        let day = NaiveDate::from_ymd_opt(2026, 11, 22).unwrap();
        assert_eq!(
            partition_dir(Path::new("/d"), Table::Telemetry, day),
            Path::new("/d/telemetry/day=2026-11-22")
        );
    }
}
