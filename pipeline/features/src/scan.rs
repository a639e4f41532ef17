//! The single pass over a day's telemetry: every Parquet row group is read once, in parallel
//! (rayon), its samples are grouped by job, node and metric in memory, and each job is handed to
//! `finalize` as soon as all of its samples have been seen, so memory holds the row groups being
//! read plus the jobs that straddle them, not the day.
//!
//! A job is complete when every row group that holds it has been read: a cheap first pass reads
//! only the `job_id` column (dictionary-encoded, so a few kilobytes per row group) and counts the
//! row groups of each job. Jobs that live in one row group (most of them) are finished by the
//! thread that read it; the others wait in a shared table until their last row group is read.
//! Jobs of the day with no telemetry at all are finished at the end with no series, so that their
//! missing data is reported rather than forgotten.
//!
//! Trimming happens while reading: samples outside a job's kept window are never stored.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use chrono::NaiveDate;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringArray};
use datafusion::arrow::datatypes::{
    DataType, Float64Type, TimestampMicrosecondType, UInt32Type, UInt64Type,
};
use datafusion::parquet::arrow::ProjectionMask;
use rayon::prelude::*;

use super::FeaturesError;
use jobsight_base::series::Sample;
use jobsight_warehouse::catalog::scan::{
    BATCH_ROWS, Names, SeriesSlots, TelemetryColumns, Unit, cast_column, dictionary, micros_type,
    optional_column, reader, translate,
};
use jobsight_warehouse::catalog::{self, Table};

/// What the features need to know about a job from `jobs`.
#[derive(Debug, Clone, Default)]
pub struct JobMeta {
    pub job_id: String,
    /// The run (Slurm's restart count). Each run of a requeued job is a `JobMeta` of its own; rows
    /// of one id and one run (as the simulator writes a requeued job) are taken together, as the
    /// one that ended last.
    pub restart_count: Option<u32>,
    pub start_us: i64,
    pub end_us: i64,
    /// Whether start-up and tear-down were cut off (the job is longer than twice the trim).
    pub trimmed: bool,
    /// Samples at times in `[keep_from_us, keep_to_us]` are used.
    pub keep_from_us: i64,
    pub keep_to_us: i64,
    pub cpus: Option<u32>,
    pub num_nodes: Option<u32>,
    /// Slurm hostlist of the allocated nodes.
    pub nodes: Option<String>,
    pub req_mem_mb: Option<u64>,
    pub time_limit_s: Option<u64>,
    pub gpus: Option<u32>,
    /// Start of the row whose figures these are (the row that ended last, where rows of one run
    /// were taken together): the run the accounting figures and `neighbours` describe, whose own
    /// elapsed time seff divides by.
    pub run_start_us: i64,
    /// Slurm accounting's CPU time of the run, user + system over its steps, in seconds.
    pub acct_cpu_total_s: Option<f64>,
    /// Slurm accounting's memory peak of the run (its largest step's), MiB.
    pub acct_mem_peak_mb: Option<f64>,
    /// Slurm accounting's consumed energy of the run, joules (0 where a site collects none).
    pub acct_energy_j: Option<f64>,
    /// The steps the accounting figures cover; `Some(0)`: accounting has no usage data.
    pub acct_steps: Option<u32>,
    /// Other jobs that ran on at least one of the job's nodes during its run; `None`: unknown.
    pub neighbours: Option<u32>,
    /// The run ended `NODE_FAIL`: Slurm lost the failed node's step statistics with it, so its
    /// accounting counts only the nodes that reported.
    pub lost_a_node: bool,
}

/// The Parquet files of a table's day partition, in name order (hidden temporary files skipped).
pub fn parts(data: &Path, table: Table, day: NaiveDate) -> Result<Vec<PathBuf>, FeaturesError> {
    parts_in(data, table, day, None)
}

/// [`catalog::part_files`], with the error naming the partition.
pub fn parts_in(
    data: &Path,
    table: Table,
    day: NaiveDate,
    part: Option<&str>,
) -> Result<Vec<PathBuf>, FeaturesError> {
    catalog::part_files(data, table, day, part)
        .map_err(|e| FeaturesError::read(&catalog::partition_dir(data, table, day), e))
}

/// The day's runs with a start time, one per job id and run (`restart_count`), a job id's runs
/// next to each other in the order they started. Rows of one id and one run (as the simulator
/// writes a requeued job) cover the earliest start to the latest end, with the request figures of
/// the row that ended last.
pub fn read_jobs(data: &Path, day: NaiveDate, trim_s: u64) -> Result<Vec<JobMeta>, FeaturesError> {
    read_jobs_in(data, day, trim_s, None)
}

/// [`read_jobs`] of one part only (one job's, as the per-job path wrote it), or of the whole
/// day.
pub fn read_jobs_in(
    data: &Path,
    day: NaiveDate,
    trim_s: u64,
    part: Option<&str>,
) -> Result<Vec<JobMeta>, FeaturesError> {
    let mut by_run: HashMap<(String, Option<u32>), JobMeta> = HashMap::new();
    for path in parts_in(data, Table::Jobs, day, part)? {
        let batches = reader(&path)?
            .build()
            .map_err(|e| FeaturesError::read(&path, e))?;
        for batch in batches {
            let batch = batch.map_err(|e| FeaturesError::read(&path, e))?;
            let ids = cast_column(&batch, "job_id", &DataType::Utf8, &path)?;
            let ids = ids.as_string::<i32>();
            let start = cast_column(&batch, "start", &micros_type(), &path)?;
            let start = start.as_primitive::<TimestampMicrosecondType>();
            let end = cast_column(&batch, "end", &micros_type(), &path)?;
            let end = end.as_primitive::<TimestampMicrosecondType>();
            let u32s = |name| cast_column(&batch, name, &DataType::UInt32, &path);
            let u64s = |name| cast_column(&batch, name, &DataType::UInt64, &path);
            let (cpus, num_nodes, gpus) = (u32s("cpus")?, u32s("num_nodes")?, u32s("gpus")?);
            let (mem, limit) = (u64s("req_mem_mb")?, u64s("time_limit_s")?);
            let nodes = cast_column(&batch, "nodes", &DataType::Utf8, &path)?;
            let nodes: &StringArray = nodes.as_string::<i32>();
            let states = optional_column(&batch, "state", &DataType::Utf8, &path)?;
            let states = states.as_ref().map(|a| a.as_string::<i32>());
            let floats = |name| optional_column(&batch, name, &DataType::Float64, &path);
            let (acct_cpu, acct_mem) = (floats("acct_cpu_total_s")?, floats("acct_mem_peak_mb")?);
            let acct_energy = floats("acct_energy_j")?;
            let counts = |name| optional_column(&batch, name, &DataType::UInt32, &path);
            let (acct_steps, neighbours) = (counts("acct_steps")?, counts("neighbours")?);
            let restart_count = counts("restart_count")?;
            let get32 = |a: &ArrayRef, i| {
                let a = a.as_primitive::<UInt32Type>();
                a.is_valid(i).then(|| a.value(i))
            };
            let get64 = |a: &ArrayRef, i| {
                let a = a.as_primitive::<UInt64Type>();
                a.is_valid(i).then(|| a.value(i))
            };
            let maybe32 = |a: &Option<ArrayRef>, i| a.as_ref().and_then(|a| get32(a, i));
            let maybe_f64 = |a: &Option<ArrayRef>, i| {
                a.as_ref().and_then(|a| {
                    let a = a.as_primitive::<Float64Type>();
                    a.is_valid(i).then(|| a.value(i))
                })
            };
            for i in 0..batch.num_rows() {
                if !ids.is_valid(i) || !start.is_valid(i) || !end.is_valid(i) {
                    continue;
                }
                let run = JobMeta {
                    job_id: ids.value(i).to_string(),
                    restart_count: maybe32(&restart_count, i),
                    start_us: start.value(i),
                    end_us: end.value(i),
                    cpus: get32(&cpus, i),
                    num_nodes: get32(&num_nodes, i),
                    nodes: nodes.is_valid(i).then(|| nodes.value(i).to_string()),
                    req_mem_mb: get64(&mem, i),
                    time_limit_s: get64(&limit, i),
                    gpus: get32(&gpus, i),
                    run_start_us: start.value(i),
                    acct_cpu_total_s: maybe_f64(&acct_cpu, i),
                    acct_mem_peak_mb: maybe_f64(&acct_mem, i),
                    acct_energy_j: maybe_f64(&acct_energy, i),
                    acct_steps: maybe32(&acct_steps, i),
                    neighbours: maybe32(&neighbours, i),
                    lost_a_node: states.is_some_and(|s| s.is_valid(i) && s.value(i) == "NODE_FAIL"),
                    ..JobMeta::default()
                };
                by_run
                    .entry((run.job_id.clone(), run.restart_count))
                    .and_modify(|known| {
                        let start_us = known.start_us.min(run.start_us);
                        if run.end_us >= known.end_us {
                            *known = JobMeta {
                                start_us,
                                ..run.clone()
                            };
                        } else {
                            known.start_us = start_us;
                        }
                    })
                    .or_insert(run);
            }
        }
    }
    let trim_us = trim_s as i64 * 1_000_000;
    let mut jobs: Vec<JobMeta> = by_run.into_values().collect();
    for job in &mut jobs {
        job.trimmed = job.end_us - job.start_us > 2 * trim_us;
        (job.keep_from_us, job.keep_to_us) = if job.trimmed {
            (job.start_us + trim_us, job.end_us - trim_us)
        } else {
            (i64::MIN, i64::MAX)
        };
    }
    // A job id's runs next to each other, in the order they ran (runs that started together in
    // the order of their runs, as the features SQL orders them): `run_of` relies on it.
    jobs.sort_by(|a, b| {
        (&a.job_id, a.start_us, a.restart_count).cmp(&(&b.job_id, b.start_us, b.restart_count))
    });
    Ok(jobs)
}

/// Where each job id's runs are in `jobs` (sorted by [`read_jobs_in`]): for every index, the
/// index one past the last run of its id. The samples of an id are handed to its runs by time.
fn run_ends(jobs: &[JobMeta]) -> Vec<u32> {
    let mut ends = vec![0u32; jobs.len()];
    let mut first = 0;
    for i in 1..=jobs.len() {
        if i == jobs.len() || jobs[i].job_id != jobs[first].job_id {
            ends[first..i].fill(i as u32);
            first = i;
        }
    }
    ends
}

/// The run of the id whose runs are `jobs[first..end]` that a sample at `t` belongs to: the
/// last run that started at or before `t` (the first run for a sample before every start). The
/// runs of a requeued job follow one another, so each run's samples lie between its start and
/// the next run's; the features plan hands samples out by the same rule.
fn run_of(jobs: &[JobMeta], first: u32, end: u32, t: i64) -> u32 {
    let mut run = first;
    for i in first + 1..end {
        if jobs[i as usize].start_us <= t {
            run = i;
        } else {
            break;
        }
    }
    run
}

/// The samples of one job, per (node id, metric id), in the order read.
pub type JobSamples = HashMap<(u32, u32), Vec<Sample>>;

/// One series of a job handed to `finalize`: node, metric and samples.
pub type NamedSeries = (Arc<str>, Arc<str>, Vec<Sample>);

/// The row groups of every telemetry file and, per job id (index of its first run in `jobs`), how
/// many of them hold it. Reads only the `job_id` column.
pub fn plan(
    files: &[PathBuf],
    job_index: &HashMap<&str, u32>,
    jobs: usize,
) -> Result<(Vec<Unit>, Vec<u32>), FeaturesError> {
    let mut units = Vec::new();
    let mut holders = vec![0u32; jobs];
    for path in files {
        let builder = reader(path)?;
        let groups = builder.metadata().num_row_groups();
        let mask = ProjectionMask::columns(builder.parquet_schema(), ["job_id"]);
        for row_group in 0..groups {
            let batches = reader(path)?
                .with_projection(mask.clone())
                .with_row_groups(vec![row_group])
                .with_batch_size(BATCH_ROWS)
                .build()
                .map_err(|e| FeaturesError::read(path, e))?;
            let mut seen = vec![false; jobs];
            for batch in batches {
                let batch = batch.map_err(|e| FeaturesError::read(path, e))?;
                let dict = dictionary(&batch, "job_id", path)?;
                let jobs = translate(&dict, |id| job_index.get(id).copied().unwrap_or(u32::MAX));
                let mut present = vec![false; jobs.len()];
                for &key in dict.keys().values() {
                    present[key as usize] = true;
                }
                for (key, &job) in jobs.iter().enumerate() {
                    if present[key] && job != u32::MAX {
                        seen[job as usize] = true;
                    }
                }
            }
            for (job, seen) in seen.into_iter().enumerate() {
                holders[job] += u32::from(seen);
            }
            units.push(Unit {
                path: path.clone(),
                row_group,
            });
        }
    }
    Ok((units, holders))
}

/// What one row group held, grouped by job.
struct UnitSamples {
    jobs: HashMap<u32, JobSamples>,
    /// Samples of jobs not in the day's `jobs`.
    unattributed: u64,
    /// Samples cut off by trimming.
    trimmed_away: u64,
}

fn scan_unit(
    unit: &Unit,
    jobs: &[JobMeta],
    ends: &[u32],
    job_index: &HashMap<&str, u32>,
    names: &Mutex<Names>,
) -> Result<UnitSamples, FeaturesError> {
    let path = &unit.path;
    let batches = reader(path)?
        .with_row_groups(vec![unit.row_group])
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| FeaturesError::read(path, e))?;
    let mut grouping: SeriesSlots<Vec<Sample>> = SeriesSlots::default();
    let mut seen = vec![false; jobs.len()];
    let (mut unattributed, mut trimmed_away) = (0, 0);
    for batch in batches {
        let batch = batch.map_err(|e| FeaturesError::read(path, e))?;
        let columns = TelemetryColumns::of(&batch, path)?;
        let (job_dict, node_dict, metric_dict) = (&columns.job, &columns.node, &columns.metric);
        let (ts, values) = (columns.ts(), columns.values());
        let job_of = translate(job_dict, |id| {
            job_index.get(id).copied().unwrap_or(u32::MAX)
        });
        let (node_of, metric_of) = {
            let mut names = names.lock().unwrap_or_else(|e| e.into_inner());
            (
                translate(node_dict, |n| names.id(n)),
                translate(metric_dict, |m| names.id(m)),
            )
        };
        let (job_keys, node_keys, metric_keys) = (
            job_dict.keys().values(),
            node_dict.keys().values(),
            metric_dict.keys().values(),
        );
        for row in 0..batch.num_rows() {
            let first = job_of[job_keys[row] as usize];
            if first == u32::MAX {
                unattributed += 1;
                continue;
            }
            let (t, end) = (ts[row], ends[first as usize]);
            // Every run of the id is seen: each row group holding the id finishes a share of each.
            seen[first as usize..end as usize].fill(true);
            let job = run_of(jobs, first, end, t);
            let meta = &jobs[job as usize];
            if t < meta.keep_from_us || t > meta.keep_to_us {
                trimmed_away += 1;
                continue;
            }
            grouping
                .slot(
                    job,
                    node_of[node_keys[row] as usize],
                    metric_of[metric_keys[row] as usize],
                )
                .push((t, values[row]));
        }
    }
    let mut by_job: HashMap<u32, JobSamples> = seen
        .iter()
        .enumerate()
        .filter(|(_, seen)| **seen)
        .map(|(job, _)| (job as u32, JobSamples::new()))
        .collect();
    for ((job, node, metric), samples) in grouping.into_series() {
        by_job
            .entry(job)
            .or_default()
            .insert((node, metric), samples);
    }
    Ok(UnitSamples {
        jobs: by_job,
        unattributed,
        trimmed_away,
    })
}

/// What the scan saw besides the jobs it finished.
#[derive(Debug, Default, Clone, Copy)]
pub struct ScanCounts {
    pub row_groups: usize,
    pub unattributed: u64,
    pub trimmed_away: u64,
}

/// Runs the pass: every run of `jobs` (as [`read_jobs_in`] gives them) is handed to `finalize`
/// exactly once, with its samples per (node, metric) name, as soon as all of them have been read.
/// `progress(done, total)` is called after each row group.
pub fn run<R: Send>(
    files: &[PathBuf],
    jobs: &[JobMeta],
    finalize: impl Fn(&JobMeta, Vec<NamedSeries>) -> R + Sync,
    progress: impl Fn(usize, usize) + Sync,
) -> Result<(Vec<R>, ScanCounts), FeaturesError> {
    let ends = run_ends(jobs);
    // Each id to its first run (the index `plan` counts under).
    let job_index: HashMap<&str, u32> = jobs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, j)| (j.job_id.as_str(), i as u32))
        .collect();
    let (units, mut holders) = plan(files, &job_index, jobs.len())?;
    // A run waits for every row group that holds its id.
    for (i, job) in jobs.iter().enumerate() {
        let first = job_index[job.job_id.as_str()] as usize;
        holders[i] = holders[first];
    }
    let names = Mutex::new(Names::default());
    let waiting: Mutex<HashMap<u32, (u32, JobSamples)>> = Mutex::new(HashMap::new());
    let results = Mutex::new(Vec::with_capacity(jobs.len()));
    let done = AtomicUsize::new(0);
    let counts = Mutex::new(ScanCounts {
        row_groups: units.len(),
        ..ScanCounts::default()
    });
    let finish = |job: u32, samples: JobSamples| {
        let named: Vec<NamedSeries> = {
            let names = names.lock().unwrap_or_else(|e| e.into_inner());
            samples
                .into_iter()
                .map(|((n, m), s)| {
                    (
                        names.names[n as usize].clone(),
                        names.names[m as usize].clone(),
                        s,
                    )
                })
                .collect()
        };
        let result = finalize(&jobs[job as usize], named);
        results
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(result);
    };
    units.par_iter().try_for_each(|unit| {
        let read = scan_unit(unit, jobs, &ends, &job_index, &names)?;
        {
            let mut counts = counts.lock().unwrap_or_else(|e| e.into_inner());
            counts.unattributed += read.unattributed;
            counts.trimmed_away += read.trimmed_away;
        }
        for (job, samples) in read.jobs {
            if holders[job as usize] <= 1 {
                finish(job, samples);
                continue;
            }
            // A job spread over several row groups: gather, and finish with the last one.
            let complete = {
                let mut waiting = waiting.lock().unwrap_or_else(|e| e.into_inner());
                let entry = waiting
                    .entry(job)
                    .or_insert_with(|| (holders[job as usize], JobSamples::new()));
                for (key, mut part) in samples {
                    entry.1.entry(key).or_default().append(&mut part);
                }
                entry.0 -= 1;
                if entry.0 == 0 {
                    waiting.remove(&job)
                } else {
                    None
                }
            };
            if let Some((_, samples)) = complete {
                finish(job, samples);
            }
        }
        progress(done.fetch_add(1, Ordering::Relaxed) + 1, units.len());
        Ok::<(), FeaturesError>(())
    })?;
    // Jobs with no telemetry at all (and, defensively, any still waiting) are finished too.
    let leftovers = waiting.into_inner().unwrap_or_else(|e| e.into_inner());
    for (job, (_, samples)) in leftovers {
        finish(job, samples);
    }
    for (job, &count) in holders.iter().enumerate() {
        if count == 0 {
            finish(job as u32, JobSamples::new());
        }
    }
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    let counts = *counts.lock().unwrap_or_else(|e| e.into_inner());
    Ok((results, counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, start_us: i64) -> JobMeta {
        JobMeta {
            job_id: id.into(),
            start_us,
            ..JobMeta::default()
        }
    }

    /// A sample goes to the last run of its id that started at or before it: the first run
    /// takes what came before every start and what fell between it and the next run.
    #[test]
    fn samples_go_to_the_run_under_way_at_their_time() {
        let jobs = [
            run("a", 0),
            run("b", 100),
            run("b", 500),
            run("b", 900),
            run("c", 0),
        ];
        assert_eq!(run_ends(&jobs), [1, 4, 4, 4, 5]);
        let of = |t| run_of(&jobs, 1, 4, t);
        assert_eq!(
            [
                of(50),
                of(100),
                of(499),
                of(500),
                of(899),
                of(900),
                of(5000)
            ],
            [1, 1, 1, 2, 2, 3, 3]
        );
        assert_eq!(run_of(&jobs, 0, 1, 10_000), 0);
    }
}
