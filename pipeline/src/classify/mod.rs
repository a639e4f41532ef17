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
//! The core is [`crate::rules::evaluate`]: pure, and tested directly. [`backtest`] runs two rule
//! books over stored history and reports what changes.

pub mod backtest;
pub mod input;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::arrow::array::{
    ArrayRef, Float64Builder, RecordBatch, StringBuilder, TimestampMicrosecondBuilder, UInt8Builder,
};
use datafusion::arrow::error::ArrowError;

use crate::catalog::{self, CatalogError, Table};
use crate::model::ModelError;
use crate::model::predict::{self, Models};
use crate::rules::{self, RuleBook, Verdict};

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
    #[error(transparent)]
    Model(#[from] ModelError),
}

impl ClassifyError {
    pub(crate) fn read(path: &Path, reason: impl std::fmt::Display) -> ClassifyError {
        ClassifyError::Read {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }
}

/// A rule book with its settings, as the per-job path uses it.
#[derive(Debug, Clone)]
pub struct Classifier {
    pub book: Arc<RuleBook>,
    pub settings: rules::Settings,
    /// The models whose verdicts join the rules' in `predictions`, if a site runs any.
    pub models: Option<Arc<Models>>,
}

impl Classifier {
    /// The built-in book with the site directory of `settings` layered on top.
    pub fn load(settings: &rules::Settings) -> Result<Classifier, rules::RulesError> {
        Ok(Classifier {
            book: Arc::new(RuleBook::load(settings.dir.as_deref())?),
            settings: settings.clone(),
            models: None,
        })
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
    let jobs = input::read_day(data, day, only, part)?;
    Ok(jobs
        .into_iter()
        .map(|mut job| {
            rules::prepare(&mut job, settings);
            rules::evaluate(book, &job, settings)
        })
        .collect())
}

/// The whole-day run: classifies every job of `day` and writes part `classify`, replacing the
/// per-job parts. With `models`, also one verdict per job into `predictions`.
pub fn classify_day(
    data: &Path,
    day: NaiveDate,
    book: &RuleBook,
    settings: &rules::Settings,
    models: Option<&Models>,
) -> Result<(Vec<Verdict>, Vec<predict::JobPrediction>), ClassifyError> {
    let verdicts = verdicts(data, day, book, settings, None, None)?;
    write(data, day, "classify", &verdicts, &book.version)?;
    for table in TABLES {
        catalog::remove_job_parts(data, table, day)?;
    }
    let predictions = match models {
        Some(models) => {
            let predictions = predict::predict(data, day, None, models, book, &verdicts)?;
            predict::write(data, day, "classify", &predictions, &models.version())?;
            catalog::remove_job_parts(data, Table::Predictions, day)?;
            predictions
        }
        None => Vec::new(),
    };
    Ok((verdicts, predictions))
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
    models: Option<&Models>,
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
    if let Some(models) = models {
        let predictions = predict::predict(
            data,
            day,
            Some(&part),
            models,
            book,
            std::slice::from_ref(&verdict),
        )?;
        predict::write(data, day, &part, &predictions, &models.version())?;
    }
    Ok(verdict)
}

fn strings<'a>(values: impl Iterator<Item = Option<&'a str>>) -> ArrayRef {
    let mut b = StringBuilder::new();
    for v in values {
        b.append_option(v);
    }
    Arc::new(b.finish())
}

fn floats(values: impl Iterator<Item = Option<f64>>) -> ArrayRef {
    let mut b = Float64Builder::new();
    for v in values {
        b.append_option(v);
    }
    Arc::new(b.finish())
}

fn times(values: impl Iterator<Item = Option<i64>>) -> ArrayRef {
    let mut b = TimestampMicrosecondBuilder::new().with_timezone("UTC");
    for v in values {
        b.append_option(v);
    }
    Arc::new(b.finish())
}

/// The three tables' batches of `verdicts`.
pub fn batches(verdicts: &[Verdict], version: &str) -> Result<[RecordBatch; 3], ClassifyError> {
    let batch = |table: Table, columns: Vec<ArrayRef>| {
        RecordBatch::try_new(table.schema(), columns).map_err(|source| ClassifyError::Batch {
            table: table.name(),
            source,
        })
    };
    let findings: Vec<&rules::Finding> = verdicts.iter().flat_map(|v| &v.findings).collect();
    let why: Vec<String> = findings.iter().map(|f| f.why.join("; ")).collect();
    let tools: Vec<String> = findings.iter().map(|f| f.tools.join(", ")).collect();
    let evidence: Vec<String> = findings.iter().map(|f| f.evidence_json()).collect();
    let mut method_group = UInt8Builder::new();
    for f in &findings {
        method_group.append_option(f.group.method_number());
    }
    let findings_batch = batch(
        Table::Findings,
        vec![
            strings(findings.iter().map(|f| Some(f.job_id.as_str()))),
            strings(findings.iter().map(|f| Some(f.rule.as_str()))),
            strings(findings.iter().map(|f| Some(f.title.as_str()))),
            strings(findings.iter().map(|f| Some(f.group.name()))),
            Arc::new(method_group.finish()),
            strings(findings.iter().map(|f| Some(f.severity.name()))),
            strings(findings.iter().map(|f| f.node.as_deref())),
            times(findings.iter().map(|f| f.window.map(|w| w.0))),
            times(findings.iter().map(|f| f.window.map(|w| w.1))),
            strings(findings.iter().map(|f| Some(f.message.as_str()))),
            strings(findings.iter().map(|f| Some(f.fix.as_str()))),
            strings(why.iter().map(|s| Some(s.as_str()))),
            strings(tools.iter().map(|s| Some(s.as_str()))),
            strings(evidence.iter().map(|s| Some(s.as_str()))),
            strings(findings.iter().map(|_| Some(version))),
        ],
    )?;
    let classes: Vec<(&str, &(String, String))> = verdicts
        .iter()
        .flat_map(|v| v.classes.iter().map(move |c| (v.job_id.as_str(), c)))
        .collect();
    let classes_batch = batch(
        Table::Classes,
        vec![
            strings(classes.iter().map(|c| Some(c.0))),
            strings(classes.iter().map(|c| Some(c.1.0.as_str()))),
            strings(classes.iter().map(|c| Some(c.1.1.as_str()))),
            strings(classes.iter().map(|_| Some(version))),
        ],
    )?;
    let levels: Vec<(&str, &rules::Threshold)> = verdicts
        .iter()
        .flat_map(|v| v.thresholds.iter().map(move |t| (v.job_id.as_str(), t)))
        .collect();
    let thresholds_batch = batch(
        Table::Thresholds,
        vec![
            strings(levels.iter().map(|l| Some(l.0))),
            strings(levels.iter().map(|l| Some(l.1.characteristic.as_str()))),
            strings(levels.iter().map(|l| Some(l.1.title.as_str()))),
            strings(levels.iter().map(|l| Some(l.1.limits.as_str()))),
            floats(levels.iter().map(|l| l.1.value)),
            strings(levels.iter().map(|l| Some(l.1.level))),
            floats(levels.iter().map(|l| l.1.low_below)),
            floats(levels.iter().map(|l| l.1.high_from)),
        ],
    )?;
    Ok([findings_batch, classes_batch, thresholds_batch])
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
