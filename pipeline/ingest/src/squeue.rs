//! The jobs running now, as Slurm's controller knows them: `squeue --json` read into
//! [`RunningJob`]s, for the running DAG.
//!
//! Slurm 22.05's `squeue --json` ignores every filter and prints every job slurmctld holds
//! (pending and completing ones too), so the running ones are picked here. What it prints is
//! another system's output: every field is checked, a job with an id, user or node list that
//! cannot be one is skipped and counted ([`Listing::skipped`]), and nothing in it reaches a shell.
//! Later Slurm versions print some numbers as `{"set": true, "infinite": false, "number": N}` and
//! states as lists; every release's shapes are read through [`super::slurm_json`].

use std::path::Path;
use std::time::Duration;

use chrono::DateTime;
use serde_json::Value;

use jobsight_base::command::run_command;
use jobsight_base::running_job::{Listing, RunningJob};

/// Runs `squeue --json` (at most `timeout`) and reads its running jobs.
pub fn list(squeue: &Path, timeout: Duration) -> Result<Listing, String> {
    let out = run_command(squeue, &["--json"], timeout)?;
    parse_json(&String::from_utf8_lossy(&out))
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
