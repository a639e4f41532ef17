//! The labels file of a directory of runs (the HPAS labels format): which anomaly each run had,
//! and when, in seconds after the run's first sample.

use std::path::Path;

use super::LdmsError;

/// One labelled anomaly of a run, from the labels file.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLabel {
    pub job_id: String,
    pub run_dir: String,
    pub app: String,
    pub anomaly: String,
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    pub params: Option<String>,
}

/// The largest labels file read (one line per run: a million runs fit).
pub const MAX_LABELS_BYTES: u64 = 256 << 20;

/// Reads `job_id,run_dir,app,mode,anomaly,start_s,end_s,params` (the HPAS labels format).
pub fn read_labels(path: &Path) -> Result<Vec<RunLabel>, LdmsError> {
    let text = match jobsight_base::safe_fs::read_text_at_most(
        path,
        jobsight_base::safe_fs::Links::Follow,
        MAX_LABELS_BYTES,
    ) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
            return Err(LdmsError::Labels {
                path: path.to_path_buf(),
                line: 0,
                reason: format!(
                    "larger than {MAX_LABELS_BYTES} bytes, the most a labels file may have"
                ),
            });
        }
        Err(source) => {
            return Err(LdmsError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut labels = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let fail = |reason: String| LdmsError::Labels {
            path: path.to_path_buf(),
            line: index + 1,
            reason,
        };
        let fields: Vec<&str> = line.split(',').collect();
        if index == 0 {
            if fields.len() < 7
                || fields[0] != "job_id"
                || fields[1] != "run_dir"
                || fields[4] != "anomaly"
            {
                return Err(fail(
                    "expected the header job_id,run_dir,app,mode,anomaly,start_s,end_s,params"
                        .into(),
                ));
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        if fields.len() < 7 {
            return Err(fail(format!(
                "expected at least 7 fields, found {}",
                fields.len()
            )));
        }
        let seconds = |s: &str| -> Result<Option<f64>, LdmsError> {
            if s.is_empty() {
                return Ok(None);
            }
            // Offsets from the run's first sample: finite, not negative, within 100 years.
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && (0.0..=3.2e9).contains(v))
                .map(Some)
                .ok_or_else(|| {
                    fail(format!(
                        "not a number of seconds between 0 and 3.2e9: {s:?}"
                    ))
                })
        };
        if fields[0].is_empty() || fields[1].trim_end_matches('/').is_empty() {
            return Err(fail("job_id and run_dir must not be empty".into()));
        }
        labels.push(RunLabel {
            job_id: fields[0].to_string(),
            run_dir: fields[1].trim_end_matches('/').to_string(),
            app: fields[2].to_string(),
            anomaly: fields[4].to_string(),
            start_s: seconds(fields[5])?,
            end_s: seconds(fields[6])?,
            params: fields
                .get(7)
                .filter(|p| !p.is_empty())
                .map(|p| p.to_string()),
        });
    }
    Ok(labels)
}
