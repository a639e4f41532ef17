//! Report pages: every job's page, each user's page, the daily system report and an index, as
//! static HTML files in one folder (`[report] dir`), written by the nightly DAG's `report` step
//! for a whole day and by `jobsight report job JOB_ID` on demand. No server is needed: every
//! link is relative, every chart is inline SVG ([`charts`]), nothing loads from the internet, so
//! the folder can be copied to any web server, or opened from disk, on an air-gapped cluster.
//!
//! Input: the warehouse ([`load`]: `jobs`, `job_summary`, `findings`, `classes`, `thresholds`,
//! `predictions`, `features_job`, `telemetry`, `summaries`, `notifications`, `runs`) and the
//! diagnosis model's feature importance (passed in by the caller, so this stage never calls
//! the model stage). Output: `index.html`, `<cluster>/jobs/<job>.html`, `<cluster>/users/<user>.html`
//! and `<cluster>/days/<day>.html`, names made safe by [`jobsight_base::templates::slug`], so the links
//! of the emails (`notify.report_url`, `notify.user_url`) point at them.
//!
//! Idempotent: a page is replaced whole (temporary file, then rename), so re-running a day
//! rewrites its pages and a reader never sees half a page. A job whose page cannot be drawn is
//! reported with its id and the reason, and the others are still written.
//!
//! Pages are templates ([`PAGES`], minijinja, HTML-escaped automatically) that a site overrides
//! file by file with `[report] templates`. Everything from Slurm (job names, users, accounts,
//! node lists, paths) is hostile: cleaned of control characters, escaped by the engine.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod charts;
pub mod load;
pub mod page;

use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use serde::Deserialize;

use jobsight_base::templates::{TemplateError, Templates, slug};
use jobsight_warehouse::query::{self, QueryError};

/// The built-in page templates: name and text.
pub const PAGES: [(&str, &str); 6] = [
    ("base.html", include_str!("../templates/base.html")),
    ("job.html", include_str!("../templates/job.html")),
    ("user.html", include_str!("../templates/user.html")),
    ("day.html", include_str!("../templates/day.html")),
    ("index.html", include_str!("../templates/index.html")),
    ("workflow.html", include_str!("../templates/workflow.html")),
];

/// Where pages go when nothing says otherwise: this folder beside the warehouse
/// (`./jobsight-reports` with the default `./jobsight-data`).
pub const DEFAULT_DIR_NAME: &str = "jobsight-reports";
/// Telemetry charts per job page.
pub const DEFAULT_MAX_CHARTS: usize = 6;

/// The `[report]` section of the configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// The folder the pages are written to (and that a web server shows).
    pub dir: Option<PathBuf>,
    /// A folder with the site's own page templates, each replacing the built-in one of its name.
    pub templates: Option<PathBuf>,
    /// Telemetry charts per job page (the metrics that matter most for the job).
    pub max_charts: Option<u64>,
}

/// The report's settings, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub dir: PathBuf,
    pub templates: Option<PathBuf>,
    pub max_charts: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            dir: Path::new(".").join(DEFAULT_DIR_NAME),
            templates: None,
            max_charts: DEFAULT_MAX_CHARTS,
        }
    }
}

impl Options {
    /// `data` is the warehouse: the pages' default folder sits beside it, so that a run on any
    /// warehouse (a test's temporary one above all) never writes into the working directory.
    pub fn resolve(self, data: &Path) -> Result<Settings, jobsight_base::options::Invalid> {
        let max_charts = jobsight_base::options::within(
            "report.max_charts",
            self.max_charts,
            DEFAULT_MAX_CHARTS as u64,
            0..=50,
        )? as usize;
        Ok(Settings {
            dir: self.dir.unwrap_or_else(|| {
                data.parent()
                    .unwrap_or(Path::new("."))
                    .join(DEFAULT_DIR_NAME)
            }),
            templates: self.templates,
            max_charts,
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error("job {0} is not in the warehouse's jobs table")]
    NoSuchJob(String),
    #[error("workflow run {0} is not in the warehouse's workflows table (jobsight import pegasus)")]
    NoSuchWorkflow(String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the query runtime: {0}")]
    Runtime(std::io::Error),
}

/// What the caller knows that the warehouse does not: the diagnosis model's permutation
/// importance (per metric; `<metric>:<stat>` in older model files; drop in F1), to rank the
/// metrics on a job's page.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub importance: Vec<(String, f64)>,
}

/// What a run wrote.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Written {
    pub jobs: usize,
    pub users: usize,
    pub days: usize,
    /// Pages of workflow runs: those the day's jobs are steps of, and those that ended that day.
    pub workflows: usize,
    /// (job id, reason) of pages that could not be drawn.
    pub failed: Vec<(String, String)>,
}

fn runtime() -> Result<tokio::runtime::Runtime, ReportError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ReportError::Runtime)
}

/// Writes `text` to `path` whole: a temporary file in the same folder, then a rename.
fn write_page(path: &Path, text: &str) -> Result<(), ReportError> {
    let failed = |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(failed)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(failed)?;
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(failed)?;
    // Pages are for people to read: world-readable like any web page.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(path).map_err(|e| failed(e.error))?;
    Ok(())
}

/// The page files of a cluster's job, user and day, relative to the report folder.
pub fn job_path(cluster: &str, job_id: &str) -> PathBuf {
    PathBuf::from(slug(cluster))
        .join("jobs")
        .join(format!("{}.html", slug(job_id)))
}

pub fn user_path(cluster: &str, user: &str) -> PathBuf {
    PathBuf::from(slug(cluster))
        .join("users")
        .join(format!("{}.html", slug(user)))
}

/// A workflow run's page, relative to the report folder.
pub fn workflow_path(run: &str) -> PathBuf {
    PathBuf::from("workflows").join(format!("{}.html", slug(run)))
}

pub fn day_path(cluster: &str, day: &str) -> PathBuf {
    PathBuf::from(slug(cluster))
        .join("days")
        .join(format!("{}.html", slug(day)))
}

fn templates(settings: &Settings) -> Result<Templates, ReportError> {
    Ok(Templates::load(&PAGES, settings.templates.as_deref())?)
}

/// The names the day report's and the index's templates are given (the job and user pages are
/// checked by rendering samples instead).
const DAY_NAMES: [&str; 15] = [
    "title",
    "root",
    "cluster",
    "day",
    "next_day",
    "totals",
    "partitions",
    "accounts",
    "users",
    "rules",
    "runs",
    "worst",
    "chart_svgs",
    "clusters",
    "workflows",
];

/// The names a workflow run's page template is given ([`page::workflow_page`]).
const WORKFLOW_NAMES: [&str; 16] = [
    "title",
    "root",
    "run",
    "workflow",
    "label",
    "tasks",
    "start",
    "end",
    "makespan",
    "critical_path",
    "scored",
    "flagged",
    "flagged_shown",
    "critical",
    "phases",
    "chart_svgs",
];

/// Checks the page templates in effect (`jobsight check`): each parses, the job and user pages
/// render against samples with every value set, and the day report and index use only the
/// names they are given. Returns a line for `check`'s output.
pub fn check(settings: &Settings) -> Result<String, ReportError> {
    let pages = templates(settings)?;
    let (job, user) = page::samples(settings)
        .map_err(|e| ReportError::Query(QueryError::Render(e.to_string())))?;
    pages.render("job.html", &job)?;
    pages.render("user.html", &user)?;
    pages.check_names("day.html", &DAY_NAMES)?;
    pages.check_names("index.html", &DAY_NAMES)?;
    pages.check_names("workflow.html", &WORKFLOW_NAMES)?;
    Ok(format!(
        "report: page templates {} pass; pages go to {}",
        match &settings.templates {
            Some(dir) => format!("(built-in, with the site's from {})", dir.display()),
            None => "(built-in)".into(),
        },
        settings.dir.display()
    ))
}

/// One job's page, on demand. Returns the page's path.
pub fn write_job(
    data: &Path,
    settings: &Settings,
    inputs: &Inputs,
    job_id: &str,
) -> Result<PathBuf, ReportError> {
    let pages = templates(settings)?;
    runtime()?.block_on(async {
        let ctx = query::session(data).await?;
        let day = load::day_of(&ctx, job_id)
            .await?
            .ok_or_else(|| ReportError::NoSuchJob(job_id.to_string()))?;
        let scope = load::Scope {
            day,
            job: Some(job_id.to_string()),
        };
        let mut facts = load::facts(&ctx, &scope).await?;
        let runs = workflow_runs(data, &ctx, day).await?;
        facts.workflows = runs.steps;
        let (healthy, band) = load::healthy(&ctx, day).await?;
        let references =
            load_telemetry(&ctx, day, &mut facts, &healthy, &band, inputs, settings).await?;
        if let Some(run) = facts.workflows.get(job_id) {
            write_workflow_page(data, &ctx, &pages, settings, run).await?;
        }
        let job = facts
            .jobs
            .last()
            .ok_or_else(|| ReportError::NoSuchJob(job_id.to_string()))?;
        let value = page::job_page(job, &facts, &references, &band, inputs, settings)
            .map_err(|e| ReportError::Query(QueryError::Render(e.to_string())))?;
        let path = settings.dir.join(job_path(&job.cluster, &job.job_id));
        write_page(&path, &pages.render("job.html", &value)?)?;
        Ok(path)
    })
}

/// One workflow run's page (`jobsight report workflow RUN`), with its Gantt chart. Returns the
/// page's path.
pub fn write_workflow(data: &Path, settings: &Settings, run: &str) -> Result<PathBuf, ReportError> {
    let pages = templates(settings)?;
    runtime()?.block_on(async {
        let ctx = query::session(data).await?;
        write_workflow_page(data, &ctx, &pages, settings, run).await
    })
}

async fn write_workflow_page(
    data: &Path,
    ctx: &datafusion::prelude::SessionContext,
    pages: &Templates,
    settings: &Settings,
    run: &str,
) -> Result<PathBuf, ReportError> {
    let scored = jobsight_warehouse::catalog::Table::WorkflowScores
        .dir(data)
        .is_dir();
    let facts = load::workflow(ctx, run, scored)
        .await?
        .ok_or_else(|| ReportError::NoSuchWorkflow(run.to_string()))?;
    let value = page::workflow_page(&facts)
        .map_err(|e| ReportError::Query(QueryError::Render(e.to_string())))?;
    let path = settings.dir.join(workflow_path(&facts.workflow_id));
    write_page(&path, &pages.render("workflow.html", &value)?)?;
    Ok(path)
}

/// The workflow runs of a day's pages ([`load::slurm_runs`]); none when no workflow is stored.
async fn workflow_runs(
    data: &Path,
    ctx: &datafusion::prelude::SessionContext,
    day: NaiveDate,
) -> Result<DayRuns, ReportError> {
    use jobsight_warehouse::catalog::Table;
    if !Table::Workflows.dir(data).is_dir() || !Table::WorkflowTasks.dir(data).is_dir() {
        return Ok(DayRuns::default());
    }
    let (steps, ended) = load::slurm_runs(ctx, day).await?;
    Ok(DayRuns {
        steps,
        ended,
        stored: true,
    })
}

/// Removes the pages of workflow runs no longer in the warehouse: a Slurm run that another
/// chain joined later is stored under the joined run's id, and its old page would mislead.
async fn remove_stale_workflow_pages(
    ctx: &datafusion::prelude::SessionContext,
    dir: &Path,
) -> Result<(), ReportError> {
    let runs = load::workflow_ids(ctx).await?;
    let pages: std::collections::HashSet<PathBuf> =
        runs.iter().map(|r| dir.join(workflow_path(r))).collect();
    for entry in std::fs::read_dir(dir.join("workflows"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "html") && !pages.contains(&path) {
            std::fs::remove_file(&path).map_err(|source| ReportError::Write {
                path: path.clone(),
                source,
            })?;
        }
    }
    Ok(())
}

/// Loads the telemetry the pages of `facts`' jobs chart into `facts.telemetry`, and that of
/// their healthy reference runs: per job only the metrics its page charts
/// ([`page::metrics_to_load`]), for the reference run the metrics of every job compared with
/// it; one query per day the runs ended on ([`load::telemetry`]).
async fn load_telemetry(
    ctx: &datafusion::prelude::SessionContext,
    day: NaiveDate,
    facts: &mut load::Facts,
    healthy: &[load::HealthyRun],
    band: &std::collections::BTreeMap<String, (f64, f64)>,
    inputs: &Inputs,
    settings: &Settings,
) -> Result<page::References, ReportError> {
    let runs = page::reference_runs(facts, healthy);
    let mut by_day: std::collections::BTreeMap<NaiveDate, load::Wanted> = Default::default();
    for job in &facts.jobs {
        let metrics = page::metrics_to_load(job, facts, inputs, band, settings.max_charts);
        load::want(
            by_day.entry(day).or_default(),
            &job.job_id,
            metrics.as_deref(),
        );
        if let Some(run) = runs.get(&job.job_id) {
            load::want(
                by_day.entry(run.day).or_default(),
                &run.job_id,
                metrics.as_deref(),
            );
        }
    }
    let mut references = page::References {
        runs,
        series: Default::default(),
    };
    let reference_ids: std::collections::HashSet<(NaiveDate, &String)> = references
        .runs
        .values()
        .map(|r| (r.day, &r.job_id))
        .collect();
    for (on, wanted) in &by_day {
        let loaded = load::telemetry(ctx, *on, wanted).await?;
        for (job_id, series) in loaded {
            if reference_ids.contains(&(*on, &job_id)) {
                references
                    .series
                    .insert((*on, job_id.clone()), series.clone());
            }
            if *on == day {
                facts.telemetry.insert(job_id, series);
            }
        }
    }
    Ok(references)
}

#[derive(Default)]
struct DayRuns {
    /// Whether the warehouse holds workflow runs at all.
    stored: bool,
    /// Job id -> the Slurm run it is a step of.
    steps: std::collections::HashMap<String, String>,
    /// Runs that ended on the day.
    ended: Vec<String>,
}

/// Every page of `day`: its jobs, the users who had a job that day, the day's system report,
/// and the index. `progress` hears about each hundred jobs.
pub fn write_day(
    data: &Path,
    settings: &Settings,
    inputs: &Inputs,
    day: NaiveDate,
    progress: &mut dyn FnMut(&str),
) -> Result<Written, ReportError> {
    let pages = templates(settings)?;
    runtime()?.block_on(async {
        let ctx = query::session(data).await?;
        let scope = load::Scope { day, job: None };
        let mut facts = load::facts(&ctx, &scope).await?;
        let runs = workflow_runs(data, &ctx, day).await?;
        // The pages the day's job pages link to, and the day's runs.
        let mut run_pages: std::collections::BTreeSet<&String> = runs.ended.iter().collect();
        run_pages.extend(facts.jobs.iter().filter_map(|j| runs.steps.get(&j.job_id)));
        let mut written = Written::default();
        for run in run_pages {
            write_workflow_page(data, &ctx, &pages, settings, run).await?;
            written.workflows += 1;
        }
        if runs.stored {
            remove_stale_workflow_pages(&ctx, &settings.dir).await?;
        }
        facts.workflows = runs.steps.clone();
        let (healthy, band) = load::healthy(&ctx, day).await?;
        progress(&format!(
            "{} jobs: loading the telemetry their pages chart",
            facts.jobs.len()
        ));
        let references =
            load_telemetry(&ctx, day, &mut facts, &healthy, &band, inputs, settings).await?;
        for (n, job) in facts.jobs.iter().enumerate() {
            let page = page::job_page(job, &facts, &references, &band, inputs, settings)
                .map_err(|e| e.to_string())
                .and_then(|v| pages.render("job.html", &v).map_err(|e| e.to_string()));
            match page {
                Ok(text) => {
                    write_page(
                        &settings.dir.join(job_path(&job.cluster, &job.job_id)),
                        &text,
                    )?;
                    written.jobs += 1;
                }
                Err(reason) => written.failed.push((job.job_id.clone(), reason)),
            }
            if (n + 1) % 100 == 0 {
                progress(&format!("{} of {} job pages", n + 1, facts.jobs.len()));
            }
        }
        let histories = load::user_histories(&ctx, day).await?;
        let users: std::collections::BTreeSet<(String, String)> = facts
            .jobs
            .iter()
            .map(|j| (j.cluster.clone(), j.user.clone()))
            .collect();
        for (cluster, user) in &users {
            let history = histories
                .get(&(cluster.clone(), user.clone()))
                .cloned()
                .unwrap_or_default();
            let value = page::user_page(cluster, user, day, &history)
                .map_err(|e| ReportError::Query(QueryError::Render(e.to_string())))?;
            write_page(
                &settings.dir.join(user_path(cluster, user)),
                &pages.render("user.html", &value)?,
            )?;
            written.users += 1;
        }
        let clusters: std::collections::BTreeSet<String> =
            facts.jobs.iter().map(|j| j.cluster.clone()).collect();
        for cluster in &clusters {
            let value = page::day_page(&ctx, cluster, day, &facts).await?;
            write_page(
                &settings.dir.join(day_path(cluster, &day.to_string())),
                &pages.render("day.html", &value)?,
            )?;
            written.days += 1;
        }
        write_index(&settings.dir, &pages)?;
        Ok(written)
    })
}

/// The index: every cluster's day reports and user pages found in the folder, newest day first.
fn write_index(dir: &Path, pages: &Templates) -> Result<(), ReportError> {
    let list = |path: PathBuf| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(path)
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| {
                        e.file_name()
                            .to_str()
                            .and_then(|n| n.strip_suffix(".html"))
                            .map(str::to_string)
                    })
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let mut clusters = Vec::new();
    let mut workflows = list(dir.join("workflows"));
    workflows.reverse();
    for cluster in list_dirs(dir).into_iter().filter(|c| c != "workflows") {
        let mut days = list(dir.join(&cluster).join("days"));
        days.reverse();
        let users = list(dir.join(&cluster).join("users"));
        let jobs = list(dir.join(&cluster).join("jobs")).len();
        clusters.push(serde_json::json!({
            "name": cluster,
            "days": days.iter().map(|d| serde_json::json!({"name": d, "href": format!("{cluster}/days/{d}.html")})).collect::<Vec<_>>(),
            "users": users.iter().map(|u| serde_json::json!({"name": u, "href": format!("{cluster}/users/{u}.html")})).collect::<Vec<_>>(),
            "jobs": jobs,
        }));
    }
    let value = jobsight_base::templates::value(serde_json::json!({
        "title": "jobsight reports",
        "root": "",
        "clusters": clusters,
        "workflows": workflows.iter().map(|w| serde_json::json!({"name": w, "href": format!("workflows/{w}.html")})).collect::<Vec<_>>(),
    }));
    write_page(
        &dir.join("index.html"),
        &pages.render("index.html", &value)?,
    )
}

/// The sub-folders of `dir` (the clusters: their names are slugs already).
fn list_dirs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;
    use jobsight_warehouse::catalog::rows::{FindingRow, JobRow, JobSummaryRow, TelemetryBuilder};
    use jobsight_warehouse::catalog::{self, Table};

    const DAY: &str = "2026-11-20";
    /// What Slurm may hand over as a job name: markup, control bytes, a quote.
    const HOSTILE: &str = "<script>alert(1)</script>\u{1b}[31m\u{7}'\"&";

    /// The summaries' test warehouse, its summaries, and a job whose name, user, account and
    /// node are hostile, with telemetry and a finding that quotes them.
    fn warehouse(data: &Path) -> NaiveDate {
        jobsight_summary::fixture::fixture(data);
        let day: NaiveDate = DAY.parse().unwrap();
        let start = DateTime::parse_from_rfc3339("2026-11-20T08:00:00Z")
            .unwrap()
            .to_utc();
        let job = JobRow {
            cluster: "c".into(),
            job_id: "666".into(),
            user: Some(format!("mallory{HOSTILE}")),
            account: Some(HOSTILE.into()),
            partition: Some("cpu".into()),
            num_nodes: Some(1),
            nodes: Some(format!("n<b>1{HOSTILE}")),
            cpus: Some(16),
            req_mem_mb: Some(32_768),
            time_limit_s: Some(86_400),
            submit: Some(start),
            start: Some(start),
            end: start + chrono::Duration::hours(2),
            state: Some("COMPLETED".into()),
            name: Some(HOSTILE.into()),
            source: "test".into(),
            ..JobRow::default()
        };
        catalog::write_part(
            data,
            Table::Jobs,
            day,
            "hostile",
            &[JobRow::batch(&[job]).unwrap()],
        )
        .unwrap();
        let summary = JobSummaryRow {
            job_id: "666".into(),
            elapsed_s: 7200.0,
            trimmed: false,
            nodes_expected: Some(1),
            nodes_seen: 1,
            nodes_missing: None,
            metrics: 1,
            samples: 240,
            coverage_min: Some(1.0),
            coverage_mean: Some(1.0),
            judgeable: true,
            not_judgeable_reason: None,
            duty_cycle: None,
            cpu_used_cores: Some(1.0),
            cpu_eff: Some(1.0 / 16.0),
            mem_used_max_mb: Some(2048.0),
            mem_eff: Some(1.0 / 16.0),
            time_eff: Some(2.0 / 24.0),
            gpu_util: None,
            core_hours: Some(32.0),
            wasted_core_hours: Some(30.0),
        };
        catalog::write_part(
            data,
            Table::JobSummary,
            day,
            "hostile",
            &[JobSummaryRow::batch(&[summary]).unwrap()],
        )
        .unwrap();
        let finding = FindingRow {
            job_id: "666".into(),
            rule: "serial-on-many-cores".into(),
            title: format!("serial code {HOSTILE}"),
            group: "serial".into(),
            method_group: Some(7),
            severity: "warning".into(),
            node: Some(format!("n<b>1{HOSTILE}")),
            window_start: Some(start + chrono::Duration::minutes(30)),
            window_end: Some(start + chrono::Duration::minutes(60)),
            message: format!("job {HOSTILE} used 1 of 16 cores (cpu_user)"),
            fix: "run it with 1 core".into(),
            why: "15 cores idle".into(),
            tools: "perf".into(),
            evidence: format!("{{\"name\": \"{HOSTILE}\"}}"),
            rules_version: "t".into(),
        };
        catalog::write_part(
            data,
            Table::Findings,
            day,
            "hostile",
            &[FindingRow::batch(&[finding]).unwrap()],
        )
        .unwrap();
        let mut t = TelemetryBuilder::default();
        for i in 0..240 {
            let ts = (start + chrono::Duration::seconds(30 * i)).timestamp_micros();
            t.push(
                "666",
                &format!("n<b>1{HOSTILE}"),
                "cpu_user",
                ts,
                1.0 + (i % 7) as f64 * 0.01,
            );
            t.push("666", &format!("n<b>1{HOSTILE}"), HOSTILE, ts, i as f64);
        }
        catalog::write_part(
            data,
            Table::Telemetry,
            day,
            "hostile",
            &[t.finish().unwrap()],
        )
        .unwrap();
        jobsight_summary::write_days(data, &jobsight_summary::Settings::default(), day, day)
            .unwrap();
        day
    }

    fn every_page(dir: &Path) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                if e.path().is_dir() {
                    stack.push(e.path());
                } else {
                    out.push((e.path(), std::fs::read_to_string(e.path()).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    /// The page's body with each chart's SVG replaced by a mark, for a snapshot that shows the
    /// text (the layout and style are base.html's, the same on every page).
    fn without_svg(page: &str) -> String {
        let mut out = String::new();
        let mut rest = page.split_once("<body>").map_or(page, |(_, body)| body);
        while let Some(i) = rest.find("<svg") {
            out.push_str(&rest[..i]);
            let end = rest[i..].find("</svg>").map_or(rest.len(), |e| i + e + 6);
            out.push_str("[chart]");
            rest = &rest[end..];
        }
        out.push_str(rest);
        out
    }

    #[test]
    fn a_day_gets_every_page_and_hostile_names_stay_text() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let day = warehouse(&data);
        let settings = Settings {
            dir: tmp.path().join("pages"),
            ..Settings::default()
        };
        let written = write_day(&data, &settings, &Inputs::default(), day, &mut |_| {}).unwrap();
        assert_eq!(written.failed, vec![]);
        // Jobs 1, 2, 3 and 666; alice, bob and mallory; one cluster.
        assert_eq!((written.jobs, written.users, written.days), (4, 3, 1));
        let pages = every_page(&settings.dir);
        let names: Vec<String> = pages
            .iter()
            .map(|(p, _)| p.strip_prefix(&settings.dir).unwrap().display().to_string())
            .collect();
        assert!(names.contains(&"index.html".to_string()), "{names:?}");
        assert!(names.contains(&"c/jobs/666.html".to_string()), "{names:?}");
        assert!(names.contains(&format!("c/days/{DAY}.html")), "{names:?}");
        assert!(
            names.contains(&"c/users/alice.html".to_string()),
            "{names:?}"
        );
        // The hostile user's page is a plain file name in the users folder.
        assert!(
            names
                .iter()
                .any(|n| n.starts_with("c/users/mallory~3Cscript")),
            "{names:?}"
        );
        for (path, text) in &pages {
            let shown = path.display();
            assert!(!text.contains("<script"), "{shown} runs a script");
            assert!(
                !text.contains("<b>1"),
                "{shown} has markup from a node name"
            );
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{7}'),
                "{shown} has control bytes"
            );
            // Nothing is fetched: no external script, style, image or font.
            // SVG's namespace is a name, not a fetch.
            let text = text.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
            assert!(
                !text.contains("http://") && !text.contains("https://"),
                "{shown} links out"
            );
        }
        let job = &pages
            .iter()
            .find(|(p, _)| p.ends_with("jobs/666.html"))
            .unwrap()
            .1;
        assert!(
            job.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "the name is shown, escaped"
        );
        assert!(job.contains("#SBATCH --mem=3G"), "the suggestion is there");
        assert!(job.matches("<svg").count() == 2, "a chart per metric");
        // The anomalous span of the finding is drawn on the charts.
        assert!(
            job.contains("fill=\"#D6272") || job.contains("fill=\"#d6272"),
            "anomalous span"
        );
        let link = job
            .split("href=\"")
            .nth(2)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert!(link.starts_with("../../c/users/mallory~3Cscript"), "{link}");
        insta::assert_snapshot!("job_page", without_svg(job));
        let day_page = &pages
            .iter()
            .find(|(p, _)| p.ends_with(format!("days/{DAY}.html")))
            .unwrap()
            .1;
        // Every relative link of every page lands on a page that exists.
        for (path, text) in &pages {
            for link in text.split("href=\"").skip(1) {
                let link = link.split('"').next().unwrap();
                let target = path.parent().unwrap().join(link);
                assert!(
                    target.is_file(),
                    "{} links to {link}, which is missing",
                    path.display()
                );
            }
        }
        insta::assert_snapshot!("day_page", without_svg(day_page));
        // Running the day again replaces the pages: same files, same text.
        write_day(&data, &settings, &Inputs::default(), day, &mut |_| {}).unwrap();
        assert_eq!(every_page(&settings.dir), pages);
    }

    /// Job 667: an earlier healthy run of job 666's name by the same user, with telemetry of
    /// both of its metrics; and both jobs' `features_job` means.
    fn healthy_twin(data: &Path, day: NaiveDate) {
        use jobsight_warehouse::catalog::rows::FeaturesJobRow;
        let start = DateTime::parse_from_rfc3339("2026-11-20T04:00:00Z")
            .unwrap()
            .to_utc();
        let job = JobRow {
            cluster: "c".into(),
            job_id: "667".into(),
            user: Some(format!("mallory{HOSTILE}")),
            num_nodes: Some(1),
            nodes: Some("n2".into()),
            cpus: Some(16),
            submit: Some(start),
            start: Some(start),
            end: start + chrono::Duration::hours(2),
            state: Some("COMPLETED".into()),
            name: Some(HOSTILE.into()),
            source: "test".into(),
            ..JobRow::default()
        };
        catalog::write_part(
            data,
            Table::Jobs,
            day,
            "twin",
            &[JobRow::batch(&[job]).unwrap()],
        )
        .unwrap();
        let summary = JobSummaryRow {
            job_id: "667".into(),
            elapsed_s: 7200.0,
            trimmed: false,
            nodes_expected: Some(1),
            nodes_seen: 1,
            nodes_missing: None,
            metrics: 2,
            samples: 480,
            coverage_min: Some(1.0),
            coverage_mean: Some(1.0),
            judgeable: true,
            not_judgeable_reason: None,
            duty_cycle: None,
            cpu_used_cores: Some(15.0),
            cpu_eff: Some(15.0 / 16.0),
            mem_used_max_mb: None,
            mem_eff: None,
            time_eff: None,
            gpu_util: None,
            core_hours: Some(32.0),
            wasted_core_hours: Some(2.0),
        };
        catalog::write_part(
            data,
            Table::JobSummary,
            day,
            "twin",
            &[JobSummaryRow::batch(&[summary]).unwrap()],
        )
        .unwrap();
        let mut t = TelemetryBuilder::default();
        for i in 0..240 {
            let ts = (start + chrono::Duration::seconds(30 * i)).timestamp_micros();
            t.push("667", "n2", "cpu_user", ts, 15.0);
            t.push("667", "n2", HOSTILE, ts, 2.0 * i as f64);
        }
        catalog::write_part(data, Table::Telemetry, day, "twin", &[t.finish().unwrap()]).unwrap();
        let mean = |job: &str, metric: &str, mean: f64| FeaturesJobRow {
            job_id: job.into(),
            metric: metric.into(),
            nodes: 1,
            mean: Some(mean),
            min: None,
            max: None,
            node_mean_min: None,
            node_mean_max: None,
            node_cv: None,
            imbalance: None,
        };
        let means = [
            mean("666", "cpu_user", 1.0),
            mean("666", HOSTILE, 120.0),
            mean("667", "cpu_user", 15.0),
            mean("667", HOSTILE, 240.0),
        ];
        catalog::write_part(
            data,
            Table::FeaturesJob,
            day,
            "twin",
            &[FeaturesJobRow::batch(&means).unwrap()],
        )
        .unwrap();
    }

    /// A day's pages load only the telemetry they chart: with one chart per page, job 666 gets
    /// the metric its finding names, and its healthy reference run (job 667) that metric too,
    /// whatever 667's own page charts; the page shows one chart with the reference line.
    #[test]
    fn only_the_charted_telemetry_is_loaded() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let day = warehouse(&data);
        healthy_twin(&data, day);
        let settings = Settings {
            dir: tmp.path().join("pages"),
            max_charts: 1,
            ..Settings::default()
        };
        let inputs = Inputs::default();
        let (facts, references) = runtime()
            .unwrap()
            .block_on(async {
                let ctx = query::session(&data).await?;
                let mut facts = load::facts(&ctx, &load::Scope { day, job: None }).await?;
                let (healthy, band) = load::healthy(&ctx, day).await?;
                let references =
                    load_telemetry(&ctx, day, &mut facts, &healthy, &band, &inputs, &settings)
                        .await?;
                Ok::<_, ReportError>((facts, references))
            })
            .unwrap();
        let metrics = |series: &load::Series| -> Vec<String> {
            let mut m: Vec<String> = series.values().flat_map(|m| m.keys().cloned()).collect();
            m.sort();
            m.dedup();
            m
        };
        assert_eq!(metrics(&facts.telemetry["666"]), vec!["cpu_user"]);
        assert!(metrics(&facts.telemetry["667"]).contains(&"cpu_user".to_string()));
        let (run, series) = references.of("666").expect("666 has a reference");
        assert_eq!(run.job_id, "667");
        assert_eq!(series["n2"]["cpu_user"].len(), load::POINTS as usize);
        let written = write_day(&data, &settings, &inputs, day, &mut |_| {}).unwrap();
        assert_eq!(written.failed, vec![]);
        let page = std::fs::read_to_string(settings.dir.join("c/jobs/666.html")).unwrap();
        assert_eq!(page.matches("<svg").count(), 1, "one chart");
        assert!(
            page.contains("healthy run 667"),
            "the reference line is drawn"
        );
    }

    #[test]
    fn one_job_on_demand_and_an_unknown_one_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        warehouse(&data);
        let settings = Settings {
            dir: tmp.path().join("pages"),
            ..Settings::default()
        };
        let path = write_job(&data, &settings, &Inputs::default(), "1").unwrap();
        assert_eq!(path, settings.dir.join("c/jobs/1.html"));
        let page = std::fs::read_to_string(&path).unwrap();
        assert!(page.contains("Job 1"), "{page}");
        let err = write_job(&data, &settings, &Inputs::default(), "9' OR '1'='1").unwrap_err();
        assert!(matches!(err, ReportError::NoSuchJob(_)), "{err}");
    }

    #[test]
    fn the_built_in_pages_pass_the_check_and_a_broken_one_does_not() {
        check(&Settings::default()).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("job.html"), "{{ job.nmae }}").unwrap();
        std::fs::write(tmp.path().join("day.html"), "{{ totls }}").unwrap();
        let settings = Settings {
            templates: Some(tmp.path().to_path_buf()),
            ..Settings::default()
        };
        let err = check(&settings).unwrap_err().to_string();
        assert!(err.contains("job.html"), "{err}");
        std::fs::remove_file(tmp.path().join("job.html")).unwrap();
        let err = check(&settings).unwrap_err().to_string();
        assert!(err.contains("day.html") && err.contains("totls"), "{err}");
    }

    #[test]
    fn a_site_template_replaces_a_page() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        warehouse(&data);
        let templates = tmp.path().join("templates");
        std::fs::create_dir(&templates).unwrap();
        std::fs::write(
            templates.join("job.html"),
            "{% extends \"base.html\" %}{% block body %}<h1>{{ job.name }} at our site</h1>{% endblock %}",
        )
        .unwrap();
        let settings = Settings {
            dir: tmp.path().join("pages"),
            templates: Some(templates),
            ..Settings::default()
        };
        let path = write_job(&data, &settings, &Inputs::default(), "666").unwrap();
        let page = std::fs::read_to_string(path).unwrap();
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{page}"
        );
        assert!(page.contains("at our site</h1>"), "{page}");
    }
}
