//! What the demo asks the warehouse, as an admin would: the SQL of each part of its report, and
//! how a query's result is shown (its title, the command that runs it, the table).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use jobsight_warehouse::query::{self, SqlFormat};

use super::error::DemoError;
use super::text::{indent, show};

/// What the demo asks the warehouse, as an admin would.
pub(super) const DEMO_QUERIES: [(&str, &str); 3] = [
    (
        "jobs by final state:",
        "SELECT state, count(*) AS jobs, round(sum(cpus * (CAST(\"end\" AS BIGINT) - CAST(start AS BIGINT)) / 3.6e9), 1) AS core_hours FROM jobs GROUP BY state ORDER BY jobs DESC",
    ),
    (
        "ground truth the simulator recorded (labels):",
        "SELECT anomaly, count(*) AS jobs FROM labels GROUP BY anomaly ORDER BY jobs DESC, anomaly",
    ),
    (
        "the memory leaks, seen in the telemetry of the leaking node inside the labelled window:",
        "SELECT l.job_id, t.node, round((max(t.value) - min(t.value)) / 1e9, 1) AS mem_growth_gb FROM labels l JOIN telemetry t ON t.job_id = l.job_id AND t.node = split_part(l.params, '=', 2) AND t.ts BETWEEN l.start AND l.\"end\" WHERE l.anomaly = 'memleak' AND t.metric = 'mem_used_bytes' GROUP BY l.job_id, t.node ORDER BY l.job_id",
    ),
];

/// What the demo shows of the features.
pub(super) const FEATURE_QUERIES: [(&str, &str); 2] = [
    (
        "the largest wastes of allocated CPU, with the simulator's truth beside them (job_summary):",
        "SELECT s.job_id, l.anomaly AS truth, s.duty_cycle, round(s.cpu_eff, 2) AS cpu_eff, round(s.mem_eff, 2) AS mem_eff, round(s.time_eff, 2) AS time_eff, round(s.wasted_core_hours, 1) AS wasted_core_h FROM job_summary s JOIN labels l ON l.job_id = s.job_id ORDER BY s.wasted_core_hours DESC NULLS LAST LIMIT 8",
    ),
    (
        "the largest memory growth per node (features.max_rise of mem_used_bytes; slope over the whole job beside it):",
        "SELECT f.job_id, f.node, l.anomaly AS truth, round(f.max_rise / 1e9, 1) AS rise_gb, round(f.slope_per_h / 1e9, 2) AS slope_gb_per_h FROM features f JOIN labels l ON l.job_id = f.job_id WHERE f.metric = 'mem_used_bytes' ORDER BY f.max_rise DESC NULLS LAST LIMIT 5",
    ),
];

/// What the demo shows of the one verdict per job.
pub(super) const PREDICTION_QUERIES: [(&str, &str); 3] = [
    (
        "one verdict per job run (rules and models together) against the simulator's truth (predictions, labels):",
        "SELECT l.anomaly AS truth, count(*) AS jobs, sum(CASE WHEN p.verdict = l.anomaly THEN 1 ELSE 0 END) AS same_verdict, string_agg(DISTINCT p.verdict, ' ') AS verdicts FROM predictions p JOIN labels l ON l.job_id = p.job_id GROUP BY l.anomaly ORDER BY jobs DESC, truth",
    ),
    (
        "the same for the application the models never saw (blast), judged on job-relative features:",
        "SELECT l.anomaly AS truth, count(*) AS jobs, sum(CASE WHEN p.verdict = l.anomaly THEN 1 ELSE 0 END) AS same_verdict, string_agg(DISTINCT p.verdict, ' ') AS verdicts FROM predictions p JOIN labels l ON l.job_id = p.job_id JOIN jobs j ON j.job_id = p.job_id AND j.day = p.day AND (p.restart_count IS NULL OR p.restart_count = j.restart_count) WHERE j.name LIKE 'blast-%' GROUP BY l.anomaly ORDER BY jobs DESC, truth",
    ),
    (
        "one job per verdict: where, when, how sure, and which rules agreed (predictions):",
        "SELECT job_id, verdict, round(confidence, 2) AS confidence, source, node, window_start, window_end, agreeing_rules FROM (SELECT *, row_number() OVER (PARTITION BY verdict ORDER BY confidence DESC, job_id) AS k FROM predictions WHERE verdict <> 'healthy') WHERE k = 1 ORDER BY verdict",
    ),
];

/// What the demo shows of the email ledger.
pub(super) const NOTIFY_QUERIES: [(&str, &str); 1] = [(
    "the ledger of what was sent (notifications): messages and findings per kind",
    "SELECT kind, count(DISTINCT key) AS messages, count(DISTINCT user) AS users, count(finding) AS findings, min(status) AS status FROM notifications GROUP BY kind ORDER BY kind",
)];

/// What the demo shows of the classification.
pub(super) const CLASSIFY_QUERIES: [(&str, &str); 4] = [
    (
        "findings per rule, with the simulator's truth of the flagged jobs (findings, labels):",
        "SELECT f.rule, f.severity, f.\"group\", count(DISTINCT f.job_id) AS jobs, string_agg(DISTINCT l.anomaly, ' ') AS truth FROM findings f JOIN labels l ON l.job_id = f.job_id GROUP BY f.rule, f.severity, f.\"group\" ORDER BY jobs DESC, f.rule",
    ),
    (
        "what the owners of three flagged jobs will read (message and fix, rendered with the job's own numbers):",
        "SELECT job_id, rule, node, message, fix FROM (SELECT *, row_number() OVER (PARTITION BY rule ORDER BY job_id) AS k FROM findings WHERE rule IN ('memory-leak', 'serial-on-many-cores', 'memory-overrequest')) WHERE k = 1 ORDER BY rule",
    ),
    (
        "job classes (classes):",
        "SELECT class, name, count(*) AS jobs FROM classes GROUP BY class, name ORDER BY jobs DESC, class LIMIT 12",
    ),
    (
        "the thresholds block of one job (thresholds):",
        "SELECT characteristic, round(value, 3) AS value, level, low_below, high_from FROM thresholds WHERE job_id = (SELECT min(job_id) FROM findings WHERE rule = 'memory-leak') ORDER BY characteristic",
    ),
];

/// Runs each query on the warehouse and writes its title, the command an admin would type, and
/// the result table.
pub(super) fn show_queries(
    out: &mut dyn Write,
    runtime: &tokio::runtime::Runtime,
    warehouse: &Path,
    queries: &[(&str, &str)],
) -> Result<(), DemoError> {
    for (title, sql) in queries {
        let batches = runtime.block_on(query::run(warehouse, sql))?;
        let text = format!(
            "\n   {title}\n   $ jobsight sql \"{sql}\"\n{}",
            indent(&query::render(&batches, SqlFormat::Table)?)
        );
        show(out, text)?;
    }
    Ok(())
}

/// Jobs per verdict in `predictions`.
pub(super) fn verdict_counts(
    runtime: &tokio::runtime::Runtime,
    warehouse: &Path,
) -> Result<BTreeMap<String, usize>, DemoError> {
    let batches = runtime.block_on(query::run(
        warehouse,
        "SELECT verdict, count(*) AS n FROM predictions GROUP BY verdict",
    ))?;
    let mut counts = BTreeMap::new();
    for line in query::render(&batches, SqlFormat::Json)?.lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        if let (Some(v), Some(n)) = (row["verdict"].as_str(), row["n"].as_u64()) {
            counts.insert(v.to_string(), n as usize);
        }
    }
    Ok(counts)
}
