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
use super::settings::IngestSettings;
use super::sources::{
    Accounted, AccountingSource, Fetched, JobSpan, Prefetched, Sacct, TelemetrySource, Unaccounted,
};
use super::{JobRow, JobStepRow, TelemetrySink};
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
    let ready = accounted_records(spool, &names, accounting, limit, now, &mut outcomes)?;

    // Progress counts the records decided already (waiting, unreadable) with those finished.
    let mut finished = outcomes.iter().filter(|o| o.is_some()).count();
    let mut finish = |ready: Ready, fetched: Option<Fetched>| -> Result<(), IngestError> {
        let name = &names[ready.index];
        let prefetched = telemetry
            .zip(fetched)
            .map(|(source, fetched)| Prefetched::new(source, fetched));
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
            match source.fetch_together(&jobs, true) {
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

/// The claimed records `names` to try in this run, each with its accounting. A record that
/// cannot be read is quarantined and one whose next attempt is not due is left waiting, each
/// with its outcome in `outcomes`; beyond `limit` records tried, the rest are left for later.
fn accounted_records(
    spool: &Spool,
    names: &[std::ffi::OsString],
    accounting: &dyn AccountingSource,
    limit: Option<usize>,
    now: DateTime<Utc>,
    outcomes: &mut [Option<RecordOutcome>],
) -> Result<Vec<Ready>, IngestError> {
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
    Ok(ready)
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
