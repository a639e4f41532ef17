//! Day parts shared by many units: one part per table and day holding every unit an importer
//! wrote that day (a Pegasus import's runs), where a part per unit would leave thousands of
//! small files for every reader to open.
//!
//! A unit is identified by a key column (`workflow_id`). [`replace_rows`] writes the day's part
//! with the new units' rows and every row of the units it already held, less the rows of the
//! units written again: importing a unit twice replaces it, as writing its own part did.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use datafusion::arrow::array::{Array, AsArray, BooleanArray};
use datafusion::arrow::compute::{cast, filter_record_batch};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::record_batch::RecordBatch;

use super::compact::part_batches;
use super::{CatalogError, Table, part_files, part_name, remove_part_file, write_part};

/// The values of column `key` of `batch` as text (`None` for a null), or an error naming the
/// table when the batch has no such column.
fn keys_of(
    batch: &RecordBatch,
    table: Table,
    key: &str,
) -> Result<Vec<Option<String>>, CatalogError> {
    let schema_error = |reason: String| CatalogError::Schema {
        table: table.name(),
        reason,
    };
    let column = batch
        .column_by_name(key)
        .ok_or_else(|| schema_error(format!("no key column {key}")))?;
    let text = cast(column, &DataType::Utf8).map_err(|e| schema_error(e.to_string()))?;
    let text = text.as_string::<i32>();
    Ok((0..text.len())
        .map(|i| text.is_valid(i).then(|| text.value(i).to_string()))
        .collect())
}

/// Writes part `name` of `table` for `day` holding `batches` and the rows that the day's part
/// `name` and the parts `folds` picks held before, less those whose `key` is one of `batches`'
/// keys. The folded parts are removed after the part is committed: an importer that once wrote a
/// part per unit (`pegasus-<run>`) is folded into its day part the next time it writes that day.
/// A crash between the commit and the removal leaves a folded part whose units the day part
/// already holds; readers see those rows twice until the next write of the day, which keeps the
/// day part's copy and drops the leftover's. Returns the path written.
pub fn replace_rows(
    data: &Path,
    table: Table,
    day: NaiveDate,
    name: &str,
    key: &str,
    batches: &[RecordBatch],
    folds: impl Fn(&str) -> bool,
) -> Result<PathBuf, CatalogError> {
    let schema = table.schema();
    let mut replaced: HashSet<String> = HashSet::new();
    for batch in batches {
        replaced.extend(keys_of(batch, table, key)?.into_iter().flatten());
    }
    let files = part_files(data, table, day, None).map_err(|source| CatalogError::Create {
        path: super::partition_dir(data, table, day),
        source,
    })?;
    // The day part first: when a crash left a folded part beside it, its rows are those the
    // day part already holds, and the keys seen in the day part win.
    let (mut inputs, folded): (Vec<PathBuf>, Vec<PathBuf>) = files
        .into_iter()
        .filter(|p| part_name(p).is_some_and(|n| n == name || folds(n)))
        .partition(|p| part_name(p) == Some(name));
    inputs.extend(folded.iter().cloned());
    let mut kept: Vec<RecordBatch> = Vec::new();
    let mut in_day_part: HashSet<String> = HashSet::new();
    for input in &inputs {
        let from_day_part = part_name(input) == Some(name);
        for batch in part_batches(input, table, &schema)? {
            let batch = batch?;
            let keys = keys_of(&batch, table, key)?;
            // Rows of a unit written again go; so do a folded part's rows of a unit the day part
            // already holds (a leftover of a crash).
            let keep: BooleanArray = keys
                .iter()
                .map(|k| {
                    Some(k.as_ref().is_none_or(|k| {
                        !replaced.contains(k) && (from_day_part || !in_day_part.contains(k))
                    }))
                })
                .collect();
            if from_day_part {
                in_day_part.extend(keys.into_iter().flatten());
            }
            let batch = filter_record_batch(&batch, &keep).map_err(|e| CatalogError::Schema {
                table: table.name(),
                reason: e.to_string(),
            })?;
            if batch.num_rows() > 0 {
                kept.push(batch);
            }
        }
    }
    kept.extend(batches.iter().cloned());
    let written = write_part(data, table, day, name, &kept)?;
    for path in &folded {
        remove_part_file(path)?;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::rows::WorkflowTaskRow;
    use datafusion::arrow::array::StringArray;

    fn tasks(run: &str, ids: &[&str]) -> RecordBatch {
        let rows: Vec<WorkflowTaskRow> = ids
            .iter()
            .map(|id| WorkflowTaskRow {
                workflow_id: run.into(),
                task_id: (*id).into(),
                ..Default::default()
            })
            .collect();
        WorkflowTaskRow::batch(&rows).unwrap()
    }

    /// Every (run, task) of the day's partition, over all its files, sorted; and the part names.
    fn day_rows(data: &Path, day: NaiveDate) -> (Vec<(String, String)>, Vec<String>) {
        let mut rows = Vec::new();
        let mut names = Vec::new();
        for path in part_files(data, Table::WorkflowTasks, day, None).unwrap() {
            names.push(part_name(&path).unwrap().to_string());
            let schema = Table::WorkflowTasks.schema();
            for batch in part_batches(&path, Table::WorkflowTasks, &schema).unwrap() {
                let batch = batch.unwrap();
                let column = |c: &str| {
                    batch
                        .column_by_name(c)
                        .unwrap()
                        .as_any()
                        .downcast_ref::<StringArray>()
                        .unwrap()
                        .clone()
                };
                let (run, task) = (column("workflow_id"), column("task_id"));
                rows.extend(
                    (0..batch.num_rows()).map(|i| (run.value(i).into(), task.value(i).into())),
                );
            }
        }
        rows.sort();
        (rows, names)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn runs_are_replaced_kept_and_per_run_parts_folded() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let day = NaiveDate::from_ymd_opt(2022, 8, 9).unwrap();
        let legacy = |n: &str| n.starts_with("pegasus-");
        // An older import's part per run.
        write_part(
            data,
            Table::WorkflowTasks,
            day,
            "pegasus-c",
            &[tasks("c", &["c1"])],
        )
        .unwrap();
        let write = |batches: &[RecordBatch]| {
            replace_rows(
                data,
                Table::WorkflowTasks,
                day,
                "pegasus",
                "workflow_id",
                batches,
                legacy,
            )
            .unwrap()
        };
        write(&[tasks("a", &["a1", "a2"]), tasks("b", &["b1"])]);
        assert_eq!(
            day_rows(data, day),
            (
                pairs(&[("a", "a1"), ("a", "a2"), ("b", "b1"), ("c", "c1")]),
                vec!["pegasus".to_string()]
            ),
            "the per-run part is folded in and removed"
        );
        // Run a again with one task fewer: replaced; b and c kept.
        write(&[tasks("a", &["a9"])]);
        assert_eq!(
            day_rows(data, day).0,
            pairs(&[("a", "a9"), ("b", "b1"), ("c", "c1")])
        );
        // A crash after the commit left a per-run part the day part holds: dropped, not doubled;
        // a part of another writer is neither read nor removed.
        write_part(
            data,
            Table::WorkflowTasks,
            day,
            "pegasus-b",
            &[tasks("b", &["b1"])],
        )
        .unwrap();
        write_part(
            data,
            Table::WorkflowTasks,
            day,
            "slurm",
            &[tasks("s", &["s1"])],
        )
        .unwrap();
        write(&[tasks("d", &["d1"])]);
        assert_eq!(
            day_rows(data, day),
            (
                pairs(&[
                    ("a", "a9"),
                    ("b", "b1"),
                    ("c", "c1"),
                    ("d", "d1"),
                    ("s", "s1")
                ]),
                vec!["pegasus".to_string(), "slurm".to_string()]
            )
        );
    }
}
