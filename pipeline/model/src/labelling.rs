//! Labels from people: what `jobsight label` keeps. An admin (or the training suite) says a job
//! was healthy, or that an anomaly type ran in it over a span, and the label goes into the
//! warehouse's `labels` table, beside the job's other rows (its end day), with who gave it and
//! when. Retraining reads that table (the nightly retrain starts when it changes), and a job's
//! newest labelling replaces its older ones, so a wrong label is corrected by labelling again.
//!
//! Nothing is kept unless every label of a call is sound: the job is in the warehouse, the type
//! is one the models learn (or healthy), and the span lies within the job's run. A label that
//! names a job the warehouse has not stored yet would never reach a window.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::Int64Type;

use crate::ModelError;
use crate::dataset::{HEALTHY, LabelLine, batches, is_anomaly, micros_column, text_column};
use jobsight_base::anomaly::Anomaly;
use jobsight_warehouse::catalog::rows::LabelRow;
use jobsight_warehouse::catalog::{self, Table};

/// A stored job's run, as the labels need it.
#[derive(Debug, Clone, Copy)]
struct Run {
    day: NaiveDate,
    start_us: Option<i64>,
    end_us: Option<i64>,
}

/// What one call kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    /// Label rows written, per job.
    pub rows_per_job: BTreeMap<String, usize>,
    /// Labels left out because an identical one (job, type, span, node) came earlier.
    pub repeated: usize,
}

/// The names a label may use: healthy, then the anomaly types the models learn.
pub fn label_names() -> Vec<&'static str> {
    std::iter::once(HEALTHY)
        .chain(Anomaly::ALL.iter().map(|a| a.name()))
        .collect()
}

/// Keeps `labels` in the warehouse at `data` as given by `by` at `at`, one part per day of the
/// labelled jobs. A label of an anomaly without a span covers the job's whole run.
pub fn keep_labels(
    data: &Path,
    labels: &[LabelLine],
    by: &str,
    at: DateTime<Utc>,
) -> Result<Kept, ModelError> {
    if labels.is_empty() {
        return Err(ModelError::Label("no labels to keep".into()));
    }
    let runs = stored_runs(data)?;
    let missing: Vec<&str> = labels
        .iter()
        .map(|l| l.job_id.as_str())
        .filter(|job| !runs.contains_key(*job))
        .collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(10).copied().collect();
        return Err(ModelError::Label(format!(
            "{} label(s) name jobs the warehouse {} has not stored (first: {}): label a job once the per-job DAG has stored it; nothing was kept",
            missing.len(),
            data.display(),
            shown.join(", ")
        )));
    }
    let (labels, repeated) = without_repeats(labels);
    refuse_contradictions(&labels)?;
    let mut per_day: BTreeMap<NaiveDate, Vec<LabelRow>> = BTreeMap::new();
    let mut kept = Kept {
        rows_per_job: BTreeMap::new(),
        repeated,
    };
    for label in labels {
        let run = runs[label.job_id.as_str()];
        let row = label_row(label, run, by, at)?;
        per_day.entry(run.day).or_default().push(row);
        *kept.rows_per_job.entry(label.job_id.clone()).or_default() += 1;
    }
    let part = format!("label-{}", at.timestamp_micros());
    for (day, rows) in per_day {
        let batch = LabelRow::batch(&rows).map_err(|e| ModelError::Batch(e.to_string()))?;
        catalog::write_part(data, Table::Labels, day, &part, &[batch])?;
    }
    Ok(kept)
}

/// The labels without the ones that repeat an earlier one exactly, and how many those were: a
/// label given twice says nothing more, and a file of a million copies must not become a million
/// rows that every retrain reads.
fn without_repeats(labels: &[LabelLine]) -> (Vec<&LabelLine>, usize) {
    let mut seen = std::collections::HashSet::new();
    let kept: Vec<&LabelLine> = labels
        .iter()
        .filter(|l| {
            let healthy = matches!(l.anomaly.as_str(), "none" | HEALTHY);
            seen.insert((
                &l.job_id,
                if healthy { HEALTHY } else { l.anomaly.as_str() },
                l.start_us,
                l.end_us,
                &l.node,
            ))
        })
        .collect();
    let repeated = labels.len() - kept.len();
    (kept, repeated)
}

/// Refuses a call that says a job was both healthy and not: one of the two is wrong, and a model
/// trained on both learns neither.
fn refuse_contradictions(labels: &[&LabelLine]) -> Result<(), ModelError> {
    let mut healthy = std::collections::HashSet::new();
    let mut anomalous: HashMap<&str, &str> = HashMap::new();
    for label in labels {
        if matches!(label.anomaly.as_str(), "none" | HEALTHY) {
            healthy.insert(label.job_id.as_str());
        } else {
            anomalous.entry(&label.job_id).or_insert(&label.anomaly);
        }
    }
    let mut both: Vec<(&str, &str)> = anomalous
        .into_iter()
        .filter(|(job, _)| healthy.contains(job))
        .collect();
    both.sort_unstable();
    if let Some((job, anomaly)) = both.first() {
        return Err(ModelError::Label(format!(
            "{} job(s) are labelled both healthy and anomalous (first: job {job}, healthy and {anomaly}); say which is right; nothing was kept",
            both.len()
        )));
    }
    Ok(())
}

/// The row of one label, checked against the job's run.
fn label_row(
    label: &LabelLine,
    run: Run,
    by: &str,
    at: DateTime<Utc>,
) -> Result<LabelRow, ModelError> {
    let job = &label.job_id;
    let anomaly = match label.anomaly.as_str() {
        "none" | HEALTHY => "none",
        name if is_anomaly(name) => name,
        name => {
            return Err(ModelError::Label(format!(
                "job {job}: {name:?} is not a label the models learn; use one of {}",
                label_names().join(", ")
            )));
        }
    };
    let time = |us: i64| Utc.timestamp_micros(us).single();
    let (start_us, end_us) = if anomaly == "none" {
        if label.start_us.is_some() || label.end_us.is_some() {
            return Err(ModelError::Label(format!(
                "job {job}: a healthy label covers the whole job and takes no span"
            )));
        }
        (None, None)
    } else {
        let start = label.start_us.or(run.start_us);
        let end = label.end_us.or(run.end_us);
        let (Some(start), Some(end)) = (start, end) else {
            return Err(ModelError::Label(format!(
                "job {job}: its run has no recorded start or end; give the anomaly's span"
            )));
        };
        if start >= end {
            return Err(ModelError::Label(format!(
                "job {job}: the span must start before it ends"
            )));
        }
        let within =
            |t: i64| run.start_us.is_none_or(|s| t >= s) && run.end_us.is_none_or(|e| t <= e);
        if !within(start) || !within(end) {
            return Err(ModelError::Label(format!(
                "job {job}: the span {} to {} is not within the job's run ({} to {})",
                shown(time(start)),
                shown(time(end)),
                shown(run.start_us.and_then(time)),
                shown(run.end_us.and_then(time)),
            )));
        }
        (Some(start), Some(end))
    };
    Ok(LabelRow {
        job_id: job.clone(),
        anomaly: anomaly.to_string(),
        start: start_us.and_then(time),
        end: end_us.and_then(time),
        params: label.node.as_ref().map(|n| format!("node={n}")),
        source: "jobsight label".into(),
        labelled_by: Some(by.to_string()),
        labelled_at: Some(at),
    })
}

fn shown(time: Option<DateTime<Utc>>) -> String {
    time.map_or("unknown".into(), |t| {
        t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
    })
}

/// Every job the warehouse has stored: its end day and its run's start and end.
fn stored_runs(data: &Path) -> Result<HashMap<String, Run>, ModelError> {
    let mut runs = HashMap::new();
    for day in catalog::days(data, Table::Jobs) {
        batches(
            data,
            Table::Jobs,
            &[day],
            None,
            Some(&["job_id", "start", "end"]),
            |batch, path| {
                let ids = text_column(batch, "job_id", path)?;
                let starts = micros_column(batch, "start", path)?;
                let ends = micros_column(batch, "end", path)?;
                let ids = ids.as_string::<i32>();
                let (starts, ends) = (
                    starts.as_primitive::<Int64Type>(),
                    ends.as_primitive::<Int64Type>(),
                );
                for i in 0..batch.num_rows() {
                    if ids.is_valid(i) {
                        runs.insert(
                            ids.value(i).to_string(),
                            Run {
                                day,
                                start_us: starts.is_valid(i).then(|| starts.value(i)),
                                end_us: ends.is_valid(i).then(|| ends.value(i)),
                            },
                        );
                    }
                }
                Ok(())
            },
        )?;
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::dataset::{Truth, read_labels_table};

    /// A warehouse with jobs 1 and 2, each run from 10:00 to 11:00 of 2026-03-02.
    fn warehouse() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let day = NaiveDate::from_ymd_opt(2026, 3, 2).unwrap();
        let at = |h: u32| Utc.with_ymd_and_hms(2026, 3, 2, h, 0, 0).unwrap();
        let jobs: Vec<catalog::rows::JobRow> = ["1", "2"]
            .iter()
            .map(|id| catalog::rows::JobRow {
                job_id: id.to_string(),
                start: Some(at(10)),
                end: at(11),
                ..catalog::rows::JobRow::default()
            })
            .collect();
        catalog::rows::JobRow::write_part(dir.path(), day, "jobs", &jobs).unwrap();
        dir
    }

    fn line(job: &str, anomaly: &str, span: Option<(u32, u32)>) -> LabelLine {
        let us = |m: u32| {
            Utc.with_ymd_and_hms(2026, 3, 2, 10, m, 0)
                .unwrap()
                .timestamp_micros()
        };
        LabelLine {
            job_id: job.into(),
            anomaly: anomaly.into(),
            start_us: span.map(|(s, _)| us(s)),
            end_us: span.map(|(_, e)| us(e)),
            node: None,
        }
    }

    #[test]
    fn a_newer_labelling_of_a_job_replaces_the_older_one() {
        let dir = warehouse();
        let first = Utc.with_ymd_and_hms(2026, 3, 3, 8, 0, 0).unwrap();
        keep_labels(
            dir.path(),
            &[
                line("1", "cpuoccupy", Some((10, 20))),
                line("2", "healthy", None),
            ],
            "alice",
            first,
        )
        .unwrap();
        let truths = read_labels_table(dir.path()).unwrap();
        assert!(
            matches!(&truths["1"], Truth::Labelled(iv) if iv.len() == 1 && iv[0].anomaly == "cpuoccupy")
        );
        // Alice was wrong about job 1: it was healthy.
        keep_labels(
            dir.path(),
            &[line("1", "none", None)],
            "bob",
            first + chrono::Duration::hours(1),
        )
        .unwrap();
        let truths = read_labels_table(dir.path()).unwrap();
        assert_eq!(truths["1"], Truth::Labelled(vec![]));
        assert_eq!(truths["2"], Truth::Labelled(vec![]));
    }

    #[test]
    fn an_anomaly_without_a_span_covers_the_whole_run() {
        let dir = warehouse();
        let at = Utc.with_ymd_and_hms(2026, 3, 3, 8, 0, 0).unwrap();
        keep_labels(dir.path(), &[line("2", "memleak", None)], "alice", at).unwrap();
        let Truth::Labelled(intervals) = &read_labels_table(dir.path()).unwrap()["2"] else {
            panic!()
        };
        let hour = |h: u32| {
            Utc.with_ymd_and_hms(2026, 3, 2, h, 0, 0)
                .unwrap()
                .timestamp_micros()
        };
        assert_eq!(
            (intervals[0].start_us, intervals[0].end_us),
            (hour(10), hour(11))
        );
    }

    #[test]
    fn unsound_labels_are_refused_and_nothing_is_kept() {
        let dir = warehouse();
        let at = Utc.with_ymd_and_hms(2026, 3, 3, 8, 0, 0).unwrap();
        for (labels, says) in [
            (
                vec![line("1", "none", None), line("9", "none", None)],
                "not stored",
            ),
            (
                vec![line("1", "hung", None)],
                "not a label the models learn",
            ),
            (vec![line("1", "none", Some((1, 2)))], "takes no span"),
            (
                vec![line("1", "membw", Some((20, 10)))],
                "start before it ends",
            ),
            (vec![], "no labels"),
            (
                vec![line("1", "healthy", None), line("1", "memleak", None)],
                "both healthy and anomalous (first: job 1, healthy and memleak)",
            ),
        ] {
            let error = keep_labels(dir.path(), &labels, "alice", at)
                .unwrap_err()
                .to_string();
            assert!(error.contains(says), "{error}");
        }
        let mut outside = line("1", "membw", Some((10, 20)));
        outside.end_us = Some(outside.end_us.unwrap() + 3_600_000_000);
        let error = keep_labels(dir.path(), &[outside], "alice", at)
            .unwrap_err()
            .to_string();
        assert!(error.contains("not within the job's run"), "{error}");
        assert!(catalog::days(dir.path(), Table::Labels).is_empty());
    }

    #[test]
    fn a_label_given_many_times_is_kept_once() {
        let dir = warehouse();
        let at = Utc.with_ymd_and_hms(2026, 3, 3, 8, 0, 0).unwrap();
        let mut labels = vec![line("1", "memleak", Some((10, 20))); 10_000];
        labels.push(line("1", "memleak", Some((30, 40))));
        labels.push(line("2", "healthy", None));
        labels.push(line("2", "none", None));
        let kept = keep_labels(dir.path(), &labels, "alice", at).unwrap();
        assert_eq!(kept.repeated, 10_000);
        assert_eq!(kept.rows_per_job["1"], 2);
        assert_eq!(kept.rows_per_job["2"], 1);
    }
}
