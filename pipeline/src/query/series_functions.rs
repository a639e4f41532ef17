//! The features' per-series statistics as SQL aggregate functions (`js_p95(value)`,
//! `js_slope_per_h(ts, value)`, ...), registered in every query session, so that `jobsight sql`
//! and `serve --pg` compute them on any selection of `telemetry`:
//!
//! ```sql
//! SELECT job_id, metric, js_p95(value), js_slope_per_h(ts, value)
//! FROM telemetry WHERE day = '2026-11-20' GROUP BY job_id, metric
//! ```
//!
//! Each function collects its group's samples and hands them to [`crate::series::describe`], the
//! core the features step computes every series with, so the two cannot disagree on a
//! definition (numpy's percentiles, population moments, NaN and infinities left out). What the
//! features step adds, and these do not, is trimming the series to the job's run (a `WHERE` on
//! `ts` does that here). The functions that depend on time order take the sample time first.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, Field, FieldRef, Float64Type, TimeUnit, TimestampMicrosecondType,
};
use datafusion::common::{Result, ScalarValue, plan_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};

use crate::series::{PERCENTILES, SeriesStats, describe};

/// One figure of [`SeriesStats`] as a function: its SQL name, whether it takes the sample time
/// first, what it means (for `docs/sql.md`), and how it is read from the statistics.
#[derive(Debug, Clone, Copy)]
pub struct Figure {
    pub name: &'static str,
    pub timed: bool,
    pub meaning: &'static str,
    read: fn(&SeriesStats) -> Option<f64>,
}

/// The one function whose answer is a whole number (SQL's `count(value)` counts NaN too).
const COUNT: &str = "js_count";

/// Every function, in the order `docs/sql.md` lists them.
pub const FIGURES: [Figure; 14] = [
    Figure {
        name: COUNT,
        timed: false,
        meaning: "finite samples (NaN and infinities left out, as by every js_ function)",
        read: |s| Some(s.n as f64),
    },
    Figure {
        name: "js_std",
        timed: false,
        meaning: "population standard deviation (divisor n)",
        read: |s| s.std,
    },
    Figure {
        name: "js_cv",
        timed: false,
        meaning: "coefficient of variation, std / mean (null when the mean is 0)",
        read: |s| s.cv,
    },
    Figure {
        name: "js_skewness",
        timed: false,
        meaning: "m3 / m2^1.5 (null for a constant series)",
        read: |s| s.skewness,
    },
    Figure {
        name: "js_kurtosis",
        timed: false,
        meaning: "excess kurtosis, m4 / m2² − 3 (null for a constant series)",
        read: |s| s.kurtosis,
    },
    Figure {
        name: "js_p05",
        timed: false,
        meaning: "5th percentile, linear interpolation at rank p × (n − 1) (numpy's default)",
        read: |s| s.percentiles[0],
    },
    Figure {
        name: "js_p25",
        timed: false,
        meaning: "25th percentile (as js_p05)",
        read: |s| s.percentiles[1],
    },
    Figure {
        name: "js_p50",
        timed: false,
        meaning: "median (as js_p05)",
        read: |s| s.percentiles[2],
    },
    Figure {
        name: "js_p75",
        timed: false,
        meaning: "75th percentile (as js_p05)",
        read: |s| s.percentiles[3],
    },
    Figure {
        name: "js_p95",
        timed: false,
        meaning: "95th percentile (as js_p05)",
        read: |s| s.percentiles[4],
    },
    Figure {
        name: "js_slope_per_h",
        timed: true,
        meaning: "least-squares slope of the value on time, per hour (memory growth)",
        read: |s| s.slope_per_h,
    },
    Figure {
        name: "js_catastrophe",
        timed: true,
        meaning: "tacc_stats' catastrophe: the lowest mean(after) / mean(before) over time splits",
        read: |s| s.catastrophe,
    },
    Figure {
        name: "js_max_rise",
        timed: true,
        meaning: "largest increase from an earlier sample to a later one",
        read: |s| s.max_rise,
    },
    Figure {
        name: "js_interval_s",
        timed: true,
        meaning: "median spacing of the samples in seconds",
        read: |s| s.interval_s,
    },
];

// The percentile functions are the series core's percentiles, in its order.
const _: () = assert!(PERCENTILES.len() == 5);

/// Every function, ready to register with a session.
pub fn all() -> Vec<AggregateUDF> {
    FIGURES
        .iter()
        .map(|&figure| AggregateUDF::from(SeriesFunction::new(figure)))
        .collect()
}

/// One `js_` function.
#[derive(Debug)]
struct SeriesFunction {
    figure: Figure,
    signature: Signature,
}

impl SeriesFunction {
    fn new(figure: Figure) -> SeriesFunction {
        SeriesFunction {
            figure,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }

    fn usage(&self) -> String {
        if self.figure.timed {
            format!("{}(time, value)", self.figure.name)
        } else {
            format!("{}(value)", self.figure.name)
        }
    }
}

// DataFusion compares and hashes functions to tell two plans apart; a function is its name.
impl PartialEq for SeriesFunction {
    fn eq(&self, other: &Self) -> bool {
        self.figure.name == other.figure.name
    }
}
impl Eq for SeriesFunction {}
impl std::hash::Hash for SeriesFunction {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.figure.name.hash(state);
    }
}

const TIME: DataType = DataType::Timestamp(TimeUnit::Microsecond, None);

fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new_list_field(item, true)))
}

impl AggregateUDFImpl for SeriesFunction {
    fn name(&self) -> &str {
        self.figure.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    /// Values as doubles and times as microsecond timestamps; anything else is refused with the
    /// function's usage.
    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let is_value = |t: &DataType| t.is_numeric() || t.is_null();
        match (self.figure.timed, arg_types) {
            (false, [v]) if is_value(v) => Ok(vec![DataType::Float64]),
            (true, [t, v])
                if matches!(t, DataType::Timestamp(..) | DataType::Null) && is_value(v) =>
            {
                Ok(vec![TIME, DataType::Float64])
            }
            _ => plan_err!(
                "{} takes {}, not ({})",
                self.usage(),
                if self.figure.timed {
                    "a timestamp and a number"
                } else {
                    "a number"
                },
                arg_types
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(if self.figure.name == COUNT {
            DataType::Int64
        } else {
            DataType::Float64
        })
    }

    /// The samples collected so far: their times (microseconds; 0 for the untimed functions)
    /// and values, so that partial aggregations can be merged.
    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![
            Arc::new(Field::new(
                format!("{}[times]", args.name),
                list_of(DataType::Int64),
                true,
            )),
            Arc::new(Field::new(
                format!("{}[values]", args.name),
                list_of(DataType::Float64),
                true,
            )),
        ])
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(SeriesAccumulator {
            figure: self.figure,
            times: Vec::new(),
            values: Vec::new(),
        }))
    }
}

/// A group's samples, described when the group is complete.
#[derive(Debug)]
struct SeriesAccumulator {
    figure: Figure,
    times: Vec<i64>,
    values: Vec<f64>,
}

impl Accumulator for SeriesAccumulator {
    fn update_batch(&mut self, columns: &[ArrayRef]) -> Result<()> {
        let (times, values) = if self.figure.timed {
            let times = cast(&columns[0], &TIME)?;
            (Some(times), cast(&columns[1], &DataType::Float64)?)
        } else {
            (None, cast(&columns[0], &DataType::Float64)?)
        };
        let values = values.as_primitive::<Float64Type>();
        let times = times
            .as_ref()
            .map(|t| t.as_primitive::<TimestampMicrosecondType>());
        for i in 0..values.len() {
            // A sample without a value, or a timed one without a time, is no sample.
            if values.is_null(i) || times.is_some_and(|t| t.is_null(i)) {
                continue;
            }
            self.times.push(times.map_or(0, |t| t.value(i)));
            self.values.push(values.value(i));
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (times, values): (&ListArray, &ListArray) = (states[0].as_list(), states[1].as_list());
        for i in 0..times.len() {
            if times.is_null(i) || values.is_null(i) {
                continue;
            }
            let (t, v) = (times.value(i), values.value(i));
            let (t, v) = (
                t.as_primitive::<datafusion::arrow::datatypes::Int64Type>(),
                v.as_primitive::<Float64Type>(),
            );
            self.times.extend(t.values().iter().copied());
            self.values.extend(v.values().iter().copied());
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let times: Vec<ScalarValue> = self
            .times
            .iter()
            .map(|&t| ScalarValue::Int64(Some(t)))
            .collect();
        let values: Vec<ScalarValue> = self
            .values
            .iter()
            .map(|&v| ScalarValue::Float64(Some(v)))
            .collect();
        Ok(vec![
            ScalarValue::List(ScalarValue::new_list_nullable(&times, &DataType::Int64)),
            ScalarValue::List(ScalarValue::new_list_nullable(&values, &DataType::Float64)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let mut samples: Vec<(i64, f64)> = self
            .times
            .iter()
            .copied()
            .zip(self.values.iter().copied())
            .collect();
        let stats = describe(&mut samples, None);
        if self.figure.name == COUNT {
            return Ok(ScalarValue::Int64(i64::try_from(stats.n).ok()));
        }
        Ok(ScalarValue::Float64((self.figure.read)(&stats)))
    }

    fn size(&self) -> usize {
        size_of_val(self)
            + self.times.capacity() * size_of::<i64>()
            + self.values.capacity() * size_of::<f64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{
        Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
    };
    use datafusion::arrow::datatypes::Schema;
    use datafusion::datasource::MemTable;
    use datafusion::prelude::SessionContext;

    /// Every function gives what the series core gives on the same samples, over two groups
    /// whose samples are spread over three partitions (so partial results are merged), with a
    /// NaN, a null and samples out of time order; bad arguments are refused with the usage.
    #[tokio::test]
    async fn the_functions_agree_with_the_series_core() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("series", DataType::Utf8, false),
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                false,
            ),
            Field::new("value", DataType::Float64, true),
        ]));
        // (series, seconds, value): "a" grows with a dip, "b" is steady then falls off a cliff.
        let mut rows: Vec<(&str, i64, Option<f64>)> = Vec::new();
        for i in 0..40i64 {
            let a = 100.0 + 3.0 * i as f64 - if i == 17 { 50.0 } else { 0.0 };
            let b = if i < 30 { 8.0 + (i % 3) as f64 } else { 0.5 };
            rows.push(("a", 600 - 10 * i, Some(a)));
            rows.push(("b", 10 * i, Some(b)));
        }
        rows.push(("a", 1000, Some(f64::NAN)));
        rows.push(("b", 1000, None));
        let batch = |part: &[(&str, i64, Option<f64>)]| {
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(StringArray::from_iter_values(part.iter().map(|r| r.0))),
                    Arc::new(
                        TimestampMicrosecondArray::from_iter_values(
                            part.iter().map(|r| r.1 * 1_000_000),
                        )
                        .with_timezone("UTC"),
                    ),
                    Arc::new(Float64Array::from_iter(part.iter().map(|r| r.2))),
                ],
            )
            .expect("batch")
        };
        let parts: Vec<Vec<RecordBatch>> = rows.chunks(29).map(|c| vec![batch(c)]).collect();
        assert_eq!(parts.len(), 3);
        let ctx = SessionContext::new();
        for f in all() {
            ctx.register_udaf(f);
        }
        ctx.register_table(
            "t",
            Arc::new(MemTable::try_new(schema.clone(), parts).expect("table")),
        )
        .expect("register");

        for figure in FIGURES {
            let call = if figure.timed {
                format!("{}(ts, value)", figure.name)
            } else {
                format!("{}(value)", figure.name)
            };
            let sql = format!("SELECT series, {call} AS x FROM t GROUP BY series ORDER BY series");
            let batches = ctx
                .sql(&sql)
                .await
                .expect(&sql)
                .collect()
                .await
                .expect(&sql);
            let mut got = Vec::new();
            for b in &batches {
                let x = cast(b.column(1), &DataType::Float64).expect("a number");
                let x = x.as_primitive::<Float64Type>();
                got.extend((0..b.num_rows()).map(|i| x.is_valid(i).then(|| x.value(i))));
            }
            let expected: Vec<Option<f64>> = ["a", "b"]
                .iter()
                .map(|s| {
                    let mut samples: Vec<(i64, f64)> = rows
                        .iter()
                        .filter(|r| r.0 == *s)
                        .filter_map(|r| {
                            // The untimed functions see no time (every sample at 0).
                            let t = if figure.timed { r.1 * 1_000_000 } else { 0 };
                            r.2.map(|v| (t, v))
                        })
                        .collect();
                    (figure.read)(&describe(&mut samples, None))
                })
                .collect();
            assert_eq!(got.len(), 2, "{sql}");
            for (g, e) in got.iter().zip(&expected) {
                match (g, e) {
                    (Some(g), Some(e)) => assert!(
                        (g - e).abs() <= 1e-9 * e.abs().max(1.0),
                        "{sql}: {g} != {e}"
                    ),
                    _ => assert_eq!(g, e, "{sql}"),
                }
            }
            assert!(
                expected.iter().all(Option::is_some),
                "{sql}: the data should define every figure"
            );
        }

        let bad = ctx.sql("SELECT js_slope_per_h(value) FROM t").await;
        assert!(bad.is_err_and(|e| e.to_string().contains("js_slope_per_h(time, value)")));
        let bad = ctx.sql("SELECT js_p95(series) FROM t").await;
        assert!(bad.is_err_and(|e| e.to_string().contains("js_p95(value) takes a number")));
    }
}
