//! The order of a job's metrics on its page: those its findings name (or are about: a memory
//! rule's memory), then those in which this job lay furthest outside the healthy band (one of
//! each family of per-core series), then those the diagnosis model weighs most, then
//! the usual ones; and so which metrics' telemetry a page needs at all. What the model weighs
//! over all jobs says little about one job: a job diagnosed with CPU contention whose charts
//! are the model's six favourite metrics shows six flat lines.

use std::collections::{BTreeMap, HashMap};

use crate::Inputs;
use crate::load::{Facts, JobFacts};

/// A job's metrics in the order its page charts them ([`ranked_metrics`]): those it has
/// telemetry loaded for and those the features step described (`features_job`), so that the
/// order is known before any telemetry is read and stays the same once it is.
pub fn job_metrics_ranked(
    job: &JobFacts,
    facts: &Facts,
    inputs: &Inputs,
    band: &BTreeMap<String, (f64, f64)>,
) -> Vec<String> {
    let means = facts.means.get(&job.job_id);
    let mut metrics: Vec<String> = facts
        .telemetry
        .get(&job.job_id)
        .into_iter()
        .flat_map(|s| s.values().flat_map(|m| m.keys().cloned()))
        .chain(means.into_iter().flat_map(|m| m.keys().cloned()))
        .collect();
    metrics.sort();
    metrics.dedup();
    let findings_text: String = facts
        .findings
        .get(&job.job_id)
        .into_iter()
        .flatten()
        .map(|f| format!("{} {} {}", f.rule, f.message, f.evidence))
        .collect();
    ranked_metrics(&metrics, &findings_text, &inputs.importance, means, band)
}

/// The metrics whose telemetry a job's page needs: the first `max_charts` of its ranking; `None`
/// (every metric) for a job the features step did not describe, whose metrics are known only
/// from its telemetry.
pub fn metrics_to_load(
    job: &JobFacts,
    facts: &Facts,
    inputs: &Inputs,
    band: &BTreeMap<String, (f64, f64)>,
    max_charts: usize,
) -> Option<Vec<String>> {
    if facts.means.get(&job.job_id).is_none_or(|m| m.is_empty()) {
        return None;
    }
    let mut ranked = job_metrics_ranked(job, facts, inputs, band);
    ranked.truncate(max_charts);
    // A family's chart is a band across all its series (every core), so all of them are loaded.
    let families: std::collections::HashSet<String> = ranked
        .iter()
        .map(|m| family(m))
        .filter(|f| !ranked.contains(f))
        .collect();
    let members = facts
        .means
        .get(&job.job_id)
        .into_iter()
        .flat_map(|m| m.keys());
    let members: Vec<String> = members
        .filter(|m| families.contains(&family(m)) && !ranked.contains(m))
        .cloned()
        .collect();
    ranked.extend(members);
    Some(ranked)
}

/// The order in which a job's metrics are charted: those its findings name first, then those
/// furthest outside the healthy band (up to five band widths counted), then those the model
/// weighs most, then the usual ones.
pub fn ranked_metrics(
    metrics: &[String],
    findings_text: &str,
    importance: &[(String, f64)],
    means: Option<&BTreeMap<String, f64>>,
    band: &BTreeMap<String, (f64, f64)>,
) -> Vec<String> {
    let weight: HashMap<&str, f64> = importance.iter().fold(HashMap::new(), |mut m, (f, w)| {
        let metric = f.split(':').next().unwrap_or(f);
        *m.entry(metric).or_default() += w.max(0.0);
        m
    });
    let usual = ["cpu", "mem", "gpu", "net", "disk", "io", "fs"];
    let mut scored: Vec<(f64, &String)> = metrics
        .iter()
        .map(|m| {
            let mut score = 0.0;
            if findings_text.contains(m.as_str()) {
                score += 1000.0;
            }
            if RULE_TOPICS
                .iter()
                .any(|(rule, metric)| findings_text.contains(rule) && m.contains(metric))
            {
                score += 500.0;
            }
            score += 100.0 * deviation(means.and_then(|x| x.get(m)).copied(), band.get(m)).min(5.0);
            score += 10.0 * weight.get(m.as_str()).copied().unwrap_or(0.0);
            if let Some(p) = usual.iter().position(|u| m.starts_with(u)) {
                score += (usual.len() - p) as f64 * 0.1;
            }
            (score, m)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    // One of each family of per-core or per-device series (`cpu_core6_util`, `cpu_core7_util`):
    // five near-identical lines say less than one and four other metrics.
    let mut families = std::collections::HashSet::new();
    scored
        .into_iter()
        .filter(|(_, m)| families.insert(family(m)))
        .map(|(_, m)| m.clone())
        .collect()
}

/// What a rule is about when its finding names no metric: a memory rule's chart is memory's.
const RULE_TOPICS: [(&str, &str); 7] = [
    ("memory", "mem"),
    ("gpu", "gpu"),
    ("hung", "cpu"),
    ("serial", "cpu"),
    ("idle", "cpu"),
    ("metadata", "fs"),
    ("iowait", "io"),
];

/// A metric's name with its numbers dropped: the family of per-core or per-device series
/// (`cpu_core6_util` → `cpu_core_util`); a metric without numbers is its own.
pub fn family(metric: &str) -> String {
    metric.chars().filter(|c| !c.is_ascii_digit()).collect()
}

/// How far a value lies outside a band, in band widths (0 inside it, or without one).
pub fn deviation(value: Option<f64>, band: Option<&(f64, f64)>) -> f64 {
    match (value, band) {
        (Some(v), Some((lo, hi))) => {
            let width = (hi - lo).abs().max(hi.abs() * 0.05).max(1e-9);
            if v < *lo {
                (lo - v) / width
            } else if v > *hi {
                (v - hi) / width
            } else {
                0.0
            }
        }
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_named_by_findings_come_first() {
        let metrics: Vec<String> = ["cpu_user", "disk_read_bytes_per_s", "mem_used_bytes"]
            .map(String::from)
            .into();
        let ranked = ranked_metrics(
            &metrics,
            "disk_read_bytes_per_s high",
            &[],
            None,
            &BTreeMap::new(),
        );
        assert_eq!(ranked[0], "disk_read_bytes_per_s");
        assert_eq!(ranked[1], "cpu_user");
    }

    /// A metric in which this job left the healthy band comes before the ones the model weighs
    /// most over all jobs.
    #[test]
    fn where_the_job_differed_comes_before_what_the_model_weighs() {
        let metrics: Vec<String> = ["cpu_pressure", "mem_used_bytes", "net_rx_bytes_per_s"]
            .map(String::from)
            .into();
        let means = BTreeMap::from([
            ("cpu_pressure".to_string(), 0.4),
            ("mem_used_bytes".to_string(), 5e9),
            ("net_rx_bytes_per_s".to_string(), 1e6),
        ]);
        let band = BTreeMap::from([
            ("cpu_pressure".to_string(), (0.0, 0.05)),
            ("mem_used_bytes".to_string(), (2e9, 9e9)),
            ("net_rx_bytes_per_s".to_string(), (1e5, 2e7)),
        ]);
        let importance = [
            ("mem_used_bytes:mean".to_string(), 0.5),
            ("net_rx_bytes_per_s:mean".to_string(), 0.3),
        ];
        let ranked = ranked_metrics(&metrics, "", &importance, Some(&means), &band);
        assert_eq!(
            ranked,
            ["cpu_pressure", "mem_used_bytes", "net_rx_bytes_per_s"]
        );
    }
}
