//! How a value of a row becomes a cell of an Arrow column and is read back from a query's
//! result: the [`Column`] trait and its implementations for the value types rows use, and the
//! [`Cells`] a query's result is read through.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use datafusion::arrow::array::{
    ArrayRef, BooleanBuilder, Float64Builder, Int32Builder, StringBuilder,
    TimestampMicrosecondBuilder, UInt8Builder, UInt32Builder, UInt64Builder,
};
use datafusion::arrow::datatypes::{DataType, TimeUnit};

/// A value type of a column: its Arrow type, whether it may be null, and how a column of such
/// values becomes an array.
pub trait Column: Sized {
    const NULLABLE: bool;
    fn data_type() -> DataType;
    fn array<'a>(values: impl Iterator<Item = &'a Self>) -> ArrayRef
    where
        Self: 'a;
    /// The value of column `name` in row `i` of a query's result; a null, a missing column (a
    /// part written before the column existed) or a value out of the type's range reads as
    /// `None` for an optional column and as the type's default (empty, 0, false) for another.
    fn read(cells: &dyn Cells, name: &str, i: usize) -> Self;
}

/// A query's result read by column name, each cell as a plain type or `None`
/// (`query::Columns`). Rows are read back through it ([`Column::read`]).
pub trait Cells {
    fn text(&self, name: &str, i: usize) -> Option<String>;
    fn float(&self, name: &str, i: usize) -> Option<f64>;
    fn int(&self, name: &str, i: usize) -> Option<i64>;
    fn boolean(&self, name: &str, i: usize) -> Option<bool>;
    fn time(&self, name: &str, i: usize) -> Option<DateTime<Utc>>;
}

pub(super) fn time_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

/// Plain and optional columns of one Arrow builder type.
macro_rules! column {
    ($ty:ty, $builder:ty, $data_type:expr, |$b:ident, $v:ident| $append:expr, |$c:ident, $n:ident, $i:ident| $read:expr) => {
        impl Column for $ty {
            const NULLABLE: bool = false;
            fn data_type() -> DataType {
                $data_type
            }
            fn array<'a>(values: impl Iterator<Item = &'a Self>) -> ArrayRef {
                let mut $b = <$builder>::new();
                for $v in values {
                    $append;
                }
                Arc::new($b.finish())
            }
            fn read(cells: &dyn Cells, name: &str, i: usize) -> Self {
                <Option<$ty> as Column>::read(cells, name, i).unwrap_or_default()
            }
        }
        impl Column for Option<$ty> {
            const NULLABLE: bool = true;
            fn data_type() -> DataType {
                $data_type
            }
            fn read($c: &dyn Cells, $n: &str, $i: usize) -> Self {
                $read
            }
            fn array<'a>(values: impl Iterator<Item = &'a Self>) -> ArrayRef {
                let mut $b = <$builder>::new();
                for value in values {
                    match value {
                        Some($v) => $append,
                        None => $b.append_null(),
                    }
                }
                Arc::new($b.finish())
            }
        }
    };
}

column!(
    String,
    StringBuilder,
    DataType::Utf8,
    |b, v| b.append_value(v),
    |c, name, i| c.text(name, i)
);
column!(
    bool,
    BooleanBuilder,
    DataType::Boolean,
    |b, v| b.append_value(*v),
    |c, name, i| c.boolean(name, i)
);
column!(
    u8,
    UInt8Builder,
    DataType::UInt8,
    |b, v| b.append_value(*v),
    |c, name, i| c.int(name, i).and_then(|n| n.try_into().ok())
);
column!(
    u32,
    UInt32Builder,
    DataType::UInt32,
    |b, v| b.append_value(*v),
    |c, name, i| c.int(name, i).and_then(|n| n.try_into().ok())
);
column!(
    u64,
    UInt64Builder,
    DataType::UInt64,
    |b, v| b.append_value(*v),
    |c, name, i| c.int(name, i).and_then(|n| n.try_into().ok())
);
column!(
    i32,
    Int32Builder,
    DataType::Int32,
    |b, v| b.append_value(*v),
    |c, name, i| c.int(name, i).and_then(|n| n.try_into().ok())
);
column!(
    f64,
    Float64Builder,
    DataType::Float64,
    |b, v| b.append_value(*v),
    |c, name, i| c.float(name, i)
);

/// Timestamps: microseconds, UTC, as every time column of the warehouse.
impl Column for DateTime<Utc> {
    const NULLABLE: bool = false;
    fn data_type() -> DataType {
        time_type()
    }
    fn array<'a>(values: impl Iterator<Item = &'a Self>) -> ArrayRef {
        let mut b = TimestampMicrosecondBuilder::new().with_timezone("UTC");
        for v in values {
            b.append_value(v.timestamp_micros());
        }
        Arc::new(b.finish())
    }
    fn read(cells: &dyn Cells, name: &str, i: usize) -> Self {
        cells.time(name, i).unwrap_or_default()
    }
}

impl Column for Option<DateTime<Utc>> {
    const NULLABLE: bool = true;
    fn data_type() -> DataType {
        time_type()
    }
    fn array<'a>(values: impl Iterator<Item = &'a Self>) -> ArrayRef {
        let mut b = TimestampMicrosecondBuilder::new().with_timezone("UTC");
        for v in values {
            b.append_option(v.map(|t| t.timestamp_micros()));
        }
        Arc::new(b.finish())
    }
    fn read(cells: &dyn Cells, name: &str, i: usize) -> Self {
        cells.time(name, i)
    }
}

/// A time from microseconds since the epoch (what the features and models compute in); `None`
/// outside chrono's range.
pub fn from_micros(micros: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_micros(micros)
}
