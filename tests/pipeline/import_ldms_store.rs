//! `jobsight import ldms-store`: node-level LDMS CSV streams attributed to the warehouse's jobs.
//!
//! The jobs come from `jobsight simulate` (a small cluster whose nodes run several jobs, some at the
//! same time); the store is written here in the CSV store's format with rows of all nodes
//! interleaved in time order, a node that ran no job, a malformed line and a last line cut off
//! mid-write. Every job must get exactly the samples of its nodes inside its run time (checked
//! against a nested loop over the same data), and importing again must replace, not add.
use crate::common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use common::{run_ok, run_ok_with_stderr};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

fn sql(data: &Path, query: &str) -> Vec<serde_json::Value> {
    common::sql_json(JOBSIGHT, data, query)
}

#[test]
fn store_samples_go_to_the_jobs_that_ran_on_their_node() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    run_ok(
        Command::new(JOBSIGHT)
            .arg("--data")
            .arg(&data)
            .args(["simulate", "--nodes", "4", "--jobs", "12", "--step", "600"]),
    );
    let jobs = sql(
        &data,
        "SELECT job_id, nodes, CAST(start AS BIGINT) AS s, CAST(\"end\" AS BIGINT) AS e FROM jobs WHERE start IS NOT NULL",
    );
    assert!(jobs.len() >= 10, "{jobs:?}");
    let windows: Vec<(String, String, i64, i64)> = jobs
        .iter()
        .flat_map(|j| {
            let id = j["job_id"].as_str().unwrap().to_string();
            let (s, e) = (j["s"].as_i64().unwrap(), j["e"].as_i64().unwrap());
            slurm_hooks::hostlist::expand(j["nodes"].as_str().unwrap())
                .unwrap()
                .into_iter()
                .map(move |n| (id.clone(), n, s, e))
        })
        .collect();
    let mut nodes: Vec<String> = windows.iter().map(|w| w.1.clone()).collect();
    nodes.sort();
    nodes.dedup();
    nodes.push("login1".into());

    // The store: every node every 60 s over the simulated day, rows interleaved by time.
    let store = tmp.path().join("store");
    std::fs::create_dir(&store).unwrap();
    let day_start = 1_795_132_800i64; // 2026-11-20T00:00:00Z
    let times: Vec<i64> = (0..1440)
        .map(|m| (day_start + 60 * m) * 1_000_000 + 2_099)
        .collect();
    let mut meminfo =
        "#Time,Time_usec,ProducerName,component_id,job_id,app_id,MemFree,Active\n".to_string();
    let mut procstat = "#Time,Time_usec,ProducerName,component_id,job_id,app_id,user\n".to_string();
    for (i, ts) in times.iter().enumerate() {
        for (k, node) in nodes.iter().enumerate() {
            let (sec, usec) = (ts / 1_000_000, ts % 1_000_000);
            writeln!(
                meminfo,
                "{sec}.{usec:06},{usec},{node},{k},0,0,{},{}",
                1000 + i,
                7
            )
            .unwrap();
            writeln!(
                procstat,
                "{sec}.{usec:06},{usec},{node},{k},0,0,{}",
                6000 * i
            )
            .unwrap();
        }
        if i == 10 {
            meminfo.push_str("1795133400.002099,2099,node-x,1,0\n");
        }
    }
    meminfo.push_str("1795219300.002099,2099,c1,1,0,0,12");
    std::fs::write(store.join("meminfo.1795132800"), &meminfo).unwrap();
    std::fs::write(store.join("procstat"), &procstat).unwrap();

    let import = || {
        run_ok_with_stderr(
            Command::new(JOBSIGHT)
                .arg("--data")
                .arg(&data)
                .args(["import", "ldms-store"])
                .arg(&store),
        )
    };
    let (stdout, stderr) = import();
    assert!(stdout.contains("imported 2 store file(s)"), "{stdout}");
    let bad_line = 1 + 11 * nodes.len() + 1;
    assert!(
        stderr.contains(&format!(
            "meminfo.1795132800:{bad_line}: expected 8 fields, found 5"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("last line has no newline: cut off mid-write"),
        "{stderr}"
    );

    // Expected: per job, samples on its nodes inside its window (nested loop), one row per
    // meminfo column; procstat's counter gives a rate for every sample but a node's first.
    let expected = |job: &str, first_too: bool| -> i64 {
        windows
            .iter()
            .filter(|w| w.0 == job)
            .map(|w| {
                times
                    .iter()
                    .enumerate()
                    .filter(|(i, t)| **t >= w.2 && **t <= w.3 && (first_too || *i > 0))
                    .count() as i64
            })
            .sum()
    };
    let counts = sql(
        &data,
        "SELECT job_id, sum(CASE WHEN metric LIKE 'meminfo.%' THEN 1 ELSE 0 END) AS mem,
                sum(CASE WHEN metric = 'procstat.user_per_s' THEN 1 ELSE 0 END) AS cpu,
                max(CASE WHEN metric = 'procstat.user_per_s' THEN value END) AS max_rate,
                min(CASE WHEN metric = 'procstat.user_per_s' THEN value END) AS min_rate
         FROM telemetry WHERE metric LIKE 'meminfo.%' OR metric LIKE 'procstat.%' GROUP BY job_id",
    );
    let mut total = 0;
    for j in &jobs {
        let id = j["job_id"].as_str().unwrap();
        let row = counts.iter().find(|c| c["job_id"] == id);
        let (mem, cpu) = row.map_or((0, 0), |r| {
            (r["mem"].as_i64().unwrap(), r["cpu"].as_i64().unwrap())
        });
        assert_eq!(mem, 2 * expected(id, true), "job {id}");
        assert_eq!(cpu, expected(id, false), "job {id}");
        if let Some(r) = row.filter(|_| cpu > 0) {
            // 6000 jiffies per 60 s.
            assert_eq!(r["max_rate"].as_f64().unwrap(), 100.0);
            assert_eq!(r["min_rate"].as_f64().unwrap(), 100.0);
        }
        total += mem;
    }
    assert!(total > 0);

    // Again: replaced, not added.
    import();
    let again = sql(
        &data,
        "SELECT count(*) AS n FROM telemetry WHERE metric LIKE 'meminfo.%'",
    );
    assert_eq!(again[0]["n"].as_i64().unwrap(), total);
}
