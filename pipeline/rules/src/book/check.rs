//! Parsing and validation: the rule files become a [`RuleBook`] in one pass per kind of
//! definition, each checked against what the passes before it added (metrics and limits, then
//! characteristics, then classes, then rules), so that an error names the file, the line and the
//! unknown name, and the evaluation never meets one.

use std::collections::BTreeMap;
use std::path::Path;

use jobsight_base::stats::{FNV_OFFSET, fnv1a_from};
use toml::Spanned;

use super::definitions::{
    Characteristic, Class, Group, Metric, Origin, Per, Rule, RuleBook, WindowOf,
};
use super::error::RulesError;
use super::options::{FileOptions, RuleOptions};
use super::scope::{
    Scope, checked_expr, checked_template, reads_telemetry, referenced_metrics, telemetry_reads,
};
use super::sources::{Source, layered_sources};
use crate::lang::{self, Expr};

impl RuleBook {
    /// The built-in book with a site directory's files layered on top.
    pub fn load(site: Option<&Path>) -> Result<RuleBook, RulesError> {
        RuleBook::from_sources(&layered_sources(site)?)
    }

    /// The book of exactly these files (later definitions replace earlier ones with the same id).
    pub fn from_sources(sources: &[Source]) -> Result<RuleBook, RulesError> {
        let mut files = Vec::new();
        let mut hash = FNV_OFFSET;
        let mut parsed = Vec::new();
        for source in sources {
            hash = fnv1a_from(hash, source.name.as_bytes());
            hash = fnv1a_from(hash, source.text.as_bytes());
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
            add_metrics_and_limits(&mut book, options);
        }
        for (source, options) in &parsed {
            check_metrics_and_limits(source, options)?;
            add_characteristics(&mut book, source, options)?;
        }
        for (source, options) in &parsed {
            add_classes(&mut book, source, options)?;
        }
        for (source, options) in &parsed {
            add_rules(&mut book, source, options)?;
        }
        Ok(book)
    }
}

/// Adds a file's metrics (a later one replaces an earlier one of the same name) and limits (a
/// later file's replace an earlier one's key by key).
fn add_metrics_and_limits(book: &mut RuleBook, options: &FileOptions) {
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

/// A file's metric and limit names, and each metric's sources, checked.
fn check_metrics_and_limits(source: &Source, options: &FileOptions) -> Result<(), RulesError> {
    let fail = |offset: usize, message: String| invalid(source, offset, message);
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
    Ok(())
}

/// Adds a file's characteristics (the lines of the thresholds block), each checked against the
/// metrics and limits.
fn add_characteristics(
    book: &mut RuleBook,
    source: &Source,
    options: &FileOptions,
) -> Result<(), RulesError> {
    let fail = |offset: usize, message: String| invalid(source, offset, message);
    for c in &options.characteristic {
        let at = c.span().start;
        let c = c.get_ref();
        if !book.has_limits(&c.limits) {
            return Err(fail(
                at,
                format!("characteristic {}: no `[limits.{}]`", c.name, c.limits),
            ));
        }
        let value =
            checked_expr(&c.value, &Scope::characteristic(book)).map_err(|(offset, m)| {
                fail(offset, format!("characteristic {}: value: {m}", c.name))
            })?;
        let characteristic = Characteristic {
            name: c.name.clone(),
            title: c.title.clone(),
            limits: c.limits.clone(),
            value,
            value_text: c.value.get_ref().clone(),
        };
        replace_or_push(&mut book.characteristics, characteristic, |x| &x.name);
    }
    Ok(())
}

/// Adds a file's classes, each checked against the metrics and the thresholds block; a class
/// defined twice in one file is an error.
fn add_classes(
    book: &mut RuleBook,
    source: &Source,
    options: &FileOptions,
) -> Result<(), RulesError> {
    let fail = |offset: usize, message: String| invalid(source, offset, message);
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
        let scope = Scope::class(book);
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
    Ok(())
}

/// Adds a file's rules, each checked against everything before it (a `disabled` one removes the
/// rule of its id); a rule defined twice in one file is an error.
fn add_rules(
    book: &mut RuleBook,
    source: &Source,
    options: &FileOptions,
) -> Result<(), RulesError> {
    for r in &options.rule {
        let rule = check_rule(r, source, book)?;
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
    Ok(())
}

/// The error for an invalid definition of `source`, at the line of byte `offset`.
fn invalid(source: &Source, offset: usize, message: String) -> RulesError {
    RulesError::Invalid {
        file: source.label.clone(),
        line: line_of(&source.text, offset),
        message,
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
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
    // A dwell or a finished-job twin only means something to a rule the running DAG judges.
    if r.group != Group::Running && (r.dwell_s.is_some() || r.at_end.is_some()) {
        return Err(fail(
            at,
            "dwell_s and at_end belong to rules of group \"running\" only".into(),
        ));
    }
    if let Some(end_rule) = &r.at_end
        && !book.rules.iter().any(|x| &x.id == end_rule)
    {
        return Err(fail(
            at,
            format!("at_end: no rule `{end_rule}` before this one"),
        ));
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
    let lets = ordered_lets(&r.lets, &mut scope, &fail)?;
    let when =
        checked_expr(&r.when, &scope).map_err(|(offset, m)| fail(offset, format!("when: {m}")))?;
    let what = checked_template(&r.what, &scope).map_err(|(o, m)| fail(o, format!("what: {m}")))?;
    let fix = checked_template(&r.fix, &scope).map_err(|(o, m)| fail(o, format!("fix: {m}")))?;
    let window = checked_window(r, book, &fail)?;
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
    let telemetry = telemetry_reads(&exprs);
    let needs_telemetry = r.needs_telemetry.unwrap_or(telemetry.any());
    // A rule that asks for telemetry by name keeps to jobs it judges; a node rule reads nodes'
    // series, and a required metric is telemetry too.
    let on_accounting = r.needs_telemetry.is_none()
        && (telemetry.cpu_figures || telemetry.memory_figures)
        && r.per == Per::Job
        && r.requires.is_empty();
    Ok(Rule {
        id: r.id.clone(),
        title: r.title.clone(),
        group: r.group,
        severity: r.severity,
        per: r.per,
        min_run_s: r.min_run_s,
        dwell_s: r.dwell_s,
        at_end: r.at_end.clone(),
        partitions: r.partitions.clone(),
        nodes: r.nodes,
        requires: r.requires.clone(),
        reads,
        needs_telemetry,
        telemetry,
        on_accounting,
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

/// A rule's lets in dependency order: each may read the others, but not in a cycle. Each is
/// checked once the lets it reads are placed, and then added to `scope` for the ones after it.
fn ordered_lets(
    texts: &BTreeMap<String, Spanned<String>>,
    scope: &mut Scope,
    fail: &impl Fn(usize, String) -> RulesError,
) -> Result<Vec<(String, Expr)>, RulesError> {
    let mut pending: Vec<(&String, &Spanned<String>, Expr)> = Vec::new();
    for (name, text) in texts {
        if !is_name(name) {
            return Err(fail(text.span().start, format!("let `{name}`: not a name")));
        }
        let expr = lang::parse(text.get_ref())
            .map_err(|e| fail(text.span().start, format!("let {name}: {e}")))?;
        pending.push((name, text, expr));
    }
    let let_names: Vec<String> = texts.keys().cloned().collect();
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
    Ok(lets)
}

/// A node rule's time window (`rise:<metric>` or `cliff:<metric>`), checked; `None` without one.
fn checked_window(
    r: &RuleOptions,
    book: &RuleBook,
    fail: &impl Fn(usize, String) -> RulesError,
) -> Result<Option<WindowOf>, RulesError> {
    let Some(text) = &r.window else {
        return Ok(None);
    };
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
    let window = match kind {
        "rise" => WindowOf::Rise(metric.to_string()),
        "cliff" => WindowOf::Cliff(metric.to_string()),
        other => {
            return Err(fail(
                text.span().start,
                format!("window: `{other}` is neither `rise` nor `cliff`"),
            ));
        }
    };
    Ok(Some(window))
}
