//! The arguments of `dag` (its function is in `commands::scheduler`; `daemon` and `check` take
//! none of their own).

use clap::Subcommand;

use crate::cli::choice_arg::choice;

use jobsight_render::Format;

#[derive(Debug, Subcommand)]
pub enum DagAction {
    /// List the DAGs in effect: schedule, steps, where each comes from.
    List,
    /// Run one DAG now, as the daemon would at its scheduled time, and record it in `runs`. With
    /// --since, re-run its whole-day steps (features, classify) over stored history instead, one
    /// day at a time (after a rule change, say): nothing is ingested and no email is sent. With
    /// --dry-run (the running DAG), show what it would do and change nothing.
    Run {
        /// The DAG's name (`jobsight dag list`).
        name: String,
        /// First day (UTC) of a backfill.
        #[arg(long)]
        since: Option<chrono::NaiveDate>,
        /// Last day of a backfill; default: yesterday.
        #[arg(long, requires = "since")]
        until: Option<chrono::NaiveDate>,
        /// The time the run stands for (RFC 3339), which decides the days of its day steps and
        /// the period of its emails; default: now.
        #[arg(long, env = "JOBSIGHT_NOW")]
        now: Option<chrono::DateTime<chrono::Utc>>,
        /// List, measure and judge the jobs as a run does, and log one line per warning or
        /// cancellation the act step would make; write no snapshot, row or page, send no email,
        /// cancel nothing, and leave the run out of `runs`. For DAGs of the running steps only.
        #[arg(long, conflicts_with = "since")]
        dry_run: bool,
    },
    /// Show each DAG's last run and next time, the spool's backlog and the age of the oldest
    /// unprocessed job, and the last runs from the `runs` table. Exit status 1 when the
    /// pipeline is behind or its last run failed.
    Status {
        /// `table` for people, `json` for scripts.
        #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
        format: Format,
    },
}
