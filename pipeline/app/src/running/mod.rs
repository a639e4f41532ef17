//! Running jobs: the `running` DAG's work (docs/running.md), composed of the stages. Every few
//! minutes it lists the jobs that run now (`squeue --json`), judges each on its telemetry so far
//! with the rule book's running rules ([`watch`]: the features and rules stages), writes the
//! snapshot that `jobsight running` and the "what runs now" page show, and carries out what the
//! running stage decides (`jobsight_running::plan`): warns owners and applies the site's
//! optional cancel policy, recording every warning and cancellation in `interventions`
//! ([`act`]). The running stage (`jobsight_running`) owns `[running]`, the snapshot, the audit
//! and the decisions.

pub mod act;
pub mod watch;

use chrono::{DateTime, Utc};

use jobsight_running::{Settings, Snapshot};

use jobsight_ingest::per_job::TelemetrySource;
use jobsight_rules::{Group, RuleBook};

/// What one run of the running step did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub snapshot: Snapshot,
    pub acted: act::Acted,
}

/// Checks that the cancel policy names running rules of the book.
pub fn check_policy(settings: &Settings, book: &RuleBook) -> Result<(), String> {
    for rule in settings.cancel.conditions.keys() {
        if !book
            .rules
            .iter()
            .any(|r| &r.id == rule && r.group == Group::Running)
        {
            return Err(format!(
                "[running.cancel.conditions] names `{rule}`, which is no rule of group \"running\" in the rule book"
            ));
        }
    }
    Ok(())
}

/// Everything one run needs: the warehouse, the stages' settings it uses, the rule book and the
/// telemetry source (the per-job DAG's).
pub struct Inputs<'a> {
    pub data: &'a std::path::Path,
    pub running: &'a Settings,
    pub features: &'a jobsight_features::Settings,
    pub rules: &'a jobsight_rules::Settings,
    pub notify: &'a jobsight_notify::Settings,
    pub book: &'a RuleBook,
    pub telemetry: Option<&'a (dyn TelemetrySource + Send + Sync)>,
}

impl std::fmt::Debug for Inputs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inputs")
            .field("data", &self.data)
            .field("rules", &self.book.version)
            .field("telemetry", &self.telemetry.map(|t| t.name()))
            .finish()
    }
}

/// One run at `now`: list, judge, write the snapshot, act.
pub fn run_once(inputs: &Inputs, now: DateTime<Utc>) -> Result<Outcome, String> {
    let running = inputs.running;
    check_policy(running, inputs.book)?;
    let listing = jobsight_ingest::squeue::list(&running.squeue, running.timeout)?;
    // A snapshot that cannot be read only loses the conditions' start times.
    let previous = Snapshot::read(&running.snapshot).unwrap_or(None);
    let judge = watch::Judge {
        book: inputs.book,
        features: inputs.features,
        rules: inputs.rules,
        telemetry: inputs.telemetry,
        running,
    };
    let snapshot = Snapshot {
        taken_at: now,
        rules_version: inputs.book.version.clone(),
        jobs: watch::judge_all(&judge, &listing.jobs, now, previous.as_ref()),
        skipped: listing.skipped,
    };
    write_snapshot(&snapshot, &running.snapshot)?;
    let history = jobsight_running::audit::read_history(inputs.data, now)?;
    let acted = act::act(
        inputs.data,
        running,
        inputs.notify,
        &snapshot,
        &history,
        now,
    )?;
    Ok(Outcome { snapshot, acted })
}

/// Writes the snapshot to `path` whole (a temporary file in its folder, then a rename), as the
/// report pages are written.
pub fn write_snapshot(snapshot: &Snapshot, path: &std::path::Path) -> Result<(), String> {
    let text = serde_json::to_string_pretty(snapshot).map_err(|e| e.to_string())?;
    jobsight_report::write_page(path, &text).map_err(|e| e.to_string())
}
