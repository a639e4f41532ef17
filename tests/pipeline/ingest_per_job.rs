//! The per-job ingest step's failure cases: sacct missing, and Prometheus down, slow, answering
//! HTTP 500, garbage, a cut-off answer, a partial answer or series for a foreign node. In every case
//! the job stays pending in `cur/` with a reason that names it, is retried with backoff, goes to
//! `failed/` with its reason only after the deadline, and nothing already in the warehouse changes.
//!
//! Accounting comes from a stand-in `sacct` that prints real `sacct --json` output of Slurm 22.05
//! (tests/fixtures); Prometheus's faults come from a small HTTP server in this process, because a
//! real Prometheus cannot be made to produce them on demand. The success path against a real
//! Prometheus and Slurm is `tests/services/real_prometheus.rs`.
use crate::common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use jobsight::config::{Options, Settings};
use jobsight::schedule;
use jobsight_ingest::per_job::{self, Outcome};
use jobsight_ingest::prometheus::Prometheus;
use jobsight_ingest::sources;
use jobsight_ingest::spool::Spool;
use slurm_hooks::SpoolRecord;

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

/// Job 1 of cluster `ci` in the fixture: the TIMEOUT run submitted at 1795322321 on node `vm`,
/// enqueued by its epilog four seconds after its end.
const JOB1_ENQUEUED: i64 = 1_795_322_415;
/// Job 2's last run, COMPLETED at 1795324829.
const JOB2_ENQUEUED: i64 = 1_795_324_832;

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(secs, 0).unwrap()
}

fn record(job: u64, enqueued: i64) -> SpoolRecord {
    record_of("ci", job, enqueued)
}

/// [`record`], of `cluster`.
fn record_of(cluster: &str, job: u64, enqueued: i64) -> SpoolRecord {
    let json = format!(
        r#"{{"schema_version":1,"cluster":"{cluster}","job_id":{job},"array_job_id":null,"array_task_id":null,
        "restart_count":0,"user":"alice","uid":1001,"gid":1001,"group":null,"account":null,"partition":"debug",
        "job_name":null,"nodes":{{"given":"vm","expanded":["vm"]}},"num_nodes":1,"cpus_per_node":null,"exit_code":null,
        "derived_exit_code":null,"work_dir":null,"hook":"epilog_slurmctld","host":"vm",
        "enqueued_at":"{}","warnings":[]}}"#,
        at(enqueued).to_rfc3339()
    );
    SpoolRecord::from_json(json.as_bytes()).unwrap()
}

/// A stand-in `sacct`: the fixture for `--json`, no other job on the job's nodes (`-N`), the
/// matching text exit codes otherwise.
fn fake_sacct(dir: &Path) -> PathBuf {
    let fixture = common::repo().join("tests/fixtures/sacct-22.05.8.json");
    let fixture = fixture.display();
    let path = dir.join("sacct");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\ncase \"$*\" in\n  *--json*) cat '{fixture}' ;;\n  *\" -N \"*) ;;\n  *) printf '1|1795322321|0:0\\n2|1795324824|0:0\\n' ;;\nesac\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn settings(sacct: &Path, prometheus_url: &str, extra: &str) -> Settings {
    let text = format!(
        "[ingest]\nsacct = \"{}\"\nretry_after_s = 60\nretry_max_s = 600\ngive_up_after_s = 86400\n[prometheus]\nurl = \"{prometheus_url}\"\ntimeout_s = 1\nlag_s = 60\n{extra}",
        sacct.display()
    );
    Options::parse(&text, Path::new("test.toml"))
        .unwrap()
        .resolve(Path::new("test.toml"))
        .unwrap()
}

/// Every file under `dir` with its bytes: to prove that nothing stored changed.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.push((path, bytes));
            }
        }
    }
    out.sort();
    out
}

/// How a fake Prometheus misbehaves.
#[derive(Debug, Clone, Copy)]
enum Fault {
    Http500,
    Garbage,
    Slow,
    CutOff,
    Partial,
    ForeignNode,
    TwoSeriesPerNode,
    /// No fault: node `vm` at 0.5 for every metric, every step from start to end.
    Healthy,
}

/// The value of a form field of a request body (`start=...&end=...`).
fn form_value(request: &str, key: &str) -> Option<String> {
    let body = request.split("\r\n\r\n").nth(1)?;
    body.split('&')
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .map(|v| v.to_string())
}

/// Serves `fault` to every request on a free loopback port until the test process ends.
fn fake_prometheus(fault: Fault) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            // Read the request head and its form body, so that the client sees our answer and not
            // a reset.
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            let body_len = loop {
                let Ok(n) = stream.read(&mut buf) else {
                    break 0;
                };
                if n == 0 {
                    break 0;
                }
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request).to_string();
                if let Some(head_end) = text.find("\r\n\r\n") {
                    let len: usize = text[..head_end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    break head_end + 4 + len;
                }
            };
            while request.len() < body_len {
                let Ok(n) = stream.read(&mut buf) else { break };
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buf[..n]);
            }
            let series = |instance: &str| {
                format!(r#"{{"metric":{{"instance":"{instance}"}},"values":[[1795322340,"0.5"]]}}"#)
            };
            let ok = |result: String| {
                format!(
                    r#"{{"status":"success","data":{{"resultType":"matrix","result":[{result}]}}}}"#
                )
            };
            let (status, body, declared_len) = match fault {
                Fault::Http500 => ("500 Internal Server Error", "internal error: out of memory".to_string(), None),
                Fault::Garbage => ("200 OK", "<html><body>Welcome to nginx!</body></html>".to_string(), None),
                Fault::Slow => {
                    std::thread::sleep(Duration::from_secs(3));
                    ("200 OK", ok(series("vm:9100")), None)
                }
                Fault::CutOff => {
                    let body = ok(series("vm:9100"));
                    ("200 OK", body[..40].to_string(), Some(body.len()))
                }
                Fault::Partial => (
                    "200 OK",
                    r#"{"status":"success","warnings":["remote read from store-2 failed"],"data":{"resultType":"matrix","result":[]}}"#.to_string(),
                    None,
                ),
                Fault::ForeignNode => ("200 OK", ok(series("login1:9100")), None),
                Fault::TwoSeriesPerNode => (
                    "200 OK",
                    ok(format!("{},{}", series("vm:9100"), series("vm"))),
                    None,
                ),
                Fault::Healthy => {
                    let text = String::from_utf8_lossy(&request).to_string();
                    let number = |k: &str| -> f64 {
                        form_value(&text, k)
                            .and_then(|v| v.trim_end_matches('s').parse().ok())
                            .unwrap_or(0.0)
                    };
                    let (start, end, step) = (number("start"), number("end"), number("step").max(1.0));
                    let mut values = Vec::new();
                    let mut t = start;
                    while t <= end {
                        values.push(format!("[{t},\"0.5\"]"));
                        t += step;
                    }
                    let series = format!(
                        r#"{{"metric":{{"instance":"vm:9100"}},"values":[{}]}}"#,
                        values.join(",")
                    );
                    ("200 OK", ok(series), None)
                }
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                declared_len.unwrap_or(body.len())
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
            // Dropping the stream closes it: a cut-off answer ends here, short of its length.
        }
    });
    url
}

/// A spool holding job 1's record, and a warehouse that already holds job 2.
struct Setup {
    _tmp: tempfile::TempDir,
    spool: Spool,
    data: PathBuf,
    sacct: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::init(&tmp.path().join("spool"), 0o700).unwrap();
    let data = tmp.path().join("data");
    let sacct = fake_sacct(tmp.path());
    // Job 2, job record only: what an earlier run stored.
    slurm_hooks::spool_dir::enqueue(spool.root(), &record(2, JOB2_ENQUEUED)).unwrap();
    let report = ingest_accounting_only(&spool, &data, &sacct, JOB2_ENQUEUED + 60);
    assert_eq!(report.count("done"), 1, "{report:?}");
    slurm_hooks::spool_dir::enqueue(spool.root(), &record(1, JOB1_ENQUEUED)).unwrap();
    Setup {
        _tmp: tmp,
        spool,
        data,
        sacct,
    }
}

fn only_outcome(report: &per_job::IngestReport) -> &Outcome {
    let outcomes: Vec<&Outcome> = report
        .records
        .iter()
        .filter(|r| r.job.as_deref() == Some("ci:1"))
        .map(|r| &r.outcome)
        .collect();
    assert_eq!(outcomes.len(), 1, "{report:?}");
    outcomes[0]
}

#[test]
fn prometheus_faults_leave_the_job_pending_and_the_warehouse_untouched() {
    let mut cases: Vec<(&str, String, &str)> = vec![
        (
            "http 500",
            fake_prometheus(Fault::Http500),
            "HTTP 500: internal error: out of memory",
        ),
        (
            "garbage",
            fake_prometheus(Fault::Garbage),
            "prometheus answer not understood",
        ),
        ("slow", fake_prometheus(Fault::Slow), "no answer within 1s"),
        (
            "cut off",
            fake_prometheus(Fault::CutOff),
            "cannot reach prometheus",
        ),
        (
            "partial",
            fake_prometheus(Fault::Partial),
            "partial answer, prometheus warns: remote read from store-2 failed",
        ),
        (
            "foreign node",
            fake_prometheus(Fault::ForeignNode),
            "\"login1:9100\", not one of the job's nodes",
        ),
        (
            "two series",
            fake_prometheus(Fault::TwoSeriesPerNode),
            "more than one series for node vm",
        ),
    ];
    // Prometheus down: a port that was just free, taken after the stand-ins have their ports
    // (taken before, the kernel once gave it straight back to the next stand-in, which then
    // answered the "down" case with its HTTP 500).
    let down = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    cases.insert(0, ("down", down, "cannot reach prometheus"));
    for (case, url, expected) in cases {
        let s = setup();
        let before = snapshot(&s.data);
        let settings = settings(&s.sacct, &url, "");
        let prometheus = Prometheus::new(settings.prometheus.clone());
        let now = at(JOB1_ENQUEUED + 120);
        let report = per_job::run(
            &s.spool,
            &s.data,
            &settings.ingest,
            Some(&prometheus),
            None,
            now,
            |_, _| {},
        )
        .unwrap();
        match only_outcome(&report) {
            Outcome::Pending {
                attempts,
                next_attempt,
                reason,
            } => {
                assert_eq!(*attempts, 1, "{case}");
                assert_eq!(*next_attempt, now + chrono::Duration::seconds(60), "{case}");
                assert!(
                    reason.contains("job 1, metric cpu_user"),
                    "{case}: {reason}"
                );
                assert!(reason.contains(expected), "{case}: {reason}");
            }
            other => panic!("{case}: {other:?}"),
        }
        assert_eq!(snapshot(&s.data), before, "{case}: the warehouse changed");
        let cur = s.spool.root().join("cur");
        let notes: Vec<String> = std::fs::read_dir(&cur)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(notes.len(), 2, "{case}: record and its note: {notes:?}");
        assert!(notes.iter().any(|n| n.ends_with(".pending")), "{case}");
    }
}

/// The trap of compaction: a job stored, its record left in `cur/` by a run killed before it
/// finished the record, and its day compacted (by the nightly run) before the next run. Stored
/// again it would count twice in `jobs`; it is recognised as already stored instead.
#[test]
fn a_job_already_in_a_compacted_day_is_not_stored_twice() {
    let s = setup();
    let done = s.spool.root().join("done");
    let record = std::fs::read_dir(&done).unwrap().next().unwrap().unwrap();
    let day = chrono::NaiveDate::from_ymd_opt(2026, 11, 22).unwrap();
    let jobs_dir = jobsight_warehouse::catalog::partition_dir(
        &s.data,
        jobsight_warehouse::catalog::Table::Jobs,
        day,
    );
    assert!(jobs_dir.is_dir(), "job 2 ended on {day}");
    let compacted = jobsight_warehouse::catalog::compact_day(
        &s.data,
        jobsight_warehouse::catalog::Table::Jobs,
        day,
    )
    .unwrap();
    assert_eq!(compacted.parts, 1);
    let before = snapshot(&s.data);
    // Job 1's record is in new/; job 2's goes back to cur/, as a killed run leaves it.
    std::fs::rename(
        record.path(),
        s.spool.root().join("cur").join(record.file_name()),
    )
    .unwrap();

    let mut settings = settings(&s.sacct, "http://127.0.0.1:9", "");
    settings.ingest.telemetry = jobsight::config::TelemetryKind::None;
    let report = per_job::run(
        &s.spool,
        &s.data,
        &settings.ingest,
        None,
        None,
        at(JOB1_ENQUEUED + 7200),
        |_, _| {},
    )
    .unwrap();
    let job2: Vec<&Outcome> = report
        .records
        .iter()
        .filter(|r| r.job.as_deref() == Some("ci:2"))
        .map(|r| &r.outcome)
        .collect();
    assert!(
        matches!(job2[..], [Outcome::AlreadyStored { day: d, .. }] if *d == day),
        "{report:?}"
    );
    assert_eq!(report.count("already_stored"), 1);
    // Job 1 is stored as usual; the compacted day file is untouched.
    assert_eq!(report.count("done"), 1, "{report:?}");
    let compacted_file = jobs_dir.join("part-compacted.parquet");
    let unchanged = |snap: &[(PathBuf, Vec<u8>)]| {
        snap.iter()
            .find(|(p, _)| p.ends_with("part-compacted.parquet") && p.starts_with(&jobs_dir))
            .map(|(_, b)| b.clone())
    };
    assert_eq!(unchanged(&before), unchanged(&snapshot(&s.data)));
    assert!(compacted_file.is_file());
    assert!(
        std::fs::read_dir(s.spool.root().join("cur"))
            .unwrap()
            .next()
            .is_none()
    );
}

/// A stand-in `sacct` for job 5 of cluster `ci`, which ran 10:00:00 to 10:01:40 on node `vm`:
/// its steps in Slurm 22.05's JSON (a batch step that kept its CPU busy and held 1031.5 MiB, and
/// the `extern` step), and `on_node` as the answer to the query for the jobs on its node
/// (`fail`: sacct fails).
fn steps_sacct(dir: &Path, on_node: &str) -> PathBuf {
    let path = dir.join("sacct-steps");
    let script = r#"#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
if "-N" in args:
    if ON_NODE == "fail":
        sys.stderr.write("sacct: error: Problem talking to the database\n")
        sys.exit(1)
    sys.stdout.write(ON_NODE)
    sys.exit(0)
def step(name, user, system, total, mem):
    return {"step": {"job_id": 5, "het": {"component": None}, "id": name, "name": name},
            "state": "COMPLETED", "time": {"start": 1795341600, "end": 1795341700,
            "user": user, "system": system, "total": total},
            "nodes": {"count": 1, "range": "vm", "list": ["vm"]}, "tasks": {"count": 1},
            "statistics": {"energy": {"consumed": None}},
            "tres": {"requested": {
                "max": [{"type": "mem", "name": None, "id": 2, "count": mem, "task": 0, "node": "vm"}],
                "total": [{"type": "mem", "name": None, "id": 2, "count": mem}]}}}
if "--json" in args:
    job = {"job_id": 5, "name": "busy", "cluster": "ci", "user": "alice",
           "state": {"current": "COMPLETED", "reason": "None"},
           "time": {"submission": 1795341590, "start": 1795341600, "end": 1795341700, "limit": 10,
                    "total": {"seconds": 0, "microseconds": 0}},
           "tres": {"allocated": [{"type": "cpu", "name": None, "id": 1, "count": 1},
                                  {"type": "mem", "name": None, "id": 2, "count": 1024},
                                  {"type": "node", "name": None, "id": 4, "count": 1}]},
           "nodes": "vm",
           "steps": [step("batch", {"seconds": 96, "microseconds": 1400000},
                          {"seconds": 0, "microseconds": 120000},
                          {"seconds": 96, "microseconds": 1520000}, 1081606144),
                     step("extern", {"seconds": 0, "microseconds": 1000},
                          {"seconds": 0, "microseconds": 1000},
                          {"seconds": 0, "microseconds": 2000}, 4096)]}
    print(json.dumps({"meta": {}, "errors": [], "jobs": [job]}))
else:
    print("5|1795341590|0:0|sbatch job.sh")
"#
    .replace("ON_NODE", &format!("{on_node:?}"));
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// What Slurm accounting measured is stored with the job: seff's figures in `jobs` (memory a
/// little above the request is kept, not withheld), one `job_steps` row per step, and the other
/// jobs that ran on its node meanwhile. When that last query fails, the count stays unknown, the
/// note says why, and the job is stored all the same.
#[test]
fn steps_and_neighbours_are_stored_with_the_job() {
    let on_node = "5|2026-11-22T10:00:00|2026-11-22T10:01:40|COMPLETED\n\
                   6|2026-11-22T09:59:00|Unknown|RUNNING\n\
                   7|Unknown|Unknown|PENDING\n";
    for (answer, neighbours) in [(on_node, Some(1)), ("fail", None)] {
        let tmp = tempfile::tempdir().unwrap();
        let spool = Spool::init(&tmp.path().join("spool"), 0o700).unwrap();
        let data = tmp.path().join("data");
        let enqueued = 1_795_341_705;
        slurm_hooks::spool_dir::enqueue(spool.root(), &record(5, enqueued)).unwrap();
        let sacct = steps_sacct(tmp.path(), answer);
        let report = ingest_accounting_only(&spool, &data, &sacct, enqueued + 60);
        let outcomes: Vec<&Outcome> = report.records.iter().map(|r| &r.outcome).collect();
        let [Outcome::Done { note, .. }] = outcomes[..] else {
            panic!("{report:?}")
        };
        let note = note.clone().unwrap_or_default();
        assert_eq!(
            note.contains("jobs sharing its nodes unknown") && note.contains("job 5"),
            neighbours.is_none(),
            "{note}"
        );

        let jobs = common::sql_json(
            JOBSIGHT,
            &data,
            "SELECT CAST(round(acct_cpu_total_s * 1000) AS BIGINT) AS cpu_ms, acct_mem_peak_mb, \
             acct_steps, neighbours, CAST(round(acct_cpu_eff * 1000) AS BIGINT) AS cpu_permille, \
             acct_mem_eff > 1 AS above_request FROM jobs",
        );
        // JSON lines leave null columns out.
        let mut expected = serde_json::json!({"cpu_ms": 97522, "acct_mem_peak_mb": 1031.5,
            "acct_steps": 2, "cpu_permille": 975, "above_request": true});
        if let Some(n) = neighbours {
            expected["neighbours"] = serde_json::json!(n);
        }
        assert_eq!(jobs, [expected], "{answer}");
        let steps = common::sql_json(
            JOBSIGHT,
            &data,
            "SELECT job_id, step, ntasks, max_rss_node, \
             CAST(round(cpu_total_s * 1000) AS BIGINT) AS cpu_ms FROM job_steps ORDER BY step",
        );
        assert_eq!(
            steps,
            [
                serde_json::json!({"job_id": "5", "step": "batch", "ntasks": 1,
                    "max_rss_node": "vm", "cpu_ms": 97520}),
                serde_json::json!({"job_id": "5", "step": "extern", "ntasks": 1,
                    "max_rss_node": "vm", "cpu_ms": 2}),
            ]
        );
    }
}

/// A stand-in `sacct` that prints `answer` for every question, as a capture replayed would: the
/// text queries (exit codes, the jobs on the node) get JSON they cannot read.
fn replaying_sacct(dir: &Path, answer: &Path) -> PathBuf {
    let path = dir.join("sacct-replay");
    std::fs::write(&path, format!("#!/bin/sh\ncat '{}'\n", answer.display())).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Runs the per-job step once on `spool` into `data` with accounting from `sacct` and no
/// telemetry, at `now`.
fn ingest_accounting_only(
    spool: &Spool,
    data: &Path,
    sacct: &Path,
    now: i64,
) -> per_job::IngestReport {
    let mut s = settings(sacct, "http://127.0.0.1:9", "");
    s.ingest.telemetry = jobsight::config::TelemetryKind::None;
    per_job::run(spool, data, &s.ingest, None, None, at(now), |_, _| {}).unwrap()
}

/// Every finished job of every release's capture (`tests/fixtures/slurm-json/`: 23.11, 24.11,
/// 25.11 through slurmrestd, 24.11 and 26.05 from `sacct --json` of real daemons) goes through
/// the per-job step to `done/` and into `jobs` with its state, elapsed time, exit code and nodes,
/// from a stand-in `sacct` that prints the capture whatever it is asked. A hostile answer sets
/// its job aside at once, with the job and the field in the reason, not after a day of retries.
#[test]
fn every_release_s_capture_is_ingested() {
    let dir = common::repo().join("tests/fixtures/slurm-json");
    // (capture, cluster, job id, state, elapsed s, exit code, nodes)
    let cases: [(&str, &str, u64, &str, i64, i64, &str); 12] = [
        (
            "23.11_v0.0.40_slurmdb-job-completed",
            "hpc",
            509,
            "COMPLETED",
            1,
            0,
            "cn2",
        ),
        (
            "23.11_v0.0.40_slurmdb-job-failed",
            "hpc",
            510,
            "FAILED",
            1,
            1,
            "cn2",
        ),
        (
            "23.11_v0.0.40_slurmdb-job-timeout",
            "hpc",
            609,
            "TIMEOUT",
            79,
            0,
            "cn4",
        ),
        (
            "24.11_v0.0.42_slurmdb-job-completed",
            "hpc",
            6362,
            "COMPLETED",
            61,
            0,
            "cn1",
        ),
        (
            "24.11_v0.0.42_slurmdb-job-failed",
            "hpc",
            6359,
            "FAILED",
            1,
            1,
            "cn1",
        ),
        (
            "24.11_v0.0.42_slurmdb-job-timeout",
            "hpc",
            6357,
            "TIMEOUT",
            65,
            0,
            "cn1",
        ),
        (
            "25.11_v0.0.44_slurmdb-job-completed",
            "hpc",
            5749,
            "COMPLETED",
            30,
            0,
            "cn1",
        ),
        (
            "25.11_v0.0.44_slurmdb-job-failed",
            "hpc",
            5739,
            "FAILED",
            2,
            1,
            "cn1",
        ),
        (
            "25.11_v0.0.44_slurmdb-job-timeout",
            "hpc",
            5737,
            "TIMEOUT",
            82,
            0,
            "cn1",
        ),
        ("24.11.5_v0.0.42_sacct-ci", "ci", 1, "FAILED", 1, 3, "vm"),
        ("26.05.5_v0.0.45_sacct-ci", "ci", 2, "COMPLETED", 7, 0, "vm"),
        ("26.05.5_v0.0.45_sacct-ci", "ci", 5, "FAILED", 3, 3, "vm"),
    ];
    for (capture, cluster, job, state, elapsed, exit, nodes) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let spool = Spool::init(&tmp.path().join("spool"), 0o700).unwrap();
        let data = tmp.path().join("data");
        let sacct = replaying_sacct(tmp.path(), &dir.join(format!("{capture}.json")));
        // Enqueued now: after every capture's submit time.
        let now = Utc::now().timestamp();
        slurm_hooks::spool_dir::enqueue(spool.root(), &record_of(cluster, job, now)).unwrap();
        let report = ingest_accounting_only(&spool, &data, &sacct, now + 60);
        assert_eq!(report.records.len(), 1, "{report:?}");
        let outcome = &report.records[0].outcome;
        assert!(
            matches!(outcome, Outcome::Done { .. }),
            "{capture} job {job}: {outcome:?}"
        );
        let rows = common::sql_json(
            JOBSIGHT,
            &data,
            "SELECT job_id, state, CAST(date_part('epoch', \"end\") - date_part('epoch', start) AS BIGINT) \
             AS elapsed_s, exit_code, nodes FROM jobs",
        );
        assert_eq!(
            rows,
            [
                serde_json::json!({"job_id": job.to_string(), "state": state, "elapsed_s": elapsed,
                "exit_code": exit, "nodes": nodes})
            ],
            "{capture}"
        );
    }

    // Hostile: a string where the end time goes, in a release the reader knows.
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::init(&tmp.path().join("spool"), 0o700).unwrap();
    let capture =
        std::fs::read_to_string(dir.join("25.11_v0.0.44_slurmdb-job-failed.json")).unwrap();
    let hostile = capture.replace("\"end\": 1762942462", "\"end\": \"soon\"");
    assert_ne!(hostile, capture);
    let answer = tmp.path().join("hostile.json");
    std::fs::write(&answer, hostile).unwrap();
    let now = Utc::now().timestamp();
    slurm_hooks::spool_dir::enqueue(spool.root(), &record_of("hpc", 5739, now)).unwrap();
    let sacct = replaying_sacct(tmp.path(), &answer);
    let report = ingest_accounting_only(&spool, &tmp.path().join("data"), &sacct, now + 60);
    assert_eq!(report.records.len(), 1, "{report:?}");
    let Outcome::Quarantined { reason } = &report.records[0].outcome else {
        panic!("{report:?}")
    };
    assert!(
        reason.contains("job 5739: time.end a string where a number goes"),
        "{reason}"
    );
    assert_eq!(
        std::fs::read_dir(spool.root().join("failed"))
            .unwrap()
            .count(),
        2,
        "the record and its reason"
    );
}

#[test]
fn pending_jobs_back_off_then_go_to_failed_with_their_reason() {
    let s = setup();
    let settings = settings(&s.sacct, &fake_prometheus(Fault::Http500), "");
    let prometheus = Prometheus::new(settings.prometheus.clone());
    let run = |now: DateTime<Utc>| {
        // Another test thread that forks a stand-in sacct can hold a copy of this spool's lock
        // descriptor for the instant between fork and exec; a run that meets it is retried.
        for _ in 0..100 {
            match per_job::run(
                &s.spool,
                &s.data,
                &settings.ingest,
                Some(&prometheus),
                None,
                now,
                |_, _| {},
            ) {
                Err(per_job::IngestError::Busy { .. }) => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                other => return other.unwrap(),
            }
        }
        panic!("the spool stayed locked");
    };
    // Before the lag has passed the job waits for its last samples, without counting an attempt.
    let t0 = at(JOB1_ENQUEUED + 10);
    match only_outcome(&run(t0)) {
        Outcome::Pending {
            attempts: 0,
            next_attempt,
            reason,
        } => {
            assert_eq!(*next_attempt, at(1_795_322_411 + 60));
            assert!(
                reason.contains("for prometheus to have the job's last samples"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
    // Not due yet: not tried.
    assert!(matches!(
        only_outcome(&run(t0 + chrono::Duration::seconds(5))),
        Outcome::Waiting { .. }
    ));
    // Failures back off: 60 s, then 120 s, then 240 s, up to the maximum of 600 s.
    let mut now = at(1_795_322_411 + 60);
    for (attempt, delay) in [(1, 60), (2, 120), (3, 240), (4, 480), (5, 600), (6, 600)] {
        match only_outcome(&run(now)) {
            Outcome::Pending {
                attempts,
                next_attempt,
                ..
            } => {
                assert_eq!(*attempts, attempt);
                assert_eq!(
                    *next_attempt,
                    now + chrono::Duration::seconds(delay),
                    "attempt {attempt}"
                );
                now = *next_attempt;
            }
            other => panic!("{other:?}"),
        }
    }
    // A day after its enqueue it is given up, with the last reason.
    let late = at(JOB1_ENQUEUED + 86_400);
    match only_outcome(&run(late)) {
        Outcome::Quarantined { reason } => {
            assert!(
                reason.starts_with("gave up after 7 attempts over 24h00m00s: "),
                "{reason}"
            );
            assert!(reason.contains("HTTP 500"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let failed = s.spool.root().join("failed");
    let names: Vec<String> = std::fs::read_dir(&failed)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "record and .reason: {names:?}");
    let reason_file = names.iter().find(|n| n.ends_with(".reason")).unwrap();
    assert!(
        std::fs::read_to_string(failed.join(reason_file))
            .unwrap()
            .contains("HTTP 500")
    );
    assert_eq!(
        std::fs::read_dir(s.spool.root().join("cur"))
            .unwrap()
            .count(),
        0,
        "no note left behind"
    );

    // The admins' daily digest lists the job the pipeline gave up on, with its reason. A dry run
    // first: it changes nothing, not even by creating the outbox.
    let outbox = s.data.parent().unwrap().join("outbox");
    let notify = |extra: &[&str]| {
        common::run_ok(
            Command::new(JOBSIGHT)
                .arg("--data")
                .arg(&s.data)
                .arg("--spool")
                .arg(s.spool.root())
                .arg("notify")
                .args(extra)
                .args(["--now", "2026-11-23T06:00:00Z", "--outbox"])
                .arg(&outbox),
        )
    };
    notify(&["--dry-run"]);
    assert!(!outbox.exists(), "a dry run created {}", outbox.display());
    notify(&[]);
    let record = names.iter().find(|n| !n.ends_with(".reason")).unwrap();
    let admin: String = walk(&outbox)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("admin-digest"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        admin.contains("Jobs the pipeline gave up on (1;") && admin.contains(record.as_str()),
        "{admin}"
    );
    assert!(admin.contains("gave up after 7 attempts"), "{admin}");
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    snapshot(dir).into_iter().map(|(p, _)| p).collect()
}

#[test]
fn one_step_at_a_time_per_spool() {
    let s = setup();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(s.spool.root().join(".ingest.lock"))
        .unwrap();
    lock.lock().unwrap();
    let settings = settings(&s.sacct, "http://127.0.0.1:9", "");
    let e = per_job::run(
        &s.spool,
        &s.data,
        &settings.ingest,
        None,
        None,
        at(JOB1_ENQUEUED),
        |_, _| {},
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("another `jobsight ingest` is working on this spool"),
        "{e}"
    );
}

#[test]
fn sacct_missing_keeps_the_job_pending_with_a_clear_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = tmp.path().join("spool");
    common::make_spool(&spool);
    slurm_hooks::spool_dir::enqueue(&spool, &record(1, JOB1_ENQUEUED)).unwrap();
    let config = tmp.path().join("jobsight.toml");
    // Give up only after ten years, so that the real clock of this test never reaches it.
    std::fs::write(&config, "[ingest]\ngive_up_after_s = 315360000\n").unwrap();
    let ingest = || {
        let out = Command::new(JOBSIGHT)
            .args([
                "ingest",
                "--telemetry",
                "none",
                "--sacct",
                "/nonexistent/bin/sacct",
                "--spool",
            ])
            .arg(&spool)
            .arg("--data")
            .arg(tmp.path().join("data"))
            .arg("--config")
            .arg(&config)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (stdout, stderr) = ingest();
    assert!(
        stdout.contains("pending      ci:1")
            && stdout.contains("sacct for job 1: cannot run /nonexistent/bin/sacct")
            && stdout.contains("No such file or directory"),
        "{stdout}"
    );
    assert!(
        stderr.contains("claimed 1 record(s)") && stderr.contains("1 pending"),
        "{stderr}"
    );
    // The next run does not hammer sacct: the job waits for its backoff.
    let (stdout, stderr) = ingest();
    assert!(stdout.starts_with("waiting      ci:1"), "{stdout}");
    assert!(stderr.contains("1 waiting"), "{stderr}");
    assert_eq!(
        common::count_files(&spool.join("cur")),
        2,
        "record and note"
    );
    assert!(
        !tmp.path().join("data").join("jobs").exists(),
        "nothing written"
    );
}

/// A log writer the test can read back.
#[derive(Clone, Default)]
struct Buffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
impl Write for Buffer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
impl Buffer {
    /// The JSON log lines about one job.
    fn job_lines(&self, job: &str) -> Vec<serde_json::Value> {
        String::from_utf8(self.0.lock().unwrap().clone())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v["event"] == "job" && v["job"] == job)
            .collect()
    }
}

/// The settings of a per-job DAG run over `s`: no telemetry, emails into a file outbox.
fn dag_settings(s: &Setup) -> Settings {
    let outbox = s.data.parent().unwrap().join("outbox");
    let mut settings = settings(
        &s.sacct,
        "http://127.0.0.1:9",
        &format!("[notify]\noutbox = \"{}\"\n", outbox.display()),
    );
    settings.ingest.telemetry = jobsight::config::TelemetryKind::None;
    settings.data = s.data.clone();
    settings.spool = s.spool.root().to_path_buf();
    // Set after the resolve, so the pages' folder that follows `data` is set here too.
    settings.report.dir = s.data.parent().unwrap().join("reports");
    settings
}

#[test]
fn the_per_job_dag_judges_each_ingested_job_once_and_records_its_run() {
    use jobsight::schedule::{self, Clock, Log, LogFormat, RunRequest, StepOutcome, Trigger};
    let s = setup();
    let now = at(JOB1_ENQUEUED + 60);
    let ctx = schedule::Context::build(dag_settings(&s), Clock::Fixed(now)).unwrap();
    let dags = schedule::dag::load_all(None).unwrap();
    let dag = schedule::dag::find(&dags, "per-job").unwrap();
    let request = RunRequest {
        scheduled_for: now,
        trigger: Trigger::Manual,
        days: None,
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let run = |buffer: &Buffer| {
        let log = Log::new(LogFormat::Json, Box::new(buffer.clone()));
        schedule::run_dag(&ctx, dag, &request, &log, &stop)
    };
    let buffer = Buffer::default();
    let report = run(&buffer).unwrap();
    assert_eq!(report.outcome, StepOutcome::Ok, "{report:?}");
    let steps: Vec<(&str, u64)> = report
        .steps
        .iter()
        .map(|s| (s.step.as_str(), s.jobs))
        .collect();
    // Ingest and the steps after it work on the one new job; notify reads the jobs with findings
    // not yet reported.
    // Without a configured model the predict step has nothing to do.
    assert_eq!(
        steps[..4],
        [
            ("ingest", 1),
            ("features", 1),
            ("classify", 1),
            ("predict", 0)
        ]
    );
    assert_eq!(steps[4].0, "notify");
    // One line per job and step: stored, features (no telemetry is a refusal to judge, not a
    // silent skip), findings.
    let lines = buffer.job_lines("ci:1");
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["outcome"], "done");
    assert_eq!(lines[0]["state"], "TIMEOUT");
    assert_eq!(lines[0]["note"], "no telemetry source configured");
    assert_eq!(lines[1]["features"], "not judgeable: no telemetry at all");
    // A job that ran into its time limit: the rule that needs no telemetry still speaks.
    assert_eq!(lines[2]["findings"], "timeout (warning)");

    // The run and each step are in `runs`, and the DAG's last run is kept for catching up.
    let rows = common::sql_json(
        JOBSIGHT,
        &s.data,
        "SELECT step, position, outcome, jobs, counts FROM runs ORDER BY position",
    );
    assert_eq!(rows.len(), 6, "{rows:?}");
    assert_eq!(rows[0]["step"], "");
    assert_eq!(
        rows[1]["counts"].as_str().unwrap(),
        "{\"already_stored\":0,\"claimed\":1,\"done\":1,\"duplicates\":0,\"malformed\":0,\"pending\":0,\"quarantined\":0,\"telemetry_rows\":0,\"waiting\":0}"
    );
    let last = schedule::last_run(&s.data, "per-job").unwrap();
    assert_eq!((last.scheduled_for, last.outcome.as_str()), (now, "ok"));
    assert!(
        !schedule::state_dir(&s.data)
            .join("per-job.ingested.jsonl")
            .exists(),
        "the ingested jobs were all judged: nothing is carried over"
    );

    // One run per DAG at a time.
    let held = schedule::DagLock::acquire(&s.data, "per-job").unwrap();
    let e = run(&Buffer::default()).unwrap_err().to_string();
    assert!(
        e.starts_with("another run of DAG per-job is under way"),
        "{e}"
    );
    drop(held);

    // The record put back by hand is done again: its parts are replaced, not added.
    let before = snapshot(&s.data.join("jobs")).len();
    for e in std::fs::read_dir(s.spool.root().join("done")).unwrap() {
        let e = e.unwrap();
        std::fs::rename(e.path(), s.spool.root().join("cur").join(e.file_name())).unwrap();
    }
    let buffer = Buffer::default();
    let report = run(&buffer).unwrap();
    assert_eq!(report.steps[0].jobs, 2, "{report:?}");
    assert_eq!(snapshot(&s.data.join("jobs")).len(), before);
    let findings = common::sql_json(
        JOBSIGHT,
        &s.data,
        "SELECT rule, count(*) AS n FROM findings WHERE job_id = '1' GROUP BY rule HAVING count(*) > 1",
    );
    assert!(findings.is_empty(), "findings twice: {findings:?}");

    // A backfill re-runs the nightly DAG's whole-day steps over the stored days, one run per day,
    // and skips what would ingest, email or delete; the per-job DAG has nothing to backfill.
    let nightly = schedule::dag::find(&dags, "nightly").unwrap();
    let log = Log::new(LogFormat::Json, Box::new(Buffer::default()));
    let day = at(JOB1_ENQUEUED).date_naive();
    let runs = schedule::backfill(&ctx, nightly, day, day, &log, &stop, &mut |_, _, _| {}).unwrap();
    assert_eq!(runs.len(), 1);
    let outcomes: Vec<(&str, StepOutcome)> = runs[0]
        .steps
        .iter()
        .map(|s| (s.step.as_str(), s.outcome))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("features", StepOutcome::Ok),
            // Neither array nor chain: no Slurm workflow, and no workflow imported: nothing
            // to score, and not an error.
            ("slurm-workflows", StepOutcome::Ok),
            ("workflow-score", StepOutcome::Ok),
            ("classify", StepOutcome::Ok),
            ("predict", StepOutcome::Ok),
            // A backfilled day is summarised and compacted like a nightly one.
            ("summarize", StepOutcome::Ok),
            ("compact", StepOutcome::Ok),
            // And its report pages rewritten, beside the warehouse.
            ("report", StepOutcome::Ok),
            ("notify", StepOutcome::Skipped),
            ("retrain", StepOutcome::Skipped),
            ("retain", StepOutcome::Skipped)
        ]
    );
    let pages = s.data.parent().unwrap().join("reports");
    assert!(
        pages.join("index.html").is_file(),
        "no report pages in {}",
        pages.display()
    );
    assert_eq!(
        runs[0].steps[3].jobs, 2,
        "both jobs of the day judged again"
    );
    let backfills = common::sql_json(
        JOBSIGHT,
        &s.data,
        "SELECT count(*) AS n FROM runs WHERE trigger = 'backfill' AND step = ''",
    );
    assert_eq!(backfills[0]["n"].as_u64(), Some(1));
    let e = schedule::backfill(&ctx, dag, day, day, &log, &stop, &mut |_, _, _| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("DAG per-job has no step that works on whole days"),
        "{e}"
    );
}

#[test]
fn a_run_killed_between_ingest_and_features_leaves_its_jobs_to_the_next_run() {
    let s = setup();
    let settings = dag_settings(&s);
    let config = s.data.parent().unwrap().join("jobsight.toml");
    std::fs::write(
        &config,
        format!(
            "data = \"{}\"\nspool = \"{}\"\n[ingest]\ntelemetry = \"none\"\nsacct = \"{}\"\n[notify]\noutbox = \"{}\"\n",
            settings.data.display(),
            settings.spool.display(),
            s.sacct.display(),
            settings.notify.outbox.display()
        ),
    )
    .unwrap();
    let dag_run = |fault: Option<&str>| {
        let mut command = Command::new(JOBSIGHT);
        command
            .arg("--config")
            .arg(&config)
            .args(["--log-format", "json", "dag", "run", "per-job"])
            .env("JOBSIGHT_NOW", at(JOB1_ENQUEUED + 60).to_rfc3339());
        if let Some(fault) = fault {
            command.env("JOBSIGHT_FAULT", fault);
        }
        command.output().unwrap()
    };
    let killed = dag_run(Some("after-ingest"));
    assert!(!killed.status.success());
    let carried = schedule_file(&s.data, "per-job.ingested.jsonl");
    assert!(carried.contains("\"job_id\":\"1\""), "{carried}");
    assert!(
        common::sql_json(
            JOBSIGHT,
            &s.data,
            "SELECT * FROM findings WHERE job_id = '1'"
        )
        .is_empty()
    );

    let next = dag_run(None);
    let log = String::from_utf8_lossy(&next.stderr);
    assert!(next.status.success(), "{log}");
    assert!(
        log.contains("\"event\":\"carried\",\"dag\":\"per-job\",\"jobs\":1"),
        "{log}"
    );
    assert!(log.contains("\"job\":\"ci:1\",\"features_ms\""), "{log}");
    assert_eq!(
        common::sql_json(
            JOBSIGHT,
            &s.data,
            "SELECT DISTINCT job_id FROM findings ORDER BY job_id"
        )
        .len(),
        1
    );
    assert!(
        !schedule::state_dir(&s.data)
            .join("per-job.ingested.jsonl")
            .exists()
    );
    let stdout = String::from_utf8_lossy(&next.stdout);
    assert!(stdout.contains("DAG per-job (manual, for "), "{stdout}");

    // The killed run recorded nothing; the finished one is the last run.
    let runs = common::sql_json(
        JOBSIGHT,
        &s.data,
        "SELECT outcome FROM runs WHERE step = ''",
    );
    assert_eq!(runs.len(), 1, "{runs:?}");
}

fn schedule_file(data: &Path, name: &str) -> String {
    std::fs::read_to_string(schedule::state_dir(data).join(name)).unwrap()
}

/// When the daemon tests' job 0 would have been submitted: three hours before the test started,
/// on the minute. It follows the clock because the daemon judges (and emails about) only the jobs
/// of the last `notify.lookback_days` days by the real clock; a fixed date aged out of that a week
/// after it was written, and the test failed.
fn many_jobs_base() -> i64 {
    static BASE: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    *BASE.get_or_init(|| {
        let now = Utc::now().timestamp() - 3 * 3600;
        now - now.rem_euclid(60)
    })
}

/// A stand-in `sacct` for any job id N of cluster `ci`: submitted at [`many_jobs_base`] + 60 N, run for
/// 10 minutes on node `vm`; every 3rd job TIMEOUT, every 7th OUT_OF_MEMORY (a critical finding,
/// so an immediate email), the rest COMPLETED; no other job on its node. Answers in the shapes
/// of Slurm 22.05.
fn many_jobs_sacct(dir: &Path) -> PathBuf {
    let path = dir.join("sacct-many");
    std::fs::write(
        &path,
        r#"#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
if "-N" in args:
    sys.exit(0)
n = int(args[args.index("-j") + 1])
submit = BASE + 60 * n
state, code = ("OUT_OF_MEMORY", "0:125") if n % 7 == 0 else ("TIMEOUT", "0:0") if n % 3 == 0 else ("COMPLETED", "0:0")
if "--json" in args:
    job = {"job_id": n, "name": "app%d" % (n % 4), "cluster": "ci", "user": "alice", "group": "alice",
           "account": "research", "partition": "debug", "qos": "normal",
           "state": {"current": state, "reason": "None"},
           "time": {"submission": submit, "start": submit, "end": submit + 600, "limit": 10, "elapsed": 600},
           "required": {"CPUs": 2, "memory": 2048},
           "tres": {"allocated": [{"type": "cpu", "name": None, "id": 1, "count": 2},
                                  {"type": "node", "name": None, "id": 4, "count": 1}]},
           "nodes": "vm", "exit_code": {"status": "SUCCESS", "return_code": 0},
           "working_directory": "/tmp"}
    print(json.dumps({"meta": {}, "errors": [], "jobs": [job]}))
else:
    print("%d|%d|%s" % (n, submit, code))
"#
        .replace("BASE", &many_jobs_base().to_string()),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A warehouse, spool, outbox and config for the daemon tests, with the per-job DAG every second
/// and the nightly one paused (site DAG files), and telemetry from a fake Prometheus that serves
/// a flat 0.5 for every metric (the real one is tests/services/real_prometheus.rs).
struct DaemonSetup {
    tmp: tempfile::TempDir,
    config: PathBuf,
    spool: PathBuf,
    data: PathBuf,
    outbox: PathBuf,
}

fn daemon_setup() -> DaemonSetup {
    let tmp = tempfile::tempdir().unwrap();
    let spool = tmp.path().join("spool");
    Spool::init(&spool, 0o700).unwrap();
    let (data, outbox, dags) = (
        tmp.path().join("data"),
        tmp.path().join("outbox"),
        tmp.path().join("dags"),
    );
    std::fs::create_dir_all(&dags).unwrap();
    std::fs::write(
        dags.join("per-job.toml"),
        "schedule = \"* * * * * *\"\nretries = 0\n[[step]]\nrun = \"ingest\"\nlimit = 5\n[[step]]\nrun = \"features\"\n[[step]]\nrun = \"classify\"\n[[step]]\nrun = \"notify\"\ncritical_only = true\n",
    )
    .unwrap();
    let nightly = dag_file("nightly").replace("enabled = true", "enabled = false");
    std::fs::write(dags.join("nightly.toml"), nightly).unwrap();
    let config = tmp.path().join("jobsight.toml");
    std::fs::write(
        &config,
        format!(
            "data = \"{}\"\nspool = \"{}\"\n[ingest]\nsacct = \"{}\"\n[prometheus]\nurl = \"{}\"\n[notify]\noutbox = \"{}\"\n[schedule]\ndags = \"{}\"\n",
            data.display(),
            spool.display(),
            many_jobs_sacct(tmp.path()).display(),
            fake_prometheus(Fault::Healthy),
            outbox.display(),
            dags.display()
        ),
    )
    .unwrap();
    DaemonSetup {
        tmp,
        config,
        spool,
        data,
        outbox,
    }
}

fn dag_file(name: &str) -> String {
    std::fs::read_to_string(common::repo().join(format!("dags/{name}.toml"))).unwrap()
}

fn enqueue_job(spool: &Path, n: u64) {
    // Enqueued four seconds after the job's end.
    slurm_hooks::spool_dir::enqueue(spool, &record(n, many_jobs_base() + 60 * n as i64 + 604))
        .unwrap();
}

fn start_daemon(s: &DaemonSetup, log: &Path) -> common::services::KillOnDrop {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    common::services::KillOnDrop(
        Command::new(JOBSIGHT)
            .arg("--config")
            .arg(&s.config)
            .args(["--log-format", "json", "daemon"])
            .stdout(std::process::Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    )
}

/// Waits until every record is in done/ and nothing is carried over, or panics after `limit`.
fn wait_for_all_done(s: &DaemonSetup, count: usize, limit: Duration) {
    let start = std::time::Instant::now();
    loop {
        let done = std::fs::read_dir(s.spool.join("done")).map_or(0, |d| d.count());
        let carried = schedule::state_dir(&s.data)
            .join("per-job.ingested.jsonl")
            .exists();
        if done == count && !carried {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "{done} of {count} done (carried over: {carried}) after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Sends SIGTERM and returns how the daemon exited.
fn sigterm(daemon: &mut common::services::KillOnDrop) -> std::process::ExitStatus {
    let status = Command::new("kill")
        .args(["-TERM", &daemon.0.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    daemon.0.wait().unwrap()
}

#[test]
fn the_daemon_judges_arriving_jobs_unattended_and_stops_cleanly_on_sigterm() {
    let s = daemon_setup();
    let log = s.tmp.path().join("daemon.log");
    let mut daemon = start_daemon(&s, &log);
    for n in 1..=6 {
        enqueue_job(&s.spool, n);
        std::thread::sleep(Duration::from_millis(300));
    }
    wait_for_all_done(&s, 6, Duration::from_secs(60));
    // Findings for every job, without any command but the daemon.
    let judged = common::sql_json(
        JOBSIGHT,
        &s.data,
        "SELECT DISTINCT job_id FROM classes ORDER BY job_id",
    );
    assert_eq!(judged.len(), 6, "{judged:?}");
    // The daemon recorded its start, which `dag status` reads (a skip DAG's times before it were
    // left on purpose).
    let start: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(schedule::state_dir(&s.data).join("daemon.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(start["pid"], daemon.0.id(), "{start}");
    let status = sigterm(&mut daemon);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{status}\n{text}");
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains("\"state\":\"stopped\""),
        "{text}"
    );
    // The OUT_OF_MEMORY job (7 is not among 1..=6, so none): no critical email; the paused
    // nightly DAG never ran.
    assert!(!text.contains("\"dag\":\"nightly\""), "{text}");

    // A daemon that was down misses scheduled times: its next start runs the DAG once, as a
    // catch-up standing for all of them, not once per missed second.
    let state = schedule::state_dir(&s.data).join("per-job.state.json");
    let mut last: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let hour_ago = (Utc::now() - chrono::TimeDelta::hours(1)).to_rfc3339();
    last["scheduled_for"] = serde_json::Value::String(hour_ago);
    std::fs::write(&state, last.to_string()).unwrap();
    let log2 = s.tmp.path().join("daemon2.log");
    let mut daemon = start_daemon(&s, &log2);
    common::services::wait_until("a catch-up run", Duration::from_secs(30), || {
        std::fs::read_to_string(&log2).is_ok_and(|t| t.contains("\"event\":\"run-end\""))
    });
    assert!(sigterm(&mut daemon).success());
    let text = std::fs::read_to_string(&log2).unwrap();
    let first_start = text
        .lines()
        .find(|l| l.contains("\"event\":\"run-start\""))
        .unwrap();
    assert!(
        first_start.contains("\"trigger\":\"catch-up\""),
        "{first_start}"
    );
    let missed: serde_json::Value = serde_json::from_str(first_start).unwrap();
    assert!(missed["missed"].as_u64().unwrap() >= 3600, "{first_start}");
    assert_eq!(
        text.matches("\"trigger\":\"catch-up\"").count(),
        1,
        "caught up once: {text}"
    );
}

/// Every table the per-job DAG writes, as sorted text rows, without what legitimately differs
/// between runs (times of sending, the runs themselves).
fn tables(data: &Path) -> Vec<String> {
    let queries = [
        "SELECT * FROM jobs ORDER BY job_id",
        "SELECT job_id, node, metric, n FROM features ORDER BY job_id, node, metric",
        "SELECT * FROM job_summary ORDER BY job_id",
        "SELECT job_id, rule, severity, message FROM findings ORDER BY job_id, rule, node",
        "SELECT * FROM classes ORDER BY job_id, class",
        "SELECT * FROM thresholds ORDER BY job_id, characteristic",
        "SELECT key, kind, \"user\", job_id, finding, status FROM notifications ORDER BY key, job_id, finding",
    ];
    queries
        .iter()
        .flat_map(|q| {
            common::sql_json(JOBSIGHT, data, q)
                .into_iter()
                .map(move |row| format!("{q}: {row}"))
        })
        .collect()
}

#[test]
fn killed_at_random_points_thirty_times_the_daemon_loses_and_duplicates_nothing() {
    const JOBS: u64 = 40;
    const KILLS: usize = 30;
    // The reference: every job through one uninterrupted run of the same DAG.
    let reference = daemon_setup();
    for n in 1..=JOBS {
        enqueue_job(&reference.spool, n);
    }
    let log = reference.tmp.path().join("daemon.log");
    let mut daemon = start_daemon(&reference, &log);
    wait_for_all_done(&reference, JOBS as usize, Duration::from_secs(120));
    assert!(sigterm(&mut daemon).success());

    // The same jobs arriving while the daemon is killed (SIGKILL) at random points.
    let s = daemon_setup();
    let log = s.tmp.path().join("daemon.log");
    let spool = s.spool.clone();
    let arrivals = std::thread::spawn(move || {
        for n in 1..=JOBS {
            enqueue_job(&spool, n);
            std::thread::sleep(Duration::from_millis(150));
        }
    });
    // A fixed seed: a failure can be replayed.
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 0..KILLS {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut daemon = start_daemon(&s, &log);
        std::thread::sleep(Duration::from_millis(50 + seed % 700));
        daemon.0.kill().unwrap();
        daemon.0.wait().unwrap();
    }
    arrivals.join().unwrap();
    let mut daemon = start_daemon(&s, &log);
    wait_for_all_done(&s, JOBS as usize, Duration::from_secs(120));
    assert!(sigterm(&mut daemon).success());
    let text = std::fs::read_to_string(&log).unwrap();
    let killed_runs = text.matches("\"event\":\"run-start\"").count()
        - text.matches("\"event\":\"run-end\"").count();
    eprintln!("{killed_runs} run(s) were killed under way");

    // Same rows as the uninterrupted run, table by table, and no row twice.
    let (want, got) = (tables(&reference.data), tables(&s.data));
    let extra: Vec<&String> = got.iter().filter(|g| !want.contains(g)).collect();
    let missing: Vec<&String> = want.iter().filter(|w| !got.contains(w)).collect();
    assert!(
        extra.is_empty() && missing.is_empty() && got.len() == want.len(),
        "{} rows against {}; not in the uninterrupted run: {extra:#?}\nmissing: {missing:#?}",
        got.len(),
        want.len()
    );
    // No email twice: each key once in the outbox, and the killed runs' messages either sent or
    // (killed between delivery and the ledger) held in doubt, never sent again.
    let keys = |outbox: &Path, state: &str| -> Vec<String> {
        let mut k: Vec<String> = std::fs::read_dir(outbox.join(state))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        k.sort();
        k
    };
    let reference_sent = keys(&reference.outbox, "sent");
    assert!(
        !reference_sent.is_empty(),
        "the OUT_OF_MEMORY jobs have critical emails"
    );
    let mut delivered = keys(&s.outbox, "sent");
    delivered.extend(keys(&s.outbox, "in-doubt"));
    delivered.sort();
    assert_eq!(delivered, reference_sent);
    // Every run that finished is in `runs` once.
    let runs = common::sql_json(
        JOBSIGHT,
        &s.data,
        "SELECT run_id, count(*) AS n FROM runs WHERE step = '' GROUP BY run_id HAVING count(*) > 1",
    );
    assert!(runs.is_empty(), "{runs:?}");
}

/// Accounting that knows each job's nodes, for [`the_note_names_what_a_jobs_data_lacks`].
struct NodesOf(Vec<(u64, &'static str, &'static str)>);

impl sources::AccountingSource for NodesOf {
    fn name(&self) -> &'static str {
        "stand-in"
    }
    fn job_row(&self, record: &SpoolRecord) -> Result<jobsight_ingest::JobRow, String> {
        let (_, nodes, state) = self
            .0
            .iter()
            .find(|(id, _, _)| *id == record.job_id)
            .ok_or("unknown job")?;
        Ok(jobsight_ingest::JobRow {
            cluster: "ci".into(),
            job_id: record.job_id.to_string(),
            nodes: Some(nodes.to_string()),
            num_nodes: Some(3),
            state: Some(state.to_string()),
            start: Some(at(JOB1_ENQUEUED - 120)),
            end: at(JOB1_ENQUEUED - 4),
            ..Default::default()
        })
    }
}

/// Telemetry of three nodes every 10 s: `n1` over the whole run, `n2` lost 40 s before its
/// end, `n3` absent (not in the source), and `n2` without a memory series; `n2`'s clock 41 s
/// ahead of the source's, except for job 3, whose clock check fails.
struct ThreeNodes;

impl sources::TelemetrySource for ThreeNodes {
    fn name(&self) -> &'static str {
        "stand-in"
    }
    fn ready_at(&self, end: DateTime<Utc>) -> DateTime<Utc> {
        end
    }
    fn fetch(
        &self,
        _job: &str,
        _cluster: &str,
        nodes: &[String],
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        emit: &mut dyn FnMut(&str, &str, i64, f64),
    ) -> Result<u64, String> {
        let mut n = 0;
        for (node, lost_at) in [("n1", end), ("n2", end - chrono::Duration::seconds(40))] {
            assert!(nodes.iter().any(|x| x == node), "{nodes:?}");
            let mut t = start;
            while t <= lost_at {
                emit(node, "job_cpu_cores_used", t.timestamp_micros(), 1.0);
                if node == "n1" {
                    emit(node, "job_mem_rss_bytes", t.timestamp_micros(), 1e9);
                }
                t += chrono::Duration::seconds(10);
                n += 1;
            }
        }
        Ok(n)
    }
    fn clock_offsets(
        &self,
        job: &str,
        _cluster: &str,
        _nodes: &[String],
        _start: DateTime<Utc>,
        _end: DateTime<Utc>,
    ) -> Result<Vec<(String, f64)>, String> {
        if job == "3" {
            return Err("job 3: the clock query failed (HTTP 503)".into());
        }
        Ok(vec![("n1".into(), 0.003), ("n2".into(), 41.0)])
    }
}

/// Jobs 1 (`n[1-3]`, NODE_FAIL), 2 (a node list that does not expand) and 3 (`n[1-3]`) enqueued
/// and ingested by one run with [`NodesOf`] as accounting and `source` as telemetry: the
/// temporary directory, the warehouse in it and the run's report.
fn three_jobs_ingested(
    source: &dyn sources::TelemetrySource,
) -> (tempfile::TempDir, PathBuf, per_job::IngestReport) {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::init(&tmp.path().join("spool"), 0o700).unwrap();
    let data = tmp.path().join("data");
    for job in [1, 2, 3] {
        slurm_hooks::spool_dir::enqueue(spool.root(), &record(job, JOB1_ENQUEUED)).unwrap();
    }
    let accounting = NodesOf(vec![
        (1, "n[1-3]", "NODE_FAIL"),
        (2, "n[1-", "COMPLETED"),
        (3, "n[1-3]", "COMPLETED"),
    ]);
    let s = settings(Path::new("/bin/false"), "http://127.0.0.1:9", "");
    let report = per_job::run_with(
        &spool,
        &data,
        &s.ingest,
        &accounting,
        Some(source),
        None,
        at(JOB1_ENQUEUED + 60),
        |_, _| {},
        &mut |_, _| Ok(()),
    )
    .unwrap();
    (tmp, data, report)
}

/// A job whose data is incomplete is stored all the same, and its note (`jobs.note`) says what
/// is missing, node by node: a node the telemetry source does not have, a node whose series
/// end early (a lost node's partial series, kept), a metric one node lacks, a node whose clock
/// disagrees with the source's, a clock check that failed; a job whose node list does not
/// expand is stored without telemetry, and its note says why.
#[test]
fn the_note_names_what_a_jobs_data_lacks() {
    let (_tmp, data, report) = three_jobs_ingested(&ThreeNodes);
    assert_eq!(report.count("done"), 3, "{report:?}");
    let jobs = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT job_id, note FROM jobs ORDER BY job_id",
    );
    let note = |id: &str| {
        jobs.iter()
            .find(|j| j["job_id"] == id)
            .and_then(|j| j["note"].as_str())
            .unwrap_or_else(|| panic!("job {id} has no note: {jobs:?}"))
            .to_string()
    };
    let lost = note("1");
    for said in [
        "no telemetry from n3 in stand-in",
        "n2's telemetry ends 40s before most nodes'",
        "it ended NODE_FAIL",
        "n2 sent no job_mem_rss_bytes where other nodes did",
        "n2's clock was 41s ahead of stand-in's during the run: what the node stamps itself",
    ] {
        assert!(lost.contains(said), "{said}: {lost}");
    }
    let telemetry = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT node, count(*) AS n FROM telemetry WHERE job_id = '1' GROUP BY node ORDER BY node",
    );
    assert_eq!(
        telemetry,
        [
            serde_json::json!({"node": "n1", "n": 24}),
            serde_json::json!({"node": "n2", "n": 8})
        ]
    );
    // A clock check that fails is said, and holds nothing back: the job is stored.
    let unchecked = note("3");
    assert!(
        unchecked.contains("the nodes' clocks were not checked: job 3: the clock query failed"),
        "{unchecked}"
    );
    let unreadable = note("2");
    assert!(
        unreadable.starts_with("its node list cannot be expanded (\"n[1-\": '[' without ']')"),
        "{unreadable}"
    );
}

/// [`ThreeNodes`] asking for all its due jobs together, as one group, or failing to.
struct ThreeNodesTogether {
    fail: bool,
}

impl sources::TelemetrySource for ThreeNodesTogether {
    fn name(&self) -> &'static str {
        ThreeNodes.name()
    }
    fn ready_at(&self, end: DateTime<Utc>) -> DateTime<Utc> {
        ThreeNodes.ready_at(end)
    }
    fn fetch(
        &self,
        job: &str,
        cluster: &str,
        nodes: &[String],
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        emit: &mut dyn FnMut(&str, &str, i64, f64),
    ) -> Result<u64, String> {
        ThreeNodes.fetch(job, cluster, nodes, start, end, emit)
    }
    fn clock_offsets(
        &self,
        job: &str,
        cluster: &str,
        nodes: &[String],
        start: DateTime<Utc>,
        end: DateTime<Utc>,
    ) -> Result<Vec<(String, f64)>, String> {
        ThreeNodes.clock_offsets(job, cluster, nodes, start, end)
    }
    fn groups(&self, jobs: &[sources::JobSpan]) -> Vec<Vec<usize>> {
        vec![(0..jobs.len()).collect()]
    }
    fn fetch_together(
        &self,
        jobs: &[&sources::JobSpan],
        _with_clock: bool,
    ) -> Result<Vec<sources::Fetched>, String> {
        if self.fail {
            return Err("the group's query failed (HTTP 503)".into());
        }
        let metrics: Vec<String> = vec!["job_cpu_cores_used".into(), "job_mem_rss_bytes".into()];
        Ok(jobs
            .iter()
            .map(|job| {
                let mut samples = Vec::new();
                ThreeNodes
                    .fetch(
                        &job.job_id,
                        &job.cluster,
                        &job.nodes,
                        job.start,
                        job.end,
                        &mut |n, m, ts, v| {
                            let node = job.nodes.iter().position(|x| x == n).unwrap() as u32;
                            let metric = metrics.iter().position(|x| x == m).unwrap() as u32;
                            samples.push((node, metric, ts, v));
                        },
                    )
                    .unwrap();
                sources::Fetched {
                    nodes: job.nodes.clone(),
                    metrics: metrics.clone().into(),
                    samples,
                    clock: ThreeNodes.clock_offsets(
                        &job.job_id,
                        &job.cluster,
                        &job.nodes,
                        job.start,
                        job.end,
                    ),
                }
            })
            .collect())
    }
}

/// Jobs whose telemetry the source gives for several at once are stored exactly as jobs asked
/// for one at a time (the same files, byte for byte); a group the source fails to give is asked
/// for one job at a time, and the report says why.
#[test]
fn jobs_asked_together_are_stored_as_jobs_asked_alone() {
    let run = |source: &dyn sources::TelemetrySource| {
        let (_tmp, data, report) = three_jobs_ingested(source);
        let stored: Vec<(PathBuf, Vec<u8>)> = snapshot(&data)
            .into_iter()
            .map(|(path, bytes)| (path.strip_prefix(&data).unwrap().to_path_buf(), bytes))
            .collect();
        let outcomes: Vec<String> = report
            .records
            .iter()
            .map(|r| {
                // The record's file name counts enqueues in this process.
                let mut outcome = serde_json::to_value(r).unwrap();
                outcome.as_object_mut().unwrap().remove("file");
                outcome.to_string()
            })
            .collect();
        (report.together, outcomes, stored)
    };
    let (alone, alone_outcomes, alone_stored) = run(&ThreeNodes);
    assert_eq!((alone.groups, alone.jobs), (0, 0));
    let (together, outcomes, stored) = run(&ThreeNodesTogether { fail: false });
    // Jobs 1 and 3; job 2's node list does not expand, so it has no telemetry to ask for.
    assert_eq!((together.groups, together.jobs), (1, 2), "{together:?}");
    assert!(together.failed.is_empty(), "{together:?}");
    assert_eq!(outcomes, alone_outcomes);
    assert!(
        stored.iter().any(|(p, _)| p.starts_with("telemetry")),
        "{stored:?}"
    );
    assert!(stored == alone_stored, "the stored files differ");
    let (failed, outcomes, stored) = run(&ThreeNodesTogether { fail: true });
    assert_eq!((failed.groups, failed.jobs), (0, 0));
    assert_eq!(failed.failed, ["the group's query failed (HTTP 503)"]);
    assert_eq!(outcomes, alone_outcomes);
    assert!(stored == alone_stored, "the stored files differ");
}
