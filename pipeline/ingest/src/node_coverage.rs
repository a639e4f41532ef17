//! What a multi-node job's telemetry covers, node by node, for the job's note: a node that sent
//! nothing (missing from the telemetry source, its exporter down), a node whose series end well
//! before the other nodes' (the node lost mid-run, its exporter stopped, its cgroup tree gone,
//! its clock behind theirs), one whose series start well after theirs (an exporter started late,
//! a clock ahead), and a node without a metric the other nodes sent.
//!
//! The samples are kept as they are: a lost node's partial series is the record of what it did
//! while it lived. The note only marks them, so that a person reading the job (and the features
//! stage's coverage, which refuses to judge on them) knows why a node's figures cover part of
//! the run. Every comparison is between the job's own nodes, metric by metric, so a source's lag
//! or a job's short run does not read as a node's fault; a gap counts when it exceeds three of
//! the metric's sampling intervals (at least [`MIN_GAP_S`]).
//!
//! Prometheus stamps samples with its own clock at scrape time, so nodes' clocks cannot skew its
//! series against each other; sources whose samples carry the node's time (LDMS) can, and a
//! node's series shifted by its clock shows here as starting late or ending early.

use std::collections::{BTreeMap, HashMap};

use chrono::DateTime;

/// The smallest gap, in seconds, between a node's first or last sample and the other nodes' that
/// the note names: below it, scrapes a few seconds apart are not a node's fault.
pub const MIN_GAP_S: f64 = 5.0;
/// The most nodes a note lists by name before it says how many more.
const MAX_NAMES: usize = 5;

/// The first and last sample and the count of one (node, metric) series.
#[derive(Debug, Clone, Copy)]
struct Span {
    first_us: i64,
    last_us: i64,
    n: u64,
}

/// Collects the span of every (node, metric) series of one job as its samples stream past.
#[derive(Debug, Default)]
pub struct NodeCoverage {
    spans: HashMap<(String, String), Span>,
    /// The series of the previous sample: samples come series by series, so most need no lookup.
    current: Option<(String, String)>,
}

impl NodeCoverage {
    pub fn new() -> Self {
        Self::default()
    }

    /// One sample of `metric` on `node` at `ts_us`.
    pub fn add(&mut self, node: &str, metric: &str, ts_us: i64) {
        if !self
            .current
            .as_ref()
            .is_some_and(|(n, m)| n == node && m == metric)
        {
            self.current = Some((node.to_string(), metric.to_string()));
        }
        let Some(key) = self.current.as_ref() else {
            return;
        };
        if let Some(span) = self.spans.get_mut(key) {
            span.first_us = span.first_us.min(ts_us);
            span.last_us = span.last_us.max(ts_us);
            span.n += 1;
        } else {
            let first = Span {
                first_us: ts_us,
                last_us: ts_us,
                n: 1,
            };
            self.spans.insert(key.clone(), first);
        }
    }

    /// What the note says about the job's `nodes` (the expanded allocation), one sentence per
    /// finding, nodes in allocation order; `source` names the telemetry source. Nothing when
    /// the job ran on one node or no node sent anything (the ingest's own note says that).
    pub fn notes(&self, nodes: &[String], source: &str, node_failed: bool) -> Vec<String> {
        if nodes.len() < 2 || self.spans.is_empty() {
            return Vec::new();
        }
        let mut by_metric: BTreeMap<&str, Vec<(&str, Span)>> = BTreeMap::new();
        for ((node, metric), span) in &self.spans {
            by_metric
                .entry(metric.as_str())
                .or_default()
                .push((node.as_str(), *span));
        }
        let sent = |node: &str| self.spans.keys().any(|(n, _)| n == node);
        let mut notes = Vec::new();
        let silent: Vec<&String> = nodes.iter().filter(|n| !sent(n)).collect();
        if !silent.is_empty() {
            notes.push(format!(
                "no telemetry from {} in {source} (not there, or its exporters were down): the \
                 job's figures come from the other nodes",
                names(&silent)
            ));
        }
        // Per node: the largest gap at its end and at its start against the other nodes, over
        // the metrics that at least one other node sent too, and the metrics it lacks.
        let mut ends: BTreeMap<&str, (f64, i64)> = BTreeMap::new();
        let mut starts: BTreeMap<&str, (f64, i64)> = BTreeMap::new();
        let mut lacking: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (metric, series) in &by_metric {
            for node in nodes.iter().filter(|n| sent(n)) {
                if !series.iter().any(|(n, _)| *n == node.as_str()) {
                    lacking.entry(node.as_str()).or_default().push(metric);
                }
            }
            if series.len() < 2 {
                continue;
            }
            let tolerance_us = (3.0 * interval_s(series)).max(MIN_GAP_S) * 1e6;
            let last = series.iter().map(|(_, s)| s.last_us).max().unwrap_or(0);
            let first = series.iter().map(|(_, s)| s.first_us).min().unwrap_or(0);
            for (node, span) in series {
                let (end_gap, start_gap) = (last - span.last_us, span.first_us - first);
                if end_gap as f64 > tolerance_us {
                    let e = ends.entry(node).or_insert((0.0, span.last_us));
                    if end_gap as f64 / 1e6 > e.0 {
                        *e = (end_gap as f64 / 1e6, span.last_us);
                    }
                }
                if start_gap as f64 > tolerance_us {
                    let s = starts.entry(node).or_insert((0.0, span.first_us));
                    if start_gap as f64 / 1e6 > s.0 {
                        *s = (start_gap as f64 / 1e6, span.first_us);
                    }
                }
            }
        }
        for node in nodes {
            let node = node.as_str();
            if let Some((gap, at)) = ends.get(node) {
                let cause = if node_failed {
                    "the node the run lost, most likely (it ended NODE_FAIL)"
                } else {
                    "the node lost, its exporter stopped or its clock behind the others'"
                };
                notes.push(format!(
                    "{node}'s telemetry ends {} before the other nodes' (its last sample at {}): \
                     {cause}; its figures cover part of the run",
                    seconds(*gap),
                    clock(*at)
                ));
            }
            if let Some((gap, at)) = starts.get(node) {
                notes.push(format!(
                    "{node}'s telemetry starts {} after the other nodes' (its first sample at \
                     {}): its exporter started late or its clock is ahead of the others'",
                    seconds(*gap),
                    clock(*at)
                ));
            }
            if let Some(metrics) = lacking.get(node) {
                notes.push(format!(
                    "{node} sent no {} where other nodes did",
                    names(metrics)
                ));
            }
        }
        notes
    }
}

/// The median sampling interval, in seconds, of a metric's series (those with two samples or
/// more); 0 when none has.
fn interval_s(series: &[(&str, Span)]) -> f64 {
    let mut intervals: Vec<f64> = series
        .iter()
        .filter(|(_, s)| s.n >= 2)
        .map(|(_, s)| (s.last_us - s.first_us) as f64 / 1e6 / (s.n - 1) as f64)
        .collect();
    intervals.sort_by(f64::total_cmp);
    intervals.get(intervals.len() / 2).copied().unwrap_or(0.0)
}

/// Up to [`MAX_NAMES`] names, then how many more.
fn names(all: &[impl AsRef<str>]) -> String {
    let shown: Vec<&str> = all.iter().take(MAX_NAMES).map(|n| n.as_ref()).collect();
    match all.len().saturating_sub(MAX_NAMES) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

fn seconds(s: f64) -> String {
    jobsight_base::text::human_duration(s.round() as i64)
}

fn clock(us: i64) -> String {
    DateTime::from_timestamp_micros(us)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| us.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_795_300_000_000_000;

    /// Series sampled every `step_s` from `from_s` to `to_s` (seconds after T0).
    fn sample(c: &mut NodeCoverage, node: &str, metric: &str, from_s: i64, to_s: i64) {
        let mut t = from_s;
        while t <= to_s {
            c.add(node, metric, T0 + t * 1_000_000);
            t += 2;
        }
    }

    fn nodes(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("node{i}")).collect()
    }

    #[test]
    fn nodes_that_agree_give_no_note_and_one_node_jobs_none_at_all() {
        let mut c = NodeCoverage::new();
        for node in ["node1", "node2"] {
            sample(&mut c, node, "job_cpu_cores_used", 0, 60);
            sample(&mut c, node, "job_mem_rss_bytes", 2, 58);
        }
        assert!(c.notes(&nodes(2), "prometheus", false).is_empty());
        let mut one = NodeCoverage::new();
        sample(&mut one, "node1", "job_cpu_cores_used", 0, 60);
        assert!(one.notes(&nodes(1), "prometheus", false).is_empty());
        assert!(
            NodeCoverage::new()
                .notes(&nodes(2), "prometheus", false)
                .is_empty()
        );
    }

    #[test]
    fn a_lost_node_a_late_node_a_silent_node_and_a_missing_metric_are_each_named() {
        let mut c = NodeCoverage::new();
        sample(&mut c, "node1", "job_cpu_cores_used", 0, 60);
        sample(&mut c, "node1", "job_mem_rss_bytes", 0, 60);
        // Lost 25 s before the end.
        sample(&mut c, "node2", "job_cpu_cores_used", 0, 34);
        sample(&mut c, "node2", "job_mem_rss_bytes", 0, 34);
        // Started 20 s late, and without a memory series.
        sample(&mut c, "node3", "job_cpu_cores_used", 20, 60);
        let notes = c.notes(&nodes(4), "prometheus", true);
        assert_eq!(notes.len(), 4, "{notes:#?}");
        assert!(notes[0].starts_with("no telemetry from node4 in prometheus"));
        assert!(
            notes[1].starts_with("node2's telemetry ends 26s before"),
            "{}",
            notes[1]
        );
        assert!(notes[1].contains("NODE_FAIL") && notes[1].contains("2026-"));
        assert!(
            notes[2].starts_with("node3's telemetry starts 20s after"),
            "{}",
            notes[2]
        );
        assert_eq!(
            notes[3],
            "node3 sent no job_mem_rss_bytes where other nodes did"
        );
        let quiet = c.notes(&nodes(4), "prometheus", false);
        assert!(
            quiet[1].contains("the node lost, its exporter stopped"),
            "{}",
            quiet[1]
        );
    }

    #[test]
    fn gaps_within_three_sampling_intervals_are_scrape_jitter() {
        let mut c = NodeCoverage::new();
        // Sampled every 2 s, so three intervals are 6 s (above the 5-s floor): a node 6 s
        // short is not named, one 8 s short is.
        sample(&mut c, "node1", "cpu", 0, 60);
        sample(&mut c, "node2", "cpu", 0, 54);
        assert!(c.notes(&nodes(2), "prometheus", false).is_empty());
        sample(&mut c, "node3", "cpu", 0, 52);
        let notes = c.notes(&nodes(3), "prometheus", false);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("node3's telemetry ends 8s before"));
    }

    #[test]
    fn long_lists_of_silent_nodes_are_cut() {
        let mut c = NodeCoverage::new();
        sample(&mut c, "node1", "cpu", 0, 10);
        let notes = c.notes(&nodes(9), "prometheus", false);
        assert!(
            notes[0].starts_with(
                "no telemetry from node2, node3, node4, node5, node6 and 3 more in prometheus"
            ),
            "{}",
            notes[0]
        );
    }
}
