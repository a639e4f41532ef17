//! Machine-learning diagnosis: what the telemetry of a job's windows says, beside what the rules
//! say. Two models, both trained from the warehouse and stored as versioned files ([`file`]):
//!
//! - **diagnosis** ([`forest`]): a random forest over the `windows` table's statistics that names
//!   the anomaly type of each window (HPAS names: cpuoccupy, cachecopy, membw, memeater, memleak,
//!   iobandwidth, iometadata, netoccupy) or "healthy", and says "unknown" when its top class is
//!   an anomaly fewer than `unknown_below` of its trees agree on (Taxonomist's confidence
//!   threshold; a healthy top class is healthy however few agree, [`forest::decide`]); by
//!   default a second forest ([`namer`]) names each window the first calls anomalous, and the
//!   share is then its trees';
//! - **unsupervised** ([`unsupervised`]): an anomaly score from healthy windows only, for a
//!   cluster without labels.
//!
//! Training reads every day with windows (`jobsight features --windows 60:15`), labels the
//! windows by the fixed protocol of [`dataset`], holds out a fifth of the jobs for the figures and
//! permutation importance stored in the file, then fits on all jobs ([`train()`]). [`evaluate`] has
//! the figures and the by-job folds, [`cross_validate`] the cross-validation; [`predict`] turns
//! window verdicts into one verdict per job, combined with the rules' findings, for the
//! `predictions` table.
//!
//! This root holds the types every stage of the crate shares (the error, the kind of model, where
//! labels come from, the training options) and re-exports what the private modules offer: the
//! labelled windows, training, evaluating a stored model and the cross-validation. Below it the
//! modules depend on one another in one direction only: the data ([`dataset`]) and the figures
//! ([`evaluate`]) at the bottom, then the baselines, the models and the model file, then the
//! labelled windows, training, evaluation and cross-validation, and prediction and retraining on
//! top. The text a person reads of them (an evaluation report, a model file's header) is the
//! render crate's (`jobsight_render::model`): this stage returns data.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod baseline;
pub mod dataset;
pub mod evaluate;
pub mod file;
pub mod forest;
pub mod labelling;
pub mod predict;
pub mod retrain;
pub mod settings;
pub mod typical;
pub mod unsupervised;

mod cross_validation;
mod eval_report;
mod labelled;
pub mod namer;
mod train;

pub use cross_validation::{CrossValidation, cross_validate};
pub use eval_report::{
    ApplicationScores, Detection, EvalReport, evaluate_model, score_classes, score_figures,
};
pub use labelled::{Labelled, READ_PER_CLASS};
pub use settings::{Options, Settings};
pub use train::{Diagnosis, header, permutation_importance, train};

use jobsight_base::choice::{Choice, Named};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use dataset::Truth;
use forest::ForestParams;
use unsupervised::ScoreParams;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("cannot read {path}: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("cannot write {path}: {reason}")]
    Write { path: PathBuf, reason: String },
    #[error("model file {path}: {reason}")]
    Invalid { path: PathBuf, reason: String },
    #[error("{0}")]
    NoData(String),
    /// A label an admin asked for that cannot be kept (unknown job or type, a span outside
    /// the job's run).
    #[error("{0}")]
    Label(String),
    #[error("training failed: {0}")]
    Fit(String),
    #[error("prediction failed: {0}")]
    Predict(String),
    #[error("cannot build the predictions batch: {0}")]
    Batch(String),
    #[error(transparent)]
    Catalog(#[from] jobsight_warehouse::catalog::CatalogError),
}

impl ModelError {
    pub(crate) fn read(path: &Path, reason: impl std::fmt::Display) -> ModelError {
        ModelError::Read {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }
    pub(crate) fn write(path: &Path, reason: impl std::fmt::Display) -> ModelError {
        ModelError::Write {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }
}

/// The two kinds of model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Random forest naming the anomaly type (needs labels).
    Diagnosis,
    /// Anomaly score from healthy windows (labels optional).
    Unsupervised,
}

impl Choice for Kind {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: Kind::Diagnosis,
            name: "diagnosis",
            help: "Random forest naming the anomaly type (needs labels)",
        },
        Named {
            value: Kind::Unsupervised,
            name: "unsupervised",
            help: "Anomaly score from healthy windows (labels optional)",
        },
    ];
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Diagnosis => "diagnosis",
            Kind::Unsupervised => "unsupervised",
        }
    }
}

/// Where the labels come from: the warehouse's `labels` table or a CSV file
/// (`job_id,anomaly,start,end[,node]`).
#[derive(Debug, Clone, PartialEq)]
pub enum LabelsFrom {
    Table,
    File(PathBuf),
}

impl LabelsFrom {
    /// `labels` (or nothing) is the table; anything else is a file.
    pub fn parse(text: Option<&str>) -> LabelsFrom {
        match text {
            None | Some("labels") => LabelsFrom::Table,
            Some(path) => LabelsFrom::File(PathBuf::from(path)),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            LabelsFrom::Table => "table labels".into(),
            LabelsFrom::File(p) => p.display().to_string(),
        }
    }

    pub fn read(&self, data: &Path) -> Result<BTreeMap<String, Truth>, ModelError> {
        match self {
            LabelsFrom::Table => dataset::read_labels_table(data),
            LabelsFrom::File(path) => dataset::read_labels_csv(path),
        }
    }
}

/// What `jobsight model bootstrap` did (the application submits the training suite and waits
/// for its jobs; this is what it reports): the jobs, the labels, where the models went, and each
/// model's figures with every application left out in turn.
#[derive(Debug)]
pub struct BootstrapOutcome {
    pub submitted: usize,
    pub stored: usize,
    pub labels: usize,
    /// The models as trained (in the work folder) and where they were installed, if they were.
    pub models: Vec<(Kind, PathBuf, Option<PathBuf>)>,
    /// Each kind's figures with every application left out in turn.
    pub evaluations: Vec<EvalReport>,
}

/// How models are trained and judged.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainOptions {
    pub forest: ForestParams,
    pub score: ScoreParams,
    /// A window whose top class is an anomaly with a smaller share of the trees' votes is
    /// "unknown" ([`forest::decide`]).
    pub unknown_below: f64,
    /// Training windows kept per class (a seeded sample beyond it): a day of a cluster has
    /// hundreds of thousands of healthy windows, which would slow training without teaching the
    /// forest more, and would drown the rare anomaly types.
    pub max_windows_per_class: usize,
    pub seed: u64,
    /// The features trained on (a model keeps its list; evaluating or predicting uses that);
    /// `None`: each kind's default ([`TrainOptions::feature_set`]).
    pub features: Option<dataset::FeatureSet>,
    /// The metrics trained on, names or prefixes ending in `*` (`None`: every metric with
    /// windows): the series two telemetry sources share, for a model trained on one to judge the
    /// other (docs/models.md, "Simulated → real").
    pub metrics: Option<Vec<String>>,
    /// Rounds of setting aside training windows the model itself disputes before the final fit
    /// (0: none): labels from production miss anomalies nobody noticed ([`Diagnosis::fit`],
    /// [`unsupervised::AnomalyScore::fit_refined`]). Off unless asked: measured in
    /// docs/models.md, "Training on labels that miss anomalies", it helps on one application's
    /// runs and costs false alarms on a cluster of several.
    pub refine: u8,
    /// The features of the diagnosis's second forest, which names the anomaly of each window
    /// the first calls anomalous ([`namer`]); `None`: the first forest names it too. By default
    /// the measured and the job-relative statistics (`both`), since the tenth suite run
    /// (docs/models.md, "The tenth run").
    pub name_features: Option<dataset::FeatureSet>,
}

impl TrainOptions {
    /// The features a kind of model is trained on unless told otherwise, as measured
    /// (docs/models.md): the diagnosis on job-relative features (better on the real HPAS runs and
    /// on applications it never saw), the anomaly score on measured ones (job-relative ones made
    /// it miss most cachecopy and cpuoccupy windows of the HPAS runs).
    pub fn feature_set(&self, kind: Kind) -> dataset::FeatureSet {
        self.features.unwrap_or(match kind {
            Kind::Diagnosis => dataset::FeatureSet::Relative,
            Kind::Unsupervised => dataset::FeatureSet::Absolute,
        })
    }

    /// The features read for a kind of model: its own, and for a diagnosis with a namer the
    /// namer's too.
    pub fn read_set(&self, kind: Kind) -> Result<dataset::FeatureSet, ModelError> {
        let own = self.feature_set(kind);
        match (kind, self.name_features) {
            // `application` is measured by `model eval` alone, with one forest.
            (Kind::Diagnosis, Some(names)) => own.with(names).ok_or_else(|| {
                ModelError::Fit(format!(
                    "the diagnosis's features ({}) and its namer's ({}) cannot be read together: choose `--name-features none` or `relative`",
                    own.name(),
                    names.name()
                ))
            }),
            _ => Ok(own),
        }
    }
}

/// Taxonomist's confidence threshold lies between 0.75 and 0.9; the lower end keeps the unknown
/// rate low on a small training set.
pub const DEFAULT_UNKNOWN_BELOW: f64 = 0.75;

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            forest: ForestParams::default(),
            score: ScoreParams::default(),
            unknown_below: DEFAULT_UNKNOWN_BELOW,
            max_windows_per_class: 3000,
            seed: 42,
            features: None,
            metrics: None,
            refine: 0,
            name_features: Some(dataset::FeatureSet::Both),
        }
    }
}
