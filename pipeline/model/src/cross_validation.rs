//! By-job cross-validation of a kind of model, for `jobsight model eval` without a model file:
//! the labelled jobs dealt into k folds stratified by kind ([`Labelled::folds`]), or one
//! application held out, or each application left out in turn. A model fitted on the other folds
//! judges each fold's windows, and the verdicts of every fold are pooled into one
//! [`EvalReport`]. On request it writes each fold's feature rows and every verdict, and it can
//! label some anomalous training jobs healthy to measure what labels that miss anomalies cost.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::dataset::{self, HEALTHY};
use super::eval_report::{ApplicationScores, Detection, EvalReport, score_classes, share_by_class};
use super::labelled::Labelled;
use super::train::Diagnosis;
use super::{Kind, LabelsFrom, ModelError, TrainOptions, evaluate, forest};

/// Rows one fold of a cross-validation was trained and tested on, for a side-by-side run of
/// another library on exactly the same data (`--export DIR`).
fn export_fold(
    dir: &Path,
    fold: usize,
    model: &Diagnosis,
    data: &Labelled,
    train: &[usize],
    test: &[usize],
) -> Result<(), ModelError> {
    std::fs::create_dir_all(dir).map_err(|e| ModelError::write(dir, e))?;
    for (name, positions) in [("train", train), ("test", test)] {
        let path = dir.join(format!("fold{fold}-{name}.csv"));
        let rows: Vec<usize> = positions.iter().map(|&p| data.rows[p]).collect();
        let columns = super::namer::columns(&model.prepared, model.namer.as_ref());
        let x = columns.matrix(&data.windows, &rows);
        let n = columns.features.len();
        let mut text = String::from("label");
        for f in &columns.features {
            text.push(',');
            text.push_str(&f.replace(',', "_"));
        }
        text.push('\n');
        for (i, &p) in positions.iter().enumerate() {
            text.push_str(&data.labels[p].to_string());
            for v in &x[i * n..(i + 1) * n] {
                text.push(',');
                text.push_str(&v.to_string());
            }
            text.push('\n');
        }
        std::fs::write(&path, text).map_err(|e| ModelError::write(&path, e))?;
    }
    Ok(())
}

/// What a cross-validation run is asked for.
#[derive(Debug, Clone, Default)]
pub struct CrossValidation {
    pub folds: usize,
    /// Hold out every job of this application (a job name, or its application as
    /// [`dataset::application_of`] reads it) instead of k folds.
    pub hold_out: Option<String>,
    /// Leave each application out in turn (one fold per application): how the models do on
    /// applications they never saw.
    pub leave_out_each: bool,
    /// Write each fold's feature rows here.
    pub export: Option<PathBuf>,
    /// Write every judged window's verdict here (CSV; [`write_verdicts`]).
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

/// Which fold each labelled job is tested in, and how many folds there are.
struct FoldPlan {
    fold_of: HashMap<String, usize>,
    /// Leaving each application out: the application of each fold.
    applications: Vec<String>,
    folds: usize,
}

/// The folds `cv` asks for: every job of one application against the others (fold 0 is held
/// out), one fold per application, or `cv.folds` stratified by kind.
fn plan_folds(
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
struct Fold {
    number: usize,
    train: Vec<usize>,
    test: Vec<usize>,
    rows: Vec<usize>,
}

/// The verdicts of the folds so far, pooled for the figures, and the time they took.
#[derive(Default)]
struct Pooled {
    /// Where each fold's verdicts start in `truth`, for the figures per application.
    fold_starts: Vec<(usize, usize)>,
    truth: Vec<u32>,
    at_threshold: Vec<Option<u32>>,
    forced: Vec<Option<u32>>,
    flagged_positions: Vec<usize>,
    flags: Vec<bool>,
    train_s: f64,
    predict_s: f64,
    predicted_windows: usize,
    contaminated_windows: usize,
    /// Test windows labelled on request (`active`) and trained on instead of judged.
    actively_labelled: usize,
    /// (fold, position, top class, its share of the votes or the anomaly score), for --verdicts.
    judged: Vec<(usize, usize, u32, f64)>,
    /// `with_score`: the positions judged and whether either model called them anomalous.
    together_positions: Vec<usize>,
    together: Vec<bool>,
}

impl Pooled {
    /// Fits a diagnosis on the fold's training windows and adds its verdicts on the test ones;
    /// writes the fold's feature rows into `export` when given.
    fn add_diagnosis(
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
    fn add_score(
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
    fn add_together(
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

/// The report of a cross-validation from the verdicts of every fold (and, when asked, every
/// verdict written out).
fn report(
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

/// Labels healthy, among the training windows at `train_pos`, the anomalous windows of the
/// jobs nobody noticed ([`unnoticed_jobs`] of the jobs `training` picks); how many it relabelled.
fn contaminate(
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

/// Writes every judged window of a cross-validation to `path` as CSV, in the order judged:
/// `fold,job_id,node,start,end,truth,verdict,top_class,score`. `verdict` (one of
/// `verdict_classes`, the model's) is what the figures count (`unknown` below the votes'
/// threshold); `top_class` the class with most votes and `score` its share of them (diagnosis),
/// or `anomalous`/`healthy` and the anomaly score, flagged above 1 (anomaly score). Job ids and
/// node names come from the telemetry, so fields are quoted as CSV requires.
fn write_verdicts(
    path: &Path,
    verdict_classes: &[String],
    data: &Labelled,
    judged: &[(usize, usize, u32, f64)],
    verdicts: &[Option<u32>],
) -> Result<(), ModelError> {
    let name = |classes: &[String], i: u32| classes.get(i as usize).cloned().unwrap_or_default();
    let time = |us: i64| {
        chrono::DateTime::<chrono::Utc>::from_timestamp_micros(us)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
            .unwrap_or_default()
    };
    let mut text = String::from("fold,job_id,node,start,end,truth,verdict,top_class,score\n");
    for (&(fold, p, top, score), verdict) in judged.iter().zip(verdicts) {
        let key = &data.windows.keys[data.rows[p]];
        let verdict = verdict.map_or("unknown".to_string(), |v| name(verdict_classes, v));
        let fields = [
            (fold + 1).to_string(),
            csv_field(&key.job_id),
            csv_field(&key.node),
            time(key.start_us),
            time(key.end_us),
            name(&data.classes, data.labels[p]),
            verdict,
            name(verdict_classes, top),
            format!("{score:.4}"),
        ];
        text.push_str(&fields.join(","));
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| ModelError::write(path, e))
}

/// `field` as one CSV field: quoted, with quotes doubled, when it holds a comma, a quote or a
/// line break.
fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
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
