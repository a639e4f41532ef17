//! `[running]`: how the running DAG lists and judges running jobs, whether it warns their
//! owners, and the optional cancel policy (`[running.cancel]`), off by default.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use jobsight_base::options::{Invalid, invalid, within};

/// `[running]` as written: every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// The `squeue` program (default: `squeue` on the PATH).
    pub squeue: Option<PathBuf>,
    pub scancel: Option<PathBuf>,
    pub scontrol: Option<PathBuf>,
    /// Seconds a Slurm command may take.
    pub timeout_s: Option<u64>,
    /// The longest span of a job's telemetry fetched for its footprint so far (rules with a
    /// dwell read their dwell), seconds.
    pub lookback_s: Option<u64>,
    /// Where the newest snapshot goes (default `<data>/.schedule/running.json`).
    pub snapshot: Option<PathBuf>,
    /// Partitions whose batch jobs are interactive sessions (Open OnDemand's, on a partition of
    /// their own). Open OnDemand submits as the user, so the partition must take nothing else
    /// (`AllowAllocNodes`, a job_submit check) for this to mean what it says.
    pub interactive_partitions: Option<Vec<String>>,
    /// Job-name prefixes that mark a batch job as interactive. None by default: any user names
    /// their own job, so a name alone would let anyone exempt a batch job from the cancel policy.
    pub interactive_names: Option<Vec<String>>,
    /// Whether owners get warnings (default true).
    pub warn: Option<bool>,
    pub cancel: Option<CancelOptions>,
}

/// `[running.cancel]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CancelOptions {
    pub enabled: Option<bool>,
    pub dry_run: Option<bool>,
    /// Running rule id -> its timing; default: `running-hung` and `running-gpu-idle`.
    pub conditions: Option<BTreeMap<String, StageOptions>>,
    pub exempt_partitions: Option<Vec<String>>,
    pub exempt_qos: Option<Vec<String>>,
    pub exempt_accounts: Option<Vec<String>>,
    pub exempt_users: Option<Vec<String>>,
    pub exempt_interactive: Option<bool>,
}

/// `[running.cancel.conditions.<rule>]`: seconds after the first warning.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageOptions {
    pub second_warning_after_s: Option<u64>,
    pub cancel_after_s: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub squeue: PathBuf,
    pub scancel: PathBuf,
    pub scontrol: PathBuf,
    pub timeout: Duration,
    pub lookback_s: u64,
    pub snapshot: PathBuf,
    pub interactive_partitions: Vec<String>,
    pub interactive_names: Vec<String>,
    pub warn: bool,
    pub cancel: CancelPolicy,
}

/// The cancel policy: per condition, warn when it has held for its dwell, warn again at
/// `second_warning_after_s` and cancel at `cancel_after_s` after that first warning, while it
/// still holds; never a job exempt by partition, QOS, account, user or (by default) for being
/// interactive.
#[derive(Debug, Clone, PartialEq)]
pub struct CancelPolicy {
    pub enabled: bool,
    /// Decide and record, do nothing else: no second warning mailed, nothing cancelled.
    pub dry_run: bool,
    pub conditions: BTreeMap<String, StageTimes>,
    pub exempt_partitions: BTreeSet<String>,
    pub exempt_qos: BTreeSet<String>,
    pub exempt_accounts: BTreeSet<String>,
    pub exempt_users: BTreeSet<String>,
    pub exempt_interactive: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StageTimes {
    pub second_warning_after_s: u64,
    pub cancel_after_s: u64,
}

/// Job Defense Shield's timing, counted from the first warning: it warns at 60 min, again at
/// 105 and cancels at 120 of zero GPU use; here the first warning comes after the dwell (an
/// hour), the second 45 min and the cancellation 60 min later.
pub const DEFAULT_STAGES: StageTimes = StageTimes {
    second_warning_after_s: 2700,
    cancel_after_s: 3600,
};

fn set(list: Option<Vec<String>>) -> BTreeSet<String> {
    list.unwrap_or_default().into_iter().collect()
}

impl Options {
    pub fn resolve(self, data: &Path) -> Result<Settings, Invalid> {
        let key = |k: &str| format!("running.{k}");
        let timeout_s = within(&key("timeout_s"), self.timeout_s, 30, 1..=600)?;
        let lookback_s = within(&key("lookback_s"), self.lookback_s, 86_400, 600..=604_800)?;
        let cancel = self.cancel.unwrap_or_default();
        let conditions = match cancel.conditions {
            None => ["running-hung", "running-gpu-idle"]
                .into_iter()
                .map(|r| (r.to_string(), DEFAULT_STAGES))
                .collect(),
            Some(map) => {
                let mut out = BTreeMap::new();
                for (rule, times) in map {
                    let at = |k: &str| format!("running.cancel.conditions.{rule}.{k}");
                    let second = within(
                        &at("second_warning_after_s"),
                        times.second_warning_after_s,
                        DEFAULT_STAGES.second_warning_after_s,
                        0..=30 * 86_400,
                    )?;
                    let cancel_after = within(
                        &at("cancel_after_s"),
                        times.cancel_after_s,
                        DEFAULT_STAGES.cancel_after_s,
                        0..=30 * 86_400,
                    )?;
                    if cancel_after < second {
                        return Err(invalid(
                            &at("cancel_after_s"),
                            format!(
                                "{cancel_after} is before the second warning ({second} s): the owner must be warned twice first"
                            ),
                        ));
                    }
                    out.insert(
                        rule,
                        StageTimes {
                            second_warning_after_s: second,
                            cancel_after_s: cancel_after,
                        },
                    );
                }
                out
            }
        };
        Ok(Settings {
            squeue: self.squeue.unwrap_or_else(|| "squeue".into()),
            scancel: self.scancel.unwrap_or_else(|| "scancel".into()),
            scontrol: self.scontrol.unwrap_or_else(|| "scontrol".into()),
            timeout: Duration::from_secs(timeout_s),
            lookback_s,
            snapshot: self
                .snapshot
                .unwrap_or_else(|| data.join(".schedule").join("running.json")),
            interactive_partitions: self.interactive_partitions.unwrap_or_default(),
            interactive_names: self.interactive_names.unwrap_or_default(),
            warn: self.warn.unwrap_or(true),
            cancel: CancelPolicy {
                enabled: cancel.enabled.unwrap_or(false),
                dry_run: cancel.dry_run.unwrap_or(true),
                conditions,
                exempt_partitions: set(cancel.exempt_partitions),
                exempt_qos: set(cancel.exempt_qos),
                exempt_accounts: set(cancel.exempt_accounts),
                exempt_users: set(cancel.exempt_users),
                exempt_interactive: cancel.exempt_interactive.unwrap_or(true),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_off_and_dry() {
        let s = Options::default().resolve(Path::new("/d")).unwrap();
        assert!(!s.cancel.enabled && s.cancel.dry_run && s.warn);
        assert_eq!(s.snapshot, Path::new("/d/.schedule/running.json"));
        assert_eq!(s.cancel.conditions["running-hung"], DEFAULT_STAGES);
        assert!(s.cancel.exempt_interactive);
        // A job's name is its owner's to choose: no name makes a batch job interactive unless the
        // site says so.
        assert!(s.interactive_names.is_empty() && s.interactive_partitions.is_empty());
    }

    #[test]
    fn a_cancel_before_the_second_warning_is_refused() {
        let options: Options = toml::from_str(
            "[cancel.conditions.running-hung]\nsecond_warning_after_s = 600\ncancel_after_s = 300\n",
        )
        .unwrap();
        let e = options.resolve(Path::new("/d")).unwrap_err().to_string();
        assert!(
            e.contains("running.cancel.conditions.running-hung.cancel_after_s"),
            "{e}"
        );
    }
}
