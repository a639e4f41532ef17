//! The reference definitions of the statistics, as DataFusion SQL: one statement per table,
//! readable by an admin and runnable by hand with `jobsight sql`. The single pass ([`super::scan`])
//! must agree with them; tests run both on the same warehouse and compare.
//!
//! Input: `jobs` (start and end of each job) and `telemetry`, one day partition at a time (a job's
//! telemetry lives in the day of its end, as the job does).
//!
//! Definitions, after trimming `trim_s` (default 60 s) from each end of the job so that start-up
//! and tear-down do not count; a job shorter than twice that keeps all its samples and says so
//! (`trimmed = false`). Each run of a requeued job (`restart_count`) is described by itself: a
//! sample belongs to the last run of its job id that started at or before it (the first run, for
//! a sample before every start), as the single pass hands samples out:
//! - `n`: finite samples used; `n_nonfinite`: NaN or infinite samples left out (counted, never
//!   silently dropped);
//! - `min`, `max`, `mean`; `std`: population standard deviation (divisor n, as numpy's default);
//!   `cv` = std / mean (NULL when the mean is 0);
//! - `skewness` = m3 / m2^1.5 and `kurtosis` = m4 / m2² − 3 (excess), from the central moments m2,
//!   m3, m4 with divisor n: scipy.stats' defaults (bias=True, fisher=True). NULL for a constant series (min = max);
//! - `p05`, `p25`, `p50`, `p75`, `p95`: percentiles with linear interpolation between the closest
//!   ranks at rank p × (n − 1) (numpy's default method), by DataFusion's `percentile_cont`. It is
//!   exact at a rank, but between two ranks DataFusion 55 truncates the interpolation weight to a
//!   multiple of 1e-6, so the result can be up to 1e-6 × (upper − lower) below the exact value and
//!   is never above it (tested: p95 of 1, 2, 3, 4, 10 is 8.799994, not 8.8). The single pass is
//!   exact.
//!
//! The same statistics, and the temporal figures plain SQL cannot express, as one DataFusion plan
//! over the series core's SQL function `js_describe`: [`describe_sql`].
//!
//! Across nodes ([`across_nodes_sql`]): `nodes`, `mean` of the node means, `min` and `max` over all
//! samples, the lowest and highest node mean, `node_cv` = population std / mean of the node means,
//! and tacc_stats' node `imbalance` (0 for a single node, 1 when some node did nothing while
//! another worked).

use chrono::NaiveDate;

use jobsight_warehouse::catalog::FEATURE_STATS;

/// `WITH j AS (...)`: the day's runs (of the jobs `only_jobs`, or every one when empty), one row
/// per job id and run (`restart_count`), with whether it is trimmed, the window of samples kept,
/// and the span of samples that belong to it (`run_from` inclusive, `run_to` exclusive, NULL
/// where open: see [`in_run`]). The window is computed here once per run, not per sample
/// (`t.ts >= j.start + INTERVAL ...` made DataFusion add an interval to every one of 27 M
/// timestamps: the join took 2.9 s of CPU, 0.3 s with the bounds computed here).
fn day_jobs(day: NaiveDate, trim_s: u64, only_jobs: &[String], ids: &IdRange) -> String {
    let day = day.format("%Y-%m-%d");
    // Job ids are quoted as SQL strings (quotes doubled), never spliced in raw.
    let only = if only_jobs.is_empty() {
        String::new()
    } else {
        let ids: Vec<String> = only_jobs
            .iter()
            .map(|id| format!("'{}'", id.replace('\'', "''")))
            .collect();
        format!(" AND job_id IN ({})", ids.join(", "))
    };
    format!(
        r#"WITH runs AS (
  SELECT job_id, restart_count, min(start) AS start, max("end") AS "end" FROM jobs
  WHERE day = '{day}' AND start IS NOT NULL{only}{in_range} GROUP BY job_id, restart_count
),
j AS (
  SELECT job_id, restart_count,
         CAST("end" AS BIGINT) - CAST(start AS BIGINT) > {twice_trim_us} AS trimmed,
         start + INTERVAL '{trim_s} seconds' AS keep_from, "end" - INTERVAL '{trim_s} seconds' AS keep_to,
         CASE WHEN row_number() OVER (PARTITION BY job_id ORDER BY start, restart_count) > 1
              THEN start END AS run_from,
         lead(start) OVER (PARTITION BY job_id ORDER BY start, restart_count) AS run_to
  FROM runs
)"#,
        twice_trim_us = 2 * trim_s * 1_000_000,
        in_range = ids.condition("job_id"),
    )
}

/// The job ids from `from` (included) up to `to` (left out) in text order (byte by byte, as
/// Rust, DataFusion and Parquet's statistics order text), either end open: the share of a day
/// the features plan reads at a time ([`super::plan`]). A NULL job id belongs to the range open
/// at the start, so that ranges that cut the ids apart count every sample once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdRange {
    pub from: Option<String>,
    pub to: Option<String>,
}

impl IdRange {
    /// Every job id.
    pub const ALL: IdRange = IdRange {
        from: None,
        to: None,
    };

    /// Whether the range holds `id`.
    pub fn holds(&self, id: &str) -> bool {
        self.from.as_deref().is_none_or(|from| id >= from)
            && self.to.as_deref().is_none_or(|to| id < to)
    }

    /// The range as a condition on `column`, ` AND ...`, or nothing for every id. Plain
    /// comparisons, so that a scan skips the row groups whose `job_id` statistics lie outside.
    fn condition(&self, column: &str) -> String {
        use jobsight_warehouse::query::literal;
        match (&self.from, &self.to) {
            (None, None) => String::new(),
            (None, Some(to)) => format!(" AND ({column} IS NULL OR {column} < {})", literal(to)),
            (Some(from), None) => format!(" AND {column} >= {}", literal(from)),
            (Some(from), Some(to)) => format!(
                " AND {column} >= {} AND {column} < {}",
                literal(from),
                literal(to)
            ),
        }
    }
}

/// The condition that a sample of `telemetry` aliased `t` belongs to the run of [`day_jobs`]
/// aliased `j` (its job id is matched apart).
fn in_run(t: &str, j: &str) -> String {
    format!(
        "({j}.run_from IS NULL OR {t}.ts >= {j}.run_from) AND ({j}.run_to IS NULL OR {t}.ts < {j}.run_to)"
    )
}

/// The common start of the reference statements: [`day_jobs`]' `j`, `s` their samples after
/// trimming (with `finite` telling NaN and infinities apart), `f` the finite ones.
///
/// `s` takes the job id from `telemetry`, not from `j`, although the two are equal: DataFusion 55
/// lets `j.job_id`, the key `j` is grouped by, decide every column after the join, and then drops
/// grouping keys it believes decided (the across-nodes statement lost `node` from
/// `GROUP BY job_id, metric, node` that way; docs/sql.md).
fn trimmed_samples(day: NaiveDate, trim_s: u64, only_jobs: &[String]) -> String {
    format!(
        r#"{jobs},
s AS (
  SELECT CAST(t.job_id AS VARCHAR) AS job_id, j.restart_count, CAST(t.node AS VARCHAR) AS node,
         CAST(t.metric AS VARCHAR) AS metric, t.ts, t.value, j.trimmed,
         NOT isnan(t.value) AND abs(t.value) <> CAST('Infinity' AS DOUBLE) AS finite
  FROM telemetry t JOIN j ON CAST(t.job_id AS VARCHAR) = j.job_id AND {in_run}
  WHERE t.day = '{day}'
    AND (NOT j.trimmed OR (t.ts >= j.keep_from AND t.ts <= j.keep_to))
),
f AS (SELECT * FROM s WHERE finite)"#,
        jobs = day_jobs(day, trim_s, only_jobs, &IdRange::ALL),
        day = day.format("%Y-%m-%d"),
        in_run = in_run("t", "j"),
    )
}

/// The reference SQL for one day's per job × node × metric statistics (of `only_jobs`, or of
/// every job when empty): the statistics columns of `features`, in its order.
pub fn node_metric_sql(day: NaiveDate, trim_s: u64, only_jobs: &[String]) -> String {
    format!(
        r#"{samples},
m AS (
  SELECT job_id, restart_count, node, metric, avg(value) AS mean FROM f
  GROUP BY job_id, restart_count, node, metric
),
bad AS (
  SELECT job_id, restart_count, node, metric, bool_or(trimmed) AS trimmed, count(*) AS n_nonfinite
  FROM s WHERE NOT finite GROUP BY job_id, restart_count, node, metric
),
stats AS (
  SELECT f.job_id, f.restart_count, f.node, f.metric, bool_or(f.trimmed) AS trimmed, count(*) AS n,
         min(f.value) AS min, max(f.value) AS max, avg(f.value) AS mean,
         avg(power(f.value - m.mean, 2)) AS m2, avg(power(f.value - m.mean, 3)) AS m3,
         avg(power(f.value - m.mean, 4)) AS m4,
         percentile_cont(0.05) WITHIN GROUP (ORDER BY f.value) AS p05,
         percentile_cont(0.25) WITHIN GROUP (ORDER BY f.value) AS p25,
         percentile_cont(0.50) WITHIN GROUP (ORDER BY f.value) AS p50,
         percentile_cont(0.75) WITHIN GROUP (ORDER BY f.value) AS p75,
         percentile_cont(0.95) WITHIN GROUP (ORDER BY f.value) AS p95
  FROM f JOIN m ON f.job_id = m.job_id AND f.restart_count = m.restart_count
    AND f.node = m.node AND f.metric = m.metric
  GROUP BY f.job_id, f.restart_count, f.node, f.metric
)
SELECT coalesce(st.job_id, b.job_id) AS job_id,
       coalesce(st.restart_count, b.restart_count) AS restart_count,
       coalesce(st.node, b.node) AS node,
       coalesce(st.metric, b.metric) AS metric,
       CAST(coalesce(st.n, 0) AS BIGINT UNSIGNED) AS n,
       CAST(coalesce(b.n_nonfinite, 0) AS BIGINT UNSIGNED) AS n_nonfinite,
       coalesce(st.trimmed, b.trimmed) AS trimmed,
       st.min, st.max, st.mean, sqrt(st.m2) AS std,
       CASE WHEN st.mean <> 0 THEN sqrt(st.m2) / st.mean END AS cv,
       CASE WHEN st.m2 > 0 AND st.min < st.max THEN st.m3 / power(st.m2, 1.5) END AS skewness,
       CASE WHEN st.m2 > 0 AND st.min < st.max THEN st.m4 / (st.m2 * st.m2) - 3 END AS kurtosis,
       st.p05, st.p25, st.p50, st.p75, st.p95
FROM stats st FULL OUTER JOIN bad b
  ON st.job_id = b.job_id AND st.restart_count = b.restart_count AND st.node = b.node
    AND st.metric = b.metric
ORDER BY job_id, restart_count, node, metric"#,
        samples = trimmed_samples(day, trim_s, only_jobs),
    )
}

/// The columns of `features` that [`describe_sql`] gives, after the key, in the table's order:
/// the counts, `trimmed` (from the job), the statistics but the two that need more than the
/// samples (`coverage` needs the job's run, `idle_share` the metric's idle threshold), and the
/// times of the rise and the cliff.
pub fn described_columns() -> Vec<&'static str> {
    let stats = FEATURE_STATS
        .iter()
        .copied()
        .filter(|c| !matches!(*c, "coverage" | "idle_share"));
    ["n", "n_nonfinite", "trimmed"]
        .into_iter()
        .chain(stats)
        .chain(["rise_from", "rise_to", "cliff_at"])
        .collect()
}

/// The DataFusion options [`describe_sql`]'s plan runs best with (every option gives the same
/// result; `jobsight sql` takes them from the environment, `DATAFUSION_EXECUTION_BATCH_SIZE` for
/// the last). With the defaults, DataFusion copies the day's few jobs to every partition for the
/// join and then groups the samples twice: a partial grouping per partition, whose state is every
/// sample (sent on as 1.4 GB of lists on the bench's 64-node day), and a final one. With these,
/// the join is partitioned by job, that partitioning is accepted for the grouping by job, node
/// and metric (Hash(job) satisfies Hash(job, node, metric)), and each sample is grouped once, in
/// the partition of its job; batches of 32,768 rows halve the per-batch work. Measured in
/// docs/benchmarks.md.
pub const DESCRIBE_OPTIONS: [(&str, &str); 4] = [
    (
        "datafusion.optimizer.hash_join_single_partition_threshold",
        "0",
    ),
    (
        "datafusion.optimizer.hash_join_single_partition_threshold_rows",
        "0",
    ),
    ("datafusion.optimizer.subset_repartition_threshold", "1"),
    ("datafusion.execution.batch_size", "32768"),
];

/// [`DESCRIBE_OPTIONS`] as the environment variables DataFusion reads them from.
pub fn describe_options_env() -> Vec<(String, String)> {
    DESCRIBE_OPTIONS
        .iter()
        .map(|(key, value)| (key.to_uppercase().replace('.', "_"), value.to_string()))
        .collect()
}

/// One day's per job × node × metric statistics as a single DataFusion plan: the trimmed samples
/// as in [`node_metric_sql`], grouped, each group described by `js_describe` (the SQL function
/// over the series core the single pass uses, `query::series_functions`). It computes what the
/// single pass computes, on any engine DataFusion runs on, and the figures plain SQL lacks
/// (slope, catastrophe, rises); it holds every group's samples until the end, where the single
/// pass holds one row group's jobs. Fastest with [`DESCRIBE_OPTIONS`].
pub fn describe_sql(day: NaiveDate, trim_s: u64, only_jobs: &[String]) -> String {
    describe_with(day, trim_s, only_jobs, &IdRange::ALL, &[])
}

/// [`describe_sql`] of the jobs in `ids`, with `extra` aggregates of each group's trimmed
/// samples `t` after the described columns, as (SQL expression, column name).
fn describe_with(
    day: NaiveDate,
    trim_s: u64,
    only_jobs: &[String],
    ids: &IdRange,
    extra: &[(String, &str)],
) -> String {
    let extra_in_groups: String = extra
        .iter()
        .map(|(expr, name)| format!(", {expr} AS {name}"))
        .collect();
    let extra_out: String = extra
        .iter()
        .map(|(_, name)| format!(", g.{name}"))
        .collect();
    let figures: Vec<String> = described_columns()
        .into_iter()
        .map(|c| match c {
            "trimmed" => "k.trimmed".to_string(),
            "n" | "n_nonfinite" => format!("CAST(d['{c}'] AS BIGINT UNSIGNED) AS {c}"),
            _ => format!("d['{c}'] AS {c}"),
        })
        .collect();
    // The samples are joined with the runs and grouped on telemetry's own dictionary columns: no
    // string is copied per sample, and the join partitions by the grouping's first key. Of the
    // keys, only the run comes from the grouped `j`, and it is half of `j`'s key (job id and run),
    // so it decides no other column (see `trimmed_samples` for why that matters).
    format!(
        r#"{jobs},
k AS (SELECT j.*, arrow_cast(j.job_id, 'Dictionary(Int32, Utf8)') AS job_key FROM j),
g AS (
  SELECT t.job_id AS job_key, k.restart_count AS run, t.node, t.metric,
         js_describe(t.ts, t.value) AS d{extra_in_groups}
  FROM telemetry t JOIN k ON t.job_id = k.job_key AND {in_run}
  WHERE t.day = '{day}'{in_range}
    AND (NOT k.trimmed OR (t.ts >= k.keep_from AND t.ts <= k.keep_to))
  GROUP BY t.job_id, k.restart_count, t.node, t.metric
)
SELECT k.job_id, k.restart_count, CAST(g.node AS VARCHAR) AS node, CAST(g.metric AS VARCHAR) AS metric,
       {figures}{extra_out}
FROM g JOIN k ON g.job_key = k.job_key AND g.run = k.restart_count
ORDER BY job_id, restart_count, node, metric"#,
        jobs = day_jobs(day, trim_s, only_jobs, ids),
        day = day.format("%Y-%m-%d"),
        figures = figures.join(", "),
        in_run = in_run("t", "k"),
        in_range = ids.condition("t.job_id"),
    )
}

/// The features plan's statement for one day's series ([`super::plan`]): [`describe_sql`] for
/// every job, plus what the job-level figures need beyond the statistics, counted from the finite
/// samples of each series: `idle_n`, those below the metric's idle threshold (`idle_below`;
/// 0 for a metric without one), and `busy_n`, those above 0.5 (the per-core duty cycle), and
/// `bins`, the series' means in bins of `bin_s` (`js_bin_means`), from which tacc_stats' node
/// imbalance is computed as the single pass computes it. The two comparisons are bounded on the
/// other side as well, so that neither a NaN nor an infinity is counted, whichever way the
/// engine orders NaN.
pub fn plan_series_sql(
    day: NaiveDate,
    trim_s: u64,
    ids: &IdRange,
    bin_s: u64,
    idle_below: &std::collections::BTreeMap<String, f64>,
) -> String {
    let idle = if idle_below.is_empty() {
        "CAST(0 AS BIGINT)".to_string()
    } else {
        let below: Vec<String> = idle_below
            .iter()
            .map(|(metric, limit)| {
                format!(
                    "(t.metric = {} AND t.value < {limit:?} AND t.value > CAST('-Infinity' AS DOUBLE))",
                    jobsight_warehouse::query::literal(metric)
                )
            })
            .collect();
        format!(
            "CAST(sum(CASE WHEN {} THEN 1 ELSE 0 END) AS BIGINT)",
            below.join(" OR ")
        )
    };
    let busy = "CAST(sum(CASE WHEN t.value > 0.5 AND t.value < CAST('Infinity' AS DOUBLE) \
                THEN 1 ELSE 0 END) AS BIGINT)"
        .to_string();
    let bins = format!("js_bin_means(t.ts, t.value, {bin_s})");
    describe_with(
        day,
        trim_s,
        &[],
        ids,
        &[(idle, "idle_n"), (busy, "busy_n"), (bins, "bins")],
    )
}

/// The features plan's count of the day's samples with a job id in `ids` it leaves out:
/// `unattributed`, of job ids not in the day's `jobs`, and `trimmed_away`, outside a job's kept
/// span (as the single pass counts).
pub fn plan_left_out_sql(day: NaiveDate, trim_s: u64, ids: &IdRange) -> String {
    format!(
        r#"{jobs},
k AS (SELECT j.*, arrow_cast(j.job_id, 'Dictionary(Int32, Utf8)') AS job_key FROM j)
SELECT CAST(sum(CASE WHEN k.job_key IS NULL THEN 1 ELSE 0 END) AS BIGINT) AS unattributed,
       CAST(sum(CASE WHEN k.trimmed AND (t.ts < k.keep_from OR t.ts > k.keep_to) THEN 1 ELSE 0 END)
            AS BIGINT) AS trimmed_away
FROM telemetry t LEFT JOIN k ON t.job_id = k.job_key AND {in_run}
WHERE t.day = '{day}'{in_range}"#,
        jobs = day_jobs(day, trim_s, &[], ids),
        day = day.format("%Y-%m-%d"),
        in_run = in_run("t", "k"),
        in_range = ids.condition("t.job_id"),
    )
}

/// tacc_stats' node imbalance from the finite trimmed samples `f`, as CTEs ending in
/// `imbalance(job_id, metric, imbalance)`; a node takes part in a bin where it holds at least half
/// the samples of the bin's fullest node (`covered`, as `job::covers_bin`).
fn imbalance_ctes(bin_s: u64) -> String {
    format!(
        r#"binned AS (
  SELECT job_id, restart_count, metric, node, date_bin(INTERVAL '{bin_s} seconds', ts) AS bin, avg(value) AS v,
         count(*) AS n
  FROM f GROUP BY job_id, restart_count, metric, node, date_bin(INTERVAL '{bin_s} seconds', ts)
),
fullest AS (
  SELECT job_id, restart_count, metric, bin, max(n) AS most FROM binned
  GROUP BY job_id, restart_count, metric, bin
),
covered AS (
  SELECT b.* FROM binned b JOIN fullest m ON b.job_id = m.job_id
    AND b.restart_count = m.restart_count AND b.metric = m.metric AND b.bin = m.bin
  WHERE 2 * b.n >= m.most
),
peak AS (
  SELECT job_id, restart_count, metric, bin, max(v) AS top FROM covered
  GROUP BY job_id, restart_count, metric, bin
),
behind AS (
  SELECT b.job_id, b.restart_count, b.metric, b.node, avg((p.top - b.v) / p.top) AS behind
  FROM covered b JOIN peak p ON b.job_id = p.job_id AND b.restart_count = p.restart_count
    AND b.metric = p.metric AND b.bin = p.bin
  WHERE p.top > 0
  GROUP BY b.job_id, b.restart_count, b.metric, b.node
),
imbalance AS (
  SELECT job_id, restart_count, metric, max(behind) AS imbalance FROM behind
  GROUP BY job_id, restart_count, metric
)"#
    )
}

/// The reference SQL for one day's per job × metric figures across the job's nodes, from the
/// trimmed samples, columns in the order of the `features_job` schema. Node imbalance follows tacc_stats: samples are averaged per node
/// in bins of `bin_s` seconds (so that nodes sampled at slightly different times line up), and
/// imbalance = max over nodes of the mean over bins of (max over nodes − node) / max over nodes.
/// Bins whose maximum is not positive say nothing about imbalance and are left out.
pub fn across_nodes_sql(day: NaiveDate, trim_s: u64, bin_s: u64, only_jobs: &[String]) -> String {
    format!(
        r#"{samples},
{imbalance},
per_node AS (
  SELECT job_id, restart_count, metric, node, avg(value) AS mean, min(value) AS min,
         max(value) AS max
  FROM f GROUP BY job_id, restart_count, metric, node
),
nodes AS (
  SELECT job_id, restart_count, metric, CAST(count(*) AS BIGINT UNSIGNED) AS nodes,
         avg(mean) AS mean, min(min) AS min, max(max) AS max,
         min(mean) AS node_mean_min, max(mean) AS node_mean_max,
         CASE WHEN avg(mean) <> 0 THEN stddev_pop(mean) / avg(mean) END AS node_cv
  FROM per_node
  GROUP BY job_id, restart_count, metric
)
SELECT n.job_id, n.restart_count, n.metric, n.nodes, n.mean, n.min, n.max, n.node_mean_min,
       n.node_mean_max, n.node_cv, i.imbalance
FROM nodes n LEFT JOIN imbalance i
  ON n.job_id = i.job_id AND n.restart_count = i.restart_count AND n.metric = i.metric
ORDER BY n.job_id, n.restart_count, n.metric"#,
        samples = trimmed_samples(day, trim_s, only_jobs),
        imbalance = imbalance_ctes(bin_s),
    )
}
