//! The daily system report's figures of a cluster: the day's `summaries` summed by partition,
//! account and user and for the whole cluster, and the pipeline's `runs` of the day by DAG and
//! step. The rest of that page (the rules that fired most, the jobs that wasted most) is chosen
//! from the day's [`Facts`](super::Facts) by the page itself.

use chrono::NaiveDate;
use datafusion::prelude::SessionContext;

use super::sql::{each_row, text};
use jobsight_warehouse::query::{QueryError, literal};

/// One value of a key (a partition, an account, a user, the cluster) and the day's `summaries`
/// rows of it summed: efficiencies weighted by the core-hours they cover.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummedRow {
    /// The key's value as stored (a page cleans it to show it, and names a page file after it).
    pub name: String,
    pub jobs: i64,
    pub judged: i64,
    pub flagged: i64,
    pub core_hours: Option<f64>,
    pub cpu_eff: Option<f64>,
    pub mem_eff: Option<f64>,
    pub idle_core_hours: Option<f64>,
    pub waste_kwh: Option<f64>,
    pub waste_cost: Option<f64>,
    pub currency: String,
    /// Measured energy (`summaries.energy_kwh`) and the core-hours of the jobs it was measured
    /// for.
    pub energy_kwh: Option<f64>,
    pub energy_core_hours: Option<f64>,
}

/// The pipeline's runs of one DAG's step on the day (`runs`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PipelineRun {
    pub dag: String,
    pub step: String,
    pub runs: i64,
    pub ok: i64,
    pub not_ok: i64,
    pub jobs: i64,
    /// The last error of the day's failed runs, if any.
    pub error: Option<String>,
}

/// A job whose label would teach the diagnosis most: of the week's jobs it judged and nobody
/// labelled, one it was least sure of (`predictions`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobToLabel {
    pub job_id: String,
    pub user: String,
    pub name: String,
    pub day: String,
    /// The model's verdict and its share of the trees' votes (the least sure of its nodes).
    pub verdict: String,
    pub confidence: Option<f64>,
    pub unknown_windows: i64,
    pub windows: i64,
}

/// Jobs the admins' report asks to label each day (over the last [`LABEL_WEEK_DAYS`] days).
pub const JOBS_TO_LABEL: usize = 5;
/// The days the jobs to label are chosen from, the report's day the last.
pub const LABEL_WEEK_DAYS: u64 = 7;

/// What a cluster's daily system report shows of `summaries` and `runs`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DayFacts {
    pub cluster: String,
    pub day: NaiveDate,
    /// By partition, in the partitions' order.
    pub partitions: Vec<SummedRow>,
    /// By account, in the accounts' order.
    pub accounts: Vec<SummedRow>,
    /// By user, in the users' order.
    pub users: Vec<SummedRow>,
    /// The whole cluster; none when the day has no summaries for it.
    pub totals: Option<SummedRow>,
    /// The day's runs by DAG and step.
    pub runs: Vec<PipelineRun>,
    /// The jobs of the week whose labels would teach the diagnosis most.
    pub to_label: Vec<JobToLabel>,
    /// How people judged each rule's findings on the served pages over the last
    /// [`HISTORY_DAYS`]: (rule, useful, wrong), the rules called wrong most first.
    pub feedback: Vec<(String, i64, i64)>,
}

/// The daily system report's figures of `cluster` on `day`.
pub async fn day_report(
    ctx: &SessionContext,
    cluster: &str,
    day: NaiveDate,
) -> Result<DayFacts, QueryError> {
    let partitions = summed_by(ctx, "\"partition\"", cluster, day).await?;
    let accounts = summed_by(ctx, "account", cluster, day).await?;
    let users = summed_by(ctx, "\"user\"", cluster, day).await?;
    let totals = summed_by(ctx, "cluster", cluster, day)
        .await?
        .into_iter()
        .next();
    let runs = pipeline_runs(ctx, day).await?;
    let to_label = jobs_to_label(ctx, cluster, day).await?;
    let feedback =
        super::list::rule_feedback(ctx, day - chrono::Days::new(super::HISTORY_DAYS)).await?;
    Ok(DayFacts {
        cluster: cluster.to_string(),
        day,
        partitions,
        accounts,
        users,
        totals,
        runs,
        to_label,
        feedback,
    })
}

/// Of the jobs of `cluster` the models judged in the week ending on `day` and nobody labelled,
/// the [`JOBS_TO_LABEL`] the diagnosis was least sure of (the smallest share of votes for its
/// verdict on any node, then the most windows it could not name): an uncertainty sample, the
/// labels that teach a model most for the fewest asked (ALBADross, CLUSTER 2022).
async fn jobs_to_label(
    ctx: &SessionContext,
    cluster: &str,
    day: NaiveDate,
) -> Result<Vec<JobToLabel>, QueryError> {
    let cl = literal(cluster);
    let from = day - chrono::Days::new(LABEL_WEEK_DAYS - 1);
    let same = jobsight_warehouse::catalog::same_run("p", "j");
    let sql = format!(
        "SELECT p.job_id, max(j.\"user\") AS owner, max(j.name) AS name, max(p.day) AS day, \
         min(p.model_confidence) AS confidence, sum(p.unknown_windows) AS unknown_windows, \
         sum(p.windows) AS windows, max(p.model_verdict) AS verdict \
         FROM predictions p JOIN jobs j ON {same} \
         WHERE p.day >= '{from}' AND p.day <= '{day}' AND j.cluster = {cl} \
         AND p.model_confidence IS NOT NULL \
         AND p.job_id NOT IN (SELECT job_id FROM labels) \
         GROUP BY p.job_id \
         ORDER BY confidence ASC, unknown_windows DESC, p.job_id LIMIT {JOBS_TO_LABEL}"
    );
    let mut jobs = Vec::new();
    each_row(ctx, &sql, |c, i| {
        jobs.push(JobToLabel {
            job_id: text(c, "job_id", i),
            user: text(c, "owner", i),
            name: text(c, "name", i),
            day: text(c, "day", i),
            verdict: text(c, "verdict", i),
            confidence: c.float("confidence", i),
            unknown_windows: c.int("unknown_windows", i).unwrap_or(0),
            windows: c.int("windows", i).unwrap_or(0),
        });
    })
    .await?;
    Ok(jobs)
}

/// The day's `summaries` of `cluster` summed by the column `key`: one row per value of it, in
/// its order.
async fn summed_by(
    ctx: &SessionContext,
    key: &str,
    cluster: &str,
    day: NaiveDate,
) -> Result<Vec<SummedRow>, QueryError> {
    let cl = literal(cluster);
    let sql = format!(
        "SELECT {key} AS name, sum(jobs) AS jobs, sum(core_hours) AS core_hours, \
         sum(cpu_eff * cpu_eff_core_hours) / sum(cpu_eff_core_hours) AS cpu_eff, \
         sum(mem_eff * mem_eff_core_hours) / sum(mem_eff_core_hours) AS mem_eff, \
         sum(idle_core_hours) AS idle_core_hours, sum(waste_kwh) AS waste_kwh, \
         sum(waste_cost) AS waste_cost, max(currency) AS currency, \
         sum(jobs_flagged) AS flagged, sum(judged_jobs) AS judged, \
         sum(energy_kwh) AS energy_kwh, \
         sum(energy_measured_share * core_hours) AS energy_core_hours \
         FROM summaries WHERE day = '{day}' AND cluster = {cl} \
         GROUP BY {key} ORDER BY {key}"
    );
    let mut rows = Vec::new();
    each_row(ctx, &sql, |c, i| {
        rows.push(SummedRow {
            name: text(c, "name", i),
            jobs: c.int("jobs", i).unwrap_or(0),
            judged: c.int("judged", i).unwrap_or(0),
            flagged: c.int("flagged", i).unwrap_or(0),
            core_hours: c.float("core_hours", i),
            cpu_eff: c.float("cpu_eff", i),
            mem_eff: c.float("mem_eff", i),
            idle_core_hours: c.float("idle_core_hours", i),
            waste_kwh: c.float("waste_kwh", i),
            waste_cost: c.float("waste_cost", i),
            currency: text(c, "currency", i),
            energy_kwh: c.float("energy_kwh", i),
            energy_core_hours: c.float("energy_core_hours", i),
        });
    })
    .await?;
    Ok(rows)
}

/// The pipeline's health: the day's runs by DAG and step.
async fn pipeline_runs(
    ctx: &SessionContext,
    day: NaiveDate,
) -> Result<Vec<PipelineRun>, QueryError> {
    let sql = format!(
        "SELECT dag, step, count(*) AS runs, \
         sum(CASE WHEN outcome = 'ok' THEN 1 ELSE 0 END) AS ok, \
         sum(CASE WHEN outcome <> 'ok' THEN 1 ELSE 0 END) AS not_ok, \
         sum(jobs) AS jobs, max(error) AS error \
         FROM runs WHERE day >= '{day}' AND day <= '{next}' GROUP BY dag, step ORDER BY dag, step",
        next = day + chrono::Days::new(1)
    );
    let mut runs = Vec::new();
    each_row(ctx, &sql, |c, i| {
        runs.push(PipelineRun {
            dag: text(c, "dag", i),
            step: text(c, "step", i),
            runs: c.int("runs", i).unwrap_or(0),
            ok: c.int("ok", i).unwrap_or(0),
            not_ok: c.int("not_ok", i).unwrap_or(0),
            jobs: c.int("jobs", i).unwrap_or(0),
            error: c.text("error", i),
        });
    })
    .await?;
    Ok(runs)
}
