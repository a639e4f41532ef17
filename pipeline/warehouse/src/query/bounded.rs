//! The functions whose result can be far larger than their arguments, bounded. DataFusion's
//! memory pool counts what sorts, joins and aggregations hold, not a function's result: a
//! 40-byte `SELECT length(repeat('x', 1000000000))` took the server to 3.96 GB beside its 4 GiB
//! pool, and with 2e9 under a 6 GB cap the allocation failed and the process aborted. Each
//! function here is DataFusion's own, behind a check of what the call would make, before it
//! allocates anything: a call (one batch of rows) is refused with an error that names the
//! function when it would make more than [`MAX_RESULT_BYTES`], or when what it makes would take
//! the process's heap ([`super::heap`]) past [`MAX_HEAP_BYTES`]. The second check bounds what
//! functions build together: `replace(repeat('x', 200000000), 'x', 'xxxxxxxxxx')` (65 bytes)
//! or sixteen `repeat`s joined by `||`, each call under the first bound, aborted the server.
//!
//! The bounded functions: `repeat`, `lpad`, `rpad`, `replace`, `regexp_replace`, `translate`,
//! `concat`, `concat_ws`, `overlay`, `encode` and the operator `||` (text), `array_repeat`,
//! `array_resize`, `array_concat`, `array_append`, `array_prepend` and `range` /
//! `generate_series` over integers (arrays). What is left (casts, `upper`, `to_char`, ...)
//! makes at most a small multiple of a value one of these made or a table holds.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::compute::kernels::concat_elements::concat_elements_utf8;
use datafusion::arrow::compute::{cast, max};
use datafusion::arrow::datatypes::{DataType, FieldRef, Int64Type};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{FunctionRegistry, SessionState};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ExprSchemable, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};
use datafusion::sql::sqlparser::ast::BinaryOperator;

use super::heap;

/// The most one call of a bounded function may make, in bytes.
pub const MAX_RESULT_BYTES: u64 = 256 << 20;

/// The most a bounded function may make from constant arguments alone, in bytes. DataFusion
/// folds such a call into the plan as a literal, which its optimizer copies and names the
/// result column after: a 200 MB `repeat('x', 200000000)` under a call that refused took 18 s
/// of a core to plan. A constant that size is nothing a query over the warehouse needs.
pub const MAX_CONSTANT_BYTES: u64 = 1 << 20;

/// The heap a bounded function may bring the process to, in bytes, counting twice what it
/// makes (a builder that grows copies as it goes). Far under what a server's machine or unit
/// gives it, far over what the rest of a statement holds outside the memory pool.
pub const MAX_HEAP_BYTES: u64 = 2 << 30;

/// How a function's result size follows from its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Growth {
    /// `repeat(text, n)`: the text's length times n.
    Repeat,
    /// `lpad` / `rpad(text, n, ...)`: n characters of up to 4 bytes.
    Pad,
    /// `array_repeat(element, n)`: n elements.
    ArrayRepeat,
    /// `array_resize(array, n[, element])`: n elements.
    ArrayResize,
    /// `range` / `generate_series(start, stop[, step])`: (stop - start) / step integers.
    Range,
    /// `replace(text, from, to)`: each of at most len / len(from) matches (len + 1 for an
    /// empty `from`) becomes `to`.
    Replace,
    /// `regexp_replace(text, pattern, replacement[, flags])`: a pattern may match (emptily) at
    /// each of len + 1 places; a replacement's literal text is written at each, and its
    /// references to groups copy at most the matched text, at most len in all per reference.
    RegexpReplace,
    /// `translate(text, from, to)`: each character becomes one of up to 4 bytes.
    Translate,
    /// The arguments put together (`concat`, `||`, `overlay`, `array_concat`, ...), times a
    /// factor (2 for `encode`'s hex).
    Sum(u64),
    /// `concat_ws(separator, ...)`: the arguments and the separator once per argument.
    Joined,
}

const BOUNDED: [(&str, Growth); 17] = [
    ("repeat", Growth::Repeat),
    ("lpad", Growth::Pad),
    ("rpad", Growth::Pad),
    ("array_repeat", Growth::ArrayRepeat),
    ("array_resize", Growth::ArrayResize),
    ("range", Growth::Range),
    ("generate_series", Growth::Range),
    ("replace", Growth::Replace),
    ("regexp_replace", Growth::RegexpReplace),
    ("translate", Growth::Translate),
    ("concat", Growth::Sum(1)),
    ("concat_ws", Growth::Joined),
    ("overlay", Growth::Sum(1)),
    ("encode", Growth::Sum(2)),
    ("array_concat", Growth::Sum(1)),
    ("array_append", Growth::Sum(1)),
    ("array_prepend", Growth::Sum(1)),
];

/// Puts the bounded versions in place of `state`'s functions of the same names, and plans
/// `text || text` as the bounded [`StringConcat`].
pub fn register(state: &mut SessionState) -> Result<()> {
    for (name, growth) in BOUNDED {
        let Some(inner) = state.scalar_functions().get(name).cloned() else {
            continue;
        };
        state.register_udf(Arc::new(bounded(inner, growth)))?;
    }
    state.register_expr_planner(Arc::new(StringConcatPlanner))?;
    Ok(())
}

fn bounded(inner: Arc<ScalarUDF>, growth: Growth) -> ScalarUDF {
    ScalarUDF::new_from_impl(Bounded { inner, growth })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Bounded {
    inner: Arc<ScalarUDF>,
    growth: Growth,
}

/// An argument's values as 64-bit integers (a scalar as an array of one), if they are numbers.
fn ints(value: &ColumnarValue) -> Option<ArrayRef> {
    let array = match value {
        ColumnarValue::Scalar(s) => s.to_array().ok()?,
        ColumnarValue::Array(a) => Arc::clone(a),
    };
    cast(&array, &DataType::Int64).ok()
}

/// The largest integer of an argument, if it is one.
fn most(value: &ColumnarValue) -> Option<i64> {
    max(ints(value)?.as_primitive::<Int64Type>())
}

/// The longest text of an argument, in bytes, if it is text.
fn longest(value: &ColumnarValue) -> Option<i64> {
    text_length(value, Length::Longest)
}

/// The shortest text of an argument, in bytes, if it is text.
fn shortest(value: &ColumnarValue) -> Option<i64> {
    text_length(value, Length::Shortest)
}

/// Which of an argument's texts' lengths [`text_length`] gives.
#[derive(Clone, Copy)]
enum Length {
    Longest,
    Shortest,
}

/// The longest or shortest of an argument's texts, in bytes (a scalar's is its own), if it is
/// text.
fn text_length(value: &ColumnarValue, which: Length) -> Option<i64> {
    let array = match value {
        ColumnarValue::Scalar(ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s))) => {
            return Some(s.len() as i64);
        }
        ColumnarValue::Scalar(ScalarValue::Utf8View(Some(s))) => return Some(s.len() as i64),
        ColumnarValue::Scalar(_) => return None,
        ColumnarValue::Array(a) => a,
    };
    let text = cast(array, &DataType::Utf8).ok()?;
    let text = text.as_string::<i32>();
    let lengths = (0..text.len())
        .filter(|&i| text.is_valid(i))
        .map(|i| text.value(i).len() as i64);
    match which {
        Length::Longest => lengths.max(),
        Length::Shortest => lengths.min(),
    }
}

/// What an argument holds over a call's rows, in bytes: an array's buffers, a scalar once per
/// row when the call has rows of its own.
fn total(value: &ColumnarValue, rows: u64) -> u64 {
    match value {
        ColumnarValue::Array(a) => a.get_array_memory_size() as u64,
        ColumnarValue::Scalar(s) => (s.size() as u64).saturating_mul(rows),
    }
}

/// What all arguments hold over a call's rows, in bytes.
fn all(args: &[ColumnarValue], rows: u64) -> u64 {
    (args.iter()).fold(0u64, |sum, a| sum.saturating_add(total(a, rows)))
}

impl Growth {
    /// An upper bound of what a call makes, in bytes.
    fn bytes(self, args: &[ColumnarValue], rows: usize) -> u64 {
        let arg = |i: usize| args.get(i);
        let rows = if args.iter().any(|a| matches!(a, ColumnarValue::Array(_))) {
            rows.max(1) as u64
        } else {
            1
        };
        let positive = |v: Option<i64>| v.unwrap_or(0).max(0) as u64;
        let text = || arg(0).map_or(0, |a| total(a, rows));
        let per_row = match self {
            Growth::Repeat => {
                positive(arg(0).and_then(longest)).saturating_mul(positive(arg(1).and_then(most)))
            }
            Growth::Pad => positive(arg(1).and_then(most)).saturating_mul(4),
            Growth::ArrayRepeat => {
                let element = arg(0).and_then(longest).map_or(8, |l| l.max(8) as u64);
                positive(arg(1).and_then(most)).saturating_mul(element)
            }
            Growth::ArrayResize => {
                let element = arg(2).and_then(longest).map_or(8, |l| l.max(8) as u64);
                positive(arg(1).and_then(most)).saturating_mul(element)
            }
            Growth::Range => {
                let (start, stop) = match args.len() {
                    1 => (Some(0), arg(0).and_then(most)),
                    _ => (arg(0).and_then(least), arg(1).and_then(most)),
                };
                let step = arg(2).and_then(least_magnitude).unwrap_or(1).max(1);
                match (start, stop) {
                    (Some(start), Some(stop)) => {
                        (stop.saturating_sub(start).unsigned_abs() / step).saturating_mul(8)
                    }
                    _ => 0,
                }
            }
            // The rest are bounds over all rows at once.
            Growth::Replace => {
                let matches = match positive(arg(1).and_then(shortest)) {
                    0 => text().saturating_add(rows),
                    from => text() / from,
                };
                let to = positive(arg(2).and_then(longest));
                return text().saturating_add(matches.saturating_mul(to));
            }
            Growth::RegexpReplace => {
                let replacement = positive(arg(2).and_then(longest));
                let places = text().saturating_add(rows);
                return text()
                    .saturating_add(places.saturating_mul(replacement))
                    .saturating_add(text().saturating_mul(replacement));
            }
            Growth::Translate => return text().saturating_mul(4),
            Growth::Sum(factor) => return all(args, rows).saturating_mul(factor),
            Growth::Joined => {
                let separators = text().saturating_mul(args.len() as u64);
                return all(args, rows).saturating_add(separators);
            }
        };
        per_row.saturating_mul(rows)
    }
}

/// The smallest integer of an argument.
fn least(value: &ColumnarValue) -> Option<i64> {
    datafusion::arrow::compute::min(ints(value)?.as_primitive::<Int64Type>())
}

/// The smallest step in magnitude (the step that makes the most elements).
fn least_magnitude(value: &ColumnarValue) -> Option<u64> {
    let ints = ints(value)?;
    (ints.as_primitive::<Int64Type>().iter())
        .flatten()
        .map(i64::unsigned_abs)
        .min()
}

impl ScalarUDFImpl for Bounded {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        self.inner.return_field_from_args(args)
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.inner.coerce_types(arg_types)
    }

    fn schema_name(&self, args: &[Expr]) -> Result<String> {
        self.inner.schema_name(args)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let bytes = self.growth.bytes(&args.args, args.number_rows);
        let name = self.inner.name();
        if bytes > MAX_RESULT_BYTES {
            return Err(DataFusionError::Execution(format!(
                "{name}: the call would make about {} MiB, more than the {} MiB one function \
                 call may make",
                bytes >> 20,
                MAX_RESULT_BYTES >> 20
            )));
        }
        let constant = (args.args.iter()).all(|a| matches!(a, ColumnarValue::Scalar(_)));
        if constant && bytes > MAX_CONSTANT_BYTES {
            return Err(DataFusionError::Execution(format!(
                "{name}: the call would make a constant of about {} KiB, more than the {} KiB \
                 a constant may be",
                bytes >> 10,
                MAX_CONSTANT_BYTES >> 10
            )));
        }
        let in_use = heap::in_use();
        if in_use.saturating_add(bytes.saturating_mul(2)) > MAX_HEAP_BYTES {
            return Err(DataFusionError::Execution(format!(
                "{name}: the call would make about {} MiB while the server holds {} MiB: more \
                 than the {} MiB the values a statement builds may bring it to",
                bytes >> 20,
                in_use >> 20,
                MAX_HEAP_BYTES >> 20
            )));
        }
        self.inner.invoke_with_args(args)
    }
}

/// `text || text` as PostgreSQL and DataFusion read it (NULL when either side is NULL, the
/// other side cast to text), as a function so that [`Bounded`] can check what it makes:
/// DataFusion plans the operator as a binary expression, which no function replaces.
#[derive(Debug, PartialEq, Eq, Hash)]
struct StringConcat {
    signature: Signature,
}

/// The name the operator's function shows in plans.
const STRING_CONCAT: &str = "||";

impl ScalarUDFImpl for StringConcat {
    fn name(&self) -> &str {
        STRING_CONCAT
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        Ok(vec![DataType::Utf8; arg_types.len()])
    }

    /// The column's name as the operator's (`a || b`), not a function's.
    fn schema_name(&self, args: &[Expr]) -> Result<String> {
        let [left, right] = args else {
            return Err(DataFusionError::Internal("|| takes two operands".into()));
        };
        Ok(format!("{} || {}", left.schema_name(), right.schema_name()))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let scalars = args
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let [left, right] = [0, 1].map(|i| -> Result<ArrayRef> {
            let array = args.args[i].to_array(rows)?;
            Ok(cast(&array, &DataType::Utf8)?)
        });
        let joined = concat_elements_utf8(left?.as_string::<i32>(), right?.as_string::<i32>())?;
        if scalars {
            return Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(
                &joined, 0,
            )?));
        }
        Ok(ColumnarValue::Array(Arc::new(joined)))
    }
}

/// Plans `a || b` over text as the bounded [`StringConcat`]; lists stay DataFusion's
/// (`array_concat`, `array_append`, `array_prepend`, bounded in their own right), as does
/// anything with no text on either side (an error, as in PostgreSQL).
#[derive(Debug)]
struct StringConcatPlanner;

impl ExprPlanner for StringConcatPlanner {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        if expr.op != BinaryOperator::StringConcat {
            return Ok(PlannerResult::Original(expr));
        }
        let is_text = |t: &DataType| match t {
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
            DataType::Dictionary(_, value) => value.is_string(),
            _ => false,
        };
        let is_list = |t: &DataType| {
            matches!(
                t,
                DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..)
            )
        };
        let types = [expr.left.get_type(schema)?, expr.right.get_type(schema)?];
        if !types.iter().any(is_text) || types.iter().any(is_list) {
            return Ok(PlannerResult::Original(expr));
        }
        let function = bounded(
            Arc::new(ScalarUDF::new_from_impl(StringConcat {
                signature: Signature::user_defined(Volatility::Immutable),
            })),
            Growth::Sum(1),
        );
        Ok(PlannerResult::Planned(Expr::ScalarFunction(
            ScalarFunction::new_udf(Arc::new(function), vec![expr.left, expr.right]),
        )))
    }
}

#[cfg(test)]
mod tests {
    /// One test at a time: one of them holds 2 GiB of the process's heap, which the others'
    /// calls would see.
    static HEAP_HELD: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

    /// The review's `repeat('x', 1e9)` and its kin are refused with an error naming the
    /// function, over the server's session as over a command's; small calls answer as before.
    #[tokio::test]
    async fn calls_that_would_make_too_much_are_refused() {
        let _alone = HEAP_HELD.lock().await;
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::query::live_session(dir.path()).await.unwrap();
        crate::query::collect(&ctx, "CREATE VIEW t AS SELECT * FROM (VALUES ('x')) v(x)")
            .await
            .unwrap();
        for (sql, refused_by) in [
            ("SELECT length(repeat('x', 1000000000))", "repeat"),
            ("SELECT lpad('a', 2000000000)", "lpad"),
            ("SELECT rpad('a', 2000000000, 'b')", "rpad"),
            ("SELECT cardinality(range(1000000000))", "range"),
            (
                "SELECT cardinality(generate_series(1, 1000000000, 1))",
                "generate_series",
            ),
            (
                "SELECT cardinality(array_repeat(1, 1000000000))",
                "array_repeat",
            ),
            (
                "SELECT length(repeat(x, 200000000)) FROM (VALUES ('ab'), ('c')) t(x)",
                "repeat",
            ),
            (
                "SELECT cardinality(array_resize([1], 1000000000, 0))",
                "array_resize",
            ),
            // Round two's 65-byte statement's kin, over a column: each call under the bound of
            // one call makes a value that the next multiplies.
            (
                "SELECT length(replace(repeat(x, 200000000), 'x', 'xxxxxxxxxx')) FROM t",
                "replace",
            ),
            (
                "SELECT length(regexp_replace(repeat(x, 100000000), 'x', 'xxxx', 'g')) FROM t",
                "regexp_replace",
            ),
            (
                "SELECT length(replace(replace(repeat(x, 20000000), 'x', 'xxxxxxxxxx'), \
                 'x', 'xxxxxxxxxx')) FROM t",
                "replace",
            ),
            (
                "SELECT length(translate(repeat(x, 200000000), 'x', 'é')) FROM t",
                "translate",
            ),
            (
                "SELECT length(concat(repeat(x, 200000000), repeat(x, 200000000))) FROM t",
                "concat",
            ),
            (
                "SELECT length(repeat(x, 200000000) || repeat(x, 200000000)) FROM t",
                "||",
            ),
        ] {
            let error = crate::query::collect(&ctx, sql)
                .await
                .unwrap_err()
                .to_string();
            assert!(
                error.contains(&format!("{refused_by}: the call would make about")),
                "{sql}: {error}"
            );
        }
        let batches = crate::query::collect(
            &ctx,
            "SELECT length(repeat('ab', 1000)) AS a, cardinality(range(10)) AS b, \
             length(lpad('x', 5)) AS c",
        )
        .await
        .unwrap();
        let row = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
            .unwrap()
            .to_string();
        assert!(row.contains("| 2000 | 10 | 5 |"), "{row}");
    }

    /// Round two's 65-byte statement, and its constant kin: refused as constants, in
    /// milliseconds, before the optimizer copies a folded 200 MB literal about the plan.
    #[tokio::test]
    async fn large_constants_are_refused_at_once() {
        let _alone = HEAP_HELD.lock().await;
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::query::live_session(dir.path()).await.unwrap();
        for sql in [
            "SELECT length(replace(repeat('x', 200000000), 'x', 'xxxxxxxxxx'))",
            "SELECT length(concat(repeat('x', 200000000), repeat('y', 200000000)))",
            "SELECT repeat('ab', 600000)",
        ] {
            let started = std::time::Instant::now();
            let error = crate::query::collect(&ctx, sql)
                .await
                .unwrap_err()
                .to_string();
            assert!(error.contains("a constant of about"), "{sql}: {error}");
            assert!(
                started.elapsed().as_secs() < 2,
                "{sql}: {:?}",
                started.elapsed()
            );
        }
    }

    /// Sixteen values of 250 MB, each under the bound of one call, that no call puts together
    /// (round two's sixteen `repeat`s joined by `||` are refused by `||`'s own bound): one row
    /// of sixteen columns, or an array of them, is refused before the process's heap passes
    /// its bound.
    #[tokio::test]
    async fn what_calls_build_together_is_bounded() {
        let _alone = HEAP_HELD.lock().await;
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::query::live_session(dir.path()).await.unwrap();
        let values: Vec<String> = (0..16)
            .map(|i| format!("repeat(x, 250000000 + {i})"))
            .collect();
        for sql in [
            format!("SELECT {} FROM (VALUES ('x')) t(x)", values.join(", ")),
            format!(
                "SELECT cardinality([{}]) FROM (VALUES ('x')) t(x)",
                values.join(", ")
            ),
        ] {
            let error = crate::query::collect(&ctx, &sql)
                .await
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("while the server holds") && error.contains("2048 MiB"),
                "{error}"
            );
        }
        assert!(super::heap::in_use() < super::MAX_HEAP_BYTES, "all freed");
    }

    /// `||` keeps its meaning as a bounded function: NULL with a NULL side, numbers as text
    /// beside text, the column named after the operator, lists left to DataFusion.
    #[tokio::test]
    async fn the_concatenation_operator_keeps_its_meaning() {
        let _alone = HEAP_HELD.lock().await;
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::query::live_session(dir.path()).await.unwrap();
        let batches = crate::query::collect(
            &ctx,
            "SELECT x || '-' || y, x || NULL AS n, 'n' || 7 AS s, [1] || [2] AS l \
             FROM (VALUES ('a', 'b'), ('c', NULL)) t(x, y)",
        )
        .await
        .unwrap();
        let table = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
            .unwrap()
            .to_string();
        assert!(table.contains(r#"t.x || Utf8("-") || t.y"#), "{table}");
        assert!(table.contains("| a-b "), "{table}");
        assert!(table.contains("| n7 | [1, 2] |"), "{table}");
        let lines: Vec<&str> = table.lines().collect();
        let joined_with_null = lines[4].split('|').nth(1).unwrap();
        assert!(
            joined_with_null.trim().is_empty(),
            "NULL with a NULL side: {table}"
        );
    }
}
