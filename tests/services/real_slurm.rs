//! Against a real Slurm: installs and starts a single-node Slurm 22.05 (munge, MariaDB, slurmdbd,
//! slurmctld, slurmd) with `ops/slurm/start-slurm-single-node.sh`, configures `jobsight-epilog` as
//! both `EpilogSlurmctld` and `Epilog` (each into its own spool, so one set of jobs tests both
//! hooks), submits jobs that succeed, fail (`exit 3`), time out, are cancelled, run out of memory,
//! an array job, a job with a hostile name and work directory, and a requeued job, and checks that
//! every job appears in each spool exactly once per run with the fields Slurm and sacct report.
//! Both spools merged into one then show each job run once, the rest set aside as duplicates.
//! Also compares host-list expansion with `scontrol show hostnames`, and reads the accounts'
//! coordinators from `sacctmgr` as the web interface does.
//!
//! Needs root and the package registry; takes about 2–3 minutes (the time-limit job dominates).
use crate::common;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::run_ok;
use common::services::{install_hook, job_state, sbatch, sh, start_slurm, test_base, wait_until};
use jobsight::web::who::Directory;
use jobsight_ingest::sacct;
use slurm_hooks::{Hook, SpoolRecord, hostlist};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

fn count_records(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "json")
        })
        .count()
}

fn claim(spool: &Path) -> (Vec<SpoolRecord>, String) {
    let (stdout, stderr) = common::run_ok_with_stderr(
        Command::new(JOBSIGHT)
            .args(["spool", "claim", "--format", "json", "--spool"])
            .arg(spool),
    );
    let records = stdout
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            serde_json::from_value(v["record"].clone()).unwrap()
        })
        .collect();
    (records, stderr)
}

#[test]
#[ignore = "needs root: installs and starts a real Slurm (run by .ci/run with --include-ignored)"]
fn epilog_hook_on_a_real_slurm() {
    let _services = common::services::one_at_a_time();
    let epilog = common::services::root_and_epilog(JOBSIGHT, "Slurm");

    // An installation as a site would do it (ops/install-epilog.sh), once per hook and spool,
    // plus the wrapper a site needs for a spool other than the default.
    let base = test_base("slurm-test");
    let spool_ctld = base.join("spool-slurmctld");
    let spool_node = base.join("spool-slurmd");
    let bin_dir = epilog.parent().unwrap();
    let ctld_hook = install_hook(&base, bin_dir, &spool_ctld, "epilog-slurmctld.sh", "slurm");
    let node_hook = install_hook(&base, bin_dir, &spool_node, "epilog-slurmd.sh", "root");

    let since = sh("date +%Y-%m-%dT%H:%M:%S").trim().to_string();
    let _slurm = start_slurm(&ctld_hook, Some(&node_hook));
    let cluster = sh("sed -n 's/^ClusterName=//p' /etc/slurm/slurm.conf")
        .trim()
        .to_string();
    let host = sh("hostname -s").trim().to_string();
    let (uid, gid) = (
        sh("id -u alice").trim().parse::<u32>().unwrap(),
        sh("id -g alice").trim().parse::<u32>().unwrap(),
    );

    // The host-list expansion agrees with Slurm's own.
    for list in [
        "node[01-04,07],gpu[1-2]",
        "n[8-10]",
        "n[08-10]",
        "n[001-3]",
        "r[1-2]n[1-2]",
        "a,b,a",
        "n[1,1]",
        &host,
    ] {
        let slurm: Vec<String> = sh(&format!("scontrol show hostnames '{list}'"))
            .lines()
            .map(String::from)
            .collect();
        assert_eq!(hostlist::expand(list).unwrap(), slurm, "host list {list}");
    }

    // The accounts' coordinators, as the web interface reads them from this release's slurmdbd
    // (`sacctmgr`). Each `add` fails when an earlier run added it already: the listing counts.
    sh("sacctmgr -i add account physics,chem Description=t Organization=t >/dev/null || true");
    sh("sacctmgr -i add user bob,carol account=physics >/dev/null || true");
    sh("sacctmgr -i add coordinator account=physics names=bob >/dev/null || true");
    let directory = jobsight::web::who::SystemDirectory {
        sacctmgr: "sacctmgr".into(),
    };
    let coordinators = directory.coordinators().unwrap();
    assert_eq!(
        coordinators
            .get("physics")
            .map(|names| names.iter().map(String::as_str).collect::<Vec<_>>()),
        Some(vec!["bob"]),
        "{coordinators:?}"
    );

    let weird_dir = base.join("w\u{20ac}ird dir");
    std::fs::create_dir(&weird_dir).unwrap();
    std::fs::set_permissions(&weird_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let hostile_name: &[u8] = b"evil\nname\xff\x1b[31m\"}";

    // The time-limit job first: it takes longest. Then the cancelled one, once it runs.
    let mut expected: BTreeMap<u64, (&str, Vec<u8>)> = BTreeMap::new(); // job -> (kind, name)
    let timeout = sbatch("lifecycle/timeout", &[]);
    expected.insert(timeout, ("timeout", b"timeout".to_vec()));
    let cancel = sbatch("lifecycle/cancel", &[]);
    expected.insert(cancel, ("cancel", b"cancel".to_vec()));
    wait_until("the job to cancel to run", Duration::from_secs(60), || {
        job_state(cancel) == "RUNNING"
    });
    sh(&format!("scancel {cancel}"));
    let mut ok = 0;
    for kind in ["ok", "fail", "oom"] {
        let job = sbatch(&format!("lifecycle/{kind}"), &[]);
        expected.insert(job, (kind, kind.as_bytes().to_vec()));
        if kind == "ok" {
            ok = job;
        }
    }
    let array = sbatch("lifecycle/array", &[]);
    // The hostile job also waits for the ok one: a two-job chain, whose dependency sacct's
    // submit line must give (before the name's newline breaks sacct's line).
    let hostile = sbatch(
        "lifecycle/ok",
        &[
            format!("--dependency=afterok:{ok}").into(),
            "-J".into(),
            OsString::from_vec(hostile_name.to_vec()),
            "--chdir".into(),
            weird_dir.clone().into(),
        ],
    );
    expected.insert(hostile, ("hostile", hostile_name.to_vec()));
    // A requeued job: requeue it while it runs, then let the second run start at once.
    let requeued = sbatch("lifecycle/requeue", &[]);
    expected.insert(requeued, ("requeue", b"requeue".to_vec()));
    wait_until("the job to requeue to run", Duration::from_secs(90), || {
        job_state(requeued) == "RUNNING"
    });
    sh(&format!("scontrol requeue {requeued}"));
    wait_until(
        "the requeued job to be pending",
        Duration::from_secs(60),
        || job_state(requeued) == "PENDING",
    );
    sh(&format!("scontrol update jobid={requeued} starttime=now"));

    // Every job leaves the queue, then every hook has run.
    wait_until("all jobs to finish", Duration::from_secs(300), || {
        sh("squeue -h | wc -l").trim() == "0"
    });
    // One record per job end per hook: 8 plain jobs (the requeued one ends twice) + 3 array tasks.
    let runs = expected.len() + 1 + 3;
    // Up to two minutes for the last records (a loaded CI machine once took longer than one);
    // then the counts themselves are asserted, so a record missing is told from one late.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while std::time::Instant::now() < deadline
        && (count_records(&spool_ctld.join("new")) < runs
            || count_records(&spool_node.join("new")) < runs)
    {
        std::thread::sleep(Duration::from_millis(500));
    }
    std::thread::sleep(Duration::from_secs(2)); // any stray extra record would show up now
    assert_eq!(
        count_records(&spool_ctld.join("new")),
        runs,
        "EpilogSlurmctld records"
    );
    assert_eq!(
        count_records(&spool_node.join("new")),
        runs,
        "Epilog records"
    );

    // Both spools merged: each job run once, every further record set aside as a duplicate.
    let merged = base.join("spool-merged");
    run_ok(
        Command::new(JOBSIGHT)
            .args(["spool", "init", "--spool"])
            .arg(&merged),
    );
    for spool in [&spool_ctld, &spool_node] {
        sh(&format!(
            "cp -p {}/new/*.json {}/new/",
            spool.display(),
            merged.display()
        ));
    }
    let (records, report) = claim(&merged);
    let distinct = expected.len() + 3;
    assert_eq!(records.len(), distinct, "{report}");
    assert!(
        report.contains(&format!(
            "set aside {} duplicate(s) and 0 failed",
            2 * runs - distinct
        )),
        "{report}"
    );

    // Slurm's own view of each job, to check that the records describe the right jobs.
    let sacct_state = |job: u64| -> String {
        let mut state = String::new();
        wait_until("sacct to settle", Duration::from_secs(60), || {
            // Job ids restart after a clean state: only jobs submitted since this run began count.
            state = sh(&format!(
                "sacct -n -X -P -S {since} -j {job} -o State 2>/dev/null | tail -1"
            ))
            .trim()
            .to_string();
            !state.is_empty()
                && !["RUNNING", "PENDING", "COMPLETING", "REQUEUED"].contains(&state.as_str())
        });
        state
    };

    for (spool, hook) in [
        (&spool_ctld, Hook::EpilogSlurmctld),
        (&spool_node, Hook::EpilogSlurmd),
    ] {
        let (records, report) = claim(spool);
        // The requeued job's second end has the same (cluster, job, restart count) as its first:
        // Slurm 22.05 increments the count before the interrupted run's epilog.
        assert_eq!(records.len(), distinct, "{hook:?}: {report}");
        assert!(
            report.contains("set aside 1 duplicate(s) and 0 failed"),
            "{hook:?}: {report}"
        );
        let mut array_tasks = Vec::new();
        for r in &records {
            assert_eq!(r.hook, hook);
            assert!(r.warnings.is_empty(), "job {}: {:?}", r.job_id, r.warnings);
            assert_eq!(r.cluster.as_ref().unwrap().as_str(), Some(cluster.as_str()));
            assert_eq!(r.user.as_ref().unwrap().as_str(), Some("alice"));
            assert_eq!((r.uid, r.gid), (Some(uid), Some(gid)));
            assert_eq!(r.partition.as_ref().unwrap().as_str(), Some("debug"));
            assert_eq!(r.host.as_str(), Some(host.as_str()));
            let nodes = r.nodes.as_ref().unwrap();
            assert_eq!(
                (nodes.given.as_str(), nodes.expanded.clone()),
                (Some(host.as_str()), vec![host.clone()])
            );
            assert_eq!(r.num_nodes, Some(1));
            assert_eq!(r.cpus_per_node.as_ref().unwrap().expanded.len(), 1);
            let exit = r.exit_code.as_ref().unwrap();
            let (kind, name) = match expected.get(&r.job_id) {
                Some((kind, name)) => (*kind, name.clone()),
                None => {
                    array_tasks.push(r.clone());
                    ("array", b"arr".to_vec())
                }
            };
            // Exit statuses exactly as Slurm 22.05 hands them to epilogs: a time-out or
            // cancellation looks like success there; sacct tells them apart (checked below).
            let want = match kind {
                "fail" => (768, "3:0"),
                "oom" => (253, "0:125"),
                _ => (0, "0:0"),
            };
            assert_eq!(
                (exit.wait_status, exit.code_signal.as_deref()),
                (Some(want.0), Some(want.1)),
                "{kind} job {}",
                r.job_id
            );
            assert_eq!(
                r.restart_count,
                Some(u32::from(kind == "requeue")),
                "{kind}"
            );
            match hook {
                Hook::EpilogSlurmctld => {
                    assert_eq!(r.job_name.as_ref().unwrap().as_bytes(), &name[..], "{kind}");
                    assert_eq!(r.group.as_ref().unwrap().as_str(), Some("alice"));
                    assert_eq!(r.account.as_ref().unwrap().as_str(), Some("research"));
                    let dir = if kind == "hostile" {
                        weird_dir.to_str().unwrap()
                    } else {
                        "/tmp"
                    };
                    assert_eq!(r.work_dir.as_ref().unwrap().as_str(), Some(dir));
                }
                Hook::EpilogSlurmd => assert_eq!(r.job_name, None, "Epilog gets no job name"),
            }
            let want_state = match kind {
                "ok" | "hostile" | "array" | "requeue" => "COMPLETED",
                "fail" => "FAILED",
                "timeout" => "TIMEOUT",
                "cancel" => "CANCELLED",
                "oom" => "OUT_OF_MEMORY",
                _ => unreachable!(),
            };
            assert!(
                sacct_state(r.job_id).starts_with(want_state),
                "job {} ({kind}): sacct says {}",
                r.job_id,
                sacct_state(r.job_id)
            );
            // The enrichment library finds this record's run in the accounting database (job ids
            // repeat there after earlier test runs) and builds its jobs row.
            if hook == Hook::EpilogSlurmctld {
                // `sacct` by name: the release's own (its client commands first in PATH).
                let (answer, exits) =
                    sacct::query(Path::new("sacct"), r.job_id, Some(&cluster)).unwrap();
                assert!(
                    answer.set_aside.is_empty(),
                    "{kind}: {:?}",
                    answer.set_aside
                );
                let accounting = answer.records;
                let sacct::Selection::Settled(acct) =
                    sacct::select(&accounting, r.job_id, Some(&cluster), r.enqueued_at)
                else {
                    panic!("job {} ({kind}) not settled: {accounting:?}", r.job_id)
                };
                assert!(acct.notes.is_empty(), "{kind}: {:?}", acct.notes);
                assert!(
                    acct.state.as_deref().unwrap_or("").starts_with(want_state),
                    "{kind}: {acct:?}"
                );
                let want_exit = match kind {
                    "fail" => Some((3, 0)),
                    "oom" => Some((0, 125)),
                    "ok" | "hostile" | "array" | "requeue" => Some((0, 0)),
                    _ => None, // cancel and timeout: the signal Slurm records varies
                };
                if want_exit.is_some() {
                    assert_eq!(sacct::exit_of(acct, &exits), want_exit, "{kind}: {exits:?}");
                    // From 23.11 the JSON's exit code is right too (22.05's says 0 for `exit 3`),
                    // the evidence that the text stays the source only for older releases.
                    if common::services::slurm_release() != "22.05" {
                        assert_eq!(acct.exit_json, want_exit, "{kind}: the JSON's exit code");
                    }
                }
                let row = sacct::job_row(r, acct, sacct::line_of(acct, &exits)).unwrap();
                let want_dependency = (kind == "hostile").then(|| format!("afterok:{ok}"));
                assert_eq!(row.dependency, want_dependency, "{kind}: {exits:?}");
                assert_eq!(
                    (row.job_id.as_str(), row.user.as_deref()),
                    (r.job_id.to_string().as_str(), Some("alice"))
                );
                assert!(row.start.unwrap() <= row.end, "{kind}: {row:?}");
                if kind == "requeue" {
                    // The claimed record is the interrupted run's; the row is the final run's.
                    assert!(
                        row.end > r.enqueued_at && row.state.as_deref() == Some("COMPLETED"),
                        "{row:?}"
                    );
                } else {
                    assert!(row.end <= r.enqueued_at, "{kind}: {row:?}");
                }
            }
        }
        // The array: three tasks of one array job.
        assert_eq!(array_tasks.len(), 3);
        if hook == Hook::EpilogSlurmctld {
            let mut tasks: Vec<_> = array_tasks
                .iter()
                .map(|r| (r.array_job_id, r.array_task_id))
                .collect();
            tasks.sort();
            assert_eq!(
                tasks,
                [
                    (Some(array), Some(1)),
                    (Some(array), Some(2)),
                    (Some(array), Some(3))
                ]
            );
        }
    }

    // The per-job step through the CLI, on the merged spool (its records are claimed, in cur/):
    // every job run lands in the warehouse once, with its final state from sacct. Job records only
    // here; telemetry is tests/services/real_prometheus.rs.
    let config = base.join("jobsight.toml");
    std::fs::write(&config, "[ingest]\nretry_after_s = 1\nretry_max_s = 2\n").unwrap();
    let data = base.join("data");
    let jobsight = || {
        let mut command = Command::new(JOBSIGHT);
        command
            .arg("--config")
            .arg(&config)
            .arg("--data")
            .arg(&data);
        command
    };
    let mut last = String::new();
    wait_until("every job run ingested", Duration::from_secs(90), || {
        let (stdout, stderr) = common::run_ok_with_stderr(
            jobsight()
                .args(["ingest", "--telemetry", "none", "--spool"])
                .arg(&merged),
        );
        last = format!("{stdout}{stderr}");
        std::fs::read_dir(merged.join("done")).map_or(0, |d| d.count()) == distinct
    });
    assert!(!last.contains("quarantined  "), "{last}");
    let rows: BTreeMap<String, (String, Option<i64>)> = run_ok(jobsight().args([
        "sql",
        "--format",
        "json",
        "SELECT job_id, state, exit_code FROM jobs",
    ]))
    .lines()
    .map(|l| {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        (
            v["job_id"].as_str().unwrap().to_string(),
            (
                v["state"].as_str().unwrap().to_string(),
                v["exit_code"].as_i64(),
            ),
        )
    })
    .collect();
    assert_eq!(rows.len(), distinct, "{rows:?}");
    for (job, (kind, _)) in &expected {
        let (state, exit) = &rows[&job.to_string()];
        let want = match *kind {
            "fail" => ("FAILED", Some(3)),
            "timeout" => ("TIMEOUT", None),
            "cancel" => ("CANCELLED", None),
            "oom" => ("OUT_OF_MEMORY", Some(0)),
            _ => ("COMPLETED", Some(0)),
        };
        assert!(state.starts_with(want.0), "job {job} ({kind}): {state}");
        if want.1.is_some() {
            assert_eq!(*exit, want.1, "job {job} ({kind})");
        }
    }
    let _ = std::fs::remove_dir_all(&base);
}
