//! The `jobsight-epilog` binary as a whole process, run the way Slurm runs it (empty environment
//! except the job's variables): it enqueues exactly one faithful record, and whatever goes wrong
//! (no spool, a read-only or full disk, symlinks, bad arguments, garbage input) it exits 0 and says
//! why on stderr.
use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Output;

use common::{count_files, hook_command, is_root, make_spool, records_in, slurmctld_env};
use slurm_hooks::{Hook, Text};

const EPILOG: &str = env!("CARGO_BIN_EXE_jobsight-epilog");

fn run_hook(spool: &Path, env: &[(String, Vec<u8>)]) -> Output {
    hook_command(Path::new(EPILOG), env)
        .arg("--spool")
        .arg(spool)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn enqueues_one_faithful_record() {
    let dir = tempfile::tempdir().unwrap();
    make_spool(dir.path());
    let out = run_hook(dir.path(), &slurmctld_env(77));
    assert!(out.status.success());
    assert_eq!(stderr(&out), "");
    let records = records_in(&dir.path().join("new"));
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(r.job_id, 77);
    assert_eq!(r.hook, Hook::EpilogSlurmctld);
    assert_eq!(r.cluster, Some(Text::from("ci")));
    assert_eq!(r.nodes.as_ref().unwrap().expanded, ["node01", "node02"]);
    assert_eq!(r.cpus_per_node.as_ref().unwrap().expanded, [4, 4]);
    let exit = r.exit_code.as_ref().unwrap();
    assert_eq!(
        (exit.wait_status, exit.code, exit.signal),
        (Some(768), Some(3), Some(0))
    );
    assert_eq!(count_files(&dir.path().join("tmp")), 0);
}

#[test]
fn keeps_hostile_bytes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    make_spool(dir.path());
    let mut env = slurmctld_env(78);
    let name = b"evil\nname\xff\x1b[31m\"},{".to_vec();
    let work_dir = b"/tmp/w\xe2\x82\xacird dir\n".to_vec();
    env.retain(|(k, _)| k != "SLURM_JOB_NAME" && k != "SLURM_JOB_WORK_DIR");
    env.push(("SLURM_JOB_NAME".into(), name.clone()));
    env.push(("SLURM_JOB_WORK_DIR".into(), work_dir.clone()));
    assert!(run_hook(dir.path(), &env).status.success());
    let records = records_in(&dir.path().join("new"));
    assert_eq!(records[0].job_name.as_ref().unwrap().as_bytes(), &name[..]);
    assert_eq!(
        records[0].work_dir.as_ref().unwrap().as_bytes(),
        &work_dir[..]
    );
    // One record, one line: the bytes cannot break the file's structure.
    let file = std::fs::read_dir(dir.path().join("new"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(
        std::fs::read(file)
            .unwrap()
            .iter()
            .filter(|&&b| b == b'\n')
            .count(),
        1
    );
}

#[test]
fn spool_from_env_when_no_flag() {
    let dir = tempfile::tempdir().unwrap();
    make_spool(dir.path());
    let mut env = slurmctld_env(79);
    env.push((
        "JOBSIGHT_SPOOL".into(),
        dir.path().as_os_str().as_encoded_bytes().to_vec(),
    ));
    let out = hook_command(Path::new(EPILOG), &env).output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        records_in(&dir.path().join("new")).len(),
        1,
        "{}",
        stderr(&out)
    );
}

#[test]
fn bad_arguments_still_enqueue_to_the_configured_spool() {
    let dir = tempfile::tempdir().unwrap();
    make_spool(dir.path());
    let mut env = slurmctld_env(80);
    env.push((
        "JOBSIGHT_SPOOL".into(),
        dir.path().as_os_str().as_encoded_bytes().to_vec(),
    ));
    let out = hook_command(Path::new(EPILOG), &env)
        .arg("--bogus")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("unknown argument"),
        "{}",
        stderr(&out)
    );
    assert_eq!(records_in(&dir.path().join("new")).len(), 1);

    // An empty --spool= is not the working directory: the configured spool gets the record.
    let cwd = tempfile::tempdir().unwrap();
    for args in [vec!["--spool="], vec!["--spool", ""]] {
        let out = hook_command(Path::new(EPILOG), &env)
            .args(&args)
            .current_dir(cwd.path())
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(
            stderr(&out).contains("not an empty value"),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(records_in(&dir.path().join("new")).len(), 3);
    assert_eq!(
        count_files(cwd.path()),
        0,
        "nothing written where the hook ran"
    );
}

#[test]
fn missing_spool_is_reported_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let out = run_hook(&missing, &slurmctld_env(81));
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("job 81 NOT enqueued") && err.contains("nope is missing"),
        "{err}"
    );
}

#[test]
fn no_job_id_is_reported_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    make_spool(dir.path());
    let out = run_hook(dir.path(), &[]);
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("nothing enqueued: SLURM_JOB_ID is not set"),
        "{}",
        stderr(&out)
    );
    assert_eq!(count_files(&dir.path().join("new")), 0);
}

#[test]
fn symlinked_spool_dirs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    make_spool(dir.path());
    std::fs::remove_dir(dir.path().join("new")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("new")).unwrap();
    let out = run_hook(dir.path(), &slurmctld_env(82));
    assert!(out.status.success());
    assert!(stderr(&out).contains("is a symlink"), "{}", stderr(&out));
    assert_eq!(count_files(elsewhere.path()), 0);
}

/// Runs the hook as an unprivileged user when the test runs as root (root ignores permissions).
fn run_hook_unprivileged(spool: &Path, env: &[(String, Vec<u8>)]) -> Output {
    let mut command = hook_command(Path::new(EPILOG), env);
    command.arg("--spool").arg(spool);
    if is_root() {
        command.uid(65534).gid(65534);
    }
    command.output().unwrap()
}

#[test]
fn unwritable_spool_is_reported_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    make_spool(dir.path());
    for sub in ["tmp", "new"] {
        std::fs::set_permissions(dir.path().join(sub), std::fs::Permissions::from_mode(0o555))
            .unwrap();
    }
    let out = run_hook_unprivileged(dir.path(), &slurmctld_env(83));
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("job 83 NOT enqueued") && err.contains("Permission denied"),
        "{err}"
    );
}

/// A full disk, for real: a 64 KiB tmpfs filled up. Needs root to mount.
#[test]
#[ignore = "needs root: mounts a tmpfs (run by .ci/run with --include-ignored)"]
fn full_disk_is_reported_and_exits_0() {
    assert!(is_root(), "this test mounts a tmpfs and must run as root");
    let dir = tempfile::tempdir().unwrap();
    let mount = |args: &[&str]| {
        std::process::Command::new("mount")
            .args(args)
            .status()
            .unwrap()
    };
    assert!(
        mount(&[
            "-t",
            "tmpfs",
            "-o",
            "size=64k",
            "tmpfs",
            dir.path().to_str().unwrap()
        ])
        .success()
    );
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(self.0).status();
        }
    }
    let _guard = Unmount(dir.path());
    make_spool(dir.path());
    // Fill the file system to the last block.
    let filler = dir.path().join("filler");
    let _ = std::fs::write(&filler, vec![0u8; 1024 * 1024]);
    let out = run_hook(dir.path(), &slurmctld_env(84));
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("job 84 NOT enqueued") && err.contains("No space left"),
        "{err}"
    );
    assert_eq!(
        count_files(&dir.path().join("tmp")),
        0,
        "no partial record left behind"
    );
    assert_eq!(count_files(&dir.path().join("new")), 0);
}

#[test]
fn help_and_version_exit_0() {
    for flag in ["--help", "--version"] {
        let out = hook_command(Path::new(EPILOG), &[])
            .arg(flag)
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("jobsight-epilog"));
    }
}
