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
//!
//! The modules: `settings`, the `[summary]` options checked; `period`, what a row is for (its
//! period and grouping); `figures`, the figures' computation (the SQL and the rows it gives);
//! `tables`, the writing of the nightly `summaries` table; and `email`, the measured effect of
//! the emails. Everything public is re-exported here. The text a person reads of them (the
//! table of `jobsight summary`, the effect of the emails) is the render crate's
//! (`jobsight_render::summary`): this stage returns rows.
//!
//! [`SummaryRow`]: jobsight_warehouse::catalog::rows::SummaryRow
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod email;
mod error;
mod figures;
mod period;
mod settings;
mod tables;

pub use email::{EmailEffect, email_effect, email_effect_sql};
pub use error::SummaryError;
pub use figures::{Rank, summarize, summarize_on, summary_sql, top};
pub use period::{Grouping, Period};
pub use settings::{DEFAULT_SHORT_JOB_S, Options, Settings};
pub use tables::{SUMMARY_PART, write_days};

#[cfg(any(test, feature = "fixture"))]
pub mod fixture;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::*;

    use chrono::NaiveDate;
    use jobsight_warehouse::query;

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

    /// A job its telemetry could not judge counts in the efficiency and the waste when Slurm
    /// accounting gave its figures, and not otherwise; the judged share stays the telemetry's.
    #[test]
    fn accounting_figures_count_without_telemetry() {
        use jobsight_warehouse::catalog::rows::{JobRow, JobSummaryRow};
        let day = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let settings = Settings::default();
        let figures_of = |source: Option<&str>| {
            let dir = tempfile::tempdir().unwrap();
            let data = dir.path();
            // 4 CPUs for 2 h: 8 core-hours.
            let times = ["09:00:00", "10:00:00", "12:00:00"];
            let jobs = [job(
                "1",
                "alice",
                "cpu",
                4,
                None,
                times,
                14_400,
                "COMPLETED",
                8192,
            )];
            JobRow::write_part(data, day, "t", &jobs).unwrap();
            let mut unjudged = summary("1", 0.25, 0.5, None);
            unjudged.judgeable = false;
            unjudged.cpu_eff_source = source.map(str::to_string);
            unjudged.mem_source = source.map(str::to_string);
            let summaries = [unjudged];
            JobSummaryRow::write_part(data, day, "t", &summaries).unwrap();
            let rows =
                summarize(data, &settings, day, day, Period::Day, Grouping::Cluster).unwrap();
            let r = &rows[0];
            (r.judged_jobs, r.cpu_eff, r.mem_eff, r.idle_core_hours)
        };
        let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-9);
        let (judged, cpu_eff, mem_eff, idle) = figures_of(Some("accounting"));
        assert_eq!(judged, 0);
        assert!(
            close(cpu_eff, 0.25) && close(mem_eff, 0.5),
            "{cpu_eff:?} {mem_eff:?}"
        );
        assert!(
            close(Some(idle), 6.0),
            "8 core-hours, a quarter busy: {idle}"
        );
        let (_, cpu_eff, mem_eff, idle) = figures_of(None);
        assert_eq!((cpu_eff, mem_eff, idle), (None, None, 0.0));
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
    /// One row's values as the `.slt` file writes them (its column types decide the form).
    fn render_row(c: &query::Columns, types: &str, names: &[String], i: usize) -> Vec<String> {
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
            .collect()
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
            let joined: Vec<String> = got.iter().map(|cells| cells.join(" ")).collect();
            assert_eq!(joined, example.rows, "{}", example.sql);
            page += &format!(
                "\n{}\n\n```sql\n{}\n```\n\n| {} |\n|{}\n",
                example.about,
                example.sql,
                names.join(" | "),
                "---|".repeat(names.len()),
            );
            // The cells as the query gave them: a value may hold spaces (a type's name).
            for cells in &got {
                page += &format!("| {} |\n", cells.join(" | "));
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
        // Its text (the closing count) is tested where it is rendered, jobsight_render::summary.
    }
}
