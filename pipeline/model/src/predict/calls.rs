//! What the models said of each window judged (the diagnosis's votes, the anomaly score), with
//! the window's key and its node's metrics: all the verdicts need, kept while the windows'
//! inputs are read and judged a few whole jobs at a time.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use super::Models;
use crate::ModelError;
use crate::dataset::{self, Windows};
use crate::file::Body;

/// What the models said of each window judged, in key order once [`Calls::sort`]ed: all that
/// the verdicts need, kept instead of the windows' inputs.
#[derive(Debug, Default)]
pub(super) struct Calls {
    pub(super) keys: Vec<dataset::WindowKey>,
    /// The diagnosis's votes per window (none without a diagnosis model).
    pub(super) votes: Vec<Vec<f32>>,
    /// The anomaly score per window, before the application's cut (none without the model).
    pub(super) scores: Vec<f64>,
    /// The metrics each job's node reported (in any run, and any copy read).
    pub(super) metrics_of: HashMap<(Arc<str>, Arc<str>), BTreeSet<String>>,
    /// The runs of jobs judged so far.
    runs: HashSet<(Arc<str>, Option<u32>)>,
}

impl Calls {
    /// The models' calls on `windows` (whole jobs). A run of a job judged before, from another
    /// file that also held it, is replaced by what this one holds; its other runs stay (a
    /// requeued job's runs may lie in different parts).
    pub(super) fn add(&mut self, windows: Windows, models: &Models) -> Result<(), ModelError> {
        let run_of = |k: &dataset::WindowKey| (k.job_id.clone(), k.run);
        let again: HashSet<(Arc<str>, Option<u32>)> = windows
            .keys
            .iter()
            .map(run_of)
            .filter(|run| self.runs.contains(run))
            .collect();
        if !again.is_empty() {
            let kept: Vec<usize> = (0..self.keys.len())
                .filter(|&i| !again.contains(&run_of(&self.keys[i])))
                .collect();
            self.keep(&kept);
        }
        let rows: Vec<usize> = (0..windows.keys.len()).collect();
        if let Some((_, m)) = &models.diagnosis
            && let Body::Diagnosis {
                prepared,
                forest,
                namer,
            } = &m.body
        {
            self.votes.extend(crate::namer::votes(
                prepared,
                forest,
                namer.as_ref(),
                &windows,
                &rows,
            )?);
        }
        if let Some((_, m)) = &models.unsupervised
            && let Body::Unsupervised(score) = &m.body
        {
            self.scores.extend(score.score(&windows, &rows));
        }
        self.runs.extend(windows.keys.iter().map(run_of));
        self.keys.extend(windows.keys);
        for (key, metrics) in windows.metrics_of {
            self.metrics_of.entry(key).or_default().extend(metrics);
        }
        Ok(())
    }

    /// Every list in key order (job, node, start), as one read of the whole day has them.
    pub(super) fn sort(&mut self) {
        let mut order: Vec<usize> = (0..self.keys.len()).collect();
        order.sort_by(|&a, &b| self.keys[a].cmp(&self.keys[b]));
        self.keep(&order);
    }

    /// Keeps `rows` of every list, in that order.
    fn keep(&mut self, rows: &[usize]) {
        self.keys = rows.iter().map(|&i| self.keys[i].clone()).collect();
        if !self.votes.is_empty() {
            let mut votes = std::mem::take(&mut self.votes);
            self.votes = rows
                .iter()
                .map(|&i| std::mem::take(&mut votes[i]))
                .collect();
        }
        if !self.scores.is_empty() {
            self.scores = rows.iter().map(|&i| self.scores[i]).collect();
        }
    }

    /// Row numbers by job and run.
    pub(super) fn rows_by_run(&self) -> BTreeMap<(Arc<str>, Option<u32>), Vec<usize>> {
        let mut out: BTreeMap<(Arc<str>, Option<u32>), Vec<usize>> = BTreeMap::new();
        for (i, k) in self.keys.iter().enumerate() {
            out.entry((k.job_id.clone(), k.run)).or_default().push(i);
        }
        out
    }
}
