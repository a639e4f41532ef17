//! The running jobs as the last `running` run saw them: each job's footprint so far against its
//! request and the conditions that hold with since when. The running step writes it atomically as
//! JSON (`[running] snapshot`, written by the application); `jobsight running` and the "what runs
//! now" page read it.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub taken_at: DateTime<Utc>,
    pub rules_version: String,
    /// Jobs by id (the order squeue gave).
    pub jobs: Vec<LiveJob>,
    /// squeue entries that could not be read: (entry, why).
    pub skipped: Vec<(String, String)>,
}

/// One running job and what is known of it so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveJob {
    pub cluster: String,
    /// As the warehouse names it: Slurm's own id, an array task's too.
    pub job_id: String,
    /// Slurm's own id, for `scancel`.
    #[serde(default)]
    pub slurm_id: String,
    pub user: String,
    pub account: String,
    pub partition: String,
    pub qos: String,
    pub name: String,
    pub nodes: String,
    pub num_nodes: u32,
    pub cpus: u32,
    pub gpus: u32,
    pub req_mem_mb: Option<u64>,
    pub time_limit_s: Option<u64>,
    pub start: DateTime<Utc>,
    pub elapsed_s: u64,
    pub interactive: bool,
    /// The footprint over the run so far (at most `[running] lookback_s`).
    pub cpu_used_cores: Option<f64>,
    pub cpu_eff: Option<f64>,
    pub mem_used_max_mb: Option<f64>,
    pub mem_eff: Option<f64>,
    pub gpu_util: Option<f64>,
    /// Where the CPU and memory figures come from (`telemetry-job`, `telemetry-node`).
    pub cpu_source: Option<String>,
    pub mem_source: Option<String>,
    /// Whether other jobs run on its nodes.
    pub shared: bool,
    /// Why the job could not be judged (no telemetry, a fetch that failed); `None`: judged.
    pub not_judged: Option<String>,
    pub conditions: Vec<Condition>,
}

/// A running rule that holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    pub rule: String,
    pub title: String,
    pub severity: String,
    /// The finished-job rule it stands for.
    pub at_end: Option<String>,
    /// Since when it holds: the first run that saw it, less its dwell.
    pub since: DateTime<Utc>,
    pub message: String,
    pub fix: String,
    pub tools: Vec<String>,
    /// JSON object.
    pub evidence: String,
}

impl Condition {
    pub fn held_s(&self, now: DateTime<Utc>) -> u64 {
        (now - self.since).num_seconds().max(0) as u64
    }
}

impl Snapshot {
    /// The snapshot at `path`; `None` when there is none yet.
    pub fn read(path: &Path) -> Result<Option<Snapshot>, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| format!("{}: not a running snapshot: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }
}

/// A snapshot with every field set: two jobs, one with a condition, one not judged; for
/// `jobsight check` (the page template renders it) and tests.
pub fn sample() -> Snapshot {
    let taken_at = DateTime::<Utc>::from_timestamp(1_795_745_851, 0).unwrap_or_default();
    let job = LiveJob {
        cluster: "ci".into(),
        job_id: "4242".into(),
        slurm_id: "4242".into(),
        user: "alice".into(),
        account: "physics".into(),
        partition: "gpu".into(),
        qos: "normal".into(),
        name: "train-<model>".into(),
        nodes: "node[01-02]".into(),
        num_nodes: 2,
        cpus: 32,
        gpus: 4,
        req_mem_mb: Some(131_072),
        time_limit_s: Some(86_400),
        start: taken_at - chrono::Duration::hours(3),
        elapsed_s: 10_800,
        interactive: false,
        cpu_used_cores: Some(0.4),
        cpu_eff: Some(0.0125),
        mem_used_max_mb: Some(20_480.0),
        mem_eff: Some(0.156),
        gpu_util: Some(0.0),
        cpu_source: Some("telemetry-job".into()),
        mem_source: Some("telemetry-job".into()),
        shared: true,
        not_judged: None,
        conditions: vec![Condition {
            rule: "running-gpu-idle".into(),
            title: "Your running job holds idle GPUs".into(),
            severity: "critical".into(),
            at_end: Some("gpu-idle".into()),
            since: taken_at - chrono::Duration::minutes(95),
            message: "Your job holds 4 GPU(s) that did no work in the last 1h 00m (at most 0 %)."
                .into(),
            fix: "Check that the program sees and uses the GPU.".into(),
            tools: vec!["nvidia-smi".into()],
            evidence: "{\"job.gpus\":4}".into(),
        }],
    };
    let waiting = LiveJob {
        job_id: "4243".into(),
        user: "bob".into(),
        name: "sleepy".into(),
        gpus: 0,
        conditions: Vec::new(),
        not_judged: Some(
            "telemetry of job 4243: Prometheus at http://prom:9090 gave no answer".into(),
        ),
        cpu_used_cores: None,
        cpu_eff: None,
        mem_used_max_mb: None,
        mem_eff: None,
        gpu_util: None,
        shared: false,
        ..job.clone()
    };
    Snapshot {
        taken_at,
        rules_version: "sample".into(),
        jobs: vec![job, waiting],
        skipped: vec![("17".into(), "user \"bob; rm\" is no login name".into())],
    }
}
