//! Whether a job shared its nodes: how many other jobs ran on at least one of its nodes while it
//! ran, asked of Slurm accounting when the job is ingested (`jobs.neighbours`).
//!
//! Node telemetry is the node's, not the job's: on a node that two jobs shared, each job's
//! figures from it are the sum of both. Knowing whether anyone else was there tells the later
//! stages whether a node figure may be read as the job's own.
//!
//! Query: `TZ=UTC sacct -n -X -P -D -a [-M C] -N NODES -S START -E END -o
//! JobIDRaw,Start,End,State`: every allocation (`-X`), of every user (`-a`), every run of a
//! repeated id (`-D`), that was on one of the job's nodes and eligible during the window. The
//! window also returns jobs that were only pending then, so the count keeps those whose own run
//! `[Start, End)` overlaps the job's (an `End` of `Unknown` is a job still running). The job's
//! own id (its other runs included) is not counted; a job counts once however many runs it had.
//!
//! Limits: without `-a` rights (slurmdbd's `PrivateData=jobs` for a user who is not an
//! operator) sacct shows only that user's jobs and the count is too low. An answer that cannot be
//! read is an error, so the count is unknown rather than wrong.

use std::collections::BTreeSet;
use std::path::Path;

use chrono::{DateTime, NaiveDateTime, Utc};

use super::JobRow;
use super::sacct::{SacctError, run};

/// sacct's time format under `TZ=UTC`, and what `-S`/`-E` take.
const TIME_FORMAT: &str = "%Y-%m-%dT%H:%M:%S";

/// The other jobs that ran on `job`'s nodes during its run, asked of `sacct` (`job_id` is the
/// job's raw id, `cluster` the one to ask, as for [`super::sacct::query`]). `Ok(None)` when the
/// job never ran on a node (nothing to ask); an error when sacct cannot run or its answer
/// cannot be read.
pub fn neighbours(
    sacct: &Path,
    job: &JobRow,
    job_id: u64,
    cluster: Option<&str>,
) -> Result<Option<u32>, SacctError> {
    let Some(nodes) = job
        .nodes
        .as_deref()
        .filter(|n| !n.is_empty() && *n != "None assigned")
    else {
        return Ok(None);
    };
    let Some(start) = job.start else {
        return Ok(None);
    };
    let (from, to) = (
        start.format(TIME_FORMAT).to_string(),
        job.end.format(TIME_FORMAT).to_string(),
    );
    let args = [
        "-n",
        "-X",
        "-P",
        "-D",
        "-a",
        "-N",
        nodes,
        "-S",
        &from,
        "-E",
        &to,
        "-o",
        "JobIDRaw,Start,End,State",
    ];
    let answer = run(sacct, job_id, &args, cluster)?;
    count_neighbours(&String::from_utf8_lossy(&answer), job_id, start, job.end)
        .map(Some)
        .map_err(|reason| SacctError::Text {
            job_id,
            reason: format!("jobs on its nodes: {reason}"),
        })
}

/// A time of the answer: `None` for `Unknown` / `None` (not started, not ended).
fn answer_time(field: &str) -> Result<Option<DateTime<Utc>>, String> {
    if matches!(field, "Unknown" | "None" | "") {
        return Ok(None);
    }
    NaiveDateTime::parse_from_str(field, TIME_FORMAT)
        .map(|t| Some(t.and_utc()))
        .map_err(|_| format!("{field:?} is not a time"))
}

/// Counts the jobs in `answer` (lines `JobIDRaw|Start|End|State`) other than `own_id` whose run
/// overlaps `[start, end)`. A line that does not have that shape is an error naming it.
pub fn count_neighbours(
    answer: &str,
    own_id: u64,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Result<u32, String> {
    let mut others = BTreeSet::new();
    for line in answer.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let fields: Vec<&str> = line.split('|').collect();
        let [id, their_start, their_end, _state] = fields[..] else {
            return Err(format!("line {line:?} has {} fields, not 4", fields.len()));
        };
        let id: u64 = id
            .parse()
            .map_err(|_| format!("line {line:?}: {id:?} is not a job id"))?;
        let their_start = answer_time(their_start).map_err(|e| format!("line {line:?}: {e}"))?;
        let their_end = answer_time(their_end).map_err(|e| format!("line {line:?}: {e}"))?;
        // Never started: it was only pending in the window.
        let Some(their_start) = their_start else {
            continue;
        };
        let overlaps = their_start < end && their_end.is_none_or(|e| e > start);
        if id != own_id && overlaps {
            others.insert(id);
        }
    }
    u32::try_from(others.len()).map_err(|_| "more jobs than 32 bits count".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(s, 0).unwrap()
    }

    /// Jobs that ran during the job's run count once each; the job itself, jobs that only
    /// waited, ended at its start or started at its end do not; a job still running does.
    #[test]
    fn counts_the_other_jobs_that_overlapped_the_run() {
        // The job ran 10:00:00 to 10:10:00.
        let (start, end) = (at(1_795_341_600), at(1_795_342_200));
        let answer = "\
            7|2026-11-22T10:00:00|2026-11-22T10:10:00|COMPLETED\n\
            7|2026-11-22T09:00:00|2026-11-22T09:30:00|REQUEUED\n\
            8|2026-11-22T09:50:00|2026-11-22T10:05:00|COMPLETED\n\
            9|2026-11-22T10:09:59|Unknown|RUNNING\n\
            10|Unknown|Unknown|PENDING\n\
            11|None|2026-11-22T10:02:00|CANCELLED by 0\n\
            12|2026-11-22T09:00:00|2026-11-22T10:00:00|COMPLETED\n\
            13|2026-11-22T10:10:00|2026-11-22T10:20:00|COMPLETED\n\
            14|2026-11-22T09:55:00|2026-11-22T09:58:00|REQUEUED\n\
            14|2026-11-22T10:01:00|2026-11-22T10:03:00|COMPLETED\n";
        assert_eq!(count_neighbours(answer, 7, start, end), Ok(3));
        assert_eq!(count_neighbours("", 7, start, end), Ok(0));
        assert_eq!(count_neighbours("\n \n", 7, start, end), Ok(0));
    }

    /// An answer in another shape is an error naming the line, never a count.
    #[test]
    fn an_answer_it_cannot_read_is_an_error() {
        let (start, end) = (at(1_795_341_600), at(1_795_342_200));
        for answer in [
            "1|1795322321|0:0",
            "8|2026-11-22T09:50:00|2026-11-22T10:05:00",
            "8.batch|2026-11-22T09:50:00|2026-11-22T10:05:00|COMPLETED",
            "8|yesterday|2026-11-22T10:05:00|COMPLETED",
            "8|2026-11-22T09:50:00|soon|COMPLETED",
        ] {
            let error = count_neighbours(answer, 7, start, end).unwrap_err();
            assert!(error.contains(answer), "{error}");
        }
    }
}
