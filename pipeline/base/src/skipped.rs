//! Input that was not imported, with where and why: every importer (the telemetry sources, the
//! workflow traces) reports these instead of dropping anything silently. A leaf below the stages,
//! so that each stage can report in the same form without calling another.

use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub file: PathBuf,
    /// 1-based line number; 0 when the problem concerns the whole file or run.
    pub line: usize,
    pub reason: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.reason)
    }
}
