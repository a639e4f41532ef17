//! The steps of a job run in `sacct --json` and what the run's `jobs` row takes from them: the
//! CPU time, peak memory and energy Slurm accounting measured, seff's figures.
//!
//! Layout (Slurm 22.05, `openapi/dbv0.0.38`): each `jobs[].steps[]` element has `step.id`
//! (`"batch"`, `"extern"`, `"interactive"`, `"pending"` or a number), `state` (a string),
//! `time.{start,end}` (epoch seconds), `time.{user,system,total}.{seconds,microseconds}` (the
//! microseconds of `total` are user's plus system's, so they may exceed a second), `nodes.{count,
//! range}`, `tasks.count`, `tres.requested.max` (TRESUsageInMax: the `mem` entry is the largest
//! task's peak resident memory in bytes, with the `node` and `task` it was on),
//! `tres.requested.total` (TRESUsageInTot: `mem` is the sum of the tasks' peaks) and
//! `statistics.energy.consumed` (joules). 22.05's JSON never sums the steps into the job's own
//! `time` (that happens only in sacct's text path), so the sums are made here.
//!
//! Nothing in the answer is trusted: the steps are read as untyped JSON, and a figure that is
//! missing, of the wrong type, negative, one of Slurm's "no value" markers or beyond what a job
//! can use is `None`, never an error. A step that is not an object or has no id is left out.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{JobRow, JobStepRow, slurm_json};

/// Slurm's 32-bit "no value" marker (`NO_VAL`); `INFINITE` is the next one up. 22.05 dumps its
/// unsigned figures through 32 bits and writes `null` for either, but another version may not.
const NO_VAL: u64 = 0xffff_fffe;
const MIB: f64 = 1_048_576.0;
/// More than a pebibyte of resident memory in one task or step is a broken reading.
const MAX_MEMORY_BYTES: u64 = 1 << 50;
/// Beyond this an energy reading is a broken counter, not a job's: LUMI documents readings near
/// 1e20 J from faulty sensors.
const MAX_ENERGY_J: f64 = 1e15;

/// One step as Slurm accounting recorded it. Every figure is `None` where sacct gave none or
/// gave one that cannot be right.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepAccounting {
    /// `batch`, `extern`, `interactive`, `pending`, or the step's number; `0+1` for a
    /// heterogeneous job's component.
    pub step: String,
    pub name: Option<String>,
    pub state: Option<String>,
    /// Slurm host list of the step's nodes.
    pub nodes: Option<String>,
    pub num_nodes: Option<u32>,
    pub ntasks: Option<u32>,
    pub start: Option<DateTime<Utc>>,
    pub end: Option<DateTime<Utc>>,
    pub cpu_user_s: Option<f64>,
    pub cpu_system_s: Option<f64>,
    /// User plus system CPU time, as accounting summed it.
    pub cpu_total_s: Option<f64>,
    /// MaxRSS: the largest task's peak resident memory in bytes, and where it was.
    pub max_rss_bytes: Option<u64>,
    pub max_rss_node: Option<String>,
    pub max_rss_task: Option<u32>,
    /// TRESUsageInTot `mem`: the sum of the tasks' peak resident memories in bytes.
    pub tot_rss_bytes: Option<u64>,
    pub energy_j: Option<f64>,
    /// Slurm's own GPU usage, where `AccountingStorageTRES` has `gres/gpuutil` and `gres/gpumem`
    /// (the nvml and rsmi GPU plugins fill them): the largest task's GPU utilisation in per cent
    /// (summed over the GPUs a task used since 24.05, so it may exceed 100) and GPU memory in
    /// bytes, from TRESUsageInMax.
    pub gpu_util_max_pct: Option<f64>,
    pub gpu_mem_max_bytes: Option<u64>,
}

impl StepAccounting {
    /// CPU time of the step: accounting's total, else user plus system.
    fn cpu_s(&self) -> Option<f64> {
        self.cpu_total_s.or_else(|| {
            self.cpu_user_s
                .zip(self.cpu_system_s)
                .map(|(user, system)| user + system)
        })
    }

    /// The step's memory peak in bytes as seff takes it: the sum of its tasks' peaks where
    /// accounting has it (seff from 24.05), else its largest task's peak times its tasks (seff's
    /// "estimated maximum" before).
    fn memory_peak_bytes(&self) -> Option<u64> {
        self.tot_rss_bytes.or_else(|| {
            let tasks = u64::from(self.ntasks?);
            self.max_rss_bytes?
                .checked_mul(tasks)
                .filter(|&b| b <= MAX_MEMORY_BYTES)
        })
    }

    /// Whether the step has any usage figure.
    fn has_usage(&self) -> bool {
        self.cpu_s().is_some() || self.max_rss_bytes.is_some() || self.tot_rss_bytes.is_some()
    }
}

/// The value at `path` (`/time/user/seconds`) as an unsigned number below `limit`, in any shape
/// a release prints it ([`slurm_json::number_with`]); `None` for markers and wrong shapes.
fn unsigned(value: &Value, path: &str, limit: u64) -> Option<u64> {
    let markers32 = limit <= NO_VAL;
    slurm_json::number_with(value.pointer(path)?, markers32)
        .ok()?
        .value()
        .filter(|&n| n < limit)
}

/// A 32-bit figure (a count, seconds): `None` for Slurm's markers.
fn count(value: &Value, path: &str) -> Option<u32> {
    unsigned(value, path, NO_VAL).and_then(|n| u32::try_from(n).ok())
}

fn text(value: &Value, path: &str) -> Option<String> {
    slurm_json::text(value.pointer(path)?).ok().flatten()
}

/// Epoch seconds to a time; 0 means "not yet".
fn time(value: &Value, path: &str) -> Option<DateTime<Utc>> {
    unsigned(value, path, NO_VAL)
        .filter(|&s| s > 0)
        .and_then(|s| DateTime::from_timestamp(i64::try_from(s).ok()?, 0))
}

/// `{seconds, microseconds}` at `path` as seconds. Microseconds of any size are folded in (the
/// total's are the sum of user's and system's); missing microseconds count as none.
fn cpu_seconds(value: &Value, path: &str) -> Option<f64> {
    let seconds = unsigned(value, &format!("{path}/seconds"), NO_VAL)?;
    let micros = unsigned(value, &format!("{path}/microseconds"), NO_VAL).unwrap_or(0);
    Some(seconds as f64 + micros as f64 / 1e6)
}

/// Joules, where a plugin measured any: `None` for 0 (no plugin), Slurm's markers and readings
/// no job can reach.
pub fn energy(joules: Option<u64>) -> Option<f64> {
    joules
        .filter(|&j| j > 0 && j != NO_VAL && j != NO_VAL + 1)
        .map(|j| j as f64)
        .filter(|&j| j <= MAX_ENERGY_J)
}

/// The `mem` entry of the TRES usage list at `path`.
fn memory_entry<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    tres_entry(value, path, "mem", None)
}

/// The entry of type `kind` (and `name`, for `gres`) of the TRES list at `path`.
fn tres_entry<'a>(
    value: &'a Value,
    path: &str,
    kind: &str,
    name: Option<&str>,
) -> Option<&'a Value> {
    value.pointer(path)?.as_array()?.iter().find(|entry| {
        entry.get("type").and_then(Value::as_str) == Some(kind)
            && (name.is_none() || entry.get("name").and_then(Value::as_str) == name)
    })
}

/// A GPU figure of the TRES usage list at `path` (`gres/gpuutil`, `gres/gpumem`), below `limit`.
fn gpu_figure(value: &Value, path: &str, name: &str, limit: u64) -> Option<u64> {
    unsigned(
        tres_entry(value, path, "gres", Some(name))?,
        "/count",
        limit,
    )
}

fn memory_bytes(entry: Option<&Value>) -> Option<u64> {
    unsigned(entry?, "/count", MAX_MEMORY_BYTES + 1)
}

/// One element of `steps` of job `job_id`; `None` when it is not a step of that job (not an
/// object, no id, an id no release prints, another job's).
fn step(value: &Value, job_id: u64) -> Option<StepAccounting> {
    let id = slurm_json::step_id(value.pointer("/step/id")?, Some(job_id)).ok()?;
    let step = match count(value, "/step/het/component") {
        Some(component) if !id.contains('+') => format!("{id}+{component}"),
        _ => id,
    };
    let peak = memory_entry(value, "/tres/requested/max");
    Some(StepAccounting {
        step,
        name: text(value, "/step/name"),
        state: value
            .get("state")
            .and_then(|s| slurm_json::state(s).ok().flatten()),
        nodes: text(value, "/nodes/range"),
        num_nodes: count(value, "/nodes/count"),
        ntasks: count(value, "/tasks/count"),
        start: time(value, "/time/start"),
        end: time(value, "/time/end"),
        cpu_user_s: cpu_seconds(value, "/time/user"),
        cpu_system_s: cpu_seconds(value, "/time/system"),
        cpu_total_s: cpu_seconds(value, "/time/total"),
        max_rss_bytes: memory_bytes(peak),
        max_rss_node: peak.and_then(|p| text(p, "/node")),
        max_rss_task: peak.and_then(|p| count(p, "/task")),
        tot_rss_bytes: memory_bytes(memory_entry(value, "/tres/requested/total")),
        energy_j: energy(unsigned(value, "/statistics/energy/consumed", u64::MAX)),
        // Per cent summed over the GPUs of a task: more than 100,000 (1,000 GPUs) is a broken
        // reading; so is more than a pebibyte of GPU memory.
        gpu_util_max_pct: gpu_figure(value, "/tres/requested/max", "gpuutil", 100_001)
            .map(|p| p as f64),
        gpu_mem_max_bytes: gpu_figure(value, "/tres/requested/max", "gpumem", MAX_MEMORY_BYTES + 1),
    })
}

/// The steps of job `job_id` in the answer, and how many elements were left out as no step of
/// it: `None` when it has no `steps` list at all (another layout), so that "no figures" is told
/// apart from "no steps".
pub fn parse_steps(steps: Option<&Value>, job_id: u64) -> Option<(Vec<StepAccounting>, usize)> {
    let list = steps?.as_array()?;
    let read: Vec<StepAccounting> = list.iter().filter_map(|s| step(s, job_id)).collect();
    let left_out = list.len() - read.len();
    Some((read, left_out))
}

/// What a run's `jobs` row takes from its steps (the `acct_*` columns).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Totals {
    pub cpu_user_s: Option<f64>,
    pub cpu_system_s: Option<f64>,
    pub cpu_total_s: Option<f64>,
    pub mem_peak_mb: Option<f64>,
    pub max_rss_mb: Option<f64>,
    pub energy_j: Option<f64>,
    /// The largest of the steps' GPU figures (TRESUsageInMax's `gres/gpuutil` in per cent and
    /// `gres/gpumem` in MiB), over the steps that read something ([`gpu_reading`]).
    pub gpu_util_max_pct: Option<f64>,
    pub gpu_mem_max_mb: Option<f64>,
    pub steps: Option<u32>,
}

/// The sum of the known values; `None` when none is known.
fn sum(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values
        .flatten()
        .fold(None, |total, v| Some(total.unwrap_or(0.0) + v))
}

fn largest(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values.flatten().fold(None, |top: Option<f64>, v| {
        Some(top.map_or(v, |t| t.max(v)))
    })
}

/// seff's figures of a run from its steps (`None`: the answer had no steps list) and the job's
/// own energy (its allocated TRES `energy`, already checked by [`energy`]). CPU time is summed
/// over every step, whatever its state, as seff does; memory is the largest step's peak. Energy
/// is the job's own figure, else what Slurm would have made it: the `extern` step's where there
/// is one (it spans the whole allocation, and with `PrologFlags=Contain`, the only setting that
/// makes one, Slurm counts no other), else the sum of the steps'.
pub fn totals(steps: Option<&[StepAccounting]>, job_energy_j: Option<f64>) -> Totals {
    let Some(steps) = steps else {
        return Totals {
            energy_j: job_energy_j,
            ..Totals::default()
        };
    };
    let step_energy = match steps.iter().find(|s| s.step == "extern") {
        Some(container) => container.energy_j,
        None => sum(steps.iter().map(|s| s.energy_j)).filter(|&j| j <= MAX_ENERGY_J),
    };
    let covered = steps.iter().filter(|s| s.has_usage()).count();
    Totals {
        cpu_user_s: sum(steps.iter().map(|s| s.cpu_user_s)),
        cpu_system_s: sum(steps.iter().map(|s| s.cpu_system_s)),
        cpu_total_s: sum(steps.iter().map(StepAccounting::cpu_s)),
        mem_peak_mb: largest(
            steps
                .iter()
                .map(|s| s.memory_peak_bytes().map(|b| b as f64 / MIB)),
        ),
        max_rss_mb: largest(
            steps
                .iter()
                .map(|s| s.max_rss_bytes.map(|b| b as f64 / MIB)),
        ),
        energy_j: job_energy_j.or(step_energy),
        gpu_util_max_pct: largest(steps.iter().filter_map(gpu_reading).map(|(u, _)| Some(u))),
        gpu_mem_max_mb: largest(
            steps
                .iter()
                .filter_map(gpu_reading)
                .map(|(_, bytes)| Some(bytes as f64 / MIB)),
        ),
        steps: u32::try_from(covered).ok(),
    }
}

/// A step's GPU figures (utilisation in per cent, memory in bytes) when they read something.
/// Slurm records both as 0 for a step that never touched a GPU, but also for every step where
/// `gres/gpu` is accounted and no GPU plugin measures (AMD without rsmi, MIG, an old driver):
/// both 0 cannot tell "idle" from "not measured", so it counts as no reading. A step that held
/// GPU memory and kept its GPUs idle still reads as idle.
fn gpu_reading(step: &StepAccounting) -> Option<(f64, u64)> {
    match (step.gpu_util_max_pct, step.gpu_mem_max_bytes) {
        (Some(util), Some(bytes)) if util > 0.0 || bytes > 0 => Some((util, bytes)),
        _ => None,
    }
}

/// The steps that had not finished when accounting was read (no end, or a state that still
/// changes): their figures may still grow.
pub fn unfinished(steps: &[StepAccounting]) -> Vec<&str> {
    steps
        .iter()
        .filter(|s| {
            s.end.is_none()
                || s.state
                    .as_deref()
                    .is_none_or(|st| !jobsight_base::slurm_text::is_final_state(st))
        })
        .map(|s| s.step.as_str())
        .collect()
}

/// The `job_steps` rows of the run `job` (its cluster, id and submit time name the run).
pub fn step_rows(job: &JobRow, steps: &[StepAccounting]) -> Vec<JobStepRow> {
    steps
        .iter()
        .map(|s| JobStepRow {
            cluster: job.cluster.clone(),
            job_id: job.job_id.clone(),
            submit: job.submit,
            step: s.step.clone(),
            name: s.name.clone(),
            state: s.state.clone(),
            nodes: s.nodes.clone(),
            num_nodes: s.num_nodes,
            ntasks: s.ntasks,
            start: s.start,
            end: s.end,
            cpu_user_s: s.cpu_user_s,
            cpu_system_s: s.cpu_system_s,
            cpu_total_s: s.cpu_total_s,
            max_rss_mb: s.max_rss_bytes.map(|b| b as f64 / MIB),
            max_rss_node: s.max_rss_node.clone(),
            max_rss_task: s.max_rss_task,
            tot_rss_mb: s.tot_rss_bytes.map(|b| b as f64 / MIB),
            energy_j: s.energy_j,
            gpu_util_max_pct: s.gpu_util_max_pct,
            gpu_mem_max_mb: s.gpu_mem_max_bytes.map(|b| b as f64 / MIB),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sacct::{self, Accounting};

    /// Two jobs as `sacct --json` of Slurm 22.05.8 (dbv0.0.38) prints them, written by hand from
    /// its source until a capture of the test cluster replaces them: job 11 kept one CPU
    /// busy (batch step), ran a 4-task step 0 with no per-task sum and has the `extern` step
    /// that `PrologFlags=Contain` makes; job 12 slept holding 1031.5 MiB and has its energy
    /// measured. The job-level `time.total` is 0, as 22.05's JSON leaves it.
    const STEPS: &str = r#"{"meta": {}, "errors": [], "jobs": [
      {"job_id": 11, "name": "busy", "cluster": "ci", "user": "alice", "account": "research",
       "partition": "debug", "qos": "normal", "state": {"current": "COMPLETED", "reason": "None"},
       "time": {"submission": 1795341590, "start": 1795341600, "end": 1795341700, "limit": 10,
                "elapsed": 100, "total": {"seconds": 0, "microseconds": 0},
                "user": {"seconds": 0, "microseconds": 0}, "system": {"seconds": 0, "microseconds": 0}},
       "tres": {"allocated": [{"type": "cpu", "name": null, "id": 1, "count": 1},
                              {"type": "mem", "name": null, "id": 2, "count": 1024},
                              {"type": "energy", "name": null, "id": 3, "count": null},
                              {"type": "node", "name": null, "id": 4, "count": 1}]},
       "nodes": "vm",
       "steps": [
         {"time": {"elapsed": 100, "end": 1795341700, "start": 1795341600, "suspended": 0,
                   "system": {"seconds": 0, "microseconds": 120000},
                   "total": {"seconds": 96, "microseconds": 1520000},
                   "user": {"seconds": 96, "microseconds": 1400000}},
          "exit_code": {"status": "SUCCESS", "return_code": 0},
          "nodes": {"count": 1, "range": "vm", "list": ["vm"]}, "tasks": {"count": 1},
          "pid": null, "kill_request_user": null, "state": "COMPLETED",
          "statistics": {"CPU": {"actual_frequency": 0}, "energy": {"consumed": 0}},
          "step": {"job_id": 11, "het": {"component": null}, "id": "batch", "name": "batch"},
          "task": {"distribution": "Unknown"},
          "tres": {"requested": {
                     "max": [{"type": "cpu", "name": null, "id": 1, "count": 97520, "task": 0, "node": "vm"},
                             {"type": "mem", "name": null, "id": 2, "count": 315392, "task": 0, "node": "vm"}],
                     "min": [{"type": "mem", "name": null, "id": 2, "count": 315392, "task": 0, "node": "vm"}],
                     "average": [{"type": "mem", "name": null, "id": 2, "count": 315392}],
                     "total": [{"type": "mem", "name": null, "id": 2, "count": 315392}]},
                   "consumed": {"max": [], "min": [], "average": [], "total": []},
                   "allocated": [{"type": "cpu", "name": null, "id": 1, "count": 1}]}},
         {"time": {"elapsed": 20, "end": 1795341690, "start": 1795341670, "suspended": 0,
                   "system": {"seconds": 1, "microseconds": 0},
                   "total": {"seconds": 3, "microseconds": 0},
                   "user": {"seconds": 2, "microseconds": 0}},
          "nodes": {"count": 1, "range": "vm"}, "tasks": {"count": 4}, "state": "COMPLETED",
          "statistics": {"energy": {"consumed": null}},
          "step": {"job_id": 11, "het": {"component": null}, "id": 0, "name": "stress"},
          "tres": {"requested": {
                     "max": [{"type": "mem", "name": null, "id": 2, "count": 209715200, "task": 3, "node": "vm"}],
                     "total": []}}},
         {"time": {"elapsed": 101, "end": 1795341701, "start": 1795341600, "suspended": 0,
                   "system": {"seconds": 0, "microseconds": 1000},
                   "total": {"seconds": 0, "microseconds": 2000},
                   "user": {"seconds": 0, "microseconds": 1000}},
          "nodes": {"count": 1, "range": "vm"}, "tasks": {"count": 1}, "state": "COMPLETED",
          "statistics": {"energy": {"consumed": null}},
          "step": {"job_id": 11, "het": {"component": null}, "id": "extern", "name": "extern"},
          "tres": {"requested": {
                     "max": [{"type": "mem", "name": null, "id": 2, "count": 4096, "task": 0, "node": "vm"}],
                     "total": [{"type": "mem", "name": null, "id": 2, "count": 4096}]}}}
       ]},
      {"job_id": 12, "name": "sleep", "cluster": "ci", "state": {"current": "COMPLETED", "reason": "None"},
       "time": {"submission": 1795341590, "start": 1795341600, "end": 1795341700, "limit": 10},
       "tres": {"allocated": [{"type": "cpu", "name": null, "id": 1, "count": 1},
                              {"type": "mem", "name": null, "id": 2, "count": 1024},
                              {"type": "energy", "name": null, "id": 3, "count": 5400},
                              {"type": "node", "name": null, "id": 4, "count": 1}]},
       "nodes": "vm",
       "steps": [
         {"time": {"end": 1795341700, "start": 1795341600,
                   "system": {"seconds": 0, "microseconds": 400000},
                   "total": {"seconds": 0, "microseconds": 700000},
                   "user": {"seconds": 0, "microseconds": 300000}},
          "nodes": {"count": 1, "range": "vm"}, "tasks": {"count": 1}, "state": "COMPLETED",
          "statistics": {"energy": {"consumed": 5300}},
          "step": {"job_id": 12, "het": {"component": null}, "id": "batch", "name": "batch"},
          "tres": {"requested": {
                     "max": [{"type": "mem", "name": null, "id": 2, "count": 1081606144, "task": 0, "node": "vm"}],
                     "total": [{"type": "mem", "name": null, "id": 2, "count": 1081606144}]}}}
       ]}
    ]}"#;

    fn job(id: u64) -> Accounting {
        let jobs = sacct::parse_json(STEPS.as_bytes()).unwrap().records;
        jobs.into_iter().find(|j| j.job_id == id).unwrap()
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    /// seff's figures from the steps: CPU time summed over every step (microseconds beyond a
    /// second folded in), memory the largest step's (a 4-task step without a per-task sum
    /// estimated as its largest task × 4), MaxRSS the largest task's, the extern step's energy.
    #[test]
    fn the_steps_give_seffs_figures() {
        let busy = job(11);
        let steps = busy.steps.as_deref().unwrap();
        let ids: Vec<&str> = steps.iter().map(|s| s.step.as_str()).collect();
        assert_eq!(ids, ["batch", "0", "extern"]);
        let batch = &steps[0];
        assert!(close(batch.cpu_user_s, 97.4), "{batch:?}");
        assert!(close(batch.cpu_system_s, 0.12), "{batch:?}");
        assert!(close(batch.cpu_total_s, 97.52), "{batch:?}");
        assert_eq!(
            (
                batch.max_rss_bytes,
                batch.max_rss_node.as_deref(),
                batch.max_rss_task
            ),
            (Some(315_392), Some("vm"), Some(0))
        );
        assert_eq!((batch.ntasks, batch.energy_j), (Some(1), None));

        let used = totals(busy.steps.as_deref(), busy.energy_j);
        assert!(close(used.cpu_total_s, 97.52 + 3.0 + 0.002), "{used:?}");
        assert!(close(used.cpu_user_s, 97.4 + 2.0 + 0.001), "{used:?}");
        assert!(close(used.cpu_system_s, 0.12 + 1.0 + 0.001), "{used:?}");
        assert!(close(used.mem_peak_mb, 800.0), "{used:?}");
        assert!(close(used.max_rss_mb, 200.0), "{used:?}");
        assert_eq!((used.energy_j, used.steps), (None, Some(3)));

        let sleeper = job(12);
        let used = totals(sleeper.steps.as_deref(), sleeper.energy_j);
        assert!(close(used.cpu_total_s, 0.7), "{used:?}");
        assert!(close(used.mem_peak_mb, 1031.5), "{used:?}");
        assert_eq!(used.energy_j, Some(5400.0), "the job's own figure first");
        assert!(unfinished(sleeper.steps.as_deref().unwrap()).is_empty());
    }

    /// The real thing: two 1-CPU jobs that shared the test cluster's 2-CPU node, one busy and one
    /// asleep holding 1 GiB (`tests/fixtures/sacct-22.05.8-steps.json`). Each gets its own CPU time
    /// and peak, as `sacct --noconvert` printed them (the fixture's README), and seff's CPU
    /// efficiency: 35.689 s of 40 s on one CPU, 1.927 s of 43 s.
    #[test]
    fn the_captured_pair_gets_each_its_own_figures() {
        const CAPTURED: &str = include_str!("../../../tests/fixtures/sacct-22.05.8-steps.json");
        let jobs = sacct::parse_json(CAPTURED.as_bytes()).unwrap().records;
        let used = |id: u64| {
            let job = jobs.iter().find(|j| j.job_id == id).unwrap();
            totals(job.steps.as_deref(), job.energy_j)
        };
        let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 0.001);
        let (busy, sleeper) = (used(1), used(2));
        assert!(near(busy.cpu_total_s, 35.6895), "{busy:?}");
        assert!(near(sleeper.cpu_total_s, 1.9270), "{sleeper:?}");
        assert!(close(busy.max_rss_mb, 294_912.0 / MIB), "{busy:?}");
        assert!(
            close(sleeper.max_rss_mb, 1_076_875_264.0 / MIB),
            "{sleeper:?}"
        );
        assert!(
            close(sleeper.mem_peak_mb, 1_076_875_264.0 / MIB),
            "{sleeper:?}"
        );
        assert_eq!(
            (busy.steps, busy.energy_j),
            (Some(1), None),
            "no energy plugin: unknown, not 0"
        );
        // seff's CPU efficiency: CPU time over elapsed time × one CPU.
        assert!(near(busy.cpu_total_s.map(|s| s / 40.0), 0.8922));
        assert!(near(sleeper.cpu_total_s.map(|s| s / 43.0), 0.0448));
    }

    /// The job's row carries the figures, the step rows name the run they belong to.
    #[test]
    fn rows_from_the_steps() {
        let record = slurm_hooks::SpoolRecord::from_json(
            br#"{"schema_version":1,"cluster":"ci","job_id":11,"array_job_id":null,"array_task_id":null,
            "restart_count":0,"user":"alice","uid":1,"gid":1,"group":null,"account":null,"partition":"debug",
            "job_name":null,"nodes":null,"num_nodes":1,"cpus_per_node":null,"exit_code":null,
            "derived_exit_code":null,"work_dir":null,"hook":"epilog_slurmctld","host":"vm",
            "enqueued_at":"2026-11-22T10:01:45Z","warnings":[]}"#,
        )
        .unwrap();
        let busy = job(11);
        let row = sacct::job_row(&record, &busy, None).unwrap();
        assert!(close(row.acct_cpu_total_s, 100.522), "{row:?}");
        assert_eq!((row.acct_steps, row.neighbours), (Some(3), None));
        let rows = step_rows(&row, busy.steps.as_deref().unwrap());
        assert_eq!(rows.len(), 3);
        assert_eq!(
            (
                rows[1].job_id.as_str(),
                rows[1].step.as_str(),
                rows[1].submit
            ),
            ("11", "0", row.submit)
        );
        assert!(close(rows[1].max_rss_mb, 200.0));
        assert_eq!((rows[1].tot_rss_mb, rows[1].max_rss_task), (None, Some(3)));
        assert!(JobStepRow::batch(&rows).is_ok());
    }

    /// Whatever a step holds, the job stays readable: figures that cannot be right are unknown,
    /// a step without an id is left out, an answer without a steps list has no figures at all.
    #[test]
    fn wrong_step_figures_are_unknown_not_errors() {
        let answer = |steps: &str| {
            format!(
                r#"{{"jobs": [{{"job_id": 5, "time": {{"end": 1795341700}},
                "tres": {{"allocated": [{{"type": "energy", "count": -2}}]}}{steps}}}]}}"#
            )
        };
        let parsed = |steps: &str| {
            let jobs = sacct::parse_json(answer(steps).as_bytes()).unwrap().records;
            jobs.into_iter().next().unwrap()
        };
        let none = parsed("");
        assert_eq!((none.steps.as_deref(), none.energy_j), (None, None));
        assert_eq!(totals(none.steps.as_deref(), None), Totals::default());
        assert_eq!(parsed(r#", "steps": "garbage""#).steps, None);

        let odd = parsed(
            r#", "steps": [1, null, {"step": {"id": -3}}, {"step": {"id": ""}},
              {"step": {"id": "batch", "het": {"component": 4294967294}},
               "time": {"user": {"seconds": "x"}, "system": {"seconds": -1},
                        "total": {"seconds": 4294967294, "microseconds": 5}, "start": 1.5, "end": -7},
               "tasks": {"count": 4294967295}, "nodes": {"count": 1e99, "range": 7},
               "statistics": {"energy": {"consumed": 4294967294}},
               "tres": {"requested": {"max": "nope",
                                      "total": [{"type": "mem", "count": 1e300}]}}},
              {"step": {"id": 3, "het": {"component": 1}},
               "statistics": {"energy": {"consumed": 2000000000000000}},
               "tres": {"requested": {"max": [{"type": "mem", "count": -2, "task": -1, "node": null}]}}}]"#,
        );
        let steps = odd.steps.as_deref().unwrap();
        assert_eq!(
            steps,
            [
                StepAccounting {
                    step: "batch".into(),
                    ..StepAccounting::default()
                },
                StepAccounting {
                    step: "3+1".into(),
                    ..StepAccounting::default()
                }
            ]
        );
        let used = totals(Some(steps), odd.energy_j);
        assert_eq!(
            used,
            Totals {
                steps: Some(0),
                ..Totals::default()
            }
        );
        assert_eq!(unfinished(steps), ["batch", "3+1"]);
    }
}

#[cfg(test)]
mod gpu_tests {
    use super::*;
    use crate::sacct;

    /// Slurm's own GPU usage from a step's TRESUsageInMax. The figures are a real job's: CU
    /// Boulder's Alpine documentation (docs/compute/monitoring-resources.md of
    /// ResearchComputing/Documentation) shows `sacct -j 18194943 -pno JobID,TRESUsageInMax
    /// --noconvert` as `18194943.batch|cpu=00:56:24,...,gres/gpumem=40777023488,gres/gpuutil=100,
    /// mem=10621726720,...` and `.extern` with both GPU figures 0. No real `sacct --json` with
    /// them was found; they are placed here in 25.11's JSON shape (TRES ids as a site's would be).
    #[test]
    fn gpu_usage_from_the_steps_tres() {
        let entry = |kind: &str, name: &str, id: u32, count: u64| {
            format!(
                r#"{{"type": "{kind}", "name": "{name}", "id": {id}, "count": {count}, "task": 0, "node": "c3gpu-c2-u1"}}"#
            )
        };
        let step = |id: &str, util: u64, gpumem: u64, mem: u64| {
            format!(
                r#"{{"step": {{"id": "18194943.{id}", "name": "{id}"}}, "state": ["COMPLETED"],
                  "time": {{"start": {{"set": true, "infinite": false, "number": 1700000000}},
                            "end": {{"set": true, "infinite": false, "number": 1700003384}}}},
                  "tasks": {{"count": 1}},
                  "tres": {{"requested": {{"max": [{}, {}, {}]}}}}}}"#,
                entry("mem", "", 2, mem),
                entry("gres", "gpumem", 1002, gpumem),
                entry("gres", "gpuutil", 1003, util)
            )
        };
        let answer = format!(
            r#"{{"jobs": [{{"job_id": 18194943, "state": {{"current": ["COMPLETED"]}},
               "time": {{"start": 1700000000, "end": 1700003384}},
               "steps": [{}, {}]}}]}}"#,
            step("batch", 100, 40_777_023_488, 10_621_726_720),
            step("extern", 0, 0, 262_144)
        );
        let jobs = sacct::parse_json(answer.as_bytes()).unwrap().records;
        let steps = jobs[0].steps.as_deref().unwrap();
        assert_eq!(
            (steps[0].gpu_util_max_pct, steps[0].gpu_mem_max_bytes),
            (Some(100.0), Some(40_777_023_488))
        );
        assert_eq!(steps[0].max_rss_bytes, Some(10_621_726_720));
        assert_eq!(
            (steps[1].gpu_util_max_pct, steps[1].gpu_mem_max_bytes),
            (Some(0.0), Some(0))
        );
        let job = sacct::Accounting {
            cluster: Some("alpine".into()),
            ..jobs[0].clone()
        };
        let record = slurm_hooks::SpoolRecord::from_json(
            br#"{"schema_version":1,"cluster":"alpine","job_id":18194943,"array_job_id":null,"array_task_id":null,
            "restart_count":0,"user":"u","uid":1,"gid":1,"group":null,"account":null,"partition":"aa100",
            "job_name":null,"nodes":null,"num_nodes":1,"cpus_per_node":null,"exit_code":null,
            "derived_exit_code":null,"work_dir":null,"hook":"epilog_slurmctld","host":"x",
            "enqueued_at":"2023-11-14T23:00:00Z","warnings":[]}"#,
        )
        .unwrap();
        let row = sacct::job_row(&record, &job, None).unwrap();
        let rows = step_rows(&row, steps);
        assert_eq!(rows[0].gpu_mem_max_mb, Some(38_888.0), "sacct's 38888M");
        assert_eq!(rows[0].gpu_util_max_pct, Some(100.0));
        // The job's row has the largest of its steps' (the batch step's, not the extern's 0).
        assert_eq!(
            (row.acct_gpu_util_max_pct, row.acct_gpu_mem_max_mb),
            (Some(100.0), Some(38_888.0))
        );
        // Every step 0 and 0 (no GPU plugin measures, or no step touched a GPU): unknown.
        let zeros = step("batch", 0, 0, 10_621_726_720);
        let unmeasured = sacct::parse_json(
            answer
                .replace(&step("batch", 100, 40_777_023_488, 10_621_726_720), &zeros)
                .as_bytes(),
        )
        .unwrap()
        .records;
        let used = totals(unmeasured[0].steps.as_deref(), None);
        assert_eq!((used.gpu_util_max_pct, used.gpu_mem_max_mb), (None, None));
        // Without the TRES (no GPU plugin, or another site): unknown, not 0.
        let plain = sacct::parse_json(answer.replace("gres", "license").as_bytes())
            .unwrap()
            .records;
        let plain = &plain[0].steps.as_deref().unwrap()[0];
        assert_eq!(
            (plain.gpu_util_max_pct, plain.gpu_mem_max_bytes),
            (None, None)
        );
    }
}
