//! The rows of `workflows`, `workflow_tasks` and `workflow_scores`: workflow runs (a Pegasus
//! execution, a chain of Slurm jobs), their tasks with times and delays, and each task's anomaly
//! score against the history of its kind.

use chrono::{DateTime, Utc};
use datafusion::arrow::datatypes::Field;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;

use super::super::Table;
use super::Column;

table_row! {
    /// One row of `workflows`: one run of a workflow (a Pegasus execution, say).
    WorkflowRow => Workflows {
        workflow_id: String,
        /// The workflow the run executes (`1000-genome` for the run `1000-genome-run0009`).
        workflow: String,
        /// The run's label where the data set gives one (Flow-Bench: the folder, `normal`,
        /// `cpu_2`, `hdd_5`, ...).
        label: Option<String>,
        tasks: u32,
        /// Tasks whose label is not `none`, when tasks are labelled.
        anomalous_tasks: Option<u32>,
        start: Option<DateTime<Utc>>,
        end: DateTime<Utc>,
        makespan_s: Option<f64>,
        /// The critical path (from the last task to end back through the parent that ended
        /// last, to a task that waited for none): its tasks and its time from the first one's
        /// ready time to the end, when the DAG was given.
        critical_path_tasks: Option<u32>,
        critical_path_s: Option<f64>,
        source: String,
        /// The delay distributions over the run's tasks: median and 95th percentile of the wait
        /// from ready to start of execution (the workflow system's and the queue's), and of
        /// the run time.
        ready_to_start_median_s: Option<f64>,
        ready_to_start_p95_s: Option<f64>,
        runtime_median_s: Option<f64>,
        runtime_p95_s: Option<f64>,
    }
}

table_row! {
    /// One row of `workflow_tasks`: one task of a workflow run, with its times, delays, bytes,
    /// kickstart counters and place in the DAG.
    #[derive(Default)]
    WorkflowTaskRow => WorkflowTasks {
        workflow_id: String,
        task_id: String,
        task_type: Option<String>,
        /// The task's anomaly label where the data has one (`none` for a healthy task).
        label: Option<String>,
        host: Option<String>,
        transformation: Option<String>,
        ready: Option<DateTime<Utc>>,
        submit: Option<DateTime<Utc>>,
        execute_start: Option<DateTime<Utc>>,
        execute_end: Option<DateTime<Utc>>,
        /// The last time the task shows (its post script's end, else its stage-out's or
        /// execution's end).
        end: Option<DateTime<Utc>>,
        wms_delay_s: Option<f64>,
        pre_script_delay_s: Option<f64>,
        queue_delay_s: Option<f64>,
        runtime_s: Option<f64>,
        post_script_delay_s: Option<f64>,
        stage_in_delay_s: Option<f64>,
        stage_out_delay_s: Option<f64>,
        stage_in_bytes: Option<f64>,
        stage_out_bytes: Option<f64>,
        cpu_time_s: Option<f64>,
        utime_s: Option<f64>,
        stime_s: Option<f64>,
        iowait_s: Option<f64>,
        bytes_read: Option<f64>,
        bytes_written: Option<f64>,
        read_calls: Option<f64>,
        write_calls: Option<f64>,
        exitcode: Option<i32>,
        /// Tasks it waits for and tasks that wait for it, and its depth (0 for a task that waits
        /// for none; the longest chain of tasks above it), from the DAG when one was given.
        parents: Option<u32>,
        children: Option<u32>,
        depth: Option<u32>,
        /// The ids of the tasks it waits for, as a JSON array of strings.
        parent_ids: Option<String>,
        on_critical_path: Option<bool>,
        /// What the task does, the same in every run (its history): a Pegasus task's id without
        /// `_ID<digits>`, a Slurm job's application (its name without a run number).
        kind: Option<String>,
    }
}

table_row! {
    /// One row of `workflow_scores`: a task's anomaly score against the history of its kind
    /// (written by `jobsight workflow score`; docs/workflows.md).
    WorkflowScoreRow => WorkflowScores {
        workflow_id: String,
        task_id: String,
        /// Its host's score in its run: the host's weighted evidence against its kind's history
        /// (docs/workflows.md).
        score: f64,
        /// Its score above the flagging cut (2), and its host's evidence against the run's other
        /// hosts too (`detect::flagged`).
        flagged: bool,
        /// Its own z-scores against its kind's history (0 where not measured): the CPU seconds a
        /// second of execution (larger: less CPU, as slack), run time, stage-in, stage-out, and
        /// kernel seconds a second of execution (larger: fewer).
        slack_z: f64,
        runtime_z: f64,
        stage_in_z: f64,
        stage_out_z: f64,
        stime_z: f64,
        /// Runs the kind's history was learnt from.
        history_runs: u32,
        /// Its run time over the median run time of the tasks of its kind in its run (1 for
        /// the only task of its kind): the same task type in the same run as the yardstick.
        runtime_vs_run: Option<f64>,
        /// With a workflow model (`workflow score --model FILE`): the share of the supervised
        /// task classifier's trees that call it anomalous, and the label the model gives its run.
        supervised_share: Option<f64>,
        run_verdict: Option<String>,
    }
}
