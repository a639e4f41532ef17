//! Model files: versioned, self-describing, checked on load.
//!
//! A model file has two lines. The first is a JSON header: the format name and version, the kind
//! of model, when and by which jobsight and smartcore it was made, the window it expects, its
//! features and classes, a summary of the training data, its evaluation figures and feature
//! importance, and the length and FNV-1a checksum of the second line. The second line is the
//! fitted model itself (JSON). The header alone is enough for `jobsight model info`, and a file
//! that was cut short or edited fails the checksum with a message that says so instead of
//! predicting nonsense.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::evaluate::Scores;
use super::forest::{Forest, ForestParams, Prepared};
use super::namer::Namer;
use super::unsupervised::{AnomalyScore, ScoreParams};
use super::{Kind, ModelError};

/// The first line's `format`.
pub const FORMAT: &str = "jobsight-model";
/// Bumped whenever the body's layout changes; older files must be retrained.
pub const FORMAT_VERSION: u32 = 1;
pub use jobsight_base::SMARTCORE_VERSION;

/// The training data, summarised.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainingSummary {
    pub data: String,
    pub labels_from: String,
    pub days: Vec<String>,
    pub jobs: usize,
    pub windows: usize,
    /// Windows per class.
    pub per_class: Vec<(String, u64)>,
    /// Labelled jobs left out because their label is neither healthy nor an anomaly type.
    pub other_jobs: usize,
    /// Windows left out by the protocol (straddling an interval's edge or two intervals).
    pub dropped_windows: usize,
    pub seconds: f64,
    /// Refining rounds asked for, and the training windows they set aside (files from before
    /// refining load with 0 and 0, as they were trained).
    #[serde(default)]
    pub refine: u8,
    #[serde(default)]
    pub set_aside: usize,
    /// The anomaly score's application baselines: each application's cut on the score and the
    /// runs it was learned from (empty in files from before baselines).
    #[serde(default)]
    pub baselines: Vec<(String, f64, usize)>,
}

/// One feature's permutation importance: how much macro F1 drops on held-out windows when its
/// values are shuffled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Importance {
    /// The metric whose features were shuffled together (a feature name in files made before
    /// importance was taken per metric).
    pub feature: String,
    pub f1_drop: f64,
}

/// The first line of a model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub format_version: u32,
    pub kind: Kind,
    pub created: String,
    pub jobsight_version: String,
    pub smartcore_version: String,
    pub window_s: i64,
    pub stride_s: i64,
    pub features: Vec<String>,
    /// The metrics the features come from: a job's node without one of them is not judged.
    pub metrics: Vec<String>,
    /// Diagnosis: the classes, healthy first. Unsupervised: empty.
    pub classes: Vec<String>,
    pub unknown_below: Option<f64>,
    /// Diagnosis: the features of its second forest, which names what the first calls
    /// anomalous ([`super::namer`]); none without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_features: Option<super::dataset::FeatureSet>,
    pub forest: Option<ForestParams>,
    pub score: Option<ScoreParams>,
    pub training: TrainingSummary,
    /// On a by-job hold-out of the training jobs, before the final fit on all of them.
    pub evaluation: Option<Scores>,
    pub importance: Vec<Importance>,
    pub body_bytes: u64,
    pub body_fnv1a: String,
}

/// The second line.
#[derive(Debug, Serialize, Deserialize)]
pub enum Body {
    Diagnosis {
        prepared: Prepared,
        forest: Forest,
        /// The second forest that names what the first calls anomalous (none in files from
        /// before it, nor when trained without one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namer: Option<Namer>,
    },
    Unsupervised(AnomalyScore),
}

/// A loaded model.
#[derive(Debug)]
pub struct ModelFile {
    pub header: Header,
    pub body: Body,
}

pub use jobsight_base::stats::fnv1a;

impl ModelFile {
    /// Writes the file atomically (a temporary name, then a rename).
    pub fn save(mut self, path: &Path) -> Result<ModelFile, ModelError> {
        let body = serde_json::to_string(&self.body)
            .map_err(|e| ModelError::write(path, format!("cannot encode the model: {e}")))?;
        self.header.body_bytes = body.len() as u64;
        self.header.body_fnv1a = fnv1a(body.as_bytes());
        let header = serde_json::to_string(&self.header)
            .map_err(|e| ModelError::write(path, format!("cannot encode the header: {e}")))?;
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut file =
            tempfile::NamedTempFile::new_in(dir).map_err(|e| ModelError::write(path, e))?;
        use std::io::Write;
        file.write_all(header.as_bytes())
            .and_then(|()| file.write_all(b"\n"))
            .and_then(|()| file.write_all(body.as_bytes()))
            .and_then(|()| file.write_all(b"\n"))
            .map_err(|e| ModelError::write(path, e))?;
        file.persist(path)
            .map_err(|e| ModelError::write(path, e.error))?;
        Ok(self)
    }

    /// Reads only the header (the first line; the body is not read).
    pub fn header(path: &Path) -> Result<Header, ModelError> {
        use std::io::BufRead;
        let file = std::fs::File::open(path).map_err(|e| ModelError::read(path, e))?;
        let mut line = Vec::new();
        std::io::BufReader::new(file)
            .read_until(b'\n', &mut line)
            .map_err(|e| ModelError::read(path, e))?;
        let (header, _) = split(path, &line)?;
        Ok(header)
    }

    /// Reads and checks a model file; `expected` is the kind the caller needs.
    pub fn load(path: &Path, expected: Option<Kind>) -> Result<ModelFile, ModelError> {
        let text = std::fs::read(path).map_err(|e| ModelError::read(path, e))?;
        let (header, body) = split(path, &text)?;
        if let Some(kind) = expected
            && kind != header.kind
        {
            return Err(ModelError::Invalid {
                path: path.to_path_buf(),
                reason: format!(
                    "it is a {} model; this needs a {} model",
                    header.kind.name(),
                    kind.name()
                ),
            });
        }
        let body_text = body.strip_suffix(b"\n").unwrap_or(body);
        if body_text.len() as u64 != header.body_bytes || fnv1a(body_text) != header.body_fnv1a {
            return Err(ModelError::Invalid {
                path: path.to_path_buf(),
                reason: format!(
                    "the model body is damaged ({} bytes, checksum {}; the header says {} bytes, checksum {}): the file was cut short or edited; train it again",
                    body_text.len(),
                    fnv1a(body_text),
                    header.body_bytes,
                    header.body_fnv1a
                ),
            });
        }
        let body: Body = serde_json::from_slice(body_text).map_err(|e| ModelError::Invalid {
            path: path.to_path_buf(),
            reason: format!("the model body cannot be read: {e}"),
        })?;
        let features = match &body {
            Body::Diagnosis {
                prepared, namer, ..
            } => super::namer::features(prepared, namer.as_ref()),
            Body::Unsupervised(score) => score.features.clone(),
        };
        if features != header.features {
            return Err(ModelError::Invalid {
                path: path.to_path_buf(),
                reason: "the header's features do not match the model's".into(),
            });
        }
        Ok(ModelFile { header, body })
    }
}

fn split<'a>(path: &Path, text: &'a [u8]) -> Result<(Header, &'a [u8]), ModelError> {
    let invalid = |reason: String| ModelError::Invalid {
        path: path.to_path_buf(),
        reason,
    };
    let end = text.iter().position(|&b| b == b'\n').unwrap_or(text.len());
    let value: serde_json::Value = serde_json::from_slice(&text[..end]).map_err(|e| {
        invalid(format!(
            "not a jobsight model file: its first line is not a JSON header ({e})"
        ))
    })?;
    if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err(invalid(format!(
            "not a jobsight model file: the header's format is not \"{FORMAT}\""
        )));
    }
    let version = value.get("format_version").and_then(|v| v.as_u64());
    if version != Some(u64::from(FORMAT_VERSION)) {
        return Err(invalid(format!(
            "written in model format {}, and this jobsight reads format {FORMAT_VERSION}: train the model again with `jobsight model train`",
            version.map_or("(none)".to_string(), |v| v.to_string())
        )));
    }
    let header: Header = serde_json::from_value(value)
        .map_err(|e| invalid(format!("the header cannot be read: {e}")))?;
    Ok((header, text.get(end + 1..).unwrap_or(&[])))
}
