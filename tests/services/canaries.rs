//! The whole system, unattended, on real services: the canary jobs of `jobs/canaries/` on a real
//! single-node Slurm with a real Prometheus and node exporter and a real SMTP server. The hook is
//! installed as `ops/install-epilog.sh` does it, `jobsight daemon` is started as a real process
//! (as the systemd unit does) before the jobs are submitted, and after that no jobsight command
//! runs until the checks: the daemon's per-job DAG (every 20 s here, a site DAG file replacing
//! the built-in one's every 2 minutes) claims
//! each job, takes its record from sacct and its node's telemetry from Prometheus, computes its
//! features, applies the built-in rules and emails critical findings to the owner. Each canary
//! must get its expected finding and the healthy CPU-bound job none; every critical email the
//! ledger records must have arrived at the SMTP server; `dag status` must say healthy. The test
//! prints job end -> finding and job end -> email for each job.
//!
//! jobsight-exporter serves each job's own cgroup series and the ingest reads them
//! (`prometheus.cgroup`), so whatever else the machine does while a canary runs (a CI run's page
//! cache written back, a daemon starting) is not the canary's: a hung canary once read 1.1 busy
//! cores from the node's figures. The jobs run 60 s each, in four rounds (the hung and the
//! leaking canary side by side, the others each alone on the node); `rules.min_run_s` and
//! `notify.min_run_s` are lowered to 50 s for them, as `jobs/canaries/README.md` tells a site to
//! do (with 60 s for its 75-s canaries). Needs root and the package registry; takes about
//! 4.5 minutes.
use crate::common;

use std::collections::BTreeMap;

use std::time::Duration;

use common::services::{KillOnDrop, job_state, prometheus_config, sbatch_text, sh, wait_until};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");
const PROM_PORT: u16 = 19091;
const EXPORTER_PORT: u16 = 19101;
const SMTP_PORT: u16 = 19025;
const CGROUP_PORT: u16 = 19308;
const CANARY_SECONDS: u64 = 60;

/// Each canary and the findings it must get (empty: none at all), in rounds: the canaries of a
/// round run at the same time, the rounds one after the other. The serial and healthy canaries
/// need the node's cores to themselves; the hung and the leaking one hardly use a CPU and each is
/// judged on its own cgroup series, so they share the node (their copies here drop `--exclusive`
/// and take one core each), which saves the suite a minute.
const ROUNDS: [&[(&str, &[&str])]; 4] = [
    &[("hung", &["hung-job"]), ("leak", &["memory-leak"])],
    &[("serial", &["serial-on-many-cores"])],
    &[("overrequest", &["memory-overrequest", "time-overrequest"])],
    &[("healthy", &[])],
];

#[test]
#[ignore = "needs root: installs and starts a real Slurm and Prometheus (run by .ci/run with --include-ignored)"]
fn each_canary_gets_its_expected_finding_and_the_healthy_job_none() {
    let site = common::services::slurm_site(JOBSIGHT, "canaries-test", "Slurm and Prometheus");
    let (base, spool) = (site.base.clone(), site.spool.clone());
    let _services = common::services::start_prometheus_and_job_exporter(
        JOBSIGHT,
        &base.join("prom"),
        PROM_PORT,
        EXPORTER_PORT,
        CGROUP_PORT,
    );
    let cpus: u32 = sh("nproc").trim().parse().unwrap();
    assert!(
        cpus >= 2,
        "the serial canary needs a node with 2 or more CPUs"
    );

    // A real SMTP server that stores each message as a file named by its arrival time.
    let mail = base.join("mail");
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", SMTP_PORT)).is_err(),
        "port {SMTP_PORT} is taken: stop what listens there first"
    );
    let _smtp = KillOnDrop(
        std::process::Command::new("bash")
            .arg(common::repo().join("ops/smtp/start-smtp.sh"))
            .args(["--port", &SMTP_PORT.to_string(), "--dir"])
            .arg(&mail)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_until("the SMTP server", Duration::from_secs(180), || {
        std::net::TcpStream::connect(("127.0.0.1", SMTP_PORT)).is_ok()
    });

    // The built-in per-job DAG every 20 s instead of every two minutes (a site's DAG of the same
    // name replaces it): the last canary waits a sixth as long for its run.
    let dags = base.join("dags");
    std::fs::create_dir_all(&dags).unwrap();
    let per_job = std::fs::read_to_string(common::repo().join("dags/per-job.toml")).unwrap();
    let every_20_s = per_job.replace(
        "\nschedule = \"0 */2 * * * *\"\n",
        "\nschedule = \"0/20 * * * * *\"\n",
    );
    assert_ne!(
        every_20_s, per_job,
        "dags/per-job.toml's schedule line changed"
    );
    std::fs::write(dags.join("per-job.toml"), every_20_s).unwrap();

    let data = base.join("data");
    let config = prometheus_config(
        &base,
        PROM_PORT,
        2,
        &format!(
            "cgroup = true\n[schedule]\ndags = \"{}\"\n[features]\ncores_per_node = {cpus}\n[rules]\nmin_run_s = 50\n[notify]\nmin_run_s = 50\ndelivery = \"smtp\"\nrecipient = \"{{user}}@example.org\"\n[notify.smtp]\nhost = \"127.0.0.1\"\nport = {SMTP_PORT}\nsecurity = \"none\"\n",
            dags.display()
        ),
    );
    // jobsight with this site's configuration, warehouse and spool.
    let jobsight = |args: &[&str]| {
        let mut command = std::process::Command::new(JOBSIGHT);
        command
            .arg("--config")
            .arg(&config)
            .arg("--data")
            .arg(&data)
            .arg("--spool")
            .arg(&spool)
            .args(args);
        command
    };
    // The node's own figures (memory, I/O) still reach the features: write back what the build
    // left in the page cache now (gigabytes of freshly linked test binaries), not while a canary
    // runs.
    sh("sync");
    // The daemon, as the systemd unit starts it; nothing else of jobsight runs from here on.
    let daemon_log = base.join("daemon.log");
    let mut daemon = KillOnDrop(
        jobsight(&["--log-format", "json", "daemon"])
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&daemon_log).unwrap())
            .spawn()
            .unwrap(),
    );

    // A fresh daemon first catches up the runs it missed (the nightly one included); let those
    // end before the first canary starts, so that they are not part of its telemetry.
    wait_until(
        "the daemon's catch-up runs to end",
        Duration::from_secs(120),
        || {
            std::fs::read_to_string(&daemon_log)
                .is_ok_and(|log| log.contains(r#""event":"run-end","dag":"per-job""#))
        },
    );

    let mut jobs: Vec<(u64, &str, &[&str])> = Vec::new();
    for round in ROUNDS {
        let mut this_round = Vec::new();
        for &(canary, expected) in round {
            let path = common::repo().join(format!("jobs/canaries/{canary}.sbatch"));
            let mut script = std::fs::read_to_string(&path).unwrap();
            // Canaries that share a round share the node: no whole node each.
            if round.len() > 1 {
                let whole_node = "#SBATCH --exclusive\n";
                assert!(script.contains(whole_node), "{}", path.display());
                script = script.replace(whole_node, "");
            }
            let job = sbatch_text(
                &script,
                &[format!("--export=ALL,CANARY_SECONDS={CANARY_SECONDS}").into()],
            );
            eprintln!("canary {canary}: job {job}");
            this_round.push((job, canary, expected));
        }
        for &(job, canary, _) in &this_round {
            wait_until(
                &format!("job {job} (canary {canary}) to end"),
                Duration::from_secs(CANARY_SECONDS + 120),
                || job_state(job).is_empty(),
            );
        }
        jobs.extend(this_round);
    }

    // The per-job DAG runs every 20 s here: every job is judged within about that.
    wait_until(
        "the daemon to judge every canary",
        Duration::from_secs(300),
        || {
            let done = std::fs::read_dir(spool.join("done")).map_or(0, |d| d.count());
            let carried = data.join(".schedule/per-job.ingested.jsonl").exists();
            done == jobs.len() && !carried
        },
    );
    let log = std::fs::read_to_string(&daemon_log).unwrap();

    // What the per-job path found, as stored.
    let rows = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT f.job_id, f.rule, f.node, f.window_start, f.window_end, j.start, j.\"end\", f.message
         FROM findings f JOIN jobs j ON j.job_id = f.job_id ORDER BY f.job_id, f.rule",
    );
    let summary = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT job_id, judgeable, cpu_used_cores, mem_used_max_mb, mem_eff, time_eff FROM job_summary ORDER BY job_id",
    );
    eprintln!("job_summary: {summary:?}");
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in &rows {
        eprintln!("finding: {r}");
        found
            .entry(r["job_id"].as_str().unwrap().to_string())
            .or_default()
            .push(r["rule"].as_str().unwrap().to_string());
    }
    for (job, canary, expected) in &jobs {
        let got = found.get(&job.to_string()).cloned().unwrap_or_default();
        if expected.is_empty() {
            assert!(
                got.is_empty(),
                "canary {canary} (job {job}) should have no findings: {got:?}"
            );
        }
        for rule in *expected {
            assert!(
                got.iter().any(|g| g == rule),
                "canary {canary} (job {job}) lacks {rule}: it got {got:?}\n{log}"
            );
        }
    }
    // The leak is placed on the node, inside the job's run time.
    let leak_job = jobs.iter().find(|j| j.1 == "leak").unwrap().0.to_string();
    let leak = rows
        .iter()
        .find(|r| r["job_id"] == leak_job.as_str() && r["rule"] == "memory-leak")
        .unwrap();
    assert_eq!(leak["node"], sh("hostname -s").trim());
    let time = |k: &str| leak[k].as_str().unwrap().to_string();
    assert!(
        time("window_start") >= time("start") && time("window_end") <= time("end"),
        "{leak}"
    );
    // The request canary is told what to ask for.
    let over = jobs
        .iter()
        .find(|j| j.1 == "overrequest")
        .unwrap()
        .0
        .to_string();
    let advice: Vec<&str> = rows
        .iter()
        .filter(|r| r["job_id"] == over.as_str())
        .filter_map(|r| r["message"].as_str())
        .collect();
    assert!(advice.iter().any(|m| m.contains("16.0 GB")), "{advice:?}");

    // Every critical email the ledger records arrived at the SMTP server (wait for the last ones).
    let ledger = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT DISTINCT key, job_id FROM notifications WHERE kind = 'critical' AND status = 'sent'",
    );
    eprintln!("critical emails recorded: {ledger:?}");
    assert!(
        !ledger.is_empty(),
        "the hung canary's critical finding is emailed\n{log}"
    );
    let arrived = |key: &str| -> Option<i64> {
        std::fs::read_dir(&mail).ok()?.flatten().find_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(e.path()).ok()?;
            // Arrival time in ns is the file name's first field (ops/smtp/smtp_sink.py).
            (!name.starts_with('.') && text.contains(&format!("<{key}@")))
                .then(|| name.split('-').next()?.parse::<i64>().ok())
                .flatten()
        })
    };
    wait_until("the critical emails", Duration::from_secs(60), || {
        ledger
            .iter()
            .all(|r| arrived(r["key"].as_str().unwrap()).is_some())
    });

    // Job end -> finding (the daemon's log line of the job's findings) and job end -> email.
    let ends = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT job_id, CAST(to_unixtime(\"end\") AS BIGINT) AS end_s FROM jobs ORDER BY job_id",
    );
    let judged_at = |job: &str| -> Option<f64> {
        log.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|v| {
                v["event"] == "job"
                    && v["step"] == "classify"
                    && v["job"]
                        .as_str()
                        .is_some_and(|j| j.ends_with(&format!(":{job}")))
            })
            .and_then(|v| {
                chrono::DateTime::parse_from_rfc3339(v["ts"].as_str()?)
                    .ok()
                    .map(|t| t.timestamp_millis() as f64 / 1000.0)
            })
    };
    for row in &ends {
        let job = row["job_id"].as_str().unwrap();
        let end = row["end_s"].as_i64().unwrap() as f64;
        let finding = judged_at(job).map(|t| t - end);
        let email = ledger
            .iter()
            .find(|r| r["job_id"] == job)
            .and_then(|r| arrived(r["key"].as_str().unwrap()))
            .map(|ns| ns as f64 / 1e9 - end);
        eprintln!(
            "LATENCY job {job}: end -> finding {}, end -> email {}",
            finding.map_or("-".into(), |s| format!("{s:.0} s")),
            email.map_or("-".into(), |s| format!("{s:.0} s"))
        );
        let finding =
            finding.unwrap_or_else(|| panic!("job {job} has no classify log line\n{log}"));
        assert!(
            finding < 300.0,
            "job {job} judged {finding} s after its end"
        );
    }

    // The pipeline says it keeps up, then the daemon stops cleanly on SIGTERM.
    let status = jobsight(&["dag", "status"]).output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    eprintln!("{text}");
    assert!(status.status.success(), "{text}");
    assert!(text.contains("healthy:"), "{text}");
    sh(&format!("kill -TERM {}", daemon.0.id()));
    assert!(daemon.0.wait().unwrap().success());
}
