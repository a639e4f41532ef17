//! Judging one job: the context its conditions are evaluated in (what each variable name reads
//! of the job's figures, the rule book's limits, the thresholds block and the classes), and the
//! thresholds block, classes and findings that come of it. Which rules apply to a job, and when a
//! finding says it rests on a shared node, are as the crate's doc says.

use std::collections::BTreeMap;

use super::{
    Finding, Group, JobData, Per, RuleBook, Settings, Sharing, Threshold, Verdict, WindowOf,
    run_number,
};
use crate::book::{self, FROM_ACCOUNTING, FROM_NODES, Reads, read_kind};
use crate::lang::{self, Value};

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
/// [`prepare`](fn@crate::prepare)d. The running rules (group `running`) are left out:
/// [`evaluate_running`](crate::evaluate_running) judges them on live jobs.
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
