//! The unsupervised anomaly score: how badly a window's features are reconstructed from the
//! principal components of healthy windows (Prodigy's and the Jefferson Lab autoencoder's idea,
//! with PCA as the linear autoencoder smartcore offers). It needs no labels: trained on windows
//! labelled healthy when a site has labels, else on every window (anomalies are rare, and the
//! threshold below tolerates a few).
//!
//! Features: the window mean and standard deviation of every metric that varies in training (as
//! measured, or against the job's own median window, whichever the model was trained on),
//! standardised by the training mean and spread; when there are more than `max_features`, those
//! whose spread is largest relative to their level are kept. The components kept explain
//! `variance` of the training variance. A window's score is its mean squared reconstruction error
//! divided by the threshold, the 99th percentile of the training errors (Prodigy's choice), so a
//! score above 1 is anomalous.

use serde::{Deserialize, Serialize};
use smartcore::decomposition::pca::{PCA, PCAParameters};
use smartcore::linalg::basic::arrays::Array;
use smartcore::linalg::basic::matrix::DenseMatrix;

use super::ModelError;
use super::dataset::Windows;
use super::forest::medians;

/// How the score is trained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreParams {
    pub max_features: usize,
    /// Share of the training variance the kept components explain.
    pub variance: f64,
    /// Percentile of the training errors that becomes the threshold.
    pub percentile: f64,
}

impl Default for ScoreParams {
    fn default() -> Self {
        ScoreParams {
            max_features: 150,
            variance: 0.9,
            percentile: 99.0,
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
        };
        let mut errors: Vec<f64> = z.chunks(n).map(|row| model.error(row)).collect();
        errors.sort_by(f64::total_cmp);
        let at = ((params.percentile / 100.0) * (errors.len() - 1) as f64).round() as usize;
        model.threshold = errors[at.min(errors.len() - 1)].max(f64::MIN_POSITIVE);
        Ok(model)
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
        let columns = windows.columns_of(&self.features);
        rows.iter()
            .map(|&r| {
                let row = windows.row(r);
                let z: Vec<f64> = columns
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
                    .collect();
                self.error(&z) / self.threshold
            })
            .collect()
    }
}
