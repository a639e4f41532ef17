//! The roll-up of the models' window verdicts into one verdict per job, as the
//! [`predict`](super) module's doc describes it: each node's windows into the node's verdict by
//! runs of consecutive windows, and the job's most anomalous node into the job's, a node lacking
//! a metric the models read left out with the reason.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::calls::Calls;
use super::{JobPrediction, Models};
use crate::dataset::{self, HEALTHY};
use crate::file::Body;
use crate::{ModelError, forest};

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

/// Rolls one node's windows up (see [`predict`](super)'s doc). `classes[c]` names class `c`;
/// `votes` and `scores` are per window, in time order.
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
            // Beside a diagnosis its top class alone judges the window (`predict`'s doc).
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

/// The models' verdict on one job's windows (`rows` of `calls`); `scores` are the anomaly
/// score's over their cuts, by row of `calls`.
pub(super) fn judge(
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
                    .unwrap_or(crate::DEFAULT_UNKNOWN_BELOW),
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
    // Beside a diagnosis the score does not judge (`predict`'s doc).
    p.source = if models.diagnosis.is_some() {
        "model"
    } else {
        "anomaly-score"
    }
    .into();
    p.reason = missing_reasons.join("; ");
    Ok(p)
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
}
