//! The closed set of steps a DAG can run, and which jobs a features, classify or predict step
//! works on.
//!
//! A leaf of the schedule: `dag` reads a DAG file's steps into these, and `steps` has one
//! function per variant that does its work.

/// The closed set of steps a DAG can run, each a call into one stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Claim the spool, then sacct and telemetry of each claimed job into the warehouse
    /// ([`jobsight_ingest::per_job`]).
    Ingest { limit: Option<usize> },
    /// Features (and windows, when configured) of the ingested jobs or of whole days
    /// ([`jobsight_features`]).
    Features { on: On },
    /// Rules, classes and thresholds ([`jobsight_rules::classify`]); the verdicts go to the predict step
    /// after it.
    Classify { on: On },
    /// The models' verdicts on the jobs the classify step before it judged, joined with the
    /// rules' evidence ([`jobsight_model::predict`]); nothing when no model is configured.
    Predict { on: On },
    /// The system-wide summaries of the last `days` days into `summaries` ([`jobsight_summary`]).
    Summarize { days: u32 },
    /// The report pages of the last `days` days: every job, the day's users, the system report
    /// ([`jobsight_report`]).
    Report { days: u32 },
    /// Folds the small per-job and per-run parts of the last `days` days into one file per
    /// table and day ([`catalog::compact_day`](jobsight_warehouse::catalog::compact_day)).
    Compact { days: u32 },
    /// Emails to owners and admins ([`jobsight_notify`]).
    Notify { critical_only: bool },
    /// Retrains the configured diagnosis model when the warehouse has labels newer than it, and
    /// rotates it when the new one is not worse; refreshes the configured anomaly score's
    /// per-application baselines from the newest days ([`jobsight_model::retrain`]).
    Retrain,
    /// Removes raw telemetry and windows older than `keep_days`.
    Retain { keep_days: u32 },
    /// Rebuilds the workflow runs of Slurm arrays and dependency chains that ended in the last
    /// `days` days ([`jobsight_workflow::slurm`]).
    SlurmWorkflows { days: u32 },
    /// Scores every workflow task of the warehouse against its kind's history into
    /// `workflow_scores` ([`jobsight_workflow::detect`]); nothing when no workflow was imported.
    WorkflowScore,
    /// Lists the jobs that run now (`squeue --json`) for the running steps after it
    /// ([`jobsight_ingest::squeue`]).
    ListRunning,
    /// Carries out what the running stage decides about the listed jobs' conditions: warns
    /// owners and applies the cancel policy, every decision a row of `interventions`
    /// ([`jobsight_running::plan`], [`crate::running::act`]). A dry run only shows the plan.
    Act,
    /// Writes the "what runs now" page of the judged running jobs beside the report pages.
    RunningPage,
}

impl Step {
    pub fn name(&self) -> &'static str {
        match self {
            Step::Ingest { .. } => "ingest",
            Step::Features { .. } => "features",
            Step::Classify { .. } => "classify",
            Step::Predict { .. } => "predict",
            Step::Summarize { .. } => "summarize",
            Step::Report { .. } => "report",
            Step::Compact { .. } => "compact",
            Step::Notify { .. } => "notify",
            Step::Retrain => "retrain",
            Step::Retain { .. } => "retain",
            Step::SlurmWorkflows { .. } => "slurm-workflows",
            Step::WorkflowScore => "workflow-score",
            Step::ListRunning => "list-running",
            Step::Act => "act",
            Step::RunningPage => "running-page",
        }
    }

    /// The step with its parameters, as `dag list` shows it.
    pub fn describe(&self) -> String {
        match self {
            Step::Ingest { limit: None } => "ingest".into(),
            Step::Ingest { limit: Some(l) } => format!("ingest (at most {l} jobs)"),
            Step::Features { on } | Step::Classify { on } | Step::Predict { on } => match on {
                On::Ingested => format!("{} of the ingested jobs", self.name()),
                On::Running if matches!(self, Step::Features { .. }) => {
                    "features of the running jobs' telemetry so far".into()
                }
                On::Running => "classify the running jobs (running rules; the snapshot)".into(),
                On::Days(1) => format!("{} of yesterday", self.name()),
                On::Days(n) => format!("{} of the last {n} days", self.name()),
            },
            Step::Summarize { days: 1 } => "summarize yesterday (usage, efficiency, waste)".into(),
            Step::Summarize { days } => {
                format!("summarize the last {days} days (usage, efficiency, waste)")
            }
            Step::Report { days: 1 } => "report pages of yesterday's jobs, users and system".into(),
            Step::Report { days } => format!("report pages of the last {days} days"),
            Step::Compact { days: 1 } => "compact yesterday's small parts into day files".into(),
            Step::Compact { days } => {
                format!("compact the small parts of the last {days} days into day files")
            }
            Step::Notify {
                critical_only: true,
            } => "notify (critical findings only)".into(),
            Step::Notify { .. } => "notify (digests and critical findings)".into(),
            Step::Retrain => {
                "retrain the diagnosis on new labels; refresh the anomaly score's baselines".into()
            }
            Step::Retain { keep_days } => {
                format!("retain (telemetry and windows of the last {keep_days} days)")
            }
            Step::SlurmWorkflows { days: 1 } => {
                "yesterday's Slurm arrays and dependency chains as workflow runs".into()
            }
            Step::SlurmWorkflows { days } => {
                format!(
                    "the Slurm arrays and dependency chains of the last {days} days as workflow runs"
                )
            }
            Step::WorkflowScore => "score the workflow runs' tasks (workflow_scores)".into(),
            Step::ListRunning => "list the running jobs (squeue)".into(),
            Step::Act => "warn the owners, apply the cancel policy (interventions)".into(),
            Step::RunningPage => "write the \"what runs now\" page (running.html)".into(),
        }
    }
}

impl Step {
    /// Whether the step can run dry (`jobsight dag run --dry-run`): read and decide, but write,
    /// send and cancel nothing. The running DAG's steps can; the others write as they work.
    pub fn runs_dry(&self) -> bool {
        matches!(
            self,
            Step::ListRunning
                | Step::Features { on: On::Running }
                | Step::Classify { on: On::Running }
                | Step::Act
                | Step::RunningPage
        )
    }
}

/// Which jobs a features, classify or predict step works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On {
    /// The jobs the same run's ingest step finished.
    Ingested,
    /// Whole UTC days: this many before the run's scheduled day (or a backfill's range).
    Days(u32),
    /// The jobs the same run's list-running step listed, on their telemetry so far.
    Running,
}
