//! What `jobsight model eval` reports ([`EvalReport`]), and the evaluation of a stored model on
//! the labelled windows of a warehouse ([`evaluate_model`]); a cross-validation reports the same
//! way. The figures themselves are [`evaluate`]'s; for an anomaly score the two classes are
//! healthy and anomalous ([`score_classes`]), a window flagged when its score is above 1.
//!
//! Not in [`evaluate`]: that module is the leaf the model file's header takes its figures from,
//! and evaluating a stored model reads the model file.

use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::dataset::{self, HEALTHY};
use super::evaluate::{self, Scores};
use super::file::{Body, Header, ModelFile};
use super::forest;
use super::labelled::Labelled;
use super::unsupervised::AnomalyScore;
use super::{DEFAULT_UNKNOWN_BELOW, Kind, LabelsFrom, ModelError};

/// The classes of an anomaly score's figures.
pub fn score_classes() -> Vec<String> {
    vec![HEALTHY.to_string(), "anomalous".to_string()]
}

/// Detection figures of an anomaly score on labelled windows: healthy vs. any anomaly.
pub fn score_figures(model: &AnomalyScore, data: &Labelled, positions: &[usize]) -> Scores {
    let rows: Vec<usize> = positions.iter().map(|&p| data.rows[p]).collect();
    let truth: Vec<u32> = positions
        .iter()
        .map(|&p| u32::from(data.labels[p] != 0))
        .collect();
    let predicted: Vec<Option<u32>> = model
        .judge(&data.windows, &rows, &data.applications)
        .into_iter()
        .map(|s| Some(u32::from(s > 1.0)))
        .collect();
    evaluate::scores(&score_classes(), &truth, &predicted)
}

/// What `jobsight model eval` reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EvalReport {
    pub kind: Kind,
    /// The model file, or the cross-validation that trained one per fold.
    pub model: Option<String>,
    pub folds: Option<usize>,
    pub hold_out: Option<String>,
    /// Leave-one-application-out: the figures of each application when it was left out (the
    /// overall figures pool every application's verdicts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_application: Vec<ApplicationScores>,
    pub jobs: usize,
    pub classes: Vec<String>,
    pub unknown_below: Option<f64>,
    /// Verdicts at the unknown threshold.
    pub scores: Scores,
    /// Diagnosis only: the top class whatever its share (no "unknown"), as other tools report.
    pub forced: Option<Scores>,
    /// Per-class figures of the anomaly score (share flagged by true class), for unsupervised.
    pub flagged_share: Vec<(String, f64)>,
    pub train_seconds: f64,
    pub predict_seconds: f64,
    pub windows_per_second: f64,
    /// The contamination test asked for (share of anomalous training jobs labelled healthy) and
    /// the training windows it relabelled, summed over the folds.
    #[serde(default)]
    pub contaminate: f64,
    #[serde(default)]
    pub contaminated_windows: usize,
    /// Active learning: test windows per fold labelled on request, and over the folds.
    #[serde(default)]
    pub active: usize,
    #[serde(default)]
    pub actively_labelled: usize,
    /// Windows asked for at a time (0: all at once).
    #[serde(default)]
    pub active_batch: usize,
    /// Refining rounds the models were trained with.
    #[serde(default)]
    pub refine: u8,
    /// The anomaly score: each judged job judged alone, with no other runs of its application
    /// among the judged to take a cut from (`--no-history`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_history: bool,
    /// The diagnosis only: its top class (whatever its share of the votes) asked only whether a
    /// window is healthy, as the score is judged (issue 70: on applications it never saw, far
    /// better than the score; docs/models.md, "The eighth run").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detection: Option<Detection>,
    /// The diagnosis with the anomaly score (`--with-score`): a window anomalous when the score
    /// flags it over a cut of its application's history or the top class is an anomaly (the
    /// eighth run's candidate, not kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub together: Option<Detection>,
}

/// Healthy against anomalous, for a way of flagging windows that is not the report's own
/// verdict ([`EvalReport::detection`], [`EvalReport::together`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Detection {
    /// Healthy against anomalous ([`score_classes`]) over every window judged.
    pub scores: Scores,
    /// The share of windows flagged, by true class.
    pub flagged_share: Vec<(String, f64)>,
    /// Each application when it was left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_application: Vec<ApplicationScores>,
}

/// One application's figures when the models were trained without it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApplicationScores {
    pub application: String,
    pub jobs: usize,
    pub scores: Scores,
}

/// Evaluates a stored model on the labelled windows of `data`.
pub fn evaluate_model(
    data: &Path,
    path: &Path,
    labels_from: &LabelsFrom,
) -> Result<EvalReport, ModelError> {
    let model = ModelFile::load(path, None)?;
    let header = &model.header;
    let classes = (header.kind == Kind::Diagnosis).then_some(header.classes.as_slice());
    let labelled = Labelled::read(
        data,
        labels_from,
        Some(&header.features),
        dataset::FeatureSet::default(),
        None,
        classes,
    )?;
    if labelled.rows.is_empty() {
        return Err(ModelError::NoData(format!(
            "no labelled windows in {} ({}) to evaluate on",
            data.display(),
            labels_from.describe()
        )));
    }
    check_window(path, header, &labelled)?;
    let all: Vec<usize> = (0..labelled.rows.len()).collect();
    let rows: Vec<usize> = labelled.rows.clone();
    let started = Instant::now();
    let (scores, forced, flagged) = match &model.body {
        Body::Diagnosis {
            prepared,
            forest,
            namer,
        } => {
            let votes =
                super::namer::votes(prepared, forest, namer.as_ref(), &labelled.windows, &rows)?;
            let unknown_below = header.unknown_below.unwrap_or(DEFAULT_UNKNOWN_BELOW);
            let decide = |threshold: f64| forest::decide(&votes, threshold);
            (
                evaluate::scores(&labelled.classes, &labelled.labels, &decide(unknown_below)),
                Some(evaluate::scores(
                    &labelled.classes,
                    &labelled.labels,
                    &decide(0.0),
                )),
                Vec::new(),
            )
        }
        Body::Unsupervised(score) => (
            score_figures(score, &labelled, &all),
            None,
            flagged_share(score, &labelled, &all),
        ),
    };
    let seconds = started.elapsed().as_secs_f64();
    Ok(EvalReport {
        kind: header.kind,
        model: Some(path.display().to_string()),
        folds: None,
        hold_out: None,
        per_application: Vec::new(),
        jobs: labelled.job_kind.len(),
        classes: if header.kind == Kind::Diagnosis {
            labelled.classes.clone()
        } else {
            score_classes()
        },
        unknown_below: header.unknown_below,
        scores,
        forced,
        flagged_share: flagged,
        train_seconds: header.training.seconds,
        predict_seconds: seconds,
        windows_per_second: rows.len() as f64 / seconds.max(1e-9),
        contaminate: 0.0,
        contaminated_windows: 0,
        active: 0,
        actively_labelled: 0,
        active_batch: 0,
        refine: header.training.refine,
        no_history: false,
        detection: None,
        together: None,
    })
}

fn check_window(path: &Path, header: &Header, data: &Labelled) -> Result<(), ModelError> {
    let (width, _) = data.windows.window()?;
    if width != header.window_s {
        return Err(ModelError::Invalid {
            path: path.to_path_buf(),
            reason: format!(
                "it was trained on {} s windows and the data has {width} s windows: compute the features with `--windows {}:{}` or train a model on these",
                header.window_s, header.window_s, header.stride_s
            ),
        });
    }
    Ok(())
}

/// The share of windows of each true class that the score flags.
fn flagged_share(model: &AnomalyScore, data: &Labelled, positions: &[usize]) -> Vec<(String, f64)> {
    let rows: Vec<usize> = positions.iter().map(|&p| data.rows[p]).collect();
    let flags: Vec<bool> = model
        .judge(&data.windows, &rows, &data.applications)
        .into_iter()
        .map(|s| s > 1.0)
        .collect();
    share_by_class(data, positions, &flags)
}

/// The share of `flags` set among the windows at `positions`, per true class present.
pub(crate) fn share_by_class(
    data: &Labelled,
    positions: &[usize],
    flags: &[bool],
) -> Vec<(String, f64)> {
    let mut counts = vec![(0u64, 0u64); data.classes.len()];
    for (&p, &f) in positions.iter().zip(flags) {
        let c = &mut counts[data.labels[p] as usize];
        c.0 += 1;
        c.1 += u64::from(f);
    }
    data.classes
        .iter()
        .zip(counts)
        .filter(|(_, c)| c.0 > 0)
        .map(|(name, c)| (name.clone(), c.1 as f64 / c.0 as f64))
        .collect()
}
