//! The condition language of rules and classes, and the message templates.
//!
//! A condition is one boolean expression an admin can read:
//! `summary.cpu_eff < 0.65 and job.num_nodes > 1 or job.state in ["TIMEOUT", "OUT_OF_MEMORY"]`.
//! - Values: numbers, strings in double quotes, `true`, `false`, and variables (dotted names such
//!   as `job.state` or `mem_used_bytes.max_rise`, resolved by the caller).
//! - Operators, loosest first: `or`, `and`, `not`, comparisons (`< <= > >= == !=`, and
//!   `x in [a, b]`), `+ -`, `* /`, unary `-`. Parentheses group.
//! - Functions: `min(a, ...)`, `max(a, ...)`, `abs(x)`, `ceil(x)`, `floor(x)`, `present(x)` (whether
//!   `x` has a value), `coalesce(a, b, ...)` (the first with a value), `hms(seconds)` (the text
//!   `H:MM:SS`, as `sbatch --time` takes it).
//!
//! A variable the job does not have (a metric that was not measured, a request Slurm did not
//! record) is *missing*, and missing spreads as SQL's NULL does: arithmetic and comparisons with
//! it are missing, `false and missing` is false, `true or missing` is true. A rule fires only when
//! its condition is true, so a job without the data a rule needs is never flagged by it.
//!
//! Safety: parsing and evaluation do no I/O and call nothing outside this module; the text is at
//! most [`MAX_SOURCE`] bytes and nests at most [`MAX_DEPTH`] deep, and evaluation is one walk of
//! the tree, so a rule file cannot make the pipeline hang or touch anything.
//!
//! Templates are text with `{name}` or `{name:.N}` (N decimals) placeholders, where `name` is a
//! variable; `{{` and `}}` are literal braces.
//!
//! This module holds the values and the tree every part shares; its children do the rest:
//! `parser` reads a condition's text into the tree, `eval` evaluates it, and `template` parses
//! and renders the message templates. The tests of parsing and evaluation together are here.

mod eval;
mod parser;
mod template;

pub use parser::parse;
pub use template::{Piece, Spec, Template};

use std::fmt;

/// Longest accepted condition, in bytes.
pub const MAX_SOURCE: usize = 4096;
/// Deepest accepted nesting of a condition.
pub const MAX_DEPTH: usize = 48;

/// A value during evaluation.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Num(f64),
    Str(String),
    Bool(bool),
    Missing,
}

impl Value {
    pub fn is_missing(&self) -> bool {
        matches!(self, Value::Missing)
    }

    /// `Num`, or `Missing` for NaN and infinities (which would make every comparison false
    /// without saying why).
    pub fn num(v: f64) -> Value {
        if v.is_finite() {
            Value::Num(v)
        } else {
            Value::Missing
        }
    }

    pub fn from_opt(v: Option<f64>) -> Value {
        v.map_or(Value::Missing, Value::num)
    }
}

impl fmt::Display for Value {
    /// Whole numbers without decimals, others with up to three significant decimals.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Num(v) if v.fract() == 0.0 && v.abs() < 1e15 => write!(f, "{v:.0}"),
            Value::Num(v) => {
                let decimals = if v.abs() >= 100.0 {
                    1
                } else if v.abs() >= 1.0 {
                    2
                } else {
                    3
                };
                write!(f, "{v:.decimals$}")
            }
            Value::Str(s) => f.write_str(s),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Missing => f.write_str("n/a"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BinOp {
    Or,
    And,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Func {
    Min,
    Max,
    Abs,
    Ceil,
    Floor,
    Present,
    Coalesce,
    Hms,
}

impl Func {
    fn of(name: &str) -> Option<Func> {
        Some(match name {
            "min" => Func::Min,
            "max" => Func::Max,
            "abs" => Func::Abs,
            "ceil" => Func::Ceil,
            "floor" => Func::Floor,
            "present" => Func::Present,
            "coalesce" => Func::Coalesce,
            "hms" => Func::Hms,
            _ => return None,
        })
    }

    /// Accepted argument counts.
    fn arity(self) -> (usize, usize) {
        match self {
            Func::Min | Func::Max | Func::Coalesce => (1, 16),
            Func::Abs | Func::Ceil | Func::Floor | Func::Present | Func::Hms => (1, 1),
        }
    }
}

/// A parsed condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Lit(Value),
    Var(String),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    In(Box<Expr>, Vec<Expr>),
    Call(Func, Vec<Expr>),
}

/// What is wrong with a condition or template, and where (byte offset in its text).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("at column {}: {message}", .offset + 1)]
pub struct SyntaxError {
    pub offset: usize,
    pub message: String,
}

fn syntax(offset: usize, message: impl Into<String>) -> SyntaxError {
    SyntaxError {
        offset,
        message: message.into(),
    }
}

impl Expr {
    /// Every variable the expression reads, in order of appearance.
    pub fn variables(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if let Expr::Var(name) = e {
                out.push(name.as_str());
            }
        });
        out
    }

    fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        f(self);
        match self {
            Expr::Lit(_) | Expr::Var(_) => {}
            Expr::Not(e) | Expr::Neg(e) => e.walk(f),
            Expr::Binary(_, a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::In(e, items) => {
                e.walk(f);
                items.iter().for_each(|i| i.walk(f));
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.walk(f)),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn eval(src: &str) -> Value {
        parse(src).unwrap().eval(&|name| match name {
            "job.cpus" => Value::Num(64.0),
            "job.state" => Value::Str("TIMEOUT".into()),
            "summary.cpu_eff" => Value::Num(0.015),
            "gpu_util.mean" => Value::Missing,
            _ => panic!("unexpected variable {name}"),
        })
    }

    #[test]
    fn precedence_and_arithmetic() {
        assert_eq!(eval("1 + 2 * 3 == 7"), Value::Bool(true));
        assert_eq!(eval("(1 + 2) * 3"), Value::Num(9.0));
        assert_eq!(eval("-2 * -3 >= 6 and not 1 > 2"), Value::Bool(true));
        assert_eq!(eval("true or false and false"), Value::Bool(true));
        assert_eq!(eval("1.5e3 / 1e3"), Value::Num(1.5));
        assert_eq!(
            eval("summary.cpu_eff * job.cpus < 1.01 and summary.cpu_eff * job.cpus > 0.85"),
            Value::Bool(true)
        );
        assert_eq!(
            eval("job.state in [\"TIMEOUT\", \"NODE_FAIL\"]"),
            Value::Bool(true)
        );
        assert_eq!(eval("job.state == \"COMPLETED\""), Value::Bool(false));
        assert_eq!(eval("hms(3725)"), Value::Str("1:02:05".into()));
        assert_eq!(eval("max(1, ceil(2.1), min(7, 9))"), Value::Num(7.0));
    }

    #[test]
    fn missing_spreads_like_sql_null() {
        assert_eq!(eval("gpu_util.mean < 0.15"), Value::Missing);
        assert_eq!(eval("gpu_util.mean < 0.15 and false"), Value::Bool(false));
        assert_eq!(eval("gpu_util.mean < 0.15 or true"), Value::Bool(true));
        assert_eq!(eval("not gpu_util.mean < 0.15"), Value::Missing);
        assert_eq!(eval("present(gpu_util.mean)"), Value::Bool(false));
        assert_eq!(eval("coalesce(gpu_util.mean, 3)"), Value::Num(3.0));
        assert_eq!(eval("1 / 0"), Value::Missing);
        assert_eq!(eval("\"a\" + 1"), Value::Missing);
        assert_eq!(eval("gpu_util.mean in [1]"), Value::Missing);
    }

    #[test]
    fn errors_say_where() {
        let e = parse("job.cpus > ").unwrap_err();
        assert_eq!(e.offset, 11);
        let e = parse("job.cpus = 2").unwrap_err();
        assert!(e.message.contains("=="), "{e}");
        assert_eq!(e.offset, 9);
        let e = parse("job.cpus > 2 job.cpus").unwrap_err();
        assert_eq!(e.offset, 13);
        assert!(
            parse("frobnicate(1)")
                .unwrap_err()
                .message
                .contains("unknown function")
        );
        assert!(
            parse("abs(1, 2)")
                .unwrap_err()
                .message
                .contains("takes 1 to 1")
        );
        assert!(parse("\"open").is_err());
        assert!(parse("a ; b").unwrap_err().message.contains("`;`"));
        assert!(parse("").is_err());
    }

    #[test]
    fn size_and_depth_are_bounded() {
        let deep = "(".repeat(MAX_DEPTH + 1) + "1" + &")".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).unwrap_err().message.contains("deeply"));
        let deep_not = "not ".repeat(MAX_DEPTH + 1) + "true";
        assert!(parse(&deep_not).is_err());
        let long = "1 + ".repeat(MAX_SOURCE / 4) + "1";
        assert!(parse(&long).unwrap_err().message.contains("longer"));
        // Long but flat chains are fine within the size limit.
        assert!(parse(&("1 + ".repeat(500) + "1")).is_ok());
    }

    #[test]
    fn variables_are_listed() {
        let e = parse("max(a.b, 1) > c and d in [e]").unwrap();
        assert_eq!(e.variables(), vec!["a.b", "c", "d", "e"]);
    }
}
