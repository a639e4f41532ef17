//! The demo's set-up: what it simulates (the day, its sampling, the day the models learn from),
//! the directory and spool it works in, the hook as Slurm runs it, the models it trains before
//! anything is judged, and the pipeline's settings and DAG context as a site would have them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::config::Settings;
use crate::schedule;
use jobsight_ingest::simulator::{self, SimulatedCluster};
use jobsight_ingest::spool::Spool;
use jobsight_model::predict::Models;
use jobsight_model::{Kind, LabelsFrom, TrainOptions};
use jobsight_rules::RuleBook;
use jobsight_sim::ClusterSpec;

use super::error::DemoError;

/// The simulated day, sampling step and metric count of the demo: coarse enough to run in
/// seconds, fine enough to show each anomaly's signature.
pub(super) const DEMO_DAY: chrono::NaiveDate = match chrono::NaiveDate::from_ymd_opt(2026, 11, 20) {
    Some(day) => day,
    None => panic!("valid date"),
};
pub(super) const DEMO_STEP_S: u64 = 30;
pub(super) const DEMO_METRICS: usize = 24;

/// The models' windows in the demo. The evaluation protocol's 60 s windows assume about one
/// sample a second (as in the HPAS runs); at one sample every 30 s they would hold two samples
/// each and outnumber the samples, so the demo's windows are 5 minutes wide, every 2.5 minutes.
pub(super) const DEMO_WINDOWS: jobsight_features::WindowSpec = jobsight_features::WindowSpec {
    window_s: 300,
    stride_s: 150,
};

/// The day the models learn from: a smaller cluster on which most jobs carry an anomaly, so that
/// every type the simulator injects has a few jobs; its seed is the demo's plus this offset.
pub(super) const TRAINING_NODES: usize = 8;
pub(super) const TRAINING_JOBS: usize = 200;
pub(super) const TRAINING_ANOMALY_SHARE: f64 = 0.5;
const TRAINING_SEED_OFFSET: u64 = 1000;
/// The application the training day leaves out: the demo's day has it, the models never saw it.
/// Sequence search: the most unlike the others (reads, metadata, little bandwidth).
pub(super) const UNSEEN_APPLICATION: &str = "blast";

/// Small enough to train in seconds in a debug build; the defaults are for real training sets.
pub(super) const DEMO_TREES: u16 = 50;
pub(super) const DEMO_WINDOWS_PER_CLASS: usize = 500;
pub(super) const DEMO_SAMPLES_PER_TREE: usize = 1000;

#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// Directory for the spool; a new temporary directory (kept afterwards) when `None`.
    pub dir: Option<PathBuf>,
    pub spec: ClusterSpec,
    pub seed: u64,
    /// The `jobsight-epilog` binary to run.
    pub epilog_bin: PathBuf,
}

/// The default location of `jobsight-epilog`: beside the running `jobsight` binary, which is
/// where `cargo build` and an installation put it.
pub fn default_epilog_bin() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("jobsight-epilog")))
        .unwrap_or_else(|| PathBuf::from("jobsight-epilog"))
}

/// The demo's directory, with the spool the hooks write into.
pub(super) struct DemoDirectory {
    pub(super) dir: PathBuf,
    pub(super) spool_path: PathBuf,
    pub(super) spool: Spool,
}

/// Checks that the hook binary exists, and creates the directory (a new temporary one unless
/// given) and its spool: a directory that holds a spool already is refused.
pub(super) fn prepare(options: &DemoOptions) -> Result<DemoDirectory, DemoError> {
    if !options.epilog_bin.is_file() {
        return Err(DemoError::EpilogMissing {
            path: options.epilog_bin.clone(),
        });
    }
    let dir = match &options.dir {
        Some(dir) => dir.clone(),
        None => tempfile::Builder::new()
            .prefix("jobsight-demo-")
            .tempdir()
            .map_err(DemoError::TempDir)?
            .keep(),
    };
    let spool_path = dir.join("spool");
    if spool_path.exists() {
        return Err(DemoError::NotEmpty { path: dir });
    }
    let spool = Spool::init(&spool_path, 0o755)?;
    Ok(DemoDirectory {
        dir,
        spool_path,
        spool,
    })
}

/// The hook as Slurm runs it: a clean environment (no PATH, no HOME) with only the job's variables.
pub(super) fn hook_command(bin: &Path, spool: &Path, env: &jobsight_sim::HookEnv) -> Command {
    use std::os::unix::ffi::OsStringExt;
    let mut command = Command::new(bin);
    command
        .arg("--spool")
        .arg(spool)
        .env_clear()
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, std::ffi::OsString::from_vec(value.clone()));
    }
    command
}

/// Features of every day of `warehouse` with jobs.
fn compute_features(
    warehouse: &Path,
    settings: &jobsight_features::Settings,
) -> Result<jobsight_features::Computed, DemoError> {
    let mut computed = jobsight_features::Computed::default();
    for day in jobsight_features::days_with_jobs(warehouse) {
        computed.add(&jobsight_features::compute_day(
            warehouse,
            day,
            settings,
            |_, _| {},
        )?);
    }
    Ok(computed)
}

/// The demo's models and where they came from.
pub(super) struct TrainedModels {
    pub(super) seed: u64,
    pub(super) warehouse: PathBuf,
    pub(super) diagnosis: PathBuf,
    pub(super) unsupervised: PathBuf,
    /// The diagnosis model's description, as `jobsight model info` shows it.
    pub(super) header: String,
}

/// Simulates the training day into `dir/training`, computes its features and windows with
/// `settings`, and trains both models into `dir/models`.
pub(super) fn train_models(
    dir: &Path,
    spec: &ClusterSpec,
    seed: u64,
    settings: &jobsight_features::Settings,
) -> Result<TrainedModels, DemoError> {
    let training_spec = ClusterSpec {
        name: spec.name.clone(),
        nodes: TRAINING_NODES,
        cpus_per_node: spec.cpus_per_node,
        jobs: TRAINING_JOBS,
        node_epilog_share: 0.0,
        anomaly_share: TRAINING_ANOMALY_SHARE,
        without_application: Some(UNSEEN_APPLICATION),
        ..ClusterSpec::default()
    };
    let seed = seed.wrapping_add(TRAINING_SEED_OFFSET);
    let warehouse = dir.join("training");
    let jobs = jobsight_sim::simulate_day(&training_spec, seed);
    let refs: Vec<&jobsight_sim::SimJob> = jobs.iter().collect();
    simulator::write_jobs(
        &warehouse,
        &refs,
        &training_spec,
        DEMO_DAY,
        DEMO_STEP_S,
        DEMO_METRICS,
        seed,
        "training",
        |_, _| {},
    )?;
    compute_features(&warehouse, settings)?;
    let models = dir.join("models");
    std::fs::create_dir_all(&models).map_err(|source| DemoError::CreateDir {
        path: models.clone(),
        source,
    })?;
    let mut options = TrainOptions {
        max_windows_per_class: DEMO_WINDOWS_PER_CLASS,
        ..TrainOptions::default()
    };
    options.forest.trees = DEMO_TREES;
    options.forest.max_samples_per_tree = DEMO_SAMPLES_PER_TREE;
    let diagnosis = models.join("diagnosis.model");
    let unsupervised = models.join("anomaly-score.model");
    let file = jobsight_model::train(
        &warehouse,
        Kind::Diagnosis,
        &LabelsFrom::Table,
        &options,
        &diagnosis,
        &mut |_| {},
    )?;
    jobsight_model::train(
        &warehouse,
        Kind::Unsupervised,
        &LabelsFrom::Table,
        &options,
        &unsupervised,
        &mut |_| {},
    )?;
    Ok(TrainedModels {
        seed,
        warehouse,
        diagnosis,
        unsupervised,
        header: jobsight_render::model::render_header(&file.header),
    })
}

/// The pipeline as a site runs it, on the demo's directory: the settings (the demo's warehouse,
/// spool, models and file outbox; all else default), the rule book, the models and the DAGs,
/// with the simulator standing in for sacct and for the node exporters.
pub(super) struct Pipeline<'a> {
    pub(super) settings: Settings,
    pub(super) book: Arc<RuleBook>,
    models: Arc<Models>,
    pub(super) dags: Vec<schedule::Dag>,
    /// The DAG runs' log, one line per job and step, and where it goes.
    pub(super) log: schedule::Log,
    pub(super) log_path: PathBuf,
    /// Never set: the demo's runs are not stopped by signals.
    pub(super) stop: AtomicBool,
    /// The simulated day's jobs, which the simulator answers sacct's and the exporters' questions
    /// about.
    pub(super) jobs: &'a [jobsight_sim::SimJob],
    pub(super) spec: &'a ClusterSpec,
    seed: u64,
}

impl<'a> Pipeline<'a> {
    pub(super) fn new(
        options: &'a DemoOptions,
        demo_dir: &DemoDirectory,
        jobs: &'a [jobsight_sim::SimJob],
        features_settings: jobsight_features::Settings,
        trained: &TrainedModels,
    ) -> Result<Pipeline<'a>, DemoError> {
        let dir = &demo_dir.dir;
        let spec = &options.spec;
        let mut settings =
            crate::config::Options::default().resolve(Path::new("(demo defaults)"))?;
        settings.data = dir.join("warehouse");
        settings.spool = demo_dir.spool_path.clone();
        settings.features = features_settings;
        settings.rules.cores_per_node = Some(spec.cpus_per_node);
        settings.model.diagnosis = Some(trained.diagnosis.clone());
        settings.model.unsupervised = Some(trained.unsupervised.clone());
        settings.notify.outbox = dir.join("outbox");
        settings.report.dir = dir.join("reports");
        let book = Arc::new(RuleBook::load(None)?);
        let models = Arc::new(Models::load(
            Some(&trained.diagnosis),
            Some(&trained.unsupervised),
        )?);
        let dags = schedule::dag::load_all(None)?;
        let log_path = dir.join("pipeline.log");
        let log_file = std::fs::File::create(&log_path).map_err(|source| DemoError::CreateDir {
            path: log_path.clone(),
            source,
        })?;
        let log = schedule::Log::new(schedule::LogFormat::Text, Box::new(log_file));
        Ok(Pipeline {
            settings,
            book,
            models,
            dags,
            log,
            log_path,
            stop: AtomicBool::new(false),
            jobs,
            spec,
            seed: options.seed,
        })
    }

    /// The warehouse the pipeline writes into.
    pub(super) fn warehouse(&self) -> &Path {
        &self.settings.data
    }

    /// What a DAG run at `at` works with.
    pub(super) fn context(&self, at: chrono::DateTime<chrono::Utc>) -> schedule::Context {
        schedule::Context {
            settings: self.settings.clone(),
            clock: schedule::Clock::Fixed(at),
            book: Arc::clone(&self.book),
            models: Some(Arc::clone(&self.models)),
            accounting: Box::new(self.simulated()),
            telemetry: Some(Box::new(self.simulated())),
        }
    }

    /// The simulator standing in for sacct and the node exporters; everything else is the
    /// pipeline as a site runs it.
    fn simulated(&self) -> SimulatedCluster {
        SimulatedCluster::new(
            self.jobs,
            self.spec,
            DEMO_DAY,
            DEMO_STEP_S,
            DEMO_METRICS,
            self.seed,
        )
    }
}
