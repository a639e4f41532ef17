//! The tasks as the detector sees them: each task of `workflow_tasks` with its run's label, its
//! kind, and its raw figures (slack and the logarithms of its times).

use std::collections::BTreeMap;
use std::path::Path;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};

use jobsight_warehouse::query;

use super::error::DetectError;

/// The figures each task is described by, against its kind's history.
pub const FIGURES: [&str; 5] = ["slack", "runtime", "stage_in", "stage_out", "stime"];

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
    /// The raw figures, in [`FIGURES`] order (`None`: not measured).
    pub figures: [Option<f64>; 5],
}

/// A task's kind: its id without Pegasus's `_ID<digits>` suffix.
pub fn kind_of(task_id: &str) -> &str {
    match task_id.rsplit_once("_ID") {
        Some((kind, n))
            if !kind.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            kind
        }
        _ => task_id,
    }
}

/// The raw figures of a task from its columns.
pub fn figures(
    runtime: Option<f64>,
    cpu_time: Option<f64>,
    stage_in: Option<f64>,
    stage_out: Option<f64>,
    stime: Option<f64>,
) -> [Option<f64>; 5] {
    let log = |v: Option<f64>| v.filter(|v| *v >= 0.0).map(f64::ln_1p);
    let slack = match (cpu_time, runtime) {
        (Some(c), Some(r)) if r > 0.0 && c >= 0.0 => Some(1.0 - c / r),
        _ => None,
    };
    [
        slack,
        log(runtime),
        log(stage_in),
        log(stage_out),
        log(stime),
    ]
}

/// Reads every task of the warehouse with its run's label.
pub async fn read_tasks(
    data: &Path,
) -> Result<(Vec<Task>, BTreeMap<String, Option<String>>), DetectError> {
    let batches = query::run(
        data,
        "SELECT t.workflow_id, t.task_id, t.kind, t.host, t.label, t.runtime_s, t.cpu_time_s,
                t.stage_in_delay_s, t.stage_out_delay_s, t.stime_s, w.label AS run_label,
                to_char(w.\"end\", '%Y-%m-%d') AS run_day
         FROM workflow_tasks t JOIN workflows w ON t.workflow_id = w.workflow_id",
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
    let text = |name: &str| -> Result<Vec<Option<String>>, DetectError> {
        let column = batch
            .column_by_name(name)
            .ok_or_else(|| DetectError::Read(format!("no column {name}")))?;
        let column = cast(column, &DataType::Utf8).map_err(|e| DetectError::Read(e.to_string()))?;
        let column = column.as_string::<i32>();
        Ok((0..column.len())
            .map(|i| column.is_valid(i).then(|| column.value(i).to_string()))
            .collect())
    };
    let number = |name: &str| -> Result<Vec<Option<f64>>, DetectError> {
        let column = batch
            .column_by_name(name)
            .ok_or_else(|| DetectError::Read(format!("no column {name}")))?;
        let column =
            cast(column, &DataType::Float64).map_err(|e| DetectError::Read(e.to_string()))?;
        let column = column.as_primitive::<Float64Type>();
        Ok((0..column.len())
            .map(|i| column.is_valid(i).then(|| column.value(i)))
            .collect())
    };
    let (run, task, kind, host, label, run_label, day) = (
        text("workflow_id")?,
        text("task_id")?,
        text("kind")?,
        text("host")?,
        text("label")?,
        text("run_label")?,
        text("run_day")?,
    );
    let (runtime, cpu, stage_in, stage_out, stime) = (
        number("runtime_s")?,
        number("cpu_time_s")?,
        number("stage_in_delay_s")?,
        number("stage_out_delay_s")?,
        number("stime_s")?,
    );
    for i in 0..batch.num_rows() {
        let (Some(run), Some(task)) = (&run[i], &task[i]) else {
            continue;
        };
        runs.insert(run.clone(), run_label[i].clone());
        tasks.push(Task {
            run: run.clone(),
            task_id: task.clone(),
            day: day[i].as_deref().and_then(|d| d.parse().ok()),
            // Parts written before the kind was stored have none: derive it as they did.
            kind: kind[i].clone().unwrap_or_else(|| kind_of(task).to_string()),
            host: host[i].clone(),
            anomalous: label[i].as_ref().map(|l| l != "none"),
            label: label[i].clone(),
            figures: figures(runtime[i], cpu[i], stage_in[i], stage_out[i], stime[i]),
        });
    }
    Ok(())
}
