//! Slurm workflows: job arrays and jobs chained with `--dependency`, rebuilt from the `jobs`
//! table as workflow runs, so that a site without Pegasus gets the workflow tables, scores and
//! Gantt pages on its own job flow.
//!
//! A workflow run is a connected group of at least two jobs of one cluster: the tasks of one
//! array belong together, and a job belongs with the jobs its dependency names (`afterok:12`,
//! `afterany:7_2`; a job id that is an array's names all its tasks). `singleton` links nothing.
//! A named job counts as a parent only when it ended before the child started (job ids repeat
//! after a controller's state is reset), and of a job id seen twice (a requeued job's runs) the
//! run that ended last is the job. Each
//! job is a task: its kind is the application its job name stands for (the name without a run
//! number, as the models group runs: its history is the earlier runs of it), its host the first node, `ready` the time its last parent ended (else its submission),
//! `queue_delay_s` the wait from ready to start, `runtime_s` its elapsed time, and `cpu_time_s`
//! the cores it used on average times its elapsed time when the features have seen it. The run
//! is named after its first job (`slurm-<cluster>-<lowest job id>`), which stays its id when the
//! chain grows later; the workflow's name is that job's name.
//!
//! [`rebuild`] reads the jobs that ended in a range of days plus as many days before it (so a
//! chain begun before the range is whole), and writes the runs that ended in the range into
//! `workflows` and `workflow_tasks`, one part `slurm` per day, replacing the day's earlier part
//! (or removing it when the day now has none). A chain longer than the range is cut at the start
//! of what was read.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use chrono::{DateTime, NaiveDate, Utc};

use super::pegasus::{self, Place};
use jobsight_warehouse::catalog::rows::{WorkflowRow, WorkflowTaskRow};
use jobsight_warehouse::catalog::{self, Table};
use jobsight_warehouse::query;

/// The part name Slurm workflows are written under, in each day partition.
pub const PART: &str = "slurm";

#[derive(Debug, thiserror::Error)]
pub enum SlurmWorkflowError {
    #[error(transparent)]
    Query(#[from] query::QueryError),
    #[error(transparent)]
    Catalog(#[from] catalog::CatalogError),
    #[error("workflow {run}: cannot build a batch: {reason}")]
    Batch { run: String, reason: String },
}

/// What the workflows are built from: one job run, as `jobs` (and `job_summary`) hold it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SlurmJob {
    pub cluster: String,
    pub job_id: u64,
    pub array_job_id: Option<u64>,
    pub array_task_id: Option<u32>,
    pub name: Option<String>,
    /// The job's first node.
    pub host: Option<String>,
    pub submit: Option<DateTime<Utc>>,
    pub start: Option<DateTime<Utc>>,
    pub end: DateTime<Utc>,
    pub exit_code: Option<i32>,
    pub dependency: Option<String>,
    /// Cores used on average (`job_summary.cpu_used_cores`), when the features have seen it.
    pub cpu_used_cores: Option<f64>,
}

impl SlurmJob {
    /// The task id within its run: the job id (an array's task too: its own id), so that the
    /// rules find a job's place in its run by its id.
    fn task_id(&self) -> String {
        self.job_id.to_string()
    }
}

/// One run of jobs: its row and its tasks.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmRun {
    pub run: WorkflowRow,
    pub tasks: Vec<WorkflowTaskRow>,
}

/// Seconds from one time to another; `None` when either is missing.
fn seconds(from: Option<DateTime<Utc>>, to: Option<DateTime<Utc>>) -> Option<f64> {
    let (from, to) = (from?, to?);
    Some((to - from).num_microseconds()? as f64 / 1e6)
}

/// Finds each job's group (union-find with path halving).
fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// The jobs' workflow runs: arrays and dependency chains of at least two jobs.
pub fn build(jobs: Vec<SlurmJob>) -> Vec<SlurmRun> {
    // A job id twice (the runs of a requeued job): the run that ended last, as the features and
    // the emails take it.
    let mut latest: BTreeMap<(String, u64), SlurmJob> = BTreeMap::new();
    for job in jobs {
        match latest.get(&(job.cluster.clone(), job.job_id)) {
            Some(seen) if seen.end >= job.end => {}
            _ => {
                latest.insert((job.cluster.clone(), job.job_id), job);
            }
        }
    }
    let jobs: Vec<SlurmJob> = latest.into_values().collect();

    // Where each job id and each array's tasks are.
    let mut by_id: HashMap<(&str, u64), usize> = HashMap::new();
    let mut by_array: HashMap<(&str, u64), Vec<usize>> = HashMap::new();
    for (i, job) in jobs.iter().enumerate() {
        by_id.insert((&job.cluster, job.job_id), i);
        if let Some(array) = job.array_job_id {
            by_array.entry((&job.cluster, array)).or_default().push(i);
        }
    }

    // Each job's parents: the jobs its dependency names that ended before it started.
    let mut parents: Vec<Vec<usize>> = vec![Vec::new(); jobs.len()];
    for (child, job) in jobs.iter().enumerate() {
        let Some(dependency) = job.dependency.as_deref() else {
            continue;
        };
        let started = job.start.unwrap_or(job.end);
        for item in dependency.split([',', '?']) {
            for named in item.split(':').skip(1) {
                let Some((id, task)) = jobsight_base::slurm_text::dependency_job(named) else {
                    continue;
                };
                let cluster = job.cluster.as_str();
                let named: Vec<usize> = match (task, by_array.get(&(cluster, id))) {
                    (Some(task), Some(tasks)) => tasks
                        .iter()
                        .copied()
                        .filter(|&t| jobs[t].array_task_id == Some(task))
                        .collect(),
                    (None, Some(tasks)) => tasks.clone(),
                    _ => by_id.get(&(cluster, id)).copied().into_iter().collect(),
                };
                // Only jobs that ended before this one started: an id reused later is another job.
                parents[child].extend(
                    named
                        .into_iter()
                        .filter(|&p| p != child && jobs[p].end <= started),
                );
            }
        }
        parents[child].sort_unstable();
        parents[child].dedup();
    }

    // Groups: an array's tasks, and every job with its parents.
    let mut group: Vec<usize> = (0..jobs.len()).collect();
    let join = |a: usize, b: usize, group: &mut Vec<usize>| {
        let (ra, rb) = (root(group, a), root(group, b));
        if ra != rb {
            group[ra.max(rb)] = ra.min(rb);
        }
    };
    for tasks in by_array.values() {
        for pair in tasks.windows(2) {
            join(pair[0], pair[1], &mut group);
        }
    }
    for (child, ps) in parents.iter().enumerate() {
        for &p in ps {
            join(p, child, &mut group);
        }
    }
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..jobs.len() {
        let r = root(&mut group, i);
        members.entry(r).or_default().push(i);
    }

    let mut runs = Vec::new();
    for (_, mut ids) in members {
        if ids.len() < 2 {
            continue;
        }
        ids.sort_by_key(|&i| (jobs[i].submit, jobs[i].job_id, jobs[i].array_task_id));
        let first = ids
            .iter()
            .copied()
            .min_by_key(|&i| (jobs[i].job_id, jobs[i].submit))
            .expect("a group has jobs");
        let run_id = format!("slurm-{}-{}", jobs[first].cluster, jobs[first].job_id);
        runs.push(run_of(&jobs, &ids, &parents, &run_id, first));
    }
    runs
}

/// One group's run and tasks.
fn run_of(
    jobs: &[SlurmJob],
    ids: &[usize],
    parents: &[Vec<usize>],
    run_id: &str,
    first: usize,
) -> SlurmRun {
    let task_ids: HashMap<usize, String> = ids.iter().map(|&i| (i, jobs[i].task_id())).collect();
    let mut adjacency: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for &i in ids {
        adjacency.entry(task_ids[&i].clone()).or_default();
        for p in &parents[i] {
            if let Some(parent) = task_ids.get(p) {
                adjacency
                    .entry(parent.clone())
                    .or_default()
                    .push(task_ids[&i].clone());
            }
        }
    }
    // Parents end before their children start, so there is no cycle; were there one (jobs of no
    // length), the run keeps its tasks without places.
    let places: HashMap<String, Place> = pegasus::places(&adjacency).unwrap_or_default();
    let mut tasks: Vec<WorkflowTaskRow> = ids
        .iter()
        .map(|&i| {
            let job = &jobs[i];
            let parents_end = parents[i]
                .iter()
                .filter(|p| task_ids.contains_key(p))
                .map(|&p| jobs[p].end)
                .max();
            let ready = match (job.submit, parents_end) {
                (Some(s), Some(p)) => Some(s.max(p)),
                (s, p) => s.or(p),
            };
            let runtime_s = seconds(job.start, Some(job.end));
            // The application, so that `sim-41` and `sim-42` share a history.
            let kind =
                jobsight_base::slurm_text::application_of(job.name.as_deref().unwrap_or_default());
            WorkflowTaskRow {
                workflow_id: run_id.to_string(),
                task_id: task_ids[&i].clone(),
                task_type: Some(
                    if job.array_job_id.is_some() {
                        "array task"
                    } else {
                        "job"
                    }
                    .into(),
                ),
                host: job.host.clone(),
                transformation: job.name.clone(),
                ready,
                submit: job.submit,
                execute_start: job.start,
                execute_end: Some(job.end),
                end: Some(job.end),
                queue_delay_s: seconds(ready, job.start).map(|s| s.max(0.0)),
                runtime_s,
                cpu_time_s: job.cpu_used_cores.zip(runtime_s).map(|(c, r)| c * r),
                exitcode: job.exit_code,
                kind: Some(kind.to_string()),
                // Labels, stage-in/out, kickstart counters: Slurm has none; the DAG's places
                // come with `apply_dag`.
                ..WorkflowTaskRow::default()
            }
        })
        .collect();
    let mut run = pegasus::run_row(run_id, None, &tasks, "slurm")
        .expect("every job has an end, so the run has one");
    run.workflow = jobs[first]
        .name
        .clone()
        .unwrap_or_else(|| run_id.to_string());
    pegasus::apply_dag(&mut tasks, &places, &mut run);
    SlurmRun { run, tasks }
}

/// Reads the jobs that ended from `first` to `last` (with `job_summary`'s cores used when the
/// table exists).
pub async fn read_jobs(
    data: &Path,
    first: NaiveDate,
    last: NaiveDate,
) -> Result<Vec<SlurmJob>, SlurmWorkflowError> {
    if !Table::Jobs.dir(data).is_dir() {
        return Ok(Vec::new());
    }
    let (summary_join, cores) = if Table::JobSummary.dir(data).is_dir() {
        (
            format!("LEFT JOIN job_summary s ON {}", catalog::same_run("s", "j")),
            "s.cpu_used_cores",
        )
    } else {
        (String::new(), "CAST(NULL AS DOUBLE)")
    };
    let sql = format!(
        "SELECT j.cluster, j.job_id, j.array_job_id, CAST(j.array_task_id AS BIGINT) AS array_task_id, \
         j.name, j.nodes, j.submit, j.start, j.\"end\", CAST(j.exit_code AS BIGINT) AS exit_code, \
         j.dependency, {cores} AS cpu_used_cores \
         FROM jobs j {summary_join} \
         WHERE j.day >= '{first}' AND j.day <= '{last}'"
    );
    let batches = query::run(data, &sql).await?;
    let mut jobs = Vec::new();
    for batch in &batches {
        let c = query::Columns::of(batch)?;
        for i in 0..batch.num_rows() {
            let (Some(cluster), Some(job_id), Some(end)) = (
                c.text("cluster", i),
                c.text("job_id", i).and_then(|id| id.parse().ok()),
                c.time("end", i),
            ) else {
                continue;
            };
            jobs.push(SlurmJob {
                cluster,
                job_id,
                array_job_id: c.text("array_job_id", i).and_then(|a| a.parse().ok()),
                array_task_id: c
                    .int("array_task_id", i)
                    .and_then(|t| u32::try_from(t).ok()),
                name: c.text("name", i),
                host: c
                    .text("nodes", i)
                    .and_then(|n| slurm_hooks::hostlist::expand(&n).ok())
                    .and_then(|n| n.into_iter().next()),
                submit: c.time("submit", i),
                start: c.time("start", i),
                end,
                exit_code: c.int("exit_code", i).and_then(|e| i32::try_from(e).ok()),
                dependency: c.text("dependency", i),
                cpu_used_cores: c.float("cpu_used_cores", i),
            });
        }
    }
    Ok(jobs)
}

/// What [`rebuild`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Rebuilt {
    /// The first day whose jobs were read, and how many.
    pub read_from: NaiveDate,
    pub jobs_read: usize,
    pub runs: usize,
    pub tasks: usize,
    /// Day partitions written, and day partitions whose earlier part was removed.
    pub days_written: usize,
    pub days_cleared: usize,
}

/// Rebuilds the Slurm workflow runs that ended from `first` to `last` (see the module's text).
pub fn rebuild(
    runtime: &tokio::runtime::Runtime,
    data: &Path,
    first: NaiveDate,
    last: NaiveDate,
) -> Result<Rebuilt, SlurmWorkflowError> {
    let span = (last - first).num_days().max(0) as u64 + 1;
    let read_from = first
        .checked_sub_days(chrono::Days::new(span))
        .unwrap_or(first);
    let jobs = runtime.block_on(read_jobs(data, read_from, last))?;
    let mut done = Rebuilt {
        read_from,
        jobs_read: jobs.len(),
        ..Rebuilt::default()
    };
    let mut by_day: BTreeMap<NaiveDate, Vec<SlurmRun>> = BTreeMap::new();
    for run in build(jobs) {
        let day = run.run.end.date_naive();
        if (first..=last).contains(&day) {
            by_day.entry(day).or_default().push(run);
        }
    }
    for day in first.iter_days().take_while(|d| *d <= last) {
        let Some(runs) = by_day.get(&day) else {
            let mut cleared = false;
            for table in [Table::Workflows, Table::WorkflowTasks] {
                cleared |= catalog::remove_part(data, table, day, PART)?;
            }
            done.days_cleared += usize::from(cleared);
            continue;
        };
        let batch_error = |e: datafusion::arrow::error::ArrowError| SlurmWorkflowError::Batch {
            run: format!("{PART} of {day}"),
            reason: e.to_string(),
        };
        let rows: Vec<WorkflowRow> = runs.iter().map(|r| r.run.clone()).collect();
        let tasks: Vec<WorkflowTaskRow> = runs.iter().flat_map(|r| r.tasks.clone()).collect();
        catalog::write_part(
            data,
            Table::WorkflowTasks,
            day,
            PART,
            &[WorkflowTaskRow::batch(&tasks).map_err(batch_error)?],
        )?;
        catalog::write_part(
            data,
            Table::Workflows,
            day,
            PART,
            &[WorkflowRow::batch(&rows).map_err(batch_error)?],
        )?;
        done.days_written += 1;
        done.runs += rows.len();
        done.tasks += tasks.len();
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minute: i64) -> Option<DateTime<Utc>> {
        DateTime::from_timestamp(1_800_000_000 + minute * 60, 0)
    }

    fn job(id: u64, name: &str, submit: i64, start: i64, end: i64) -> SlurmJob {
        SlurmJob {
            cluster: "c".into(),
            job_id: id,
            name: Some(name.into()),
            host: Some(format!("n{}", id % 3)),
            submit: at(submit),
            start: at(start),
            end: at(end).unwrap(),
            ..SlurmJob::default()
        }
    }

    /// A chain prep -> array of three -> merge, plus a lone job and a job that names a parent
    /// that ended after it started (an id reused): one run of five tasks, with its DAG.
    #[test]
    fn arrays_and_chains_become_runs() {
        let mut jobs = vec![job(10, "prep", 0, 1, 5)];
        for (task, id) in [(0u32, 11u64), (1, 12), (2, 13)] {
            let mut t = job(id, "sim", 0, 6 + task as i64, 20 + 5 * task as i64);
            (t.array_job_id, t.array_task_id) = (Some(11), Some(task));
            t.dependency = Some("afterok:10".into());
            jobs.push(t);
        }
        let mut merge = job(14, "merge", 0, 40, 45);
        merge.dependency = Some("afterok:11".into());
        jobs.push(merge);
        jobs.push(job(15, "alone", 0, 1, 2));
        let mut late = job(16, "late", 0, 2, 3);
        late.dependency = Some("afterany:14".into()); // 14 ended after 16 started: not a parent
        jobs.push(late);

        let runs = build(jobs);
        assert_eq!(runs.len(), 1, "{runs:?}");
        let SlurmRun { run, tasks } = &runs[0];
        assert_eq!(
            (run.workflow_id.as_str(), run.workflow.as_str()),
            ("slurm-c-10", "prep")
        );
        assert_eq!(run.tasks, 5);
        assert_eq!(run.start, at(0));
        assert_eq!(run.end, at(45).unwrap());
        // Waits from ready to start: 1, 1, 2, 3 and 10 minutes.
        assert_eq!(run.ready_to_start_median_s, Some(120.0));
        assert_eq!(run.ready_to_start_p95_s, Some(180.0 + 0.8 * 420.0));
        let task = |id: &str| tasks.iter().find(|t| t.task_id == id).unwrap();
        assert_eq!(task("13").parent_ids.as_deref(), Some(r#"["10"]"#));
        assert_eq!(task("14").parents, Some(3));
        assert_eq!(task("14").depth, Some(2));
        // Ready when the last parent ended; the queue delay from there to the start.
        assert_eq!(task("14").ready, at(30));
        assert_eq!(task("14").queue_delay_s, Some(600.0));
        assert_eq!(task("11").ready, at(5));
        assert_eq!(task("11").kind.as_deref(), Some("sim"));
        assert_eq!(task("11").task_type.as_deref(), Some("array task"));
        // The critical path: merge, the array task that ended last, prep.
        let critical: Vec<&str> = tasks
            .iter()
            .filter(|t| t.on_critical_path == Some(true))
            .map(|t| t.task_id.as_str())
            .collect();
        assert_eq!(critical, ["10", "13", "14"]);
        assert_eq!(run.critical_path_tasks, Some(3));
    }

    /// An array alone is a run; a dependency on one task of an array links only that task; a
    /// requeued job's two runs are one task.
    #[test]
    fn array_tasks_and_requeues() {
        let mut jobs = Vec::new();
        for (task, id) in [(0u32, 20u64), (1, 21)] {
            let mut t = job(id, "a", 0, 1, 10 + task as i64);
            (t.array_job_id, t.array_task_id) = (Some(20), Some(task));
            jobs.push(t);
        }
        let mut after_one = job(22, "b", 0, 12, 13);
        after_one.dependency = Some("afterok:20_1".into());
        jobs.push(after_one.clone());
        let mut requeued = after_one;
        requeued.end = at(14).unwrap(); // the same run, seen again after its requeue
        jobs.push(requeued);
        let runs = build(jobs);
        assert_eq!(runs.len(), 1);
        let tasks = &runs[0].tasks;
        assert_eq!(tasks.len(), 3);
        let b = tasks.iter().find(|t| t.task_id == "22").unwrap();
        assert_eq!(b.parent_ids.as_deref(), Some(r#"["21"]"#));
        assert_eq!(b.end, at(14));
    }
}
