//! The models' data: the `windows` table pivoted into one row per job × node × window, with a
//! column per metric statistic (`<metric>:<stat>`), and the labels that say what each window is.
//!
//! The labelling protocol is fixed, so results are comparable between runs and with published
//! figures: a window is labelled with an anomaly when it lies entirely inside exactly one labelled
//! anomaly interval (of its node, when the label names one), "healthy" when it overlaps none, and
//! is left out otherwise. Only jobs with at least one label row are labelled at all: `none` marks
//! a healthy job; an HPAS anomaly name marks an interval; any other label (the simulator's
//! inefficiencies such as `hung`) marks a job whose behaviour is neither, which is left out of the
//! supervised data.
//!
//! The features and the windows' types are here, with the jobs' names and applications. Reading
//! the `windows` table is in the `windows` submodule, through the Parquet parts and columns of
//! `parts`; reading the labels and applying the protocol is in `labels`, and the columns
//! computed as windows are read (the memory share, the job- and application-relative features)
//! in `derived`. What the rest of the crate calls is re-exported here.

use jobsight_base::choice::{Choice, Named};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::arrow::array::{Array, AsArray};

use super::ModelError;
use jobsight_warehouse::catalog::Table;

mod derived;
mod labels;
mod parts;
mod windows;

pub use derived::{AppBaselines, MEMORY_SHARE, derived_metrics, relative};
pub use labels::{
    Interval, LabelLine, Truth, is_anomaly, label_window, read_label_lines, read_labels_csv,
    read_labels_table,
};
pub(crate) use parts::{batches, micros_column, text_column};
pub use windows::{
    days_with_windows, metric_matches, read_windows, read_windows_by_jobs, window_metrics,
};

pub use jobsight_warehouse::catalog::WINDOW_STATS;

/// The label of windows without an anomaly.
pub const HEALTHY: &str = "healthy";

/// The suffix of a job-relative feature: `cpu_user:mean@job` is `cpu_user:mean` of the window
/// against the same job's typical window on the same node in the same run (the median of its
/// first and last fifth of windows).
pub const JOB_RELATIVE: &str = "@job";

/// The suffix of an application-relative feature: `cpu_user:mean@app` is `cpu_user:mean` of the
/// window against the typical window of its application's other runs ([`super::typical`]).
pub const APP_RELATIVE: &str = "@app";

/// The application of a job without a name: never given a baseline (it stands for many).
pub use jobsight_base::slurm_text::NO_NAME;

/// Which features a model is trained on when none are given (issue 20: absolute levels depend on
/// the application and its input; a window against its own job's typical window does not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeatureSet {
    /// Every `<metric>:<stat>` as measured.
    #[default]
    Absolute,
    /// Every `<metric>:<stat>@job`: the window against its job's typical window on its node.
    Relative,
    /// Both.
    Both,
    /// Every `<metric>:<stat>@job` and every `<metric>:<stat>@app`: the window against its job's
    /// typical window and against its application's (the other runs').
    Application,
}

impl Choice for FeatureSet {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: FeatureSet::Absolute,
            name: "absolute",
            help: "Every `<metric>:<stat>` as measured",
        },
        Named {
            value: FeatureSet::Relative,
            name: "relative",
            help: "Every `<metric>:<stat>@job`: the window against its job's typical window on its node",
        },
        Named {
            value: FeatureSet::Both,
            name: "both",
            help: "Both",
        },
        Named {
            value: FeatureSet::Application,
            name: "application",
            help: "Every `<metric>:<stat>@job` and every `<metric>:<stat>@app`: the window against its job's typical window and against its application's (the other runs')",
        },
    ];
}

impl FeatureSet {
    pub fn name(self) -> &'static str {
        match self {
            FeatureSet::Absolute => "absolute",
            FeatureSet::Relative => "relative",
            FeatureSet::Both => "both",
            FeatureSet::Application => "application",
        }
    }

    /// Whether the feature named `name` belongs to this set.
    pub fn holds(self, name: &str) -> bool {
        let job = name.ends_with(JOB_RELATIVE);
        let app = name.ends_with(APP_RELATIVE);
        match self {
            FeatureSet::Absolute => !job && !app,
            FeatureSet::Relative => job,
            FeatureSet::Both => !app,
            FeatureSet::Application => job || app,
        }
    }

    /// The set holding both `self` and `other` (what is read for two forests), if one does.
    pub fn with(self, other: FeatureSet) -> Option<FeatureSet> {
        use FeatureSet::*;
        match (self, other) {
            (a, b) if a == b => Some(a),
            (Relative, Application) | (Application, Relative) => Some(Application),
            (Application, _) | (_, Application) => None,
            _ => Some(Both),
        }
    }

    /// The feature names of this set over `metrics`.
    pub fn names(self, metrics: &BTreeSet<String>) -> Vec<String> {
        let base = metrics
            .iter()
            .flat_map(|m| WINDOW_STATS.iter().map(move |s| format!("{m}:{s}")));
        match self {
            FeatureSet::Absolute => base.collect(),
            FeatureSet::Relative => base.map(|f| f + JOB_RELATIVE).collect(),
            FeatureSet::Both => base.flat_map(|f| [f.clone(), f + JOB_RELATIVE]).collect(),
            FeatureSet::Application => base
                .flat_map(|f| [f.clone() + JOB_RELATIVE, f + APP_RELATIVE])
                .collect(),
        }
    }
}

/// The measured feature a (possibly job- or application-relative) feature is computed from.
pub fn measured(feature: &str) -> &str {
    feature
        .strip_suffix(JOB_RELATIVE)
        .or_else(|| feature.strip_suffix(APP_RELATIVE))
        .unwrap_or(feature)
}

/// One window of one node of one job: `[start_us, end_us)`, microseconds since the epoch.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WindowKey {
    pub job_id: Arc<str>,
    /// The run of the job (`restart_count`): a requeued job's runs are judged one by one. `None`
    /// in windows written before the run was recorded.
    pub run: Option<u32>,
    pub node: Arc<str>,
    pub start_us: i64,
    pub end_us: i64,
}

/// Windows with their feature values, row-major, NaN where a statistic is missing.
#[derive(Debug, Clone, Default)]
pub struct Windows {
    /// `<metric>:<stat>`, one per column.
    pub features: Vec<String>,
    /// Sorted by job, run, node, start.
    pub keys: Vec<WindowKey>,
    /// `keys.len() × features.len()` values.
    pub values: Vec<f64>,
    /// The metrics each job's node reported at all (any window).
    pub metrics_of: HashMap<(Arc<str>, Arc<str>), BTreeSet<String>>,
    /// Window widths seen, in seconds (one, unless features were computed twice differently).
    pub widths_s: BTreeSet<i64>,
}

impl Windows {
    /// Column `c` over `rows`, a missing or non-finite value replaced by `fill` (the training
    /// median, so that a gap in the telemetry looks ordinary rather than extreme).
    pub fn filled_column(&self, rows: &[usize], c: usize, fill: f64) -> Vec<f64> {
        rows.iter()
            .map(|&r| {
                let v = self.row(r)[c];
                if v.is_finite() { v } else { fill }
            })
            .collect()
    }

    pub fn row(&self, i: usize) -> &[f64] {
        let n = self.features.len();
        &self.values[i * n..(i + 1) * n]
    }

    /// Where each of a model's `features` sits in these windows' columns (`None`: absent).
    pub fn columns_of(&self, features: &[String]) -> Vec<Option<usize>> {
        let index: HashMap<&str, usize> = self
            .features
            .iter()
            .enumerate()
            .map(|(i, f)| (f.as_str(), i))
            .collect();
        features
            .iter()
            .map(|f| index.get(f.as_str()).copied())
            .collect()
    }

    /// The window width and stride in seconds, checked to be one width: the stride is the
    /// smallest step between consecutive windows of a series (rows are in key order).
    pub fn window(&self) -> Result<(i64, i64), ModelError> {
        let widths: Vec<i64> = self.widths_s.iter().copied().collect();
        match widths.as_slice() {
            [w] => {
                let stride = self
                    .keys
                    .windows(2)
                    .filter(|p| {
                        p[0].job_id == p[1].job_id && p[0].run == p[1].run && p[0].node == p[1].node
                    })
                    .map(|p| (p[1].start_us - p[0].start_us) / 1_000_000)
                    .filter(|&s| s > 0)
                    .min()
                    .unwrap_or(*w);
                Ok((*w, stride))
            }
            [] => Err(ModelError::NoData("no windows".into())),
            _ => Err(ModelError::NoData(format!(
                "the windows have different widths ({widths:?} s): compute the features again with one `--windows`"
            ))),
        }
    }

    /// The metric of a feature name `<metric>:<stat>`.
    pub fn metric_of(feature: &str) -> &str {
        feature.rsplit_once(':').map_or(feature, |(m, _)| m)
    }

    /// The rows of each job, by job id.
    pub fn rows_by_job(&self) -> BTreeMap<Arc<str>, Vec<usize>> {
        let mut out: BTreeMap<Arc<str>, Vec<usize>> = BTreeMap::new();
        for (i, k) in self.keys.iter().enumerate() {
            out.entry(k.job_id.clone()).or_default().push(i);
        }
        out
    }

    /// Keeps only the rows in `rows` (in that order).
    /// Appends `rows` of `other` (with the same columns), with what it knows of their nodes'
    /// metrics, and its window widths.
    pub fn append(&mut self, other: &Windows, rows: &[usize]) {
        for &r in rows {
            let key = &other.keys[r];
            let node = (key.job_id.clone(), key.node.clone());
            if !self.metrics_of.contains_key(&node)
                && let Some(metrics) = other.metrics_of.get(&node)
            {
                self.metrics_of.insert(node, metrics.clone());
            }
            self.keys.push(key.clone());
            self.values.extend_from_slice(other.row(r));
        }
        self.widths_s.extend(other.widths_s.iter().copied());
    }

    pub fn subset(&self, rows: &[usize]) -> Windows {
        let mut values = Vec::with_capacity(rows.len() * self.features.len());
        for &r in rows {
            values.extend_from_slice(self.row(r));
        }
        Windows {
            features: self.features.clone(),
            keys: rows.iter().map(|&r| self.keys[r].clone()).collect(),
            values,
            metrics_of: self.metrics_of.clone(),
            widths_s: self.widths_s.clone(),
        }
    }
}

/// The application of each job (its Slurm job name), for the hold-out-one-application split.
pub use jobsight_base::slurm_text::application_of;

/// The application of every job in the warehouse's `jobs` table (of `days`, or all; of one
/// per-job `part`, or all), by job id (cleaned of control characters: job names are the users'
/// and end up in reports).
pub fn applications(
    data: &Path,
    days: Option<&[NaiveDate]>,
    part: Option<&str>,
) -> Result<HashMap<String, String>, ModelError> {
    Ok(job_names(data, days, part)?
        .into_iter()
        .map(|(job, name)| {
            let app = jobsight_base::text::clean(application_of(&name), 64);
            (job, app)
        })
        .collect())
}

/// The name of every job in the warehouse's `jobs` table (of `days`, or all; of one per-job
/// `part`, or all), by job id.
pub fn job_names(
    data: &Path,
    days: Option<&[NaiveDate]>,
    part: Option<&str>,
) -> Result<HashMap<String, String>, ModelError> {
    let days = match days {
        Some(d) => d.to_vec(),
        None => jobsight_warehouse::catalog::days(data, Table::Jobs),
    };
    let mut names = HashMap::new();
    batches(
        data,
        Table::Jobs,
        &days,
        part,
        Some(&["job_id", "name"]),
        |batch, path| {
            let ids = text_column(batch, "job_id", path)?;
            let n = text_column(batch, "name", path)?;
            let (ids, n) = (ids.as_string::<i32>(), n.as_string::<i32>());
            for i in 0..batch.num_rows() {
                if ids.is_valid(i) && n.is_valid(i) {
                    names.insert(ids.value(i).to_string(), n.value(i).to_string());
                }
            }
            Ok(())
        },
    )?;
    Ok(names)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn an_application_is_its_job_name_without_a_run_number() {
        for (name, app) in [
            ("lammps-42", "lammps"),
            ("lammps_7", "lammps"),
            ("lammps.3", "lammps"),
            ("train.py-12", "train.py"),
            ("train.py", "train.py"),
            ("ExaMiniMD", "ExaMiniMD"),
            ("run2b", "run2b"),
            ("1234", "1234"),
            ("  ", "(no name)"),
            ("café-1", "café"),
        ] {
            assert_eq!(application_of(name), app, "{name}");
        }
    }

    #[test]
    fn metrics_are_matched_by_name_or_prefix() {
        let patterns = ["cpu_user".to_string(), "mem_*".to_string()];
        assert!(metric_matches("cpu_user", &patterns));
        assert!(metric_matches("mem_used_bytes", &patterns));
        assert!(
            !metric_matches("cpu_user_share", &patterns),
            "a name is not a prefix"
        );
        assert!(!metric_matches("meminfo.MemFree", &patterns));
    }
}
