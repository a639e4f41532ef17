//! The rule book's one error: a rule file that cannot be read, or a definition in it that is
//! invalid, with the file, the line and what is wrong.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("cannot read rule directory {path}: {source}")]
    ReadDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read rule file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{file} line {line}: {message}")]
    Invalid {
        file: String,
        line: usize,
        message: String,
    },
}
