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
//!
//! `trace` reads one trace file into task rows; `dag` reads a DAG file and gives the tasks their
//! places and the run its critical path (also for `slurm`'s runs, whose DAG is built, not read);
//! this module finds the trace files, builds each run's row and writes the days. The tests of
//! the whole importer are here.

mod dag;
mod trace;

pub use dag::{MAX_DAG_BYTES, Place, apply_dag, critical_path, places, read_dag};
pub use trace::{MAX_TIME_FROM_RUN_S, MAX_TRACE_LINE_BYTES, Trace, parse_trace, split_line};

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, Utc};

use jobsight_base::safe_fs;
use jobsight_base::skipped::Skipped;
use jobsight_base::stats;
use jobsight_warehouse::catalog::rows::{WorkflowRow, WorkflowTaskRow};
use jobsight_warehouse::catalog::{self, CatalogError, Table};

/// The largest trace file read (a run of a million tasks is about 500 MB; Flow-Bench's are
/// 100 kB).
pub const MAX_TRACE_BYTES: u64 = 1 << 30;

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

fn read_limited(path: &Path, limit: u64, links: safe_fs::Links) -> Result<String, PegasusError> {
    safe_fs::read_text_at_most(path, links, limit).map_err(|source| PegasusError::Read {
        path: path.to_path_buf(),
        source,
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

/// Every `*.csv` file below `dir`, sorted, through no link below it ([`safe_fs::files_below`]).
pub fn trace_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = safe_fs::files_below(dir);
    files.retain(|f| f.extension().is_some_and(|e| e == "csv"));
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
        let text = match read_limited(file, MAX_TRACE_BYTES, safe_fs::Links::Refuse) {
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
