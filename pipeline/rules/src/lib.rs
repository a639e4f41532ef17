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
pub mod lang;
pub mod options;
mod prepare;
pub mod reload;
mod running;

pub use options::Options;
pub use prepare::{Fold, JOB_STAT_FOLDS, prepare};

pub use running::{evaluate_running, running_dwells};

use std::collections::BTreeMap;

use book::{FROM_ACCOUNTING, FROM_NODES, Reads, read_kind};
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

/// The order of a series' statistics: each is at most the next.
const STAT_ORDER: [&str; 7] = ["min", "p05", "p25", "p50", "p75", "p95", "max"];

/// What a finding's evidence (name, number) and text say that cannot all be true, whatever the
/// rule: a series' statistics out of order (`p05 ≤ … ≤ p95`, mean within `[min, max]`), a node
/// range upside down, a figure quoted as an average beside its 95th percentile (`X` and `X_p95`)
/// with the percentile below it, a share or efficiency outside `[0, 1]`, a negative or non-finite
/// size, count or time, and a text with an unfilled `{placeholder}`, `NaN` or `inf`. Empty when
/// the finding is consistent; tests run it on every rule's fixture and on the demo's findings.
pub fn contradictions(evidence: &[(&str, f64)], text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let get = |name: &str| evidence.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    for &(name, value) in evidence {
        let last = name.rsplit('.').next().unwrap_or(name);
        if !value.is_finite() {
            found.push(format!(
                "{name} = {value} is not a number a person can read"
            ));
            continue;
        }
        let (base, stat) = name.rsplit_once('.').unwrap_or(("", name));
        if let Some(rank) = STAT_ORDER.iter().position(|s| *s == stat) {
            for higher in &STAT_ORDER[rank + 1..] {
                if let Some(h) = get(&format!("{base}.{higher}")).filter(|h| *h < value) {
                    found.push(format!("{name} = {value} is above {base}.{higher} = {h}"));
                }
            }
        }
        if stat == "mean" {
            let (min, max) = (get(&format!("{base}.min")), get(&format!("{base}.max")));
            if min.is_some_and(|m| value < m) || max.is_some_and(|m| value > m) {
                found.push(format!(
                    "{name} = {value} is outside {base}.min..{base}.max"
                ));
            }
        }
        let node_max = get(&format!("{base}.node_mean_max"));
        if let Some(max) = node_max.filter(|m| stat == "node_mean_min" && *m < value) {
            found.push(format!(
                "{name} = {value} is above {base}.node_mean_max = {max}"
            ));
        }
        if let Some(p95) = get(&format!("{name}_p95")).filter(|p| *p < value) {
            found.push(format!(
                "{name} = {value} is quoted as an average above its 95th percentile {name}_p95 = {p95}"
            ));
        }
        let is_share = last.ends_with("_eff")
            || last.ends_with("_share")
            || last.starts_with("busy")
            || last == "node_busy"
            || last == "imbalance"
            || ["cpu_user", "cpu_system", "cpu_iowait"]
                .contains(&base.rsplit('.').next().unwrap_or(""))
                && STAT_ORDER.contains(&stat);
        if is_share && !(0.0..=1.0).contains(&value) && !name.starts_with("limit.") {
            found.push(format!("{name} = {value} is a share, outside 0..1"));
        }
        let may_be_negative =
            name.contains("slope") || name.contains("rise") || name.starts_with("limit.");
        if value < 0.0 && !may_be_negative {
            found.push(format!("{name} = {value} is negative"));
        }
    }
    let words = text.split(|c: char| c.is_whitespace() || "(),;:".contains(c));
    for word in words {
        if ["NaN", "inf", "-inf"].contains(&word) {
            found.push(format!("the text quotes {word}: {text}"));
        }
    }
    // An unfilled placeholder: `{name}` or `{name:.N}` left in the text.
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        let inside = &after[..close];
        let name = inside.split(':').next().unwrap_or("");
        if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            found.push(format!("the text has an unfilled {{{inside}}}: {text}"));
        }
        rest = &after[close + 1..];
    }
    found
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

/// The evaluation context of one job (and, in node rules, one node).
struct Context<'a> {
    book: &'a RuleBook,
    data: &'a JobData,
    /// Canonical metric -> (warehouse metric, scale) for this job.
    aliases: &'a BTreeMap<String, (String, f64)>,
    cluster: String,
    partition: String,
    classes: &'a [(String, String)],
    levels: &'a BTreeMap<String, (Value, Value)>,
    lets: BTreeMap<String, Value>,
    node: Option<&'a str>,
    /// The rule being evaluated judges the job on Slurm accounting's figures alone: every other
    /// telemetry variable reads as missing.
    accounting_only: bool,
}

fn scaled(stat: &str, v: f64, scale: f64) -> f64 {
    if book::SCALE_FREE.contains(&stat) {
        v
    } else {
        v * scale
    }
}

/// The source `job_summary` names for a job's figures of kind `reads` (`cpu_eff_source`,
/// `mem_source`), if it names one.
fn figure_source(data: &JobData, reads: Reads) -> Option<&str> {
    let field = match reads {
        Reads::CpuFigure => "cpu_eff_source",
        Reads::MemoryFigure => "mem_source",
        Reads::Records | Reads::Series => return None,
    };
    match data.summary.get(field) {
        Some(Value::Str(source)) => Some(source.as_str()),
        _ => None,
    }
}

impl Context<'_> {
    /// Whether `name` keeps its value when the job is judged on accounting alone: Slurm's
    /// records, and the figures that came from accounting.
    fn readable_on_accounting(&self, name: &str) -> bool {
        match read_kind(name) {
            Reads::Records => true,
            kind @ (Reads::CpuFigure | Reads::MemoryFigure) => {
                figure_source(self.data, kind) == Some(FROM_ACCOUNTING)
            }
            Reads::Series => false,
        }
    }

    fn lookup(&self, name: &str) -> Value {
        if self.accounting_only && !self.readable_on_accounting(name) {
            return Value::Missing;
        }
        let parts: Vec<&str> = name.split('.').collect();
        let metric = |canonical: &str| self.aliases.get(canonical);
        match parts.as_slice() {
            [let_name] => self.lets.get(*let_name).cloned().unwrap_or(Value::Missing),
            ["job", field] => self.data.job.get(*field).cloned().unwrap_or(Value::Missing),
            ["summary", field] => self
                .data
                .summary
                .get(*field)
                .cloned()
                .unwrap_or(Value::Missing),
            ["history", field] => self
                .data
                .history
                .get(*field)
                .cloned()
                .unwrap_or(Value::Missing),
            ["workflow", field] => self
                .data
                .workflow
                .get(*field)
                .cloned()
                .unwrap_or(Value::Missing),
            ["node", "name"] => self
                .node
                .map_or(Value::Missing, |n| Value::Str(n.to_string())),
            ["node", m, stat] => {
                let (Some(node), Some((raw, scale))) = (self.node, metric(m)) else {
                    return Value::Missing;
                };
                Value::from_opt(
                    self.data
                        .nodes
                        .get(node)
                        .and_then(|s| s.get(raw))
                        .and_then(|s| s.stats.get(*stat))
                        .map(|v| scaled(stat, *v, *scale)),
                )
            }
            ["limit", m, level] => {
                Value::from_opt(self.book.limit(m, level, &self.cluster, &self.partition))
            }
            ["level", c] => self.levels.get(*c).map_or(Value::Missing, |l| l.0.clone()),
            ["value", c] => self.levels.get(*c).map_or(Value::Missing, |l| l.1.clone()),
            ["class", id] => Value::Bool(self.classes.iter().any(|(k, _)| k == id)),
            [m, stat] => {
                let Some((raw, scale)) = metric(m) else {
                    return Value::Missing;
                };
                Value::from_opt(
                    self.data
                        .across
                        .get(raw)
                        .and_then(|s| s.get(*stat))
                        .map(|v| scaled(stat, *v, *scale)),
                )
            }
            _ => Value::Missing,
        }
    }

    fn eval(&self, expr: &lang::Expr) -> Value {
        expr.eval(&|name| self.lookup(name))
    }
}

fn text_of(data: &JobData, key: &str) -> String {
    match data.job.get(key) {
        Some(Value::Str(s)) => s.clone(),
        _ => String::new(),
    }
}

/// The thresholds block, classes and findings of one finished job. `data` must have been
/// [`prepare`]d. The running rules (group `running`) are left out: [`evaluate_running`] judges
/// them on live jobs.
pub fn evaluate(book: &RuleBook, data: &JobData, settings: &Settings) -> Verdict {
    judge(book, data, settings, &|rule| rule.group != Group::Running)
}

/// The thresholds block, classes and findings of the rules `judged` picks.
pub(crate) fn judge(
    book: &RuleBook,
    data: &JobData,
    settings: &Settings,
    judged: &dyn Fn(&book::Rule) -> bool,
) -> Verdict {
    let judgeable = matches!(data.summary.get("judgeable"), Some(Value::Bool(true)));
    let aliases = aliases_of(book, data);
    let (cluster, partition) = (text_of(data, "cluster"), text_of(data, "partition"));
    let context = |levels, classes| Context {
        book,
        data,
        aliases: &aliases,
        cluster: cluster.clone(),
        partition: partition.clone(),
        classes,
        levels,
        lets: BTreeMap::new(),
        node: None,
        accounting_only: false,
    };
    // Each part reads the ones before it: classes the thresholds block, rules both.
    let no_levels = BTreeMap::new();
    let (thresholds, levels) = thresholds_block(&context(&no_levels, &[]), judgeable);
    let classes = classes_of(&context(&levels, &[]), judgeable);
    let mut ctx = context(&levels, &classes);
    let (findings, not_applicable) = rule_findings(&mut ctx, settings, judgeable, judged);
    Verdict {
        job_id: data.job_id.clone(),
        restart_count: run_number(data.job.get("restart_count")),
        judgeable,
        classes,
        thresholds,
        findings,
        not_applicable,
    }
}

/// Which warehouse metric (and scale) stands for each canonical one in this job: the first of
/// the metric's sources the job has.
fn aliases_of(book: &RuleBook, data: &JobData) -> BTreeMap<String, (String, f64)> {
    let mut aliases = BTreeMap::new();
    for (name, metric) in &book.metrics {
        let present = |raw: &str| {
            data.across.contains_key(raw) || data.nodes.values().any(|m| m.contains_key(raw))
        };
        if let Some((raw, scale)) = metric.sources.iter().find(|(raw, _)| present(raw)) {
            aliases.insert(name.clone(), (raw.clone(), *scale));
        }
    }
    aliases
}

/// The thresholds block, and each characteristic's (level, value) for the classes and rules
/// (`level.<name>`, `value.<name>`).
fn thresholds_block(
    ctx: &Context,
    judgeable: bool,
) -> (Vec<Threshold>, BTreeMap<String, (Value, Value)>) {
    let (book, cluster, partition) = (ctx.book, &ctx.cluster, &ctx.partition);
    let mut thresholds = Vec::new();
    let mut levels = BTreeMap::new();
    for c in &book.characteristics {
        let value = match ctx.eval(&c.value) {
            Value::Num(v) => Some(v),
            _ => None,
        };
        let low_below = book.limit(&c.limits, "caution", cluster, partition);
        let high_from = book.limit(&c.limits, "normal", cluster, partition);
        let level = match (judgeable, value) {
            (false, _) => "not judged",
            (true, None) => "no data",
            (true, Some(v)) if low_below.is_some_and(|l| v < l) => "low",
            (true, Some(v)) if high_from.is_some_and(|h| v >= h) => "high",
            (true, Some(_)) => "average",
        };
        let as_value = match level {
            "low" | "average" | "high" => Value::Str(level.to_string()),
            _ => Value::Missing,
        };
        levels.insert(c.name.clone(), (as_value, Value::from_opt(value)));
        thresholds.push(Threshold {
            characteristic: c.name.clone(),
            title: c.title.clone(),
            limits: c.limits.clone(),
            value,
            level,
            low_below,
            high_from,
        });
    }
    (thresholds, levels)
}

/// The classes the job belongs to, as (class id, class name).
fn classes_of(ctx: &Context, judgeable: bool) -> Vec<(String, String)> {
    let mut classes = Vec::new();
    for class in &ctx.book.classes {
        if class.needs_telemetry && !judgeable {
            continue;
        }
        if ctx.eval(&class.when) == Value::Bool(true) {
            classes.push((class.id.clone(), class.name.clone()));
        }
    }
    classes
}

/// The findings of the rules that fire, most severe first, and how many rules did not apply.
fn rule_findings(
    ctx: &mut Context,
    settings: &Settings,
    judgeable: bool,
    judged: &dyn Fn(&book::Rule) -> bool,
) -> (Vec<Finding>, usize) {
    let (book, data) = (ctx.book, ctx.data);
    let mut findings = Vec::new();
    let mut not_applicable = 0;
    for rule in book.rules.iter().filter(|r| judged(r)) {
        if !applies(rule, ctx, settings, judgeable) {
            not_applicable += 1;
            continue;
        }
        // It applies to a job its telemetry cannot judge only on accounting's figures.
        ctx.accounting_only = rule.needs_telemetry && !judgeable;
        let nodes: Vec<Option<&str>> = match rule.per {
            Per::Job => vec![None],
            Per::Node => data.nodes.keys().map(|n| Some(n.as_str())).collect(),
        };
        for node in nodes {
            ctx.node = node;
            ctx.lets.clear();
            for (name, expr) in &rule.lets {
                let v = ctx.eval(expr);
                ctx.lets.insert(name.clone(), v);
            }
            if ctx.eval(&rule.when) != Value::Bool(true) {
                continue;
            }
            findings.push(finding(rule, ctx));
        }
    }
    ctx.accounting_only = false;
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.group.cmp(&b.group))
            .then(a.rule.cmp(&b.rule))
            .then(a.node.cmp(&b.node))
    });
    (findings, not_applicable)
}

/// Whether `rule` judges a job its telemetry cannot, on the CPU or memory figures Slurm
/// accounting gave it (see [`book::Rule::on_accounting`]).
fn on_accounting_alone(rule: &book::Rule, data: &JobData) -> bool {
    let from_accounting = |kind| figure_source(data, kind) == Some(FROM_ACCOUNTING);
    // A run that lost a node lost that node's step statistics with it: accounting's figures
    // count only the nodes that reported, and would blame the job for the node.
    let lost_a_node = data.job.get("state") == Some(&Value::Str("NODE_FAIL".into()));
    !lost_a_node
        && rule.on_accounting
        && ((rule.telemetry.cpu_figures && from_accounting(Reads::CpuFigure))
            || (rule.telemetry.memory_figures && from_accounting(Reads::MemoryFigure)))
}

/// Whether the finding of `rule` rests on node-level telemetry of a node the job shared with
/// other jobs: a metric taken from a node-scope series, something else measured (the thresholds
/// block, a measured `job_summary` field), or a CPU or memory figure taken from the nodes' series
/// (never when it was judged on accounting alone, which reads none of them). A metric the job has
/// its own series of (`job_*`, a cgroup exporter's or DCGM's job-mapped GPUs) is the job's.
fn rests_on_shared_nodes(rule: &book::Rule, ctx: &Context) -> bool {
    let from_nodes = |kind| figure_source(ctx.data, kind) == Some(FROM_NODES);
    let node_scope = |metric: &String| {
        ctx.aliases
            .get(metric)
            .is_none_or(|(raw, _)| !raw.starts_with(JOB_SCOPE_PREFIX))
    };
    let series_of_nodes = rule.telemetry.series
        && (rule.telemetry.beyond_metrics || rule.reads.iter().any(node_scope));
    ctx.data.summary.get("shared") == Some(&Value::Bool(true))
        && !ctx.accounting_only
        && (series_of_nodes
            || (rule.telemetry.cpu_figures && from_nodes(Reads::CpuFigure))
            || (rule.telemetry.memory_figures && from_nodes(Reads::MemoryFigure)))
}

/// The warehouse names of the job's own series (its cgroups', its GPUs'), as ingest writes them.
const JOB_SCOPE_PREFIX: &str = "job_";

/// Whether `rule` applies to the job at all (see the crate's doc): telemetry where it needs it
/// (or accounting's figures in its place), a long enough run, its partitions, its node sharing,
/// and every metric it requires.
fn applies(rule: &book::Rule, ctx: &Context, settings: &Settings, judgeable: bool) -> bool {
    let elapsed = match ctx.data.job.get("elapsed_s") {
        Some(Value::Num(v)) => Some(*v),
        _ => None,
    };
    let exclusive = ctx.data.job.get("exclusive");
    let min_run = rule.min_run_s.unwrap_or(settings.min_run_s) as f64;
    (!rule.needs_telemetry || judgeable || on_accounting_alone(rule, ctx.data))
        && elapsed.is_some_and(|e| e >= min_run)
        && (rule.partitions.is_empty() || rule.partitions.contains(&ctx.partition))
        && match rule.nodes {
            Sharing::Any => true,
            Sharing::Exclusive => exclusive == Some(&Value::Bool(true)),
            Sharing::Shared => exclusive == Some(&Value::Bool(false)),
        }
        && rule.requires.iter().all(|m| ctx.aliases.contains_key(m))
}

/// The finding of `rule`, which fired on the job (or on the node `ctx.node`), with its evidence
/// and its texts rendered with the job's own numbers.
fn finding(rule: &book::Rule, ctx: &Context) -> Finding {
    let window = ctx.node.and_then(|node| window_of(rule, node, ctx));
    let lookup = |name: &str| ctx.lookup(name);
    let mut evidence: Vec<(String, Value)> = rule
        .evidence
        .iter()
        .map(|name| (name.clone(), ctx.lookup(name)))
        .collect();
    if rests_on_shared_nodes(rule, ctx) && !evidence.iter().any(|(n, _)| n == "summary.shared") {
        evidence.push(("summary.shared".to_string(), Value::Bool(true)));
    }
    Finding {
        job_id: ctx.data.job_id.clone(),
        rule: rule.id.clone(),
        title: rule.title.clone(),
        group: rule.group,
        severity: rule.severity,
        node: ctx.node.map(str::to_string),
        window,
        evidence,
        message: rule.what.render(&lookup),
        fix: rule.fix.render(&lookup),
        why: rule.why.clone(),
        tools: rule.tools.clone(),
    }
}

/// The time window a node rule's finding on `node` concerns: where its metric rose most, or
/// from the metric's cliff to the job's end.
fn window_of(rule: &book::Rule, node: &str, ctx: &Context) -> Option<(i64, i64)> {
    let series = |m: &str| {
        ctx.aliases
            .get(m)
            .and_then(|(raw, _)| ctx.data.nodes.get(node)?.get(raw))
    };
    match rule.window.as_ref()? {
        WindowOf::Rise(m) => {
            let s = series(m)?;
            Some((s.rise_from?, s.rise_to?))
        }
        WindowOf::Cliff(m) => {
            let s = series(m)?;
            let end = match ctx.data.job.get("end") {
                Some(Value::Num(e)) => (*e * 1e6) as i64,
                _ => return None,
            };
            Some((s.cliff_at?, end))
        }
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

    /// The generic check finds what the review found (a percentile below its mean, an
    /// efficiency of 4.16) and the rest of its list, and passes a consistent finding.
    #[test]
    fn contradictions_are_found_and_consistent_findings_pass() {
        let ok = [
            ("busy", 0.006),
            ("busy_p95", 0.01),
            ("cpu_user.min", 0.0),
            ("cpu_user.mean", 0.2),
            ("cpu_user.p95", 0.4),
            ("cpu_user.max", 0.5),
            ("rise_gb", -1.0),
        ];
        assert_eq!(
            contradictions(&ok, "busy 0.006 on average"),
            Vec::<String>::new()
        );
        type Case<'a> = (&'a [(&'a str, f64)], &'a str, &'a str);
        let cases: [Case; 7] = [
            (
                &[("busy", 0.006), ("busy_p95", 0.001)],
                "",
                "above its 95th percentile",
            ),
            (&[("summary.mem_eff", 4.16)], "", "a share, outside 0..1"),
            (&[("x.p05", 3.0), ("x.p95", 2.0)], "", "is above x.p95"),
            (
                &[("x.mean", 3.0), ("x.max", 2.0)],
                "",
                "outside x.min..x.max",
            ),
            (&[("job.elapsed_s", -5.0)], "", "negative"),
            (&[("y", f64::NAN)], "", "not a number"),
            (&[], "busy {busy:.3} of the time", "unfilled {busy:.3}"),
        ];
        for (evidence, text, expected) in cases {
            let found = contradictions(evidence, text);
            assert!(
                found.iter().any(|f| f.contains(expected)),
                "{expected}: {found:?}"
            );
        }
        assert!(contradictions(&[], "job named {weird name}").is_empty());
    }
}
