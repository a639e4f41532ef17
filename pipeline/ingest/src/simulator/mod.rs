//! The simulator as a telemetry source: a simulated day's jobs ([`jobsight_sim`]) turned into
//! `jobs`, `telemetry` and `labels` rows through the same builders, sink and atomic part writes as
//! the real sources.
//!
//! Each job gets one series per node and metric at a fixed step (default 10 s) over its run time:
//! healthy jobs use their allocation steadily, anomalies and inefficiencies show as the HPAS
//! generators and the rules describe them (the child module `telemetry` says how each looks).
//! Every job's truth goes to `labels` (`none` for healthy jobs), with the window and node of an
//! anomaly.
//!
//! Each job's `jobs` row also carries what Slurm's accounting would say it used (seff's CPU time
//! and memory peak, one `batch` step, no energy plugin), computed from the same levels as its
//! telemetry without the noise, and its `neighbours`: the other jobs on its nodes while it ran,
//! exactly, from the placement ([`jobsight_sim::neighbours`]). The simulated telemetry is the
//! job's own share of its nodes, so the two agree, shared node or not.
//!
//! `jobsight simulate` writes a whole day; `jobsight demo` writes the jobs it claimed from the spool.
//! The tests of this module and of `telemetry`, which read the series as the warehouse holds
//! them, are here.

mod telemetry;

use std::path::Path;

use chrono::{DateTime, NaiveDate, Utc};

use super::{JobRow, LabelRow, TelemetrySink};
use jobsight_sim::{Behaviour, ClusterSpec, Outcome, SimJob};
use jobsight_warehouse::catalog::{self, CatalogError};
use telemetry::usage;
pub use telemetry::{job_telemetry, metric_names};

/// Start of the simulated day, as microseconds since the epoch.
fn day_start_micros(day: NaiveDate) -> i64 {
    day.and_hms_opt(0, 0, 0)
        .map_or(0, |t| t.and_utc().timestamp_micros())
}

fn at(day: NaiveDate, seconds: u64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(day_start_micros(day) + seconds as i64 * 1_000_000)
        .unwrap_or_default()
}

fn state(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Completed => "COMPLETED",
        Outcome::Failed { .. } => "FAILED",
        Outcome::Cancelled => "CANCELLED",
        Outcome::OutOfMemory => "OUT_OF_MEMORY",
        Outcome::Timeout => "TIMEOUT",
    }
}

/// The UTC day a simulated job ends on: its `jobs` row's partition.
fn end_day(job: &SimJob, day: NaiveDate) -> NaiveDate {
    at(day, job.end_s).date_naive()
}

/// The `jobs` row of a simulated job (what sacct would say about it), with `neighbours` other
/// jobs on its nodes while it ran ([`jobsight_sim::neighbours`]).
pub fn job_row(
    job: &SimJob,
    spec: &ClusterSpec,
    neighbours: Option<u32>,
    day: NaiveDate,
) -> JobRow {
    let (raw, _) = job.outcome.exit_env();
    let used = usage(job, spec);
    JobRow {
        cluster: spec.name.clone(),
        job_id: job.job_id.to_string(),
        array_job_id: job.array.map(|(a, _)| a.to_string()),
        array_task_id: job.array.map(|(_, t)| t as u32),
        het_job_id: None,
        het_job_offset: None,
        restart_count: job.restart_count,
        user: Some(job.user.clone()),
        account: Some(job.account.clone()),
        partition: Some(job.partition.clone()),
        qos: Some("normal".into()),
        num_nodes: Some(job.nodes.len() as u32),
        nodes: Some(slurm_hooks::hostlist::compress(&job.nodes)),
        cpus: Some(job.cpus_per_node * job.nodes.len() as u32),
        gpus: Some(job.gpus),
        req_mem_mb: Some(job.req_mem_mb),
        time_limit_s: Some(job.time_limit_s),
        submit: Some(at(day, job.submit_s)),
        start: Some(at(day, job.start_s)),
        end: at(day, job.end_s),
        state: Some(state(job.outcome).into()),
        exit_code: Some(((raw >> 8) & 0xff) as i32),
        exit_signal: Some((raw & 0x7f) as i32),
        name: Some(String::from_utf8_lossy(&job.name).into_owned()),
        source: "simulator".into(),
        dependency: job.dependency.map(|p| format!("afterok:{p}")),
        acct_cpu_user_s: Some(used.cpu_user_s),
        acct_cpu_system_s: Some(used.cpu_system_s),
        acct_cpu_total_s: Some(used.cpu_user_s + used.cpu_system_s),
        acct_mem_peak_mb: Some(used.mem_peak_mb),
        acct_max_rss_mb: Some(used.max_rss_mb),
        // No energy plugin on the simulated cluster, and no GPU figures in its accounting (its
        // GPU jobs have DCGM's series).
        acct_energy_j: None,
        acct_gpu_util_max_pct: None,
        acct_gpu_mem_max_mb: None,
        acct_steps: Some(1),
        neighbours,
        note: None,
    }
}

/// The ground truth of a simulated job.
pub fn label_row(job: &SimJob, day: NaiveDate) -> LabelRow {
    let (anomaly, start, end, params) = match job.behaviour {
        Behaviour::Healthy => ("none".to_string(), job.start_s, job.end_s, None),
        Behaviour::Anomaly {
            kind,
            node,
            from_s,
            to_s,
        } => (
            kind.name().to_string(),
            job.start_s + from_s,
            job.start_s + to_s,
            Some(format!("node={}", job.nodes[node])),
        ),
        Behaviour::Inefficiency(kind) => (kind.name().to_string(), job.start_s, job.end_s, None),
    };
    LabelRow {
        job_id: job.job_id.to_string(),
        anomaly,
        start: Some(at(day, start)),
        end: Some(at(day, end)),
        params,
        source: "simulator".into(),
        labelled_by: None,
        labelled_at: None,
    }
}

/// What writing simulated jobs did.
#[derive(Debug, Default)]
pub struct Written {
    pub jobs: usize,
    pub telemetry_rows: u64,
    pub files: usize,
}

/// Writes `jobs` (jobs, telemetry, labels) into the warehouse at `data`. `part` names this batch
/// of jobs: writing the same jobs with the same name again replaces them.
#[allow(clippy::too_many_arguments)]
pub fn write_jobs(
    data: &Path,
    jobs: &[&SimJob],
    spec: &ClusterSpec,
    day: NaiveDate,
    step_s: u64,
    metrics: usize,
    seed: u64,
    part: &str,
    mut progress: impl FnMut(usize, usize),
) -> Result<Written, CatalogError> {
    let names = metric_names(metrics);
    let mut sink = TelemetrySink::new(data, part, 4 * catalog::ROW_GROUP_ROWS);
    let mut job_rows: std::collections::BTreeMap<NaiveDate, Vec<JobRow>> = Default::default();
    let mut label_rows: std::collections::BTreeMap<NaiveDate, Vec<LabelRow>> = Default::default();
    let neighbours = jobsight_sim::neighbours(jobs);
    for (i, (job, neighbours)) in jobs.iter().zip(neighbours).enumerate() {
        let row = job_row(job, spec, Some(neighbours), day);
        let job_day = row.day();
        let id = row.job_id.clone();
        job_telemetry(
            job,
            spec,
            day,
            step_s,
            &names,
            seed,
            |node, metric, ts, value| sink.push(job_day, &id, node, metric, ts, value),
        )?;
        job_rows.entry(job_day).or_default().push(row);
        label_rows
            .entry(job_day)
            .or_default()
            .push(label_row(job, day));
        progress(i + 1, jobs.len());
    }
    let (files, telemetry_rows) = sink.finish()?;
    let mut written = Written {
        jobs: jobs.len(),
        telemetry_rows,
        files: files.len(),
    };
    for (d, rows) in &job_rows {
        JobRow::write_part(data, *d, part, rows)?;
        written.files += 1;
    }
    for (d, rows) in &label_rows {
        LabelRow::write_part(data, *d, part, rows)?;
        written.files += 1;
    }
    Ok(written)
}

/// A simulated cluster's day as the per-job ingest step's sources: its accounting (what sacct
/// would say) and its node telemetry (what the node exporters would have), so that `jobsight demo`
/// runs the real per-job DAG with no Slurm and no Prometheus.
#[derive(Debug)]
pub struct SimulatedCluster {
    jobs: std::collections::HashMap<(u64, u32), SimJob>,
    /// Each run's neighbours, by job id, restart count and start (a requeued job's runs share
    /// the first two).
    neighbours: std::collections::HashMap<(u64, u32, u64), u32>,
    spec: ClusterSpec,
    day: NaiveDate,
    step_s: u64,
    metrics: Vec<String>,
    seed: u64,
}

impl SimulatedCluster {
    pub fn new(
        jobs: &[SimJob],
        spec: &ClusterSpec,
        day: NaiveDate,
        step_s: u64,
        metrics: usize,
        seed: u64,
    ) -> SimulatedCluster {
        let mut by_run = std::collections::HashMap::new();
        for job in jobs {
            by_run
                .entry((job.job_id, job.restart_count))
                .or_insert_with(|| job.clone());
        }
        let runs: Vec<&SimJob> = jobs.iter().collect();
        let neighbours = runs
            .iter()
            .map(|job| (job.job_id, job.restart_count, job.start_s))
            .zip(jobsight_sim::neighbours(&runs))
            .collect();
        SimulatedCluster {
            jobs: by_run,
            neighbours,
            spec: spec.clone(),
            day,
            step_s,
            metrics: metric_names(metrics),
            seed,
        }
    }

    /// The simulated run of job `job_id` that ran over `[start, end]`.
    /// The run of `job_id` under way at `start`: the run that starts then (a finished job's
    /// fetch), or the one a running job's window begins in (the running DAG's).
    fn run_at(&self, job_id: &str, start: DateTime<Utc>) -> Option<&SimJob> {
        let id: u64 = job_id.parse().ok()?;
        self.jobs.values().find(|j| {
            j.job_id == id
                && at(self.day, j.start_s) <= start
                && start < at(self.day, j.end_s.max(j.start_s + 1))
        })
    }
}

impl super::sources::AccountingSource for SimulatedCluster {
    fn name(&self) -> &'static str {
        "simulator"
    }
    fn job_row(&self, record: &slurm_hooks::SpoolRecord) -> Result<JobRow, String> {
        self.jobs
            .get(&(record.job_id, record.restart_count.unwrap_or(0)))
            .map(|job| {
                let neighbours = self
                    .neighbours
                    .get(&(job.job_id, job.restart_count, job.start_s))
                    .copied();
                job_row(job, &self.spec, neighbours, self.day)
            })
            .ok_or_else(|| format!("job {} is not in the simulated day", record.job_id))
    }
}

impl super::sources::TelemetrySource for SimulatedCluster {
    fn name(&self) -> &'static str {
        "simulator"
    }
    fn ready_at(&self, end: DateTime<Utc>) -> DateTime<Utc> {
        end
    }
    fn fetch(
        &self,
        job_id: &str,
        _cluster: &str,
        _nodes: &[String],
        start: DateTime<Utc>,
        _end: DateTime<Utc>,
        emit: &mut dyn FnMut(&str, &str, i64, f64),
    ) -> Result<u64, String> {
        let job = self
            .run_at(job_id, start)
            .ok_or_else(|| format!("job {job_id} is not in the simulated day"))?;
        let mut rows = 0;
        job_telemetry(
            job,
            &self.spec,
            self.day,
            self.step_s,
            &self.metrics,
            self.seed,
            |node, metric, ts, value| {
                rows += 1;
                emit(node, metric, ts, value);
                Ok(())
            },
        )
        .map_err(|e| e.to_string())?;
        Ok(rows)
    }
}

/// Writes the ground truth of `jobs` into `labels` as part `part` (the answer key a model is
/// evaluated against; no real cluster has one).
pub fn write_labels(
    data: &Path,
    jobs: &[&SimJob],
    day: NaiveDate,
    part: &str,
) -> Result<usize, CatalogError> {
    let mut label_rows: std::collections::BTreeMap<NaiveDate, Vec<LabelRow>> = Default::default();
    for job in jobs {
        let job_day = end_day(job, day);
        label_rows
            .entry(job_day)
            .or_default()
            .push(label_row(job, day));
    }
    for (d, rows) in &label_rows {
        LabelRow::write_part(data, *d, part, rows)?;
    }
    Ok(jobs.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use jobsight_sim::{Anomaly, Inefficiency, simulate_day};

    fn series(job: &SimJob, spec: &ClusterSpec, metric: &str, node: usize) -> Vec<f64> {
        let day = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let names = metric_names(20);
        let mut out = Vec::new();
        job_telemetry(job, spec, day, 10, &names, 1, |n, m, _, v| {
            if m == metric && n == job.nodes[node] {
                out.push(v);
            }
            Ok(())
        })
        .unwrap();
        out
    }

    fn find(jobs: &[SimJob], want: impl Fn(&SimJob) -> bool) -> &SimJob {
        jobs.iter()
            .find(|j| want(j))
            .expect("the simulated day has such a job")
    }

    #[test]
    fn signatures_show_in_the_series() {
        let spec = ClusterSpec {
            jobs: 2000,
            ..ClusterSpec::default()
        };
        let jobs = simulate_day(&spec, 4);
        // A memory leak grows memory on its node inside its window.
        let leaks: Vec<&SimJob> = jobs
            .iter()
            .filter(|j| {
                matches!(
                    j.behaviour,
                    Behaviour::Anomaly {
                        kind: Anomaly::MemLeak,
                        ..
                    }
                ) && j.end_s - j.start_s > 1200
            })
            .collect();
        assert!(leaks.len() >= 3);
        for leak in leaks {
            let Behaviour::Anomaly {
                node, from_s, to_s, ..
            } = leak.behaviour
            else {
                unreachable!()
            };
            let mem = series(leak, &spec, "mem_used_bytes", node);
            let (a, b) = ((from_s / 10) as usize + 1, (to_s / 10) as usize);
            let before = &mem[..a.saturating_sub(1)];
            let flat = before.iter().cloned().fold(f64::MIN, f64::max)
                - before.iter().cloned().fold(f64::MAX, f64::min);
            assert!(
                mem[b] - mem[a] > 10e9,
                "job {}: grows by > 10 GB in the window",
                leak.job_id
            );
            assert!(
                flat < 0.05 * mem[a],
                "job {}: steady before the window",
                leak.job_id
            );
        }
        // A hung job does nothing.
        let hung = find(&jobs, |j| {
            j.behaviour == Behaviour::Inefficiency(Inefficiency::Hung)
        });
        assert!(series(hung, &spec, "cpu_user", 0).iter().all(|&u| u < 0.01));
        // Serial code keeps one core busy.
        let serial = find(&jobs, |j| {
            j.behaviour == Behaviour::Inefficiency(Inefficiency::Serial) && j.cpus_per_node >= 8
        });
        let core0 = series(serial, &spec, "cpu_core0_util", 0);
        let core1 = series(serial, &spec, "cpu_core1_util", 0);
        assert!(core0.iter().all(|&u| u > 0.9) && core1.iter().all(|&u| u < 0.05));
        // Healthy jobs use their allocation as their application does, and hold their footprint.
        let healthy = find(&jobs, |j| j.behaviour == Behaviour::Healthy);
        let user = series(healthy, &spec, "cpu_user", 0);
        let share = healthy.cpus_per_node as f64 / spec.cpus_per_node as f64;
        let mean = user.iter().sum::<f64>() / user.len() as f64;
        assert!(
            (mean - healthy.app.effort * share).abs() < 0.02 * share + 1e-9,
            "{mean} vs {share}"
        );
        let mem = series(healthy, &spec, "mem_used_bytes", 0);
        let footprint = healthy.mem_footprint_mb as f64 * 1048576.0;
        assert!(
            mem.iter()
                .all(|m| (m - footprint).abs() <= 0.011 * footprint.min(8.0 * 1073741824.0)),
            "{footprint}"
        );
    }

    /// Applications differ, and so do the runs of one: no fixed share of the memory request
    /// (the old simulator gave 174 of 197 jobs exactly 61 %), and most jobs ask for a margin,
    /// some for far more.
    #[test]
    fn applications_and_memory_requests_look_like_a_real_clusters() {
        let spec = ClusterSpec {
            jobs: 2000,
            ..ClusterSpec::default()
        };
        let jobs = simulate_day(&spec, 5);
        let apps: std::collections::BTreeSet<&str> = jobs.iter().map(|j| j.app.name).collect();
        assert_eq!(apps.len(), jobsight_sim::PROFILES.len());
        let shares: Vec<f64> = jobs
            .iter()
            .filter(|j| j.behaviour == Behaviour::Healthy && j.outcome == Outcome::Completed)
            .map(|j| j.mem_footprint_mb as f64 * j.nodes.len() as f64 / j.req_mem_mb as f64)
            .collect();
        let distinct: std::collections::BTreeSet<u64> =
            shares.iter().map(|s| (s * 100.0).round() as u64).collect();
        assert!(distinct.len() > 50, "{} distinct shares", distinct.len());
        let within = |lo: f64, hi: f64| {
            shares.iter().filter(|s| (lo..hi).contains(*s)).count() as f64 / shares.len() as f64
        };
        // About six in ten use 60–90 % (a little margin), a tenth under a third.
        assert!(
            (0.45..0.75).contains(&within(0.55, 0.95)),
            "{}",
            within(0.55, 0.95)
        );
        assert!(
            (0.04..0.2).contains(&within(0.0, 0.33)),
            "{}",
            within(0.0, 0.33)
        );
        // Out-of-memory runs needed more than they asked for.
        assert!(
            jobs.iter()
                .filter(|j| j.outcome == Outcome::OutOfMemory)
                .all(|j| j.mem_footprint_mb * j.nodes.len() as u64 > j.req_mem_mb)
        );
    }

    /// What the simulator's accounting says a job used agrees with its telemetry: the CPU time
    /// is the series' mean share of the node's cores over the run, the memory peak the sum of
    /// the nodes' largest samples, both within the noise; one step, no energy.
    #[test]
    fn accounting_agrees_with_the_telemetry() {
        let spec = ClusterSpec {
            jobs: 400,
            ..ClusterSpec::default()
        };
        let jobs = simulate_day(&spec, 6);
        let day = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
        let healthy = jobs.iter().filter(|j| j.behaviour == Behaviour::Healthy);
        for job in healthy.take(20) {
            let row = job_row(job, &spec, Some(2), day);
            let elapsed = (job.end_s - job.start_s) as f64;
            let (mut cpu_s, mut peak_mb) = (0.0, 0.0);
            for n in 0..job.nodes.len() {
                let busy = mean(&series(job, &spec, "cpu_user", n))
                    + mean(&series(job, &spec, "cpu_system", n));
                cpu_s += busy * spec.cpus_per_node as f64 * elapsed;
                let mem = series(job, &spec, "mem_used_bytes", n);
                peak_mb += mem.into_iter().fold(0.0, f64::max) / 1048576.0;
            }
            let total = row.acct_cpu_total_s.unwrap();
            // The user share's noise is within 0.02 of the job's share of each node, and so
            // is its mean.
            let noise = 0.02 * job.cpus_per_node as f64 * job.nodes.len() as f64 * elapsed;
            assert!(
                (total - cpu_s).abs() <= noise,
                "job {}: {total} s against {cpu_s} s",
                job.job_id
            );
            let peak = row.acct_mem_peak_mb.unwrap();
            assert!(
                (peak - peak_mb).abs() <= 0.011 * peak_mb,
                "job {}: {peak} MiB against {peak_mb} MiB",
                job.job_id
            );
            assert_eq!(
                total,
                row.acct_cpu_user_s.unwrap() + row.acct_cpu_system_s.unwrap()
            );
            assert_eq!(
                (row.acct_steps, row.acct_energy_j, row.neighbours),
                (Some(1), None, Some(2))
            );
        }
    }

    #[test]
    fn every_sample_on_the_step_over_the_run() {
        let spec = ClusterSpec::default();
        let jobs = simulate_day(&spec, 2);
        let job = &jobs[0];
        let n = series(job, &spec, "cpu_user", 0).len() as u64;
        assert_eq!(n, (job.end_s - job.start_s) / 10 + 1);
    }
}
