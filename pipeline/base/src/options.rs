//! What every stage's options share, below the stages: the error of one invalid value and the
//! checks every number needs. A stage owns its `Options` (as written in the configuration file,
//! every key optional) and resolves them into its `Settings`; the application's `config` composes the
//! stages' options into one file and names the file in the error.

/// One value that cannot be used: the key as written in the configuration file
/// (`ingest.retry_max_s`) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct Invalid {
    pub key: String,
    pub reason: String,
}

pub fn invalid(key: &str, reason: impl Into<String>) -> Invalid {
    Invalid {
        key: key.to_string(),
        reason: reason.into(),
    }
}

/// `value`, or `default` when unset, if it lies in `range`; outside it is an error that gives the
/// range. Every number of the configuration has one, checked once at load, so that nothing later
/// (durations, date arithmetic, loops over bins or windows) meets a value it cannot handle.
pub fn within(
    key: &str,
    value: Option<u64>,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, Invalid> {
    let v = value.unwrap_or(default);
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(invalid(
            key,
            format!("{v} is outside {}..={}", range.start(), range.end()),
        ))
    }
}

/// A day in seconds, for the ranges.
pub const DAY_S: u64 = 86_400;
