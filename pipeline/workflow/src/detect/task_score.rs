//! The unsupervised task score. Each kind's history gives every signal a centre and a spread
//! (median and 1.4826 × MAD, never below what the data can resolve) and a weight: how
//! consistently the signal moves with the host a task ran on (a degraded worker slows all its
//! tasks alike; noise and waits shared by the whole run do not follow the host). A task's
//! signals become z-scores; its host's evidence is, per kind and signal, the median over the
//! host's tasks in the run, read two ways: against history, and against the run's other hosts
//! (less the lower third of their medians, so that a slowdown of the whole run does not count).
//! The score is the geometric mean of the two weighted means of that positive evidence: a host
//! scores high only when it is slow against history *and* against its peers in the run. No labels
//! are read, and nothing is set per workflow: kinds, spreads and weights come from the data.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

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
        let mut kinds: HashMap<&str, Vec<&Task>> = HashMap::new();
        for t in tasks {
            kinds.entry(t.kind.as_str()).or_default().push(t);
        }
        let by_kind = kinds
            .into_iter()
            .map(|(kind, tasks)| {
                let centre = std::array::from_fn(|s| centre(&tasks, s));
                let runs = tasks.iter().map(|t| &t.run).collect::<HashSet<_>>().len() as u32;
                let mut history = KindHistory {
                    centre,
                    weight: [0.0; N_SIGNALS],
                    learnt: false,
                    runs,
                };
                let z: Vec<[Option<f64>; N_SIGNALS]> = tasks.iter().map(|t| history.z(t)).collect();
                let learnt: [Option<f64>; N_SIGNALS] =
                    std::array::from_fn(|s| consistency(&tasks, &z, s));
                history.learnt = learnt.iter().any(Option::is_some);
                history.weight = if history.learnt {
                    learnt.map(|w| w.unwrap_or(0.0))
                } else {
                    UNLEARNT_WEIGHTS
                };
                (kind.to_string(), history)
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

/// How much signal `s` follows the host: 1 − (spread among the tasks of one host in one run) /
/// (spread among the tasks of the run), over the tasks that share their host and run with
/// another of their kind (an intraclass correlation; 0 below [`MIN_WEIGHT_TASKS`] such tasks,
/// and never negative). A throttled disk or a host short of cores moves its tasks together;
/// noise does not, and neither does a delay the whole run shares. `None` when there are too few
/// such tasks to say.
fn consistency(tasks: &[&Task], z: &[[Option<f64>; N_SIGNALS]], s: usize) -> Option<f64> {
    let mut by_host: HashMap<(&str, &str), (f64, usize)> = HashMap::new();
    let mut by_run: HashMap<&str, (f64, usize)> = HashMap::new();
    for (t, z) in tasks.iter().zip(z) {
        let Some(v) = z[s] else { continue };
        let h = by_host.entry((&t.run, host_key(t))).or_default();
        h.0 += v;
        h.1 += 1;
        let r = by_run.entry(&t.run).or_default();
        r.0 += v;
        r.1 += 1;
    }
    let (mut within, mut total, mut n) = (0.0, 0.0, 0usize);
    for (t, z) in tasks.iter().zip(z) {
        let Some(v) = z[s] else { continue };
        let (hs, hn) = by_host[&(t.run.as_str(), host_key(t))];
        if hn < 2 {
            continue;
        }
        let (rs, rn) = by_run[t.run.as_str()];
        within += (v - hs / hn as f64).powi(2);
        total += (v - rs / rn as f64).powi(2);
        n += 1;
    }
    if n < MIN_WEIGHT_TASKS {
        return None;
    }
    if total <= 1e-9 * n as f64 {
        return Some(0.0);
    }
    Some((1.0 - within / total).max(0.0))
}

/// The host a task ran on, `""` when the trace does not say (those tasks of a run count as one
/// host).
fn host_key(t: &Task) -> &str {
    t.host.as_deref().unwrap_or("")
}

/// What a task's host in its run shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostScore {
    /// The task score: the geometric mean of `vs_history` and `vs_run`.
    pub score: f64,
    /// The weighted mean, over the kinds and signals of the host's tasks, of the positive part of
    /// the host's median z-score against history ...
    pub vs_history: f64,
    /// ... and against the run's other hosts.
    pub vs_run: f64,
    /// Per signal, the median z-score of the host's tasks in the run (0 where none has it).
    pub signals: [f64; N_SIGNALS],
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
    // Group by (run, host, kind), then (run, host).
    let mut groups: HashMap<(&str, &str, &str), Vec<usize>> = HashMap::new();
    let mut hosts: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (i, t) in tasks.iter().enumerate() {
        let (run, host) = (t.run.as_str(), host_key(t));
        groups.entry((run, host, &t.kind)).or_default().push(i);
        hosts.entry((run, host)).or_default().push(i);
    }
    let median_of = |members: &[usize], s: usize| -> Option<f64> {
        let mut v: Vec<f64> = members.iter().filter_map(|&i| z[i][s]).collect();
        stats::median(&mut v)
    };
    let medians: HashMap<(&str, &str, &str), [Option<f64>; N_SIGNALS]> = groups
        .iter()
        .map(|(key, members)| (*key, std::array::from_fn(|s| median_of(members, s))))
        .collect();
    // The peers' level of each kind and signal in each run.
    let mut across: HashMap<(&str, &str), [Vec<f64>; N_SIGNALS]> = HashMap::new();
    for ((run, _, kind), m) in &medians {
        let a = across.entry((run, kind)).or_default();
        for s in 0..N_SIGNALS {
            if let Some(v) = m[s] {
                a[s].push(v);
            }
        }
    }
    let peers: HashMap<(&str, &str), [f64; N_SIGNALS]> = across
        .into_iter()
        .map(|(key, mut a)| {
            let level = std::array::from_fn(|s| {
                if a[s].len() >= MIN_PEERS {
                    a[s].sort_unstable_by(f64::total_cmp);
                    stats::percentile_of_sorted(&a[s], PEER_QUANTILE)
                } else {
                    0.0
                }
            });
            (key, level)
        })
        .collect();
    // Each host's evidence: of kinds with learnt weights, and of the others.
    let mut evidence: HashMap<(&str, &str), [Evidence; 2]> = HashMap::new();
    for ((run, host, kind), m) in &medians {
        let (weights, learnt) = history.weights(kind);
        let level = &peers[&(*run, *kind)];
        let e = &mut evidence.entry((run, host)).or_default()[usize::from(!learnt)];
        for s in 0..N_SIGNALS {
            let Some(v) = m[s] else { continue };
            let w = weights[s] * weights[s];
            e.against_history += w * v.clamp(0.0, Z_LIMIT);
            e.against_run += w * (v - level[s]).clamp(0.0, Z_LIMIT);
            e.weight += w;
        }
    }
    let mut out = vec![
        HostScore {
            score: 0.0,
            vs_history: 0.0,
            vs_run: 0.0,
            signals: [0.0; N_SIGNALS],
        };
        tasks.len()
    ];
    for (key, members) in &hosts {
        let [learnt, unlearnt] = evidence.get(key).copied().unwrap_or_default();
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
        let host = HostScore {
            score: (vs_history * vs_run).sqrt(),
            vs_history,
            vs_run,
            signals: std::array::from_fn(|s| median_of(members, s).unwrap_or(0.0)),
        };
        for &i in members {
            out[i] = host;
        }
    }
    out
}

/// Each task's run time over the median run time of the tasks of its kind in its run, in
/// `tasks` order; `None` without a run time.
pub fn runtime_vs_run(tasks: &[&Task]) -> Vec<Option<f64>> {
    let mut in_run: HashMap<(&str, &str), Vec<f64>> = HashMap::new();
    for t in tasks {
        if let Some(r) = t.runtime_s {
            in_run.entry((&t.run, &t.kind)).or_default().push(r);
        }
    }
    let medians: HashMap<(&str, &str), f64> = in_run
        .into_iter()
        .filter_map(|(k, mut v)| Some((k, stats::median(&mut v)?)))
        .collect();
    tasks
        .iter()
        .map(|t| {
            let m = *medians.get(&(t.run.as_str(), t.kind.as_str()))?;
            t.runtime_s.filter(|_| m > 0.0).map(|r| r / m)
        })
        .collect()
}

/// A task is flagged when its score passes this: its host's weighted evidence averages more than
/// two spreads slower than history and than its peers in the run.
pub const FLAG_ABOVE: f64 = 2.0;

/// Every task's score against the history of every run given (no labels read), as rows of
/// `workflow_scores`, with the day each belongs to.
pub fn score(tasks: &[Task]) -> Vec<(Option<chrono::NaiveDate>, WorkflowScoreRow)> {
    let history = History::learn(tasks.iter());
    let refs: Vec<&Task> = tasks.iter().collect();
    let z: Vec<[Option<f64>; N_SIGNALS]> = tasks.iter().map(|t| history.z(t)).collect();
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
                    score: h.score,
                    flagged: h.score > FLAG_ABOVE,
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
