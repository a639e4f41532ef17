//! Each job's own history, for the rules that compare a run with the earlier runs of the same
//! application by the same user (`history.<field>`): the comparison a user makes by hand ("this
//! took twice as long as usual"), which none of the anchor tools makes for them.
//!
//! An application is what names it in every site's warehouse, telemetry or not: the cluster, the
//! user and the job name. Its earlier runs are its COMPLETED runs of the last
//! `rules.history_days` days that ended before this run started, newest first, at most
//! `rules.history_runs` of them. The yardsticks are medians, not means: earlier runs are not
//! labelled healthy, and a median of twelve holds while fewer than six of them were themselves
//! slow or anomalous (the contaminated-history problem of issue 20, handled by construction).
//!
//! Besides the medians of the run's size and efficiency, the metric that differs most from the
//! earlier runs is named: for each metric of `features_job` with a mean in at least
//! [`MIN_METRIC_RUNS`] earlier runs and a median above zero, the robust distance
//! `|this − median| / max(1.4826 · MAD, 5 % of the median)`; the largest wins if it is at least
//! [`STANDS_OUT`] and the two differ by half (×1.5 or ×0.67) or more. A scale-free distance, so
//! a metric whose level varies a lot from run to run is not named for varying again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chrono::{Duration, NaiveDate};
use datafusion::prelude::SessionContext;

use super::ClassifyError;
use crate::lang::Value;
use crate::{JobData, Settings};
use jobsight_warehouse::query::{self, Columns, QueryError, literal};

/// Earlier runs a metric needs before it can be named as the difference.
pub const MIN_METRIC_RUNS: usize = 3;
/// Robust distance from the earlier runs' median above which a metric stands out.
pub const STANDS_OUT: f64 = 3.0;

/// One earlier run of an application.
#[derive(Debug, Clone, PartialEq)]
struct Run {
    job_id: String,
    day: String,
    /// Which run of the job id (`restart_count`): a requeued job's runs have figures of their own.
    restart_count: Option<u32>,
    end_us: i64,
    elapsed_s: Option<f64>,
    core_hours: Option<f64>,
    cpu_eff: Option<f64>,
    mem_used_max_mb: Option<f64>,
}

/// Cluster, user, job name.
type Key = (String, String, String);

fn text(job: &JobData, field: &str) -> Option<String> {
    match job.job.get(field) {
        Some(Value::Str(s)) if !s.trim().is_empty() => Some(s.clone()),
        _ => None,
    }
}

fn key(job: &JobData) -> Option<Key> {
    Some((
        text(job, "cluster")?,
        text(job, "user")?,
        text(job, "name")?,
    ))
}

/// When the run started, in microseconds; the end for a run that never started.
fn start_us(job: &JobData) -> Option<i64> {
    ["start", "end"].iter().find_map(|f| match job.job.get(*f) {
        Some(Value::Num(s)) => Some((s * 1e6) as i64),
        _ => None,
    })
}

/// [`attach`], and on failure a warning on stderr instead of an error: the history reads two
/// months of the warehouse, and one unreadable part from weeks ago must not cost today's jobs
/// every other finding. The history rules stay silent for these jobs (their variables are
/// missing); the warning names the file.
pub fn attach_or_warn(data: &Path, day: NaiveDate, jobs: &mut [JobData], settings: &Settings) {
    if let Err(e) = attach(data, day, jobs, settings) {
        eprintln!("jobsight classify {day}: judged without the jobs' earlier runs: {e}");
    }
}

/// Fills `history` of each of `jobs` (of `day`) from the warehouse at `data`. Jobs without a
/// user or a name get none; jobs of an application with no earlier run get `history.runs = 0`.
pub fn attach(
    data: &Path,
    day: NaiveDate,
    jobs: &mut [JobData],
    settings: &Settings,
) -> Result<(), ClassifyError> {
    let keys: BTreeSet<Key> = jobs.iter().filter_map(key).collect();
    if keys.is_empty() || settings.history_runs == 0 {
        return Ok(());
    }
    let from = day - Duration::days(i64::from(settings.history_days));
    let failed = |e: QueryError| ClassifyError::read(data, format!("the jobs' history: {e}"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ClassifyError::read(data, format!("cannot start a query runtime: {e}")))?;
    runtime.block_on(async {
        let ctx = query::session(data).await.map_err(failed)?;
        let runs = earlier_runs(&ctx, from, day, &keys).await.map_err(failed)?;
        let chosen: Vec<Vec<&Run>> = jobs
            .iter()
            .map(|job| {
                key(job)
                    .and_then(|k| runs.get(&k))
                    .map_or_else(Vec::new, |r| before(job, r, settings.history_runs))
            })
            .collect();
        let ids: BTreeSet<&str> = chosen.iter().flatten().map(|r| r.job_id.as_str()).collect();
        let means = metric_means(&ctx, from, day, &ids).await.map_err(failed)?;
        for (job, chosen) in jobs.iter_mut().zip(&chosen) {
            if key(job).is_some() {
                job.history = figures(job, chosen, &means);
            }
        }
        Ok(())
    })
}

/// The COMPLETED runs of the applications in `keys` that ended in `[from, to]`, oldest first.
async fn earlier_runs(
    ctx: &SessionContext,
    from: NaiveDate,
    to: NaiveDate,
    keys: &BTreeSet<Key>,
) -> Result<BTreeMap<Key, Vec<Run>>, QueryError> {
    let users: BTreeSet<&str> = keys.iter().map(|k| k.1.as_str()).collect();
    let users: Vec<String> = users.into_iter().map(literal).collect();
    let same = jobsight_warehouse::catalog::same_run("s", "j");
    let sql = format!(
        r#"SELECT j.cluster, j."user", j.name, j.job_id, j.day, j.restart_count, j."end", j.elapsed_s,
                  j.core_hours, s.cpu_eff, s.mem_used_max_mb
           FROM jobs j LEFT JOIN job_summary s ON {same}
           WHERE j.day BETWEEN '{from}' AND '{to}' AND j.state = 'COMPLETED'
             AND j."user" IN ({})"#,
        users.join(", ")
    );
    let mut runs: BTreeMap<Key, Vec<Run>> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for batch in query::collect(ctx, &sql).await? {
        let c = Columns::of(&batch)?;
        for i in 0..batch.num_rows() {
            let (Some(cluster), Some(user), Some(name), Some(job_id), Some(day), Some(end_us)) = (
                c.text("cluster", i),
                c.text("user", i),
                c.text("name", i),
                c.text("job_id", i),
                c.text("day", i),
                c.int("end", i),
            ) else {
                continue;
            };
            let key = (cluster, user, name);
            // A summary written twice (a per-job part and the day's) joins a run twice.
            if !keys.contains(&key) || !seen.insert((job_id.clone(), end_us)) {
                continue;
            }
            runs.entry(key).or_default().push(Run {
                job_id,
                day,
                restart_count: c.run("restart_count", i),
                end_us,
                elapsed_s: c.int("elapsed_s", i).map(|s| s as f64),
                core_hours: c.float("core_hours", i),
                cpu_eff: c.float("cpu_eff", i),
                mem_used_max_mb: c.float("mem_used_max_mb", i),
            });
        }
    }
    for list in runs.values_mut() {
        list.sort_by(|a, b| (a.end_us, &a.job_id).cmp(&(b.end_us, &b.job_id)));
    }
    Ok(runs)
}

/// A run's key among the metric means: job id, day and run (`None` for rows written before runs
/// were recorded).
type MeansKey = (String, String, Option<u32>);

/// Each earlier run's metric means, by job id, day and run, then metric.
async fn metric_means(
    ctx: &SessionContext,
    from: NaiveDate,
    to: NaiveDate,
    ids: &BTreeSet<&str>,
) -> Result<BTreeMap<MeansKey, BTreeMap<String, f64>>, QueryError> {
    let mut means: BTreeMap<MeansKey, BTreeMap<String, f64>> = BTreeMap::new();
    if ids.is_empty() {
        return Ok(means);
    }
    let ids: Vec<String> = ids.iter().map(|id| literal(id)).collect();
    let sql = format!(
        "SELECT job_id, day, restart_count, metric, mean FROM features_job \
         WHERE day BETWEEN '{from}' AND '{to}' AND job_id IN ({})",
        ids.join(", ")
    );
    for batch in query::collect(ctx, &sql).await? {
        let c = Columns::of(&batch)?;
        for i in 0..batch.num_rows() {
            if let (Some(id), Some(day), Some(metric), Some(mean)) = (
                c.text("job_id", i),
                c.text("day", i),
                c.text("metric", i),
                c.float("mean", i),
            ) {
                let run = c.run("restart_count", i);
                means
                    .entry((id, day, run))
                    .or_default()
                    .insert(metric, mean);
            }
        }
    }
    Ok(means)
}

/// The newest `limit` of `runs` (oldest first) that ended before `job` started, newest first.
fn before<'a>(job: &JobData, runs: &'a [Run], limit: usize) -> Vec<&'a Run> {
    let Some(start) = start_us(job) else {
        return Vec::new();
    };
    runs.iter()
        .rev()
        .filter(|r| r.end_us < start && r.job_id != job.job_id)
        .take(limit)
        .collect()
}

/// The median of the finite values.
fn median(mut values: Vec<f64>) -> Option<f64> {
    values.retain(|v| v.is_finite());
    jobsight_base::stats::median(&mut values)
}

/// The `history.<field>` values of `job` against its earlier runs `chosen`.
fn figures(
    job: &JobData,
    chosen: &[&Run],
    means: &BTreeMap<MeansKey, BTreeMap<String, f64>>,
) -> BTreeMap<String, Value> {
    let med = |f: fn(&Run) -> Option<f64>| {
        Value::from_opt(median(chosen.iter().filter_map(|r| f(r)).collect()))
    };
    let mut out = BTreeMap::from([
        ("runs".to_string(), Value::num(chosen.len() as f64)),
        ("elapsed_s".to_string(), med(|r| r.elapsed_s)),
        ("core_hours".to_string(), med(|r| r.core_hours)),
        ("cpu_eff".to_string(), med(|r| r.cpu_eff)),
        ("mem_used_max_mb".to_string(), med(|r| r.mem_used_max_mb)),
    ]);
    let earlier: Vec<&BTreeMap<String, f64>> = chosen
        .iter()
        .filter_map(|r| {
            let of_run = |run| means.get(&(r.job_id.clone(), r.day.clone(), run));
            of_run(r.restart_count).or_else(|| of_run(None))
        })
        .collect();
    let difference = if job.across.is_empty() {
        "there is no telemetry of this run to compare".to_string()
    } else if earlier.is_empty() {
        "the earlier runs have no telemetry to compare".to_string()
    } else {
        match most_changed(job, &earlier) {
            Some((metric, ratio)) => {
                out.insert("changed_metric".into(), Value::Str(metric.clone()));
                out.insert("changed_ratio".into(), Value::num(ratio));
                let times = if ratio >= 1.0 {
                    format!("{ratio:.1}×")
                } else {
                    format!("{ratio:.2}×")
                };
                format!("the biggest difference is in {metric}: {times} its median in those runs")
            }
            None => "no metric stands out from the earlier runs".to_string(),
        }
    };
    out.insert("difference".into(), Value::Str(difference));
    out
}

/// The metric whose mean in this run stands out most from the earlier runs, with the ratio of
/// this run's mean to their median.
fn most_changed(job: &JobData, earlier: &[&BTreeMap<String, f64>]) -> Option<(String, f64)> {
    let mut best: Option<(f64, String, f64)> = None;
    for (metric, stats) in &job.across {
        let Some(this) = stats.get("mean").copied().filter(|v| v.is_finite()) else {
            continue;
        };
        let values: Vec<f64> = earlier
            .iter()
            .filter_map(|m| m.get(metric).copied())
            .filter(|v| v.is_finite())
            .collect();
        if values.len() < MIN_METRIC_RUNS {
            continue;
        }
        let Some(med) = median(values.clone()).filter(|m| *m > 0.0) else {
            continue;
        };
        let mad = median(values.iter().map(|v| (v - med).abs()).collect()).unwrap_or(0.0);
        let distance = (this - med).abs() / (1.4826 * mad).max(0.05 * med);
        let ratio = this / med;
        let far = !(1.0 / 1.5..1.5).contains(&ratio);
        if distance >= STANDS_OUT && far && best.as_ref().is_none_or(|b| distance > b.0) {
            best = Some((distance, metric.clone(), ratio));
        }
    }
    best.map(|(_, metric, ratio)| (metric, ratio))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};
    use jobsight_warehouse::catalog::Table;
    use jobsight_warehouse::catalog::rows::{FeaturesJobRow, JobRow, JobSummaryRow};

    fn at(day: NaiveDate, hour: u32) -> DateTime<Utc> {
        day.and_hms_opt(hour, 0, 0).unwrap().and_utc()
    }

    /// A run of `name` by `user` that started at 01:00 on `day` and took `elapsed_s`.
    fn stored(id: &str, user: &str, name: &str, day: NaiveDate, elapsed_s: i64) -> JobRow {
        let start = at(day, 1);
        JobRow {
            cluster: "c".into(),
            job_id: id.into(),
            user: Some(user.into()),
            name: Some(name.into()),
            num_nodes: Some(1),
            cpus: Some(16),
            start: Some(start),
            end: start + Duration::seconds(elapsed_s),
            state: Some("COMPLETED".into()),
            source: "test".into(),
            ..JobRow::default()
        }
    }

    fn summary(id: &str, elapsed_s: f64) -> JobSummaryRow {
        JobSummaryRow {
            job_id: id.into(),
            elapsed_s,
            trimmed: false,
            nodes_expected: Some(1),
            nodes_seen: 1,
            nodes_missing: None,
            metrics: 2,
            samples: 100,
            coverage_min: Some(1.0),
            coverage_mean: Some(1.0),
            judgeable: true,
            not_judgeable_reason: None,
            duty_cycle: None,
            cpu_used_cores: Some(14.0),
            cpu_eff: Some(0.88),
            mem_used_max_mb: Some(8000.0),
            mem_eff: None,
            time_eff: None,
            gpu_util: None,
            core_hours: None,
            wasted_core_hours: None,
            ..JobSummaryRow::default()
        }
    }

    fn feature(id: &str, metric: &str, mean: f64) -> FeaturesJobRow {
        FeaturesJobRow {
            job_id: id.into(),
            metric: metric.into(),
            nodes: 1,
            mean: Some(mean),
            ..Default::default()
        }
    }

    fn write(data: &Path, day: NaiveDate, jobs: &[JobRow], features: &[(&str, f64, f64)]) {
        let summaries: Vec<JobSummaryRow> = jobs
            .iter()
            .map(|j| summary(&j.job_id, (j.end - j.start.unwrap()).num_seconds() as f64))
            .collect();
        let means: Vec<FeaturesJobRow> = features
            .iter()
            .flat_map(|(id, bw, cpu)| [feature(id, "mem_bw", *bw), feature(id, "cpu_user", *cpu)])
            .collect();
        JobRow::write_part(data, day, "t", jobs).unwrap();
        JobSummaryRow::write_part(data, day, "t", &summaries).unwrap();
        FeaturesJobRow::write_part(data, day, "t", &means).unwrap();
    }

    /// Eight earlier daily runs of `lmp_run` by u1 (about 1,000 s, memory bandwidth about 1),
    /// the same name by another user (much longer), then today's run: 2.5 times as long with
    /// three times the bandwidth. Through the classify stage, whole day and per job.
    #[test]
    fn a_run_slower_than_its_own_history_is_a_finding_with_the_metric_that_changed() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let today = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        for i in 1..=8i64 {
            let day = today - Duration::days(i);
            let ours = format!("{}", 100 + i);
            let theirs = format!("{}", 200 + i);
            write(
                data,
                day,
                &[
                    stored(&ours, "u1", "lmp_run", day, 990 + 5 * i),
                    stored(&theirs, "u2", "lmp_run", day, 9000),
                ],
                &[(&ours, 1.0 + 0.02 * i as f64, 0.85), (&theirs, 5.0, 0.5)],
            );
        }
        // Long ago: outside rules.history_days.
        let old = today - Duration::days(200);
        write(data, old, &[stored("1", "u1", "lmp_run", old, 100)], &[]);
        write(
            data,
            today,
            &[
                stored("500", "u1", "lmp_run", today, 2500),
                stored("501", "u3", "first_time", today, 2500),
            ],
            &[("500", 3.1, 0.85), ("501", 1.0, 0.85)],
        );
        let book = crate::RuleBook::load(None).unwrap();
        let settings = Settings::default();
        let verdicts = super::super::verdicts(data, today, &book, &settings, None, None).unwrap();
        let finding = |job: &str| {
            verdicts
                .iter()
                .find(|v| v.job_id == job)
                .unwrap()
                .findings
                .iter()
                .find(|f| f.rule == "slower-than-usual")
                .cloned()
        };
        let f = finding("500").expect("the slow run is found");
        assert_eq!(
            f.message,
            "This run took 2.5× the median of your last 8 runs of lmp_run (41 min against 16 min); \
             the biggest difference is in mem_bw: 2.8× its median in those runs."
        );
        assert!(
            f.evidence
                .contains(&("history.changed_metric".into(), Value::Str("mem_bw".into())))
        );
        // An application without earlier runs has no yardstick.
        assert_eq!(finding("501"), None);
        // Jobs judged a group at a time are judged as in one group.
        let one_by_one =
            super::super::verdicts_by(data, today, &book, &settings, None, None, 1).unwrap();
        assert_eq!(one_by_one, verdicts);
        let job = crate::classify::input::read_day(data, today, None, None).unwrap();
        let mut job: Vec<JobData> = job.into_iter().filter(|j| j.job_id == "501").collect();
        attach(data, today, &mut job, &settings).unwrap();
        assert_eq!(job[0].history["runs"], Value::num(0.0));
        // The per-job path sees the same history; a site that turns it off sees none.
        let one =
            super::super::verdicts(data, today, &book, &settings, Some(&["500".into()]), None)
                .unwrap();
        assert!(
            one[0]
                .findings
                .iter()
                .any(|f| f.rule == "slower-than-usual")
        );
        let off = Settings {
            history_runs: 0,
            ..Settings::default()
        };
        let quiet = super::super::verdicts(data, today, &book, &off, None, None).unwrap();
        assert!(
            quiet
                .iter()
                .flat_map(|v| &v.findings)
                .all(|f| f.rule != "slower-than-usual")
        );
        // An unreadable part weeks ago costs the history, not the day's verdicts.
        let bad = Table::Jobs
            .dir(data)
            .join(format!("day={}", today - Duration::days(30)));
        std::fs::create_dir_all(&bad).unwrap();
        std::fs::write(bad.join("part-x.parquet"), "not parquet").unwrap();
        assert!(attach(data, today, &mut job, &settings).is_err());
        let judged = super::super::verdicts(data, today, &book, &settings, None, None).unwrap();
        assert_eq!(judged.len(), 2);
        assert!(
            judged
                .iter()
                .flat_map(|v| &v.findings)
                .all(|f| f.rule != "slower-than-usual")
        );
    }

    fn run(id: &str, end_us: i64, elapsed_s: f64) -> Run {
        Run {
            job_id: id.into(),
            day: "2026-11-20".into(),
            restart_count: Some(0),
            end_us,
            elapsed_s: Some(elapsed_s),
            core_hours: Some(elapsed_s / 3600.0),
            cpu_eff: Some(0.9),
            mem_used_max_mb: Some(1000.0),
        }
    }

    fn job(id: &str, start_s: f64, mem_bw: f64) -> JobData {
        let mut job = JobData {
            job_id: id.into(),
            ..JobData::default()
        };
        job.job.insert("start".into(), Value::num(start_s));
        job.across.insert(
            "mem_bw".into(),
            BTreeMap::from([("mean".to_string(), mem_bw)]),
        );
        job.across.insert(
            "cpu_user".into(),
            BTreeMap::from([("mean".to_string(), 0.8)]),
        );
        job
    }

    #[test]
    fn the_newest_earlier_runs_are_the_yardstick_and_never_the_run_itself() {
        let runs: Vec<Run> = (0..20)
            .map(|i| run(&format!("{i}"), i * 1_000_000, 100.0 + i as f64))
            .collect();
        let j = job("15", 15.5, 1.0);
        let chosen = before(&j, &runs, 4);
        let ids: Vec<&str> = chosen.iter().map(|r| r.job_id.as_str()).collect();
        assert_eq!(ids, ["14", "13", "12", "11"]);
        // A requeued run with the same id that ended earlier is not its own history.
        let j = job("3", 100.0, 1.0);
        assert!(before(&j, &runs, 30).iter().all(|r| r.job_id != "3"));
        assert_eq!(before(&j, &runs, 30).len(), 19);
    }

    #[test]
    fn medians_hold_against_a_few_anomalous_earlier_runs() {
        // Twelve runs, five of them three times as slow: the median is still a normal run.
        let runs: Vec<Run> = (0..12)
            .map(|i| {
                run(
                    &format!("{i}"),
                    i,
                    if i % 2 == 0 && i < 10 { 3000.0 } else { 1000.0 },
                )
            })
            .collect();
        let chosen: Vec<&Run> = runs.iter().collect();
        let h = figures(&job("x", 1e9, 1.0), &chosen, &BTreeMap::new());
        assert_eq!(h["runs"], Value::num(12.0));
        assert_eq!(h["elapsed_s"], Value::num(1000.0));
        assert_eq!(
            h["difference"],
            Value::Str("the earlier runs have no telemetry to compare".into())
        );
    }

    #[test]
    fn the_metric_that_stands_out_is_named_and_a_noisy_one_is_not() {
        let earlier: Vec<BTreeMap<String, f64>> = [1.0, 1.1, 0.9, 1.0, 1.05]
            .iter()
            .zip([0.2, 0.9, 0.5, 0.1, 0.7])
            .map(|(bw, noisy)| {
                BTreeMap::from([
                    ("mem_bw".to_string(), *bw),
                    ("cpu_user".to_string(), 0.8),
                    ("noisy".to_string(), noisy),
                ])
            })
            .collect();
        let refs: Vec<&BTreeMap<String, f64>> = earlier.iter().collect();
        let mut j = job("x", 1e9, 3.1);
        j.across
            .insert("noisy".into(), BTreeMap::from([("mean".to_string(), 1.6)]));
        let (metric, ratio) = most_changed(&j, &refs).unwrap();
        assert_eq!(metric, "mem_bw");
        assert!((ratio - 3.1).abs() < 1e-9);
        // Within its usual spread and under half again: nothing stands out.
        let j = job("x", 1e9, 1.2);
        assert_eq!(most_changed(&j, &refs), None);
        // Fewer than MIN_METRIC_RUNS earlier values: not judged.
        assert_eq!(most_changed(&job("x", 1e9, 9.0), &refs[..2]), None);
    }
}
