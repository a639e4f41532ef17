//! What a cross-validation writes on request for a reader outside jobsight: each fold's
//! feature rows (`--export DIR`, for a side-by-side run of another library on exactly the same
//! data) and every judged window's verdict as CSV (`--verdicts FILE`).

use std::path::Path;

use crate::ModelError;
use crate::labelled::Labelled;
use crate::train::Diagnosis;

/// Rows one fold of a cross-validation was trained and tested on, for a side-by-side run of
/// another library on exactly the same data (`--export DIR`).
pub(super) fn export_fold(
    dir: &Path,
    fold: usize,
    model: &Diagnosis,
    data: &Labelled,
    train: &[usize],
    test: &[usize],
) -> Result<(), ModelError> {
    std::fs::create_dir_all(dir).map_err(|e| ModelError::write(dir, e))?;
    for (name, positions) in [("train", train), ("test", test)] {
        let path = dir.join(format!("fold{fold}-{name}.csv"));
        let rows: Vec<usize> = positions.iter().map(|&p| data.rows[p]).collect();
        let columns = crate::namer::columns(&model.prepared, model.namer.as_ref());
        let x = columns.matrix(&data.windows, &rows);
        let n = columns.features.len();
        let mut text = String::from("label");
        for f in &columns.features {
            text.push(',');
            text.push_str(&f.replace(',', "_"));
        }
        text.push('\n');
        for (i, &p) in positions.iter().enumerate() {
            text.push_str(&data.labels[p].to_string());
            for v in &x[i * n..(i + 1) * n] {
                text.push(',');
                text.push_str(&v.to_string());
            }
            text.push('\n');
        }
        std::fs::write(&path, text).map_err(|e| ModelError::write(&path, e))?;
    }
    Ok(())
}

/// Writes every judged window of a cross-validation to `path` as CSV, in the order judged:
/// `fold,job_id,node,start,end,truth,verdict,top_class,score`. `verdict` (one of
/// `verdict_classes`, the model's) is what the figures count (`unknown` below the votes'
/// threshold); `top_class` the class with most votes and `score` its share of them (diagnosis),
/// or `anomalous`/`healthy` and the anomaly score, flagged above 1 (anomaly score). Job ids and
/// node names come from the telemetry, so fields are quoted as CSV requires.
pub(super) fn write_verdicts(
    path: &Path,
    verdict_classes: &[String],
    data: &Labelled,
    judged: &[(usize, usize, u32, f64)],
    verdicts: &[Option<u32>],
) -> Result<(), ModelError> {
    let name = |classes: &[String], i: u32| classes.get(i as usize).cloned().unwrap_or_default();
    let time = |us: i64| {
        chrono::DateTime::<chrono::Utc>::from_timestamp_micros(us)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
            .unwrap_or_default()
    };
    let mut text = String::from("fold,job_id,node,start,end,truth,verdict,top_class,score\n");
    for (&(fold, p, top, score), verdict) in judged.iter().zip(verdicts) {
        let key = &data.windows.keys[data.rows[p]];
        let verdict = verdict.map_or("unknown".to_string(), |v| name(verdict_classes, v));
        let fields = [
            (fold + 1).to_string(),
            csv_field(&key.job_id),
            csv_field(&key.node),
            time(key.start_us),
            time(key.end_us),
            name(&data.classes, data.labels[p]),
            verdict,
            name(verdict_classes, top),
            format!("{score:.4}"),
        ];
        text.push_str(&fields.join(","));
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| ModelError::write(path, e))
}

/// `field` as one CSV field: quoted, with quotes doubled, when it holds a comma, a quote or a
/// line break.
fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}
