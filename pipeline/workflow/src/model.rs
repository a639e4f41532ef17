//! The workflow model file: the supervised task classifier and the run-label forest of
//! [`super::detect`], trained on every labelled workflow run of a warehouse
//! (`jobsight model train --workflows`), and applied by `jobsight workflow score --model FILE`
//! to give each task a vote share and each run a label.
//!
//! The file has the job models' shape: a first line with a JSON header (format, version, when and
//! by which jobsight and smartcore, the training data, the labels, the body's length and
//! checksum), then the body (JSON). A file cut short or edited fails the checksum with a message
//! that says so. What the models read is the tasks' z-scores against their kinds' histories, which
//! the scoring learns from the warehouse it scores (as the unsupervised score does): the file
//! holds no histories.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::detect::{self, DetectError, History, RunForest, Task};
use jobsight_base::stats;
use jobsight_warehouse::catalog::rows::WorkflowScoreRow;

/// The first line's `format`.
pub const FORMAT: &str = "jobsight-workflow-model";
/// Bumped whenever the body's layout changes.
pub const FORMAT_VERSION: u32 = 4;

#[derive(Debug, thiserror::Error)]
pub enum WorkflowModelError {
    #[error(transparent)]
    Detect(#[from] DetectError),
    #[error("{path}: {reason}")]
    File { path: String, reason: String },
    #[error("no labelled workflow runs to train on (the runs' labels come from import pegasus)")]
    NoLabels,
}

/// What `model info` shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    pub jobsight: String,
    pub smartcore: String,
    pub created: String,
    pub data: String,
    pub runs: usize,
    pub tasks: usize,
    pub labelled_tasks: usize,
    pub anomalous_tasks: usize,
    /// The run labels the forest names, and the runs of each.
    pub run_labels: Vec<(String, usize)>,
    pub task_trees: usize,
    pub seed: u64,
    pub body_bytes: usize,
    pub body_fnv1a: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Body {
    task_trees: Vec<RunForest>,
    run_forest: Option<RunForest>,
}

/// A trained workflow model.
#[derive(Debug)]
pub struct WorkflowModel {
    pub header: Header,
    body: Body,
}

/// Trains on every labelled run and task of `tasks` (histories from all of them).
pub fn train(
    tasks: &[Task],
    runs: &BTreeMap<String, Option<String>>,
    data: &Path,
    seed: u64,
) -> Result<WorkflowModel, WorkflowModelError> {
    let history = History::learn(tasks.iter());
    let refs: Vec<&Task> = tasks.iter().collect();
    let hosts = detect::host_scores(&refs, &history);
    let task_trees = detect::fit_task_classifier(&refs, &hosts, seed)?;
    let labelled: Vec<(String, String)> = runs
        .iter()
        .filter_map(|(r, l)| Some((r.clone(), l.clone()?)))
        .collect();
    let names: Vec<String> = labelled
        .iter()
        .map(|(_, l)| l.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if task_trees.is_empty() && names.len() < 2 {
        return Err(WorkflowModelError::NoLabels);
    }
    let run_forest = if names.len() >= 2 {
        let run_ids: Vec<String> = labelled.iter().map(|(r, _)| r.clone()).collect();
        let votes = detect::out_of_fold_votes(&refs, &hosts, seed)?;
        let xr = detect::run_features(&refs, &history, &hosts, &votes, &run_ids);
        let yr: Vec<u32> = labelled
            .iter()
            .map(|(_, l)| names.iter().position(|n| n == l).unwrap_or(0) as u32)
            .collect();
        Some(detect::fit_forest(&xr, &yr, seed)?)
    } else {
        None
    };
    let run_labels = names
        .iter()
        .map(|n| (n.clone(), labelled.iter().filter(|(_, l)| l == n).count()))
        .collect();
    let header = Header {
        format: FORMAT.into(),
        version: FORMAT_VERSION,
        jobsight: env!("CARGO_PKG_VERSION").into(),
        smartcore: jobsight_base::SMARTCORE_VERSION.into(),
        created: chrono::Utc::now().to_rfc3339(),
        data: data.display().to_string(),
        runs: runs.len(),
        tasks: tasks.len(),
        labelled_tasks: tasks.iter().filter(|t| t.anomalous.is_some()).count(),
        anomalous_tasks: tasks.iter().filter(|t| t.anomalous == Some(true)).count(),
        run_labels,
        task_trees: task_trees.len(),
        seed,
        body_bytes: 0,
        body_fnv1a: String::new(),
    };
    Ok(WorkflowModel {
        header,
        body: Body {
            task_trees,
            run_forest,
        },
    })
}

impl WorkflowModel {
    /// Writes the file (header line, body line) atomically.
    pub fn write(&mut self, path: &Path) -> Result<(), WorkflowModelError> {
        let fail = |reason: String| WorkflowModelError::File {
            path: path.display().to_string(),
            reason,
        };
        let body = serde_json::to_string(&self.body).map_err(|e| fail(e.to_string()))?;
        self.header.body_bytes = body.len();
        self.header.body_fnv1a = stats::fnv1a(body.as_bytes());
        let header = serde_json::to_string(&self.header).map_err(|e| fail(e.to_string()))?;
        // A temporary file beside it, then a rename: a reader sees the old model or the new one.
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut file = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail(e.to_string()))?;
        use std::io::Write;
        file.write_all(format!("{header}\n{body}\n").as_bytes())
            .map_err(|e| fail(e.to_string()))?;
        file.persist(path).map_err(|e| fail(e.error.to_string()))?;
        Ok(())
    }

    /// Reads the header only; `None` when the file is not a workflow model (another model file).
    pub fn header(path: &Path) -> Result<Option<Header>, WorkflowModelError> {
        let (header, _) = read(path, false)?;
        Ok(header)
    }

    /// Reads and checks the whole file.
    pub fn read(path: &Path) -> Result<WorkflowModel, WorkflowModelError> {
        let fail = |reason: &str| WorkflowModelError::File {
            path: path.display().to_string(),
            reason: reason.into(),
        };
        match read(path, true)? {
            (Some(header), Some(body)) => Ok(WorkflowModel { header, body }),
            _ => Err(fail("not a workflow model file (see jobsight model info)")),
        }
    }

    /// Each task's vote share (`supervised_share`) and its run's label (`run_verdict`), added to
    /// `rows` (the scores of `tasks`, in the same order).
    pub fn apply(
        &self,
        tasks: &[Task],
        rows: &mut [(Option<chrono::NaiveDate>, WorkflowScoreRow)],
    ) -> Result<(), WorkflowModelError> {
        let history = History::learn(tasks.iter());
        let refs: Vec<&Task> = tasks.iter().collect();
        let hosts = detect::host_scores(&refs, &history);
        let shares = detect::task_votes(&self.body.task_trees, &refs, &hosts)?;
        let mut verdicts: BTreeMap<String, String> = BTreeMap::new();
        if let Some(forest) = &self.body.run_forest {
            let run_ids: Vec<String> = tasks
                .iter()
                .map(|t| t.run.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let x = detect::run_features(&refs, &history, &hosts, &shares, &run_ids);
            let predicted = forest
                .predict(&detect::dense(&x)?)
                .map_err(|e| DetectError::Fit(e.to_string()))?;
            for (run, p) in run_ids.into_iter().zip(predicted) {
                if let Some((name, _)) = self.header.run_labels.get(p as usize) {
                    verdicts.insert(run, name.clone());
                }
            }
        }
        let with_trees = !self.body.task_trees.is_empty();
        for ((_, row), (task, share)) in rows.iter_mut().zip(tasks.iter().zip(shares)) {
            row.supervised_share = with_trees.then_some(share);
            row.run_verdict = verdicts.get(task.run.as_str()).cloned();
        }
        Ok(())
    }
}

/// The longest header line read, and the longest body.
const MAX_HEADER_BYTES: u64 = 1 << 20;
const MAX_BODY_BYTES: u64 = 1 << 30;

/// The header, and the body when `body` is asked for; `(None, None)` for a file of another format.
fn read(path: &Path, body: bool) -> Result<(Option<Header>, Option<Body>), WorkflowModelError> {
    let fail = |reason: String| WorkflowModelError::File {
        path: path.display().to_string(),
        reason,
    };
    // The first line only, to see whose file it is: a job model (or anything else) is left to
    // the job models' reader, whose message says what the file is not.
    use std::io::{BufRead, Read};
    let file = jobsight_base::safe_fs::open_regular(path, jobsight_base::safe_fs::Links::Follow)
        .map_err(|e| fail(e.to_string()))?;
    let mut reader = std::io::BufReader::new(file);
    let mut first = Vec::new();
    (&mut reader)
        .take(MAX_HEADER_BYTES)
        .read_until(b'\n', &mut first)
        .map_err(|e| fail(e.to_string()))?;
    let value: Option<serde_json::Value> = serde_json::from_slice(&first).ok();
    let Some(value) = value.filter(|v| v.get("format").and_then(|f| f.as_str()) == Some(FORMAT))
    else {
        return Ok((None, None));
    };
    let header: Header = serde_json::from_value(value)
        .map_err(|e| fail(format!("the header is not a workflow model's: {e}")))?;
    if header.version != FORMAT_VERSION {
        return Err(fail(format!(
            "format version {} (this jobsight reads {FORMAT_VERSION}): train it again",
            header.version
        )));
    }
    if !body {
        return Ok((Some(header), None));
    }
    let mut rest = String::new();
    reader
        .take(MAX_BODY_BYTES)
        .read_to_string(&mut rest)
        .map_err(|e| fail(format!("the body: {e}")))?;
    let text = rest.strip_suffix('\n').unwrap_or(&rest);
    if text.len() != header.body_bytes || stats::fnv1a(text.as_bytes()) != header.body_fnv1a {
        return Err(fail(
            "the body does not match the header's length and checksum: the file was cut short or edited".into(),
        ));
    }
    let b: Body = serde_json::from_str(text).map_err(|e| fail(format!("the body: {e}")))?;
    Ok((Some(header), Some(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Twelve runs of two kinds on two hosts; in the `cpu` runs host b has lost cores.
    fn tasks() -> (Vec<Task>, BTreeMap<String, Option<String>>) {
        let mut tasks = Vec::new();
        let mut runs = BTreeMap::new();
        for r in 0..12 {
            let run = format!("r{r:02}");
            let slow_run = r % 2 == 1;
            runs.insert(
                run.clone(),
                Some(if slow_run { "cpu" } else { "normal" }.to_string()),
            );
            for (i, kind) in ["k1", "k1", "k2", "k2", "k1", "k2"].iter().enumerate() {
                let host = if i % 2 == 0 { "a" } else { "b" };
                let slow = slow_run && host == "b";
                let base = if *kind == "k1" { 100.0 } else { 10.0 } + (i + r % 3) as f64;
                let runtime = if slow { 2.0 * base } else { base };
                let cpu = 0.85 * base;
                tasks.push(Task {
                    run: run.clone(),
                    task_id: format!("{kind}_ID{i}"),
                    day: None,
                    kind: kind.to_string(),
                    host: Some(host.into()),
                    anomalous: Some(slow),
                    label: Some(if slow { "cpu" } else { "none" }.into()),
                    signals: detect::signals(&detect::Measures {
                        runtime: Some(runtime),
                        cpu_time: Some(cpu),
                        ..detect::Measures::default()
                    }),
                    runtime_s: Some(runtime),
                    start: None,
                    depth: None,
                });
            }
        }
        (tasks, runs)
    }

    #[test]
    fn trained_written_read_and_applied_and_a_damaged_file_refused() {
        let (tasks, runs) = tasks();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.model");
        let mut model = train(&tasks, &runs, dir.path(), 7).unwrap();
        model.write(&path).unwrap();
        let header = WorkflowModel::header(&path).unwrap().unwrap();
        assert_eq!((header.runs, header.anomalous_tasks), (12, 18));
        // The runs of each label, which `model info` shows (jobsight_render::workflow).
        assert_eq!(
            header.run_labels,
            [("cpu".to_string(), 6), ("normal".to_string(), 6)]
        );

        let model = WorkflowModel::read(&path).unwrap();
        let mut rows = detect::score(&tasks);
        model.apply(&tasks, &mut rows).unwrap();
        let mut right = 0;
        for ((_, row), task) in rows.iter().zip(&tasks) {
            assert_eq!(row.run_verdict, runs[&task.run], "{}", task.run);
            let share = row.supervised_share.unwrap();
            right += usize::from((share >= 0.5) == (task.anomalous == Some(true)));
        }
        // Single-tree votes on 72 tasks: most, not all, on the side of their label.
        assert!(right * 10 >= tasks.len() * 9, "{right} of {}", tasks.len());

        // A job model file is not a workflow model: no header, and reading it says so.
        let other = dir.path().join("job.model");
        std::fs::write(&other, "{\"format\":\"jobsight-model\"}\n{}\n").unwrap();
        assert!(WorkflowModel::header(&other).unwrap().is_none());
        let junk = dir.path().join("junk.model");
        std::fs::write(&junk, b"hello\xff\n").unwrap();
        assert!(
            WorkflowModel::header(&junk).unwrap().is_none(),
            "left to the job models' reader"
        );
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, &text[..text.len() - 10]).unwrap();
        let e = WorkflowModel::read(&path).unwrap_err().to_string();
        assert!(e.contains("cut short or edited"), "{e}");
        assert!(
            train(&tasks, &BTreeMap::new(), dir.path(), 7).is_ok(),
            "tasks alone suffice"
        );
    }
}
