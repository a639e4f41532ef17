//! A scope's jobs (a day's, or one job's) and every table's rows about them: `jobs`,
//! `job_summary`, `findings`, `classes`, `thresholds`, `predictions` and the means of
//! `features_job`, gathered into [`Facts`]; and the day a job is stored under.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, NaiveDate, Utc};
use datafusion::prelude::SessionContext;

use super::binned::Series;
use super::sql::{by_job, each_row, text};
use jobsight_warehouse::catalog::rows::{FindingRow, JobSummaryRow, PredictionRow, ThresholdRow};
use jobsight_warehouse::query::{QueryError, literal};

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

/// Everything about the jobs of a scope.
#[derive(Debug, Default)]
pub struct Facts {
    pub jobs: Vec<JobFacts>,
    /// The rows of each table as the stages wrote them (a finding's or verdict's window only
    /// with both ends, no empty node), by job id.
    pub summaries: HashMap<String, JobSummaryRow>,
    pub findings: HashMap<String, Vec<FindingRow>>,
    pub classes: HashMap<String, Vec<(String, String)>>,
    pub thresholds: HashMap<String, Vec<ThresholdRow>>,
    pub predictions: HashMap<String, Vec<PredictionRow>>,
    pub telemetry: HashMap<String, Series>,
    /// The job's mean per metric (`features_job`).
    pub means: HashMap<String, BTreeMap<String, f64>>,
    /// A job's CPU and memory on each of its nodes, by job id and node ([`PER_NODE_METRICS`]).
    pub per_node: HashMap<String, BTreeMap<String, NodeFacts>>,
    /// The Slurm workflow run each job is a step of ([`slurm_runs`](super::slurm_runs)), by job
    /// id.
    pub workflows: HashMap<String, String>,
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
) -> Result<HashMap<String, JobSummaryRow>, QueryError> {
    // Of a requeued job's runs, the last run's row is kept (the last one read).
    let sql = format!(
        "SELECT * FROM job_summary s WHERE {} ORDER BY s.restart_count NULLS FIRST",
        scope.filter("s")
    );
    let mut summaries = HashMap::new();
    each_row(ctx, &sql, |c, i| {
        let row = JobSummaryRow::read(c, i);
        summaries.insert(row.job_id.clone(), row);
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
    f.findings = by_job(ctx, &sql, |c, i| {
        let row = FindingRow::read(c, i);
        // A window only with both ends; no node when the rule named none.
        let window = row.window();
        FindingRow {
            node: row.node.clone().filter(|n| !n.is_empty()),
            window_start: window.map(|w| w.0),
            window_end: window.map(|w| w.1),
            ..row
        }
    })
    .await?;
    let sql = format!(
        "SELECT * FROM classes x WHERE {} ORDER BY x.job_id, x.class",
        scope.last_run("x")
    );
    f.classes = by_job(ctx, &sql, |c, i| (text(c, "class", i), text(c, "name", i))).await?;
    let sql = format!("SELECT * FROM thresholds x WHERE {}", scope.last_run("x"));
    f.thresholds = by_job(ctx, &sql, |c, i| ThresholdRow::read(c, i)).await?;
    let sql = format!(
        "SELECT * FROM predictions x WHERE {} ORDER BY x.job_id, x.node",
        scope.last_run("x")
    );
    f.predictions = by_job(ctx, &sql, |c, i| PredictionRow {
        node: c.text("node", i).filter(|n| !n.is_empty()),
        ..PredictionRow::read(c, i)
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
