//! Each fold of a cross-validation fitted and judged, and the verdicts of every fold pooled
//! for the figures: the diagnosis (with active learning when asked), the anomaly score, and the
//! two together; the time each took.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use super::CrossValidation;
use super::export::export_fold;
use super::plan::Fold;
use crate::dataset;
use crate::labelled::Labelled;
use crate::train::Diagnosis;
use crate::{ModelError, TrainOptions, forest};

/// The `n` windows whose verdicts are least sure (the smallest share of votes for the top
/// class; ties by position), as indices into `votes`, ascending.
fn least_sure(votes: &[Vec<f32>], n: usize) -> HashSet<usize> {
    let mut order: Vec<(f32, usize)> = votes
        .iter()
        .enumerate()
        .map(|(i, v)| (forest::top(v).1, i))
        .collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    order.into_iter().take(n).map(|(_, i)| i).collect()
}

/// The verdicts of the folds so far, pooled for the figures, and the time they took.
#[derive(Default)]
pub(super) struct Pooled {
    /// Where each fold's verdicts start in `truth`, for the figures per application.
    pub(super) fold_starts: Vec<(usize, usize)>,
    pub(super) truth: Vec<u32>,
    pub(super) at_threshold: Vec<Option<u32>>,
    pub(super) forced: Vec<Option<u32>>,
    pub(super) flagged_positions: Vec<usize>,
    pub(super) flags: Vec<bool>,
    pub(super) train_s: f64,
    pub(super) predict_s: f64,
    pub(super) predicted_windows: usize,
    pub(super) contaminated_windows: usize,
    /// Test windows labelled on request (`active`) and trained on instead of judged.
    pub(super) actively_labelled: usize,
    /// (fold, position, top class, its share of the votes or the anomaly score), for --verdicts.
    pub(super) judged: Vec<(usize, usize, u32, f64)>,
    /// `with_score`: the positions judged and whether either model called them anomalous.
    pub(super) together_positions: Vec<usize>,
    pub(super) together: Vec<bool>,
}

impl Pooled {
    /// Fits a diagnosis on the fold's training windows and adds its verdicts on the test ones;
    /// writes the fold's feature rows into `export` when given.
    pub(super) fn add_diagnosis(
        &mut self,
        labelled: &Labelled,
        fold: &Fold,
        options: &TrainOptions,
        export: Option<&Path>,
        (active, batch): (usize, usize),
    ) -> Result<(), ModelError> {
        let number = fold.number;
        let started = Instant::now();
        let mut model = Diagnosis::fit(labelled, &fold.train, options)?;
        // Positions into the fold's test windows that were asked about, in the order asked.
        let mut asked: Vec<usize> = Vec::new();
        let wanted = active.min(fold.test.len());
        let batch = if batch == 0 {
            wanted
        } else {
            batch.min(wanted)
        };
        while asked.len() < wanted {
            let not_asked: Vec<usize> = (0..fold.test.len())
                .filter(|i| !asked.contains(i))
                .collect();
            let rows: Vec<usize> = not_asked.iter().map(|&i| fold.rows[i]).collect();
            let votes = model.votes(&labelled.windows, &rows)?;
            let mut picked: Vec<usize> = least_sure(&votes, batch.min(wanted - asked.len()))
                .into_iter()
                .collect();
            picked.sort_unstable();
            asked.extend(picked.iter().map(|&k| not_asked[k]));
            let labelled_now: Vec<usize> = asked.iter().map(|&i| fold.test[i]).collect();
            model = Diagnosis::fit_keeping(labelled, &fold.train, &labelled_now, options)?;
        }
        self.actively_labelled += asked.len();
        let rest: Vec<usize> = (0..fold.test.len())
            .filter(|i| !asked.contains(i))
            .collect();
        let (test, rows): (Vec<usize>, Vec<usize>) =
            rest.iter().map(|&i| (fold.test[i], fold.rows[i])).unzip();
        let test = &test;
        self.train_s += started.elapsed().as_secs_f64();
        let started = Instant::now();
        let votes = model.votes(&labelled.windows, &rows)?;
        self.predict_s += started.elapsed().as_secs_f64();
        self.predicted_windows += rows.len();
        self.at_threshold
            .extend(forest::decide(&votes, options.unknown_below));
        self.forced.extend(forest::decide(&votes, 0.0));
        self.judged.extend(test.iter().zip(&votes).map(|(&p, v)| {
            let (class, share) = forest::top(v);
            (number, p, class as u32, f64::from(share))
        }));
        self.truth.extend(test.iter().map(|&p| labelled.labels[p]));
        if let Some(dir) = export {
            // The training rows the forest really learnt from: the per-class sample.
            let trained_on =
                labelled.sample(&fold.train, options.max_windows_per_class, options.seed);
            export_fold(dir, number, &model, labelled, &trained_on, test)?;
        }
        Ok(())
    }

    /// Fits an anomaly score on the healthy windows of the fold's training jobs and adds its
    /// verdicts on the test windows.
    pub(super) fn add_score(
        &mut self,
        labelled: &Labelled,
        fold: &Fold,
        fold_of: &HashMap<String, usize>,
        options: &TrainOptions,
        no_history: bool,
    ) -> Result<(), ModelError> {
        let (number, test) = (fold.number, &fold.test);
        let judged = fold_scores(labelled, fold, fold_of, options, no_history)?;
        self.train_s += judged.train_s;
        self.predict_s += judged.predict_s;
        self.predicted_windows += judged.windows;
        let scores: Vec<f64> = judged.scores.into_iter().map(|(score, _)| score).collect();
        self.truth
            .extend(test.iter().map(|&p| u32::from(labelled.labels[p] != 0)));
        self.at_threshold
            .extend(scores.iter().map(|&s| Some(u32::from(s > 1.0))));
        self.flagged_positions.extend(test.iter().copied());
        self.flags.extend(scores.iter().map(|&s| s > 1.0));
        self.judged.extend(
            test.iter()
                .zip(&scores)
                .map(|(&p, &s)| (number, p, u32::from(s > 1.0), s)),
        );
        Ok(())
    }

    /// The diagnosis's verdicts of this fold (just added) together with the anomaly score's: a
    /// window is anomalous when the diagnosis's top class is an anomaly (whatever its share) or
    /// the score is above its application's cut; a score with no cut (an application without
    /// a history) says nothing. `score_data` is the same warehouse read with the score's
    /// features; its windows are matched to the diagnosis's by their keys.
    pub(super) fn add_together(
        &mut self,
        labelled: &Labelled,
        score_data: &Labelled,
        fold: &Fold,
        fold_of: &HashMap<String, usize>,
        options: &TrainOptions,
        cv: &CrossValidation,
    ) -> Result<(), ModelError> {
        let in_fold = |j: &str| fold_of.get(j) == Some(&fold.number);
        let test = score_data.positions(in_fold);
        let score_fold = Fold {
            number: fold.number,
            rows: test.iter().map(|&p| score_data.rows[p]).collect(),
            train: score_data.positions(|j| !in_fold(j)),
            test,
        };
        // The report's times stay the diagnosis's own.
        let scores = fold_scores(score_data, &score_fold, fold_of, options, cv.no_history)?.scores;
        let score_of: HashMap<&dataset::WindowKey, (f64, bool)> = score_fold
            .rows
            .iter()
            .map(|&r| &score_data.windows.keys[r])
            .zip(scores)
            .collect();
        let diagnosed = &self.judged[self.judged.len() - fold.test.len()..];
        for (&p, &(_, judged_p, top_class, _)) in fold.test.iter().zip(diagnosed) {
            debug_assert_eq!(p, judged_p);
            let key = &labelled.windows.keys[labelled.rows[p]];
            let (score, has_cut) = score_of.get(key).copied().unwrap_or((f64::NAN, false));
            self.together_positions.push(p);
            self.together
                .push((has_cut && score > 1.0) || top_class != 0);
        }
        Ok(())
    }
}

/// [`fold_scores`]' answer.
struct FoldScores {
    /// Each test window's score over its cut, and whether it had one.
    scores: Vec<(f64, bool)>,
    train_s: f64,
    predict_s: f64,
    /// Windows scored (every window of the fold's jobs, labelled or not).
    windows: usize,
}

/// Fits an anomaly score on the healthy windows of the fold's training jobs; its score of
/// each of the fold's test windows (over the cut of its application), and whether there was
/// such a cut (a history of the application); the time it took.
fn fold_scores(
    labelled: &Labelled,
    fold: &Fold,
    fold_of: &HashMap<String, usize>,
    options: &TrainOptions,
    no_history: bool,
) -> Result<FoldScores, ModelError> {
    let number = fold.number;
    let healthy: Vec<usize> = labelled
        .sample(
            &fold
                .train
                .iter()
                .copied()
                .filter(|&p| labelled.labels[p] == 0)
                .collect::<Vec<_>>(),
            options.max_windows_per_class,
            options.seed,
        )
        .into_iter()
        .map(|p| labelled.rows[p])
        .collect();
    let started = Instant::now();
    // The training jobs' every window (not other jobs': an application left out must not
    // get a baseline from its runs the labels left out).
    let (model, _) = labelled.fit_score(
        &healthy,
        |j| fold_of.get(j).is_some_and(|&f| f != number),
        options,
    )?;
    let train_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    // Every window of the fold's jobs is judged, as a day's are, labelled or not: an
    // application the model never saw takes its cut from the other runs' windows, and the
    // windows that straddle an anomaly's edge (left unlabelled) are some of them.
    let every: Vec<usize> = (0..labelled.windows.keys.len())
        .filter(|&r| fold_of.get(&*labelled.windows.keys[r].job_id) == Some(&number))
        .collect();
    // Without a history each job is judged alone, as an application's first run is: no
    // other run of it among the judged gives it a cut, so an application the model has no
    // baseline of meets the score's own threshold (one it has a baseline of keeps it).
    let judge = |rows: &[usize]| {
        let scores = model.score(&labelled.windows, rows);
        model.over_cuts_with_history(&labelled.windows, rows, scores, &labelled.applications)
    };
    let judged: Vec<(f64, bool)> = if no_history {
        let mut by_job: HashMap<&str, Vec<usize>> = HashMap::new();
        for &r in &every {
            by_job
                .entry(&*labelled.windows.keys[r].job_id)
                .or_default()
                .push(r);
        }
        let mut judged: HashMap<usize, (f64, bool)> = HashMap::new();
        for rows in by_job.values() {
            judged.extend(rows.iter().copied().zip(judge(rows)));
        }
        every.iter().map(|r| judged[r]).collect()
    } else {
        judge(&every)
    };
    let score_of: HashMap<usize, (f64, bool)> = every.into_iter().zip(judged).collect();
    let scores: Vec<(f64, bool)> = fold
        .rows
        .iter()
        .map(|r| score_of.get(r).copied().unwrap_or((f64::NAN, false)))
        .collect();
    Ok(FoldScores {
        scores,
        train_s,
        predict_s: started.elapsed().as_secs_f64(),
        windows: score_of.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_windows_asked_about_are_those_with_the_fewest_votes_for_their_top_class() {
        let votes = vec![
            vec![0.9, 0.1],
            vec![0.5, 0.5],
            vec![0.2, 0.8],
            vec![0.4, 0.6],
            vec![0.5, 0.5],
        ];
        let asked = least_sure(&votes, 3);
        assert_eq!(asked, HashSet::from([1, 3, 4]));
        assert_eq!(least_sure(&votes, 0), HashSet::new());
        assert_eq!(least_sure(&votes, 9).len(), 5);
    }
}
