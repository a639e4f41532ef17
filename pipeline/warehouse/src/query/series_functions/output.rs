//! What each `js_` function answers, and how: one figure of the series core's statistics, all of
//! them as a struct (`js_describe`), or the bin means as a struct of lists (`js_bin_means`), each
//! with its Arrow type and the Arrow column built from the groups' samples.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, Float64Array, Int64Array, ListArray, StructArray, TimestampMicrosecondArray,
};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::datatypes::{DataType, Field, Fields, TimeUnit};
use datafusion::common::{Result, internal_err};

use jobsight_base::series::{SeriesStats, bin_means, describe};

use super::{BIN_MEANS, COUNT, DESCRIBE, FIGURES, Figure, Samples, list_field, paired_lists};

/// What a function answers: one figure, all of them (`js_describe`), or the bin means
/// (`js_bin_means`).
#[derive(Debug, Clone, Copy)]
pub(super) enum Output {
    Figure(Figure),
    Describe,
    BinMeans,
}

/// How a time (microseconds since the epoch) is read from a series' statistics.
type ReadTime = fn(&SeriesStats) -> Option<i64>;

/// The figures of `js_describe` that are times rather than numbers.
const DESCRIBE_TIMES: [(&str, ReadTime); 3] = [
    ("rise_from", |s| s.rise_from),
    ("rise_to", |s| s.rise_to),
    ("cliff_at", |s| s.cliff_at),
];

/// `js_bin_means`' answer: each bin's start (microseconds since the epoch), mean and count.
fn bin_means_fields() -> Fields {
    Fields::from(vec![
        Field::new(
            "start_us",
            DataType::List(list_field(DataType::Int64)),
            true,
        ),
        Field::new("mean", DataType::List(list_field(DataType::Float64)), true),
        Field::new("n", DataType::List(list_field(DataType::Int64)), true),
    ])
}

fn describe_fields() -> Fields {
    let mut fields = vec![
        Field::new("n", DataType::Int64, true),
        Field::new("n_nonfinite", DataType::Int64, true),
    ];
    for name in ["min", "max", "mean"] {
        fields.push(Field::new(name, DataType::Float64, true));
    }
    // The figures of FIGURES after js_count, by their names without `js_`.
    for figure in &FIGURES[1..] {
        let name = figure.name.trim_start_matches("js_");
        fields.push(Field::new(name, DataType::Float64, true));
    }
    for (name, _) in DESCRIBE_TIMES {
        fields.push(Field::new(
            name,
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ));
    }
    Fields::from(fields)
}

impl Output {
    pub(super) fn name(&self) -> &'static str {
        match self {
            Output::Figure(f) => f.name,
            Output::Describe => DESCRIBE,
            Output::BinMeans => BIN_MEANS,
        }
    }

    pub(super) fn timed(&self) -> bool {
        match self {
            Output::Figure(f) => f.timed,
            Output::Describe | Output::BinMeans => true,
        }
    }

    pub(super) fn data_type(&self) -> DataType {
        match self {
            Output::Figure(f) if f.name == COUNT => DataType::Int64,
            Output::Figure(_) => DataType::Float64,
            Output::Describe => DataType::Struct(describe_fields()),
            Output::BinMeans => DataType::Struct(bin_means_fields()),
        }
    }

    /// The answer for each group, from its samples (described, or averaged in bins of
    /// `bin_us`), each group dropped as soon as it is done.
    pub(super) fn answer(&self, groups: Vec<Samples>, bin_us: i64) -> Result<ArrayRef> {
        if let Output::BinMeans = self {
            let (mut starts, mut means, mut counts, mut lengths) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for mut group in groups {
                // In time order, as the features step sums them.
                group.sort_by_key(|s| s.0);
                let bins = bin_means(&group, bin_us);
                lengths.push(bins.len());
                for (start, bin) in bins {
                    starts.push(start);
                    means.push(bin.mean);
                    counts.push(bin.n as i64);
                }
            }
            let offsets = OffsetBuffer::from_lengths(lengths.iter().copied());
            let mut columns = paired_lists(starts, means, lengths)?;
            columns.push(Arc::new(ListArray::try_new(
                list_field(DataType::Int64),
                offsets,
                Arc::new(Int64Array::from(counts)),
                None,
            )?));
            return Ok(Arc::new(StructArray::try_new(
                bin_means_fields(),
                columns,
                None,
            )?));
        }
        let stats: Vec<SeriesStats> = groups
            .into_iter()
            .map(|mut group| describe(&mut group, None))
            .collect();
        self.build(&stats)
    }

    /// The answer for each group, from its statistics.
    fn build(&self, stats: &[SeriesStats]) -> Result<ArrayRef> {
        let numbers = |read: fn(&SeriesStats) -> Option<f64>| -> ArrayRef {
            Arc::new(Float64Array::from_iter(stats.iter().map(read)))
        };
        let counts = |read: fn(&SeriesStats) -> u64| -> ArrayRef {
            Arc::new(Int64Array::from_iter(
                stats.iter().map(|s| i64::try_from(read(s)).ok()),
            ))
        };
        Ok(match self {
            Output::Figure(f) if f.name == COUNT => counts(|s| s.n),
            Output::Figure(f) => numbers(f.read),
            Output::BinMeans => return internal_err!("js_bin_means is not built from statistics"),
            Output::Describe => {
                let mut columns = vec![
                    counts(|s| s.n),
                    counts(|s| s.n_nonfinite),
                    numbers(|s| s.min),
                    numbers(|s| s.max),
                    numbers(|s| s.mean),
                ];
                columns.extend(FIGURES[1..].iter().map(|f| numbers(f.read)));
                for (_, read) in DESCRIBE_TIMES {
                    columns.push(Arc::new(
                        TimestampMicrosecondArray::from_iter(stats.iter().map(read))
                            .with_timezone("UTC"),
                    ));
                }
                Arc::new(StructArray::try_new(describe_fields(), columns, None)?)
            }
        })
    }
}
