//! The functions whose result can be far larger than their arguments, bounded. DataFusion's
//! memory pool counts what sorts, joins and aggregations hold, not a function's result: a
//! 40-byte `SELECT length(repeat('x', 1000000000))` took the server to 3.96 GB beside its 4 GiB
//! pool, and with 2e9 under a 6 GB cap the allocation failed and the process aborted. Each
//! function here is DataFusion's own, behind a check of what the call would make: a call
//! (one batch of rows) that would make more than [`MAX_RESULT_BYTES`] is refused with an error
//! that names the function, before it allocates anything.
//!
//! The bounded functions: `repeat`, `lpad`, `rpad` (text), `array_repeat` and `range` /
//! `generate_series` over integers (arrays). Other functions' results are at most a small
//! multiple of their arguments, which the query's text, the rows read and the pool bound.

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::compute::{cast, max};
use datafusion::arrow::datatypes::{DataType, FieldRef, Int64Type};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{FunctionRegistry, SessionState};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
};

/// The most one call of a bounded function may make, in bytes.
pub const MAX_RESULT_BYTES: u64 = 256 << 20;

/// How a function's result size follows from its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Growth {
    /// `repeat(text, n)`: the text's length times n.
    Repeat,
    /// `lpad` / `rpad(text, n, ...)`: n characters of up to 4 bytes.
    Pad,
    /// `array_repeat(element, n)`: n elements.
    ArrayRepeat,
    /// `range` / `generate_series(start, stop[, step])`: (stop - start) / step integers.
    Range,
}

const BOUNDED: [(&str, Growth); 6] = [
    ("repeat", Growth::Repeat),
    ("lpad", Growth::Pad),
    ("rpad", Growth::Pad),
    ("array_repeat", Growth::ArrayRepeat),
    ("range", Growth::Range),
    ("generate_series", Growth::Range),
];

/// Puts the bounded versions in place of `state`'s functions of the same names.
pub fn register(state: &mut SessionState) -> Result<()> {
    for (name, growth) in BOUNDED {
        let Some(inner) = state.scalar_functions().get(name).cloned() else {
            continue;
        };
        state.register_udf(Arc::new(ScalarUDF::new_from_impl(Bounded {
            inner,
            growth,
        })))?;
    }
    Ok(())
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Bounded {
    inner: Arc<ScalarUDF>,
    growth: Growth,
}

/// An argument's values as 64-bit integers (a scalar as an array of one), if they are numbers.
fn ints(value: &ColumnarValue) -> Option<datafusion::arrow::array::ArrayRef> {
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
    (0..text.len())
        .filter(|&i| text.is_valid(i))
        .map(|i| text.value(i).len() as i64)
        .max()
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
        let per_row = match self {
            Growth::Repeat => {
                positive(arg(0).and_then(longest)).saturating_mul(positive(arg(1).and_then(most)))
            }
            Growth::Pad => positive(arg(1).and_then(most)).saturating_mul(4),
            Growth::ArrayRepeat => {
                let element = arg(0).and_then(longest).map_or(8, |l| l.max(8) as u64);
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

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let bytes = self.growth.bytes(&args.args, args.number_rows);
        if bytes > MAX_RESULT_BYTES {
            return Err(DataFusionError::Execution(format!(
                "{}: the call would make about {} MiB, more than the {} MiB one function call \
                 may make",
                self.inner.name(),
                bytes >> 20,
                MAX_RESULT_BYTES >> 20
            )));
        }
        self.inner.invoke_with_args(args)
    }
}

#[cfg(test)]
mod tests {
    /// The review's `repeat('x', 1e9)` and its kin are refused with an error naming the
    /// function, over the server's session as over a command's; small calls answer as before.
    #[tokio::test]
    async fn calls_that_would_make_too_much_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::query::live_session(dir.path()).await.unwrap();
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
}
