//! A workflow run's page (`jobsight report workflow RUN`, and the runs a day's jobs are steps
//! of): its figures, its Gantt chart, its flagged tasks and its critical path.

use minijinja::Value;
use serde_json::json;

use std::path::{Path, PathBuf};

use super::charts::{self, ChartError};
use super::format::{c, duration, href, time, with_charts};
use super::{Page, PageCheck, PageTemplates};
use jobsight_report::{ReportError, Settings, load, workflow_path, write_page};

/// The page's template, checked by the names it may use (there is no sample run).
pub(super) const PAGE: Page = Page {
    template: "workflow.html",
    text: include_str!("workflow.html"),
    check: PageCheck::Names(&NAMES),
};

/// The names a workflow run's page template is given ([`workflow_page`]).
const NAMES: [&str; 17] = [
    "served",
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

impl PageTemplates {
    /// A workflow run's page.
    pub fn workflow(&self, run: &load::WorkflowFacts) -> Result<String, String> {
        self.render(PAGE.template, workflow_page(run))
    }

    /// Its values, for the web interface.
    pub fn workflow_value(&self, run: &load::WorkflowFacts) -> Result<Value, ChartError> {
        workflow_page(run)
    }
}

/// One workflow run's page (`jobsight report workflow RUN`), with its Gantt chart. Returns the
/// page's path.
pub fn write_workflow(
    data: &Path,
    settings: &Settings,
    pages: &PageTemplates,
    run: &str,
) -> Result<PathBuf, ReportError> {
    let facts = jobsight_report::workflow_facts(data, run)?;
    write_workflow_page(settings, pages, &facts)
}

/// A run's page from its facts (a day's runs, and the run of a job's page on demand).
pub(super) fn write_workflow_page(
    settings: &Settings,
    pages: &PageTemplates,
    run: &load::WorkflowFacts,
) -> Result<PathBuf, ReportError> {
    let text = pages.workflow(run).map_err(ReportError::Render)?;
    let path = settings.dir.join(workflow_path(&run.workflow_id));
    write_page(&path, &text)?;
    Ok(path)
}

/// Flagged tasks listed on a workflow page (the chart marks them all).
const MAX_FLAGGED_ROWS: usize = 50;

/// A workflow run's page: its figures, its Gantt chart, its flagged tasks and its critical path.
pub fn workflow_page(run: &load::WorkflowFacts) -> Result<Value, ChartError> {
    let me = workflow_path(&run.workflow_id);
    let origin = run
        .tasks
        .iter()
        .flat_map(|t| [t.ready, t.submit, t.execute_start])
        .flatten()
        .fold(f64::INFINITY, f64::min);
    let since = |v: Option<f64>| v.map(|v| v - origin);
    let gantt: Vec<charts::GanttTask> = run
        .tasks
        .iter()
        .map(|t| charts::GanttTask {
            ready: since(t.ready),
            submit: since(t.submit),
            start: since(t.execute_start),
            finish: since(t.execute_end),
            end: since(t.end),
            flagged: t.flagged,
            critical: t.critical,
        })
        .collect();
    let svg = charts::gantt_chart(
        &format!("{} ({} tasks)", run.workflow_id, run.tasks.len()),
        &gantt,
    )?;
    let secs = |v: Option<f64>| duration(v.map(|v| v.round() as i64));
    let task_json = |t: &load::WorkflowTaskFacts| {
        json!({
            "task": c(&t.task_id),
            "host": c(t.host.as_deref().unwrap_or("-")),
            "label": c(t.label.as_deref().unwrap_or("-")),
            "score": t.score.map_or("-".into(), |s| format!("{s:.1}")),
            "executing": secs(t.execute_start.zip(t.execute_end).map(|(a, b)| b - a)),
        })
    };
    let mut flagged: Vec<&load::WorkflowTaskFacts> =
        run.tasks.iter().filter(|t| t.flagged).collect();
    flagged.sort_by(|a, b| b.score.unwrap_or(0.0).total_cmp(&a.score.unwrap_or(0.0)));
    let critical: Vec<serde_json::Value> = run
        .tasks
        .iter()
        .filter(|t| t.critical)
        .map(task_json)
        .collect();
    let scored = run.tasks.iter().any(|t| t.score.is_some());
    Ok(with_charts(
        json!({
            "title": format!("workflow run {}", c(&run.workflow_id)),
            "root": href(&me, Path::new("")),
            "run": c(&run.workflow_id),
            "workflow": c(&run.workflow),
            "label": c(run.label.as_deref().unwrap_or("-")),
            "tasks": run.tasks.len(),
            "start": time(run.start),
            "end": time(run.end),
            "makespan": secs(run.makespan_s),
            "critical_path": secs(run.critical_path_s),
            "scored": scored,
            "flagged": flagged.iter().map(|t| task_json(t)).collect::<Vec<_>>(),
            "flagged_shown": flagged.len().min(MAX_FLAGGED_ROWS),
            "critical": critical,
            "phases": charts::GANTT_PHASES.iter().map(|(name, colour)| json!({
                "name": name, "colour": format!("#{:02x}{:02x}{:02x}", colour.0, colour.1, colour.2),
            })).collect::<Vec<_>>(),
        }),
        vec![Value::from_safe_string(svg)],
    ))
}
