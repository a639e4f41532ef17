//! The labels that say what each window is: read from the warehouse's `labels` table or a CSV
//! file into one [`Truth`] per job, and applied to a window by the fixed protocol the
//! [`dataset`](super) module describes ([`label_window`]).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::Int64Type;

use super::{HEALTHY, WindowKey, batches, micros_column, text_column};
use crate::ModelError;
use jobsight_base::anomaly::Anomaly;
use jobsight_warehouse::catalog::Table;

/// One labelled anomaly interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    pub anomaly: String,
    pub start_us: i64,
    pub end_us: i64,
    /// The node it affected, when the label says (the simulator's `node=...`); else every node.
    pub node: Option<String>,
}

/// What the labels say about one job.
#[derive(Debug, Clone, PartialEq)]
pub enum Truth {
    /// Healthy (no interval) or with anomaly intervals.
    Labelled(Vec<Interval>),
    /// A label that is neither healthy nor an anomaly type (e.g. `hung`): not used for training.
    Other(String),
}

/// Whether a label names an anomaly type the models learn (the HPAS generators' names).
pub fn is_anomaly(label: &str) -> bool {
    Anomaly::ALL.iter().any(|a| a.name() == label)
}

/// Adds one label row to `truths`.
fn add_label(
    truths: &mut BTreeMap<String, Truth>,
    job_id: &str,
    anomaly: &str,
    start_us: Option<i64>,
    end_us: Option<i64>,
    node: Option<String>,
) {
    let truth = truths
        .entry(job_id.to_string())
        .or_insert_with(|| Truth::Labelled(Vec::new()));
    if anomaly == "none" || anomaly == HEALTHY {
        return;
    }
    if !is_anomaly(anomaly) {
        *truth = Truth::Other(anomaly.to_string());
        return;
    }
    if let (Truth::Labelled(intervals), Some(start_us), Some(end_us)) = (truth, start_us, end_us) {
        intervals.push(Interval {
            anomaly: anomaly.to_string(),
            start_us,
            end_us,
            node,
        });
    }
}

/// The node named by a label's params (`node=NAME`), if any.
fn node_of_params(params: Option<&str>) -> Option<String> {
    params?
        .split([',', ' ', ';'])
        .find_map(|p| p.strip_prefix("node="))
        .map(str::to_string)
}

/// One row of the `labels` table as read.
struct StoredLabel {
    job_id: String,
    anomaly: String,
    start_us: Option<i64>,
    end_us: Option<i64>,
    node: Option<String>,
    /// When an admin labelled it (`jobsight label`); none for a data set's labels.
    labelled_at_us: Option<i64>,
}

/// The `labels` table of every day, by job id. Where an admin labelled a job (`jobsight
/// label`), the job's newest labelling replaces everything older: relabelling a job corrects it
/// rather than adding to it.
pub fn read_labels_table(data: &Path) -> Result<BTreeMap<String, Truth>, ModelError> {
    let days = jobsight_warehouse::catalog::days(data, Table::Labels);
    let mut rows = Vec::new();
    batches(data, Table::Labels, &days, None, None, |batch, path| {
        let ids = text_column(batch, "job_id", path)?;
        let anomalies = text_column(batch, "anomaly", path)?;
        let starts = micros_column(batch, "start", path)?;
        let ends = micros_column(batch, "end", path)?;
        let params = text_column(batch, "params", path)?;
        // Parts written before labels said who and when have no such column.
        let labelled_at = match batch.column_by_name("labelled_at") {
            Some(_) => Some(micros_column(batch, "labelled_at", path)?),
            None => None,
        };
        let (ids, anomalies, params) = (
            ids.as_string::<i32>(),
            anomalies.as_string::<i32>(),
            params.as_string::<i32>(),
        );
        let (starts, ends) = (
            starts.as_primitive::<Int64Type>(),
            ends.as_primitive::<Int64Type>(),
        );
        let labelled_at = labelled_at.as_ref().map(|a| a.as_primitive::<Int64Type>());
        for i in 0..batch.num_rows() {
            if !ids.is_valid(i) || !anomalies.is_valid(i) {
                continue;
            }
            rows.push(StoredLabel {
                job_id: ids.value(i).to_string(),
                anomaly: anomalies.value(i).to_string(),
                start_us: starts.is_valid(i).then(|| starts.value(i)),
                end_us: ends.is_valid(i).then(|| ends.value(i)),
                node: node_of_params(params.is_valid(i).then(|| params.value(i))),
                labelled_at_us: labelled_at.and_then(|a| a.is_valid(i).then(|| a.value(i))),
            });
        }
        Ok(())
    })?;
    Ok(newest_labelling(rows))
}

/// Each job's truth from its newest labelling only (a data set's labels count as the oldest).
fn newest_labelling(rows: Vec<StoredLabel>) -> BTreeMap<String, Truth> {
    let mut newest: HashMap<&str, Option<i64>> = HashMap::new();
    for row in &rows {
        let at = newest.entry(row.job_id.as_str()).or_insert(None);
        *at = (*at).max(row.labelled_at_us);
    }
    let mut truths = BTreeMap::new();
    for row in &rows {
        if newest.get(row.job_id.as_str()) == Some(&row.labelled_at_us) {
            add_label(
                &mut truths,
                &row.job_id,
                &row.anomaly,
                row.start_us,
                row.end_us,
                row.node.clone(),
            );
        }
    }
    truths
}

/// One labelled span as a labels CSV file or an admin gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelLine {
    pub job_id: String,
    /// `none` (or `healthy`) or an anomaly type.
    pub anomaly: String,
    pub start_us: Option<i64>,
    pub end_us: Option<i64>,
    pub node: Option<String>,
}

/// A labels CSV file with the header `job_id,anomaly,start,end[,node]`, times in RFC 3339.
/// A malformed line is an error naming the file and line: training on half-read labels would
/// silently teach the model the wrong thing.
pub fn read_labels_csv(path: &Path) -> Result<BTreeMap<String, Truth>, ModelError> {
    let mut truths = BTreeMap::new();
    for line in read_label_lines(path)? {
        add_label(
            &mut truths,
            &line.job_id,
            &line.anomaly,
            line.start_us,
            line.end_us,
            line.node,
        );
    }
    Ok(truths)
}

/// The largest labels file read: about a million labels. A label file is written by people or
/// the training suite; one larger is a mistake, and reading it would hold all of it in memory.
pub const LABELS_FILE_MAX_BYTES: u64 = 128 << 20;

/// The lines of a labels CSV file (see [`read_labels_csv`]), as written. Only a regular file is
/// read (a FIFO or a device is refused at once, never waited on), and at most
/// [`LABELS_FILE_MAX_BYTES`] of it.
pub fn read_label_lines(path: &Path) -> Result<Vec<LabelLine>, ModelError> {
    use jobsight_base::safe_fs::{Links, read_text_at_most};
    let text = read_text_at_most(path, Links::Follow, LABELS_FILE_MAX_BYTES)
        .map_err(|e| ModelError::read(path, e))?;
    let mut lines = text.lines().enumerate();
    let header: Vec<&str> = match lines.next() {
        Some((_, h)) => h.split(',').map(str::trim).collect(),
        None => return Err(ModelError::read(path, "empty file")),
    };
    let expected = ["job_id", "anomaly", "start", "end"];
    if header.len() < 4 || header[..4] != expected {
        return Err(ModelError::read(
            path,
            format!(
                "line 1: the header must start with job_id,anomaly,start,end (then optionally node), not {}",
                header.join(",")
            ),
        ));
    }
    let time = |field: &str, line: usize| -> Result<Option<i64>, ModelError> {
        if field.is_empty() {
            return Ok(None);
        }
        chrono::DateTime::parse_from_rfc3339(field)
            .map(|t| Some(t.timestamp_micros()))
            .map_err(|e| ModelError::read(path, format!("line {line}: time {field:?}: {e}")))
    };
    let mut labels = Vec::new();
    for (index, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() < 4 || fields.len() > 5 || fields[0].is_empty() || fields[1].is_empty() {
            return Err(ModelError::read(
                path,
                format!(
                    "line {}: expected job_id,anomaly,start,end[,node], got {} field(s)",
                    index + 1,
                    fields.len()
                ),
            ));
        }
        labels.push(LabelLine {
            job_id: fields[0].to_string(),
            anomaly: fields[1].to_string(),
            start_us: time(fields[2], index + 1)?,
            end_us: time(fields[3], index + 1)?,
            node: fields
                .get(4)
                .filter(|n| !n.is_empty())
                .map(|n| n.to_string()),
        });
    }
    Ok(labels)
}

/// The label of one window by the protocol (see [`super`]'s doc): `None` when it is left out.
pub fn label_window<'a>(truth: &'a Truth, key: &WindowKey) -> Option<&'a str> {
    let Truth::Labelled(intervals) = truth else {
        return None;
    };
    let mut overlapping = intervals.iter().filter(|iv| {
        iv.node.as_deref().is_none_or(|n| n == &*key.node)
            && iv.start_us < key.end_us
            && iv.end_us > key.start_us
    });
    match (overlapping.next(), overlapping.next()) {
        (None, _) => Some(HEALTHY),
        (Some(iv), None) if iv.start_us <= key.start_us && key.end_us <= iv.end_us => {
            Some(iv.anomaly.as_str())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use super::*;

    fn key(node: &str, start_s: i64, end_s: i64) -> WindowKey {
        WindowKey {
            job_id: Arc::from("1"),
            run: None,
            node: Arc::from(node),
            start_us: start_s * 1_000_000,
            end_us: end_s * 1_000_000,
        }
    }

    fn interval(anomaly: &str, start_s: i64, end_s: i64, node: Option<&str>) -> Interval {
        Interval {
            anomaly: anomaly.into(),
            start_us: start_s * 1_000_000,
            end_us: end_s * 1_000_000,
            node: node.map(str::to_string),
        }
    }

    #[test]
    fn windows_are_labelled_by_the_protocol() {
        let truth = Truth::Labelled(vec![
            interval("memleak", 100, 400, None),
            interval("cpuoccupy", 300, 600, None),
            interval("cachecopy", 1000, 1200, Some("b")),
        ]);
        // Inside exactly one interval.
        assert_eq!(label_window(&truth, &key("a", 100, 160)), Some("memleak"));
        // Straddles the start of an interval: left out.
        assert_eq!(label_window(&truth, &key("a", 60, 120)), None);
        // Inside the overlap of two intervals: left out.
        assert_eq!(label_window(&truth, &key("a", 310, 370)), None);
        // Overlaps none.
        assert_eq!(label_window(&truth, &key("a", 0, 60)), Some(HEALTHY));
        // The node-specific interval only labels its node.
        assert_eq!(
            label_window(&truth, &key("b", 1050, 1110)),
            Some("cachecopy")
        );
        assert_eq!(label_window(&truth, &key("a", 1050, 1110)), Some(HEALTHY));
        // A job with another behaviour is never labelled.
        assert_eq!(
            label_window(&Truth::Other("hung".into()), &key("a", 0, 60)),
            None
        );
    }

    #[test]
    fn labels_csv_errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.csv");
        std::fs::write(
            &path,
            "job_id,anomaly,start,end,node\n1,memleak,2025-01-01T00:00:00Z,2025-01-01T00:10:00Z,n1\n2,none,,\n3,memleak,yesterday,2025-01-01T00:10:00Z\n",
        )
        .unwrap();
        let err = read_labels_csv(&path).unwrap_err().to_string();
        assert!(err.contains("line 4") && err.contains("yesterday"), "{err}");
        std::fs::write(
            &path,
            "job_id,anomaly,start,end,node\n1,memleak,2025-01-01T00:00:00Z,2025-01-01T00:10:00Z,n1\n2,none,,\n4,hung,,\n",
        )
        .unwrap();
        let truths = read_labels_csv(&path).unwrap();
        assert_eq!(truths["2"], Truth::Labelled(vec![]));
        assert_eq!(truths["4"], Truth::Other("hung".into()));
        let Truth::Labelled(iv) = &truths["1"] else {
            panic!()
        };
        assert_eq!(iv[0].node.as_deref(), Some("n1"));
    }

    #[test]
    fn a_labels_fifo_is_refused_at_once_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("labels.csv");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // With no writer, opening a FIFO for reading waits for one: the test would hang.
        let started = std::time::Instant::now();
        let error = read_label_lines(&fifo).unwrap_err().to_string();
        assert!(error.contains("not a regular file"), "{error}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
