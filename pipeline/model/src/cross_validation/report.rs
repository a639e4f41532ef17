//! The report of a cross-validation: the figures of the verdicts pooled over every fold (by
//! class, per application left out, healthy against anomalous), and every verdict written out
//! when asked.

use super::CrossValidation;
use super::export::write_verdicts;
use super::fit::Pooled;
use super::plan::FoldPlan;
use crate::eval_report::{ApplicationScores, Detection, EvalReport, score_classes, share_by_class};
use crate::labelled::Labelled;
use crate::{Kind, ModelError, TrainOptions, evaluate};

/// The report of a cross-validation from the verdicts of every fold (and, when asked, every
/// verdict written out).
pub(super) fn report(
    pooled: Pooled,
    kind: Kind,
    labelled: &Labelled,
    plan: &FoldPlan,
    cv: &CrossValidation,
    options: &TrainOptions,
) -> Result<EvalReport, ModelError> {
    let Pooled {
        fold_starts,
        truth,
        at_threshold,
        forced,
        flagged_positions,
        flags,
        train_s,
        predict_s,
        predicted_windows,
        contaminated_windows,
        actively_labelled,
        judged,
        together_positions,
        together,
    } = pooled;
    let classes_of = |kind: Kind| match kind {
        Kind::Diagnosis => labelled.classes.clone(),
        Kind::Unsupervised => score_classes(),
    };
    if let Some(path) = &cv.verdicts {
        write_verdicts(path, &classes_of(kind), labelled, &judged, &at_threshold)?;
    }
    let mut per_application = Vec::new();
    if cv.leave_out_each {
        let classes = classes_of(kind);
        for (i, &(fold, from)) in fold_starts.iter().enumerate() {
            let to = fold_starts.get(i + 1).map_or(truth.len(), |n| n.1);
            let jobs = plan.fold_of.values().filter(|&&f| f == fold).count();
            per_application.push(ApplicationScores {
                application: plan.applications[fold].clone(),
                jobs,
                scores: evaluate::scores(&classes, &truth[from..to], &at_threshold[from..to]),
            });
        }
    }
    let starts: &[(usize, usize)] = if cv.leave_out_each { &fold_starts } else { &[] };
    let together = cv
        .with_score
        .then(|| detection_figures(labelled, plan, starts, &together_positions, &together));
    // The diagnosis's top class asked only whether a window is healthy.
    let detection = (kind == Kind::Diagnosis).then(|| {
        let (positions, flags): (Vec<usize>, Vec<bool>) =
            judged.iter().map(|&(_, p, top, _)| (p, top != 0)).unzip();
        detection_figures(labelled, plan, starts, &positions, &flags)
    });
    let (classes, scores, forced, flagged_share) = match kind {
        Kind::Diagnosis => (
            labelled.classes.clone(),
            evaluate::scores(&labelled.classes, &truth, &at_threshold),
            Some(evaluate::scores(&labelled.classes, &truth, &forced)),
            Vec::new(),
        ),
        Kind::Unsupervised => (
            score_classes(),
            evaluate::scores(&score_classes(), &truth, &at_threshold),
            None,
            share_by_class(labelled, &flagged_positions, &flags),
        ),
    };
    Ok(EvalReport {
        kind,
        model: None,
        folds: (cv.hold_out.is_none() && !cv.leave_out_each).then_some(plan.folds),
        hold_out: cv.hold_out.clone(),
        per_application,
        jobs: labelled.job_kind.len(),
        classes,
        unknown_below: (kind == Kind::Diagnosis).then_some(options.unknown_below),
        scores,
        forced,
        flagged_share,
        train_seconds: train_s,
        predict_seconds: predict_s,
        windows_per_second: predicted_windows as f64 / predict_s.max(1e-9),
        contaminate: cv.contaminate,
        contaminated_windows,
        active: cv.active,
        active_batch: cv.active_batch,
        actively_labelled,
        refine: options.refine,
        no_history: cv.no_history,
        detection,
        together,
    })
}

/// The figures of the diagnosis and the score together: healthy against anomalous over every
/// window, the share flagged by true class, and per application left out (`fold_starts`, empty
/// when the folds are not applications).
fn detection_figures(
    labelled: &Labelled,
    plan: &FoldPlan,
    fold_starts: &[(usize, usize)],
    positions: &[usize],
    flags: &[bool],
) -> Detection {
    let classes = score_classes();
    let truth: Vec<u32> = positions
        .iter()
        .map(|&p| u32::from(labelled.labels[p] != 0))
        .collect();
    let predicted: Vec<Option<u32>> = flags.iter().map(|&f| Some(u32::from(f))).collect();
    // Each fold's windows are in `positions` in fold order, as in the diagnosis's own verdicts.
    let per_application = fold_starts
        .iter()
        .enumerate()
        .map(|(i, &(fold, from))| {
            let to = fold_starts.get(i + 1).map_or(truth.len(), |n| n.1);
            ApplicationScores {
                application: plan.applications[fold].clone(),
                jobs: plan.fold_of.values().filter(|&&f| f == fold).count(),
                scores: evaluate::scores(&classes, &truth[from..to], &predicted[from..to]),
            }
        })
        .collect();
    Detection {
        scores: evaluate::scores(&classes, &truth, &predicted),
        flagged_share: share_by_class(labelled, positions, flags),
        per_application,
    }
}
