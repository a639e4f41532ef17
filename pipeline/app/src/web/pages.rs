//! The pages the web interface answers GET with. Each looks up who owns what it shows before
//! anything else and answers a person who may not see it exactly as if it did not exist: a job
//! page, a chart and a download of another user's job say "no job N that you may see": the same
//! status and words as for a job id nobody ran, and the same time, since both are answered
//! from the one lookup of the job's owner, before any of its page is read.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use chrono::NaiveDate;
use serde_json::json;

use jobsight_base::text::{clean, slug};

use super::Web;
use super::who::{Owner, Viewer};
use jobsight_render::pages::compare::compare_page;
use jobsight_render::pages::jobs::list_page;
use jobsight_render::pages::served::{job_extra, metric_svg};
use jobsight_report::load::{HealthyBands, HealthyRun, JobOwner, JobQuery, SortBy, Visible};

/// How long a day's healthy runs and bands are kept for its other pages: the nightly steps
/// that change them run once a day, and a page a few minutes behind them says nothing wrong.
const HEALTHY_KEPT: Duration = Duration::from_secs(600);
/// Days kept at once (a day's runs are some tens of MB on a large cluster): the warm ones and
/// a few others.
const HEALTHY_DAYS: usize = 12;

type Healthy = Arc<(Vec<HealthyRun>, HealthyBands)>;

/// The healthy runs and bands of the days pages were shown for lately ([`HEALTHY_KEPT`]).
#[derive(Debug, Default)]
pub struct HealthyCache {
    days: std::sync::Mutex<HashMap<NaiveDate, (Instant, Healthy)>>,
}

impl HealthyCache {
    fn get(&self, day: NaiveDate) -> Option<Healthy> {
        let days = self.days.lock().unwrap_or_else(|e| e.into_inner());
        days.get(&day)
            .filter(|(at, _)| at.elapsed() < HEALTHY_KEPT)
            .map(|(_, h)| h.clone())
    }

    fn put(&self, day: NaiveDate, healthy: Healthy) {
        let mut days = self.days.lock().unwrap_or_else(|e| e.into_inner());
        days.retain(|_, (at, _)| at.elapsed() < HEALTHY_KEPT);
        if days.len() >= HEALTHY_DAYS
            && let Some(oldest) = days.iter().min_by_key(|(_, (at, _))| *at).map(|(d, _)| *d)
        {
            days.remove(&oldest);
        }
        days.insert(day, (Instant::now(), healthy));
    }
}

/// The days whose healthy runs and bands the server keeps ready: the latest days with jobs,
/// whose pages people open most (the emails link to yesterday's jobs).
const WARM_DAYS: usize = 7;

impl Web {
    /// The healthy runs and bands a job of `day` is compared with: its day's kept ones, else
    /// what the day's report stored for the job (two small reads), else the day's computed now
    /// and kept (reading 30 days of jobs: a second or so on a large cluster).
    async fn healthy_of(&self, day: NaiveDate, job_id: &str) -> Result<Healthy, String> {
        if let Some(healthy) = self.healthy.get(day) {
            return Ok(healthy);
        }
        if let Some(stored) = jobsight_report::load::stored_reference(&self.ctx, day, job_id)
            .await
            .map_err(|e| e.to_string())?
        {
            return Ok(Arc::new(stored));
        }
        let healthy = Arc::new(
            jobsight_report::load::healthy(&self.ctx, day)
                .await
                .map_err(|e| e.to_string())?,
        );
        self.healthy.put(day, healthy.clone());
        Ok(healthy)
    }

    /// Computes the healthy runs and bands of the latest [`WARM_DAYS`] days with jobs again, a
    /// little before the kept ones expire, for as long as the server runs: the first page of a
    /// recent day then waits for none of it.
    pub(super) async fn keep_recent_days_warm(self: Arc<Self>) {
        loop {
            let days = jobsight_warehouse::query::collect(
                &self.ctx,
                &format!(
                    "SELECT DISTINCT CAST(day AS VARCHAR) AS day FROM jobs ORDER BY day DESC LIMIT {WARM_DAYS}"
                ),
            )
            .await;
            let mut latest = Vec::new();
            for batch in days.iter().flatten() {
                if let Ok(c) = jobsight_warehouse::query::Columns::of(batch) {
                    latest.extend((0..batch.num_rows()).filter_map(|i| {
                        c.text("day", i).and_then(|d| d.parse::<NaiveDate>().ok())
                    }));
                }
            }
            for day in latest {
                match jobsight_report::load::healthy(&self.ctx, day).await {
                    Ok(healthy) => self.healthy.put(day, Arc::new(healthy)),
                    Err(e) => eprintln!("jobsight serve: the healthy runs of {day}: {e}"),
                }
            }
            tokio::time::sleep(HEALTHY_KEPT - Duration::from_secs(60)).await;
        }
    }
}

/// More metrics than any job's features name: "all of them" to the loader.
const EVERY_METRIC: usize = 1_000;

/// Longest a filter value or a path's name is read.
const MAX_NAME: usize = 128;

/// `/`: the person's jobs.
pub async fn root() -> Redirect {
    Redirect::to("/jobs")
}

/// Any path the server does not have.
pub async fn not_found(State(web): State<Arc<Web>>) -> Response {
    web.message(
        StatusCode::NOT_FOUND,
        "Not here",
        "There is no such page; the job list is at /jobs.",
    )
}

/// The answer to a job that does not exist or that the person may not see: one and the same.
fn no_job(web: &Web, job_id: &str) -> Response {
    web.message(
        StatusCode::NOT_FOUND,
        "No such job",
        &format!(
            "No job {} that you may see: a job is shown to its owner, its account's coordinators and the admins.",
            clean(job_id, MAX_NAME)
        ),
    )
}

fn admins_only(web: &Web) -> Response {
    web.message(
        StatusCode::FORBIDDEN,
        "Admins only",
        "This page shows every user's jobs; only admins ([access] admins or admin_groups) see it.",
    )
}

fn html(text: Result<String, String>, web: &Web, what: &str) -> Response {
    match text {
        Ok(text) => Html(text).into_response(),
        Err(e) => web.failed(what, &e),
    }
}

impl Web {
    /// The record of the job whose page name is `job` (the [`slug`] of its id) on the cluster
    /// whose page folder is `cluster` (a slug; empty: any), when `viewer` may see it. A job id
    /// two clusters share on one day is shown to nobody: the other tables key a job by its id
    /// and day only, so its findings and telemetry could be the other job's.
    pub(super) async fn visible_job(
        &self,
        viewer: &Viewer,
        cluster: &str,
        job: &str,
    ) -> Result<Option<JobOwner>, String> {
        if job.is_empty() || job.len() > MAX_NAME {
            return Ok(None);
        }
        let job_id = jobsight_base::text::unslug(job).unwrap_or_else(|| job.to_string());
        let owners = jobsight_report::load::owners(&self.ctx, &job_id)
            .await
            .map_err(|e| e.to_string())?;
        let Some(found) = owners
            .iter()
            .find(|o| cluster.is_empty() || slug(&o.cluster) == cluster)
        else {
            return Ok(None);
        };
        if owners.iter().filter(|o| o.day == found.day).count() > 1 {
            eprintln!(
                "jobsight serve: job {} is on two clusters on {}; not shown (the warehouse keys its tables by job id and day)",
                jobsight_base::text::one_line(&job_id),
                found.day
            );
            return Ok(None);
        }
        let visible = viewer.may_see(Owner {
            user: &found.user,
            account: &found.account.to_ascii_lowercase(),
        });
        Ok(visible.then(|| found.clone()))
    }

    /// Everything a job's page shows, for a job the viewer may see; with `every_metric`, the
    /// telemetry of every metric its features name, not only the charted ones (a comparison,
    /// a chart of its own).
    async fn job_page(
        &self,
        viewer: &Viewer,
        owner: &JobOwner,
        every_metric: bool,
    ) -> Result<jobsight_report::JobPage, String> {
        let settings = jobsight_report::Settings {
            max_charts: if every_metric {
                EVERY_METRIC
            } else {
                self.report.max_charts
            },
            ..self.report.clone()
        };
        let healthy = self.healthy_of(owner.day, &owner.job_id).await?;
        let mut page = jobsight_report::job_page_with(
            &self.data,
            &self.ctx,
            &owner.job_id,
            owner.day,
            &healthy,
            &self.inputs,
            &settings,
        )
        .await
        .map_err(|e| e.to_string())?;
        // The healthy run a page compares with may be another user's (the newest of the job's
        // name by anyone, when its owner has none): its id, owner and telemetry are shown only
        // to a person who may see that run; the others get the healthy band (figures of many
        // runs, no one's in particular).
        if !viewer.admin {
            page.references
                .runs
                .retain(|_, run| run.user == viewer.name);
        }
        Ok(page)
    }
}

/// `/{cluster}/jobs/{job}.html`: a job's page with the feedback forms.
pub async fn job(
    State(web): State<Arc<Web>>,
    Extension(viewer): Extension<Viewer>,
    Path((cluster, file)): Path<(String, String)>,
) -> Response {
    let job_id = file.strip_suffix(".html").unwrap_or("");
    let owner = match web.visible_job(&viewer, &cluster, job_id).await {
        Ok(Some(owner)) => owner,
        Ok(None) => return no_job(&web, job_id),
        Err(e) => return web.failed("the job", &e),
    };
    let page = match web.job_page(&viewer, &owner, false).await {
        Ok(page) => page,
        Err(e) => return web.failed(&format!("job {}", owner.job_id), &e),
    };
    let judged = match super::forms::judged(&web, &viewer.name, &owner).await {
        Ok(judged) => judged,
        Err(e) => return web.failed("your earlier judgements", &e),
    };
    let value = web.pages.job_value(&page, &web.inputs, &web.report);
    let text = web.pages.served(
        "job.html",
        value,
        &web.served(&viewer),
        job_extra(&page, &judged),
    );
    html(text, &web, &format!("job {}", owner.job_id))
}

/// `/chart/{cluster}/{job}/{metric}.svg`: one metric of a job, charted alone.
pub async fn chart(
    State(web): State<Arc<Web>>,
    Extension(viewer): Extension<Viewer>,
    Path((cluster, job_id, file)): Path<(String, String, String)>,
) -> Response {
    let owner = match web.visible_job(&viewer, &slug(&cluster), &job_id).await {
        Ok(Some(owner)) => owner,
        Ok(None) => return no_job(&web, &job_id),
        Err(e) => return web.failed("the job", &e),
    };
    let metric = file.strip_suffix(".svg").unwrap_or(&file);
    let page = match web.job_page(&viewer, &owner, true).await {
        Ok(page) => page,
        Err(e) => return web.failed(&format!("job {}", owner.job_id), &e),
    };
    match metric_svg(&page, metric) {
        Some(Ok(svg)) => ([(header::CONTENT_TYPE, "image/svg+xml")], svg).into_response(),
        Some(Err(e)) => web.failed("the chart", &e.to_string()),
        None => web.message(
            StatusCode::NOT_FOUND,
            "No such chart",
            &format!(
                "Job {} has no telemetry of {}.",
                clean(&owner.job_id, MAX_NAME),
                clean(metric, MAX_NAME)
            ),
        ),
    }
}

/// `/download/{cluster}/{job}.csv`: a job's telemetry, one row per node, metric and sample.
pub async fn download(
    State(web): State<Arc<Web>>,
    Extension(viewer): Extension<Viewer>,
    Path((cluster, file)): Path<(String, String)>,
) -> Response {
    let job_id = file.strip_suffix(".csv").unwrap_or("");
    let owner = match web.visible_job(&viewer, &slug(&cluster), job_id).await {
        Ok(Some(owner)) => owner,
        Ok(None) => return no_job(&web, job_id),
        Err(e) => return web.failed("the job", &e),
    };
    match super::forms::telemetry_csv(&web, &owner).await {
        Ok((csv, cut)) => {
            let mut response = (
                [
                    (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
                    (
                        header::CONTENT_DISPOSITION,
                        format!("attachment; filename=\"job-{}.csv\"", slug(&owner.job_id)),
                    ),
                ],
                csv,
            )
                .into_response();
            if cut {
                // Its first rows by node, metric and time; the header says the rest is missing.
                response.headers_mut().insert(
                    header::HeaderName::from_static("x-jobsight-rows-cut-at"),
                    header::HeaderValue::from(super::forms::MAX_DOWNLOAD_ROWS),
                );
            }
            response
        }
        Err(e) => web.failed("the telemetry", &e),
    }
}

/// `/jobs?user=&account=&partition=&state=&verdict=&finding=&days=&sort=&order=`.
pub async fn jobs(
    State(web): State<Arc<Web>>,
    Extension(viewer): Extension<Viewer>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    let param = |name: &str| {
        params
            .get(name)
            .map(|v| clean(v.trim(), MAX_NAME))
            .unwrap_or_default()
    };
    // Without a period: the person's latest jobs whatever their age (as far back as the list
    // may reach from the newest day with jobs), as `jobsight jobs` lists them.
    let (days, to) = match param("days").parse::<u64>() {
        Ok(days) => (days, chrono::Utc::now().date_naive()),
        Err(_) => (
            web.settings.max_list_days,
            jobsight_warehouse::catalog::days(&web.data, jobsight_warehouse::catalog::Table::Jobs)
                .last()
                .copied()
                .unwrap_or_else(|| chrono::Utc::now().date_naive()),
        ),
    };
    let days = days.clamp(1, web.settings.max_list_days);
    let from = to - chrono::Days::new(days - 1);
    let visible = if viewer.admin {
        Visible::All
    } else {
        Visible::Own {
            user: viewer.name.clone(),
            accounts: viewer.coordinates.iter().cloned().collect(),
        }
    };
    let query = JobQuery {
        visible,
        from,
        to,
        user: param("user"),
        account: param("account"),
        partition: param("partition"),
        state: param("state"),
        verdict: param("verdict"),
        finding: param("finding"),
        sort: SortBy::parse(&param("sort")).unwrap_or_default(),
        descending: param("order") != "asc",
        limit: web.settings.max_list_rows,
    };
    let (listed, more) = match jobsight_report::load::list(&web.ctx, &query).await {
        Ok(found) => found,
        Err(e) => return web.failed("the job list", &e.to_string()),
    };
    let value = Ok(list_page(&query, days, &listed, more));
    let text = web
        .pages
        .served("jobs.html", value, &web.served(&viewer), json!({}));
    html(text, &web, "the job list")
}

/// `/compare?a=[cluster/]job&b=[cluster/]job`: two jobs side by side.
pub async fn compare(
    State(web): State<Arc<Web>>,
    Extension(viewer): Extension<Viewer>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    // Both jobs are checked before either is read: a refusal costs the same whichever it is.
    let mut owners = Vec::new();
    for key in ["a", "b"] {
        let given = params.get(key).map(|v| v.trim()).unwrap_or("");
        let (cluster, job_id) = match given.rsplit_once('/') {
            Some((cluster, job)) => (slug(cluster), job),
            None => (String::new(), given),
        };
        match web.visible_job(&viewer, &cluster, job_id).await {
            Ok(Some(owner)) => owners.push(owner),
            Ok(None) => return no_job(&web, job_id),
            Err(e) => return web.failed("the job", &e),
        }
    }
    let mut pages = Vec::new();
    for owner in owners {
        match web.job_page(&viewer, &owner, true).await {
            Ok(page) => pages.push(page),
            Err(e) => return web.failed(&format!("job {}", owner.job_id), &e),
        }
    }
    let [a, b] = &pages[..] else {
        return web.failed("the comparison", "two jobs were not read");
    };
    let text = web.pages.served(
        "compare.html",
        compare_page(a, b),
        &web.served(&viewer),
        json!({}),
    );
    html(text, &web, "the comparison")
}

/// The cluster whose page folder is `cluster` (a slug), from the warehouse.
async fn cluster_named(web: &Web, cluster: &str) -> Result<Option<String>, String> {
    let mut found = None;
    let batches = jobsight_warehouse::query::collect(&web.ctx, "SELECT DISTINCT cluster FROM jobs")
        .await
        .map_err(|e| e.to_string())?;
    for batch in batches {
        let c = jobsight_warehouse::query::Columns::of(&batch).map_err(|e| e.to_string())?;
        for i in 0..batch.num_rows() {
            if let Some(name) = c.text("cluster", i)
                && slug(&name) == cluster
            {
                found = Some(name);
            }
        }
    }
    Ok(found)
}

/// `/{cluster}/users/{user}.html`: a person's own page (or any, for an admin).
pub async fn user(
    State(web): State<Arc<Web>>,
    Extension(viewer): Extension<Viewer>,
    Path((cluster, file)): Path<(String, String)>,
) -> Response {
    let user = file.strip_suffix(".html").unwrap_or("");
    let refused = || {
        web.message(
            StatusCode::NOT_FOUND,
            "No such page",
            &format!(
                "No page of user {} that you may see: a user page is shown to that user and the admins.",
                clean(user, MAX_NAME)
            ),
        )
    };
    if !viewer.may_see_user(user) || !jobsight_base::text::is_login_name(user) {
        return refused();
    }
    let Ok(Some(cluster)) = cluster_named(&web, &cluster).await else {
        return refused();
    };
    let found = jobsight_report::served::user_history(&web.ctx, &cluster, user).await;
    let (day, history) = match found {
        Ok(Some(found)) => found,
        Ok(None) => return refused(),
        Err(e) => return web.failed("the user page", &e.to_string()),
    };
    let value = web.pages.user_value(&cluster, user, day, &history);
    let text = web
        .pages
        .served("user.html", value, &web.served(&viewer), json!({}));
    html(text, &web, "the user page")
}

/// `/{cluster}/days/{day}.html`: a cluster's daily system report (admins).
pub async fn day(
    State(web): State<Arc<Web>>,
    Extension(viewer): Extension<Viewer>,
    Path((cluster, file)): Path<(String, String)>,
) -> Response {
    if !viewer.admin {
        return admins_only(&web);
    }
    let Some(day) = file
        .strip_suffix(".html")
        .and_then(|d| d.parse::<NaiveDate>().ok())
    else {
        return not_found(State(web)).await;
    };
    let Ok(Some(cluster)) = cluster_named(&web, &cluster).await else {
        return not_found(State(web)).await;
    };
    let (report, facts) = match jobsight_report::served::day(&web.ctx, &cluster, day).await {
        Ok(found) => found,
        Err(e) => return web.failed("the day's report", &e.to_string()),
    };
    let value = web.pages.day_value(&report, &facts);
    let text = web
        .pages
        .served("day.html", value, &web.served(&viewer), json!({}));
    html(text, &web, "the day's report")
}

/// `/workflows/{run}.html`: a workflow run's page (admins).
pub async fn workflow(
    State(web): State<Arc<Web>>,
    Extension(viewer): Extension<Viewer>,
    Path(file): Path<String>,
) -> Response {
    if !viewer.admin {
        return admins_only(&web);
    }
    let run = file.strip_suffix(".html").unwrap_or("");
    let facts = match jobsight_report::served::workflow(&web.data, &web.ctx, run).await {
        Ok(Some(facts)) => facts,
        Ok(None) => return not_found(State(web)).await,
        Err(e) => return web.failed("the workflow run", &e.to_string()),
    };
    let value = web.pages.workflow_value(&facts);
    let text = web
        .pages
        .served("workflow.html", value, &web.served(&viewer), json!({}));
    html(text, &web, "the workflow run")
}

/// `/index.html`: every cluster's days and users (admins); a person's own list otherwise.
/// `/running`: the running DAG's newest snapshot, as `jobsight running` shows it: every job to
/// an admin, a person's own to them.
pub async fn running(
    State(web): State<Arc<Web>>,
    Extension(viewer): Extension<Viewer>,
) -> Response {
    let Some(path) = &web.settings.running_snapshot else {
        return not_found(State(web)).await;
    };
    let mut snapshot = match jobsight_running::Snapshot::read(path) {
        Ok(Some(snapshot)) => snapshot,
        Ok(None) => {
            return web.message(
                StatusCode::OK,
                "Nothing running yet",
                "The running DAG has not written a snapshot of the running jobs yet (it does every 10 minutes).",
            );
        }
        Err(e) => return web.failed("the running jobs", &e),
    };
    if !viewer.admin {
        snapshot.jobs.retain(|j| j.user == viewer.name);
    }
    let text = web
        .pages
        .running(&snapshot, chrono::Utc::now())
        .map_err(|e| e.to_string());
    html(text, &web, "the running jobs")
}

pub async fn index(State(web): State<Arc<Web>>, Extension(viewer): Extension<Viewer>) -> Response {
    if !viewer.admin {
        return Redirect::to("/jobs").into_response();
    }
    let listing = match jobsight_report::served::index_listing(&web.ctx).await {
        Ok(listing) => listing,
        Err(e) => return web.failed("the index", &e.to_string()),
    };
    let value = Ok(web.pages.index_value(&listing));
    let text = web
        .pages
        .served("index.html", value, &web.served(&viewer), json!({}));
    html(text, &web, "the index")
}
