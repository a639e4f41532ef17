//! `[model]` of the configuration file: the [`Options`] as written (every key optional, unknown
//! keys refused) and the models a site runs, resolved into [`Settings`] (none by default). The
//! application's `config` composes this section with the others' into one file.

use std::path::PathBuf;

use jobsight_base::options::{Invalid, within};
use serde::Deserialize;

use super::predict::{DEFAULT_MIN_WINDOWS, WINDOWS_AT_A_TIME};

/// `[model]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// A diagnosis model file (`jobsight model train --kind diagnosis`).
    pub diagnosis: Option<PathBuf>,
    /// An anomaly-score model file (`jobsight model train --kind unsupervised`).
    pub unsupervised: Option<PathBuf>,
    /// A workflow model file (`jobsight model train --workflows`), applied by the nightly
    /// `workflow-score` step.
    pub workflow: Option<PathBuf>,
    /// Windows of one anomaly type a node needs before it gets that verdict.
    pub min_windows: Option<usize>,
    /// Windows the models judge at a time (whole jobs): what their inputs take in memory.
    pub windows_at_a_time: Option<u64>,
}

/// The models a site runs (none by default).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub diagnosis: Option<PathBuf>,
    pub unsupervised: Option<PathBuf>,
    pub workflow: Option<PathBuf>,
    pub min_windows: usize,
    pub windows_at_a_time: usize,
}

impl Options {
    /// The window, `(width, stride)` in seconds, that the configured window models were trained
    /// on (the diagnosis model's, else the anomaly score's), read from the model file's header;
    /// the evaluation protocol's 60 s every 15 s when no header can be read, in which case
    /// loading the model reports what is wrong with it. `None` when the site runs no window
    /// model.
    pub fn trained_window(&self) -> Option<(u64, u64)> {
        if self.diagnosis.is_none() && self.unsupervised.is_none() {
            return None;
        }
        let trained = [&self.diagnosis, &self.unsupervised]
            .into_iter()
            .flatten()
            .find_map(|path| super::file::ModelFile::header(path).ok());
        Some(match trained {
            Some(h) if h.window_s > 0 && h.stride_s > 0 => (h.window_s as u64, h.stride_s as u64),
            _ => (60, 15),
        })
    }

    /// Fills in the defaults and checks every value.
    pub fn resolve(self) -> Result<Settings, Invalid> {
        Ok(Settings {
            diagnosis: self.diagnosis,
            unsupervised: self.unsupervised,
            workflow: self.workflow,
            min_windows: within(
                "model.min_windows",
                self.min_windows.map(|m| m as u64),
                DEFAULT_MIN_WINDOWS as u64,
                1..=1_000_000,
            )? as usize,
            windows_at_a_time: within(
                "model.windows_at_a_time",
                self.windows_at_a_time,
                WINDOWS_AT_A_TIME as u64,
                1..=100_000_000,
            )? as usize,
        })
    }
}
