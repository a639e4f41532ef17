//! Report pages: every job's page, each user's page, the daily system report and an index, as
//! static HTML files in one folder (`[report] dir`), written by the nightly DAG's `report` step
//! for a whole day and by `jobsight report job JOB_ID` on demand. No server is needed: every
//! link is relative, every chart is inline SVG, nothing loads from the internet, so the folder
//! can be copied to any web server, or opened from disk, on an air-gapped cluster.
//!
//! Input: the warehouse ([`load`]: `jobs`, `job_summary`, `findings`, `classes`, `thresholds`,
//! `predictions`, `features_job`, `telemetry`, `summaries`, `notifications`, `runs`) and the
//! diagnosis model's feature importance (passed in by the caller, so this stage never calls
//! the model stage). Output: `index.html`, `<cluster>/jobs/<job>.html`, `<cluster>/users/<user>.html`
//! and `<cluster>/days/<day>.html`, names made safe by [`jobsight_base::text::slug`], so the links
//! of the emails (`notify.report_url`, `notify.user_url`) point at them.
//!
//! This stage gathers the facts ([`gather_day`] for a day's pages, [`job_page_on_demand`],
//! [`workflow_facts`]), chooses what each page compares and charts ([`select`]), and writes a
//! page's file whole ([`write_page`]); what a person reads of each page (the templates, the
//! charts, the wording) is the render crate's (`jobsight_render::pages`), which drives the
//! writing and which this stage never calls. Everything from Slurm (job names, users,
//! accounts, node lists, paths) is hostile: the facts carry it as the warehouse holds it, and the
//! pages clean and escape it.
//!
//! Idempotent: a page is replaced whole (temporary file, then rename), so re-running a day
//! rewrites its pages and a reader never sees half a page. A job whose page cannot be drawn is
//! reported with its id and the reason, and the others are still written.
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod day;
pub mod load;
pub mod select;
pub mod served;
mod stored;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use serde::Deserialize;

use jobsight_base::text::slug;
use jobsight_warehouse::query::{self, QueryError};

pub use day::{CHARTED_JOBS_AT_A_TIME, Day, gather_day};
use select::References;
pub use stored::write_references;

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
    /// The site's page templates (read by the render crate, which renders the pages).
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
    /// A page the render crate could not render, in its words (a template's file and line, or
    /// the chart that could not be drawn).
    #[error("{0}")]
    Render(String),
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
    #[error(transparent)]
    Store(#[from] jobsight_warehouse::catalog::CatalogError),
    #[error(transparent)]
    Scan(#[from] jobsight_warehouse::catalog::scan::ScanError),
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

/// What the report folder holds, as the index lists it: every page found there, those of earlier
/// runs included. The names are the page files' names without `.html` (slugs already).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndexListing {
    /// One per cluster folder, by name.
    pub clusters: Vec<ClusterListing>,
    /// The workflow runs' pages, in reverse order of name.
    pub workflows: Vec<String>,
}

/// A cluster folder's pages.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterListing {
    pub name: String,
    /// The daily system reports, newest day first.
    pub days: Vec<String>,
    /// The user pages, by name.
    pub users: Vec<String>,
    /// How many job pages there are.
    pub jobs: usize,
}

fn runtime() -> Result<tokio::runtime::Runtime, ReportError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ReportError::Runtime)
}

/// How the temporaries of [`write_page`] begin: hidden, and told apart from anything else.
const PAGE_TEMPORARY_PREFIX: &str = ".page-tmp-";

/// Removes the temporaries of [`write_page`] that a killed run left in the report folder (its
/// own, its clusters' `jobs`, `users` and `days`, and `workflows`), once nobody touched them for
/// `safe_fs::STALE_TEMPORARY_S`. Returns how many.
fn remove_stale_page_temporaries(dir: &Path) -> usize {
    let stale = std::time::Duration::from_secs(jobsight_base::safe_fs::STALE_TEMPORARY_S);
    let now = std::time::SystemTime::now();
    let mut folders = vec![dir.to_path_buf(), dir.join("workflows")];
    for cluster in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if cluster.file_type().is_ok_and(|t| t.is_dir()) {
            folders.extend(["jobs", "users", "days"].map(|f| cluster.path().join(f)));
        }
    }
    let mut removed = 0;
    for folder in folders {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|m| now.duration_since(m).is_ok_and(|age| age > stale));
            let ours = entry
                .file_name()
                .to_string_lossy()
                .starts_with(PAGE_TEMPORARY_PREFIX);
            if ours && old && std::fs::remove_file(entry.path()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

/// Writes `text` to `path` whole: a temporary file in the same folder, then a rename.
pub fn write_page(path: &Path, text: &str) -> Result<(), ReportError> {
    let failed = |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(failed)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(PAGE_TEMPORARY_PREFIX)
        .tempfile_in(dir)
        .map_err(failed)?;
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

/// The day one job is stored under and every table's rows about it.
async fn one_job(
    ctx: &datafusion::prelude::SessionContext,
    job_id: &str,
) -> Result<(NaiveDate, load::Facts), ReportError> {
    let day = load::day_of(ctx, job_id)
        .await?
        .ok_or_else(|| ReportError::NoSuchJob(job_id.to_string()))?;
    Ok((day, job_facts_on(ctx, job_id, day).await?))
}

/// Every table's rows about one job of `day`.
async fn job_facts_on(
    ctx: &datafusion::prelude::SessionContext,
    job_id: &str,
    day: NaiveDate,
) -> Result<load::Facts, ReportError> {
    let scope = load::Scope {
        day,
        job: Some(job_id.to_string()),
    };
    Ok(load::facts(ctx, &scope).await?)
}

/// Everything a job's page shows: the job (its newest record), every table's rows about it with
/// its charted telemetry, its healthy reference run and the healthy bands of its day.
#[derive(Debug)]
pub struct JobPage {
    pub job: load::JobFacts,
    pub facts: load::Facts,
    pub references: References,
    pub bands: load::HealthyBands,
}

/// Gathers a job's page on `ctx` (a command's session, or a server's): its newest record's day,
/// unless the caller knows the `day` already (the server, which looked the owner up first).
pub async fn job_page(
    data: &Path,
    ctx: &datafusion::prelude::SessionContext,
    job_id: &str,
    day: Option<NaiveDate>,
    inputs: &Inputs,
    settings: &Settings,
) -> Result<JobPage, ReportError> {
    let day = match day {
        Some(day) => day,
        None => load::day_of(ctx, job_id)
            .await?
            .ok_or_else(|| ReportError::NoSuchJob(job_id.to_string()))?,
    };
    let healthy = reference_of(ctx, day, job_id).await?;
    job_page_with(data, ctx, job_id, day, &healthy, inputs, settings).await
}

/// A job's healthy runs and bands: as its day's report stored them
/// ([`load::stored_reference`]), else computed now ([`load::healthy`]).
pub async fn reference_of(
    ctx: &datafusion::prelude::SessionContext,
    day: NaiveDate,
    job_id: &str,
) -> Result<(Vec<load::HealthyRun>, load::HealthyBands), ReportError> {
    Ok(match load::stored_reference(ctx, day, job_id).await? {
        Some(stored) => stored,
        None => load::healthy(ctx, day).await?,
    })
}

/// [`job_page`] of a job of `day` with that day's healthy runs and bands ([`load::healthy`])
/// given: a server keeps them for the day's other pages.
pub async fn job_page_with(
    data: &Path,
    ctx: &datafusion::prelude::SessionContext,
    job_id: &str,
    day: NaiveDate,
    (healthy, bands): &(Vec<load::HealthyRun>, load::HealthyBands),
    inputs: &Inputs,
    settings: &Settings,
) -> Result<JobPage, ReportError> {
    let mut facts = job_facts_on(ctx, job_id, day).await?;
    let runs = workflow_runs(data, ctx, day).await?;
    facts.workflows = runs.steps;
    let references =
        load_telemetry(data, ctx, day, &mut facts, healthy, bands, inputs, settings).await?;
    let job = facts
        .jobs
        .last()
        .cloned()
        .ok_or_else(|| ReportError::NoSuchJob(job_id.to_string()))?;
    Ok(JobPage {
        job,
        facts,
        references,
        bands: bands.clone(),
    })
}

/// One job's page on demand (`jobsight report job JOB_ID`), and the facts of the workflow run
/// it is a step of, if any, whose page goes with it.
pub fn job_page_on_demand(
    data: &Path,
    settings: &Settings,
    inputs: &Inputs,
    job_id: &str,
) -> Result<(JobPage, Option<load::WorkflowFacts>), ReportError> {
    runtime()?.block_on(async {
        let ctx = query::session(data).await?;
        let page = job_page(data, &ctx, job_id, None, inputs, settings).await?;
        let run = match page.facts.workflows.get(job_id) {
            Some(run) => Some(workflow_facts_on(data, &ctx, run).await?),
            None => None,
        };
        Ok((page, run))
    })
}

/// What the warehouse holds about one job (its last record when a requeue gave it several),
/// without its telemetry, and the healthy bands of each metric's job mean over the 30 days up to
/// its day: what `jobsight job` prints.
pub fn job_facts(
    data: &Path,
    job_id: &str,
) -> Result<(load::Facts, load::HealthyBands), ReportError> {
    visible_job_facts(data, job_id, |_| true)
}

/// [`job_facts`] for a reader who may see the jobs of the owners `visible` accepts: the job's
/// owner is looked up first, and a job of somebody else's is [`ReportError::NoSuchJob`] before
/// any of it is read, exactly as a job nobody ran (the same answer, from the same one lookup).
pub fn visible_job_facts(
    data: &Path,
    job_id: &str,
    visible: impl Fn(&str) -> bool,
) -> Result<(load::Facts, load::HealthyBands), ReportError> {
    runtime()?.block_on(async {
        let ctx = query::session(data).await?;
        let owners = load::owners(&ctx, job_id).await?;
        if !owners.iter().any(|o| visible(&o.user)) {
            return Err(ReportError::NoSuchJob(job_id.to_string()));
        }
        let (day, facts) = one_job(&ctx, job_id).await?;
        let (_, bands) = reference_of(&ctx, day, job_id).await?;
        Ok((facts, bands))
    })
}

/// The jobs that ended from `from` to `to`, of `user` or everyone's, newest first, at most
/// `limit`: what `jobsight jobs` lists.
pub fn list_jobs(
    data: &Path,
    user: Option<&str>,
    from: NaiveDate,
    to: NaiveDate,
    limit: usize,
) -> Result<Vec<load::RecentJob>, ReportError> {
    runtime()?.block_on(async {
        let ctx = query::session(data).await?;
        Ok(load::jobs_between(&ctx, user, from, to, limit).await?)
    })
}

/// One workflow run's facts, for its page (`jobsight report workflow RUN`).
pub fn workflow_facts(data: &Path, run: &str) -> Result<load::WorkflowFacts, ReportError> {
    runtime()?.block_on(async {
        let ctx = query::session(data).await?;
        workflow_facts_on(data, &ctx, run).await
    })
}

/// [`workflow_facts`] on a session already open; a run nobody stored is
/// [`ReportError::NoSuchWorkflow`].
async fn workflow_facts_on(
    data: &Path,
    ctx: &datafusion::prelude::SessionContext,
    run: &str,
) -> Result<load::WorkflowFacts, ReportError> {
    let scored = jobsight_warehouse::catalog::Table::WorkflowScores
        .dir(data)
        .is_dir();
    load::workflow(ctx, run, scored)
        .await?
        .ok_or_else(|| ReportError::NoSuchWorkflow(run.to_string()))
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

/// Loads the telemetry the pages of all of `facts`' jobs chart into `facts.telemetry`
/// ([`load_charted`]) and that of their healthy reference runs ([`load_references`]): what a
/// page served or written on demand needs. Returns each job's reference run with its telemetry.
#[allow(clippy::too_many_arguments)]
pub async fn load_telemetry(
    data: &Path,
    ctx: &datafusion::prelude::SessionContext,
    day: NaiveDate,
    facts: &mut load::Facts,
    healthy: &[load::HealthyRun],
    bands: &load::HealthyBands,
    inputs: &Inputs,
    settings: &Settings,
) -> Result<References, ReportError> {
    let mut references = References {
        runs: select::reference_runs(facts, healthy),
        series: Default::default(),
    };
    let charts = Charts {
        bands,
        inputs,
        settings,
    };
    let all: Vec<usize> = (0..facts.jobs.len()).collect();
    load_references(data, ctx, facts, &all, &mut references, &charts).await?;
    load_charted(data, ctx, day, facts, &all, &charts).await?;
    Ok(references)
}

/// What chooses the metrics a job's page charts ([`select::metrics_to_load`]).
#[derive(Debug)]
pub struct Charts<'a> {
    pub bands: &'a load::HealthyBands,
    pub inputs: &'a Inputs,
    pub settings: &'a Settings,
}

impl Charts<'_> {
    /// The metrics `job`'s page charts ([`select::metrics_to_load`]; every series of a per-core
    /// family it charts); `None` for every metric.
    fn metrics(&self, job: &load::JobFacts, facts: &load::Facts) -> Option<Vec<String>> {
        let band = &self.bands.for_job(&job.name, &job.user).0.band;
        select::metrics_to_load(job, facts, self.inputs, band, self.settings.max_charts)
    }
}

/// Loads the telemetry of the reference runs (`references.runs`) of the jobs at `jobs` in
/// `facts.jobs` into `references.series`, in place of what it held: for each run the metrics of
/// each of those jobs compared with it; one scan per day the runs ended on ([`load::telemetry`]).
pub async fn load_references(
    data: &Path,
    ctx: &datafusion::prelude::SessionContext,
    facts: &load::Facts,
    jobs: &[usize],
    references: &mut References,
    charts: &Charts<'_>,
) -> Result<(), ReportError> {
    references.series.clear();
    let mut by_day: BTreeMap<NaiveDate, load::Wanted> = Default::default();
    for job in jobs.iter().map(|&i| &facts.jobs[i]) {
        if let Some(run) = references.runs.get(&job.job_id) {
            let metrics = charts.metrics(job, facts);
            load::want(
                by_day.entry(run.day).or_default(),
                &run.job_id,
                metrics.as_deref(),
            );
        }
    }
    for (on, wanted) in &by_day {
        for (job_id, series) in load::telemetry(ctx, data, *on, wanted).await? {
            references.series.insert((*on, job_id), series);
        }
    }
    Ok(())
}

/// Loads the telemetry the pages of the jobs at `jobs` in `facts.jobs` chart ([`Charts::metrics`])
/// into `facts.telemetry`, in place of what it held: one query ([`load::telemetry`]).
pub async fn load_charted(
    data: &Path,
    ctx: &datafusion::prelude::SessionContext,
    day: NaiveDate,
    facts: &mut load::Facts,
    jobs: &[usize],
    charts: &Charts<'_>,
) -> Result<(), ReportError> {
    facts.telemetry.clear();
    let mut wanted = load::Wanted::default();
    for job in jobs.iter().map(|&i| &facts.jobs[i]) {
        load::want(
            &mut wanted,
            &job.job_id,
            charts.metrics(job, facts).as_deref(),
        );
    }
    facts.telemetry = load::telemetry(ctx, data, day, &wanted).await?;
    Ok(())
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

/// What the report folder `dir` holds, for its index.
pub fn index_listing(dir: &Path) -> IndexListing {
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
        clusters.push(ClusterListing {
            name: cluster,
            days,
            users,
            jobs,
        });
    }
    IndexListing {
        clusters,
        workflows,
    }
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

    /// A page's temporary that a kill -9 left behind is removed by the next run once it is
    /// stale; a fresh one (a run going on beside) and the pages stay.
    #[test]
    fn stale_page_temporaries_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = dir.path().join("c/jobs");
        std::fs::create_dir_all(&jobs).unwrap();
        let stale = jobs.join(format!("{PAGE_TEMPORARY_PREFIX}abc123"));
        let fresh = jobs.join(format!("{PAGE_TEMPORARY_PREFIX}def456"));
        let page = jobs.join("7.html");
        for path in [&stale, &fresh, &page] {
            std::fs::write(path, "x").unwrap();
        }
        let old = std::time::SystemTime::now()
            - std::time::Duration::from_secs(jobsight_base::safe_fs::STALE_TEMPORARY_S + 60);
        std::fs::File::options()
            .write(true)
            .open(&stale)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert_eq!(remove_stale_page_temporaries(dir.path()), 1);
        assert!(!stale.exists() && fresh.exists() && page.exists());
    }
}
