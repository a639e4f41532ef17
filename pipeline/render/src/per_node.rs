//! A job of several nodes, node by node: how busy each node's part of the job was and its memory
//! peak, side by side, so that a node that did nothing or did more than the others is seen at a
//! glance (`jobsight job`, the job page). The job's own series (its cgroups, through a per-job
//! exporter) where it has them; else its nodes' series, which count whatever else ran there, and
//! the view says which.

use std::collections::BTreeMap;

use serde::Serialize;

use super::units::{percent, significant, size_from_bytes};
use jobsight_base::text::clean;
use jobsight_report::load::NodeFacts;

/// One node of the job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeUse {
    pub node: String,
    /// Cores the job's own processes kept busy there, on average (its cgroups).
    pub job_cores: Option<f64>,
    /// The node's user CPU share (0-1), where the job has no series of its own.
    pub node_cpu_user: Option<f64>,
    /// The job's resident memory at its peak there, else the node's memory in use, in bytes.
    pub mem_peak_bytes: Option<f64>,
    /// Whether the figures are the job's own (its cgroups) rather than the node's.
    pub own: bool,
}

/// The nodes of a job, by name, from its `features` rows; empty for a job of one node.
pub fn node_uses(nodes: Option<&BTreeMap<String, NodeFacts>>) -> Vec<NodeUse> {
    let Some(nodes) = nodes.filter(|n| n.len() > 1) else {
        return Vec::new();
    };
    // The job's own series on any node makes every node's figures its own (a node without them
    // ran none of the job's processes, or its exporter sent nothing: shown as "-").
    let own = nodes
        .values()
        .any(|n| n.figures.contains_key("job_cpu_cores_used"));
    nodes
        .iter()
        .map(|(node, facts)| {
            let mean = |metric: &str| facts.figures.get(metric).and_then(|(mean, _)| *mean);
            let peak = |metric: &str| facts.figures.get(metric).and_then(|(_, max)| *max);
            NodeUse {
                node: node.clone(),
                job_cores: own.then(|| mean("job_cpu_cores_used")).flatten(),
                node_cpu_user: (!own).then(|| mean("cpu_user")).flatten(),
                mem_peak_bytes: if own {
                    peak("job_mem_rss_bytes")
                } else {
                    peak("mem_used_bytes")
                },
                own,
            }
        })
        .collect()
}

/// The nodes as a person reads them, one place for the terminal and the page: whose figures
/// they are, the columns' names and each node's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeTable {
    pub whose: &'static str,
    pub cpu: &'static str,
    pub memory: &'static str,
    /// (node, CPU, memory peak), as written.
    pub rows: Vec<(String, String, String)>,
}

/// [`NodeTable`] of `nodes`; `None` for a job of one node.
pub fn table(nodes: &[NodeUse]) -> Option<NodeTable> {
    let own = nodes.first()?.own;
    let rows = nodes
        .iter()
        .map(|n| {
            let busy = match (n.job_cores, n.node_cpu_user) {
                (Some(cores), _) => significant(cores),
                (None, Some(share)) => percent(share),
                (None, None) => "-".into(),
            };
            let peak = n.mem_peak_bytes.map_or("-".into(), size_from_bytes);
            (clean(&n.node, 64), busy, peak)
        })
        .collect();
    Some(if own {
        NodeTable {
            whose: "the job's own processes on each node",
            cpu: "cores busy",
            memory: "memory peak",
            rows,
        }
    } else {
        NodeTable {
            whose: "each node's own figures, which count anything else that ran there",
            cpu: "user CPU",
            memory: "memory in use, peak",
            rows,
        }
    })
}

/// The nodes as lines of text, after a heading; nothing for a job of one node.
pub fn render_text(out: &mut String, nodes: &[NodeUse]) {
    use std::fmt::Write as _;
    let Some(t) = table(nodes) else {
        return;
    };
    let _ = writeln!(out, "\nNode by node ({})", t.whose);
    let _ = writeln!(out, "  {:<16} {:<12} {}", "node", t.cpu, t.memory);
    for (node, busy, peak) in &t.rows {
        let _ = writeln!(out, "  {node:<16} {busy:<12} {peak}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(figures: &[(&str, f64, f64)]) -> NodeFacts {
        NodeFacts {
            figures: figures
                .iter()
                .map(|(m, mean, max)| (m.to_string(), (Some(*mean), Some(*max))))
                .collect(),
        }
    }

    #[test]
    fn a_hung_node_reads_beside_the_working_one() {
        let nodes: BTreeMap<String, NodeFacts> = [
            (
                "node1".to_string(),
                node(&[
                    ("job_cpu_cores_used", 0.976, 1.0),
                    ("job_mem_rss_bytes", 3.0e6, 3.2e6),
                    ("cpu_user", 0.5, 0.6),
                ]),
            ),
            (
                "node2".to_string(),
                node(&[
                    ("job_cpu_cores_used", 0.0, 0.0),
                    ("job_mem_rss_bytes", 1.0e6, 1.1e6),
                ]),
            ),
        ]
        .into();
        let uses = node_uses(Some(&nodes));
        assert_eq!(uses.len(), 2);
        assert!(uses.iter().all(|n| n.own && n.node_cpu_user.is_none()));
        let mut out = String::new();
        render_text(&mut out, &uses);
        assert!(
            out.contains("Node by node (the job's own processes on each node)"),
            "{out}"
        );
        let row = |node: &str| {
            out.lines()
                .find(|l| l.starts_with(&format!("  {node} ")))
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
        };
        assert_eq!(row("node1"), ["node1", "0.976", "3.05", "MB"], "{out}");
        assert_eq!(row("node2"), ["node2", "0", "1.05", "MB"], "{out}");
        // One node: nothing to set side by side.
        let one: BTreeMap<String, NodeFacts> = [("node1".to_string(), node(&[]))].into();
        assert!(node_uses(Some(&one)).is_empty());
        // Without the job's own series the nodes' figures are shown, and said to be theirs.
        let shared: BTreeMap<String, NodeFacts> = [
            (
                "a".to_string(),
                node(&[("cpu_user", 0.5, 0.9), ("mem_used_bytes", 2e9, 3e9)]),
            ),
            ("b".to_string(), node(&[("cpu_user", 0.1, 0.2)])),
        ]
        .into();
        let mut out = String::new();
        render_text(&mut out, &node_uses(Some(&shared)));
        assert!(
            out.contains("anything else that ran there") && out.contains("50 %"),
            "{out}"
        );
    }
}
