//! The features' per-series statistics as SQL aggregate functions (`js_p95(value)`,
//! `js_slope_per_h(ts, value)`, ...), registered in every query session, so that `jobsight sql`
//! and `serve --pg` compute them on any selection of `telemetry`:
//!
//! ```sql
//! SELECT job_id, metric, js_p95(value), js_slope_per_h(ts, value)
//! FROM telemetry WHERE day = '2026-11-20' GROUP BY job_id, metric
//! ```
//!
//! Each function collects its group's samples and hands them to [`jobsight_base::series::describe`], the
//! core the features step computes every series with, so the two cannot disagree on a
//! definition (numpy's percentiles, population moments, NaN and infinities left out). What the
//! features step adds, and these do not, is trimming the series to the job's run (a `WHERE` on
//! `ts` does that here). The functions that depend on time order take the sample time first.
//!
//! This module holds the list of functions and the functions as DataFusion sees them (names,
//! argument types, state); [`output`] builds their answers, and [`accumulators`] collects each
//! group's samples.

mod accumulators;
mod output;

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, ListArray};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, TimeUnit};
use datafusion::common::{Result, ScalarValue, plan_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, GroupsAccumulator, Signature, Volatility,
};
use datafusion::physical_expr::expressions::Literal;

use jobsight_base::series::{PERCENTILES, Sample, SeriesStats};

use accumulators::{SeriesAccumulator, SeriesGroups};
use output::Output;

/// One figure of [`SeriesStats`] as a function: its SQL name, whether it takes the sample time
/// first, what it means (for `docs/sql.md`), and how it is read from the statistics.
#[derive(Debug, Clone, Copy)]
pub struct Figure {
    pub name: &'static str,
    pub timed: bool,
    pub meaning: &'static str,
    read: ReadFigure,
}

/// How a figure is read from a series' statistics.
type ReadFigure = fn(&SeriesStats) -> Option<f64>;

/// The one function whose answer is a whole number (SQL's `count(value)` counts NaN too).
const COUNT: &str = "js_count";

/// Every function, in the order `docs/sql.md` lists them.
pub const FIGURES: [Figure; 14] = [
    plain(
        COUNT,
        "finite samples (NaN and infinities left out, as by every js_ function)",
        |s| Some(s.n as f64),
    ),
    plain("js_std", "population standard deviation (divisor n)", |s| {
        s.std
    }),
    plain(
        "js_cv",
        "coefficient of variation, std / mean (null when the mean is 0)",
        |s| s.cv,
    ),
    plain(
        "js_skewness",
        "m3 / m2^1.5 (null for a constant series)",
        |s| s.skewness,
    ),
    plain(
        "js_kurtosis",
        "excess kurtosis, m4 / m2² − 3 (null for a constant series)",
        |s| s.kurtosis,
    ),
    plain(
        "js_p05",
        "5th percentile, linear interpolation at rank p × (n − 1) (numpy's default)",
        |s| s.percentiles[0],
    ),
    plain("js_p25", "25th percentile (as js_p05)", |s| {
        s.percentiles[1]
    }),
    plain("js_p50", "median (as js_p05)", |s| s.percentiles[2]),
    plain("js_p75", "75th percentile (as js_p05)", |s| {
        s.percentiles[3]
    }),
    plain("js_p95", "95th percentile (as js_p05)", |s| {
        s.percentiles[4]
    }),
    timed(
        "js_slope_per_h",
        "least-squares slope of the value on time, per hour (memory growth)",
        |s| s.slope_per_h,
    ),
    timed(
        "js_catastrophe",
        "tacc_stats' catastrophe: the lowest mean(after) / mean(before) over time splits",
        |s| s.catastrophe,
    ),
    timed(
        "js_max_rise",
        "largest increase from an earlier sample to a later one",
        |s| s.max_rise,
    ),
    timed(
        "js_interval_s",
        "median spacing of the samples in seconds",
        |s| s.interval_s,
    ),
];

/// A figure of the values alone.
const fn plain(name: &'static str, meaning: &'static str, read: ReadFigure) -> Figure {
    Figure {
        name,
        timed: false,
        meaning,
        read,
    }
}

/// A figure that reads the samples' times as well (`js_f(time, value)`).
const fn timed(name: &'static str, meaning: &'static str, read: ReadFigure) -> Figure {
    Figure {
        name,
        timed: true,
        meaning,
        read,
    }
}

// The percentile functions are the series core's percentiles, in its order.
const _: () = assert!(PERCENTILES.len() == 5);

/// The function that answers every figure at once, as a struct: what the `features` step
/// computes for a series, for a plan that computes features in SQL.
pub const DESCRIBE: &str = "js_describe";

/// The function that averages a series in bins of a constant width, for tacc_stats' node
/// imbalance in a plan that computes features in SQL: `js_bin_means(time, value, seconds)` gives
/// `{start_us: [...], mean: [...], n: [...]}`, the bins (aligned to the epoch, as `date_bin`) in
/// time order, each with its count of finite samples.
pub const BIN_MEANS: &str = "js_bin_means";

/// Every function, ready to register with a session.
pub fn all() -> Vec<AggregateUDF> {
    FIGURES
        .iter()
        .map(|&figure| Output::Figure(figure))
        .chain([Output::Describe, Output::BinMeans])
        .map(|output| AggregateUDF::from(SeriesFunction::new(output)))
        .collect()
}

/// One `js_` function.
#[derive(Debug)]
struct SeriesFunction {
    output: Output,
    signature: Signature,
}

impl SeriesFunction {
    fn new(output: Output) -> SeriesFunction {
        SeriesFunction {
            output,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }

    /// `js_bin_means`' bin width in microseconds, from its third argument, which must be a
    /// positive constant (every group is binned alike); 0 for the other functions.
    fn bin_us(&self, args: &AccumulatorArgs) -> Result<i64> {
        if !matches!(self.output, Output::BinMeans) {
            return Ok(0);
        }
        let seconds = args
            .exprs
            .get(2)
            .and_then(|e| e.downcast_ref::<Literal>())
            .and_then(|l| match l.value() {
                ScalarValue::Int64(Some(s)) => Some(*s),
                _ => None,
            });
        match seconds {
            Some(s) if s > 0 && s <= i64::MAX / 1_000_000 => Ok(s * 1_000_000),
            _ => plan_err!(
                "{}: the bin width must be a positive whole number of seconds, written as a constant",
                self.usage()
            ),
        }
    }

    fn usage(&self) -> String {
        if let Output::BinMeans = self.output {
            format!("{}(time, value, seconds)", self.output.name())
        } else if self.output.timed() {
            format!("{}(time, value)", self.output.name())
        } else {
            format!("{}(value)", self.output.name())
        }
    }
}

// DataFusion compares and hashes functions to tell two plans apart; a function is its name.
impl PartialEq for SeriesFunction {
    fn eq(&self, other: &Self) -> bool {
        self.output.name() == other.output.name()
    }
}
impl Eq for SeriesFunction {}
impl std::hash::Hash for SeriesFunction {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.output.name().hash(state);
    }
}

const TIME: DataType = DataType::Timestamp(TimeUnit::Microsecond, None);

fn list_field(item: DataType) -> FieldRef {
    Arc::new(Field::new_list_field(item, true))
}

impl AggregateUDFImpl for SeriesFunction {
    fn name(&self) -> &str {
        self.output.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    /// Values as doubles and times as microsecond timestamps; anything else is refused with the
    /// function's usage.
    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let is_value = |t: &DataType| t.is_numeric() || t.is_null();
        let is_time = |t: &DataType| matches!(t, DataType::Timestamp(..) | DataType::Null);
        if let Output::BinMeans = self.output {
            return match arg_types {
                [t, v, w] if is_time(t) && is_value(v) && w.is_integer() => {
                    Ok(vec![TIME, DataType::Float64, DataType::Int64])
                }
                _ => plan_err!(
                    "{} takes a timestamp, a number and a whole number of seconds, not ({})",
                    self.usage(),
                    arg_types
                        .iter()
                        .map(|t| t.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
        }
        match (self.output.timed(), arg_types) {
            (false, [v]) if is_value(v) => Ok(vec![DataType::Float64]),
            (true, [t, v])
                if matches!(t, DataType::Timestamp(..) | DataType::Null) && is_value(v) =>
            {
                Ok(vec![TIME, DataType::Float64])
            }
            _ => plan_err!(
                "{} takes {}, not ({})",
                self.usage(),
                if self.output.timed() {
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
        Ok(self.output.data_type())
    }

    /// The samples collected so far: their times (microseconds; 0 for the untimed functions)
    /// and values, so that partial aggregations can be merged.
    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![
            Arc::new(Field::new(
                format!("{}[times]", args.name),
                DataType::List(list_field(DataType::Int64)),
                true,
            )),
            Arc::new(Field::new(
                format!("{}[values]", args.name),
                DataType::List(list_field(DataType::Float64)),
                true,
            )),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(SeriesAccumulator::new(
            self.output,
            self.bin_us(&args)?,
        )))
    }

    fn groups_accumulator_supported(&self, _args: AccumulatorArgs) -> bool {
        true
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        Ok(Box::new(SeriesGroups::new(
            self.output,
            self.bin_us(&args)?,
        )))
    }
}

/// One group's samples, (time in microseconds, value), in arrival order: one push per row,
/// described in place at the end.
type Samples = Vec<Sample>;

/// Two list columns with a list per group of `lengths`: the groups' whole numbers (times, bin
/// starts) and their numbers (values, means), both flattened in group order.
fn paired_lists(
    whole: Vec<i64>,
    numbers: Vec<f64>,
    lengths: impl IntoIterator<Item = usize>,
) -> Result<Vec<ArrayRef>> {
    let offsets = OffsetBuffer::from_lengths(lengths);
    Ok(vec![
        Arc::new(ListArray::try_new(
            list_field(DataType::Int64),
            offsets.clone(),
            Arc::new(Int64Array::from(whole)),
            None,
        )?),
        Arc::new(ListArray::try_new(
            list_field(DataType::Float64),
            offsets,
            Arc::new(Float64Array::from(numbers)),
            None,
        )?),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{
        Array, AsArray, Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
    };
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::{Float64Type, Int64Type, Schema, TimestampMicrosecondType};
    use datafusion::datasource::MemTable;
    use datafusion::prelude::SessionContext;
    use jobsight_base::series::{BinMean, bin_means, describe};

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

        // js_describe: every figure of the core, numbers and times, per group.
        let sql =
            "SELECT series, js_describe(ts, value) AS d FROM t GROUP BY series ORDER BY series";
        let batches = ctx.sql(sql).await.expect(sql).collect().await.expect(sql);
        let described: Vec<(String, SeriesStats)> = batches
            .iter()
            .flat_map(|b| {
                let names = b.column(0).as_string::<i32>().clone();
                let d = b.column(1).as_struct().clone();
                (0..b.num_rows()).map(move |i| (names.value(i).to_string(), d.slice(i, 1)))
            })
            .map(|(name, d)| {
                let number = |field: &str| {
                    let c = cast(d.column_by_name(field).expect(field), &DataType::Float64)
                        .expect(field);
                    let c = c.as_primitive::<Float64Type>();
                    c.is_valid(0).then(|| c.value(0))
                };
                let time = |field: &str| {
                    let c = d
                        .column_by_name(field)
                        .expect(field)
                        .as_primitive::<TimestampMicrosecondType>();
                    c.is_valid(0).then(|| c.value(0))
                };
                let stats = SeriesStats {
                    n: number("n").map_or(0, |n| n as u64),
                    n_nonfinite: number("n_nonfinite").map_or(0, |n| n as u64),
                    min: number("min"),
                    max: number("max"),
                    mean: number("mean"),
                    std: number("std"),
                    cv: number("cv"),
                    skewness: number("skewness"),
                    kurtosis: number("kurtosis"),
                    percentiles: ["p05", "p25", "p50", "p75", "p95"].map(number),
                    interval_s: number("interval_s"),
                    slope_per_h: number("slope_per_h"),
                    catastrophe: number("catastrophe"),
                    max_rise: number("max_rise"),
                    rise_from: time("rise_from"),
                    rise_to: time("rise_to"),
                    cliff_at: time("cliff_at"),
                    idle_share: None,
                };
                (name, stats)
            })
            .collect();
        let expected: Vec<(String, SeriesStats)> = ["a", "b"]
            .iter()
            .map(|s| {
                let mut samples: Vec<(i64, f64)> = rows
                    .iter()
                    .filter(|r| r.0 == *s)
                    .filter_map(|r| r.2.map(|v| (r.1 * 1_000_000, v)))
                    .collect();
                (s.to_string(), describe(&mut samples, None))
            })
            .collect();
        // The struct carries the core's numbers through Arrow unchanged, bit for bit.
        assert_eq!(format!("{described:?}"), format!("{expected:?}"));
        assert_eq!(expected[0].1.n_nonfinite, 1, "the NaN is counted, not used");

        // A whole-table aggregate takes DataFusion's other path (one accumulator).
        let sql = "SELECT js_p95(value) AS x FROM t WHERE series = 'a'";
        let batches = ctx.sql(sql).await.expect(sql).collect().await.expect(sql);
        let x = batches[0].column(0).as_primitive::<Float64Type>().value(0);
        assert_eq!(Some(x), expected[0].1.percentiles[4]);

        // js_bin_means: the core's bin means (time order, NaN left out) per group, on the
        // grouped path and the whole-table one; the width must be a positive constant.
        for sql in [
            "SELECT series, js_bin_means(ts, value, 60) AS b FROM t GROUP BY series ORDER BY series",
            "SELECT 'a' AS series, js_bin_means(ts, value, 60) AS b FROM t WHERE series = 'a'",
        ] {
            let batches = ctx.sql(sql).await.expect(sql).collect().await.expect(sql);
            let mut got: Vec<(String, Vec<(i64, BinMean)>)> = Vec::new();
            for b in &batches {
                let names = cast(b.column(0), &DataType::Utf8).expect("names");
                let names = names.as_string::<i32>();
                let bins = b.column(1).as_struct();
                let (starts, means, counts) = (
                    bins.column(0).as_list::<i32>(),
                    bins.column(1).as_list::<i32>(),
                    bins.column(2).as_list::<i32>(),
                );
                for i in 0..b.num_rows() {
                    let starts = starts.value(i);
                    let means = means.value(i);
                    let counts = counts.value(i);
                    let pairs = (0..starts.len())
                        .map(|k| {
                            (
                                starts.as_primitive::<Int64Type>().value(k),
                                BinMean {
                                    mean: means.as_primitive::<Float64Type>().value(k),
                                    n: counts.as_primitive::<Int64Type>().value(k) as u64,
                                },
                            )
                        })
                        .collect();
                    got.push((names.value(i).to_string(), pairs));
                }
            }
            for (name, pairs) in &got {
                let mut samples: Vec<(i64, f64)> = rows
                    .iter()
                    .filter(|r| r.0 == name)
                    .filter_map(|r| r.2.map(|v| (r.1 * 1_000_000, v)))
                    .collect();
                samples.sort_by_key(|s| s.0);
                let expected: Vec<(i64, BinMean)> =
                    bin_means(&samples, 60_000_000).into_iter().collect();
                assert_eq!(pairs, &expected, "{sql}: {name}");
                assert!(pairs.len() >= 7, "{sql}: {name}");
            }
            assert!(!got.is_empty(), "{sql}");
        }
        for bad in [
            "SELECT js_bin_means(ts, value, 0) FROM t",
            "SELECT js_bin_means(ts, value, CAST(length(series) AS BIGINT)) FROM t",
        ] {
            let refused = match ctx.sql(bad).await {
                Err(e) => e.to_string(),
                Ok(frame) => frame
                    .collect()
                    .await
                    .map_or_else(|e| e.to_string(), |_| String::new()),
            };
            assert!(
                refused.contains("positive whole number of seconds"),
                "{bad}: {refused}"
            );
        }

        let bad = ctx.sql("SELECT js_slope_per_h(value) FROM t").await;
        assert!(bad.is_err_and(|e| e.to_string().contains("js_slope_per_h(time, value)")));
        let bad = ctx.sql("SELECT js_p95(series) FROM t").await;
        assert!(bad.is_err_and(|e| e.to_string().contains("js_p95(value) takes a number")));
    }
}
