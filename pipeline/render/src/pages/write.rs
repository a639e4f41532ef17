//! Writing a day's report pages, and a job's on demand: the report stage gathers the facts and
//! this renders each page with [`PageTemplates`] (each page's folder renders its own) and writes
//! it whole ([`jobsight_report::write_page`]). A job whose page cannot be drawn is reported with
//! its id and the reason, and the others are still written.

use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use jobsight_report::{
    CHARTED_JOBS_AT_A_TIME, Inputs, ReportError, Settings, Written, day_path, job_path, user_path,
    write_page,
};

use super::PageTemplates;
use super::index::write_index;
use super::workflow::write_workflow_page;

/// Every page of `day`: its jobs, the users who had a job that day, the day's system report of
/// each cluster, the workflow runs its jobs are steps of or that ended that day, and the index.
/// The telemetry the job pages chart is loaded [`CHARTED_JOBS_AT_A_TIME`] jobs at a time, in the
/// order of their ids (so a page that cannot be drawn is listed in that order). `progress` hears
/// about each group and each hundred jobs.
pub fn write_day(
    data: &Path,
    settings: &Settings,
    pages: &PageTemplates,
    inputs: &Inputs,
    day: NaiveDate,
    progress: &mut dyn FnMut(&str),
) -> Result<Written, ReportError> {
    let at_a_time = CHARTED_JOBS_AT_A_TIME;
    write_day_by(data, settings, pages, inputs, day, at_a_time, progress)
}

/// [`write_day`], loading the charted telemetry of `at_a_time` jobs at a time.
pub(super) fn write_day_by(
    data: &Path,
    settings: &Settings,
    pages: &PageTemplates,
    inputs: &Inputs,
    day: NaiveDate,
    at_a_time: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<Written, ReportError> {
    let mut day = jobsight_report::gather_day(data, settings, inputs, day, progress)?;
    let mut written = Written::default();
    for run in &day.workflows {
        write_workflow_page(settings, pages, run)?;
        written.workflows += 1;
    }
    let total = day.facts.jobs.len();
    // In the order of their ids, which is how the day's telemetry is laid out: each group then
    // reads a few of its row groups (see `jobsight_report::load::telemetry`).
    let mut order: Vec<usize> = (0..total).collect();
    order.sort_by(|&a, &b| day.facts.jobs[a].job_id.cmp(&day.facts.jobs[b].job_id));
    for (n, &i) in order.iter().enumerate() {
        if n % at_a_time == 0 {
            let group = &order[n..total.min(n + at_a_time)];
            progress(&format!(
                "jobs {} to {} of {total}: loading the telemetry their pages chart",
                n + 1,
                n + group.len()
            ));
            day.load_charts(group, inputs, settings)?;
        }
        let job = &day.facts.jobs[i];
        match pages.job(
            job,
            &day.facts,
            &day.references,
            &day.bands,
            inputs,
            settings,
        ) {
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
            progress(&format!("{} of {total} job pages", n + 1));
        }
    }
    for (cluster, user, history) in &day.users {
        let text = pages
            .user(cluster, user, day.day, history)
            .map_err(ReportError::Render)?;
        write_page(&settings.dir.join(user_path(cluster, user)), &text)?;
        written.users += 1;
    }
    for report in &day.clusters {
        let text = pages.day(report, &day.facts).map_err(ReportError::Render)?;
        write_page(
            &settings
                .dir
                .join(day_path(&report.cluster, &day.day.to_string())),
            &text,
        )?;
        written.days += 1;
    }
    write_index(&settings.dir, pages)?;
    Ok(written)
}

/// One job's page, on demand, and its workflow run's when it is a step of one. Returns the
/// job page's path.
pub fn write_job(
    data: &Path,
    settings: &Settings,
    pages: &PageTemplates,
    inputs: &Inputs,
    job_id: &str,
) -> Result<PathBuf, ReportError> {
    let (page, run) = jobsight_report::job_page_on_demand(data, settings, inputs, job_id)?;
    if let Some(run) = &run {
        write_workflow_page(settings, pages, run)?;
    }
    let text = pages
        .job(
            &page.job,
            &page.facts,
            &page.references,
            &page.bands,
            inputs,
            settings,
        )
        .map_err(ReportError::Render)?;
    let path = settings
        .dir
        .join(job_path(&page.job.cluster, &page.job.job_id));
    write_page(&path, &text)?;
    Ok(path)
}
