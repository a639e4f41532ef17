//! The folds of a cross-validation: which fold each labelled job is tested in (k folds
//! stratified by kind, one application held out, or each application left out in turn), what
//! one fold trains and tests on, and for a contamination test which training jobs' anomalies
//! nobody noticed (their windows labelled healthy).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use super::CrossValidation;
use crate::dataset::{self, HEALTHY};
use crate::labelled::Labelled;
use crate::{ModelError, evaluate};

/// Which fold each labelled job is tested in, and how many folds there are.
pub(super) struct FoldPlan {
    pub(super) fold_of: HashMap<String, usize>,
    /// Leaving each application out: the application of each fold.
    pub(super) applications: Vec<String>,
    pub(super) folds: usize,
}

/// The folds `cv` asks for: every job of one application against the others (fold 0 is held
/// out), one fold per application, or `cv.folds` stratified by kind.
pub(super) fn plan_folds(
    data: &Path,
    labelled: &Labelled,
    cv: &CrossValidation,
    seed: u64,
) -> Result<FoldPlan, ModelError> {
    // The application of every labelled job (for --hold-out and --leave-out-application).
    let application = || -> Result<HashMap<String, String>, ModelError> {
        let all = dataset::applications(data, None, None)?;
        Ok(labelled
            .job_kind
            .keys()
            .map(|j| {
                let app = all.get(j).map_or(dataset::NO_NAME, String::as_str);
                (j.clone(), app.to_string())
            })
            .collect())
    };
    let mut applications: Vec<String> = Vec::new();
    let fold_of: HashMap<String, usize> = match &cv.hold_out {
        Some(app) => {
            let names = dataset::job_names(data, None, None)?;
            let apps = application()?;
            let held =
                |j: &String| names.get(j) == Some(app) || apps.get(j).is_some_and(|a| a == app);
            let of: HashMap<String, usize> = labelled
                .job_kind
                .keys()
                .map(|j| (j.clone(), usize::from(!held(j))))
                .collect();
            if !of.values().any(|&f| f == 0) {
                return Err(ModelError::NoData(format!(
                    "no labelled job is named {app:?} or of that application: nothing to hold out"
                )));
            }
            of
        }
        None if cv.leave_out_each => {
            let apps = application()?;
            applications = apps
                .values()
                .cloned()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            if applications.len() < 2 {
                return Err(ModelError::NoData(format!(
                    "the labelled jobs are of one application ({}): nothing to leave out; \
                     --cv K splits them by job",
                    applications.first().map_or("none", String::as_str)
                )));
            }
            apps.into_iter()
                .map(|(j, a)| {
                    let fold = applications.iter().position(|x| *x == a).unwrap_or(0);
                    (j, fold)
                })
                .collect()
        }
        None => labelled.folds(cv.folds.max(2), seed),
    };
    let folds = if cv.hold_out.is_some() {
        1
    } else if cv.leave_out_each {
        applications.len()
    } else {
        cv.folds.max(2)
    };
    Ok(FoldPlan {
        fold_of,
        applications,
        folds,
    })
}

/// One fold: the positions (into the labelled rows) trained and tested on, and the rows of the
/// windows tested.
pub(super) struct Fold {
    pub(super) number: usize,
    pub(super) train: Vec<usize>,
    pub(super) test: Vec<usize>,
    pub(super) rows: Vec<usize>,
}

/// Labels healthy, among the training windows at `train_pos`, the anomalous windows of the
/// jobs nobody noticed ([`unnoticed_jobs`] of the jobs `training` picks); how many it relabelled.
pub(super) fn contaminate(
    labelled: &mut Labelled,
    train_pos: &[usize],
    training: impl Fn(&str) -> bool,
    share: f64,
    seed: u64,
) -> usize {
    let unnoticed = unnoticed_jobs(labelled, training, share, seed);
    let mut relabelled = 0;
    for &p in train_pos {
        if unnoticed.contains(&*labelled.windows.keys[labelled.rows[p]].job_id)
            && labelled.labels[p] != 0
        {
            labelled.labels[p] = 0;
            relabelled += 1;
        }
    }
    relabelled
}

/// A seeded `share` (rounded up) of the anomalous jobs for which `training(job)` holds: the jobs
/// whose anomalies, in a contamination test, nobody noticed.
fn unnoticed_jobs(
    data: &Labelled,
    training: impl Fn(&str) -> bool,
    share: f64,
    seed: u64,
) -> HashSet<String> {
    let mut anomalous: Vec<(u64, &String)> = data
        .job_kind
        .iter()
        .filter(|(job, kind)| *kind != HEALTHY && training(job))
        .map(|(job, _)| (evaluate::hash(job, seed), job))
        .collect();
    anomalous.sort();
    let take = (anomalous.len() as f64 * share.clamp(0.0, 1.0)).ceil() as usize;
    anomalous
        .into_iter()
        .take(take)
        .map(|(_, job)| job.clone())
        .collect()
}
