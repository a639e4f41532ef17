//! The history on a user's page: their jobs of the last [`HISTORY_DAYS`] per day, the findings
//! that keep coming back, their latest jobs with verdicts, and the emails they were sent.

use std::collections::HashMap;

use chrono::NaiveDate;
use datafusion::prelude::SessionContext;

use super::sql::{HISTORY_DAYS, each_row, text};
use jobsight_warehouse::catalog::same_run;
use jobsight_warehouse::query::QueryError;

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
    pub user: String,
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

/// The history of every user who had a job in the [`HISTORY_DAYS`] up to `day`, by (cluster,
/// user).
///
/// With `only`, the history of that user alone (a served user page).
pub async fn user_histories(
    ctx: &SessionContext,
    day: NaiveDate,
    only: Option<&str>,
) -> Result<HashMap<(String, String), UserHistory>, QueryError> {
    let from = day - chrono::Days::new(HISTORY_DAYS);
    let (same, same_x, same_f) = (same_run("s", "j"), same_run("x", "j"), same_run("f", "j"));
    let same_p = same_run("p", "j");
    let of_user = |alias: &str| {
        only.map_or(String::new(), |u| {
            format!(
                " AND {alias}\"user\" = {}",
                jobsight_warehouse::query::literal(u)
            )
        })
    };
    let range = |alias: &str| {
        let users = if alias == "j." {
            of_user("j.")
        } else {
            String::new()
        };
        format!("{alias}day >= '{from}' AND {alias}day <= '{day}'{users}")
    };
    let mut out: HashMap<(String, String), UserHistory> = HashMap::new();
    let sql = format!(
        "SELECT j.cluster, j.\"user\", j.day, count(*) AS jobs, \
         sum(CASE WHEN x.n > 0 THEN 1 ELSE 0 END) AS flagged, \
         sum(s.cpu_eff * j.core_hours) / sum(CASE WHEN s.cpu_eff IS NOT NULL THEN j.core_hours END) AS eff \
         FROM jobs j LEFT JOIN job_summary s ON {same} AND s.judgeable \
         LEFT JOIN (SELECT job_id, day, restart_count, count(*) AS n FROM findings WHERE {} GROUP BY 1, 2, 3) x \
           ON {same_x} \
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
         FROM findings f JOIN jobs j ON {same_f} \
         WHERE {}{} GROUP BY 1, 2, 3 ORDER BY 1, 2, n DESC, 3",
        range("f."),
        of_user("j.")
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
         FROM jobs j LEFT JOIN job_summary s ON {same} AND s.judgeable \
         LEFT JOIN (SELECT job_id, day, restart_count, count(*) AS n FROM findings WHERE {} GROUP BY 1, 2, 3) x \
           ON {same_x} \
         LEFT JOIN (SELECT job_id, day, restart_count, \
             coalesce(max(CASE WHEN verdict <> 'healthy' THEN verdict END), max(verdict)) AS verdict \
             FROM predictions WHERE {} GROUP BY 1, 2, 3) p ON {same_p} \
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
            history.recent.push(recent_job(c, i));
        }
    })
    .await?;
    // The ledger has no cluster: a user's emails show on their page of every cluster. One row
    // per message (the ledger has one per job and finding it reported).
    let sql = format!(
        "SELECT \"user\", key, min(period) AS period, min(kind) AS kind, min(status) AS status, \
         max(sent_at) AS sent_at FROM notifications \
         WHERE {}{} AND \"user\" IS NOT NULL GROUP BY 1, 2 \
         ORDER BY sent_at DESC NULLS LAST, period DESC, key",
        range(""),
        of_user("")
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

/// One row of a job list's query (`user_histories`' recent jobs, [`jobs_between`]).
fn recent_job(c: &jobsight_warehouse::query::Columns, i: usize) -> RecentJob {
    RecentJob {
        job_id: text(c, "job_id", i),
        user: text(c, "user", i),
        day: text(c, "day", i),
        name: text(c, "name", i),
        state: text(c, "state", i),
        elapsed_s: c.int("elapsed_s", i),
        cpu_eff: c.float("cpu_eff", i),
        mem_eff: c.float("mem_eff", i),
        findings: c.int("findings", i).unwrap_or(0),
        verdict: c.text("verdict", i),
    }
}

/// The jobs that ended from `from` to `to` (UTC days), of `user` or everyone's, newest first,
/// at most `limit`: what `jobsight jobs` lists.
pub async fn jobs_between(
    ctx: &SessionContext,
    user: Option<&str>,
    from: NaiveDate,
    to: NaiveDate,
    limit: usize,
) -> Result<Vec<RecentJob>, QueryError> {
    let range = |alias: &str| format!("{alias}day >= '{from}' AND {alias}day <= '{to}'");
    let (same, same_x, same_p) = (same_run("s", "j"), same_run("x", "j"), same_run("p", "j"));
    let of_user = user.map_or(String::new(), |u| {
        format!(
            " AND j.\"user\" = {}",
            jobsight_warehouse::query::literal(u)
        )
    });
    let sql = format!(
        "SELECT j.\"user\", j.job_id, j.day, j.name, j.state, j.elapsed_s, \
         s.cpu_eff, s.mem_eff, coalesce(x.n, 0) AS findings, p.verdict \
         FROM jobs j LEFT JOIN job_summary s ON {same} \
         LEFT JOIN (SELECT job_id, day, restart_count, count(*) AS n FROM findings WHERE {} GROUP BY 1, 2, 3) x \
           ON {same_x} \
         LEFT JOIN (SELECT job_id, day, restart_count, \
             coalesce(max(CASE WHEN verdict <> 'healthy' THEN verdict END), max(verdict)) AS verdict \
             FROM predictions WHERE {} GROUP BY 1, 2, 3) p ON {same_p} \
         WHERE {}{of_user} ORDER BY j.\"end\" DESC, j.job_id LIMIT {limit}",
        range(""),
        range(""),
        range("j.")
    );
    let mut jobs = Vec::new();
    each_row(ctx, &sql, |c, i| {
        jobs.push(recent_job(c, i));
    })
    .await?;
    Ok(jobs)
}
