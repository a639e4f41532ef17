//! The command line's arguments (clap), and the overlay they put on the configuration file's
//! options before anything is resolved: a flag or its environment variable replaces the file's
//! value, and `jobsight check` validates exactly what a run would use.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::{Options, TelemetryKind};
use crate::output::Format;
use crate::query::SqlFormat;
use crate::schedule::LogFormat;

/// jobsight: automatic performance analysis of every finished Slurm job.
///
/// The Slurm epilog hook (`jobsight-epilog`) enqueues each finished job into a spool directory;
/// this program claims the jobs and analyses them. Run `jobsight demo` to see it work on a
/// simulated cluster with no setup at all.
#[derive(Debug, Parser)]
#[command(name = "jobsight", version, about, long_about)]
pub struct Cli {
    /// Warehouse directory: hive-partitioned Parquet, one folder per table [default: the
    /// config file's `data`, else ./jobsight-data].
    #[arg(long, env = "JOBSIGHT_DATA", global = true)]
    pub data: Option<PathBuf>,
    /// Configuration file (TOML; every key optional, see ops/jobsight.example.toml). Flags and
    /// their environment variables override it.
    #[arg(long, env = "JOBSIGHT_CONFIG", global = true)]
    pub config: Option<PathBuf>,
    /// Spool directory that the epilog hook writes into [default: the config file's `spool`,
    /// else /var/spool/jobsight].
    #[arg(long, env = "JOBSIGHT_SPOOL", global = true)]
    pub spool: Option<PathBuf>,
    /// Log lines of `dag run` and `daemon` on stderr: `text` for people, `json` (one object per
    /// line) for log shippers.
    #[arg(
        long,
        value_enum,
        env = "JOBSIGHT_LOG_FORMAT",
        global = true,
        default_value = "text"
    )]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
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
    Demo(DemoArgs),
    /// Write a simulated cluster's day (jobs, telemetry, ground truth) into the warehouse.
    ///
    /// Write a simulated day of a cluster into the warehouse: jobs, telemetry with the signatures
    /// of HPAS anomalies and of common inefficiencies, and the ground truth in `labels`. The same
    /// options give the same data; running it again replaces what it wrote.
    Simulate(SimulateArgs),
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
    Ingest(IngestArgs),
    /// Compute the features of the stored jobs' telemetry, one day at a time.
    ///
    /// Compute the features of the stored telemetry, one day partition at a time: per job × node
    /// × metric statistics after trimming each end of the job (count, min, max, mean, std, cv,
    /// skewness, kurtosis, 5/25/50/75/95th percentiles, sampling interval, coverage, growth slope,
    /// catastrophe, largest rise, idle share) into `features`; per job × metric figures across nodes (node cv,
    /// tacc_stats node imbalance) into `features_job`; per job coverage, whether it can be judged,
    /// CPU duty-cycle category and efficiency figures into `job_summary`; with `--windows`, the
    /// statistics over sliding windows into `windows`. Running it again replaces a day's features.
    Features(FeaturesArgs),
    /// Apply the rule book (and the models) to the stored jobs, one day at a time.
    ///
    /// Apply the rule book to the stored jobs, one day partition at a time: the thresholds block
    /// (each main characteristic low / average / high) into `thresholds`, the job classes into
    /// `classes`, and one row per triggered rule into `findings` (group, severity, node and time
    /// window where it has one, evidence, and what to do). Jobs without enough telemetry get only
    /// the rules that need none. Running it again replaces a day's rows. Needs `jobsight features`
    /// first for the telemetry rules.
    Classify(ClassifyArgs),
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
    Notify(NotifyArgs),
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
    Check {
        /// Site rule directory layered over the built-in rules, as `classify` takes it. Default:
        /// rules.dir.
        #[arg(long, env = "JOBSIGHT_RULES_DIR")]
        rules_dir: Option<PathBuf>,
    },
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
    /// Build workflow runs from Slurm arrays and chains, score their tasks, evaluate.
    ///
    /// Workflow runs imported with `jobsight import pegasus` or built from Slurm arrays and
    /// dependency chains (`jobsight workflow slurm`): each task scored against the
    /// history of its kind, pooled over the tasks of its host in its run; each run labelled by a
    /// random forest over its hosts' figures (docs/workflows.md).
    Workflow {
        #[command(subcommand)]
        action: WorkflowAction,
    },
    /// Run a SQL query over every table of the warehouse.
    ///
    /// Run a SQL query (DataFusion dialect) over every table of the warehouse: jobs, telemetry,
    /// labels, features, features_job, job_summary, windows, findings, classes, thresholds, predictions,
    /// notifications, runs, summaries. Each table has the partition column `day` ('YYYY-MM-DD', the
    /// job's end day). `jobs` also has elapsed_s, wait_s, core_hours, node_hours, gpu_hours and
    /// req_mem_gb as plain numbers (`SELECT user, sum(core_hours) FROM jobs GROUP BY user`). Read-only: one query (SELECT, WITH ... SELECT, EXPLAIN); INSERT, COPY, CREATE, DROP
    /// and SET are refused. Results stream: csv and json write every row as it comes, the table
    /// shows the first 10,000 rows with control characters escaped.
    Sql(SqlArgs),
    /// Serve every table to psql, Grafana and BI tools over PostgreSQL's protocol, read-only.
    ///
    /// Serve the warehouse over PostgreSQL's wire protocol at --pg ADDR, so that `psql`,
    /// Grafana's PostgreSQL data source and BI tools query every table `jobsight sql` sees.
    /// Clients log in with SCRAM-SHA-256 as `[serve] pg_user` (default `jobsight`) with the
    /// password in `[serve] pg_password_file` (or --password-file): its first line, at least 12
    /// characters, in a file only its owner may read. Read-only: queries, EXPLAIN, SHOW, the
    /// client's own SET, BEGIN/COMMIT and cursors are served; everything else is refused with
    /// SQLSTATE 25006. Days the scheduler writes while the server runs are seen by open
    /// connections. Prints the address it listens on, then serves until SIGINT or SIGTERM. No TLS
    /// yet: listen on localhost (the default) or a trusted network. docs/sql.md has the details.
    Serve(ServeArgs),
    /// Show system-wide usage, efficiency and waste per day, week or month.
    ///
    /// Show what the cluster's jobs used (core-, node- and GPU-hours), how well (CPU and memory
    /// efficiency weighted by core-hours, GPU utilisation weighted by GPU-hours, wall-time
    /// accuracy, queue wait) and what was wasted (idle core-, GPU- and node-hours, over-requested
    /// memory, equivalent wasted nodes, and their energy, cost and CO2 from the `[summary]`
    /// settings), per period and cluster, partition, account or user. Computed from the
    /// warehouse's tables as the nightly `summarize` step computes the `summaries` table; a site
    /// with job flow only gets the usage and job-flow figures. docs/summaries.md says how each
    /// figure is derived.
    Summary(SummaryArgs),
    /// Write report pages: one job's, or every job, user and system page of a day.
    ///
    /// Write the static HTML pages behind the emails' links into `[report] dir` (or --dir): a
    /// job's page (who, where, when, requested against used with the `#SBATCH` lines a better
    /// request would use, the verdict of rules and models and the metrics behind it, findings
    /// with what to do and the evidence, the thresholds block, classes, and telemetry charts per
    /// node against a healthy reference), each user's page (their jobs, trend, repeating
    /// findings, the emails they got) and the day's system report (efficiency and waste by
    /// partition, account and user, rules that fire most, the pipeline's health), with an index.
    /// Charts are inline SVG and links relative: the folder works offline and on any web server.
    /// The nightly DAG's `report` step writes yesterday's pages. docs/reports.md has the details.
    Report {
        #[command(subcommand)]
        action: ReportAction,
        /// The folder to write into [default: `[report] dir`, else ./jobsight-reports].
        #[arg(long, global = true, env = "JOBSIGHT_REPORT_DIR")]
        dir: Option<PathBuf>,
    },
    /// Load historical or external data into the warehouse.
    Import {
        #[command(subcommand)]
        source: ImportSource,
    },
    /// Run a Ballista scheduler or executor with jobsight's SQL functions (scale-out).
    ///
    /// Run one process of a Ballista cluster that `jobsight sql`, `jobsight summary` and
    /// `jobsight features` send their queries to when the configuration says `[engine] ballista = "df://HOST:PORT"`: one
    /// scheduler, and executors on
    /// the machines that do the work. They carry jobsight's SQL functions (`js_p95`,
    /// `js_describe`, ...) and query rules, which stock Ballista processes lack. Every executor
    /// reads the warehouse at the path the client names: mount it at the same place on every
    /// machine (a shared file system). Runs until SIGINT or SIGTERM. Needs a jobsight built with
    /// `--features ballista`. docs/ballista.md has the set-up.
    Ballista {
        #[command(subcommand)]
        role: BallistaRole,
    },
}

#[derive(Debug, Subcommand)]
pub enum BallistaRole {
    /// The scheduler: plans queries and hands their tasks to the executors.
    Scheduler {
        /// Where clients and executors reach it, HOST:PORT.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50050")]
        bind: std::net::SocketAddr,
    },
    /// An executor: runs tasks the scheduler hands it and serves their results.
    Executor {
        /// The scheduler, HOST:PORT.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50050")]
        scheduler: String,
        /// The address it listens on (and tells the scheduler and other executors).
        #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
        bind: std::net::IpAddr,
        /// Where results are fetched from (Arrow Flight).
        #[arg(long, default_value_t = 50051)]
        flight_port: u16,
        /// Where the scheduler hands it tasks (gRPC).
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Where intermediate results go between a query's stages.
        #[arg(long, value_name = "DIR", default_value = "/var/tmp/jobsight-ballista")]
        work_dir: PathBuf,
        /// Tasks at once [default: the machine's cores].
        #[arg(long)]
        tasks: Option<usize>,
    },
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
}

#[derive(Debug, Subcommand)]
pub enum DagAction {
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
pub enum WorkflowAction {
    /// Build workflow runs from the jobs: the tasks of a job array, and jobs chained with
    /// `--dependency` (from sacct's submit line, or an SWF log's preceding job), become runs of
    /// `workflows` and `workflow_tasks` (each job a task of the kind of its job name; ready when
    /// its last parent ended). Rebuilds the runs that ended in the range, reading as many days
    /// before it so that chains begun earlier are whole; the nightly DAG's `slurm-workflows` step
    /// does the same for its last days.
    Slurm {
        /// The first day (YYYY-MM-DD) [default: the first day with jobs].
        #[arg(long)]
        since: Option<chrono::NaiveDate>,
        /// The last day [default: the last day with jobs].
        #[arg(long)]
        until: Option<chrono::NaiveDate>,
    },
    /// Score every task of every workflow run in the warehouse against the history of its kind
    /// (all runs present; no labels read) into `workflow_scores`, flagging tasks whose host
    /// stands out (a z-score above 2). Run it again after an import: it replaces the scores.
    Score {
        /// A workflow model (`jobsight model train --workflows`): each task also gets the share
        /// of the task classifier's trees that call it anomalous, and each run a label.
        #[arg(long)]
        model: Option<PathBuf>,
    },
    /// Evaluate the task score and the run labels on the labelled workflow runs, with folds by
    /// run (a run's tasks never on both sides; each fold's task histories from its training runs
    /// only): the task score's ROC-AUC and average precision (a task is anomalous when its label
    /// is not `none`), per anomaly label, and the runs' accuracy, macro F1 and confusion matrix,
    /// beside the published figures.
    Eval {
        /// Folds by run.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(2..=50))]
        folds: u64,
        /// Seed for the folds and the forest.
        #[arg(long, default_value_t = 42)]
        seed: u64,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
}

#[derive(Debug, Subcommand)]
pub enum ModelAction {
    /// Train a model on every day with windows in --data and write it to --out. A diagnosis is a
    /// random forest over the windows' statistics, trained on labelled windows (a window inside
    /// exactly one anomaly interval gets its type, one overlapping none is healthy, others are left
    /// out); a fifth of the jobs is held out first for the evaluation figures and the permutation
    /// importance stored in the file. An unsupervised model learns healthy windows (or every
    /// window, when there are no labels) and flags what it cannot reconstruct.
    Train {
        #[arg(long, value_enum, required_unless_present = "workflows")]
        kind: Option<crate::model::Kind>,
        /// Train the workflow models instead: the supervised task classifier and the run-label
        /// forest of `jobsight workflow eval`, on every labelled workflow run (imported with
        /// `jobsight import pegasus`); `jobsight workflow score --model FILE` applies them.
        #[arg(long, conflicts_with_all = ["kind", "labels_from"])]
        workflows: bool,
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
    /// of a by-job cross-validation (--cv K), with one application held out (--hold-out NAME), or
    /// with each application left out in turn (--leave-out-application): per-class precision,
    /// recall and F1, macro F1, the confusion matrix, anomaly miss rate, false-alarm rate and
    /// unknown rate. An application is a job name without its run number (`lammps-42`: `lammps`).
    Eval {
        /// A model file to evaluate.
        #[arg(long, conflicts_with_all = ["cv", "hold_out", "leave_out_application"])]
        model: Option<PathBuf>,
        /// Evaluate the workflow models instead, with folds by workflow run (--cv, default 5;
        /// --seed): what `jobsight workflow eval` prints.
        #[arg(long, conflicts_with_all = ["model", "hold_out", "leave_out_application", "labels_from", "export"])]
        workflows: bool,
        /// Folds of a by-job cross-validation (the windows of one job never sit on both sides).
        #[arg(long, value_parser = clap::value_parser!(u64).range(2..=50))]
        cv: Option<u64>,
        /// Train on every other application and test on this one (jobs named NAME, or of
        /// application NAME).
        #[arg(long, conflicts_with = "cv")]
        hold_out: Option<String>,
        /// Leave each application out in turn: train on the others, judge it; the figures pooled
        /// and per application (how the models do on applications they never saw).
        #[arg(long, conflicts_with_all = ["cv", "hold_out"])]
        leave_out_application: bool,
        /// Kind of model to cross-validate.
        #[arg(long, value_enum, default_value = "diagnosis")]
        kind: crate::model::Kind,
        /// `labels` (default) or a labels CSV file, as for `train`.
        #[arg(long)]
        labels_from: Option<String>,
        /// Write each fold's training and test rows (the model's features, label first) as CSV
        /// here, to run another library on exactly the same data.
        #[arg(long)]
        export: Option<PathBuf>,
        /// Write every judged window's verdict as CSV here (fold, job, node, window, truth,
        /// verdict, top class and its share of the votes, or the anomaly score): which windows
        /// the figures got wrong, to look at them.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["model", "workflows"])]
        verdicts: Option<PathBuf>,
        /// Label this share of each fold's anomalous training jobs healthy (0–1), as history
        /// from production is: anomalies nobody noticed. The judged jobs keep their truth, so
        /// the figures show what unlabelled anomalies in training cost (see --refine).
        #[arg(long, default_value_t = 0.0, value_name = "SHARE", value_parser = share)]
        contaminate: f64,
        #[command(flatten)]
        options: TrainArgs,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Show a model file's header: kind, window, features, classes, training data, held-out
    /// figures and the most important metrics.
    Info {
        model: PathBuf,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
}

/// How models are grown (the defaults are the evaluation's).
#[derive(Debug, clap::Args)]
pub struct TrainArgs {
    /// Trees in the forest.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u16).range(1..))]
    pub trees: u16,
    /// Features kept by the ANOVA F ranking on the training windows (0: all).
    #[arg(long, default_value_t = 400)]
    pub max_features: usize,
    /// A window whose top class has a smaller share of the trees' votes is "unknown".
    #[arg(long, default_value_t = crate::model::DEFAULT_UNKNOWN_BELOW)]
    pub unknown_below: f64,
    /// Training windows kept per class (a seeded sample beyond it; 0: all).
    #[arg(long, default_value_t = 3000)]
    pub max_windows_per_class: usize,
    /// Training windows one tree learns from (a stratified sample per tree beyond it; 0: all).
    /// A tree's cost grows with the square of its rows, so this bounds training time.
    #[arg(long, default_value_t = 2000)]
    pub max_samples_per_tree: usize,
    /// Columns one tree learns from (a seeded subset per tree beyond it, random subspaces; 0:
    /// all). Decorrelates the trees; costs quality on the HPAS runs (docs/models.md).
    #[arg(long, default_value_t = 0)]
    pub columns_per_tree: usize,
    /// Seed for the trees, the samples and the folds.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// The features to train on: `absolute` (each window's statistics as measured), `relative`
    /// (each against its job's typical window on the node, the median of its first and last
    /// fifth of windows: the same across applications and input sizes) or `both`. Default:
    /// `relative` for the diagnosis, `absolute` for the anomaly score (as measured, docs/models.md).
    /// `application` (`model eval` only): `relative` plus each window against the typical window
    /// of its application's other runs; measured, not better (docs/models.md).
    #[arg(long, value_enum)]
    pub features: Option<crate::model::dataset::FeatureSet>,
    /// Train on these metrics only (comma-separated names, or prefixes ending in `*`); default:
    /// every metric with windows. The series two telemetry sources share let a model trained on
    /// one judge the other, e.g. the simulator's and LDMS's: cpu_user, cpu_system, cpu_iowait,
    /// cpu_idle, mem_used_bytes, mem_available_bytes, disk_read_bytes_per_s,
    /// disk_write_bytes_per_s (docs/models.md, "Simulated → real"). `mem_used_share` (memory in
    /// use as a share of the node's) is derived from the two memory series and only used when
    /// named here.
    #[arg(long, value_delimiter = ',', value_name = "METRICS")]
    pub metrics: Vec<String>,
    /// Rounds of setting aside training windows the model disputes before the final fit, for
    /// labels that miss anomalies (Refine's idea): the diagnosis drops windows whose label the
    /// trees that never saw them reject, the anomaly score the windows that lie far from the
    /// rest (judged within each application). 0: train on every window as labelled
    /// (docs/models.md has what refining gains and costs).
    #[arg(long, default_value_t = 0, value_name = "ROUNDS", value_parser = clap::value_parser!(u8).range(0..=5))]
    pub refine: u8,
}

/// A share between 0 and 1.
fn share(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not a share between 0 and 1"))
    }
}

impl TrainArgs {
    pub fn options(&self) -> anyhow::Result<crate::model::TrainOptions> {
        anyhow::ensure!(
            (0.0..=1.0).contains(&self.unknown_below),
            "--unknown-below must lie between 0 and 1, not {}",
            self.unknown_below
        );
        let mut o = crate::model::TrainOptions::default();
        o.forest.trees = self.trees;
        o.forest.max_features = self.max_features;
        o.forest.max_samples_per_tree = self.max_samples_per_tree;
        o.forest.columns_per_tree = self.columns_per_tree;
        o.forest.seed = self.seed;
        o.unknown_below = self.unknown_below;
        o.max_windows_per_class = self.max_windows_per_class;
        o.seed = self.seed;
        o.features = self.features;
        o.metrics = (!self.metrics.is_empty()).then(|| self.metrics.clone());
        o.refine = self.refine;
        Ok(o)
    }
}

#[derive(Debug, Subcommand)]
pub enum RulesAction {
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
pub enum ImportSource {
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
    /// Parsed Pegasus workflow traces (Flow-Bench's format: one CSV per run, one row per task)
    /// into `workflows` and `workflow_tasks`. Every *.csv below DIR is one run; its folder is the
    /// run's label, its `anomaly_type` column the tasks' labels. Columns are found by name, so
    /// any workflow's traces import; bad rows are skipped and reported with file and line.
    /// Importing a run again replaces it (docs/workflows.md).
    Pegasus {
        dir: PathBuf,
        /// The workflow's DAG as an adjacency list (JSON: task id to the ids of the tasks that
        /// wait for it), for each task's parents, children and depth.
        #[arg(long)]
        dag: Option<PathBuf>,
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
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Show how many records are in each state and the oldest one waiting.
    Status {
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
}

pub fn parse_octal(s: &str) -> Result<u32, String> {
    u32::from_str_radix(s, 8)
        .ok()
        .filter(|m| *m <= 0o7777)
        .ok_or_else(|| format!("{s:?} is not an octal mode such as 2770"))
}

pub fn parse_anomaly_share(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|share| (0.0..=crate::simulate::MAX_ANOMALY_SHARE).contains(share))
        .ok_or_else(|| {
            format!(
                "{s:?} is not a share between 0 and {} (e.g. 0.5)",
                crate::simulate::MAX_ANOMALY_SHARE
            )
        })
}

/// The arguments of `jobsight demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Directory to work in (must not already hold a spool); default: a new temporary
    /// directory, kept afterwards so you can look at it.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Number of finished jobs to simulate.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub jobs: u32,
    /// Number of nodes of the simulated cluster.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(4..=100_000))]
    pub nodes: u32,
    /// Seed of the simulation: the same seed gives the same jobs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The hook binary to run; default: `jobsight-epilog` beside this program.
    #[arg(long, env = "JOBSIGHT_EPILOG_BIN")]
    pub epilog_bin: Option<PathBuf>,
}

/// The arguments of `jobsight simulate`.
#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// Cluster name.
    #[arg(long, default_value = "sim")]
    pub cluster: String,
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(4..=100_000))]
    pub nodes: u32,
    /// Finished jobs in the day; default: four per node.
    #[arg(long)]
    pub jobs: Option<u32>,
    /// Metrics per node: 16 node-level series, then per-core utilisation (GPU series extra).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(16..=1000))]
    pub metrics: u32,
    /// Seconds between samples.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub step: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Share of jobs with an injected HPAS anomaly (0 to 0.85; 15 % more are inefficient).
    /// Raise it for a day to train or evaluate models on: the default gives only a few jobs
    /// per anomaly type.
    #[arg(long, default_value_t = 0.15, value_parser = parse_anomaly_share)]
    pub anomaly_share: f64,
    /// The first job id of the day; give each simulated day its own range for unique ids.
    /// Slurm's ids are 32-bit: the day's ids must fit below 4294967295.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=crate::simulate::MAX_JOB_ID))]
    pub first_job_id: u64,
    /// The simulated day (UTC).
    #[arg(long, default_value = "2026-11-20")]
    pub day: chrono::NaiveDate,
    /// Where jobs run: `anywhere`, a random run of neighbouring nodes whatever else runs there
    /// (jobs share nodes); `free-nodes`, as a scheduler would, each job on the nodes free
    /// earliest and waiting in the queue until they are (no node runs two jobs at once; with
    /// enough jobs, a fully busy cluster). The output says how busy the nodes were.
    #[arg(long, value_enum, default_value_t = crate::simulate::Placement::Anywhere)]
    pub placement: crate::simulate::Placement,
}

/// The arguments of `jobsight ingest`.
#[derive(Debug, clap::Args)]
pub struct IngestArgs {
    /// Telemetry source [default: the config file's `ingest.telemetry`, else prometheus].
    #[arg(long, value_enum)]
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
    #[arg(long, value_enum, default_value = "table")]
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
    pub windows: Option<crate::features::WindowSpec>,
    /// How the statistics are computed: `auto` runs the DataFusion plan on the Ballista
    /// cluster when the configuration has `[engine] ballista` (a backfill over history) and
    /// the single pass here otherwise, or when windows are asked for; `single-pass` always
    /// here; `plan` the DataFusion plan on the configured engine (here without Ballista). The
    /// plan computes no windows.
    #[arg(long, value_enum, default_value_t = crate::features::Method::Auto)]
    pub engine: crate::features::Method,
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
    /// An anomaly-score model (`model train --kind unsupervised`). Default: model.unsupervised.
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

/// The arguments of `jobsight sql`.
#[derive(Debug, clap::Args)]
pub struct SqlArgs {
    /// The query, e.g. "SELECT count(*) FROM jobs".
    pub query: String,
    #[arg(long, value_enum, default_value = "table")]
    pub format: SqlFormat,
}

/// The arguments of `jobsight serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Where to listen for PostgreSQL clients, HOST:PORT (port 0 picks a free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:5432")]
    pub pg: String,
    /// The file holding the password clients log in with [default: `[serve] pg_password_file`].
    #[arg(long, env = "JOBSIGHT_PG_PASSWORD_FILE")]
    pub password_file: Option<PathBuf>,
}

/// The arguments of `jobsight summary`.
#[derive(Debug, clap::Args)]
pub struct SummaryArgs {
    /// First UTC day of jobs' ends [default: 6 days before --to].
    #[arg(long)]
    pub from: Option<chrono::NaiveDate>,
    /// Last UTC day of jobs' ends [default: the last day with jobs in the warehouse].
    #[arg(long)]
    pub to: Option<chrono::NaiveDate>,
    /// The period each row covers (weeks start on Monday).
    #[arg(long, value_enum, default_value = "week")]
    pub period: crate::summary::Period,
    /// What each row is for, within its cluster.
    #[arg(long, value_enum, default_value = "cluster")]
    pub by: crate::summary::Grouping,
    /// `table` shows the main figures; `csv` and `json` give every column of the `summaries`
    /// table.
    #[arg(long, value_enum, default_value = "table")]
    pub format: SqlFormat,
    /// Only the N rows of each period with the most of --sort (the top users or projects, the
    /// top wasters with --sort idle-core-hours).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub top: Option<u32>,
    /// What --top ranks by.
    #[arg(long, value_enum, default_value = "core-hours")]
    pub sort: crate::summary::Rank,
    /// Instead: the effect of the emails, measured. Each emailed user's CPU efficiency in the
    /// days before their first email and after it (--effect-days), from the notifications
    /// ledger and their jobs.
    #[arg(long)]
    pub email_effect: bool,
    /// The days before and after the first email that --email-effect compares.
    #[arg(long, default_value_t = 14, value_parser = clap::value_parser!(u32).range(1..=366))]
    pub effect_days: u32,
}

impl Cli {
    /// Lays the flags (and their environment variables) over the configuration file's `options`:
    /// a flag given replaces the file's value, one not given leaves it. Done before the one
    /// resolve, so every value is checked the same way whether it came from the file or a flag.
    pub fn overlay(&self, options: &mut Options) {
        fn set<T: Clone>(slot: &mut Option<T>, flag: &Option<T>) {
            if let Some(value) = flag {
                *slot = Some(value.clone());
            }
        }
        set(&mut options.data, &self.data);
        set(&mut options.spool, &self.spool);
        let rules_dir = match &self.command {
            Command::Rules {
                action:
                    RulesAction::List { rules_dir, .. } | RulesAction::Backtest { rules_dir, .. },
            } => rules_dir.clone(),
            Command::Classify(a) => a.rules_dir.clone(),
            // What `check` validates is what a run uses: the same variable counts.
            Command::Check { rules_dir } => rules_dir.clone(),
            _ => None,
        };
        set(
            &mut options.rules.get_or_insert_with(Default::default).dir,
            &rules_dir,
        );
        match &self.command {
            Command::Ingest(a) => {
                let ingest = options.ingest.get_or_insert_with(Default::default);
                set(&mut ingest.telemetry, &a.telemetry);
                set(&mut ingest.sacct, &a.sacct);
                let prometheus = options.prometheus.get_or_insert_with(Default::default);
                set(&mut prometheus.url, &a.prometheus_url);
            }
            Command::Serve(a) => {
                let serve = options.serve.get_or_insert_with(Default::default);
                set(&mut serve.pg_password_file, &a.password_file);
            }
            Command::Features(a) => {
                let features = options.features.get_or_insert_with(Default::default);
                set(&mut features.trim_s, &a.trim_s);
                set(&mut features.bin_s, &a.bin_s);
                set(&mut features.cores_per_node, &a.cores_per_node);
                set(&mut features.windows, &a.windows.map(|w| w.to_string()));
            }
            Command::Classify(a) => {
                let features = options.features.get_or_insert_with(Default::default);
                set(&mut features.cores_per_node, &a.cores_per_node);
                let model = options.model.get_or_insert_with(Default::default);
                set(&mut model.diagnosis, &a.model);
                set(&mut model.unsupervised, &a.anomaly_model);
            }
            Command::Notify(a) => {
                let notify = options.notify.get_or_insert_with(Default::default);
                set(&mut notify.outbox, &a.outbox);
                if a.test_mode {
                    notify.test_mode = Some(true);
                }
            }
            Command::Report { dir, .. } => {
                let report = options.report.get_or_insert_with(Default::default);
                set(&mut report.dir, dir);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn resolved(file: &str, argv: &[&str]) -> crate::config::Settings {
        let cli = Cli::try_parse_from(argv).unwrap();
        let mut options = Options::parse(file, Path::new("t.toml")).unwrap();
        cli.overlay(&mut options);
        options.resolve(Path::new("t.toml")).unwrap()
    }

    /// A flag replaces the file's value before the one resolve; a flag not given leaves it, and
    /// values derived from others (the rules' cores per node, the models' windows) follow.
    #[test]
    fn flags_overlay_the_file_before_resolving() {
        let file = "data = \"/file/data\"\n[features]\ntrim_s = 30\ncores_per_node = 8\n\
                    [notify]\noutbox = \"/file/outbox\"\n[rules]\ndir = \"/file/rules\"\n";
        let s = resolved(
            file,
            &[
                "jobsight",
                "features",
                "--trim-s",
                "5",
                "--windows",
                "60:15",
            ],
        );
        assert_eq!(s.data, Path::new("/file/data"));
        assert_eq!((s.features.trim_s, s.features.cores_per_node), (5, Some(8)));
        assert_eq!(
            s.features.windows.map(|w| w.to_string()),
            Some("60:15".into())
        );

        let s = resolved(
            file,
            &[
                "jobsight",
                "--data",
                "/flag",
                "classify",
                "--cores-per-node",
                "64",
                "--rules-dir",
                "/flag/rules",
            ],
        );
        assert_eq!(s.data, Path::new("/flag"));
        assert_eq!(s.rules.cores_per_node, Some(64));
        assert_eq!(s.rules.dir.as_deref(), Some(Path::new("/flag/rules")));

        let s = resolved(file, &["jobsight", "notify", "--test-mode"]);
        assert!(s.notify.test_mode);
        assert_eq!(s.notify.outbox, Path::new("/file/outbox"));
        // `check` takes the rules directory as `classify` does (JOBSIGHT_RULES_DIR too).
        let s = resolved(file, &["jobsight", "check", "--rules-dir", "/flag/rules"]);
        assert_eq!(s.rules.dir.as_deref(), Some(Path::new("/flag/rules")));
        // Another command's flags do not exist for this one: the file decides.
        let s = resolved(file, &["jobsight", "check"]);
        assert_eq!(s.features.trim_s, 30);
        assert!(!s.notify.test_mode);
    }
}
