//! Where the rule files come from: the built-in ones, compiled in, and a site directory's,
//! layered so that a site file with a built-in file's name replaces it.

use std::path::{Path, PathBuf};

use super::error::RulesError;

/// The rule files shipped with jobsight: (file name, text).
pub const BUILT_IN: [(&str, &str); 6] = [
    ("metrics.toml", include_str!("../../book/metrics.toml")),
    (
        "thresholds.toml",
        include_str!("../../book/thresholds.toml"),
    ),
    ("classes.toml", include_str!("../../book/classes.toml")),
    ("method.toml", include_str!("../../book/method.toml")),
    (
        "production.toml",
        include_str!("../../book/production.toml"),
    ),
    // Last: its rules name the finished-job rules they stand for (`at_end`).
    ("running.toml", include_str!("../../book/running.toml")),
];

/// One input file.
#[derive(Debug, Clone)]
pub struct Source {
    /// How messages name it: `built-in:method.toml` or a path.
    pub label: String,
    pub name: String,
    pub text: String,
}

/// The `*.toml` files of a site directory, by name.
pub fn site_sources(dir: &Path) -> Result<Vec<Source>, RulesError> {
    let entries = std::fs::read_dir(dir).map_err(|source| RulesError::ReadDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml") && p.is_file())
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).map_err(|source| RulesError::Read {
                path: path.clone(),
                source,
            })?;
            Ok(Source {
                label: path.display().to_string(),
                name: path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                text,
            })
        })
        .collect()
}

/// The built-in files, with those a site file of the same name replaces left out, then the site
/// files.
pub fn layered_sources(site: Option<&Path>) -> Result<Vec<Source>, RulesError> {
    let site = match site {
        Some(dir) => site_sources(dir)?,
        None => Vec::new(),
    };
    let mut sources: Vec<Source> = BUILT_IN
        .iter()
        .filter(|(name, _)| !site.iter().any(|s| s.name == *name))
        .map(|(name, text)| Source {
            label: format!("built-in:{name}"),
            name: name.to_string(),
            text: text.to_string(),
        })
        .collect();
    sources.extend(site);
    Ok(sources)
}
