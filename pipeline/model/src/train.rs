//! Fitting the models and `jobsight model train`: a diagnosis ([`Diagnosis::fit`], with the
//! refining that sets aside training windows whose label the forest disputes) and an anomaly
//! score with its application baselines, on [`Labelled`] windows. [`train`] fits each kind on four
//! fifths of the jobs for the figures (and, for a diagnosis, the permutation importance) stored
//! in the model file's header, then on every job for the model the file keeps.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::time::Instant;

use super::baseline::Baselines;
use super::dataset::{self, Windows};
use super::eval_report::score_figures;
use super::evaluate::{self, Scores};
use super::file::{self, Body, Header, Importance, ModelFile, TrainingSummary};
use super::forest::{self, Forest, Prepared};
use super::labelled::Labelled;
use super::namer::{self, Namer};
use super::unsupervised::AnomalyScore;
use super::{Kind, LabelsFrom, ModelError, TrainOptions};

/// A training window is set aside when the trees that never saw it give its label less than
/// this share of their votes and another class more (the majority filter of Brodley and Friedl:
/// fully grown trees memorise a few wrong labels, so a stricter share finds none).
const DISPUTED_BELOW: f32 = 0.5;

/// A fitted diagnosis: columns, forest, the namer if there is one, classes and the unknown
/// threshold.
#[derive(Debug)]
pub struct Diagnosis {
    pub prepared: Prepared,
    pub forest: Forest,
    /// The second forest that names what the first calls anomalous ([`namer`]).
    pub namer: Option<Namer>,
    pub classes: Vec<String>,
    pub unknown_below: f64,
    /// Training windows set aside by refining (their label disputed).
    pub set_aside: usize,
}

impl Diagnosis {
    /// Fits on the labelled windows at `positions` (at most `max_windows_per_class` per class).
    pub fn fit(
        data: &Labelled,
        positions: &[usize],
        options: &TrainOptions,
    ) -> Result<Diagnosis, ModelError> {
        Diagnosis::fit_keeping(data, positions, &[], options)
    }

    /// [`Diagnosis::fit`], with the windows at `keep` always trained on, however many of their
    /// class there are (the windows an admin was asked to label).
    pub fn fit_keeping(
        data: &Labelled,
        positions: &[usize],
        keep: &[usize],
        options: &TrainOptions,
    ) -> Result<Diagnosis, ModelError> {
        let mut positions = data.sample(positions, options.max_windows_per_class, options.seed);
        let extra: Vec<usize> = keep
            .iter()
            .copied()
            .filter(|p| !positions.contains(p))
            .collect();
        positions.extend(extra);
        let positions = &positions;
        let mut rows: Vec<usize> = positions.iter().map(|&p| data.rows[p]).collect();
        let mut labels: Vec<u32> = positions.iter().map(|&p| data.labels[p]).collect();
        let set = options.feature_set(Kind::Diagnosis);
        let prepare = |rows: &[usize], labels: &[u32]| {
            let prepared = forest::prepare(
                &data.windows,
                rows,
                labels,
                options.forest.max_features,
                &|f| set.holds(f),
            );
            if prepared.features.is_empty() {
                return Err(ModelError::Fit(
                    "no feature varies over the training windows".into(),
                ));
            }
            Ok(prepared)
        };
        let mut prepared = prepare(&rows, &labels)?;
        let mut x = prepared.matrix(&data.windows, &rows);
        let mut set_aside = 0;
        for _ in 0..options.refine {
            let votes = Forest::out_of_bag_votes(&x, &labels, data.classes.len(), &options.forest)?;
            let keep = undisputed(&labels, &votes, data.classes.len());
            if keep.len() == labels.len() {
                break;
            }
            set_aside += labels.len() - keep.len();
            rows = keep.iter().map(|&i| rows[i]).collect();
            labels = keep.iter().map(|&i| labels[i]).collect();
            // The columns are chosen again without the disputed windows' pull.
            prepared = prepare(&rows, &labels)?;
            x = prepared.matrix(&data.windows, &rows);
        }
        let forest = Forest::fit(x, &labels, data.classes.len(), &options.forest)?;
        let namer = match options.name_features {
            Some(set) => Namer::fit(
                &data.windows,
                &rows,
                &labels,
                data.classes.len(),
                set,
                &options.forest,
            )?,
            None => None,
        };
        Ok(Diagnosis {
            prepared,
            forest,
            namer,
            classes: data.classes.clone(),
            unknown_below: options.unknown_below,
            set_aside,
        })
    }

    /// Votes per class for `rows` of `windows`.
    pub fn votes(&self, windows: &Windows, rows: &[usize]) -> Result<Vec<Vec<f32>>, ModelError> {
        namer::votes(
            &self.prepared,
            &self.forest,
            self.namer.as_ref(),
            windows,
            rows,
        )
    }

    /// Every column the diagnosis reads (the model file's features).
    pub fn features(&self) -> Vec<String> {
        namer::features(&self.prepared, self.namer.as_ref())
    }
}

// The score's fit is a method of the labelled windows for its callers (training and the
// cross-validation), but it is training, so it lives here.
impl Labelled {
    /// The anomaly score fitted on `rows` of the windows, its application baselines learned
    /// from the [`Labelled::history`] of the jobs `history_of` picks.
    pub fn fit_score(
        &self,
        rows: &[usize],
        history_of: impl Fn(&str) -> bool,
        options: &TrainOptions,
    ) -> Result<(AnomalyScore, usize), ModelError> {
        let history = self.history(history_of);
        fit_score(&self.windows, rows, &history, &self.applications, options)
    }
}

/// The anomaly score fitted on `rows` of `windows` (healthy windows, or every window without
/// labels), refined within each window's application as `options` say, with the baselines of
/// the applications among `history` (windows not known to be anomalous,
/// [`Labelled::history`]); and the number of windows refining set aside.
fn fit_score(
    windows: &Windows,
    rows: &[usize],
    history: &[usize],
    applications: &HashMap<String, String>,
    options: &TrainOptions,
) -> Result<(AnomalyScore, usize), ModelError> {
    let groups = application_groups(applications, windows, rows);
    let (mut model, set_aside) =
        AnomalyScore::fit_refined(windows, rows, &groups, &options.score, options.refine)?;
    let scores = model.score(windows, history);
    model.baselines = Baselines::learn(
        windows,
        history,
        &scores,
        applications,
        options.score.baseline,
    );
    Ok((model, set_aside))
}

/// The application of each window of `rows` as a group number (the score's refining judges a
/// window against its own application's); jobs without a known name form one group.
fn application_groups(
    applications: &HashMap<String, String>,
    windows: &Windows,
    rows: &[usize],
) -> Vec<u32> {
    let mut index: HashMap<&str, u32> = HashMap::new();
    rows.iter()
        .map(|&r| {
            let app = applications
                .get(&*windows.keys[r].job_id)
                .map_or(dataset::NO_NAME, String::as_str);
            let next = index.len() as u32;
            *index.entry(app).or_insert(next)
        })
        .collect()
}

/// The training rows to keep after one refining round: every row but those whose label the
/// out-of-bag trees dispute (less than [`DISPUTED_BELOW`] of their votes, another class more),
/// as Refine (ISC 2025) drops the training samples a model fits worst.
/// A class never loses more than a fifth of its rows in a round: when the trees reject that much
/// of a class, the class is hard to learn, not mislabelled.
fn undisputed(labels: &[u32], oob: &[Vec<f32>], classes: usize) -> Vec<usize> {
    let disputed: Vec<Option<f32>> = labels
        .iter()
        .zip(oob)
        .map(|(&l, v)| {
            let own = v.get(l as usize).copied().unwrap_or(0.0);
            let (top, share) = forest::top(v);
            (v.iter().sum::<f32>() > 0.0
                && own < DISPUTED_BELOW
                && top != l as usize
                && share > own)
                .then_some(own)
        })
        .collect();
    let mut budget: Vec<usize> = (0..classes)
        .map(|k| labels.iter().filter(|&&l| l as usize == k).count() / 5)
        .collect();
    // The most disputed go first when a class's budget runs out.
    let mut order: Vec<usize> = (0..labels.len())
        .filter(|&i| disputed[i].is_some())
        .collect();
    order.sort_by(|&a, &b| {
        disputed[a]
            .unwrap_or(1.0)
            .total_cmp(&disputed[b].unwrap_or(1.0))
            .then(a.cmp(&b))
    });
    let mut dropped = vec![false; labels.len()];
    for i in order {
        let class = labels[i] as usize;
        if budget.get(class).copied().unwrap_or(0) > 0 {
            budget[class] -= 1;
            dropped[i] = true;
        }
    }
    (0..labels.len()).filter(|&i| !dropped[i]).collect()
}

/// Permutation importance on held-out windows: the drop in macro F1 (argmax verdicts) when one
/// feature's values are shuffled among the windows. The top `keep` features, largest drop first.
pub fn permutation_importance(
    model: &Diagnosis,
    windows: &Windows,
    rows: &[usize],
    truth: &[u32],
    keep: usize,
    seed: u64,
) -> Result<Vec<Importance>, ModelError> {
    // Each forest's columns of the windows: the first forest's, and the namer's if any.
    let prepared: Vec<&Prepared> = std::iter::once(&model.prepared)
        .chain(model.namer.as_ref().map(|n| &n.prepared))
        .collect();
    let base: Vec<Vec<f64>> = prepared.iter().map(|p| p.matrix(windows, rows)).collect();
    let f1 = |x: &[Vec<f64>]| -> Result<f64, ModelError> {
        let detected = model.forest.votes(x[0].clone(), rows.len())?;
        let names = match &model.namer {
            Some(namer) => Some(namer.forest.votes(x[1].clone(), rows.len())?),
            None => None,
        };
        let predicted = forest::decide(&namer::combine(detected, names), 0.0);
        Ok(evaluate::scores(&model.classes, truth, &predicted).macro_f1)
    };
    let base_f1 = f1(&base)?;
    // One fixed permutation of the rows (seeded), applied to all the columns of one metric at
    // once, in every forest's columns: a metric's statistics (and their job-relative twins)
    // carry much the same information, so shuffling one column alone changes nothing while the
    // others stand in, and every column would score zero. The importance is the metric's.
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| evaluate::hash(&i.to_string(), seed));
    // Per metric, its columns in each forest's matrix.
    let mut columns_of: BTreeMap<&str, Vec<Vec<usize>>> = BTreeMap::new();
    for (m, p) in prepared.iter().enumerate() {
        for (c, feature) in p.features.iter().enumerate() {
            let per_forest = columns_of
                .entry(Windows::metric_of(feature))
                .or_insert_with(|| vec![Vec::new(); prepared.len()]);
            per_forest[m].push(c);
        }
    }
    let mut out = Vec::with_capacity(columns_of.len());
    for (metric, per_forest) in columns_of {
        let mut x = base.clone();
        for (m, columns) in per_forest.iter().enumerate() {
            let n = prepared[m].features.len();
            for (i, &j) in order.iter().enumerate() {
                for &c in columns {
                    x[m][i * n + c] = base[m][j * n + c];
                }
            }
        }
        out.push(Importance {
            feature: metric.to_string(),
            f1_drop: base_f1 - f1(&x)?,
        });
    }
    out.sort_by(|a, b| {
        b.f1_drop
            .total_cmp(&a.f1_drop)
            .then(a.feature.cmp(&b.feature))
    });
    out.truncate(keep);
    Ok(out)
}

fn metrics_of(features: &[String]) -> Vec<String> {
    let set: BTreeSet<&str> = features.iter().map(|f| Windows::metric_of(f)).collect();
    set.into_iter().map(str::to_string).collect()
}

pub fn header(
    kind: Kind,
    features: Vec<String>,
    classes: Vec<String>,
    window: (i64, i64),
    training: TrainingSummary,
    options: &TrainOptions,
) -> Header {
    Header {
        format: file::FORMAT.into(),
        format_version: file::FORMAT_VERSION,
        kind,
        created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        jobsight_version: env!("CARGO_PKG_VERSION").into(),
        smartcore_version: file::SMARTCORE_VERSION.into(),
        window_s: window.0,
        stride_s: window.1,
        metrics: metrics_of(&features),
        features,
        classes,
        unknown_below: (kind == Kind::Diagnosis).then_some(options.unknown_below),
        name_features: None,
        forest: (kind == Kind::Diagnosis).then(|| options.forest.clone()),
        score: (kind == Kind::Unsupervised).then(|| options.score.clone()),
        training,
        evaluation: None,
        importance: Vec::new(),
        body_bytes: 0,
        body_fnv1a: String::new(),
    }
}

/// Trains a model on the warehouse at `data` and writes it to `out`. `progress` hears each phase.
pub fn train(
    data: &Path,
    kind: Kind,
    labels_from: &LabelsFrom,
    options: &TrainOptions,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<ModelFile, ModelError> {
    let started = Instant::now();
    if options.feature_set(kind) == dataset::FeatureSet::Application {
        return Err(ModelError::Fit(
            "--features application is for `model eval` only: `classify` does not compute \
             application-relative features, and as measured they do not help the diagnosis \
             (docs/models.md, \"Application-relative features for the diagnosis\")"
                .to_string(),
        ));
    }
    progress("reading windows and labels");
    let labelled = Labelled::for_training_sampled(data, labels_from, kind, options)?;
    let window = match labelled.windows.window() {
        // Without labelled windows an anomaly score reads every window itself and takes their
        // width from them (`score_without_labels`); this one is not used then.
        Err(_) if kind == Kind::Unsupervised && labelled.rows.is_empty() => (0, 0),
        window => window?,
    };
    let folds = labelled.folds(5, options.seed);
    let training = Training {
        data,
        labels_from,
        options,
        labelled,
        folds,
        window,
        started,
    };
    match kind {
        Kind::Diagnosis => training.diagnosis(out, progress),
        Kind::Unsupervised => training.score(out, progress),
    }
}

/// What every phase of [`train`] works from: the labelled windows read, and the fold of each
/// labelled job (fold 0, a fifth of the jobs, is held out for the figures).
struct Training<'a> {
    data: &'a Path,
    labels_from: &'a LabelsFrom,
    options: &'a TrainOptions,
    labelled: Labelled,
    folds: HashMap<String, usize>,
    /// The windows' width and stride, in seconds.
    window: (i64, i64),
    started: Instant,
}

impl Training<'_> {
    fn held_out(&self, job: &str) -> bool {
        self.folds.get(job) == Some(&0)
    }

    /// What the header says of training on `positions` (into the labelled rows).
    fn summary(&self, positions: &[usize], seconds: f64) -> TrainingSummary {
        let labelled = &self.labelled;
        TrainingSummary {
            data: self.data.display().to_string(),
            labels_from: self.labels_from.describe(),
            days: labelled.days.clone(),
            jobs: labelled.job_kind.len(),
            windows: positions.len(),
            per_class: labelled.per_class(positions),
            other_jobs: labelled.other_jobs,
            dropped_windows: labelled.dropped_windows,
            seconds,
            refine: self.options.refine,
            set_aside: 0,
            baselines: Vec::new(),
        }
    }

    /// A diagnosis: its figures and permutation importance from a fit on four fifths of the
    /// jobs, then the model fitted on every job.
    fn diagnosis(
        &self,
        out: &Path,
        progress: &mut dyn FnMut(&str),
    ) -> Result<ModelFile, ModelError> {
        let labelled = &self.labelled;
        if labelled.rows.is_empty() {
            return Err(ModelError::NoData(format!(
                "no labelled windows in {} ({}): a diagnosis needs labels",
                self.data.display(),
                self.labels_from.describe()
            )));
        }
        progress("fitting on four fifths of the jobs for the figures and feature importance");
        let (evaluation, importance) = self.diagnosis_figures(progress)?;
        progress("fitting on all jobs");
        let all: Vec<usize> = (0..labelled.rows.len()).collect();
        let model = Diagnosis::fit(labelled, &all, self.options)?;
        let mut h = header(
            Kind::Diagnosis,
            model.features(),
            labelled.classes.clone(),
            self.window,
            self.summary(&all, self.started.elapsed().as_secs_f64()),
            self.options,
        );
        h.evaluation = evaluation;
        h.importance = importance;
        h.training.set_aside = model.set_aside;
        h.name_features = model.namer.as_ref().and(self.options.name_features);
        ModelFile {
            header: h,
            body: Body::Diagnosis {
                prepared: model.prepared,
                forest: model.forest,
                namer: model.namer,
            },
        }
        .save(out)
    }

    /// The held-out figures and the permutation importance of a diagnosis fitted on the other
    /// four fifths of the jobs; none when either side has no windows.
    fn diagnosis_figures(
        &self,
        progress: &mut dyn FnMut(&str),
    ) -> Result<(Option<Scores>, Vec<Importance>), ModelError> {
        let (labelled, options) = (&self.labelled, self.options);
        let train_pos = labelled.positions(|j| !self.held_out(j));
        let test_pos = labelled.positions(|j| self.held_out(j));
        if test_pos.is_empty() || train_pos.is_empty() {
            return Ok((None, Vec::new()));
        }
        let model = Diagnosis::fit(labelled, &train_pos, options)?;
        let rows: Vec<usize> = test_pos.iter().map(|&p| labelled.rows[p]).collect();
        let truth: Vec<u32> = test_pos.iter().map(|&p| labelled.labels[p]).collect();
        let votes = model.votes(&labelled.windows, &rows)?;
        let predicted = forest::decide(&votes, options.unknown_below);
        let scores = evaluate::scores(&labelled.classes, &truth, &predicted);
        progress("permutation importance on the held-out fifth");
        let importance =
            permutation_importance(&model, &labelled.windows, &rows, &truth, 20, options.seed)?;
        Ok((Some(scores), importance))
    }

    /// An anomaly score on the healthy windows: its detection figures from a fit on four fifths
    /// of the jobs, then the score fitted on every job. Without labels, on every window.
    fn score(&self, out: &Path, progress: &mut dyn FnMut(&str)) -> Result<ModelFile, ModelError> {
        if self.labelled.rows.is_empty() {
            return self.score_without_labels(out, progress);
        }
        let (labelled, options) = (&self.labelled, self.options);
        progress("fitting on the healthy windows of four fifths of the jobs");
        let healthy = |p: &usize| labelled.labels[*p] == 0;
        let train_pos: Vec<usize> = labelled.sample(
            &labelled
                .positions(|j| !self.held_out(j))
                .into_iter()
                .filter(healthy)
                .collect::<Vec<_>>(),
            options.max_windows_per_class,
            options.seed,
        );
        let test_pos = labelled.positions(|j| self.held_out(j));
        let evaluation = if train_pos.len() >= 10 && !test_pos.is_empty() {
            let rows: Vec<usize> = train_pos.iter().map(|&p| labelled.rows[p]).collect();
            let (model, _) = labelled.fit_score(&rows, |j| !self.held_out(j), options)?;
            Some(score_figures(&model, labelled, &test_pos))
        } else {
            None
        };
        let all_rows: Vec<usize> = labelled.sample(
            &(0..labelled.rows.len()).filter(healthy).collect::<Vec<_>>(),
            options.max_windows_per_class,
            options.seed,
        );
        progress("fitting on the healthy windows of all jobs");
        let rows: Vec<usize> = all_rows.iter().map(|&p| labelled.rows[p]).collect();
        let (model, set_aside) = labelled.fit_score(&rows, |_| true, options)?;
        let mut h = header(
            Kind::Unsupervised,
            model.features.clone(),
            Vec::new(),
            self.window,
            self.summary(&all_rows, self.started.elapsed().as_secs_f64()),
            options,
        );
        h.evaluation = evaluation;
        h.training.set_aside = set_aside;
        h.training.baselines = model.baselines.summary();
        ModelFile {
            header: h,
            body: Body::Unsupervised(model),
        }
        .save(out)
    }

    /// An anomaly score for a warehouse without labels: fitted on a sample of every window (its
    /// baselines on all of them), without figures.
    fn score_without_labels(
        &self,
        out: &Path,
        progress: &mut dyn FnMut(&str),
    ) -> Result<ModelFile, ModelError> {
        let (data, options) = (self.data, self.options);
        let every = dataset::read_windows(
            data,
            &dataset::days_with_windows(data),
            None,
            None,
            options.feature_set(Kind::Unsupervised),
            None,
            None,
        )?;
        progress("no labels: training on every window");
        let step = (every.keys.len() / options.max_windows_per_class.max(1)).max(1);
        let rows: Vec<usize> = (0..every.keys.len()).step_by(step).collect();
        let history: Vec<usize> = (0..every.keys.len()).collect();
        let applications = dataset::applications(data, None, None).unwrap_or_default();
        let (model, set_aside) = fit_score(&every, &rows, &history, &applications, options)?;
        let h = header(
            Kind::Unsupervised,
            model.features.clone(),
            Vec::new(),
            every.window()?,
            TrainingSummary {
                windows: rows.len(),
                jobs: every.rows_by_job().len(),
                per_class: Vec::new(),
                set_aside,
                baselines: model.baselines.summary(),
                ..self.summary(&[], self.started.elapsed().as_secs_f64())
            },
            options,
        );
        ModelFile {
            header: h,
            body: Body::Unsupervised(model),
        }
        .save(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::forest::ForestParams;

    /// Two clouds of 150 windows; ten of the second are labelled as the first (anomalies nobody
    /// noticed). The trees that never saw those ten reject their label; nothing else is disputed.
    #[test]
    fn refining_sets_aside_the_windows_whose_label_the_forest_rejects() {
        let (mut x, mut labels) = (Vec::new(), Vec::new());
        for i in 0..300 {
            let class = u32::from(i >= 150);
            // Every window a point of its own: nothing but the first feature tells the clouds apart.
            x.extend([
                f64::from(class) * 10.0 + ((i * 37) % 101) as f64 / 30.0,
                ((i * 53) % 97) as f64 / 20.0,
                ((i * 29) % 89) as f64 / 20.0,
            ]);
            labels.push(if (150..160).contains(&i) { 0 } else { class });
        }
        let params = ForestParams {
            trees: 30,
            ..ForestParams::default()
        };
        let oob = Forest::out_of_bag_votes(&x, &labels, 2, &params).unwrap();
        assert_eq!(oob.len(), 300);
        let keep = undisputed(&labels, &oob, 2);
        let dropped: Vec<usize> = (0..300).filter(|i| !keep.contains(i)).collect();
        assert_eq!(dropped, (150..160).collect::<Vec<_>>());

        // A class never loses more than a fifth of its windows in a round.
        let all_wrong: Vec<u32> = vec![0; 300];
        let votes = vec![vec![0.0, 1.0]; 300];
        assert_eq!(undisputed(&all_wrong, &votes, 2).len(), 240);
        // A window no out-of-bag tree voted on is kept.
        assert_eq!(
            undisputed(&[0, 1], &[vec![0.0, 0.0], vec![0.0, 0.0]], 2),
            vec![0, 1]
        );
    }
}
