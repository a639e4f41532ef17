//! The command line's arguments (clap), and the overlay they put on the configuration file's
//! options before anything is resolved: a flag or its environment variable replaces the file's
//! value, and `jobsight check` validates exactly what a run would use.
//!
//! This file holds the top ([`Cli`], the [`Command`] enum, whose order and doc comments are the
//! `--help` output) and the overlay; each command's own arguments live in a submodule named like
//! the module of `commands` that runs them, and are re-exported here.

mod models;
mod scheduler;
mod simulation;
mod stages;
mod warehouse;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::Options;
use crate::schedule::LogFormat;

pub use models::{LabelArgs, ModelAction, RulesAction, WorkflowAction};
pub use scheduler::DagAction;
pub use simulation::{DemoArgs, SimulateArgs};
pub use stages::{
    ClassifyArgs, FeaturesArgs, IngestArgs, JobArgs, JobsArgs, NotifyArgs, ReportAction,
    RunningArgs, SpoolAction, SummaryArgs,
};
pub use warehouse::{BallistaRole, ImportSource, ServeArgs, SqlArgs};

/// The heading of the options every subcommand takes, listed after the subcommand's own.
const GLOBAL: &str = "Global options";

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
    #[arg(long, env = "JOBSIGHT_DATA", global = true, help_heading = GLOBAL)]
    pub data: Option<PathBuf>,
    /// Configuration file (TOML; every key optional, see ops/jobsight.example.toml). Flags and
    /// their environment variables override it.
    #[arg(long, env = "JOBSIGHT_CONFIG", global = true, help_heading = GLOBAL)]
    pub config: Option<PathBuf>,
    /// Spool directory that the epilog hook writes into [default: the config file's `spool`,
    /// else /var/spool/jobsight].
    #[arg(long, env = "JOBSIGHT_SPOOL", global = true, help_heading = GLOBAL)]
    pub spool: Option<PathBuf>,
    /// Log lines of `dag run` and `daemon` on stderr: `text` for people, `json` (one object per
    /// line) for log shippers.
    #[arg(
        long,
        value_enum,
        env = "JOBSIGHT_LOG_FORMAT",
        global = true,
        default_value = "text",
        help_heading = GLOBAL
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
    /// Label jobs for the models: healthy, or an anomaly type over a span.
    ///
    /// Label jobs for the models: healthy, or an anomaly type (cpuoccupy, cachecopy, membw,
    /// memleak, memeater, iobandwidth, iometadata, netoccupy) over a span of the job's run (its
    /// whole run without --start and --end), on one node or all. The labels go into the
    /// warehouse's `labels` table with who gave them and when; `model train` and the nightly
    /// retrain read that table, and labelling a job again replaces its earlier labels. With
    /// --import, every line of a labels CSV file (job_id,anomaly,start,end[,node], RFC 3339
    /// times; what `model bootstrap` merges the training suite's labels into) is kept as one labelling.
    /// Nothing is kept if any label names a job the warehouse has not stored, an unknown type, or
    /// a span outside the job's run.
    Label(LabelArgs),
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
    /// req_mem_gb as plain numbers (`SELECT user, sum(core_hours) FROM jobs GROUP BY user`). Read-only: one query (SELECT, WITH ... SELECT,
    /// EXPLAIN) or a question about the tables (SHOW TABLES, SHOW COLUMNS FROM t, DESCRIBE t,
    /// information_schema); INSERT, COPY, CREATE, DROP and SET are refused. Results stream: csv and json write every row as it comes, the table
    /// shows the first 10,000 rows with control characters escaped.
    Sql(SqlArgs),
    /// Serve the web interface (--http) or every table to psql and Grafana (--pg), read-only.
    ///
    /// With --http ADDR: the web interface (docs/web.md). Job, user, day and workflow pages
    /// rendered on request with the report's templates, a job list with filters and sorting,
    /// two jobs side by side, downloads, and forms to judge findings (the `feedback` table) and,
    /// for admins, to label jobs. It serves only the users a sign-in proxy names in `[web]
    /// user_header` from an address in `[web] trusted_proxies`. A person sees their own jobs,
    /// those of the accounts they coordinate in Slurm, and everything when they are an admin
    /// (`[access]`).
    ///
    /// With --pg ADDR (the default when --http is not given): the warehouse over
    /// PostgreSQL's wire protocol, so that `psql`,
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
    /// One job in the terminal: what it asked for and used, what was found, what to do.
    ///
    /// One job as `seff` and `jobstats` show it on a login node: what it requested and what it
    /// used (cores, memory, time, GPUs), its efficiencies and where they came from, each finding
    /// with what to do, the verdict of the rules and the models and how they combine, and the
    /// `#SBATCH` lines a better request would use. Reads the warehouse: the job must have been
    /// stored (by the per-job DAG, a few minutes after it ended). --format json gives the same
    /// figures for scripts, as plain numbers. Where `[access] own_jobs_only` is on (or jobsight
    /// is installed setgid), a person sees only their own jobs unless they are an admin.
    Job(JobArgs),
    /// List jobs with their efficiencies, findings and verdicts, newest first.
    ///
    /// The jobs that ended in a span of days (the last 7 days with jobs by default), one line
    /// each: state, run time, CPU and memory efficiency, how many findings and the verdict, with
    /// --user for one user's. `jobsight job JOB_ID` shows one of them in full.
    Jobs(JobsArgs),
    /// Show the jobs running now: their use so far, and what is wrong with them.
    ///
    /// The running DAG's newest snapshot (it runs every 10 minutes; `jobsight dag run running`
    /// runs it now): each running job's cores, CPU, memory and GPU use so far against its
    /// request, coloured as the job pages colour them (red, yellow; words when not on a
    /// terminal), and the conditions that hold (hung, idle GPUs, memory running out, serial
    /// work on many cores) with since when and what to do. --format json gives one document per
    /// job for scripts. Where `[access]` shows a person only their own jobs, that is what they
    /// see. docs/running.md has the details, the warnings and the cancel policy.
    Running(RunningArgs),
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

/// `jobsight --help`'s commands by who uses them: people who run jobs first, then admins by task.
/// Every subcommand is in exactly one group (a test checks), with the words of its doc comment.
const COMMAND_GROUPS: [(&str, &[&str]); 4] = [
    (
        "For everyone (your own jobs)",
        &["job", "jobs", "running", "demo"],
    ),
    (
        "For admins: the warehouse",
        &["sql", "summary", "report", "serve", "import"],
    ),
    (
        "For admins: running the pipeline",
        &[
            "daemon", "dag", "check", "spool", "ingest", "features", "classify", "notify",
            "ballista",
        ],
    ),
    (
        "For admins: rules, models and workflows",
        &["rules", "model", "label", "workflow", "simulate"],
    ),
];

/// The command line as clap parses it, with `--help` listing the commands in
/// [`COMMAND_GROUPS`] instead of declaration order (clap has one heading for all of them).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let cli = Cli::command();
    let about = |name: &str| {
        cli.find_subcommand(name)
            .and_then(|c| c.get_about())
            .map(|a| a.to_string())
            .unwrap_or_default()
    };
    let mut groups = String::new();
    for (heading, names) in COMMAND_GROUPS {
        groups.push_str(&format!("{heading}:\n"));
        for name in names {
            groups.push_str(&format!("  {name:<9} {}\n", about(name)));
        }
        groups.push('\n');
    }
    let template = format!(
        "{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{groups}\
         `jobsight help COMMAND` or `jobsight COMMAND --help` says more.\n\n{{all-args}}{{after-help}}"
    );
    let names: Vec<String> = cli
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    names
        .iter()
        .fold(cli, |cli, name| cli.mut_subcommand(name, |c| c.hide(true)))
        .help_template(template)
        .override_usage("jobsight [OPTIONS] <COMMAND>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every command is in one group of `--help`, once, and the help lists them in those groups.
    #[test]
    fn help_groups_every_command_once() {
        use clap::CommandFactory;
        let grouped: Vec<&str> = COMMAND_GROUPS
            .iter()
            .flat_map(|(_, names)| names.iter().copied())
            .collect();
        let mut declared: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        declared.sort();
        let mut sorted: Vec<String> = grouped.iter().map(|n| n.to_string()).collect();
        sorted.sort();
        assert_eq!(sorted, declared, "each command in exactly one group");
        let help = command().render_long_help().to_string();
        let users = help.find("For everyone").expect("the users' group");
        let admins = help.find("For admins").expect("the admins' groups");
        assert!(users < admins, "{help}");
        let job = help.find("\n  job ").expect("job listed");
        assert!(users < job && job < admins, "{help}");
        assert!(help.contains("jobsight [OPTIONS] <COMMAND>"), "{help}");
        for name in grouped {
            assert_eq!(
                help.matches(&format!("\n  {name} ")).count(),
                1,
                "{name} once: {help}"
            );
        }
    }

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
