//! A user's page: their recent jobs with verdicts and efficiency, their trend and repeating
//! findings over the last 30 days, and the emails they were sent.

use chrono::NaiveDate;
use jobsight_base::plain;
use minijinja::Value;
use serde_json::json;

use super::charts::{self, ChartError};
use super::format::{c, duration, href, pct, with_charts};
use super::{Page, PageCheck, PageTemplates};
use super::{PageError, sample};
use crate::templates::Templates;
use jobsight_report::Settings;
use jobsight_report::load::UserHistory;
use jobsight_report::{day_path, job_path, user_path};

/// The user page's template, checked against a sample history (`sample`).
pub(super) const PAGE: Page = Page {
    template: "user.html",
    text: include_str!("user.html"),
    check: PageCheck::Sample(check),
};

/// `check`'s rendering of the template against a sample history.
fn check(pages: &Templates, _: &Settings) -> Result<(), PageError> {
    let history = sample::sample_history();
    let user = user_page("cluster", "alice", sample::sample_day(), &history)?;
    pages.render(PAGE.template, &user)?;
    Ok(())
}

impl PageTemplates {
    /// A user's page of `cluster`: their history up to `day`.
    pub fn user(
        &self,
        cluster: &str,
        user: &str,
        day: NaiveDate,
        history: &UserHistory,
    ) -> Result<String, String> {
        self.render(PAGE.template, user_page(cluster, user, day, history))
    }

    /// Its values, for the web interface.
    pub fn user_value(
        &self,
        cluster: &str,
        user: &str,
        day: NaiveDate,
        history: &UserHistory,
    ) -> Result<Value, ChartError> {
        user_page(cluster, user, day, history)
    }
}

/// The user page's values: their recent jobs with verdicts and efficiency, their trend and
/// repeating findings over the last 30 days, and the emails they were sent.
pub fn user_page(
    cluster: &str,
    user: &str,
    day: NaiveDate,
    history: &UserHistory,
) -> Result<Value, ChartError> {
    let me = user_path(cluster, user);
    let rows: Vec<_> = history
        .recent
        .iter()
        .map(|j| {
            json!({
                "job_id": c(&j.job_id), "day": c(&j.day), "name": c(&j.name), "state": c(&j.state),
                "href": href(&me, &job_path(cluster, &j.job_id)),
                "elapsed": duration(j.elapsed_s), "cpu_eff": pct(j.cpu_eff),
                "mem_eff": pct(j.mem_eff), "findings": j.findings,
                "verdict": j.verdict.as_deref().map(|v| c(&plain::verdict(v))),
            })
        })
        .collect();
    let days: Vec<String> = history.days.iter().map(|d| d.0.clone()).collect();
    let effs: Vec<Option<f64>> = history.days.iter().map(|d| d.3).collect();
    let trend = charts::trend_chart(
        "CPU efficiency per day (core-hour weighted)",
        "share",
        &days,
        &effs,
    )?;
    Ok(with_charts(
        json!({
            "title": format!("{} on {}", c(user), c(cluster)),
            "root": href(&me, std::path::Path::new("")),
            "day_href": href(&me, &day_path(cluster, &day.to_string())),
            "user": c(user), "cluster": c(cluster), "day": day.to_string(),
            "jobs": rows,
            "history": history.days.iter().map(|(d, n, flagged, eff)| json!({
                "day": d, "jobs": n, "flagged": flagged, "cpu_eff": pct(*eff),
            })).collect::<Vec<_>>(),
            "repeating": history.repeating.iter().map(|(t, n, last)| json!({"title": c(t), "times": n, "last": last})).collect::<Vec<_>>(),
            "emails": history.emails.iter().map(|(p, k, s, at)| json!({"period": c(p), "kind": c(k), "status": c(s), "sent": at})).collect::<Vec<_>>(),
        }),
        vec![Value::from_safe_string(trend)],
    ))
}
