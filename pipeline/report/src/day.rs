//! Everything a day's pages show, gathered in one pass over the warehouse: the day's jobs, their
//! healthy references (stored for the job pages served later), the workflow runs the day's jobs
//! are steps of or that ended that day, each user's history and each cluster's figures. The
//! telemetry the job pages chart is loaded a few hundred jobs at a time ([`Day::load_charts`]),
//! as the render crate writes their pages: a whole 1,000-node day's took 3.7 GiB once per-core
//! families were charted as one band. The render crate turns a [`Day`] into pages and writes
//! them with [`crate::write_page`]; this stage never calls it. Every other fact is read, and the
//! references stored, before any page is rendered: a page that cannot be rendered does not stop
//! the references of its day from being stored.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use chrono::NaiveDate;

use crate::select::References;
use crate::stored::store_references;
use crate::{
    Charts, Inputs, ReportError, Settings, load, load_charted, load_references,
    remove_stale_page_temporaries, remove_stale_workflow_pages, runtime, workflow_facts_on,
    workflow_runs,
};

/// How many jobs' charted telemetry [`Day::load_charts`] is asked for at a time by the render
/// crate, so that the bins held grow with this, not with the day: a tenth of a 1,000-node day's
/// 2,543 jobs, whose bins in one query took 3.7 GiB.
pub const CHARTED_JOBS_AT_A_TIME: usize = 250;

/// The facts of every page of one day.
pub struct Day {
    pub day: NaiveDate,
    /// The day's jobs, the telemetry of those [`Day::load_charts`] loaded last, and which
    /// workflow run each is a step of (`facts.workflows`).
    pub facts: load::Facts,
    /// Each job's reference run and its telemetry.
    pub references: References,
    pub bands: load::HealthyBands,
    /// The runs the day's jobs are steps of and those that ended that day, by name.
    pub workflows: Vec<load::WorkflowFacts>,
    /// Each (cluster, user) with a job that day, and their history up to the day.
    pub users: Vec<(String, String, load::UserHistory)>,
    /// Each cluster with a job that day, and its figures.
    pub clusters: Vec<load::DayFacts>,
    /// The warehouse and the session the charts are loaded from.
    data: PathBuf,
    runtime: tokio::runtime::Runtime,
    ctx: datafusion::prelude::SessionContext,
}

impl std::fmt::Debug for Day {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Day")
            .field("day", &self.day)
            .field("jobs", &self.facts.jobs.len())
            .field("workflows", &self.workflows.len())
            .field("users", &self.users.len())
            .field("clusters", &self.clusters.len())
            .finish_non_exhaustive()
    }
}

impl Day {
    /// Loads the telemetry the pages of the jobs at `jobs` in `facts.jobs` chart, in place of
    /// what the last call loaded ([`crate::load_charted`]).
    pub fn load_charts(
        &mut self,
        jobs: &[usize],
        inputs: &Inputs,
        settings: &Settings,
    ) -> Result<(), ReportError> {
        let charts = Charts {
            bands: &self.bands,
            inputs,
            settings,
        };
        self.runtime.block_on(load_charted(
            &self.data,
            &self.ctx,
            self.day,
            &mut self.facts,
            jobs,
            &charts,
        ))
    }
}

/// Gathers [`Day`]: removes what a killed run left (page temporaries, the pages of workflow runs
/// no longer stored), stores the day's healthy references, and says what it does through
/// `progress`.
pub fn gather_day(
    data: &Path,
    settings: &Settings,
    inputs: &Inputs,
    day: NaiveDate,
    progress: &mut dyn FnMut(&str),
) -> Result<Day, ReportError> {
    let stale = remove_stale_page_temporaries(&settings.dir);
    if stale > 0 {
        progress(&format!(
            "removed {stale} temporary page file(s) a killed run left"
        ));
    }
    let runtime = runtime()?;
    let ctx = runtime.block_on(jobsight_warehouse::query::session(data))?;
    let gathered = runtime.block_on(async {
        let scope = load::Scope { day, job: None };
        let mut facts = load::facts(&ctx, &scope).await?;
        let runs = workflow_runs(data, &ctx, day).await?;
        // The runs the day's job pages link to, and the day's own.
        let mut names: BTreeSet<&String> = runs.ended.iter().collect();
        names.extend(facts.jobs.iter().filter_map(|j| runs.steps.get(&j.job_id)));
        let mut workflows = Vec::with_capacity(names.len());
        for run in names {
            workflows.push(workflow_facts_on(data, &ctx, run).await?);
        }
        if runs.stored {
            remove_stale_workflow_pages(&ctx, &settings.dir).await?;
        }
        facts.workflows = runs.steps.clone();
        let (healthy, bands) = load::healthy(&ctx, day).await?;
        let mut references = References {
            runs: crate::select::reference_runs(&facts, &healthy),
            series: Default::default(),
        };
        drop(healthy);
        store_references(data, day, &facts.jobs, &references.runs, &bands)?;
        // Before the reference runs' telemetry, the largest thing the step holds: what this
        // query holds while it runs does not add to it.
        let mut histories = load::user_histories(&ctx, day, None).await?;
        // The reference runs' telemetry once for the day: a run is the reference of jobs all
        // over the day (5,052 runs for 25,270 jobs on a 10,000-node day), so read with each
        // group of pages it was read again and again (that day's step: 266 s against 118 s).
        let charts = Charts {
            bands: &bands,
            inputs,
            settings,
        };
        let all: Vec<usize> = (0..facts.jobs.len()).collect();
        load_references(data, &ctx, &facts, &all, &mut references, &charts).await?;
        let owners: BTreeSet<(String, String)> = facts
            .jobs
            .iter()
            .map(|j| (j.cluster.clone(), j.user.clone()))
            .collect();
        let users = owners
            .into_iter()
            .map(|(cluster, user)| {
                let history = histories
                    .remove(&(cluster.clone(), user.clone()))
                    .unwrap_or_default();
                (cluster, user, history)
            })
            .collect();
        let names: BTreeSet<String> = facts.jobs.iter().map(|j| j.cluster.clone()).collect();
        let mut clusters = Vec::with_capacity(names.len());
        for cluster in &names {
            clusters.push(load::day_report(&ctx, cluster, day).await?);
        }
        Ok::<_, ReportError>((facts, references, bands, workflows, users, clusters))
    })?;
    let (facts, references, bands, workflows, users, clusters) = gathered;
    Ok(Day {
        day,
        facts,
        references,
        bands,
        workflows,
        users,
        clusters,
        data: data.to_path_buf(),
        runtime,
        ctx,
    })
}
