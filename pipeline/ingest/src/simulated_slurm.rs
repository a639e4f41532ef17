//! The simulated day as Slurm shows it to jobsight: the records the epilog hook writes for jobs
//! that ended, and squeue's view of a job while it runs. For the benchmarks, which feed the real
//! per-job ingest and running DAG from a simulated day.

use std::path::Path;

use chrono::{DateTime, NaiveDate, Utc};
use jobsight_sim::SimJob;

/// `seconds` after the simulated day's midnight (UTC).
fn at(day: NaiveDate, seconds: u64) -> DateTime<Utc> {
    day.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc()
        + chrono::TimeDelta::seconds(seconds as i64)
}

/// Writes into the spool at `spool` the records the hook writes for each of `jobs` (of the
/// simulated `day` of cluster `cluster`) two seconds after it ends, on controller `ctl`.
pub fn enqueue_ended(
    spool: &Path,
    jobs: &[&SimJob],
    cluster: &str,
    day: NaiveDate,
) -> Result<(), String> {
    for job in jobs {
        for env in jobsight_sim::hook_environments(cluster, job) {
            let vars = env.into_iter().map(|(k, v)| {
                (
                    std::ffi::OsString::from(k),
                    std::os::unix::ffi::OsStringExt::from_vec(v),
                )
            });
            let ended = at(day, job.end_s + 2);
            let record = slurm_hooks::hook_env::record_from_env(vars, "ctl", ended)
                .map_err(|e| format!("job {}: {e}", job.job_id))?;
            slurm_hooks::spool_dir::enqueue(spool, &record)
                .map_err(|e| format!("job {}: {e}", job.job_id))?;
        }
    }
    Ok(())
}

/// Job `job` of the simulated `day` of cluster `cluster` as squeue would list it while it runs.
pub fn running_job(
    job: &SimJob,
    cluster: &str,
    day: NaiveDate,
) -> jobsight_base::running_job::RunningJob {
    jobsight_base::running_job::RunningJob {
        cluster: cluster.to_string(),
        job_id: job.job_id.to_string(),
        slurm_id: job.job_id.to_string(),
        user: job.user.clone(),
        account: job.account.clone(),
        partition: job.partition.clone(),
        qos: "normal".into(),
        name: String::from_utf8_lossy(&job.name).into_owned(),
        start: at(day, job.start_s),
        time_limit_s: Some(job.time_limit_s),
        nodes: job.nodes.join(","),
        node_names: job.nodes.clone(),
        num_nodes: job.nodes.len() as u32,
        cpus: job.cpus_per_node * job.nodes.len() as u32,
        req_mem_mb: Some(job.req_mem_mb),
        gpus: job.gpus,
        interactive: false,
    }
}
