//! What every stage's options share, below the stages: the error of one invalid value and the
//! checks most values need. A stage owns its `Options` (as written in the configuration file,
//! every key optional) and resolves them into its `Settings`; [`crate::config`] composes the
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

/// `value`, or `default` when unset; zero is an error.
pub fn positive(key: &str, value: Option<u64>, default: u64) -> Result<u64, Invalid> {
    match value.unwrap_or(default) {
        0 => Err(invalid(key, "must be greater than 0")),
        v => Ok(v),
    }
}
