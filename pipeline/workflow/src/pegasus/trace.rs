//! Reading one Pegasus trace file (Flow-Bench's CSV): the header's columns found by name, each
//! row checked field by field into a task row, and the rows that cannot be trusted skipped with
//! their line and reason.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use chrono::{DateTime, Utc};

use jobsight_base::skipped::Skipped;
use jobsight_base::stats;
use jobsight_warehouse::catalog::rows::WorkflowTaskRow;

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
        kind: Some(crate::detect::kind_of(&task_id)),
        task_id,
    })
}
