//! One verdict per job run (each run of a requeued job its own), from the models' window
//! verdicts and the rules' findings, for the `predictions` table.
//!
//! Windows roll up to nodes, nodes to the job:
//! - a node is **anomalous** when at least `min_windows` consecutive windows (each starting before
//!   the previous one ends) get the same anomaly type (three windows of 60 s every 15 s: 90 s of
//!   trouble, so odd windows scattered over a long job are not a verdict); the type with the
//!   longest such run wins; its confidence is the type's mean share of the votes in the run, its
//!   time span the run's;
//! - else **unknown** when at least `min_windows` consecutive windows are not healthy (an anomaly
//!   type, or one with too few of the votes to be named; without a diagnosis, an anomaly score
//!   above 1), with no confidence: the windows are counted instead. Beside a diagnosis its top
//!   class alone judges a window, healthy whatever its share of the votes, and the score is
//!   recorded but does not overrule it: on the real suite runs of applications it never saw
//!   (runs 6-9, alone and pooled with runs 3-5) the top class met issue 70's goal every time,
//!   while the score's cuts flagged up to 0.31 of a new application's healthy windows
//!   (docs/models.md, "The ninth run");
//! - else **healthy**, with the mean healthy vote share as confidence where the diagnosis voted
//!   (an anomaly score alone gives no confidence, only windows above or below its line).
//!
//! The job takes its most anomalous node's verdict. A node that lacks a metric a model reads is
//! **not judged**, and the reason names the metrics: a guess from half the inputs would look just
//! as confident as a real verdict. Rules whose finding is evidence of the same anomaly type
//! (`anomaly = ...` in the rule book) are listed as agreeing (source `model+rules`). Otherwise a
//! **critical finding** names the verdict whatever the models said (source `rules`, no
//! confidence; the models' own verdict stays in `model_verdict`): a job killed for memory or hung
//! is never "healthy" under its finding. A lesser rule's anomaly the models did not see becomes the
//! verdict of a healthy or unknown job the same way; an anomaly score with nothing named (with no
//! diagnosis) is source `anomaly-score`, verdict unknown.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::arrow::array::RecordBatch;

use super::dataset::{self, HEALTHY, Windows};
use super::file::{Body, ModelFile};
use super::{Kind, ModelError, forest};
use jobsight_warehouse::catalog::rows::{self, PredictionRow};
use jobsight_warehouse::catalog::{self, Table};

/// Windows of one type a node needs before it gets that verdict.
pub const DEFAULT_MIN_WINDOWS: usize = 3;

/// The models a site runs, loaded once.
#[derive(Debug)]
pub struct Models {
    pub diagnosis: Option<(PathBuf, ModelFile)>,
    pub unsupervised: Option<(PathBuf, ModelFile)>,
    pub min_windows: usize,
    /// Windows judged at a time ([`WINDOWS_AT_A_TIME`]).
    pub windows_at_a_time: usize,
}

impl Models {
    pub fn load(
        diagnosis: Option<&Path>,
        unsupervised: Option<&Path>,
    ) -> Result<Models, ModelError> {
        let load = |p: Option<&Path>, kind| -> Result<Option<(PathBuf, ModelFile)>, ModelError> {
            p.map(|p| Ok((p.to_path_buf(), ModelFile::load(p, Some(kind))?)))
                .transpose()
        };
        Ok(Models {
            diagnosis: load(diagnosis, Kind::Diagnosis)?,
            unsupervised: load(unsupervised, Kind::Unsupervised)?,
            min_windows: DEFAULT_MIN_WINDOWS,
            windows_at_a_time: WINDOWS_AT_A_TIME,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.diagnosis.is_none() && self.unsupervised.is_none()
    }

    /// The models' window width in seconds (the first model's; `predict` checks they agree
    /// with the data).
    pub fn window_s(&self) -> i64 {
        self.files().next().map_or(0, |(_, m)| m.header.window_s)
    }

    fn files(&self) -> impl Iterator<Item = &(PathBuf, ModelFile)> {
        self.diagnosis.iter().chain(self.unsupervised.iter())
    }

    /// Every feature either model reads, in a fixed order.
    fn features(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .files()
            .flat_map(|(_, m)| m.header.features.iter().cloned())
            .collect();
        all.sort();
        all.dedup();
        all
    }

    /// Which model files made a verdict: name and body checksum.
    pub fn version(&self) -> String {
        self.files()
            .map(|(p, m)| {
                format!(
                    "{}:{}",
                    p.file_name().map_or_else(
                        || p.display().to_string(),
                        |n| n.to_string_lossy().into_owned()
                    ),
                    m.header.body_fnv1a
                )
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// What the models' verdict on a job is combined with: the job, the anomaly types its rules
/// found evidence of, as (rule id, anomaly type) for each finding whose rule names one
/// (`anomaly = ...` in the rule book), and the problems of its critical findings as (rule id,
/// problem). The rules stage makes these (`Verdict::anomalies`, `Verdict::critical_problems`);
/// the application hands them over, so that this stage never depends on that one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleEvidence {
    pub job_id: String,
    /// The run judged (`jobs.restart_count`): each run of a requeued job has its own evidence and
    /// verdict.
    pub restart_count: Option<u32>,
    pub anomalies: Vec<(String, String)>,
    pub critical: Vec<(String, String)>,
}

/// One job's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct JobPrediction {
    pub job_id: String,
    /// The run judged, as its rules' evidence names it.
    pub restart_count: Option<u32>,
    /// healthy, an anomaly type, unknown, or not-judged.
    pub verdict: String,
    pub confidence: Option<f64>,
    /// model, rules, model+rules, anomaly-score, or none.
    pub source: String,
    pub node: Option<String>,
    pub window: Option<(i64, i64)>,
    pub windows: u64,
    pub anomalous_windows: u64,
    pub unknown_windows: u64,
    pub model_verdict: Option<String>,
    pub model_confidence: Option<f64>,
    /// The job's highest window anomaly score (> 1: anomalous).
    pub anomaly_score: Option<f64>,
    pub agreeing_rules: Vec<String>,
    pub reason: String,
}

/// One node's rolled-up verdict.
#[derive(Debug, Clone)]
struct NodeVerdict {
    node: String,
    verdict: String,
    /// None where nothing voted (an unknown run, or an anomaly score alone).
    confidence: Option<f64>,
    window: Option<(i64, i64)>,
    anomalous: u64,
    unknown: u64,
    max_score: Option<f64>,
}

/// What one window says, before the roll-up.
#[derive(Debug, Clone, Copy, PartialEq)]
enum WindowCall {
    Healthy,
    /// An anomaly class index and its share of the votes.
    Anomaly(usize, f32),
    /// Too few trees agree on an anomaly, or (without a diagnosis) the anomaly score is above 1.
    Unsure,
}

/// The longest run of consecutive windows (each starting before the previous one ends) whose
/// call passes `pick`, as indices into `calls`.
fn longest_run(
    keys: &[&dataset::WindowKey],
    calls: &[WindowCall],
    pick: impl Fn(&WindowCall) -> bool,
) -> Vec<usize> {
    let (mut best, mut current): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    for (i, call) in calls.iter().enumerate() {
        let follows = current
            .last()
            .is_some_and(|&prev| keys[i].start_us <= keys[prev].end_us);
        if !pick(call) {
            current.clear();
            continue;
        }
        if !follows {
            current.clear();
        }
        current.push(i);
        if current.len() > best.len() {
            best = current.clone();
        }
    }
    best
}

/// Rolls one node's windows up (see the module doc). `classes[c]` names class `c`; `votes` and
/// `scores` are per window, in time order.
fn node_verdict(
    node: &str,
    keys: &[&dataset::WindowKey],
    classes: &[String],
    votes: Option<&[Vec<f32>]>,
    scores: Option<&[f64]>,
    unknown_below: f64,
    min_windows: usize,
) -> NodeVerdict {
    let n = keys.len();
    let score_above_1 = |i: usize| scores.is_some_and(|s| s[i] > 1.0);
    let calls: Vec<WindowCall> = (0..n)
        .map(|i| match votes {
            // Beside a diagnosis its top class alone judges the window (the module doc).
            Some(votes) => match forest::top(&votes[i]) {
                (0, _) => WindowCall::Healthy,
                (_, share) if f64::from(share) < unknown_below => WindowCall::Unsure,
                (c, share) => WindowCall::Anomaly(c, share),
            },
            None if score_above_1(i) => WindowCall::Unsure,
            None => WindowCall::Healthy,
        })
        .collect();
    let count = |pick: &dyn Fn(&WindowCall) -> bool| calls.iter().filter(|c| pick(c)).count();
    let anomalous = count(&|c| matches!(c, WindowCall::Anomaly(..))) as u64;
    let unknown = count(&|c| *c == WindowCall::Unsure) as u64;
    let healthy_confidence =
        votes.map(|votes| votes.iter().map(|v| f64::from(v[0])).sum::<f64>() / n.max(1) as f64);
    let span = |run: &[usize]| -> Option<(i64, i64)> {
        Some((keys[*run.first()?].start_us, keys[*run.last()?].end_us))
    };
    let base = NodeVerdict {
        node: node.to_string(),
        verdict: HEALTHY.into(),
        confidence: healthy_confidence,
        window: None,
        anomalous,
        unknown,
        max_score: scores.and_then(|s| s.iter().copied().reduce(f64::max)),
    };
    // The anomaly type with the longest run (the lower class index on a tie).
    let classes_seen: std::collections::BTreeSet<usize> = calls
        .iter()
        .filter_map(|c| match c {
            WindowCall::Anomaly(class, _) => Some(*class),
            _ => None,
        })
        .collect();
    let best = classes_seen
        .into_iter()
        .map(|class| {
            let run = longest_run(
                keys,
                &calls,
                |c| matches!(c, WindowCall::Anomaly(k, _) if *k == class),
            );
            (class, run)
        })
        .max_by(|a, b| a.1.len().cmp(&b.1.len()).then(b.0.cmp(&a.0)));
    if let Some((class, run)) = best
        && run.len() >= min_windows
    {
        let shares: f64 = run
            .iter()
            .map(|&i| match calls[i] {
                WindowCall::Anomaly(_, share) => f64::from(share),
                _ => 0.0,
            })
            .sum();
        return NodeVerdict {
            verdict: classes[class].clone(),
            confidence: Some(shares / run.len() as f64),
            window: span(&run),
            ..base
        };
    }
    // Trouble without one name: a run of windows that are not healthy.
    let run = longest_run(keys, &calls, |c| *c != WindowCall::Healthy);
    if run.len() >= min_windows {
        return NodeVerdict {
            verdict: "unknown".into(),
            confidence: None,
            window: span(&run),
            ..base
        };
    }
    base
}

/// Windows the models judge at a time, by default (`[model] windows_at_a_time`; whole jobs,
/// [`dataset::read_windows_by_jobs`]): their inputs are held for this many windows, not for the
/// day's. What is kept of every window is its key and what the models said ([`Calls`]), a
/// small part of its inputs. The verdicts do not depend on it.
pub const WINDOWS_AT_A_TIME: usize = 20_000;

/// Verdicts for the jobs of `jobs` (the rules' evidence on a day's jobs, or on one job, whose
/// windows are then read from its own `part` only).
pub fn predict(
    data: &Path,
    day: NaiveDate,
    part: Option<&str>,
    models: &Models,
    jobs: &[RuleEvidence],
) -> Result<Vec<JobPrediction>, ModelError> {
    let only: HashSet<String> = jobs.iter().map(|j| j.job_id.clone()).collect();
    let features = models.features();
    let mut calls = Calls::default();
    if !models.is_empty() {
        dataset::read_windows_by_jobs(
            data,
            &[day],
            Some(&only),
            Some(&features),
            dataset::FeatureSet::default(),
            part,
            None,
            models.windows_at_a_time,
            |windows| {
                if let Some(&width) = windows.widths_s.iter().next() {
                    for (path, m) in models.files() {
                        if m.header.window_s != width {
                            return Err(ModelError::Invalid {
                                path: path.clone(),
                                reason: format!(
                                    "it was trained on {} s windows and {day} has {width} s windows",
                                    m.header.window_s
                                ),
                            });
                        }
                    }
                }
                calls.add(windows, models)
            },
        )?;
    }
    calls.sort();
    // The anomaly score of every window, each over its application's cut: judged together,
    // so that an application the model has no baseline of is judged against its other runs.
    let judged_scores: Option<Vec<f64>> = match &models.unsupervised {
        Some((_, m)) => match &m.body {
            Body::Unsupervised(score) => {
                let applications = dataset::applications(data, Some(&[day]), part)?;
                let keys = Windows {
                    keys: std::mem::take(&mut calls.keys),
                    ..Windows::default()
                };
                let all: Vec<usize> = (0..keys.keys.len()).collect();
                let judged = score.over_cuts(
                    &keys,
                    &all,
                    std::mem::take(&mut calls.scores),
                    &applications,
                );
                calls.keys = keys.keys;
                Some(judged)
            }
            Body::Diagnosis { .. } => None,
        },
        None => None,
    };
    let by_run = calls.rows_by_run();
    let mut out = Vec::with_capacity(jobs.len());
    for job in jobs {
        // The run's own windows; windows written before runs were recorded have none and stand
        // for every run of the job, as they did then.
        let rows = [job.restart_count, None]
            .iter()
            .find_map(|&run| by_run.get(&(Arc::from(job.job_id.as_str()), run)))
            .cloned()
            .unwrap_or_default();
        let mut p = judge(&calls, &rows, models, judged_scores.as_deref())?;
        p.job_id = job.job_id.clone();
        p.restart_count = job.restart_count;
        combine(&mut p, job);
        out.push(p);
    }
    Ok(out)
}

/// What the models said of each window judged, in key order once [`Calls::sort`]ed: all that
/// the verdicts need, kept instead of the windows' inputs.
#[derive(Debug, Default)]
struct Calls {
    keys: Vec<dataset::WindowKey>,
    /// The diagnosis's votes per window (none without a diagnosis model).
    votes: Vec<Vec<f32>>,
    /// The anomaly score per window, before the application's cut (none without the model).
    scores: Vec<f64>,
    /// The metrics each job's node reported (in any run, and any copy read).
    metrics_of: std::collections::HashMap<(Arc<str>, Arc<str>), std::collections::BTreeSet<String>>,
    /// The runs of jobs judged so far.
    runs: HashSet<(Arc<str>, Option<u32>)>,
}

impl Calls {
    /// The models' calls on `windows` (whole jobs). A run of a job judged before, from another
    /// file that also held it, is replaced by what this one holds; its other runs stay (a
    /// requeued job's runs may lie in different parts).
    fn add(&mut self, windows: Windows, models: &Models) -> Result<(), ModelError> {
        let run_of = |k: &dataset::WindowKey| (k.job_id.clone(), k.run);
        let again: HashSet<(Arc<str>, Option<u32>)> = windows
            .keys
            .iter()
            .map(run_of)
            .filter(|run| self.runs.contains(run))
            .collect();
        if !again.is_empty() {
            let kept: Vec<usize> = (0..self.keys.len())
                .filter(|&i| !again.contains(&run_of(&self.keys[i])))
                .collect();
            self.keep(&kept);
        }
        let rows: Vec<usize> = (0..windows.keys.len()).collect();
        if let Some((_, m)) = &models.diagnosis
            && let Body::Diagnosis {
                prepared,
                forest,
                namer,
            } = &m.body
        {
            self.votes.extend(super::namer::votes(
                prepared,
                forest,
                namer.as_ref(),
                &windows,
                &rows,
            )?);
        }
        if let Some((_, m)) = &models.unsupervised
            && let Body::Unsupervised(score) = &m.body
        {
            self.scores.extend(score.score(&windows, &rows));
        }
        self.runs.extend(windows.keys.iter().map(run_of));
        self.keys.extend(windows.keys);
        for (key, metrics) in windows.metrics_of {
            self.metrics_of.entry(key).or_default().extend(metrics);
        }
        Ok(())
    }

    /// Every list in key order (job, node, start), as one read of the whole day has them.
    fn sort(&mut self) {
        let mut order: Vec<usize> = (0..self.keys.len()).collect();
        order.sort_by(|&a, &b| self.keys[a].cmp(&self.keys[b]));
        self.keep(&order);
    }

    /// Keeps `rows` of every list, in that order.
    fn keep(&mut self, rows: &[usize]) {
        self.keys = rows.iter().map(|&i| self.keys[i].clone()).collect();
        if !self.votes.is_empty() {
            let mut votes = std::mem::take(&mut self.votes);
            self.votes = rows
                .iter()
                .map(|&i| std::mem::take(&mut votes[i]))
                .collect();
        }
        if !self.scores.is_empty() {
            self.scores = rows.iter().map(|&i| self.scores[i]).collect();
        }
    }

    /// Row numbers by job and run.
    fn rows_by_run(&self) -> BTreeMap<(Arc<str>, Option<u32>), Vec<usize>> {
        let mut out: BTreeMap<(Arc<str>, Option<u32>), Vec<usize>> = BTreeMap::new();
        for (i, k) in self.keys.iter().enumerate() {
            out.entry((k.job_id.clone(), k.run)).or_default().push(i);
        }
        out
    }
}

/// The models' verdict on one job's windows (`rows` of `calls`); `scores` are the anomaly
/// score's over their cuts, by row of `calls`.
fn judge(
    calls: &Calls,
    rows: &[usize],
    models: &Models,
    scores: Option<&[f64]>,
) -> Result<JobPrediction, ModelError> {
    let mut p = JobPrediction {
        job_id: String::new(),
        restart_count: None,
        verdict: "not-judged".into(),
        confidence: None,
        source: "none".into(),
        node: None,
        window: None,
        windows: rows.len() as u64,
        anomalous_windows: 0,
        unknown_windows: 0,
        model_verdict: None,
        model_confidence: None,
        anomaly_score: None,
        agreeing_rules: Vec::new(),
        reason: String::new(),
    };
    if models.is_empty() {
        p.reason = "no model configured".into();
        return Ok(p);
    }
    if rows.is_empty() {
        p.reason = format!(
            "no windows for this job: it ran shorter than one {} s model window (after trimming its ends), its telemetry is missing, or the features were computed without --windows",
            models.window_s()
        );
        return Ok(p);
    }
    // Group the job's rows by node (rows are in key order: node, then start).
    let mut nodes: BTreeMap<Arc<str>, Vec<usize>> = BTreeMap::new();
    for &r in rows {
        nodes.entry(calls.keys[r].node.clone()).or_default().push(r);
    }
    let (classes, unknown_below) = match &models.diagnosis {
        Some((_, m)) => match &m.body {
            Body::Diagnosis { .. } => (
                m.header.classes.clone(),
                m.header
                    .unknown_below
                    .unwrap_or(super::DEFAULT_UNKNOWN_BELOW),
            ),
            Body::Unsupervised(_) => (Vec::new(), 1.0),
        },
        None => (Vec::new(), 1.0),
    };
    let mut verdicts = Vec::new();
    let mut missing_reasons = Vec::new();
    for (node, node_rows) in &nodes {
        let present = calls
            .metrics_of
            .get(&(calls.keys[node_rows[0]].job_id.clone(), node.clone()));
        let missing: Vec<&str> = models
            .files()
            .flat_map(|(_, m)| m.header.metrics.iter())
            .filter(|m| present.is_none_or(|set| !set.contains(*m)))
            .map(String::as_str)
            .collect::<std::collections::BTreeSet<&str>>()
            .into_iter()
            .collect();
        if !missing.is_empty() {
            let shown: Vec<&str> = missing.iter().take(5).copied().collect();
            missing_reasons.push(format!(
                "node {node} lacks {} metric(s) the models read: {}{}",
                missing.len(),
                shown.join(", "),
                if missing.len() > 5 { ", ..." } else { "" }
            ));
            continue;
        }
        let keys: Vec<&dataset::WindowKey> = node_rows.iter().map(|&r| &calls.keys[r]).collect();
        let votes: Option<Vec<Vec<f32>>> = (!calls.votes.is_empty())
            .then(|| node_rows.iter().map(|&r| calls.votes[r].clone()).collect());
        let scores: Option<Vec<f64>> =
            scores.map(|all| node_rows.iter().map(|&r| all[r]).collect());
        verdicts.push(node_verdict(
            node,
            &keys,
            &classes,
            votes.as_deref(),
            scores.as_deref(),
            unknown_below,
            models.min_windows,
        ));
    }
    if verdicts.is_empty() {
        p.reason = missing_reasons.join("; ");
        return Ok(p);
    }
    let rank = |v: &NodeVerdict| match v.verdict.as_str() {
        HEALTHY => 0,
        "unknown" => 1,
        _ => 2,
    };
    let worst = verdicts
        .iter()
        .max_by(|a, b| {
            (rank(a), a.anomalous.max(a.unknown))
                .cmp(&(rank(b), b.anomalous.max(b.unknown)))
                .then(b.node.cmp(&a.node))
        })
        .cloned();
    let Some(worst) = worst else { return Ok(p) };
    p.verdict = worst.verdict.clone();
    p.confidence = worst.confidence;
    p.node = (worst.verdict != HEALTHY).then(|| worst.node.clone());
    p.window = worst.window;
    p.anomalous_windows = verdicts.iter().map(|v| v.anomalous).sum();
    p.unknown_windows = verdicts.iter().map(|v| v.unknown).sum();
    p.anomaly_score = verdicts.iter().filter_map(|v| v.max_score).reduce(f64::max);
    p.model_verdict = Some(worst.verdict.clone());
    p.model_confidence = worst.confidence;
    // Beside a diagnosis the score does not judge (the module doc).
    p.source = if models.diagnosis.is_some() {
        "model"
    } else {
        "anomaly-score"
    }
    .into();
    p.reason = missing_reasons.join("; ");
    Ok(p)
}

/// Adds the rules' view (see the module doc).
fn combine(p: &mut JobPrediction, rules: &RuleEvidence) {
    let of = |problem: &str, list: &[(String, String)]| -> Vec<String> {
        list.iter()
            .filter(|(_, a)| a == problem)
            .map(|(r, _)| r.clone())
            .collect()
    };
    p.agreeing_rules = of(&p.verdict, &rules.anomalies);
    for rule in of(&p.verdict, &rules.critical) {
        if !p.agreeing_rules.contains(&rule) {
            p.agreeing_rules.push(rule);
        }
    }
    if !p.agreeing_rules.is_empty() {
        p.source = "model+rules".into();
        return;
    }
    let named = p.verdict != HEALTHY && p.verdict != "unknown" && p.verdict != "not-judged";
    // A critical finding names the verdict whatever the models said; a lesser rule's anomaly only
    // where the models named nothing.
    let overruling = match rules.critical.first() {
        Some(first) => Some((first, &rules.critical)),
        None if !named => rules.anomalies.first().map(|a| (a, &rules.anomalies)),
        None => None,
    };
    let Some(((rule, problem), list)) = overruling else {
        return;
    };
    let models_said = match (p.verdict.as_str(), p.model_verdict.is_some()) {
        ("not-judged", _) | (_, false) => "the models did not judge the job".to_string(),
        (HEALTHY, true) => "the models saw nothing wrong".to_string(),
        ("unknown", true) => "the models saw something they could not name".to_string(),
        (other, true) => format!("the models said {other}"),
    };
    p.agreeing_rules = of(problem, list);
    p.verdict = problem.clone();
    p.source = "rules".into();
    p.confidence = None;
    let found = format!("rule {rule} found it; {models_said}");
    p.reason = if p.reason.is_empty() {
        found
    } else {
        format!("{found}; {}", p.reason)
    };
}

/// The `predictions` batch.
pub fn batch(predictions: &[JobPrediction], version: &str) -> Result<RecordBatch, ModelError> {
    let time = |t: Option<i64>| t.and_then(rows::from_micros);
    let rows: Vec<PredictionRow> = predictions
        .iter()
        .map(|p| PredictionRow {
            job_id: p.job_id.clone(),
            restart_count: p.restart_count,
            verdict: p.verdict.clone(),
            confidence: p.confidence,
            source: p.source.clone(),
            node: p.node.clone(),
            window_start: time(p.window.map(|w| w.0)),
            window_end: time(p.window.map(|w| w.1)),
            windows: p.windows,
            anomalous_windows: p.anomalous_windows,
            unknown_windows: p.unknown_windows,
            model_verdict: p.model_verdict.clone(),
            model_confidence: p.model_confidence,
            anomaly_score: p.anomaly_score,
            agreeing_rules: p.agreeing_rules.join(","),
            reason: p.reason.clone(),
            model_version: version.to_string(),
        })
        .collect();
    PredictionRow::batch(&rows).map_err(|e| ModelError::Batch(e.to_string()))
}

/// Predicts the jobs of `jobs` (all of `day`'s, or the one job of `part`) and writes them:
/// the job's own part, or for the whole day part `classify`, replacing the per-job parts.
pub fn predict_and_write(
    data: &Path,
    day: NaiveDate,
    part: Option<&str>,
    models: &Models,
    jobs: &[RuleEvidence],
) -> Result<Vec<JobPrediction>, ModelError> {
    let predictions = predict(data, day, part, models, jobs)?;
    write(
        data,
        day,
        part.unwrap_or("classify"),
        &predictions,
        &models.version(),
    )?;
    if part.is_none() {
        catalog::remove_job_parts(data, Table::Predictions, day)?;
    }
    Ok(predictions)
}

/// Writes part `part` of the day's `predictions`.
pub fn write(
    data: &Path,
    day: NaiveDate,
    part: &str,
    predictions: &[JobPrediction],
    version: &str,
) -> Result<(), ModelError> {
    catalog::write_part(
        data,
        Table::Predictions,
        day,
        part,
        &[batch(predictions, version)?],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn keys(n: usize) -> Vec<dataset::WindowKey> {
        (0..n)
            .map(|i| dataset::WindowKey {
                job_id: Arc::from("1"),
                run: None,
                node: Arc::from("n1"),
                start_us: i as i64 * 15_000_000,
                end_us: i as i64 * 15_000_000 + 60_000_000,
            })
            .collect()
    }

    #[test]
    fn a_node_needs_min_windows_of_one_type() {
        let classes: Vec<String> = ["healthy", "memleak"].map(String::from).to_vec();
        let k = keys(10);
        let refs: Vec<&dataset::WindowKey> = k.iter().collect();
        let mut votes = vec![vec![0.9f32, 0.1]; 10];
        votes[4] = vec![0.1, 0.9];
        votes[5] = vec![0.2, 0.8];
        let v = node_verdict("n1", &refs, &classes, Some(&votes), None, 0.75, 3);
        assert_eq!(v.verdict, "healthy");
        assert_eq!(v.anomalous, 2);
        votes[6] = vec![0.0, 1.0];
        let v = node_verdict("n1", &refs, &classes, Some(&votes), None, 0.75, 3);
        assert_eq!(v.verdict, "memleak");
        assert!((v.confidence.unwrap() - 0.9).abs() < 1e-6);
        assert_eq!(v.window, Some((60_000_000, 90_000_000 + 60_000_000)));
        // Windows of an anomaly with too few votes to name it make "unknown".
        let unsure = vec![vec![0.4f32, 0.6]; 10];
        let v = node_verdict("n1", &refs, &classes, Some(&unsure), None, 0.75, 3);
        assert_eq!(v.verdict, "unknown");
        // Scattered anomalous or unsure windows over a long job are no verdict; only a run is.
        let mut scattered = vec![vec![0.9f32, 0.1]; 10];
        for i in [1, 3, 8] {
            scattered[i] = vec![0.1, 0.9];
        }
        for i in [5, 9] {
            scattered[i] = vec![0.4, 0.6];
        }
        let v = node_verdict("n1", &refs, &classes, Some(&scattered), None, 0.75, 3);
        assert_eq!(
            (v.verdict.as_str(), v.anomalous, v.unknown),
            ("healthy", 3, 2)
        );
        // A run mixing a type and unsure windows is trouble without a name.
        scattered[2] = vec![0.4, 0.6];
        let v = node_verdict("n1", &refs, &classes, Some(&scattered), None, 0.75, 3);
        assert_eq!(v.verdict, "unknown");
        assert_eq!(v.window, Some((15_000_000, 45_000_000 + 60_000_000)));
        // A gap between windows breaks a run.
        let mut gapped = k.clone();
        for key in gapped.iter_mut().skip(6) {
            key.start_us += 600_000_000;
            key.end_us += 600_000_000;
        }
        let gapped_refs: Vec<&dataset::WindowKey> = gapped.iter().collect();
        let mut split = vec![vec![0.9f32, 0.1]; 10];
        for i in [4, 5, 6, 7] {
            split[i] = vec![0.1, 0.9];
        }
        let v = node_verdict("n1", &gapped_refs, &classes, Some(&split), None, 0.75, 3);
        assert_eq!(v.verdict, "healthy");
        let v = node_verdict("n1", &refs, &classes, Some(&split), None, 0.75, 3);
        assert_eq!(v.verdict, "memleak");
    }

    /// Beside a diagnosis its top class alone judges a window: a healthy top class is healthy
    /// whatever its share and whatever the score says, an anomaly with too few votes is unsure;
    /// without a diagnosis a run of windows above 1 is unknown.
    #[test]
    fn beside_a_diagnosis_its_top_class_alone_judges() {
        let classes: Vec<String> = ["healthy", "memleak"].map(String::from).to_vec();
        let k = keys(10);
        let refs: Vec<&dataset::WindowKey> = k.iter().collect();
        // The node's verdict from these votes (or none) and scores, at 0.75 and 3 windows.
        let judge = |votes: Option<&[Vec<f32>]>, scores: &[f64]| {
            node_verdict("n1", &refs, &classes, votes, Some(scores), 0.75, 3)
        };
        let mut scores = vec![0.5; 10];
        for s in &mut scores[2..5] {
            *s = 3.0;
        }
        // Healthy, and doubtfully healthy, windows stay healthy above the score's line.
        for healthy in [vec![vec![0.9f32, 0.1]; 10], vec![vec![0.6f32, 0.4]; 10]] {
            let v = judge(Some(&healthy), &scores);
            assert_eq!((v.verdict.as_str(), v.unknown), ("healthy", 0));
            assert_eq!(v.max_score, Some(3.0));
        }
        // An anomaly with too few votes to be named is unsure: a run of them is unknown.
        let unsure = vec![vec![0.4f32, 0.6]; 10];
        let v = judge(Some(&unsure), &scores);
        assert_eq!((v.verdict.as_str(), v.unknown), ("unknown", 10));
        // A named anomaly stays named whatever the score says.
        let mut leak = vec![vec![0.9f32, 0.1]; 10];
        for votes in &mut leak[2..5] {
            *votes = vec![0.1, 0.9];
        }
        assert_eq!(judge(Some(&leak), &[0.5; 10]).verdict, "memleak");
        assert_eq!(judge(Some(&leak), &scores).verdict, "memleak");
        // Without a diagnosis the score judges: three windows above 1 are a run, two are not.
        let v = judge(None, &scores);
        assert_eq!(v.verdict, "unknown");
        assert_eq!(v.window, Some((30_000_000, 60_000_000 + 60_000_000)));
        scores[4] = 0.5;
        assert_eq!(judge(None, &scores).verdict, "healthy");
    }

    #[test]
    fn rules_agree_or_fill_in() {
        let mut p = JobPrediction {
            job_id: "1".into(),
            restart_count: None,
            verdict: "memleak".into(),
            confidence: Some(0.9),
            source: "model".into(),
            node: None,
            window: None,
            windows: 10,
            anomalous_windows: 5,
            unknown_windows: 0,
            model_verdict: Some("memleak".into()),
            model_confidence: Some(0.9),
            anomaly_score: None,
            agreeing_rules: vec![],
            reason: String::new(),
        };
        let rules = |anomalies: &[(&str, &str)], critical: &[(&str, &str)]| {
            let own = |l: &[(&str, &str)]| {
                l.iter()
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .collect()
            };
            RuleEvidence {
                job_id: "1".into(),
                restart_count: None,
                anomalies: own(anomalies),
                critical: own(critical),
            }
        };
        let memory_leak = [("memory-leak", "memleak")];
        combine(&mut p, &rules(&memory_leak, &memory_leak));
        assert_eq!(p.source, "model+rules");
        assert_eq!(p.agreeing_rules, vec!["memory-leak"]);
        let healthy = p.clone();
        let mut p = JobPrediction {
            verdict: "healthy".into(),
            source: "model".into(),
            model_verdict: Some("healthy".into()),
            ..healthy.clone()
        };
        combine(&mut p, &rules(&[("oversubscribed", "cpuoccupy")], &[]));
        assert_eq!(
            (p.verdict.as_str(), p.source.as_str()),
            ("cpuoccupy", "rules")
        );
        // A critical finding is never under "healthy", nor under another anomaly the models named,
        // and its verdict claims no confidence.
        for model_said in ["healthy", "unknown", "cpuoccupy"] {
            let mut p = JobPrediction {
                verdict: model_said.into(),
                source: "model".into(),
                model_verdict: Some(model_said.into()),
                confidence: Some(1.0),
                reason: String::new(),
                ..healthy.clone()
            };
            combine(&mut p, &rules(&[], &[("out-of-memory", "out-of-memory")]));
            assert_eq!(p.verdict, "out-of-memory", "{model_said}");
            assert_eq!((p.source.as_str(), p.confidence), ("rules", None));
            assert_eq!(p.model_verdict.as_deref(), Some(model_said));
            assert!(
                p.reason
                    .starts_with("rule out-of-memory found it; the models ")
            );
        }
    }
}
