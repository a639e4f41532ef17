//! LDMS CSV store files into `telemetry`, and `jobsight import ldms-runs DIR [--labels FILE]`.
//!
//! The LDMS CSV store writes one file per sampler (`meminfo`, `vmstat`, `procstat`, ...) with the
//! header `#Time,Time_usec,ProducerName,component_id,job_id,app_id,<metric columns...>` and one row
//! per sample. Each metric becomes the long-format series `<sampler>.<column>` of its producer node.
//! Gauges (memory sizes, running processes) are stored as sampled. Cumulative counters (CPU
//! jiffies in `procstat`, event counts in `vmstat`) are stored as per-second rates under
//! `<sampler>.<column>_per_s`, computed between consecutive samples; a counter that goes down was
//! reset, and the new value counts as the increase since the reset, as Prometheus's `rate()` does.
//! The series every source shares (`cpu_user`, `mem_used_bytes`, ...) are derived beside them
//! ([`super::shared_series`]).
//!
//! `ldms-runs` imports a directory of runs in which each run directory (any directory holding a
//! `data/` folder) is one job on its producer node, as in the HPAS ExaMiniMD data set. The job id
//! is the label file's id for the run whose path ends with the label's `run_dir`, else the run's
//! path below the imported directory (and below `dataset/`) with `/` written as `__` (the label
//! file's own convention). Labels give each anomaly's start and end in
//! seconds after the run's first sample.
//!
//! Malformed rows (wrong field count, a value that is not a number) are skipped and reported with
//! file and line; the rest of the file is imported. A final line without a newline is skipped too:
//! it was cut off mid-write (every file of the HPAS archive ends so), and a number cut short would
//! otherwise be stored as a wrong value. Re-importing a run
//! replaces its parts.
//!
//! Reading a store file and turning its samples into series is this module's (the store importer,
//! `ldms_store`, reads the files through it too); importing a directory of runs is the child
//! module `runs`'s, and reading its labels file `labels`'s. The tests of all three are here.

mod labels;
mod runs;

pub use labels::{MAX_LABELS_BYTES, RunLabel, read_labels};
pub use runs::{LdmsImport, find_runs, import_runs};

use std::io::BufRead;
use std::path::{Path, PathBuf};

// `Sample` lives in a leaf module that `shared_series` can use without this one.
pub use super::ldms_sample::Sample;
use super::shared_series::SharedSeries;
use super::{Skipped, TelemetryBuilder};
use jobsight_warehouse::catalog::CatalogError;

/// The columns every LDMS CSV store file starts with.
const FIXED_COLUMNS: [&str; 6] = [
    "#Time",
    "Time_usec",
    "ProducerName",
    "component_id",
    "job_id",
    "app_id",
];

#[derive(Debug, thiserror::Error)]
pub enum LdmsError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not an LDMS CSV store file: {reason}")]
    Format { path: PathBuf, reason: String },
    #[error("{path} line {line}: {reason}")]
    Labels {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("{dir}: no run directories (directories with a data/ folder) found")]
    NoRuns { dir: PathBuf },
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("job {job_id}: cannot build a batch: {reason}")]
    Batch { job_id: String, reason: String },
    #[error(
        "runs {first} and {second} would both be job {job_id} (one would replace the other): \
         give them distinct run_dir entries in the labels file"
    )]
    SameJob {
        job_id: String,
        first: PathBuf,
        second: PathBuf,
    },
}

/// Whether a column of a sampler is a cumulative counter (stored as a rate) or a gauge.
pub fn is_counter(sampler: &str, column: &str) -> bool {
    match sampler {
        "procstat" => {
            !matches!(
                column,
                "cores_up" | "cpu_enabled" | "procs_running" | "procs_blocked"
            ) && !column.starts_with("per_core_cpu_enabled")
        }
        "vmstat" => !(column.starts_with("nr_") || column == "workingset_nodes"),
        _ => false,
    }
}

/// A parsed CSV store file.
#[derive(Debug, Default)]
pub struct SamplerFile {
    pub sampler: String,
    /// Metric columns (after the six fixed ones).
    pub columns: Vec<String>,
    pub samples: Vec<Sample>,
    pub skipped: Vec<Skipped>,
}

/// `1746588097.002099` and `2099` -> microseconds since the epoch, without going through f64.
fn parse_time(time: &str, usec: &str) -> Option<i64> {
    let secs: i64 = time.split('.').next()?.parse().ok()?;
    let usec: i64 = usec.trim().parse().ok()?;
    // A sampler's clock between 1970 and 2200: anything else (before 1970, year 8319) is a bad
    // line with its reason, not a time that wrapped or a partition centuries away.
    ((0..1_000_000).contains(&usec) && SAMPLE_EPOCH_S.contains(&secs))
        .then(|| secs * 1_000_000 + usec)
}

/// The sample times accepted: 1970-01-01 to 2200-01-01, UTC.
const SAMPLE_EPOCH_S: std::ops::RangeInclusive<i64> = 0..=7_258_118_400;

/// Parses one LDMS CSV store file into memory. `sampler` is the series prefix (the file's name).
///
/// A final line without its newline is treated as incomplete and skipped: the store writes whole
/// lines, so such a line was cut off mid-write, and a number cut short would still parse.
pub fn parse_file(
    reader: impl BufRead,
    path: &Path,
    sampler: &str,
) -> Result<SamplerFile, LdmsError> {
    let mut samples = Vec::new();
    let mut skipped = Vec::new();
    let columns = stream_file(reader, path, |_, s| samples.push(s), |s| skipped.push(s))?;
    Ok(SamplerFile {
        sampler: sampler.to_string(),
        columns,
        samples,
        skipped,
    })
}

/// Streams one LDMS CSV store file: checks the header, then hands each good row to
/// `on_sample(columns, sample)` and each bad one to `on_skip`, in file order, holding one line in
/// memory. `columns` are the metric columns (after the six fixed ones), which it also returns.
pub fn stream_file(
    mut reader: impl BufRead,
    path: &Path,
    mut on_sample: impl FnMut(&[String], Sample),
    mut on_skip: impl FnMut(Skipped),
) -> Result<Vec<String>, LdmsError> {
    let read_error = |source| LdmsError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut line = Vec::new();
    let format_error = |reason: String| LdmsError::Format {
        path: path.to_path_buf(),
        reason,
    };
    match super::read_line(&mut reader, &mut line, super::MAX_LINE_BYTES).map_err(read_error)? {
        super::Line::End => return Err(format_error("empty file".into())),
        super::Line::TooLong(bytes) => {
            return Err(format_error(format!(
                "the header is {bytes} bytes, longer than the {} a line may have",
                super::MAX_LINE_BYTES
            )));
        }
        super::Line::Read => {}
    }
    let header = String::from_utf8_lossy(&line).trim_end().to_string();
    let names: Vec<&str> = header.split(',').collect();
    if names.len() <= FIXED_COLUMNS.len() || names[..FIXED_COLUMNS.len()] != FIXED_COLUMNS {
        return Err(LdmsError::Format {
            path: path.to_path_buf(),
            reason: format!("the header must start with {}", FIXED_COLUMNS.join(",")),
        });
    }
    let columns: Vec<String> = names[FIXED_COLUMNS.len()..]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut number = 1;
    loop {
        let read =
            super::read_line(&mut reader, &mut line, super::MAX_LINE_BYTES).map_err(read_error)?;
        if read == super::Line::End {
            break;
        }
        number += 1;
        let terminated = line.last() == Some(&b'\n');
        let mut skip = |reason: String| {
            on_skip(Skipped {
                file: path.to_path_buf(),
                line: number,
                reason,
            })
        };
        if let super::Line::TooLong(bytes) = read {
            skip(format!(
                "a line of {bytes} bytes, longer than the {} a line may have",
                super::MAX_LINE_BYTES
            ));
            continue;
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            skip("not UTF-8".into());
            continue;
        };
        let text = text.trim_end();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        if !terminated {
            skip("last line has no newline: cut off mid-write".into());
            continue;
        }
        let fields: Vec<&str> = text.split(',').collect();
        if fields.len() != names.len() {
            skip(format!(
                "expected {} fields, found {} (truncated or malformed line)",
                names.len(),
                fields.len()
            ));
            continue;
        }
        let Some(ts_micros) = parse_time(fields[0], fields[1]) else {
            skip(format!("invalid time {:?},{:?}", fields[0], fields[1]));
            continue;
        };
        let values: Result<Vec<f64>, String> = fields[FIXED_COLUMNS.len()..]
            .iter()
            .zip(&columns)
            .map(|(f, name)| {
                f.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| format!("{name} is not a number: {f:?}"))
            })
            .collect();
        match values {
            Ok(values) => on_sample(
                &columns,
                Sample {
                    ts_micros,
                    node: fields[2].to_string(),
                    values,
                },
            ),
            Err(reason) => skip(reason),
        }
    }
    Ok(columns)
}

/// The stored name of a sampler's column: `<sampler>.<column>`, or `<sampler>.<column>_per_s`
/// for a counter stored as a rate.
pub fn metric_name(sampler: &str, column: &str) -> String {
    if is_counter(sampler, column) {
        format!("{sampler}.{column}_per_s")
    } else {
        format!("{sampler}.{column}")
    }
}

/// The per-second rate of a counter between two samples; a counter that went down was reset and
/// its new value is the increase since the reset (as Prometheus's `rate()` counts it). `None`
/// when time does not advance.
pub fn counter_rate(previous: (i64, f64), current: (i64, f64)) -> Option<f64> {
    let ((t0, v0), (t1, v1)) = (previous, current);
    (t1 > t0).then(|| {
        let increase = if v1 >= v0 { v1 - v0 } else { v1 };
        increase / ((t1 - t0) as f64 / 1e6)
    })
}

/// Appends a file's samples for one job to `out`: gauges as sampled, counters as per-second rates,
/// and the series every source shares that the sampler gives ([`SharedSeries`]). Samples must be
/// of one node and in time order (as the store writes them); a sample whose time does not advance
/// gives no rate.
pub fn push_series(file: &SamplerFile, job_id: &str, out: &mut TelemetryBuilder) {
    if let Some(shared) = SharedSeries::of(&file.sampler, &file.columns) {
        let mut previous: Option<&Sample> = None;
        for sample in &file.samples {
            shared.derive(previous, sample, |metric, value| {
                out.push(job_id, &sample.node, metric, sample.ts_micros, value)
            });
            if previous.is_none_or(|p| sample.ts_micros > p.ts_micros) {
                previous = Some(sample);
            }
        }
    }
    for (column_index, column) in file.columns.iter().enumerate() {
        let counter = is_counter(&file.sampler, column);
        let metric = metric_name(&file.sampler, column);
        let mut previous: Option<(i64, f64)> = None;
        for sample in &file.samples {
            let value = sample.values[column_index];
            if !counter {
                out.push(job_id, &sample.node, &metric, sample.ts_micros, value);
                continue;
            }
            if let Some(rate) = previous.and_then(|p| counter_rate(p, (sample.ts_micros, value))) {
                out.push(job_id, &sample.node, &metric, sample.ts_micros, rate);
            }
            if previous.is_none_or(|(t0, _)| sample.ts_micros > t0) {
                previous = Some((sample.ts_micros, value));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "#Time,Time_usec,ProducerName,component_id,job_id,app_id,user,procs_running\n\
        100.000001,1,n1,3,0,0,1000,2\n\
        101.000001,1,n1,3,0,0,1100,3\n\
        102.500001,500001,n1,3,0,0,50,3\n\
        103.000001,1,n1,3,0,0,abc,3\n\
        104.000001,1,n1,3\n\
        105.000001,1,n1,3,0,0,1200,3";

    proptest::proptest! {
        /// Any bytes as rows after a good header: no panic, every non-empty, non-comment row is a
        /// sample or a skipped row with a reason, and a well-formed row's time and values arrive
        /// exactly as written.
        #[test]
        fn every_row_is_a_sample_or_a_reason_and_values_arrive_unchanged(
            rows in proptest::collection::vec(
                proptest::collection::vec(proptest::num::u8::ANY, 0..60), 0..20),
            seconds in 0u32..2_000_000_000,
            micros in 0u32..1_000_000,
            user in -1e15f64..1e15,
        ) {
            let mut text = b"#Time,Time_usec,ProducerName,component_id,job_id,app_id,user\n".to_vec();
            let mut considered = 0;
            for row in &rows {
                let row: Vec<u8> = row.iter().copied().filter(|&b| b != b'\n').collect();
                // As the parser sees it: bytes that are not UTF-8 are a skipped line whatever
                // they hold; otherwise blank lines and comments are not lines of data.
                let counts = match std::str::from_utf8(&row) {
                    Err(_) => true,
                    Ok(text) => {
                        let text = text.trim_end();
                        !text.is_empty() && !text.starts_with('#')
                    }
                };
                if counts {
                    considered += 1;
                }
                text.extend_from_slice(&row);
                text.push(b'\n');
            }
            text.extend_from_slice(format!("{seconds}.{micros:06},{micros},n9,1,0,0,{user:?}\n").as_bytes());
            let file = parse_file(&text[..], Path::new("s"), "s").unwrap();
            proptest::prop_assert_eq!(file.samples.len() + file.skipped.len(), considered + 1);
            proptest::prop_assert!(file.skipped.iter().all(|s| !s.reason.is_empty()));
            let last = file.samples.last().unwrap();
            proptest::prop_assert_eq!(last.ts_micros, i64::from(seconds) * 1_000_000 + i64::from(micros));
            proptest::prop_assert_eq!(last.values[0].to_bits(), user.to_bits());
        }
    }

    #[test]
    fn parses_and_reports_malformed_rows() {
        let file = parse_file(CSV.as_bytes(), Path::new("procstat"), "procstat").unwrap();
        assert_eq!(file.columns, ["user", "procs_running"]);
        assert_eq!(file.samples.len(), 3);
        assert_eq!(file.samples[0].ts_micros, 100_000_001);
        let reasons: Vec<(usize, &str)> = file
            .skipped
            .iter()
            .map(|s| (s.line, s.reason.as_str()))
            .collect();
        assert_eq!(
            reasons,
            [
                (5, "user is not a number: \"abc\""),
                (
                    6,
                    "expected 8 fields, found 4 (truncated or malformed line)"
                ),
                (7, "last line has no newline: cut off mid-write")
            ]
        );
    }

    #[test]
    fn counters_become_rates_with_resets_and_gauges_stay() {
        let file = parse_file(CSV.as_bytes(), Path::new("procstat"), "procstat").unwrap();
        let mut out = TelemetryBuilder::default();
        push_series(&file, "j", &mut out);
        let batch = out.finish().unwrap();
        let values = batch
            .column(4)
            .as_any()
            .downcast_ref::<datafusion::arrow::array::Float64Array>()
            .unwrap();
        // Two rates for `user` (100 per 1 s; a reset to 50 over 1.5 s), three gauge samples.
        assert_eq!(
            values.values().to_vec(),
            vec![100.0, 50.0 / 1.5, 2.0, 3.0, 3.0]
        );
    }

    #[test]
    fn rejects_files_that_are_not_ldms() {
        let err = parse_file("a,b,c\n1,2,3\n".as_bytes(), Path::new("x"), "x").unwrap_err();
        assert!(
            err.to_string().contains("not an LDMS CSV store file"),
            "{err}"
        );
        assert!(parse_file("".as_bytes(), Path::new("x"), "x").is_err());
    }

    #[test]
    fn labels_are_validated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.csv");
        std::fs::write(
            &path,
            "job_id,run_dir,app,mode,anomaly,start_s,end_s,params\nj,,a,single,memleak,1,2,\n",
        )
        .unwrap();
        let err = read_labels(&path).unwrap_err().to_string();
        assert!(
            err.contains("line 2") && err.contains("must not be empty"),
            "{err}"
        );
        std::fs::write(
            &path,
            "job_id,run_dir,app,mode,anomaly,start_s,end_s,params\nj,d/r,a,single,memleak,x,2,\n",
        )
        .unwrap();
        let err = read_labels(&path).unwrap_err().to_string();
        assert!(err.contains("not a number of seconds"), "{err}");
        std::fs::write(&path, "a,b\n").unwrap();
        assert!(
            read_labels(&path)
                .unwrap_err()
                .to_string()
                .contains("expected the header")
        );
    }

    /// Two runs that one label would name alike are refused (one would replace the other's
    /// part), and a label that names no run is reported.
    #[test]
    fn runs_get_distinct_jobs_and_stray_labels_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        let good = "#Time,Time_usec,ProducerName,component_id,job_id,app_id,user,procs_running\n\
                    100.000001,1,n1,3,0,0,1000,2\n101.000001,1,n1,3,0,0,1100,3\n";
        for run in ["a/r1", "b/r1", "c/r2"] {
            std::fs::create_dir_all(runs.join(run).join("data")).unwrap();
            std::fs::write(runs.join(run).join("data/procstat"), good).unwrap();
        }
        let labels = dir.path().join("labels.csv");
        let header = "job_id,run_dir,app,mode,anomaly,start_s,end_s,params\n";
        std::fs::write(&labels, format!("{header}j1,r1,app,single,none,0,1,\n")).unwrap();
        let data = dir.path().join("data");
        let e = import_runs(&data, &runs, Some(&labels), "c", |_, _, _| {})
            .unwrap_err()
            .to_string();
        assert!(e.contains("would both be job j1"), "{e}");

        std::fs::write(
            &labels,
            format!("{header}j1,a/r1,app,single,none,0,1,\nj9,nowhere,app,single,none,0,1,\n"),
        )
        .unwrap();
        // A run whose sampler file is not an LDMS file is set aside; the others are imported.
        std::fs::create_dir_all(runs.join("d/r3/data")).unwrap();
        std::fs::write(runs.join("d/r3/data/procstat"), "not,an,ldms,file\n").unwrap();
        let done = import_runs(&data, &runs, Some(&labels), "c", |_, _, _| {}).unwrap();
        assert_eq!(done.runs, 3);
        assert!(
            done.skipped
                .iter()
                .any(|s| s.file.ends_with("d/r3") && s.reason.starts_with("run not imported")),
            "{:?}",
            done.skipped
        );
        let stray: Vec<&str> = done
            .skipped
            .iter()
            .map(|s| s.reason.as_str())
            .filter(|r| r.contains("matches no run"))
            .collect();
        assert_eq!(stray.len(), 1, "{:?}", done.skipped);
        assert!(
            stray[0].contains("job j9 (run_dir nowhere)"),
            "{}",
            stray[0]
        );
    }

    /// Times outside 1970–2200 and label bounds that are not finite offsets are reasons, not
    /// other numbers.
    #[test]
    fn out_of_range_times_and_bounds_are_refused() {
        assert_eq!(
            parse_time("1700000000.5", "500000"),
            Some(1_700_000_000_500_000)
        );
        for (time, usec) in [
            ("-5", "0"),
            ("200000000000", "0"),
            ("99999999999999999", "0"),
            ("1700000000", "1000000"),
        ] {
            assert_eq!(parse_time(time, usec), None, "{time}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.csv");
        for bound in ["nan", "1e300", "-1", "inf"] {
            std::fs::write(
                &path,
                format!("job_id,run_dir,app,mode,anomaly,start_s,end_s,params\nj,d/r,a,single,memleak,{bound},2,\n"),
            )
            .unwrap();
            let err = read_labels(&path).unwrap_err().to_string();
            assert!(
                err.contains("not a number of seconds between 0 and 3.2e9"),
                "{bound}: {err}"
            );
        }
    }

    #[test]
    fn counter_rules() {
        assert!(is_counter("procstat", "per_core_user7"));
        assert!(!is_counter("procstat", "per_core_cpu_enabled7"));
        assert!(is_counter("vmstat", "pgfault"));
        assert!(!is_counter("vmstat", "nr_free_pages"));
        assert!(!is_counter("meminfo", "AnonPages"));
    }
}
