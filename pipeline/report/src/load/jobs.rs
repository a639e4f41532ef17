//! A scope's jobs (a day's, or one job's) and every table's rows about them: `jobs`,
//! `job_summary`, `findings`, `classes`, `thresholds`, `predictions` and the means of
//! `features_job`, gathered into [`Facts`]; and the day a job is stored under.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, NaiveDate, Utc};
use datafusion::prelude::SessionContext;

use super::binned::Series;
use super::sql::{each_row, text};
use jobsight_warehouse::catalog::rows::FindingRow;
use jobsight_warehouse::query::{Columns, QueryError, literal};

/// Which rows: a day, and within it one job or all.
#[derive(Debug, Clone)]
pub struct Scope {
    pub day: NaiveDate,
    pub job: Option<String>,
}

impl Scope {
    /// The `WHERE` condition on a table aliased `alias`.
    fn filter(&self, alias: &str) -> String {
        let mut f = format!("{alias}.day = '{}'", self.day);
        if let Some(job) = &self.job {
            f.push_str(&format!(" AND {alias}.job_id = {}", literal(job)));
        }
        f
    }

    /// [`Scope::filter`], keeping of a per-run table (`classes`, `thresholds`, `predictions`,
    /// `features_job`, `features`) each job's last run (its highest `restart_count`), as the pages show a
    /// requeued job, and the rows written before runs were recorded.
    fn last_run(&self, alias: &str) -> String {
        format!(
            "{} AND ({alias}.restart_count IS NULL OR {alias}.restart_count = \
             (SELECT max(r.restart_count) FROM jobs r WHERE r.job_id = {alias}.job_id AND r.day = {alias}.day))",
            self.filter(alias)
        )
    }
}

/// One job's accounting, as the `jobs` view has it.
#[derive(Debug, Clone, Default)]
pub struct JobFacts {
    pub job_id: String,
    /// Which run of the job this is (Slurm's restart count; 0 for the first).
    pub restart_count: Option<u32>,
    pub day: String,
    pub cluster: String,
    pub user: String,
    pub account: String,
    pub partition: String,
    pub qos: String,
    pub name: String,
    pub nodes: String,
    pub num_nodes: i64,
    pub cpus: i64,
    pub gpus: i64,
    pub req_mem_mb: Option<i64>,
    pub time_limit_s: Option<i64>,
    pub submit: Option<DateTime<Utc>>,
    pub start: Option<DateTime<Utc>>,
    pub end: Option<DateTime<Utc>>,
    pub state: String,
    pub exit_code: Option<i64>,
    pub exit_signal: Option<i64>,
    pub elapsed_s: Option<i64>,
    pub wait_s: Option<i64>,
    pub core_hours: Option<f64>,
    /// Slurm's own GPU figures (`gres/gpuutil`, `gres/gpumem` of the steps): the busiest task's
    /// peak utilisation in per cent and its peak GPU memory, where the site accounts them.
    pub acct_gpu_util_max_pct: Option<f64>,
    pub acct_gpu_mem_max_mb: Option<f64>,
    /// What the ingest found missing or odd about the run (`jobs.note`), one sentence a line;
    /// empty when nothing.
    pub note: String,
}

/// The metrics shown node by node for a job of several nodes: the job's own series (its cgroups'
/// busy cores and resident memory) where a per-job exporter gives them, else its nodes'.
pub const PER_NODE_METRICS: [&str; 4] = [
    "job_cpu_cores_used",
    "job_mem_rss_bytes",
    "cpu_user",
    "mem_used_bytes",
];

/// One node of a job (`features`): the means and peaks of [`PER_NODE_METRICS`] it has.
#[derive(Debug, Clone, Default)]
pub struct NodeFacts {
    /// Metric → (mean, peak).
    pub figures: BTreeMap<String, (Option<f64>, Option<f64>)>,
}

/// What the features step measured of a job (`job_summary`).
#[derive(Debug, Clone, Default)]
pub struct SummaryFacts {
    pub judgeable: bool,
    pub not_judgeable_reason: String,
    pub coverage_mean: Option<f64>,
    pub nodes_missing: String,
    pub duty_cycle: String,
    pub cpu_used_cores: Option<f64>,
    pub cpu_eff: Option<f64>,
    pub mem_used_max_mb: Option<f64>,
    pub mem_eff: Option<f64>,
    pub time_eff: Option<f64>,
    pub gpu_util: Option<f64>,
    pub wasted_core_hours: Option<f64>,
    /// Where the CPU and memory figures came from (`telemetry-job`, `telemetry-node`,
    /// `accounting`); empty when unknown.
    pub cpu_eff_source: String,
    pub mem_source: String,
    /// Whether the job shared a node with other jobs, when known.
    pub shared: Option<bool>,
    /// Where `gpu_util` came from (`telemetry-job`: the job's own GPUs); empty when unknown.
    pub gpu_source: String,
    /// The job's measured energy, where it came from and the share of its nodes' it was given.
    pub energy_kwh: Option<f64>,
    pub energy_source: String,
    pub energy_share: Option<f64>,
    /// The job's GPU memory peak (MiB, all its GPUs), from the family `gpu_util` came from.
    pub gpu_mem_used_max_mb: Option<f64>,
    /// Those GPUs' memory (MiB), where the free memory was collected.
    pub gpu_mem_total_mb: Option<f64>,
}

#[derive(Debug, Clone, Default)]
pub struct ThresholdFacts {
    pub characteristic: String,
    pub title: String,
    /// The rule book's `[limits.<name>]` it is judged by, which says its unit.
    pub limits: String,
    pub value: Option<f64>,
    pub level: String,
    pub low_below: Option<f64>,
    pub high_from: Option<f64>,
}

impl ThresholdFacts {
    /// Row `i` of a `thresholds` query.
    fn read(c: &Columns, i: usize) -> ThresholdFacts {
        ThresholdFacts {
            characteristic: text(c, "characteristic", i),
            title: text(c, "title", i),
            limits: text(c, "limits", i),
            value: c.float("value", i),
            level: text(c, "level", i),
            low_below: c.float("low_below", i),
            high_from: c.float("high_from", i),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct PredictionFacts {
    pub verdict: String,
    pub confidence: Option<f64>,
    pub source: String,
    pub node: Option<String>,
    pub window: Option<(DateTime<Utc>, DateTime<Utc>)>,
    pub windows: i64,
    pub anomalous_windows: i64,
    /// Windows unlike the healthy jobs the models saw, that they could not name.
    pub unknown_windows: i64,
    pub model_verdict: Option<String>,
    pub model_confidence: Option<f64>,
    pub anomaly_score: Option<f64>,
    pub agreeing_rules: String,
    pub reason: String,
}

/// Everything about the jobs of a scope.
#[derive(Debug, Default)]
pub struct Facts {
    pub jobs: Vec<JobFacts>,
    pub summaries: HashMap<String, SummaryFacts>,
    /// The rows of `findings`, as the rules stage wrote them (a window only with both ends).
    pub findings: HashMap<String, Vec<FindingRow>>,
    pub classes: HashMap<String, Vec<(String, String)>>,
    pub thresholds: HashMap<String, Vec<ThresholdFacts>>,
    pub predictions: HashMap<String, Vec<PredictionFacts>>,
    pub telemetry: HashMap<String, Series>,
    /// The job's mean per metric (`features_job`).
    pub means: HashMap<String, BTreeMap<String, f64>>,
    /// A job's CPU and memory on each of its nodes, by job id and node ([`PER_NODE_METRICS`]).
    pub per_node: HashMap<String, BTreeMap<String, NodeFacts>>,
    /// The Slurm workflow run each job is a step of ([`slurm_runs`](super::slurm_runs)), by job
    /// id.
    pub workflows: HashMap<String, String>,
}

/// A finding's or a verdict's time window, when the row has both ends.
fn window(c: &Columns, i: usize) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    Some((c.time("window_start", i)?, c.time("window_end", i)?))
}

/// The day a job ended on (its last record when a requeue gave it several), if it is stored.
pub async fn day_of(ctx: &SessionContext, job_id: &str) -> Result<Option<NaiveDate>, QueryError> {
    let sql = format!(
        "SELECT day FROM jobs WHERE job_id = {} ORDER BY day DESC LIMIT 1",
        literal(job_id)
    );
    let mut day = None;
    each_row(ctx, &sql, |c, i| {
        day = c.text("day", i).and_then(|d| d.parse().ok());
    })
    .await?;
    Ok(day)
}

/// The `job_summary` rows of `scope`, by job id.
async fn summaries(
    ctx: &SessionContext,
    scope: &Scope,
) -> Result<HashMap<String, SummaryFacts>, QueryError> {
    // Of a requeued job's runs, the last run's row is kept (the last one read).
    let sql = format!(
        "SELECT * FROM job_summary s WHERE {} ORDER BY s.restart_count NULLS FIRST",
        scope.filter("s")
    );
    let mut summaries = HashMap::new();
    each_row(ctx, &sql, |c, i| {
        summaries.insert(
            text(c, "job_id", i),
            SummaryFacts {
                judgeable: c.boolean("judgeable", i).unwrap_or(false),
                not_judgeable_reason: text(c, "not_judgeable_reason", i),
                coverage_mean: c.float("coverage_mean", i),
                nodes_missing: text(c, "nodes_missing", i),
                duty_cycle: text(c, "duty_cycle", i),
                cpu_used_cores: c.float("cpu_used_cores", i),
                cpu_eff: c.float("cpu_eff", i),
                mem_used_max_mb: c.float("mem_used_max_mb", i),
                mem_eff: c.float("mem_eff", i),
                time_eff: c.float("time_eff", i),
                gpu_util: c.float("gpu_util", i),
                wasted_core_hours: c.float("wasted_core_hours", i),
                cpu_eff_source: text(c, "cpu_eff_source", i),
                mem_source: text(c, "mem_source", i),
                shared: c.boolean("shared", i),
                gpu_source: text(c, "gpu_source", i),
                energy_kwh: c.float("energy_kwh", i),
                energy_source: text(c, "energy_source", i),
                energy_share: c.float("energy_share", i),
                gpu_mem_used_max_mb: c.float("gpu_mem_used_max_mb", i),
                gpu_mem_total_mb: c.float("gpu_mem_total_mb", i),
            },
        );
    })
    .await?;
    Ok(summaries)
}

/// The jobs of `scope` and every table's rows about them.
pub async fn facts(ctx: &SessionContext, scope: &Scope) -> Result<Facts, QueryError> {
    let mut f = Facts::default();
    let sql = format!(
        "SELECT j.*, CAST(j.day AS VARCHAR) AS day_text FROM jobs j WHERE {} ORDER BY j.\"end\", j.job_id",
        scope.filter("j")
    );
    each_row(ctx, &sql, |c, i| {
        f.jobs.push(JobFacts {
            job_id: text(c, "job_id", i),
            restart_count: c.run("restart_count", i),
            day: text(c, "day_text", i),
            cluster: text(c, "cluster", i),
            user: text(c, "user", i),
            account: text(c, "account", i),
            partition: text(c, "partition", i),
            qos: text(c, "qos", i),
            name: text(c, "name", i),
            nodes: text(c, "nodes", i),
            num_nodes: c.int("num_nodes", i).unwrap_or(0),
            cpus: c.int("cpus", i).unwrap_or(0),
            gpus: c.int("gpus", i).unwrap_or(0),
            req_mem_mb: c.int("req_mem_mb", i),
            time_limit_s: c.int("time_limit_s", i),
            submit: c.time("submit", i),
            start: c.time("start", i),
            end: c.time("end", i),
            state: text(c, "state", i),
            exit_code: c.int("exit_code", i),
            exit_signal: c.int("exit_signal", i),
            elapsed_s: c.int("elapsed_s", i),
            wait_s: c.int("wait_s", i),
            core_hours: c.float("core_hours", i),
            acct_gpu_util_max_pct: c.float("acct_gpu_util_max_pct", i),
            acct_gpu_mem_max_mb: c.float("acct_gpu_mem_max_mb", i),
            note: text(c, "note", i),
        });
    })
    .await?;
    f.summaries = summaries(ctx, scope).await?;
    let sql = format!(
        "SELECT * FROM findings x WHERE {} ORDER BY x.job_id, x.rule, x.node",
        scope.filter("x")
    );
    each_row(ctx, &sql, |c, i| {
        f.findings.entry(text(c, "job_id", i)).or_default().push({
            let window = window(c, i);
            FindingRow {
                job_id: text(c, "job_id", i),
                restart_count: c.run("restart_count", i),
                rule: text(c, "rule", i),
                title: text(c, "title", i),
                group: text(c, "group", i),
                method_group: c.int("method_group", i).and_then(|g| u8::try_from(g).ok()),
                severity: text(c, "severity", i),
                node: c.text("node", i).filter(|n| !n.is_empty()),
                window_start: window.map(|w| w.0),
                window_end: window.map(|w| w.1),
                message: text(c, "message", i),
                why: text(c, "why", i),
                fix: text(c, "fix", i),
                tools: text(c, "tools", i),
                evidence: text(c, "evidence", i),
                rules_version: text(c, "rules_version", i),
            }
        });
    })
    .await?;
    let sql = format!(
        "SELECT * FROM classes x WHERE {} ORDER BY x.job_id, x.class",
        scope.last_run("x")
    );
    each_row(ctx, &sql, |c, i| {
        f.classes
            .entry(text(c, "job_id", i))
            .or_default()
            .push((text(c, "class", i), text(c, "name", i)));
    })
    .await?;
    let sql = format!("SELECT * FROM thresholds x WHERE {}", scope.last_run("x"));
    each_row(ctx, &sql, |c, i| {
        let row = ThresholdFacts::read(c, i);
        f.thresholds
            .entry(text(c, "job_id", i))
            .or_default()
            .push(row);
    })
    .await?;
    let sql = format!(
        "SELECT * FROM predictions x WHERE {} ORDER BY x.job_id, x.node",
        scope.last_run("x")
    );
    each_row(ctx, &sql, |c, i| {
        f.predictions
            .entry(text(c, "job_id", i))
            .or_default()
            .push(PredictionFacts {
                verdict: text(c, "verdict", i),
                confidence: c.float("confidence", i),
                source: text(c, "source", i),
                node: c.text("node", i).filter(|n| !n.is_empty()),
                window: window(c, i),
                windows: c.int("windows", i).unwrap_or(0),
                anomalous_windows: c.int("anomalous_windows", i).unwrap_or(0),
                unknown_windows: c.int("unknown_windows", i).unwrap_or(0),
                model_verdict: c.text("model_verdict", i),
                model_confidence: c.float("model_confidence", i),
                anomaly_score: c.float("anomaly_score", i),
                agreeing_rules: text(c, "agreeing_rules", i),
                reason: text(c, "reason", i),
            });
    })
    .await?;
    let sql = format!(
        "SELECT job_id, metric, mean FROM features_job x WHERE {}",
        scope.last_run("x")
    );
    each_row(ctx, &sql, |c, i| {
        if let Some(mean) = c.float("mean", i) {
            f.means
                .entry(text(c, "job_id", i))
                .or_default()
                .insert(text(c, "metric", i), mean);
        }
    })
    .await?;
    f.per_node = per_node(ctx, scope).await?;
    Ok(f)
}

/// Each job's [`PER_NODE_METRICS`] node by node (`features`), for the jobs of `scope` that ran on
/// several nodes: one node's figures are the job's own.
async fn per_node(
    ctx: &SessionContext,
    scope: &Scope,
) -> Result<HashMap<String, BTreeMap<String, NodeFacts>>, QueryError> {
    let mut per_node: HashMap<String, BTreeMap<String, NodeFacts>> = HashMap::new();
    let metrics: Vec<String> = PER_NODE_METRICS.iter().map(|m| format!("'{m}'")).collect();
    let sql = format!(
        "SELECT x.job_id, x.node, x.metric, x.mean, x.max FROM features x WHERE {} AND x.metric IN ({}) \
         AND x.job_id IN (SELECT j.job_id FROM jobs j WHERE {} AND j.num_nodes > 1)",
        scope.last_run("x"),
        metrics.join(", "),
        scope.filter("j")
    );
    each_row(ctx, &sql, |c, i| {
        per_node
            .entry(text(c, "job_id", i))
            .or_default()
            .entry(text(c, "node", i))
            .or_default()
            .figures
            .insert(
                text(c, "metric", i),
                (c.float("mean", i), c.float("max", i)),
            );
    })
    .await?;
    Ok(per_node)
}
