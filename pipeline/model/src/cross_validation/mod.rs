//! By-job cross-validation of a kind of model, for `jobsight model eval` without a model file:
//! the labelled jobs dealt into k folds stratified by kind ([`Labelled::folds`]), or one
//! application held out, or each application left out in turn. A model fitted on the other folds
//! judges each fold's windows, and the verdicts of every fold are pooled into one
//! [`EvalReport`]. On request it writes each fold's feature rows and every verdict, and it can
//! label some anomalous training jobs healthy to measure what labels that miss anomalies cost.
//!
//! The run is here; the folds are planned in `plan`, each fold is fitted and judged and its
//! verdicts pooled in `fit`, the figures are made in `report`, and what is written for other
//! tools in `export`.

use std::path::{Path, PathBuf};

use super::eval_report::EvalReport;
use super::labelled::Labelled;
use super::{Kind, LabelsFrom, ModelError, TrainOptions};

mod export;
mod fit;
mod plan;
mod report;

use fit::Pooled;
use plan::{Fold, contaminate, plan_folds};
use report::report;

/// What a cross-validation run is asked for.
#[derive(Debug, Clone, Default)]
pub struct CrossValidation {
    pub folds: usize,
    /// Hold out every job of this application (a job name, or its application as
    /// [`dataset::application_of`](crate::dataset::application_of) reads it) instead of k folds.
    pub hold_out: Option<String>,
    /// Leave each application out in turn (one fold per application): how the models do on
    /// applications they never saw.
    pub leave_out_each: bool,
    /// Write each fold's feature rows here.
    pub export: Option<PathBuf>,
    /// Write every judged window's verdict here (CSV; [`write_verdicts`](export::write_verdicts)).
    pub verdicts: Option<PathBuf>,
    /// Share of each fold's anomalous training jobs whose windows are labelled healthy, as
    /// history from production is (anomalies nobody noticed); the test jobs keep their truth.
    pub contaminate: f64,
    /// Active learning (the diagnosis only): in each fold, the model fitted on the other folds
    /// asks for the labels of this many test windows it is least sure of (the smallest share of
    /// votes for its top class), gets them from the labels (standing in for an admin), is fitted
    /// again with them and judged on the fold's other windows.
    pub active: usize,
    /// Windows asked for at a time, the model fitted again after each batch before it asks
    /// for the next (ALBADross's loop); 0 (or `active` or more): all of them at once.
    pub active_batch: usize,
    /// The anomaly score: judge each held-out job alone, as its application's first run, with
    /// no other runs of it to take a cut from (an application the model has no baseline of
    /// meets the score's own threshold), instead of against the cut of its other runs.
    pub no_history: bool,
    /// The diagnosis: fit the anomaly score in each fold too (as `Kind::Unsupervised` does,
    /// `no_history` included) and report the two together: a window anomalous when the score
    /// flags it over a cut of its application's history, or the diagnosis's top class is an
    /// anomaly (the eighth suite run's candidate, [`EvalReport::together`]; not kept).
    pub with_score: bool,
}

/// By-job cross-validation (or one application held out) of a kind of model on `data`.
pub fn cross_validate(
    data: &Path,
    kind: Kind,
    labels_from: &LabelsFrom,
    options: &TrainOptions,
    cv: &CrossValidation,
    progress: &mut dyn FnMut(&str),
) -> Result<EvalReport, ModelError> {
    if cv.with_score && (kind != Kind::Diagnosis || cv.active > 0 || cv.contaminate > 0.0) {
        return Err(ModelError::Fit(
            "the score is judged together with the diagnosis only, without active learning or \
             contamination"
                .into(),
        ));
    }
    progress("reading windows and labels");
    let mut labelled = Labelled::for_training(data, labels_from, kind, options)?;
    // The score reads its own features (the diagnosis's are relative to the job, by default).
    let score_data = cv
        .with_score
        .then(|| Labelled::for_training(data, labels_from, Kind::Unsupervised, options))
        .transpose()?;
    if labelled.rows.is_empty() {
        return Err(ModelError::NoData(format!(
            "no labelled windows in {} ({})",
            data.display(),
            labels_from.describe()
        )));
    }
    let plan = plan_folds(data, &labelled, cv, options.seed)?;
    let n_folds = plan.folds;
    let export = cv.export.as_deref();
    let truth_labels = labelled.labels.clone();
    let mut pooled = Pooled::default();
    for number in 0..n_folds {
        progress(&format!("fold {}/{n_folds}", number + 1));
        let test_pos = labelled.positions(|j| plan.fold_of.get(j) == Some(&number));
        let train_pos = labelled.positions(|j| plan.fold_of.get(j) != Some(&number));
        if test_pos.is_empty() || train_pos.is_empty() {
            continue;
        }
        // This fold's training labels, some anomalous jobs labelled healthy if asked; the truth
        // comes back at the end of the fold.
        labelled.labels.clone_from(&truth_labels);
        if cv.contaminate > 0.0 {
            pooled.contaminated_windows += contaminate(
                &mut labelled,
                &train_pos,
                |j| plan.fold_of.get(j) != Some(&number),
                cv.contaminate,
                options.seed.wrapping_add(number as u64),
            );
        }
        let fold = Fold {
            number,
            rows: test_pos.iter().map(|&p| labelled.rows[p]).collect(),
            train: train_pos,
            test: test_pos,
        };
        pooled.fold_starts.push((number, pooled.truth.len()));
        match kind {
            Kind::Diagnosis => {
                pooled.add_diagnosis(
                    &labelled,
                    &fold,
                    options,
                    export,
                    (cv.active, cv.active_batch),
                )?;
                if let Some(score_data) = &score_data {
                    pooled.add_together(
                        &labelled,
                        score_data,
                        &fold,
                        &plan.fold_of,
                        options,
                        cv,
                    )?;
                }
            }
            Kind::Unsupervised => {
                pooled.add_score(&labelled, &fold, &plan.fold_of, options, cv.no_history)?
            }
        }
    }
    labelled.labels = truth_labels;
    report(pooled, kind, &labelled, &plan, cv, options)
}
