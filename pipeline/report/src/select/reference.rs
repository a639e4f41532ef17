//! The healthy reference a job's page charts it against: the newest healthy run of the same job
//! name, and that run's telemetry.

use std::collections::HashMap;

use chrono::NaiveDate;

use crate::load::{Facts, HealthyRun, Series};

/// The healthy run each job of `facts` is compared with: the newest healthy run of the same job
/// name by the same user that is not the job itself, else by anyone. Job id → run.
pub fn reference_runs(facts: &Facts, healthy: &[HealthyRun]) -> HashMap<String, HealthyRun> {
    let mut by_app: HashMap<(&str, &str), Vec<&HealthyRun>> = HashMap::new();
    let mut by_name: HashMap<&str, Vec<&HealthyRun>> = HashMap::new();
    for run in healthy {
        by_app
            .entry((run.user.as_str(), run.name.as_str()))
            .or_default()
            .push(run);
        by_name.entry(run.name.as_str()).or_default().push(run);
    }
    let mut out = HashMap::new();
    for job in &facts.jobs {
        let not_itself = |r: &&&HealthyRun| r.job_id != job.job_id;
        let run = by_app
            .get(&(job.user.as_str(), job.name.as_str()))
            .and_then(|runs| runs.iter().find(not_itself))
            .or_else(|| {
                by_name
                    .get(job.name.as_str())
                    .and_then(|runs| runs.iter().find(not_itself))
            });
        if let Some(run) = run {
            out.insert(job.job_id.clone(), (*run).clone());
        }
    }
    out
}

/// The healthy runs the jobs' pages are compared with ([`reference_runs`]) and the telemetry of
/// each run (by the run's day and job id), loaded once however many jobs share a run.
#[derive(Debug, Default)]
pub struct References {
    pub runs: HashMap<String, HealthyRun>,
    pub series: HashMap<(NaiveDate, String), Series>,
}

impl References {
    /// A job's reference run and its telemetry, if the run has any.
    pub fn of(&self, job_id: &str) -> Option<(&HealthyRun, &Series)> {
        let run = self.runs.get(job_id)?;
        let series = self
            .series
            .get(&(run.day, run.job_id.clone()))
            .filter(|s| !s.is_empty())?;
        Some((run, series))
    }
}
