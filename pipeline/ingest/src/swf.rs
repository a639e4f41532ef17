//! `jobsight import swf FILE --cluster NAME`: a historical job flow in the Standard Workload Format
//! of the Parallel Workloads Archive into the `jobs` table.
//!
//! SWF: `;` header lines (`; UnixStartTime: 843480031` is the epoch of time 0), then one job per
//! line with 18 whitespace-separated numbers: job, submit, wait, run, allocated processors, average
//! CPU time, used memory, requested processors, requested time, requested memory (KB per
//! processor), status (1 completed, 0 failed, 5 cancelled), user, group, application, queue,
//! partition, preceding job, think time; -1 means unknown.
//!
//! Mapping: times become absolute UTC; `cpus` is the allocated processors (else requested);
//! `req_mem_mb` is requested memory × processors; `account` holds the group number, `qos` the queue
//! number, `name` the application number; `acct_cpu_total_s` is the average CPU time per processor
//! × the allocated processors (the other accounting columns stay unknown: the used memory is an
//! average, not a peak). A line that cannot be used (wrong field count, not a number, no known end
//! time) is skipped and reported with its line number; the rest is imported.
//! Jobs are partitioned by the day of their end; re-importing the same file replaces its parts.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, Utc};

use super::{JobRow, Skipped};
use jobsight_warehouse::catalog::{self, CatalogError, Table};

#[derive(Debug, thiserror::Error)]
pub enum SwfError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: no usable job line ({skipped} skipped)")]
    Empty { path: PathBuf, skipped: usize },
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("{path}: cannot build the jobs batch: {reason}")]
    Batch { path: PathBuf, reason: String },
}

/// What a parse found: jobs, header facts, and skipped lines.
#[derive(Debug, Default)]
pub struct SwfLog {
    pub jobs: Vec<JobRow>,
    pub header: BTreeMap<String, String>,
    pub skipped: Vec<Skipped>,
}

fn state_of(status: i64) -> &'static str {
    match status {
        1 => "COMPLETED",
        0 => "FAILED",
        5 => "CANCELLED",
        2..=4 => "PARTIAL",
        _ => "UNKNOWN",
    }
}

/// Parses an SWF log read from `path`. `source` names it in the rows (e.g. `swf:KTH-SP2.swf`).
pub fn parse(
    mut reader: impl BufRead,
    path: &Path,
    cluster: &str,
    source: &str,
) -> Result<SwfLog, std::io::Error> {
    let skipped = |line: usize, reason: String| Skipped {
        file: path.to_path_buf(),
        line,
        reason,
    };
    let mut log = SwfLog::default();
    let mut epoch: Option<i64> = None;
    let mut raw = Vec::new();
    let mut number = 0;
    loop {
        number += 1;
        match super::read_line(&mut reader, &mut raw, super::MAX_LINE_BYTES)? {
            super::Line::End => break,
            super::Line::Read => {}
            super::Line::TooLong(bytes) => {
                log.skipped.push(skipped(
                    number,
                    format!(
                        "a line of {bytes} bytes, longer than the {} a line may have",
                        super::MAX_LINE_BYTES
                    ),
                ));
                continue;
            }
        }
        let Ok(line) = std::str::from_utf8(&raw) else {
            log.skipped.push(skipped(number, "not UTF-8".into()));
            continue;
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix(';') {
            if let Some((key, value)) = header.split_once(':') {
                let (key, value) = (key.trim().to_string(), value.trim().to_string());
                if key == "UnixStartTime" {
                    epoch = value.parse().ok();
                }
                log.header.entry(key).or_insert(value);
            }
            continue;
        }
        match job_from_fields(line, epoch.unwrap_or(0), cluster, source) {
            Ok(job) => log.jobs.push(job),
            Err(reason) => log.skipped.push(skipped(number, reason)),
        }
    }
    if epoch.is_none() && !log.jobs.is_empty() {
        log.skipped.push(skipped(
            0,
            "no UnixStartTime header: times are relative to 1970".into(),
        ));
    }
    Ok(log)
}

fn job_from_fields(line: &str, epoch: i64, cluster: &str, source: &str) -> Result<JobRow, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() != 18 {
        return Err(format!("expected 18 fields, found {}", fields.len()));
    }
    // Field 6, the average CPU time per processor, is a measurement, and archives write it with
    // fractions ("123.45"): read as a number of its own, and unknown rather than an error when
    // it is not a finite one.
    let avg_cpu_s = fields[5]
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0);
    let mut n = [0i64; 18];
    for (i, f) in fields.iter().enumerate() {
        if i == 5 {
            continue;
        }
        // Some archive logs write whole numbers as "12.00".
        // Anything else (NaN, a fraction, beyond 64 bits) is an error, never a different number.
        n[i] = f
            .parse::<i64>()
            .ok()
            .or_else(|| {
                f.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e18)
                    .map(|v| v as i64)
            })
            .ok_or_else(|| format!("field {} is not a whole number in range: {f:?}", i + 1))?;
    }
    let known = |v: i64| (v >= 0).then_some(v);
    let [
        job,
        submit,
        wait,
        run,
        alloc,
        _, // field 6, read above as a number with a fraction
        _used_mem,
        req_procs,
        req_time,
        req_mem,
        status,
        user,
        group,
        app,
        queue,
        partition,
        preceding,
        _think_time,
    ] = n;
    // Checked: offsets that overflow or leave chrono's range are no time, not a wrapped one.
    let time = |offset: i64| {
        epoch
            .checked_add(offset)
            .and_then(|t| DateTime::<Utc>::from_timestamp(t, 0))
    };
    let submit_at = known(submit).and_then(time);
    let start_at = known(submit)
        .zip(known(wait))
        .and_then(|(s, w)| s.checked_add(w))
        .and_then(time);
    let end_at = known(submit)
        .zip(known(wait))
        .zip(known(run))
        .and_then(|((s, w), r)| s.checked_add(w)?.checked_add(r))
        .and_then(time)
        .ok_or("no end time (submit, wait or run time unknown or out of range)")?;
    let cpus = known(alloc)
        .or(known(req_procs))
        .map(|c| u32::try_from(c).map_err(|_| format!("{c} processors do not fit 32 bits")))
        .transpose()?;
    // The job's CPU time: the average per processor over the processors it was given. Only the
    // allocated count, not the requested one: the average is over what the job had.
    let cpu_total_s = avg_cpu_s
        .zip(known(alloc))
        .map(|(avg, procs)| avg * procs as f64);
    Ok(JobRow {
        cluster: cluster.to_string(),
        job_id: job.to_string(),
        user: known(user).map(|u| u.to_string()),
        account: known(group).map(|g| g.to_string()),
        partition: known(partition).map(|p| p.to_string()),
        qos: known(queue).map(|q| q.to_string()),
        cpus,
        req_mem_mb: known(req_mem)
            .zip(cpus)
            .and_then(|(kb, c)| (kb as u64).checked_mul(u64::from(c)))
            .map(|kb| kb / 1024),
        time_limit_s: known(req_time).map(|t| t as u64),
        submit: submit_at,
        start: start_at,
        end: end_at,
        state: Some(state_of(status).to_string()),
        name: known(app).map(|a| a.to_string()),
        source: source.to_string(),
        // The SWF's "preceding job": this one could start only after that one ended, however
        // it ended (Slurm's `afterany`). Job 0 is no job.
        dependency: known(preceding)
            .filter(|&p| p > 0)
            .map(|p| format!("afterany:{p}")),
        // Field 7 (used memory) is an average per processor, not a peak: no `acct_mem_peak_mb`.
        acct_cpu_total_s: cpu_total_s,
        ..JobRow::default()
    })
}

/// What an import wrote.
#[derive(Debug)]
pub struct SwfImport {
    pub log: SwfLog,
    pub days: usize,
    pub files: Vec<PathBuf>,
}

/// Imports `path` into the warehouse at `data`.
pub fn import(data: &Path, path: &Path, cluster: &str) -> Result<SwfImport, SwfError> {
    // Only a regular file: a FIFO or device would block the import.
    let file = jobsight_base::safe_fs::open_regular(path, jobsight_base::safe_fs::Links::Follow)
        .map_err(|source| SwfError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    let file_name = path
        .file_name()
        .map_or_else(|| "swf".into(), |n| n.to_string_lossy().into_owned());
    let source = format!("swf:{file_name}");
    let log = parse(std::io::BufReader::new(file), path, cluster, &source).map_err(|source| {
        SwfError::Read {
            path: path.to_path_buf(),
            source,
        }
    })?;
    if log.jobs.is_empty() {
        return Err(SwfError::Empty {
            path: path.to_path_buf(),
            skipped: log.skipped.len(),
        });
    }
    let mut by_day: BTreeMap<NaiveDate, Vec<JobRow>> = BTreeMap::new();
    for job in &log.jobs {
        by_day.entry(job.day()).or_default().push(job.clone());
    }
    // The log's identity is its full path, not its file name: two logs called `jobs.swf` in two
    // folders are two logs (the part name spells the file name and hashes the path).
    let identity = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let part = format!(
        "swf-{cluster}-{file_name}-{}",
        slurm_hooks::spool_dir::name_hash(identity.as_os_str().as_encoded_bytes())
    );
    let mut files = Vec::new();
    for (day, rows) in &by_day {
        let batch = JobRow::batch(rows).map_err(|e| SwfError::Batch {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        files.push(catalog::write_part(
            data,
            Table::Jobs,
            *day,
            &part,
            &[batch],
        )?);
    }
    Ok(SwfImport {
        days: by_day.len(),
        files,
        log,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "; UnixStartTime: 1000\n; MaxJobs: 3\n\
        1 0 10 100 4 -1 -1 4 200 1024 1 7 3 -1 1 1 -1 -1\n\
        2 5 -1 100 4 -1 -1 4 200 -1 0 8 3 -1 1 1 -1 -1\n\
        3 7 0 50 -1 -1 -1 2 60 -1 5 7 3 9 1 1 -1 -1\n\
        garbage line\n\
        4 1 2 3\n";

    /// Two logs with the same file name in two folders are two logs: both are kept. The same
    /// log imported again replaces its own part.
    #[test]
    fn logs_with_one_file_name_in_two_folders_do_not_replace_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        for folder in ["x", "y"] {
            std::fs::create_dir_all(dir.path().join(folder)).unwrap();
            std::fs::write(dir.path().join(folder).join("log.swf"), SAMPLE).unwrap();
        }
        let files = |data: &Path| {
            catalog::days(data, Table::Jobs)
                .into_iter()
                .flat_map(|d| catalog::part_files(data, Table::Jobs, d, None).unwrap())
                .count()
        };
        import(&data, &dir.path().join("x/log.swf"), "kth").unwrap();
        let one = files(&data);
        import(&data, &dir.path().join("y/log.swf"), "kth").unwrap();
        assert_eq!(files(&data), 2 * one);
        import(&data, &dir.path().join("y/log.swf"), "kth").unwrap();
        assert_eq!(files(&data), 2 * one, "a re-import replaces");
    }

    proptest::proptest! {
        /// Any bytes as lines: no panic, and every line that is not blank or a `;` header is
        /// either a job or a skipped line with a reason. A well-formed line's numbers arrive as
        /// they were written (job id, processors, run time, wait).
        #[test]
        fn every_line_is_a_job_or_a_reason_and_numbers_arrive_unchanged(
            lines in proptest::collection::vec(
                proptest::collection::vec(proptest::num::u8::ANY, 0..80), 0..20),
            id in 1u64..=i64::MAX as u64,
            wait in 0u32..1_000_000,
            run in 0u32..10_000_000,
            procs in 1u32..u32::MAX,
        ) {
            let mut text: Vec<u8> = b"; UnixStartTime: 1000\n".to_vec();
            let mut considered = 0;
            for line in &lines {
                let line: Vec<u8> = line.iter().copied().filter(|&b| b != b'\n').collect();
                // As the parser sees it: bytes that are not UTF-8 are a skipped line whatever
                // they hold; otherwise blank lines and comments are not lines of data.
                let counts = match std::str::from_utf8(&line) {
                    Err(_) => true,
                    Ok(text) => {
                        let text = text.trim();
                        !text.is_empty() && !text.starts_with(';')
                    }
                };
                if counts {
                    considered += 1;
                }
                text.extend_from_slice(&line);
                text.push(b'\n');
            }
            let good = format!("{id} 0 {wait} {run} {procs} -1 -1 {procs} 200 -1 1 7 3 -1 1 1 -1 -1\n");
            text.extend_from_slice(good.as_bytes());
            let log = parse(&text[..], Path::new("p.swf"), "c", "swf:p").unwrap();
            proptest::prop_assert_eq!(
                log.jobs.len() + log.skipped.iter().filter(|s| s.line > 0).count(),
                considered + 1
            );
            proptest::prop_assert!(log.skipped.iter().all(|s| !s.reason.is_empty()));
            let last = log.jobs.last().unwrap();
            proptest::prop_assert_eq!(&last.job_id, &id.to_string());
            proptest::prop_assert_eq!(last.cpus, Some(procs));
            proptest::prop_assert_eq!(
                last.start.unwrap().timestamp() - last.submit.unwrap().timestamp(),
                i64::from(wait)
            );
            proptest::prop_assert_eq!(
                last.end.timestamp() - last.start.unwrap().timestamp(),
                i64::from(run)
            );
        }
    }

    /// Numbers that do not fit are skipped lines with a reason, never a wrapped or rounded value.
    #[test]
    fn numbers_out_of_range_are_reasons_not_other_numbers() {
        let log = "; UnixStartTime: 1000\n\
            1 0 10 nan 4 -1 -1 4 200 -1 1 7 3 -1 1 1 -1 -1\n\
            2 0 10 100 5000000000 -1 -1 4 200 -1 1 7 3 -1 1 1 -1 -1\n\
            3 0 10 1e30 4 -1 -1 4 200 -1 1 7 3 -1 1 1 -1 -1\n\
            4 0 10 9223372036854775000 4 -1 -1 4 200 -1 1 7 3 -1 1 1 -1 -1\n\
            5 0 10 12.5 4 -1 -1 4 200 -1 1 7 3 -1 1 1 -1 -1\n\
            6 0 10 100 4 -1 -1 4 200 -1 1 7 3 -1 1 1 -1 -1\n";
        let parsed = parse(log.as_bytes(), Path::new("t.swf"), "kth", "swf:test").unwrap();
        let ids: Vec<&str> = parsed.jobs.iter().map(|j| j.job_id.as_str()).collect();
        assert_eq!(ids, ["6"]);
        let reasons: Vec<&str> = parsed.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert_eq!(reasons.len(), 5, "{reasons:?}");
        assert!(reasons[0].contains("not a whole number"), "{reasons:?}");
        assert!(reasons[1].contains("do not fit 32 bits"), "{reasons:?}");
        assert!(reasons[2].contains("not a whole number"), "{reasons:?}");
        assert!(reasons[3].contains("out of range"), "{reasons:?}");
        assert!(reasons[4].contains("not a whole number"), "{reasons:?}");
    }

    /// Field 6, the average CPU time per processor (with a fraction, as archives write it), times
    /// the allocated processors is the job's CPU time; unknown when either is, never an error.
    #[test]
    fn cpu_time_is_the_average_times_the_processors() {
        let log = "; UnixStartTime: 1000\n\
            1 0 10 100 4 80.5 -1 4 200 -1 1 7 3 -1 1 1 -1 -1\n\
            2 0 10 100 -1 80 -1 4 200 -1 1 7 3 -1 1 1 -1 -1\n\
            3 0 10 100 4 -1 -1 4 200 -1 1 7 3 -1 1 1 -1 -1\n\
            4 0 10 100 4 nan -1 4 200 -1 1 7 3 -1 1 1 -1 -1\n";
        let parsed = parse(log.as_bytes(), Path::new("t.swf"), "kth", "swf:test").unwrap();
        assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
        let cpu: Vec<Option<f64>> = parsed.jobs.iter().map(|j| j.acct_cpu_total_s).collect();
        assert_eq!(cpu, [Some(322.0), None, None, None]);
        assert!(parsed.jobs.iter().all(|j| j.acct_mem_peak_mb.is_none()));
    }

    /// Field 17, the preceding job, becomes the job's dependency (`afterany`); -1 and 0 none.
    #[test]
    fn a_preceding_job_is_a_dependency() {
        let log = "; UnixStartTime: 1000\n\
            1 0 10 100 4 -1 -1 4 200 -1 1 7 3 -1 1 1 -1 -1\n\
            2 5 10 100 4 -1 -1 4 200 -1 1 7 3 -1 1 1 1 30\n\
            3 5 10 100 4 -1 -1 4 200 -1 1 7 3 -1 1 1 0 -1\n";
        let parsed = parse(log.as_bytes(), Path::new("t.swf"), "kth", "swf:test").unwrap();
        let deps: Vec<Option<&str>> = parsed
            .jobs
            .iter()
            .map(|j| j.dependency.as_deref())
            .collect();
        assert_eq!(deps, [None, Some("afterany:1"), None]);
    }

    #[test]
    fn parses_jobs_and_reports_bad_lines() {
        let log = parse(SAMPLE.as_bytes(), Path::new("t.swf"), "kth", "swf:test").unwrap();
        assert_eq!(log.header["MaxJobs"], "3");
        assert_eq!(log.jobs.len(), 2);
        let j = &log.jobs[0];
        assert_eq!(j.job_id, "1");
        assert_eq!(j.submit.unwrap().timestamp(), 1000);
        assert_eq!(j.start.unwrap().timestamp(), 1010);
        assert_eq!(j.end.timestamp(), 1110);
        assert_eq!(
            (j.cpus, j.req_mem_mb, j.time_limit_s),
            (Some(4), Some(4), Some(200))
        );
        assert_eq!(j.state.as_deref(), Some("COMPLETED"));
        assert_eq!(
            log.jobs[1].cpus,
            Some(2),
            "requested processors when allocation is unknown"
        );
        assert_eq!(log.jobs[1].state.as_deref(), Some("CANCELLED"));
        let reasons: Vec<(usize, &str)> = log
            .skipped
            .iter()
            .map(|s| (s.line, s.reason.as_str()))
            .collect();
        assert_eq!(
            reasons,
            [
                (
                    4,
                    "no end time (submit, wait or run time unknown or out of range)"
                ),
                (6, "expected 18 fields, found 2"),
                (7, "expected 18 fields, found 4")
            ]
        );
    }
}
