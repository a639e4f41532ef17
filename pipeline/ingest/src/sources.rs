//! Where the per-job ingest step gets a job's accounting and telemetry: the two traits it reads
//! through ([`AccountingSource`], [`TelemetrySource`]), Slurm's `sacct` and Prometheus as such
//! sources (the simulator and an LDMS store are others), and what a source that asks for several
//! jobs at once hands back ([`JobSpan`] in, [`Fetched`] out).

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use slurm_hooks::SpoolRecord;

use super::prometheus::Prometheus;
use super::{JobRow, JobStepRow, sacct, sacct_neighbours, sacct_steps};

/// Where a job's final accounting record comes from. A trait because two exist at run time:
/// Slurm's `sacct` ([`Sacct`]) and the simulator of `jobsight demo`.
pub trait AccountingSource {
    /// Short name for reports.
    fn name(&self) -> &'static str;
    /// The job's `jobs` row once its accounting has settled; `Err(reason)` while it has not (or
    /// cannot be asked), which keeps the job pending.
    fn job_row(&self, record: &SpoolRecord) -> Result<JobRow, String>;
    /// Everything the source knows of the job once its accounting has settled: its row, its
    /// steps and what could not be found out. What the ingest stores; a source that knows no
    /// steps keeps this default (the row of [`AccountingSource::job_row`], no steps).
    fn accounted(&self, record: &SpoolRecord) -> Result<Accounted, Unaccounted> {
        self.job_row(record)
            .map(|row| Accounted {
                row,
                steps: Vec::new(),
                notes: Vec::new(),
            })
            .map_err(Unaccounted::Wait)
    }
}

/// Why a job's accounting is not stored.
#[derive(Debug, Clone, PartialEq)]
pub enum Unaccounted {
    /// Not settled yet, or the source cannot be asked now: ask again later (with backoff, until
    /// `ingest.give_up_after`).
    Wait(String),
    /// The source's answer about the job cannot be read, and asking again would give the same:
    /// the record goes to `failed/` at once with the reason, for an admin to look at.
    SetAside(String),
}

/// One job as an accounting source reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Accounted {
    pub row: JobRow,
    /// Its `job_steps` rows (none where the source has no steps).
    pub steps: Vec<JobStepRow>,
    /// What is missing or may be incomplete and why (a failed neighbour query, steps that had
    /// not ended), one sentence each, for the job's note.
    pub notes: Vec<String>,
}

/// Slurm accounting through the `sacct` program: the settled run the record means, with exit
/// codes from the text output (see [`super::sacct`]).
#[derive(Debug, Clone)]
pub struct Sacct {
    pub program: PathBuf,
}

impl AccountingSource for Sacct {
    fn name(&self) -> &'static str {
        "sacct"
    }
    fn job_row(&self, record: &SpoolRecord) -> Result<JobRow, String> {
        self.accounted(record)
            .map(|accounted| accounted.row)
            .map_err(|why| match why {
                Unaccounted::Wait(reason) | Unaccounted::SetAside(reason) => reason,
            })
    }
    /// The settled run with its steps, and how many other jobs shared its nodes (one more
    /// sacct query; when it fails the count stays unknown and the note says why, and the job is
    /// stored all the same).
    fn accounted(&self, record: &SpoolRecord) -> Result<Accounted, Unaccounted> {
        let cluster = record
            .cluster
            .as_ref()
            .and_then(|c| c.as_str().map(String::from));
        let job_id = record.job_id;
        let (answer, exits) = match sacct::query(&self.program, job_id, cluster.as_deref()) {
            Ok(answer) => answer,
            Err(e @ sacct::SacctError::Failed { .. }) => {
                return Err(Unaccounted::Wait(e.to_string()));
            }
            Err(e) => {
                return Err(Unaccounted::SetAside(format!(
                    "sacct's answer for job {job_id} cannot be read: {e}"
                )));
            }
        };
        // A record of this id that could not be read may be the run the spool record means:
        // choosing among the others could store another run, so the job is set aside.
        if let Some((_, reason)) = answer
            .set_aside
            .iter()
            .find(|(id, _)| id.is_none_or(|id| id == job_id))
        {
            return Err(Unaccounted::SetAside(format!(
                "sacct's answer for job {job_id} has a record that cannot be read: {reason}"
            )));
        }
        let acct = match sacct::select(
            &answer.records,
            job_id,
            cluster.as_deref(),
            record.enqueued_at,
        ) {
            sacct::Selection::Settled(acct) => acct,
            sacct::Selection::Pending { reason } => return Err(Unaccounted::Wait(reason)),
            sacct::Selection::Missing => {
                return Err(Unaccounted::Wait(format!(
                    "job {job_id} is not in sacct yet"
                )));
            }
        };
        let mut row = sacct::job_row(record, acct, sacct::line_of(acct, &exits))
            .ok_or_else(|| Unaccounted::Wait(format!("sacct has no end time for job {job_id}")))?;
        let mut notes = acct.notes.clone();
        notes.extend(sacct::nodes_changed(&answer.records, acct));
        let steps = acct.steps.as_deref().unwrap_or_default();
        let unfinished = sacct_steps::unfinished(steps);
        if !unfinished.is_empty() {
            notes.push(format!(
                "steps {} had not ended when accounting was read",
                unfinished.join(", ")
            ));
        }
        match sacct_neighbours::neighbours(&self.program, &row, job_id, cluster.as_deref()) {
            Ok(count) => row.neighbours = count,
            Err(e) => notes.push(format!("jobs sharing its nodes unknown: {e}")),
        }
        Ok(Accounted {
            steps: sacct_steps::step_rows(&row, steps),
            row,
            notes,
        })
    }
}

/// Where telemetry comes from. A trait because several exist at run time (Prometheus here; the
/// simulator and an LDMS store are the others).
pub trait TelemetrySource {
    /// Short name for reports.
    fn name(&self) -> &'static str;
    /// The earliest time at which the telemetry of a job that ended at `end` is complete.
    fn ready_at(&self, end: DateTime<Utc>) -> DateTime<Utc>;
    /// How far apart one job's series of different nodes may start or end through the source
    /// alone (for the job's note: a smaller gap is not a node's doing).
    fn jitter(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
    /// Every sample of the job's nodes over `[start, end]`, as `emit(node, metric, ts_micros,
    /// value)`; `job_id` is Slurm's raw id and `cluster` the job's cluster. The error says what
    /// failed, naming the job.
    fn fetch(
        &self,
        job_id: &str,
        cluster: &str,
        nodes: &[String],
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        emit: &mut dyn FnMut(&str, &str, i64, f64),
    ) -> Result<u64, String>;
    /// Each node's clock minus the source's over `[start, end]`, in seconds, for the nodes whose
    /// clock the source can tell (for the job's note); nothing when it cannot tell any.
    fn clock_offsets(
        &self,
        _job_id: &str,
        _cluster: &str,
        _nodes: &[String],
        _start: DateTime<Utc>,
        _end: DateTime<Utc>,
    ) -> Result<Vec<(String, f64)>, String> {
        Ok(Vec::new())
    }
    /// Groups of `jobs` (indexes into it) that [`TelemetrySource::fetch_together`] fetches in
    /// fewer requests than one per job; a job in no group is fetched on its own. None by
    /// default.
    fn groups(&self, _jobs: &[JobSpan]) -> Vec<Vec<usize>> {
        Vec::new()
    }
    /// The telemetry of one group of [`TelemetrySource::groups`], one answer per job in the
    /// order given, each the same samples in the same order as [`TelemetrySource::fetch`] would
    /// give for it. On an error the group's jobs are fetched on their own.
    /// `with_clock`: also each job's clock offsets ([`TelemetrySource::clock_offsets`]), else
    /// none.
    fn fetch_together(&self, jobs: &[&JobSpan], _with_clock: bool) -> Result<Vec<Fetched>, String> {
        Err(format!(
            "{} fetches no jobs together ({} asked)",
            self.name(),
            jobs.len()
        ))
    }
}

/// A job whose telemetry is due, as a source needs it to fetch it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpan {
    /// Slurm's raw id.
    pub job_id: String,
    pub cluster: String,
    pub nodes: Vec<String>,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

/// One job's telemetry fetched together with other jobs': its samples, in the order the source
/// emits them, and its nodes' clock offsets (or why they are not known).
#[derive(Debug, Clone, PartialEq)]
pub struct Fetched {
    /// The names the samples point into.
    pub nodes: Vec<String>,
    pub metrics: std::sync::Arc<[String]>,
    /// (index into `nodes`, index into `metrics`, Unix microseconds, value).
    pub samples: Vec<(u32, u32, i64, f64)>,
    pub clock: Result<Vec<(String, f64)>, String>,
}

/// A source's answer for a job from a [`Fetched`]: what was fetched together, the rest from the
/// source itself. Its `fetch` gives the fetched samples whatever it is asked.
pub struct Prefetched<'a> {
    source: &'a dyn TelemetrySource,
    fetched: Fetched,
}

impl std::fmt::Debug for Prefetched<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prefetched")
            .field("source", &self.source.name())
            .field("fetched", &self.fetched)
            .finish()
    }
}

impl<'a> Prefetched<'a> {
    pub fn new(source: &'a dyn TelemetrySource, fetched: Fetched) -> Prefetched<'a> {
        Prefetched { source, fetched }
    }
}

impl TelemetrySource for Prefetched<'_> {
    fn name(&self) -> &'static str {
        self.source.name()
    }
    fn ready_at(&self, end: DateTime<Utc>) -> DateTime<Utc> {
        self.source.ready_at(end)
    }
    fn jitter(&self) -> std::time::Duration {
        self.source.jitter()
    }
    fn fetch(
        &self,
        _job_id: &str,
        _cluster: &str,
        _nodes: &[String],
        _start: DateTime<Utc>,
        _end: DateTime<Utc>,
        emit: &mut dyn FnMut(&str, &str, i64, f64),
    ) -> Result<u64, String> {
        let Fetched {
            nodes,
            metrics,
            samples,
            ..
        } = &self.fetched;
        for &(node, metric, ts, value) in samples {
            emit(&nodes[node as usize], &metrics[metric as usize], ts, value);
        }
        Ok(samples.len() as u64)
    }
    fn clock_offsets(
        &self,
        _job_id: &str,
        _cluster: &str,
        _nodes: &[String],
        _start: DateTime<Utc>,
        _end: DateTime<Utc>,
    ) -> Result<Vec<(String, f64)>, String> {
        self.fetched.clock.clone()
    }
}

impl TelemetrySource for Prometheus {
    fn name(&self) -> &'static str {
        "prometheus"
    }
    fn ready_at(&self, end: DateTime<Utc>) -> DateTime<Utc> {
        end + self.settings().lag
    }
    /// Nodes are scraped at their own moments: a rate's first point comes a rate window after a
    /// series' first scrape, on the query's grid of `step`.
    fn jitter(&self) -> std::time::Duration {
        self.settings().rate_window + self.settings().step
    }
    fn fetch(
        &self,
        job_id: &str,
        cluster: &str,
        nodes: &[String],
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        emit: &mut dyn FnMut(&str, &str, i64, f64),
    ) -> Result<u64, String> {
        Prometheus::fetch(self, job_id, cluster, nodes, start, end, emit).map_err(|e| e.to_string())
    }
    fn clock_offsets(
        &self,
        job_id: &str,
        cluster: &str,
        nodes: &[String],
        start: DateTime<Utc>,
        end: DateTime<Utc>,
    ) -> Result<Vec<(String, f64)>, String> {
        Prometheus::clock_offsets(self, job_id, cluster, nodes, start, end)
            .map_err(|e| e.to_string())
    }
    fn groups(&self, jobs: &[JobSpan]) -> Vec<Vec<usize>> {
        Prometheus::groups(self, jobs)
    }
    fn fetch_together(&self, jobs: &[&JobSpan], with_clock: bool) -> Result<Vec<Fetched>, String> {
        Prometheus::fetch_together(self, jobs, with_clock).map_err(|e| e.to_string())
    }
}
