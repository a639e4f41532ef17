//! The Arrow batches of the tables features writes (`features`, `features_job`, `job_summary`
//! and `windows`): each computed job's figures as the warehouse's rows, in the order of the
//! tables' columns.

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::error::ArrowError;

use super::JobFeatures;
use jobsight_warehouse::catalog::rows::{
    self, FeatureRow, FeaturesJobRow, JobSummaryRow, WindowRow,
};

/// The three tables' batches for `jobs` (in job id order).
pub fn batches(
    jobs: &[JobFeatures],
) -> Result<(RecordBatch, RecordBatch, RecordBatch), ArrowError> {
    Ok((
        features_batch(jobs)?,
        features_job_batch(jobs)?,
        summary_batch(jobs)?,
    ))
}

/// The `features` batch of `jobs`: a row per job, node and metric.
pub(super) fn features_batch(jobs: &[JobFeatures]) -> Result<RecordBatch, ArrowError> {
    let time = |t: Option<i64>| t.and_then(rows::from_micros);
    let features: Vec<FeatureRow> = jobs
        .iter()
        .flat_map(|j| j.series.iter().map(move |r| (j, r)))
        .map(|(j, r)| {
            let s = &r.stats;
            let p = &s.percentiles;
            FeatureRow {
                job_id: j.job_id.clone(),
                restart_count: j.restart_count,
                node: r.node.to_string(),
                metric: r.metric.to_string(),
                n: s.n,
                n_nonfinite: s.n_nonfinite,
                trimmed: j.trimmed,
                // In the order of catalog::FEATURE_STATS.
                stats: [
                    s.min,
                    s.max,
                    s.mean,
                    s.std,
                    s.cv,
                    s.skewness,
                    s.kurtosis,
                    p[0],
                    p[1],
                    p[2],
                    p[3],
                    p[4],
                    s.interval_s,
                    r.coverage,
                    s.slope_per_h,
                    s.catastrophe,
                    s.max_rise,
                    s.idle_share,
                ],
                rise_from: time(s.rise_from),
                rise_to: time(s.rise_to),
                cliff_at: time(s.cliff_at),
            }
        })
        .collect();
    FeatureRow::batch(&features)
}

/// The `features_job` batch of `jobs`: a row per job and metric.
pub(super) fn features_job_batch(jobs: &[JobFeatures]) -> Result<RecordBatch, ArrowError> {
    let across: Vec<FeaturesJobRow> = jobs
        .iter()
        .flat_map(|j| j.across.iter().map(move |a| (j, a)))
        .map(|(j, a)| FeaturesJobRow {
            job_id: j.job_id.clone(),
            restart_count: j.restart_count,
            metric: a.metric.to_string(),
            nodes: a.nodes,
            mean: a.mean,
            min: a.min,
            max: a.max,
            node_mean_min: a.node_mean_min,
            node_mean_max: a.node_mean_max,
            node_cv: a.node_cv,
            imbalance: a.imbalance,
        })
        .collect();
    FeaturesJobRow::batch(&across)
}

/// The `job_summary` batch of `jobs`: a row per job.
pub(super) fn summary_batch(jobs: &[JobFeatures]) -> Result<RecordBatch, ArrowError> {
    let summary: Vec<JobSummaryRow> = jobs
        .iter()
        .map(|j| {
            let s = &j.summary;
            JobSummaryRow {
                job_id: j.job_id.clone(),
                restart_count: j.restart_count,
                elapsed_s: s.elapsed_s,
                trimmed: j.trimmed,
                nodes_expected: s.nodes_expected,
                nodes_seen: s.nodes_seen,
                nodes_missing: s.nodes_missing.clone(),
                metrics: s.metrics,
                samples: s.samples,
                coverage_min: s.coverage_min,
                coverage_mean: s.coverage_mean,
                judgeable: s.judgeable,
                not_judgeable_reason: s.not_judgeable_reason.clone(),
                duty_cycle: s.duty_cycle.map(str::to_string),
                cpu_used_cores: s.cpu_used_cores,
                cpu_eff: s.cpu_eff,
                mem_used_max_mb: s.mem_used_max_mb,
                mem_eff: s.mem_eff,
                time_eff: s.time_eff,
                gpu_util: s.gpu_util,
                core_hours: s.core_hours,
                wasted_core_hours: s.wasted_core_hours,
                cpu_eff_source: s.cpu_eff_source.map(|source| source.name().to_string()),
                mem_source: s.mem_source.map(|source| source.name().to_string()),
                cpu_eff_telemetry: s.cpu_eff_telemetry,
                mem_eff_telemetry: s.mem_eff_telemetry,
                cpu_eff_acct: s.cpu_eff_acct,
                mem_eff_acct: s.mem_eff_acct,
                shared: s.shared,
                gpu_source: s.gpu_source.map(|source| source.name().to_string()),
                energy_kwh: s.energy.kwh,
                energy_source: s.energy.source.map(|source| source.name().to_string()),
                energy_share: s.energy.share,
                gpu_mem_used_max_mb: s.gpu_mem_used_max_mb,
                gpu_mem_total_mb: s.gpu_mem_total_mb,
            }
        })
        .collect();
    JobSummaryRow::batch(&summary)
}

/// The `windows` batch of `jobs`.
pub fn windows_batch(jobs: &[JobFeatures]) -> Result<RecordBatch, ArrowError> {
    let time = |t: i64| rows::from_micros(t).unwrap_or_default();
    let windows: Vec<WindowRow> = jobs
        .iter()
        .flat_map(|j| j.windows.iter().map(move |w| (j, w)))
        .map(|(j, w)| {
            let s = &w.stats;
            let p = &s.percentiles;
            WindowRow {
                job_id: j.job_id.clone(),
                restart_count: j.restart_count,
                node: w.node.to_string(),
                metric: w.metric.to_string(),
                window_start: time(w.start_us),
                window_end: time(w.end_us),
                n: s.n,
                n_nonfinite: s.n_nonfinite,
                // In the order of catalog::WINDOW_STATS.
                stats: [
                    s.min,
                    s.max,
                    s.mean,
                    s.std,
                    s.skewness,
                    s.kurtosis,
                    p[0],
                    p[1],
                    p[2],
                    p[3],
                    p[4],
                    s.slope_per_h,
                ],
            }
        })
        .collect();
    WindowRow::batch(&windows)
}
