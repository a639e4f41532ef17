// this module has been ported from https://github.com/smartcorelib/smartcore/pull/108

/// Base `Number` from `std` and `num-traits`
pub mod basenum;

/// implementation for `RealNumber`
pub mod realnum;

/// implementation for `FloatNumber`
pub mod floatnum;
