//! The arguments of the commands that run one stage by hand: `spool`, `ingest`, `features`,
//! `classify`, `notify`, `summary` and `report` (their functions are in `commands::stages`).

use crate::cli::choice_arg::choice;
use std::path::PathBuf;

use clap::Subcommand;

use crate::config::TelemetryKind;
use jobsight_render::Format;
use jobsight_warehouse::query::SqlFormat;

#[derive(Debug, Subcommand)]
pub enum SpoolAction {
    /// Create the spool directory and its subdirectories (tmp, new, cur, failed, duplicate, seen).
    Init {
        /// Permission bits of the directories, in octal. The hook's user (slurm for
        /// EpilogSlurmctld, root for Epilog) and the pipeline's user must both be able to write.
        #[arg(long, default_value = "2770", value_parser = parse_octal)]
        mode: u32,
    },
    /// Claim waiting records (new/ -> cur/) and print them, oldest first. Malformed records go to
    /// failed/ and further records of an already claimed job run to duplicate/, each with a
    /// .reason file; nothing is deleted. Safe to run from several processes at once.
    Claim {
        /// Claim at most this many records.
        #[arg(long)]
        limit: Option<usize>,
        /// `table` for people, `json` for one claimed record per line.
        #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
        format: Format,
    },
    /// Show how many records are in each state and the oldest one waiting.
    Status {
        #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
        format: Format,
    },
}

fn parse_octal(s: &str) -> Result<u32, String> {
    u32::from_str_radix(s, 8)
        .ok()
        .filter(|m| *m <= 0o7777)
        .ok_or_else(|| format!("{s:?} is not an octal mode such as 2770"))
}

/// The arguments of `jobsight ingest`.
#[derive(Debug, clap::Args)]
pub struct IngestArgs {
    /// Telemetry source [default: the config file's `ingest.telemetry`, else prometheus].
    #[arg(long, value_parser = choice::<TelemetryKind>())]
    pub telemetry: Option<TelemetryKind>,
    /// Prometheus base URL [default: the config file's `prometheus.url`, else
    /// http://127.0.0.1:9090].
    #[arg(long, env = "JOBSIGHT_PROMETHEUS_URL")]
    pub prometheus_url: Option<String>,
    /// The sacct program [default: the config file's `ingest.sacct`, else sacct on PATH].
    #[arg(long)]
    pub sacct: Option<PathBuf>,
    /// Try at most this many jobs in this run (the rest wait for the next run).
    #[arg(long)]
    pub limit: Option<usize>,
    /// `table` for people, `json` for scripts.
    #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
    pub format: Format,
}

/// The arguments of `jobsight features`.
#[derive(Debug, clap::Args)]
pub struct FeaturesArgs {
    /// Only this day (UTC, the jobs' end day); default: every day that has jobs.
    #[arg(long)]
    pub day: Option<chrono::NaiveDate>,
    /// Seconds left out at each end of a job (start-up, tear-down); jobs shorter than twice
    /// this keep all their samples. Default: features.trim_s of the configuration (60).
    #[arg(long)]
    pub trim_s: Option<u64>,
    /// Bin width in seconds that lines the nodes' samples up for the node imbalance figure.
    /// Default: features.bin_s (60).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub bin_s: Option<u64>,
    /// CPUs per node, for CPU efficiency. Default: features.cores_per_node (unset: no CPU
    /// efficiency).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub cores_per_node: Option<u32>,
    /// Also write the `windows` table for the models: the statistics over sliding windows,
    /// WIDTH or WIDTH:STRIDE in seconds (e.g. 60:15). Default: features.windows (none).
    #[arg(long)]
    pub windows: Option<jobsight_features::WindowSpec>,
    /// How the statistics are computed: `auto` runs the DataFusion plan on the Ballista
    /// cluster when the configuration has `[engine] ballista` (a backfill over history) and
    /// the single pass here otherwise, or when windows are asked for; `single-pass` always
    /// here; `plan` the DataFusion plan on the configured engine (here without Ballista). The
    /// plan computes no windows.
    #[arg(long, value_parser = choice::<jobsight_features::Method>(), default_value = "auto")]
    pub engine: jobsight_features::Method,
}

/// The arguments of `jobsight classify`.
#[derive(Debug, clap::Args)]
pub struct ClassifyArgs {
    /// Only this day (UTC, the jobs' end day); default: every day that has jobs.
    #[arg(long)]
    pub day: Option<chrono::NaiveDate>,
    /// Site rule directory layered over the built-in rules. Default: rules.dir.
    #[arg(long, env = "JOBSIGHT_RULES_DIR")]
    pub rules_dir: Option<PathBuf>,
    /// CPUs per node, for `job.cores_per_node` and whether a job holds whole nodes. Default:
    /// features.cores_per_node.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub cores_per_node: Option<u32>,
    /// A diagnosis model: with it (or --anomaly-model), one verdict per job goes into
    /// `predictions`, the models' and the rules' combined. Needs the `windows` table
    /// (`jobsight features --windows 60:15`). Default: model.diagnosis.
    #[arg(long, env = "JOBSIGHT_MODEL")]
    pub model: Option<PathBuf>,
    /// An anomaly-score model (`model train --kind unsupervised`). Beside a diagnosis model its
    /// score is recorded and the diagnosis judges; alone, it judges. Default: model.unsupervised.
    #[arg(long, env = "JOBSIGHT_ANOMALY_MODEL")]
    pub anomaly_model: Option<PathBuf>,
}

/// The arguments of `jobsight notify`.
#[derive(Debug, clap::Args)]
pub struct NotifyArgs {
    /// The time of the run (RFC 3339), which decides the period, the workday and the
    /// lookback; default: now.
    #[arg(long, env = "JOBSIGHT_NOW")]
    pub now: Option<chrono::DateTime<chrono::Utc>>,
    /// Only the immediate emails about critical findings; no digests.
    #[arg(long)]
    pub critical_only: bool,
    /// Plan and render, print the plan and the first message's text, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Send every message to notify.admins only and record nothing in the ledger.
    #[arg(long)]
    pub test_mode: bool,
    /// Outbox directory [default: notify.outbox, else ./jobsight-outbox].
    #[arg(long, env = "JOBSIGHT_OUTBOX")]
    pub outbox: Option<PathBuf>,
    /// Put a message from the outbox's in-doubt/ or failed/ back in the queue and deliver
    /// it (after checking the mail log that it never arrived).
    #[arg(long, value_name = "KEY")]
    pub resend: Option<String>,
    /// Write the built-in email templates into DIR (for notify.templates) and exit.
    #[arg(long, value_name = "DIR")]
    pub write_templates: Option<PathBuf>,
}

/// The arguments of `jobsight job`.
#[derive(Debug, clap::Args)]
pub struct JobArgs {
    /// The job's id, as Slurm gives it (`4242`, an array task's `4242_7`).
    pub job_id: String,
    /// `table` for a person, `json` (one document, plain numbers) for scripts.
    #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
    pub format: Format,
}

/// The arguments of `jobsight jobs`.
#[derive(Debug, clap::Args)]
pub struct JobsArgs {
    /// Only this user's jobs [default: every user's; your own where `[access]` shows a person
    /// only theirs].
    #[arg(long)]
    pub user: Option<String>,
    /// First UTC day of the jobs' ends [default: 6 days before --until].
    #[arg(long)]
    pub since: Option<chrono::NaiveDate>,
    /// Last UTC day of the jobs' ends [default: the last day with jobs in the warehouse].
    #[arg(long)]
    pub until: Option<chrono::NaiveDate>,
    /// At most this many jobs, the newest first.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub limit: u32,
    /// `table` for a person, `json` (one document per job, plain numbers) for scripts.
    #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
    pub format: Format,
}

/// The arguments of `jobsight running`.
#[derive(Debug, clap::Args)]
pub struct RunningArgs {
    /// Only this user's jobs [default: every user's; your own where `[access]` shows a person
    /// only theirs].
    #[arg(long)]
    pub user: Option<String>,
    /// Only jobs with a condition that holds.
    #[arg(long)]
    pub flagged: bool,
    /// `table` for a person, `json` (one document per job) for scripts.
    #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
    pub format: Format,
}

/// The arguments of `jobsight summary`.
#[derive(Debug, clap::Args)]
pub struct SummaryArgs {
    /// First UTC day of jobs' ends [default: by --period, the last 14 days, the last 8 weeks
    /// from a Monday or the last 12 months from a 1st, up to --to].
    #[arg(long)]
    pub from: Option<chrono::NaiveDate>,
    /// Last UTC day of jobs' ends [default: the last day with jobs in the warehouse].
    #[arg(long)]
    pub to: Option<chrono::NaiveDate>,
    /// The period each row covers (weeks start on Monday).
    #[arg(long, value_parser = choice::<jobsight_summary::Period>(), default_value = "week")]
    pub period: jobsight_summary::Period,
    /// What each row is for, within its cluster.
    #[arg(long, value_parser = choice::<jobsight_summary::Grouping>(), default_value = "cluster")]
    pub by: jobsight_summary::Grouping,
    /// `table` shows the main figures in people's units, one column per period, within 120
    /// columns; `csv` and `json` give every column of the `summaries` table.
    #[arg(long, value_parser = choice::<SqlFormat>(), default_value = "table")]
    pub format: SqlFormat,
    /// With `--format table`: the stored columns, one row per period, as wide as they are.
    #[arg(long)]
    pub wide: bool,
    /// Only the N rows of each period with the most of --sort (the top users or projects, the
    /// top wasters with --sort idle-core-hours).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub top: Option<u32>,
    /// What --top ranks by.
    #[arg(long, value_parser = choice::<jobsight_summary::Rank>(), default_value = "core-hours")]
    pub sort: jobsight_summary::Rank,
    /// Instead: the effect of the emails, measured. Each emailed user's CPU efficiency in the
    /// days before their first email and after it (--effect-days), from the notifications
    /// ledger and their jobs.
    #[arg(long)]
    pub email_effect: bool,
    /// The days before and after the first email that --email-effect compares.
    #[arg(long, default_value_t = 14, value_parser = clap::value_parser!(u32).range(1..=366))]
    pub effect_days: u32,
}

#[derive(Debug, Subcommand)]
pub enum ReportAction {
    /// One job's page (its last record when a requeue gave it several); prints the page's path.
    Job {
        /// The Slurm job id, e.g. 123456 or 123456_7.
        job_id: String,
    },
    /// One workflow run's page, with its Gantt chart (tasks coloured by phase, flagged tasks
    /// marked, the critical path drawn); prints the page's path.
    Workflow {
        /// The run's id (`jobsight sql "SELECT workflow_id FROM workflows"`).
        run: String,
    },
    /// Every page of one UTC day: its jobs, the users who had a job end that day, the system
    /// report, and the index.
    Day {
        /// The day (YYYY-MM-DD) [default: the last day with jobs in the warehouse].
        day: Option<chrono::NaiveDate>,
    },
    /// What each job of the days is compared with on its page (its healthy run and band), stored
    /// without writing pages, as `day` stores it with them: the served pages (`serve --http`)
    /// read it back instead of finding 30 days of healthy runs per page. For days reported
    /// before jobsight stored it, or a warehouse whose pages are only served.
    References {
        /// The first day (YYYY-MM-DD) [default: the first day with jobs].
        #[arg(long)]
        from: Option<chrono::NaiveDate>,
        /// The last day (YYYY-MM-DD) [default: the last day with jobs].
        #[arg(long)]
        to: Option<chrono::NaiveDate>,
    },
}
