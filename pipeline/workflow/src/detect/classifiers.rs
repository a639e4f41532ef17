//! The supervised classifiers and what they learn from: the task classifier (seeded single-tree
//! forests over each task's z-scores, its host's evidence, and its run time against its kind in
//! its run) and the run classifier (a random forest over the run's shape: how each phase's
//! delays are spread over its tasks, its hosts, its time and its DAG).

use std::collections::{BTreeMap, HashMap};

use smartcore::ensemble::random_forest_classifier::{
    RandomForestClassifier, RandomForestClassifierParameters,
};
use smartcore::linalg::basic::matrix::DenseMatrix;

use jobsight_base::stats;

use super::error::DetectError;
use super::task_score::{FLAG_ABOVE, History, HostScore, runtime_vs_run};
use super::tasks::{
    CPU_RATE, EXEC, N_SIGNALS, POST, QUEUE, STAGE_IN, STAGE_IN_RATE, STAGE_OUT, Task, WMS,
};

/// A task or host "stands out" on a signal above this z-score (a run-level feature).
const STANDS_OUT: f64 = 2.0;

/// The hosts of the runs of some tasks, as the supervised task classifier sees them: a degraded
/// worker is what it looks for, and the tasks of one host share it (in Flow-Bench's traces every
/// task of a host in a run has the same label), so its rows are the hosts of the runs and a task
/// gets its host's votes.
struct HostRows {
    /// Each host of a run, `run\nhost`, in that order.
    keys: Vec<String>,
    /// Its figures: its median z-score per signal against history, the same less the median of
    /// the run's hosts (the host against its peers, per signal), its evidence against history
    /// and the run and its score (the unsupervised score's inputs and result), how many tasks it
    /// ran (log), and the median over its tasks of the logarithm of their run time against their
    /// kind in the run (0 without one).
    x: Vec<Vec<f64>>,
    /// Each task's host's place in `keys` and `x`, in `tasks` order.
    of_task: Vec<usize>,
}

fn host_rows(tasks: &[&Task], hosts: &[HostScore]) -> HostRows {
    let vs_run = runtime_vs_run(tasks);
    let mut groups: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, t) in tasks.iter().enumerate() {
        groups
            .entry((t.run.as_str(), t.host.as_deref().unwrap_or("")))
            .or_default()
            .push(i);
    }
    let groups: Vec<((&str, &str), Vec<usize>)> = groups.into_iter().collect();
    let mut rows = HostRows {
        keys: Vec::with_capacity(groups.len()),
        x: Vec::with_capacity(groups.len()),
        of_task: vec![0; tasks.len()],
    };
    for run in groups.chunk_by(|a, b| a.0.0 == b.0.0) {
        // Per signal, the median over the run's hosts of their medians.
        let level: [f64; N_SIGNALS] = std::array::from_fn(|s| {
            let mut v: Vec<f64> = run.iter().map(|(_, m)| hosts[m[0]].signals[s]).collect();
            stats::median(&mut v).unwrap_or(0.0)
        });
        for ((run_id, host), members) in run {
            let h = &hosts[members[0]];
            let mut row: Vec<f64> = h.signals.to_vec();
            row.extend((0..N_SIGNALS).map(|s| h.signals[s] - level[s]));
            row.extend([h.vs_history, h.vs_run, h.score()]);
            row.push((members.len() as f64).ln());
            let mut slower: Vec<f64> = members
                .iter()
                .filter_map(|&i| vs_run[i].filter(|v| *v > 0.0).map(f64::ln))
                .collect();
            row.push(stats::median(&mut slower).unwrap_or(0.0));
            for &i in members {
                rows.of_task[i] = rows.x.len();
            }
            rows.keys.push(format!("{run_id}\n{host}"));
            rows.x.push(row);
        }
    }
    rows
}

/// The labelled tasks of `tasks`, with their host z-scores.
fn labelled_only<'a>(tasks: &[&'a Task], hosts: &[HostScore]) -> (Vec<&'a Task>, Vec<HostScore>) {
    tasks
        .iter()
        .zip(hosts)
        .filter(|(t, _)| t.anomalous.is_some())
        .map(|(t, h)| (*t, *h))
        .unzip()
}

/// Training rows (hosts of runs) one tree of the task classifier learns from: every row up to
/// this, a seeded sample beyond it, so that training on a long history stays seconds (the 351
/// 1000 Genome runs are 7,400 hosts of runs).
const TASK_ROWS_PER_TREE: usize = 20_000;
/// Trees of the task classifier (scikit-learn's default forest size).
const TASK_TREES: u64 = 100;

/// The supervised task classifier, learnt from the labelled tasks of `tasks`: `TASK_TREES`
/// trees over the hosts of their runs ([`HostRows`]; a host is anomalous when at least half its
/// labelled tasks are), each on its own seeded sample of them drawn by their names, not their
/// places, so that the same runs give the same trees whatever order the warehouse returned them
/// in. Empty when the hosts are not labelled both ways.
pub fn fit_task_classifier(
    tasks: &[&Task],
    hosts: &[HostScore],
    seed: u64,
) -> Result<Vec<RunForest>, DetectError> {
    use rayon::prelude::*;
    let (tasks, hosts) = labelled_only(tasks, hosts);
    let rows = host_rows(&tasks, &hosts);
    // Per host: its anomalous and its labelled tasks.
    let mut counts = vec![(0usize, 0usize); rows.x.len()];
    for (t, &r) in tasks.iter().zip(&rows.of_task) {
        counts[r].0 += usize::from(t.anomalous == Some(true));
        counts[r].1 += 1;
    }
    let y: Vec<u32> = counts
        .iter()
        .map(|&(anomalous, labelled)| u32::from(2 * anomalous >= labelled))
        .collect();
    if y.is_empty() || !y.contains(&1) || !y.contains(&0) {
        return Ok(Vec::new());
    }
    let (x, keys) = (&rows.x, &rows.keys);
    (0..TASK_TREES)
        .into_par_iter()
        .map(|tree| {
            let mut sample: Vec<usize> = (0..x.len()).collect();
            let tree_seed = seed ^ tree.wrapping_mul(0x9e37_79b9);
            sample.sort_by_key(|&i| (stats::hash(&keys[i], tree_seed), &keys[i]));
            sample.truncate(TASK_ROWS_PER_TREE);
            let xs: Vec<Vec<f64>> = sample.iter().map(|&i| x[i].clone()).collect();
            let ys: Vec<u32> = sample.iter().map(|&i| y[i]).collect();
            let params = RandomForestClassifierParameters::default()
                .with_n_trees(1)
                .with_seed(seed.wrapping_add(tree));
            RunForest::fit(&dense(&xs)?, &ys, params).map_err(|e| DetectError::Fit(e.to_string()))
        })
        .collect()
}

/// Each task's share of `trees` (the task classifier) that call its host in its run anomalous,
/// in `tasks` order; 0 without trees. Each host is judged once.
pub fn task_votes(
    trees: &[RunForest],
    tasks: &[&Task],
    hosts: &[HostScore],
) -> Result<Vec<f64>, DetectError> {
    if trees.is_empty() || tasks.is_empty() {
        return Ok(vec![0.0; tasks.len()]);
    }
    let rows = host_rows(tasks, hosts);
    let m = dense(&rows.x)?;
    let calls: Vec<Vec<u32>> = trees
        .iter()
        .map(|t| t.predict(&m).map_err(|e| DetectError::Fit(e.to_string())))
        .collect::<Result<_, _>>()?;
    let share = |r: usize| calls.iter().filter(|c| c[r] == 1).count() as f64 / calls.len() as f64;
    let by_host: Vec<f64> = (0..rows.x.len()).map(share).collect();
    Ok(rows.of_task.iter().map(|&r| by_host[r]).collect())
}

/// The phases (and rates) whose spread over a run the run classifier reads: the workflow
/// system's and the queue's waits, staging in, execution, staging out, the post script, and the
/// CPU seconds and stage-in bytes a second.
const PHASES: [usize; 8] = [
    WMS,
    QUEUE,
    STAGE_IN,
    EXEC,
    STAGE_OUT,
    POST,
    CPU_RATE,
    STAGE_IN_RATE,
];
/// The run's span is cut into this many slices for its shape over time.
const TIME_SLICES: usize = 10;

/// The run-level figures of each run in `runs` (the run's Gantt chart in numbers):
/// - its hosts' scores: the largest, second, 75th percentile and median, the share above the
///   flagging cut (of the score alone), and the largest evidence against history and against
///   the run;
/// - per phase of [`PHASES`], from its tasks' z-scores: over the tasks the median, 90th
///   percentile, largest and share above [`STANDS_OUT`]; over the hosts (each host's median) the
///   largest, second and median; over time (the median of each tenth of the run's span, by
///   start of execution) the largest and where it falls; over the DAG the largest median of a
///   depth;
/// - its hosts' shares of the task classifier's votes (`votes`, each task's, in `tasks` order;
///   all 0 without a classifier): the largest, second and median, and the share of hosts it
///   calls anomalous.
pub fn run_features(
    tasks: &[&Task],
    history: &History,
    hosts: &[HostScore],
    votes: &[f64],
    runs: &[String],
) -> Vec<Vec<f64>> {
    let mut per_run: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, t) in tasks.iter().enumerate() {
        per_run.entry(t.run.as_str()).or_default().push(i);
    }
    runs.iter()
        .map(|run| {
            let members = per_run.get(run.as_str()).map_or(&[][..], |m| &m[..]);
            let mut row = run_row(tasks, history, hosts, members);
            row.extend(vote_figures(tasks, votes, members));
            row
        })
        .collect()
}

fn run_row(tasks: &[&Task], history: &History, hosts: &[HostScore], members: &[usize]) -> Vec<f64> {
    let mut row = Vec::new();
    let mut by_host: BTreeMap<&str, HostScore> = BTreeMap::new();
    for &i in members {
        by_host.insert(tasks[i].host.as_deref().unwrap_or(""), hosts[i]);
    }
    let mut scores: Vec<f64> = by_host.values().map(HostScore::score).collect();
    scores.sort_by(|a, b| b.total_cmp(a));
    row.extend([
        top(&scores, 0),
        top(&scores, 1),
        share_at(&scores, 0.25),
        share_at(&scores, 0.5),
        share_above(&scores, FLAG_ABOVE),
        by_host.values().map(|h| h.vs_history).fold(0.0, f64::max),
        by_host.values().map(|h| h.vs_run).fold(0.0, f64::max),
    ]);
    let z: Vec<[Option<f64>; N_SIGNALS]> = members.iter().map(|&i| history.z(tasks[i])).collect();
    let starts: Vec<f64> = members.iter().filter_map(|&i| tasks[i].start).collect();
    let first = starts.iter().copied().fold(f64::INFINITY, f64::min);
    let last = starts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    for p in PHASES {
        let mut values: Vec<f64> = z.iter().filter_map(|z| z[p]).collect();
        values.sort_by(|a, b| b.total_cmp(a));
        row.extend([
            share_at(&values, 0.5),
            share_at(&values, 0.1),
            top(&values, 0),
            share_above(&values, STANDS_OUT),
        ]);
        let mut host_medians: Vec<f64> = by_host.values().map(|h| h.signals[p]).collect();
        host_medians.sort_by(|a, b| b.total_cmp(a));
        row.extend([
            top(&host_medians, 0),
            top(&host_medians, 1),
            share_at(&host_medians, 0.5),
        ]);
        let mut slices: Vec<Vec<f64>> = vec![Vec::new(); TIME_SLICES];
        let mut depths: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
        for (&i, z) in members.iter().zip(&z) {
            let Some(v) = z[p] else { continue };
            if let Some(start) = tasks[i].start.filter(|_| last > first) {
                let at = ((start - first) / (last - first) * TIME_SLICES as f64) as usize;
                slices[at.min(TIME_SLICES - 1)].push(v);
            }
            if let Some(d) = tasks[i].depth {
                depths.entry(d).or_default().push(v);
            }
        }
        let slice_medians: Vec<f64> = slices
            .iter_mut()
            .map(|v| stats::median(v).unwrap_or(0.0))
            .collect();
        let (peak_at, peak) =
            slice_medians
                .iter()
                .enumerate()
                .fold(
                    (0, 0.0_f64),
                    |best, (i, v)| if *v > best.1 { (i, *v) } else { best },
                );
        row.extend([peak, peak_at as f64 / (TIME_SLICES - 1) as f64]);
        row.push(
            depths
                .values_mut()
                .filter_map(|v| stats::median(v))
                .fold(0.0, f64::max),
        );
    }
    row
}

/// A run's hosts' vote shares (one per host: its tasks share it): the largest, second and
/// median, and the share at or above half the votes.
fn vote_figures(tasks: &[&Task], votes: &[f64], members: &[usize]) -> [f64; 4] {
    let mut by_host: BTreeMap<&str, f64> = BTreeMap::new();
    for &i in members {
        by_host.insert(tasks[i].host.as_deref().unwrap_or(""), votes[i]);
    }
    let mut shares: Vec<f64> = by_host.into_values().collect();
    shares.sort_by(|a, b| b.total_cmp(a));
    [
        top(&shares, 0),
        top(&shares, 1),
        share_at(&shares, 0.5),
        share_above(&shares, 0.5 - f64::EPSILON),
    ]
}

/// Folds of the task classifier's own cross-validation, when its votes on training runs feed
/// the run classifier (votes on the runs it learnt from would be too sure).
const VOTE_FOLDS: u64 = 5;

/// Each task's vote share from a task classifier that did not learn from its run: the runs are
/// split into [`VOTE_FOLDS`] by their names' hash, and each fold's tasks are judged by trees
/// fitted on the others. What the run classifier learns from, so that it learns how far the
/// votes on unseen runs can be trusted.
pub fn out_of_fold_votes(
    tasks: &[&Task],
    hosts: &[HostScore],
    seed: u64,
) -> Result<Vec<f64>, DetectError> {
    let fold_of: Vec<u64> = tasks
        .iter()
        .map(|t| stats::hash(&t.run, seed) % VOTE_FOLDS)
        .collect();
    let mut votes = vec![0.0; tasks.len()];
    for fold in 0..VOTE_FOLDS {
        let pick = |inside: bool| -> (Vec<usize>, Vec<&Task>, Vec<HostScore>) {
            let at: Vec<usize> = (0..tasks.len())
                .filter(|&i| (fold_of[i] == fold) == inside)
                .collect();
            let t = at.iter().map(|&i| tasks[i]).collect();
            let h = at.iter().map(|&i| hosts[i]).collect();
            (at, t, h)
        };
        let (_, train, train_hosts) = pick(false);
        let (at, test, test_hosts) = pick(true);
        let trees = fit_task_classifier(&train, &train_hosts, seed.wrapping_add(fold))?;
        let fold_votes = task_votes(&trees, &test, &test_hosts)?;
        for (i, v) in at.into_iter().zip(fold_votes) {
            votes[i] = v;
        }
    }
    Ok(votes)
}

/// The `i`-th largest of `sorted` (largest first), 0 when there are fewer.
fn top(sorted: &[f64], i: usize) -> f64 {
    sorted.get(i).copied().unwrap_or(0.0)
}

/// The value a share `q` of `sorted` (largest first) is at or above, 0 for none.
fn share_at(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// The share of `values` above `cut`, 0 for none.
fn share_above(values: &[f64], cut: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.iter().filter(|v| **v > cut).count() as f64 / values.len() as f64
}

/// A smartcore forest (the run labels') or one tree of the task classifier.
pub type RunForest = RandomForestClassifier<f64, u32, DenseMatrix<f64>, Vec<u32>>;

pub fn dense(rows: &[Vec<f64>]) -> Result<DenseMatrix<f64>, DetectError> {
    let width = rows.first().map_or(0, Vec::len);
    let values: Vec<f64> = rows.iter().flatten().copied().collect();
    DenseMatrix::new(rows.len(), width, values, false).map_err(|e| DetectError::Fit(e.to_string()))
}

pub fn fit_forest(x: &[Vec<f64>], y: &[u32], seed: u64) -> Result<RunForest, DetectError> {
    let params = RandomForestClassifierParameters::default()
        .with_n_trees(200)
        .with_seed(seed);
    RunForest::fit(&dense(x)?, &y.to_vec(), params).map_err(|e| DetectError::Fit(e.to_string()))
}
