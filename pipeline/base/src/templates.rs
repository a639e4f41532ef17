//! The error of a template, which every crate that hands templates to the render crate can name. The engine itself, minijinja with its escaping rules
//! and site overrides, is the render crate's (`jobsight_render::templates`): only that crate
//! renders what a person reads.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("template {path}{}: {reason}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
pub struct TemplateError {
    /// The site's file, or the built-in template's name.
    pub path: PathBuf,
    pub line: Option<usize>,
    pub reason: String,
}
