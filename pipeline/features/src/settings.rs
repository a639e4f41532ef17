//! How features are computed: the stage's [`Settings`] with their defaults, and the sliding
//! windows ([`WindowSpec`]) the models read. The configuration's `[features]` section is read
//! into them by [`crate::options`].

use std::collections::BTreeMap;
use std::fmt::Display;

/// Seconds trimmed from each end of a job by default.
pub const DEFAULT_TRIM_S: u64 = 60;
/// Bin width for aligning nodes in the imbalance figure, by default.
pub const DEFAULT_BIN_S: u64 = 60;
/// Below this node coverage a job is not judged, by default.
pub const DEFAULT_MIN_COVERAGE: f64 = 0.8;

/// How features are computed (the `[features]` section of the configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Seconds left out at each end of a job; jobs shorter than twice this keep all samples.
    pub trim_s: u64,
    /// Bin width lining up the nodes' samples for the imbalance figure.
    pub bin_s: u64,
    /// A job whose least-covered node has less than this share of the expected samples is not
    /// judged.
    pub min_coverage: f64,
    /// CPUs of a node, for CPU efficiency from node-level CPU shares; unknown: no CPU efficiency.
    pub cores_per_node: Option<u32>,
    /// Metrics that get an idle share, with the value below which a sample counts as idle.
    pub idle_below: BTreeMap<String, f64>,
    /// Sliding windows for the models (table `windows`); none by default, because a window row
    /// per few samples multiplies the day's rows.
    pub windows: Option<WindowSpec>,
    /// The telemetry rows the features plans ([`plan`](crate::plan)) read at a time: what an
    /// engine holds and shuffles grows with it.
    pub plan_rows_at_a_time: u64,
}

/// [`Settings::plan_rows_at_a_time`] by default: 50 M samples, about 2 GB of shuffle.
pub const DEFAULT_PLAN_ROWS_AT_A_TIME: u64 = 50_000_000;

/// Sliding windows: width and stride in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSpec {
    pub window_s: u64,
    pub stride_s: u64,
}

impl std::str::FromStr for WindowSpec {
    type Err = String;

    /// `WIDTH` or `WIDTH:STRIDE` in seconds (stride defaults to the width).
    fn from_str(text: &str) -> Result<WindowSpec, String> {
        let (width, stride) = text.split_once(':').unwrap_or((text, text));
        let number = |s: &str| {
            s.trim()
                .parse::<u64>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("{s:?} is not a positive number of seconds"))
        };
        Ok(WindowSpec {
            window_s: number(width)?,
            stride_s: number(stride)?,
        })
    }
}

/// `WIDTH:STRIDE`, as [`WindowSpec::from_str`](std::str::FromStr) reads it.
impl Display for WindowSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.window_s, self.stride_s)
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            trim_s: DEFAULT_TRIM_S,
            bin_s: DEFAULT_BIN_S,
            min_coverage: DEFAULT_MIN_COVERAGE,
            cores_per_node: None,
            idle_below: default_idle_below(),
            windows: None,
            plan_rows_at_a_time: DEFAULT_PLAN_ROWS_AT_A_TIME,
        }
    }
}

/// Utilisation metrics (shares 0–1) and the level below which a sample is idle.
pub fn default_idle_below() -> BTreeMap<String, f64> {
    BTreeMap::from([
        ("cpu_user".to_string(), 0.05),
        ("gpu_util".to_string(), 0.05),
    ])
}
