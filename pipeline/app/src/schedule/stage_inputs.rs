//! What the schedule hands a stage from another, since the stages never call each other: the
//! rules' evidence to the models, and the diagnosis model's feature importance to the report
//! pages.

use std::path::Path;

use chrono::NaiveDate;

use crate::config::Settings;
use jobsight_model::predict::{JobPrediction, Models};
use jobsight_rules::{RuleBook, Verdict};

/// What the models' verdicts are combined with: each job's id, the anomaly types its rules
/// found evidence of and the problems of its critical findings. The one place the rules' results
/// reach the model stage. Each run of a requeued job has its own evidence, as the models judge
/// each run's windows by themselves; verdicts of one run given twice give one evidence.
pub fn rule_evidence(
    book: &RuleBook,
    verdicts: &[Verdict],
) -> Vec<jobsight_model::predict::RuleEvidence> {
    let mut evidence: Vec<jobsight_model::predict::RuleEvidence> = Vec::new();
    let mut index: std::collections::HashMap<(&str, Option<u32>), usize> =
        std::collections::HashMap::new();
    for v in verdicts {
        let key = (v.job_id.as_str(), v.restart_count);
        let at = *index.entry(key).or_insert_with(|| {
            evidence.push(jobsight_model::predict::RuleEvidence {
                job_id: v.job_id.clone(),
                restart_count: v.restart_count,
                anomalies: Vec::new(),
                critical: Vec::new(),
            });
            evidence.len() - 1
        });
        let e = &mut evidence[at];
        for anomaly in v.anomalies(book) {
            if !e.anomalies.contains(&anomaly) {
                e.anomalies.push(anomaly);
            }
        }
        for problem in v.critical_problems(book) {
            if !e.critical.contains(&problem) {
                e.critical.push(problem);
            }
        }
    }
    evidence
}

/// The models' verdicts on jobs the rules have judged, each joined with its rules' evidence
/// ([`rule_evidence`]), written into `predictions`: `part` is the one job's own part (the per-job
/// path), `None` the whole day's. The one place the classify-then-predict pairing is written:
/// the schedule's predict step and `jobsight classify` both call it.
pub fn predict_judged(
    data: &Path,
    day: NaiveDate,
    part: Option<&str>,
    models: &Models,
    book: &RuleBook,
    verdicts: &[Verdict],
) -> Result<Vec<JobPrediction>, jobsight_model::ModelError> {
    jobsight_model::predict::predict_and_write(
        data,
        day,
        part,
        models,
        &rule_evidence(book, verdicts),
    )
}

/// What the report pages need from outside the warehouse: the configured diagnosis model's
/// feature importance, read from its file's header (none without a model, or when the file
/// cannot be read: the pages then rank metrics by the findings and the healthy band alone).
pub fn report_inputs(settings: &Settings) -> jobsight_report::Inputs {
    let importance = settings
        .model
        .diagnosis
        .as_deref()
        .and_then(|path| jobsight_model::file::ModelFile::header(path).ok())
        .map(|h| {
            h.importance
                .into_iter()
                .map(|i| (i.feature, i.f1_drop))
                .collect()
        })
        .unwrap_or_default();
    jobsight_report::Inputs { importance }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jobsight_rules::{Finding, Group, Severity};

    fn verdict(run: u32, findings: &[(&str, Severity)]) -> Verdict {
        Verdict {
            job_id: "7".into(),
            restart_count: Some(run),
            findings: findings
                .iter()
                .map(|(rule, severity)| Finding {
                    job_id: "7".into(),
                    rule: rule.to_string(),
                    title: String::new(),
                    group: Group::Dynamics,
                    severity: *severity,
                    node: None,
                    window: None,
                    evidence: Vec::new(),
                    message: String::new(),
                    fix: String::new(),
                    why: Vec::new(),
                    tools: Vec::new(),
                })
                .collect(),
            ..Verdict::default()
        }
    }

    /// Each run of a requeued job gives the models its own evidence; a run given twice, one.
    #[test]
    fn each_run_of_a_job_gives_its_own_evidence() {
        let book = RuleBook::load(None).unwrap();
        let verdicts = [
            verdict(0, &[("out-of-memory", Severity::Critical)]),
            verdict(1, &[("memory-leak", Severity::Warning)]),
            verdict(1, &[("memory-leak", Severity::Warning)]),
        ];
        let evidence = rule_evidence(&book, &verdicts);
        assert_eq!(evidence.len(), 2);
        assert_eq!(
            (evidence[0].job_id.as_str(), evidence[0].restart_count),
            ("7", Some(0))
        );
        assert!(evidence[0].anomalies.is_empty());
        assert_eq!(
            evidence[0].critical,
            [("out-of-memory".to_string(), "out-of-memory".to_string())]
        );
        assert_eq!(evidence[1].restart_count, Some(1));
        assert_eq!(
            evidence[1].anomalies,
            [("memory-leak".to_string(), "memleak".to_string())]
        );
        assert!(evidence[1].critical.is_empty());
    }
}
