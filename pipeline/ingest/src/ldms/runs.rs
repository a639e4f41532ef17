//! `jobsight import ldms-runs DIR [--labels FILE]`: each run directory below `DIR` becomes one
//! job, with its sampler files' telemetry and its labels, written as the parts `ldms-<job id>` of
//! the job's day. Every run's job id is found before anything is written, and a label that
//! belongs to no run is reported.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use super::labels::{RunLabel, read_labels};
use super::{LdmsError, SamplerFile, parse_file, push_series};
use crate::{JobRow, LabelRow, Skipped, TelemetryBuilder};
use jobsight_base::safe_fs::files_below;
use jobsight_warehouse::catalog::{self, Table};

/// Every run directory below `dir` (a directory with a `data/` folder), sorted.
pub fn find_runs(dir: &Path) -> Vec<PathBuf> {
    let mut runs = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        if d.join("data").is_dir() {
            runs.push(d.clone());
            continue;
        }
        for entry in entries.flatten() {
            let path = entry.path();
            // Never follow symlinks out of the tree being imported.
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            }
        }
    }
    runs.sort();
    runs
}

/// The run's path below `root`, without a leading `dataset/`, with `/` separators.
fn relative_run(root: &Path, run: &Path) -> String {
    let rel = run
        .strip_prefix(root)
        .unwrap_or(run)
        .to_string_lossy()
        .replace('\\', "/");
    rel.strip_prefix("dataset/")
        .map(str::to_string)
        .unwrap_or(rel)
}

/// What importing a directory of runs did.
#[derive(Debug, Default)]
pub struct LdmsImport {
    pub runs: usize,
    pub samples: usize,
    pub telemetry_rows: usize,
    pub labels: usize,
    pub skipped: Vec<Skipped>,
}

/// Imports every run below `dir` as one job each, with labels when given.
pub fn import_runs(
    data: &Path,
    dir: &Path,
    labels_file: Option<&Path>,
    cluster: &str,
    mut progress: impl FnMut(usize, usize, &str),
) -> Result<LdmsImport, LdmsError> {
    let labels = match labels_file {
        Some(path) => read_labels(path)?,
        None => Vec::new(),
    };
    let runs = find_runs(dir);
    if runs.is_empty() {
        return Err(LdmsError::NoRuns {
            dir: dir.to_path_buf(),
        });
    }
    let mut summary = LdmsImport::default();
    let job_ids = run_job_ids(dir, &runs, &labels)?;
    // A label that names no run found is reported, not ignored.
    if let Some(file) = labels_file {
        summary
            .skipped
            .extend(unmatched_labels(file, &labels, &runs, dir));
    }
    for (index, run) in runs.iter().enumerate() {
        let run_labels: Vec<&RunLabel> = labels.iter().filter(|l| label_matches(run, l)).collect();
        let rel = relative_run(dir, run);
        let job_id = job_ids[index].clone();
        progress(index + 1, runs.len(), &job_id);
        // One unreadable or malformed sampler file sets its run aside with the reason; the other
        // runs are imported.
        let files = match read_run(run) {
            Ok(files) => files,
            Err(e) => {
                summary.skipped.push(Skipped {
                    file: run.clone(),
                    line: 0,
                    reason: format!("run not imported: {e}"),
                });
                continue;
            }
        };
        let all = || files.iter().flat_map(|f| f.samples.iter());
        let (Some(first), Some(last)) = (
            all().map(|s| s.ts_micros).min(),
            all().map(|s| s.ts_micros).max(),
        ) else {
            summary.skipped.push(Skipped {
                file: run.clone(),
                line: 0,
                reason: "no samples: run not imported".into(),
            });
            continue;
        };
        let mut telemetry = TelemetryBuilder::default();
        for file in &files {
            push_series(file, &job_id, &mut telemetry);
            summary.samples += file.samples.len();
            summary.skipped.extend(file.skipped.iter().cloned());
        }
        summary.telemetry_rows += telemetry.len();
        let end = time_at(last);
        let mut nodes: Vec<&str> = all().map(|s| s.node.as_str()).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let job = JobRow {
            cluster: cluster.to_string(),
            job_id: job_id.clone(),
            num_nodes: Some(nodes.len() as u32),
            nodes: Some(nodes.join(",")),
            start: Some(time_at(first)),
            end,
            name: Some(run_labels.first().map_or_else(
                || rel.split('/').next().unwrap_or("").to_string(),
                |l| l.app.clone(),
            )),
            source: format!("ldms:{rel}"),
            ..JobRow::default()
        };
        let label_rows = run_label_rows(&job_id, &run_labels, first, labels_file);
        write_run(data, &job, &mut telemetry, &label_rows)?;
        summary.labels += label_rows.len();
        summary.runs += 1;
    }
    Ok(summary)
}

/// Whether `label` belongs to `run`: the run's path ends with the label's run_dir (without its
/// leading `dataset/`), whichever directory the import was started from.
fn label_matches(run: &Path, label: &RunLabel) -> bool {
    run.ends_with(
        label
            .run_dir
            .strip_prefix("dataset/")
            .unwrap_or(&label.run_dir),
    )
}

/// Every run's job id, in the order of `runs`: the id of the label that belongs to the run, else
/// the run's path below `dir` with `/` written as `__`. All are found before anything is written,
/// because two runs with one id would share a part, and one would silently replace the other.
fn run_job_ids(
    dir: &Path,
    runs: &[PathBuf],
    labels: &[RunLabel],
) -> Result<Vec<String>, LdmsError> {
    let mut job_ids: Vec<String> = Vec::with_capacity(runs.len());
    let mut seen: BTreeMap<String, &PathBuf> = BTreeMap::new();
    for run in runs {
        let job_id = labels.iter().find(|l| label_matches(run, l)).map_or_else(
            || relative_run(dir, run).replace('/', "__"),
            |l| l.job_id.clone(),
        );
        if let Some(first) = seen.insert(job_id.clone(), run) {
            return Err(LdmsError::SameJob {
                job_id,
                first: first.clone(),
                second: run.clone(),
            });
        }
        job_ids.push(job_id);
    }
    Ok(job_ids)
}

/// A skipped-line reason for each label of `labels_file` that belongs to none of `runs`, so that
/// a mistyped run_dir is reported rather than ignored.
fn unmatched_labels(
    labels_file: &Path,
    labels: &[RunLabel],
    runs: &[PathBuf],
    dir: &Path,
) -> Vec<Skipped> {
    labels
        .iter()
        .filter(|l| !runs.iter().any(|r| label_matches(r, l)))
        .map(|l| Skipped {
            file: labels_file.to_path_buf(),
            line: 0,
            reason: format!(
                "label for job {} (run_dir {}) matches no run directory below {}",
                l.job_id,
                l.run_dir,
                dir.display()
            ),
        })
        .collect()
}

/// Parses every sampler file of a run. The first one that cannot be read or is not an LDMS CSV
/// store file fails the whole run, which the caller then sets aside with the reason.
fn read_run(run: &Path) -> Result<Vec<SamplerFile>, LdmsError> {
    let mut files = Vec::new();
    // The sampler files: every regular file below the run's `data/` folder.
    for sampler_path in files_below(&run.join("data")) {
        let sampler = sampler_path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        // Found by walking the run's folder: never through a link, never a FIFO.
        let reader = jobsight_base::safe_fs::open_regular(
            &sampler_path,
            jobsight_base::safe_fs::Links::Refuse,
        )
        .map_err(|source| LdmsError::Read {
            path: sampler_path.clone(),
            source,
        })?;
        files.push(parse_file(
            std::io::BufReader::new(reader),
            &sampler_path,
            &sampler,
        )?);
    }
    Ok(files)
}

/// A time in microseconds since the epoch; one outside what chrono can hold gives the epoch.
fn time_at(micros: i64) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp_micros(micros).unwrap_or_default()
}

/// The `labels` rows of one run: each label's start and end are seconds after the run's first
/// sample, at `first` (microseconds since the epoch).
fn run_label_rows(
    job_id: &str,
    run_labels: &[&RunLabel],
    first: i64,
    labels_file: Option<&Path>,
) -> Vec<LabelRow> {
    run_labels
        .iter()
        .map(|l| {
            let offset = |s: Option<f64>| s.map(|s| time_at(first + (s * 1e6).round() as i64));
            LabelRow {
                job_id: job_id.to_string(),
                anomaly: l.anomaly.clone(),
                start: offset(l.start_s),
                end: offset(l.end_s),
                params: l.params.clone(),
                source: format!(
                    "labels:{}",
                    labels_file.map_or(String::new(), |p| p.display().to_string())
                ),
                labelled_by: None,
                labelled_at: None,
            }
        })
        .collect()
}

/// Writes one run's parts on the job's day: its telemetry, its job and, when it has any, its
/// labels. Every part is named `ldms-<job id>`, so importing the run again replaces them.
fn write_run(
    data: &Path,
    job: &JobRow,
    telemetry: &mut TelemetryBuilder,
    label_rows: &[LabelRow],
) -> Result<(), LdmsError> {
    let batch_error = |e: datafusion::arrow::error::ArrowError| LdmsError::Batch {
        job_id: job.job_id.clone(),
        reason: e.to_string(),
    };
    let part = format!("ldms-{}", job.job_id);
    let day = job.day();
    catalog::write_part(
        data,
        Table::Telemetry,
        day,
        &part,
        &[telemetry.finish().map_err(batch_error)?],
    )?;
    catalog::write_part(
        data,
        Table::Jobs,
        day,
        &part,
        &[JobRow::batch(std::slice::from_ref(job)).map_err(batch_error)?],
    )?;
    if !label_rows.is_empty() {
        catalog::write_part(
            data,
            Table::Labels,
            day,
            &part,
            &[LabelRow::batch(label_rows).map_err(batch_error)?],
        )?;
    }
    Ok(())
}
