//! Reading a `sacct --json` answer of any release (through [`slurm_json`]) into [`Accounting`]
//! records: a record that cannot be read is set aside with the job and the field it stumbled on,
//! or, in a release this reader does not know, read as far as it can be with notes.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{Accounting, Answer, MAX_ANSWER_BYTES, SacctError};
use crate::sacct_steps;
use crate::slurm_json;

/// Epoch seconds to a time; Slurm writes 0 for "not yet". A time beyond what a date can hold is
/// an error (the caller names the job), not "not yet".
fn epoch(value: &Value) -> Result<Option<DateTime<Utc>>, String> {
    match slurm_json::number(value)?.value().filter(|&s| s > 0) {
        None => Ok(None),
        Some(s) => i64::try_from(s)
            .ok()
            .and_then(|s| DateTime::from_timestamp(s, 0))
            .map(Some)
            .ok_or_else(|| format!("{s} is out of range")),
    }
}

/// Parses `sacct --json` output of any release (see [`slurm_json`]). An answer that is not JSON,
/// too large or without a `jobs` list is an error; within it, a record that cannot be read is set
/// aside with the reason and the others are kept.
pub fn parse_json(bytes: &[u8]) -> Result<Answer, SacctError> {
    if bytes.len() > MAX_ANSWER_BYTES {
        return Err(SacctError::Json(format!(
            "the answer is {} bytes, over the {} MiB a job's answer may have",
            bytes.len(),
            MAX_ANSWER_BYTES >> 20
        )));
    }
    let root: Value = serde_json::from_slice(bytes).map_err(|e| SacctError::Json(e.to_string()))?;
    let jobs = match root.get("jobs") {
        Some(Value::Array(jobs)) => jobs,
        Some(other) => {
            return Err(SacctError::Json(format!(
                "`jobs` is {} instead of a list",
                slurm_json::kind(other)
            )));
        }
        None => {
            let errors = root.get("errors").map(Value::to_string).unwrap_or_default();
            return Err(SacctError::Json(format!(
                "no jobs, errors: {}",
                jobsight_base::text::printable(&errors.chars().take(500).collect::<String>())
            )));
        }
    };
    let release_note = slurm_json::unknown_parser_note(&root);
    // 22.05 (v0.0.38) and 23.02 (v0.0.39) print SUCCESS and 0 for a job that exited 1 (v0.0.39
    // tests WIFEXITED without the status); from v0.0.40 the JSON's exit code is the job's.
    let exit_codes_valid = slurm_json::parser_version(&root)
        .is_some_and(|v| !matches!(v.as_str(), "v0.0.37" | "v0.0.38" | "v0.0.39"));
    let mut answer = Answer::default();
    for (i, job) in jobs.iter().enumerate() {
        let fields = Fields {
            job,
            job_id: 0,
            lenient: release_note.is_some(),
            notes: release_note.iter().cloned().collect(),
        };
        match accounting(fields, exit_codes_valid) {
            Ok(record) => answer.records.push(record),
            Err((id, reason)) => {
                let reason = match id {
                    Some(_) => reason,
                    None => format!("entry {i} of the answer: {reason}"),
                };
                answer.set_aside.push((id, reason));
            }
        }
    }
    Ok(answer)
}

/// The fields of one record, read through [`slurm_json`]. A field that holds a shape no release
/// prints makes the record an error naming the job and the field; in an answer of a release this
/// reader does not know (`lenient`), it is read as unknown and named in the record's notes
/// instead, except for the fields without which a record means nothing (id, state, times).
struct Fields<'a> {
    job: &'a Value,
    job_id: u64,
    lenient: bool,
    notes: Vec<String>,
}

impl Fields<'_> {
    fn at(&self, path: &str) -> &Value {
        self.job.pointer(path).unwrap_or(&Value::Null)
    }

    fn error(&self, path: &str, why: &str) -> String {
        format!("job {}: {} {why}", self.job_id, field_name(path))
    }

    /// `path` read by `read`; see [`Fields`] for what happens when it cannot be.
    fn read<T>(
        &mut self,
        path: &str,
        read: impl Fn(&Value) -> Result<Option<T>, String>,
    ) -> Result<Option<T>, String> {
        match read(self.at(path)) {
            Ok(value) => Ok(value),
            Err(why) if self.lenient => {
                let note = format!("{} not understood ({why})", field_name(path));
                self.notes.push(note);
                Ok(None)
            }
            Err(why) => Err(self.error(path, &why)),
        }
    }

    /// As [`Fields::read`], but an error in any release.
    fn essential<T>(
        &self,
        path: &str,
        read: impl Fn(&Value) -> Result<Option<T>, String>,
    ) -> Result<Option<T>, String> {
        read(self.at(path)).map_err(|why| self.error(path, &why))
    }

    fn text(&mut self, path: &str) -> Result<Option<String>, String> {
        self.read(path, slurm_json::text)
    }
}

/// `/time/limit` as a person reads it: `time.limit`.
fn field_name(path: &str) -> String {
    path.trim_start_matches('/').replace('/', ".")
}

/// The figures of one `tres.allocated` entry list: (type, name, count).
fn allocated_tres(list: &Value) -> Result<Vec<(String, Option<String>, Value)>, String> {
    let items = match list {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        other => {
            return Err(format!(
                "{} where a TRES list goes",
                slurm_json::kind(other)
            ));
        }
    };
    items
        .iter()
        .map(|item| {
            let kind = slurm_json::text(item.get("type").unwrap_or(&Value::Null))?
                .ok_or("a TRES entry without its type")?;
            let name = slurm_json::text(item.get("name").unwrap_or(&Value::Null))?;
            Ok((
                kind,
                name,
                item.get("count").cloned().unwrap_or(Value::Null),
            ))
        })
        .collect()
}

/// One record of the answer. A number that does not fit where it goes (a count beyond 32 bits, a
/// time limit whose seconds overflow) makes the record an error naming the job and the field,
/// never a different number. The error carries the job's id where it could be read.
fn accounting(
    mut f: Fields<'_>,
    exit_codes_valid: bool,
) -> Result<Accounting, (Option<u64>, String)> {
    let job_id = match slurm_json::number(f.at("/job_id")) {
        Ok(slurm_json::Number::Value(id)) => id,
        Ok(_) => return Err((None, "no job_id".into())),
        Err(why) => return Err((None, format!("job_id {why}"))),
    };
    f.job_id = job_id;
    read_record(f, job_id, exit_codes_valid).map_err(|reason| (Some(job_id), reason))
}

fn read_record(
    mut f: Fields<'_>,
    job_id: u64,
    exit_codes_valid: bool,
) -> Result<Accounting, String> {
    let tres = f
        .read("/tres/allocated", |v| allocated_tres(v).map(Some))?
        .unwrap_or_default();
    let allocated = |f: &Fields, kind: &str, name: Option<&str>| -> Result<Option<u64>, String> {
        let Some((_, _, count)) = tres
            .iter()
            .find(|(k, n, _)| k == kind && (name.is_none() || n.as_deref() == name))
        else {
            return Ok(None);
        };
        slurm_json::number(count)
            .map(slurm_json::Number::value)
            .map_err(|why| f.error(&format!("/tres/allocated/{kind}"), &why))
    };
    let count32 = |f: &Fields, kind: &str, name: Option<&str>| -> Result<Option<u32>, String> {
        allocated(f, kind, name)?
            .map(|c| {
                u32::try_from(c).map_err(|_| {
                    f.error(
                        &format!("/tres/allocated/{kind}"),
                        &format!("{c} is out of range"),
                    )
                })
            })
            .transpose()
    };
    // Not through `allocated`: energy is a measurement, and a wrong one is unknown, not an error.
    let energy_j = sacct_steps::energy(
        tres.iter()
            .find(|(k, _, _)| k == "energy")
            .and_then(|(_, _, count)| slurm_json::number_with(count, false).ok()?.value()),
    );
    let time_limit_s = f
        .read("/time/limit", |v| Ok(slurm_json::number(v)?.value()))?
        .map(|minutes| {
            minutes.checked_mul(60).ok_or_else(|| {
                f.error("/time/limit", &format!("{minutes} minutes is out of range"))
            })
        })
        .transpose()?;
    let required_cpus = f.read("/required/CPUs", slurm_json::number32)?;
    // 22.05's `required.memory`; later releases say per node or per CPU. The allocated memory,
    // the job's total, comes first.
    let required_memory = f.read("/required/memory", |v| Ok(slurm_json::number(v)?.value()))?;
    let per_node = f.read("/required/memory_per_node", |v| {
        Ok(slurm_json::number(v)?.value())
    })?;
    let per_cpu = f.read("/required/memory_per_cpu", |v| {
        Ok(slurm_json::number(v)?.value())
    })?;
    let num_nodes = count32(&f, "node", None)?;
    let cpus = count32(&f, "cpu", None)?.or(required_cpus);
    let requested_total = required_memory
        .or_else(|| per_node.and_then(|m| m.checked_mul(u64::from(num_nodes?))))
        .or_else(|| per_cpu.and_then(|m| m.checked_mul(u64::from(cpus?))));
    let array_job_id = f
        .read("/array/job_id", |v| Ok(slurm_json::number(v)?.value()))?
        .filter(|&id| id != 0);
    let array_task_id = f.read("/array/task_id", slurm_json::number32)?;
    // Every job has `het`; 0 (and an offset not set) where the job is not heterogeneous.
    let het_job_id = f
        .read("/het/job_id", |v| Ok(slurm_json::number(v)?.value()))?
        .filter(|&id| id != 0);
    let het_job_offset = match het_job_id {
        Some(_) => f.read("/het/job_offset", slurm_json::number32)?,
        None => None,
    };
    let exit_json = if exit_codes_valid {
        let code = f.read("/exit_code/return_code", slurm_json::number32)?;
        let signal = f.read("/exit_code/signal/id", slurm_json::number32)?;
        // A job killed by a signal has no return code (24.11's OUT_OF_MEMORY: `"set": false`
        // and signal 125), which sacct's text prints as `0:125`.
        match (code, signal) {
            (None, None) => None,
            (code, signal) => Some((code.unwrap_or(0) as i32, signal.unwrap_or(0) as i32)),
        }
    } else {
        None
    };
    let (steps, steps_left_out) = match sacct_steps::parse_steps(Some(f.at("/steps")), job_id) {
        Some((steps, left_out)) => (Some(steps), left_out),
        None => (None, 0),
    };
    if steps_left_out > 0 {
        f.notes.push(format!(
            "{steps_left_out} of its steps could not be read and are left out"
        ));
    }
    Ok(Accounting {
        num_nodes,
        cpus,
        gpus: count32(&f, "gres", Some("gpu"))?,
        req_mem_mb: allocated(&f, "mem", None)?.or(requested_total),
        time_limit_s,
        submit: f.essential("/time/submission", epoch)?,
        start: f.essential("/time/start", epoch)?,
        end: f.essential("/time/end", epoch)?,
        state: f.essential("/state/current", slurm_json::state)?,
        array_job_id,
        array_task_id,
        het_job_id,
        het_job_offset,
        job_id,
        cluster: f.text("/cluster")?,
        name: f.text("/name")?,
        user: f.text("/user")?,
        group: f.text("/group")?,
        account: f.text("/account")?,
        partition: f.text("/partition")?,
        qos: f.text("/qos")?,
        nodes: f.text("/nodes")?,
        steps,
        energy_j,
        exit_json,
        notes: f.notes,
    })
}
