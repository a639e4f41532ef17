//! The tasks as the detector sees them: each task of `workflow_tasks` with its run, host, kind,
//! label, and its signals: every measure a trace carries that a degraded worker changes, each
//! oriented so that larger is slower.

use std::collections::BTreeMap;
use std::path::Path;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};

use jobsight_warehouse::query;

use super::error::DetectError;

/// The signals each task is described by, against its kind's history and its run's other hosts.
/// Times are `ln(1 + seconds)`; rates are `−ln(1 + per second)`, so that for every signal larger
/// means slower (a throttled disk moves fewer bytes a second; a host that lost cores gives a
/// task fewer CPU seconds per second of execution).
pub const SIGNALS: [&str; 15] = [
    "runtime",
    "exec",
    "stage_in",
    "stage_out",
    "stage_in_rate",
    "stage_out_rate",
    "queue",
    "wms",
    "post",
    "cpu_rate",
    "utime_rate",
    "stime_rate",
    "iowait",
    "read_rate",
    "write_rate",
];
/// How many there are.
pub const N_SIGNALS: usize = SIGNALS.len();

/// The places in [`SIGNALS`] of the signals named elsewhere.
pub const RUNTIME: usize = 0;
pub const EXEC: usize = 1;
pub const STAGE_IN: usize = 2;
pub const STAGE_OUT: usize = 3;
pub const STAGE_IN_RATE: usize = 4;
pub const QUEUE: usize = 6;
pub const WMS: usize = 7;
pub const POST: usize = 8;
pub const CPU_RATE: usize = 9;
pub const STIME_RATE: usize = 11;
pub const IOWAIT: usize = 12;

/// Whether signal `s` is a time in whole seconds (its history's spread is at least one second).
pub fn is_time(s: usize) -> bool {
    matches!(
        s,
        RUNTIME | EXEC | STAGE_IN | STAGE_OUT | QUEUE | WMS | POST | IOWAIT
    )
}

/// One task, as the detector sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub run: String,
    pub task_id: String,
    /// The UTC day of the run's end (its partition).
    pub day: Option<chrono::NaiveDate>,
    pub kind: String,
    pub host: Option<String>,
    /// Anomalous by its label (`None`: not labelled).
    pub anomalous: Option<bool>,
    pub label: Option<String>,
    /// The signals, in [`SIGNALS`] order (`None`: not measured).
    pub signals: [Option<f64>; N_SIGNALS],
    /// Its run time in seconds.
    pub runtime_s: Option<f64>,
    /// When it started executing (seconds since the epoch) and its depth in the DAG: where it
    /// sits in the run's Gantt chart.
    pub start: Option<f64>,
    pub depth: Option<u32>,
}

/// A task's kind: its id without Pegasus's trailing `_ID<digits>` (`individuals_ID0000047` is an
/// `individuals` task). A sub-workflow's `xgboost_ID0000020_pegasus-plan_ID0000016` is
/// `xgboost_ID0000020_pegasus-plan`, a kind per sub-workflow (dropping every such segment, which
/// made them one kind, changed nothing on five workflows no choice was made on, so the simpler
/// form stays: docs/workflows.md). An id without the suffix is its own kind.
pub fn kind_of(task_id: &str) -> String {
    match task_id.rsplit_once("_ID") {
        Some((kind, n))
            if !kind.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            kind.to_string()
        }
        _ => task_id.to_string(),
    }
}

/// What a task measured, as the trace gives it (seconds, bytes, CPU seconds).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measures {
    pub runtime: Option<f64>,
    pub stage_in: Option<f64>,
    pub stage_out: Option<f64>,
    pub stage_in_bytes: Option<f64>,
    pub stage_out_bytes: Option<f64>,
    pub queue: Option<f64>,
    pub wms: Option<f64>,
    pub post: Option<f64>,
    pub cpu_time: Option<f64>,
    pub utime: Option<f64>,
    pub stime: Option<f64>,
    pub iowait: Option<f64>,
    pub bytes_read: Option<f64>,
    pub bytes_written: Option<f64>,
}

/// A task's signals from its measures. Negative or non-finite measures count as not measured.
/// Execution is the run time less stage-in and stage-out (Pegasus counts both inside it).
pub fn signals(m: &Measures) -> [Option<f64>; N_SIGNALS] {
    let ok = |v: Option<f64>| v.filter(|v| v.is_finite() && *v >= 0.0);
    let log = |v: Option<f64>| ok(v).map(f64::ln_1p);
    let exec = ok(m.runtime)
        .map(|r| (r - ok(m.stage_in).unwrap_or(0.0) - ok(m.stage_out).unwrap_or(0.0)).max(0.0));
    // Per second of `over`, negated: fewer a second is slower.
    let rate = |v: Option<f64>, over: Option<f64>| match (ok(v), ok(over)) {
        (Some(v), Some(s)) if s > 0.0 => Some(-(v / s).ln_1p()),
        _ => None,
    };
    [
        log(m.runtime),
        log(exec),
        log(m.stage_in),
        log(m.stage_out),
        rate(m.stage_in_bytes, m.stage_in),
        rate(m.stage_out_bytes, m.stage_out),
        log(m.queue),
        log(m.wms),
        log(m.post),
        rate(m.cpu_time, exec),
        rate(m.utime, exec),
        rate(m.stime, exec),
        log(m.iowait),
        rate(m.bytes_read, exec),
        rate(m.bytes_written, exec),
    ]
}

/// Whether [`read_tasks`] reads each run's label from `workflows`: evaluating and training need
/// it; scoring does not, and reads `workflow_tasks` alone (half the files: one part per run and
/// table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunLabels {
    Read,
    Skip,
}

/// Reads every task of the warehouse, with the runs (and their labels unless `labels` is
/// [`RunLabels::Skip`]). A task's day is its partition's, the UTC day of its run's end.
pub async fn read_tasks(
    data: &Path,
    labels: RunLabels,
) -> Result<(Vec<Task>, BTreeMap<String, Option<String>>), DetectError> {
    let (run_label, join) = match labels {
        RunLabels::Read => (
            "w.label",
            "JOIN workflows w ON t.workflow_id = w.workflow_id",
        ),
        RunLabels::Skip => ("CAST(NULL AS VARCHAR)", ""),
    };
    let batches = query::run(
        data,
        &format!(
            "SELECT t.workflow_id, t.task_id, t.kind, t.host, t.label, t.runtime_s, t.cpu_time_s,
                    t.stage_in_delay_s, t.stage_out_delay_s, t.stage_in_bytes, t.stage_out_bytes,
                    t.queue_delay_s, t.wms_delay_s, t.post_script_delay_s, t.utime_s, t.stime_s,
                    t.iowait_s, t.bytes_read, t.bytes_written,
                    date_part('epoch', t.execute_start) AS start_epoch_s, t.depth,
                    {run_label} AS run_label, t.day AS run_day
             FROM workflow_tasks t {join}"
        ),
    )
    .await?;
    let mut tasks = Vec::new();
    let mut runs: BTreeMap<String, Option<String>> = BTreeMap::new();
    for batch in &batches {
        read_batch(batch, &mut tasks, &mut runs)?;
    }
    Ok((tasks, runs))
}

fn read_batch(
    batch: &RecordBatch,
    tasks: &mut Vec<Task>,
    runs: &mut BTreeMap<String, Option<String>>,
) -> Result<(), DetectError> {
    let column = |name: &str, to: &DataType| {
        let column = batch
            .column_by_name(name)
            .ok_or_else(|| DetectError::Read(format!("no column {name}")))?;
        cast(column, to).map_err(|e| DetectError::Read(e.to_string()))
    };
    // Strings are copied once, into the task; numbers read in place.
    let text_columns = [
        "workflow_id",
        "task_id",
        "kind",
        "host",
        "label",
        "run_label",
        "run_day",
    ]
    .map(|name| column(name, &DataType::Utf8));
    let [run, task, kind, host, label, run_label, day] = text_columns;
    let (run, task, kind, host, label, run_label, day) =
        (run?, task?, kind?, host?, label?, run_label?, day?);
    let [run, task, kind, host, label, run_label, day] =
        [&run, &task, &kind, &host, &label, &run_label, &day].map(|c| c.as_string::<i32>());
    let text = |c: &datafusion::arrow::array::StringArray, i: usize| {
        c.is_valid(i).then(|| c.value(i).to_string())
    };
    let columns = [
        "runtime_s",
        "stage_in_delay_s",
        "stage_out_delay_s",
        "stage_in_bytes",
        "stage_out_bytes",
        "queue_delay_s",
        "wms_delay_s",
        "post_script_delay_s",
        "cpu_time_s",
        "utime_s",
        "stime_s",
        "iowait_s",
        "bytes_read",
        "bytes_written",
        "start_epoch_s",
        "depth",
    ];
    let numbers = columns
        .iter()
        .map(|c| column(c, &DataType::Float64))
        .collect::<Result<Vec<_>, _>>()?;
    let n: Vec<&datafusion::arrow::array::Float64Array> = numbers
        .iter()
        .map(|c| c.as_primitive::<Float64Type>())
        .collect();
    let number = |c: usize, i: usize| n[c].is_valid(i).then(|| n[c].value(i));
    tasks.reserve(batch.num_rows());
    for i in 0..batch.num_rows() {
        if !run.is_valid(i) || !task.is_valid(i) {
            continue;
        }
        let (run_id, task_id) = (run.value(i), task.value(i));
        // Rows of a run come together: the run's label is kept once.
        if tasks.last().is_none_or(|t| t.run != run_id) && !runs.contains_key(run_id) {
            runs.insert(run_id.to_string(), text(run_label, i));
        }
        let measures = Measures {
            runtime: number(0, i),
            stage_in: number(1, i),
            stage_out: number(2, i),
            stage_in_bytes: number(3, i),
            stage_out_bytes: number(4, i),
            queue: number(5, i),
            wms: number(6, i),
            post: number(7, i),
            cpu_time: number(8, i),
            utime: number(9, i),
            stime: number(10, i),
            iowait: number(11, i),
            bytes_read: number(12, i),
            bytes_written: number(13, i),
        };
        let label = text(label, i);
        tasks.push(Task {
            run: run_id.to_string(),
            task_id: task_id.to_string(),
            day: day.is_valid(i).then(|| day.value(i).parse().ok()).flatten(),
            // Parts written before the kind was stored have none: derive it.
            kind: text(kind, i).unwrap_or_else(|| kind_of(task_id)),
            host: text(host, i),
            anomalous: label.as_ref().map(|l| l != "none"),
            label,
            signals: signals(&measures),
            runtime_s: measures.runtime.filter(|r| r.is_finite() && *r >= 0.0),
            start: number(14, i).filter(|s| s.is_finite()),
            depth: number(15, i)
                .filter(|d| d.is_finite() && *d >= 0.0)
                .map(|d| d as u32),
        });
    }
    Ok(())
}
