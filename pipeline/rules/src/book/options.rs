//! A rule file as written: every table and key of the TOML, all checked by serde against
//! unknown keys, with the spans that let `check` name the line of a bad definition. Nothing here
//! is validated beyond its type; `check` turns these into the book's definitions.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use jobsight_base::severity::Severity;

use super::definitions::{Group, LimitOptions, Per, Sharing};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileOptions {
    #[serde(default)]
    pub(super) rule: Vec<Spanned<RuleOptions>>,
    #[serde(default)]
    pub(super) class: Vec<Spanned<ClassOptions>>,
    #[serde(default)]
    pub(super) metric: Vec<Spanned<MetricOptions>>,
    #[serde(default)]
    pub(super) characteristic: Vec<Spanned<CharacteristicOptions>>,
    #[serde(default)]
    pub(super) limits: BTreeMap<String, LimitOptions>,
    #[serde(default)]
    pub(super) cluster: BTreeMap<String, ScopeOptions>,
    #[serde(default)]
    pub(super) partition: BTreeMap<String, ScopeOptions>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RuleOptions {
    pub(super) id: String,
    pub(super) title: String,
    pub(super) group: Group,
    pub(super) severity: Severity,
    #[serde(default)]
    pub(super) per: Per,
    pub(super) min_run_s: Option<u64>,
    pub(super) dwell_s: Option<u64>,
    pub(super) at_end: Option<String>,
    #[serde(default)]
    pub(super) partitions: Vec<String>,
    #[serde(default)]
    pub(super) nodes: Sharing,
    #[serde(default)]
    pub(super) requires: Vec<String>,
    pub(super) needs_telemetry: Option<bool>,
    #[serde(default, rename = "let")]
    pub(super) lets: BTreeMap<String, Spanned<String>>,
    pub(super) when: Spanned<String>,
    pub(super) what: Spanned<String>,
    #[serde(default)]
    pub(super) why: Vec<String>,
    pub(super) fix: Spanned<String>,
    #[serde(default)]
    pub(super) tools: Vec<String>,
    pub(super) window: Option<Spanned<String>>,
    pub(super) anomaly: Option<String>,
    #[serde(default)]
    pub(super) disabled: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClassOptions {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) description: String,
    pub(super) needs_telemetry: Option<bool>,
    pub(super) when: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MetricOptions {
    pub(super) name: String,
    pub(super) description: String,
    pub(super) sources: Vec<SourceOptions>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SourceOptions {
    pub(super) metric: String,
    #[serde(default = "one")]
    pub(super) scale: f64,
}

fn one() -> f64 {
    1.0
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CharacteristicOptions {
    pub(super) name: String,
    pub(super) title: String,
    /// Whose limits (`[limits.<name>]`) mark the value low / high.
    pub(super) limits: String,
    pub(super) value: Spanned<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScopeOptions {
    #[serde(default)]
    pub(super) limits: BTreeMap<String, LimitOptions>,
}
