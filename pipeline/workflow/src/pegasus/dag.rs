//! A workflow's DAG: each task's place in it (parents, children, depth) from the adjacency list
//! Flow-Bench ships (`--dag FILE`) or the one `slurm` builds from dependencies, and the run's
//! critical path, the chain of tasks that decided its makespan.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use jobsight_base::safe_fs;
use jobsight_warehouse::catalog::rows::{WorkflowRow, WorkflowTaskRow};

use super::{PegasusError, read_limited};

/// The largest DAG file read.
pub const MAX_DAG_BYTES: u64 = 256 << 20;

/// A task's place in the DAG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub parents: u32,
    pub children: u32,
    pub depth: u32,
    /// The tasks it waits for, sorted.
    pub parent_ids: Vec<String>,
}

/// Reads an adjacency-list DAG (JSON object: task id -> ids of the tasks that wait for it) and
/// gives every task named in it its place.
pub fn read_dag(path: &Path) -> Result<HashMap<String, Place>, PegasusError> {
    let text = read_limited(path, MAX_DAG_BYTES, safe_fs::Links::Follow)?;
    let dag_error = |reason: String| PegasusError::Dag {
        path: path.to_path_buf(),
        reason,
    };
    let adjacency: BTreeMap<String, Vec<String>> = serde_json::from_str(&text).map_err(|e| {
        dag_error(format!(
            "not an adjacency list (a JSON object of task id to a list of task ids): {e}"
        ))
    })?;
    places(&adjacency).map_err(dag_error)
}

/// Parents, children and depth of every task of an adjacency list; an error names a task on a
/// cycle.
pub fn places(adjacency: &BTreeMap<String, Vec<String>>) -> Result<HashMap<String, Place>, String> {
    let mut tasks: BTreeMap<&str, Place> = BTreeMap::new();
    let zero = Place {
        parents: 0,
        children: 0,
        depth: 0,
        parent_ids: Vec::new(),
    };
    for (task, children) in adjacency {
        let distinct: HashSet<&str> = children.iter().map(String::as_str).collect();
        tasks.entry(task).or_insert_with(|| zero.clone()).children = distinct.len() as u32;
        for child in distinct {
            let place = tasks.entry(child).or_insert_with(|| zero.clone());
            place.parents += 1;
            place.parent_ids.push(task.clone());
        }
    }
    for place in tasks.values_mut() {
        place.parent_ids.sort();
    }
    // Kahn's order: a task's depth is one more than its deepest parent's.
    let mut waiting: HashMap<&str, u32> = tasks.iter().map(|(t, p)| (*t, p.parents)).collect();
    let mut ready: Vec<&str> = tasks
        .iter()
        .filter(|(_, p)| p.parents == 0)
        .map(|(t, _)| *t)
        .collect();
    let mut done = 0;
    while let Some(task) = ready.pop() {
        done += 1;
        let depth = tasks[task].depth;
        let children: HashSet<&str> = adjacency
            .get(task)
            .map(|c| c.iter().map(String::as_str).collect())
            .unwrap_or_default();
        for child in children {
            let place = tasks.get_mut(child).expect("every child was entered above");
            place.depth = place.depth.max(depth + 1);
            let left = waiting.get_mut(child).expect("every task has a count");
            *left -= 1;
            if *left == 0 {
                ready.push(child);
            }
        }
    }
    if done < tasks.len() {
        let on_cycle = waiting
            .iter()
            .filter(|(_, left)| **left > 0)
            .map(|(t, _)| *t)
            .min()
            .unwrap_or_default();
        return Err(format!(
            "the DAG has a cycle ({} of {} tasks never become ready, {on_cycle:?} among them)",
            tasks.len() - done,
            tasks.len()
        ));
    }
    Ok(tasks.into_iter().map(|(t, p)| (t.to_string(), p)).collect())
}

/// The run's critical path, as positions in `tasks` from its end back to its start: the task
/// that ended last, then each time the parent (in the DAG) that ended last, until a task that
/// waited for none of the run's tasks. The tasks on it decided the makespan; empty when no task
/// has an end.
pub fn critical_path(tasks: &[WorkflowTaskRow], places: &HashMap<String, Place>) -> Vec<usize> {
    let at: HashMap<&str, usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.task_id.as_str(), i))
        .collect();
    let latest = |candidates: &mut dyn Iterator<Item = usize>| {
        candidates
            .filter(|&i| tasks[i].end.is_some())
            .max_by_key(|&i| (tasks[i].end, std::cmp::Reverse(i)))
    };
    let mut path = Vec::new();
    let mut next = latest(&mut (0..tasks.len()));
    while let Some(i) = next {
        if path.contains(&i) {
            break; // only a cyclic DAG could lead back, and those are refused; never loop.
        }
        path.push(i);
        next = places.get(&tasks[i].task_id).and_then(|p| {
            latest(
                &mut p
                    .parent_ids
                    .iter()
                    .filter_map(|id| at.get(id.as_str()).copied()),
            )
        });
    }
    path
}

/// Gives each task of a run its place in the DAG and the run its critical path (marked on its
/// tasks, counted and timed on the run).
pub fn apply_dag(
    tasks: &mut [WorkflowTaskRow],
    places: &HashMap<String, Place>,
    run: &mut WorkflowRow,
) {
    for task in tasks.iter_mut() {
        if let Some(p) = places.get(&task.task_id) {
            (task.parents, task.children, task.depth) =
                (Some(p.parents), Some(p.children), Some(p.depth));
            task.parent_ids = serde_json::to_string(&p.parent_ids).ok();
        }
    }
    let path = critical_path(tasks, places);
    for (i, task) in tasks.iter_mut().enumerate() {
        task.on_critical_path = Some(path.contains(&i));
    }
    let first = path.last().map(|&i| &tasks[i]);
    let last = path.first().map(|&i| &tasks[i]);
    run.critical_path_tasks = Some(path.len() as u32);
    run.critical_path_s = first
        .and_then(|f| f.ready.or(f.submit).or(f.execute_start))
        .zip(last.and_then(|l| l.end))
        .map(|(from, to)| (to - from).num_microseconds().unwrap_or(0) as f64 / 1e6);
}
