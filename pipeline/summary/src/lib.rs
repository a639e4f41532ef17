//! System-wide efficiency summaries: what the cluster's jobs used, how well, and what was wasted,
//! per period × cluster × partition × account × user.
//!
//! Input: `jobs` (the view with core-hours and the other plain numbers, see [`jobsight_warehouse::query`]),
//! `job_summary` (efficiencies, where telemetry allowed them), `findings` and `predictions`.
//! Output: [`SummaryRow`]s, written by the nightly `summarize` step into the `summaries` table
//! (one part per day) and printed by `jobsight summary` for a day, week or month.
//!
//! Every figure is one SQL aggregate over the period's jobs ([`summary_sql`]), so the table, the
//! command and an admin's own query agree. How each is derived, and what it leaves out, is in
//! `docs/summaries.md`:
//! - usage: core-, node- and GPU-hours from the allocation and the elapsed time;
//! - efficiency: CPU and memory efficiency weighted by core-hours, GPU utilisation weighted by
//!   GPU-hours, over the jobs that have the figure; wall-time accuracy as elapsed over requested
//!   time, summed; the queue wait's median and 95th percentile;
//! - waste: idle core-, GPU- and node-hours (the allocation times one minus the efficiency),
//!   over-requested memory in GB-hours, equivalent wasted nodes (idle node-hours over the
//!   period's hours, as Job Defense Shield reports them), and their energy, cost and CO2 from
//!   the configured watts, price and grams per kWh.
//!
//! A site with job flow only (an SWF log, no telemetry) gets every usage and job-flow figure;
//! the efficiency and waste figures are then empty or zero, and `judged_share` says why.
#![cfg_attr(test, allow(clippy::unwrap_used))]

use std::path::Path;

use chrono::{Datelike, Duration, NaiveDate};
use serde::Deserialize;

use jobsight_base::options::{DAY_S, Invalid, invalid, within};
use jobsight_warehouse::catalog::rows::SummaryRow;
use jobsight_warehouse::catalog::{self, CatalogError, Table};
use jobsight_warehouse::query::{self, QueryError};

/// Jobs shorter than this many seconds count as short (Job Defense Shield skips jobs under
/// 300 s; XDMoD reports short jobs as their own group).
pub const DEFAULT_SHORT_JOB_S: u64 = 300;

/// The `[summary]` section of the configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// Jobs that ran less than this are counted as short.
    pub short_job_s: Option<u64>,
    /// Watts one allocated core draws above the node's base while it does nothing useful.
    pub idle_core_watts: Option<f64>,
    /// Watts one allocated, idle GPU draws.
    pub idle_gpu_watts: Option<f64>,
    /// A node's base power (memory, fans, network), charged to its idle node-hours.
    pub node_watts: Option<f64>,
    /// Price of one kWh, in `currency`.
    pub price_per_kwh: Option<f64>,
    pub currency: Option<String>,
    /// Grams of CO2 per kWh of the site's electricity.
    pub co2_grams_per_kwh: Option<f64>,
}

/// The summaries' settings, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub short_job_s: u64,
    pub idle_core_watts: f64,
    pub idle_gpu_watts: f64,
    pub node_watts: f64,
    pub price_per_kwh: f64,
    pub currency: String,
    pub co2_grams_per_kwh: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Options::default()
            .resolve()
            .unwrap_or_else(|_| unreachable!("the defaults are in range"))
    }
}

impl Options {
    /// Fills in the defaults and checks every value's range.
    pub fn resolve(self) -> Result<Settings, Invalid> {
        let number = |key: &str, value: Option<f64>, default: f64, max: f64| {
            let v = value.unwrap_or(default);
            if v.is_finite() && (0.0..=max).contains(&v) {
                Ok(v)
            } else {
                Err(invalid(key, format!("{v} is outside 0..={max}")))
            }
        };
        let currency = self.currency.unwrap_or_else(|| "EUR".into());
        if currency.is_empty()
            || currency.len() > 8
            || !currency.chars().all(|c| c.is_ascii_graphic())
        {
            return Err(invalid(
                "summary.currency",
                format!(
                    "{currency:?} is not a currency code (1 to 8 printable characters, e.g. EUR)"
                ),
            ));
        }
        Ok(Settings {
            short_job_s: within(
                "summary.short_job_s",
                self.short_job_s,
                DEFAULT_SHORT_JOB_S,
                0..=DAY_S,
            )?,
            idle_core_watts: number(
                "summary.idle_core_watts",
                self.idle_core_watts,
                10.0,
                1000.0,
            )?,
            idle_gpu_watts: number("summary.idle_gpu_watts", self.idle_gpu_watts, 70.0, 5000.0)?,
            node_watts: number("summary.node_watts", self.node_watts, 100.0, 100_000.0)?,
            price_per_kwh: number("summary.price_per_kwh", self.price_per_kwh, 0.20, 100.0)?,
            currency,
            co2_grams_per_kwh: number(
                "summary.co2_grams_per_kwh",
                self.co2_grams_per_kwh,
                300.0,
                5000.0,
            )?,
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("cannot start the query runtime: {0}")]
    Runtime(std::io::Error),
}

/// The length of a summary's period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Period {
    Day,
    Week,
    Month,
}

impl Period {
    pub fn name(self) -> &'static str {
        match self {
            Period::Day => "day",
            Period::Week => "week",
            Period::Month => "month",
        }
    }

    /// The first day of the period that holds `day` (weeks start on Monday, ISO 8601).
    pub fn start_of(self, day: NaiveDate) -> NaiveDate {
        match self {
            Period::Day => day,
            Period::Week => day - Duration::days(i64::from(day.weekday().num_days_from_monday())),
            Period::Month => day.with_day(1).unwrap_or(day),
        }
    }
}

/// What one row is for: a cluster, or a partition, account or user within its cluster, or (the
/// `summaries` table) all four at once. Keys left out show as `*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Grouping {
    Cluster,
    Partition,
    Account,
    User,
    All,
}

impl Grouping {
    /// Whether the partition, the account and the user are kept.
    fn keeps(self) -> [bool; 3] {
        match self {
            Grouping::Cluster => [false, false, false],
            Grouping::Partition => [true, false, false],
            Grouping::Account => [false, true, false],
            Grouping::User => [false, false, true],
            Grouping::All => [true, true, true],
        }
    }

    /// The name of the one key column it adds to the cluster, if one.
    fn column(self) -> Option<&'static str> {
        match self {
            Grouping::Partition => Some("partition"),
            Grouping::Account => Some("account"),
            Grouping::User => Some("user"),
            Grouping::Cluster | Grouping::All => None,
        }
    }
}

/// The SQL that summarises the jobs that ended from `from` to `to` (inclusive, UTC days) per day
/// (the `day` partition) and cluster, partition, account and user. Every figure is a sum (or a
/// percentile of the day's jobs) so that weeks and months are folded from days without loss,
/// except the wait percentiles, which [`summarize`] recomputes per period.
pub fn summary_sql(settings: &Settings, from: NaiveDate, to: NaiveDate) -> String {
    format!(
        r##"WITH f AS (
    SELECT job_id, day, count(*) AS findings FROM findings GROUP BY job_id, day
), p AS (
    SELECT job_id, day,
        max(CASE WHEN verdict NOT IN ('healthy', 'unknown', 'not-judged') THEN 1 ELSE 0 END) AS anomalous
    FROM predictions GROUP BY job_id, day
), j AS (
    SELECT j.day, j.cluster,
        coalesce(j.partition, '') AS "partition", coalesce(j.account, '') AS "account",
        coalesce(j.user, '') AS "user",
        j.state, j.elapsed_s, j.wait_s, j.time_limit_s,
        coalesce(j.core_hours, 0) AS core_hours, coalesce(j.node_hours, 0) AS node_hours,
        coalesce(j.gpu_hours, 0) AS gpu_hours, j.req_mem_gb,
        coalesce(s.judgeable, false) AS judgeable,
        CASE WHEN s.judgeable THEN s.cpu_eff END AS cpu_eff,
        CASE WHEN s.judgeable THEN s.mem_eff END AS mem_eff,
        CASE WHEN s.judgeable THEN s.gpu_util END AS gpu_util,
        CASE WHEN s.judgeable THEN s.mem_used_max_mb END AS mem_used_max_mb,
        coalesce(f.findings, 0) AS findings, coalesce(p.anomalous, 0) AS anomalous
    FROM jobs j
    LEFT JOIN job_summary s ON s.job_id = j.job_id AND s.day = j.day
    LEFT JOIN f ON f.job_id = j.job_id AND f.day = j.day
    LEFT JOIN p ON p.job_id = j.job_id AND p.day = j.day
    WHERE j.day >= '{from}' AND j.day <= '{to}'
)
SELECT "day", "cluster", "partition", "account", "user",
    count(*) AS jobs,
    sum(CASE WHEN state = 'COMPLETED' THEN 1 ELSE 0 END) AS completed,
    sum(CASE WHEN state = 'FAILED' THEN 1 ELSE 0 END) AS failed,
    sum(CASE WHEN state LIKE 'CANCELLED%' THEN 1 ELSE 0 END) AS cancelled,
    sum(CASE WHEN state = 'TIMEOUT' THEN 1 ELSE 0 END) AS timeout,
    sum(CASE WHEN state = 'OUT_OF_MEMORY' THEN 1 ELSE 0 END) AS out_of_memory,
    sum(CASE WHEN state = 'NODE_FAIL' THEN 1 ELSE 0 END) AS node_fail,
    sum(CASE WHEN elapsed_s < {short} THEN 1 ELSE 0 END) AS short_jobs,
    sum(core_hours) AS core_hours,
    sum(node_hours) AS node_hours,
    sum(gpu_hours) AS gpu_hours,
    sum(CASE WHEN judgeable THEN 1 ELSE 0 END) AS judged_jobs,
    sum(cpu_eff * core_hours) AS cpu_eff_x_core_hours,
    sum(CASE WHEN cpu_eff IS NOT NULL THEN core_hours END) AS cpu_eff_weight,
    sum(mem_eff * core_hours) AS mem_eff_x_core_hours,
    sum(CASE WHEN mem_eff IS NOT NULL THEN core_hours END) AS mem_eff_weight,
    sum(gpu_util * gpu_hours) AS gpu_util_x_gpu_hours,
    sum(CASE WHEN gpu_util IS NOT NULL THEN gpu_hours END) AS gpu_util_weight,
    sum(CASE WHEN time_limit_s > 0 THEN CAST(elapsed_s AS DOUBLE) END) AS limited_elapsed_s,
    sum(CASE WHEN time_limit_s > 0 AND elapsed_s IS NOT NULL THEN CAST(time_limit_s AS DOUBLE) END) AS limited_limit_s,
    sum(findings) AS findings,
    sum(CASE WHEN findings > 0 THEN 1 ELSE 0 END) AS jobs_flagged,
    sum(anomalous) AS jobs_anomalous,
    coalesce(sum(core_hours * (1 - cpu_eff)), 0) AS idle_core_hours,
    coalesce(sum(gpu_hours * (1 - gpu_util)), 0) AS idle_gpu_hours,
    coalesce(sum(node_hours * (1 - cpu_eff)), 0) AS idle_node_hours,
    coalesce(sum(CASE WHEN req_mem_gb * 1024 > mem_used_max_mb
        THEN (req_mem_gb - mem_used_max_mb / 1024) * CAST(elapsed_s AS DOUBLE) / 3600 END), 0)
        AS overrequested_mem_gb_hours
FROM j
GROUP BY "day", "cluster", "partition", "account", "user"
ORDER BY "day", "cluster", "partition", "account", "user""##,
        short = settings.short_job_s,
    )
}

/// The SQL of the queue wait's median and 95th percentile per period and group (percentiles do
/// not fold from days, so they are computed over the period's jobs themselves).
fn wait_sql(period: Period, grouping: Grouping, from: NaiveDate, to: NaiveDate) -> String {
    let start = match period {
        Period::Day => "day".to_string(),
        Period::Week | Period::Month => format!(
            "CAST(CAST(date_trunc('{}', CAST(day AS TIMESTAMP)) AS DATE) AS VARCHAR)",
            period.name()
        ),
    };
    let [partition, account, user] = grouping.keeps();
    let key = |keep: bool, column: &str| {
        if keep {
            format!("coalesce({column}, '')")
        } else {
            "'*'".to_string()
        }
    };
    let (partition, account, user) = (
        key(partition, "partition"),
        key(account, "account"),
        key(user, "user"),
    );
    format!(
        "SELECT {start} AS period_start, cluster, {partition} AS partition, \
         {account} AS account, {user} AS user, \
         approx_percentile_cont(0.5) WITHIN GROUP (ORDER BY CAST(wait_s AS DOUBLE)) AS wait_p50_s, \
         approx_percentile_cont(0.95) WITHIN GROUP (ORDER BY CAST(wait_s AS DOUBLE)) AS wait_p95_s \
         FROM jobs WHERE day >= '{from}' AND day <= '{to}' AND wait_s IS NOT NULL \
         GROUP BY 1, 2, 3, 4, 5"
    )
}

/// The sums of one group of one period, before they become a row.
#[derive(Debug, Default, Clone)]
struct Sums {
    counts: [u64; 12],
    hours: [f64; 3],
    weighted: [(f64, f64); 3],
    limited: (f64, f64),
    waste: [f64; 4],
}

/// Names of the count columns of [`summary_sql`], in the order of `Sums::counts`.
const COUNTS: [&str; 12] = [
    "jobs",
    "completed",
    "failed",
    "cancelled",
    "timeout",
    "out_of_memory",
    "node_fail",
    "short_jobs",
    "judged_jobs",
    "findings",
    "jobs_flagged",
    "jobs_anomalous",
];
const HOURS: [&str; 3] = ["core_hours", "node_hours", "gpu_hours"];
const WEIGHTED: [(&str, &str); 3] = [
    ("cpu_eff_x_core_hours", "cpu_eff_weight"),
    ("mem_eff_x_core_hours", "mem_eff_weight"),
    ("gpu_util_x_gpu_hours", "gpu_util_weight"),
];
const WASTE: [&str; 4] = [
    "idle_core_hours",
    "idle_gpu_hours",
    "idle_node_hours",
    "overrequested_mem_gb_hours",
];

impl Sums {
    fn add(&mut self, other: &Sums) {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
        for (a, b) in self.hours.iter_mut().zip(other.hours) {
            *a += b;
        }
        for (a, b) in self.weighted.iter_mut().zip(other.weighted) {
            a.0 += b.0;
            a.1 += b.1;
        }
        self.limited.0 += other.limited.0;
        self.limited.1 += other.limited.1;
        for (a, b) in self.waste.iter_mut().zip(other.waste) {
            *a += b;
        }
    }
}

/// A share from a weighted sum and its weight; `None` without weight.
fn share(numerator: f64, weight: f64) -> Option<f64> {
    (weight > 0.0).then(|| numerator / weight)
}

/// Group key: period start, cluster, partition, account, user.
type Key = (NaiveDate, String, String, String, String);

/// The group key of row `i`: the period's start from the date in `date_column`, the cluster, and
/// the partition, account and user where `grouping` keeps them (`*` where it does not).
fn group_key(
    c: &query::Columns,
    i: usize,
    date_column: &str,
    start_of: impl Fn(NaiveDate) -> NaiveDate,
    grouping: Grouping,
) -> Option<Key> {
    let date = NaiveDate::parse_from_str(&c.text(date_column, i)?, "%Y-%m-%d").ok()?;
    let [partition, account, user] = grouping.keeps();
    let masked = |keep: bool, column: &str| {
        if keep {
            c.text(column, i).unwrap_or_default()
        } else {
            "*".to_string()
        }
    };
    Some((
        start_of(date),
        c.text("cluster", i).unwrap_or_default(),
        masked(partition, "partition"),
        masked(account, "account"),
        masked(user, "user"),
    ))
}

/// Summarises the jobs that ended from `from` to `to` (UTC days, inclusive) per `period` and
/// cluster, partition, account and user, in key order.
pub fn summarize(
    data: &Path,
    settings: &Settings,
    from: NaiveDate,
    to: NaiveDate,
    period: Period,
    grouping: Grouping,
) -> Result<Vec<SummaryRow>, SummaryError> {
    summarize_on(
        &query::Engine::Local,
        data,
        settings,
        from,
        to,
        period,
        grouping,
    )
}

/// [`summarize`] with its queries run on `engine` (`jobsight summary` over a year on a Ballista
/// cluster, `[engine] ballista`).
pub fn summarize_on(
    engine: &query::Engine,
    data: &Path,
    settings: &Settings,
    from: NaiveDate,
    to: NaiveDate,
    period: Period,
    grouping: Grouping,
) -> Result<Vec<SummaryRow>, SummaryError> {
    // On Ballista, the multi-threaded runtime `jobsight sql` uses too (the client's gRPC calls run
    // beside the query's stream).
    let runtime = match engine {
        query::Engine::Local => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        query::Engine::Ballista(_) => query::engine_runtime(),
    }
    .map_err(SummaryError::Runtime)?;
    let (days, waits) = runtime.block_on(async {
        Ok::<_, QueryError>((
            query::run_on(engine, data, &summary_sql(settings, from, to)).await?,
            query::run_on(engine, data, &wait_sql(period, grouping, from, to)).await?,
        ))
    })?;
    let mut groups: std::collections::BTreeMap<Key, Sums> = Default::default();
    for batch in &days {
        let c = query::Columns::of(batch)?;
        for i in 0..batch.num_rows() {
            let Some(key) = group_key(&c, i, "day", |d| period.start_of(d), grouping) else {
                continue;
            };
            let count = |name| {
                c.int(name, i)
                    .and_then(|v| u64::try_from(v).ok())
                    .unwrap_or(0)
            };
            let float = |name| c.float(name, i).unwrap_or(0.0);
            let sums = Sums {
                counts: COUNTS.map(count),
                hours: HOURS.map(float),
                weighted: WEIGHTED.map(|(n, w)| (float(n), float(w))),
                limited: (float("limited_elapsed_s"), float("limited_limit_s")),
                waste: WASTE.map(float),
            };
            groups.entry(key).or_default().add(&sums);
        }
    }
    let mut wait: std::collections::BTreeMap<Key, (Option<f64>, Option<f64>)> = Default::default();
    for batch in &waits {
        let c = query::Columns::of(batch)?;
        for i in 0..batch.num_rows() {
            let Some(key) = group_key(&c, i, "period_start", |d| d, grouping) else {
                continue;
            };
            wait.insert(key, (c.float("wait_p50_s", i), c.float("wait_p95_s", i)));
        }
    }
    Ok(groups
        .into_iter()
        .map(|(key, sums)| {
            let (p50, p95) = wait.get(&key).copied().unwrap_or((None, None));
            row(settings, period, from, to, key, &sums, p50, p95)
        })
        .collect())
}

/// The days of `period` starting at `start` that lie within `from..=to`: what "equivalent wasted
/// nodes" divides by, so a week cut by the range is not diluted by days it does not cover.
fn days_covered(period: Period, start: NaiveDate, from: NaiveDate, to: NaiveDate) -> i64 {
    let end = match period {
        Period::Day => start,
        Period::Week => start + Duration::days(6),
        Period::Month => {
            let next = if start.month() == 12 {
                NaiveDate::from_ymd_opt(start.year() + 1, 1, 1)
            } else {
                NaiveDate::from_ymd_opt(start.year(), start.month() + 1, 1)
            };
            next.map_or(start, |n| n - Duration::days(1))
        }
    };
    let (first, last) = (start.max(from), end.min(to));
    ((last - first).num_days() + 1).max(1)
}

#[allow(clippy::too_many_arguments)]
fn row(
    settings: &Settings,
    period: Period,
    from: NaiveDate,
    to: NaiveDate,
    (start, cluster, partition, account, user): Key,
    sums: &Sums,
    wait_p50_s: Option<f64>,
    wait_p95_s: Option<f64>,
) -> SummaryRow {
    let [
        jobs,
        completed,
        failed,
        cancelled,
        timeout,
        out_of_memory,
        node_fail,
        short_jobs,
        judged_jobs,
        findings,
        jobs_flagged,
        jobs_anomalous,
    ] = sums.counts;
    let [core_hours, node_hours, gpu_hours] = sums.hours;
    let [cpu, mem, gpu] = sums.weighted;
    let [
        idle_core_hours,
        idle_gpu_hours,
        idle_node_hours,
        overrequested_mem_gb_hours,
    ] = sums.waste;
    let hours = 24.0 * days_covered(period, start, from, to) as f64;
    let waste_kwh = (idle_core_hours * settings.idle_core_watts
        + idle_gpu_hours * settings.idle_gpu_watts
        + idle_node_hours * settings.node_watts)
        / 1000.0;
    SummaryRow {
        period: period.name().to_string(),
        period_start: start.format("%Y-%m-%d").to_string(),
        cluster,
        partition,
        account,
        user,
        jobs,
        completed,
        failed,
        cancelled,
        timeout,
        out_of_memory,
        node_fail,
        short_jobs,
        core_hours,
        node_hours,
        gpu_hours,
        judged_jobs,
        judged_share: share(judged_jobs as f64, jobs as f64),
        cpu_eff: share(cpu.0, cpu.1),
        cpu_eff_core_hours: cpu.1,
        mem_eff: share(mem.0, mem.1),
        mem_eff_core_hours: mem.1,
        gpu_util: share(gpu.0, gpu.1),
        gpu_util_gpu_hours: gpu.1,
        walltime_accuracy: share(sums.limited.0, sums.limited.1),
        wait_p50_s,
        wait_p95_s,
        findings,
        jobs_flagged,
        jobs_anomalous,
        idle_core_hours,
        idle_gpu_hours,
        idle_node_hours,
        overrequested_mem_gb_hours,
        wasted_nodes: idle_node_hours / hours,
        waste_kwh,
        waste_cost: waste_kwh * settings.price_per_kwh,
        currency: settings.currency.clone(),
        waste_co2_kg: waste_kwh * settings.co2_grams_per_kwh / 1000.0,
    }
}

/// The name of a day's part of `summaries`.
pub const SUMMARY_PART: &str = "summary";

/// Summarises each day from `from` to `to` and writes it into `summaries` (one part per day,
/// replaced when the day is summarised again). Returns the rows written.
pub fn write_days(
    data: &Path,
    settings: &Settings,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<usize, SummaryError> {
    // A month at a time: a day's summary depends on that day's jobs only, and holding a whole
    // year's rows of a large cluster at once took 7 GiB (the summaries benchmark found it).
    let mut written = 0;
    let mut first = from;
    while first <= to {
        let last = (first + Duration::days(WRITE_DAYS_AT_ONCE - 1)).min(to);
        written += write_chunk(data, settings, first, last)?;
        match last.succ_opt() {
            Some(next) => first = next,
            None => break,
        }
    }
    Ok(written)
}

/// Days [`write_days`] summarises with one query.
const WRITE_DAYS_AT_ONCE: i64 = 31;

/// Summarises the days from `from` to `to` with one query and writes (or removes) each day's part.
fn write_chunk(
    data: &Path,
    settings: &Settings,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<usize, SummaryError> {
    let rows = summarize(data, settings, from, to, Period::Day, Grouping::All)?;
    // The rows by day, once: scanning them all for each day took minutes over a year.
    let mut by_day: std::collections::HashMap<String, Vec<SummaryRow>> = Default::default();
    for row in rows {
        by_day
            .entry(row.period_start.clone())
            .or_default()
            .push(row);
    }
    let mut written = 0;
    let mut day = from;
    while day <= to {
        let of_day = by_day
            .remove(&day.format("%Y-%m-%d").to_string())
            .unwrap_or_default();
        if of_day.is_empty() {
            // A day with no jobs any more (re-imported, retained away): its old summary goes.
            catalog::remove_part(data, Table::Summaries, day, SUMMARY_PART)?;
        } else {
            catalog::write_part(
                data,
                Table::Summaries,
                day,
                SUMMARY_PART,
                &[
                    SummaryRow::batch(&of_day).map_err(|e| CatalogError::Schema {
                        table: Table::Summaries.name(),
                        reason: e.to_string(),
                    })?,
                ],
            )?;
            written += of_day.len();
        }
        match day.succ_opt() {
            Some(next) => day = next,
            None => break,
        }
    }
    Ok(written)
}

/// What `--top` ranks rows by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Rank {
    CoreHours,
    GpuHours,
    IdleCoreHours,
    IdleGpuHours,
    WasteKwh,
    Jobs,
}

impl Rank {
    fn of(self, row: &SummaryRow) -> f64 {
        match self {
            Rank::CoreHours => row.core_hours,
            Rank::GpuHours => row.gpu_hours,
            Rank::IdleCoreHours => row.idle_core_hours,
            Rank::IdleGpuHours => row.idle_gpu_hours,
            Rank::WasteKwh => row.waste_kwh,
            Rank::Jobs => row.jobs as f64,
        }
    }
}

/// The `n` rows of each period with the most of `rank`, largest first (ties by key): the top
/// users, accounts or partitions (ClusterCockpit's top lists), or the top wasters.
pub fn top(mut rows: Vec<SummaryRow>, rank: Rank, n: usize) -> Vec<SummaryRow> {
    rows.sort_by(|a, b| {
        a.period_start
            .cmp(&b.period_start)
            .then(rank.of(b).total_cmp(&rank.of(a)))
    });
    let mut out: Vec<SummaryRow> = Vec::new();
    let mut in_period = 0;
    for row in rows {
        if out
            .last()
            .is_none_or(|last| last.period_start != row.period_start)
        {
            in_period = 0;
        }
        if in_period < n {
            out.push(row);
        }
        in_period += 1;
    }
    out
}

/// What an email changed for one user: the core-hour-weighted CPU efficiency of their judged
/// jobs that ended in the `days` before their first email, against that of their jobs that
/// started after it (jobs running when it was sent count for neither).
#[derive(Debug, Clone, PartialEq)]
pub struct EmailEffect {
    pub user: String,
    pub emailed_at: String,
    pub jobs_before: u64,
    pub cpu_eff_before: Option<f64>,
    pub jobs_after: u64,
    pub cpu_eff_after: Option<f64>,
}

impl EmailEffect {
    /// After minus before, where both are known.
    pub fn change(&self) -> Option<f64> {
        Some(self.cpu_eff_after? - self.cpu_eff_before?)
    }
}

/// The SQL of [`email_effect`]: the notifications ledger joined with the owners' jobs around
/// their first email to them (a digest or a critical email that was sent).
pub fn email_effect_sql(days: u32) -> String {
    format!(
        r##"WITH mail AS (
    SELECT "user", min(sent_at) AS sent_at FROM notifications
    WHERE status = 'sent' AND kind IN ('digest', 'critical') AND "user" IS NOT NULL
    GROUP BY "user"
), judged AS (
    SELECT j."user", j.start, j."end", j.core_hours, s.cpu_eff
    FROM jobs j JOIN job_summary s ON s.job_id = j.job_id AND s.day = j.day
    WHERE s.judgeable AND s.cpu_eff IS NOT NULL AND j.core_hours > 0
), around AS (
    SELECT m."user", m.sent_at, j.core_hours, j.cpu_eff,
        j."end" < m.sent_at AS before, j.start > m.sent_at AS after
    FROM mail m JOIN judged j ON j."user" = m."user"
    WHERE j."end" >= m.sent_at - INTERVAL '{days} days'
      AND j.start <= m.sent_at + INTERVAL '{days} days'
)
SELECT "user", CAST(sent_at AS VARCHAR) AS emailed_at,
    sum(CASE WHEN before THEN 1 ELSE 0 END) AS jobs_before,
    sum(CASE WHEN before THEN cpu_eff * core_hours END)
        / sum(CASE WHEN before THEN core_hours END) AS cpu_eff_before,
    sum(CASE WHEN after THEN 1 ELSE 0 END) AS jobs_after,
    sum(CASE WHEN after THEN cpu_eff * core_hours END)
        / sum(CASE WHEN after THEN core_hours END) AS cpu_eff_after
FROM around
GROUP BY "user", sent_at
ORDER BY "user""##
    )
}

/// The effect of the emails, measured: for every user who was emailed, their CPU efficiency in
/// the `days` before their first email and in the `days` after it, from the ledger and their jobs.
pub fn email_effect(data: &Path, days: u32) -> Result<Vec<EmailEffect>, SummaryError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(SummaryError::Runtime)?;
    let batches = runtime.block_on(query::run(data, &email_effect_sql(days)))?;
    let mut out = Vec::new();
    for batch in &batches {
        let c = query::Columns::of(batch)?;
        for i in 0..batch.num_rows() {
            let count = |name| {
                c.int(name, i)
                    .and_then(|v| u64::try_from(v).ok())
                    .unwrap_or(0)
            };
            out.push(EmailEffect {
                user: c.text("user", i).unwrap_or_default(),
                emailed_at: c.text("emailed_at", i).unwrap_or_default(),
                jobs_before: count("jobs_before"),
                cpu_eff_before: c.float("cpu_eff_before", i),
                jobs_after: count("jobs_after"),
                cpu_eff_after: c.float("cpu_eff_after", i),
            });
        }
    }
    Ok(out)
}

/// The effect of the emails as a table for a person, with a closing line that counts the users
/// whose efficiency rose, fell or could not be compared.
pub fn render_email_effect(effects: &[EmailEffect], days: u32) -> String {
    let share = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    let mut out = format!(
        "CPU efficiency (weighted by core-hours) of emailed users' judged jobs, {days} days before and after their first email\n\n"
    );
    out += &format!(
        "{:<16} {:<28} {:>11} {:>10} {:>10} {:>9} {:>7}\n",
        "user", "first email", "jobs before", "eff before", "jobs after", "eff after", "change"
    );
    let (mut up, mut down, mut unknown) = (0, 0, 0);
    for e in effects {
        let change = e.change();
        match change {
            Some(c) if c > 0.0 => up += 1,
            Some(_) => down += 1,
            None => unknown += 1,
        }
        out += &format!(
            "{:<16} {:<28} {:>11} {:>10} {:>10} {:>9} {:>7}\n",
            jobsight_base::text::printable(&e.user),
            e.emailed_at,
            e.jobs_before,
            share(e.cpu_eff_before),
            e.jobs_after,
            share(e.cpu_eff_after),
            change.map_or("-".to_string(), |c| format!("{c:+.3}")),
        );
    }
    out += &format!(
        "\n{} emailed users: {up} improved, {down} did not, {unknown} without jobs on both sides\n",
        effects.len()
    );
    out
}

/// The columns the table format shows, after the period and the group's keys.
const SHOWN: [&str; 14] = [
    "jobs",
    "core_hours",
    "gpu_hours",
    "judged_share",
    "cpu_eff",
    "mem_eff",
    "gpu_util",
    "walltime_accuracy",
    "wait_p50_s",
    "idle_core_hours",
    "wasted_nodes",
    "waste_kwh",
    "waste_cost",
    "waste_co2_kg",
];

/// `rows` for a person (`table`: the main figures, rounded, with a heading that says what the
/// rows are) or a program (`csv`, `json`: every column as stored).
pub fn render(
    rows: &[SummaryRow],
    period: Period,
    grouping: Grouping,
    from: NaiveDate,
    to: NaiveDate,
    format: query::SqlFormat,
) -> Result<String, SummaryError> {
    use datafusion::arrow::array::{ArrayRef, Float64Array};
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::arrow::record_batch::RecordBatch;
    let schema_error = |e: datafusion::arrow::error::ArrowError| {
        SummaryError::Catalog(CatalogError::Schema {
            table: Table::Summaries.name(),
            reason: e.to_string(),
        })
    };
    let batch = SummaryRow::batch(rows).map_err(schema_error)?;
    if format != query::SqlFormat::Table {
        return Ok(query::render(&[batch], format)?);
    }
    let mut columns = vec!["period_start", "cluster"];
    match grouping {
        Grouping::All => columns.extend(["partition", "account", "user"]),
        other => columns.extend(other.column()),
    }
    columns.extend(SHOWN);
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for name in columns {
        let Some((index, field)) = batch
            .schema()
            .column_with_name(name)
            .map(|(i, f)| (i, f.clone()))
        else {
            continue;
        };
        let array = batch.column(index).clone();
        // Rounded for reading: shares to 3 places, hours and the rest to 1.
        let array: ArrayRef = match array.as_any().downcast_ref::<Float64Array>() {
            Some(values) => {
                let places = if matches!(
                    name,
                    "judged_share" | "cpu_eff" | "mem_eff" | "gpu_util" | "walltime_accuracy"
                ) {
                    1000.0
                } else {
                    10.0
                };
                std::sync::Arc::new(
                    values.unary::<_, datafusion::arrow::datatypes::Float64Type>(|v| {
                        (v * places).round() / places
                    }),
                )
            }
            None => array,
        };
        let name = if name == "waste_cost" {
            format!(
                "waste_{}",
                rows.first().map_or("cost", |r| r.currency.as_str())
            )
        } else {
            name.to_string()
        };
        fields.push(Field::new(name, field.data_type().clone(), true));
        arrays.push(array);
    }
    let shown = RecordBatch::try_new(std::sync::Arc::new(Schema::new(fields)), arrays)
        .map_err(schema_error)?;
    let heading = format!(
        "Jobs that ended {from} to {to}, per {} and {}{}\n",
        period.name(),
        grouping.column().unwrap_or("cluster"),
        if grouping == Grouping::All {
            " × partition × account × user"
        } else {
            ""
        },
    );
    Ok(heading + &query::render(&[shown], format)?)
}

#[cfg(any(test, feature = "fixture"))]
pub mod fixture;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::*;

    /// Three jobs whose every figure is worked out by hand: the summary's numbers are exactly
    /// those, per cluster, per user and folded into a week.
    #[test]
    fn every_figure_is_its_definition() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let day = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        fixture(data);

        let settings = Settings::default();
        let rows = summarize(data, &settings, day, day, Period::Day, Grouping::Cluster).unwrap();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert_eq!(
            (r.partition.as_str(), r.account.as_str(), r.user.as_str()),
            ("*", "*", "*")
        );
        assert_eq!(
            (
                r.jobs,
                r.completed,
                r.failed,
                r.timeout,
                r.short_jobs,
                r.judged_jobs
            ),
            (3, 1, 1, 1, 1, 2)
        );
        assert!(close(r.core_hours, 10.0 + 1.0 / 60.0), "{}", r.core_hours);
        assert!(close(r.node_hours, 3.0 + 1.0 / 60.0));
        assert!(close(r.gpu_hours, 1.0));
        assert!(close(r.judged_share.unwrap(), 2.0 / 3.0));
        // (0.5 × 8 + 1.0 × 2) / 10 and (0.25 × 8 + 0.5 × 2) / 10: weighted by core-hours.
        assert!(close(r.cpu_eff.unwrap(), 0.6));
        assert!(close(r.mem_eff.unwrap(), 0.3));
        assert!(close(r.gpu_util.unwrap(), 0.2));
        // (7200 + 3600 + 60) / (14400 + 3600 + 3600).
        assert!(close(r.walltime_accuracy.unwrap(), 10_860.0 / 21_600.0));
        assert_eq!((r.findings, r.jobs_flagged), (2, 1));
        assert!(close(r.idle_core_hours, 4.0));
        assert!(close(r.idle_gpu_hours, 0.8));
        assert!(close(r.idle_node_hours, 1.0));
        // (8 − 2) GiB for 2 h and (4 − 2) GiB for 1 h.
        assert!(close(r.overrequested_mem_gb_hours, 14.0));
        assert!(close(r.wasted_nodes, 1.0 / 24.0));
        // (4 × 10 W + 0.8 × 70 W + 1 × 100 W) / 1000.
        assert!(close(r.waste_kwh, 0.196));
        assert!(close(r.waste_cost, 0.196 * 0.20));
        assert!(close(r.waste_co2_kg, 0.196 * 0.3));
        let p50 = r.wait_p50_s.unwrap();
        assert!((p50 - 3540.0).abs() < 1.0, "{p50}");

        // The top waster of the day is alice (bob's job was never judged).
        let users_top = top(
            summarize(data, &settings, day, day, Period::Day, Grouping::User).unwrap(),
            Rank::IdleCoreHours,
            1,
        );
        assert_eq!(users_top.len(), 1);
        assert_eq!(users_top[0].user, "alice");

        // Per user: bob's job was never judged, so he has no efficiency, not a zero.
        let users = summarize(data, &settings, day, day, Period::Day, Grouping::User).unwrap();
        let names: Vec<&str> = users.iter().map(|r| r.user.as_str()).collect();
        assert_eq!(names, ["alice", "bob"]);
        assert!(close(users[0].cpu_eff.unwrap(), 0.6));
        assert_eq!((users[1].jobs, users[1].cpu_eff), (1, None));

        // A week folded from its one covered day: the same figures, nodes over 24 h, not 168 h.
        let week = summarize(data, &settings, day, day, Period::Week, Grouping::Cluster).unwrap();
        assert_eq!(week[0].period_start, "2026-11-16");
        assert!(close(week[0].cpu_eff.unwrap(), 0.6));
        assert!(close(week[0].wasted_nodes, 1.0 / 24.0));

        // The nightly step's table: one row per partition × account × user, readable by SQL.
        assert_eq!(write_days(data, &settings, day, day).unwrap(), 2);
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let stored = runtime
            .block_on(query::run(
                data,
                "SELECT sum(jobs) AS jobs, sum(idle_core_hours) AS idle FROM summaries",
            ))
            .unwrap();
        let c = query::Columns::of(&stored[0]).unwrap();
        assert_eq!(c.int("jobs", 0), Some(3));
        assert!(close(c.float("idle", 0).unwrap(), 4.0));
    }

    #[test]
    fn a_long_range_is_written_a_month_at_a_time_with_the_same_rows() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        fixture(data);
        let settings = Settings::default();
        let date = |m, d| NaiveDate::from_ymd_opt(2026, m, d).unwrap();
        let rows_of_days = || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            let batches = runtime
                .block_on(query::run(
                    data,
                    "SELECT day, count(*) AS n, sum(jobs) AS jobs FROM summaries GROUP BY day ORDER BY day",
                ))
                .unwrap();
            let mut out = Vec::new();
            for batch in &batches {
                let c = query::Columns::of(batch).unwrap();
                for i in 0..batch.num_rows() {
                    out.push((c.text("day", i), c.int("n", i), c.int("jobs", i)));
                }
            }
            out
        };
        let alone = write_days(data, &settings, date(11, 20), date(11, 21)).unwrap();
        let expected = rows_of_days();
        assert_eq!(expected.len(), 2, "{expected:?}");
        // 2026-10-21 to 11-21: the first month ends on 11-20, so the two days are written by
        // different queries; and 2026-10-01 to 11-21 puts both in the second month.
        for from in [date(10, 21), date(10, 1)] {
            assert_eq!(
                write_days(data, &settings, from, date(11, 21)).unwrap(),
                alone
            );
            assert_eq!(rows_of_days(), expected);
        }
    }

    /// A result row as the .slt file writes it.
    fn render_row(c: &query::Columns, types: &str, names: &[String], i: usize) -> String {
        names
            .iter()
            .zip(types.chars())
            .map(|(name, kind)| match kind {
                'I' => c.int(name, i).map_or("NULL".into(), |v| v.to_string()),
                'R' => c
                    .float(name, i)
                    .map_or("NULL".into(), |v| format!("{v:.3}")),
                _ => c.text(name, i).unwrap_or_else(|| "NULL".into()),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Every documented query gives its documented result on the test warehouse, and
    /// docs/queries.md is generated from the same file (rewrite with JOBSIGHT_UPDATE_SCHEMAS=1).
    #[test]
    fn documented_queries_give_their_documented_results() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        fixture(data);
        let (first, last) = (
            NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
            NaiveDate::from_ymd_opt(2026, 11, 21).unwrap(),
        );
        write_days(data, &Settings::default(), first, last).unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let examples = examples();
        assert!(examples.len() >= 7);
        let mut page = String::from(
            "# Example queries\n\n\
             Run them with `jobsight sql \"...\"`; the tables and their columns are in \
             [tables.md](tables.md). Generated from `tests/sql/examples.slt`, whose queries a test \
             runs on a small fixed warehouse (three users, two days): the results below are \
             those, so every query here works as written.\n",
        );
        for example in &examples {
            let batches = runtime
                .block_on(query::run(data, &example.sql))
                .unwrap_or_else(|e| panic!("{}: {e}", example.sql));
            let mut got = Vec::new();
            let mut names = Vec::new();
            for batch in &batches {
                names = batch
                    .schema()
                    .fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect();
                assert_eq!(names.len(), example.types.len(), "{}", example.sql);
                let c = query::Columns::of(batch).unwrap();
                for i in 0..batch.num_rows() {
                    got.push(render_row(&c, &example.types, &names, i));
                }
            }
            assert_eq!(got, example.rows, "{}", example.sql);
            page += &format!(
                "\n{}\n\n```sql\n{}\n```\n\n| {} |\n|{}\n",
                example.about,
                example.sql,
                names.join(" | "),
                "---|".repeat(names.len()),
            );
            for row in &example.rows {
                page += &format!("| {} |\n", row.split(' ').collect::<Vec<_>>().join(" | "));
            }
        }
        let path = format!(
            "{}/docs/queries.md",
            jobsight_base::test_support::workspace_dir().display()
        );
        if std::env::var_os("JOBSIGHT_UPDATE_SCHEMAS").is_some() {
            std::fs::write(&path, &page).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == page,
            "{path} differs from tests/sql/examples.slt; regenerate it"
        );
    }

    /// The Grafana dashboard shipped in ops/ runs only queries this file tests: each panel's
    /// SQL, with Grafana's range macros replaced by the range the Grafana examples use, is one
    /// of them word for word.
    #[test]
    fn the_grafana_dashboard_runs_only_tested_queries() {
        let path = format!(
            "{}/ops/grafana/jobsight.json",
            jobsight_base::test_support::workspace_dir().display()
        );
        let dashboard: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let tested: Vec<String> = examples().into_iter().map(|e| e.sql).collect();
        let panels = dashboard["panels"].as_array().unwrap();
        assert!(panels.len() >= 5);
        for panel in panels {
            for target in panel["targets"].as_array().unwrap() {
                let sql = target["rawSql"]
                    .as_str()
                    .unwrap()
                    .replace("$__timeFrom()", "'2026-11-01T00:00:00Z'")
                    .replace("$__timeTo()", "'2026-11-30T23:59:59Z'");
                assert!(
                    tested.contains(&sql),
                    "panel {:?} runs a query tests/sql/examples.slt does not test:\n{sql}",
                    panel["title"]
                );
            }
        }
    }

    /// Alice's judged jobs before her email ran at 0.6 (weighted by core-hours), her job after
    /// it at 0.9: the effect is +0.3; nobody else was emailed.
    #[test]
    fn the_effect_of_an_email_is_measured() {
        let dir = tempfile::tempdir().unwrap();
        fixture(dir.path());
        let effects = email_effect(dir.path(), 14).unwrap();
        assert_eq!(effects.len(), 1);
        let alice = &effects[0];
        assert_eq!(
            (alice.user.as_str(), alice.jobs_before, alice.jobs_after),
            ("alice", 2, 1)
        );
        assert!((alice.cpu_eff_before.unwrap() - 0.6).abs() < 1e-9);
        assert!((alice.cpu_eff_after.unwrap() - 0.9).abs() < 1e-9);
        assert!((alice.change().unwrap() - 0.3).abs() < 1e-9);
        let text = render_email_effect(&effects, 14);
        assert!(
            text.ends_with(
                "1 emailed users: 1 improved, 0 did not, 0 without jobs on both sides\n"
            ),
            "{text}"
        );
    }
}
