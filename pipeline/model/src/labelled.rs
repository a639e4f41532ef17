//! The labelled windows of a warehouse ([`Labelled`]): what training, evaluation and
//! cross-validation all start from. Every day with windows is read (a model's columns, or a
//! feature set over the metrics asked for), and each window of a labelled job labelled by the
//! protocol of [`dataset`]; each labelled job gets a kind (its anomaly types joined) so that folds
//! can be stratified.
//!
//! For training a diagnosis, the read can keep only a seeded sample of each class as it goes
//! ([`Labelled::for_training_sampled`]), so memory holds the sample and one batch of jobs rather
//! than every labelled window of the history.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use chrono::NaiveDate;

use super::dataset::{self, HEALTHY, Truth, Windows};
use super::{Kind, LabelsFrom, ModelError, TrainOptions, evaluate, typical};

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
        days: &[NaiveDate],
        truths: &BTreeMap<String, Truth>,
        jobs: &HashSet<String>,
        features: Option<&[String]>,
        set: dataset::FeatureSet,
        app: Option<&dataset::AppBaselines>,
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
        let seen = Seen {
            job_kind: joined_kinds(kinds),
            dropped,
        };
        Ok((kept.subset(&order), seen))
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
        let chosen = chosen_columns(data, &days, &labelled_jobs, features, set, metrics)?;
        let applications = dataset::applications(data, None, None).unwrap_or_default();
        // Application-relative columns need every run's typical window first (of every job,
        // labelled or not: the more runs, the better an application's baseline).
        let chosen = match chosen {
            None if set == dataset::FeatureSet::Application => Some(set.names(
                &dataset::window_metrics(data, &days, Some(&labelled_jobs), None)?,
            )),
            chosen => chosen,
        };
        let app = app_baselines(data, &days, chosen.as_deref(), &applications)?;
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
        let by_protocol = label_windows(&windows, &truths, classes);
        let other_jobs = truths
            .values()
            .filter(|t| matches!(t, Truth::Other(_)))
            .count();
        // A sampled read: what every window said, not only the kept ones.
        let (job_kind, dropped) = match seen {
            Some(seen) => (seen.job_kind, seen.dropped),
            None => (by_protocol.job_kind, by_protocol.dropped),
        };
        Ok(Labelled {
            windows,
            rows: by_protocol.rows,
            labels: by_protocol.labels,
            classes: by_protocol.classes,
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
            options.read_set(kind)?,
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
            options.read_set(kind)?,
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

/// The columns a read asks for: a model's `features`; else the `set` over the metrics with
/// windows of the labelled jobs that `metrics` match (names, or prefixes ending in `*`); else
/// `None`, the `set` over every metric.
fn chosen_columns(
    data: &Path,
    days: &[NaiveDate],
    labelled_jobs: &HashSet<String>,
    features: Option<&[String]>,
    set: dataset::FeatureSet,
    metrics: Option<&[String]>,
) -> Result<Option<Vec<String>>, ModelError> {
    let patterns = match (features, metrics) {
        (Some(f), _) => return Ok(Some(f.to_vec())),
        (None, None) => return Ok(None),
        (None, Some(patterns)) => patterns,
    };
    let found = dataset::window_metrics(data, days, Some(labelled_jobs), None)?;
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
    Ok(Some(set.names(&kept)))
}

/// Each job's application baseline when the `chosen` columns include application-relative ones
/// (gathered from every run of `days`, labelled or not), else none.
fn app_baselines(
    data: &Path,
    days: &[NaiveDate],
    chosen: Option<&[String]>,
    applications: &HashMap<String, String>,
) -> Result<Option<dataset::AppBaselines>, ModelError> {
    let app_columns = chosen.map(typical::app_columns).unwrap_or_default();
    if app_columns.is_empty() {
        return Ok(None);
    }
    let runs = typical::gather(data, days, None, &app_columns)?;
    Ok(Some(typical::leave_one_out(&runs, applications)))
}

/// What the protocol says of the windows read: the rows it labels with their class index, the
/// classes, each job's kind and the windows it left out.
struct ProtocolLabels {
    rows: Vec<usize>,
    labels: Vec<u32>,
    classes: Vec<String>,
    job_kind: BTreeMap<String, String>,
    dropped: usize,
}

/// Labels `windows` by the protocol. `classes` fixes the class list (a model's); classes found
/// beyond it are appended; without it, healthy comes first, then the others in name order.
fn label_windows(
    windows: &Windows,
    truths: &BTreeMap<String, Truth>,
    classes: Option<&[String]>,
) -> ProtocolLabels {
    let mut found: BTreeSet<String> = BTreeSet::new();
    let mut picked: Vec<(usize, String)> = Vec::new();
    let mut dropped = 0;
    let mut kinds_found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (i, key) in windows.keys.iter().enumerate() {
        match protocol_label(truths, key) {
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
    ProtocolLabels {
        rows,
        labels,
        classes: class_list,
        job_kind: joined_kinds(kinds_found),
        dropped,
    }
}

/// Each job's kinds joined (`healthy+memleak`): its kind of job, for stratified folds.
fn joined_kinds(kinds: BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, String> {
    kinds
        .into_iter()
        .map(|(job, kinds)| {
            let kinds: Vec<String> = kinds.into_iter().collect();
            (job, kinds.join("+"))
        })
        .collect()
}
