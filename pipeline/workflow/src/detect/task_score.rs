//! The unsupervised task score. Each kind's history gives every signal a centre and a spread
//! (median and 1.4826 × MAD, never below what the data can resolve) and a weight: how
//! consistently the signal moves with the host a task ran on (a degraded worker slows all its
//! tasks alike; noise and waits shared by the whole run do not follow the host). A task's
//! signals become z-scores; its host's evidence is, per kind and signal, the median over the
//! host's tasks in the run, read two ways: against history, and against the run's other hosts
//! (less the lower third of their medians, so that a slowdown of the whole run does not count).
//! The score is the weighted mean of the positive evidence against history. The comparison with
//! the run's other hosts is part of the flag ([`flagged`]) and a figure of the task classifier
//! ([`super::classifiers`]), not of the score: as a geometric mean with it, the score's ROC-AUC
//! fell on three of five Flow-Bench workflows no choice was made on, rose on one and stayed on
//! one (docs/workflows.md). No labels are read, and nothing is set per workflow: kinds, spreads
//! and weights come from the data.
//!
//! Grouping is by sorting: runs, hosts and kinds become small numbers ([`Keys`]), the tasks are
//! ordered by them, and every group is a slice of that order; kinds (for the history) and runs
//! (for the hosts' evidence) are worked on in parallel.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use rayon::prelude::*;

use jobsight_base::stats;
use jobsight_warehouse::catalog::Table;
use jobsight_warehouse::catalog::rows::WorkflowScoreRow;

use super::error::DetectError;
use super::tasks::{
    CPU_RATE, EXEC, N_SIGNALS, RUNTIME, STAGE_IN, STAGE_OUT, STIME_RATE, Task, is_time,
};

/// A z-score is bounded, so that one signal cannot outweigh all the others.
const Z_LIMIT: f64 = 50.0;
/// The smallest spread of a signal's history: 5 % (signals are logarithms), and for a time one
/// second (traces count whole seconds), so that a kind whose tasks all took 3 s does not make a
/// 4-s task an outlier, nor one that took no CPU time hide every other.
const RELATIVE_FLOOR: f64 = 0.05;
/// A signal missing from more than half of a kind's tasks is not used for that kind.
const MIN_PRESENT: f64 = 0.5;
/// A signal's weight needs this many tasks sharing a host with another of their kind in a run.
const MIN_WEIGHT_TASKS: usize = 30;
/// The weights of a kind whose tasks never share a host in a run often enough to learn any (the
/// single steps of Slurm chains, Pegasus's one-per-run auxiliary tasks): its run time and
/// execution alone, as a slow step is what the `slow-step-of-a-chain` rule is for. They count
/// only for a host with no evidence of learnt weight: on the Flow-Bench runs, adding the
/// auxiliary tasks' run times to the workers' evidence cost up to 0.17 ROC-AUC.
const UNLEARNT_WEIGHTS: [f64; N_SIGNALS] = {
    let mut w = [0.0; N_SIGNALS];
    w[RUNTIME] = 1.0;
    w[EXEC] = 1.0;
    w
};
/// Runs' hosts against each other need this many hosts with the kind.
const MIN_PEERS: usize = 3;
/// A host's peers' level: this quantile of the run's host medians. The lower third stands when
/// up to two thirds of the hosts are degraded; the median would not.
const PEER_QUANTILE: f64 = 1.0 / 3.0;

/// One kind's history of each signal.
#[derive(Debug, Clone)]
struct KindHistory {
    /// Median and spread (`None`: too rarely measured).
    centre: [Option<(f64, f64)>; N_SIGNALS],
    /// How much the signal follows the host, 0 to 1 (see [`consistency`]).
    weight: [f64; N_SIGNALS],
    /// Whether `weight` was learnt, not [`UNLEARNT_WEIGHTS`].
    learnt: bool,
    runs: u32,
}

/// The history of each kind.
#[derive(Debug, Clone, Default)]
pub struct History {
    by_kind: HashMap<String, KindHistory>,
}

impl History {
    /// Learns from `tasks` (no labels read).
    pub fn learn<'a>(tasks: impl Iterator<Item = &'a Task>) -> History {
        let tasks: Vec<&Task> = tasks.collect();
        let keys = Keys::of(&tasks);
        let order = keys.order(|i| (keys.kind[i], keys.run[i], keys.host[i]));
        let kinds: Vec<&[usize]> = order
            .chunk_by(|a, b| keys.kind[*a] == keys.kind[*b])
            .collect();
        let by_kind = kinds
            .par_iter()
            .map(|members| {
                let of_kind: Vec<&Task> = members.iter().map(|&i| tasks[i]).collect();
                let centre = std::array::from_fn(|s| centre(&of_kind, s));
                let runs = members
                    .chunk_by(|a, b| keys.run[*a] == keys.run[*b])
                    .count() as u32;
                let mut history = KindHistory {
                    centre,
                    weight: [0.0; N_SIGNALS],
                    learnt: false,
                    runs,
                };
                let z: Vec<[Option<f64>; N_SIGNALS]> =
                    of_kind.iter().map(|t| history.z(t)).collect();
                let learnt = consistency(members, &keys, &z);
                history.learnt = learnt.iter().any(Option::is_some);
                history.weight = if history.learnt {
                    learnt.map(|w| w.unwrap_or(0.0))
                } else {
                    UNLEARNT_WEIGHTS
                };
                (of_kind[0].kind.clone(), history)
            })
            .collect();
        History { by_kind }
    }

    /// A task's z-scores (`None` where the signal or its history is missing).
    pub fn z(&self, task: &Task) -> [Option<f64>; N_SIGNALS] {
        match self.by_kind.get(&task.kind) {
            Some(h) => h.z(task),
            None => [None; N_SIGNALS],
        }
    }

    /// Runs the history of `kind` was learnt from.
    pub fn runs(&self, kind: &str) -> u32 {
        self.by_kind.get(kind).map_or(0, |h| h.runs)
    }

    /// The weight of each signal of `kind` (0 for a kind not seen), and whether they were
    /// learnt from the data (else they are the run time's and execution's alone).
    pub fn weights(&self, kind: &str) -> ([f64; N_SIGNALS], bool) {
        self.by_kind
            .get(kind)
            .map_or(([0.0; N_SIGNALS], true), |h| (h.weight, h.learnt))
    }
}

impl KindHistory {
    fn z(&self, task: &Task) -> [Option<f64>; N_SIGNALS] {
        std::array::from_fn(|s| {
            let (m, spread) = self.centre[s]?;
            Some(((task.signals[s]? - m) / spread).clamp(-Z_LIMIT, Z_LIMIT))
        })
    }
}

/// The median and spread of signal `s` over `tasks`, unless it is missing from too many.
fn centre(tasks: &[&Task], s: usize) -> Option<(f64, f64)> {
    let mut values: Vec<f64> = tasks.iter().filter_map(|t| t.signals[s]).collect();
    if (values.len() as f64) < MIN_PRESENT * tasks.len() as f64 {
        return None;
    }
    let m = stats::median(&mut values)?;
    let mut deviations: Vec<f64> = values.iter().map(|x| (x - m).abs()).collect();
    let mad = stats::median(&mut deviations)? * 1.4826;
    let mut floor = RELATIVE_FLOOR;
    if is_time(s) {
        // m is ln(1 + t): one second more is ln(1 + 1/(1 + t)).
        floor = floor.max((-m).exp().ln_1p());
    }
    Some((m, mad.max(floor)))
}

/// How much each signal follows the host: 1 − (spread among the tasks of one host in one run) /
/// (spread among the tasks of the run), over the tasks that share their host and run with
/// another of their kind (an intraclass correlation; never negative). A throttled disk or a host
/// short of cores moves its tasks together; noise does not, and neither does a delay the whole
/// run shares. `None` below [`MIN_WEIGHT_TASKS`] such tasks: too few to say. `members` are one
/// kind's tasks ordered by run and host, `z` their z-scores in that order.
fn consistency(
    members: &[usize],
    keys: &Keys,
    z: &[[Option<f64>; N_SIGNALS]],
) -> [Option<f64>; N_SIGNALS] {
    let (mut within, mut total, mut n) = ([0.0; N_SIGNALS], [0.0; N_SIGNALS], [0usize; N_SIGNALS]);
    let mut at = 0;
    for run in members.chunk_by(|a, b| keys.run[*a] == keys.run[*b]) {
        let run_z = &z[at..at + run.len()];
        at += run.len();
        let run_mean = means(run_z);
        let mut host_at = 0;
        for host in run.chunk_by(|a, b| keys.host[*a] == keys.host[*b]) {
            let host_z = &run_z[host_at..host_at + host.len()];
            host_at += host.len();
            let host_mean = means(host_z);
            for task in host_z {
                for s in 0..N_SIGNALS {
                    let (Some(v), Some((hm, hn)), Some((rm, _))) =
                        (task[s], host_mean[s], run_mean[s])
                    else {
                        continue;
                    };
                    if hn < 2 {
                        continue;
                    }
                    within[s] += (v - hm).powi(2);
                    total[s] += (v - rm).powi(2);
                    n[s] += 1;
                }
            }
        }
    }
    std::array::from_fn(|s| {
        if n[s] < MIN_WEIGHT_TASKS {
            None
        } else if total[s] <= 1e-9 * n[s] as f64 {
            Some(0.0)
        } else {
            Some((1.0 - within[s] / total[s]).max(0.0))
        }
    })
}

/// Each signal's mean over `z` and how many have it (`None` when none does).
fn means(z: &[[Option<f64>; N_SIGNALS]]) -> [Option<(f64, usize)>; N_SIGNALS] {
    let (mut sum, mut n) = ([0.0; N_SIGNALS], [0usize; N_SIGNALS]);
    for task in z {
        for s in 0..N_SIGNALS {
            if let Some(v) = task[s] {
                sum[s] += v;
                n[s] += 1;
            }
        }
    }
    std::array::from_fn(|s| (n[s] > 0).then(|| (sum[s] / n[s] as f64, n[s])))
}

/// The tasks' runs, hosts and kinds as the place of each among the distinct values, so that
/// grouping tasks is sorting small numbers, not hashing strings.
struct Keys {
    run: Vec<u32>,
    host: Vec<u32>,
    kind: Vec<u32>,
}

impl Keys {
    fn of(tasks: &[&Task]) -> Keys {
        fn place<'a>(seen: &mut HashMap<&'a str, u32>, value: &'a str) -> u32 {
            let next = seen.len() as u32;
            *seen.entry(value).or_insert(next)
        }
        let (mut runs, mut hosts, mut kinds) = (HashMap::new(), HashMap::new(), HashMap::new());
        let mut keys = Keys {
            run: Vec::with_capacity(tasks.len()),
            host: Vec::with_capacity(tasks.len()),
            kind: Vec::with_capacity(tasks.len()),
        };
        for t in tasks {
            keys.run.push(place(&mut runs, &t.run));
            keys.host.push(place(&mut hosts, host_key(t)));
            keys.kind.push(place(&mut kinds, &t.kind));
        }
        keys
    }

    /// The tasks' places ordered by `key` (ties in task order).
    fn order(&self, key: impl Fn(usize) -> (u32, u32, u32)) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.run.len()).collect();
        order.sort_by_key(|&i| key(i));
        order
    }
}

/// The host a task ran on, `""` when the trace does not say (those tasks of a run count as one
/// host).
fn host_key(t: &Task) -> &str {
    t.host.as_deref().unwrap_or("")
}

/// What a task's host in its run shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostScore {
    /// The weighted mean, over the kinds and signals of the host's tasks, of the positive part of
    /// the host's median z-score against history ...
    pub vs_history: f64,
    /// ... and against the run's other hosts.
    pub vs_run: f64,
    /// Per signal, the median z-score of the host's tasks in the run (0 where none has it).
    pub signals: [f64; N_SIGNALS],
}

impl HostScore {
    /// The task score: the evidence against history (module docs).
    pub fn score(&self) -> f64 {
        self.vs_history
    }
}

/// A host's weighted sums of positive z-scores against history and against its run's other
/// hosts, and the sum of their weights.
#[derive(Debug, Clone, Copy, Default)]
struct Evidence {
    against_history: f64,
    against_run: f64,
    weight: f64,
}

/// Each task's host evidence, in `tasks` order.
pub fn host_scores(tasks: &[&Task], history: &History) -> Vec<HostScore> {
    let z: Vec<[Option<f64>; N_SIGNALS]> = tasks.iter().map(|t| history.z(t)).collect();
    host_scores_of(tasks, history, &z)
}

fn host_scores_of(
    tasks: &[&Task],
    history: &History,
    z: &[[Option<f64>; N_SIGNALS]],
) -> Vec<HostScore> {
    let keys = Keys::of(tasks);
    let order = keys.order(|i| (keys.run[i], keys.host[i], keys.kind[i]));
    let runs: Vec<&[usize]> = order
        .chunk_by(|a, b| keys.run[*a] == keys.run[*b])
        .collect();
    let scored: Vec<Vec<(usize, HostScore)>> = runs
        .par_iter()
        .map(|members| run_host_scores(members, tasks, &keys, history, z))
        .collect();
    let mut out = vec![
        HostScore {
            vs_history: 0.0,
            vs_run: 0.0,
            signals: [0.0; N_SIGNALS],
        };
        tasks.len()
    ];
    for (i, host) in scored.into_iter().flatten() {
        out[i] = host;
    }
    out
}

/// The host scores of one run's tasks, `members` ordered by host and kind.
fn run_host_scores(
    members: &[usize],
    tasks: &[&Task],
    keys: &Keys,
    history: &History,
    z: &[[Option<f64>; N_SIGNALS]],
) -> Vec<(usize, HostScore)> {
    let mut values = Vec::new();
    // The median of signal `s` over `group`.
    let mut median_of = |group: &[usize], s: usize| -> Option<f64> {
        values.clear();
        values.extend(group.iter().filter_map(|&i| z[i][s]));
        stats::median(&mut values)
    };
    // The median z-score of each kind's tasks on each host, in host order.
    let same_group =
        |a: &usize, b: &usize| keys.host[*a] == keys.host[*b] && keys.kind[*a] == keys.kind[*b];
    type Group = (usize, [Option<f64>; N_SIGNALS]);
    let groups: Vec<Group> = members
        .chunk_by(same_group)
        .map(|g| (g[0], std::array::from_fn(|s| median_of(g, s))))
        .collect();
    // The peers' level of each kind and signal: the lower third of its hosts' medians.
    let mut by_kind: Vec<usize> = (0..groups.len()).collect();
    by_kind.sort_by_key(|&g| keys.kind[groups[g].0]);
    let mut level = vec![[0.0; N_SIGNALS]; groups.len()];
    for same_kind in by_kind.chunk_by(|a, b| keys.kind[groups[*a].0] == keys.kind[groups[*b].0]) {
        let kind_level: [f64; N_SIGNALS] = std::array::from_fn(|s| {
            let mut medians: Vec<f64> = same_kind.iter().filter_map(|&g| groups[g].1[s]).collect();
            if medians.len() >= MIN_PEERS {
                medians.sort_unstable_by(f64::total_cmp);
                stats::percentile_of_sorted(&medians, PEER_QUANTILE)
            } else {
                0.0
            }
        });
        for &g in same_kind {
            level[g] = kind_level;
        }
    }
    // Each host's evidence (of kinds with learnt weights, and of the others), then its score.
    let mut out = Vec::with_capacity(members.len());
    let mut group_at = 0;
    for host in members.chunk_by(|a, b| keys.host[*a] == keys.host[*b]) {
        let mut evidence = [Evidence::default(); 2];
        while group_at < groups.len() && keys.host[groups[group_at].0] == keys.host[host[0]] {
            let (first, median) = &groups[group_at];
            let (weights, learnt) = history.weights(&tasks[*first].kind);
            let e = &mut evidence[usize::from(!learnt)];
            for s in 0..N_SIGNALS {
                let Some(v) = median[s] else { continue };
                let w = weights[s] * weights[s];
                e.against_history += w * v.clamp(0.0, Z_LIMIT);
                e.against_run += w * (v - level[group_at][s]).clamp(0.0, Z_LIMIT);
                e.weight += w;
            }
            group_at += 1;
        }
        let [learnt, unlearnt] = evidence;
        let e = if learnt.weight > 0.0 {
            learnt
        } else {
            unlearnt
        };
        let (vs_history, vs_run) = if e.weight > 0.0 {
            (e.against_history / e.weight, e.against_run / e.weight)
        } else {
            (0.0, 0.0)
        };
        let score = HostScore {
            vs_history,
            vs_run,
            signals: std::array::from_fn(|s| median_of(host, s).unwrap_or(0.0)),
        };
        out.extend(host.iter().map(|&i| (i, score)));
    }
    out
}

/// Each task's run time over the median run time of the tasks of its kind in its run, in
/// `tasks` order; `None` without a run time.
pub fn runtime_vs_run(tasks: &[&Task]) -> Vec<Option<f64>> {
    let keys = Keys::of(tasks);
    let order = keys.order(|i| (keys.run[i], keys.kind[i], 0));
    let mut out = vec![None; tasks.len()];
    let mut runtimes = Vec::new();
    for group in
        order.chunk_by(|a, b| keys.run[*a] == keys.run[*b] && keys.kind[*a] == keys.kind[*b])
    {
        runtimes.clear();
        runtimes.extend(group.iter().filter_map(|&i| tasks[i].runtime_s));
        let Some(m) = stats::median(&mut runtimes) else {
            continue;
        };
        for &i in group {
            out[i] = tasks[i].runtime_s.filter(|_| m > 0.0).map(|r| r / m);
        }
    }
    out
}

/// A task is flagged when its score passes this: its host's weighted evidence averages more than
/// two spreads slower than history ([`flagged`]).
pub const FLAG_ABOVE: f64 = 2.0;

/// Whether a task is flagged: its host is more than [`FLAG_ABOVE`] spreads slower than history
/// *and* than the run's other hosts. The score ranks by history alone (it ranks anomalous tasks
/// better so, docs/workflows.md); a flag is what a person reads, and a slowdown the whole run
/// shares (a slow file system) is not a host's.
pub fn flagged(host: &HostScore) -> bool {
    host.score() > FLAG_ABOVE && host.vs_run > FLAG_ABOVE
}

/// Every task's score against the history of every run given (no labels read), as rows of
/// `workflow_scores`, with the day each belongs to.
pub fn score(tasks: &[Task]) -> Vec<(Option<chrono::NaiveDate>, WorkflowScoreRow)> {
    let history = History::learn(tasks.iter());
    let refs: Vec<&Task> = tasks.iter().collect();
    let z: Vec<[Option<f64>; N_SIGNALS]> = tasks.par_iter().map(|t| history.z(t)).collect();
    let hosts = host_scores_of(&refs, &history, &z);
    let vs_run = runtime_vs_run(&refs);
    tasks
        .iter()
        .zip(z.iter().zip(hosts).zip(vs_run))
        .map(|(t, ((z, h), vs_run))| {
            let z = |s: usize| z[s].unwrap_or(0.0);
            (
                t.day,
                WorkflowScoreRow {
                    workflow_id: t.run.clone(),
                    task_id: t.task_id.clone(),
                    score: h.score(),
                    flagged: flagged(&h),
                    slack_z: z(CPU_RATE),
                    runtime_z: z(RUNTIME),
                    stage_in_z: z(STAGE_IN),
                    stage_out_z: z(STAGE_OUT),
                    stime_z: z(STIME_RATE),
                    history_runs: history.runs(&t.kind),
                    runtime_vs_run: vs_run,
                    supervised_share: None,
                    run_verdict: None,
                },
            )
        })
        .collect()
}

/// Writes the scores into `workflow_scores`, one part per day (replacing the day's scores).
/// Returns (tasks scored, tasks flagged, days written).
pub fn write_scores(
    data: &Path,
    rows: Vec<(Option<chrono::NaiveDate>, WorkflowScoreRow)>,
) -> Result<(usize, usize, usize), DetectError> {
    let mut by_day: BTreeMap<chrono::NaiveDate, Vec<WorkflowScoreRow>> = BTreeMap::new();
    let (mut scored, mut flagged) = (0, 0);
    for (day, row) in rows {
        let Some(day) = day else { continue };
        scored += 1;
        flagged += usize::from(row.flagged);
        by_day.entry(day).or_default().push(row);
    }
    for (day, rows) in &by_day {
        let batch = WorkflowScoreRow::batch(rows).map_err(|e| DetectError::Read(e.to_string()))?;
        jobsight_warehouse::catalog::write_part(
            data,
            Table::WorkflowScores,
            *day,
            "scores",
            &[batch],
        )
        .map_err(|e| DetectError::Read(e.to_string()))?;
    }
    Ok((scored, flagged, by_day.len()))
}
