//! Machine-learning diagnosis: what the telemetry of a job's windows says, beside what the rules
//! say. Two models, both trained from the warehouse and stored as versioned files ([`file`]):
//!
//! - **diagnosis** ([`forest`]): a random forest over the `windows` table's statistics that names
//!   the anomaly type of each window (HPAS names: cpuoccupy, cachecopy, membw, memeater, memleak,
//!   iobandwidth, iometadata, netoccupy) or "healthy", and says "unknown" when fewer than
//!   `unknown_below` of its trees agree (Taxonomist's confidence threshold);
//! - **unsupervised** ([`unsupervised`]): an anomaly score from healthy windows only, for a
//!   cluster without labels.
//!
//! Training reads every day with windows (`jobsight features --windows 60:15`), labels the
//! windows by the fixed protocol of [`dataset`], holds out a fifth of the jobs for the figures and
//! permutation importance stored in the file, then fits on all jobs. [`evaluate`] has the
//! figures and the by-job cross-validation; [`predict`] turns window verdicts into one verdict
//! per job, combined with the rules' findings, for the `predictions` table.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod baseline;
pub mod dataset;
pub mod evaluate;
pub mod file;
pub mod forest;
pub mod predict;
pub mod retrain;
pub mod typical;
pub mod unsupervised;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use baseline::Baselines;
use dataset::{HEALTHY, Truth, Windows};
use evaluate::Scores;
use file::{Body, Header, Importance, ModelFile, TrainingSummary};
use forest::{Forest, ForestParams, Prepared};
use unsupervised::{AnomalyScore, ScoreParams};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Random forest naming the anomaly type (needs labels).
    Diagnosis,
    /// Anomaly score from healthy windows (labels optional).
    Unsupervised,
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

/// How models are trained and judged.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainOptions {
    pub forest: ForestParams,
    pub score: ScoreParams,
    /// A window whose top class has a smaller share of the trees' votes is "unknown".
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
    /// [`AnomalyScore::fit_refined`]). Off unless asked: measured in docs/models.md, "Training
    /// on labels that miss anomalies", it helps on one application's runs and costs false alarms
    /// on a cluster of several.
    pub refine: u8,
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
}

/// Taxonomist's confidence threshold lies between 0.75 and 0.9; the lower end keeps the unknown
/// rate low on a small training set.
pub const DEFAULT_UNKNOWN_BELOW: f64 = 0.75;

/// A training window is set aside when the trees that never saw it give its label less than
/// this share of their votes and another class more (the majority filter of Brodley and Friedl:
/// fully grown trees memorise a few wrong labels, so a stricter share finds none).
const DISPUTED_BELOW: f32 = 0.5;

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
        }
    }
}

/// The labelled windows of a warehouse.
#[derive(Debug)]
pub struct Labelled {
    pub windows: Windows,
    /// Labelled rows of `windows`, with their class index into `classes`.
    pub rows: Vec<usize>,
    pub labels: Vec<u32>,
    /// Healthy first, then the anomaly types in name order.
    pub classes: Vec<String>,
    /// Each labelled job's kind (its anomaly types joined, or "healthy"), for stratified folds.
    pub job_kind: BTreeMap<String, String>,
    pub other_jobs: usize,
    pub dropped_windows: usize,
    pub days: Vec<String>,
    /// The application of every job of the warehouse (empty when its jobs table cannot be
    /// read): the anomaly score judges windows within their application.
    pub applications: HashMap<String, String>,
}

/// Windows of each class kept while reading for training, per window the sample takes
/// ([`Labelled::for_training_sampled`]): the sample on four fifths of the jobs, for the figures,
/// draws from these, and the fraction held out is judged on those of its jobs among them.
pub const READ_PER_CLASS: usize = 2;

/// Windows handed over at a time by a sampled read: a few whole jobs (as `classify` judges them).
const READ_WINDOWS_AT_A_TIME: usize = 20_000;

/// The seeded hash a window is sampled by (job, node, start): the same data and seed give the
/// same sample, whatever the order windows are read in.
fn window_hash(key: &dataset::WindowKey, seed: u64) -> u64 {
    evaluate::hash(
        &format!("{}\u{1f}{}\u{1f}{}", key.job_id, key.node, key.start_us),
        seed,
    )
}

/// What the labelling protocol says of one window.
enum Verdict<'a> {
    /// Its job has no label, or one that is neither healthy nor an anomaly type.
    NotLabelled,
    /// Across an interval's edge, or in two intervals: left out.
    LeftOut,
    Label(&'a str),
}

fn protocol_label<'a>(
    truths: &'a BTreeMap<String, Truth>,
    key: &dataset::WindowKey,
) -> Verdict<'a> {
    match truths.get(&*key.job_id) {
        None | Some(Truth::Other(_)) => Verdict::NotLabelled,
        Some(truth) => dataset::label_window(truth, key).map_or(Verdict::LeftOut, Verdict::Label),
    }
}

/// Adds `label` to the kinds of the window's job (once per window read: nothing is allocated
/// when the job already has it).
fn note_kind(
    kinds: &mut BTreeMap<String, BTreeSet<String>>,
    key: &dataset::WindowKey,
    label: &str,
) {
    match kinds.get_mut(&*key.job_id) {
        Some(known) if known.contains(label) => {}
        Some(known) => {
            known.insert(label.to_string());
        }
        None => {
            kinds.insert(key.job_id.to_string(), BTreeSet::from([label.to_string()]));
        }
    }
}

/// A sampled read: at most `per_class` windows of each class, the smallest by [`window_hash`].
#[derive(Debug, Clone, Copy)]
struct Keep {
    per_class: usize,
    seed: u64,
}

/// Per class: (hash, row of the kept windows) of each window kept, and the bound below which a
/// window is taken (the per-class share's largest hash once pruned; none before).
type KeptByClass = BTreeMap<String, (Vec<(u64, usize)>, u64)>;

/// What a sampled read saw of every window: each job's kinds (`healthy+memleak`) and the windows
/// the protocol left out.
struct Seen {
    job_kind: BTreeMap<String, String>,
    dropped: usize,
}

impl Keep {
    /// Reads the windows of the labelled jobs a few jobs at a time (job-relative columns need
    /// a job's windows together) and keeps each class's smallest hashes. A window is taken
    /// into the kept set only when its hash is below its class's current bound, so after the
    /// first batches few are; the kept set is pruned when a class holds twice its share, and
    /// compacted when most of it is pruned.
    #[allow(clippy::too_many_arguments)]
    fn read(
        self,
        data: &Path,
        days: &[chrono::NaiveDate],
        truths: &BTreeMap<String, Truth>,
        jobs: &HashSet<String>,
        features: Option<&[String]>,
        set: dataset::FeatureSet,
        app: Option<&typical::AppBaselines>,
    ) -> Result<(Windows, Seen), ModelError> {
        let mut kept = Windows::default();
        let mut classes = KeptByClass::new();
        let mut kinds: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut dropped = 0usize;
        let per_class = self.per_class.max(1);
        dataset::read_windows_by_jobs(
            data,
            days,
            Some(jobs),
            features,
            set,
            None,
            app,
            READ_WINDOWS_AT_A_TIME,
            |batch| {
                if kept.features.is_empty() {
                    kept.features = batch.features.clone();
                }
                let mut taken: Vec<usize> = Vec::new();
                for (i, key) in batch.keys.iter().enumerate() {
                    let label = match protocol_label(truths, key) {
                        Verdict::NotLabelled => continue,
                        Verdict::LeftOut => {
                            dropped += 1;
                            continue;
                        }
                        Verdict::Label(label) => label,
                    };
                    note_kind(&mut kinds, key, label);
                    let h = window_hash(key, self.seed);
                    if !classes.contains_key(label) {
                        classes.insert(label.to_string(), (Vec::new(), u64::MAX));
                    }
                    let Some((members, bound)) = classes.get_mut(label) else {
                        continue;
                    };
                    if h < *bound {
                        members.push((h, kept.keys.len() + taken.len()));
                        taken.push(i);
                    }
                }
                kept.append(&batch, &taken);
                for (members, bound) in classes.values_mut() {
                    if members.len() >= 2 * per_class {
                        members.sort_unstable();
                        members.truncate(per_class);
                        *bound = members[per_class - 1].0;
                    }
                }
                let live: usize = classes.values().map(|(m, _)| m.len()).sum();
                if kept.keys.len() > 2 * live.max(READ_WINDOWS_AT_A_TIME) {
                    compact(&mut kept, &mut classes);
                }
                Ok(())
            },
        )?;
        for (members, _) in classes.values_mut() {
            members.sort_unstable();
            members.truncate(per_class);
        }
        compact(&mut kept, &mut classes);
        // In key order, as every other read gives them.
        let mut order: Vec<usize> = (0..kept.keys.len()).collect();
        order.sort_by(|&a, &b| kept.keys[a].cmp(&kept.keys[b]));
        let job_kind = kinds
            .into_iter()
            .map(|(job, kinds)| {
                let kinds: Vec<String> = kinds.into_iter().collect();
                (job, kinds.join("+"))
            })
            .collect();
        Ok((kept.subset(&order), Seen { job_kind, dropped }))
    }
}

/// Keeps only the rows of `kept` that some class still holds, renumbering the classes' rows.
fn compact(kept: &mut Windows, classes: &mut KeptByClass) {
    let mut rows: Vec<usize> = classes
        .values()
        .flat_map(|(m, _)| m.iter().map(|&(_, r)| r))
        .collect();
    rows.sort_unstable();
    let new_row: HashMap<usize, usize> = rows.iter().enumerate().map(|(n, &r)| (r, n)).collect();
    for (members, _) in classes.values_mut() {
        for member in members.iter_mut() {
            member.1 = new_row[&member.1];
        }
    }
    *kept = kept.subset(&rows);
}

impl Labelled {
    /// Reads the windows (all days with windows) and labels them: the columns `features` (a
    /// model's) or else the `set` of the `metrics` matched (every metric when `None`). `classes`
    /// fixes the class list (a model's); classes found beyond it are appended.
    pub fn read(
        data: &Path,
        labels_from: &LabelsFrom,
        features: Option<&[String]>,
        set: dataset::FeatureSet,
        metrics: Option<&[String]>,
        classes: Option<&[String]>,
    ) -> Result<Labelled, ModelError> {
        Labelled::read_keeping(data, labels_from, features, set, metrics, classes, None)
    }

    /// [`Labelled::read`], keeping at most `keep.per_class` windows of each class (the seeded
    /// sample [`Labelled::sample`] draws) when given: the windows are read a few jobs at a
    /// time, so that memory holds those kept and one batch of jobs, not every labelled window
    /// of the history. What the protocol says of every window read (each job's kinds, and so
    /// its fold; the windows left out) is counted over all of them.
    fn read_keeping(
        data: &Path,
        labels_from: &LabelsFrom,
        features: Option<&[String]>,
        set: dataset::FeatureSet,
        metrics: Option<&[String]>,
        classes: Option<&[String]>,
        keep: Option<Keep>,
    ) -> Result<Labelled, ModelError> {
        let days = dataset::days_with_windows(data);
        if days.is_empty() {
            return Err(ModelError::NoData(format!(
                "no windows in {}: compute them first with `jobsight features --windows 60:15`",
                data.display()
            )));
        }
        let truths = labels_from.read(data)?;
        let labelled_jobs: HashSet<String> = truths.keys().cloned().collect();
        let chosen: Option<Vec<String>> = match (features, metrics) {
            (Some(f), _) => Some(f.to_vec()),
            (None, None) => None,
            (None, Some(patterns)) => {
                let found = dataset::window_metrics(data, &days, Some(&labelled_jobs), None)?;
                // A derived metric only by its full name: `mem_*` means the stored series.
                let derived = dataset::derived_metrics(&found)
                    .into_iter()
                    .filter(|m| patterns.contains(m));
                let kept: BTreeSet<String> = found
                    .iter()
                    .filter(|m| dataset::metric_matches(m, patterns))
                    .cloned()
                    .chain(derived)
                    .collect();
                if kept.is_empty() {
                    let some: Vec<&str> = found.iter().take(12).map(String::as_str).collect();
                    return Err(ModelError::NoData(format!(
                        "none of the metrics {} has windows in {} (it has {} metrics: {}{})",
                        patterns.join(","),
                        data.display(),
                        found.len(),
                        some.join(", "),
                        if found.len() > some.len() {
                            ", ..."
                        } else {
                            ""
                        }
                    )));
                }
                Some(set.names(&kept))
            }
        };
        let applications = dataset::applications(data, None, None).unwrap_or_default();
        // Application-relative columns need every run's typical window first (of every job,
        // labelled or not: the more runs, the better an application's baseline).
        let chosen = match chosen {
            None if set == dataset::FeatureSet::Application => Some(set.names(
                &dataset::window_metrics(data, &days, Some(&labelled_jobs), None)?,
            )),
            chosen => chosen,
        };
        let app_columns = chosen
            .as_deref()
            .map(typical::app_columns)
            .unwrap_or_default();
        let app = if app_columns.is_empty() {
            None
        } else {
            let runs = typical::gather(data, &days, None, &app_columns)?;
            Some(typical::leave_one_out(&runs, &applications))
        };
        let (windows, seen) = match keep {
            None => (
                dataset::read_windows(
                    data,
                    &days,
                    Some(&labelled_jobs),
                    chosen.as_deref(),
                    set,
                    None,
                    app.as_ref(),
                )?,
                None,
            ),
            Some(keep) => {
                let (windows, seen) = keep.read(
                    data,
                    &days,
                    &truths,
                    &labelled_jobs,
                    chosen.as_deref(),
                    set,
                    app.as_ref(),
                )?;
                (windows, Some(seen))
            }
        };
        let mut found: BTreeSet<String> = BTreeSet::new();
        let mut picked: Vec<(usize, String)> = Vec::new();
        let mut dropped = 0;
        let mut kinds_found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (i, key) in windows.keys.iter().enumerate() {
            match protocol_label(&truths, key) {
                Verdict::NotLabelled => {}
                Verdict::LeftOut => dropped += 1,
                Verdict::Label(label) => {
                    found.insert(label.to_string());
                    note_kind(&mut kinds_found, key, label);
                    picked.push((i, label.to_string()));
                }
            }
        }
        let mut class_list: Vec<String> = match classes {
            Some(c) => c.to_vec(),
            None => std::iter::once(HEALTHY.to_string())
                .chain(found.iter().filter(|c| *c != HEALTHY).cloned())
                .collect(),
        };
        for c in &found {
            if !class_list.contains(c) {
                class_list.push(c.clone());
            }
        }
        let index: HashMap<&str, u32> = class_list
            .iter()
            .enumerate()
            .map(|(i, c)| (c.as_str(), i as u32))
            .collect();
        let (rows, labels) = picked.iter().map(|(i, l)| (*i, index[l.as_str()])).unzip();
        let mut job_kind: BTreeMap<String, String> = kinds_found
            .into_iter()
            .map(|(job, kinds)| {
                let kinds: Vec<String> = kinds.into_iter().collect();
                (job, kinds.join("+"))
            })
            .collect();
        let other_jobs = truths
            .values()
            .filter(|t| matches!(t, Truth::Other(_)))
            .count();
        // A sampled read: what every window said, not only the kept ones.
        if let Some(seen) = seen {
            job_kind = seen.job_kind;
            dropped = seen.dropped;
        }
        Ok(Labelled {
            windows,
            rows,
            labels,
            classes: class_list,
            job_kind,
            other_jobs,
            dropped_windows: dropped,
            days: days.iter().map(|d| d.to_string()).collect(),
            applications,
        })
    }

    /// The labelled windows a kind of model trains on: its feature set over the metrics the
    /// options name (every metric by default).
    pub fn for_training(
        data: &Path,
        labels_from: &LabelsFrom,
        kind: Kind,
        options: &TrainOptions,
    ) -> Result<Labelled, ModelError> {
        Labelled::read(
            data,
            labels_from,
            None,
            options.feature_set(kind),
            options.metrics.as_deref(),
            None,
        )
    }

    /// [`Labelled::for_training`] for `model train` and the nightly retrain of a diagnosis: at
    /// most [`READ_PER_CLASS`] × `max_windows_per_class` windows of each class are kept while
    /// reading (the smallest by the sample's seeded hash, so the final fit on every job sees the
    /// sample it saw when all were read), the rest dropped as they are read. The anomaly score,
    /// and a cap of 0, read everything.
    pub fn for_training_sampled(
        data: &Path,
        labels_from: &LabelsFrom,
        kind: Kind,
        options: &TrainOptions,
    ) -> Result<Labelled, ModelError> {
        let keep = (kind == Kind::Diagnosis && options.max_windows_per_class > 0).then(|| Keep {
            per_class: options.max_windows_per_class.saturating_mul(READ_PER_CLASS),
            seed: options.seed,
        });
        Labelled::read_keeping(
            data,
            labels_from,
            None,
            options.feature_set(kind),
            options.metrics.as_deref(),
            None,
            keep,
        )
    }

    /// Positions (into `rows`) of the windows of the jobs for which `keep(job)` holds.
    pub fn positions(&self, keep: impl Fn(&str) -> bool) -> Vec<usize> {
        self.rows
            .iter()
            .enumerate()
            .filter(|(_, r)| keep(&self.windows.keys[**r].job_id))
            .map(|(p, _)| p)
            .collect()
    }

    /// The history the anomaly score's application baselines are learned from, as rows of
    /// `windows`, of the jobs for which `keep(job)` holds: the windows labelled healthy of
    /// labelled jobs (a window the protocol left out, across an anomaly's edge, is not known to
    /// be healthy), every window of the others (history without labels).
    pub fn history(&self, keep: impl Fn(&str) -> bool) -> Vec<usize> {
        let healthy: HashSet<usize> = self
            .rows
            .iter()
            .zip(&self.labels)
            .filter(|(_, l)| **l == 0)
            .map(|(r, _)| *r)
            .collect();
        (0..self.windows.keys.len())
            .filter(|r| {
                let job = &*self.windows.keys[*r].job_id;
                keep(job) && (healthy.contains(r) || !self.job_kind.contains_key(job))
            })
            .collect()
    }

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

    /// At most `cap` positions per class, chosen by a seeded hash of the window (job, node,
    /// start), so the same data gives the same sample; order kept.
    pub fn sample(&self, positions: &[usize], cap: usize, seed: u64) -> Vec<usize> {
        if cap == 0 {
            return positions.to_vec();
        }
        let mut by_class: BTreeMap<u32, Vec<(u64, usize)>> = BTreeMap::new();
        for &p in positions {
            let h = window_hash(&self.windows.keys[self.rows[p]], seed);
            by_class.entry(self.labels[p]).or_default().push((h, p));
        }
        let mut kept: Vec<usize> = Vec::with_capacity(positions.len().min(cap * by_class.len()));
        for (_, mut members) in by_class {
            if members.len() > cap {
                members.sort_unstable();
                members.truncate(cap);
            }
            kept.extend(members.into_iter().map(|m| m.1));
        }
        kept.sort_unstable();
        kept
    }

    /// Windows per class over `positions`.
    pub fn per_class(&self, positions: &[usize]) -> Vec<(String, u64)> {
        let mut counts = vec![0u64; self.classes.len()];
        for &p in positions {
            counts[self.labels[p] as usize] += 1;
        }
        self.classes.iter().cloned().zip(counts).collect()
    }

    /// Jobs dealt into `k` folds, stratified by kind.
    pub fn folds(&self, k: usize, seed: u64) -> HashMap<String, usize> {
        let jobs: Vec<(String, String)> = self
            .job_kind
            .iter()
            .map(|(j, kind)| (j.clone(), kind.clone()))
            .collect();
        evaluate::folds(&jobs, k, seed).into_iter().collect()
    }
}

/// A fitted diagnosis: columns, forest, classes and the unknown threshold.
#[derive(Debug)]
pub struct Diagnosis {
    pub prepared: Prepared,
    pub forest: Forest,
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
        let positions = &data.sample(positions, options.max_windows_per_class, options.seed);
        let mut rows: Vec<usize> = positions.iter().map(|&p| data.rows[p]).collect();
        let mut labels: Vec<u32> = positions.iter().map(|&p| data.labels[p]).collect();
        let prepare = |rows: &[usize], labels: &[u32]| {
            let prepared =
                forest::prepare(&data.windows, rows, labels, options.forest.max_features);
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
        Ok(Diagnosis {
            prepared,
            forest,
            classes: data.classes.clone(),
            unknown_below: options.unknown_below,
            set_aside,
        })
    }

    /// Votes per class for `rows` of `windows`.
    pub fn votes(&self, windows: &Windows, rows: &[usize]) -> Result<Vec<Vec<f32>>, ModelError> {
        self.forest
            .votes(self.prepared.matrix(windows, rows), rows.len())
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
    model.baselines = Baselines::learn(windows, history, &scores, applications);
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
    let n = model.prepared.features.len();
    let base_x = model.prepared.matrix(windows, rows);
    let f1 = |x: Vec<f64>| -> Result<f64, ModelError> {
        let votes = model.forest.votes(x, rows.len())?;
        let predicted = forest::decide(&votes, 0.0);
        Ok(evaluate::scores(&model.classes, truth, &predicted).macro_f1)
    };
    let base = f1(base_x.clone())?;
    // One fixed permutation of the rows (seeded), applied to all the columns of one metric at
    // once: a metric's statistics (and their job-relative twins) carry much the same
    // information, so shuffling one column alone changes nothing while the others stand in, and
    // every column would score zero. The importance is the metric's.
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| evaluate::hash(&i.to_string(), seed));
    let mut columns_of: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (c, feature) in model.prepared.features.iter().enumerate() {
        columns_of
            .entry(Windows::metric_of(feature))
            .or_default()
            .push(c);
    }
    let mut out = Vec::with_capacity(columns_of.len());
    for (metric, columns) in columns_of {
        let mut x = base_x.clone();
        for (i, &j) in order.iter().enumerate() {
            for &c in &columns {
                x[i * n + c] = base_x[j * n + c];
            }
        }
        out.push(Importance {
            feature: metric.to_string(),
            f1_drop: base - f1(x)?,
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
    let window = labelled.windows.window()?;
    let folds = labelled.folds(5, options.seed);
    let held_out = |job: &str| folds.get(job) == Some(&0);
    let summary = |positions: &[usize], seconds: f64| TrainingSummary {
        data: data.display().to_string(),
        labels_from: labels_from.describe(),
        days: labelled.days.clone(),
        jobs: labelled.job_kind.len(),
        windows: positions.len(),
        per_class: labelled.per_class(positions),
        other_jobs: labelled.other_jobs,
        dropped_windows: labelled.dropped_windows,
        seconds,
        refine: options.refine,
        set_aside: 0,
        baselines: Vec::new(),
    };
    match kind {
        Kind::Diagnosis => {
            if labelled.rows.is_empty() {
                return Err(ModelError::NoData(format!(
                    "no labelled windows in {} ({}): a diagnosis needs labels",
                    data.display(),
                    labels_from.describe()
                )));
            }
            progress("fitting on four fifths of the jobs for the figures and feature importance");
            let train_pos = labelled.positions(|j| !held_out(j));
            let test_pos = labelled.positions(held_out);
            let (evaluation, importance) = if test_pos.is_empty() || train_pos.is_empty() {
                (None, Vec::new())
            } else {
                let model = Diagnosis::fit(&labelled, &train_pos, options)?;
                let rows: Vec<usize> = test_pos.iter().map(|&p| labelled.rows[p]).collect();
                let truth: Vec<u32> = test_pos.iter().map(|&p| labelled.labels[p]).collect();
                let votes = model.votes(&labelled.windows, &rows)?;
                let predicted = forest::decide(&votes, options.unknown_below);
                let scores = evaluate::scores(&labelled.classes, &truth, &predicted);
                progress("permutation importance on the held-out fifth");
                let importance = permutation_importance(
                    &model,
                    &labelled.windows,
                    &rows,
                    &truth,
                    20,
                    options.seed,
                )?;
                (Some(scores), importance)
            };
            progress("fitting on all jobs");
            let all: Vec<usize> = (0..labelled.rows.len()).collect();
            let model = Diagnosis::fit(&labelled, &all, options)?;
            let mut h = header(
                kind,
                model.prepared.features.clone(),
                labelled.classes.clone(),
                window,
                summary(&all, started.elapsed().as_secs_f64()),
                options,
            );
            h.evaluation = evaluation;
            h.importance = importance;
            h.training.set_aside = model.set_aside;
            ModelFile {
                header: h,
                body: Body::Diagnosis {
                    prepared: model.prepared,
                    forest: model.forest,
                },
            }
            .save(out)
        }
        Kind::Unsupervised => {
            // Healthy windows when there are labels; every window when there are none.
            let (all_rows, evaluation) = if labelled.rows.is_empty() {
                let every = dataset::read_windows(
                    data,
                    &dataset::days_with_windows(data),
                    None,
                    None,
                    options.feature_set(kind),
                    None,
                    None,
                )?;
                progress("no labels: training on every window");
                let step = (every.keys.len() / options.max_windows_per_class.max(1)).max(1);
                let rows: Vec<usize> = (0..every.keys.len()).step_by(step).collect();
                let history: Vec<usize> = (0..every.keys.len()).collect();
                let applications = dataset::applications(data, None, None).unwrap_or_default();
                let (model, set_aside) =
                    fit_score(&every, &rows, &history, &applications, options)?;
                let h = header(
                    kind,
                    model.features.clone(),
                    Vec::new(),
                    every.window()?,
                    TrainingSummary {
                        windows: rows.len(),
                        jobs: every.rows_by_job().len(),
                        per_class: Vec::new(),
                        set_aside,
                        baselines: model.baselines.summary(),
                        ..summary(&[], started.elapsed().as_secs_f64())
                    },
                    options,
                );
                return ModelFile {
                    header: h,
                    body: Body::Unsupervised(model),
                }
                .save(out);
            } else {
                progress("fitting on the healthy windows of four fifths of the jobs");
                let healthy = |p: &usize| labelled.labels[*p] == 0;
                let train_pos: Vec<usize> = labelled.sample(
                    &labelled
                        .positions(|j| !held_out(j))
                        .into_iter()
                        .filter(healthy)
                        .collect::<Vec<_>>(),
                    options.max_windows_per_class,
                    options.seed,
                );
                let test_pos = labelled.positions(held_out);
                let evaluation = if train_pos.len() >= 10 && !test_pos.is_empty() {
                    let rows: Vec<usize> = train_pos.iter().map(|&p| labelled.rows[p]).collect();
                    let (model, _) = labelled.fit_score(&rows, |j| !held_out(j), options)?;
                    Some(score_figures(&model, &labelled, &test_pos))
                } else {
                    None
                };
                let all: Vec<usize> = labelled.sample(
                    &(0..labelled.rows.len()).filter(healthy).collect::<Vec<_>>(),
                    options.max_windows_per_class,
                    options.seed,
                );
                (all, evaluation)
            };
            progress("fitting on the healthy windows of all jobs");
            let rows: Vec<usize> = all_rows.iter().map(|&p| labelled.rows[p]).collect();
            let (model, set_aside) = labelled.fit_score(&rows, |_| true, options)?;
            let mut h = header(
                kind,
                model.features.clone(),
                Vec::new(),
                window,
                summary(&all_rows, started.elapsed().as_secs_f64()),
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
    }
}

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
    /// Refining rounds the models were trained with.
    #[serde(default)]
    pub refine: u8,
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
        Body::Diagnosis { prepared, forest } => {
            let votes = forest.votes(prepared.matrix(&labelled.windows, &rows), rows.len())?;
            let unknown_below = header.unknown_below.unwrap_or(DEFAULT_UNKNOWN_BELOW);
            let decide = |threshold: f64| -> Vec<Option<u32>> {
                votes
                    .iter()
                    .map(|v| {
                        let (c, s) = forest::top(v);
                        (f64::from(s) >= threshold).then_some(c as u32)
                    })
                    .collect()
            };
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
        refine: header.training.refine,
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
fn share_by_class(data: &Labelled, positions: &[usize], flags: &[bool]) -> Vec<(String, f64)> {
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
        let x = model.prepared.matrix(&data.windows, &rows);
        let n = model.prepared.features.len();
        let mut text = String::from("label");
        for f in &model.prepared.features {
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
    progress("reading windows and labels");
    let mut labelled = Labelled::for_training(data, labels_from, kind, options)?;
    if labelled.rows.is_empty() {
        return Err(ModelError::NoData(format!(
            "no labelled windows in {} ({})",
            data.display(),
            labels_from.describe()
        )));
    }
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
        None => labelled.folds(cv.folds.max(2), options.seed),
    };
    let n_folds = if cv.hold_out.is_some() {
        1
    } else if cv.leave_out_each {
        applications.len()
    } else {
        cv.folds.max(2)
    };
    // Where each fold's verdicts start in `truth`, for the figures per application.
    let mut fold_starts: Vec<(usize, usize)> = Vec::new();
    let mut truth = Vec::new();
    let mut at_threshold = Vec::new();
    let mut forced = Vec::new();
    let mut flagged_positions = Vec::new();
    let mut flags = Vec::new();
    let (mut train_s, mut predict_s, mut predicted_windows) = (0.0, 0.0, 0usize);
    let truth_labels = labelled.labels.clone();
    let mut contaminated_windows = 0;
    // (fold, position, top class, its share of the votes or the anomaly score), for --verdicts.
    let mut judged: Vec<(usize, usize, u32, f64)> = Vec::new();
    for fold in 0..n_folds {
        progress(&format!("fold {}/{n_folds}", fold + 1));
        let test_pos = labelled.positions(|j| fold_of.get(j) == Some(&fold));
        let train_pos = labelled.positions(|j| fold_of.get(j) != Some(&fold));
        if test_pos.is_empty() || train_pos.is_empty() {
            continue;
        }
        // This fold's training labels, some anomalous jobs labelled healthy if asked; the truth
        // comes back at the end of the fold.
        labelled.labels.clone_from(&truth_labels);
        if cv.contaminate > 0.0 {
            let unnoticed = unnoticed_jobs(
                &labelled,
                |j| fold_of.get(j) != Some(&fold),
                cv.contaminate,
                options.seed.wrapping_add(fold as u64),
            );
            for &p in &train_pos {
                if unnoticed.contains(&*labelled.windows.keys[labelled.rows[p]].job_id)
                    && labelled.labels[p] != 0
                {
                    labelled.labels[p] = 0;
                    contaminated_windows += 1;
                }
            }
        }
        let rows: Vec<usize> = test_pos.iter().map(|&p| labelled.rows[p]).collect();
        fold_starts.push((fold, truth.len()));
        match kind {
            Kind::Diagnosis => {
                let started = Instant::now();
                let model = Diagnosis::fit(&labelled, &train_pos, options)?;
                train_s += started.elapsed().as_secs_f64();
                let started = Instant::now();
                let votes = model.votes(&labelled.windows, &rows)?;
                predict_s += started.elapsed().as_secs_f64();
                predicted_windows += rows.len();
                at_threshold.extend(forest::decide(&votes, options.unknown_below));
                forced.extend(forest::decide(&votes, 0.0));
                judged.extend(test_pos.iter().zip(&votes).map(|(&p, v)| {
                    let (class, share) = forest::top(v);
                    (fold, p, class as u32, f64::from(share))
                }));
                truth.extend(test_pos.iter().map(|&p| labelled.labels[p]));
                if let Some(dir) = &cv.export {
                    // The training rows the forest really learnt from: the per-class sample.
                    let trained_on =
                        labelled.sample(&train_pos, options.max_windows_per_class, options.seed);
                    export_fold(dir, fold, &model, &labelled, &trained_on, &test_pos)?;
                }
            }
            Kind::Unsupervised => {
                let healthy: Vec<usize> = labelled
                    .sample(
                        &train_pos
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
                // The training jobs' every window (not other jobs': an application left out
                // must not get a baseline from its runs the labels left out).
                let (model, _) = labelled.fit_score(
                    &healthy,
                    |j| fold_of.get(j).is_some_and(|&f| f != fold),
                    options,
                )?;
                train_s += started.elapsed().as_secs_f64();
                let started = Instant::now();
                let scores = model.judge(&labelled.windows, &rows, &labelled.applications);
                predict_s += started.elapsed().as_secs_f64();
                predicted_windows += rows.len();
                truth.extend(test_pos.iter().map(|&p| u32::from(labelled.labels[p] != 0)));
                at_threshold.extend(scores.iter().map(|&s| Some(u32::from(s > 1.0))));
                flagged_positions.extend(test_pos.iter().copied());
                flags.extend(scores.iter().map(|&s| s > 1.0));
                judged.extend(
                    test_pos
                        .iter()
                        .zip(&scores)
                        .map(|(&p, &s)| (fold, p, u32::from(s > 1.0), s)),
                );
            }
        }
    }
    labelled.labels = truth_labels;
    let classes_of = |kind: Kind| match kind {
        Kind::Diagnosis => labelled.classes.clone(),
        Kind::Unsupervised => score_classes(),
    };
    if let Some(path) = &cv.verdicts {
        write_verdicts(path, &classes_of(kind), &labelled, &judged, &at_threshold)?;
    }
    let mut per_application = Vec::new();
    if cv.leave_out_each {
        let classes = classes_of(kind);
        for (i, &(fold, from)) in fold_starts.iter().enumerate() {
            let to = fold_starts.get(i + 1).map_or(truth.len(), |n| n.1);
            let jobs = fold_of.values().filter(|&&f| f == fold).count();
            per_application.push(ApplicationScores {
                application: applications[fold].clone(),
                jobs,
                scores: evaluate::scores(&classes, &truth[from..to], &at_threshold[from..to]),
            });
        }
    }
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
            share_by_class(&labelled, &flagged_positions, &flags),
        ),
    };
    Ok(EvalReport {
        kind,
        model: None,
        folds: (cv.hold_out.is_none() && !cv.leave_out_each).then_some(n_folds),
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
        refine: options.refine,
    })
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

/// The report as text: one line per class, then the overall figures and the confusion matrix.
pub fn render_report(report: &EvalReport) -> String {
    let mut out = String::new();
    let what = match (&report.model, report.folds, &report.hold_out) {
        (Some(m), _, _) => format!("model {m}"),
        (None, Some(k), _) => format!("{k}-fold cross-validation by job"),
        (None, None, Some(app)) => format!("application {app:?} held out"),
        _ if !report.per_application.is_empty() => format!(
            "leave-one-application-out over {} applications",
            report.per_application.len()
        ),
        _ => "evaluation".into(),
    };
    out.push_str(&format!(
        "{} {what}: {} labelled window(s) of {} job(s)\n",
        report.kind.name(),
        report.scores.windows,
        report.jobs
    ));
    if report.contaminate > 0.0 {
        out.push_str(&format!(
            "contaminated: {:.0} % of each fold's anomalous training jobs labelled healthy ({} window(s) over the folds)\n",
            report.contaminate * 100.0,
            report.contaminated_windows
        ));
    }
    if report.refine > 0 {
        out.push_str(&format!(
            "refined: up to {} round(s) of setting aside disputed training windows\n",
            report.refine
        ));
    }
    let table = |title: &str, s: &Scores, out: &mut String| {
        out.push_str(&format!(
            "{title}\n  {:<12} {:>9} {:>9} {:>9} {:>9}\n",
            "class", "precision", "recall", "F1", "windows"
        ));
        for c in &s.per_class {
            if c.support == 0 && c.precision == 0.0 {
                continue;
            }
            out.push_str(&format!(
                "  {:<12} {:>9.3} {:>9.3} {:>9.3} {:>9}\n",
                c.class, c.precision, c.recall, c.f1, c.support
            ));
        }
        out.push_str(&format!(
            "  macro F1 {:.3}; anomaly miss rate {:.3}; false-alarm rate {:.3}; unknown rate {:.3}\n",
            s.macro_f1, s.miss_rate, s.false_alarm_rate, s.unknown_rate
        ));
    };
    match report.unknown_below {
        Some(t) => table(
            &format!("verdicts (unknown below {t:.2} of the votes):"),
            &report.scores,
            &mut out,
        ),
        None => table(
            "verdicts (score above 1 = anomalous):",
            &report.scores,
            &mut out,
        ),
    }
    if let Some(forced) = &report.forced {
        table("top class, no unknown:", forced, &mut out);
    }
    if !report.per_application.is_empty() {
        out.push_str(&format!(
            "each application when left out:\n  {:<16} {:>6} {:>9} {:>9} {:>11} {:>9}\n",
            "application", "jobs", "windows", "macro F1", "false alarm", "unknown"
        ));
        for a in &report.per_application {
            out.push_str(&format!(
                "  {:<16} {:>6} {:>9} {:>9.3} {:>11.3} {:>9.3}\n",
                truncate(&a.application, 16),
                a.jobs,
                a.scores.windows,
                a.scores.macro_f1,
                a.scores.false_alarm_rate,
                a.scores.unknown_rate
            ));
        }
    }
    if !report.flagged_share.is_empty() {
        out.push_str("share of windows flagged, by true class:\n");
        for (c, s) in &report.flagged_share {
            out.push_str(&format!("  {c:<12} {s:.3}\n"));
        }
    }
    out.push_str("confusion (rows: truth; columns: verdict):\n");
    let mut columns = report.classes.clone();
    columns.push("unknown".into());
    out.push_str(&format!("  {:<12}", ""));
    for c in &columns {
        out.push_str(&format!(" {:>10}", truncate(c, 10)));
    }
    out.push('\n');
    for (c, row) in report.classes.iter().zip(&report.scores.confusion) {
        out.push_str(&format!("  {:<12}", truncate(c, 12)));
        for v in row {
            out.push_str(&format!(" {v:>10}"));
        }
        out.push('\n');
    }
    // A model judged as it is was trained before this run: its header's time, said as such.
    let training = if report.model.is_some() {
        format!("trained in {:.2} s (its header)", report.train_seconds)
    } else {
        format!("training {:.2} s", report.train_seconds)
    };
    out.push_str(&format!(
        "{training}; prediction {:.3} s ({:.0} windows/s)\n",
        report.predict_seconds, report.windows_per_second
    ));
    out
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// A short description of a model file's header, for `jobsight model info`.
pub fn render_header(h: &Header) -> String {
    let mut out = format!(
        "{} model, format {}, made {} by jobsight {} with smartcore {}\n",
        h.kind.name(),
        h.format_version,
        h.created,
        h.jobsight_version,
        h.smartcore_version
    );
    out.push_str(&format!(
        "windows: {} s every {} s; {} feature(s) from {} metric(s)\n",
        h.window_s,
        h.stride_s,
        h.features.len(),
        h.metrics.len()
    ));
    if !h.classes.is_empty() {
        out.push_str(&format!(
            "classes: {}; unknown below {:.2} of the votes\n",
            h.classes.join(", "),
            h.unknown_below.unwrap_or(DEFAULT_UNKNOWN_BELOW)
        ));
    }
    let t = &h.training;
    out.push_str(&format!(
        "trained on {} window(s) of {} job(s) from {} ({}) in {:.1} s",
        t.windows, t.jobs, t.data, t.labels_from, t.seconds
    ));
    if !t.per_class.is_empty() {
        let per: Vec<String> = t
            .per_class
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        out.push_str(&format!(": {}", per.join(", ")));
    }
    out.push('\n');
    if t.refine > 0 {
        out.push_str(&format!(
            "refined in up to {} round(s): {} training window(s) set aside as disputed\n",
            t.refine, t.set_aside
        ));
    }
    if !t.baselines.is_empty() {
        let per: Vec<String> = t
            .baselines
            .iter()
            .map(|(app, cut, runs)| format!("{app} ×{cut:.2} ({runs} runs)"))
            .collect();
        out.push_str(&format!(
            "application baselines (the score's threshold for each): {}\n",
            per.join(", ")
        ));
    }
    if let Some(e) = &h.evaluation {
        let per: Vec<String> = e
            .per_class
            .iter()
            .filter(|c| c.support > 0)
            .map(|c| format!("{} {:.3}", c.class, c.f1))
            .collect();
        out.push_str(&format!(
            "held-out fifth of the jobs: macro F1 {:.3} (F1 {}); miss rate {:.3}, false alarms {:.3}, unknown {:.3}\n",
            e.macro_f1,
            per.join(", "),
            e.miss_rate,
            e.false_alarm_rate,
            e.unknown_rate
        ));
    }
    if !h.importance.is_empty() {
        out.push_str(
            "most important metrics (macro F1 drop when all of a metric's features are shuffled):\n",
        );
        for i in h.importance.iter().take(10) {
            out.push_str(&format!("  {:<48} {:.3}\n", i.feature, i.f1_drop));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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
