//! Helpers shared by the integration tests: spool set-up, reading records back, and running the
//! hook the way Slurm does (clean environment, no PATH).
#![allow(dead_code, clippy::unwrap_used)]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use slurm_hooks::SpoolRecord;
use slurm_hooks::spool_dir::SUBDIRS;

pub mod services;

/// The repository's top directory, read when the test runs (cargo sets CARGO_MANIFEST_DIR then),
/// not when it was compiled: test binaries in a shared target directory may have been built from
/// another checkout of the same sources.
/// The crate's directory is `slurm-hooks/` or `pipeline/app/`; the top is the first directory
/// above it with `Cargo.lock`.
pub fn repo() -> PathBuf {
    let manifest =
        std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
    let mut dir = PathBuf::from(manifest);
    while !dir.join("Cargo.lock").is_file() {
        assert!(
            dir.pop(),
            "no directory with Cargo.lock above CARGO_MANIFEST_DIR"
        );
    }
    dir
}

/// Creates every spool subdirectory under `root`.
pub fn make_spool(root: &Path) {
    for sub in SUBDIRS {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
}

/// Every record in `dir`, parsed, in name (arrival) order.
pub fn records_in(dir: &Path) -> Vec<SpoolRecord> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| {
            SpoolRecord::from_json(&std::fs::read(p).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        })
        .collect()
}

pub fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

/// Every file under `dir`, sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p)
            } else {
                out.push(p)
            }
        }
    }
    out.sort();
    out
}

/// Writes an executable shell script to `path`: a stand-in for a program jobsight runs.
pub fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The environment EpilogSlurmctld gets on Slurm 22.05.8, for job `job_id`.
pub fn slurmctld_env(job_id: u64) -> Vec<(String, Vec<u8>)> {
    let pairs: [(&str, &[u8]); 19] = [
        ("SLURM_CLUSTER_NAME", b"ci"),
        ("SLURM_JOB_ACCOUNT", b"research"),
        ("SLURM_JOB_CPUS_PER_NODE", b"4(x2)"),
        ("SLURM_JOB_DERIVED_EC", b"0"),
        ("SLURM_JOB_EXIT_CODE2", b"3:0"),
        ("SLURM_JOB_EXIT_CODE", b"768"),
        ("SLURM_JOB_GID", b"1001"),
        ("SLURM_JOB_GROUP", b"alice"),
        ("SLURM_JOB_NAME", b"sim"),
        ("SLURM_JOB_NODELIST", b"node[01-02]"),
        ("SLURM_JOB_NUM_NODES", b"2"),
        ("SLURM_JOB_PARTITION", b"debug"),
        ("SLURM_JOB_RESTART_COUNT", b"0"),
        ("SLURM_JOB_UID", b"1001"),
        ("SLURM_JOB_USER", b"alice"),
        ("SLURM_JOB_WORK_DIR", b"/home/alice"),
        ("SLURM_SCRIPT_CONTEXT", b"epilog_slurmctld"),
        ("PWD", b"/var/log/slurm"),
        ("SLURM_JOBID", b"0"),
    ];
    let mut env: Vec<(String, Vec<u8>)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_vec()))
        .collect();
    env.retain(|(k, _)| k != "SLURM_JOBID");
    env.push(("SLURM_JOB_ID".into(), job_id.to_string().into_bytes()));
    env
}

/// The hook as Slurm runs it: no PATH, no HOME, only `env`.
pub fn hook_command(bin: &Path, env: &[(String, Vec<u8>)]) -> Command {
    let mut command = Command::new(bin);
    command
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, OsString::from_vec(v.clone()));
    }
    command
}

pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// Runs a command and returns its stdout and stderr, panicking with both if it fails.
pub fn run_ok_with_stderr(command: &mut Command) -> (String, String) {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "{command:?} failed with {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    (stdout, stderr)
}

/// Runs a command and returns its stdout, panicking with everything it printed if it fails.
pub fn run_ok(command: &mut Command) -> String {
    run_ok_with_stderr(command).0
}

/// Runs `jobsight --data DATA sql --format json QUERY` with the binary `jobsight` and returns the
/// rows.
pub fn sql_json(jobsight: &str, data: &Path, query: &str) -> Vec<serde_json::Value> {
    sql_json_with(jobsight, data, query, &[])
}

/// [`sql_json`] with DataFusion options set in the environment (`DATAFUSION_...`).
pub fn sql_json_with(
    jobsight: &str,
    data: &Path,
    query: &str,
    env: &[(String, String)],
) -> Vec<serde_json::Value> {
    run_ok(
        Command::new(jobsight)
            .arg("--data")
            .arg(data)
            .args(["sql", "--format", "json", query])
            .envs(env.iter().map(|(k, v)| (k, v))),
    )
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect()
}
