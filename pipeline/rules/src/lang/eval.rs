//! Evaluation of a parsed condition: one walk of its [`Expr`] tree, with missing values spreading
//! as SQL's NULL does (see the parent module's doc).

use super::{BinOp, Expr, Func, Value};

impl Expr {
    /// Evaluates the expression; `lookup` gives each variable's value. Type errors (adding text to
    /// a number) give `Missing`: a rule file error must not stop the pipeline, and
    /// `jobsight rules check` catches them on the fixtures.
    pub fn eval(&self, lookup: &dyn Fn(&str) -> Value) -> Value {
        match self {
            Expr::Lit(v) => v.clone(),
            Expr::Var(name) => lookup(name),
            Expr::Not(e) => match e.eval(lookup) {
                Value::Bool(b) => Value::Bool(!b),
                _ => Value::Missing,
            },
            Expr::Neg(e) => match e.eval(lookup) {
                Value::Num(v) => Value::num(-v),
                _ => Value::Missing,
            },
            Expr::Binary(BinOp::And, a, b) => match (a.eval(lookup), b.eval(lookup)) {
                (Value::Bool(false), _) | (_, Value::Bool(false)) => Value::Bool(false),
                (Value::Bool(true), Value::Bool(true)) => Value::Bool(true),
                _ => Value::Missing,
            },
            Expr::Binary(BinOp::Or, a, b) => match (a.eval(lookup), b.eval(lookup)) {
                (Value::Bool(true), _) | (_, Value::Bool(true)) => Value::Bool(true),
                (Value::Bool(false), Value::Bool(false)) => Value::Bool(false),
                _ => Value::Missing,
            },
            Expr::Binary(op, a, b) => binary(*op, a.eval(lookup), b.eval(lookup)),
            Expr::In(e, items) => {
                let v = e.eval(lookup);
                if v.is_missing() {
                    return Value::Missing;
                }
                Value::Bool(items.iter().any(|i| i.eval(lookup) == v))
            }
            Expr::Call(func, args) => call(*func, args.iter().map(|a| a.eval(lookup)).collect()),
        }
    }
}

fn binary(op: BinOp, a: Value, b: Value) -> Value {
    use std::cmp::Ordering;
    if a.is_missing() || b.is_missing() {
        return Value::Missing;
    }
    let order = match (&a, &b) {
        (Value::Num(x), Value::Num(y)) => x.partial_cmp(y),
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    };
    let compare =
        |want: fn(Ordering) -> bool| order.map_or(Value::Missing, |o| Value::Bool(want(o)));
    match op {
        BinOp::Lt => compare(|o| o == Ordering::Less),
        BinOp::Le => compare(|o| o != Ordering::Greater),
        BinOp::Gt => compare(|o| o == Ordering::Greater),
        BinOp::Ge => compare(|o| o != Ordering::Less),
        BinOp::Eq => compare(|o| o == Ordering::Equal),
        BinOp::Ne => compare(|o| o != Ordering::Equal),
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => {
            let (Value::Num(x), Value::Num(y)) = (a, b) else {
                return Value::Missing;
            };
            match op {
                BinOp::Add => Value::num(x + y),
                BinOp::Sub => Value::num(x - y),
                BinOp::Mul => Value::num(x * y),
                // Division by zero has no value rather than an infinity.
                _ => Value::num(x / y),
            }
        }
        BinOp::And | BinOp::Or => Value::Missing,
    }
}

fn call(func: Func, args: Vec<Value>) -> Value {
    let nums = || -> Option<Vec<f64>> {
        args.iter()
            .map(|a| match a {
                Value::Num(v) => Some(*v),
                _ => None,
            })
            .collect()
    };
    match func {
        Func::Present => Value::Bool(!args[0].is_missing()),
        Func::Coalesce => args
            .iter()
            .find(|a| !a.is_missing())
            .cloned()
            .unwrap_or(Value::Missing),
        Func::Min => nums().map_or(Value::Missing, |v| {
            Value::num(v.into_iter().fold(f64::INFINITY, f64::min))
        }),
        Func::Max => nums().map_or(Value::Missing, |v| {
            Value::num(v.into_iter().fold(f64::NEG_INFINITY, f64::max))
        }),
        Func::Abs | Func::Ceil | Func::Floor | Func::Hms => {
            let Some(v) = nums().and_then(|v| v.first().copied()) else {
                return Value::Missing;
            };
            match func {
                Func::Abs => Value::num(v.abs()),
                Func::Ceil => Value::num(v.ceil()),
                Func::Floor => Value::num(v.floor()),
                _ => {
                    let s = v.max(0.0).round() as u64;
                    Value::Str(format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60))
                }
            }
        }
    }
}
