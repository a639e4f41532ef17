//! Which names a condition may read where it stands (a characteristic, a class, a rule, a node
//! rule), and the checked parsing of conditions and templates against it; also what a checked
//! expression reads: its metrics, and whether it needs telemetry.

use std::collections::BTreeSet;

use toml::Spanned;

use super::definitions::{RuleBook, TelemetryReads};
use super::vocabulary::{
    HISTORY_FIELDS, JOB_FIELDS, JOB_STATS, LIMIT_LEVELS, Reads, SUMMARY_FIELDS, WORKFLOW_FIELDS,
    node_stats, read_kind,
};
use crate::lang::{self, Expr, Template};

/// What names a condition may read where it stands.
pub(super) struct Scope<'a> {
    pub(super) book: &'a RuleBook,
    pub(super) node: bool,
    pub(super) classes: bool,
    pub(super) levels: bool,
    pub(super) lets: Vec<String>,
}

impl<'a> Scope<'a> {
    pub(super) fn characteristic(book: &'a RuleBook) -> Scope<'a> {
        Scope {
            book,
            node: false,
            classes: false,
            levels: false,
            lets: Vec::new(),
        }
    }

    pub(super) fn class(book: &'a RuleBook) -> Scope<'a> {
        Scope {
            book,
            node: false,
            classes: false,
            levels: true,
            lets: Vec::new(),
        }
    }

    /// Why `name` cannot be read here, or `None` when it can.
    pub(super) fn reject(&self, name: &str) -> Option<String> {
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
pub(super) fn checked_expr(text: &Spanned<String>, scope: &Scope) -> Result<Expr, (usize, String)> {
    let start = text.span().start;
    let expr = lang::parse(text.get_ref()).map_err(|e| (start, e.to_string()))?;
    for name in expr.variables() {
        if let Some(message) = scope.reject(name) {
            return Err((start, message));
        }
    }
    Ok(expr)
}

pub(super) fn checked_template(
    text: &Spanned<String>,
    scope: &Scope,
) -> Result<Template, (usize, String)> {
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
pub(super) fn referenced_metrics(expr: &Expr, extra: &[String]) -> Vec<String> {
    let mut out: BTreeSet<String> = extra.iter().cloned().collect();
    out.extend(
        expr.variables()
            .into_iter()
            .filter_map(metric_of)
            .map(str::to_string),
    );
    out.into_iter().collect()
}

/// The metric a variable reads, if it names one (`<metric>.<stat>`, `node.<metric>.<stat>`).
fn metric_of(name: &str) -> Option<&str> {
    let parts: Vec<&str> = name.split('.').collect();
    match parts.as_slice() {
        ["node", m, _] => Some(m),
        [first, _]
            if ![
                "job", "summary", "history", "workflow", "level", "value", "class",
            ]
            .contains(first) =>
        {
            Some(first)
        }
        _ => None,
    }
}

/// What telemetry the expressions read: the CPU and memory figures of `job_summary`, and
/// anything else measured (a metric, a node, the thresholds block, another measured
/// `job_summary` field); see [`read_kind`].
pub(super) fn telemetry_reads(exprs: &[&Expr]) -> TelemetryReads {
    let mut reads = TelemetryReads::default();
    for name in exprs.iter().flat_map(|e| e.variables()) {
        match read_kind(name) {
            Reads::Records => {}
            Reads::CpuFigure => reads.cpu_figures = true,
            Reads::MemoryFigure => reads.memory_figures = true,
            Reads::Series => {
                reads.series = true;
                reads.beyond_metrics |= metric_of(name).is_none();
            }
        }
    }
    reads
}

/// Whether the expressions read anything measured: a metric, a node, the thresholds block, or a
/// `job_summary` figure other than the coverage verdict, the run time, and what accounting says.
pub(super) fn reads_telemetry(exprs: &[&Expr]) -> bool {
    telemetry_reads(exprs).any()
}
