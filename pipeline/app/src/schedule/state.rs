//! The schedule's own files under `<data>/.schedule/` (not a table): each DAG's lock, its last
//! run (from which a missed run is caught up), the jobs its ingest step stored that the steps
//! after it have not finished judging, carried to the next run across a crash, and when the
//! daemon last started (so that `dag status` does not call a skipped run missed).

use std::fs::File;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use super::error::ScheduleError;

/// A job the ingest step finished, carried to the steps after it (and across a crash).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IngestedJob {
    pub day: NaiveDate,
    pub job_id: String,
    /// Cluster:id, for the log.
    pub job: String,
    pub part: String,
    pub telemetry_files: Vec<PathBuf>,
}

/// The scheduled time of a DAG's last run and how it ended, kept for catching up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LastRun {
    pub run_id: String,
    pub scheduled_for: DateTime<Utc>,
    pub trigger: String,
    pub started: DateTime<Utc>,
    pub ended: DateTime<Utc>,
    pub outcome: String,
    pub error: Option<String>,
}

/// When the daemon last started: a `catch_up = "skip"` DAG's scheduled times from before it were
/// left on purpose, not missed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DaemonStart {
    pub pid: u32,
    pub started: DateTime<Utc>,
}

fn daemon_path(data: &Path) -> PathBuf {
    state_dir(data).join("daemon.json")
}

/// Records the daemon's start, replacing the record of the one before.
pub(super) fn record_daemon_start(data: &Path, start: &DaemonStart) -> Result<(), ScheduleError> {
    write_json_atomic(&daemon_path(data), start)
}

/// The last daemon start recorded, if any (an unreadable record counts as none).
pub fn daemon_start(data: &Path) -> Option<DaemonStart> {
    let text = std::fs::read_to_string(daemon_path(data)).ok()?;
    serde_json::from_str(&text).ok()
}

/// The jobs in a carried-over list, each once (the last line of a job wins); a line cut short by
/// a crash is left out, because its job's record is still in `cur/` and is ingested again.
pub(super) fn read_carried(path: &Path) -> Vec<IngestedJob> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut jobs: Vec<IngestedJob> = Vec::new();
    for job in text
        .lines()
        .filter_map(|l| serde_json::from_str::<IngestedJob>(l).ok())
    {
        jobs.retain(|j| !(j.day == job.day && j.part == job.part));
        jobs.push(job);
    }
    jobs
}

/// Appends one job to a carried-over list and syncs it, so that it survives a crash that
/// follows.
pub(super) fn append_carried(path: &Path, job: &IngestedJob) -> Result<(), String> {
    use std::io::Write;
    let mut line = serde_json::to_string(job).map_err(|e| e.to_string())?;
    line.push('\n');
    let result = (|| {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        file.write_all(line.as_bytes())?;
        file.sync_data()
    })();
    result.map_err(|e| format!("cannot record the job in {}: {e}", path.display()))
}

/// `<data>/.schedule`: locks, last runs and carried-over jobs (not a table).
pub fn state_dir(data: &Path) -> PathBuf {
    data.join(".schedule")
}

pub(super) fn state_path(data: &Path, dag: &str, what: &str) -> PathBuf {
    state_dir(data).join(format!("{dag}.{what}"))
}

/// The last run of `dag`, if it has run.
pub fn last_run(data: &Path, dag: &str) -> Option<LastRun> {
    let text = std::fs::read_to_string(state_path(data, dag, "state.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes `value` as JSON to `path` atomically ([`jobsight_base::safe_fs::write_replacing`]: a hidden
/// temporary file created where nothing is, fsync, rename).
pub(super) fn write_json_atomic(path: &Path, value: &impl Serialize) -> Result<(), ScheduleError> {
    let err = |path: PathBuf, source| ScheduleError::State { path, source };
    let text = serde_json::to_vec_pretty(value)
        .map_err(|e| err(path.to_path_buf(), std::io::Error::other(e)))?;
    let parent = path.parent().unwrap_or(Path::new("."));
    let dir = jobsight_base::safe_fs::Dir::create_all(parent)
        .map_err(|e| err(parent.to_path_buf(), e))?;
    jobsight_base::safe_fs::write_replacing(
        &dir,
        path.file_name().unwrap_or_default(),
        err,
        |mut file, tmp| {
            use std::io::Write;
            file.write_all(&text)
                .map_err(|e| err(tmp.to_path_buf(), e))?;
            Ok(file)
        },
    )
    .map(|_| ())
}

/// The lock of one DAG, held while it runs; the kernel releases it when the process dies.
#[derive(Debug)]
pub struct DagLock {
    _file: File,
}

impl DagLock {
    pub fn acquire(data: &Path, dag: &str) -> Result<DagLock, ScheduleError> {
        let dir = state_dir(data);
        std::fs::create_dir_all(&dir).map_err(|source| ScheduleError::State {
            path: dir.clone(),
            source,
        })?;
        let path = state_path(data, dag, "lock");
        match jobsight_base::lockfile::try_lock(&path) {
            Ok(Some(file)) => Ok(DagLock { _file: file }),
            Ok(None) => Err(ScheduleError::Busy {
                dag: dag.to_string(),
                path,
            }),
            Err(source) => Err(ScheduleError::State { path, source }),
        }
    }
}
