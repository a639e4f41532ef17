//! The arguments of the commands that train and judge: `model` (with the forest's options,
//! [`TrainArgs`]), `workflow` and `rules` (their functions are in `commands::models`).

use crate::cli::choice_arg::choice;
use std::path::PathBuf;

use clap::Subcommand;

use jobsight_render::Format;

/// The arguments of `jobsight label`.
#[derive(Debug, clap::Args)]
pub struct LabelArgs {
    /// The jobs to label (their ids as `jobs.job_id` has them).
    #[arg(required_unless_present = "import", conflicts_with = "import")]
    pub jobs: Vec<String>,
    /// What ran: `healthy`, or an anomaly type.
    #[arg(long = "as", value_name = "LABEL", required_unless_present = "import")]
    pub label: Option<String>,
    /// When the anomaly began (RFC 3339, e.g. 2026-03-02T10:15:00Z) [default: the job's start].
    #[arg(long, requires = "label")]
    pub start: Option<String>,
    /// When the anomaly ended (RFC 3339) [default: the job's end].
    #[arg(long, requires = "label")]
    pub end: Option<String>,
    /// The node it ran on [default: every node of the job].
    #[arg(long, requires = "label")]
    pub node: Option<String>,
    /// A labels CSV file to keep instead: job_id,anomaly,start,end[,node].
    #[arg(long, value_name = "FILE")]
    pub import: Option<PathBuf>,
    /// Who gives the labels [default: $SUDO_USER, else $USER].
    #[arg(long)]
    pub by: Option<String>,
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
        #[arg(long, value_parser = choice::<jobsight_model::Kind>(), required_unless_present = "workflows")]
        kind: Option<jobsight_model::Kind>,
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
        #[arg(long, value_parser = choice::<jobsight_model::Kind>(), default_value = "diagnosis")]
        kind: jobsight_model::Kind,
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
        /// Active learning, for the diagnosis: in each fold the model asks for the labels of the
        /// N judged windows it is least sure of, gets them from the labels (standing in for an
        /// admin with `jobsight label`), is trained again with them and judged on the fold's
        /// other windows. With --leave-out-application: how many labels of a new application
        /// it takes to judge it well.
        #[arg(long, default_value_t = 0, value_name = "N", conflicts_with_all = ["model", "workflows"])]
        active: usize,
        /// With --active: ask for B labels at a time and train again after each batch before
        /// asking for the next, as an admin labelling a few jobs a week would (ALBADross's
        /// loop). Default: all N at once
        #[arg(long, value_name = "B", requires = "active", conflicts_with_all = ["model", "workflows"], value_parser = clap::value_parser!(u64).range(1..))]
        active_batch: Option<u64>,
        /// For the anomaly score (alone, or the diagnosis --with-score), with
        /// --leave-out-application or --hold-out: judge each job
        /// alone, as its application's first run would be, with no other runs of it to take a
        /// cut from (an application the model never saw meets the score's own threshold).
        #[arg(long, conflicts_with_all = ["model", "workflows", "cv"])]
        no_history: bool,
        /// For the diagnosis: fit the anomaly score in each fold too, and report the two
        /// together: a window anomalous when the score flags it or the diagnosis's top class is
        /// an anomaly (issue 70's eighth-run candidate, not kept). A score with no cut of its
        /// application's history says nothing (with --no-history, an application left out has
        /// none: the top class alone judges it).
        #[arg(long, conflicts_with_all = ["model", "workflows", "active"])]
        with_score: bool,
        #[command(flatten)]
        options: TrainArgs,
        #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
        format: Format,
    },
    /// Models for this site's nodes from its own runs: submit the labelled training suite of
    /// real applications (jobs/training/: LAMMPS, GROMACS, HPCC, NWChem, OpenFOAM, each alone
    /// and beside each anomaly generator, every job writing its own label) to Slurm, wait for
    /// the jobs to end and for the per-job DAG (the daemon) to store them, keep their labels,
    /// train the diagnosis and the anomaly score, judge both with each application left out in
    /// turn, and with --install put them where `[model]` says (the old ones kept as
    /// `.previous`). The suite's folder and --work must be reachable from the compute nodes.
    /// Takes applications × (--healthy + anomalies) jobs of (mean job length + 15 s) each on one
    /// free node.
    Bootstrap {
        /// The training suite's folder [default: $JOBSIGHT_TRAINING_SUITE, else
        /// share/jobsight/training beside the installed binary].
        #[arg(long, env = "JOBSIGHT_TRAINING_SUITE")]
        suite: Option<PathBuf>,
        /// Where the jobs write their labels and the models are trained [default:
        /// ./jobsight-training-<UTC time>].
        #[arg(long)]
        work: Option<PathBuf>,
        /// The applications to run (of lammps, gromacs, hpcc, nwchem, openfoam, and the other
        /// shapes: numpy, bwa, povray, archive, sweep, transcode, build, chess,
        /// database, compress, crypto, image, octave, rstats; jobs/training/README.md).
        #[arg(long, default_value = "lammps gromacs hpcc nwchem openfoam")]
        apps: String,
        /// The anomaly generators to run beside each application.
        #[arg(
            long,
            default_value = "cpuoccupy cachecopy membw memleak memeater iobandwidth iometadata"
        )]
        anomalies: String,
        /// Seconds each job runs (at least 60).
        #[arg(long, default_value_t = 90, value_parser = clap::value_parser!(u64).range(60..=3600))]
        seconds: u64,
        /// Jobs of different lengths: each job runs a seeded random length from --seconds to
        /// this many seconds, as production jobs do [default: --seconds, every job alike].
        #[arg(long, value_parser = clap::value_parser!(u64).range(60..=3600))]
        max_seconds: Option<u64>,
        /// The share of anomalous runs, in percent, whose anomaly starts with the job (no
        /// healthy prefix to compare with, as where the neighbour was there first); the others
        /// start in the run's second fifth. Chosen by the seed.
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=100))]
        from_start: u64,
        /// Healthy runs per application (beside one run per anomaly generator).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(0..=20))]
        healthy: u64,
        /// Nodes per job. Above 1 the suite's multi-node variant: each MPI application across
        /// all the job's nodes (one rank per CPU), the anomaly generator on the last of them,
        /// and each label naming that node; GROMACS (thread-MPI, one node) is left out.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
        nodes: u64,
        /// Submit as this user (needs root; default: whoever runs this).
        #[arg(long)]
        user: Option<String>,
        /// Slurm partition to run in [default: the cluster's default].
        #[arg(long)]
        partition: Option<String>,
        /// How long to wait for the jobs to end and be stored.
        #[arg(long, default_value_t = 4 * 3600)]
        wait_s: u64,
        /// Install the models at the configuration's `[model] diagnosis` and `unsupervised`.
        #[arg(long)]
        install: bool,
        #[command(flatten)]
        options: TrainArgs,
        #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
        format: Format,
    },
    /// Show a model file's header: kind, window, features, classes, training data, held-out
    /// figures and the most important metrics.
    Info {
        model: PathBuf,
        #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
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
    /// A window whose top class is an anomaly with a smaller share of the trees' votes (the
    /// namer's trees, with a second forest) is "unknown" (a healthy top class is healthy whatever
    /// its share).
    #[arg(long, default_value_t = jobsight_model::DEFAULT_UNKNOWN_BELOW)]
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
    /// (each against its job's typical window on the node, the median of its first and last fifth
    /// of windows: the same across applications and input sizes) or `both`. Default: `relative` for
    /// the diagnosis, `absolute` for the anomaly score (as measured, docs/models.md). `application`
    /// (`model eval` only, with `--name-features none`): `relative` plus each window against the
    /// typical window of its application's other runs; measured, not better (docs/models.md).
    #[arg(long, value_parser = choice::<jobsight_model::dataset::FeatureSet>())]
    pub features: Option<jobsight_model::dataset::FeatureSet>,
    /// The diagnosis's second forest, which names the anomaly of every window the first calls
    /// anomalous, trained on anomalous windows alone: its features (`absolute`, `relative`,
    /// `both`), or `none` for no second forest, the first naming it too. `both` (the default)
    /// named better on applications the models never saw (docs/models.md, "The tenth run").
    #[arg(long, value_parser = choice::<jobsight_model::namer::NameFeatures>(), default_value = "both")]
    pub name_features: jobsight_model::namer::NameFeatures,
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
    /// How the anomaly score's cut for each application is taken from its windows' scores, and
    /// for an application the model never saw from its other runs (docs/models.md, "Per-application
    /// baselines of the anomaly score").
    #[arg(long, value_parser = choice::<jobsight_model::baseline::BaselineMethod>(), default_value = "lower-tail")]
    pub baseline: jobsight_model::baseline::BaselineMethod,
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
    pub fn options(&self) -> anyhow::Result<jobsight_model::TrainOptions> {
        anyhow::ensure!(
            (0.0..=1.0).contains(&self.unknown_below),
            "--unknown-below must lie between 0 and 1, not {}",
            self.unknown_below
        );
        let mut o = jobsight_model::TrainOptions::default();
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
        o.name_features = self.name_features.set();
        o.score.baseline = self.baseline;
        Ok(o)
    }
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
    /// stands out (more than two spreads slower than history, its score, and than its run's
    /// other hosts, on the signals that follow the host). Run it again after an import: it
    /// replaces the scores. Re-import runs imported before 2026-11-27 first, for their kinds.
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
        #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
        format: Format,
    },
}

#[derive(Debug, Subcommand)]
pub enum RulesAction {
    /// List the rules, classes and thresholds block in effect (built-in plus the site directory).
    List {
        /// Site rule directory. Default: rules.dir.
        #[arg(long, env = "JOBSIGHT_RULES_DIR")]
        rules_dir: Option<PathBuf>,
        /// `table` for people, `json` for scripts (every field, with the conditions and texts).
        #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
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
        #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
        format: Format,
    },
}
