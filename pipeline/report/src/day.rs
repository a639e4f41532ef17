//! Everything a day's pages show, gathered in one pass over the warehouse: the day's jobs with
//! their charted telemetry, their healthy references (stored for the job pages served later), the
//! workflow runs the day's jobs are steps of or that ended that day, each user's history and each
//! cluster's figures. The render crate turns a [`Day`] into pages and writes them with
//! [`crate::write_page`]; this stage never calls it. Every fact is read, and the references
//! stored, before any page is rendered: a page that cannot be rendered no longer stops the
//! references of its day from being stored.

use std::collections::BTreeSet;
use std::path::Path;

use chrono::NaiveDate;

use crate::select::References;
use crate::stored::store_references;
use crate::{
    Inputs, ReportError, Settings, load, load_telemetry, remove_stale_page_temporaries,
    remove_stale_workflow_pages, runtime, workflow_facts_on, workflow_runs,
};

/// The facts of every page of one day.
#[derive(Debug)]
pub struct Day {
    pub day: NaiveDate,
    /// The day's jobs, their telemetry loaded for the charts, and which workflow run each is a
    /// step of (`facts.workflows`).
    pub facts: load::Facts,
    pub references: References,
    pub bands: load::HealthyBands,
    /// The runs the day's jobs are steps of and those that ended that day, by name.
    pub workflows: Vec<load::WorkflowFacts>,
    /// Each (cluster, user) with a job that day, and their history up to the day.
    pub users: Vec<(String, String, load::UserHistory)>,
    /// Each cluster with a job that day, and its figures.
    pub clusters: Vec<load::DayFacts>,
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
    runtime()?.block_on(async {
        let ctx = jobsight_warehouse::query::session(data).await?;
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
        progress(&format!(
            "{} jobs: loading the telemetry their pages chart",
            facts.jobs.len()
        ));
        let references =
            load_telemetry(&ctx, day, &mut facts, &healthy, &bands, inputs, settings).await?;
        store_references(data, day, &facts.jobs, &references.runs, &bands)?;
        let mut histories = load::user_histories(&ctx, day, None).await?;
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
        Ok(Day {
            day,
            facts,
            references,
            bands,
            workflows,
            users,
            clusters,
        })
    })
}
