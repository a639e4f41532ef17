//! The diagnosis's second forest, which names the anomaly (issue 70). The first forest, on each
//! window against its own job (`@job`), tells an anomalous window from a healthy one, and that
//! transfers to applications it never saw: no label of theirs is needed. Naming *which* anomaly
//! transferred less well, since beside an application that keeps every core busy a CPU hog, a
//! cache thrasher, a memory streamer and a disk writer change the job-relative figures in much
//! the same way; their measured levels (how much memory, how many bytes a second) tell them
//! apart better. So the namer learns from the anomalous training windows alone, on its own
//! feature set (by default the measured statistics beside the job-relative ones), and names
//! every window the first forest calls anomalous. Measured levels in the first forest made a
//! new application's healthy windows look anomalous (docs/models.md, "The diagnosis's names");
//! in the namer they cannot: it never says "healthy".
//!
//! A window's votes ([`votes`]) are the first forest's when its top class is healthy; otherwise
//! healthy gets none and each anomaly type the namer's share. So "healthy or not" is the first
//! forest's top class alone, and the unknown verdict reads how surely the namer names it.

use jobsight_base::choice::{Choice, Named};
use serde::{Deserialize, Serialize};

use super::ModelError;
use super::dataset::{FeatureSet, Windows};
use super::forest::{self, Forest, ForestParams, Prepared};

/// What the namer is trained on (`--name-features`), or that there is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameFeatures {
    /// No namer: the first forest names the anomaly too.
    None,
    Absolute,
    Relative,
    Both,
}

impl Choice for NameFeatures {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: NameFeatures::None,
            name: "none",
            help: "No second forest: the first names the anomaly too",
        },
        Named {
            value: NameFeatures::Absolute,
            name: "absolute",
            help: "Each window's statistics as measured",
        },
        Named {
            value: NameFeatures::Relative,
            name: "relative",
            help: "Each window against its job's typical window",
        },
        Named {
            value: NameFeatures::Both,
            name: "both",
            help: "Both",
        },
    ];
}

impl NameFeatures {
    /// The namer's feature set, `None` for no namer.
    pub fn set(self) -> Option<FeatureSet> {
        match self {
            NameFeatures::None => None,
            NameFeatures::Absolute => Some(FeatureSet::Absolute),
            NameFeatures::Relative => Some(FeatureSet::Relative),
            NameFeatures::Both => Some(FeatureSet::Both),
        }
    }
}

/// A fitted namer: its columns and a forest over the anomaly classes (the diagnosis's class
/// `c` is the namer's `c - 1`).
#[derive(Debug, Serialize, Deserialize)]
pub struct Namer {
    pub prepared: Prepared,
    pub forest: Forest,
}

impl Namer {
    /// Fitted on the anomalous windows among `rows` of `windows` (`labels` are the diagnosis's
    /// class indices, healthy 0, of `classes` classes), on the columns of `set`. `None` when
    /// fewer than two anomaly types have windows: the first forest names the one there is.
    pub fn fit(
        windows: &Windows,
        rows: &[usize],
        labels: &[u32],
        classes: usize,
        set: FeatureSet,
        params: &ForestParams,
    ) -> Result<Option<Namer>, ModelError> {
        let (rows, labels): (Vec<usize>, Vec<u32>) = rows
            .iter()
            .zip(labels)
            .filter(|(_, l)| **l > 0)
            .map(|(&r, &l)| (r, l - 1))
            .unzip();
        let types: std::collections::BTreeSet<u32> = labels.iter().copied().collect();
        if types.len() < 2 {
            return Ok(None);
        }
        let prepared = forest::prepare(windows, &rows, &labels, params.max_features, &|f| {
            set.holds(f)
        });
        if prepared.features.is_empty() {
            return Ok(None);
        }
        let x = prepared.matrix(windows, &rows);
        let forest = Forest::fit(x, &labels, classes - 1, params)?;
        Ok(Some(Namer { prepared, forest }))
    }
}

/// Every column a diagnosis reads, with its training median: the first forest's, then the
/// namer's not among them.
pub fn columns(prepared: &Prepared, namer: Option<&Namer>) -> Prepared {
    let mut out = prepared.clone();
    if let Some(namer) = namer {
        let first: std::collections::HashSet<&String> = prepared.features.iter().collect();
        for (f, m) in namer.prepared.features.iter().zip(&namer.prepared.medians) {
            if !first.contains(f) {
                out.features.push(f.clone());
                out.medians.push(*m);
            }
        }
    }
    out
}

/// Every column a diagnosis reads ([`columns`]).
pub fn features(prepared: &Prepared, namer: Option<&Namer>) -> Vec<String> {
    columns(prepared, namer).features
}

/// The votes per class of a diagnosis for `rows` of `windows` (the module doc). The namer reads
/// only the windows the first forest calls anomalous: most windows of a day are healthy.
pub fn votes(
    prepared: &Prepared,
    first: &Forest,
    namer: Option<&Namer>,
    windows: &Windows,
    rows: &[usize],
) -> Result<Vec<Vec<f32>>, ModelError> {
    let mut votes = first.votes(prepared.matrix(windows, rows), rows.len())?;
    let Some(namer) = namer else {
        return Ok(votes);
    };
    let anomalous: Vec<usize> = (0..rows.len())
        .filter(|&i| called_anomalous(&votes[i]))
        .collect();
    if anomalous.is_empty() {
        return Ok(votes);
    }
    let named_rows: Vec<usize> = anomalous.iter().map(|&i| rows[i]).collect();
    let x = namer.prepared.matrix(windows, &named_rows);
    let names = namer.forest.votes(x, named_rows.len())?;
    for (i, named) in anomalous.into_iter().zip(names) {
        votes[i] = renamed(named);
    }
    Ok(votes)
}

/// Whether the first forest calls a window anomalous: its top class is not healthy (class 0).
fn called_anomalous(first: &[f32]) -> bool {
    forest::top(first).0 != 0
}

/// An anomalous window's votes from the namer's (healthy none).
fn renamed(named: Vec<f32>) -> Vec<f32> {
    std::iter::once(0.0).chain(named).collect()
}

/// The first forest's votes, each window it calls anomalous renamed by the namer's votes
/// (`names`, one per window, over the anomaly classes): [`votes`] on matrices already made, for
/// the permutation importance, where the namer has judged every window.
pub fn combine(detected: Vec<Vec<f32>>, names: Option<Vec<Vec<f32>>>) -> Vec<Vec<f32>> {
    let Some(names) = names else {
        return detected;
    };
    detected
        .into_iter()
        .zip(names)
        .map(|(first, named)| {
            if called_anomalous(&first) {
                renamed(named)
            } else {
                first
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_forest_says_healthy_or_not_and_the_namer_names() {
        let detected = vec![
            vec![0.6, 0.3, 0.1],   // healthy: kept as it is
            vec![0.4, 0.45, 0.15], // anomalous (class 1 beats healthy): renamed
        ];
        let names = vec![vec![0.9, 0.1], vec![0.2, 0.8]];
        let out = combine(detected.clone(), Some(names));
        assert_eq!(out[0], detected[0]);
        assert_eq!(out[1], vec![0.0, 0.2, 0.8]);
        // The namer's share is what the unknown verdict reads.
        assert_eq!(forest::decide(&out, 0.75), vec![Some(0), Some(2)]);
        assert_eq!(forest::decide(&out, 0.85), vec![Some(0), None]);
        // Without a namer the first forest's votes stand.
        assert_eq!(combine(detected.clone(), None), detected);
    }

    #[test]
    fn feature_sets_hold_their_columns_and_combine_for_two_forests() {
        assert!(FeatureSet::Relative.holds("cpu_user:mean@job"));
        assert!(!FeatureSet::Relative.holds("cpu_user:mean"));
        assert!(FeatureSet::Absolute.holds("cpu_user:mean"));
        assert!(!FeatureSet::Absolute.holds("cpu_user:mean@app"));
        assert!(FeatureSet::Both.holds("cpu_user:mean") && FeatureSet::Both.holds("x:p50@job"));
        assert!(!FeatureSet::Both.holds("x:p50@app"));
        assert!(FeatureSet::Application.holds("x:p50@app"));
        let both = Some(FeatureSet::Both);
        assert_eq!(FeatureSet::Relative.with(FeatureSet::Absolute), both);
        assert_eq!(FeatureSet::Relative.with(FeatureSet::Both), both);
        assert_eq!(
            FeatureSet::Relative.with(FeatureSet::Relative),
            Some(FeatureSet::Relative)
        );
        assert_eq!(FeatureSet::Application.with(FeatureSet::Both), None);
    }
}
