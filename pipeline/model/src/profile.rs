//! Application profiles of the anomaly score's features (issue 70, `--baseline profile`): a
//! window judged by how far each of its features lies from the same application's usual windows,
//! in either direction, rather than by one number's height over a cut.
//!
//! Why: the per-application cut ([`super::baseline`]) judges the reconstruction error, one number
//! per window, and assumes an anomaly only raises it. On applications unlike the ones the score
//! was fitted on that fails both ways (docs/models.md, the sixth run): a serial code that leaves
//! CPUs idle is far from the training applications, and a CPU or memory hog beside it makes the
//! node look *more* like them, so its error falls; an application with phases (sort, compress,
//! flush) spreads its errors over a factor of 20, and the cut lands above every anomaly. A
//! profile keeps each feature apart: its centre is the median of the application's windows and
//! its spread 1.4826 × their MAD, each feature's own, so a window whose CPU, memory or I/O moves
//! away from its application's, up or down, is far out whatever the training applications look
//! like. A feature's median breaks down only once half of the application's windows move that
//! feature; an anomaly moves a few of the features, so a history mostly of anomalies of
//! different kinds still leaves each feature's median healthy.
//!
//! A window's distance is the root mean square of its [`FARTHEST`] largest deviations (features
//! in units of their spread, the spread at least [`MIN_SPREAD`] training deviations, so that a
//! feature steady to the last digit does not turn noise into alarms). The application's cut on
//! the distance comes from the lower tail of its windows' distances, as the score's cut does
//! ([`super::baseline`]: a distance is raised by an anomaly in any direction, so the premise
//! holds here by construction), and is never below [`MIN_CUT`]. A window is anomalous when its
//! distance exceeds its profile's cut.
//!
//! Where a profile comes from, in order: the model's, learnt from its training days and refreshed
//! each night; else the other runs of the application among the windows judged together (at
//! least [`MIN_JOBS`] runs and [`MIN_WINDOWS`] windows, the run itself left out); else, with no
//! history of the application at all, the job's own windows (at least [`MIN_QUIET_WINDOWS`]):
//! a change within the run stands out, an anomaly there from the job's first second cannot.
//! A job of fewer windows is judged by the score over its threshold.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::baseline::{
    Baselines, LEAVE_ONE_OUT_RUNS, MAX_WINDOWS, MIN_JOBS, MIN_QUIET_WINDOWS, MIN_WINDOWS, Profile,
    lower_tail,
};
use super::dataset::{NO_NAME, Windows};

/// The smallest spread of a feature, in training deviations (the features are standardised by
/// the spread of all training windows, of every application): a feature an application holds
/// steady to the last digit would otherwise turn its noise into large deviations.
pub const MIN_SPREAD: f64 = 0.05;

/// The lowest cut on a window's distance: Iglewicz and Hoaglin's cut on the modified z-score
/// (a value more than 3.5 robust deviations from the median is an outlier). A window closer than
/// that to its application's profile in every feature is never anomalous.
pub const MIN_CUT: f64 = 3.5;

/// The number of features a window's distance is taken over, its farthest: an anomaly moves a
/// few of the features (a CPU hog the CPU's, a leak the memory's), and the mean over all of
/// them would dilute it among the many it leaves alone.
pub const FARTHEST: usize = 3;

impl Profile {
    /// The profile of `rows` (standardised features, one row per window; evenly spaced beyond
    /// the baselines' window cap). None for no rows.
    pub fn of(rows: &[&[f64]]) -> Option<Profile> {
        let step = rows.len().div_ceil(MAX_WINDOWS).max(1);
        let sample: Vec<&[f64]> = rows.iter().step_by(step).copied().collect();
        let width = sample.first()?.len();
        let mut center = Vec::with_capacity(width);
        let mut spread = Vec::with_capacity(width);
        let mut column = Vec::with_capacity(sample.len());
        for f in 0..width {
            column.clear();
            column.extend(sample.iter().map(|row| row[f]));
            let median = jobsight_base::stats::median(&mut column).unwrap_or(0.0);
            for v in column.iter_mut() {
                *v = (*v - median).abs();
            }
            let mad = jobsight_base::stats::median(&mut column).unwrap_or(0.0) * 1.4826;
            center.push(median);
            spread.push(mad.max(knob("JS_SPREAD", MIN_SPREAD)));
        }
        let mut profile = Profile {
            center,
            spread,
            cut: MIN_CUT,
        };
        let logs: Vec<f64> = sample
            .iter()
            .map(|row| profile.distance(row).max(1e-12).ln())
            .collect();
        profile.cut = if knob("JS_MEDIANCUT", 0.0) > 0.0 {
            crate::baseline::far_out(&logs, knob("JS_MEDIANCUT", 0.0)).exp()
        } else if knob("JS_LINEAR", 0.0) > 0.0 {
            lower_tail(logs.iter().map(|l| l.exp()).collect()).0
        } else {
            lower_tail(logs).0.exp()
        }
        .max(knob("JS_MINCUT", MIN_CUT));
        Some(profile)
    }

    /// How far `z` (standardised features, in the profile's order) lies from the profile: the
    /// root mean square of its [`FARTHEST`] largest deviations, each in units of its spread.
    pub fn distance(&self, z: &[f64]) -> f64 {
        self.between(z, &self.center)
    }

    /// How far `a` lies from `b` in the profile's units (as [`Self::distance`] from the centre).
    fn between(&self, a: &[f64], b: &[f64]) -> f64 {
        let mut deviations: Vec<f64> = a
            .iter()
            .zip(b)
            .zip(&self.spread)
            .map(|((v, c), s)| ((v - c) / s).powi(2))
            .collect();
        if deviations.is_empty() {
            return 0.0;
        }
        deviations.sort_by(|a, b| b.total_cmp(a));
        let k = (knob("JS_K", FARTHEST as f64) as usize).clamp(1, deviations.len());
        (deviations[..k].iter().sum::<f64>() / k as f64).sqrt()
    }

    /// `z`'s distance over the cut: above 1 is anomalous.
    pub fn judge(&self, z: &[f64]) -> f64 {
        self.distance(z) / self.cut
    }
}

// EXPERIMENT: knobs read from the environment while the method is chosen; removed after.
fn knob(name: &str, default: f64) -> f64 {
    static KNOBS: std::sync::OnceLock<HashMap<String, f64>> = std::sync::OnceLock::new();
    let knobs = KNOBS.get_or_init(|| {
        std::env::vars()
            .filter(|(k, _)| k.starts_with("JS_"))
            .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
            .collect()
    });
    knobs.get(name).copied().unwrap_or(default)
}

/// The profile of the windows at `positions` of `z`.
fn profile_at(z: &[Vec<f64>], positions: impl Iterator<Item = usize>) -> Option<Profile> {
    let rows: Vec<&[f64]> = positions.map(|i| z[i].as_slice()).collect();
    Profile::of(&rows)
}

/// A job's profile of its own windows, when it has enough.
fn own_profile(z: &[Vec<f64>], positions: &[usize]) -> Option<Profile> {
    (positions.len() >= MIN_QUIET_WINDOWS)
        .then(|| profile_at(z, positions.iter().copied()))
        .flatten()
}

/// Positions (into `rows`) of each job, by application; jobs without an application (or of an
/// application without a name) under `None`.
fn jobs_by_application<'w, 'a>(
    windows: &'w Windows,
    rows: &[usize],
    application: &'a HashMap<String, String>,
) -> BTreeMap<Option<&'a str>, BTreeMap<&'w Arc<str>, Vec<usize>>> {
    let mut out: BTreeMap<Option<&str>, BTreeMap<&Arc<str>, Vec<usize>>> = BTreeMap::new();
    for (i, &r) in rows.iter().enumerate() {
        let job = &windows.keys[r].job_id;
        let app = application
            .get(&**job)
            .map(String::as_str)
            .filter(|a| *a != NO_NAME);
        out.entry(app).or_default().entry(job).or_default().push(i);
    }
    out
}

/// Each window of `rows` (`z` its standardised features, `fallback` its score over its cut)
/// judged by its application's profile (module docs: the model's, else the other runs' among
/// `rows`, else the job's own): above 1 is anomalous. Pass every window judged together (a day).
pub fn judge(
    baselines: &Baselines,
    windows: &Windows,
    rows: &[usize],
    z: &[Vec<f64>],
    fallback: Vec<f64>,
    application: &HashMap<String, String>,
) -> Vec<f64> {
    let mut out = fallback;
    for (app, runs) in jobs_by_application(windows, rows, application) {
        // The model's profile, or (of an application with many runs, which one run barely
        // moves) one of all its runs here.
        let shared = match app.and_then(|a| baselines.applications.get(a)) {
            Some(b) if b.profile.is_some() => b.profile.clone(),
            _ if app.is_some() && runs.len() > LEAVE_ONE_OUT_RUNS => {
                profile_at(z, runs.values().flatten().copied())
            }
            _ => None,
        };
        for (job, positions) in &runs {
            let of_others = || {
                let others = runs.iter().filter(|(j, _)| *j != job);
                let windows: usize = others.clone().map(|(_, p)| p.len()).sum();
                (app.is_some() && runs.len() > MIN_JOBS && windows >= MIN_WINDOWS)
                    .then(|| profile_at(z, others.flat_map(|(_, p)| p.iter().copied())))
                    .flatten()
            };
            let near = knob("JS_NEAR", 0.0);
            if near > 0.0
                && shared.is_none()
                && let Some(p) = of_others()
            {
                let others: Vec<&[usize]> = runs
                    .iter()
                    .filter(|(j, _)| *j != job)
                    .map(|(_, p)| p.as_slice())
                    .collect();
                let judged = nearest_runs(&p, z, &others, positions, near);
                for (&i, v) in positions.iter().zip(judged) {
                    out[i] = v;
                }
                continue;
            }
            let profile = match &shared {
                Some(p) => Some(p.clone()),
                None => of_others().or_else(|| own_profile(z, positions)),
            };
            if let Some(profile) = profile {
                for &i in positions {
                    out[i] = profile.judge(&z[i]);
                    if knob("JS_DEBUG", 0.0) > 0.0 {
                        let mut d: Vec<(f64, usize)> = z[i]
                            .iter()
                            .zip(&profile.center)
                            .zip(&profile.spread)
                            .enumerate()
                            .map(|(f, ((v, c), s))| (((v - c) / s).abs(), f))
                            .collect();
                        d.sort_by(|a, b| b.0.total_cmp(&a.0));
                        eprintln!(
                            "DEBUG {} {} {:.2} {:?}",
                            job,
                            windows.keys[rows[i]].start_us,
                            out[i],
                            &d[..3.min(d.len())]
                        );
                    }
                }
            }
        }
    }
    out
}

// EXPERIMENT: a window against its nearest window in each other run; healthy when a `share` of
// the other runs had one like it.
fn nearest_runs(
    profile: &Profile,
    z: &[Vec<f64>],
    others: &[&[usize]],
    positions: &[usize],
    share: f64,
) -> Vec<f64> {
    let d_of = |w: &[f64], runs: &mut dyn Iterator<Item = &[usize]>| -> f64 {
        let mut per_run: Vec<f64> = runs
            .map(|r| {
                r.iter()
                    .map(|&i| profile.between(w, &z[i]))
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        if per_run.is_empty() {
            return 0.0;
        }
        per_run.sort_by(f64::total_cmp);
        let k = ((per_run.len() as f64 * share).ceil() as usize).clamp(1, per_run.len());
        per_run[k - 1]
    };
    let total: usize = others.iter().map(|r| r.len()).sum();
    let step = total.div_ceil(1000).max(1);
    let mut logs = Vec::new();
    let mut at = 0usize;
    for (ri, run) in others.iter().enumerate() {
        for &i in run.iter() {
            at += 1;
            if !at.is_multiple_of(step) {
                continue;
            }
            let mut rest = others
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != ri)
                .map(|(_, r)| *r);
            logs.push(d_of(&z[i], &mut rest).max(1e-12).ln());
        }
    }
    let cut = if knob("JS_MEDIANCUT", 0.0) > 0.0 {
        crate::baseline::far_out(&logs, knob("JS_MEDIANCUT", 0.0)).exp()
    } else {
        lower_tail(logs).0.exp()
    }
    .max(knob("JS_MINCUT", MIN_CUT));
    positions
        .iter()
        .map(|&i| d_of(&z[i], &mut others.iter().copied()) / cut)
        .collect()
}

/// Gives each application of `baselines` (those with enough runs among `rows`) the profile of
/// its windows there (`z`, their standardised features).
pub fn learn(
    baselines: &mut Baselines,
    windows: &Windows,
    rows: &[usize],
    z: &[Vec<f64>],
    application: &HashMap<String, String>,
) {
    for (app, runs) in jobs_by_application(windows, rows, application) {
        let Some(baseline) = app.and_then(|a| baselines.applications.get_mut(a)) else {
            continue;
        };
        baseline.profile = profile_at(z, runs.values().flatten().copied());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::dataset::WindowKey;

    /// Windows of `runs` runs of one application, `per_run` each, two features: `f(run, w)`.
    fn runs(
        runs: usize,
        per_run: usize,
        f: impl Fn(usize, usize) -> [f64; 2],
    ) -> (Windows, Vec<Vec<f64>>, HashMap<String, String>) {
        let mut windows = Windows::default();
        let mut z = Vec::new();
        let mut application = HashMap::new();
        for i in 0..runs {
            let job = format!("sweep-{i}");
            application.insert(job.clone(), "sweep".to_string());
            for w in 0..per_run {
                windows.keys.push(WindowKey {
                    job_id: Arc::from(job.as_str()),
                    run: None,
                    node: Arc::from("n1"),
                    start_us: w as i64,
                    end_us: w as i64 + 1,
                });
                z.push(f(i, w).to_vec());
            }
        }
        (windows, z, application)
    }

    /// A wobble of a few hundredths: healthy windows are not all alike.
    fn wobble(w: usize) -> f64 {
        ((w * 37) % 10) as f64 / 100.0
    }

    /// A serial application on one of two CPUs (feature 0 at -2, far from the training mean):
    /// a hog that fills the other CPU moves it toward the training applications (to 0), which
    /// lowers the reconstruction error but moves it away from the application's own windows.
    /// Seven of ten runs carry a hog for half their windows, and the profile still flags them
    /// and none of the healthy runs.
    #[test]
    fn an_anomaly_that_moves_a_window_toward_the_training_data_is_flagged() {
        let (windows, z, application) = runs(10, 20, |run, w| {
            let hog = run >= 3 && (8..18).contains(&w);
            [
                if hog { 0.0 } else { -2.0 + wobble(w) },
                1.0 + wobble(w * 3),
            ]
        });
        let rows: Vec<usize> = (0..z.len()).collect();
        let judged = judge(
            &Baselines::default(),
            &windows,
            &rows,
            &z,
            vec![0.0; rows.len()],
            &application,
        );
        for (i, &j) in judged.iter().enumerate() {
            let (run, w) = (i / 20, i % 20);
            let hog = run >= 3 && (8..18).contains(&w);
            assert_eq!(j > 1.0, hog, "run {run} window {w}: {j}");
        }
    }

    /// With no other run, a job is judged against its own windows: a change within the run is
    /// flagged; with too few windows the fallback stands.
    #[test]
    fn without_a_history_a_job_is_judged_against_itself() {
        let (windows, z, application) = runs(1, 20, |_, w| {
            [if w >= 14 { 3.0 } else { wobble(w) }, wobble(w * 7)]
        });
        let rows: Vec<usize> = (0..20).collect();
        let judged = judge(
            &Baselines::default(),
            &windows,
            &rows,
            &z,
            vec![0.5; 20],
            &application,
        );
        assert!(judged[..14].iter().all(|&j| j <= 1.0), "{judged:?}");
        assert!(judged[14..].iter().all(|&j| j > 1.0), "{judged:?}");
        let few: Vec<usize> = (0..MIN_QUIET_WINDOWS - 1).collect();
        let judged = judge(
            &Baselines::default(),
            &windows,
            &few,
            &z,
            vec![0.5; few.len()],
            &application,
        );
        assert!(judged.iter().all(|&j| j == 0.5));
    }

    /// A feature held steady to the last digit does not turn its noise into alarms: its spread
    /// is at least MIN_SPREAD.
    #[test]
    fn a_steady_feature_does_not_turn_noise_into_alarms() {
        let rows: Vec<Vec<f64>> = (0..40).map(|w| vec![1.0, 1e-9 * w as f64]).collect();
        let refs: Vec<&[f64]> = rows.iter().map(Vec::as_slice).collect();
        let profile = Profile::of(&refs).unwrap();
        assert_eq!(profile.spread[1], MIN_SPREAD);
        assert!(profile.judge(&[1.0, 0.1]) < 1.0);
        assert!(profile.judge(&[1.0, 0.5]) > 1.0);
        assert_eq!(profile.cut, MIN_CUT);
    }
}
