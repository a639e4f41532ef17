//! Per-application baselines of the anomaly score (issue 20): how high the score of each
//! application's windows usually runs, learned from the history of its runs, so that a window is
//! judged against its own application rather than against the applications the score was fitted
//! on. Without them, an application the score never saw is mostly "anomalous": its healthy
//! windows reconstruct worse than the training windows, and the threshold is a percentile of
//! those.
//!
//! An application is a job name without its run number ([`super::dataset::application_of`]).
//! Its baseline is a cut on the score, [`BASELINE_Z`] robust deviations (1.4826 × MAD) above the
//! median of the logarithm of the scores of its windows (no labels are needed: the median and
//! MAD ignore anomalies while they are a minority of the windows; where there are labels, only
//! windows labelled healthy are used), never below the score's own threshold. A window is
//! anomalous when its score exceeds its application's cut. A baseline needs [`MIN_JOBS`] runs and
//! [`MIN_WINDOWS`] windows; a job of an application without one (or without a name) is judged
//! against the score's threshold alone.
//!
//! Two ways to take the cut ([`BaselineMethod`]). The median and MAD break down once half of an
//! application's windows are anomalous (a new application's first runs, a history nobody
//! labelled): the median lands among the anomalies and the cut rises above them. Anomalies only
//! raise the score, so the lower part of the scores stays healthy however many windows are
//! anomalous: `lower-tail` takes the healthy scores' centre and spread from their 5th and 25th
//! percentiles alone (for normal data, 0.674 and 1.645 deviations below the median), which
//! holds while fewer than three quarters of the windows are anomalous.
//!
//! A third way, `quiet-periods`, measures the idea of a job's own quiet periods: the
//! lower tail's cut, and for a job of at least [`MIN_QUIET_WINDOWS`] windows also a cut of the
//! same height above the job's own quiet level (the 25th percentile of its scores) with its
//! application's spread; a window is judged against the lower of the two. A job whose healthy
//! level lies below its application's (other inputs, another node) is then judged against
//! itself, and an anomaly in part of a run stands out from the rest of the run.
//!
//! Where they come from: the model keeps the baselines of the applications in its training days
//! (`model train`), refreshed each night from the newest days
//! ([`super::retrain::rebaseline_score`]); when judging a set of jobs (a day), an application
//! the model has none of is given one from the *other* runs of it among the jobs judged, never
//! from the run itself.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::dataset::{NO_NAME, Windows};

/// Runs of an application its baseline needs.
pub const MIN_JOBS: usize = 3;
/// Windows of an application its baseline needs.
pub const MIN_WINDOWS: usize = 30;
/// How far above its median score an application's cut lies, in robust deviations of the
/// logarithm of the score. Measured (docs/models.md, "Per-application baselines"): 2 leaves the
/// real HPAS runs' figures as they were and brings the false alarms on applications left out of
/// the demo's training day from 0.488 to 0.028; 3 and 4 miss more anomalies for few fewer false
/// alarms.
pub const BASELINE_Z: f64 = 2.0;
/// Runs of an application judged together beyond which its cut is taken over all of them rather
/// than over each run's others (the same within a few per cent, and linear instead of quadratic).
const LEAVE_ONE_OUT_RUNS: usize = 50;
/// Windows per application the cut is taken over (evenly spaced beyond it).
const MAX_WINDOWS: usize = 5000;
/// Windows a job needs for `quiet-periods` to judge it against its own quiet level as well.
pub const MIN_QUIET_WINDOWS: usize = 8;

/// How an application's cut is taken from the scores of its windows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BaselineMethod {
    /// [`BASELINE_Z`] robust deviations above the median (what model files before the method
    /// was recorded used).
    Median,
    /// The healthy scores' median and deviation estimated from the 5th and 25th percentiles,
    /// then [`BASELINE_Z`] deviations above that median. The default since four real suite
    /// runs judged it against the median (docs/models.md).
    #[default]
    LowerTail,
    /// The lower tail's cut, or one as high above the job's own quiet level with the
    /// application's spread, whichever is lower ([`MIN_QUIET_WINDOWS`]).
    QuietPeriods,
}

impl jobsight_base::choice::Choice for BaselineMethod {
    const ALL: &'static [jobsight_base::choice::Named<Self>] = &[
        jobsight_base::choice::Named {
            value: BaselineMethod::Median,
            name: "median",
            help: "Median and MAD of the application's scores (breaks down once half its windows are anomalous)",
        },
        jobsight_base::choice::Named {
            value: BaselineMethod::LowerTail,
            name: "lower-tail",
            help: "Median and spread of the healthy scores from their 5th and 25th percentiles (holds while under three quarters are anomalous)",
        },
        jobsight_base::choice::Named {
            value: BaselineMethod::QuietPeriods,
            name: "quiet-periods",
            help: "The lower tail's cut, or one as high above the job's own quiet windows, whichever is lower",
        },
    ];
}

/// The method of a model file that does not name one: those files cut by the median.
fn median_before_it_was_recorded() -> BaselineMethod {
    BaselineMethod::Median
}

/// The baselines of the applications a score was trained with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Baselines {
    pub applications: BTreeMap<String, Baseline>,
    /// How the cuts were taken, and are taken for applications the model never saw. A file
    /// written before the method was recorded took them by the median.
    #[serde(default = "median_before_it_was_recorded")]
    pub method: BaselineMethod,
}

/// One application's baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// Runs and windows it was learned from.
    pub jobs: usize,
    pub windows: usize,
    /// Its windows are anomalous above this score (at least 1, the score's own threshold).
    pub cut: f64,
    /// The robust deviation of the logarithm of its healthy scores, from the lower tail (0 for
    /// `median` cuts and in model files made before `quiet-periods`, which then judges by the
    /// cut alone).
    #[serde(default)]
    pub spread: f64,
}

/// The scores of `rows` grouped by application and job (jobs without an application, or of
/// applications without a name, left out).
fn by_application<'w, 'a>(
    windows: &'w Windows,
    rows: &[usize],
    scores: &[f64],
    application: &'a HashMap<String, String>,
) -> BTreeMap<&'a str, BTreeMap<&'w Arc<str>, Vec<f64>>> {
    let mut out: BTreeMap<&str, BTreeMap<&Arc<str>, Vec<f64>>> = BTreeMap::new();
    for (&r, &s) in rows.iter().zip(scores) {
        let job = &windows.keys[r].job_id;
        let Some(app) = application.get(&**job) else {
            continue;
        };
        if app == NO_NAME || !s.is_finite() {
            continue;
        }
        out.entry(app.as_str())
            .or_default()
            .entry(job)
            .or_default()
            .push(s);
    }
    out
}

/// The cut above which a value lies more than `z` robust deviations (1.4826 × MAD, the standard
/// deviation of normal data) above the median of `values`. The anomaly score's refining
/// ([`super::unsupervised`]) cuts its training windows with it too; it lives here, below the
/// score, because a score holds its application baselines.
pub(crate) fn far_out(values: &[f64], z: f64) -> f64 {
    let mut sorted = values.to_vec();
    let median = jobsight_base::stats::median(&mut sorted).unwrap_or(0.0);
    let mut deviations: Vec<f64> = values.iter().map(|v| (v - median).abs()).collect();
    let mad = jobsight_base::stats::median(&mut deviations).unwrap_or(0.0) * 1.4826;
    median + z * mad.max(1e-9)
}

/// The cut over scores on a log scale (a score is a mean of squares: skewed to the right, where
/// deviations on the linear scale cut the healthy tail), never below 1, and the lower tail's
/// spread (deviations of the logarithm).
fn cut_of(scores: &[f64], method: BaselineMethod) -> (f64, f64) {
    let logs: Vec<f64> = scores.iter().map(|s| s.max(1e-12).ln()).collect();
    let (cut, spread) = match method {
        // Only `quiet-periods` reads a spread, and it takes its cuts by the lower tail.
        BaselineMethod::Median => (far_out(&logs, BASELINE_Z), 0.0),
        BaselineMethod::LowerTail | BaselineMethod::QuietPeriods => lower_tail(logs),
    };
    (cut.exp().max(1.0), spread)
}

/// [`BASELINE_Z`] deviations above the median of the healthy part of `values`, whose median and
/// deviation come from the 5th and 25th percentiles: for normal data they lie 1.645 and 0.674
/// deviations below the median, and values that only ever rise (anomalies) do not move them
/// while fewer than three quarters of the values are anomalous. Also the deviation.
fn lower_tail(mut values: Vec<f64>) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    values.sort_by(f64::total_cmp);
    let p05 = jobsight_base::stats::percentile_of_sorted(&values, 0.05);
    let p25 = jobsight_base::stats::percentile_of_sorted(&values, 0.25);
    let deviation = ((p25 - p05) / (1.645 - 0.674)).max(1e-9);
    (p25 + (0.674 + BASELINE_Z) * deviation, deviation)
}

/// The cut of a job judged against its own quiet windows: as high above their level (the 25th
/// percentile of the logarithm of its `scores`) as the lower tail's cut lies above its
/// application's 25th percentile, with the application's `spread`. None for a job of too few
/// windows, or an application without a spread.
fn quiet_cut(scores: &[f64], spread: f64) -> Option<f64> {
    if scores.len() < MIN_QUIET_WINDOWS || spread <= 0.0 {
        return None;
    }
    let mut logs: Vec<f64> = scores.iter().map(|s| s.max(1e-12).ln()).collect();
    logs.sort_by(f64::total_cmp);
    let quiet = jobsight_base::stats::percentile_of_sorted(&logs, 0.25);
    Some((quiet + (0.674 + BASELINE_Z) * spread).exp().max(1.0))
}

/// A baseline from the scores of `runs` (each run's window scores), when there are enough.
fn baseline_of<'a>(
    runs: impl Iterator<Item = &'a Vec<f64>>,
    method: BaselineMethod,
) -> Option<Baseline> {
    let mut jobs = 0;
    let mut values: Vec<f64> = Vec::new();
    for run in runs {
        jobs += 1;
        values.extend_from_slice(run);
    }
    if jobs < MIN_JOBS || values.len() < MIN_WINDOWS {
        return None;
    }
    let step = values.len().div_ceil(MAX_WINDOWS).max(1);
    let sample: Vec<f64> = values.iter().step_by(step).copied().collect();
    let (cut, spread) = cut_of(&sample, method);
    Some(Baseline {
        jobs,
        windows: values.len(),
        cut,
        spread,
    })
}

impl Baselines {
    /// The baselines of the applications among `rows`, from their `scores`, by `method`.
    pub fn learn(
        windows: &Windows,
        rows: &[usize],
        scores: &[f64],
        application: &HashMap<String, String>,
        method: BaselineMethod,
    ) -> Baselines {
        let applications = by_application(windows, rows, scores, application)
            .into_iter()
            .filter_map(|(app, runs)| Some((app.to_string(), baseline_of(runs.values(), method)?)))
            .collect();
        Baselines {
            applications,
            method,
        }
    }

    /// Each application's cut and runs, for the model file's header.
    pub fn summary(&self) -> Vec<(String, f64, usize)> {
        self.applications
            .iter()
            .map(|(app, b)| (app.clone(), b.cut, b.jobs))
            .collect()
    }

    /// The cut each job of `rows` is judged against: its application's baseline when the model
    /// has one, else one from the other runs of its application among `rows`. A job with
    /// neither (an application without a history) is not in the map: it is judged against the
    /// score's own threshold, 1.
    pub fn cuts(
        &self,
        windows: &Windows,
        rows: &[usize],
        scores: &[f64],
        application: &HashMap<String, String>,
    ) -> HashMap<Arc<str>, f64> {
        let mut out = HashMap::new();
        for (app, runs) in by_application(windows, rows, scores, application) {
            // Of an application with many runs, one run barely moves the median and MAD of all:
            // one cut for all of them, instead of one per run over the others (runs × windows).
            let shared = match self.applications.get(app) {
                Some(b) => Some(Some(b.clone())),
                None if runs.len() > LEAVE_ONE_OUT_RUNS => {
                    Some(baseline_of(runs.values(), self.method))
                }
                None => None,
            };
            for (job, scores) in &runs {
                let baseline = shared.clone().unwrap_or_else(|| {
                    let others = runs.iter().filter(|(j, _)| *j != job).map(|(_, s)| s);
                    baseline_of(others, self.method)
                });
                let Some(baseline) = baseline else {
                    continue;
                };
                let own = match self.method {
                    BaselineMethod::QuietPeriods => quiet_cut(scores, baseline.spread),
                    BaselineMethod::Median | BaselineMethod::LowerTail => None,
                };
                out.insert(
                    (*job).clone(),
                    own.map_or(baseline.cut, |own| own.min(baseline.cut)),
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::dataset::WindowKey;

    /// An application's runs: name, runs, windows per run, the score of run i's window w.
    type Runs<'a> = (&'a str, usize, usize, fn(usize, usize) -> f64);

    /// Windows of the runs of each application, their scores, and the job → application map.
    fn history(apps: &[Runs]) -> (Windows, Vec<f64>, HashMap<String, String>) {
        let mut windows = Windows::default();
        let mut scores = Vec::new();
        let mut application = HashMap::new();
        for (app, runs, per_run, score) in apps {
            for i in 0..*runs {
                let job = format!("{app}-{i}");
                application.insert(job.clone(), app.to_string());
                for w in 0..*per_run {
                    windows.keys.push(WindowKey {
                        job_id: Arc::from(job.as_str()),
                        run: None,
                        node: Arc::from("n1"),
                        start_us: w as i64,
                        end_us: w as i64 + 1,
                    });
                    scores.push(score(i, w));
                }
            }
        }
        (windows, scores, application)
    }

    /// A wobble in [0.8, 1.2): healthy windows are not all alike.
    fn wobble(w: usize) -> f64 {
        0.8 + ((w * 37) % 10) as f64 / 25.0
    }

    #[test]
    fn each_application_with_enough_runs_gets_a_cut_never_below_the_threshold() {
        let (windows, scores, application) = history(&[
            ("quiet", 4, 20, |_, w| 0.2 * wobble(w)),
            ("loud", 4, 20, |_, w| 6.0 * wobble(w)),
            ("rare", 2, 40, |_, w| 6.0 * wobble(w)),
            (NO_NAME, 5, 20, |_, w| 6.0 * wobble(w)),
        ]);
        let rows: Vec<usize> = (0..windows.keys.len()).collect();
        let b = Baselines::learn(
            &windows,
            &rows,
            &scores,
            &application,
            BaselineMethod::Median,
        );
        assert_eq!(
            b.applications.keys().collect::<Vec<_>>(),
            ["loud", "quiet"],
            "two runs are too few, and jobs without a name are many applications"
        );
        assert_eq!(
            b.applications["quiet"].cut, 1.0,
            "a cut never lowers the threshold"
        );
        let loud = &b.applications["loud"];
        assert!(loud.cut > 7.2 && loud.cut < 20.0, "{}", loud.cut);
        assert_eq!((loud.jobs, loud.windows), (4, 80));
    }

    /// When most of an application's windows are anomalous (here 60 %, scoring 10× the healthy
    /// ones), the median's cut rises above the anomalies and passes them, the lower tail's stays
    /// between the healthy windows and the anomalies.
    #[test]
    fn the_lower_tail_holds_when_most_windows_are_anomalous() {
        let (windows, scores, application) = history(&[("busy", 5, 40, |_, w| {
            if w % 5 < 3 {
                30.0 * wobble(w)
            } else {
                3.0 * wobble(w)
            }
        })]);
        let rows: Vec<usize> = (0..windows.keys.len()).collect();
        let cut = |method| {
            Baselines::learn(&windows, &rows, &scores, &application, method).applications["busy"]
                .cut
        };
        let (median, lower_tail) = (cut(BaselineMethod::Median), cut(BaselineMethod::LowerTail));
        assert!(
            median > 30.0 * 1.2,
            "the median's cut passes every anomaly: {median}"
        );
        assert!(
            lower_tail > 3.0 * 1.2 && lower_tail < 30.0 * 0.8,
            "the lower tail's cut lies between: {lower_tail}"
        );
    }

    /// An application the model never saw is judged against its other runs: the run that is
    /// far above them stands out, the others do not, though every one of them is far above the
    /// score's own threshold.
    #[test]
    fn an_unseen_application_is_judged_against_its_other_runs() {
        let model = Baselines::default();
        let (windows, scores, application) = history(&[("new", 5, 20, |i, w| {
            if i == 3 {
                60.0 * wobble(w)
            } else {
                5.0 * wobble(w)
            }
        })]);
        let rows: Vec<usize> = (0..windows.keys.len()).collect();
        let cuts = model.cuts(&windows, &rows, &scores, &application);
        for (&r, &s) in rows.iter().zip(&scores) {
            let job = &windows.keys[r].job_id;
            let judged = s / cuts[job];
            if &**job == "new-3" {
                assert!(judged > 1.0, "{job}: {judged}");
            } else {
                assert!(judged <= 1.0, "{job}: {judged}");
            }
        }
        // One run alone is judged against the threshold.
        let alone = model.cuts(&windows, &rows[..20], &scores[..20], &application);
        assert_eq!(alone.get(&windows.keys[0].job_id), None);
    }

    /// Of an application with many runs judged together, one cut over all of them: the outlier
    /// run still stands out.
    #[test]
    fn many_runs_share_one_cut_and_the_outlier_still_stands_out() {
        let model = Baselines {
            method: BaselineMethod::Median,
            ..Baselines::default()
        };
        let (windows, scores, application) =
            history(&[("popular", LEAVE_ONE_OUT_RUNS + 10, 10, |i, w| {
                if i == 7 {
                    60.0 * wobble(w)
                } else {
                    5.0 * wobble(w)
                }
            })]);
        let rows: Vec<usize> = (0..windows.keys.len()).collect();
        let cuts = model.cuts(&windows, &rows, &scores, &application);
        let first = cuts[&windows.keys[0].job_id];
        assert!(cuts.values().all(|&c| c == first));
        for (&r, &s) in rows.iter().zip(&scores) {
            let job = &windows.keys[r].job_id;
            assert_eq!(s / first > 1.0, &**job == "popular-7", "{job}");
        }
    }

    /// A model's baseline wins over the runs at hand.
    #[test]
    fn a_models_baseline_is_used_when_it_has_one() {
        let (windows, scores, application) = history(&[("known", 4, 20, |_, w| 5.0 * wobble(w))]);
        let mut model = Baselines::default();
        model.applications.insert(
            "known".into(),
            Baseline {
                jobs: 9,
                windows: 900,
                cut: 2.5,
                spread: 0.0,
            },
        );
        let rows: Vec<usize> = (0..windows.keys.len()).collect();
        let cuts = model.cuts(&windows, &rows, &scores, &application);
        assert!(cuts.values().all(|&c| c == 2.5));
    }

    /// `quiet-periods`: a run whose healthy level lies below its application's (here a quarter
    /// of it) is judged against its own quiet windows, so an anomaly in part of the run (3.2×
    /// the run's level, still under the application's cut) stands out, and its quiet part does not;
    /// the other runs are judged as the lower tail judges them.
    #[test]
    fn quiet_periods_judge_a_run_against_its_own_quiet_windows() {
        let (windows, scores, application) = history(&[("app", 5, 20, |i, w| match (i, w) {
            (2, 0..10) => 1.25 * wobble(w),
            (2, _) => 4.0 * wobble(w),
            _ => 5.0 * wobble(w),
        })]);
        let rows: Vec<usize> = (0..windows.keys.len()).collect();
        // The windows each method flags, as (job, window).
        let judge = |method| {
            let model = Baselines {
                method,
                ..Baselines::default()
            };
            let cuts = model.cuts(&windows, &rows, &scores, &application);
            rows.iter()
                .zip(&scores)
                .filter(|(r, s)| **s > cuts[&windows.keys[**r].job_id])
                .map(|(r, _)| {
                    (
                        windows.keys[*r].job_id.to_string(),
                        windows.keys[*r].start_us,
                    )
                })
                .collect::<std::collections::BTreeSet<_>>()
        };
        let lower_tail = judge(BaselineMethod::LowerTail);
        assert!(
            lower_tail.iter().all(|(job, _)| job != "app-2"),
            "{lower_tail:?}"
        );
        let quiet = judge(BaselineMethod::QuietPeriods);
        let added: Vec<_> = quiet.difference(&lower_tail).collect();
        assert_eq!(added.len(), 10, "{added:?}");
        assert!(
            added.iter().all(|(job, w)| job == "app-2" && *w >= 10),
            "{added:?}"
        );
    }
}
