//! `jobsight demo` runs on its embedded defaults with nothing but the two binaries, drives the real
//! hook binary, and reports numbers that match what is on disk and what the simulation implies.
use crate::common;

use std::collections::BTreeSet;

use jobsight_base::units::{raw_names, unreadable_numbers};
use std::path::{Path, PathBuf};
use std::process::Command;

use jobsight_sim::{ClusterSpec, hook_environments, simulate_day};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

fn epilog_bin() -> PathBuf {
    let bin = Path::new(JOBSIGHT).with_file_name("jobsight-epilog");
    assert!(
        bin.is_file(),
        "{} is missing: build the workspace (`cargo build --workspace`) first",
        bin.display()
    );
    bin
}

fn demo(dir: &Path, jobs: usize, seed: u64) -> String {
    common::run_ok(
        Command::new(JOBSIGHT)
            .args([
                "demo",
                "--jobs",
                &jobs.to_string(),
                "--seed",
                &seed.to_string(),
                "--dir",
            ])
            .arg(dir)
            .env("JOBSIGHT_EPILOG_BIN", epilog_bin()),
    )
}

#[test]
fn demo_reports_what_is_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    // 150 jobs carry every kind of check below (a leak, serial jobs, anomalies the models name,
    // critical emails and a user's digest with links; 100 jobs of this seed give no digest);
    // each job more only costs the suite time. The training day is the demo's own, whatever the
    // count.
    let (jobs, seed) = (150, 3);
    let report = demo(dir.path(), jobs, seed);

    // What the simulated Slurm must have produced.
    let spec = ClusterSpec {
        jobs,
        ..ClusterSpec::default()
    };
    let day = simulate_day(&spec, seed);
    let runs: usize = day.iter().map(|j| hook_environments("demo", j).len()).sum();
    let keys: BTreeSet<(u64, u32)> = day.iter().map(|j| (j.job_id, j.restart_count)).collect();

    assert!(
        report.contains(&format!("ran jobsight-epilog {runs} times")),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "claimed {} record(s); set aside {} duplicate(s) and 0 failed",
            keys.len(),
            runs - keys.len()
        )),
        "{report}"
    );
    // The per-job DAG took every claimed record from cur/ to done/.
    let spool = dir.path().join("spool");
    assert_eq!(std::fs::read_dir(spool.join("cur")).unwrap().count(), 0);
    assert_eq!(
        std::fs::read_dir(spool.join("done")).unwrap().count(),
        keys.len()
    );
    // Each duplicate has its record and its reason file.
    assert_eq!(
        std::fs::read_dir(spool.join("duplicate")).unwrap().count(),
        2 * (runs - keys.len())
    );
    assert!(report.contains("0 run(s) reported a problem"), "{report}");
    // Every claimed job run reached the warehouse through the real per-job DAG, with its
    // telemetry, and the simulator's ground truth beside it.
    assert!(
        report.contains(&format!(
            "5. The per-job DAG (`jobsight dag run per-job`; the simulator stands in for sacct and the node exporters): {} jobs stored",
            keys.len()
        )),
        "{report}"
    );
    for step in ["ingest", "features", "classify", "predict"] {
        assert!(
            report.lines().any(|l| l.contains(&format!(". {step} "))
                && l.contains(" ok ")
                && l.contains(&format!("{} job(s)", keys.len()))),
            "per-job step {step}: {report}"
        );
    }
    assert!(
        report.contains("6. The nightly DAG (`jobsight dag run nightly`)"),
        "{report}"
    );
    // Every run and step is in the runs table: one per-job run and one nightly run per day.
    let runs = common::sql_json(
        JOBSIGHT,
        &dir.path().join("warehouse"),
        "SELECT dag, count(*) AS n FROM runs WHERE step = '' AND outcome = 'ok' GROUP BY dag ORDER BY dag",
    );
    assert_eq!(runs[1]["dag"], "per-job", "{runs:?}");
    assert_eq!(runs[1]["n"].as_u64(), Some(1), "{runs:?}");
    assert!(runs[0]["n"].as_u64().unwrap() >= 1, "{runs:?}");
    assert!(report.contains("| COMPLETED"), "{report}");
    assert!(report.contains("| memleak"), "{report}");
    assert!(report.contains("shown escaped"), "{report}");
    // Features: every ingested job has a summary, and the simulator's serial and hung jobs show
    // their SUPReMM duty-cycle category among the largest wastes.
    assert!(
        report.contains(&format!("   Features: {} jobs, ", keys.len())),
        "{report}"
    );
    assert!(
        report
            .lines()
            .any(|l| l.contains("| serial ") && l.contains("| PINNED ")),
        "{report}"
    );
    assert!(report.contains("| memleak"), "{report}");
    // Models: trained on another day, then judged on this day's labelled windows.
    assert!(
        report.contains("4. Models: trained on a second simulated day"),
        "{report}"
    );
    for model in ["diagnosis.model", "anomaly-score.model"] {
        assert!(dir.path().join("models").join(model).is_file(), "{model}");
    }
    assert!(
        report.contains("The diagnosis judged on this day's labelled windows"),
        "{report}"
    );
    let macro_f1: f64 = report
        .lines()
        .filter_map(|l| l.trim().strip_prefix("macro F1 "))
        .find_map(|rest| rest.split(';').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no macro F1 of the evaluation: {report}"));
    assert!(macro_f1 > 0.5, "{macro_f1}: {report}");
    // Classification: every job classified, the leaks found by the memory-leak rule with the
    // simulator's truth beside them, and what the report counts is what the findings table holds.
    assert!(
        report.contains("   Classification with the built-in rule book"),
        "{report}"
    );
    assert!(
        report.contains(&format!(" on {} jobs, ", keys.len())),
        "{report}"
    );
    let leak_line = report
        .lines()
        .find(|l| l.contains("| memory-leak "))
        .unwrap_or_else(|| panic!("no memory-leak row: {report}"));
    assert!(leak_line.contains("memleak"), "{leak_line}");
    let reported: usize = report
        .split("): ")
        .find_map(|rest| rest.split(" findings (").next()?.parse().ok())
        .unwrap_or_else(|| panic!("no findings count: {report}"));
    let stored = common::sql_json(
        JOBSIGHT,
        &dir.path().join("warehouse"),
        "SELECT count(*) AS n FROM findings",
    );
    assert_eq!(stored[0]["n"].as_u64(), Some(reported as u64), "{stored:?}");
    // No finding a user reads contradicts its own evidence (statistics in order, shares within
    // 0..1, no unfilled placeholder): checked on every finding of the simulated day.
    let findings = common::sql_json(
        JOBSIGHT,
        &dir.path().join("warehouse"),
        "SELECT job_id, rule, evidence, message FROM findings",
    );
    for f in &findings {
        let evidence: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(f["evidence"].as_str().unwrap()).unwrap();
        let numbers: Vec<(&str, f64)> = evidence
            .iter()
            .filter_map(|(k, v)| Some((k.as_str(), v.as_f64()?)))
            .collect();
        let wrong = jobsight_rules::contradictions(&numbers, f["message"].as_str().unwrap());
        assert!(wrong.is_empty(), "{f}: {wrong:?}");
        // And every finding explains itself in people's units.
        let message = f["message"].as_str().unwrap();
        assert!(!message.trim().is_empty(), "{f}");
        assert!(unreadable_numbers(message).is_empty(), "{f}");
        assert!(
            raw_names(message).is_empty(),
            "{f}: {:?}",
            raw_names(message)
        );
    }
    // Nor do the figures at the head of any job's email and page contradict each other: the
    // core-hours of both, the idle part, the shares, the energy and where they came from.
    let heads = common::sql_json(
        JOBSIGHT,
        &dir.path().join("warehouse"),
        "SELECT j.job_id, j.core_hours AS core_hours_jobs, s.core_hours, s.wasted_core_hours,
                s.cpu_eff, s.mem_eff, s.time_eff, s.gpu_util, s.cpu_eff_source, s.mem_source,
                s.gpu_source, s.shared, s.energy_kwh, s.energy_share
         FROM jobs j JOIN job_summary s ON s.job_id = j.job_id AND s.day = j.day",
    );
    assert!(heads.len() >= keys.len() / 2, "{} heads", heads.len());
    for h in &heads {
        let (num, text) = (|k: &str| h[k].as_f64(), |k: &str| h[k].as_str());
        let figures = jobsight_render::header::HeaderFigures {
            core_hours: num("core_hours"),
            core_hours_jobs: num("core_hours_jobs"),
            wasted_core_hours: num("wasted_core_hours"),
            cpu_eff: num("cpu_eff"),
            mem_eff: num("mem_eff"),
            time_eff: num("time_eff"),
            gpu_util: num("gpu_util"),
            cpu_eff_source: text("cpu_eff_source"),
            mem_source: text("mem_source"),
            gpu_source: text("gpu_source"),
            shared: h["shared"].as_bool(),
            energy_kwh: num("energy_kwh"),
            energy_share: num("energy_share"),
        };
        let wrong = jobsight_render::header::header_contradictions(&figures);
        assert!(wrong.is_empty(), "{h}: {wrong:?}");
    }
    // One verdict per job, counted as reported, and the models name some anomalies right.
    let verdicts = report
        .split("one verdict per job from rules and models together: ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .unwrap_or_else(|| panic!("no verdict counts: {report}"));
    let counted: u64 = verdicts
        .split(", ")
        .map(|part| part.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    let stored = common::sql_json(
        JOBSIGHT,
        &dir.path().join("warehouse"),
        "SELECT count(*) AS n, count(DISTINCT job_id) AS jobs, sum(CASE WHEN p.verdict = l.anomaly AND p.source LIKE 'model%' THEN 1 ELSE 0 END) AS named FROM predictions p JOIN labels l USING (job_id)",
    );
    assert_eq!(stored[0]["n"].as_u64(), Some(counted), "{stored:?}");
    assert_eq!(stored[0]["jobs"].as_u64(), Some(counted), "{stored:?}");
    assert!(stored[0]["named"].as_u64().unwrap() >= 3, "{stored:?}");
    // Step 7: the critical emails of the per-job DAG and the digests of the nightly one are in
    // the outbox, one .eml per message, and the ledger says so.
    assert!(report.contains("7. Email"), "{report}");
    let sent = dir.path().join("outbox").join("sent");
    let messages: Vec<_> = std::fs::read_dir(&sent).unwrap().flatten().collect();
    assert!(messages.len() >= 5, "{report}");
    for m in &messages {
        let eml = std::fs::read_to_string(m.path().join("message.eml")).unwrap();
        assert!(eml.contains("Content-Type: multipart/alternative"), "{eml}");
        // The text a person reads: no bare label where an explanation belongs, no machine units.
        let text = plain_text_part(&eml);
        assert!(!text.is_empty(), "{eml}");
        assert!(
            !text.contains("):\n") && !text.contains(": \n"),
            "an empty explanation: {text}"
        );
        assert!(
            unreadable_numbers(&text).is_empty(),
            "{:?} in {text}",
            unreadable_numbers(&text)
        );
        assert!(
            raw_names(&text).is_empty(),
            "{:?} in {text}",
            raw_names(&text)
        );
    }
    assert!(
        messages
            .iter()
            .any(|m| m.file_name().to_string_lossy().starts_with("digest.")),
        "{report}"
    );
    digests_say_what_to_change(&messages, &dir.path().join("warehouse"));
    let ledger = common::sql_json(
        JOBSIGHT,
        &dir.path().join("warehouse"),
        "SELECT count(DISTINCT key) AS n FROM notifications WHERE status = 'sent'",
    );
    assert_eq!(ledger[0]["n"].as_u64(), Some(messages.len() as u64));
    assert!(report.contains(&sent.display().to_string()), "{report}");
    // Step 8: a page for every job, and every digest's link lands on its page: the link's path
    // after the site's host is the page's path in the report folder.
    let pages = dir.path().join("reports");
    let ids: BTreeSet<u64> = keys.iter().map(|(id, _)| *id).collect();
    let job_pages = std::fs::read_dir(pages.join("demo").join("jobs"))
        .unwrap()
        .count();
    assert_eq!(job_pages, ids.len(), "{report}");
    assert!(report.contains("8. Report pages"), "{report}");
    assert!(
        report.contains(&format!("{} job pages", ids.len())),
        "{report}"
    );
    assert!(report.contains("0 job(s) without a page"), "{report}");
    assert!(pages.join("index.html").is_file());
    let mut links = 0;
    for m in &messages {
        let eml = std::fs::read_to_string(m.path().join("message.eml")).unwrap();
        for url in eml.split("https://jobsight.example.org/").skip(1) {
            let path: String = url
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "/._-~".contains(*c))
                .collect();
            if path.ends_with(".html") {
                assert!(
                    pages.join(&path).is_file(),
                    "{path} of {}",
                    m.path().display()
                );
                links += 1;
            }
        }
    }
    assert!(links > 0, "no report link in any email");
    // Nothing from a job name reaches the terminal raw.
    assert!(!report.contains('\u{1b}'), "{report}");

    // `jobsight job` on the jobs the models or the rules flagged reads in people's units, says
    // what to do and how the verdict is made; `jobsight jobs` lists the day; an unknown job is
    // refused with where to look.
    let warehouse = dir.path().join("warehouse");
    let flagged = common::sql_json(
        JOBSIGHT,
        &warehouse,
        "SELECT DISTINCT job_id FROM findings ORDER BY job_id LIMIT 5",
    );
    assert!(!flagged.is_empty());
    for row in &flagged {
        let id = row["job_id"].as_str().unwrap();
        let out = common::run_ok(
            Command::new(JOBSIGHT)
                .arg("--data")
                .arg(&warehouse)
                .args(["job", id])
                .env_remove("JOBSIGHT_CONFIG"),
        );
        assert!(out.contains(&format!("Job {id} (")), "{out}");
        assert!(out.contains("What to do: "), "{out}");
        assert!(out.contains("How the verdict is made"), "{out}");
        assert!(
            unreadable_numbers(&out).is_empty(),
            "{:?} in {out}",
            unreadable_numbers(&out)
        );
        assert!(raw_names(&out).is_empty(), "{:?} in {out}", raw_names(&out));
        let json = job_json(&warehouse, id);
        assert_eq!(json["job_id"], id);
        assert!(
            json["findings"].as_array().is_some_and(|f| !f.is_empty()),
            "{json}"
        );
    }
    // Their pages too, outside the charts (whose coordinates are for the browser): no raw
    // evidence, no machine units, and the paragraph on how the verdict is made.
    for row in &flagged {
        let id = row["job_id"].as_str().unwrap();
        let page =
            std::fs::read_to_string(pages.join("demo").join("jobs").join(format!("{id}.html")))
                .unwrap();
        let text = page_text(&page);
        assert!(
            unreadable_numbers(&text).is_empty(),
            "{:?} in page {id}",
            unreadable_numbers(&text)
        );
        assert!(
            raw_names(&text).is_empty(),
            "{:?} in page {id}",
            raw_names(&text)
        );
        assert!(!text.contains("{\""), "raw evidence on page {id}");
        assert!(
            text.contains("How the verdict is made") || text.contains("The verdict is the models"),
            "page {id}"
        );
    }
    // Every page of the report (jobs, users, days, the index) in people's units and words, but
    // for what Slurm handed over as it came (the demo's hostile job name `x","job_id":1,"y":"`).
    let names: Vec<String> =
        common::sql_json(JOBSIGHT, &warehouse, "SELECT DISTINCT name FROM jobs")
            .iter()
            .filter_map(|r| r["name"].as_str().map(str::to_string))
            .filter(|n| !n.is_empty())
            .collect();
    let mut unreadable = Vec::new();
    let mut folders = vec![pages.clone()];
    let mut checked = 0;
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "html") {
                let mut text = page_text(&std::fs::read_to_string(&path).unwrap());
                for name in &names {
                    let escaped = name
                        .replace('&', "&amp;")
                        .replace('<', "&lt;")
                        .replace('>', "&gt;")
                        .replace('"', "&quot;")
                        .replace('\'', "&#x27;");
                    text = text.replace(name.as_str(), " ").replace(&escaped, " ");
                }
                checked += 1;
                for bad in unreadable_numbers(&text)
                    .into_iter()
                    .chain(raw_names(&text))
                {
                    unreadable.push(format!("{}: {bad}", path.display()));
                }
            }
        }
    }
    assert!(checked > ids.len(), "{checked} pages");
    assert!(unreadable.is_empty(), "{unreadable:#?}");
    a_verdict_never_contradicts_its_findings(&warehouse);
    no_finding_is_emailed_twice(&warehouse);
    every_suggested_line_fits_the_job_s_own_figures(&warehouse);
    let list = common::run_ok(
        Command::new(JOBSIGHT)
            .arg("--data")
            .arg(&warehouse)
            .args(["jobs", "--limit", "10"])
            .env_remove("JOBSIGHT_CONFIG"),
    );
    assert_eq!(
        list.lines().filter(|l| l.starts_with("  1")).count(),
        10,
        "{list}"
    );
    assert!(list.contains("the newest 10 only"), "{list}");
    assert!(unreadable_numbers(&list).is_empty(), "{list}");
    assert!(
        raw_names(&list).is_empty(),
        "{:?} in {list}",
        raw_names(&list)
    );
    let missing = Command::new(JOBSIGHT)
        .arg("--data")
        .arg(&warehouse)
        .args(["job", "999999999"])
        .env_remove("JOBSIGHT_CONFIG")
        .output()
        .unwrap();
    assert!(!missing.status.success());
    let why = String::from_utf8_lossy(&missing.stderr);
    assert!(
        why.contains("job 999999999 is not in the warehouse"),
        "{why}"
    );
    let id = flagged[0]["job_id"].as_str().unwrap();
    jobs_of_other_users_are_refused_to_a_person(dir.path(), &warehouse, id);
}

/// `[access]` through the binary, run as `nobody` (a person who owns none of the demo's jobs):
/// another user's job and job list refused, an admin's command refused, an admin by name
/// served; and jobsight installed setgid applies the rule with no configuration and refuses
/// `--config` and `--data`. Switching to `nobody` needs root, which CI has; elsewhere the test
/// says it did not run.
fn jobs_of_other_users_are_refused_to_a_person(dir: &Path, warehouse: &Path, id: &str) {
    use std::os::unix::fs::PermissionsExt;
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    if !root {
        eprintln!("access through the binary not checked: switching to nobody needs root");
        return;
    }
    // nobody must reach the warehouse, the configuration files and the binary's copy.
    let open = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    open(dir, 0o755);
    common::run_ok(Command::new("chmod").args(["-R", "o+rX"]).arg(warehouse));
    let config = |name: &str, admins: &str| {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!(
                "data = {:?}\n[access]\nown_jobs_only = true\nadmins = [{admins}]\n",
                warehouse.display().to_string()
            ),
        )
        .unwrap();
        open(&path, 0o644);
        path
    };
    let (person, admin) = (
        config("person.toml", ""),
        config("admin.toml", "\"nobody\""),
    );
    let as_nobody = |binary: &Path, args: &[&str]| {
        let out = Command::new("runuser")
            .args(["-u", "nobody", "--"])
            .arg(binary)
            .args(args)
            .env_remove("JOBSIGHT_CONFIG")
            .env_remove("JOBSIGHT_DATA")
            .current_dir(dir)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let bin = Path::new(JOBSIGHT);
    let p = person.to_str().unwrap();
    // Another user's job reads exactly as a job nobody ran: the answer tells nothing about it.
    let (ok, _, err) = as_nobody(bin, &["--config", p, "job", id]);
    let (_, _, nobody_ran) = as_nobody(bin, &["--config", p, "job", "999999999"]);
    assert!(!ok && err.contains("is not in the warehouse"), "{err}");
    assert_eq!(err.replace(id, "ID"), nobody_ran.replace("999999999", "ID"));
    let (ok, out, err) = as_nobody(bin, &["--config", p, "jobs"]);
    assert!(ok, "{err}");
    assert!(!out.contains(id), "{out}");
    let owner = common::sql_json(
        JOBSIGHT,
        warehouse,
        &format!("SELECT \"user\" FROM jobs WHERE job_id = '{id}'"),
    );
    let owner = owner[0]["user"].as_str().unwrap();
    let (ok, _, err) = as_nobody(bin, &["--config", p, "jobs", "--user", owner]);
    assert!(!ok && err.contains("are not yours"), "{err}");
    let (ok, _, err) = as_nobody(bin, &["--config", p, "sql", "SELECT 1"]);
    assert!(!ok && err.contains("nobody is not an admin"), "{err}");
    let (ok, out, err) = as_nobody(bin, &["--config", admin.to_str().unwrap(), "job", id]);
    assert!(ok && out.contains(&format!("Job {id} (")), "{err}");

    // Installed setgid (to `daemon`): it reads /etc/jobsight/jobsight.toml alone (here a
    // directory of the test's bound over /etc/jobsight in a mount namespace of its own), only
    // when root's, and only a warehouse the person cannot change; the person cannot choose
    // another configuration or warehouse. Round two: with no file read, it used the
    // `./jobsight-data` of wherever the person stood.
    let setgid = dir.join("jobsight-setgid");
    std::fs::copy(JOBSIGHT, &setgid).unwrap();
    common::run_ok(Command::new("chgrp").arg("daemon").arg(&setgid));
    open(&setgid, 0o2755);
    let etc = dir.join("etc-jobsight");
    std::fs::create_dir(&etc).unwrap();
    open(&etc, 0o755);
    // The mount point: an empty directory of root's, what an installation has anyway.
    std::fs::create_dir_all("/etc/jobsight").unwrap();
    let attacker = dir.join("attacker");
    std::fs::create_dir(&attacker).unwrap();
    common::run_ok(
        Command::new("cp")
            .arg("-r")
            .arg(warehouse)
            .arg(attacker.join("jobsight-data")),
    );
    common::run_ok(Command::new("chown").args(["-R", "nobody"]).arg(&attacker));
    let installed = |args: &[&str]| {
        let out = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg("mount --bind \"$0\" /etc/jobsight && exec runuser -u nobody -- \"$@\"")
            .arg(&etc)
            .arg(&setgid)
            .args(args)
            .env_remove("JOBSIGHT_CONFIG")
            .env_remove("JOBSIGHT_DATA")
            .current_dir(&attacker)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let system = etc.join("jobsight.toml");
    let (ok, err) = installed(&["job", id]);
    assert!(
        !ok && err.contains("/etc/jobsight/jobsight.toml") && err.contains("missing"),
        "{err}"
    );
    std::fs::copy(&person, &system).unwrap();
    let (ok, err) = installed(&["job", id]);
    let (_, nobody_ran) = installed(&["job", "999999999"]);
    assert!(!ok && err.contains("is not in the warehouse"), "{err}");
    assert_eq!(err.replace(id, "ID"), nobody_ran.replace("999999999", "ID"));
    let (ok, err) = installed(&["--config", admin.to_str().unwrap(), "job", id]);
    assert!(!ok && err.contains("--config"), "{err}");
    let w = warehouse.to_str().unwrap();
    let (ok, err) = installed(&["--data", w, "job", id]);
    assert!(!ok && err.contains("--data"), "{err}");
    let (ok, err) = installed(&["sql", "SELECT 1"]);
    assert!(!ok && err.contains("nobody is not an admin"), "{err}");
    // A file anyone but root may write, a warehouse the person owns (theirs to forge), a
    // relative one: refused.
    open(&system, 0o666);
    let (ok, err) = installed(&["job", id]);
    assert!(!ok && err.contains("writable by root alone"), "{err}");
    for data in [attacker.join("jobsight-data"), "./jobsight-data".into()] {
        std::fs::write(
            &system,
            format!("data = {:?}\n", data.display().to_string()),
        )
        .unwrap();
        open(&system, 0o644);
        let (ok, err) = installed(&["job", id]);
        assert!(!ok && err.contains("refuses"), "{err}");
    }
    let (ok, err) = installed(&["job", id]);
    assert!(err.contains("absolute path") && !ok, "{err}");
}

/// A page's text as a person reads it: tags, styles and charts left out.
fn page_text(html: &str) -> String {
    let mut kept = html.to_string();
    for (open, close) in [("<style", "</style>"), ("<svg", "</svg>")] {
        let mut out = String::new();
        let mut rest = kept.as_str();
        while let Some(start) = rest.find(open) {
            out.push_str(&rest[..start]);
            rest = match rest[start..].find(close) {
                Some(end) => &rest[start + end + close.len()..],
                None => "",
            };
        }
        out.push_str(rest);
        kept = out;
    }
    let mut out = String::new();
    let mut in_tag = false;
    for c in kept.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// The text/plain part of a message as a person reads it: quoted-printable soft line breaks
/// joined and `=XX` escapes of ASCII decoded.
fn plain_text_part(eml: &str) -> String {
    let Some(start) = eml.find("Content-Type: text/plain") else {
        return String::new();
    };
    let part = &eml[start..];
    let body = part
        .split_once("\r\n\r\n")
        .or_else(|| part.split_once("\n\n"))
        .map_or("", |(_, b)| b);
    let body = body.split("\n--").next().unwrap_or("");
    let joined = body.replace("=\r\n", "").replace("=\n", "");
    let mut out = String::new();
    let mut chars = joined.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '=' {
            let hex: String = chars.by_ref().take(2).collect();
            match u8::from_str_radix(&hex, 16) {
                Ok(b) if b.is_ascii() => out.push(b as char),
                _ => out.push('?'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn demo_refuses_a_used_directory_and_a_missing_hook() {
    // A directory holding a spool, as a demo leaves it. Made by hand rather than by a second
    // demo: a demo trains the models, and beside the demo of the other test that cost
    // the suite minutes on 2 cores for no check of its own.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("spool")).unwrap();
    let out = Command::new(JOBSIGHT)
        .args(["demo", "--dir"])
        .arg(dir.path())
        .env("JOBSIGHT_EPILOG_BIN", epilog_bin())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already holds a spool"));

    let out = Command::new(JOBSIGHT)
        .args(["demo", "--epilog-bin", "/nonexistent/jobsight-epilog"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist: build it with"));
}

/// Over every job of the demo: no critical finding under a verdict of healthy, unknown or not
/// judged, and no confidence without models that voted (issue 67).
fn a_verdict_never_contradicts_its_findings(warehouse: &Path) {
    let critical = common::sql_json(
        JOBSIGHT,
        warehouse,
        "SELECT count(DISTINCT job_id) AS n FROM findings WHERE severity = 'critical'",
    );
    assert!(
        critical[0]["n"].as_i64().unwrap() > 0,
        "no critical finding to check"
    );
    let contradicted = common::sql_json(
        JOBSIGHT,
        warehouse,
        "SELECT f.job_id, f.rule, p.verdict, p.source FROM findings f \
         JOIN predictions p ON p.job_id = f.job_id AND p.day = f.day \
         AND (f.restart_count IS NULL OR p.restart_count IS NULL OR p.restart_count = f.restart_count) \
         WHERE f.severity = 'critical' AND p.verdict IN ('healthy', 'unknown', 'not-judged')",
    );
    assert!(contradicted.is_empty(), "{contradicted:?}");
    let unsupported = common::sql_json(
        JOBSIGHT,
        warehouse,
        "SELECT job_id, verdict, source, confidence, windows FROM predictions \
         WHERE confidence IS NOT NULL AND (source NOT IN ('model', 'model+rules') \
           OR windows = 0 OR verdict = 'unknown')",
    );
    assert!(unsupported.is_empty(), "{unsupported:?}");
}

/// Every `#SBATCH` line `jobsight job` suggests for the demo's jobs with a critical finding or
/// more than one node, checked against the job's own figures: memory per node at least the peak
/// per node (more than the limit for a job killed for memory), a time limit past the run time,
/// task advice only for a completed one-node job without a critical finding.
fn every_suggested_line_fits_the_job_s_own_figures(warehouse: &Path) {
    let jobs = common::sql_json(
        JOBSIGHT,
        warehouse,
        "SELECT DISTINCT j.job_id FROM jobs j LEFT JOIN findings f ON f.job_id = j.job_id \
         WHERE f.severity = 'critical' OR j.num_nodes > 1 OR j.state = 'OUT_OF_MEMORY' \
         ORDER BY j.job_id LIMIT 12",
    );
    let mut checked = 0;
    for row in &jobs {
        let id = row["job_id"].as_str().unwrap();
        let v = job_json(warehouse, id);
        let nodes = v["num_nodes"].as_f64().unwrap().max(1.0);
        let state = v["state"].as_str().unwrap();
        let critical = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["severity"] == "critical");
        for s in v["suggestions"].as_array().unwrap() {
            let line = s["line"].as_str().unwrap();
            checked += 1;
            if let Some(gb) = line
                .strip_prefix("#SBATCH --mem=")
                .and_then(|l| l.strip_suffix('G'))
            {
                let per_node_mb = gb.parse::<f64>().unwrap() * 1024.0;
                let peak = v["usage"]["mem_used_max_mb"].as_f64().unwrap_or(0.0) / nodes;
                assert!(
                    per_node_mb >= peak,
                    "job {id}: {line} under its peak of {peak} MB per node"
                );
                if state == "OUT_OF_MEMORY" {
                    let limit = v["req_mem_mb"].as_f64().unwrap() / nodes;
                    assert!(
                        per_node_mb > limit,
                        "job {id} killed for memory: {line} not over {limit} MB"
                    );
                }
            } else if let Some(time) = line.strip_prefix("#SBATCH --time=") {
                let hms: Vec<f64> = time.split(':').map(|p| p.parse().unwrap()).collect();
                let limit = hms[0] * 3600.0 + hms[1] * 60.0 + hms[2];
                assert!(
                    limit >= v["elapsed_s"].as_f64().unwrap(),
                    "job {id}: {line}"
                );
            } else if line.starts_with("#SBATCH --ntasks=") {
                assert!(
                    nodes == 1.0 && !critical && state == "COMPLETED",
                    "job {id} ({state}, {nodes} nodes, critical {critical}): {line}"
                );
            }
        }
        let text = common::run_ok(
            Command::new(JOBSIGHT)
                .arg("--data")
                .arg(warehouse)
                .args(["job", id])
                .env_remove("JOBSIGHT_CONFIG"),
        );
        assert!(
            !text.contains("summary.")
                && !text.contains("limit.")
                && !text.contains("healthy (model"),
            "raw keys or a healthy verdict in job {id}: {text}"
        );
        assert!(
            unreadable_numbers(&text).is_empty(),
            "{:?} in {text}",
            unreadable_numbers(&text)
        );
        assert!(
            raw_names(&text).is_empty(),
            "{:?} in {text}",
            raw_names(&text)
        );
    }
    assert!(checked > 0, "no suggestion to check among {jobs:?}");
}

/// A person who gets a digest knows what to change: digests carry `#SBATCH` lines, and each is
/// the one the job's own view (`jobsight job`, the page) suggests: one function makes both.
fn digests_say_what_to_change(messages: &[std::fs::DirEntry], warehouse: &Path) {
    let mut lines = 0;
    for m in messages {
        if !m.file_name().to_string_lossy().starts_with("digest.") {
            continue;
        }
        let eml = std::fs::read_to_string(m.path().join("message.eml")).unwrap();
        let text = plain_text_part(&eml);
        for job in text.split("== Job ").skip(1) {
            let id = job.split(' ').next().unwrap();
            let said: Vec<&str> = job
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("#SBATCH"))
                .collect();
            if said.is_empty() {
                continue;
            }
            let v = job_json(warehouse, id);
            let own: Vec<&str> = v["suggestions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["line"].as_str().unwrap())
                .collect();
            assert_eq!(said, own, "job {id}: the digest's lines are the job's own");
            lines += said.len();
        }
    }
    assert!(lines > 0, "no digest suggests a request");
}

/// `jobsight job ID --format json` over `warehouse`, as a person would ask for it.
fn job_json(warehouse: &Path, id: &str) -> serde_json::Value {
    let json = common::run_ok(
        Command::new(JOBSIGHT)
            .arg("--data")
            .arg(warehouse)
            .args(["job", id, "--format", "json"])
            .env_remove("JOBSIGHT_CONFIG"),
    );
    serde_json::from_str(&json).unwrap()
}

/// What a critical email told is not told again in a digest, nor the other way round
/// (docs/email.md): the ledger holds each (user, job, finding) under one kind of message.
fn no_finding_is_emailed_twice(warehouse: &Path) {
    let critical = common::sql_json(
        JOBSIGHT,
        warehouse,
        "SELECT count(*) AS n FROM notifications WHERE kind = 'critical'",
    );
    assert!(
        critical[0]["n"].as_i64().unwrap() > 0,
        "no critical email to check"
    );
    let twice = common::sql_json(
        JOBSIGHT,
        warehouse,
        "SELECT \"user\", job_id, finding, count(DISTINCT \"key\") AS messages \
         FROM notifications WHERE kind IN ('critical', 'digest') AND job_id IS NOT NULL \
         GROUP BY 1, 2, 3 HAVING count(DISTINCT \"key\") > 1",
    );
    assert!(twice.is_empty(), "told twice: {twice:?}");
}
