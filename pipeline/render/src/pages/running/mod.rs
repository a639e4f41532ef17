//! The "what runs now" page of the running DAG's snapshot (`running-page`, and `/running` of the
//! web interface): each job's use so far against its request, coloured by the job pages'
//! limits ([`crate::usage`]), and the conditions that hold with since when.

use chrono::{DateTime, Utc};
use serde_json::json;

use super::{Page, PageCheck, PageError, PageTemplates};
use crate::running::{STALE_AFTER_S, memory, share};
use crate::templates::{TemplateError, Templates};
use crate::units::duration;
use crate::usage::{CPU_LEVELS, GPU_LEVELS, MEMORY_LEVELS, bar_width, level};
use jobsight_base::text::clean;
use jobsight_report::Settings;
use jobsight_running::snapshot::Snapshot;

/// The page's template, checked against the running stage's sample snapshot.
pub(super) const PAGE: Page = Page {
    template: "running.html",
    text: include_str!("running.html"),
    check: PageCheck::Sample(check),
};

impl PageTemplates {
    /// The "what runs now" page of the running DAG's snapshot.
    pub fn running(
        &self,
        snapshot: &Snapshot,
        now: DateTime<Utc>,
    ) -> Result<String, TemplateError> {
        self.templates
            .render(PAGE.template, &crate::templates::value(page(snapshot, now)))
    }
}

/// `check`'s rendering of the template against the running stage's sample snapshot.
fn check(pages: &Templates, _: &Settings) -> Result<(), PageError> {
    let running = jobsight_running::snapshot::sample();
    pages
        .render(
            PAGE.template,
            &crate::templates::value(page(&running, running.taken_at)),
        )
        .map(|_| ())
        .map_err(PageError::from)
}

/// The "what runs now" page's values.
pub fn page(snapshot: &Snapshot, now: DateTime<Utc>) -> serde_json::Value {
    let bar = |x: Option<f64>, limits| json!({"share": share(x), "width": bar_width(x), "level": level(x, limits)});
    let jobs: Vec<serde_json::Value> = snapshot
        .jobs
        .iter()
        .map(|j| {
            json!({
                "job_id": clean(&j.job_id, 64), "name": clean(&j.name, 80), "user": clean(&j.user, 64),
                "partition": clean(&j.partition, 40),
                "elapsed": duration(j.elapsed_s as f64),
                "limit": j.time_limit_s.map_or("no limit".into(), |s| duration(s as f64)),
                "cpus": j.cpus,
                "cores_used": j.cpu_used_cores.map_or("-".into(), |c| format!("{c:.1}")),
                "cpu": bar(j.cpu_eff, CPU_LEVELS),
                "mem_used": memory(j),
                "mem": bar(j.mem_eff, MEMORY_LEVELS),
                "gpu": (j.gpus > 0).then(|| bar(j.gpu_util, GPU_LEVELS)),
                "not_judged": j.not_judged.as_deref().map(|w| clean(w, 200)),
                "source": j.shared.then_some("shares its nodes with other jobs"),
                "conditions": j.conditions.iter().map(|c| json!({
                    "severity": clean(&c.severity, 10), "title": clean(&c.title, 200),
                    "since": c.since.format("%Y-%m-%d %H:%M UTC").to_string(),
                    "held": duration(c.held_s(now) as f64),
                    "message": clean(&c.message, 1000), "fix": clean(&c.fix, 1000),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let age = (now - snapshot.taken_at).num_seconds();
    json!({
        "title": "What runs now",
        "root": "",
        "taken_at": snapshot.taken_at.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        "stale": (age > STALE_AFTER_S).then(|| duration(age as f64)),
        "jobs": jobs,
    })
}
