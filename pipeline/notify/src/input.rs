//! Reads what the notify stage reports from the warehouse: every job that ended in a range of
//! days with its `job_summary` figures, its `findings`, and the models' verdict from `predictions`
//! where a model named an anomaly type that no rule already reported; and the `notifications`
//! ledger.
//!
//! Everything is read with SQL over the same session admins use, columns cast to plain types, so
//! a table that is missing (no models configured, nothing sent yet) reads as empty.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, NaiveDate, Utc};
use datafusion::arrow::array::RecordBatch;

use super::NotifyError;
use super::plan::{Item, JobReport, LedgerRow};
use jobsight_base::severity::Severity;
use jobsight_warehouse::query;

/// What to tell a user about a model's verdict: (type, title, what to do, tools).
const ANOMALY_ADVICE: &[(&str, &str, &str, &str)] = &[
    (
        "memleak",
        "Memory grows steadily: looks like a memory leak",
        "Check that the program frees what it allocates; run a short case under a leak checker.",
        "valgrind --leak-check, heaptrack, AddressSanitizer",
    ),
    (
        "memeater",
        "Memory use jumps far above the job's needs",
        "Look for a step that loads or copies much more data than needed; read data in chunks.",
        "heaptrack, massif",
    ),
    (
        "cpuoccupy",
        "Something else competed for the CPUs of the job's nodes",
        "Check for stray processes of earlier runs and for oversubscription (more threads than cores); bind threads to cores.",
        "top, htop, OMP_PROC_BIND, srun --cpu-bind",
    ),
    (
        "cachecopy",
        "The job fought over the CPU caches with another process",
        "Ask for whole nodes (--exclusive) or check what else ran beside the job.",
        "perf stat (LLC misses), likwid-perfctr",
    ),
    (
        "membw",
        "Memory bandwidth was saturated by contention",
        "Ask for whole nodes (--exclusive); spread ranks over sockets.",
        "likwid-perfctr -g MEM, perf stat",
    ),
    (
        "netoccupy",
        "The network was congested during the job",
        "Tell the admins; if the job itself floods the network, aggregate messages.",
        "mpiP, osu benchmarks",
    ),
    (
        "iobandwidth",
        "File-system bandwidth was contended",
        "Write fewer, larger files; use node-local scratch for temporary files.",
        "darshan, iostat",
    ),
    (
        "iometadata",
        "Heavy file-system metadata load (many small files or opens)",
        "Avoid many small files and repeated open/close; use node-local scratch.",
        "darshan, strace -c",
    ),
];

/// The jobs that ended on the days `first..=last` and not after `now`, each with its findings
/// and reportable model verdicts.
pub fn read_jobs(
    runtime: &tokio::runtime::Runtime,
    data: &Path,
    first: NaiveDate,
    last: NaiveDate,
    now: DateTime<Utc>,
) -> Result<Vec<JobReport>, NotifyError> {
    let days = |table: &str| format!("{table}day >= '{first}' AND {table}day <= '{last}'");
    let now_s = now.timestamp();
    let same = jobsight_warehouse::catalog::same_run("s", "j");
    let jobs_sql = format!(
        "SELECT j.job_id, CAST(j.restart_count AS BIGINT) AS restart_count, j.cluster, j.user, \
         j.account, j.name, j.state, j.partition, j.nodes, \
         CAST(j.cpus AS BIGINT) AS cpus, j.start, j.\"end\", \
         s.judgeable, s.not_judgeable_reason, s.cpu_eff, s.mem_eff, s.time_eff, s.core_hours, \
         s.wasted_core_hours, s.cpu_eff_source, s.mem_source, s.shared, \
         s.energy_kwh, s.energy_source, s.energy_share, \
         CAST(j.num_nodes AS BIGINT) AS num_nodes, CAST(j.gpus AS BIGINT) AS gpus, \
         CAST(j.req_mem_mb AS BIGINT) AS req_mem_mb, CAST(j.time_limit_s AS BIGINT) AS time_limit_s, \
         s.mem_used_max_mb, s.cpu_used_cores, s.gpu_util \
         FROM jobs j LEFT JOIN job_summary s ON {same} \
         WHERE {} AND j.\"end\" <= to_timestamp_seconds({now_s})",
        days("j.")
    );
    let findings_sql = format!(
        "SELECT job_id, CAST(restart_count AS BIGINT) AS restart_count, rule, severity, title, \
         message, fix, tools, node FROM findings WHERE {}",
        days("")
    );
    let predictions_sql = format!(
        "SELECT job_id, CAST(restart_count AS BIGINT) AS restart_count, verdict, confidence, \
         node, reason, windows, anomalous_windows, \
         window_start, window_end, source FROM predictions WHERE {} \
         AND verdict NOT IN ('healthy', 'unknown', 'not-judged') AND agreeing_rules = ''",
        days("")
    );
    let (jobs, findings, predictions) = runtime.block_on(async {
        Ok::<_, NotifyError>((
            query::run(data, &jobs_sql).await?,
            query::run(data, &findings_sql).await?,
            query::run(data, &predictions_sql).await?,
        ))
    })?;

    let mut by_id = job_reports(&jobs)?;
    add_findings(&mut by_id, &findings)?;
    add_predictions(&mut by_id, &predictions)?;
    Ok(by_id.into_values().collect())
}

/// The jobs read, by id. A job id twice (runs of a requeued job): the email reports the run that
/// ended last, as the job page shows it, with the findings of every run of the id, each marked
/// with its run.
fn job_reports(jobs: &[RecordBatch]) -> Result<BTreeMap<String, JobReport>, NotifyError> {
    let mut by_id: BTreeMap<String, JobReport> = BTreeMap::new();
    let mut run_states: BTreeMap<String, Vec<(u32, String)>> = BTreeMap::new();
    for batch in jobs {
        let c = query::Columns::of(batch).map_err(|e| NotifyError::Input(e.to_string()))?;
        for i in 0..batch.num_rows() {
            let Some(job_id) = c.text("job_id", i) else {
                continue;
            };
            let restart_count = c.run("restart_count", i);
            if let (Some(run), Some(state)) = (restart_count, c.text("state", i)) {
                run_states
                    .entry(job_id.clone())
                    .or_default()
                    .push((run, state));
            }
            let job = JobReport {
                job_id: job_id.clone(),
                restart_count,
                cluster: c.text("cluster", i).unwrap_or_default(),
                user: c.text("user", i),
                account: c.text("account", i),
                name: c.text("name", i),
                state: c.text("state", i),
                partition: c.text("partition", i),
                nodes: c.text("nodes", i),
                cpus: c.int("cpus", i).and_then(|v| u32::try_from(v).ok()),
                start: c.time("start", i),
                end: c.time("end", i),
                judgeable: c.boolean("judgeable", i),
                not_judgeable_reason: c.text("not_judgeable_reason", i),
                cpu_eff: c.float("cpu_eff", i),
                mem_eff: c.float("mem_eff", i),
                time_eff: c.float("time_eff", i),
                core_hours: c.float("core_hours", i),
                wasted_core_hours: c.float("wasted_core_hours", i),
                cpu_eff_source: c.text("cpu_eff_source", i),
                mem_source: c.text("mem_source", i),
                shared: c.boolean("shared", i),
                energy_kwh: c.float("energy_kwh", i),
                energy_source: c.text("energy_source", i),
                energy_share: c.float("energy_share", i),
                num_nodes: c.int("num_nodes", i),
                gpus: c.int("gpus", i),
                req_mem_mb: c.int("req_mem_mb", i),
                time_limit_s: c.int("time_limit_s", i),
                mem_used_max_mb: c.float("mem_used_max_mb", i),
                cpu_used_cores: c.float("cpu_used_cores", i),
                gpu_util: c.float("gpu_util", i),
                critical_finding: false,
                items: Vec::new(),
                run_states: Vec::new(),
            };
            match by_id.get(&job_id) {
                Some(earlier) if earlier.end >= job.end => {}
                _ => {
                    by_id.insert(job_id, job);
                }
            }
        }
    }
    for (id, mut states) in run_states {
        if let Some(job) = by_id.get_mut(&id) {
            states.sort();
            job.run_states = states;
        }
    }
    Ok(by_id)
}

/// Adds the findings read to their jobs.
fn add_findings(
    by_id: &mut BTreeMap<String, JobReport>,
    findings: &[RecordBatch],
) -> Result<(), NotifyError> {
    for batch in findings {
        let c = query::Columns::of(batch).map_err(|e| NotifyError::Input(e.to_string()))?;
        for i in 0..batch.num_rows() {
            let Some(job) = c.text("job_id", i).and_then(|id| by_id.get_mut(&id)) else {
                continue;
            };
            let severity = match c.text("severity", i).as_deref() {
                Some("critical") => Severity::Critical,
                Some("warning") => Severity::Warning,
                _ => Severity::Info,
            };
            let run = c.run("restart_count", i);
            // Advice for the next run rests on the run reported, not on an earlier one.
            job.critical_finding |=
                severity == Severity::Critical && job.earlier_run(run).is_none();
            job.items.push(Item {
                run,
                kind: c.text("rule", i).unwrap_or_default(),
                severity,
                title: c.text("title", i).unwrap_or_default(),
                message: c.text("message", i).unwrap_or_default(),
                fix: c.text("fix", i).unwrap_or_default(),
                tools: c.text("tools", i).unwrap_or_default(),
                node: c.text("node", i),
            });
        }
    }
    Ok(())
}

/// Adds the models' reportable verdicts read to their jobs.
fn add_predictions(
    by_id: &mut BTreeMap<String, JobReport>,
    predictions: &[RecordBatch],
) -> Result<(), NotifyError> {
    for batch in predictions {
        let c = query::Columns::of(batch).map_err(|e| NotifyError::Input(e.to_string()))?;
        for i in 0..batch.num_rows() {
            let (Some(job), Some(verdict)) = (
                c.text("job_id", i).and_then(|id| by_id.get_mut(&id)),
                c.text("verdict", i),
            ) else {
                continue;
            };
            let (title, fix, tools) = ANOMALY_ADVICE
                .iter()
                .find(|(name, ..)| *name == verdict)
                .map(|(_, t, f, tools)| (t.to_string(), f.to_string(), tools.to_string()))
                .unwrap_or_else(|| {
                    (
                        format!("The models see a {verdict} anomaly"),
                        "Ask the admins about this anomaly type.".to_string(),
                        String::new(),
                    )
                });
            job.items.push(Item {
                run: c.run("restart_count", i),
                kind: format!("diagnosis:{verdict}"),
                severity: Severity::Warning,
                title,
                message: diagnosis_message(&c, i, &verdict),
                fix,
                tools,
                node: c.text("node", i),
            });
        }
    }
    Ok(())
}

/// What the models saw, in words: how much of the run they judged anomalous, where and when,
/// how sure they were, and why when the row says (`predictions.reason`); never a bare label.
fn diagnosis_message(c: &query::Columns, i: usize, verdict: &str) -> String {
    let (windows, anomalous) = (
        c.int("windows", i).unwrap_or(0),
        c.int("anomalous_windows", i).unwrap_or(0),
    );
    let mut message = if windows > 0 {
        format!(
            "the machine-learning diagnosis judged {anomalous} of the {windows} time windows of \
             the job's telemetry to be {verdict}"
        )
    } else {
        format!("the machine-learning diagnosis judged the job's telemetry to be {verdict}")
    };
    if let Some(node) = c.text("node", i) {
        message += &format!(" on {node}");
    }
    if let (Some(a), Some(b)) = (c.time("window_start", i), c.time("window_end", i)) {
        message += &format!(", from {} to {}", a.format("%H:%M"), b.format("%H:%M UTC"));
    }
    if let Some(p) = c.float("confidence", i) {
        message += &format!(" (confidence {:.0} %)", p * 100.0);
    }
    let reason = c.text("reason", i).unwrap_or_default();
    if !reason.trim().is_empty() {
        message += &format!("; {reason}");
    }
    message + ". The job's page shows the metrics in which it differed from healthy jobs."
}

/// The ledger rows sent (or queued, in doubt, failed) on the days from `first` to `last` (`None`:
/// to the newest).
pub fn read_ledger(
    runtime: &tokio::runtime::Runtime,
    data: &Path,
    first: NaiveDate,
    last: Option<NaiveDate>,
) -> Result<Vec<LedgerRow>, NotifyError> {
    let until = last.map_or(String::new(), |last| format!(" AND day <= '{last}'"));
    let sql = format!(
        "SELECT key, kind, user, address, period, job_id, finding, severity, queued_at, sent_at, \
         status, transport FROM notifications WHERE day >= '{first}'{until}"
    );
    let batches = runtime.block_on(query::run(data, &sql))?;
    let mut rows = Vec::new();
    for batch in &batches {
        let c = query::Columns::of(batch).map_err(|e| NotifyError::Input(e.to_string()))?;
        for i in 0..batch.num_rows() {
            rows.push(LedgerRow {
                key: c.text("key", i).unwrap_or_default(),
                kind: c.text("kind", i).unwrap_or_default(),
                user: c.text("user", i),
                address: c.text("address", i).unwrap_or_default(),
                period: c.text("period", i).unwrap_or_default(),
                job_id: c.text("job_id", i),
                finding: c.text("finding", i),
                severity: c.text("severity", i),
                queued_at: c.time("queued_at", i).unwrap_or_default(),
                sent_at: c.time("sent_at", i),
                status: c.text("status", i).unwrap_or_default(),
                transport: c.text("transport", i).unwrap_or_default(),
            });
        }
    }
    Ok(rows)
}
