//! What the schedule hands a stage from another, since the stages never call each other: the
//! rules' evidence to the models, and the diagnosis model's feature importance to the report
//! pages.

use std::path::Path;

use chrono::NaiveDate;

use crate::config::Settings;
use crate::model::predict::{JobPrediction, Models};
use crate::rules::{RuleBook, Verdict};

/// What the models' verdicts are combined with: each job's id, the anomaly types its rules
/// found evidence of and the problems of its critical findings. The one place the rules' results reach the model stage.
pub fn rule_evidence(
    book: &RuleBook,
    verdicts: &[Verdict],
) -> Vec<crate::model::predict::RuleEvidence> {
    verdicts
        .iter()
        .map(|v| crate::model::predict::RuleEvidence {
            job_id: v.job_id.clone(),
            anomalies: v.anomalies(book),
            critical: v.critical_problems(book),
        })
        .collect()
}

/// The models' verdicts on jobs the rules have judged, each joined with its rules' evidence
/// ([`rule_evidence`]), written into `predictions`: `part` is the one job's own part (the per-job
/// path), `None` the whole day's. The one place the classify-then-predict pairing is written:
/// the schedule's predict step and `jobsight classify` both call it.
pub fn predict_judged(
    data: &Path,
    day: NaiveDate,
    part: Option<&str>,
    models: &Models,
    book: &RuleBook,
    verdicts: &[Verdict],
) -> Result<Vec<JobPrediction>, crate::model::ModelError> {
    crate::model::predict::predict_and_write(
        data,
        day,
        part,
        models,
        &rule_evidence(book, verdicts),
    )
}

/// What the report pages need from outside the warehouse: the configured diagnosis model's
/// feature importance, read from its file's header (none without a model, or when the file
/// cannot be read: the pages then rank metrics by the findings and the healthy band alone).
pub fn report_inputs(settings: &Settings) -> crate::report::Inputs {
    let importance = settings
        .model
        .diagnosis
        .as_deref()
        .and_then(|path| crate::model::file::ModelFile::header(path).ok())
        .map(|h| {
            h.importance
                .into_iter()
                .map(|i| (i.feature, i.f1_drop))
                .collect()
        })
        .unwrap_or_default();
    crate::report::Inputs { importance }
}
