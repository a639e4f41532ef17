//! Multi-node jobs on a real multi-node Slurm (issue 69): two real slurmd on this machine
//! (`SLURM_NODES=2`, Debian's Slurm is built with `--enable-multiple-slurmd`), `node1` on CPU 0
//! and `node2` on CPU 1, each slurmd in a cpuset of its own core so that its jobs run there;
//! jobsight-exporter reads both nodes' cgroup trees and labels each series with its node, which
//! Prometheus makes the series' instance. The node exporter's series are the host's, the same for
//! both nodes: these jobs are judged on their own per-node cgroup series (`prometheus.cgroup`).
//!
//! Four real two-node jobs of `jobs/multi-node/`, one after the other (each takes both nodes),
//! an array of two one-node tasks that run at once, one on each node, and a heterogeneous job:
//! - `lammps`: LAMMPS with one MPI rank per node (the training suite's input; mpirun starts the
//!   second node's rank through srun): no finding about the spread, each node's own series about
//!   one busy core, the job's CPU efficiency within 5 points of seff's;
//! - `hung-rank`: the second node's task only sleeps: `idle-node` names `node2`, and
//!   `jobsight job` shows both nodes; while it runs, the running DAG's `running-idle-node`
//!   (its dwell shortened to 16 s) names `node2` too;
//! - `imbalance`: the second node's task works 0.3 s of every second: `node-imbalance`, no
//!   `idle-node`;
//! - `forgot-srun`: the batch script works without srun, so the second node is never used:
//!   `idle-node` names `node2`;
//! - `array`: each task stored with the node it ran on and judged on its own series there;
//! - `het`: a heterogeneous job of two one-node components, each stored as a job of its own
//!   (Slurm runs the epilog per component, with the component's id), linked to the first by
//!   `het_job_id` and judged on its node.
//!
//! Then a job that loses a node mid-run and is requeued onto the node left (its own test).
//!
//! Needs root and the package registry; about 4 minutes (six runs of 30 s, the hung rank's 40 s),
//! and 2.5 for the lost node.
use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::run_ok;
use common::services::{
    ingest_until_done, job_state, prometheus_config, sbatch, seff, sh, wait_until,
};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");
/// Prometheus, the node exporter and jobsight-exporter, away from the other tests' ports.
const PORTS: [u16; 3] = [19490, 19491, 19492];
const STEP_S: i64 = 2;
/// How long each job works; the hung rank runs longer, since the running DAG judges it at 30 s.
const WORK_SECONDS: u64 = 30;
const HUNG_RANK_SECONDS: u64 = 40;
/// LAMMPS's efficiency is compared with seff's within 0.05. Telemetry sees the job from its first
/// scrape to its last and seff the whole run, so the edges (MPI's start, a scrape missed) weigh
/// twice as much on a 30-s job as on a 60-s one. Other runs differed by 0.001 to 0.029; one CI run
/// of a 30-s job read 0.872 against seff's 0.928.
const LAMMPS_SECONDS: u64 = 60;

/// What `jobsight ARGS` prints with `config` and the warehouse `data`; a failure fails the test.
fn jobsight(config: &Path, data: &Path, args: &[&str]) -> String {
    run_ok(
        Command::new(JOBSIGHT)
            .arg("--config")
            .arg(config)
            .arg("--data")
            .arg(data)
            .args(args),
    )
}

fn sql(data: &Path, query: &str) -> Vec<serde_json::Value> {
    common::sql_json(JOBSIGHT, data, query)
}

#[test]
#[ignore = "needs root: installs and starts a real two-node Slurm and Prometheus (run by .ci/run with --include-ignored)"]
fn two_node_jobs_are_judged_on_each_nodes_own_work() {
    let site = common::services::slurm_site_of_nodes(
        JOBSIGHT,
        "multi-node-test",
        "Slurm and Prometheus",
        2,
    );
    let (base, spool) = (site.base.clone(), site.spool.clone());
    let _services = common::services::start_prometheus_and_job_exporter_of(
        JOBSIGHT,
        &base.join("prom"),
        PORTS,
        Some("node1 node2"),
    );
    let nodes = sh("sinfo -h -N -o '%N %c %T'");
    eprintln!("nodes:\n{nodes}");
    assert_eq!(nodes.lines().count(), 2, "{nodes}");

    // The application and its input, where the test user can read them.
    run_ok(Command::new("bash").arg(common::repo().join("ops/training/install-applications.sh")));
    std::fs::copy(
        common::repo().join("jobs/training/application.sh"),
        base.join("application.sh"),
    )
    .unwrap();
    let mut jobs = Vec::new();
    let mut running = Vec::new();
    // `spread.sbatch` (a busy loop on each node) is left out: LAMMPS is the same case with a
    // real application, and each job here costs the suite about 45 s.
    for script in [
        "lammps",
        "hung-rank",
        "imbalance",
        "forgot-srun",
        "array",
        "het",
    ] {
        let seconds = match script {
            "hung-rank" => HUNG_RANK_SECONDS,
            "lammps" => LAMMPS_SECONDS,
            _ => WORK_SECONDS,
        };
        let export = format!(
            "--export=ALL,WORK_SECONDS={seconds},TRAINING_SUITE={}",
            base.display()
        );
        let job = sbatch(&format!("multi-node/{script}"), &[export.into()]);
        if script == "hung-rank" {
            running = judge_while_running(&base, job);
        }
        wait_until(
            &format!("job {job} ({script}) to end"),
            Duration::from_secs(seconds + 180),
            || job_state(job).is_empty(),
        );
        jobs.push(job);
    }
    let [lammps, hung, imbalanced, forgot, array, het] =
        [jobs[0], jobs[1], jobs[2], jobs[3], jobs[4], jobs[5]];
    // Four jobs, the array's two tasks and the heterogeneous job's two components.
    let (config, data) = judge_on_own_series(&base, &spool, 8, 20);

    let per_node = sql(
        &data,
        "SELECT job_id, node, mean FROM features WHERE metric = 'job_cpu_cores_used'
         ORDER BY job_id, node",
    );
    let findings = sql(
        &data,
        "SELECT job_id, rule, node, message, fix FROM findings ORDER BY job_id, rule, node",
    );
    let summary = sql(
        &data,
        "SELECT s.job_id, s.cpu_eff, s.cpu_eff_source, j.nodes, j.acct_cpu_total_s
         FROM job_summary s JOIN jobs j USING (job_id) ORDER BY s.job_id",
    );
    eprintln!("per node: {per_node:?}\nfindings: {findings:?}\nsummary: {summary:?}");
    let busy = |job: u64, node: &str| {
        per_node
            .iter()
            .find(|r| r["job_id"] == job.to_string().as_str() && r["node"] == node)
            .and_then(|r| r["mean"].as_f64())
            .unwrap_or_else(|| panic!("job {job} has no own CPU series on {node}: {per_node:?}"))
    };
    let found = |job: u64, rule: &str| -> Vec<String> {
        findings
            .iter()
            .filter(|f| f["job_id"] == job.to_string().as_str() && f["rule"] == rule)
            .map(|f| f["node"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let spread_rules = ["idle-node", "node-imbalance"];

    // Both nodes worked: a busy core each, measured on each node's own cgroups, and the job's
    // efficiency as seff computes it.
    for (job, what) in [(lammps, "lammps")] {
        for node in ["node1", "node2"] {
            assert!(busy(job, node) > 0.8, "{what} on {node}: {per_node:?}");
        }
        for rule in spread_rules {
            assert!(found(job, rule).is_empty(), "{what}: {rule}: {findings:?}");
        }
        let (seff_eff, _) = seff(job);
        let row = summary
            .iter()
            .find(|r| r["job_id"] == job.to_string().as_str())
            .unwrap_or_else(|| panic!("{what} has no job_summary row: {summary:?}"));
        let eff = row["cpu_eff"].as_f64().unwrap();
        eprintln!("{what}: jobsight {eff:.3}, seff {seff_eff:.3}");
        assert!(
            (eff - seff_eff).abs() <= 0.05,
            "{what}: {eff} against seff's {seff_eff}: {row}"
        );
        assert_eq!(row["cpu_eff_source"], "telemetry-job", "{row}");
    }

    // A hung rank and a node never used: the idle node is named, the working one is not, and
    // the one cause is told once (not again as a low load or an imbalance).
    for (job, what) in [(hung, "hung-rank"), (forgot, "forgot-srun")] {
        assert!(busy(job, "node1") > 0.8, "{what} on node1: {per_node:?}");
        assert_eq!(found(job, "idle-node"), ["node2"], "{what}: {findings:?}");
        for rule in ["node-imbalance", "low-cpu-load"] {
            assert!(found(job, rule).is_empty(), "{what}: {rule}: {findings:?}");
        }
        let advice = findings
            .iter()
            .find(|f| f["job_id"] == job.to_string().as_str() && f["rule"] == "idle-node")
            .and_then(|f| f["fix"].as_str())
            .unwrap_or_default();
        assert!(advice.contains("--nodes=1"), "{what}: {advice}");
    }
    // Work spread unevenly: the second node works about 0.3 s of every second. The job's nodes
    // differ (`node-imbalance`), and no node is called idle.
    assert!(busy(imbalanced, "node1") > 0.8, "{per_node:?}");
    let light = busy(imbalanced, "node2");
    assert!(
        (0.1..0.6).contains(&light),
        "imbalance on node2: {per_node:?}"
    );
    assert_eq!(found(imbalanced, "node-imbalance").len(), 1, "{findings:?}");
    assert!(found(imbalanced, "idle-node").is_empty(), "{findings:?}");
    // Jobs of one node each that ran one on each node (first `node1`, then `node2` in `order`),
    // each judged on its own series there.
    let one_on_each_node = |what: &str, filter: String, order: &str| {
        let rows = sql(
            &data,
            &format!(
                "SELECT s.job_id, j.nodes, s.cpu_eff_source FROM job_summary s JOIN jobs j USING (job_id)
                 WHERE {filter} ORDER BY {order}"
            ),
        );
        eprintln!("{what}: {rows:?}");
        let on: Vec<&str> = rows.iter().filter_map(|r| r["nodes"].as_str()).collect();
        assert_eq!(on, ["node1", "node2"], "{what}: {rows:?}");
        for row in &rows {
            let (id, node) = (
                row["job_id"].as_str().unwrap(),
                row["nodes"].as_str().unwrap(),
            );
            assert!(
                busy(id.parse().unwrap(), node) > 0.8,
                "{what}: {id} on {node}: {per_node:?}"
            );
            assert_eq!(row["cpu_eff_source"], "telemetry-job", "{what}: {row}");
        }
    };
    // The array's tasks ran at once on different nodes.
    one_on_each_node(
        &format!("array {array}"),
        format!("j.array_job_id = '{array}'"),
        "j.nodes",
    );
    // The heterogeneous job's components: each a job of its own, under its own id, linked to
    // the first by `het_job_id`, the first component on the first node.
    one_on_each_node(
        &format!("hetjob {het}"),
        format!("j.het_job_id = '{het}'"),
        "j.het_job_offset",
    );
    let components = sql(
        &data,
        &format!(
            "SELECT job_id, CAST(het_job_offset AS BIGINT) AS component FROM jobs
             WHERE het_job_id = '{het}' ORDER BY het_job_offset"
        ),
    );
    assert_eq!(
        components,
        [
            serde_json::json!({"job_id": het.to_string(), "component": 0}),
            serde_json::json!({"job_id": (het + 1).to_string(), "component": 1}),
        ],
        "{components:?}"
    );

    // While it ran, the running DAG warned about the hung rank's node.
    let idle: Vec<&serde_json::Value> = running
        .iter()
        .flat_map(|j| j["conditions"].as_array().into_iter().flatten())
        .filter(|c| c["rule"] == "running-idle-node")
        .collect();
    assert_eq!(idle.len(), 1, "{running:?}");
    let said = idle[0]["message"].as_str().unwrap_or_default();
    assert!(said.starts_with("Node node2 of your job"), "{said}");

    // `jobsight job` shows the job's two nodes.
    let out = jobsight(&config, &data, &["job", &hung.to_string()]);
    eprintln!("{out}");
    let table = out
        .split("Node by node")
        .nth(1)
        .unwrap_or_else(|| panic!("no node-by-node table: {out}"));
    assert!(
        table.contains("\n  node1 ") && table.contains("\n  node2 "),
        "{out}"
    );
    // So does its page, beside the finding that names the idle node.
    let pages = base.join("pages");
    let path = jobsight(
        &config,
        &data,
        &[
            "report",
            "job",
            &hung.to_string(),
            "--dir",
            pages.to_str().unwrap(),
        ],
    );
    let page = std::fs::read_to_string(path.trim())
        .unwrap_or_else(|e| panic!("the job's page {path}: {e}"));
    let by_node = page
        .split("<h3>Node by node</h3>")
        .nth(1)
        .and_then(|rest| rest.split("</table>").next())
        .unwrap_or_else(|| panic!("no node-by-node table on the page: {page}"));
    assert!(
        by_node.contains("<td>node1</td>") && by_node.contains("<td>node2</td>"),
        "{by_node}"
    );
    let finding = page
        .split("rule idle-node, group ")
        .nth(1)
        .and_then(|rest| rest.split("</span>").next())
        .unwrap_or_else(|| panic!("no idle-node finding on the page: {page}"));
    assert!(finding.contains(", node node2"), "{finding}");
}

/// A node lost mid-job: the second node's slurmd is killed and the node marked down while a
/// job of one or two nodes (`--nodes=1-2`) runs on both (`jobs/multi-node/lose-node.sbatch`,
/// `--requeue`). Slurm ends the run `NODE_FAIL` and requeues the job; the node stays down, so the
/// second run completes on the node left. Each run is stored once, the first with `node-fail`, the
/// second's note naming the nodes that changed, and no record is retried for ever (none in
/// `failed/`).
#[test]
#[ignore = "needs root: installs and starts a real two-node Slurm and Prometheus (run by .ci/run with --include-ignored)"]
fn a_node_lost_mid_job_ends_one_run_stored_once_and_the_requeued_run_is_judged() {
    const SECONDS: u64 = 30;
    const LOST_FOR_S: u64 = 15;
    // `AuthInfo=cred_expire=30` on the multi-node test cluster, plus one second.
    const REQUEUE_HOLD_S: u64 = 31;
    let site = common::services::slurm_site_of_nodes(
        JOBSIGHT,
        "lost-node-test",
        "Slurm and Prometheus",
        2,
    );
    let (base, spool) = (site.base.clone(), site.spool.clone());
    let _services = common::services::start_prometheus_and_job_exporter_of(
        JOBSIGHT,
        &base.join("prom"),
        PORTS,
        Some("node1 node2"),
    );
    let job = sbatch(
        "multi-node/lose-node",
        &[format!("--export=ALL,WORK_SECONDS={SECONDS}").into()],
    );
    wait_until("the job to run", Duration::from_secs(60), || {
        job_state(job) == "RUNNING"
    });
    // Both nodes were free, so Slurm gave the job both (`--nodes=1-2` without a task count: as
    // many as are free; with `--ntasks-per-node=1` it gave one).
    let first_nodes = sh(&format!("squeue -h -j {job} -o %N"));
    assert_eq!(first_nodes.trim(), "node[1-2]", "the first run's nodes");
    std::thread::sleep(Duration::from_secs(15));
    // The node is lost as a crash loses it: its slurmd, its step daemons and the job's processes
    // there die at once (all of them run in the node's cpuset), and the admin (or slurmctld's
    // timeout) marks it down.
    // Killed until none is left: a process dies some moments after its SIGKILL, and one
    // forked meanwhile (a step daemon's child) needs its own.
    wait_until(
        "every process of node2 to die",
        Duration::from_secs(10),
        || {
            sh("kill -9 $(cat /sys/fs/cgroup/cpuset/slurmd_node2/cgroup.procs) 2>/dev/null; sleep 0.2; \
                cat /sys/fs/cgroup/cpuset/slurmd_node2/cgroup.procs")
            .trim()
            .is_empty()
        },
    );
    // A lost machine's exporter goes with it. Here one exporter reads both nodes and outlives
    // node2, so the job's cgroups there are removed as the crash would take them (the tree
    // vanishing under the exporter): its series end.
    sh(&format!(
        "for i in 1 2 3 4 5; do find /sys/fs/cgroup -depth -type d \\( -path '*slurm_node2/*/job_{job}' \\
         -o -path '*slurm_node2/*/job_{job}/*' \\) -exec rmdir {{}} + 2>/dev/null; sleep 0.2; done; true"
    ));
    let left = sh(&format!(
        "find /sys/fs/cgroup -type d -path '*slurm_node2/*' -name 'job_{job}'"
    ));
    assert_eq!(
        left.trim(),
        "",
        "node2's cgroups of the job are still there"
    );
    // Slurm notices a silent node after `SlurmdTimeout` (300 s by default); here the admin
    // marks it down some seconds later, so that its series end well before node1's.
    std::thread::sleep(Duration::from_secs(LOST_FOR_S));
    sh("scontrol update nodename=node2 state=down reason='lost in the multi-node test'");
    let node_failed = || {
        sh(&format!(
            "sacct -n -X -P -D -j {job} -o State --starttime now-1hour"
        ))
        .lines()
        .any(|state| state.trim() == "NODE_FAIL")
    };
    wait_until(
        "the run to end NODE_FAIL",
        Duration::from_secs(60),
        node_failed,
    );
    // Requeued: Slurm holds it `cred_expire` seconds (30 on the test cluster) before it may start
    // again, and then runs it on node1 alone (node2 stays down): a run whose nodes changed.
    wait_until("the job to be requeued", Duration::from_secs(60), || {
        job_state(job) == "PENDING"
    });
    wait_until(
        "the requeued run to end",
        Duration::from_secs(REQUEUE_HOLD_S + SECONDS + 120),
        || job_state(job).is_empty(),
    );
    let (config, data) = judge_on_own_series(&base, &spool, 2, 10);
    let runs = sql(
        &data,
        &format!(
            "SELECT restart_count, state, nodes, note FROM jobs WHERE job_id = '{job}' ORDER BY restart_count"
        ),
    );
    let findings = sql(
        &data,
        &format!(
            "SELECT restart_count, rule, node, message FROM findings WHERE job_id = '{job}' ORDER BY rule"
        ),
    );
    eprintln!("runs: {runs:?}\nfindings: {findings:?}");
    let states: Vec<&str> = runs.iter().filter_map(|r| r["state"].as_str()).collect();
    let steps = sh(&format!(
        "sacct -P -D -j {job} -o JobID,State,ExitCode,NodeList,Start,End --starttime now-1hour"
    ));
    assert_eq!(
        states,
        ["NODE_FAIL", "COMPLETED"],
        "{runs:?}\nsacct's steps of every run:\n{steps}"
    );
    // The lost node's partial series are kept, and the run's note marks them.
    let note = runs[0]["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("node2's telemetry ends") && note.contains("NODE_FAIL"),
        "{runs:?}"
    );
    // The requeued run ran on node1 alone, and its note says the nodes changed.
    assert_eq!(runs[0]["nodes"], "node[1-2]", "{runs:?}");
    assert_eq!(runs[1]["nodes"], "node1", "{runs:?}");
    let note = runs[1]["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("this run ran on node1, the run before it (NODE_FAIL) on node[1-2]"),
        "{runs:?}"
    );
    let kept = sql(
        &data,
        &format!(
            "SELECT node, count(*) AS n FROM telemetry WHERE job_id = '{job}' AND ts <= \
             (SELECT max(\"end\") FROM jobs WHERE job_id = '{job}' AND restart_count = 0) \
             GROUP BY node ORDER BY node"
        ),
    );
    eprintln!("telemetry rows per node of the lost run: {kept:?}");
    assert!(kept.iter().any(|r| r["node"] == "node2"), "{kept:?}");
    assert!(
        findings.iter().any(|f| f["rule"] == "node-fail"),
        "{findings:?}"
    );
    // Each run is judged on what is known: node1 covers the lost run, and node2 counts at what
    // it sent before it was lost. Not on accounting, which lost node2's figures with the node
    // (about half the CPU time): nothing blames the job. The requeued run, busy throughout on
    // node1, has no finding.
    let rules: Vec<&str> = findings.iter().filter_map(|f| f["rule"].as_str()).collect();
    assert_eq!(rules, ["node-fail"], "{findings:?}");
    assert_eq!(
        findings[0]["restart_count"], 0,
        "the lost run's: {findings:?}"
    );
    // `jobsight job` shows the job as its last run, and says which run the finding is about.
    let out = jobsight(&config, &data, &["job", &job.to_string()]);
    assert!(out.contains("State       COMPLETED"), "{out}");
    assert!(
        out.contains("About run 1 of 2, which ended NODE_FAIL; Slurm ran the job again."),
        "{out}"
    );
    let judged = sql(
        &data,
        &format!(
            "SELECT elapsed_s, judgeable, not_judgeable_reason, coverage_min, cpu_eff, cpu_eff_source, \
             cpu_eff_acct FROM job_summary WHERE job_id = '{job}' ORDER BY elapsed_s"
        ),
    );
    eprintln!("each run's summary: {judged:?}");
    assert_eq!(judged.len(), 2, "{judged:?}");
    for run in &judged {
        assert_eq!(run["judgeable"], true, "{judged:?}");
        assert_eq!(run["cpu_eff_source"], "telemetry-job", "{judged:?}");
        assert!(run["cpu_eff"].as_f64().unwrap_or(0.0) > 0.8, "{judged:?}");
    }
    assert!(
        judged.iter().any(|r| r["coverage_min"].as_f64().unwrap_or(1.0) < 0.8
            && r["cpu_eff_acct"].is_null()),
        "the lost run: node2 partly covered, its accounting unused: {judged:?}"
    );
    let failed = std::fs::read_dir(spool.join("failed"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(failed, 0, "records set aside in failed/");
}

/// The running DAG (`jobsight dag run running`) once, `RUNNING_AT_S` into `job`'s run, with the
/// idle-node condition's dwell shortened to [`DWELL_S`] by a site rule file (as a site tunes it),
/// on the jobs' own series as [`judge_on_own_series`]; the snapshot's documents of `job`
/// (`jobsight running --format json`).
fn judge_while_running(base: &Path, job: u64) -> Vec<serde_json::Value> {
    const DWELL_S: u64 = 16;
    const RUNNING_AT_S: u64 = 30;
    let rules = base.join("running-rules");
    std::fs::create_dir_all(&rules).unwrap();
    let built_in =
        std::fs::read_to_string(common::repo().join("pipeline/rules/book/running.toml")).unwrap();
    let tuned = "dwell_s = 3600\nat_end = \"idle-node\"";
    assert!(built_in.contains(tuned));
    std::fs::write(
        rules.join("running.toml"),
        built_in.replace(
            tuned,
            &format!("dwell_s = {DWELL_S}\nat_end = \"idle-node\""),
        ),
    )
    .unwrap();
    let config = base.join("jobsight-running.toml");
    std::fs::rename(
        prometheus_config(
            base,
            PORTS[0],
            STEP_S,
            &format!(
                "cgroup = true\nmetrics = []\n[features]\ncores_per_node = 1\n[rules]\nmin_run_s = 10\ndir = \"{}\"\n",
                rules.display()
            ),
        ),
        &config,
    )
    .unwrap();
    wait_until(
        &format!("job {job} to run"),
        Duration::from_secs(60),
        || job_state(job) == "RUNNING",
    );
    std::thread::sleep(Duration::from_secs(RUNNING_AT_S));
    let data = base.join("running-data");
    eprintln!("{}", jobsight(&config, &data, &["dag", "run", "running"]));
    let snapshot = jobsight(&config, &data, &["running", "--format", "json"]);
    eprintln!("running now: {snapshot}");
    serde_json::Deserializer::from_str(&snapshot)
        .into_iter::<serde_json::Value>()
        .map(|d| d.unwrap())
        .filter(|d| d["job_id"] == job.to_string().as_str())
        .collect()
}

/// Runs the per-job DAG until `count` records of `spool` are done, judging runs of `min_run_s`
/// and more on the jobs' own series only (`metrics = []`: none of the node exporter's, which are
/// this host's, shared by both nodes: its load and network would be two nodes' at once); each
/// node has one CPU. Returns the configuration and the warehouse.
fn judge_on_own_series(
    base: &Path,
    spool: &Path,
    count: usize,
    min_run_s: u64,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let config = prometheus_config(
        base,
        PORTS[0],
        STEP_S,
        &format!(
            "cgroup = true\nmetrics = []\n[features]\ncores_per_node = 1\n[rules]\nmin_run_s = {min_run_s}\n"
        ),
    );
    let data = base.join("data");
    ingest_until_done(
        JOBSIGHT,
        &config,
        &data,
        spool,
        count,
        Duration::from_secs(240),
    );
    (config, data)
}
