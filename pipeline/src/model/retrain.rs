//! Retraining the site's diagnosis model when the warehouse has labels it has not learnt from,
//! and rotating it only when the new one is not worse.
//!
//! "New labels" means a file of the `labels` table changed after the model file was written (an
//! admin imported or confirmed labels; `jobsight import` writes them). The candidate is trained
//! with the current model's own parameters (trees, features kept, the unknown threshold) on every
//! labelled window, and judged as `model train` judges every model: on the fifth of the jobs it
//! was not fitted on. It replaces the current model when its macro F1 there is at least the
//! current model's minus [`TOLERANCE`]; the current one is kept beside it as `<model>.previous`,
//! so a rotation is undone by renaming it back. A worse candidate is kept as `<model>.candidate`
//! for an admin to look at, and the current model stays.
//!
//! The two figures come from different held-out jobs (the candidate's include the new labels), so
//! the comparison guards against a clearly worse model, not a small regression.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::file::ModelFile;
use super::{Kind, LabelsFrom, ModelError, TrainOptions};
use crate::catalog::{self, Table};

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
