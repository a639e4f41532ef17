//! The figures' computation: the SQL that sums the period's jobs per group, and the rows it
//! becomes (shares from weighted sums, wasted nodes over the hours the period covers, energy,
//! cost and CO2 from the settings), then the top rows by one figure.

use jobsight_base::choice::{Choice, Named};
use std::path::Path;

use chrono::{Datelike, Duration, NaiveDate};

use jobsight_warehouse::catalog::rows::SummaryRow;
use jobsight_warehouse::query::{self, QueryError};

use crate::error::SummaryError;
use crate::period::{Grouping, Period};
use crate::settings::Settings;

/// The SQL that summarises the jobs that ended from `from` to `to` (inclusive, UTC days) per day
/// (the `day` partition) and cluster, partition, account and user. Every figure is a sum (or a
/// percentile of the day's jobs) so that weeks and months are folded from days without loss,
/// except the wait percentiles, which [`summarize`] recomputes per period. A job's CPU and memory
/// figures count when its telemetry judges it or when they come from Slurm accounting (which
/// covers the whole run whatever the telemetry); the idle core- and node-hours follow the CPU
/// efficiency counted.
pub fn summary_sql(settings: &Settings, from: NaiveDate, to: NaiveDate) -> String {
    let same_run = jobsight_warehouse::catalog::same_run;
    let (same, same_f, same_p) = (same_run("s", "j"), same_run("f", "j"), same_run("p", "j"));
    format!(
        r##"WITH f AS (
    SELECT job_id, day, restart_count, count(*) AS findings FROM findings
    GROUP BY job_id, day, restart_count
), p AS (
    SELECT job_id, day, restart_count,
        max(CASE WHEN verdict NOT IN ('healthy', 'unknown', 'not-judged') THEN 1 ELSE 0 END) AS anomalous
    FROM predictions GROUP BY job_id, day, restart_count
), j AS (
    SELECT j.day, j.cluster,
        coalesce(j.partition, '') AS "partition", coalesce(j.account, '') AS "account",
        coalesce(j.user, '') AS "user",
        j.state, j.elapsed_s, j.wait_s, j.time_limit_s,
        coalesce(j.core_hours, 0) AS core_hours, coalesce(j.node_hours, 0) AS node_hours,
        coalesce(j.gpu_hours, 0) AS gpu_hours, j.req_mem_gb,
        coalesce(s.judgeable, false) AS judgeable,
        CASE WHEN s.judgeable OR s.cpu_eff_source = 'accounting' THEN s.cpu_eff END AS cpu_eff,
        CASE WHEN s.judgeable OR s.mem_source = 'accounting' THEN s.mem_eff END AS mem_eff,
        CASE WHEN s.judgeable THEN s.gpu_util END AS gpu_util,
        CASE WHEN s.judgeable OR s.mem_source = 'accounting' THEN s.mem_used_max_mb END
            AS mem_used_max_mb,
        s.energy_kwh,
        coalesce(f.findings, 0) AS findings, coalesce(p.anomalous, 0) AS anomalous
    FROM jobs j
    LEFT JOIN job_summary s ON {same}
    LEFT JOIN f ON {same_f}
    LEFT JOIN p ON {same_p}
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
        AS overrequested_mem_gb_hours,
    coalesce(sum(energy_kwh), 0) AS energy_kwh,
    coalesce(sum(CASE WHEN energy_kwh IS NOT NULL THEN core_hours END), 0) AS energy_core_hours
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
    energy: [f64; 2],
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

/// The measured energy and the core-hours of the jobs it was measured for.
const ENERGY: [&str; 2] = ["energy_kwh", "energy_core_hours"];

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
        for (a, b) in self.energy.iter_mut().zip(other.energy) {
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
                energy: ENERGY.map(float),
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
    let [energy_kwh, energy_core_hours] = sums.energy;
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
        energy_kwh,
        energy_cost: energy_kwh * settings.price_per_kwh,
        energy_co2_kg: energy_kwh * settings.co2_grams_per_kwh / 1000.0,
        energy_measured_share: share(energy_core_hours, core_hours),
    }
}

/// What `--top` ranks rows by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rank {
    CoreHours,
    GpuHours,
    IdleCoreHours,
    IdleGpuHours,
    WasteKwh,
    Jobs,
}

impl Choice for Rank {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: Rank::CoreHours,
            name: "core-hours",
            help: "",
        },
        Named {
            value: Rank::GpuHours,
            name: "gpu-hours",
            help: "",
        },
        Named {
            value: Rank::IdleCoreHours,
            name: "idle-core-hours",
            help: "",
        },
        Named {
            value: Rank::IdleGpuHours,
            name: "idle-gpu-hours",
            help: "",
        },
        Named {
            value: Rank::WasteKwh,
            name: "waste-kwh",
            help: "",
        },
        Named {
            value: Rank::Jobs,
            name: "jobs",
            help: "",
        },
    ];
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
