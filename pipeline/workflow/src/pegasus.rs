//! `jobsight import pegasus DIR [--dag FILE]`: parsed Pegasus execution traces (Flow-Bench's
//! format) into `workflows` and `workflow_tasks`.
//!
//! Input: every `*.csv` file below `DIR` is one workflow run, one row per task. The columns are
//! found by their names in the header (Flow-Bench's column dictionary: the task id in the first
//! column, named `node_id` or left unnamed, then `anomaly_type`, `type`, the epoch timestamps
//! `ready`, `submit`, `execute_start`, ..., the delays `wms_delay`, `queue_delay`, `runtime`, ...,
//! bytes and kickstart counters); any of them may be missing, and columns not known are ignored,
//! so the importer assumes neither a workflow's task names nor its DAG. The run's id is the file's
//! name without `.csv`, the workflow's name that id without a trailing `-run<digits>`, and the
//! run's label the name of the folder holding the file (Flow-Bench's `normal`, `cpu_2`, `hdd_5`,
//! ...), when that folder is below `DIR`. A task's label is its `anomaly_type` (`None` becomes
//! `none`, as in `labels`).
//!
//! `--dag FILE` is the workflow's DAG as an adjacency list (JSON: each task id to the list of the
//! tasks that wait for it, as Flow-Bench ships it); each task then gets its number of parents and
//! children and its depth. A DAG with a cycle is refused.
//!
//! Nothing a trace holds is trusted: fields are split with CSV quoting, a line is at most 1 MiB,
//! numbers must be finite and not negative (durations, sizes, counts), a run time written as
//! `nan` is refused, times must lie between 1970 and 2200 and within a month of the run's other
//! tasks (`MAX_TIME_FROM_RUN_S`). A bad row is skipped and reported with its file and line;
//! a file without a task id column or without any task is skipped with the reason; a second file
//! with the same run id is skipped, not merged. Both tables are partitioned by the UTC day of the
//! run's end, one part per day (`pegasus`) holding the day's runs; importing a run again replaces
//! its rows there.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, Utc};

use jobsight_base::skipped::Skipped;
use jobsight_base::stats;
use jobsight_warehouse::catalog::rows::{WorkflowRow, WorkflowTaskRow};
use jobsight_warehouse::catalog::{self, CatalogError, Table};

/// The largest trace file read (a run of a million tasks is about 500 MB; Flow-Bench's are
/// 100 kB).
pub const MAX_TRACE_BYTES: u64 = 1 << 30;
/// The largest DAG file read.
pub const MAX_DAG_BYTES: u64 = 256 << 20;

#[derive(Debug, thiserror::Error)]
pub enum PegasusError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {reason}")]
    Dag { path: PathBuf, reason: String },
    #[error("no workflow traces (*.csv) below {dir}")]
    NoTraces { dir: PathBuf },
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("the runs of {day}: cannot build a batch: {reason}")]
    Batch { day: NaiveDate, reason: String },
}

/// What an import did.
#[derive(Debug, Default)]
pub struct PegasusImport {
    pub runs: usize,
    pub tasks: usize,
    /// Tasks labelled with an anomaly.
    pub anomalous_tasks: usize,
    pub skipped: Vec<Skipped>,
}

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
    let text = read_limited(path, MAX_DAG_BYTES, jobsight_base::safe_fs::Links::Follow)?;
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

fn read_limited(
    path: &Path,
    limit: u64,
    links: jobsight_base::safe_fs::Links,
) -> Result<String, PegasusError> {
    jobsight_base::safe_fs::read_text_at_most(path, links, limit).map_err(|source| {
        PegasusError::Read {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Splits one CSV line: fields in double quotes may hold commas, and `""` stands for a quote.
pub fn split_line(line: &str) -> Result<Vec<String>, &'static str> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut at_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => {
                    quoted = false;
                    if chars.peek().is_some_and(|n| *n != ',') {
                        return Err("text after a closing quote");
                    }
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if at_start => {
                quoted = true;
                at_start = false;
            }
            ',' => {
                fields.push(std::mem::take(&mut field));
                at_start = true;
            }
            _ => {
                field.push(c);
                at_start = false;
            }
        }
    }
    if quoted {
        return Err("a quote is not closed");
    }
    fields.push(field);
    Ok(fields)
}

/// A number field: empty (or `nan`, as pandas may write it) is missing; anything else must be a
/// finite number.
fn number(text: &str) -> Result<Option<f64>, String> {
    let t = text.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("nan") {
        return Ok(None);
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Some(v)),
        _ => Err(format!("{t:?} is not a finite number")),
    }
}

/// Seconds since the epoch from 1970 to 2200.
fn epoch(text: &str) -> Result<Option<DateTime<Utc>>, String> {
    const LAST: f64 = 7_258_118_400.0; // 2200-01-01
    let Some(s) = number(text)? else {
        return Ok(None);
    };
    if !(0.0..LAST).contains(&s) {
        return Err(format!("{s} is not a time between 1970 and 2200"));
    }
    Ok(DateTime::from_timestamp_micros((s * 1e6).round() as i64))
}

/// The header's known columns, by position.
struct Columns {
    task: usize,
    at: HashMap<&'static str, usize>,
}

/// Every column the importer reads, by the name Flow-Bench's dictionary gives it.
const KNOWN: [&str; 29] = [
    "anomaly_type",
    "type",
    "kickstart_hostname",
    "kickstart_transformations",
    "ready",
    "submit",
    "execute_start",
    "execute_end",
    "stage_out_end",
    "post_script_end",
    "wms_delay",
    "pre_script_delay",
    "queue_delay",
    "runtime",
    "post_script_delay",
    "stage_in_delay",
    "stage_out_delay",
    "stage_in_bytes",
    "stage_out_bytes",
    "kickstart_executables_cpu_time",
    "kickstart_online_utime",
    "kickstart_online_stime",
    "kickstart_online_iowait",
    "kickstart_online_bytes_read",
    "kickstart_online_bytes_written",
    "kickstart_online_read_system_calls",
    "kickstart_online_write_system_calls",
    "kickstart_executables_exitcode",
    "stage_in_end",
];

impl Columns {
    fn of(header: &[String]) -> Result<Columns, String> {
        let task = match header.first().map(|h| h.trim()) {
            Some("" | "node_id") => 0,
            _ => header
                .iter()
                .position(|h| h.trim() == "node_id")
                .ok_or("no task id column (the first column, named node_id or unnamed)")?,
        };
        let at: HashMap<&'static str, usize> = KNOWN
            .iter()
            .filter_map(|k| Some((*k, header.iter().position(|h| h.trim() == *k)?)))
            .collect();
        if !["ready", "submit", "execute_start", "execute_end"]
            .iter()
            .any(|k| at.contains_key(k))
        {
            return Err("no task times (ready, submit, execute_start or execute_end)".into());
        }
        Ok(Columns { task, at })
    }
}

/// One run's tasks read from its trace, with the rows skipped.
#[derive(Debug)]
pub struct Trace {
    pub tasks: Vec<WorkflowTaskRow>,
    pub skipped: Vec<Skipped>,
}

/// The farthest a task's time may lie from the middle of its run's task ends: a workflow run of a
/// month is long; one of years is a wrong time.
pub const MAX_TIME_FROM_RUN_S: i64 = 31 * 24 * 3600;

/// Why a task's times do not belong to a run whose task ends lie around `middle` (Unix seconds).
fn out_of_range(task: &WorkflowTaskRow, middle: f64) -> Option<String> {
    [
        ("ready", task.ready),
        ("submit", task.submit),
        ("execute_start", task.execute_start),
        ("execute_end", task.execute_end),
        ("end", task.end),
    ]
    .into_iter()
    .find_map(|(name, time)| {
        let time = time?;
        let days = (time.timestamp() as f64 - middle).abs() / 86_400.0;
        (days > (MAX_TIME_FROM_RUN_S / 86_400) as f64)
            .then(|| format!("{name}: {time} is {days:.0} days from the run's other tasks"))
    })
}

/// The longest task line read, as the SWF and LDMS importers' lines.
pub const MAX_TRACE_LINE_BYTES: usize = 1 << 20;

/// Parses one trace file's text into task rows of run `run` (without DAG places).
pub fn parse_trace(text: &str, path: &Path, run: &str) -> Result<Trace, String> {
    let mut lines = text.lines().enumerate();
    let header = match lines.next() {
        Some((_, line)) => {
            split_line(line.trim_end_matches('\r')).map_err(|e| format!("line 1: {e}"))?
        }
        None => return Err("empty file".into()),
    };
    let columns = Columns::of(&header)?;
    let mut tasks = Vec::new();
    let mut lines_of_tasks = Vec::new();
    let mut skipped = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for (index, line) in lines {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let skip = |reason: String| Skipped {
            file: path.to_path_buf(),
            line: index + 1,
            reason,
        };
        // A task's line is a few hundred bytes: a longer one is not a trace's, and splitting it
        // would copy it again.
        if line.len() > MAX_TRACE_LINE_BYTES {
            skipped.push(skip(format!(
                "a line of {} bytes (at most {MAX_TRACE_LINE_BYTES})",
                line.len()
            )));
            continue;
        }
        let row = match split_line(line) {
            Ok(fields) if fields.len() == header.len() => task_row(&fields, &columns, run),
            Ok(fields) => Err(format!(
                "{} fields where the header has {}",
                fields.len(),
                header.len()
            )),
            Err(e) => Err(e.to_string()),
        };
        match row {
            Ok(task) if !seen.insert(task.task_id.clone()) => skipped.push(skip(format!(
                "task {:?} appears a second time",
                task.task_id
            ))),
            Ok(task) => {
                tasks.push(task);
                lines_of_tasks.push(index + 1);
            }
            Err(reason) => skipped.push(skip(reason)),
        }
    }
    // Times must fall in the run's range: a task time far from the others' (a `ready` of 0 in
    // a run of 2023 would make a 52-year makespan) is a clock or a writer at fault.
    let mut ends: Vec<f64> = tasks
        .iter()
        .filter_map(|t| t.end.map(|e| e.timestamp() as f64))
        .collect();
    if let Some(middle) = stats::median(&mut ends) {
        let mut kept = Vec::with_capacity(tasks.len());
        for (task, line) in tasks.into_iter().zip(lines_of_tasks) {
            match out_of_range(&task, middle) {
                Some(reason) => skipped.push(Skipped {
                    file: path.to_path_buf(),
                    line,
                    reason,
                }),
                None => kept.push(task),
            }
        }
        tasks = kept;
    }
    Ok(Trace { tasks, skipped })
}

/// The task's run time: like every number, missing when empty; but a `nan` written in its place
/// is a run time no one measured, which the workflow scores would read as none, so the row says
/// so instead of passing.
fn runtime(fields: &[String], columns: &Columns) -> Result<Option<f64>, String> {
    let Some(&i) = columns.at.get("runtime") else {
        return Ok(None);
    };
    let text = fields[i].trim();
    if text.eq_ignore_ascii_case("nan") {
        return Err("runtime: NaN is not a run time".into());
    }
    match number(text).map_err(|e| format!("runtime: {e}"))? {
        Some(v) if v < 0.0 => Err(format!("runtime: {v} is negative")),
        v => Ok(v),
    }
}

fn task_row(fields: &[String], columns: &Columns, run: &str) -> Result<WorkflowTaskRow, String> {
    let text = |k: &str| -> Option<String> {
        let v = fields[*columns.at.get(k)?].trim();
        (!v.is_empty()).then(|| v.to_string())
    };
    // Every number of a task is a duration, a size or a count: never negative.
    let num = |k: &str| -> Result<Option<f64>, String> {
        match columns.at.get(k) {
            Some(&i) => match number(&fields[i]).map_err(|e| format!("{k}: {e}"))? {
                Some(v) if v < 0.0 => Err(format!("{k}: {v} is negative")),
                v => Ok(v),
            },
            None => Ok(None),
        }
    };
    let time = |k: &str| -> Result<Option<DateTime<Utc>>, String> {
        match columns.at.get(k) {
            Some(&i) => epoch(&fields[i]).map_err(|e| format!("{k}: {e}")),
            None => Ok(None),
        }
    };
    let task_id = fields[columns.task].trim().to_string();
    if task_id.is_empty() {
        return Err("no task id".into());
    }
    let label = text("anomaly_type").map(|l| {
        if l.eq_ignore_ascii_case("none") {
            "none".to_string()
        } else {
            l
        }
    });
    let exitcode = match num("kickstart_executables_exitcode")? {
        Some(v) if v.fract() == 0.0 && (f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&v) => {
            Some(v as i32)
        }
        Some(v) => {
            return Err(format!(
                "kickstart_executables_exitcode: {v} is not an exit code"
            ));
        }
        None => None,
    };
    let (execute_start, execute_end) = (time("execute_start")?, time("execute_end")?);
    // A task that ended before it started: a clock or a writer at fault.
    if let (Some(start), Some(end)) = (execute_start, execute_end)
        && end < start
    {
        return Err(format!("execute_end {end} is before execute_start {start}"));
    }
    let mut end = None;
    for k in [
        "post_script_end",
        "stage_out_end",
        "execute_end",
        "stage_in_end",
        "execute_start",
        "submit",
        "ready",
    ] {
        end = end.max(time(k)?);
    }
    Ok(WorkflowTaskRow {
        workflow_id: run.to_string(),
        task_type: text("type"),
        label,
        host: text("kickstart_hostname"),
        transformation: text("kickstart_transformations"),
        ready: time("ready")?,
        submit: time("submit")?,
        execute_start,
        execute_end,
        end,
        wms_delay_s: num("wms_delay")?,
        pre_script_delay_s: num("pre_script_delay")?,
        queue_delay_s: num("queue_delay")?,
        runtime_s: runtime(fields, columns)?,
        post_script_delay_s: num("post_script_delay")?,
        stage_in_delay_s: num("stage_in_delay")?,
        stage_out_delay_s: num("stage_out_delay")?,
        stage_in_bytes: num("stage_in_bytes")?,
        stage_out_bytes: num("stage_out_bytes")?,
        cpu_time_s: num("kickstart_executables_cpu_time")?,
        utime_s: num("kickstart_online_utime")?,
        stime_s: num("kickstart_online_stime")?,
        iowait_s: num("kickstart_online_iowait")?,
        bytes_read: num("kickstart_online_bytes_read")?,
        bytes_written: num("kickstart_online_bytes_written")?,
        read_calls: num("kickstart_online_read_system_calls")?,
        write_calls: num("kickstart_online_write_system_calls")?,
        exitcode,
        parents: None,
        children: None,
        depth: None,
        parent_ids: None,
        on_critical_path: None,
        kind: Some(super::detect::kind_of(&task_id)),
        task_id,
    })
}

/// The workflow a run id belongs to: the id without a trailing `-run<digits>` (or `_run`).
pub fn workflow_of(run: &str) -> &str {
    for sep in ["-run", "_run"] {
        if let Some((name, number)) = run.rsplit_once(sep)
            && !name.is_empty()
            && !number.is_empty()
            && number.bytes().all(|b| b.is_ascii_digit())
        {
            return name;
        }
    }
    run
}

/// The run's row from its tasks; `None` when no task has a time.
pub fn run_row(
    run: &str,
    label: Option<String>,
    tasks: &[WorkflowTaskRow],
    source: &str,
) -> Option<WorkflowRow> {
    let end = tasks.iter().filter_map(|t| t.end).max()?;
    let start = tasks
        .iter()
        .filter_map(|t| t.ready.or(t.submit).or(t.execute_start))
        .min();
    let labelled = tasks.iter().filter(|t| t.label.is_some()).count();
    let seconds = |from: DateTime<Utc>, to: DateTime<Utc>| {
        (to - from).num_microseconds().map(|us| us as f64 / 1e6)
    };
    let waits = stats::median_and_p95(
        tasks
            .iter()
            .filter_map(|t| seconds(t.ready.or(t.submit)?, t.execute_start?)),
    );
    let runtimes = stats::median_and_p95(tasks.iter().filter_map(|t| {
        t.runtime_s
            .or_else(|| seconds(t.execute_start?, t.execute_end?))
    }));
    Some(WorkflowRow {
        workflow_id: run.to_string(),
        workflow: workflow_of(run).to_string(),
        label,
        tasks: tasks.len() as u32,
        anomalous_tasks: (labelled > 0).then(|| {
            tasks
                .iter()
                .filter(|t| t.label.as_deref().is_some_and(|l| l != "none"))
                .count() as u32
        }),
        start,
        end,
        makespan_s: start.map(|s| (end - s).num_microseconds().unwrap_or(0) as f64 / 1e6),
        critical_path_tasks: None,
        critical_path_s: None,
        source: source.to_string(),
        ready_to_start_median_s: waits.map(|w| w.0),
        ready_to_start_p95_s: waits.map(|w| w.1),
        runtime_median_s: runtimes.map(|r| r.0),
        runtime_p95_s: runtimes.map(|r| r.1),
    })
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

/// Every `*.csv` file below `dir`, sorted, never through a link.
pub fn trace_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(entry.path()),
                Ok(t) if t.is_file() && entry.path().extension().is_some_and(|e| e == "csv") => {
                    files.push(entry.path())
                }
                _ => {}
            }
        }
    }
    files.sort();
    files
}

/// The part of each day's partition that holds the day's imported runs.
pub const DAY_PART: &str = "pegasus";

/// Tasks an import holds in memory before it writes their days: the days are written as they
/// fill, so the memory an import takes does not grow with its size.
const FLUSH_TASKS: usize = 500_000;

/// The runs of one day read by an import and not yet written.
#[derive(Default)]
struct DayRuns {
    tasks: Vec<WorkflowTaskRow>,
    runs: Vec<WorkflowRow>,
}

/// Writes each day's runs into its day part [`DAY_PART`] of both tables, replacing the rows of
/// runs imported before with the same ids and folding in the part per run that imports before
/// 2026-11-28 wrote (`pegasus-<run>`).
fn write_days(data: &Path, days: BTreeMap<NaiveDate, DayRuns>) -> Result<(), PegasusError> {
    let per_run_part = |name: &str| name.starts_with("pegasus-");
    for (day, runs) in days {
        let batch_error = |e: datafusion::arrow::error::ArrowError| PegasusError::Batch {
            day,
            reason: e.to_string(),
        };
        let tasks = WorkflowTaskRow::batch(&runs.tasks).map_err(batch_error)?;
        let rows = WorkflowRow::batch(&runs.runs).map_err(batch_error)?;
        for (table, batch) in [(Table::WorkflowTasks, tasks), (Table::Workflows, rows)] {
            let key = "workflow_id";
            catalog::replace_rows(data, table, day, DAY_PART, key, &[batch], per_run_part)?;
        }
    }
    Ok(())
}

/// Imports every trace below `dir` (each a run), with DAG places from `dag` when given.
pub fn import(
    data: &Path,
    dir: &Path,
    dag: Option<&Path>,
    mut progress: impl FnMut(usize, usize, &str),
) -> Result<PegasusImport, PegasusError> {
    let places = match dag {
        Some(path) => Some(read_dag(path)?),
        None => None,
    };
    let files = trace_files(dir);
    if files.is_empty() {
        return Err(PegasusError::NoTraces {
            dir: dir.to_path_buf(),
        });
    }
    let mut done = PegasusImport::default();
    let mut runs: HashMap<String, PathBuf> = HashMap::new();
    let mut pending: BTreeMap<NaiveDate, DayRuns> = BTreeMap::new();
    let mut pending_tasks = 0;
    for (index, file) in files.iter().enumerate() {
        let run = file
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        progress(index + 1, files.len(), &run);
        let skip_file = |reason: String| Skipped {
            file: file.clone(),
            line: 0,
            reason,
        };
        if let Some(first) = runs.get(&run) {
            done.skipped.push(skip_file(format!(
                "run {run} was already imported from {}: not imported again",
                first.display()
            )));
            continue;
        }
        let text = match read_limited(file, MAX_TRACE_BYTES, jobsight_base::safe_fs::Links::Refuse)
        {
            Ok(text) => text,
            Err(e) => {
                done.skipped
                    .push(skip_file(format!("run not imported: {e}")));
                continue;
            }
        };
        let mut trace = match parse_trace(&text, file, &run) {
            Ok(trace) => trace,
            Err(reason) => {
                done.skipped
                    .push(skip_file(format!("run not imported: {reason}")));
                continue;
            }
        };
        done.skipped.append(&mut trace.skipped);
        let label = file
            .parent()
            .filter(|p| *p != dir && p.starts_with(dir))
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned());
        let source = format!(
            "pegasus:{}",
            file.strip_prefix(dir).unwrap_or(file).display()
        );
        let Some(mut row) = run_row(&run, label, &trace.tasks, &source) else {
            done.skipped
                .push(skip_file("run not imported: no task with a time".into()));
            continue;
        };
        if let Some(places) = &places {
            apply_dag(&mut trace.tasks, places, &mut row);
        }
        done.runs += 1;
        done.tasks += trace.tasks.len();
        done.anomalous_tasks += row.anomalous_tasks.unwrap_or(0) as usize;
        runs.insert(run, file.clone());
        let day = pending.entry(row.end.date_naive()).or_default();
        pending_tasks += trace.tasks.len();
        day.tasks.append(&mut trace.tasks);
        day.runs.push(row);
        if pending_tasks >= FLUSH_TASKS {
            write_days(data, std::mem::take(&mut pending))?;
            pending_tasks = 0;
        }
    }
    write_days(data, pending)?;
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = ",anomaly_type,type,ready,submit,execute_start,execute_end,post_script_end,runtime,kickstart_executables_argv,kickstart_executables_exitcode";

    #[test]
    fn csv_quoting() {
        assert_eq!(split_line("a,,b").unwrap(), ["a", "", "b"]);
        assert_eq!(
            split_line(r#"x,"-n a,b ""q""",3"#).unwrap(),
            ["x", r#"-n a,b "q""#, "3"]
        );
        assert!(split_line(r#"x,"open"#).is_err());
        assert!(split_line(r#"x,"a"b,3"#).is_err());
    }

    /// What the review slipped through: a NaN or negative run time, a negative size, a `ready`
    /// of 1970 in a run of 2023 (a 52-year makespan), and a line of megabytes.
    #[test]
    fn impossible_numbers_and_times_are_refused_with_their_reason() {
        let t = |s: u64| 1_672_780_000 + s;
        let text = format!(
            "{HEADER}\n\
             a,None,compute,{},{},{},{},,5.0,,0\n\
             b,None,compute,{},{},{},{},,nan,,0\n\
             c,None,compute,{},{},{},{},,-1000000000,,0\n\
             d,None,compute,0,{},{},{},,5.0,,0\n\
             e,None,compute,{},{},{},{},,5.0,\"{}\",0\n",
            t(0),
            t(1),
            t(2),
            t(7),
            t(0),
            t(1),
            t(2),
            t(7),
            t(0),
            t(1),
            t(2),
            t(7),
            t(1),
            t(2),
            t(7),
            t(0),
            t(1),
            t(2),
            t(7),
            "x".repeat(MAX_TRACE_LINE_BYTES),
        );
        let trace = parse_trace(&text, Path::new("t.csv"), "montage-run0001").unwrap();
        let ids: Vec<&str> = trace.tasks.iter().map(|t| t.task_id.as_str()).collect();
        assert_eq!(ids, ["a"]);
        let reasons: Vec<(usize, String)> = trace
            .skipped
            .iter()
            .map(|s| (s.line, s.reason.clone()))
            .collect();
        assert_eq!(reasons[0], (3, "runtime: NaN is not a run time".into()));
        assert_eq!(reasons[1], (4, "runtime: -1000000000 is negative".into()));
        assert_eq!(reasons[2].0, 6, "{reasons:?}");
        assert!(reasons[2].1.starts_with("a line of 10"), "{reasons:?}");
        assert_eq!(reasons[3].0, 5, "{reasons:?}");
        assert!(
            reasons[3]
                .1
                .starts_with("ready: 1970-01-01 00:00:00 UTC is 19361 days"),
            "{reasons:?}"
        );
        // A task that ended before it started is refused with its reason, not kept.
        let backwards = format!(
            "{HEADER}\nf,None,compute,{},{},{},{},,5.0,,0\n",
            t(0),
            t(1),
            t(7),
            t(2)
        );
        let trace = parse_trace(&backwards, Path::new("t.csv"), "montage-run0001").unwrap();
        assert!(trace.tasks.is_empty());
        assert!(
            trace.skipped[0].reason.starts_with("execute_end ")
                && trace.skipped[0].reason.contains("is before execute_start"),
            "{:?}",
            trace.skipped
        );
    }

    #[test]
    fn a_trace_becomes_tasks_and_a_run_with_bad_rows_reported() {
        let text = format!(
            "{HEADER}\n\
             stage_in,None,auxiliary,100.0,101.0,105.0,110.0,112.0,5.0,\"-a, -b\",0\n\
             work_1,cpu_2,compute,112.0,113.0,120.0,400.0,,280.0,,0\n\
             work_2,None,compute,112.0,abc,120.0,300.0,,180.0,,0\n\
             work_3,None,compute,112.0,113.0\n\
             work_1,None,compute,1.0,2.0,3.0,4.0,,1.0,,0\n\
             work_4,hdd_5,compute,99999999999.0,113.0,120.0,300.0,,180.0,,0\n\
             work_5,None,compute,112.0,113.0,120.0,390.5,,270.5,,1.5\n"
        );
        let trace = parse_trace(&text, Path::new("t.csv"), "1000-genome-run0001").unwrap();
        let ids: Vec<&str> = trace.tasks.iter().map(|t| t.task_id.as_str()).collect();
        assert_eq!(ids, ["stage_in", "work_1"]);
        let reasons: Vec<(usize, &str)> = trace
            .skipped
            .iter()
            .map(|s| (s.line, s.reason.as_str()))
            .collect();
        assert_eq!(
            reasons,
            [
                (4, "submit: \"abc\" is not a finite number"),
                (5, "5 fields where the header has 11"),
                (6, "task \"work_1\" appears a second time"),
                (7, "ready: 99999999999 is not a time between 1970 and 2200"),
                (8, "kickstart_executables_exitcode: 1.5 is not an exit code"),
            ]
        );
        let (a, b) = (&trace.tasks[0], &trace.tasks[1]);
        assert_eq!(a.label.as_deref(), Some("none"));
        assert_eq!(b.label.as_deref(), Some("cpu_2"));
        assert_eq!(a.end.unwrap().timestamp(), 112, "the post script's end");
        assert_eq!(
            b.end.unwrap().timestamp(),
            400,
            "no post script: the execution's end"
        );
        let run = run_row(
            "1000-genome-run0001",
            Some("cpu_2".into()),
            &trace.tasks,
            "s",
        )
        .unwrap();
        assert_eq!(run.workflow, "1000-genome");
        assert_eq!((run.tasks, run.anomalous_tasks), (2, Some(1)));
        assert_eq!(run.makespan_s, Some(300.0));
    }

    #[test]
    fn files_without_task_ids_or_times_are_refused() {
        let p = Path::new("t.csv");
        assert!(parse_trace("a,b\n1,2\n", p, "r").is_err());
        assert!(parse_trace("node_id,runtime\nx,2\n", p, "r").is_err());
        assert!(parse_trace("", p, "r").is_err());
    }

    #[test]
    fn dag_places_and_cycles() {
        let adj = |pairs: &[(&str, &[&str])]| -> BTreeMap<String, Vec<String>> {
            pairs
                .iter()
                .map(|(t, c)| (t.to_string(), c.iter().map(|s| s.to_string()).collect()))
                .collect()
        };
        // a -> b, a -> c, b -> d, c -> d, d -> e; e is only named as a child.
        let places = places(&adj(&[
            ("a", &["b", "c"]),
            ("b", &["d"]),
            ("c", &["d", "d"]),
            ("d", &["e"]),
        ]))
        .unwrap();
        let p = |t: &str| {
            let p = &places[t];
            (p.parents, p.children, p.depth)
        };
        assert_eq!(p("a"), (0, 2, 0));
        assert_eq!(p("d"), (2, 1, 2));
        assert_eq!(p("e"), (1, 0, 3));
        assert_eq!(places["d"].parent_ids, ["b", "c"]);
        // The critical path: d ended last of e's... e ended last; of d's parents c ended later.
        let task = |id: &str, end: i64| WorkflowTaskRow {
            task_id: id.into(),
            end: DateTime::from_timestamp(end, 0),
            ..parse_trace(
                &format!("{HEADER}\nx,None,c,1,1,1,1,1,1,,0\n"),
                Path::new("t"),
                "r",
            )
            .unwrap()
            .tasks[0]
                .clone()
        };
        let tasks = [
            task("a", 10),
            task("b", 20),
            task("c", 30),
            task("d", 40),
            task("e", 50),
        ];
        let path: Vec<&str> = critical_path(&tasks, &places)
            .iter()
            .map(|&i| tasks[i].task_id.as_str())
            .collect();
        assert_eq!(path, ["e", "d", "c", "a"]);
        let err = super::places(&adj(&[("a", &["b"]), ("b", &["c"]), ("c", &["b"])])).unwrap_err();
        assert!(err.contains("cycle") && err.contains("\"b\""), "{err}");
    }

    #[test]
    fn workflow_names() {
        assert_eq!(workflow_of("1000-genome-run0009"), "1000-genome");
        assert_eq!(workflow_of("montage_run12"), "montage");
        assert_eq!(workflow_of("run-7x"), "run-7x");
        assert_eq!(workflow_of("-run3"), "-run3");
    }
}
