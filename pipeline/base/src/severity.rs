//! How serious a finding is: a leaf type shared by the stages that make findings (rules) and those
//! that report them (notify), so that neither depends on the other.

use serde::Deserialize;

/// Ordered: `Info < Warning < Critical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }

    /// The severity [`Severity::name`] names.
    pub fn parse(name: &str) -> Option<Severity> {
        [Severity::Info, Severity::Warning, Severity::Critical]
            .into_iter()
            .find(|s| s.name() == name)
    }
}
