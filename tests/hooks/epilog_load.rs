//! Load: 10,000 hook processes enqueue concurrently and exactly 10,000 records arrive, none lost,
//! none duplicated. Then the same with the spool made unwritable halfway through: every hook still
//! exits 0, and every hook that did not enqueue said so on stderr.
use crate::common;

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{count_files, hook_command, is_root, make_spool, records_in, slurmctld_env};

const EPILOG: &str = env!("CARGO_BIN_EXE_jobsight-epilog");
const TOTAL: u64 = 10_000;
/// Hook processes running at the same time (Slurm runs one EpilogSlurmctld per ending job, so a
/// burst of job ends means many at once).
const CONCURRENCY: u64 = 16;

/// What each hook run did: (job id, exit status ok, stderr).
type Outcomes = Mutex<Vec<(u64, bool, String)>>;

/// Runs TOTAL hooks, CONCURRENCY at a time; `halfway` is called once after TOTAL/2 have finished.
fn run_all(
    spool: &Path,
    unprivileged: bool,
    halfway: impl Fn() + Sync,
) -> Vec<(u64, bool, String)> {
    let outcomes: Outcomes = Mutex::new(Vec::with_capacity(TOTAL as usize));
    let done = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for worker in 0..CONCURRENCY {
            let (outcomes, done, halfway) = (&outcomes, &done, &halfway);
            scope.spawn(move || {
                for job in (1..=TOTAL).filter(|j| j % CONCURRENCY == worker) {
                    let mut command = hook_command(Path::new(EPILOG), &slurmctld_env(job));
                    command.arg("--spool").arg(spool);
                    if unprivileged {
                        command.uid(65534).gid(65534);
                    }
                    let out = command.output().unwrap();
                    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
                    outcomes
                        .lock()
                        .unwrap()
                        .push((job, out.status.success(), stderr));
                    if done.fetch_add(1, Ordering::SeqCst) + 1 == (TOTAL / 2) as usize {
                        halfway();
                    }
                }
            });
        }
    });
    outcomes.into_inner().unwrap()
}

fn job_ids(spool: &Path) -> Vec<u64> {
    records_in(&spool.join("new"))
        .iter()
        .map(|r| r.job_id)
        .collect()
}

#[test]
fn ten_thousand_concurrent_enqueues_lose_and_duplicate_nothing() {
    let dir = tempfile::tempdir().unwrap();
    make_spool(dir.path());
    let outcomes = run_all(dir.path(), false, || {});
    assert!(outcomes.iter().all(|(_, ok, err)| *ok && err.is_empty()));
    let ids = job_ids(dir.path());
    assert_eq!(ids.len(), TOTAL as usize);
    assert_eq!(
        ids.iter().copied().collect::<BTreeSet<_>>(),
        (1..=TOTAL).collect()
    );
    assert_eq!(count_files(&dir.path().join("tmp")), 0);
}

#[test]
fn spool_made_unwritable_halfway_fails_loudly_but_never_fails_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path();
    std::fs::set_permissions(spool, std::fs::Permissions::from_mode(0o755)).unwrap();
    make_spool(spool);
    // Root ignores permission bits, so as root the hooks run as nobody and the spool is theirs.
    let unprivileged = is_root();
    if unprivileged {
        for sub in ["tmp", "new"] {
            std::os::unix::fs::chown(spool.join(sub), Some(65534), Some(65534)).unwrap();
        }
    }
    let outcomes = run_all(spool, unprivileged, || {
        for sub in ["tmp", "new"] {
            std::fs::set_permissions(spool.join(sub), std::fs::Permissions::from_mode(0o555))
                .unwrap();
        }
    });
    assert_eq!(outcomes.len(), TOTAL as usize);
    assert!(outcomes.iter().all(|(_, ok, _)| *ok), "every hook exits 0");
    let enqueued: BTreeSet<u64> = job_ids(spool).into_iter().collect();
    let reported: BTreeSet<u64> = outcomes
        .iter()
        .filter(|(_, _, err)| err.contains("NOT enqueued"))
        .map(|(job, _, err)| {
            assert!(
                err.contains(&format!("job {job} NOT enqueued"))
                    && err.contains("Permission denied"),
                "unexpected report for job {job}: {err}"
            );
            *job
        })
        .collect();
    // Anything else on stderr: an enqueued record whose tmp/ name could not be removed.
    for (job, _, err) in outcomes
        .iter()
        .filter(|(_, _, e)| !e.is_empty() && !e.contains("NOT enqueued"))
    {
        assert!(
            err.contains(&format!("job {job} enqueued, but its temporary name")),
            "job {job}: {err}"
        );
    }
    // Every job is either enqueued (exactly once) or reported, never both, never neither.
    assert_eq!(job_ids(spool).len(), enqueued.len(), "no duplicates");
    assert!(enqueued.is_disjoint(&reported));
    assert_eq!(enqueued.len() + reported.len(), TOTAL as usize);
    assert!(
        enqueued.len() >= (TOTAL / 2) as usize,
        "the first half all got in: {}",
        enqueued.len()
    );
    assert!(!reported.is_empty(), "the second half could not get in");
    // Whatever stays in tmp/ (a hook caught between its steps when tmp/ turned read-only) is a
    // whole record that its hook named on stderr.
    for entry in std::fs::read_dir(spool.join("tmp")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            outcomes.iter().any(|(_, _, e)| e.contains(&name)),
            "{name} left in tmp/ without a report"
        );
    }
    records_in(&spool.join("tmp")); // parses every one, panicking on a partial record
}
