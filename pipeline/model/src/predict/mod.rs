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
//!
//! The roll-up is in the `rollup` submodule, over what the models said of each window (`calls`);
//! reading the windows, combining the verdict with the rules and writing the table are here.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::arrow::array::RecordBatch;

use super::dataset::{self, HEALTHY, Windows};
use super::file::{Body, ModelFile};
use super::{Kind, ModelError};
use jobsight_warehouse::catalog::rows::{self, PredictionRow};
use jobsight_warehouse::catalog::{self, Table};

mod calls;
mod rollup;

use calls::Calls;
use rollup::judge;

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
