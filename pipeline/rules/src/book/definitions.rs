//! The checked rule book's types: the groups, how a rule applies (per job or node, node
//! sharing, time window), the limits, and the rules, classes, metrics and characteristics as the
//! evaluation reads them, each with the file and line it came from. `check` fills them in, so
//! that every expression in them names something that exists.

use std::collections::BTreeMap;

use serde::Deserialize;

use jobsight_base::severity::Severity;

use crate::lang::{Expr, Template};

/// The nine groups of the Lomonosov-2 method, then the production tools' own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// 1. Overall activity so low that the job is certainly not working.
    Hung,
    /// 2. Workload imbalance within or between nodes.
    Imbalance,
    /// 3. GPU jobs: host idle while the GPU works, or the GPU underused.
    Gpu,
    /// 4. Incorrect operation mode: iowait, oversubscription, swapping.
    OperationMode,
    /// 5. Inefficient MPI usage.
    MpiUsage,
    /// 6. Small MPI packets: latency-bound communication.
    MpiPackets,
    /// 7. Serial-like jobs not suited to a supercomputer.
    Serial,
    /// 8. Suspiciously low intensity of using the resources.
    LowIntensity,
    /// 9. Wrong partition chosen.
    WrongPartition,
    /// Requests far above use: memory, wall time, idle allocated nodes.
    Request,
    /// How the job ended: out of memory, time limit, node failure.
    Outcome,
    /// Behaviour over time: memory leaks, work that stopped.
    Dynamics,
    /// Too little telemetry to judge.
    Telemetry,
    /// A run far from the same application's earlier runs by the same user.
    History,
    /// Conditions of jobs still running (the `running` DAG): judged over the last `dwell_s`
    /// seconds of a live job, never on a finished one.
    Running,
}

impl Group {
    pub fn name(self) -> &'static str {
        match self {
            Group::Hung => "hung",
            Group::Imbalance => "imbalance",
            Group::Gpu => "gpu",
            Group::OperationMode => "operation_mode",
            Group::MpiUsage => "mpi_usage",
            Group::MpiPackets => "mpi_packets",
            Group::Serial => "serial",
            Group::LowIntensity => "low_intensity",
            Group::WrongPartition => "wrong_partition",
            Group::Request => "request",
            Group::Outcome => "outcome",
            Group::Dynamics => "dynamics",
            Group::Telemetry => "telemetry",
            Group::History => "history",
            Group::Running => "running",
        }
    }

    /// The method's group number (1–9), none for the production tools' groups.
    pub fn method_number(self) -> Option<u8> {
        match self {
            Group::Hung => Some(1),
            Group::Imbalance => Some(2),
            Group::Gpu => Some(3),
            Group::OperationMode => Some(4),
            Group::MpiUsage => Some(5),
            Group::MpiPackets => Some(6),
            Group::Serial => Some(7),
            Group::LowIntensity => Some(8),
            Group::WrongPartition => Some(9),
            _ => None,
        }
    }
}

/// Whether a rule judges the job as a whole or each of its nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Per {
    #[default]
    Job,
    Node,
}

/// Which jobs by node sharing: exclusive means the job holds every core of its nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sharing {
    #[default]
    Any,
    Exclusive,
    Shared,
}

/// The time window a node finding concerns.
#[derive(Debug, Clone, PartialEq)]
pub enum WindowOf {
    /// Where the metric rose most (`features.rise_from`..`rise_to`).
    Rise(String),
    /// From the metric's cliff (`features.cliff_at`) to the job's end.
    Cliff(String),
}

// Read as written (`[limits.<metric>]`) and kept as it is in the book: the evaluation layers a
// job's cluster and partition limits over the default ones key by key.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitOptions {
    pub peak: Option<f64>,
    pub normal: Option<f64>,
    pub caution: Option<f64>,
    pub alert: Option<f64>,
}

impl LimitOptions {
    fn get(&self, level: &str) -> Option<f64> {
        match level {
            "peak" => self.peak,
            "normal" => self.normal,
            "caution" => self.caution,
            "alert" => self.alert,
            _ => None,
        }
    }

    /// `self` with the keys `over` sets replaced.
    pub(super) fn overlaid(&self, over: &LimitOptions) -> LimitOptions {
        LimitOptions {
            peak: over.peak.or(self.peak),
            normal: over.normal.or(self.normal),
            caution: over.caution.or(self.caution),
            alert: over.alert.or(self.alert),
        }
    }
}

/// Where a definition came from, for messages.
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    pub file: String,
    pub line: usize,
}

/// What telemetry a rule's condition and lets read: the job-level CPU and memory figures of
/// `job_summary`, which may come from Slurm accounting, and anything else measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TelemetryReads {
    /// `summary.cpu_eff`, `cpu_used_cores` or `wasted_core_hours`.
    pub cpu_figures: bool,
    /// `summary.mem_eff` or `mem_used_max_mb`.
    pub memory_figures: bool,
    /// A metric, a node's series, the thresholds block or another measured `job_summary` field.
    pub series: bool,
    /// Of those, something other than a metric (`<metric>.<stat>`, `node.<metric>.<stat>`): the
    /// thresholds block or a measured `job_summary` field, which may rest on the nodes' series.
    pub beyond_metrics: bool,
}

impl TelemetryReads {
    pub fn any(self) -> bool {
        self.cpu_figures || self.memory_figures || self.series
    }
}

#[derive(Debug, Clone)]
pub struct Rule {
    pub id: String,
    pub title: String,
    pub group: Group,
    pub severity: Severity,
    pub per: Per,
    pub min_run_s: Option<u64>,
    /// Running rules only: the condition is judged over the job's last `dwell_s` seconds and only
    /// once it has run that long, so that it holds for the whole dwell (a pause is not a hang).
    /// `None`: over the whole run so far.
    pub dwell_s: Option<u64>,
    /// Running rules only: the finished-job rule that reports the same problem at the job's end,
    /// which the owner is then not told again once this warning went out.
    pub at_end: Option<String>,
    pub partitions: Vec<String>,
    pub nodes: Sharing,
    /// Declared required metrics: without any of them the rule does not apply.
    pub requires: Vec<String>,
    /// Metrics the condition and its lets read (a missing one leaves them without a value, so
    /// the rule does not fire).
    pub reads: Vec<String>,
    /// Whether the job must be judgeable (by default: whether the rule reads telemetry).
    pub needs_telemetry: bool,
    /// What telemetry the condition and its lets read.
    pub telemetry: TelemetryReads,
    /// Whether it also judges a job its telemetry cannot, on the CPU or memory figures Slurm
    /// accounting gave (every other telemetry read then missing): a per-job rule that reads such
    /// figures, requires no metric, and leaves `needs_telemetry` to the book.
    pub on_accounting: bool,
    /// In evaluation order (each only reads earlier ones).
    pub lets: Vec<(String, Expr)>,
    pub when: Expr,
    pub when_text: String,
    pub what: Template,
    pub what_text: String,
    pub why: Vec<String>,
    pub fix: Template,
    pub fix_text: String,
    pub tools: Vec<String>,
    pub window: Option<WindowOf>,
    /// The anomaly type (HPAS name, as the models' labels) this rule's finding is evidence of,
    /// so that one per-job verdict can say which rules agree with the models.
    pub anomaly: Option<String>,
    /// The variables recorded as evidence: every one the condition and its lets read.
    pub evidence: Vec<String>,
    pub origin: Origin,
}

#[derive(Debug, Clone)]
pub struct Class {
    pub id: String,
    pub name: String,
    pub description: String,
    pub needs_telemetry: bool,
    pub when: Expr,
    pub when_text: String,
    /// Metrics the condition reads.
    pub reads: Vec<String>,
    pub origin: Origin,
}

#[derive(Debug, Clone)]
pub struct Metric {
    pub name: String,
    pub description: String,
    /// (warehouse metric, scale), first present wins.
    pub sources: Vec<(String, f64)>,
}

#[derive(Debug, Clone)]
pub struct Characteristic {
    pub name: String,
    pub title: String,
    /// The `[limits.<name>]` that mark it low (below `caution`) and high (from `normal`).
    pub limits: String,
    pub value: Expr,
    pub value_text: String,
}

/// The checked set of definitions the evaluation uses.
#[derive(Debug, Clone, Default)]
pub struct RuleBook {
    pub rules: Vec<Rule>,
    pub classes: Vec<Class>,
    pub metrics: BTreeMap<String, Metric>,
    pub characteristics: Vec<Characteristic>,
    pub limits: BTreeMap<String, LimitOptions>,
    pub cluster_limits: BTreeMap<String, BTreeMap<String, LimitOptions>>,
    pub partition_limits: BTreeMap<String, BTreeMap<String, LimitOptions>>,
    /// Which files it was built from, in order.
    pub files: Vec<String>,
    /// FNV-1a of every file's name and text: the same files give the same version.
    pub version: String,
}

impl RuleBook {
    /// Whether `[limits.<key>]` is defined anywhere (default, cluster or partition).
    pub fn has_limits(&self, key: &str) -> bool {
        self.limits.contains_key(key)
            || self.cluster_limits.values().any(|m| m.contains_key(key))
            || self.partition_limits.values().any(|m| m.contains_key(key))
    }

    /// The limits of `metric` for a job on `cluster` and `partition`: partition over cluster over
    /// the default, key by key.
    pub fn limits_for(&self, metric: &str, cluster: &str, partition: &str) -> LimitOptions {
        let mut limits = self.limits.get(metric).cloned().unwrap_or_default();
        if let Some(l) = self.cluster_limits.get(cluster).and_then(|m| m.get(metric)) {
            limits = limits.overlaid(l);
        }
        if let Some(l) = self
            .partition_limits
            .get(partition)
            .and_then(|m| m.get(metric))
        {
            limits = limits.overlaid(l);
        }
        limits
    }

    pub fn limit(&self, metric: &str, level: &str, cluster: &str, partition: &str) -> Option<f64> {
        self.limits_for(metric, cluster, partition).get(level)
    }
}
