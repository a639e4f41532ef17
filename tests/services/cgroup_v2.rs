//! Slurm 26.05 on a real cgroup v2 kernel (issue 66). Slurm 26.05 names each job's cgroup
//! directory there by the job's SLUID (`s` and 13 base32 characters) instead of `job_<id>`, and
//! jobsight-exporter must still report the job under its job id, which is what the ingest asks
//! Prometheus for. This machine's cgroups are hybrid, which Slurm's cgroup/v2 refuses, so the real
//! 26.05 daemons run in a virtual machine booted from their root file system
//! (`ops/slurm/cgroup-v2-vm.sh`, QEMU with Debian 12's kernel, cgroup v2 alone); this build's
//! jobsight-exporter scrapes the machine while a real job keeps a CPU busy there
//! (`sluid-on-cgroup-v2.sh`). The job's SLUID is taken from what Slurm itself records
//! (`squeue --json`'s `step_id.sluid`), not from the directory. Needs root and the package
//! registry (QEMU, the kernel, Debian unstable's Slurm 26.05 on first use); about 70 s, most of
//! it the emulated CPU.

use std::path::Path;
use std::process::Command;

use crate::common;
use common::services::{one_at_a_time, test_base};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

/// The value of the job total `metric{jobid="job",step="",...}` (`cgroup_uid{jobid="job",...}`,
/// which has no step) in a scrape, if there is one.
fn job_total(scrape: &str, metric: &str, job: &str) -> Option<f64> {
    let labels = if metric == "cgroup_uid" {
        format!(r#"{metric}{{jobid="{job}","#)
    } else {
        format!(r#"{metric}{{jobid="{job}",step="",task="""#)
    };
    scrape
        .lines()
        .find(|line| line.starts_with(&labels))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
}

#[test]
#[ignore = "needs root: boots a virtual machine with Slurm 26.05 on cgroup v2 (run by .ci/run with --include-ignored)"]
fn a_job_in_a_sluid_named_directory_is_reported_under_its_job_id() {
    let _services = one_at_a_time();
    let base = test_base("cgroup-v2");
    let out = base.join("out");
    let exporter = Path::new(JOBSIGHT).with_file_name("jobsight-exporter");
    let status = Command::new("bash")
        .arg(common::repo().join("ops/slurm/cgroup-v2-vm.sh"))
        .arg("26.05")
        .arg(common::repo().join("tests/services/sluid-on-cgroup-v2.sh"))
        .arg(&out)
        .arg(&exporter)
        .status()
        .unwrap();
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap_or_default();
    assert!(
        status.success(),
        "the machine's scenario failed: {}\n{}\n{}",
        read("slurm-setup.log"),
        read("scenario.log"),
        read("console.log")
    );
    let job = read("job").trim().to_string();
    let scrape = read("metrics.txt");
    eprintln!(
        "job {job}\ndirectories:\n{}\nslurmstepd:\n{}\nscrape:\n{scrape}\nexporter's problems:\n{}",
        read("dirs.txt"),
        read("slurmstepd.txt"),
        read("exporter-stderr.txt")
    );

    // What Slurm records: the job's SLUID, and Slurm named the job's directory by it.
    let squeue: serde_json::Value = serde_json::from_str(&read("squeue.json"))
        .unwrap_or_else(|e| panic!("squeue --json: {e}: {}", read("squeue.json")));
    let sluid = squeue["jobs"][0]["step_id"]["sluid"]
        .as_str()
        .unwrap_or_else(|| panic!("no sluid in squeue --json: {squeue}"))
        .to_string();
    assert!(
        sluid.len() == 14 && sluid.starts_with('s'),
        "a SLUID is s and 13 base32 characters: {sluid}"
    );
    let dirs = read("dirs.txt");
    assert!(
        dirs.lines()
            .any(|d| d.ends_with(&format!("slurmstepd.scope/{sluid}"))),
        "no directory named by the SLUID {sluid}:\n{dirs}"
    );
    assert!(
        !dirs.contains(&format!("/job_{job}")),
        "a job_{job} directory: Slurm did not name it by SLUID:\n{dirs}"
    );

    // The exporter reports the job under its id, with its own figures: about 10 s of one busy
    // CPU by the time of the scrape, its 200 MB limit, its owner; nothing under the SLUID.
    let cpu = job_total(&scrape, "cgroup_cpu_total_seconds", &job)
        .unwrap_or_else(|| panic!("no CPU series of job {job}:\n{scrape}"));
    assert!(cpu > 3.0, "job {job} used {cpu} s of CPU:\n{scrape}");
    assert_eq!(
        job_total(&scrape, "cgroup_memory_total_bytes", &job),
        Some(200.0 * 1024.0 * 1024.0),
        "{scrape}"
    );
    // The machine's alice (made there by the start script), who need not have the host's uid.
    let alice = read("alice-uid").trim().parse::<f64>().ok();
    assert!(alice.is_some(), "no uid of alice: {}", read("alice-uid"));
    assert_eq!(job_total(&scrape, "cgroup_uid", &job), alice, "{scrape}");
    assert!(
        !scrape.contains(&format!(r#"jobid="{sluid}""#)),
        "a series under the SLUID:\n{scrape}"
    );
    assert!(
        scrape.contains("\njobsight_exporter_jobs 1\n"),
        "the exporter should see exactly the one job:\n{scrape}"
    );

    // After the job: its directory is gone and so are its series (a scrape that sees no job).
    let after = read("metrics-after.txt");
    assert!(
        after.contains("\njobsight_exporter_jobs 0\n"),
        "a job is still reported after it ended:\n{after}"
    );
    let dirs_after = read("dirs-after.txt");
    assert!(
        dirs_after.contains("slurmstepd.scope") && !dirs_after.contains(&sluid),
        "the job's directory after it ended:\n{dirs_after}"
    );
}
