//! What the pages show, read from the warehouse with SQL over one DataFusion session: a day's
//! (or one job's) rows of `jobs`, `job_summary`, `findings`, `classes`, `thresholds` and
//! `predictions`, its telemetry averaged into at most [`POINTS`] bins per series (one scan of the
//! day's telemetry, however many jobs), the healthy references, and the history of users.
//!
//! Every value is read as the table holds it; the pages clean and escape it. Job ids and dates
//! reach SQL only as quoted literals ([`literal`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, NaiveDate, Utc};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::SessionContext;

use jobsight_warehouse::query::{Columns, QueryError};
pub use jobsight_warehouse::query::{collect as rows, literal};

/// Points per telemetry series on a chart: enough to see a phase, few enough for a small page.
pub const POINTS: i64 = 120;
/// How far back a healthy reference and a user's history are looked for.
pub const HISTORY_DAYS: u64 = 30;

/// Calls `each` with every row of `sql`'s result, batch by batch as the query makes them (for
/// results too big to hold twice).
async fn each_row_streamed(
    ctx: &SessionContext,
    sql: &str,
    mut each: impl FnMut(&Columns, usize),
) -> Result<(), QueryError> {
    use futures::StreamExt;
    let mut stream = ctx
        .sql(sql)
        .await
        .map_err(QueryError::Query)?
        .execute_stream()
        .await
        .map_err(QueryError::Query)?;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(QueryError::Query)?;
        let c = Columns::of(&batch)?;
        for i in 0..batch.num_rows() {
            each(&c, i);
        }
    }
    Ok(())
}

/// Calls `each` with every row of `sql`'s result.
async fn each_row(
    ctx: &SessionContext,
    sql: &str,
    mut each: impl FnMut(&Columns, usize),
) -> Result<(), QueryError> {
    for batch in rows(ctx, sql).await? {
        let c = Columns::of(&batch)?;
        for i in 0..batch.num_rows() {
            each(&c, i);
        }
    }
    Ok(())
}

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
}

/// One job's accounting, as the `jobs` view has it.
#[derive(Debug, Clone, Default)]
pub struct JobFacts {
    pub job_id: String,
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
}

#[derive(Debug, Clone, Default)]
pub struct FindingFacts {
    pub rule: String,
    pub title: String,
    pub group: String,
    pub severity: String,
    pub node: Option<String>,
    pub window: Option<(DateTime<Utc>, DateTime<Utc>)>,
    pub message: String,
    pub why: String,
    pub fix: String,
    pub tools: String,
    pub evidence: String,
}

#[derive(Debug, Clone, Default)]
pub struct ThresholdFacts {
    pub characteristic: String,
    pub title: String,
    pub value: Option<f64>,
    pub level: String,
    pub low_below: Option<f64>,
    pub high_from: Option<f64>,
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
    pub model_verdict: Option<String>,
    pub model_confidence: Option<f64>,
    pub anomaly_score: Option<f64>,
    pub agreeing_rules: String,
    pub reason: String,
}

/// A series averaged into bins: node → metric → (hours since the job's start, mean value).
pub type Series = BTreeMap<String, BTreeMap<String, Vec<(f64, f64)>>>;

/// Everything about the jobs of a scope.
#[derive(Debug, Default)]
pub struct Facts {
    pub jobs: Vec<JobFacts>,
    pub summaries: HashMap<String, SummaryFacts>,
    pub findings: HashMap<String, Vec<FindingFacts>>,
    pub classes: HashMap<String, Vec<(String, String)>>,
    pub thresholds: HashMap<String, Vec<ThresholdFacts>>,
    pub predictions: HashMap<String, Vec<PredictionFacts>>,
    pub telemetry: HashMap<String, Series>,
    /// The job's mean per metric (`features_job`).
    pub means: HashMap<String, BTreeMap<String, f64>>,
    /// The Slurm workflow run each job is a step of ([`slurm_runs`]), by job id.
    pub workflows: HashMap<String, String>,
}

/// The workflow runs a day's pages show: the Slurm run each of the day's jobs is a step of (runs
/// that ended in the [`RUN_LOOK_AHEAD_DAYS`] days from `day`), and every run that ended on `day`.
/// Call only when `workflows` and `workflow_tasks` exist.
pub async fn slurm_runs(
    ctx: &SessionContext,
    day: NaiveDate,
) -> Result<(HashMap<String, String>, Vec<String>), QueryError> {
    let last = day
        .checked_add_days(chrono::Days::new(RUN_LOOK_AHEAD_DAYS))
        .unwrap_or(day);
    let mut steps = HashMap::new();
    let sql = format!(
        "SELECT t.task_id, t.workflow_id FROM workflow_tasks t \
         JOIN workflows w ON w.workflow_id = t.workflow_id AND w.day = t.day \
         WHERE w.source = 'slurm' AND t.day >= '{day}' AND t.day <= '{last}'"
    );
    each_row(ctx, &sql, |c, i| {
        steps.insert(text(c, "task_id", i), text(c, "workflow_id", i));
    })
    .await?;
    let mut ended = Vec::new();
    let sql = format!("SELECT workflow_id FROM workflows WHERE day = '{day}' ORDER BY workflow_id");
    each_row(ctx, &sql, |c, i| ended.push(text(c, "workflow_id", i))).await?;
    Ok((steps, ended))
}

/// Every workflow run's id.
pub async fn workflow_ids(ctx: &SessionContext) -> Result<Vec<String>, QueryError> {
    let mut ids = Vec::new();
    each_row(ctx, "SELECT DISTINCT workflow_id FROM workflows", |c, i| {
        ids.push(text(c, "workflow_id", i))
    })
    .await?;
    Ok(ids)
}

/// Days after a job's day in which the workflow run it is a step of may end (as the rules read
/// them).
pub const RUN_LOOK_AHEAD_DAYS: u64 = 8;

fn text(c: &Columns, name: &str, i: usize) -> String {
    c.text(name, i).unwrap_or_default()
}

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
        });
    })
    .await?;
    let sql = format!("SELECT * FROM job_summary s WHERE {}", scope.filter("s"));
    each_row(ctx, &sql, |c, i| {
        f.summaries.insert(
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
            },
        );
    })
    .await?;
    let sql = format!(
        "SELECT * FROM findings x WHERE {} ORDER BY x.job_id, x.rule, x.node",
        scope.filter("x")
    );
    each_row(ctx, &sql, |c, i| {
        f.findings
            .entry(text(c, "job_id", i))
            .or_default()
            .push(FindingFacts {
                rule: text(c, "rule", i),
                title: text(c, "title", i),
                group: text(c, "group", i),
                severity: text(c, "severity", i),
                node: c.text("node", i).filter(|n| !n.is_empty()),
                window: window(c, i),
                message: text(c, "message", i),
                why: text(c, "why", i),
                fix: text(c, "fix", i),
                tools: text(c, "tools", i),
                evidence: text(c, "evidence", i),
            });
    })
    .await?;
    let sql = format!(
        "SELECT * FROM classes x WHERE {} ORDER BY x.job_id, x.class",
        scope.filter("x")
    );
    each_row(ctx, &sql, |c, i| {
        f.classes
            .entry(text(c, "job_id", i))
            .or_default()
            .push((text(c, "class", i), text(c, "name", i)));
    })
    .await?;
    let sql = format!("SELECT * FROM thresholds x WHERE {}", scope.filter("x"));
    each_row(ctx, &sql, |c, i| {
        f.thresholds
            .entry(text(c, "job_id", i))
            .or_default()
            .push(ThresholdFacts {
                characteristic: text(c, "characteristic", i),
                title: text(c, "title", i),
                value: c.float("value", i),
                level: text(c, "level", i),
                low_below: c.float("low_below", i),
                high_from: c.float("high_from", i),
            });
    })
    .await?;
    let sql = format!(
        "SELECT * FROM predictions x WHERE {} ORDER BY x.job_id, x.node",
        scope.filter("x")
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
        scope.filter("x")
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
    Ok(f)
}

/// Which telemetry a page run loads, per day: job id → the metrics wanted (`None`: every metric
/// the job has). A page charts a few metrics of the ~50 a node reports, so loading only those is
/// what keeps the report step's memory small on a busy day ([`telemetry`]).
pub type Wanted = BTreeMap<String, Option<BTreeSet<String>>>;

/// Adds `metrics` of `job` to `wanted` (`None`, every metric, absorbs any list).
pub fn want(wanted: &mut Wanted, job: &str, metrics: Option<&[String]>) {
    match (wanted.get_mut(job), metrics) {
        (Some(None), _) => {}
        (Some(slot), None) => *slot = None,
        (Some(Some(have)), Some(more)) => have.extend(more.iter().cloned()),
        (None, metrics) => {
            wanted.insert(
                job.to_string(),
                metrics.map(|m| m.iter().cloned().collect()),
            );
        }
    }
}

/// Jobs at most this many are also named in the telemetry query's filter, so that one job's
/// page (`jobsight report job`) lets the Parquet reader skip what is not the job's.
const NAMED_JOBS: usize = 64;

/// The telemetry `wanted` of `day`'s jobs, averaged per job, node and metric into [`POINTS`]
/// bins of each job's own run. One scan of the day's telemetry per kind of want (a list of
/// metrics, every metric), however many jobs: the wanted (job, metric) pairs are a small
/// in-memory table the samples are joined with, on telemetry's own dictionary columns.
///
/// Measured on a 1,000-node day (2,515 jobs, 320 M samples): loading every metric made 37.6 M
/// bins, 39 s and 4.9 GiB in this query alone; the pages' six metrics per job are about one
/// eighth of that. The points of each series are put in time order here, not by the query:
/// sorting tens of millions of bins took DataFusion's whole 4 GB pool.
pub async fn telemetry(
    ctx: &SessionContext,
    day: NaiveDate,
    wanted: &Wanted,
) -> Result<HashMap<String, Series>, QueryError> {
    let mut out: HashMap<String, Series> = HashMap::new();
    let pairs: Vec<(&str, &str)> = wanted
        .iter()
        .filter_map(|(job, metrics)| metrics.as_ref().map(|m| (job, m)))
        .flat_map(|(job, metrics)| metrics.iter().map(move |m| (job.as_str(), m.as_str())))
        .collect();
    let whole: Vec<(&str, &str)> = wanted
        .iter()
        .filter(|(_, metrics)| metrics.is_none())
        .map(|(job, _)| (job.as_str(), ""))
        .collect();
    for (list, by_metric) in [(pairs, true), (whole, false)] {
        if list.is_empty() {
            continue;
        }
        let named: Vec<String> = {
            let mut jobs: Vec<&str> = list.iter().map(|(job, _)| *job).collect();
            jobs.dedup();
            if jobs.len() <= NAMED_JOBS {
                jobs.into_iter().map(literal).collect()
            } else {
                Vec::new()
            }
        };
        let table = "report_wanted_telemetry";
        ctx.register_batch(table, wanted_batch(&list)?)
            .map_err(QueryError::Query)?;
        let sql = format!(
            "WITH j AS (\
               SELECT arrow_cast(j.job_id, 'Dictionary(Int32, Utf8)') AS job_key, \
               arrow_cast(w.metric, 'Dictionary(Int32, Utf8)') AS metric_key, \
               CAST(j.start AS BIGINT) AS start_us, \
               greatest(CAST(j.elapsed_s AS DOUBLE) * 1000000 / {POINTS}, 1000000.0) AS bin_us \
               FROM jobs j JOIN {table} w ON w.job_id = j.job_id \
               WHERE j.day = '{day}' AND j.start IS NOT NULL), \
             b AS (\
               SELECT t.job_id, t.node, t.metric, \
               floor((CAST(t.ts AS BIGINT) - j.start_us) / j.bin_us) AS bin, \
               min(j.bin_us) AS bin_us, avg(t.value) AS value \
               FROM telemetry t JOIN j ON t.job_id = j.job_key{metric_join} \
               WHERE t.day = '{day}' AND isnan(t.value) = false{named} \
               GROUP BY t.job_id, t.node, t.metric, 4) \
             SELECT CAST(job_id AS VARCHAR) AS job_id, CAST(node AS VARCHAR) AS node, \
             CAST(metric AS VARCHAR) AS metric, bin, bin_us, value FROM b",
            metric_join = if by_metric {
                " AND t.metric = j.metric_key"
            } else {
                ""
            },
            named = if named.is_empty() {
                String::new()
            } else {
                format!(" AND CAST(t.job_id AS VARCHAR) IN ({})", named.join(", "))
            },
        );
        let loaded = each_row_streamed(ctx, &sql, |c, i| {
            let (Some(bin), Some(width), Some(value)) =
                (c.float("bin", i), c.float("bin_us", i), c.float("value", i))
            else {
                return;
            };
            let hours = (bin + 0.5) * width / 3.6e9;
            if hours < 0.0 {
                return;
            }
            out.entry(text(c, "job_id", i))
                .or_default()
                .entry(text(c, "node", i))
                .or_default()
                .entry(text(c, "metric", i))
                .or_default()
                .push((hours, value));
        })
        .await;
        ctx.deregister_table(table).map_err(QueryError::Query)?;
        loaded?;
    }
    for points in out
        .values_mut()
        .flat_map(|nodes| nodes.values_mut())
        .flat_map(|m| m.values_mut())
    {
        // By value too: a requeued job's two runs of a day share bins, and the page must not
        // depend on the order the query returned them in.
        points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    }
    Ok(out)
}

/// The (job id, metric) pairs of a [`telemetry`] query as a batch.
fn wanted_batch(pairs: &[(&str, &str)]) -> Result<RecordBatch, QueryError> {
    use datafusion::arrow::array::StringArray;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    let schema = Schema::new(vec![
        Field::new("job_id", DataType::Utf8, false),
        Field::new("metric", DataType::Utf8, false),
    ]);
    RecordBatch::try_new(
        std::sync::Arc::new(schema),
        vec![
            std::sync::Arc::new(StringArray::from_iter_values(pairs.iter().map(|p| p.0))),
            std::sync::Arc::new(StringArray::from_iter_values(pairs.iter().map(|p| p.1))),
        ],
    )
    .map_err(|e| QueryError::Render(e.to_string()))
}

/// A job that ran without findings and that the models (if any) called healthy, usable as a
/// reference for the same user's runs of the same job name.
#[derive(Debug, Clone)]
pub struct HealthyRun {
    pub job_id: String,
    pub day: NaiveDate,
    pub user: String,
    pub name: String,
}

/// Healthy runs of the [`HISTORY_DAYS`] up to `day`, newest first; and the cluster's healthy
/// band of each metric's job mean (10th to 90th percentile over those runs).
pub async fn healthy(
    ctx: &SessionContext,
    day: NaiveDate,
) -> Result<(Vec<HealthyRun>, BTreeMap<String, (f64, f64)>), QueryError> {
    let from = day - chrono::Days::new(HISTORY_DAYS);
    let healthy = format!(
        "SELECT j.job_id, j.day, j.\"user\", j.name, j.\"end\" FROM jobs j \
         JOIN job_summary s ON s.job_id = j.job_id AND s.day = j.day \
         LEFT JOIN (SELECT job_id, day, count(*) AS n FROM findings GROUP BY 1, 2) x \
           ON x.job_id = j.job_id AND x.day = j.day \
         LEFT JOIN (SELECT job_id, day, \
             max(CASE WHEN verdict = 'healthy' THEN 0 ELSE 1 END) AS bad FROM predictions GROUP BY 1, 2) p \
           ON p.job_id = j.job_id AND p.day = j.day \
         WHERE j.day >= '{from}' AND j.day <= '{day}' AND s.judgeable \
           AND coalesce(x.n, 0) = 0 AND coalesce(p.bad, 0) = 0"
    );
    let mut runs = Vec::new();
    each_row(
        ctx,
        &format!("{healthy} ORDER BY j.\"end\" DESC, j.job_id"),
        |c, i| {
            if let Some(day) = c.text("day", i).and_then(|d| d.parse().ok()) {
                runs.push(HealthyRun {
                    job_id: text(c, "job_id", i),
                    day,
                    user: text(c, "user", i),
                    name: text(c, "name", i),
                });
            }
        },
    )
    .await?;
    let sql = format!(
        "SELECT f.metric, \
         approx_percentile_cont(0.1) WITHIN GROUP (ORDER BY f.mean) AS lo, \
         approx_percentile_cont(0.9) WITHIN GROUP (ORDER BY f.mean) AS hi \
         FROM features_job f JOIN ({healthy}) h ON h.job_id = f.job_id AND h.day = f.day \
         GROUP BY f.metric"
    );
    let mut band = BTreeMap::new();
    each_row(ctx, &sql, |c, i| {
        if let (Some(lo), Some(hi)) = (c.float("lo", i), c.float("hi", i)) {
            band.insert(text(c, "metric", i), (lo, hi));
        }
    })
    .await?;
    Ok((runs, band))
}

/// A user's jobs of the [`HISTORY_DAYS`] up to `day`: per day, jobs, jobs with findings, and CPU
/// efficiency weighted by core-hours; and their findings by rule.
#[derive(Debug, Clone, Default)]
pub struct UserHistory {
    /// (day, jobs, flagged jobs, CPU efficiency).
    pub days: Vec<(String, i64, i64, Option<f64>)>,
    /// (rule title, times, last day).
    pub repeating: Vec<(String, i64, String)>,
    /// (period, kind, status, sent at): what the emails already said.
    pub emails: Vec<(String, String, String, String)>,
    /// The user's latest jobs, newest first (at most [`RECENT_JOBS`]).
    pub recent: Vec<RecentJob>,
}

/// Jobs listed on a user's page.
pub const RECENT_JOBS: usize = 50;

/// One of a user's recent jobs, as their page lists it.
#[derive(Debug, Clone, Default)]
pub struct RecentJob {
    pub job_id: String,
    pub day: String,
    pub name: String,
    pub state: String,
    pub elapsed_s: Option<i64>,
    pub cpu_eff: Option<f64>,
    pub mem_eff: Option<f64>,
    pub findings: i64,
    /// The models' and rules' verdict: the first that is not healthy, else healthy.
    pub verdict: Option<String>,
}

pub async fn user_histories(
    ctx: &SessionContext,
    day: NaiveDate,
) -> Result<HashMap<(String, String), UserHistory>, QueryError> {
    let from = day - chrono::Days::new(HISTORY_DAYS);
    let range = |alias: &str| format!("{alias}day >= '{from}' AND {alias}day <= '{day}'");
    let mut out: HashMap<(String, String), UserHistory> = HashMap::new();
    let sql = format!(
        "SELECT j.cluster, j.\"user\", j.day, count(*) AS jobs, \
         sum(CASE WHEN x.n > 0 THEN 1 ELSE 0 END) AS flagged, \
         sum(s.cpu_eff * j.core_hours) / sum(CASE WHEN s.cpu_eff IS NOT NULL THEN j.core_hours END) AS eff \
         FROM jobs j LEFT JOIN job_summary s ON s.job_id = j.job_id AND s.day = j.day AND s.judgeable \
         LEFT JOIN (SELECT job_id, day, count(*) AS n FROM findings WHERE {} GROUP BY 1, 2) x \
           ON x.job_id = j.job_id AND x.day = j.day \
         WHERE {} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        range(""),
        range("j.")
    );
    each_row(ctx, &sql, |c, i| {
        out.entry((text(c, "cluster", i), text(c, "user", i)))
            .or_default()
            .days
            .push((
                text(c, "day", i),
                c.int("jobs", i).unwrap_or(0),
                c.int("flagged", i).unwrap_or(0),
                c.float("eff", i),
            ));
    })
    .await?;
    let sql = format!(
        "SELECT j.cluster, j.\"user\", f.title, count(*) AS n, max(f.day) AS last \
         FROM findings f JOIN jobs j ON j.job_id = f.job_id AND j.day = f.day \
         WHERE {} GROUP BY 1, 2, 3 ORDER BY 1, 2, n DESC, 3",
        range("f.")
    );
    each_row(ctx, &sql, |c, i| {
        out.entry((text(c, "cluster", i), text(c, "user", i)))
            .or_default()
            .repeating
            .push((
                text(c, "title", i),
                c.int("n", i).unwrap_or(0),
                text(c, "last", i),
            ));
    })
    .await?;
    let sql = format!(
        "SELECT j.cluster, j.\"user\", j.job_id, j.day, j.name, j.state, j.elapsed_s, \
         s.cpu_eff, s.mem_eff, coalesce(x.n, 0) AS findings, p.verdict \
         FROM jobs j LEFT JOIN job_summary s ON s.job_id = j.job_id AND s.day = j.day AND s.judgeable \
         LEFT JOIN (SELECT job_id, day, count(*) AS n FROM findings WHERE {} GROUP BY 1, 2) x \
           ON x.job_id = j.job_id AND x.day = j.day \
         LEFT JOIN (SELECT job_id, day, \
             coalesce(max(CASE WHEN verdict <> 'healthy' THEN verdict END), max(verdict)) AS verdict \
             FROM predictions WHERE {} GROUP BY 1, 2) p ON p.job_id = j.job_id AND p.day = j.day \
         WHERE {} ORDER BY j.\"end\" DESC, j.job_id",
        range(""),
        range(""),
        range("j.")
    );
    each_row(ctx, &sql, |c, i| {
        let history = out
            .entry((text(c, "cluster", i), text(c, "user", i)))
            .or_default();
        if history.recent.len() < RECENT_JOBS {
            history.recent.push(RecentJob {
                job_id: text(c, "job_id", i),
                day: text(c, "day", i),
                name: text(c, "name", i),
                state: text(c, "state", i),
                elapsed_s: c.int("elapsed_s", i),
                cpu_eff: c.float("cpu_eff", i),
                mem_eff: c.float("mem_eff", i),
                findings: c.int("findings", i).unwrap_or(0),
                verdict: c.text("verdict", i),
            });
        }
    })
    .await?;
    // The ledger has no cluster: a user's emails show on their page of every cluster. One row
    // per message (the ledger has one per job and finding it reported).
    let sql = format!(
        "SELECT \"user\", key, min(period) AS period, min(kind) AS kind, min(status) AS status, \
         max(sent_at) AS sent_at FROM notifications \
         WHERE {} AND \"user\" IS NOT NULL GROUP BY 1, 2 \
         ORDER BY sent_at DESC NULLS LAST, period DESC, key",
        range("")
    );
    let mut emails: HashMap<String, Vec<(String, String, String, String)>> = HashMap::new();
    each_row(ctx, &sql, |c, i| {
        let list = emails.entry(text(c, "user", i)).or_default();
        if list.len() < 20 {
            list.push((
                text(c, "period", i),
                text(c, "kind", i),
                text(c, "status", i),
                c.time("sent_at", i)
                    .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
                    .unwrap_or_else(|| "-".into()),
            ));
        }
    })
    .await?;
    for ((_, user), history) in out.iter_mut() {
        if let Some(list) = emails.get(user) {
            history.emails = list.clone();
        }
    }
    Ok(out)
}

/// A workflow run for its page (`workflows`, `workflow_tasks`, and `workflow_scores` when the
/// run was scored).
#[derive(Debug, Clone, Default)]
pub struct WorkflowFacts {
    pub workflow_id: String,
    pub workflow: String,
    pub label: Option<String>,
    pub start: Option<DateTime<Utc>>,
    pub end: Option<DateTime<Utc>>,
    pub makespan_s: Option<f64>,
    pub critical_path_s: Option<f64>,
    /// In the order of their first time (ready, else submitted, else started).
    pub tasks: Vec<WorkflowTaskFacts>,
}

/// One task: its times in seconds since the epoch.
#[derive(Debug, Clone, Default)]
pub struct WorkflowTaskFacts {
    pub task_id: String,
    pub host: Option<String>,
    pub label: Option<String>,
    pub ready: Option<f64>,
    pub submit: Option<f64>,
    pub execute_start: Option<f64>,
    pub execute_end: Option<f64>,
    pub end: Option<f64>,
    pub critical: bool,
    pub score: Option<f64>,
    pub flagged: bool,
}

/// One workflow run, if it is stored; `scored` says whether `workflow_scores` exists.
pub async fn workflow(
    ctx: &SessionContext,
    run: &str,
    scored: bool,
) -> Result<Option<WorkflowFacts>, QueryError> {
    let mut facts: Option<WorkflowFacts> = None;
    let sql = format!(
        "SELECT workflow_id, workflow, label, start, \"end\", makespan_s, critical_path_s
         FROM workflows WHERE workflow_id = {} LIMIT 1",
        literal(run)
    );
    each_row(ctx, &sql, |c, i| {
        facts = Some(WorkflowFacts {
            workflow_id: text(c, "workflow_id", i),
            workflow: text(c, "workflow", i),
            label: c.text("label", i),
            start: c.time("start", i),
            end: c.time("end", i),
            makespan_s: c.float("makespan_s", i),
            critical_path_s: c.float("critical_path_s", i),
            tasks: Vec::new(),
        });
    })
    .await?;
    let Some(mut facts) = facts else {
        return Ok(None);
    };
    let epoch = |column: &str| format!("date_part('epoch', t.\"{column}\") AS {column}_s");
    let (score_columns, score_join) = if scored {
        (
            "s.score, s.flagged",
            "LEFT JOIN workflow_scores s ON s.workflow_id = t.workflow_id AND s.task_id = t.task_id",
        )
    } else {
        (
            "CAST(NULL AS DOUBLE) AS score, CAST(NULL AS BOOLEAN) AS flagged",
            "",
        )
    };
    let sql = format!(
        "SELECT t.task_id, t.host, t.label, {}, {}, {}, {}, {}, t.on_critical_path, {score_columns}
         FROM workflow_tasks t {score_join} WHERE t.workflow_id = {}
         ORDER BY coalesce(t.ready, t.submit, t.execute_start), t.task_id",
        epoch("ready"),
        epoch("submit"),
        epoch("execute_start"),
        epoch("execute_end"),
        epoch("end"),
        literal(run)
    );
    each_row(ctx, &sql, |c, i| {
        facts.tasks.push(WorkflowTaskFacts {
            task_id: text(c, "task_id", i),
            host: c.text("host", i),
            label: c.text("label", i),
            ready: c.float("ready_s", i),
            submit: c.float("submit_s", i),
            execute_start: c.float("execute_start_s", i),
            execute_end: c.float("execute_end_s", i),
            end: c.float("end_s", i),
            critical: c.boolean("on_critical_path", i) == Some(true),
            score: c.float("score", i),
            flagged: c.boolean("flagged", i) == Some(true),
        });
    })
    .await?;
    Ok(Some(facts))
}
