//! `jobsight model bootstrap`: models for a site's own nodes, from its own runs of real
//! applications. It submits the labelled training suite (`jobs/training/`: real applications,
//! alone and beside anomaly generators, each job writing its own label) to the site's Slurm,
//! waits for the jobs to end and for the site's per-job DAG to store them, keeps their labels in
//! the `labels` table, trains the diagnosis and the anomaly score on every labelled window, judges
//! both with each application left out in turn (how they will do on the applications the site
//! runs that the suite does not), and installs them where the configuration says.
//!
//! It needs what the per-job DAG needs (the epilog hook, Prometheus with the node and per-job
//! exporters, the daemon) and runs none of it: the suite's jobs are stored as every other job
//! is. The suite's folder and the labels folder must be readable and writable from the compute
//! nodes (a shared file system), since the jobs run from and write there.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use jobsight_model::dataset::{self, LabelLine};
use jobsight_model::{BootstrapOutcome, CrossValidation, Kind, LabelsFrom, TrainOptions};

/// What a bootstrap is asked for.
#[derive(Debug, Clone)]
pub struct Bootstrap {
    /// The training suite's folder (its `submit.sh`, `training.sbatch`, ...).
    pub suite: PathBuf,
    /// Where the jobs write their labels, and the models are trained into before installing.
    pub work: PathBuf,
    /// The warehouse the per-job DAG stores the jobs into.
    pub data: PathBuf,
    /// Options passed to `submit.sh` (`--apps`, `--seconds`, `--user`, ...).
    pub submit: Vec<String>,
    /// How long to wait for the jobs to end and then to be stored.
    pub wait: Duration,
    pub options: TrainOptions,
    /// Where to install the models (the configuration's `[model]` paths); none: leave them in
    /// `work`.
    pub install: Option<(PathBuf, PathBuf)>,
}

/// Runs the bootstrap, saying what it does through `progress`.
pub fn run(b: &Bootstrap, progress: &mut dyn FnMut(&str)) -> anyhow::Result<BootstrapOutcome> {
    let submit_script = b.suite.join("submit.sh");
    anyhow::ensure!(
        submit_script.is_file(),
        "{} is not the training suite's folder (no submit.sh): pass --suite DIR (jobs/training in jobsight's sources)",
        b.suite.display()
    );
    let labels_dir = b.work.join("labels");
    std::fs::create_dir_all(&labels_dir)
        .with_context(|| format!("cannot create {}", labels_dir.display()))?;

    progress("submitting the training suite");
    let output = Command::new("bash")
        .arg(&submit_script)
        .arg("--labels")
        .arg(&labels_dir)
        .args(&b.submit)
        .output()
        .with_context(|| format!("cannot run {}", submit_script.display()))?;
    if !output.status.success() {
        bail!(
            "{} failed ({}): {}",
            submit_script.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    // submit.sh prints "job_id app anomaly" per job.
    let jobs: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|id| id.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_string)
        .collect();
    anyhow::ensure!(!jobs.is_empty(), "submit.sh submitted no job");
    progress(&format!(
        "{} job(s) submitted; waiting for them to end",
        jobs.len()
    ));

    let deadline = Instant::now() + b.wait;
    let ids: Vec<&str> = jobs.iter().map(String::as_str).collect();
    wait_for(deadline, progress, "the suite's jobs to end", || {
        let queued = queued(&ids)?;
        Ok((queued == 0).then_some(()).ok_or(format!(
            "{} of {} ended",
            ids.len() - queued,
            ids.len()
        )))
    })?;

    progress("waiting for the per-job DAG to store them");
    let stored = wait_for(deadline, progress, "the jobs to be stored", || {
        let names = dataset::job_names(&b.data, None, None)?;
        let have = ids.iter().filter(|id| names.contains_key(**id)).count();
        if have == ids.len() {
            Ok(Ok(have))
        } else {
            Ok(Err(format!("{have} of {} stored", ids.len())))
        }
    })?;

    let lines = collected_labels(&labels_dir, &ids, progress)?;
    let kept = jobsight_model::labelling::keep_labels(
        &b.data,
        &lines,
        "training suite",
        chrono::Utc::now(),
    )?;
    let labels: usize = kept.rows_per_job.values().sum();
    progress(&format!(
        "kept {labels} label(s) of {} job(s)",
        kept.rows_per_job.len()
    ));

    let mut models = Vec::new();
    for (kind, file) in [
        (Kind::Diagnosis, "diagnosis.model"),
        (Kind::Unsupervised, "anomaly-score.model"),
    ] {
        let out = b.work.join(file);
        progress(&format!("training the {}", kind.name()));
        jobsight_model::train(
            &b.data,
            kind,
            &LabelsFrom::Table,
            &b.options,
            &out,
            progress,
        )?;
        models.push((kind, out, None));
    }
    let mut evaluations = Vec::new();
    for kind in [Kind::Diagnosis, Kind::Unsupervised] {
        progress(&format!(
            "judging the {} with each application left out",
            kind.name()
        ));
        let cv = CrossValidation {
            leave_out_each: true,
            ..CrossValidation::default()
        };
        evaluations.push(jobsight_model::cross_validate(
            &b.data,
            kind,
            &LabelsFrom::Table,
            &b.options,
            &cv,
            progress,
        )?);
    }
    if let Some((diagnosis, score)) = &b.install {
        for (entry, target) in models.iter_mut().zip([diagnosis, score]) {
            install(&entry.1, target)?;
            entry.2 = Some(target.clone());
        }
    }
    Ok(BootstrapOutcome {
        submitted: jobs.len(),
        stored,
        labels,
        models,
        evaluations,
    })
}

/// Calls `check` every 15 s until it gives a value (`Ok(Ok(v))`), saying how far it got
/// (`Ok(Err(how_far))`) each time; fails at `deadline` or on `check`'s error.
fn wait_for<T>(
    deadline: Instant,
    progress: &mut dyn FnMut(&str),
    what: &str,
    mut check: impl FnMut() -> anyhow::Result<Result<T, String>>,
) -> anyhow::Result<T> {
    loop {
        let how_far = match check()? {
            Ok(value) => return Ok(value),
            Err(how_far) => how_far,
        };
        if Instant::now() >= deadline {
            bail!("gave up waiting for {what} ({how_far}); --wait-s gives more time");
        }
        progress(&how_far);
        std::thread::sleep(Duration::from_secs(15));
    }
}

/// How many of `ids` Slurm still has queued or running.
fn queued(ids: &[&str]) -> anyhow::Result<usize> {
    let output = Command::new("squeue")
        .args(["-h", "-o", "%i", "-j", &ids.join(",")])
        .output()
        .context("cannot run squeue")?;
    // squeue fails with "Invalid job id" once every job has left its memory.
    if !output.status.success() {
        return Ok(0);
    }
    let listed: BTreeSet<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .collect();
    Ok(ids.iter().filter(|id| listed.contains(**id)).count())
}

/// The labels the suite's jobs `ids` wrote into `dir` (one `<job>.csv` line each:
/// job_id,anomaly,start,end,node); a job without one (it failed before its generator ended) is
/// named and left out.
fn collected_labels(
    dir: &Path,
    ids: &[&str],
    progress: &mut dyn FnMut(&str),
) -> anyhow::Result<Vec<LabelLine>> {
    let merged = dir.join("all-labels.csv");
    let mut text = String::from("job_id,anomaly,start,end,node\n");
    let mut missing = Vec::new();
    for id in ids {
        match std::fs::read_to_string(dir.join(format!("{id}.csv"))) {
            Ok(line) if !line.trim().is_empty() => text.push_str(line.trim_end()),
            _ => {
                missing.push(*id);
                continue;
            }
        }
        text.push('\n');
    }
    if !missing.is_empty() {
        progress(&format!(
            "no label from {} job(s) (they failed or were cancelled): {}",
            missing.len(),
            missing.join(", ")
        ));
    }
    std::fs::write(&merged, text).with_context(|| format!("cannot write {}", merged.display()))?;
    Ok(dataset::read_label_lines(&merged)?)
}

/// Puts the model at `trained` in place of `target`, keeping the old one as `<target>.previous`.
fn install(trained: &Path, target: &Path) -> anyhow::Result<()> {
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    if target.exists() {
        let mut previous = target.as_os_str().to_os_string();
        previous.push(".previous");
        std::fs::copy(target, &previous)
            .with_context(|| format!("cannot keep {} as .previous", target.display()))?;
    }
    // Copied beside the target first, then renamed over it: a reader never sees half a file.
    let mut incoming = target.as_os_str().to_os_string();
    incoming.push(".incoming");
    std::fs::copy(trained, &incoming)
        .with_context(|| format!("cannot copy {} to {:?}", trained.display(), incoming))?;
    std::fs::rename(&incoming, target)
        .with_context(|| format!("cannot install {}", target.display()))?;
    Ok(())
}
