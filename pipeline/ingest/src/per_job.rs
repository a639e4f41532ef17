//! The per-job ingest step: claimed spool records become `jobs` rows, `job_steps` rows and
//! `telemetry` rows.
//!
//! Input: the spool. The step claims what the hook enqueued (`new/` → `cur/`), then works through
//! every record in `cur/`, including ones an earlier run left pending or was interrupted on. For
//! each job it asks Slurm accounting (`sacct`, see [`super::sacct`]) for the final record, waits
//! until the telemetry source can have the job's last samples, fetches the telemetry of the job's
//! nodes over its run time, and writes both into the warehouse. Output: the record moves to
//! `done/`.
//!
//! Idempotency: a job's parts are named after the job (cluster, id, restart, submit time), and
//! stale chunks of an earlier attempt are removed first, so running the step again, or crashing
//! half-way and running it again, replaces rather than duplicates. Telemetry and the job's steps
//! are written before the job row and the record moves last, so an interrupted job is simply
//! done again.
//!
//! Failure: nothing is lost. A job whose accounting has not settled, whose sacct cannot run, or
//! whose telemetry fetch fails (Prometheus down, slow, answering errors or garbage) stays in
//! `cur/` with a `.pending` note (attempts, reason, next attempt, with exponential backoff). Only
//! when it is still pending `give_up_after` after its enqueue does it go to `failed/`, with the
//! last reason beside it; an admin moves it back into `new/` to try again. An unreadable record goes
//! to `failed/` at once. One step runs at a time per spool (a lock file), so two schedulers never
//! fetch the same job twice.
//!
//! The step stops at the warehouse: what is computed from a job's rows (features, rules, models,
//! emails) is the business of the steps after it, which the application's `schedule` runs on the jobs
//! this step reports as done ([`Outcome::Done`] names each job's day, part and telemetry files).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use slurm_hooks::SpoolRecord;

use super::node_coverage::{self, NodeCoverage};
use super::prometheus::Prometheus;
use super::settings::IngestSettings;
use super::{JobRow, JobStepRow, TelemetrySink, sacct, sacct_neighbours, sacct_steps};
use crate::spool::{ClaimReport, PendingNote, Spool, SpoolError};
use jobsight_warehouse::catalog::{self, CatalogError, Table};

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error(transparent)]
    Spool(#[from] SpoolError),
    #[error("cannot open the lock file {path}: {source}")]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "another `jobsight ingest` is working on this spool (it holds {path}); try again later"
    )]
    Busy { path: PathBuf },
}

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
    fn fetch_together(&self, jobs: &[&JobSpan]) -> Result<Vec<Fetched>, String> {
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
    fn fetch_together(&self, jobs: &[&JobSpan]) -> Result<Vec<Fetched>, String> {
        Prometheus::fetch_together(self, jobs).map_err(|e| e.to_string())
    }
}

/// What happened to one record in this run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// In the warehouse; the record is in `done/`.
    Done {
        day: NaiveDate,
        /// The job id as stored in `jobs`.
        job_id: String,
        /// The name of the job's parts in every table (see [`part_name`]): the steps after
        /// ingest write the job's features and findings under the same name.
        part: String,
        state: Option<String>,
        telemetry_rows: u64,
        /// The telemetry files written for the job, for its features.
        #[serde(skip)]
        telemetry_files: Vec<PathBuf>,
        /// Why there is no telemetry, when there is none by design (the job never ran, no source).
        note: Option<String>,
    },
    /// Tried and not finished: stays in `cur/`.
    Pending {
        attempts: u32,
        next_attempt: DateTime<Utc>,
        reason: String,
    },
    /// Its next attempt is not due yet: not tried.
    Waiting {
        next_attempt: DateTime<Utc>,
        reason: String,
    },
    /// Moved to `failed/`.
    Quarantined { reason: String },
    /// Already in the warehouse: its day was compacted with the job in it (a run stopped between
    /// storing the job and finishing its record, and the nightly compaction came first). Stored
    /// again it would count twice, so the record is finished without writing; the nightly run
    /// has judged the job with its day.
    AlreadyStored { day: NaiveDate, part: String },
}

#[derive(Debug, Clone, Serialize)]
pub struct RecordOutcome {
    pub file: String,
    /// Cluster and job id, when the record could be read.
    pub job: Option<String>,
    #[serde(flatten)]
    pub outcome: Outcome,
}

#[derive(Debug, Default, Serialize)]
pub struct IngestReport {
    pub claim: ClaimReport,
    pub records: Vec<RecordOutcome>,
    /// The jobs whose telemetry was fetched together with other jobs'.
    pub together: Together,
}

/// How the telemetry source was asked for several jobs at once ([`TelemetrySource::groups`]).
#[derive(Debug, Default, Serialize)]
pub struct Together {
    /// Groups fetched together, and the jobs in them.
    pub groups: usize,
    pub jobs: usize,
    /// Why a group could not be fetched together (its jobs were then fetched on their own).
    pub failed: Vec<String>,
}

impl IngestReport {
    pub fn count(&self, kind: &str) -> usize {
        self.records
            .iter()
            .filter(|r| {
                matches!(
                    (&r.outcome, kind),
                    (Outcome::Done { .. }, "done")
                        | (Outcome::Pending { .. }, "pending")
                        | (Outcome::Waiting { .. }, "waiting")
                        | (Outcome::Quarantined { .. }, "quarantined")
                        | (Outcome::AlreadyStored { .. }, "already_stored")
                )
            })
            .count()
    }
}

/// Takes the spool's ingest lock without waiting: one ingest per spool at a time, and nothing
/// rewrites the warehouse's per-job parts (compaction) while an ingest writes them. Held until
/// the returned file is dropped; the kernel releases it when the holder dies.
pub fn lock(spool: &Spool) -> Result<std::fs::File, IngestError> {
    let lock_path = spool.root().join(".ingest.lock");
    match jobsight_base::lockfile::try_lock(&lock_path) {
        Ok(Some(lock)) => Ok(lock),
        Ok(None) => Err(IngestError::Busy { path: lock_path }),
        Err(source) => Err(IngestError::Lock {
            path: lock_path,
            source,
        }),
    }
}

/// Runs the step once: claim, then work through `cur/` (at most `limit` records tried), as of
/// `now`. `progress(done, total)` is called after each record.
pub fn run(
    spool: &Spool,
    data: &Path,
    settings: &IngestSettings,
    telemetry: Option<&dyn TelemetrySource>,
    limit: Option<usize>,
    now: DateTime<Utc>,
    progress: impl FnMut(usize, usize),
) -> Result<IngestReport, IngestError> {
    let sacct = Sacct {
        program: settings.sacct.clone(),
    };
    run_with(
        spool,
        data,
        settings,
        &sacct,
        telemetry,
        limit,
        now,
        progress,
        &mut |_, _| Ok(()),
    )
}

/// [`run`] with accounting from `accounting`, calling `stored(job, outcome)` (job: cluster:id)
/// for each job once it is in the warehouse and before its record leaves `cur/`: whoever works on the stored jobs next records them there, so that a
/// crash between the two loses none (the record is done again). An error from `stored` keeps
/// the job pending with that reason.
#[allow(clippy::too_many_arguments)]
pub fn run_with(
    spool: &Spool,
    data: &Path,
    settings: &IngestSettings,
    accounting: &dyn AccountingSource,
    telemetry: Option<&dyn TelemetrySource>,
    limit: Option<usize>,
    now: DateTime<Utc>,
    mut progress: impl FnMut(usize, usize),
    stored: &mut dyn FnMut(&str, &Outcome) -> Result<(), String>,
) -> Result<IngestReport, IngestError> {
    let lock = lock(spool)?;
    // Under the lock, so no live writer's temporary is taken for a leftover.
    spool.remove_stale_temporaries();

    let mut report = IngestReport {
        claim: spool.claim(None)?,
        ..IngestReport::default()
    };
    let names = spool.claimed_names()?;
    let total = names.len();
    // First every record's accounting, then the telemetry of the jobs that are due, a group
    // of them at a time where the source can ask for several together, then each job on its
    // own.
    let mut outcomes: Vec<Option<RecordOutcome>> = vec![None; names.len()];
    let mut ready = Vec::new();
    let mut tried = 0;
    for (i, name) in names.iter().enumerate() {
        let file = name.to_string_lossy().into_owned();
        let record = match spool.read_claimed(name) {
            Ok(record) => record,
            Err(reason) => {
                spool.quarantine(name, &reason)?;
                outcomes[i] = Some(RecordOutcome {
                    file,
                    job: None,
                    outcome: Outcome::Quarantined { reason },
                });
                continue;
            }
        };
        let job = Some(format!(
            "{}:{}",
            record
                .cluster
                .as_ref()
                .map(|c| String::from_utf8_lossy(c.as_bytes()).into_owned())
                .unwrap_or_default(),
            record.job_id
        ));
        let note = spool.pending_note(name);
        if let Some(note) = note.as_ref().filter(|n| n.next_attempt > now) {
            outcomes[i] = Some(RecordOutcome {
                file,
                job,
                outcome: Outcome::Waiting {
                    next_attempt: note.next_attempt,
                    reason: note.reason.clone(),
                },
            });
            continue;
        }
        if limit.is_some_and(|l| tried >= l) {
            continue;
        }
        tried += 1;
        let accounted = accounting.accounted(&record);
        ready.push(Ready {
            index: i,
            file,
            job,
            record,
            note,
            accounted,
        });
    }

    let mut finished = 0;
    let mut finish = |ready: Ready, fetched: Option<Fetched>| -> Result<(), IngestError> {
        let name = &names[ready.index];
        let prefetched = telemetry
            .zip(fetched)
            .map(|(source, fetched)| Prefetched { source, fetched });
        let source = match &prefetched {
            Some(p) => Some(p as &dyn TelemetrySource),
            None => telemetry,
        };
        let outcome = match ingest_one(ready.accounted, data, source, now).and_then(|done| {
            stored(ready.job.as_deref().unwrap_or("?"), &done)
                .map(|()| done)
                .map_err(not_yet)
        }) {
            Ok(done) => {
                spool.finish(name)?;
                done
            }
            Err(NotYet {
                reason,
                set_aside: true,
                ..
            }) => {
                spool.quarantine(name, &reason)?;
                Outcome::Quarantined { reason }
            }
            Err(NotYet {
                reason, retry_at, ..
            }) => postpone(
                spool,
                name,
                &ready.record,
                ready.note,
                settings,
                now,
                reason,
                retry_at,
            )?,
        };
        outcomes[ready.index] = Some(RecordOutcome {
            file: ready.file,
            job: ready.job,
            outcome,
        });
        finished += 1;
        progress(finished, total);
        Ok(())
    };

    let mut alone: Vec<Option<Ready>> = ready.into_iter().map(Some).collect();
    if let Some(source) = telemetry {
        let (spans, of_span) = due_spans(&alone, source, now);
        for group in source.groups(&spans) {
            let jobs: Vec<&JobSpan> = group.iter().map(|&s| &spans[s]).collect();
            match source.fetch_together(&jobs) {
                Ok(fetched) if fetched.len() == jobs.len() => {
                    report.together.groups += 1;
                    report.together.jobs += jobs.len();
                    for (&s, fetched) in group.iter().zip(fetched) {
                        if let Some(ready) = alone[of_span[s]].take() {
                            finish(ready, Some(fetched))?;
                        }
                    }
                }
                Ok(fetched) => report.together.failed.push(format!(
                    "{} answers for {} jobs",
                    fetched.len(),
                    jobs.len()
                )),
                Err(reason) => report.together.failed.push(reason),
            }
        }
    }
    for ready in alone.into_iter().flatten() {
        finish(ready, None)?;
    }
    report.records = outcomes.into_iter().flatten().collect();
    drop(lock);
    Ok(report)
}

/// A record whose job is tried in this run, with its accounting.
struct Ready {
    /// Its place among the claimed records.
    index: usize,
    file: String,
    job: Option<String>,
    record: SpoolRecord,
    note: Option<PendingNote>,
    accounted: Result<Accounted, Unaccounted>,
}

/// The jobs among `ready` whose telemetry `source` can give now, and for each the index in
/// `ready` it came from.
fn due_spans(
    ready: &[Option<Ready>],
    source: &dyn TelemetrySource,
    now: DateTime<Utc>,
) -> (Vec<JobSpan>, Vec<usize>) {
    let mut spans = Vec::new();
    let mut of_span = Vec::new();
    for (r, ready) in ready.iter().enumerate() {
        let Some(Ready {
            accounted: Ok(Accounted { row, .. }),
            ..
        }) = ready
        else {
            continue;
        };
        let (Some(start), Ok(nodes)) = (row.start, job_nodes(row)) else {
            continue;
        };
        if now < source.ready_at(row.end) {
            continue;
        }
        spans.push(JobSpan {
            job_id: row.job_id.clone(),
            cluster: row.cluster.clone(),
            nodes,
            start,
            end: row.end,
        });
        of_span.push(r);
    }
    (spans, of_span)
}

/// Why a job is not in the warehouse yet, and, when the wait has a known end (telemetry not
/// complete yet), when to look again.
struct NotYet {
    reason: String,
    retry_at: Option<DateTime<Utc>>,
    /// Asking again would give the same: into `failed/` at once.
    set_aside: bool,
}

fn not_yet(reason: String) -> NotYet {
    NotYet {
        reason,
        retry_at: None,
        set_aside: false,
    }
}

fn unaccounted(why: Unaccounted) -> NotYet {
    match why {
        Unaccounted::Wait(reason) => not_yet(reason),
        Unaccounted::SetAside(reason) => NotYet {
            set_aside: true,
            ..not_yet(reason)
        },
    }
}

/// Records one more failed attempt: a pending note with backoff, or quarantine when the job has
/// waited longer than `give_up_after`.
#[allow(clippy::too_many_arguments)]
fn postpone(
    spool: &Spool,
    name: &OsStr,
    record: &SpoolRecord,
    note: Option<PendingNote>,
    settings: &IngestSettings,
    now: DateTime<Utc>,
    reason: String,
    retry_at: Option<DateTime<Utc>>,
) -> Result<Outcome, IngestError> {
    // A wait with a known end (telemetry not complete yet) is not a failed attempt.
    let attempts = note.as_ref().map_or(0, |n| n.attempts) + u32::from(retry_at.is_none());
    let waited = now - record.enqueued_at;
    let give_up =
        chrono::Duration::from_std(settings.give_up_after).unwrap_or(chrono::TimeDelta::MAX);
    if waited >= give_up {
        let reason = format!(
            "gave up after {attempts} attempts over {}: {reason}",
            jobsight_base::text::human_duration(waited.num_seconds())
        );
        spool.quarantine(name, &reason)?;
        return Ok(Outcome::Quarantined { reason });
    }
    // Known waits end when they end; failures back off exponentially up to the maximum.
    let next_attempt = retry_at.unwrap_or_else(|| {
        let factor = 1u32 << attempts.saturating_sub(1).min(20);
        let delay = settings
            .retry_after
            .saturating_mul(factor)
            .min(settings.retry_max);
        now + chrono::Duration::from_std(delay).unwrap_or(chrono::TimeDelta::MAX)
    });
    let note = PendingNote {
        attempts,
        first_attempt: note.map_or(now, |n| n.first_attempt),
        last_attempt: now,
        next_attempt,
        reason: reason.clone(),
    };
    spool.write_pending_note(name, &note)?;
    Ok(Outcome::Pending {
        attempts,
        next_attempt,
        reason,
    })
}

/// The name of a job's parts: the same job always gets the same name.
pub fn part_name(row: &JobRow) -> String {
    format!(
        "job-{}-{}-r{}-{}",
        slurm_hooks::spool_dir::file_name_part(&slurm_hooks::Text::from(row.cluster.as_str()), 64),
        slurm_hooks::spool_dir::file_name_part(&slurm_hooks::Text::from(row.job_id.as_str()), 32),
        row.restart_count,
        row.submit.map_or(0, |s| s.timestamp())
    )
}

/// Telemetry and the job row of one record, given its accounting; `Err` leaves it pending.
fn ingest_one(
    accounted: Result<Accounted, Unaccounted>,
    data: &Path,
    telemetry: Option<&dyn TelemetrySource>,
    now: DateTime<Utc>,
) -> Result<Outcome, NotYet> {
    let Accounted {
        mut row,
        steps,
        notes: accounting_notes,
    } = accounted.map_err(unaccounted)?;
    let day = row.day();
    let name = part_name(&row);
    let write_err = |e: CatalogError| not_yet(format!("job {}: {e}", row.job_id));
    if catalog::compacted_parts(data, Table::Jobs, day)
        .map_err(write_err)?
        .contains(&name)
    {
        return Ok(Outcome::AlreadyStored { day, part: name });
    }

    let mut telemetry_rows = 0;
    let mut telemetry_files = Vec::new();
    let mut notes = Vec::new();
    let nodes = job_nodes(&row);
    match (telemetry, row.start, nodes) {
        (None, _, _) => notes.push("no telemetry source configured".to_string()),
        (Some(_), None, _) | (Some(_), _, Err(NoNodes::None)) => {
            notes.push("the job never ran on a node".to_string());
        }
        (Some(_), _, Err(NoNodes::Unreadable(why))) => notes.push(format!(
            "its node list cannot be expanded ({why}): stored without telemetry, judged on \
             accounting alone"
        )),
        (Some(source), Some(start), Ok(nodes)) => {
            let ready = source.ready_at(row.end);
            if now < ready {
                return Err(NotYet {
                    reason: format!(
                        "waiting until {} for {} to have the job's last samples",
                        ready.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                        source.name()
                    ),
                    retry_at: Some(ready),
                    set_aside: false,
                });
            }
            catalog::remove_parts(data, Table::Telemetry, day, &name).map_err(write_err)?;
            let mut sink = TelemetrySink::new(data, &name, 4 * catalog::ROW_GROUP_ROWS);
            let mut write_error = None;
            let mut coverage = NodeCoverage::new();
            let fetched = source.fetch(
                &row.job_id,
                &row.cluster,
                &nodes,
                start,
                row.end,
                &mut |n, m, ts, v| {
                    coverage.add(n, m, ts);
                    if write_error.is_none()
                        && let Err(e) = sink.push(day, &row.job_id, n, m, ts, v)
                    {
                        write_error = Some(e);
                    }
                },
            );
            let failure = match (fetched, write_error) {
                (Err(reason), _) => Some(reason),
                (Ok(_), Some(e)) => Some(format!("job {}: {e}", row.job_id)),
                (Ok(_), None) => None,
            };
            if let Some(reason) = failure {
                // What this attempt already wrote would be an incomplete job: take it back.
                for file in sink.abort() {
                    let _ = std::fs::remove_file(file);
                }
                return Err(not_yet(reason));
            }
            let (files, rows) = sink.finish().map_err(write_err)?;
            telemetry_rows = rows;
            telemetry_files = files;
            if rows == 0 {
                notes.push(format!("{} has no samples for the job", source.name()));
            }
            let node_failed = row.state.as_deref() == Some("NODE_FAIL");
            let jitter_s = source.jitter().as_secs_f64();
            notes.extend(coverage.notes(&nodes, source.name(), jitter_s, node_failed));
            // A node's clock that disagrees skews the times Slurm took there (its steps' start
            // and end), not the series, which the source stamps.
            match source.clock_offsets(&row.job_id, &row.cluster, &nodes, start, row.end) {
                Ok(offsets) => {
                    notes.extend(node_coverage::clock_note(&nodes, &offsets, source.name()))
                }
                Err(e) => notes.push(format!("the nodes' clocks were not checked: {e}")),
            }
        }
    }
    notes.extend(accounting_notes);
    // Stored one sentence a line (a sentence may hold "; " itself); logged on one line.
    row.note = (!notes.is_empty()).then(|| notes.join("\n"));
    let note = row.note.as_ref().map(|n| n.replace('\n', "; "));
    write_steps(data, day, &name, &row, &steps)?;
    let batch = JobRow::batch(std::slice::from_ref(&row))
        .map_err(|e| not_yet(format!("job {}: {e}", row.job_id)))?;
    catalog::write_part(data, Table::Jobs, day, &name, &[batch]).map_err(write_err)?;
    Ok(Outcome::Done {
        day,
        job_id: row.job_id.clone(),
        part: name,
        state: row.state.clone(),
        telemetry_rows,
        telemetry_files,
        note,
    })
}

/// Writes the job's `job_steps` part, named like its `jobs` part and written before it (the
/// `jobs` part is what marks the job stored, so a crash in between does the job again). A part
/// of an earlier attempt is replaced, or removed when there are no steps now; steps already
/// folded into the day file by a compaction after such an attempt are not written twice.
fn write_steps(
    data: &Path,
    day: NaiveDate,
    name: &str,
    row: &JobRow,
    steps: &[JobStepRow],
) -> Result<(), NotYet> {
    let write_err = |e: CatalogError| not_yet(format!("job {}: {e}", row.job_id));
    if steps.is_empty() {
        catalog::remove_part(data, Table::JobSteps, day, name).map_err(write_err)?;
        return Ok(());
    }
    if catalog::compacted_parts(data, Table::JobSteps, day)
        .map_err(write_err)?
        .contains(name)
    {
        return Ok(());
    }
    let batch =
        JobStepRow::batch(steps).map_err(|e| not_yet(format!("job {}: steps: {e}", row.job_id)))?;
    catalog::write_part(data, Table::JobSteps, day, name, &[batch]).map_err(write_err)?;
    Ok(())
}

/// Why a job has no nodes to fetch telemetry from.
enum NoNodes {
    /// It never got any (cancelled while pending).
    None,
    /// Its host list does not expand: what is wrong with it.
    Unreadable(String),
}

/// The job's nodes, expanded from Slurm's host list.
fn job_nodes(row: &JobRow) -> Result<Vec<String>, NoNodes> {
    let list = row.nodes.as_deref().unwrap_or("");
    if list.is_empty() || list == "None assigned" {
        return Err(NoNodes::None);
    }
    // The list quoted, cut to a readable length: it may be anything sacct printed.
    slurm_hooks::hostlist::expand(list).map_err(|e| {
        NoNodes::Unreadable(format!(
            "{:?}: {}",
            jobsight_base::text::clean(list, 80),
            e.reason
        ))
    })
}
