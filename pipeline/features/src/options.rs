//! `[features]` of the configuration file: the [`Options`] as written (every key optional,
//! unknown keys refused) and their resolution into the stage's [`Settings`], each value checked
//! and named by its key when it is wrong. The application's `config` composes this section with
//! the others' into one file.

use std::collections::BTreeMap;

use jobsight_base::options::{DAY_S, Invalid, invalid, within};
use serde::Deserialize;

use super::{
    DEFAULT_BIN_S, DEFAULT_MIN_COVERAGE, DEFAULT_PLAN_ROWS_AT_A_TIME, DEFAULT_TRIM_S, Settings,
    WindowSpec,
};

/// `[features]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    pub trim_s: Option<u64>,
    pub bin_s: Option<u64>,
    pub min_coverage: Option<f64>,
    pub cores_per_node: Option<u32>,
    /// Replaces the default idle thresholds when given.
    pub idle_below: Option<BTreeMap<String, f64>>,
    /// Sliding windows for the models, `WIDTH:STRIDE` in seconds; none by default.
    pub windows: Option<String>,
    /// Telemetry rows the features plans read at a time (on Ballista or here).
    pub plan_rows_at_a_time: Option<u64>,
}

impl Options {
    /// Fills in the defaults and checks every value. `models_window`: the window the site's
    /// models were trained on, if it runs models (they read windows), used when `windows` is
    /// unset.
    pub fn resolve(self, models_window: Option<WindowSpec>) -> Result<Settings, Invalid> {
        let min_coverage = self.min_coverage.unwrap_or(DEFAULT_MIN_COVERAGE);
        if !(0.0..=1.0).contains(&min_coverage) {
            return Err(invalid(
                "features.min_coverage",
                format!("{min_coverage} is not a share between 0 and 1"),
            ));
        }
        if let Some(cores) = self.cores_per_node {
            within(
                "features.cores_per_node",
                Some(u64::from(cores)),
                1,
                1..=1_000_000,
            )?;
        }
        let idle_below = self.idle_below.unwrap_or_else(super::default_idle_below);
        if let Some((metric, limit)) = idle_below.iter().find(|(_, l)| !l.is_finite()) {
            return Err(invalid(
                "features.idle_below",
                format!("{metric} = {limit} is not a number"),
            ));
        }
        Ok(Settings {
            trim_s: within("features.trim_s", self.trim_s, DEFAULT_TRIM_S, 0..=DAY_S)?,
            bin_s: within("features.bin_s", self.bin_s, DEFAULT_BIN_S, 1..=DAY_S)?,
            min_coverage,
            cores_per_node: self.cores_per_node,
            idle_below,
            windows: self
                .windows
                .map(|w| w.parse::<WindowSpec>())
                .transpose()
                .and_then(|w| match w {
                    // A day at most, and a stride no wider than the window (else samples between
                    // windows would belong to none).
                    Some(w) if w.window_s > DAY_S || w.stride_s > w.window_s => Err(format!(
                        "{w}: the width must be at most {DAY_S} s and the stride at most the width"
                    )),
                    w => Ok(w),
                })
                .map_err(|reason| invalid("features.windows", reason))?
                .or(models_window),
            plan_rows_at_a_time: within(
                "features.plan_rows_at_a_time",
                self.plan_rows_at_a_time,
                DEFAULT_PLAN_ROWS_AT_A_TIME,
                1..=u64::MAX,
            )?,
        })
    }
}
