//! The unsupervised anomaly score: how badly a window's features are reconstructed from the
//! principal components of healthy windows (Prodigy's and the Jefferson Lab autoencoder's idea,
//! with PCA as the linear autoencoder smartcore offers). It needs no labels: trained on windows
//! labelled healthy when a site has labels, else on every window (anomalies are rare, and the
//! threshold below tolerates a few).
//!
//! Features: the window mean and standard deviation of every metric that varies in training (as
//! measured, or against the job's own median window, whichever the model was trained on),
//! standardised by the training mean and spread; all of them up to `max_features` (1,000, a bound
//! on PCA's cost, which grows with the cube of the columns), beyond it those whose spread is
//! largest relative to their level. A smaller cap made the score depend on which other series a
//! source records: on the HPAS runs, 28 series derived from the same counters pushed the ones
//! that show a busy core out of the first 150 (docs/models.md). The components kept explain
//! `variance` of the training variance. A window's score is its mean squared reconstruction error
//! divided by the threshold, the 99th percentile of the training errors (Prodigy's choice), so a
//! score above 1 is anomalous.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use smartcore::decomposition::pca::{PCA, PCAParameters};
use smartcore::linalg::basic::arrays::Array;
use smartcore::linalg::basic::matrix::DenseMatrix;

use super::ModelError;
use super::baseline::{Baselines, far_out};
use super::dataset::Windows;
use super::forest::medians;

/// How far out (in robust deviations of a distance) a training window must lie to be set aside
/// by [`AnomalyScore::fit_refined`].
pub const REFINE_Z: f64 = 3.5;

/// After refining, the threshold is at least the error this many robust deviations above the
/// median of the kept windows: the percentile of windows already cut at their tail lies below
/// where healthy windows reach (measured on the HPAS runs: at the percentile alone, refining
/// doubled the false alarms on clean data; with this floor it lowered them, docs/models.md).
pub const REFINED_THRESHOLD_Z: f64 = 5.0;

/// [`far_out`] of each value within its group (groups of fewer than [`MIN_GROUP`] values take
/// the cut of all values).
fn far_out_per_group(values: &[f64], groups: &[u32], z: f64) -> Vec<f64> {
    let all = far_out(values, z);
    let mut members: std::collections::BTreeMap<u32, Vec<f64>> = Default::default();
    for (&v, &g) in values.iter().zip(groups) {
        members.entry(g).or_default().push(v);
    }
    let cuts: std::collections::BTreeMap<u32, f64> = members
        .into_iter()
        .map(|(g, v)| {
            (
                g,
                if v.len() >= MIN_GROUP {
                    far_out(&v, z)
                } else {
                    all
                },
            )
        })
        .collect();
    groups
        .iter()
        .map(|g| cuts.get(g).copied().unwrap_or(all))
        .collect()
}

/// Windows a group needs for a cut of its own.
const MIN_GROUP: usize = 30;

/// How the score is trained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreParams {
    pub max_features: usize,
    /// Share of the training variance the kept components explain.
    pub variance: f64,
    /// Percentile of the training errors that becomes the threshold.
    pub percentile: f64,
    /// How each application's cut on the score is taken.
    pub baseline: crate::baseline::BaselineMethod,
}

impl Default for ScoreParams {
    fn default() -> Self {
        ScoreParams {
            max_features: 1000,
            variance: 0.9,
            percentile: 99.0,
            baseline: crate::baseline::BaselineMethod::default(),
        }
    }
}

/// A fitted anomaly score.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AnomalyScore {
    pub features: Vec<String>,
    pub center: Vec<f64>,
    pub scale: Vec<f64>,
    /// Kept components, each of `features.len()` loadings.
    pub components: Vec<Vec<f64>>,
    /// Training error at the percentile: a window scoring above it is anomalous.
    pub threshold: f64,
    pub explained: f64,
    /// Each training application's cut on the score ([`super::baseline`]; files from before
    /// baselines load with none and judge every window against the threshold alone).
    #[serde(default)]
    pub baselines: Baselines,
}

impl AnomalyScore {
    pub fn fit(
        windows: &Windows,
        rows: &[usize],
        params: &ScoreParams,
    ) -> Result<AnomalyScore, ModelError> {
        if rows.len() < 10 {
            return Err(ModelError::Fit(format!(
                "{} training window(s); the anomaly score needs at least 10",
                rows.len()
            )));
        }
        let fill = medians(windows, rows);
        // Candidate columns: mean and std of each metric, present and varying.
        let mut candidates: Vec<(usize, f64, f64, f64)> = Vec::new();
        for (c, f) in windows.features.iter().enumerate() {
            let measured = super::dataset::measured(f);
            if !(measured.ends_with(":mean") || measured.ends_with(":std")) {
                continue;
            }
            let Some(fill) = fill[c] else { continue };
            let column = windows.filled_column(rows, c, fill);
            let mean = column.iter().sum::<f64>() / column.len() as f64;
            let var = column.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / column.len() as f64;
            let sd = var.sqrt();
            // Constant (or NaN) columns carry nothing and would divide by zero.
            if sd.is_nan() || sd <= 1e-12 * mean.abs().max(1.0) {
                continue;
            }
            let relative = sd / mean.abs().max(sd * 1e-3);
            candidates.push((c, mean, sd, relative));
        }
        if candidates.len() < 2 {
            return Err(ModelError::Fit(
                "fewer than two metrics vary in the training windows: nothing to learn".into(),
            ));
        }
        candidates.sort_by(|a, b| b.3.total_cmp(&a.3).then(a.0.cmp(&b.0)));
        candidates.truncate(params.max_features.max(2));
        candidates.sort_by_key(|c| c.0);
        let n = candidates.len();
        let mut z = Vec::with_capacity(rows.len() * n);
        for &r in rows {
            let row = windows.row(r);
            for &(c, mean, sd, _) in &candidates {
                let v = if row[c].is_finite() {
                    row[c]
                } else {
                    fill[c].unwrap_or(mean)
                };
                z.push((v - mean) / sd);
            }
        }
        let m = rows.len();
        let x =
            DenseMatrix::new(m, n, z.clone(), false).map_err(|e| ModelError::Fit(e.to_string()))?;
        let most = n.min(m.saturating_sub(1)).max(1);
        let pca = PCA::fit(&x, PCAParameters::default().with_n_components(most))
            .map_err(|e| ModelError::Fit(format!("PCA: {e}")))?;
        let projection = pca.components();
        // Each component's variance in the training data orders them and picks how many to keep.
        let scores = pca
            .transform(&x)
            .map_err(|e| ModelError::Fit(format!("PCA: {e}")))?;
        let variances: Vec<f64> = (0..most)
            .map(|k| {
                let col: Vec<f64> = (0..m).map(|r| *scores.get((r, k))).collect();
                let mean = col.iter().sum::<f64>() / m as f64;
                col.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / m as f64
            })
            .collect();
        let total: f64 = n as f64; // standardised: every feature has variance 1
        let mut order: Vec<usize> = (0..most).collect();
        order.sort_by(|&a, &b| variances[b].total_cmp(&variances[a]));
        let mut kept = Vec::new();
        let mut explained = 0.0;
        for k in order {
            if explained >= params.variance {
                break;
            }
            explained += variances[k] / total;
            kept.push(
                (0..n)
                    .map(|i| *projection.get((i, k)))
                    .collect::<Vec<f64>>(),
            );
        }
        let mut model = AnomalyScore {
            features: candidates
                .iter()
                .map(|c| windows.features[c.0].clone())
                .collect(),
            center: candidates.iter().map(|c| c.1).collect(),
            scale: candidates.iter().map(|c| c.2).collect(),
            components: kept,
            threshold: 1.0,
            explained,
            baselines: Default::default(),
        };
        let mut errors: Vec<f64> = z.chunks(n).map(|row| model.error(row)).collect();
        errors.sort_by(f64::total_cmp);
        let at = ((params.percentile / 100.0) * (errors.len() - 1) as f64).round() as usize;
        model.threshold = errors[at.min(errors.len() - 1)].max(f64::MIN_POSITIVE);
        Ok(model)
    }

    /// [`AnomalyScore::fit`] after up to `rounds` rounds of setting aside the training windows
    /// that do not look like the rest, as Refine (ISC 2025) does for training data holding
    /// anomalies nobody labelled. Two distances, as robust PCA (ROBPCA) uses them: the size of a
    /// window's residual (what the components cannot explain) and its distance along the
    /// components, each in units of its variance there (an anomaly common enough to earn a
    /// component of its own reconstructs well but lies far out along it). A window either of
    /// whose distances lies more than [`REFINE_Z`] robust deviations above the median of its
    /// group is set aside and the score fitted again, until none is. `groups` (one per row, all
    /// 0 for one group) are the rows' applications: a rare application's healthy windows lie far
    /// from the common ones' and must be judged against their own kind, or refining takes the
    /// rare application for an anomaly. The threshold is then the percentile of
    /// the windows kept, but at least the error [`REFINED_THRESHOLD_Z`] robust deviations out.
    /// Returns the model and how many windows were set aside.
    pub fn fit_refined(
        windows: &Windows,
        rows: &[usize],
        groups: &[u32],
        params: &ScoreParams,
        rounds: u8,
    ) -> Result<(AnomalyScore, usize), ModelError> {
        let mut kept: Vec<(usize, u32)> = rows
            .iter()
            .zip(groups.iter().chain(std::iter::repeat(&0)))
            .map(|(&r, &g)| (r, g))
            .collect();
        let rows_of = |kept: &[(usize, u32)]| kept.iter().map(|k| k.0).collect::<Vec<_>>();
        let mut model = AnomalyScore::fit(windows, &rows_of(&kept), params)?;
        for _ in 0..rounds {
            let (residual, along) = model.distances(windows, &rows_of(&kept));
            let group_of: Vec<u32> = kept.iter().map(|k| k.1).collect();
            let residual_cut = far_out_per_group(&residual, &group_of, REFINE_Z);
            let along_cut = far_out_per_group(&along, &group_of, REFINE_Z);
            let next: Vec<(usize, u32)> = kept
                .iter()
                .enumerate()
                .filter(|(i, _)| residual[*i] <= residual_cut[*i] && along[*i] <= along_cut[*i])
                .map(|(_, k)| *k)
                .collect();
            if next.len() == kept.len() || next.len() < 10 {
                break;
            }
            kept = next;
            model = AnomalyScore::fit(windows, &rows_of(&kept), params)?;
        }
        if rounds > 0 {
            let (residual, _) = model.distances(windows, &rows_of(&kept));
            let cut = far_out(&residual, REFINED_THRESHOLD_Z);
            model.threshold = model.threshold.max(cut * cut);
        }
        Ok((model, rows.len() - kept.len()))
    }

    /// Each row's standardised features (a missing value counts as the training mean).
    fn standardised(&self, windows: &Windows, rows: &[usize]) -> Vec<Vec<f64>> {
        let columns = windows.columns_of(&self.features);
        rows.iter()
            .map(|&r| {
                let row = windows.row(r);
                columns
                    .iter()
                    .enumerate()
                    .map(|(c, column)| {
                        let v = column.map_or(f64::NAN, |i| row[i]);
                        if v.is_finite() {
                            (v - self.center[c]) / self.scale[c]
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// Per row: the root of its reconstruction error, and its distance along the components
    /// (the root of the sum of its squared projections, each over that component's variance
    /// among these rows).
    fn distances(&self, windows: &Windows, rows: &[usize]) -> (Vec<f64>, Vec<f64>) {
        let z = self.standardised(windows, rows);
        let projections: Vec<Vec<f64>> = z
            .iter()
            .map(|row| {
                self.components
                    .iter()
                    .map(|c| c.iter().zip(row).map(|(a, b)| a * b).sum())
                    .collect()
            })
            .collect();
        let n = rows.len().max(1) as f64;
        let variances: Vec<f64> = (0..self.components.len())
            .map(|k| {
                let mean = projections.iter().map(|p| p[k]).sum::<f64>() / n;
                let var = projections
                    .iter()
                    .map(|p| (p[k] - mean).powi(2))
                    .sum::<f64>()
                    / n;
                var.max(1e-12)
            })
            .collect();
        let residual = z.iter().map(|row| self.error(row).sqrt()).collect();
        let along = projections
            .iter()
            .map(|p| {
                p.iter()
                    .zip(&variances)
                    .map(|(t, v)| t * t / v)
                    .sum::<f64>()
                    .sqrt()
            })
            .collect();
        (residual, along)
    }

    /// Mean squared reconstruction error of one standardised row.
    fn error(&self, z: &[f64]) -> f64 {
        let mut residual = z.to_vec();
        for component in &self.components {
            let weight: f64 = component.iter().zip(z).map(|(a, b)| a * b).sum();
            for (r, a) in residual.iter_mut().zip(component) {
                *r -= weight * a;
            }
        }
        residual.iter().map(|r| r * r).sum::<f64>() / z.len().max(1) as f64
    }

    /// The score of `rows` of `windows`: reconstruction error over the threshold (> 1:
    /// anomalous). Columns are matched by name; a missing value counts as the training mean.
    pub fn score(&self, windows: &Windows, rows: &[usize]) -> Vec<f64> {
        self.standardised(windows, rows)
            .iter()
            .map(|z| self.error(z) / self.threshold)
            .collect()
    }
}

// Judging within applications ([`super::baseline`]): the score over each job's cut.
impl AnomalyScore {
    /// The scores of `rows` judged within their applications: each over its job's cut
    /// ([`Baselines::cuts`]), so that above 1 is anomalous. The other runs of an application
    /// the model has no baseline of are found among `rows`: pass every window being judged
    /// together (a day), not one job's.
    pub fn judge(
        &self,
        windows: &Windows,
        rows: &[usize],
        application: &HashMap<String, String>,
    ) -> Vec<f64> {
        let scores = self.score(windows, rows);
        self.over_cuts(windows, rows, scores, application)
    }

    /// `scores` ([`Self::score`] of `rows` of `windows`) each over its job's cut, as
    /// [`Self::judge`] has them; only the windows' keys are read, so the scores may have been
    /// computed a few jobs at a time.
    pub fn over_cuts(
        &self,
        windows: &Windows,
        rows: &[usize],
        scores: Vec<f64>,
        application: &HashMap<String, String>,
    ) -> Vec<f64> {
        self.over_cuts_with_history(windows, rows, scores, application)
            .into_iter()
            .map(|(score, _)| score)
            .collect()
    }

    /// [`Self::over_cuts`], each score with whether its job had a cut of its application's
    /// history (false: judged against the score's own threshold, which does not transfer to an
    /// application the score never saw; docs/models.md, "With no history").
    pub fn over_cuts_with_history(
        &self,
        windows: &Windows,
        rows: &[usize],
        scores: Vec<f64>,
        application: &HashMap<String, String>,
    ) -> Vec<(f64, bool)> {
        let cuts = self.baselines.cuts(windows, rows, &scores, application);
        rows.iter()
            .zip(scores)
            .map(|(&r, s)| match cuts.get(&windows.keys[r].job_id) {
                Some(cut) => (s / cut, true),
                None => (s, false),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use super::*;
    use crate::dataset::WindowKey;

    /// 400 healthy windows on a line (two metrics that move together, a third independent),
    /// then `bad` windows off it, as unlabelled anomalies in the training data.
    fn windows(bad: usize) -> Windows {
        let mut values = Vec::new();
        for i in 0..400 + bad {
            let t = (i % 97) as f64 / 97.0;
            let wobble = ((i * 37) % 11) as f64 / 110.0;
            let row = if i < 400 {
                [t, 2.0 * t + 0.01 * wobble, wobble, 1.0 + wobble]
            } else {
                // Off the line: the pair no longer moves together.
                [t, 5.0 - 3.0 * t, 4.0 * wobble, 1.0 + wobble]
            };
            values.extend(row);
        }
        let features = ["a:mean", "b:mean", "c:mean", "d:std"].map(String::from);
        windows_of(features.to_vec(), values)
    }

    /// `values`, a row of `features` a window, as windows one microsecond long on node `n1`, 20
    /// windows a job.
    fn windows_of(features: Vec<String>, values: Vec<f64>) -> Windows {
        let keys = (0..values.len() / features.len())
            .map(|i| WindowKey {
                job_id: Arc::from(format!("j{}", i / 20).as_str()),
                run: None,
                node: Arc::from("n1"),
                start_us: i as i64,
                end_us: i as i64 + 1,
            })
            .collect();
        Windows {
            features,
            keys,
            values,
            ..Windows::default()
        }
    }

    /// The one steady column an anomaly moves is kept, however many columns of noise around
    /// zero (whose spread is large relative to their level) a source also records: with 150
    /// columns at most, the noise took every place and the anomaly went unseen.
    #[test]
    fn a_steady_column_is_kept_among_many_noisy_ones() {
        let noisy = 200;
        let mut features = vec!["busy:mean".to_string()];
        features.extend((0..noisy).map(|k| format!("noise{k}:mean")));
        let mut values = Vec::new();
        for i in 0..401 {
            // The last window is the anomaly: the steady column drops by a tenth.
            let busy = if i < 400 {
                0.99 + ((i * 7) % 5) as f64 * 0.001
            } else {
                0.89
            };
            values.push(busy);
            values.extend((0..noisy).map(|k| (((i * 31 + k * 17) % 23) as f64 - 11.0) * 1e-4));
        }
        let windows = windows_of(features, values);
        let healthy: Vec<usize> = (0..400).collect();
        let model = AnomalyScore::fit(&windows, &healthy, &ScoreParams::default()).unwrap();
        assert!(model.features.iter().any(|f| f == "busy:mean"));
        assert!(model.score(&windows, &[400])[0] > 1.0);
    }

    /// A group of its own level is judged against itself; a group too small for a cut of its
    /// own takes the cut of all values.
    #[test]
    fn far_out_cuts_within_each_group() {
        let mut values: Vec<f64> = (0..100).map(|i| 1.0 + (i % 10) as f64 * 0.01).collect();
        let mut groups = vec![0u32; 100];
        // A rare application, well above the common one but steady: 40 windows.
        values.extend((0..40).map(|i| 5.0 + (i % 10) as f64 * 0.01));
        groups.extend([1u32; 40]);
        // Five windows of a third, too few for a cut of their own.
        values.extend([5.0; 5]);
        groups.extend([2u32; 5]);
        let cuts = far_out_per_group(&values, &groups, REFINE_Z);
        let kept = |range: std::ops::Range<usize>| range.filter(|&i| values[i] <= cuts[i]).count();
        assert_eq!(kept(0..100), 100);
        assert_eq!(
            kept(100..140),
            40,
            "the rare application is not an anomaly of its own"
        );
        assert_eq!(
            kept(140..145),
            0,
            "too few to judge alone: against all, far out"
        );
        assert_eq!(cuts[140], far_out(&values, REFINE_Z));
    }

    #[test]
    fn refining_sets_aside_unlabelled_anomalies_and_then_flags_them() {
        let params = ScoreParams {
            variance: 0.75,
            ..ScoreParams::default()
        };
        let data = windows(40);
        let all: Vec<usize> = (0..440).collect();
        let anomalous: Vec<usize> = (400..440).collect();
        let flagged = |m: &AnomalyScore| {
            m.score(&data, &anomalous)
                .iter()
                .filter(|&&s| s > 1.0)
                .count()
        };

        // Trained on everything, the anomalies are part of "normal".
        let plain = AnomalyScore::fit(&data, &all, &params).unwrap();
        let (refined, set_aside) = AnomalyScore::fit_refined(&data, &all, &[], &params, 3).unwrap();
        assert!(set_aside >= 36, "set aside {set_aside}");
        assert!(
            set_aside <= 60,
            "set aside {set_aside}: healthy windows went too"
        );
        assert!(
            flagged(&refined) >= 36 && flagged(&refined) > flagged(&plain),
            "refined flags {} of 40, plain {}",
            flagged(&refined),
            flagged(&plain)
        );
        // On clean data refining changes little, and 0 rounds is the plain fit.
        let clean = windows(0);
        let rows: Vec<usize> = (0..400).collect();
        let (_, clean_aside) = AnomalyScore::fit_refined(&clean, &rows, &[], &params, 3).unwrap();
        assert!(
            clean_aside <= 20,
            "set aside {clean_aside} of 400 clean windows"
        );
        let (same, none) = AnomalyScore::fit_refined(&data, &all, &[], &params, 0).unwrap();
        assert_eq!((same.threshold, none), (plain.threshold, 0));
    }
}
