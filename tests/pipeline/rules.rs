//! One fixture and one snapshot per built-in rule and class: each case starts from a healthy job of
//! a given shape (one node, four nodes, a GPU node), changes what the problem changes, and checks
//! that the rule (or class) fires there and stays silent on the healthy job of the same shape. The
//! snapshot holds what a user would read: the rendered finding, node, window and evidence.
//!
//! A test also fails when a built-in rule or class has no case, so a new rule ships with its
//! fixture.

use std::collections::BTreeMap;

use jobsight_rules::lang::Value;
use jobsight_rules::{JobData, NodeSeries, RuleBook, Settings, Verdict};

const CORES: u32 = 32;
const START: f64 = 1_763_600_000.0;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    /// One exclusive 32-core node, 64 GB requested, one hour of a two-hour limit.
    Single,
    /// Four exclusive nodes.
    Multi,
    /// One node with 4 GPUs.
    Gpu,
}

/// The healthy level of each metric on a node.
fn healthy_means(shape: Shape) -> Vec<(&'static str, f64)> {
    let multi = shape == Shape::Multi;
    let mut m = vec![
        ("cpu_user", 0.85),
        ("cpu_system", 0.03),
        ("cpu_iowait", 0.002),
        ("load1", 30.0),
        ("mem_used_bytes", 40e9),
        ("mem_available_bytes", 200e9),
        ("net_rx_bytes_per_s", if multi { 15e6 } else { 2e3 }),
        ("net_tx_bytes_per_s", if multi { 15e6 } else { 2e3 }),
        ("net_rx_packets_per_s", if multi { 3750.0 } else { 1.0 }),
        ("net_tx_packets_per_s", if multi { 3750.0 } else { 1.0 }),
        ("disk_read_bytes_per_s", 0.5e6),
        ("disk_write_bytes_per_s", 1e6),
        ("fs_metadata_ops_per_s", 5.0),
        ("ipc", 1.8),
        ("mem_bw_bytes_per_s", 20e9),
    ];
    if shape == Shape::Gpu {
        m.push(("gpu_util", 0.8));
        m.push(("gpu_mem_used_bytes", 30e9));
    }
    m
}

/// A steady series around `mean`, as `features` would describe it.
fn steady(mean: f64) -> NodeSeries {
    let s = 0.02 * mean.abs();
    let stats: BTreeMap<String, f64> = [
        ("n", 360.0),
        ("min", mean - s),
        ("max", mean + s),
        ("mean", mean),
        ("std", s / 2.0),
        ("cv", if mean != 0.0 { 0.01 } else { 0.0 }),
        ("p05", mean - 0.8 * s),
        ("p25", mean - 0.3 * s),
        ("p50", mean),
        ("p75", mean + 0.3 * s),
        ("p95", mean + 0.8 * s),
        ("interval_s", 10.0),
        ("coverage", 1.0),
        ("slope_per_h", 0.0),
        ("catastrophe", 0.95),
        ("max_rise", 2.0 * s),
        ("idle_share", 0.0),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    NodeSeries {
        stats,
        rise_from: Some(((START + 1000.0) * 1e6) as i64),
        rise_to: Some(((START + 1010.0) * 1e6) as i64),
        cliff_at: Some(((START + 1800.0) * 1e6) as i64),
    }
}

/// A job under construction: node series first, then the figures derived from them, then
/// overrides of job and summary fields.
struct Fixture {
    nodes: BTreeMap<String, BTreeMap<String, NodeSeries>>,
    job: BTreeMap<String, Value>,
    summary_overrides: Vec<(String, Value)>,
    history: BTreeMap<String, Value>,
    workflow: BTreeMap<String, Value>,
}

impl Fixture {
    fn healthy(shape: Shape) -> Fixture {
        let node_count = if shape == Shape::Multi { 4 } else { 1 };
        let nodes = (1..=node_count)
            .map(|i| {
                let series = healthy_means(shape)
                    .into_iter()
                    .map(|(m, v)| (m.to_string(), steady(v)))
                    .collect();
                (format!("c{i:02}"), series)
            })
            .collect();
        let job: BTreeMap<String, Value> = [
            ("cluster", Value::Str("test".into())),
            ("job_id", Value::Str("4242".into())),
            ("user", Value::Str("alice".into())),
            ("account", Value::Str("chem".into())),
            (
                "partition",
                Value::Str(if shape == Shape::Gpu { "gpu" } else { "batch" }.into()),
            ),
            ("num_nodes", Value::Num(node_count as f64)),
            (
                "nodes",
                Value::Str(if node_count == 1 {
                    "c01".into()
                } else {
                    "c[01-04]".into()
                }),
            ),
            ("cpus", Value::Num((CORES * node_count) as f64)),
            (
                "gpus",
                Value::Num(if shape == Shape::Gpu { 4.0 } else { 0.0 }),
            ),
            ("req_mem_mb", Value::Num(65536.0 * node_count as f64)),
            ("time_limit_s", Value::Num(7200.0)),
            ("submit", Value::Num(START - 600.0)),
            ("start", Value::Num(START)),
            ("end", Value::Num(START + 3600.0)),
            ("state", Value::Str("COMPLETED".into())),
            ("exit_code", Value::Num(0.0)),
            ("name", Value::Str("md-run".into())),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        // Twelve earlier runs of `md-run` like this one (classify::history's figures).
        let history = [
            ("runs", Value::Num(12.0)),
            ("elapsed_s", Value::Num(3400.0)),
            (
                "core_hours",
                Value::Num((CORES * node_count) as f64 * 3400.0 / 3600.0),
            ),
            ("cpu_eff", Value::Num(0.86)),
            ("mem_used_max_mb", Value::Num(38_000.0 * node_count as f64)),
            (
                "difference",
                Value::Str("no metric stands out from the earlier runs".into()),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        // A step of a chain that two later jobs waited for, on a node no slower than usual.
        let workflow = [
            ("run", Value::Str("slurm-c-4200".into())),
            ("tasks", Value::Num(4.0)),
            ("waiting", Value::Num(2.0)),
            ("on_critical_path", Value::Num(1.0)),
            ("score", Value::Num(0.3)),
            ("flagged", Value::Num(0.0)),
            ("runtime_z", Value::Num(0.1)),
            ("history_runs", Value::Num(9.0)),
            ("queue_delay_s", Value::Num(40.0)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        Fixture {
            nodes,
            job,
            summary_overrides: Vec::new(),
            history,
            workflow,
        }
    }

    /// Sets a statistic of a metric on every node.
    fn all(&mut self, metric: &str, stat: &str, value: f64) -> &mut Fixture {
        for series in self.nodes.values_mut() {
            series
                .entry(metric.to_string())
                .or_insert_with(|| steady(value))
                .stats
                .insert(stat.to_string(), value);
        }
        self
    }

    /// A metric at a steady level on every node.
    fn level(&mut self, metric: &str, mean: f64) -> &mut Fixture {
        for series in self.nodes.values_mut() {
            series.insert(metric.to_string(), steady(mean));
        }
        self
    }

    fn node(&mut self, node: &str, metric: &str, stat: &str, value: f64) -> &mut Fixture {
        self.nodes
            .get_mut(node)
            .expect("fixture node")
            .entry(metric.to_string())
            .or_insert_with(|| steady(value))
            .stats
            .insert(stat.to_string(), value);
        self
    }

    fn node_series(&mut self, node: &str, metric: &str, series: NodeSeries) -> &mut Fixture {
        self.nodes
            .get_mut(node)
            .expect("fixture node")
            .insert(metric.to_string(), series);
        self
    }

    fn job(&mut self, field: &str, value: Value) -> &mut Fixture {
        self.job.insert(field.to_string(), value);
        self
    }

    fn history(&mut self, field: &str, value: Value) -> &mut Fixture {
        self.history.insert(field.to_string(), value);
        self
    }

    fn workflow(&mut self, field: &str, value: Value) -> &mut Fixture {
        self.workflow.insert(field.to_string(), value);
        self
    }

    fn summary(&mut self, field: &str, value: Value) -> &mut Fixture {
        self.summary_overrides.push((field.to_string(), value));
        self
    }

    /// The job as the classify stage would read it from the warehouse.
    fn build(&self) -> JobData {
        let mut across: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
        let metrics: Vec<String> = self
            .nodes
            .values()
            .flat_map(|m| m.keys().cloned())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        for metric in &metrics {
            let stat = |s: &str| -> Vec<f64> {
                self.nodes
                    .values()
                    .filter_map(|m| m.get(metric)?.stats.get(s).copied())
                    .collect()
            };
            let means = stat("mean");
            let mean = means.iter().sum::<f64>() / means.len() as f64;
            let (lo, hi) = means
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                    (a.min(v), b.max(v))
                });
            let sd =
                (means.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / means.len() as f64).sqrt();
            let figures = [
                ("nodes", means.len() as f64),
                ("mean", mean),
                ("min", stat("min").into_iter().fold(f64::INFINITY, f64::min)),
                (
                    "max",
                    stat("max").into_iter().fold(f64::NEG_INFINITY, f64::max),
                ),
                ("node_mean_min", lo),
                ("node_mean_max", hi),
                ("node_cv", if mean != 0.0 { sd / mean } else { 0.0 }),
                ("imbalance", if hi > 0.0 { (hi - lo) / hi } else { 0.0 }),
            ];
            across.insert(
                metric.clone(),
                figures.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            );
        }
        let num_nodes = self.nodes.len() as f64;
        let cpus = match self.job.get("cpus") {
            Some(Value::Num(c)) => *c,
            _ => 1.0,
        };
        let node_mean = |m: &str| across.get(m).and_then(|a| a.get("mean")).copied();
        let busy = node_mean("cpu_user").unwrap_or(0.0) + node_mean("cpu_system").unwrap_or(0.0);
        let used_cores = busy * CORES as f64 * num_nodes;
        let mem_max_mb: f64 = self
            .nodes
            .values()
            .filter_map(|m| m.get("mem_used_bytes")?.stats.get("max").copied())
            .sum::<f64>()
            / 1048576.0;
        let num = |k: &str| match self.job.get(k) {
            Some(Value::Num(v)) => *v,
            _ => f64::NAN,
        };
        let elapsed = num("end") - num("start");
        let mut summary: BTreeMap<String, Value> = [
            ("elapsed_s", Value::Num(elapsed)),
            ("judgeable", Value::Bool(true)),
            ("nodes_seen", Value::Num(num_nodes)),
            ("coverage_min", Value::Num(1.0)),
            ("duty_cycle", Value::Str("GOOD".into())),
            ("cpu_used_cores", Value::Num(used_cores)),
            ("cpu_eff", Value::Num(used_cores / cpus)),
            ("mem_used_max_mb", Value::Num(mem_max_mb)),
            ("mem_eff", Value::Num(mem_max_mb / num("req_mem_mb"))),
            ("time_eff", Value::Num(elapsed / num("time_limit_s"))),
            ("core_hours", Value::Num(cpus * elapsed / 3600.0)),
            (
                "wasted_core_hours",
                Value::Num(cpus * elapsed / 3600.0 * (1.0 - (used_cores / cpus).min(1.0))),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        if let Some(g) = node_mean("gpu_util") {
            summary.insert("gpu_util".into(), Value::Num(g));
        }
        for (k, v) in &self.summary_overrides {
            summary.insert(k.clone(), v.clone());
        }
        JobData {
            job_id: "4242".into(),
            job: self.job.clone(),
            summary,
            across,
            nodes: self.nodes.clone(),
            history: self.history.clone(),
            workflow: self.workflow.clone(),
        }
    }
}

fn settings() -> Settings {
    Settings {
        cores_per_node: Some(CORES),
        ..Settings::default()
    }
}

fn verdict(book: &RuleBook, fixture: &Fixture) -> Verdict {
    let mut data = fixture.build();
    jobsight_rules::prepare(&mut data, &settings());
    jobsight_rules::evaluate(book, &data, &settings())
}

/// The rules that fire on the fixture, in the verdict's order.
fn fired(book: &RuleBook, fixture: &Fixture) -> Vec<String> {
    verdict(book, fixture)
        .findings
        .into_iter()
        .map(|f| f.rule)
        .collect()
}

/// The verdict the fixture gets for `rule`: a running rule judges it as the running DAG does (a
/// job still running, over the rule's dwell), every other rule as a finished job.
fn verdict_for(book: &RuleBook, fixture: &Fixture, rule: &str) -> Verdict {
    let Some(running) = book
        .rules
        .iter()
        .find(|r| r.id == rule && r.group == jobsight_rules::Group::Running)
    else {
        return verdict(book, fixture);
    };
    Verdict {
        findings: running_findings(book, fixture, running.dwell_s),
        ..Verdict::default()
    }
}

/// The running rules of `dwell` on the fixture, judged as a job still running.
fn running_findings(
    book: &RuleBook,
    fixture: &Fixture,
    dwell: Option<u64>,
) -> Vec<jobsight_rules::Finding> {
    let mut data = fixture.build();
    data.job
        .insert("state".into(), Value::Str("RUNNING".into()));
    data.job
        .insert("window_s".into(), Value::Num(dwell.unwrap_or(3600) as f64));
    jobsight_rules::prepare(&mut data, &settings());
    jobsight_rules::evaluate_running(book, &data, &settings(), dwell)
}

type Case = (&'static str, Shape, fn(&mut Fixture));

/// A leak: memory rising by 30 GB over the middle of the run.
fn leaking(f: &mut Fixture) {
    let mut s = steady(40e9);
    s.stats.insert("max".into(), 70e9);
    s.stats.insert("max_rise".into(), 30e9);
    s.stats.insert("slope_per_h".into(), 30e9);
    s.rise_from = Some(((START + 600.0) * 1e6) as i64);
    s.rise_to = Some(((START + 3000.0) * 1e6) as i64);
    f.node_series("c01", "mem_used_bytes", s);
}

fn hung(f: &mut Fixture) {
    f.level("cpu_user", 0.001)
        .level("cpu_system", 0.0005)
        .level("load1", 0.05);
}

/// The fixture of each built-in rule.
fn rule_cases() -> Vec<Case> {
    vec![
        ("hung-job", Shape::Single, hung),
        ("node-imbalance", Shape::Multi, |f| {
            for n in ["c02", "c03", "c04"] {
                f.node(n, "cpu_user", "mean", 0.2);
            }
        }),
        ("core-imbalance", Shape::Single, |f| {
            f.summary("duty_cycle", Value::Str("UNPINNED".into()));
        }),
        ("memory-imbalance", Shape::Multi, |f| {
            f.node("c01", "mem_used_bytes", "mean", 180e9);
        }),
        ("gpu-idle", Shape::Gpu, |f| {
            f.level("gpu_util", 0.02);
        }),
        // A site without DCGM: Slurm's own GPU figure alone.
        ("gpu-never-busy", Shape::Gpu, |f| {
            f.job("acct_gpu_util_max_pct", Value::Num(2.0))
                .summary("gpu_util", Value::Missing);
        }),
        ("gpu-underused", Shape::Gpu, |f| {
            f.level("gpu_util", 0.2);
        }),
        ("gpu-and-host-idle", Shape::Gpu, |f| {
            f.level("gpu_util", 0.2).level("cpu_user", 0.2);
        }),
        ("too-many-cores-per-gpu", Shape::Gpu, |f| {
            f.job("gpus", Value::Num(1.0)).level("cpu_user", 0.2);
        }),
        ("high-iowait", Shape::Single, |f| {
            f.level("cpu_iowait", 0.3);
        }),
        ("oversubscribed", Shape::Single, |f| {
            f.level("load1", 64.0);
        }),
        ("high-system-time", Shape::Single, |f| {
            f.level("cpu_user", 0.5).level("cpu_system", 0.4);
        }),
        ("metadata-storm", Shape::Single, |f| {
            f.level("fs_metadata_ops_per_s", 5000.0);
        }),
        ("memory-nearly-full", Shape::Single, |f| {
            f.all("mem_available_bytes", "min", 2e9)
                .all("mem_used_bytes", "max", 250e9);
        }),
        ("mpi-heavy-low-cpu", Shape::Multi, |f| {
            f.level("cpu_user", 0.3)
                .level("net_rx_bytes_per_s", 2e9)
                .level("net_tx_bytes_per_s", 2e9);
        }),
        ("no-communication", Shape::Multi, |f| {
            f.level("net_rx_bytes_per_s", 1e3)
                .level("net_tx_bytes_per_s", 1e3)
                .level("net_rx_packets_per_s", 1.0)
                .level("net_tx_packets_per_s", 1.0);
        }),
        ("small-packets", Shape::Multi, |f| {
            f.level("net_rx_packets_per_s", 150000.0)
                .level("net_tx_packets_per_s", 150000.0);
        }),
        ("serial-on-many-cores", Shape::Single, |f| {
            f.level("cpu_user", 1.0 / CORES as f64)
                .level("cpu_system", 0.0);
        }),
        ("single-core-job", Shape::Single, |f| {
            f.job("cpus", Value::Num(1.0));
        }),
        ("low-cpu-load", Shape::Single, |f| {
            f.level("cpu_user", 0.3);
        }),
        ("busy-but-unproductive", Shape::Single, |f| {
            f.level("ipc", 0.2).level("mem_bw_bytes_per_s", 1e9);
        }),
        ("wrong-partition-gpu", Shape::Gpu, |f| {
            f.job("gpus", Value::Num(0.0)).level("gpu_util", 0.0);
        }),
        ("wrong-partition-largemem", Shape::Single, |f| {
            f.job("partition", Value::Str("largemem".into()))
                .all("mem_used_bytes", "max", 20e9);
        }),
        ("memory-overrequest", Shape::Single, |f| {
            f.job("req_mem_mb", Value::Num(256.0 * 1024.0));
        }),
        ("time-overrequest", Shape::Single, |f| {
            f.job("time_limit_s", Value::Num(48.0 * 3600.0));
        }),
        ("slower-than-usual", Shape::Single, |f| {
            f.history("elapsed_s", Value::Num(1500.0))
                .history("changed_metric", Value::Str("mem_bw_bytes_per_s".into()))
                .history("changed_ratio", Value::Num(0.4))
                .history(
                    "difference",
                    Value::Str(
                        "the biggest difference is in mem_bw_bytes_per_s: 0.40× its median in \
                         those runs"
                            .into(),
                    ),
                );
        }),
        ("slow-step-of-a-chain", Shape::Single, |f| {
            f.workflow("flagged", Value::Num(1.0))
                .workflow("score", Value::Num(2.6))
                .workflow("runtime_z", Value::Num(3.1));
        }),
        ("less-efficient-than-usual", Shape::Single, |f| {
            f.level("cpu_user", 0.35);
        }),
        ("bigger-than-usual", Shape::Multi, |f| {
            f.all("mem_used_bytes", "max", 100e9);
        }),
        ("idle-node", Shape::Multi, |f| {
            f.node("c04", "cpu_user", "mean", 0.001);
        }),
        ("out-of-memory", Shape::Single, |f| {
            f.job("state", Value::Str("OUT_OF_MEMORY".into()));
        }),
        ("timeout", Shape::Single, |f| {
            f.job("state", Value::Str("TIMEOUT".into()));
        }),
        ("node-fail", Shape::Single, |f| {
            f.job("state", Value::Str("NODE_FAIL".into()));
        }),
        ("memory-leak", Shape::Single, leaking),
        ("work-cliff", Shape::Single, |f| {
            f.all("cpu_user", "catastrophe", 0.02);
        }),
        // The running rules, judged as the running DAG judges a job still running.
        ("running-hung", Shape::Single, hung),
        ("running-gpu-idle", Shape::Gpu, |f| {
            f.level("gpu_util", 0.0);
        }),
        ("running-memory-near-limit", Shape::Single, |f| {
            // 60 of the 64 GiB, 20 GB more an hour, an hour of the time limit left, on a node
            // the job has to itself (the running DAG knows its neighbours: none).
            f.all("mem_used_bytes", "max", 60e9)
                .all("mem_used_bytes", "slope_per_h", 20e9)
                .summary("shared", Value::Bool(false));
        }),
        ("running-idle-node", Shape::Multi, |f| {
            f.node("c04", "cpu_user", "mean", 0.001)
                .summary("shared", Value::Bool(false));
        }),
        ("running-serial", Shape::Single, |f| {
            f.level("cpu_user", 1.0 / CORES as f64)
                .level("cpu_system", 0.0);
        }),
        ("insufficient-telemetry", Shape::Single, |f| {
            f.summary("judgeable", Value::Bool(false)).summary(
                "not_judgeable_reason",
                Value::Str("node c01 has 12 % of the expected samples of cpu_user".into()),
            );
        }),
    ]
}

/// The fixture of each built-in class (the class must not hold for the healthy job of the shape).
fn class_cases() -> Vec<Case> {
    vec![
        ("single-node", Shape::Multi, |f| {
            f.nodes.retain(|n, _| n == "c01");
            f.job("num_nodes", Value::Num(1.0))
                .job("cpus", Value::Num(32.0));
        }),
        ("multi-node", Shape::Single, |f| {
            f.job("num_nodes", Value::Num(2.0));
        }),
        ("large-scale", Shape::Multi, |f| {
            f.job("num_nodes", Value::Num(64.0));
        }),
        ("single-core", Shape::Single, |f| {
            f.job("cpus", Value::Num(1.0));
        }),
        ("serial", Shape::Single, |f| {
            f.level("cpu_user", 1.0 / CORES as f64)
                .level("cpu_system", 0.0);
        }),
        ("gpu-job", Shape::Single, |f| {
            f.job("gpus", Value::Num(2.0));
        }),
        ("gpu-intensive", Shape::Gpu, |f| {
            f.level("gpu_util", 0.2);
        }),
        ("short", Shape::Single, |f| {
            f.job("end", Value::Num(START + 300.0));
        }),
        ("long", Shape::Single, |f| {
            f.job("end", Value::Num(START + 2.0 * 86400.0))
                .job("time_limit_s", Value::Num(3.0 * 86400.0));
        }),
        ("highly-communicative", Shape::Multi, |f| {
            f.level("net_rx_bytes_per_s", 40e6)
                .level("net_tx_bytes_per_s", 40e6);
        }),
        ("compute-intensive", Shape::Single, |f| {
            f.level("cpu_user", 0.6);
        }),
        ("memory-intensive", Shape::Single, |f| {
            f.level("mem_bw_bytes_per_s", 60e9);
        }),
        ("high-memory-locality", Shape::Single, |f| {
            f.level("ipc", 1.0);
        }),
        ("low-memory-locality", Shape::Single, |f| {
            f.level("ipc", 0.5);
        }),
        ("large-memory", Shape::Single, |f| {
            f.all("mem_used_bytes", "max", 200e9);
        }),
        ("io-intensive", Shape::Single, |f| {
            f.level("disk_write_bytes_per_s", 500e6);
        }),
        ("low-activity", Shape::Single, |f| {
            f.level("cpu_user", 0.2);
        }),
        ("suitable-for-supercomputer", Shape::Single, |f| {
            f.level("cpu_user", 0.1);
        }),
        ("exclusive-nodes", Shape::Single, |f| {
            f.job("cpus", Value::Num(8.0));
        }),
        ("shared-nodes", Shape::Single, |f| {
            f.job("cpus", Value::Num(8.0)).level("cpu_user", 0.22);
        }),
        ("array-task", Shape::Single, |f| {
            f.job("array_task_id", Value::Num(3.0));
        }),
        ("requeued", Shape::Single, |f| {
            f.job("restart_count", Value::Num(1.0));
        }),
        ("failed", Shape::Single, |f| {
            f.job("state", Value::Str("FAILED".into()));
        }),
        ("right-sized-memory", Shape::Single, |f| {
            f.job("req_mem_mb", Value::Num(48.0 * 1024.0));
        }),
    ]
}

/// Classes that the healthy job of the shape belongs to: their fixture is the job that does not,
/// and the case checks the reverse.
const INVERTED_CLASSES: [&str; 5] = [
    "compute-intensive",
    "suitable-for-supercomputer",
    "exclusive-nodes",
    "high-memory-locality",
    "gpu-intensive",
];

fn class_is_inverted(id: &str) -> bool {
    INVERTED_CLASSES.contains(&id)
}

fn render(verdict: &Verdict, rule: &str) -> String {
    let mut out = String::new();
    for f in verdict.findings.iter().filter(|f| f.rule == rule) {
        out += &format!(
            "[{}] {} ({}, group {}{})\nnode: {}\nwindow: {}\nwhat: {}\nwhy: {}\nfix: {}\ntools: {}\nevidence: {}\n",
            f.severity.name(),
            f.title,
            f.rule,
            f.group.name(),
            f.group
                .method_number()
                .map(|n| format!(" = method group {n}"))
                .unwrap_or_default(),
            f.node.as_deref().unwrap_or("-"),
            f.window
                .map(|(a, b)| format!(
                    "{} s to {} s after the start",
                    (a as f64 / 1e6 - START).round(),
                    (b as f64 / 1e6 - START).round()
                ))
                .unwrap_or_else(|| "-".into()),
            f.message,
            f.why.join("; "),
            f.fix,
            f.tools.join(", "),
            f.evidence_json(),
        );
    }
    out
}

#[test]
fn every_rule_fires_on_its_fixture_and_not_on_the_healthy_twin() {
    let book = RuleBook::load(None).expect("built-in rules");
    let cases = rule_cases();
    for rule in &book.rules {
        assert!(
            cases.iter().any(|c| c.0 == rule.id),
            "rule {} has no fixture in tests/pipeline/rules.rs",
            rule.id
        );
    }
    for (id, shape, change) in cases {
        assert!(book.rules.iter().any(|r| r.id == id), "no rule {id}");
        let healthy = Fixture::healthy(shape);
        let mut quiet = verdict(&book, &healthy).findings;
        for dwell in jobsight_rules::running_dwells(&book) {
            quiet.extend(running_findings(&book, &healthy, dwell));
        }
        assert!(
            quiet.is_empty(),
            "the healthy {shape:?} job has findings: {:?}",
            quiet.iter().map(|f| &f.rule).collect::<Vec<_>>()
        );
        let mut fixture = Fixture::healthy(shape);
        change(&mut fixture);
        let v = verdict_for(&book, &fixture, id);
        for finding in &v.findings {
            let wrong = finding.contradictions();
            assert!(
                wrong.is_empty(),
                "rule {}'s finding contradicts its own evidence: {wrong:?}\n{}",
                finding.rule,
                finding.evidence_json()
            );
            // What a person reads: an explanation and what to do, in people's units.
            for text in [&finding.message, &finding.fix] {
                assert!(
                    !text.trim().is_empty(),
                    "rule {}: an empty text",
                    finding.rule
                );
                let unreadable = jobsight_base::units::unreadable_numbers(text);
                assert!(
                    unreadable.is_empty(),
                    "rule {}: {unreadable:?} in {text}",
                    finding.rule
                );
            }
        }
        let text = render(&v, id);
        assert!(
            !text.is_empty(),
            "rule {id} did not fire on its fixture; it found {:?}",
            v.findings.iter().map(|f| &f.rule).collect::<Vec<_>>()
        );
        insta::assert_snapshot!(format!("rule-{id}"), text);
    }
}

/// One cause is told once, and from the job's own figures: two nodes of four that did no work
/// are named by `idle-node` alone, not again as a low load and an imbalance (a hung rank on the
/// real two-node Slurm got all three); the share of CPU time spent in the kernel is the job's
/// own where its cgroups are measured, not its node's (a hung canary was told that 42 % of its
/// "busy" time went to the kernel: the test machine's, not its own).
#[test]
fn an_idle_node_is_told_once_and_the_kernel_share_is_the_jobs_own() {
    let book = RuleBook::load(None).expect("built-in rules");
    let fired = |fixture: &Fixture| fired(&book, fixture);

    let mut idle_halves = Fixture::healthy(Shape::Multi);
    idle_halves
        .node("c03", "cpu_user", "mean", 0.001)
        .node("c04", "cpu_user", "mean", 0.001);
    let found = fired(&idle_halves);
    assert_eq!(
        found.iter().filter(|r| *r == "idle-node").count(),
        2,
        "{found:?}"
    );
    for rule in ["node-imbalance", "low-cpu-load"] {
        assert!(!found.iter().any(|r| r == rule), "{found:?}");
    }

    let cores = CORES as f64;
    let mut hung_on_a_busy_node = Fixture::healthy(Shape::Single);
    hung_on_a_busy_node
        .level("cpu_user", 0.5)
        .level("cpu_system", 0.4)
        .level("job_cpu_cores_used", 0.0015)
        .level("job_cpu_user_cores", 0.001)
        .level("job_cpu_system_cores", 0.0005);
    let found = fired(&hung_on_a_busy_node);
    assert!(!found.iter().any(|r| r == "high-system-time"), "{found:?}");

    let mut in_the_kernel_on_a_quiet_node = Fixture::healthy(Shape::Single);
    in_the_kernel_on_a_quiet_node
        .level("job_cpu_cores_used", 0.9 * cores)
        .level("job_cpu_user_cores", 0.5 * cores)
        .level("job_cpu_system_cores", 0.4 * cores);
    let found = fired(&in_the_kernel_on_a_quiet_node);
    assert!(found.iter().any(|r| r == "high-system-time"), "{found:?}");
}

#[test]
fn every_class_holds_on_its_fixture_and_not_on_the_healthy_twin() {
    let book = RuleBook::load(None).expect("built-in rules");
    let cases = class_cases();
    for class in &book.classes {
        assert!(
            cases.iter().any(|c| c.0 == class.id),
            "class {} has no fixture in tests/pipeline/rules.rs",
            class.id
        );
    }
    for (id, shape, change) in cases {
        let class_of = |f: &Fixture| verdict(&book, f).classes.iter().any(|(c, _)| c == id);
        let healthy = Fixture::healthy(shape);
        let mut fixture = Fixture::healthy(shape);
        change(&mut fixture);
        let (in_healthy, in_fixture) = (class_of(&healthy), class_of(&fixture));
        if class_is_inverted(id) {
            assert!(
                in_healthy && !in_fixture,
                "class {id}: healthy {in_healthy}, fixture {in_fixture}"
            );
        } else {
            assert!(
                !in_healthy && in_fixture,
                "class {id}: healthy {in_healthy}, fixture {in_fixture}"
            );
        }
        let class = book.classes.iter().find(|c| c.id == id).expect("class");
        let member = if in_fixture { &fixture } else { &healthy };
        let v = verdict(&book, member);
        insta::assert_snapshot!(
            format!("class-{id}"),
            format!(
                "{} ({}): {}\nwhen: {}\nclasses of the member: {}\nthresholds: {}\n",
                class.name,
                class.id,
                class.description,
                class.when_text,
                v.classes
                    .iter()
                    .map(|c| c.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                v.thresholds
                    .iter()
                    .map(|t| format!("{}={}", t.characteristic, t.level))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        );
    }
}

/// A hung job on a shared node: its efficiency (of its own CPUs) is ten times the node's busy
/// share. The finding quotes its mean and 95th percentile on one scale, so the percentile is
/// never below the mean (it was: "busy 0.006 on average and at most 0.001").
#[test]
fn the_hung_finding_quotes_one_quantity() {
    let book = RuleBook::load(None).expect("built-in rules");
    let mut f = Fixture::healthy(Shape::Single);
    hung(&mut f);
    f.summary("cpu_eff", Value::Num(0.015));
    let v = verdict(&book, &f);
    let hung = v
        .findings
        .iter()
        .find(|f| f.rule == "hung-job")
        .expect("hung found");
    let evidence: serde_json::Value =
        serde_json::from_str(&hung.evidence_json()).expect("evidence is JSON");
    let (busy, p95) = (
        evidence["busy"].as_f64().expect("busy"),
        evidence["busy_p95"].as_f64().expect("busy_p95"),
    );
    assert_eq!(busy, 0.015);
    assert!(p95 >= busy, "{evidence}");
    assert!(
        hung.message
            .contains("busy 1.5 % of the time on average and at most 1.5 %"),
        "{}",
        hung.message
    );
}

#[test]
fn a_job_without_enough_telemetry_gets_only_the_rules_that_need_none() {
    let book = RuleBook::load(None).expect("built-in rules");
    let mut f = Fixture::healthy(Shape::Single);
    hung(&mut f);
    f.job("state", Value::Str("TIMEOUT".into()))
        .summary("judgeable", Value::Bool(false))
        .summary("not_judgeable_reason", Value::Str("no telemetry".into()));
    let v = verdict(&book, &f);
    let rules: Vec<&str> = v.findings.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(rules, ["timeout", "insufficient-telemetry"]);
    assert!(v.thresholds.iter().all(|t| t.level == "not judged"));
}

#[test]
fn short_jobs_get_no_telemetry_rules_but_do_get_their_outcome() {
    let book = RuleBook::load(None).expect("built-in rules");
    let mut f = Fixture::healthy(Shape::Single);
    hung(&mut f);
    f.job("end", Value::Num(START + 120.0))
        .job("state", Value::Str("OUT_OF_MEMORY".into()));
    let v = verdict(&book, &f);
    let rules: Vec<&str> = v.findings.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(rules, ["out-of-memory"]);
}

#[test]
fn the_memory_leak_finding_names_its_node_and_window() {
    let book = RuleBook::load(None).expect("built-in rules");
    let mut f = Fixture::healthy(Shape::Single);
    leaking(&mut f);
    let v = verdict(&book, &f);
    let leak = v
        .findings
        .iter()
        .find(|f| f.rule == "memory-leak")
        .expect("leak found");
    assert_eq!(leak.node.as_deref(), Some("c01"));
    let (from, to) = leak.window.expect("window");
    assert_eq!(
        (
            from / 1_000_000 - START as i64,
            to / 1_000_000 - START as i64
        ),
        (600, 3000)
    );
    // A jump of the same size within one sampling interval is not a leak.
    let mut jump = Fixture::healthy(Shape::Single);
    leaking(&mut jump);
    jump.node("c01", "mem_used_bytes", "rise_s", 10.0);
    let mut s = jump.nodes["c01"]["mem_used_bytes"].clone();
    s.rise_to = s.rise_from.map(|t| t + 10_000_000);
    jump.node_series("c01", "mem_used_bytes", s);
    assert!(
        !verdict(&book, &jump)
            .findings
            .iter()
            .any(|f| f.rule == "memory-leak")
    );
}

#[test]
fn limits_per_partition_change_the_verdict() {
    // The same GPU job is underused on the default limits and fine where the site lowered them.
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("site.toml"),
        "[partition.gpu.limits.gpu_util]\nalert = 0.05\ncaution = 0.1\n",
    )
    .expect("write");
    let site = RuleBook::load(Some(dir.path())).expect("site rules");
    let built_in = RuleBook::load(None).expect("built-in rules");
    let mut f = Fixture::healthy(Shape::Gpu);
    f.level("gpu_util", 0.2);
    let rules = |book: &RuleBook| fired(book, &f);
    assert_eq!(rules(&built_in), ["gpu-underused"]);
    assert!(rules(&site).is_empty());
}

/// `jobsight rules check` and `jobsight rules backtest` through the command line, on a small
/// simulated warehouse: a candidate that lowers the memory-overrequest bar to jobstats' 70 % flags
/// more jobs with that rule and changes nothing else; a broken candidate is refused with its file
/// and line.
#[test]
fn check_and_backtest_a_candidate_rule_set() {
    use std::process::Command;
    let jobsight = env!("CARGO_BIN_EXE_jobsight");
    let work = tempfile::tempdir().expect("temp dir");
    let data = work.path().join("data");
    let run = |args: &[&str]| {
        let out = Command::new(jobsight)
            .arg("--data")
            .arg(&data)
            .args(args)
            .output()
            .expect("run jobsight");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for args in [
        &["simulate", "--nodes", "4", "--jobs", "24"][..],
        &["features", "--cores-per-node", "32"][..],
    ] {
        let (ok, out, err) = run(args);
        assert!(ok, "{args:?}: {out}{err}");
    }
    let candidate = work.path().join("candidate");
    std::fs::create_dir(&candidate).expect("mkdir");
    std::fs::write(
        candidate.join("site.toml"),
        r#"[[rule]]
id = "memory-overrequest"
title = "Memory over-requested (jobstats' bar)"
group = "request"
severity = "warning"
let.used_gb = "summary.mem_used_max_mb / job.num_nodes / 1024"
when = "summary.mem_eff < 0.7 and job.req_mem_gb / job.num_nodes - used_gb * 1.2 >= 4"
what = "Used {used_gb:.1} GB per node."
fix = "Ask for less."
"#,
    )
    .expect("write");
    let (ok, out, err) = run(&["rules", "check", candidate.to_str().expect("utf-8")]);
    assert!(
        ok && out.contains("ok; with the built-in files: 41 rules"),
        "{out}{err}"
    );
    let (ok, out, err) = run(&[
        "rules",
        "backtest",
        "--candidate",
        candidate.to_str().expect("utf-8"),
        "--since",
        "2026-01-01",
        "--format",
        "json",
    ]);
    assert!(ok, "{out}{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(report["jobs"].as_u64().expect("jobs") > 0, "{report}");
    for rule in report["rules"].as_array().expect("rules") {
        let (only_current, only_candidate) = (
            rule["only_current"].as_u64().expect("n"),
            rule["only_candidate"].as_u64().expect("n"),
        );
        if rule["rule"] == "memory-overrequest" {
            assert!(only_candidate > 0 && only_current == 0, "{rule}");
        } else {
            assert_eq!((only_current, only_candidate), (0, 0), "{rule}");
        }
    }
    assert!(
        !report["users_only_candidate"]
            .as_array()
            .expect("users")
            .is_empty()
    );
    // A broken candidate: the error names the file, the line and the unknown name.
    std::fs::write(
        candidate.join("site.toml"),
        "[[rule]]\nid = \"x\"\ntitle = \"t\"\ngroup = \"hung\"\nseverity = \"info\"\nwhen = \"job.cpuz > 1\"\nwhat = \"w\"\nfix = \"f\"\n",
    )
    .expect("write");
    let (ok, _, err) = run(&["rules", "check", candidate.to_str().expect("utf-8")]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("site.toml line 6: rule x: when: unknown variable `job.cpuz`"),
        "{err}"
    );
}

/// No GPU finding rests on a figure the job's page refuses: on a node the job shared, its nodes'
/// GPUs may be another job's, so without a series of its own GPUs (`job_summary.gpu_util` empty,
/// the page's "not measurable") no GPU rule fires, however idle the node's GPUs were.
#[test]
fn gpu_rules_read_only_the_job_s_own_gpu_figure() {
    let book = RuleBook::load(None).expect("built-in rules");
    let gpu_rules = |f: &Fixture| -> Vec<String> {
        fired(&book, f)
            .into_iter()
            .filter(|r| r.starts_with("gpu-"))
            .collect()
    };
    let mut idle = Fixture::healthy(Shape::Gpu);
    idle.level("gpu_util", 0.01);
    assert_eq!(gpu_rules(&idle), ["gpu-idle"]);
    idle.summary("shared", Value::Bool(true))
        .summary("gpu_util", Value::Missing);
    assert!(gpu_rules(&idle).is_empty(), "{:?}", gpu_rules(&idle));
}
