//! Running jobs: the work of the `running` DAG's steps (docs/running.md) that composes the
//! stages. Every few minutes the DAG lists the jobs that run now (`squeue --json`), measures each
//! on its telemetry so far and judges it with the rule book's running rules ([`watch`]: the
//! features and rules stages), writes the snapshot that `jobsight running` and the "what runs
//! now" page show, and carries out what the running stage decides (`jobsight_running::plan`):
//! warns owners and applies the site's optional cancel policy, recording every warning and
//! cancellation in `interventions` ([`act`]). The schedule runs these one step at a time
//! (`schedule::steps::running`); the running stage (`jobsight_running`) owns `[running]`, the
//! snapshot, the audit and the decisions.

pub mod act;
pub mod watch;

use jobsight_running::{Settings, Snapshot};

use jobsight_rules::{Group, RuleBook};

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

/// Writes the snapshot to `path` whole (a temporary file in its folder, then a rename), as the
/// report pages are written.
pub fn write_snapshot(snapshot: &Snapshot, path: &std::path::Path) -> Result<(), String> {
    let text = serde_json::to_string_pretty(snapshot).map_err(|e| e.to_string())?;
    jobsight_report::write_page(path, &text).map_err(|e| e.to_string())
}
