//! The rule book: rule, class, metric, characteristic and limit definitions read from TOML files
//! and checked once, so that evaluation never meets an unknown name.
//!
//! A file may hold any of these tables (see `pipeline/rules/*.toml` for the built-in set and
//! `README.md` for every key):
//! - `[[rule]]`: id, title, group, severity, which jobs it applies to (`min_run_s`, `partitions`,
//!   `nodes` = any/exclusive/shared, `requires` metrics, `needs_telemetry`), `per` = job/node,
//!   derived variables (`[rule.let]`), the condition `when`, the texts `what` and `fix`
//!   (templates), `why` (likely root causes), `tools`, and for node rules the `window`
//!   (`rise:<metric>` or `cliff:<metric>`) the finding concerns;
//! - `[[class]]`: id, name, description, `when` (classes may not read other classes);
//! - `[[metric]]`: a name the conditions use and the warehouse series it is read from, first
//!   found wins, each with a scale (`meminfo.AnonPages` in kB for `mem_used_bytes`, say);
//! - `[[characteristic]]`: one line of the thresholds block: a value (an expression, usually a
//!   metric's mean) marked low below its metric's `caution` limit and high from its `normal` limit;
//! - `[limits.<metric>]`, `[cluster.<name>.limits.<metric>]`,
//!   `[partition.<name>.limits.<metric>]`: ClusterCockpit's per-metric peak / normal / caution /
//!   alert, the most specific one winning key by key.
//!
//! The built-in files are compiled in. A site directory (config `rules.dir`) adds files; a site
//! file with the name of a built-in one replaces it, and a site definition with the id of an
//! earlier one replaces that definition. Errors name the file, the line, and the unknown name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::lang::{self, Expr, Template};

/// The rule files shipped with jobsight: (file name, text).
pub const BUILT_IN: [(&str, &str); 5] = [
    ("metrics.toml", include_str!("../book/metrics.toml")),
    ("thresholds.toml", include_str!("../book/thresholds.toml")),
    ("classes.toml", include_str!("../book/classes.toml")),
    ("method.toml", include_str!("../book/method.toml")),
    ("production.toml", include_str!("../book/production.toml")),
];

/// Fields of `jobs` that conditions read as `job.<field>`, with those the engine derives.
pub const JOB_FIELDS: [&str; 30] = [
    "cluster",
    "job_id",
    "array_job_id",
    "array_task_id",
    "restart_count",
    "user",
    "account",
    "partition",
    "qos",
    "num_nodes",
    "nodes",
    "cpus",
    "gpus",
    "req_mem_mb",
    "time_limit_s",
    "submit",
    "start",
    "end",
    "state",
    "exit_code",
    "exit_signal",
    "name",
    "source",
    // Derived.
    "elapsed_s",
    "cpus_per_node",
    "cores_per_node",
    "exclusive",
    "req_mem_gb",
    "gpus_per_node",
    "wait_s",
];

/// `workflow.<field>`: the job as a task of a Slurm workflow run (an array or a dependency chain,
/// `workflow_tasks` and `workflow_scores`; `classify::workflow`); empty for a job of none.
/// `run` its run's id, `tasks` the run's jobs, `waiting` the jobs that waited for it, `on_critical_path`
/// 1 when it decided the run's makespan, `score` and `flagged` its host's slack score in the run
/// (`workflow_scores`), `runtime_z` its own run time against its application's, `history_runs`
/// the runs that history was learnt from, `queue_delay_s` its wait from ready to start.
pub const WORKFLOW_FIELDS: [&str; 9] = [
    "run",
    "tasks",
    "waiting",
    "on_critical_path",
    "score",
    "flagged",
    "runtime_z",
    "history_runs",
    "queue_delay_s",
];

/// Figures of `job_summary` that conditions read as `summary.<field>`.
/// `history.<field>`: the same application's earlier runs (`classify::history`).
pub const HISTORY_FIELDS: [&str; 8] = [
    "runs",
    "elapsed_s",
    "core_hours",
    "cpu_eff",
    "mem_used_max_mb",
    "changed_metric",
    "changed_ratio",
    "difference",
];

pub const SUMMARY_FIELDS: [&str; 20] = [
    "elapsed_s",
    "trimmed",
    "nodes_expected",
    "nodes_seen",
    "nodes_missing",
    "metrics",
    "samples",
    "coverage_min",
    "coverage_mean",
    "judgeable",
    "not_judgeable_reason",
    "duty_cycle",
    "cpu_used_cores",
    "cpu_eff",
    "mem_used_max_mb",
    "mem_eff",
    "time_eff",
    "gpu_util",
    "core_hours",
    "wasted_core_hours",
];

/// Statistics of a metric over the whole job (`<metric>.<stat>`): `features_job`'s figures across
/// nodes, and the per-node statistics folded over nodes (the worst node: largest rise and slope,
/// lowest catastrophe, ...; see [`super::JOB_STAT_FOLDS`]).
pub const JOB_STATS: [&str; 17] = [
    "mean",
    "min",
    "max",
    "node_mean_min",
    "node_mean_max",
    "node_cv",
    "imbalance",
    "nodes",
    "max_rise",
    "slope_per_h",
    "catastrophe",
    "idle_share",
    "p05",
    "p95",
    "std",
    "coverage",
    "rise_s",
];

/// Statistics of a metric on one node that the engine derives from a `features` row's times
/// (see [`super::prepare`]).
pub const DERIVED_NODE_STATS: [&str; 2] = ["rise_s", "cliff_after_s"];

/// Statistics of a metric on one node (`node.<metric>.<stat>`): the sample count, the `features`
/// statistics columns, and the derived ones.
pub fn node_stats() -> Vec<&'static str> {
    let mut stats = vec!["n"];
    stats.extend(jobsight_warehouse::catalog::FEATURE_STATS);
    stats.extend(DERIVED_NODE_STATS);
    stats
}

/// Statistics that do not change when a series is scaled (ratios, shapes, counts, times).
pub const SCALE_FREE: [&str; 14] = [
    "n",
    "cv",
    "skewness",
    "kurtosis",
    "interval_s",
    "coverage",
    "catastrophe",
    "idle_share",
    "node_cv",
    "imbalance",
    "nodes",
    "rise_s",
    "cliff_after_s",
    "n_nonfinite",
];

pub const LIMIT_LEVELS: [&str; 4] = ["peak", "normal", "caution", "alert"];

#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("cannot read rule directory {path}: {source}")]
    ReadDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read rule file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{file} line {line}: {message}")]
    Invalid {
        file: String,
        line: usize,
        message: String,
    },
}

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

// Shared with the stages that report findings (notify): a leaf type below the stages.
pub use jobsight_base::severity::Severity;

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

// ---- The file as written ----

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileOptions {
    #[serde(default)]
    rule: Vec<Spanned<RuleOptions>>,
    #[serde(default)]
    class: Vec<Spanned<ClassOptions>>,
    #[serde(default)]
    metric: Vec<Spanned<MetricOptions>>,
    #[serde(default)]
    characteristic: Vec<Spanned<CharacteristicOptions>>,
    #[serde(default)]
    limits: BTreeMap<String, LimitOptions>,
    #[serde(default)]
    cluster: BTreeMap<String, ScopeOptions>,
    #[serde(default)]
    partition: BTreeMap<String, ScopeOptions>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleOptions {
    id: String,
    title: String,
    group: Group,
    severity: Severity,
    #[serde(default)]
    per: Per,
    min_run_s: Option<u64>,
    #[serde(default)]
    partitions: Vec<String>,
    #[serde(default)]
    nodes: Sharing,
    #[serde(default)]
    requires: Vec<String>,
    needs_telemetry: Option<bool>,
    #[serde(default, rename = "let")]
    lets: BTreeMap<String, Spanned<String>>,
    when: Spanned<String>,
    what: Spanned<String>,
    #[serde(default)]
    why: Vec<String>,
    fix: Spanned<String>,
    #[serde(default)]
    tools: Vec<String>,
    window: Option<Spanned<String>>,
    anomaly: Option<String>,
    #[serde(default)]
    disabled: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassOptions {
    id: String,
    name: String,
    description: String,
    needs_telemetry: Option<bool>,
    when: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricOptions {
    name: String,
    description: String,
    sources: Vec<SourceOptions>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceOptions {
    metric: String,
    #[serde(default = "one")]
    scale: f64,
}

fn one() -> f64 {
    1.0
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CharacteristicOptions {
    name: String,
    title: String,
    /// Whose limits (`[limits.<name>]`) mark the value low / high.
    limits: String,
    value: Spanned<String>,
}

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
    fn overlaid(&self, over: &LimitOptions) -> LimitOptions {
        LimitOptions {
            peak: over.peak.or(self.peak),
            normal: over.normal.or(self.normal),
            caution: over.caution.or(self.caution),
            alert: over.alert.or(self.alert),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScopeOptions {
    #[serde(default)]
    limits: BTreeMap<String, LimitOptions>,
}

// ---- The checked book ----

/// Where a definition came from, for messages.
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    pub file: String,
    pub line: usize,
}

#[derive(Debug, Clone)]
pub struct Rule {
    pub id: String,
    pub title: String,
    pub group: Group,
    pub severity: Severity,
    pub per: Per,
    pub min_run_s: Option<u64>,
    pub partitions: Vec<String>,
    pub nodes: Sharing,
    /// Declared required metrics: without any of them the rule does not apply.
    pub requires: Vec<String>,
    /// Metrics the condition and its lets read (a missing one leaves them without a value, so
    /// the rule does not fire).
    pub reads: Vec<String>,
    /// Whether the job must be judgeable (by default: whether the rule reads telemetry).
    pub needs_telemetry: bool,
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

/// One input file.
#[derive(Debug, Clone)]
pub struct Source {
    /// How messages name it: `built-in:method.toml` or a path.
    pub label: String,
    pub name: String,
    pub text: String,
}

fn fnv1a(bytes: &[u8], mut hash: u64) -> u64 {
    for &b in bytes {
        hash ^= b as u64;
        hash = hash.wrapping_mul(0x100_0000_01b3);
    }
    hash
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The `*.toml` files of a site directory, by name.
pub fn site_sources(dir: &Path) -> Result<Vec<Source>, RulesError> {
    let entries = std::fs::read_dir(dir).map_err(|source| RulesError::ReadDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml") && p.is_file())
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).map_err(|source| RulesError::Read {
                path: path.clone(),
                source,
            })?;
            Ok(Source {
                label: path.display().to_string(),
                name: path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                text,
            })
        })
        .collect()
}

/// The built-in files, with those a site file of the same name replaces left out, then the site
/// files.
pub fn layered_sources(site: Option<&Path>) -> Result<Vec<Source>, RulesError> {
    let site = match site {
        Some(dir) => site_sources(dir)?,
        None => Vec::new(),
    };
    let mut sources: Vec<Source> = BUILT_IN
        .iter()
        .filter(|(name, _)| !site.iter().any(|s| s.name == *name))
        .map(|(name, text)| Source {
            label: format!("built-in:{name}"),
            name: name.to_string(),
            text: text.to_string(),
        })
        .collect();
    sources.extend(site);
    Ok(sources)
}

impl RuleBook {
    /// The built-in book with a site directory's files layered on top.
    pub fn load(site: Option<&Path>) -> Result<RuleBook, RulesError> {
        RuleBook::from_sources(&layered_sources(site)?)
    }

    /// The book of exactly these files (later definitions replace earlier ones with the same id).
    pub fn from_sources(sources: &[Source]) -> Result<RuleBook, RulesError> {
        let mut files = Vec::new();
        let mut hash = 0xcbf2_9ce4_8422_2325;
        let mut parsed = Vec::new();
        for source in sources {
            hash = fnv1a(source.name.as_bytes(), hash);
            hash = fnv1a(source.text.as_bytes(), hash);
            let options: FileOptions =
                toml::from_str(&source.text).map_err(|e| RulesError::Invalid {
                    file: source.label.clone(),
                    line: e.span().map_or(1, |s| line_of(&source.text, s.start)),
                    message: e.message().to_string(),
                })?;
            files.push(source.label.clone());
            parsed.push((source, options));
        }
        let mut book = RuleBook {
            files,
            version: format!("{hash:016x}"),
            ..RuleBook::default()
        };
        // Metrics and limits first: rules and classes are checked against them.
        for (_, options) in &parsed {
            for m in &options.metric {
                let m = m.get_ref();
                book.metrics.insert(
                    m.name.clone(),
                    Metric {
                        name: m.name.clone(),
                        description: m.description.clone(),
                        sources: m
                            .sources
                            .iter()
                            .map(|s| (s.metric.clone(), s.scale))
                            .collect(),
                    },
                );
            }
            for (metric, limits) in &options.limits {
                let entry = book.limits.entry(metric.clone()).or_default();
                *entry = entry.overlaid(limits);
            }
            for (name, scope) in &options.cluster {
                for (metric, limits) in &scope.limits {
                    let entry = book
                        .cluster_limits
                        .entry(name.clone())
                        .or_default()
                        .entry(metric.clone())
                        .or_default();
                    *entry = entry.overlaid(limits);
                }
            }
            for (name, scope) in &options.partition {
                for (metric, limits) in &scope.limits {
                    let entry = book
                        .partition_limits
                        .entry(name.clone())
                        .or_default()
                        .entry(metric.clone())
                        .or_default();
                    *entry = entry.overlaid(limits);
                }
            }
        }
        for (source, options) in &parsed {
            let fail = |offset: usize, message: String| RulesError::Invalid {
                file: source.label.clone(),
                line: line_of(&source.text, offset),
                message,
            };
            for m in &options.metric {
                let metric = m.get_ref();
                if !is_name(&metric.name) {
                    return Err(fail(
                        m.span().start,
                        format!(
                            "metric name `{}`: use letters, digits and `_` only",
                            metric.name
                        ),
                    ));
                }
                if metric.sources.is_empty()
                    || metric
                        .sources
                        .iter()
                        .any(|s| !s.scale.is_finite() || s.scale == 0.0)
                {
                    return Err(fail(
                        m.span().start,
                        format!(
                            "metric {}: needs at least one source, each with a finite non-zero scale",
                            metric.name
                        ),
                    ));
                }
            }
            for (key, _) in options.limits.iter().chain(
                options
                    .cluster
                    .values()
                    .chain(options.partition.values())
                    .flat_map(|s| s.limits.iter()),
            ) {
                if !is_name(key) {
                    return Err(fail(
                        0,
                        format!("limits `{key}`: use letters, digits and `_` only"),
                    ));
                }
            }
            for c in &options.characteristic {
                let at = c.span().start;
                let c = c.get_ref();
                if !book.has_limits(&c.limits) {
                    return Err(fail(
                        at,
                        format!("characteristic {}: no `[limits.{}]`", c.name, c.limits),
                    ));
                }
                let value = checked_expr(&c.value, &Scope::characteristic(&book)).map_err(
                    |(offset, m)| fail(offset, format!("characteristic {}: value: {m}", c.name)),
                )?;
                let characteristic = Characteristic {
                    name: c.name.clone(),
                    title: c.title.clone(),
                    limits: c.limits.clone(),
                    value,
                    value_text: c.value.get_ref().clone(),
                };
                replace_or_push(&mut book.characteristics, characteristic, |x| &x.name);
            }
        }
        for (source, options) in &parsed {
            let fail = |offset: usize, message: String| RulesError::Invalid {
                file: source.label.clone(),
                line: line_of(&source.text, offset),
                message,
            };
            for c in &options.class {
                let at = c.span().start;
                let c = c.get_ref();
                let origin = Origin {
                    file: source.label.clone(),
                    line: line_of(&source.text, at),
                };
                if !is_id(&c.id) {
                    return Err(fail(
                        at,
                        format!("class id `{}`: use a-z, 0-9 and `-`", c.id),
                    ));
                }
                if book
                    .classes
                    .iter()
                    .any(|k| k.id == c.id && k.origin.file == origin.file)
                {
                    return Err(fail(
                        at,
                        format!("class {} is defined twice in this file", c.id),
                    ));
                }
                let scope = Scope::class(&book);
                let when = checked_expr(&c.when, &scope)
                    .map_err(|(offset, m)| fail(offset, format!("class {}: when: {m}", c.id)))?;
                let reads = referenced_metrics(&when, &[]);
                let class = Class {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    description: c.description.clone(),
                    needs_telemetry: c
                        .needs_telemetry
                        .unwrap_or_else(|| reads_telemetry(&[&when])),
                    when_text: c.when.get_ref().clone(),
                    when,
                    reads,
                    origin,
                };
                replace_or_push(&mut book.classes, class, |x| &x.id);
            }
        }
        for (source, options) in &parsed {
            for r in &options.rule {
                let rule = check_rule(r, source, &book)?;
                if book
                    .rules
                    .iter()
                    .any(|k| k.id == rule.id && k.origin.file == rule.origin.file)
                {
                    return Err(RulesError::Invalid {
                        file: source.label.clone(),
                        line: rule.origin.line,
                        message: format!("rule {} is defined twice in this file", rule.id),
                    });
                }
                let disabled = r.get_ref().disabled;
                book.rules.retain(|k| k.id != rule.id);
                if !disabled {
                    book.rules.push(rule);
                }
            }
        }
        Ok(book)
    }

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

fn replace_or_push<T>(list: &mut Vec<T>, item: T, key: impl Fn(&T) -> &String) {
    match list.iter().position(|x| key(x) == key(&item)) {
        Some(i) => list[i] = item,
        None => list.push(item),
    }
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !s.as_bytes()[0].is_ascii_digit()
}

fn is_id(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// What names a condition may read where it stands.
struct Scope<'a> {
    book: &'a RuleBook,
    node: bool,
    classes: bool,
    levels: bool,
    lets: Vec<String>,
}

impl<'a> Scope<'a> {
    fn characteristic(book: &'a RuleBook) -> Scope<'a> {
        Scope {
            book,
            node: false,
            classes: false,
            levels: false,
            lets: Vec::new(),
        }
    }

    fn class(book: &'a RuleBook) -> Scope<'a> {
        Scope {
            book,
            node: false,
            classes: false,
            levels: true,
            lets: Vec::new(),
        }
    }

    /// Why `name` cannot be read here, or `None` when it can.
    fn reject(&self, name: &str) -> Option<String> {
        let parts: Vec<&str> = name.split('.').collect();
        let metric = |m: &str, stats: &[&str], stat: &str| -> Option<String> {
            if !self.book.metrics.contains_key(m) {
                return Some(format!(
                    "unknown variable `{name}`: `{m}` is no metric of the rule book (known: {})",
                    self.book
                        .metrics
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            (!stats.contains(&stat)).then(|| {
                format!(
                    "unknown variable `{name}`: `{stat}` is no statistic here (known: {})",
                    stats.join(", ")
                )
            })
        };
        let from_list = |list: &[&str], field: &str, what: &str| {
            (!list.contains(&field)).then(|| {
                format!(
                    "unknown variable `{name}`: no {what} field `{field}` (known: {})",
                    list.join(", ")
                )
            })
        };
        match parts.as_slice() {
            [let_name] => (!self.lets.iter().any(|l| l == let_name)).then(|| {
                format!(
                    "unknown variable `{name}` (not a `let` of this rule; other variables have a \
                     dotted name such as `job.cpus` or `cpu_user.mean`)"
                )
            }),
            ["job", field] => from_list(&JOB_FIELDS, field, "job"),
            ["summary", field] => from_list(&SUMMARY_FIELDS, field, "summary"),
            ["history", field] => from_list(&HISTORY_FIELDS, field, "history"),
            ["workflow", field] => from_list(&WORKFLOW_FIELDS, field, "workflow"),
            ["node", "name"] if self.node => None,
            ["node", m, stat] if self.node => metric(m, &node_stats(), stat),
            ["node", ..] => Some(format!(
                "unknown variable `{name}`: `node.` variables exist only in rules with per = \"node\""
            )),
            ["limit", key, level] => {
                if !self.book.has_limits(key) {
                    return Some(format!("unknown variable `{name}`: no `[limits.{key}]`"));
                }
                from_list(&LIMIT_LEVELS, level, "limit")
            }
            ["level", c] | ["value", c] => {
                if !self.levels {
                    return Some(format!(
                        "unknown variable `{name}`: a characteristic cannot read the thresholds block"
                    ));
                }
                (!self.book.characteristics.iter().any(|k| k.name == *c))
                    .then(|| format!("unknown variable `{name}`: no characteristic `{c}`"))
            }
            ["class", id] => {
                if !self.classes {
                    return Some(format!(
                        "unknown variable `{name}`: only rules can read classes"
                    ));
                }
                (!self.book.classes.iter().any(|k| k.id == *id))
                    .then(|| format!("unknown variable `{name}`: no class `{id}`"))
            }
            [m, stat] => metric(m, &JOB_STATS, stat),
            _ => Some(format!("unknown variable `{name}`")),
        }
    }
}

/// Parses `text` (a spanned TOML string) and checks every variable; errors carry the byte offset
/// in the file.
fn checked_expr(text: &Spanned<String>, scope: &Scope) -> Result<Expr, (usize, String)> {
    let start = text.span().start;
    let expr = lang::parse(text.get_ref()).map_err(|e| (start, e.to_string()))?;
    for name in expr.variables() {
        if let Some(message) = scope.reject(name) {
            return Err((start, message));
        }
    }
    Ok(expr)
}

fn checked_template(text: &Spanned<String>, scope: &Scope) -> Result<Template, (usize, String)> {
    let start = text.span().start;
    let template = Template::parse(text.get_ref()).map_err(|e| (start, e.to_string()))?;
    for name in template.variables() {
        if let Some(message) = scope.reject(name) {
            return Err((start, message));
        }
    }
    Ok(template)
}

/// Metrics an expression reads (as `<metric>.<stat>` or `node.<metric>.<stat>`), plus `extra`.
fn referenced_metrics(expr: &Expr, extra: &[String]) -> Vec<String> {
    let mut out: BTreeSet<String> = extra.iter().cloned().collect();
    for name in expr.variables() {
        let parts: Vec<&str> = name.split('.').collect();
        match parts.as_slice() {
            ["node", m, _] => {
                out.insert(m.to_string());
            }
            [first, _]
                if ![
                    "job", "summary", "history", "workflow", "level", "value", "class",
                ]
                .contains(first) =>
            {
                out.insert(first.to_string());
            }
            _ => {}
        }
    }
    out.into_iter().collect()
}

/// Whether the expressions read anything measured: a metric, a node, the thresholds block, or a
/// `job_summary` figure other than the coverage verdict and the run time.
fn reads_telemetry(exprs: &[&Expr]) -> bool {
    exprs.iter().flat_map(|e| e.variables()).any(|name| {
        let parts: Vec<&str> = name.split('.').collect();
        match parts.as_slice() {
            // The history's medians come from Slurm's records; its named difference, when there
            // is telemetry, is text that says so when there is none.
            // A workflow's figures come from Slurm's records too (the run time standing in for
            // the CPU time without telemetry).
            ["job", _] | ["history", _] | ["workflow", _] | ["limit", ..] | ["class", _] | [_] => {
                false
            }
            ["summary", field] => {
                !["judgeable", "not_judgeable_reason", "elapsed_s", "time_eff"].contains(field)
            }
            _ => true,
        }
    })
}

fn check_rule(
    spanned: &Spanned<RuleOptions>,
    source: &Source,
    book: &RuleBook,
) -> Result<Rule, RulesError> {
    let r = spanned.get_ref();
    let at = spanned.span().start;
    let fail = |offset: usize, message: String| RulesError::Invalid {
        file: source.label.clone(),
        line: line_of(&source.text, offset),
        message: format!("rule {}: {message}", r.id),
    };
    if !is_id(&r.id) {
        return Err(fail(at, "id: use a-z, 0-9 and `-`".into()));
    }
    for m in &r.requires {
        if !book.metrics.contains_key(m) {
            return Err(fail(at, format!("requires unknown metric `{m}`")));
        }
    }
    let mut scope = Scope {
        book,
        node: r.per == Per::Node,
        classes: true,
        levels: true,
        lets: Vec::new(),
    };
    // Lets in dependency order: each may read the others, but not in a cycle.
    let mut pending: Vec<(&String, &Spanned<String>, Expr)> = Vec::new();
    for (name, text) in &r.lets {
        if !is_name(name) {
            return Err(fail(text.span().start, format!("let `{name}`: not a name")));
        }
        let expr = lang::parse(text.get_ref())
            .map_err(|e| fail(text.span().start, format!("let {name}: {e}")))?;
        pending.push((name, text, expr));
    }
    let let_names: Vec<String> = r.lets.keys().cloned().collect();
    let mut lets: Vec<(String, Expr)> = Vec::new();
    while !pending.is_empty() {
        let ready = pending.iter().position(|(_, _, expr)| {
            expr.variables().iter().all(|v| {
                v.contains('.')
                    || !let_names.iter().any(|l| l == v)
                    || lets.iter().any(|(l, _)| l == v)
            })
        });
        let Some(i) = ready else {
            let names: Vec<&str> = pending.iter().map(|p| p.0.as_str()).collect();
            return Err(fail(
                pending[0].1.span().start,
                format!("lets read each other in a cycle: {}", names.join(", ")),
            ));
        };
        let (name, text, expr) = pending.remove(i);
        for v in expr.variables() {
            if let Some(message) = scope.reject(v) {
                return Err(fail(text.span().start, format!("let {name}: {message}")));
            }
        }
        scope.lets.push(name.clone());
        lets.push((name.clone(), expr));
    }
    let when =
        checked_expr(&r.when, &scope).map_err(|(offset, m)| fail(offset, format!("when: {m}")))?;
    let what = checked_template(&r.what, &scope).map_err(|(o, m)| fail(o, format!("what: {m}")))?;
    let fix = checked_template(&r.fix, &scope).map_err(|(o, m)| fail(o, format!("fix: {m}")))?;
    let window = match &r.window {
        None => None,
        Some(text) => {
            if r.per != Per::Node {
                return Err(fail(
                    text.span().start,
                    "window: only rules with per = \"node\" have one".into(),
                ));
            }
            let (kind, metric) = text.get_ref().split_once(':').ok_or_else(|| {
                fail(
                    text.span().start,
                    "window: write `rise:<metric>` or `cliff:<metric>`".into(),
                )
            })?;
            if !book.metrics.contains_key(metric) {
                return Err(fail(
                    text.span().start,
                    format!("window: unknown metric `{metric}`"),
                ));
            }
            Some(match kind {
                "rise" => WindowOf::Rise(metric.to_string()),
                "cliff" => WindowOf::Cliff(metric.to_string()),
                other => {
                    return Err(fail(
                        text.span().start,
                        format!("window: `{other}` is neither `rise` nor `cliff`"),
                    ));
                }
            })
        }
    };
    let mut evidence: Vec<String> = Vec::new();
    for name in lets
        .iter()
        .flat_map(|(_, e)| e.variables())
        .chain(when.variables())
        .map(str::to_string)
        .chain(lets.iter().map(|(n, _)| n.clone()))
    {
        if !evidence.contains(&name) {
            evidence.push(name);
        }
    }
    let mut reads = Vec::new();
    for (_, e) in &lets {
        reads.extend(referenced_metrics(e, &[]));
    }
    let reads = referenced_metrics(&when, &reads);
    let exprs: Vec<&Expr> = lets.iter().map(|(_, e)| e).chain([&when]).collect();
    let needs_telemetry = r.needs_telemetry.unwrap_or_else(|| reads_telemetry(&exprs));
    Ok(Rule {
        id: r.id.clone(),
        title: r.title.clone(),
        group: r.group,
        severity: r.severity,
        per: r.per,
        min_run_s: r.min_run_s,
        partitions: r.partitions.clone(),
        nodes: r.nodes,
        requires: r.requires.clone(),
        reads,
        needs_telemetry,
        lets,
        when_text: r.when.get_ref().clone(),
        when,
        what,
        what_text: r.what.get_ref().clone(),
        why: r.why.clone(),
        fix,
        fix_text: r.fix.get_ref().clone(),
        tools: r.tools.clone(),
        window,
        anomaly: r.anomaly.clone(),
        evidence,
        origin: Origin {
            file: source.label.clone(),
            line: line_of(&source.text, at),
        },
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn source(name: &str, text: &str) -> Source {
        Source {
            label: format!("site/{name}"),
            name: name.into(),
            text: text.into(),
        }
    }

    fn with_built_in(extra: &str) -> Result<RuleBook, RulesError> {
        let mut sources = layered_sources(None).unwrap();
        sources.push(source("extra.toml", extra));
        RuleBook::from_sources(&sources)
    }

    const RULE: &str = r#"
[[rule]]
id = "x"
title = "t"
group = "hung"
severity = "info"
when = "cpu_user.mean < 0.1"
what = "w"
fix = "f"
"#;

    #[test]
    fn the_built_in_book_loads() {
        let book = RuleBook::load(None).unwrap();
        assert!(book.rules.len() >= 25, "{} rules", book.rules.len());
        assert!(book.classes.len() >= 20, "{} classes", book.classes.len());
        for n in 1..=9 {
            assert!(
                book.rules
                    .iter()
                    .any(|r| r.group.method_number() == Some(n)),
                "no rule in group {n}"
            );
        }
    }

    #[test]
    fn an_unknown_variable_names_file_line_and_name() {
        let text = RULE.replace("cpu_user.mean", "summry.cpu_eff");
        let e = with_built_in(&text).unwrap_err().to_string();
        assert!(
            e.starts_with("site/extra.toml line 7: rule x: when:"),
            "{e}"
        );
        assert!(e.contains("`summry.cpu_eff`"), "{e}");
        let e = with_built_in(&RULE.replace("cpu_user.mean", "cpu_usr.mean"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`cpu_usr` is no metric"), "{e}");
        let e = with_built_in(&RULE.replace("cpu_user.mean", "cpu_user.average"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`average` is no statistic"), "{e}");
        let e = with_built_in(&RULE.replace("cpu_user.mean", "node.cpu_user.mean"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("per = \"node\""), "{e}");
        let e = with_built_in(&RULE.replace("what = \"w\"", "what = \"{jobb.cpus}\""))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 8: rule x: what:") && e.contains("jobb.cpus"),
            "{e}"
        );
        let e = with_built_in(&RULE.replace("< 0.1", "<< 0.1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 7") && e.contains("column"), "{e}");
        let e = with_built_in(&RULE.replace("group = \"hung\"", "group = \"hanging\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 5") && e.contains("hanging"), "{e}");
        let e = with_built_in(&(RULE.to_string() + "colour = 1\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("colour"), "{e}");
    }

    #[test]
    fn lets_resolve_in_order_and_cycles_are_refused() {
        let ok = RULE.replace(
            "when = \"cpu_user.mean < 0.1\"",
            "when = \"b > 1\"\nlet.b = \"a * 2\"\nlet.a = \"job.cpus\"",
        );
        let book = with_built_in(&ok).unwrap();
        let rule = book.rules.iter().find(|r| r.id == "x").unwrap();
        assert_eq!(
            rule.lets.iter().map(|l| l.0.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(rule.evidence, ["job.cpus", "a", "b"]);
        let cycle = RULE.replace(
            "when = \"cpu_user.mean < 0.1\"",
            "when = \"b > 1\"\nlet.b = \"a * 2\"\nlet.a = \"b\"",
        );
        assert!(
            with_built_in(&cycle)
                .unwrap_err()
                .to_string()
                .contains("cycle")
        );
    }

    #[test]
    fn site_files_replace_by_name_and_by_id() {
        let built_in = RuleBook::load(None).unwrap();
        let hung = built_in.rules.iter().find(|r| r.id == "hung-job").unwrap();
        assert_eq!(hung.origin.file, "built-in:method.toml");
        // Same id: replaced. `disabled`: removed.
        let over = r#"
[[rule]]
id = "hung-job"
title = "Site hung rule"
group = "hung"
severity = "warning"
when = "cpu_user.max < 0.5"
what = "w"
fix = "f"

[[rule]]
id = "wrong-partition-gpu"
title = "off"
group = "wrong_partition"
severity = "info"
when = "false"
what = "w"
fix = "f"
disabled = true
"#;
        let book = with_built_in(over).unwrap();
        let hung = book.rules.iter().find(|r| r.id == "hung-job").unwrap();
        assert_eq!(hung.title, "Site hung rule");
        assert!(!book.rules.iter().any(|r| r.id == "wrong-partition-gpu"));
        assert_eq!(book.rules.len(), built_in.rules.len() - 1);
        assert_ne!(book.version, built_in.version);
        // Same file name: the built-in file is left out.
        let mut sources = layered_sources(None).unwrap();
        sources.retain(|s| s.name != "production.toml");
        let without = RuleBook::from_sources(&sources).unwrap();
        assert!(without.rules.len() < built_in.rules.len());
    }

    #[test]
    fn limits_layer_partition_over_cluster_over_default() {
        let book = with_built_in(
            "[cluster.big.limits.cpu_load]\nalert = 0.2\n[partition.debug.limits.cpu_load]\nalert = 0.3\n",
        )
        .unwrap();
        let default = book.limit("cpu_load", "alert", "other", "other").unwrap();
        assert_eq!(book.limit("cpu_load", "alert", "big", "other"), Some(0.2));
        assert_eq!(book.limit("cpu_load", "alert", "big", "debug"), Some(0.3));
        assert_ne!(default, 0.2);
        // Keys not overridden stay.
        assert_eq!(
            book.limit("cpu_load", "peak", "big", "debug"),
            book.limit("cpu_load", "peak", "x", "y")
        );
        let e = with_built_in("[limits.\"no pe\"]\nalert = 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("limits `no pe`"), "{e}");
    }
}
