//! A job that runs now, as Slurm's controller lists it: what the ingest stage reads from
//! `squeue --json` and what the running stage judges and acts on. Here because both use it.

use chrono::{DateTime, Utc};

/// One running job: what the live judgement and the cancel policy need.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunningJob {
    pub cluster: String,
    /// The job's id as the warehouse names it (`jobs.job_id`, the hook's `SLURM_JOB_ID`): Slurm's
    /// own id, an array task's too, which its cgroup directory and DCGM's `hpc_job` also carry.
    /// (Its `ARRAY_TASK` name was used before 2026-11-28: a task's series were never found and
    /// its warning was not matched with its finished job.)
    pub job_id: String,
    /// Slurm's own id of the job (an array task's too), for `scancel` and `scontrol`.
    pub slurm_id: String,
    pub user: String,
    pub account: String,
    pub partition: String,
    pub qos: String,
    pub name: String,
    pub start: DateTime<Utc>,
    /// `None`: no limit (UNLIMITED).
    pub time_limit_s: Option<u64>,
    /// Slurm hostlist, as squeue prints it.
    pub nodes: String,
    /// The host list expanded.
    pub node_names: Vec<String>,
    pub num_nodes: u32,
    pub cpus: u32,
    /// The job's whole memory (all nodes), MiB; `None` when Slurm gave none.
    pub req_mem_mb: Option<u64>,
    pub gpus: u32,
    /// Started by `salloc` or a bare `srun` (Slurm's batch flag unset).
    pub interactive: bool,
}

/// What a listing gave: the running jobs, and the entries skipped with why.
#[derive(Debug, Default)]
pub struct Listing {
    pub jobs: Vec<RunningJob>,
    /// (what identifies the entry, why it was skipped).
    pub skipped: Vec<(String, String)>,
}
