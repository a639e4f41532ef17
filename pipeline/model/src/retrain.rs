//! Retraining the site's diagnosis model when the warehouse has labels it has not learnt from,
//! and rotating it only when the new one is not worse.
//!
//! "New labels" means a file of the `labels` table changed after the model file was written (an
//! admin imported or confirmed labels; `jobsight import` writes them). The candidate is trained
//! with the current model's own parameters (trees, features kept, the unknown threshold, its
//! second forest's features or none) on every
//! labelled window, and judged as `model train` judges every model: on the fifth of the jobs it
//! was not fitted on. It replaces the current model when its macro F1 there is at least the
//! current model's minus [`TOLERANCE`]; the current one is kept beside it as `<model>.previous`,
//! so a rotation is undone by renaming it back. A worse candidate is kept as `<model>.candidate`
//! for an admin to look at, and the current model stays.
//!
//! The two figures come from different held-out jobs (the candidate's include the new labels), so
//! the comparison guards against a clearly worse model, not a small regression.
//!
//! The anomaly score needs no labels to stay current: [`rebaseline_score`] refreshes its
//! per-application baselines ([`super::baseline`]) from the newest [`BASELINE_DAYS`] days of
//! windows each night, so an application that started running after the model was trained is
//! judged against its own history once it has run a few times.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::baseline::Baselines;
use super::dataset::{self, HEALTHY, Truth};
use super::file::{Body, ModelFile};
use super::{Kind, LabelsFrom, ModelError, TrainOptions};
use jobsight_warehouse::catalog::{self, Table};

/// How much lower a candidate's held-out macro F1 may be and still replace the current model.
pub const TOLERANCE: f64 = 0.01;

/// What a retrain call did.
#[derive(Debug, Clone, PartialEq)]
pub enum Retrained {
    /// No label file is newer than the model: nothing to learn.
    NoNewLabels,
    /// The candidate replaced the model (the old one is at `previous`).
    Rotated {
        previous: PathBuf,
        old_f1: Option<f64>,
        new_f1: Option<f64>,
    },
    /// The candidate was worse and is kept at `candidate`; the model is unchanged.
    Kept {
        candidate: PathBuf,
        old_f1: Option<f64>,
        new_f1: Option<f64>,
    },
}

/// The newest modification time of the `labels` table's files.
fn labels_changed(data: &Path) -> Option<SystemTime> {
    catalog::days(data, Table::Labels)
        .into_iter()
        .flat_map(|day| catalog::part_files(data, Table::Labels, day, None).unwrap_or_default())
        .filter_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .max()
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Retrains the diagnosis model at `model` from the warehouse at `data` when labels changed
/// after it was written (see the module's description).
pub fn retrain_diagnosis(
    data: &Path,
    model: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Retrained, ModelError> {
    let written = std::fs::metadata(model)
        .and_then(|m| m.modified())
        .map_err(|e| ModelError::read(model, e))?;
    // A candidate kept earlier has learnt from the labels older than it: not again each night.
    let candidate = sibling(model, ".candidate");
    let written = std::fs::metadata(&candidate)
        .and_then(|m| m.modified())
        .map_or(written, |c| c.max(written));
    if labels_changed(data).is_none_or(|changed| changed <= written) {
        return Ok(Retrained::NoNewLabels);
    }
    let current = ModelFile::header(model)?;
    if current.kind != Kind::Diagnosis {
        return Err(ModelError::Invalid {
            path: model.to_path_buf(),
            reason: format!(
                "it is a {} model; retraining needs a diagnosis model",
                current.kind.name()
            ),
        });
    }
    let defaults = TrainOptions::default();
    let options = TrainOptions {
        forest: current.forest.clone().unwrap_or(defaults.forest.clone()),
        unknown_below: current.unknown_below.unwrap_or(defaults.unknown_below),
        // A second forest if the model has one (a file from before the namer has none).
        name_features: current.name_features,
        ..defaults
    };
    let trained = super::train(
        data,
        Kind::Diagnosis,
        &LabelsFrom::Table,
        &options,
        &candidate,
        progress,
    )?;
    let old_f1 = current.evaluation.as_ref().map(|s| s.macro_f1);
    let new_f1 = trained.header.evaluation.as_ref().map(|s| s.macro_f1);
    let better = match (old_f1, new_f1) {
        (Some(old), Some(new)) => new >= old - TOLERANCE,
        // A model without figures is replaced by one with figures, never the other way round.
        (None, _) => true,
        (Some(_), None) => false,
    };
    if !better {
        return Ok(Retrained::Kept {
            candidate,
            old_f1,
            new_f1,
        });
    }
    let previous = sibling(model, ".previous");
    std::fs::copy(model, &previous).map_err(|e| ModelError::write(&previous, e))?;
    std::fs::rename(&candidate, model).map_err(|e| ModelError::write(model, e))?;
    Ok(Retrained::Rotated {
        previous,
        old_f1,
        new_f1,
    })
}

/// How many of the newest days with windows the anomaly score's baselines are learned from.
pub const BASELINE_DAYS: usize = 7;

/// What a rebaseline call did.
#[derive(Debug, Clone, PartialEq)]
pub enum Rebaselined {
    /// The model file was rewritten with the refreshed baselines (the one before kept at
    /// `previous`): `applications` have one now, `new` of them for the first time.
    Refreshed {
        previous: PathBuf,
        applications: usize,
        new: Vec<String>,
    },
    /// No windows, or the baselines came out as they were.
    Unchanged,
}

/// Refreshes the per-application baselines of the anomaly score at `model` from the newest
/// [`BASELINE_DAYS`] days of windows of the warehouse at `data`: every window but those the
/// `labels` table says are anomalous (or that straddle a labelled anomaly's edge). An
/// application with enough runs there gets its baseline replaced; the others keep theirs.
pub fn rebaseline_score(
    data: &Path,
    model: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Rebaselined, ModelError> {
    let file = ModelFile::load(model, Some(Kind::Unsupervised))?;
    let (mut header, Body::Unsupervised(mut score)) = (file.header, file.body) else {
        return Err(ModelError::Invalid {
            path: model.to_path_buf(),
            reason: "its body is not an anomaly score".into(),
        });
    };
    let mut days = dataset::days_with_windows(data);
    let days = days.split_off(days.len().saturating_sub(BASELINE_DAYS));
    if days.is_empty() {
        return Ok(Rebaselined::Unchanged);
    }
    progress("reading the newest days' windows");
    let windows = dataset::read_windows(
        data,
        &days,
        None,
        Some(&header.features),
        dataset::FeatureSet::default(),
        None,
        None,
    )?;
    let truths = LabelsFrom::Table.read(data)?;
    let history: Vec<usize> = (0..windows.keys.len())
        .filter(|&r| {
            let key = &windows.keys[r];
            match truths.get(&*key.job_id) {
                None | Some(Truth::Other(_)) => true,
                Some(truth) => dataset::label_window(truth, key) == Some(HEALTHY),
            }
        })
        .collect();
    progress("scoring them and learning each application's baseline");
    let applications = dataset::applications(data, Some(&days), None)?;
    let scores = score.score(&windows, &history);
    let learned = Baselines::learn(
        &windows,
        &history,
        &scores,
        &applications,
        score.baselines.method,
    );
    let mut merged = score.baselines.clone();
    let new: Vec<String> = learned
        .applications
        .keys()
        .filter(|app| !merged.applications.contains_key(*app))
        .cloned()
        .collect();
    merged.applications.extend(learned.applications);
    if merged == score.baselines {
        return Ok(Rebaselined::Unchanged);
    }
    score.baselines = merged;
    header.training.baselines = score.baselines.summary();
    let applications = score.baselines.applications.len();
    let previous = sibling(model, ".previous");
    std::fs::copy(model, &previous).map_err(|e| ModelError::write(&previous, e))?;
    ModelFile {
        header,
        body: Body::Unsupervised(score),
    }
    .save(model)?;
    Ok(Rebaselined::Refreshed {
        previous,
        applications,
        new,
    })
}
