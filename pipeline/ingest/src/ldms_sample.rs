//! One sample row of an LDMS CSV store file: the type shared by the parser (`ldms`), which makes
//! samples, and the shared-series derivation (`shared_series`), which reads them.
//!
//! It has a module of its own so that neither of those two needs the other: the parser uses the
//! derivation, and the derivation needs only this type. `ldms` re-exports it, so its public path
//! stays `ldms::Sample`.

/// One parsed sample row: time in microseconds, producer node, metric values in header order.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub ts_micros: i64,
    pub node: String,
    pub values: Vec<f64>,
}
