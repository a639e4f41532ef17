//! The classify stage: the rule book applied to every job of a day, or to one job right after its
//! features were computed.
//!
//! Inputs: the day's `jobs`, `job_summary`, `features_job` and `features` partitions ([`input`]).
//! Outputs: `findings`, `classes` and `thresholds` rows, each tagged with the rule book's version.
//! The whole-day run writes part `classify` of each day and removes the per-job parts
//! (`part-job-*`), so running it again replaces its rows and never duplicates them; the per-job
//! path writes part `job-<id>`. A job without features still gets the rules that need no
//! telemetry (its outcome, its wall-time request) and the "insufficient telemetry" finding.
//!
//! The core is [`crate::evaluate`]: pure, and tested directly. [`backtest`] runs two rule
//! books over stored history and reports what changes.

pub mod backtest;
pub mod history;
pub mod input;
pub mod workflow;

use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::error::ArrowError;

use crate as rules;
use crate::{RuleBook, Verdict};
use jobsight_warehouse::catalog::rows::{self, ClassRow, FindingRow, ThresholdRow};
use jobsight_warehouse::catalog::{self, CatalogError, Table};

/// The tables this stage writes.
pub const TABLES: [Table; 3] = [Table::Findings, Table::Classes, Table::Thresholds];

#[derive(Debug, thiserror::Error)]
pub enum ClassifyError {
    #[error("cannot read {path}: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("job {job_id} is not in the jobs of {day}")]
    UnknownJob { job_id: String, day: NaiveDate },
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("cannot build the {table} batch: {source}")]
    Batch {
        table: &'static str,
        source: ArrowError,
    },
}

impl ClassifyError {
    pub(crate) fn read(path: &Path, reason: impl std::fmt::Display) -> ClassifyError {
        ClassifyError::Read {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }
}

/// Counts of one run, for the command line.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Classified {
    pub days: usize,
    pub jobs: usize,
    pub not_judgeable: usize,
    pub findings: usize,
    pub critical: usize,
    pub warning: usize,
    pub info: usize,
    pub classes: usize,
}

impl Classified {
    /// `12 findings (1 critical, 9 warning, 2 info)`: how the command line and the demo say it.
    pub fn findings_by_severity(&self) -> String {
        format!(
            "{} findings ({} critical, {} warning, {} info)",
            self.findings, self.critical, self.warning, self.info
        )
    }

    pub fn add(&mut self, verdicts: &[Verdict]) {
        self.jobs += verdicts.len();
        for v in verdicts {
            self.not_judgeable += usize::from(!v.judgeable);
            self.classes += v.classes.len();
            for f in &v.findings {
                self.findings += 1;
                match f.severity {
                    rules::Severity::Critical => self.critical += 1,
                    rules::Severity::Warning => self.warning += 1,
                    rules::Severity::Info => self.info += 1,
                }
            }
        }
    }
}

/// The verdicts of a day's jobs (all, or those in `only`), without writing anything.
pub fn verdicts(
    data: &Path,
    day: NaiveDate,
    book: &RuleBook,
    settings: &rules::Settings,
    only: Option<&[String]>,
    part: Option<&str>,
) -> Result<Vec<Verdict>, ClassifyError> {
    verdicts_by(data, day, book, settings, only, part, JOBS_AT_A_TIME)
}

/// [`verdicts`], reading and judging `at_a_time` jobs at a time.
fn verdicts_by(
    data: &Path,
    day: NaiveDate,
    book: &RuleBook,
    settings: &rules::Settings,
    only: Option<&[String]>,
    part: Option<&str>,
    at_a_time: usize,
) -> Result<Vec<Verdict>, ClassifyError> {
    let ids = match only {
        Some(ids) => ids.to_vec(),
        None => input::job_ids(data, day, part)?,
    };
    let mut verdicts = Vec::with_capacity(ids.len());
    for group in ids.chunks(at_a_time.max(1)) {
        let mut jobs = input::read_day(data, day, Some(group), part)?;
        history::attach_or_warn(data, day, &mut jobs, settings);
        workflow::attach_or_warn(data, day, &mut jobs);
        verdicts.extend(jobs.into_iter().map(|mut job| {
            rules::prepare(&mut job, settings);
            rules::evaluate(book, &job, settings)
        }));
    }
    Ok(verdicts)
}

/// Jobs read and judged at a time (in the order of their ids, so the verdicts come in the order
/// one group would give): what the rules read of a job, its features of every node and metric,
/// is held until it is judged, and a 10,000-node day's 25,000 jobs read at once took 9.3 GiB.
/// Each group reads the day's tables again, skipping the batches that hold none of its jobs.
pub const JOBS_AT_A_TIME: usize = 2_500;

/// The whole-day run: classifies every job of `day` and writes part `classify`, replacing the
/// per-job parts. The models' verdicts are another stage's (`model::predict`); the
/// scheduler runs it on these verdicts.
pub fn classify_day(
    data: &Path,
    day: NaiveDate,
    book: &RuleBook,
    settings: &rules::Settings,
) -> Result<Vec<Verdict>, ClassifyError> {
    let verdicts = verdicts(data, day, book, settings, None, None)?;
    write(data, day, "classify", &verdicts, &book.version)?;
    for table in TABLES {
        catalog::remove_job_parts(data, table, day)?;
    }
    Ok(verdicts)
}

/// The per-job path: classifies one job of `day` (after its features were written) and writes
/// part `job-<part>`.
pub fn classify_job(
    data: &Path,
    day: NaiveDate,
    job_id: &str,
    part: &str,
    book: &RuleBook,
    settings: &rules::Settings,
) -> Result<Verdict, ClassifyError> {
    let only = [job_id.to_string()];
    let part = if part.starts_with("job-") {
        part.to_string()
    } else {
        format!("job-{part}")
    };
    // Only the job's own parts: the rest of the day is other jobs.
    let verdict = verdicts(data, day, book, settings, Some(&only), Some(&part))?
        .into_iter()
        .next()
        .ok_or_else(|| ClassifyError::UnknownJob {
            job_id: job_id.to_string(),
            day,
        })?;
    write(
        data,
        day,
        &part,
        std::slice::from_ref(&verdict),
        &book.version,
    )?;
    Ok(verdict)
}

/// The three tables' batches of `verdicts`.
pub fn batches(verdicts: &[Verdict], version: &str) -> Result<[RecordBatch; 3], ClassifyError> {
    let error = |table: Table| {
        move |source| ClassifyError::Batch {
            table: table.name(),
            source,
        }
    };
    let time = |t: Option<i64>| t.and_then(rows::from_micros);
    let findings: Vec<FindingRow> = verdicts
        .iter()
        .flat_map(|v| v.findings.iter().map(move |f| (v.restart_count, f)))
        .map(|(restart_count, f)| FindingRow {
            job_id: f.job_id.clone(),
            restart_count,
            rule: f.rule.clone(),
            title: f.title.clone(),
            group: f.group.name().to_string(),
            method_group: f.group.method_number(),
            severity: f.severity.name().to_string(),
            node: f.node.clone(),
            window_start: time(f.window.map(|w| w.0)),
            window_end: time(f.window.map(|w| w.1)),
            message: f.message.clone(),
            fix: f.fix.clone(),
            why: f.why.join("; "),
            tools: f.tools.join(", "),
            evidence: f.evidence_json(),
            rules_version: version.to_string(),
        })
        .collect();
    let classes: Vec<ClassRow> = verdicts
        .iter()
        .flat_map(|v| {
            v.classes.iter().map(move |(class, name)| ClassRow {
                job_id: v.job_id.clone(),
                restart_count: v.restart_count,
                class: class.clone(),
                name: name.clone(),
                rules_version: version.to_string(),
            })
        })
        .collect();
    let thresholds: Vec<ThresholdRow> = verdicts
        .iter()
        .flat_map(|v| {
            v.thresholds.iter().map(move |t| ThresholdRow {
                job_id: v.job_id.clone(),
                restart_count: v.restart_count,
                characteristic: t.characteristic.clone(),
                title: t.title.clone(),
                limits: t.limits.clone(),
                value: t.value,
                level: t.level.to_string(),
                low_below: t.low_below,
                high_from: t.high_from,
            })
        })
        .collect();
    Ok([
        FindingRow::batch(&findings).map_err(error(Table::Findings))?,
        ClassRow::batch(&classes).map_err(error(Table::Classes))?,
        ThresholdRow::batch(&thresholds).map_err(error(Table::Thresholds))?,
    ])
}

fn write(
    data: &Path,
    day: NaiveDate,
    part: &str,
    verdicts: &[Verdict],
    version: &str,
) -> Result<(), ClassifyError> {
    for (table, batch) in TABLES.into_iter().zip(batches(verdicts, version)?) {
        catalog::write_part(data, table, day, part, &[batch])?;
    }
    Ok(())
}
