//! `[rules]` of the configuration file: the [`Options`] as written (every key optional, unknown
//! keys refused) and their resolution into the stage's [`Settings`], each value checked and named
//! by its key when it is wrong. The application's `config` composes this section with the
//! others' into one file.

use std::path::PathBuf;

use jobsight_base::options::{DAY_S, Invalid, within};
use serde::Deserialize;

use super::{DEFAULT_HISTORY_DAYS, DEFAULT_HISTORY_RUNS, DEFAULT_MIN_RUN_S, Settings};

/// `[rules]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// Site rule files layered over the built-in ones.
    pub dir: Option<PathBuf>,
    pub min_run_s: Option<u64>,
    /// How far back a job's earlier runs are looked for, in days.
    pub history_days: Option<u64>,
    /// The newest earlier runs of the same application a job is compared with (0: off).
    pub history_runs: Option<u64>,
}

impl Options {
    /// Fills in the defaults and checks every value; `cores_per_node` is the features'
    /// (`features.cores_per_node`), which the rules read as `job.cores_per_node`.
    pub fn resolve(self, cores_per_node: Option<u32>) -> Result<Settings, Invalid> {
        Ok(Settings {
            dir: self.dir,
            min_run_s: within(
                "rules.min_run_s",
                self.min_run_s,
                DEFAULT_MIN_RUN_S,
                0..=30 * DAY_S,
            )?,
            cores_per_node,
            history_days: within(
                "rules.history_days",
                self.history_days,
                u64::from(DEFAULT_HISTORY_DAYS),
                1..=3660,
            )? as u32,
            history_runs: within(
                "rules.history_runs",
                self.history_runs,
                DEFAULT_HISTORY_RUNS as u64,
                0..=1000,
            )? as usize,
        })
    }
}
