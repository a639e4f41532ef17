//! The `jobsight` command line: a thin layer that parses arguments, calls the library and turns
//! its errors into messages and exit codes.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use jobsight::classify;
use jobsight::config::{Options, TelemetryKind};
use jobsight::demo::{self, DemoOptions};
use jobsight::ingest::prometheus::Prometheus;
use jobsight::ingest::{ldms, ldms_store, per_job, simulator, swf};
use jobsight::output::{self, Format};
use jobsight::query::{self, SqlFormat};
use jobsight::rules::{self, RuleBook};
use jobsight::schedule::{self, LogFormat};
use jobsight::simulate::ClusterSpec;
use jobsight::spool::Spool;

/// jobsight: automatic performance analysis of every finished Slurm job.
///
/// The Slurm epilog hook (`jobsight-epilog`) enqueues each finished job into a spool directory;
/// this program claims the jobs and analyses them. Run `jobsight demo` to see it work on a
/// simulated cluster with no setup at all.
#[derive(Debug, Parser)]
#[command(name = "jobsight", version, about, long_about)]
struct Cli {
    /// Warehouse directory: hive-partitioned Parquet, one folder per table [default: the
    /// config file's `data`, else ./jobsight-data].
    #[arg(long, env = "JOBSIGHT_DATA", global = true)]
    data: Option<PathBuf>,
    /// Configuration file (TOML; every key optional, see ops/jobsight.example.toml). Flags and
    /// their environment variables override it.
    #[arg(long, env = "JOBSIGHT_CONFIG", global = true)]
    config: Option<PathBuf>,
    /// Spool directory that the epilog hook writes into [default: the config file's `spool`,
    /// else /var/spool/jobsight].
    #[arg(long, env = "JOBSIGHT_SPOOL", global = true)]
    spool: Option<PathBuf>,
    /// Log lines of `dag run` and `daemon` on stderr: `text` for people, `json` (one object per
    /// line) for log shippers.
    #[arg(
        long,
        value_enum,
        env = "JOBSIGHT_LOG_FORMAT",
        global = true,
        default_value = "text"
    )]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Work with the spool directory that the epilog hook writes into.
    Spool {
        #[command(subcommand)]
        action: SpoolAction,
    },
    /// Run the whole pipeline on a simulated cluster's day; needs no services.
    ///
    /// The whole pipeline on a simulated cluster's day: every finished job through the real hook
    /// binary, claimed, ingested with its telemetry, features computed, models trained on a
    /// second simulated day, every job classified by the rules and the models, and the owners'
    /// email digests written to a file outbox; each stage shown with SQL. Needs no services and no
    /// configuration.
    Demo {
        /// Directory to work in (must not already hold a spool); default: a new temporary
        /// directory, kept afterwards so you can look at it.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Number of finished jobs to simulate.
        #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        jobs: u32,
        /// Number of nodes of the simulated cluster.
        #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(4..=100_000))]
        nodes: u32,
        /// Seed of the simulation: the same seed gives the same jobs.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The hook binary to run; default: `jobsight-epilog` beside this program.
        #[arg(long, env = "JOBSIGHT_EPILOG_BIN")]
        epilog_bin: Option<PathBuf>,
    },
    /// Write a simulated cluster's day (jobs, telemetry, ground truth) into the warehouse.
    ///
    /// Write a simulated day of a cluster into the warehouse: jobs, telemetry with the signatures
    /// of HPAS anomalies and of common inefficiencies, and the ground truth in `labels`. The same
    /// options give the same data; running it again replaces what it wrote.
    Simulate {
        /// Cluster name.
        #[arg(long, default_value = "sim")]
        cluster: String,
        #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(4..=100_000))]
        nodes: u32,
        /// Finished jobs in the day; default: four per node.
        #[arg(long)]
        jobs: Option<u32>,
        /// Metrics per node: 16 node-level series, then per-core utilisation (GPU series extra).
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(16..=1000))]
        metrics: u32,
        /// Seconds between samples.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
        step: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Share of jobs with an injected HPAS anomaly (0 to 0.85; 15 % more are inefficient).
        /// Raise it for a day to train or evaluate models on: the default gives only a few jobs
        /// per anomaly type.
        #[arg(long, default_value_t = 0.15, value_parser = parse_anomaly_share)]
        anomaly_share: f64,
        /// The first job id of the day; give each simulated day its own range for unique ids.
        #[arg(long, default_value_t = 1000)]
        first_job_id: u64,
        /// The simulated day (UTC).
        #[arg(long, default_value = "2026-11-20")]
        day: chrono::NaiveDate,
    },
    /// Claim finished jobs and store their accounting and telemetry (one step, by hand).
    ///
    /// The per-job ingest step: claim what the epilog hook enqueued, then for every claimed job
    /// get its final record from sacct and its nodes' telemetry over its run time from Prometheus,
    /// and write both into the warehouse. A job that is not ready (accounting not settled, last
    /// samples not scraped yet) or whose fetch fails (Prometheus down, slow, errors, garbage)
    /// stays claimed with a `.pending` note and is retried with backoff on later runs; after
    /// `ingest.give_up_after_s` (default a day) it goes to failed/ with its reason. One run at a
    /// time per spool. This is only the first step of the per-job DAG: `jobsight dag run per-job`
    /// (or the daemon) also computes the jobs' features, judges them and emails critical findings.
    Ingest {
        /// Telemetry source [default: the config file's `ingest.telemetry`, else prometheus].
        #[arg(long, value_enum)]
        telemetry: Option<TelemetryKind>,
        /// Prometheus base URL [default: the config file's `prometheus.url`, else
        /// http://127.0.0.1:9090].
        #[arg(long, env = "JOBSIGHT_PROMETHEUS_URL")]
        prometheus_url: Option<String>,
        /// The sacct program [default: the config file's `ingest.sacct`, else sacct on PATH].
        #[arg(long)]
        sacct: Option<PathBuf>,
        /// Try at most this many jobs in this run (the rest wait for the next run).
        #[arg(long)]
        limit: Option<usize>,
        /// `table` for people, `json` for scripts.
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Compute the features of the stored jobs' telemetry, one day at a time.
    ///
    /// Compute the features of the stored telemetry, one day partition at a time: per job × node
    /// × metric statistics after trimming each end of the job (count, min, max, mean, std, cv,
    /// skewness, kurtosis, 5/25/50/75/95th percentiles, sampling interval, coverage, growth slope,
    /// catastrophe, largest rise, idle share) into `features`; per job × metric figures across nodes (node cv,
    /// tacc_stats node imbalance) into `features_job`; per job coverage, whether it can be judged,
    /// CPU duty-cycle category and efficiency figures into `job_summary`; with `--windows`, the
    /// statistics over sliding windows into `windows`. Running it again replaces a day's features.
    Features {
        /// Only this day (UTC, the jobs' end day); default: every day that has jobs.
        #[arg(long)]
        day: Option<chrono::NaiveDate>,
        /// Seconds left out at each end of a job (start-up, tear-down); jobs shorter than twice
        /// this keep all their samples. Default: features.trim_s of the configuration (60).
        #[arg(long)]
        trim_s: Option<u64>,
        /// Bin width in seconds that lines the nodes' samples up for the node imbalance figure.
        /// Default: features.bin_s (60).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        bin_s: Option<u64>,
        /// CPUs per node, for CPU efficiency. Default: features.cores_per_node (unset: no CPU
        /// efficiency).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        cores_per_node: Option<u32>,
        /// Also write the `windows` table for the models: the statistics over sliding windows,
        /// WIDTH or WIDTH:STRIDE in seconds (e.g. 60:15). Default: features.windows (none).
        #[arg(long)]
        windows: Option<jobsight::features::WindowSpec>,
    },
    /// Apply the rule book (and the models) to the stored jobs, one day at a time.
    ///
    /// Apply the rule book to the stored jobs, one day partition at a time: the thresholds block
    /// (each main characteristic low / average / high) into `thresholds`, the job classes into
    /// `classes`, and one row per triggered rule into `findings` (group, severity, node and time
    /// window where it has one, evidence, and what to do). Jobs without enough telemetry get only
    /// the rules that need none. Running it again replaces a day's rows. Needs `jobsight features`
    /// first for the telemetry rules.
    Classify {
        /// Only this day (UTC, the jobs' end day); default: every day that has jobs.
        #[arg(long)]
        day: Option<chrono::NaiveDate>,
        /// Site rule directory layered over the built-in rules. Default: rules.dir.
        #[arg(long, env = "JOBSIGHT_RULES_DIR")]
        rules_dir: Option<PathBuf>,
        /// CPUs per node, for `job.cores_per_node` and whether a job holds whole nodes. Default:
        /// features.cores_per_node.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        cores_per_node: Option<u32>,
        /// A diagnosis model: with it (or --anomaly-model), one verdict per job goes into
        /// `predictions`, the models' and the rules' combined. Needs the `windows` table
        /// (`jobsight features --windows 60:15`). Default: model.diagnosis.
        #[arg(long, env = "JOBSIGHT_MODEL")]
        model: Option<PathBuf>,
        /// An anomaly-score model (`model train --kind unsupervised`). Default: model.unsupervised.
        #[arg(long, env = "JOBSIGHT_ANOMALY_MODEL")]
        anomaly_model: Option<PathBuf>,
    },
    /// Email job owners what was found about their jobs, and admins what needs them.
    ///
    /// Email job owners what was found about their jobs, and admins what needs them. Each user
    /// gets one digest per period (notify.period: daily or weekly) with every finding not yet
    /// reported, most important first, with the job's numbers and what to do; critical findings
    /// can go at once (notify.critical = "immediate"). Anti-spam as in Princeton's Job Defense
    /// Shield: the same kind of finding at most every notify.min_days_between days per user,
    /// digests on workdays only (notify.holidays_file), no short jobs, no jobs without enough
    /// telemetry, opt-outs, a cap per user and day. Messages go through an outbox: `.eml` files
    /// (notify.delivery = "file", the default) or SMTP, retried with backoff while the server is
    /// down, never sent twice; the ledger is the `notifications` table. Run it with
    /// --critical-only from the per-job step and without it once a period (nightly).
    Notify {
        /// The time of the run (RFC 3339), which decides the period, the workday and the
        /// lookback; default: now.
        #[arg(long, env = "JOBSIGHT_NOW")]
        now: Option<chrono::DateTime<chrono::Utc>>,
        /// Only the immediate emails about critical findings; no digests.
        #[arg(long)]
        critical_only: bool,
        /// Plan and render, print the plan and the first message's text, change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Send every message to notify.admins only and record nothing in the ledger.
        #[arg(long)]
        test_mode: bool,
        /// Outbox directory [default: notify.outbox, else ./jobsight-outbox].
        #[arg(long, env = "JOBSIGHT_OUTBOX")]
        outbox: Option<PathBuf>,
        /// Put a message from the outbox's in-doubt/ or failed/ back in the queue and deliver
        /// it (after checking the mail log that it never arrived).
        #[arg(long, value_name = "KEY")]
        resend: Option<String>,
        /// Write the built-in email templates into DIR (for notify.templates) and exit.
        #[arg(long, value_name = "DIR")]
        write_templates: Option<PathBuf>,
    },
    /// Run a DAG of pipeline steps now, list the DAGs, or show whether the pipeline keeps up.
    Dag {
        #[command(subcommand)]
        action: DagAction,
    },
    /// Run every DAG on its schedule until SIGTERM or SIGINT.
    ///
    /// Run every DAG on its schedule until SIGTERM or SIGINT. The DAGs are the built-in
    /// `per-job` (every 2 minutes: claim, sacct and telemetry, features, rules and models, critical
    /// emails) and `nightly` (02:30 UTC: yesterday's features and findings as whole days, digests,
    /// the admins' report, retention), plus the site's files in schedule.dags. A run missed while
    /// the daemon was down is caught up once at start. DAG, rule and model files are read again
    /// when they change. On SIGTERM a run under way finishes its steps, then the daemon exits 0.
    /// Every run and step is logged (--log-format) and recorded in the `runs` table.
    Daemon,
    /// Check the configuration, the DAG files, the rule book and the email templates.
    ///
    /// Check the configuration, the DAG files, the rule book and the email templates (every
    /// placeholder known, every section closed) without running anything. Exit status 1 on the
    /// first problem.
    Check,
    /// Inspect, validate and backtest the rule book (rules, classes, thresholds).
    Rules {
        #[command(subcommand)]
        action: RulesAction,
    },
    /// Train, evaluate and inspect the machine-learning models.
    ///
    /// Train, evaluate and inspect the machine-learning models (diagnosis of the anomaly type; an
    /// unsupervised anomaly score). They read the `windows` table: run `jobsight features
    /// --windows 60:15` first.
    Model {
        #[command(subcommand)]
        action: ModelAction,
    },
    /// Run a SQL query over every table of the warehouse.
    ///
    /// Run a SQL query (DataFusion dialect) over every table of the warehouse: jobs, telemetry,
    /// labels, features, features_job, job_summary, windows, findings, classes, thresholds, predictions,
    /// notifications, runs. Each table has the partition column `day` ('YYYY-MM-DD', the job's end
    /// day).
    Sql {
        /// The query, e.g. "SELECT count(*) FROM jobs".
        query: String,
        #[arg(long, value_enum, default_value = "table")]
        format: SqlFormat,
    },
    /// Load historical or external data into the warehouse.
    Import {
        #[command(subcommand)]
        source: ImportSource,
    },
}

#[derive(Debug, Subcommand)]
enum DagAction {
    /// List the DAGs in effect: schedule, steps, where each comes from.
    List,
    /// Run one DAG now, as the daemon would at its scheduled time, and record it in `runs`. With
    /// --since, re-run its whole-day steps (features, classify) over stored history instead, one
    /// day at a time (after a rule change, say): nothing is ingested and no email is sent.
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
    },
    /// Show each DAG's last run and next time, the spool's backlog and the age of the oldest
    /// unprocessed job, and the last runs from the `runs` table. Exit status 1 when the
    /// pipeline is behind or its last run failed.
    Status {
        /// `table` for people, `json` for scripts.
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
}

#[derive(Debug, Subcommand)]
enum ModelAction {
    /// Train a model on every day with windows in --data and write it to --out. A diagnosis is a
    /// random forest over the windows' statistics, trained on labelled windows (a window inside
    /// exactly one anomaly interval gets its type, one overlapping none is healthy, others are left
    /// out); a fifth of the jobs is held out first for the evaluation figures and the permutation
    /// importance stored in the file. An unsupervised model learns healthy windows (or every
    /// window, when there are no labels) and flags what it cannot reconstruct.
    Train {
        #[arg(long, value_enum)]
        kind: jobsight::model::Kind,
        /// `labels` (the warehouse table, default) or a CSV file with the header
        /// job_id,anomaly,start,end[,node] (RFC 3339 times).
        #[arg(long)]
        labels_from: Option<String>,
        /// Where to write the model file.
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        options: TrainArgs,
    },
    /// Evaluate a model (--model) on the labelled windows in --data, or train and test one per fold
    /// of a by-job cross-validation (--cv K), or with one application held out (--hold-out NAME):
    /// per-class precision, recall and F1, macro F1, the confusion matrix, anomaly miss rate,
    /// false-alarm rate and unknown rate.
    Eval {
        /// A model file to evaluate.
        #[arg(long, conflicts_with_all = ["cv", "hold_out"])]
        model: Option<PathBuf>,
        /// Folds of a by-job cross-validation (the windows of one job never sit on both sides).
        #[arg(long, value_parser = clap::value_parser!(u64).range(2..=50))]
        cv: Option<u64>,
        /// Train on every other application and test on this one (jobs named NAME).
        #[arg(long, conflicts_with = "cv")]
        hold_out: Option<String>,
        /// Kind of model to cross-validate.
        #[arg(long, value_enum, default_value = "diagnosis")]
        kind: jobsight::model::Kind,
        /// `labels` (default) or a labels CSV file, as for `train`.
        #[arg(long)]
        labels_from: Option<String>,
        /// Write each fold's training and test rows (the model's features, label first) as CSV
        /// here, to run another library on exactly the same data.
        #[arg(long)]
        export: Option<PathBuf>,
        #[command(flatten)]
        options: TrainArgs,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Show a model file's header: kind, window, features, classes, training data, held-out
    /// figures and the most important features.
    Info {
        model: PathBuf,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
}

/// How models are grown (the defaults are the evaluation's).
#[derive(Debug, clap::Args)]
struct TrainArgs {
    /// Trees in the forest.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u16).range(1..))]
    trees: u16,
    /// Features kept by the ANOVA F ranking on the training windows (0: all).
    #[arg(long, default_value_t = 400)]
    max_features: usize,
    /// A window whose top class has a smaller share of the trees' votes is "unknown".
    #[arg(long, default_value_t = jobsight::model::DEFAULT_UNKNOWN_BELOW)]
    unknown_below: f64,
    /// Training windows kept per class (a seeded sample beyond it; 0: all).
    #[arg(long, default_value_t = 3000)]
    max_windows_per_class: usize,
    /// Training windows one tree learns from (a stratified sample per tree beyond it; 0: all).
    /// A tree's cost grows with the square of its rows, so this bounds training time.
    #[arg(long, default_value_t = 2000)]
    max_samples_per_tree: usize,
    /// Seed for the trees, the samples and the folds.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

impl TrainArgs {
    fn options(&self) -> anyhow::Result<jobsight::model::TrainOptions> {
        anyhow::ensure!(
            (0.0..=1.0).contains(&self.unknown_below),
            "--unknown-below must lie between 0 and 1, not {}",
            self.unknown_below
        );
        let mut o = jobsight::model::TrainOptions::default();
        o.forest.trees = self.trees;
        o.forest.max_features = self.max_features;
        o.forest.max_samples_per_tree = self.max_samples_per_tree;
        o.forest.seed = self.seed;
        o.unknown_below = self.unknown_below;
        o.max_windows_per_class = self.max_windows_per_class;
        o.seed = self.seed;
        Ok(o)
    }
}

#[derive(Debug, Subcommand)]
enum RulesAction {
    /// List the rules, classes and thresholds block in effect (built-in plus the site directory).
    List {
        /// Site rule directory. Default: rules.dir.
        #[arg(long, env = "JOBSIGHT_RULES_DIR")]
        rules_dir: Option<PathBuf>,
        /// `table` for people, `json` for scripts (every field, with the conditions and texts).
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Check a directory of rule files layered over the built-in ones: TOML syntax, unknown keys,
    /// conditions, templates and every variable name. Errors name the file and line.
    Check {
        /// The directory of *.toml rule files.
        dir: PathBuf,
    },
    /// Run the current rule book and a candidate over stored history, and show which jobs and
    /// users the candidate would flag that the current one does not, and the reverse. Writes
    /// nothing.
    Backtest {
        /// The candidate's site directory (layered over the built-in rules).
        #[arg(long)]
        candidate: PathBuf,
        /// First day (UTC, the jobs' end day) to replay.
        #[arg(long)]
        since: chrono::NaiveDate,
        /// Last day to replay; default: the newest.
        #[arg(long)]
        until: Option<chrono::NaiveDate>,
        /// The current site directory. Default: rules.dir.
        #[arg(long, env = "JOBSIGHT_RULES_DIR")]
        rules_dir: Option<PathBuf>,
        /// Changed findings listed per side in `table` format.
        #[arg(long, default_value_t = 20)]
        show: usize,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
}

#[derive(Debug, Subcommand)]
enum ImportSource {
    /// A job log in the Standard Workload Format (Parallel Workloads Archive) into `jobs`.
    /// Re-importing the same file replaces what it imported before.
    Swf {
        file: PathBuf,
        /// Cluster name to record for these jobs.
        #[arg(long)]
        cluster: String,
    },
    /// A directory of LDMS CSV store runs (each directory with a data/ folder is one job on its
    /// producer node) into `telemetry` and `jobs`, with ground truth into `labels`.
    LdmsRuns {
        dir: PathBuf,
        /// Labels file: job_id,run_dir,app,mode,anomaly,start_s,end_s,params.
        #[arg(long)]
        labels: Option<PathBuf>,
        /// Cluster name to record for these jobs.
        #[arg(long, default_value = "ldms")]
        cluster: String,
    },
    /// A production LDMS CSV store (node-level streams, one file per sampler, rows of all nodes
    /// in time order) into `telemetry`: each sample goes to every job of the warehouse's `jobs`
    /// table that ran on its node at its time (a sorted merge per node). Import the jobs first
    /// (`jobsight ingest`, or `import swf`). Importing a file again replaces what it imported.
    LdmsStore {
        /// Store files, or directories to import every file below.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Only jobs of this cluster.
        #[arg(long)]
        cluster: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum SpoolAction {
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
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Show how many records are in each state and the oldest one waiting.
    Status {
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
}

fn parse_octal(s: &str) -> Result<u32, String> {
    u32::from_str_radix(s, 8)
        .ok()
        .filter(|m| *m <= 0o7777)
        .ok_or_else(|| format!("{s:?} is not an octal mode such as 2770"))
}

fn parse_anomaly_share(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|share| (0.0..=jobsight::simulate::MAX_ANOMALY_SHARE).contains(share))
        .ok_or_else(|| {
            format!(
                "{s:?} is not a share between 0 and {} (e.g. 0.5)",
                jobsight::simulate::MAX_ANOMALY_SHARE
            )
        })
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    let (mut options, config_path) = Options::load(cli.config.as_deref())?;
    if let Some(data) = &cli.data {
        options.data = Some(data.clone());
    }
    options.spool = cli.spool.clone().or(options.spool);
    if let Command::Ingest {
        telemetry,
        prometheus_url,
        sacct,
        ..
    } = &cli.command
    {
        let ingest = options.ingest.get_or_insert_with(Default::default);
        ingest.telemetry = telemetry.or(ingest.telemetry);
        ingest.sacct = sacct.clone().or(ingest.sacct.take());
        let prometheus = options.prometheus.get_or_insert_with(Default::default);
        prometheus.url = prometheus_url.clone().or(prometheus.url.take());
    }
    let settings = options.resolve(&config_path)?;
    let data = settings.data.clone();
    match cli.command {
        Command::Spool { action } => {
            let spool = settings.spool.clone();
            match action {
                SpoolAction::Init { mode } => {
                    let spool = Spool::init(&spool, mode)?;
                    writeln!(stdout, "spool ready at {}", spool.root().display())?;
                }
                SpoolAction::Claim { limit, format } => {
                    let spool = Spool::open(&spool)?;
                    let report = spool.claim(limit)?;
                    stdout.write_all(output::render_claimed(&report, format).as_bytes())?;
                    let mut stderr = std::io::stderr().lock();
                    stderr.write_all(output::render_set_aside(&report).as_bytes())?;
                    writeln!(stderr, "{}", output::claim_summary(&report))?;
                }
                SpoolAction::Status { format } => {
                    let spool = Spool::open(&spool)?;
                    let status = spool.status(jobsight::now())?;
                    stdout.write_all(output::render_status(&status, format).as_bytes())?;
                }
            }
        }
        Command::Ingest { limit, format, .. } => {
            let spool = Spool::open(&settings.spool)?;
            let prometheus = match settings.ingest.telemetry {
                TelemetryKind::Prometheus => Some(Prometheus::new(settings.prometheus.clone())),
                TelemetryKind::None => None,
            };
            let source = prometheus
                .as_ref()
                .map(|p| p as &dyn per_job::TelemetrySource);
            let report = per_job::run(
                &spool,
                &data,
                &settings.ingest,
                source,
                limit,
                jobsight::now(),
                |i, n| progress_line(&format!("ingesting: record {i} of {n}")),
            )?;
            progress_line("");
            stdout.write_all(output::render_ingest(&report, format).as_bytes())?;
            let mut stderr = std::io::stderr().lock();
            stderr.write_all(output::render_set_aside(&report.claim).as_bytes())?;
            writeln!(stderr, "{}", output::ingest_summary(&report, &data))?;
        }
        Command::Dag { action } => {
            let dags = schedule::dag::load_all(settings.schedule.dags.as_deref())?;
            match action {
                DagAction::List => {
                    for dag in &dags {
                        writeln!(
                            stdout,
                            "{} ({} steps{}): {}\n  schedule {:?} (UTC), catch_up {}, retries {} after {} s; from {}",
                            dag.name,
                            dag.steps.len(),
                            if dag.enabled { "" } else { ", PAUSED" },
                            dag.description,
                            dag.cron,
                            match dag.catch_up {
                                schedule::CatchUp::Once => "once",
                                schedule::CatchUp::Skip => "skip",
                            },
                            dag.retries,
                            dag.retry_after.as_secs(),
                            dag.source
                        )?;
                        for (i, step) in dag.steps.iter().enumerate() {
                            writeln!(stdout, "  {}. {}", i + 1, step.describe())?;
                        }
                    }
                }
                DagAction::Run {
                    name,
                    since,
                    until,
                    now,
                } => {
                    let dag = schedule::dag::find(&dags, &name)?;
                    let clock = now.map_or(schedule::Clock::System, schedule::Clock::Fixed);
                    let ctx = schedule::Context::build(settings.clone(), clock)?;
                    let log = schedule::Log::stderr(cli.log_format);
                    let stop = schedule::daemon::stop_on_signals()?;
                    let reports = match since {
                        Some(since) => {
                            let until = until.unwrap_or_else(|| {
                                clock.now().date_naive().pred_opt().unwrap_or(since)
                            });
                            anyhow::ensure!(
                                since <= until,
                                "--since {since} is after --until {until}"
                            );
                            schedule::backfill(&ctx, dag, since, until, &log, &stop)?
                        }
                        None => {
                            let request = schedule::RunRequest {
                                scheduled_for: clock.now(),
                                trigger: schedule::Trigger::Manual,
                                days: None,
                            };
                            vec![schedule::run_dag(&ctx, dag, &request, &log, &stop)?]
                        }
                    };
                    stdout.write_all(output::render_runs(&reports).as_bytes())?;
                    if reports
                        .iter()
                        .any(|r| r.outcome == schedule::StepOutcome::Failed)
                    {
                        anyhow::bail!("DAG {name}: a step failed (see above and the runs table)");
                    }
                }
                DagAction::Status { format } => {
                    let status = schedule::status::status(&settings, &dags, jobsight::now());
                    match format {
                        Format::Table => {
                            stdout.write_all(schedule::status::render(&status).as_bytes())?;
                            let runtime = tokio::runtime::Runtime::new()
                                .context("cannot start the query runtime")?;
                            let recent = runtime.block_on(query::run(
                                &data,
                                "SELECT dag, trigger, scheduled_for, started, ended, outcome, jobs, error FROM runs WHERE step = '' ORDER BY started DESC LIMIT 10",
                            ))?;
                            writeln!(stdout, "\nlast runs (the runs table):")?;
                            stdout
                                .write_all(query::render(&recent, SqlFormat::Table)?.as_bytes())?;
                        }
                        Format::Json => {
                            writeln!(stdout, "{}", serde_json::to_string_pretty(&status)?)?;
                        }
                    }
                    if !status.healthy() {
                        stdout.flush()?;
                        std::process::exit(1);
                    }
                }
            }
        }
        Command::Daemon => {
            let log = schedule::Log::stderr(cli.log_format);
            let stop = schedule::daemon::stop_on_signals()?;
            schedule::daemon::run(&settings, settings.schedule.dags.as_deref(), &log, &stop)?;
        }
        Command::Demo {
            dir,
            jobs,
            nodes,
            seed,
            epilog_bin,
        } => {
            let options = DemoOptions {
                dir,
                spec: ClusterSpec {
                    jobs: jobs as usize,
                    nodes: nodes as usize,
                    ..ClusterSpec::default()
                },
                seed,
                epilog_bin: epilog_bin.unwrap_or_else(demo::default_epilog_bin),
            };
            demo::run(&options, &mut stdout).context("demo failed")?;
        }
        Command::Simulate {
            cluster,
            nodes,
            jobs,
            metrics,
            step,
            seed,
            anomaly_share,
            first_job_id,
            day,
        } => {
            let spec = ClusterSpec {
                first_job_id,
                name: cluster.clone(),
                nodes: nodes as usize,
                jobs: jobs.map_or(4 * nodes as usize, |j| j as usize),
                node_epilog_share: 0.0,
                anomaly_share,
                ..ClusterSpec::default()
            };
            let started = std::time::Instant::now();
            let day_jobs = jobsight::simulate::simulate_day(&spec, seed);
            let refs: Vec<_> = day_jobs.iter().collect();
            let part = format!(
                "sim-{cluster}-s{seed}-n{nodes}-j{}-m{metrics}-t{step}",
                spec.jobs
            );
            let mut shown = 0;
            let written = simulator::write_jobs(
                &data,
                &refs,
                &spec,
                day,
                step,
                metrics as usize,
                seed,
                &part,
                |i, n| {
                    if i * 100 / n > shown {
                        shown = i * 100 / n;
                        progress_line(&format!("simulating: {shown:3}% of {n} jobs"));
                    }
                },
            )?;
            progress_line("");
            let seconds = started.elapsed().as_secs_f64();
            writeln!(
                stdout,
                "wrote {} jobs and {} telemetry rows ({} files) of cluster {cluster} into {} in {seconds:.1} s ({:.2} M rows/s); peak memory {} MiB",
                written.jobs,
                written.telemetry_rows,
                written.files,
                data.display(),
                written.telemetry_rows as f64 / seconds / 1e6,
                jobsight::peak_memory_mib().map_or("?".into(), |m| m.to_string())
            )?;
        }
        Command::Features {
            day,
            trim_s,
            bin_s,
            cores_per_node,
            windows,
        } => {
            let mut features = settings.features.clone();
            features.windows = windows.or(features.windows);
            features.trim_s = trim_s.unwrap_or(features.trim_s);
            features.bin_s = bin_s.unwrap_or(features.bin_s);
            features.cores_per_node = cores_per_node.or(features.cores_per_node);
            let days = match day {
                Some(day) => vec![day],
                None => jobsight::features::days_with_jobs(&data),
            };
            let started = std::time::Instant::now();
            let mut total = jobsight::features::Computed::default();
            for day in days {
                let done = jobsight::features::compute_day(&data, day, &features, |done, all| {
                    progress_line(&format!("features of {day}: row group {done}/{all}"));
                })
                .with_context(|| format!("computing the features of {day}"))?;
                total.add(&done);
            }
            progress_line("");
            writeln!(
                stdout,
                "features of {} job(s) on {} day(s): {} rows (job x node x metric), {} across nodes (job x metric){}; {} job(s) cannot be judged for lack of telemetry (see job_summary); {} sample(s) of jobs not in `jobs` left out; into {} in {:.1} s; peak memory {} MiB",
                total.jobs,
                total.days,
                total.rows,
                total.job_rows,
                if total.window_rows > 0 {
                    format!(
                        ", {} windows (job x node x metric x window)",
                        total.window_rows
                    )
                } else {
                    String::new()
                },
                total.not_judgeable,
                total.unattributed,
                data.display(),
                started.elapsed().as_secs_f64(),
                jobsight::peak_memory_mib().map_or("?".into(), |m| m.to_string())
            )?;
        }
        Command::Classify {
            day,
            rules_dir,
            cores_per_node,
            model,
            anomaly_model,
        } => {
            let models = load_models(
                model.or(settings.model.diagnosis.clone()).as_deref(),
                anomaly_model
                    .or(settings.model.unsupervised.clone())
                    .as_deref(),
                settings.model.min_windows,
            )?;
            let mut rules_settings = settings.rules.clone();
            rules_settings.dir = rules_dir.or(rules_settings.dir);
            rules_settings.cores_per_node = cores_per_node.or(rules_settings.cores_per_node);
            let book = RuleBook::load(rules_settings.dir.as_deref())?;
            let days = match day {
                Some(day) => vec![day],
                None => jobsight::features::days_with_jobs(&data),
            };
            let started = std::time::Instant::now();
            let mut total = classify::Classified::default();
            let mut verdicts_by_kind: std::collections::BTreeMap<String, usize> =
                Default::default();
            let n = days.len();
            for (i, day) in days.into_iter().enumerate() {
                progress_line(&format!("classifying {day} ({}/{n})", i + 1));
                let (verdicts, predictions) =
                    classify::classify_day(&data, day, &book, &rules_settings, models.as_ref())
                        .with_context(|| format!("classifying the jobs of {day}"))?;
                total.days += 1;
                total.add(&verdicts);
                for p in predictions {
                    *verdicts_by_kind.entry(p.verdict).or_default() += 1;
                }
            }
            progress_line("");
            writeln!(
                stdout,
                "classified {} job(s) on {} day(s) with rule set {} ({} rules, {} classes): {}, {} class membership(s); {} job(s) without enough telemetry got only the rules that need none; into {} in {:.1} s",
                total.jobs,
                total.days,
                book.version,
                book.rules.len(),
                book.classes.len(),
                total.findings_by_severity(),
                total.classes,
                total.not_judgeable,
                data.display(),
                started.elapsed().as_secs_f64(),
            )?;
            if let Some(models) = &models {
                let per: Vec<String> = verdicts_by_kind
                    .iter()
                    .map(|(v, n)| format!("{v} {n}"))
                    .collect();
                writeln!(
                    stdout,
                    "predictions with {}: {}",
                    models.version(),
                    if per.is_empty() {
                        "no jobs".to_string()
                    } else {
                        per.join(", ")
                    }
                )?;
            }
        }
        Command::Model { action } => run_model(action, &data, &mut stdout)?,
        Command::Rules { action } => match action {
            RulesAction::List { rules_dir, format } => {
                let book = RuleBook::load(rules_dir.or(settings.rules.dir.clone()).as_deref())?;
                let text = match format {
                    Format::Table => rules::listing::text(&book),
                    Format::Json => {
                        serde_json::to_string_pretty(&rules::listing::json(&book))? + "\n"
                    }
                };
                stdout.write_all(text.as_bytes())?;
            }
            RulesAction::Check { dir } => {
                anyhow::ensure!(dir.is_dir(), "{} is not a directory", dir.display());
                let book = RuleBook::load(Some(&dir))?;
                writeln!(
                    stdout,
                    "{}: ok; with the built-in files: {} rules, {} classes, {} characteristics, {} metrics (rule set {})",
                    dir.display(),
                    book.rules.len(),
                    book.classes.len(),
                    book.characteristics.len(),
                    book.metrics.len(),
                    book.version
                )?;
            }
            RulesAction::Backtest {
                candidate,
                since,
                until,
                rules_dir,
                show,
                format,
            } => {
                anyhow::ensure!(
                    candidate.is_dir(),
                    "{} is not a directory",
                    candidate.display()
                );
                let current = RuleBook::load(rules_dir.or(settings.rules.dir.clone()).as_deref())?;
                let candidate_book = RuleBook::load(Some(&candidate))
                    .with_context(|| format!("the candidate {}", candidate.display()))?;
                let days: Vec<chrono::NaiveDate> = jobsight::features::days_with_jobs(&data)
                    .into_iter()
                    .filter(|d| *d >= since && until.is_none_or(|u| *d <= u))
                    .collect();
                anyhow::ensure!(
                    !days.is_empty(),
                    "no days with jobs from {since} in {}",
                    data.display()
                );
                let result = classify::backtest::run(
                    &data,
                    &days,
                    &current,
                    &candidate_book,
                    &settings.rules,
                    |day, i, n| progress_line(&format!("backtest: {day} ({i}/{n})")),
                )?;
                progress_line("");
                let text = match format {
                    Format::Table => classify::backtest::render_text(&result, show),
                    Format::Json => serde_json::to_string_pretty(&result)? + "\n",
                };
                stdout.write_all(text.as_bytes())?;
            }
        },
        Command::Notify {
            now,
            critical_only,
            dry_run,
            test_mode,
            outbox,
            resend,
            write_templates,
        } => {
            if let Some(dir) = write_templates {
                for path in jobsight::notify::render::write_builtin(&dir)
                    .with_context(|| format!("writing the templates into {}", dir.display()))?
                {
                    writeln!(stdout, "wrote {}", path.display())?;
                }
                writeln!(
                    stdout,
                    "set notify.templates = {:?} and check with `jobsight check`",
                    dir.display().to_string()
                )?;
                return Ok(());
            }
            let mut notify = settings.notify.clone();
            notify.outbox = outbox.unwrap_or(notify.outbox);
            notify.test_mode |= test_mode;
            let now = now.unwrap_or_else(chrono::Utc::now);
            if let Some(key) = resend {
                jobsight::notify::outbox::Outbox::open(&notify.outbox)?.resend(&data, &key, now)?;
                writeln!(stdout, "{key} is back in the queue")?;
            }
            let run = jobsight::notify::RunOptions {
                now,
                critical_only,
                dry_run,
            };
            let report = jobsight::notify::run(&data, &notify, &run, &mut |step| {
                progress_line(step);
            })
            .context("notify failed")?;
            progress_line("");
            writeln!(
                stdout,
                "notify at {} ({}{}):",
                now.format("%Y-%m-%d %H:%M:%S UTC"),
                if critical_only {
                    "critical only"
                } else {
                    "digests and critical"
                },
                if notify.test_mode {
                    ", TEST MODE: to admins only, nothing recorded"
                } else {
                    ""
                }
            )?;
            stdout.write_all(output::render_notify(&report, dry_run).as_bytes())?;
            if dry_run && let Some(first) = report.prepared.first() {
                writeln!(
                    stdout,
                    "\nfirst message, {}:\nSubject: {}\n\n{}",
                    first.planned.key, first.rendered.subject, first.rendered.text
                )?;
            }
        }
        Command::Check => {
            writeln!(stdout, "configuration {}: ok", config_path.display())?;
            let dags = schedule::dag::load_all(settings.schedule.dags.as_deref())?;
            writeln!(
                stdout,
                "dags: {}",
                dags.iter()
                    .map(|d| format!("{} ({} steps, {:?})", d.name, d.steps.len(), d.cron))
                    .collect::<Vec<_>>()
                    .join(", ")
            )?;
            let book = RuleBook::load(settings.rules.dir.as_deref())?;
            writeln!(
                stdout,
                "rules: {} rules, {} classes, version {}",
                book.rules.len(),
                book.classes.len(),
                book.version
            )?;
            writeln!(stdout, "{}", jobsight::notify::check(&settings.notify)?)?;
        }
        Command::Sql { query, format } => {
            let runtime =
                tokio::runtime::Runtime::new().context("cannot start the query runtime")?;
            let batches = runtime.block_on(query::run(&data, &query))?;
            stdout.write_all(query::render(&batches, format)?.as_bytes())?;
        }
        Command::Import { source } => match source {
            ImportSource::Swf { file, cluster } => {
                let done = swf::import(&data, &file, &cluster)?;
                report_skipped(&done.log.skipped);
                writeln!(
                    stdout,
                    "imported {} jobs of cluster {cluster} from {} into {} day partitions of {}; skipped {} line(s)",
                    done.log.jobs.len(),
                    file.display(),
                    done.days,
                    data.join("jobs").display(),
                    done.log.skipped.len()
                )?;
            }
            ImportSource::LdmsRuns {
                dir,
                labels,
                cluster,
            } => {
                let done =
                    ldms::import_runs(&data, &dir, labels.as_deref(), &cluster, |i, n, job| {
                        progress_line(&format!("importing run {i}/{n}: {job}"));
                    })?;
                progress_line("");
                report_skipped(&done.skipped);
                writeln!(
                    stdout,
                    "imported {} runs: {} samples -> {} telemetry rows, {} labels, into {}; skipped {} row(s); peak memory {} MiB",
                    done.runs,
                    done.samples,
                    done.telemetry_rows,
                    done.labels,
                    data.display(),
                    done.skipped.len(),
                    jobsight::peak_memory_mib().map_or("?".into(), |m| m.to_string())
                )?;
            }
            ImportSource::LdmsStore { paths, cluster } => {
                let runtime =
                    tokio::runtime::Runtime::new().context("cannot start the query runtime")?;
                let (windows, problems) =
                    runtime.block_on(ldms_store::job_windows(&data, cluster.as_deref()))?;
                for p in &problems {
                    eprintln!("jobs: {p}");
                }
                anyhow::ensure!(
                    !windows.is_empty(),
                    "no jobs with nodes and run times in {}: import the jobs first (jobsight ingest, or jobsight import swf)",
                    data.join("jobs").display()
                );
                let files = ldms_store::store_files(&paths);
                anyhow::ensure!(!files.is_empty(), "no store files found in {paths:?}");
                let done = ldms_store::import_store(&data, &files, &windows, |i, n, path| {
                    progress_line(&format!("importing store file {i}/{n}: {}", path.display()));
                })?;
                progress_line("");
                report_skipped(&done.skipped);
                writeln!(
                    stdout,
                    "imported {} store file(s): {} samples -> {} telemetry rows for {} job-node windows; {} samples of no known job; skipped {} row(s); peak memory {} MiB",
                    done.files,
                    done.samples,
                    done.rows,
                    windows.len(),
                    done.samples_without_job,
                    done.skipped.len(),
                    jobsight::peak_memory_mib().map_or("?".into(), |m| m.to_string())
                )?;
            }
        },
    }
    Ok(())
}

/// A progress line on stderr, rewritten in place, only when stderr is a terminal: a log file
/// gets no carriage returns. An empty text clears it.
fn progress_line(text: &str) {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        // Pad to wipe a longer earlier line, then return to the line's start.
        eprint!("\r{text:<72.72}\r");
    }
}

/// Lists skipped input on stderr: the first 20 in full, then a count.
fn report_skipped(skipped: &[jobsight::ingest::Skipped]) {
    for s in skipped.iter().take(20) {
        eprintln!("skipped: {s}");
    }
    if skipped.len() > 20 {
        eprintln!("skipped: ... and {} more", skipped.len() - 20);
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A closed stdout (`jobsight spool claim | head`) is not an error worth a message.
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            // The chain of causes, each once: our messages often quote their cause already.
            let mut message = e.to_string();
            for cause in e.chain().skip(1) {
                let cause = cause.to_string();
                if !message.contains(&cause) {
                    message = format!("{message}: {cause}");
                }
            }
            eprintln!("jobsight: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The configured models, loaded and checked once; `None` when a site runs none.
fn load_models(
    diagnosis: Option<&std::path::Path>,
    unsupervised: Option<&std::path::Path>,
    min_windows: usize,
) -> anyhow::Result<Option<jobsight::model::predict::Models>> {
    if diagnosis.is_none() && unsupervised.is_none() {
        return Ok(None);
    }
    let mut models = jobsight::model::predict::Models::load(diagnosis, unsupervised)?;
    models.min_windows = min_windows;
    Ok(Some(models))
}

fn run_model(
    action: ModelAction,
    data: &std::path::Path,
    stdout: &mut impl Write,
) -> anyhow::Result<()> {
    use jobsight::model::{self, LabelsFrom};
    let mut progress = |phase: &str| eprintln!("{phase} ...");
    match action {
        ModelAction::Train {
            kind,
            labels_from,
            out,
            options,
        } => {
            let labels = LabelsFrom::parse(labels_from.as_deref());
            let file = model::train(
                data,
                kind,
                &labels,
                &options.options()?,
                &out,
                &mut progress,
            )?;
            let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
            writeln!(
                stdout,
                "wrote {} ({:.1} MiB)",
                out.display(),
                size as f64 / 1048576.0
            )?;
            stdout.write_all(model::render_header(&file.header).as_bytes())?;
        }
        ModelAction::Eval {
            model: path,
            cv,
            hold_out,
            kind,
            labels_from,
            export,
            options,
            format,
        } => {
            let labels = LabelsFrom::parse(labels_from.as_deref());
            let report = match path {
                Some(path) => model::evaluate_model(data, &path, &labels)?,
                None => {
                    anyhow::ensure!(
                        cv.is_some() || hold_out.is_some(),
                        "say what to evaluate: --model FILE, --cv K or --hold-out APPLICATION"
                    );
                    let cv = model::CrossValidation {
                        folds: cv.unwrap_or(5) as usize,
                        hold_out,
                        export,
                    };
                    model::cross_validate(
                        data,
                        kind,
                        &labels,
                        &options.options()?,
                        &cv,
                        &mut progress,
                    )?
                }
            };
            match format {
                Format::Table => stdout.write_all(model::render_report(&report).as_bytes())?,
                Format::Json => writeln!(stdout, "{}", serde_json::to_string_pretty(&report)?)?,
            }
        }
        ModelAction::Info {
            model: path,
            format,
        } => {
            let header = model::file::ModelFile::header(&path)?;
            match format {
                Format::Table => stdout.write_all(model::render_header(&header).as_bytes())?,
                Format::Json => writeln!(stdout, "{}", serde_json::to_string_pretty(&header)?)?,
            }
        }
    }
    Ok(())
}
