//! Rules and classes: the primary mass analysis of the Lomonosov-2 method, as data.
//!
//! Input: one job's figures ([`JobData`]: its `jobs` row, its `job_summary` row, and its
//! `features_job` and `features` rows). Output ([`Verdict`]): the thresholds block (each main
//! characteristic low / average / high against its metric's limits), the classes the job belongs
//! to, and the findings of the rules that fire, each with its node and time window where it has
//! one, the evidence values, and the texts rendered with the job's own numbers.
//!
//! [`evaluate`] is pure: no I/O, no clock. The definitions live in TOML files ([`book`]) in the
//! condition language of [`lang`]; [`reload`] picks up a changed site directory without a restart.
//! The judging itself is in the `evaluation` module, and the consistency check of a finding
//! ([`contradictions`]) in `consistency`.
//!
//! Which rules apply to a job: a job without enough telemetry (`job_summary.judgeable` false)
//! gets only the rules and classes that need no telemetry (its outcome, its request, and the
//! "insufficient telemetry" finding itself), so a false alarm never comes from missing data; a job
//! shorter than the rule's `min_run_s` (default: the `rules.min_run_s` setting) gets none of the
//! telemetry rules; a rule with `partitions` or `nodes` (exclusive / shared) applies only there;
//! and a rule whose metrics the job does not have does not apply.
//!
//! Slurm accounting stands in for telemetry where it can: a per-job rule that reads the job-level
//! CPU or memory figures (`summary.cpu_eff`, `cpu_used_cores`, `wasted_core_hours`, `mem_eff`,
//! `mem_used_max_mb`) also judges a job its telemetry cannot when those figures came from
//! accounting (`summary.cpu_eff_source`, `mem_source`); it then reads every other telemetry
//! variable as missing, so partial telemetry decides nothing ([`book::Rule::on_accounting`]).
//!
//! A job that shared a node with other jobs (`summary.shared`) has node-level telemetry that
//! counts their use too. A finding that rests on it (a metric, a node's series, or a CPU or
//! memory figure taken from the nodes' series) says so: `summary.shared` = true is added to its
//! evidence.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod book;
pub mod classify;
mod consistency;
mod evaluation;
pub mod lang;
pub mod options;
mod prepare;
pub mod reload;
mod running;

pub use consistency::contradictions;
pub use evaluation::evaluate;
pub(crate) use evaluation::judge;
pub use options::Options;
pub use prepare::{Fold, JOB_STAT_FOLDS, prepare};

pub use running::{evaluate_running, running_dwells};

use std::collections::BTreeMap;

pub use book::{Group, Per, RuleBook, RulesError, Severity, Sharing, WindowOf};
use lang::Value;

/// Evaluation settings (config `[rules]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Site directory of rule files, layered over the built-in ones.
    pub dir: Option<std::path::PathBuf>,
    /// Telemetry rules skip jobs shorter than this unless a rule sets its own `min_run_s`
    /// (jobstats skips jobs under 300 s; ClusterCockpit under 600 s; tacc_stats under 60 s).
    pub min_run_s: u64,
    /// Cores of a node, for `job.cores_per_node` and `job.exclusive` (from `features`).
    pub cores_per_node: Option<u32>,
    /// How far back a job's earlier runs are looked for (`history.*`), in days.
    pub history_days: u32,
    /// The newest earlier runs of the same application a job is compared with; 0 turns the
    /// history off.
    pub history_runs: usize,
}

pub const DEFAULT_MIN_RUN_S: u64 = 300;
/// Two months: an application run weekly has eight earlier runs.
pub const DEFAULT_HISTORY_DAYS: u32 = 60;
/// Twelve earlier runs: a median that holds while five of them were anomalous.
pub const DEFAULT_HISTORY_RUNS: usize = 12;

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            dir: None,
            min_run_s: DEFAULT_MIN_RUN_S,
            cores_per_node: None,
            history_days: DEFAULT_HISTORY_DAYS,
            history_runs: DEFAULT_HISTORY_RUNS,
        }
    }
}

/// One series of one node (a `features` row).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeSeries {
    pub stats: BTreeMap<String, f64>,
    /// Microseconds since the epoch.
    pub rise_from: Option<i64>,
    pub rise_to: Option<i64>,
    pub cliff_at: Option<i64>,
}

/// A run number (`restart_count`) as a table gives it: a whole number at least 0, or none.
pub(crate) fn run_number(value: Option<&Value>) -> Option<u32> {
    match value {
        Some(Value::Num(n)) if *n >= 0.0 && n.fract() == 0.0 && *n <= f64::from(u32::MAX) => {
            Some(*n as u32)
        }
        _ => None,
    }
}

/// Everything known about one job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobData {
    pub job_id: String,
    /// `jobs` columns (times as seconds since the epoch).
    pub job: BTreeMap<String, Value>,
    /// `job_summary` columns; empty when features were not computed.
    pub summary: BTreeMap<String, Value>,
    /// `features_job` figures by warehouse metric.
    pub across: BTreeMap<String, BTreeMap<String, f64>>,
    /// `features` rows by node, then warehouse metric.
    pub nodes: BTreeMap<String, BTreeMap<String, NodeSeries>>,
    /// The same application's earlier runs (`history.<field>`, [`book::HISTORY_FIELDS`]); empty
    /// for a job without a user or a name.
    pub history: BTreeMap<String, Value>,
    /// The job as a task of a Slurm workflow run (`workflow.<field>`,
    /// [`book::WORKFLOW_FIELDS`]); empty for a job of none.
    pub workflow: BTreeMap<String, Value>,
}

/// One triggered rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub job_id: String,
    pub rule: String,
    pub title: String,
    pub group: Group,
    pub severity: Severity,
    pub node: Option<String>,
    /// Microseconds since the epoch, `[from, to]`.
    pub window: Option<(i64, i64)>,
    pub evidence: Vec<(String, Value)>,
    pub message: String,
    pub fix: String,
    pub why: Vec<String>,
    pub tools: Vec<String>,
}

impl Finding {
    /// The evidence as a JSON object (numbers as numbers, missing as null).
    pub fn evidence_json(&self) -> String {
        let map: serde_json::Map<String, serde_json::Value> = self
            .evidence
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    Value::Num(x) => serde_json::json!(x),
                    Value::Str(s) => serde_json::json!(s),
                    Value::Bool(b) => serde_json::json!(b),
                    Value::Missing => serde_json::Value::Null,
                };
                (k.clone(), v)
            })
            .collect();
        serde_json::Value::Object(map).to_string()
    }

    /// What this finding's own evidence and text contradict: see [`contradictions`].
    pub fn contradictions(&self) -> Vec<String> {
        let numbers: Vec<(&str, f64)> = self
            .evidence
            .iter()
            .filter_map(|(k, v)| match v {
                Value::Num(x) => Some((k.as_str(), *x)),
                _ => None,
            })
            .collect();
        contradictions(&numbers, &self.message)
    }
}

/// One line of the thresholds block.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub characteristic: String,
    pub title: String,
    /// The limits it is marked against.
    pub limits: String,
    pub value: Option<f64>,
    /// `low`, `average`, `high`, `no data` (the job lacks the metric) or `not judged`.
    pub level: &'static str,
    pub low_below: Option<f64>,
    pub high_from: Option<f64>,
}

/// The result for one job.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verdict {
    pub job_id: String,
    /// The run judged (`jobs.restart_count`), where the jobs row has it.
    pub restart_count: Option<u32>,
    pub judgeable: bool,
    /// (class id, class name).
    pub classes: Vec<(String, String)>,
    pub thresholds: Vec<Threshold>,
    pub findings: Vec<Finding>,
    /// Rules that did not apply to this job (too short, wrong partition, metrics missing,
    /// telemetry insufficient).
    pub not_applicable: usize,
}

/// Each rule's anomaly type, where the rule book names one (`anomaly = ...`).
fn anomaly_of(book: &RuleBook) -> BTreeMap<&str, &str> {
    book.rules
        .iter()
        .filter_map(|r| Some((r.id.as_str(), r.anomaly.as_deref()?)))
        .collect()
}

impl Verdict {
    /// The anomaly types this verdict's findings are evidence of, as (rule id, anomaly type):
    /// the findings whose rule names one (`anomaly = ...` in `book`), in the findings' order.
    /// What the models' verdict on the job is combined with.
    pub fn anomalies(&self, book: &RuleBook) -> Vec<(String, String)> {
        let anomaly_of = anomaly_of(book);
        self.findings
            .iter()
            .filter_map(|f| {
                let anomaly = anomaly_of.get(f.rule.as_str())?;
                Some((f.rule.clone(), anomaly.to_string()))
            })
            .collect()
    }

    /// The problems this verdict's critical findings name, as (rule id, problem): the rule's
    /// anomaly type where it names one, else the rule's id (`hung-job`, `out-of-memory`), in the
    /// findings' order. A job with one of these is never called healthy (the models' stage).
    pub fn critical_problems(&self, book: &RuleBook) -> Vec<(String, String)> {
        let anomaly_of = anomaly_of(book);
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Critical)
            .map(|f| {
                let problem = anomaly_of.get(f.rule.as_str()).copied();
                (f.rule.clone(), problem.unwrap_or(&f.rule).to_string())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An eight-CPU job of two hours on one node that asked for 64 GB, with no telemetry at all
    /// and Slurm accounting's figures: a fifth of its CPUs busy, 4 GB used.
    fn on_accounting(judgeable: bool, shared: bool) -> JobData {
        let num = |v: f64| Value::Num(v);
        let text = |v: &str| Value::Str(v.to_string());
        let job = [
            ("cluster", text("c")),
            ("partition", text("batch")),
            ("state", text("COMPLETED")),
            ("cpus", num(8.0)),
            ("num_nodes", num(1.0)),
            ("gpus", num(0.0)),
            ("req_mem_mb", num(65536.0)),
            ("time_limit_s", num(10800.0)),
            ("start", num(1_763_600_000.0)),
            ("end", num(1_763_607_200.0)),
        ];
        let summary = [
            ("judgeable", Value::Bool(judgeable)),
            ("shared", Value::Bool(shared)),
            ("cpu_eff", num(0.2)),
            ("cpu_used_cores", num(1.6)),
            ("wasted_core_hours", num(12.8)),
            ("cpu_eff_source", text("accounting")),
            ("mem_used_max_mb", num(4096.0)),
            ("mem_eff", num(0.0625)),
            ("mem_source", text("accounting")),
        ];
        let mut data = JobData {
            job_id: "7".into(),
            job: job.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            summary: summary
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            ..JobData::default()
        };
        prepare(&mut data, &Settings::default());
        data
    }

    fn rules_of(verdict: &Verdict) -> Vec<&str> {
        verdict.findings.iter().map(|f| f.rule.as_str()).collect()
    }

    /// A job its telemetry cannot judge still gets the findings that read only the CPU and
    /// memory figures, when Slurm accounting gave them, and never from the telemetry it lacks.
    #[test]
    fn accounting_figures_judge_a_job_without_telemetry() {
        let book = RuleBook::load(None).unwrap();
        let settings = Settings::default();
        let verdict = evaluate(&book, &on_accounting(false, false), &settings);
        let rules = rules_of(&verdict);
        for rule in [
            "low-cpu-load",
            "memory-overrequest",
            "insufficient-telemetry",
        ] {
            assert!(rules.contains(&rule), "{rule}: {rules:?}");
        }
        let low = &verdict.findings[rules.iter().position(|r| *r == "low-cpu-load").unwrap()];
        assert!(
            low.evidence
                .contains(&("cpu_user.mean".to_string(), Value::Missing)),
            "{:?}",
            low.evidence
        );
        // Without accounting's figures, nothing but what needs no telemetry.
        let mut without = on_accounting(false, false);
        without.summary.remove("cpu_eff_source");
        without.summary.remove("mem_source");
        let rules_without = evaluate(&book, &without, &settings);
        assert_eq!(rules_of(&rules_without), ["insufficient-telemetry"]);
        // A run that lost a node: accounting lost that node's figures, so none on them.
        let mut lost = on_accounting(false, false);
        lost.job
            .insert("state".into(), Value::Str("NODE_FAIL".into()));
        let rules_lost = evaluate(&book, &lost, &settings);
        assert_eq!(
            rules_of(&rules_lost),
            ["node-fail", "insufficient-telemetry"],
            "{rules_lost:?}"
        );
    }

    /// A running job of eight CPUs and four GPUs over its last hour: judgeable, its own series.
    fn live(cores_used: f64, gpu_max: f64, mem_gb: f64, mem_rise_gb_per_h: f64) -> JobData {
        let mut data = on_accounting(true, false);
        data.job
            .insert("state".into(), Value::Str("RUNNING".into()));
        data.job.insert("gpus".into(), Value::Num(4.0));
        data.job.insert("window_s".into(), Value::Num(3600.0));
        data.summary
            .insert("cpu_used_cores".into(), Value::Num(cores_used));
        data.summary
            .insert("cpu_eff".into(), Value::Num(cores_used / 8.0));
        let series = |pairs: &[(&str, f64)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect::<BTreeMap<String, f64>>()
        };
        data.across.insert(
            "job_gpu_util".into(),
            series(&[("max", gpu_max), ("mean", gpu_max / 2.0)]),
        );
        data.across.insert(
            "job_mem_rss_bytes".into(),
            series(&[
                ("max", mem_gb * 1e9),
                ("slope_per_h", mem_rise_gb_per_h * 1e9),
            ]),
        );
        prepare(&mut data, &Settings::default());
        data
    }

    /// The running rules judge only running jobs, each on its own dwell's window.
    #[test]
    fn running_conditions_hold_on_a_stuck_job_and_not_on_a_busy_one() {
        let book = RuleBook::load(None).unwrap();
        let settings = Settings::default();
        let judged = |data: &JobData, dwell| {
            evaluate_running(&book, data, &settings, dwell)
                .into_iter()
                .map(|f| f.rule)
                .collect::<Vec<_>>()
        };
        let stuck = live(0.05, 0.0, 2.0, 0.0);
        assert_eq!(
            judged(&stuck, Some(3600)),
            ["running-gpu-idle", "running-hung"]
        );
        let finding = evaluate_running(&book, &stuck, &settings, Some(3600))
            .into_iter()
            .find(|f| f.rule == "running-hung")
            .unwrap();
        assert!(
            finding.message.starts_with("For the last 1h 00m"),
            "{}",
            finding.message
        );
        let busy = live(7.6, 0.9, 2.0, 0.0);
        assert!(judged(&busy, Some(3600)).is_empty());
        assert!(judged(&busy, Some(1800)).is_empty());
        // Memory: 60 of 64 GB and rising 10 GB an hour, with an hour left of its limit.
        let leaking = live(7.6, 0.9, 60.0, 10.0);
        assert_eq!(judged(&leaking, Some(1800)), ["running-memory-near-limit"]);
        let flat = live(7.6, 0.9, 60.0, 0.0);
        assert!(judged(&flat, Some(1800)).is_empty());
        // The finished-job evaluation never gives a running rule.
        let verdict = evaluate(&book, &stuck, &settings);
        assert!(
            verdict.findings.iter().all(|f| f.group != Group::Running),
            "{:?}",
            rules_of(&verdict)
        );
    }

    /// A running job of two nodes, one core each, on its own series: a rank on `node2` that has
    /// done nothing for the dwell is warned about, naming the node; a job whose nodes both work,
    /// or whose idle node is shared without its own series, is not.
    #[test]
    fn a_running_jobs_idle_node_is_named() {
        let book = RuleBook::load(None).unwrap();
        let settings = Settings::default();
        let two_nodes = |node2_busy: f64, own: bool| {
            let mut data = on_accounting(true, !own);
            for (k, v) in [("state", Value::Str("RUNNING".into()))].into_iter().chain(
                [("cpus", 2.0), ("num_nodes", 2.0), ("window_s", 1800.0)]
                    .map(|(k, v)| (k, Value::Num(v))),
            ) {
                data.job.insert(k.into(), v);
            }
            let (metric, source) = if own {
                ("job_cpu_cores_used", "telemetry-job")
            } else {
                ("cpu_user", "telemetry-node")
            };
            let used = 1.0 + node2_busy;
            data.summary
                .insert("cpu_used_cores".into(), Value::Num(used));
            data.summary
                .insert("cpu_eff".into(), Value::Num(used / 2.0));
            data.summary
                .insert("cpu_eff_source".into(), Value::Str(source.into()));
            data.across
                .insert(metric.into(), [("mean".to_string(), used / 2.0)].into());
            for (node, busy) in [("node1", 1.0), ("node2", node2_busy)] {
                let series = NodeSeries {
                    stats: [("mean".to_string(), busy)].into(),
                    ..NodeSeries::default()
                };
                data.nodes
                    .insert(node.into(), [(metric.to_string(), series)].into());
            }
            prepare(&mut data, &settings);
            evaluate_running(&book, &data, &settings, Some(3600))
        };
        let hung = two_nodes(0.001, true);
        assert_eq!(hung.len(), 1, "{hung:?}");
        assert_eq!(
            (hung[0].rule.as_str(), hung[0].node.as_deref()),
            ("running-idle-node", Some("node2"))
        );
        assert!(
            hung[0]
                .message
                .starts_with("Node node2 of your job has been idle"),
            "{}",
            hung[0].message
        );
        assert!(two_nodes(0.9, true).is_empty());
        assert!(two_nodes(0.001, false).is_empty());
    }

    /// A finding that reads node-level telemetry of a shared node says so in its evidence; one
    /// that reads only the job's own figures does not.
    #[test]
    fn findings_on_a_shared_node_say_so() {
        let book = RuleBook::load(None).unwrap();
        let verdict = evaluate(&book, &on_accounting(true, true), &Settings::default());
        let shared = ("summary.shared".to_string(), Value::Bool(true));
        let of = |rule: &str| {
            verdict
                .findings
                .iter()
                .find(|f| f.rule == rule)
                .unwrap_or_else(|| panic!("no {rule}: {:?}", verdict.findings))
        };
        assert!(of("low-cpu-load").evidence.contains(&shared));
        assert!(!of("memory-overrequest").evidence.contains(&shared));
    }

    /// On a GPU node shared with another job, a GPU finding reads `summary.gpu_util`: the job's
    /// own GPUs (DCGM's job-mapped series), which the features step leaves empty on a shared
    /// node without them. The node's GPUs, perhaps a neighbour's, never make a finding.
    #[test]
    fn gpu_findings_on_a_shared_node_read_only_the_jobs_own_gpus() {
        let book = RuleBook::load(None).unwrap();
        let gpu_job = |own: Option<f64>, node: f64| {
            let mut data = on_accounting(true, true);
            data.job.insert("gpus".into(), Value::Num(2.0));
            data.across
                .insert("gpu_util".into(), [("mean".to_string(), node)].into());
            if let Some(own) = own {
                data.summary.insert("gpu_util".into(), Value::Num(own));
            }
            prepare(&mut data, &Settings::default());
            let verdict = evaluate(&book, &data, &Settings::default());
            verdict.findings.into_iter().find(|f| f.rule == "gpu-idle")
        };
        // The node's GPUs busy 0.5 (the neighbour's), the job's own two idle.
        let own = gpu_job(Some(0.01), 0.5).expect("gpu-idle");
        assert!(own.message.contains("1.0 %"), "{}", own.message);
        // Only the node's GPUs, idle: not the job's figure, no finding.
        assert!(gpu_job(None, 0.01).is_none());
        // The job's own GPUs busy: no finding, whatever the node's say.
        assert!(gpu_job(Some(0.9), 0.01).is_none());
    }

    /// Slurm's own GPU figure (the busiest task's peak, `jobs.acct_gpu_util_max_pct`) judges a
    /// job without GPU telemetry, even one without any telemetry; where DCGM's mean says idle
    /// too, the job is told once that its GPUs were unused, by the stronger figure (other GPU
    /// findings, such as GPUs and host idle together, are their own).
    #[test]
    fn slurms_gpu_figures_judge_a_job_without_gpu_telemetry() {
        let book = RuleBook::load(None).unwrap();
        let gpu_rules = |judgeable: bool, peak_pct: Option<f64>, dcgm: Option<f64>| {
            let mut data = on_accounting(judgeable, false);
            data.job.insert("gpus".into(), Value::Num(2.0));
            if let Some(peak) = peak_pct {
                data.job
                    .insert("acct_gpu_util_max_pct".into(), Value::Num(peak));
            }
            if let Some(mean) = dcgm {
                data.summary.insert("gpu_util".into(), Value::Num(mean));
            }
            prepare(&mut data, &Settings::default());
            evaluate(&book, &data, &Settings::default())
                .findings
                .into_iter()
                .filter(|f| ["gpu-idle", "gpu-never-busy"].contains(&f.rule.as_str()))
                .map(|f| (f.rule, f.message))
                .collect::<Vec<_>>()
        };
        let never = gpu_rules(false, Some(1.0), None);
        assert_eq!(never.len(), 1, "{never:?}");
        assert_eq!(never[0].0, "gpu-never-busy");
        assert!(
            never[0].1.starts_with(
                "The job held 2 GPU(s) that Slurm's accounting never saw more than 1.0 % busy"
            ),
            "{never:?}"
        );
        // DCGM's mean says idle too: one finding, the accounting's.
        let both = gpu_rules(true, Some(1.0), Some(0.01));
        assert_eq!(
            both.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
            ["gpu-never-busy"]
        );
        // Idle by Slurm's count, busy by DCGM's: the measurements disagree, and neither speaks.
        assert!(gpu_rules(true, Some(1.0), Some(0.8)).is_empty());
        // Busy at times by Slurm's count, idle on average by DCGM's: DCGM's finding.
        let bursts = gpu_rules(true, Some(60.0), Some(0.01));
        assert_eq!(
            bursts.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
            ["gpu-idle"]
        );
        // No GPU figures in accounting: DCGM's finding as before; neither: none.
        let dcgm_only = gpu_rules(true, None, Some(0.01));
        assert_eq!(
            dcgm_only.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
            ["gpu-idle"]
        );
        assert!(gpu_rules(false, None, None).is_empty());
        assert!(gpu_rules(true, Some(60.0), None).is_empty());
    }

    /// A GPU job in the GPU partition "used no GPU" only when its GPUs' peak says so too: a
    /// job with short bursts has a mean near 0 and is no misuse of the partition.
    #[test]
    fn a_gpu_job_with_bursts_used_its_gpus() {
        let book = RuleBook::load(None).unwrap();
        let wrong_partition = |max: f64| {
            let mut data = on_accounting(true, false);
            data.job.insert("gpus".into(), Value::Num(1.0));
            data.job
                .insert("partition".into(), Value::Str("gpu".into()));
            data.across.insert(
                "gpu_util".into(),
                [("mean".to_string(), 0.005), ("max".to_string(), max)].into(),
            );
            data.summary.insert("gpu_util".into(), Value::Num(0.005));
            prepare(&mut data, &Settings::default());
            evaluate(&book, &data, &Settings::default())
                .findings
                .iter()
                .any(|f| f.rule == "wrong-partition-gpu")
        };
        assert!(wrong_partition(0.0));
        assert!(!wrong_partition(0.9));
    }
}
