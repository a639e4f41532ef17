//! What a multi-node job's telemetry covers, node by node, for the job's note: nodes that sent
//! nothing (missing from the telemetry source, their exporters down), nodes whose series end
//! well before most nodes' (a node lost mid-run, its exporter stopped, its cgroup tree gone, or
//! the job running nothing there any more), nodes whose series start well after most nodes'
//! (an exporter started late, or the job starting nothing there before then), and metrics some
//! nodes lack that others sent.
//!
//! The samples are kept as they are: a lost node's partial series is the record of what it did
//! while it lived. The note only marks them, so that a person reading the job (and the features
//! stage's coverage, which refuses to judge on them) knows why a node's figures cover part of
//! the run. Every comparison is between the job's own nodes, metric by metric, against the
//! median node (so one node that starts early or ends late, as a batch node staging or
//! post-processing does, names no other), and a gap counts when it exceeds three of the
//! metric's sampling intervals and the source's own jitter (Prometheus: its rate window and step,
//! within which series scraped at other moments start), at least [`MIN_GAP_S`]. Nodes with the
//! same finding share one sentence, so a note stays short on a job of a thousand nodes.
//!
//! Prometheus stamps samples with its own clock at scrape time, so the nodes' clocks cannot skew
//! its series against each other, and the gaps above blame no clock. A node's clock still matters:
//! what the node stamps itself (its logs, its epilog's records, the application's timings) is off
//! by as much, and munge refuses its credentials beyond a few minutes. [`clock_note`] names the
//! nodes whose clock disagrees with the source's by more than [`MAX_CLOCK_OFFSET_S`] (Prometheus:
//! node_exporter's `node_time_seconds` against the scrape's own time), on jobs of one node too.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::DateTime;

/// The smallest gap, in seconds, between a node's first or last sample and the other nodes' that
/// the note names: below it, scrapes a few seconds apart are not a node's fault.
pub const MIN_GAP_S: f64 = 5.0;
/// The largest offset, in seconds, between a node's clock and the telemetry source's that the
/// note lets pass: NTP keeps clocks within milliseconds, and a scrape's own delay is well below.
pub const MAX_CLOCK_OFFSET_S: f64 = 2.0;
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
    /// The series of the previous sample: samples come series by series, so most need no new key.
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
    /// finding, nodes in allocation order; `source` names the telemetry source and `jitter_s`
    /// its own spread of series starts and ends (see the module doc). Nothing when the job ran
    /// on one node or no node sent anything (the ingest's own note says that).
    pub fn notes(
        &self,
        nodes: &[String],
        source: &str,
        jitter_s: f64,
        node_failed: bool,
    ) -> Vec<String> {
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
        let sending: BTreeSet<&str> = self.spans.keys().map(|(n, _)| n.as_str()).collect();
        let mut notes = Vec::new();
        let silent: Vec<&String> = nodes
            .iter()
            .filter(|n| !sending.contains(n.as_str()))
            .collect();
        if !silent.is_empty() {
            notes.push(format!(
                "no telemetry from {} in {source} (not there, or its exporters were down): the \
                 job's figures come from the other nodes",
                names(&silent)
            ));
        }
        // Per node: the largest gap at its end and at its start against the median node, over
        // the metrics that other nodes sent too; per metric, the nodes that lack it.
        let mut ends: BTreeMap<&str, (f64, i64)> = BTreeMap::new();
        let mut starts: BTreeMap<&str, (f64, i64)> = BTreeMap::new();
        let mut lacking: BTreeMap<Vec<&str>, Vec<&str>> = BTreeMap::new();
        for (metric, series) in &by_metric {
            let having: BTreeSet<&str> = series.iter().map(|(n, _)| *n).collect();
            let without: Vec<&str> = nodes
                .iter()
                .map(String::as_str)
                .filter(|n| sending.contains(n) && !having.contains(n))
                .collect();
            if !without.is_empty() {
                lacking.entry(without).or_default().push(metric);
            }
            if series.len() < 2 {
                continue;
            }
            let tolerance_us = (3.0 * interval_s(series)).max(jitter_s).max(MIN_GAP_S) * 1e6;
            let mut lasts: Vec<i64> = series.iter().map(|(_, s)| s.last_us).collect();
            let mut firsts: Vec<i64> = series.iter().map(|(_, s)| s.first_us).collect();
            lasts.sort_unstable();
            firsts.sort_unstable();
            // Of two nodes, the later end and the earlier start: the one that differs is named.
            let (last, first) = (lasts[lasts.len() / 2], firsts[(firsts.len() - 1) / 2]);
            for (node, span) in series {
                let (end_gap, start_gap) = (last - span.last_us, span.first_us - first);
                if end_gap as f64 > tolerance_us {
                    widest(&mut ends, node, end_gap, span.last_us);
                }
                if start_gap as f64 > tolerance_us {
                    widest(&mut starts, node, start_gap, span.first_us);
                }
            }
        }
        let in_order = |found: &BTreeMap<&str, (f64, i64)>| -> Vec<(&str, f64, i64)> {
            nodes
                .iter()
                .filter_map(|n| found.get(n.as_str()).map(|(g, at)| (n.as_str(), *g, *at)))
                .collect()
        };
        let ended = in_order(&ends);
        if !ended.is_empty() {
            let cause = if node_failed {
                "the node the run lost, most likely (it ended NODE_FAIL)"
            } else {
                "the node lost, its exporter stopped, or the job running nothing there any more"
            };
            notes.push(format!(
                "{}: {cause}; its figures cover part of the run",
                Edge::End.phrase(&ended)
            ));
        }
        let started = in_order(&starts);
        if !started.is_empty() {
            notes.push(format!(
                "{}: its exporter started late, or the job started nothing there before then",
                Edge::Start.phrase(&started)
            ));
        }
        for (without, metrics) in &lacking {
            notes.push(format!(
                "{} sent no {} where other nodes did",
                names(without),
                names(metrics)
            ));
        }
        notes
    }
}

/// What the note says about the clocks of the job's `nodes` (in allocation order), given each
/// node's clock minus the telemetry source's (`offsets`, seconds; nodes the source could not
/// tell are left out): the nodes off by more than [`MAX_CLOCK_OFFSET_S`], in one sentence.
pub fn clock_note(nodes: &[String], offsets: &[(String, f64)], source: &str) -> Option<String> {
    let off: Vec<(&str, f64)> = nodes
        .iter()
        .filter_map(|n| offsets.iter().find(|(o, _)| o == n))
        .filter(|(_, offset)| offset.abs() > MAX_CLOCK_OFFSET_S)
        .map(|(n, offset)| (n.as_str(), *offset))
        .collect();
    let consequence = "what the node stamps itself (its logs, its epilog's records, the \
         application's own timings) is off by as much, and munge refuses its credentials once the \
         gap passes a few minutes; the job's series, which the source stamps, are not";
    match off.as_slice() {
        [] => None,
        [(node, offset)] => Some(format!(
            "{node}'s clock was {} {} {source}'s during the run: {consequence}",
            clock_gap(offset.abs()),
            if *offset > 0.0 { "ahead of" } else { "behind" }
        )),
        _ => {
            let widest = off.iter().map(|(_, o)| o.abs()).fold(0.0, f64::max);
            let names_off: Vec<&str> = off.iter().map(|(n, _)| *n).collect();
            Some(format!(
                "the clocks of {} were up to {} off {source}'s during the run: {consequence}",
                names(&names_off),
                clock_gap(widest)
            ))
        }
    }
}

/// Keeps the widest gap of `node` (microseconds) with the sample it was measured at.
fn widest<'a>(found: &mut BTreeMap<&'a str, (f64, i64)>, node: &'a str, gap_us: i64, at: i64) {
    let gap = gap_us as f64 / 1e6;
    let entry = found.entry(node).or_insert((gap, at));
    if gap > entry.0 {
        *entry = (gap, at);
    }
}

/// Which end of the nodes' series a finding is about.
#[derive(Clone, Copy)]
enum Edge {
    End,
    Start,
}

impl Edge {
    /// "node2's telemetry ends 16s before most nodes' (its last sample at …)", or for several
    /// nodes "the telemetry of node2, node5 ends up to 40s before most nodes' (the earliest last
    /// sample at …)". `found`: (node, gap in seconds, the sample it was measured at).
    fn phrase(self, found: &[(&str, f64, i64)]) -> String {
        let (verb, relation, which, extreme) = match self {
            Edge::End => ("ends", "before", "last", "earliest"),
            Edge::Start => ("starts", "after", "first", "latest"),
        };
        match found {
            [(node, gap, at)] => format!(
                "{node}'s telemetry {verb} {} {relation} most nodes' (its {which} sample at {})",
                seconds(*gap),
                clock(*at)
            ),
            _ => {
                let widest = found.iter().map(|f| f.1).fold(0.0, f64::max);
                let times = found.iter().map(|f| f.2);
                let at = match self {
                    Edge::End => times.min(),
                    Edge::Start => times.max(),
                };
                format!(
                    "the telemetry of {} {verb} up to {} {relation} most nodes' (the {extreme} \
                     {which} sample at {})",
                    names(&found.iter().map(|f| f.0).collect::<Vec<_>>()),
                    seconds(widest),
                    at.map_or_else(String::new, clock)
                )
            }
        }
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

/// A clock's offset: to a tenth of a second below ten seconds (`2.4s`, so that an offset just
/// over the limit does not read as the limit itself), else as a duration.
fn clock_gap(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1}s")
    } else {
        seconds(s)
    }
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

    /// A node whose clock is off by more than two seconds is named, with the direction; one
    /// within it, or one the source cannot tell, is not; several share one sentence.
    #[test]
    fn a_node_whose_clock_disagrees_is_named() {
        let nodes: Vec<String> = ["n1", "n2", "n3"].map(String::from).to_vec();
        let offsets = |o: &[(&str, f64)]| -> Vec<(String, f64)> {
            o.iter().map(|(n, v)| (n.to_string(), *v)).collect()
        };
        assert_eq!(
            clock_note(&nodes, &offsets(&[("n1", 0.01), ("n2", 1.9)]), "prometheus"),
            None
        );
        let ahead = clock_note(&nodes, &offsets(&[("n1", 0.0), ("n2", 41.2)]), "prometheus");
        assert_eq!(
            ahead.as_deref(),
            Some(
                "n2's clock was 41s ahead of prometheus's during the run: what the node stamps \
                 itself (its logs, its epilog's records, the application's own timings) is off by \
                 as much, and munge refuses its credentials once the gap passes a few minutes; the \
                 job's series, which the source stamps, are not"
            )
        );
        let behind = clock_note(&nodes[..1], &offsets(&[("n1", -3.0)]), "prometheus");
        assert!(
            behind
                .unwrap()
                .starts_with("n1's clock was 3.0s behind prometheus's")
        );
        let several = clock_note(
            &nodes,
            &offsets(&[("n3", 5.0), ("n1", -12.0), ("n4", 99.0)]),
            "prometheus",
        );
        assert!(
            several
                .unwrap()
                .starts_with("the clocks of n1, n3 were up to 12s off prometheus's"),
        );
    }

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
        assert!(c.notes(&nodes(2), "prometheus", 0.0, false).is_empty());
        let mut one = NodeCoverage::new();
        sample(&mut one, "node1", "job_cpu_cores_used", 0, 60);
        assert!(one.notes(&nodes(1), "prometheus", 0.0, false).is_empty());
        assert!(
            NodeCoverage::new()
                .notes(&nodes(2), "prometheus", 0.0, false)
                .is_empty()
        );
    }

    #[test]
    fn a_lost_node_a_late_node_a_silent_node_and_a_missing_metric_are_each_named() {
        let mut c = NodeCoverage::new();
        sample(&mut c, "node1", "job_cpu_cores_used", 0, 60);
        sample(&mut c, "node1", "job_mem_rss_bytes", 0, 60);
        // Lost 26 s before the end.
        sample(&mut c, "node2", "job_cpu_cores_used", 0, 34);
        sample(&mut c, "node2", "job_mem_rss_bytes", 0, 34);
        // Started 20 s late, and without a memory series.
        sample(&mut c, "node3", "job_cpu_cores_used", 20, 60);
        let notes = c.notes(&nodes(4), "prometheus", 0.0, true);
        assert_eq!(notes.len(), 4, "{notes:#?}");
        assert!(notes[0].starts_with("no telemetry from node4 in prometheus"));
        assert!(
            notes[1].starts_with(
                "node2's telemetry ends 26s before most nodes' (its last sample at 2026-"
            ),
            "{}",
            notes[1]
        );
        assert!(notes[1].contains("NODE_FAIL"), "{}", notes[1]);
        assert!(
            notes[2].starts_with("node3's telemetry starts 20s after"),
            "{}",
            notes[2]
        );
        assert_eq!(
            notes[3],
            "node3 sent no job_mem_rss_bytes where other nodes did"
        );
        let quiet = c.notes(&nodes(4), "prometheus", 0.0, false);
        assert!(
            quiet[1].contains("the node lost, its exporter stopped"),
            "{}",
            quiet[1]
        );
    }

    #[test]
    fn gaps_within_three_sampling_intervals_or_the_sources_jitter_are_not_named() {
        // Sampled every 2 s, so three intervals are 6 s (above the 5-s floor): a node 6 s
        // short is not named, one 8 s short is, unless the source's jitter is larger.
        let short_by = |gap: i64, jitter: f64| {
            let mut c = NodeCoverage::new();
            sample(&mut c, "node1", "cpu", 0, 60);
            sample(&mut c, "node2", "cpu", 0, 60 - gap);
            c.notes(&nodes(2), "prometheus", jitter, false)
        };
        assert!(short_by(6, 0.0).is_empty());
        let named = short_by(8, 0.0);
        assert_eq!(named.len(), 1, "{named:?}");
        assert!(named[0].starts_with("node2's telemetry ends 8s before"));
        assert!(short_by(8, 10.0).is_empty());
    }

    #[test]
    fn one_node_that_runs_longer_names_no_other_and_many_share_a_sentence() {
        // A batch node staging before the first srun and post-processing after the last.
        let mut c = NodeCoverage::new();
        sample(&mut c, "node1", "cpu", -60, 120);
        for node in ["node2", "node3", "node4"] {
            sample(&mut c, node, "cpu", 0, 60);
        }
        assert!(c.notes(&nodes(4), "prometheus", 0.0, false).is_empty());
        // Eight of ten nodes end early: the median node is one of them, so the two that ran on
        // are the odd ones, and running on is nothing to name.
        let mut lost = NodeCoverage::new();
        for (i, node) in nodes(10).iter().enumerate() {
            sample(&mut lost, node, "cpu", 0, if i < 8 { 30 } else { 60 });
        }
        assert!(lost.notes(&nodes(10), "prometheus", 0.0, false).is_empty());
        // Three of ten end early: one sentence for the three; seven lack the GPU series the
        // other three sent: one sentence, the names cut.
        let mut few = NodeCoverage::new();
        for (i, node) in nodes(10).iter().enumerate() {
            sample(&mut few, node, "cpu", 0, if i < 3 { 30 } else { 60 });
            if i >= 7 {
                sample(&mut few, node, "gpu", 0, 60);
            }
        }
        let notes = few.notes(&nodes(10), "prometheus", 0.0, false);
        assert_eq!(notes.len(), 2, "{notes:#?}");
        assert!(
            notes[0].starts_with("the telemetry of node1, node2, node3 ends up to 30s before most nodes' (the earliest last sample at"),
            "{}",
            notes[0]
        );
        assert_eq!(
            notes[1],
            "node1, node2, node3, node4, node5 and 2 more sent no gpu where other nodes did"
        );
    }

    #[test]
    fn long_lists_of_silent_nodes_are_cut() {
        let mut c = NodeCoverage::new();
        sample(&mut c, "node1", "cpu", 0, 10);
        let notes = c.notes(&nodes(9), "prometheus", 0.0, false);
        assert!(
            notes[0].starts_with(
                "no telemetry from node2, node3, node4, node5, node6 and 3 more in prometheus"
            ),
            "{}",
            notes[0]
        );
    }
}
