//! Judging the jobs that run now, in the running DAG's two steps between listing and acting:
//! [`measure_all`] (its features step) fetches each job's telemetry so far from the configured
//! source (the per-job DAG's: Prometheus with the per-job series, or the simulator) and computes
//! the features of every window the running rules read, by the features stage; [`judge_all`]
//! (its classify step) judges them with the running rules (group `running`) by the rules stage,
//! into the jobs of a [`Snapshot`].
//!
//! A running rule with `dwell_s` is judged on the job's last `dwell_s` seconds only, and only
//! once the job has run that long; the footprint (and the rules without a dwell) on the run so
//! far, at most `[running] lookback_s`. The features are computed once per distinct window. The
//! newest `lag` seconds (Prometheus's, as for finished jobs) are left out: they are not complete
//! yet, and a window with a missing end would look idle.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use datafusion::arrow::array::RecordBatch;
use rayon::prelude::*;

use jobsight_base::running_job::RunningJob;
use jobsight_base::series::Sample;
use jobsight_features::scan::JobMeta;
use jobsight_ingest::sources::{JobSpan, Prefetched, TelemetrySource};
use jobsight_rules::lang::Value;
use jobsight_rules::{JobData, RuleBook};
use jobsight_running::Settings;
use jobsight_running::live::{carry_since, live_job, neighbours};
use jobsight_running::snapshot::{Condition, LiveJob, Snapshot};

/// What measuring needs besides the jobs.
pub struct Measure<'a> {
    /// The rule book, whose running rules' dwells decide the windows.
    pub book: &'a RuleBook,
    pub features: &'a jobsight_features::Settings,
    pub telemetry: Option<&'a (dyn TelemetrySource + Send + Sync)>,
    pub running: &'a Settings,
}

impl std::fmt::Debug for Measure<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Measure")
            .field("rules", &self.book.version)
            .field("telemetry", &self.telemetry.map(|t| t.name()))
            .finish()
    }
}

/// One running job measured: what its row says so far (with why it cannot be judged, when it
/// cannot), and the features of each window the running rules read.
#[derive(Debug)]
pub struct Measured {
    pub job: RunningJob,
    /// How many other listed jobs share its nodes.
    pub others: u32,
    pub live: LiveJob,
    /// The end of its windows: now, less the telemetry's lag.
    pub to: DateTime<Utc>,
    /// The footprint's window first (the run so far), then one per distinct dwell the job has
    /// run for.
    pub windows: Vec<Window>,
}

/// The features of one window of a running job, as the features stage's three tables.
#[derive(Debug)]
pub struct Window {
    /// `None`: the footprint's window, for the rules without a dwell.
    pub dwell: Option<u64>,
    pub span_s: u64,
    pub features: RecordBatch,
    pub features_job: RecordBatch,
    pub summary: RecordBatch,
}

/// Measures every job of `jobs` at `now`, in parallel.
/// Jobs whose windows the source can ask for together ([`TelemetrySource::groups`]) are asked for
/// a group at a time (a group's answer is measured and dropped before the next is asked for); a
/// group the source fails to give is asked for a job at a time.
pub fn measure_all(measure: &Measure, jobs: &[RunningJob], now: DateTime<Utc>) -> Vec<Measured> {
    let sharing = neighbours(jobs);
    let Some(telemetry) = measure.telemetry else {
        return jobs
            .par_iter()
            .zip(sharing.par_iter())
            .map(|(job, &others)| measure.one(job, others, now, None))
            .collect();
    };
    let spans: Vec<JobSpan> = jobs
        .iter()
        .map(|job| {
            let (from, to) = measure.range(job, now, telemetry);
            JobSpan {
                job_id: job.slurm_id.clone(),
                cluster: job.cluster.clone(),
                nodes: job.node_names.clone(),
                start: from,
                end: to,
            }
        })
        .collect();
    let groups = telemetry.groups(&spans);
    let mut grouped = vec![false; jobs.len()];
    for &i in groups.iter().flatten() {
        grouped[i] = true;
    }
    let one = |i: usize, source: &dyn TelemetrySource| {
        (i, measure.one(&jobs[i], sharing[i], now, Some(source)))
    };
    let mut measured: Vec<(usize, Measured)> = groups
        .par_iter()
        .flat_map_iter(|group| {
            let members: Vec<&JobSpan> = group.iter().map(|&i| &spans[i]).collect();
            match telemetry.fetch_together(&members, false) {
                Ok(fetched) if fetched.len() == group.len() => group
                    .iter()
                    .zip(fetched)
                    .map(|(&i, fetched)| one(i, &Prefetched::new(telemetry, fetched)))
                    .collect::<Vec<_>>(),
                _ => group.iter().map(|&i| one(i, telemetry)).collect(),
            }
        })
        .collect();
    measured.par_extend(
        (0..jobs.len())
            .into_par_iter()
            .filter(|&i| !grouped[i])
            .map(|i| one(i, telemetry)),
    );
    measured.sort_by_key(|(i, _)| *i);
    measured.into_iter().map(|(_, m)| m).collect()
}

/// Judges every measured job with the book's running rules (in parallel), with the conditions'
/// start times carried over from `previous`.
pub fn judge_all(
    book: &RuleBook,
    rules: &jobsight_rules::Settings,
    measured: &[Measured],
    previous: Option<&Snapshot>,
) -> Vec<LiveJob> {
    let mut judged: Vec<LiveJob> = measured.par_iter().map(|m| judge(book, rules, m)).collect();
    carry_since(previous, &mut judged);
    judged
}

/// A job's samples by (node, metric).
type Samples = BTreeMap<(Arc<str>, Arc<str>), Vec<Sample>>;

impl Measure<'_> {
    /// The range of a job's telemetry that its windows read: the longest of them, ending
    /// `telemetry`'s lag before `now`.
    fn range(
        &self,
        job: &RunningJob,
        now: DateTime<Utc>,
        telemetry: &dyn TelemetrySource,
    ) -> (DateTime<Utc>, DateTime<Utc>) {
        // The newest samples are not all in yet (Prometheus's lag).
        let to = now - (telemetry.ready_at(now) - now);
        let run_s = (to - job.start).num_seconds().max(0) as u64;
        let longest = jobsight_rules::running_dwells(self.book)
            .iter()
            .flatten()
            .copied()
            .chain([self.running.lookback_s])
            .max()
            .unwrap_or(self.running.lookback_s)
            .min(run_s);
        (to - chrono::Duration::seconds(longest as i64), to)
    }

    fn one(
        &self,
        job: &RunningJob,
        others: u32,
        now: DateTime<Utc>,
        telemetry: Option<&dyn TelemetrySource>,
    ) -> Measured {
        let mut live = live_job(job, now, self.running);
        live.shared = others > 0;
        let mut measured = Measured {
            job: job.clone(),
            others,
            live,
            to: now,
            windows: Vec::new(),
        };
        let Some(telemetry) = telemetry else {
            measured.live.not_judged =
                Some("no telemetry source is configured ([ingest] telemetry)".into());
            return measured;
        };
        let (from, to) = self.range(job, now, telemetry);
        measured.to = to;
        let run_s = (to - job.start).num_seconds().max(0) as u64;
        let dwells = jobsight_rules::running_dwells(self.book);
        let mut samples = Samples::new();
        // Series are labelled with Slurm's own id (cgroup directories, DCGM's `hpc_job`), which
        // for an array task is its raw id, not its `ARRAY_TASK` name.
        let fetched = telemetry.fetch(
            &job.slurm_id,
            &job.cluster,
            &job.node_names,
            from,
            to,
            &mut |node, metric, ts, v| {
                samples
                    .entry((Arc::from(node), Arc::from(metric)))
                    .or_default()
                    .push((ts, v));
            },
        );
        if let Err(e) = fetched {
            measured.live.not_judged = Some(format!("telemetry of job {}: {e}", job.job_id));
            return measured;
        }
        // The footprint first (the run so far), then one window per distinct dwell.
        let mut dwells_of_windows = vec![None];
        dwells_of_windows.extend(dwells.iter().filter(|d| d.is_some()));
        for dwell in dwells_of_windows {
            let span_s = dwell.unwrap_or(self.running.lookback_s.min(run_s));
            if span_s > run_s {
                continue; // not run for the dwell yet
            }
            match self.window(job, others, &samples, to, span_s) {
                Ok((features, features_job, summary)) => measured.windows.push(Window {
                    dwell,
                    span_s,
                    features,
                    features_job,
                    summary,
                }),
                Err(e) => {
                    // The windows measured so far still give the footprint; none is judged.
                    measured.live.not_judged = Some(e);
                    return measured;
                }
            }
        }
        measured
    }

    /// The features of the job's last `span_s` seconds before `to`, as the features stage
    /// computes a finished job's.
    fn window(
        &self,
        job: &RunningJob,
        others: u32,
        samples: &Samples,
        to: DateTime<Utc>,
        span_s: u64,
    ) -> Result<(RecordBatch, RecordBatch, RecordBatch), String> {
        let to_us = to.timestamp_micros();
        let from_us = to_us - span_s as i64 * 1_000_000;
        let series: Vec<jobsight_features::scan::NamedSeries> = samples
            .iter()
            .map(|((node, metric), points)| {
                let kept: Vec<Sample> = points
                    .iter()
                    .copied()
                    .filter(|(ts, _)| *ts >= from_us && *ts <= to_us)
                    .collect();
                (node.clone(), metric.clone(), kept)
            })
            .filter(|(_, _, points)| !points.is_empty())
            .collect();
        let meta = JobMeta {
            job_id: job.job_id.clone(),
            // squeue's listing does not say; the running DAG judges the run now running.
            restart_count: None,
            start_us: from_us,
            end_us: to_us,
            trimmed: false,
            keep_from_us: from_us,
            keep_to_us: to_us,
            cpus: Some(job.cpus),
            num_nodes: Some(job.num_nodes),
            nodes: Some(job.nodes.clone()),
            req_mem_mb: job.req_mem_mb,
            time_limit_s: job.time_limit_s,
            gpus: Some(job.gpus),
            run_start_us: job.start.timestamp_micros(),
            acct_cpu_total_s: None,
            acct_mem_peak_mb: None,
            acct_energy_j: None,
            acct_steps: None,
            neighbours: Some(others),
            // Still running: it has not ended at all, NODE_FAIL or otherwise.
            lost_a_node: false,
        };
        let computed = jobsight_features::job::compute(&meta, series, self.features);
        jobsight_features::batches(std::slice::from_ref(&computed))
            .map_err(|e| format!("features of running job {}: {e}", job.job_id))
    }
}

/// One measured job judged: the running rules over each of its windows, the footprint from
/// the first.
fn judge(book: &RuleBook, rules: &jobsight_rules::Settings, measured: &Measured) -> LiveJob {
    let Measured {
        job,
        others,
        live,
        to,
        windows,
    } = measured;
    let (mut live, to) = (live.clone(), *to);
    let mut conditions = Vec::new();
    for window in windows {
        let data = match job_data(job, *others, to, window, rules) {
            Ok(data) => data,
            Err(e) => {
                live.not_judged = Some(e);
                return live;
            }
        };
        if window.dwell.is_none() {
            footprint(&mut live, &data);
        }
        if live.not_judged.is_some() {
            continue; // a later window could not be measured: the footprint only
        }
        let findings = jobsight_rules::evaluate_running(book, &data, rules, window.dwell);
        for f in findings {
            let at_end = book
                .rules
                .iter()
                .find(|r| r.id == f.rule)
                .and_then(|r| r.at_end.clone());
            conditions.push(Condition {
                rule: f.rule.clone(),
                title: f.title.clone(),
                severity: f.severity.name().to_string(),
                at_end,
                since: to - chrono::Duration::seconds(window.span_s as i64),
                message: f.message.clone(),
                fix: f.fix.clone(),
                tools: f.tools.clone(),
                evidence: f.evidence_json(),
            });
        }
    }
    live.conditions = conditions;
    live
}

/// The job's [`JobData`] of one window, as the rules read a finished job's.
fn job_data(
    job: &RunningJob,
    others: u32,
    to: DateTime<Utc>,
    window: &Window,
    rules: &jobsight_rules::Settings,
) -> Result<JobData, String> {
    let mut data = jobsight_rules::classify::input::from_batches(
        &job.job_id,
        job_fields(job, others, to, window.span_s),
        &window.summary,
        &window.features_job,
        &window.features,
        Path::new(&format!("running job {}", job.job_id)),
    )
    .map_err(|e| e.to_string())?;
    jobsight_rules::prepare(&mut data, rules);
    Ok(data)
}

/// The `job.*` fields of a running job, named as the `jobs` table's columns.
fn job_fields(
    job: &RunningJob,
    others: u32,
    to: DateTime<Utc>,
    span_s: u64,
) -> BTreeMap<String, Value> {
    let text = |s: &str| Value::Str(s.to_string());
    let num = |x: f64| Value::num(x);
    let opt = |x: Option<u64>| x.map_or(Value::Missing, |v| Value::num(v as f64));
    BTreeMap::from([
        ("cluster".to_string(), text(&job.cluster)),
        ("job_id".into(), text(&job.job_id)),
        ("user".into(), text(&job.user)),
        ("account".into(), text(&job.account)),
        ("partition".into(), text(&job.partition)),
        ("qos".into(), text(&job.qos)),
        ("name".into(), text(&job.name)),
        ("state".into(), text("RUNNING")),
        ("nodes".into(), text(&job.nodes)),
        ("num_nodes".into(), num(job.num_nodes as f64)),
        ("cpus".into(), num(job.cpus as f64)),
        ("gpus".into(), num(job.gpus as f64)),
        ("req_mem_mb".into(), opt(job.req_mem_mb)),
        ("time_limit_s".into(), opt(job.time_limit_s)),
        ("start".into(), num(job.start.timestamp() as f64)),
        ("end".into(), num(to.timestamp() as f64)),
        ("neighbours".into(), num(others as f64)),
        ("window_s".into(), num(span_s as f64)),
    ])
}

/// The footprint so far, from the `job_summary` figures of the run so far.
fn footprint(live: &mut LiveJob, data: &JobData) {
    let num = |k: &str| match data.summary.get(k) {
        Some(Value::Num(v)) => Some(*v),
        _ => None,
    };
    let text = |k: &str| match data.summary.get(k) {
        Some(Value::Str(s)) => Some(s.clone()),
        _ => None,
    };
    live.cpu_used_cores = num("cpu_used_cores");
    live.cpu_eff = num("cpu_eff");
    live.mem_used_max_mb = num("mem_used_max_mb");
    live.mem_eff = num("mem_eff");
    live.gpu_util = num("gpu_util");
    live.cpu_source = text("cpu_eff_source");
    live.mem_source = text("mem_source");
}
