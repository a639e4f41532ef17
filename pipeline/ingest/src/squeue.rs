//! The jobs running now, as Slurm's controller knows them: `squeue --json` read into
//! [`RunningJob`]s, for the running DAG.
//!
//! Slurm 22.05's `squeue --json` ignores every filter and prints every job slurmctld holds
//! (pending and completing ones too), so the running ones are picked here. What it prints is
//! another system's output: every field is checked, a job with an id, user or node list that
//! cannot be one is skipped and counted ([`Listing::skipped`]), and nothing in it reaches a shell.
//! Later Slurm versions print some numbers as `{"set": true, "infinite": false, "number": N}` and
//! states as lists; every release's shapes are read through [`super::slurm_json`].

use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

/// One running job: what the live judgement and the cancel policy need.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunningJob {
    pub cluster: String,
    /// The job's id as the warehouse names it (`jobs.job_id`, the hook's `SLURM_JOB_ID`): Slurm's
    /// own id, an array task's too, which its cgroup directory and DCGM's `hpc_job` also carry.
    /// (Its `ARRAY_TASK` name was used before 2026-11-28: a task's series were never found and
    /// its warning was not matched with its finished job.)
    pub job_id: String,
    /// Slurm's own id of the job (an array task's too), for `scancel` and `scontrol`.
    pub slurm_id: String,
    pub user: String,
    pub account: String,
    pub partition: String,
    pub qos: String,
    pub name: String,
    pub start: DateTime<Utc>,
    /// `None`: no limit (UNLIMITED).
    pub time_limit_s: Option<u64>,
    /// Slurm hostlist, as squeue prints it.
    pub nodes: String,
    /// The host list expanded.
    pub node_names: Vec<String>,
    pub num_nodes: u32,
    pub cpus: u32,
    /// The job's whole memory (all nodes), MiB; `None` when Slurm gave none.
    pub req_mem_mb: Option<u64>,
    pub gpus: u32,
    /// Started by `salloc` or a bare `srun` (Slurm's batch flag unset).
    pub interactive: bool,
}

/// What a listing gave: the running jobs, and the entries skipped with why.
#[derive(Debug, Default)]
pub struct Listing {
    pub jobs: Vec<RunningJob>,
    /// (what identifies the entry, why it was skipped).
    pub skipped: Vec<(String, String)>,
}

/// Runs `squeue --json` (at most `timeout`) and reads its running jobs.
pub fn list(squeue: &Path, timeout: Duration) -> Result<Listing, String> {
    let out = run_command(squeue, &["--json"], timeout)?;
    parse_json(&String::from_utf8_lossy(&out))
}

/// The most a Slurm command's answer may hold before it is refused: far above what `squeue` of
/// a large cluster prints (about 5 KB a job), far below what would take the pipeline's memory.
pub const MAX_COMMAND_OUTPUT: usize = 256 << 20;

/// Runs a Slurm command (`squeue`, `scancel`, `scontrol`) with `args`, no shell, in UTC, for at
/// most `timeout` (then it is killed), and returns what it printed; an error naming the command
/// and its error output when it cannot run, takes too long, fails or prints more than
/// [`MAX_COMMAND_OUTPUT`].
pub fn run_command(program: &Path, args: &[&str], timeout: Duration) -> Result<Vec<u8>, String> {
    run_command_capped(program, args, timeout, MAX_COMMAND_OUTPUT).map_err(|e| e.to_string())
}

/// Why a Slurm command gave no answer to use.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CommandError {
    /// It could not run, failed or took too long: asking again later may work.
    #[error("{0}")]
    Failed(String),
    /// It answered more than the limit: asking again would give the same.
    #[error("{0}")]
    TooLarge(String),
}

/// [`run_command`] with its own limit on the answer's size: past `max_bytes` the rest of the
/// answer is read and thrown away (so the command ends rather than blocks) and the answer is
/// [`CommandError::TooLarge`], saying how large it was.
pub fn run_command_capped(
    program: &Path,
    args: &[&str],
    timeout: Duration,
    max_bytes: usize,
) -> Result<Vec<u8>, CommandError> {
    let (out, total) =
        run_to_end(program, args, timeout, max_bytes).map_err(CommandError::Failed)?;
    if total > max_bytes {
        return Err(CommandError::TooLarge(format!(
            "{} {} answered {total} bytes, over the {} MiB an answer may have",
            program.display(),
            args.join(" "),
            max_bytes >> 20
        )));
    }
    Ok(out)
}

/// Runs the command to its end (or `timeout`), keeping the first `max_bytes` of its answer:
/// that part and the answer's whole size.
fn run_to_end(
    program: &Path,
    args: &[&str],
    timeout: Duration,
    max_bytes: usize,
) -> Result<(Vec<u8>, usize), String> {
    let shown = format!("{} {}", program.display(), args.join(" "));
    let mut child = Command::new(program)
        .args(args)
        .env("TZ", "UTC")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    // Read while waiting: output larger than the pipe would otherwise block the command.
    let drain = |pipe: Option<Box<dyn Read + Send>>, max: usize| {
        std::thread::spawn(move || {
            let (mut kept, mut total) = (Vec::new(), 0usize);
            if let Some(mut pipe) = pipe {
                let mut buffer = vec![0u8; 64 * 1024];
                while let Ok(n) = pipe.read(&mut buffer) {
                    if n == 0 {
                        break;
                    }
                    total = total.saturating_add(n);
                    if kept.len() < max {
                        kept.extend_from_slice(&buffer[..n.min(max - kept.len())]);
                    }
                }
            }
            (kept, total)
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _), max_bytes);
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _), 64 * 1024);
    let started = std::time::Instant::now();
    let status = loop {
        match child.try_wait().map_err(|e| format!("{shown}: {e}"))? {
            Some(status) => break status,
            None if started.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{shown}: no answer within {}s", timeout.as_secs()));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let (out, total) = stdout.join().unwrap_or_default();
    let (err, _) = stderr.join().unwrap_or_default();
    if !status.success() {
        return Err(format!(
            "{shown} failed ({status}): {}",
            jobsight_base::text::printable(String::from_utf8_lossy(&err).trim())
        ));
    }
    Ok((out, total))
}

/// The running jobs of a `squeue --json` listing.
pub fn parse_json(text: &str) -> Result<Listing, String> {
    let root: Value =
        serde_json::from_str(text).map_err(|e| format!("squeue --json: not JSON: {e}"))?;
    let jobs = root
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or("squeue --json: no `jobs` list")?;
    let mut listing = Listing::default();
    for (i, job) in jobs.iter().enumerate() {
        // A string in 22.05, a list of flags from 23.11 (`["RUNNING"]`).
        let running = match job.get("job_state") {
            Some(Value::String(state)) => state == "RUNNING",
            Some(Value::Array(states)) => states.iter().any(|s| s == "RUNNING"),
            _ => false,
        };
        if !running {
            continue;
        }
        match running_job(job) {
            Ok(j) => listing.jobs.push(j),
            Err(why) => {
                let id = job
                    .get("job_id")
                    .map(Value::to_string)
                    .unwrap_or_else(|| format!("entry {i}"));
                listing.skipped.push((id, why));
            }
        }
    }
    Ok(listing)
}

/// A number in any shape a release prints ([`super::slurm_json::number`]); `None` when unset,
/// infinite or of a shape no release prints.
fn number(v: Option<&Value>) -> Option<u64> {
    super::slurm_json::number(v?).ok()?.value()
}

fn text(job: &Value, key: &str) -> String {
    job.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn running_job(job: &Value) -> Result<RunningJob, String> {
    let slurm_id = number(job.get("job_id")).ok_or("no job_id")?;
    let job_id = slurm_id.to_string();
    let user = text(job, "user_name");
    if !jobsight_base::text::is_login_name(&user) {
        return Err(format!("user {user:?} is no login name"));
    }
    let start = number(job.get("start_time"))
        .and_then(|s| DateTime::from_timestamp(i64::try_from(s).ok()?, 0))
        .ok_or("no start_time")?;
    let nodes = text(job, "nodes");
    let node_names =
        slurm_hooks::hostlist::expand(&nodes).map_err(|e| format!("node list {nodes:?}: {e}"))?;
    let cpus =
        u32::try_from(number(job.get("cpus")).unwrap_or(0)).map_err(|_| "cpus out of range")?;
    let num_nodes = u32::try_from(number(job.get("node_count")).unwrap_or(node_names.len() as u64))
        .map_err(|_| "node_count out of range")?;
    let tres = text(job, "tres_alloc_str");
    let req_mem_mb = tres_memory_mb(&tres).or_else(|| {
        number(job.get("memory_per_node"))
            .and_then(|m| m.checked_mul(u64::from(num_nodes.max(1))))
            .or_else(|| {
                number(job.get("memory_per_cpu")).and_then(|m| m.checked_mul(u64::from(cpus)))
            })
    });
    Ok(RunningJob {
        cluster: text(job, "cluster"),
        job_id,
        slurm_id: slurm_id.to_string(),
        user,
        account: text(job, "account"),
        partition: text(job, "partition"),
        qos: text(job, "qos"),
        name: text(job, "name"),
        start,
        // Minutes; a limit whose seconds do not fit is refused, never wrapped to a short one.
        time_limit_s: match number(job.get("time_limit")) {
            Some(minutes) => Some(minutes.checked_mul(60).ok_or("time_limit out of range")?),
            None => None,
        },
        nodes,
        node_names,
        num_nodes,
        cpus,
        req_mem_mb,
        gpus: tres_gpus(&tres),
        interactive: job.get("batch_flag").and_then(Value::as_bool) == Some(false),
    })
}

/// `mem=` of a TRES string (`cpu=8,mem=32G,node=1`), MiB.
fn tres_memory_mb(tres: &str) -> Option<u64> {
    let value = tres.split(',').find_map(|p| p.strip_prefix("mem="))?;
    let (digits, unit) = value.split_at(value.find(|c: char| !c.is_ascii_digit() && c != '.')?);
    let n: f64 = digits.parse().ok()?;
    let mib = match unit {
        "K" => n / 1024.0,
        "M" => n,
        "G" => n * 1024.0,
        "T" => n * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(mib.round() as u64)
}

/// GPUs of a TRES string: `gres/gpu=N`, or the sum of the typed `gres/gpu:<type>=N` when Slurm
/// gives only those.
fn tres_gpus(tres: &str) -> u32 {
    let count = |p: &str| p.split_once('=').and_then(|(_, n)| n.parse::<u32>().ok());
    if let Some(n) = tres
        .split(',')
        .find(|p| p.starts_with("gres/gpu="))
        .and_then(count)
    {
        return n;
    }
    tres.split(',')
        .filter(|p| p.starts_with("gres/gpu:"))
        .filter_map(count)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from the test cluster's Slurm 22.05.8: a batch job and an `salloc` running, a
    /// third pending.
    const FIXTURE: &str = include_str!("../../../tests/fixtures/squeue-22.05.8.json");

    #[test]
    fn the_running_jobs_of_a_real_listing() {
        let listing = parse_json(FIXTURE).unwrap();
        assert!(listing.skipped.is_empty(), "{:?}", listing.skipped);
        let ids: Vec<&str> = listing.jobs.iter().map(|j| j.job_id.as_str()).collect();
        assert_eq!(ids, ["1", "2"], "the pending job 3 is left out");
        let batch = &listing.jobs[0];
        assert_eq!(
            (
                batch.user.as_str(),
                batch.account.as_str(),
                batch.partition.as_str()
            ),
            ("alice", "research", "debug")
        );
        assert_eq!(batch.name, "sleeper");
        assert_eq!(batch.cluster, "ci");
        assert_eq!(batch.node_names, ["vm"]);
        assert_eq!((batch.cpus, batch.num_nodes, batch.gpus), (1, 1, 0));
        assert_eq!(batch.req_mem_mb, Some(100));
        assert_eq!(batch.time_limit_s, Some(600));
        assert!(!batch.interactive);
        assert!(listing.jobs[1].interactive, "salloc");
        assert_eq!(listing.jobs[1].req_mem_mb, Some(50));
    }

    /// Every release's listing in `tests/fixtures/slurm-json/` (23.11, 24.11 and 25.11 through
    /// slurmrestd's `/slurm/v0.0.4x/jobs`, 26.05's `squeue --json`): every running job read,
    /// none skipped, with its numbers as the capture has them (read off the files by hand).
    #[test]
    fn every_listing_of_every_release() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/slurm-json");
        // (file, jobs listed, running, first running job: id, user, nodes, cpus, MiB, limit s)
        let expected = [
            (
                "23.11_v0.0.40_slurm-jobs.json",
                5,
                ("779", "crich", "cn1", 32, 16384, 120),
            ),
            (
                "24.11_v0.0.42_slurm-jobs.json",
                7,
                ("6360", "jbeck", "cn1", 16, 8192, 120),
            ),
            (
                "25.11_v0.0.44_slurm-jobs.json",
                4,
                ("5745", "vhartman", "cn1", 4, 2048, 120),
            ),
        ];
        for (file, running, first) in expected {
            let listing = parse_json(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
            assert!(listing.skipped.is_empty(), "{file}: {:?}", listing.skipped);
            assert_eq!(listing.jobs.len(), running, "{file}");
            let j = &listing.jobs[0];
            assert_eq!(
                (
                    j.job_id.as_str(),
                    j.user.as_str(),
                    j.nodes.as_str(),
                    j.cpus,
                    j.req_mem_mb,
                    j.time_limit_s
                ),
                (
                    first.0,
                    first.1,
                    first.2,
                    first.3,
                    Some(first.4),
                    Some(first.5)
                ),
                "{file}"
            );
            assert_eq!(j.slurm_id, j.job_id, "{file}: no array task");
        }
        let multi = parse_json(
            &std::fs::read_to_string(dir.join("24.11_v0.0.42_slurm-jobs.json")).unwrap(),
        )
        .unwrap();
        let wide = multi.jobs.iter().find(|j| j.slurm_id == "6365").unwrap();
        assert_eq!(
            (wide.num_nodes, wide.node_names.len(), wide.cpus),
            (3, 3, 128)
        );
        let pending = parse_json(
            &std::fs::read_to_string(dir.join("26.05.5_v0.0.45_squeue-ci.json")).unwrap(),
        )
        .unwrap();
        assert!(
            pending.jobs.is_empty() && pending.skipped.is_empty(),
            "{:?}",
            pending.skipped
        );
    }

    #[test]
    fn hostile_and_newer_entries() {
        let text = r#"{"jobs": [
          {"job_id": 7, "job_state": "RUNNING", "user_name": "bob; rm -rf /", "start_time": 1, "nodes": "n1"},
          {"job_id": 8, "job_state": "RUNNING", "user_name": "bob", "start_time": 1, "nodes": "n[1-"},
          {"job_state": "RUNNING", "user_name": "bob", "start_time": 1, "nodes": "n1"},
          {"job_id": 9, "job_state": "RUNNING", "user_name": "bob", "nodes": "n[1-2]",
           "start_time": {"set": true, "infinite": false, "number": 1795745851},
           "time_limit": {"set": true, "infinite": true, "number": 0}, "cpus": 16, "node_count": 2,
           "tres_alloc_str": "cpu=16,mem=64G,node=2,gres/gpu:a100=2,gres/gpu:v100=2", "batch_flag": true},
          {"job_id": 12, "job_state": ["RUNNING"], "user_name": "bob", "start_time": 1, "nodes": "n3",
           "array_job_id": {"set": true, "infinite": false, "number": 10},
           "array_task_id": {"set": true, "infinite": false, "number": 2}},
          {"job_id": 13, "job_state": ["PENDING"], "user_name": "bob", "start_time": 1, "nodes": ""}
        ]}"#;
        let listing = parse_json(text).unwrap();
        assert_eq!(listing.skipped.len(), 3, "{:?}", listing.skipped);
        assert!(listing.skipped[0].1.contains("login name"));
        assert!(listing.skipped[1].1.contains("node list"));
        assert_eq!(listing.skipped[2].0, "entry 2");
        let j = &listing.jobs[0];
        assert_eq!(j.node_names, ["n1", "n2"]);
        assert_eq!(j.time_limit_s, None, "infinite");
        assert_eq!((j.gpus, j.req_mem_mb), (4, Some(65536)));
        // Slurm 23.11's state list; an array task by its own id, as the warehouse names it.
        let task = &listing.jobs[1];
        assert_eq!((task.job_id.as_str(), task.slurm_id.as_str()), ("12", "12"));
        assert_eq!(listing.jobs.len(), 2, "the pending job is left out");
        assert!(parse_json("not json").unwrap_err().contains("not JSON"));
        // Numbers past their type are refused with the job, never wrapped (2^32 + 1 CPUs are
        // not 1, a 2^62-minute limit is not 0 s).
        let huge = r#"{"jobs": [
          {"job_id": 20, "job_state": "RUNNING", "user_name": "bob", "start_time": 1, "nodes": "n1",
           "cpus": 4294967297},
          {"job_id": 21, "job_state": "RUNNING", "user_name": "bob", "start_time": 1, "nodes": "n1",
           "time_limit": 4611686018427387904}
        ]}"#;
        let refused = parse_json(huge).unwrap();
        assert!(refused.jobs.is_empty(), "{:?}", refused.jobs);
        let why: Vec<&str> = refused.skipped.iter().map(|(_, w)| w.as_str()).collect();
        assert_eq!(why, ["cpus out of range", "time_limit out of range"]);
        assert!(parse_json("{}").unwrap_err().contains("jobs"));
    }
}
