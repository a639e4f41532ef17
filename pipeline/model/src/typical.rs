//! Each application's typical window, for the diagnosis's application-relative features
//! (`<metric>:<stat>@app`, issue 20): a window against the typical window of the *other* runs of
//! its application, so that an anomaly present from a run's first window to its last (a
//! neighbour that never leaves), which the job-relative features cannot see, still stands out.
//!
//! A run's typical window is the median of each measured column over all of its windows (every
//! node); its application's is the median of the other runs' typical windows, never the run's
//! own (a run is anomalous when it stands out from the other runs of its application). The
//! median over runs ignores anomalous runs while they are a minority, so no labels are needed.
//! An application needs [`super::baseline::MIN_JOBS`] other runs; a job without a name never has
//! one (it stands for many applications). A job without a baseline gets NaN in its `@app`
//! columns.
//!
//! Gathering the runs' typical windows is a pass over the windows before the one that builds
//! the features ([`gather`]); it keeps one vector per run.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use chrono::NaiveDate;

use super::ModelError;
use super::baseline::MIN_JOBS;
use super::dataset::{self, FeatureSet, NO_NAME, Windows};

/// Runs of an application beyond which each run's baseline is the median over all of them
/// rather than over its others: one run barely moves the median of more than 50, and one median
/// per run over the others costs runs² × columns.
const LEAVE_ONE_OUT_RUNS: usize = 50;

/// Windows handed over at a time while gathering (a few whole jobs).
const GATHER_WINDOWS_AT_A_TIME: usize = 20_000;

/// The typical window of each run: `columns` are measured features (`<metric>:<stat>`), each
/// run's vector is aligned with them (NaN where the run has no finite value).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunTypicals {
    pub columns: Vec<String>,
    pub runs: HashMap<String, Vec<f64>>,
}

/// Each job's application baseline, what [`leave_one_out`] makes of the runs' typical windows.
/// It is defined beside the `@app` columns it is the input of ([`dataset::AppBaselines`]), so
/// that the reader of windows does not depend on this module, which reads through it.
pub use super::dataset::AppBaselines;

/// The median of each column of `rows` (each a vector of `width` values), NaN where a column has
/// no finite value.
fn column_medians<'a>(rows: impl Iterator<Item = &'a [f64]> + Clone, width: usize) -> Vec<f64> {
    let mut column = Vec::new();
    (0..width)
        .map(|c| {
            column.clear();
            column.extend(rows.clone().map(|r| r[c]).filter(|v| v.is_finite()));
            jobsight_base::stats::median(&mut column).unwrap_or(f64::NAN)
        })
        .collect()
}

/// The typical window of each job in `windows` (rows in key order; columns measured features).
/// A job handed over in two parts keeps the first part's.
fn add_runs(windows: &Windows, runs: &mut HashMap<String, Vec<f64>>) {
    let width = windows.features.len();
    let mut start = 0;
    while start < windows.keys.len() {
        let job = &windows.keys[start].job_id;
        let mut end = start + 1;
        while end < windows.keys.len() && windows.keys[end].job_id == *job {
            end += 1;
        }
        if !runs.contains_key(&**job) {
            let rows = (start..end).map(|r| windows.row(r));
            runs.insert(job.to_string(), column_medians(rows, width));
        }
        start = end;
    }
}

/// The measured features behind the `@app` columns of `features`, each once.
pub fn app_columns(features: &[String]) -> Vec<String> {
    let mut columns: Vec<String> = Vec::new();
    for f in features {
        if f.ends_with(dataset::APP_RELATIVE) {
            let m = dataset::measured(f).to_string();
            if !columns.contains(&m) {
                columns.push(m);
            }
        }
    }
    columns
}

/// Reads the windows of `days` (of the jobs in `only`, if given) a few jobs at a time and keeps
/// each run's typical window over `columns`.
pub fn gather(
    data: &Path,
    days: &[NaiveDate],
    only: Option<&HashSet<String>>,
    columns: &[String],
) -> Result<RunTypicals, ModelError> {
    let mut runs = HashMap::new();
    dataset::read_windows_by_jobs(
        data,
        days,
        only,
        Some(columns),
        FeatureSet::Absolute,
        None,
        None,
        GATHER_WINDOWS_AT_A_TIME,
        |batch| {
            add_runs(&batch, &mut runs);
            Ok(())
        },
    )?;
    Ok(RunTypicals {
        columns: columns.to_vec(),
        runs,
    })
}

/// Each run's application baseline: the median of the typical windows of the *other* runs of
/// its application (`applications`: job → application; a job missing there has none), for runs
/// whose application has at least [`MIN_JOBS`] others.
pub fn leave_one_out(
    typicals: &RunTypicals,
    applications: &HashMap<String, String>,
) -> AppBaselines {
    let width = typicals.columns.len();
    let mut by_app: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for job in typicals.runs.keys() {
        match applications.get(job) {
            Some(app) if app != NO_NAME => by_app.entry(app.as_str()).or_default().push(job),
            _ => {}
        }
    }
    let mut of_job = HashMap::new();
    for jobs in by_app.into_values() {
        if jobs.len() < MIN_JOBS + 1 {
            continue;
        }
        let vector = |j: &str| typicals.runs[j].as_slice();
        if jobs.len() > LEAVE_ONE_OUT_RUNS {
            let all = column_medians(jobs.iter().map(|j| vector(j)), width);
            for j in jobs {
                of_job.insert(j.to_string(), all.clone());
            }
            continue;
        }
        for (i, j) in jobs.iter().enumerate() {
            let others = jobs
                .iter()
                .enumerate()
                .filter(move |(k, _)| *k != i)
                .map(|(_, o)| vector(o));
            of_job.insert(j.to_string(), column_medians(others, width));
        }
    }
    AppBaselines {
        columns: typicals.columns.clone(),
        of_job,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn typicals(runs: &[(&str, f64)]) -> RunTypicals {
        RunTypicals {
            columns: vec!["cpu_user:mean".into()],
            runs: runs
                .iter()
                .map(|(j, v)| ((*j).to_string(), vec![*v]))
                .collect(),
        }
    }

    /// A run's baseline is the median of its application's other runs, never its own; an
    /// application with too few other runs, and a job without a name, have none.
    #[test]
    fn a_runs_baseline_is_its_applications_other_runs() {
        let t = typicals(&[
            ("1", 1.0),
            ("2", 2.0),
            ("3", 3.0),
            ("4", 100.0),
            ("5", 7.0),
            ("6", 8.0),
            ("7", 9.0),
            ("8", 5.0),
        ]);
        let apps: HashMap<String, String> = [
            ("1", "lammps"),
            ("2", "lammps"),
            ("3", "lammps"),
            ("4", "lammps"),
            ("5", "wrf"),
            ("6", "wrf"),
            ("7", "wrf"),
            ("8", NO_NAME),
        ]
        .iter()
        .map(|(j, a)| ((*j).to_string(), (*a).to_string()))
        .collect();
        let b = leave_one_out(&t, &apps);
        assert_eq!(
            b.of("4"),
            Some(&[2.0][..]),
            "the outlier against the others"
        );
        assert_eq!(b.of("1"), Some(&[3.0][..]));
        assert_eq!(b.of("5"), None, "wrf has two other runs");
        assert_eq!(b.of("8"), None, "no name, no baseline");
    }
}
