//! A production LDMS CSV store attributed to jobs: `jobsight import ldms-store FILE|DIR...`.
//!
//! On a production system the LDMS CSV store holds node-level streams: one file per sampler (often
//! rolled over as `<sampler>.<epoch>`), rows from every node interleaved in time order, with no
//! reliable job id (the `job_id` column is only filled where a job sampler runs). Jobs come from
//! the warehouse's `jobs` table (sacct, SWF, ...) with their nodes and run time, and each sample
//! belongs to every job that ran on its node at its time.
//!
//! That attribution is a sorted merge, not a join: per node, the jobs sorted by start and a cursor
//! that moves forward with the stream's time keep the set of jobs running now (usually one, several
//! on shared nodes). Each sample costs a look at that set, so the work is proportional to samples
//! plus jobs, and no intermediate "samples × jobs" table is ever built. A stream that goes back in
//! time (two files concatenated) only resets its node's cursor. Counters become per-second rates
//! along the whole node stream (so a job's first sample has a rate from the sample before its
//! start), with resets handled as in [`super::ldms`].
//!
//! Output: `telemetry` rows in the day partition of each job's end, in parts named after the store
//! file, so importing the same file again replaces what it wrote. Malformed lines are skipped and
//! reported, samples of no job are counted, nothing is dropped silently.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::TimestampMicrosecondType;

use super::ldms::{self, LdmsError, Sample};
use super::shared_series::SharedSeries;
use super::{Skipped, TelemetrySink};
use jobsight_base::{safe_fs, stats};
use jobsight_warehouse::catalog::{self, Table};

/// One job's time on one node.
#[derive(Debug, Clone, PartialEq)]
pub struct JobWindow {
    pub job_id: String,
    pub node: String,
    pub start_us: i64,
    pub end_us: i64,
    /// The job's partition (day of its end).
    pub day: NaiveDate,
}

/// The jobs of one node sorted by start, and which of them run at the stream's current time.
#[derive(Debug, Default)]
struct NodeCursor {
    /// Indices into the job windows, sorted by start.
    by_start: Vec<usize>,
    next: usize,
    active: Vec<usize>,
    last_ts: i64,
}

impl NodeCursor {
    /// The windows that contain `ts`. Amortised O(1) per call while time moves forward.
    fn at(&mut self, windows: &[JobWindow], ts: i64) -> &[usize] {
        if ts < self.last_ts {
            // The stream went back in time: start over for this node.
            self.next = 0;
            self.active.clear();
        }
        self.last_ts = ts;
        while let Some(&w) = self.by_start.get(self.next) {
            if windows[w].start_us > ts {
                break;
            }
            self.active.push(w);
            self.next += 1;
        }
        self.active.retain(|&w| windows[w].end_us >= ts);
        &self.active
    }
}

/// One node's place in the stream: its job cursor and, per column, the last counter reading.
#[derive(Debug, Default)]
struct NodeState {
    cursor: NodeCursor,
    previous: Vec<Option<(i64, f64)>>,
    /// The node's last sample, for the shared series' shares and rates.
    last: Option<Sample>,
}

/// What attributing one stream did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Attributed {
    pub samples: u64,
    /// Telemetry rows emitted (a sample gives one row per column and job).
    pub rows: u64,
    /// Samples of a node and time at which no known job ran.
    pub samples_without_job: u64,
    pub skipped: Vec<Skipped>,
}

/// Streams one store file and hands every (window, node, metric, ts, value) to `emit`.
pub fn attribute_stream(
    reader: impl std::io::BufRead,
    path: &Path,
    sampler: &str,
    windows: &[JobWindow],
    mut emit: impl FnMut(&JobWindow, &str, &str, i64, f64),
) -> Result<Attributed, LdmsError> {
    let mut nodes: HashMap<&str, NodeState> = HashMap::new();
    for (i, w) in windows.iter().enumerate() {
        nodes
            .entry(w.node.as_str())
            .or_default()
            .cursor
            .by_start
            .push(i);
    }
    for state in nodes.values_mut() {
        state.cursor.by_start.sort_by_key(|&i| windows[i].start_us);
    }
    let mut out = Attributed::default();
    let mut skipped = Vec::new();
    // Names and counter flags of the columns, and the shared series they give, resolved at the
    // first sample.
    let mut metrics: Vec<(String, bool)> = Vec::new();
    let mut shared: Option<SharedSeries> = None;
    let on_sample = |columns: &[String], sample: Sample| {
        if metrics.len() != columns.len() {
            metrics = columns
                .iter()
                .map(|c| (ldms::metric_name(sampler, c), ldms::is_counter(sampler, c)))
                .collect();
            shared = SharedSeries::of(sampler, columns);
        }
        out.samples += 1;
        let Some(state) = nodes.get_mut(sample.node.as_str()) else {
            out.samples_without_job += 1;
            return;
        };
        if state.previous.len() != columns.len() {
            state.previous = vec![None; columns.len()];
        }
        // Values of this sample: gauges as they are, counters as rates (None for the first
        // reading of a node, or when time did not advance).
        let values: Vec<Option<f64>> = metrics
            .iter()
            .zip(&sample.values)
            .zip(state.previous.iter_mut())
            .map(|(((_, counter), &v), previous)| {
                if !counter {
                    return Some(v);
                }
                let rate = previous.and_then(|p| ldms::counter_rate(p, (sample.ts_micros, v)));
                if previous.is_none_or(|(t0, _)| sample.ts_micros > t0) {
                    *previous = Some((sample.ts_micros, v));
                }
                rate
            })
            .collect();
        let mut derived: Vec<(&str, f64)> = Vec::new();
        if let Some(shared) = &shared {
            shared.derive(state.last.as_ref(), &sample, |name, v| {
                derived.push((name, v))
            });
        }
        let active = state.cursor.at(windows, sample.ts_micros);
        if active.is_empty() {
            out.samples_without_job += 1;
        }
        for &w in active {
            let measured = metrics
                .iter()
                .zip(&values)
                .filter_map(|((metric, _), value)| Some((metric.as_str(), (*value)?)));
            for (metric, value) in measured.chain(derived.iter().copied()) {
                emit(&windows[w], &sample.node, metric, sample.ts_micros, value);
                out.rows += 1;
            }
        }
        if shared.is_some()
            && state
                .last
                .as_ref()
                .is_none_or(|l| sample.ts_micros > l.ts_micros)
        {
            state.last = Some(sample);
        }
    };
    ldms::stream_file(reader, path, on_sample, |s| skipped.push(s))?;
    out.skipped = skipped;
    Ok(out)
}

/// The sampler a store file holds: its name, without a rollover suffix `.<digits>`.
pub fn sampler_of(path: &Path) -> String {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    match name.rsplit_once('.') {
        Some((base, suffix))
            if !suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_digit()) =>
        {
            base.to_string()
        }
        _ => name,
    }
}

/// A stable part name for a store file: sampler plus a hash of its path (FNV-1a), so that two
/// files of the same sampler in different directories never replace each other's parts.
fn part_prefix(path: &Path, sampler: &str) -> String {
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let hash = stats::fnv1a(absolute.as_os_str().as_encoded_bytes());
    format!("ldms-store-{sampler}-{hash}")
}

/// Every file named on the command line, and every regular file below the directories named.
pub fn store_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = BTreeSet::new();
    // The paths given are followed (a person typed them); below them nothing is, and links,
    // FIFOs, sockets and devices there are not store files (`files_below`).
    for p in paths {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => files.extend(safe_fs::files_below(p)),
            _ => {
                files.insert(p.clone());
            }
        }
    }
    files.into_iter().collect()
}

/// What importing store files did.
#[derive(Debug, Default)]
pub struct StoreImport {
    pub files: usize,
    pub samples: u64,
    pub rows: u64,
    pub samples_without_job: u64,
    pub skipped: Vec<Skipped>,
}

/// Imports every file in `files` against the job windows `windows`.
pub fn import_store(
    data: &Path,
    files: &[PathBuf],
    windows: &[JobWindow],
    mut progress: impl FnMut(usize, usize, &Path),
) -> Result<StoreImport, LdmsError> {
    let days: BTreeSet<NaiveDate> = windows.iter().map(|w| w.day).collect();
    let mut summary = StoreImport::default();
    for (i, path) in files.iter().enumerate() {
        progress(i + 1, files.len(), path);
        let sampler = sampler_of(path);
        let prefix = part_prefix(path, &sampler);
        for day in &days {
            catalog::remove_parts(data, Table::Telemetry, *day, &prefix)?;
        }
        // A FIFO or device given by name would block the import: only regular files are read.
        let file = safe_fs::open_regular(path, safe_fs::Links::Follow).map_err(|source| {
            LdmsError::Read {
                path: path.clone(),
                source,
            }
        })?;
        let mut sink = TelemetrySink::new(data, &prefix, 4 * catalog::ROW_GROUP_ROWS);
        let mut write_error = None;
        let done = attribute_stream(
            std::io::BufReader::with_capacity(1 << 20, file),
            path,
            &sampler,
            windows,
            |w, node, metric, ts, value| {
                if write_error.is_none()
                    && let Err(e) = sink.push(w.day, &w.job_id, node, metric, ts, value)
                {
                    write_error = Some(e);
                }
            },
        )?;
        if let Some(e) = write_error {
            return Err(e.into());
        }
        sink.finish()?;
        summary.files += 1;
        summary.samples += done.samples;
        summary.rows += done.rows;
        summary.samples_without_job += done.samples_without_job;
        summary.skipped.extend(done.skipped);
    }
    Ok(summary)
}

/// The job windows of every job in the warehouse that ran on named nodes (of `cluster`, when
/// given). Jobs whose node list does not parse are reported, not used.
pub async fn job_windows(
    data: &Path,
    cluster: Option<&str>,
) -> Result<(Vec<JobWindow>, Vec<String>), jobsight_warehouse::query::QueryError> {
    let filter = match cluster {
        Some(c) => format!(" AND cluster = '{}'", c.replace('\'', "''")),
        None => String::new(),
    };
    let batches = jobsight_warehouse::query::run(
        data,
        &format!(
            "SELECT job_id, nodes, start, \"end\" FROM jobs WHERE start IS NOT NULL AND nodes IS NOT NULL{filter}"
        ),
    )
    .await?;
    let mut windows = Vec::new();
    let mut problems = Vec::new();
    for batch in &batches {
        let text = |i: usize| {
            datafusion::arrow::compute::cast(
                batch.column(i),
                &datafusion::arrow::datatypes::DataType::Utf8,
            )
        };
        let (Ok(ids), Ok(nodes)) = (text(0), text(1)) else {
            problems.push("jobs table has unexpected column types".to_string());
            continue;
        };
        let (ids, nodes) = (ids.as_string::<i32>(), nodes.as_string::<i32>());
        let starts = batch.column(2).as_primitive::<TimestampMicrosecondType>();
        let ends = batch.column(3).as_primitive::<TimestampMicrosecondType>();
        for row in 0..batch.num_rows() {
            if ids.is_null(row) || nodes.is_null(row) || starts.is_null(row) || ends.is_null(row) {
                continue;
            }
            let (job_id, list) = (ids.value(row), nodes.value(row));
            let end_us = ends.value(row);
            let Some(day) = chrono::DateTime::from_timestamp_micros(end_us).map(|t| t.date_naive())
            else {
                continue;
            };
            match slurm_hooks::hostlist::expand(list) {
                Ok(hosts) => windows.extend(hosts.into_iter().map(|node| JobWindow {
                    job_id: job_id.to_string(),
                    node,
                    start_us: starts.value(row),
                    end_us,
                    day,
                })),
                Err(e) => problems.push(format!("job {job_id}: node list {list:?}: {e}")),
            }
        }
    }
    Ok((windows, problems))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A link loop below the given folder (`a -> .`) ends the walk instead of looping for ever;
    /// links and FIFOs below it are not store files; a given file is taken as given.
    #[test]
    fn the_walk_follows_no_link_below_what_it_was_given() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        std::fs::create_dir_all(store.join("sub")).unwrap();
        std::fs::write(store.join("meminfo"), "x").unwrap();
        std::fs::write(store.join("sub/procstat"), "x").unwrap();
        std::os::unix::fs::symlink(".", store.join("a")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", store.join("passwd")).unwrap();
        jobsight_base::test_support::mkfifo(&store.join("fifo"));
        assert_eq!(
            store_files(std::slice::from_ref(&store)),
            [store.join("meminfo"), store.join("sub/procstat")]
        );
    }

    fn day() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()
    }

    fn window(job: &str, node: &str, start: i64, end: i64) -> JobWindow {
        JobWindow {
            job_id: job.into(),
            node: node.into(),
            start_us: start * 1_000_000,
            end_us: end * 1_000_000,
            day: day(),
        }
    }

    type Row = (String, String, String, i64, u64);

    fn run(csv: &str, sampler: &str, windows: &[JobWindow]) -> (Vec<Row>, Attributed) {
        let mut rows = Vec::new();
        let done = attribute_stream(
            csv.as_bytes(),
            Path::new("store/meminfo"),
            sampler,
            windows,
            |w, node, metric, ts, v| {
                rows.push((
                    w.job_id.clone(),
                    node.into(),
                    metric.into(),
                    ts,
                    v.to_bits(),
                ))
            },
        )
        .unwrap();
        rows.sort();
        (rows, done)
    }

    /// The obvious, slow answer: every sample against every window of its node.
    fn nested_loop(samples: &[(i64, String, f64)], windows: &[JobWindow]) -> Vec<Row> {
        let mut rows = Vec::new();
        for (ts, node, v) in samples {
            for w in windows {
                if &w.node == node && w.start_us <= *ts && *ts <= w.end_us {
                    rows.push((
                        w.job_id.clone(),
                        node.clone(),
                        "meminfo.MemFree".to_string(),
                        *ts,
                        v.to_bits(),
                    ));
                }
            }
        }
        rows.sort();
        rows
    }

    fn csv_of(samples: &[(i64, String, f64)]) -> String {
        let mut csv =
            "#Time,Time_usec,ProducerName,component_id,job_id,app_id,MemFree\n".to_string();
        for (ts, node, v) in samples {
            csv.push_str(&format!(
                "{}.{:06},{},{node},1,0,0,{v}\n",
                ts / 1_000_000,
                ts % 1_000_000,
                ts % 1_000_000
            ));
        }
        csv
    }

    #[test]
    fn samples_go_to_the_jobs_running_on_their_node() {
        // n1 runs a then b; n2 runs c, which shares n1 with b for a while; n3 runs nothing.
        let windows = [
            window("a", "n1", 100, 104),
            window("b", "n1", 105, 110),
            window("c", "n2", 100, 110),
            window("c", "n1", 108, 110),
        ];
        let mut samples = Vec::new();
        for t in 100..=111 {
            for node in ["n1", "n2", "n3"] {
                samples.push((t * 1_000_000, node.to_string(), t as f64));
            }
        }
        let (rows, done) = run(&csv_of(&samples), "meminfo", &windows);
        assert_eq!(rows, nested_loop(&samples, &windows));
        let count = |job: &str| rows.iter().filter(|r| r.0 == job).count();
        assert_eq!((count("a"), count("b"), count("c")), (5, 6, 11 + 3));
        // n3 always, n1 and n2 at 111.
        assert_eq!(done.samples_without_job, 12 + 2);
        assert_eq!(done.samples, 36);
    }

    #[test]
    fn counters_are_rates_along_the_node_stream_with_resets() {
        let csv = "#Time,Time_usec,ProducerName,component_id,job_id,app_id,user\n\
                   99.000000,0,n1,1,0,0,1000\n\
                   100.000000,0,n1,1,0,0,1100\n\
                   102.000000,0,n1,1,0,0,1300\n\
                   103.000000,0,n1,1,0,0,40\n";
        let (rows, _) = run(csv, "procstat", &[window("a", "n1", 100, 200)]);
        let values: Vec<(i64, f64)> = rows
            .iter()
            .map(|r| (r.3 / 1_000_000, f64::from_bits(r.4)))
            .collect();
        // The job's first rate uses the sample before its start; the reset counts from zero.
        assert_eq!(values, vec![(100, 100.0), (102, 100.0), (103, 40.0)]);
        assert_eq!(rows[0].2, "procstat.user_per_s");
    }

    #[test]
    fn shared_series_come_with_the_columns_and_use_the_sample_before_the_job() {
        let csv = "#Time,Time_usec,ProducerName,component_id,job_id,app_id,MemTotal,MemAvailable\n\
                   99.000000,0,n1,1,0,0,1000,900\n\
                   100.000000,0,n1,1,0,0,1000,700\n";
        let (rows, _) = run(csv, "meminfo", &[window("a", "n1", 100, 200)]);
        let names: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
        assert_eq!(
            names,
            [
                "mem_available_bytes",
                "mem_used_bytes",
                "meminfo.MemAvailable",
                "meminfo.MemTotal"
            ]
        );
        assert_eq!(f64::from_bits(rows[1].4), 300.0 * 1024.0);
        let csv = "#Time,Time_usec,ProducerName,component_id,job_id,app_id,user,sys,idle,iowait\n\
                   99.000000,0,n1,1,0,0,0,0,0,0\n\
                   100.000000,0,n1,1,0,0,30,10,50,10\n";
        let (rows, _) = run(csv, "procstat", &[window("a", "n1", 100, 200)]);
        let user = rows.iter().find(|r| r.2 == "cpu_user").unwrap();
        assert_eq!((user.3, f64::from_bits(user.4)), (100_000_000, 0.3));
    }

    #[test]
    fn a_stream_that_goes_back_in_time_is_still_attributed() {
        let windows = [window("a", "n1", 100, 102), window("b", "n1", 103, 105)];
        let mut samples: Vec<(i64, String, f64)> = (100..=105)
            .map(|t| (t * 1_000_000, "n1".to_string(), t as f64))
            .collect();
        // A second file's worth of the same node, concatenated.
        samples.extend(samples.clone());
        let (rows, _) = run(&csv_of(&samples), "meminfo", &windows);
        assert_eq!(rows, nested_loop(&samples, &windows));
    }

    #[test]
    fn rollover_suffixes_are_not_part_of_the_sampler() {
        assert_eq!(sampler_of(Path::new("/s/meminfo.1700000000")), "meminfo");
        assert_eq!(sampler_of(Path::new("/s/meminfo")), "meminfo");
        assert_eq!(sampler_of(Path::new("/s/procstat.csv")), "procstat.csv");
    }

    proptest! {
        /// The sorted merge gives exactly what the nested loop gives, on random jobs (overlapping,
        /// nested, shared nodes) and a time-ordered interleaved stream.
        #[test]
        fn the_merge_equals_the_nested_loop(
            jobs in proptest::collection::vec((0usize..3, 0i64..200, 0i64..60), 0..12),
            stream in proptest::collection::vec((0i64..260, 0usize..4, 0u32..1000), 0..200),
        ) {
            let nodes = ["n0", "n1", "n2", "n3"];
            let windows: Vec<JobWindow> = jobs
                .iter()
                .enumerate()
                .map(|(i, (node, start, len))| window(&format!("j{i}"), nodes[*node], *start, start + len))
                .collect();
            let mut samples: Vec<(i64, String, f64)> = stream
                .iter()
                .map(|(t, node, v)| (t * 1_000_000 + 500_000, nodes[*node].to_string(), f64::from(*v)))
                .collect();
            samples.sort_by_key(|s| s.0);
            let (rows, _) = run(&csv_of(&samples), "meminfo", &windows);
            prop_assert_eq!(rows, nested_loop(&samples, &windows));
        }
    }
}
