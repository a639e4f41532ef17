//! Ingest of real public data sets, checked through `jobsight sql` as a user would: the KTH SP2
//! job log (SWF), the HPAS ExaMiniMD runs sampled by real LDMS (with injected anomalies and their
//! labels) and the Flow-Bench 1000 Genome workflow runs (Pegasus traces).
//!
//! **Always, on the committed excerpts** in `tests/fixtures/public/` (its README.md gives their
//! sources and licences; `make-excerpts.sh` there cuts them from the full data sets), with every
//! exact check:
//! - the first 3,000 KTH jobs: jobs, users and completed jobs as the log holds them, first
//!   submission and last end, partition pruning by day, a re-import replaces, monthly summaries add
//!   up to the jobs table;
//! - 11 of the 56 LDMS runs (the baseline, cachecopy, cpuoccupy and 5 memleak runs): telemetry rows
//!   per sampler and the shared series' rows as an independent reading of the CSV files gives them,
//!   the truncated last lines skipped and only those, an exact round trip of one run's gauges,
//!   memory growing inside every memleak window, a re-import adding nothing, the features' single
//!   pass against the reference SQL, coverage of every run, and the memory-leak rule flagging every
//!   leak run inside its window and no other run;
//! - 30 of the 351 workflow runs (6 of each folder): runs per folder and tasks per label, every
//!   task placed in the DAG with one root per run, a run copied under a second folder reported and
//!   not imported twice, the scores, a run's page, the error for an unknown run, and the error of
//!   `workflow eval` on a warehouse without workflow runs.
//!
//! **With the full data sets** in `../shared/data/` when they are there (a clone has none: then
//! each of these tests prints `SKIPPED: ../shared/data/<file> is not present: ...` and passes),
//! the totals and the thresholds that only mean something on the whole data: the KTH year (28,489
//! jobs of 214 users, 20,541 completed, 12 months), all 56 LDMS runs through features and rules
//! (the memory-leak rule finds 19 of 19 leak runs), and the 1000 Genome evaluation (`workflow
//! eval` with its snapshot: task ROC-AUC ≥ 0.85, run accuracy ≥ 0.95; the share of tasks `workflow
//! score` flags; the workflow models trained into a file and applied).
use crate::agreement;
use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

/// A committed excerpt of a public data set (tests/fixtures/public/README.md).
fn excerpt(file: &str) -> PathBuf {
    common::repo().join("tests/fixtures/public").join(file)
}

/// A full data set beside the project, or `None` after one line on stderr saying which file is
/// missing and what is therefore not checked.
fn shared_data(file: &str, unchecked: &str) -> Option<PathBuf> {
    let path = common::repo().join("../shared/data").join(file);
    if path.exists() {
        return Some(path);
    }
    eprintln!("SKIPPED: ../shared/data/{file} is not present: {unchecked}");
    None
}

fn jobsight(data: &Path) -> Command {
    let mut command = Command::new(JOBSIGHT);
    command.arg("--data").arg(data);
    command
}

/// Runs a query and returns its rows as JSON objects.
fn sql(data: &Path, query: &str) -> Vec<serde_json::Map<String, serde_json::Value>> {
    let out = common::run_ok(jobsight(data).args(["sql", "--format", "json", query]));
    out.lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .unwrap()
                .as_object()
                .unwrap()
                .clone()
        })
        .collect()
}

/// The SQL blocks (```sql fences) of a document of the repository, in order.
fn documented_queries(doc: &str) -> Vec<String> {
    let text = std::fs::read_to_string(common::repo().join(doc)).unwrap();
    let mut queries = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in text.lines() {
        let fence = line.trim_start();
        match (&mut current, fence) {
            (None, "```sql") => current = Some(Vec::new()),
            (Some(lines), "```") => {
                queries.push(lines.join("\n"));
                current = None;
            }
            (Some(lines), _) => lines.push(line),
            (None, _) => {}
        }
    }
    assert!(!queries.is_empty(), "{doc} shows no SQL");
    queries
}

/// A temporary folder holding the archive's contents.
fn extracted(archive: &Path) -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    common::run_ok(
        Command::new("tar")
            .arg("xJf")
            .arg(archive)
            .arg("-C")
            .arg(work.path()),
    );
    work
}

fn number(row: &serde_json::Map<String, serde_json::Value>, key: &str) -> f64 {
    row[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {row:?}"))
}

/// The facts of the `jobs` table the KTH tests check.
const SWF_FACTS: &str = "SELECT count(*) AS jobs, count(DISTINCT \"user\") AS users, \
     CAST(min(submit) AS VARCHAR) AS first_submit, CAST(max(\"end\") AS VARCHAR) AS last_end, \
     sum(CASE WHEN state = 'COMPLETED' THEN 1 ELSE 0 END) AS completed FROM jobs";

/// Imports a KTH log that holds `jobs` jobs into `data` and returns [`SWF_FACTS`]'s row.
fn import_kth(data: &Path, file: &Path, jobs: usize) -> serde_json::Map<String, serde_json::Value> {
    let out = common::run_ok(
        jobsight(data)
            .args(["import", "swf", "--cluster", "kth"])
            .arg(file),
    );
    assert!(
        out.contains(&format!("imported {jobs} jobs of cluster kth")),
        "{out}"
    );
    sql(data, SWF_FACTS).swap_remove(0)
}

/// `jobsight summary --period month` over the KTH year, one JSON object per row.
fn swf_months(data: &Path) -> Vec<serde_json::Value> {
    let months = common::run_ok(jobsight(data).args([
        "summary",
        "--period",
        "month",
        "--from",
        "1996-09-01",
        "--to",
        "1997-08-31",
        "--format",
        "json",
    ]));
    months
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The sum of `key` over summary rows.
fn total(rows: &[serde_json::Value], key: &str) -> f64 {
    rows.iter().map(|r| r[key].as_f64().unwrap()).sum::<f64>()
}

/// The KTH log's first 3,000 jobs. The expected figures come from the excerpt with awk
/// (`awk '!/^;/'` over the 18 fields; times are UnixStartTime 843480031 + submit + wait + run).
#[test]
fn swf_kth_log() {
    let file = excerpt("KTH-SP2-1996-2.1-cln.first3000.swf");
    let data = tempfile::tempdir().unwrap();
    // 3,000 job lines after the 19 `;` header lines, each with 18 fields and known times.
    let row = &import_kth(data.path(), &file, 3000);
    // The job lines' count.
    assert_eq!(number(row, "jobs"), 3000.0);
    // Distinct values of field 12 (user) over the 3,000 lines.
    assert_eq!(number(row, "users"), 72.0, "the excerpt's 72 users");
    // The header: UnixStartTime 843480031 = Mon Sep 23 14:00:31 CEST 1996 is the first submission.
    assert_eq!(row["first_submit"], "1996-09-23T12:00:31Z");
    // Largest 843480031 + submit + wait + run: job 2931's end.
    assert_eq!(row["last_end"], "1996-11-14T09:20:02Z", "{row:?}");
    // Lines with status (field 11) 1.
    assert_eq!(
        number(row, "completed"),
        1916.0,
        "status 1 lines in the excerpt"
    );
    // Partition pruning works on the day column, and a re-import replaces rather than adds.
    common::run_ok(
        jobsight(data.path())
            .args(["import", "swf", "--cluster", "kth"])
            .arg(&file),
    );
    assert_eq!(
        number(&sql(data.path(), "SELECT count(*) AS n FROM jobs")[0], "n"),
        3000.0
    );
    let one_day = sql(
        data.path(),
        "SELECT count(*) AS n FROM jobs WHERE day = '1996-10-01'",
    );
    // Jobs whose end (UTC) falls on 1996-10-01.
    assert_eq!(number(&one_day[0], "n"), 136.0);

    // Summaries on job flow alone: a month per row, every job counted once, the core-hours those
    // of the jobs table, and no efficiency (no telemetry: judged_share 0).
    let rows = swf_months(data.path());
    // The jobs end in 1996-09 (93), 1996-10 (2,387) and 1996-11 (520).
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(total(&rows, "jobs"), 3000.0);
    assert_eq!(total(&rows, "completed"), 1916.0);
    let core_hours = number(
        &sql(data.path(), "SELECT sum(core_hours) AS h FROM jobs")[0],
        "h",
    );
    assert!((total(&rows, "core_hours") - core_hours).abs() < 1e-6 * core_hours);
    assert!(rows.iter().all(|r| r["judged_share"].as_f64() == Some(0.0)
        && r["cpu_eff"].is_null()
        && r["wait_p50_s"].as_f64().is_some()));
}

/// The whole KTH year: the archive's totals.
#[test]
fn swf_kth_log_full_year() {
    let Some(file) = shared_data(
        "swf/KTH-SP2-1996-2.1-cln.swf",
        "the KTH year's totals (28,489 jobs of 214 users, 20,541 completed, 12 months)",
    ) else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let row = &import_kth(data.path(), &file, 28489);
    assert_eq!(number(row, "jobs"), 28489.0);
    assert_eq!(number(row, "users"), 214.0, "the archive's 214 users");
    assert_eq!(row["first_submit"], "1996-09-23T12:00:31Z");
    assert!(
        row["last_end"].as_str().unwrap().starts_with("1997-08-"),
        "{row:?}"
    );
    assert_eq!(
        number(row, "completed"),
        20541.0,
        "status 1 lines in the log"
    );
    let rows = swf_months(data.path());
    assert_eq!(rows.len(), 12, "{rows:?}");
    assert_eq!(total(&rows, "jobs"), 28489.0);
    assert_eq!(total(&rows, "completed"), 20541.0);
}

/// Independent reading of one LDMS CSV file: header names, the complete rows as raw fields, and
/// how many lines are incomplete. A line is complete when it ends with a newline and has a number
/// in every metric field. The real files end with an unterminated line (the store was stopped
/// mid-write); any other incomplete line must also be the last one.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>, usize) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut pieces: Vec<&str> = text.split('\n').collect();
    let unterminated = pieces.pop().filter(|last| !last.is_empty());
    let header: Vec<String> = pieces[0].split(',').map(String::from).collect();
    let complete = |fields: &Vec<String>| {
        fields.len() == header.len() && fields[6..].iter().all(|f| f.parse::<f64>().is_ok())
    };
    let lines: Vec<Vec<String>> = pieces[1..]
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    let bad: Vec<usize> = (0..lines.len()).filter(|&i| !complete(&lines[i])).collect();
    assert!(
        bad.is_empty() || (bad == [lines.len() - 1] && unterminated.is_none()),
        "{}: malformed line inside the file",
        path.display()
    );
    let rows: Vec<Vec<String>> = lines.into_iter().filter(|r| complete(r)).collect();
    (
        header,
        rows,
        bad.len() + usize::from(unterminated.is_some()),
    )
}

/// 11 of the HPAS ExaMiniMD runs. The figures below come from the excerpt (`tar tJf` and the
/// labels CSV, counted with grep and awk) or, for the telemetry, from [`read_csv`] over its files.
#[test]
fn ldms_examinimd_runs() {
    let archive = excerpt("hpas-ldms-examinimd.excerpt.tar.xz");
    let labels = excerpt("hpas-ldms-examinimd.excerpt.labels.csv");
    let work = extracted(&archive);
    let data = work.path().join("warehouse");
    let out = import_ldms_runs(&data, &labels, work.path());
    // 11 `data/memory_metrics/meminfo` files in the archive, one per run.
    assert!(out.contains("imported 11 runs"), "{out}");

    // Expected rows, computed from the CSV files independently of the importer.
    let mut expected: BTreeMap<String, u64> = BTreeMap::new(); // sampler -> rows
    let counters = |sampler: &str, column: &str| match sampler {
        "procstat" => {
            !["cores_up", "cpu_enabled", "procs_running", "procs_blocked"].contains(&column)
                && !column.starts_with("per_core_cpu_enabled")
        }
        "vmstat" => !column.starts_with("nr_") && column != "workingset_nodes",
        _ => false,
    };
    let dataset = work.path().join("dataset");
    let mut run_files = Vec::new();
    for entry in common::files_under(&dataset) {
        if entry
            .parent()
            .and_then(|p| p.parent())
            .is_some_and(|p| p.ends_with("data"))
        {
            run_files.push(entry);
        }
    }
    // meminfo, vmstat and procstat of each of the 11 runs.
    assert_eq!(run_files.len(), 11 * 3);
    let mut truncated = 0;
    // The series every source shares, derived beside the samplers' own (rows per name): CPU
    // shares and disk rates need two samples, memory one.
    let mut shared: BTreeMap<String, u64> = BTreeMap::new();
    for file in &run_files {
        let sampler = file.file_name().unwrap().to_str().unwrap().to_string();
        let (header, rows, incomplete) = read_csv(file);
        truncated += incomplete;
        let n = rows.len() as u64;
        let per_file: u64 = header[6..]
            .iter()
            .map(|c| if counters(&sampler, c) { n - 1 } else { n })
            .sum();
        // Gauges give a value from every sample, rates and shares from every pair.
        let (gauges, pairs): (Vec<String>, Vec<String>) = match sampler.as_str() {
            "procstat" => (
                vec!["procs_running_per_cpu".into()],
                ["cpu_user", "cpu_system", "cpu_iowait", "cpu_idle"]
                    .map(String::from)
                    .into_iter()
                    .chain((0..20).map(|c| format!("cpu_core{c}_util")))
                    .chain(["context_switches_per_cpu_per_s".to_string()])
                    .collect(),
            ),
            "meminfo" => (
                vec!["mem_used_bytes".into(), "mem_available_bytes".into()],
                vec![],
            ),
            _ => (
                vec![],
                vec![
                    "disk_read_bytes_per_s".into(),
                    "disk_write_bytes_per_s".into(),
                ],
            ),
        };
        for name in gauges {
            *shared.entry(name).or_default() += n;
        }
        for name in pairs {
            *shared.entry(name).or_default() += n - 1;
        }
        *expected.entry(sampler).or_default() += per_file;
    }
    // Each of the 33 files ends with an unterminated line (`tail -c1` is not a newline) and has
    // no other incomplete line.
    assert_eq!(truncated, 33);
    assert!(
        out.contains(&format!("skipped {truncated} row(s)")),
        "the truncated last lines, and only those: {out}"
    );
    let stored = sql(
        &data,
        "SELECT split_part(CAST(metric AS VARCHAR), '.', 1) AS sampler, count(*) AS n FROM telemetry
         WHERE metric LIKE '%.%' GROUP BY 1 ORDER BY 1",
    );
    let stored: BTreeMap<String, u64> = stored
        .iter()
        .map(|r| {
            (
                r["sampler"].as_str().unwrap().to_string(),
                number(r, "n") as u64,
            )
        })
        .collect();
    assert_eq!(stored, expected, "telemetry rows per sampler");
    let derived = sql(
        &data,
        "SELECT metric, count(*) AS n, min(value) AS lo, max(value) AS hi FROM telemetry
         WHERE metric NOT LIKE '%.%' GROUP BY 1 ORDER BY 1",
    );
    let counted: BTreeMap<String, u64> = derived
        .iter()
        .map(|r| {
            (
                r["metric"].as_str().unwrap().to_string(),
                number(r, "n") as u64,
            )
        })
        .collect();
    assert_eq!(counted, shared, "shared series rows");
    for r in &derived {
        let (metric, lo, hi) = (
            r["metric"].as_str().unwrap(),
            number(r, "lo"),
            number(r, "hi"),
        );
        if metric.starts_with("cpu_") {
            assert!((0.0..=1.0).contains(&lo) && hi <= 1.0, "{r:?}");
        } else {
            assert!(lo >= 0.0, "{r:?}");
        }
    }

    // Exact round trip of gauges: every meminfo value of one run, and a counter's rates.
    let run = dataset.join("ExaMiniMD_ML");
    let run_dir = common::files_under(&run)
        .into_iter()
        .find(|p| p.ends_with("memory_metrics/meminfo"))
        .unwrap();
    let job_id = {
        let rel = run_dir
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .strip_prefix(&dataset)
            .unwrap();
        rel.to_string_lossy().replace('/', "__")
    };
    let (header, rows, _) = read_csv(&run_dir);
    let stored = sql(
        &data,
        &format!(
            "SELECT CAST(metric AS VARCHAR) AS metric, CAST(ts AS BIGINT) AS ts, value FROM telemetry \
             WHERE job_id = '{job_id}' AND metric LIKE 'meminfo.%'"
        ),
    );
    assert_eq!(
        stored.len(),
        rows.len() * (header.len() - 6),
        "meminfo rows of {job_id}"
    );
    let lookup: BTreeMap<(String, i64), f64> = stored
        .iter()
        .map(|r| {
            (
                (
                    r["metric"].as_str().unwrap().to_string(),
                    r["ts"].as_i64().unwrap(),
                ),
                number(r, "value"),
            )
        })
        .collect();
    for row in &rows {
        let ts = row[0].split('.').next().unwrap().parse::<i64>().unwrap() * 1_000_000
            + row[1].parse::<i64>().unwrap();
        for (name, raw) in header[6..].iter().zip(&row[6..]) {
            let want: f64 = raw.parse().unwrap();
            assert_eq!(
                lookup[&(format!("meminfo.{name}"), ts)],
                want,
                "{job_id} {name} at {ts}"
            );
        }
    }

    // Memory leaks: AnonPages grows inside every labelled memleak window (about 11.6 GB to 31 GB).
    let leaks = sql(
        &data,
        "SELECT l.job_id, regr_slope(t.value, CAST(t.ts AS BIGINT) / 1e6) AS kb_per_s, \
                max(t.value) - min(t.value) AS growth_kb, count(*) AS samples \
         FROM labels l JOIN telemetry t ON t.job_id = l.job_id \
         WHERE l.anomaly = 'memleak' AND t.metric = 'meminfo.AnonPages' AND t.ts BETWEEN l.start AND l.\"end\" \
         GROUP BY l.job_id, l.start",
    );
    let leak_labels = std::fs::read_to_string(&labels)
        .unwrap()
        .lines()
        .filter(|l| l.contains(",memleak,"))
        .count();
    // `grep -c ,memleak,` over the labels excerpt: 7 windows in 5 runs.
    assert_eq!(leak_labels, 7);
    assert_eq!(leaks.len(), leak_labels);
    for leak in &leaks {
        assert!(number(leak, "samples") > 30.0, "{leak:?}");
        assert!(
            number(leak, "kb_per_s") > 10_000.0,
            "memory should grow by > 10 MB/s: {leak:?}"
        );
        assert!(
            number(leak, "growth_kb") > 5_000_000.0,
            "memory should grow by > 5 GB: {leak:?}"
        );
    }

    // Jobs and labels: one job per run, every label row kept; a re-import adds nothing.
    let before = ldms_counts(&data);
    // 11 runs; the labels excerpt's 19 lines less its header (`wc -l`).
    assert_eq!((before.0, before.1), (11.0, 18.0));
    assert_eq!(
        before.1,
        (std::fs::read_to_string(&labels).unwrap().lines().count() - 1) as f64
    );
    import_ldms_runs(&data, &labels, &dataset.join("ExaMiniMD_ML"));
    assert_eq!(
        ldms_counts(&data),
        before,
        "re-importing runs replaces their rows"
    );

    // Features of the real runs: the single pass agrees with the reference SQL on every node
    // and metric of one run per anomaly type and day, and every run has coverage figures.
    let out = common::run_ok(jobsight(&data).arg("features"));
    assert!(out.contains("features of 11 job(s)"), "{out}");
    let picked = sql(
        &data,
        "SELECT min(l.job_id) AS job_id, j.day FROM labels l JOIN jobs j ON j.job_id = l.job_id
         GROUP BY l.anomaly, j.day ORDER BY j.day",
    );
    let mut by_day: BTreeMap<String, Vec<String>> = Default::default();
    for row in &picked {
        by_day
            .entry(row["day"].as_str().unwrap().to_string())
            .or_default()
            .push(row["job_id"].as_str().unwrap().to_string());
    }
    let mut compared = 0;
    for (day, jobs) in &by_day {
        let day = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").unwrap();
        compared += agreement::agree_with_reference(&data, day, 60, jobs);
    }
    eprintln!(
        "single pass and reference agree on {compared} rows of {} runs",
        picked.len()
    );
    // Anomalies none, cachecopy, cpuoccupy and memleak (labels column 5), every run's samples on
    // 2025-05-07 (UTC): 4 runs picked.
    assert!(
        picked.len() == 4 && compared > picked.len() * 100,
        "{} runs, {compared} rows",
        picked.len()
    );
    assert_eq!(covered_runs(&data), 11.0);

    // The rules on the real runs: the memory-leak rule flags every run with an injected leak,
    // inside one of its labelled windows, and no other run (the baseline included). 5: the
    // distinct job_id of the 7 memleak rows of the labels excerpt.
    assert_eq!(leak_rule(&data, 11), [5.0, 5.0, 0.0, 0.0]);
}

/// Runs with coverage figures in `job_summary`.
fn covered_runs(data: &Path) -> f64 {
    let covered = &sql(
        data,
        "SELECT count(*) AS n FROM job_summary WHERE coverage_min IS NOT NULL",
    )[0];
    number(covered, "n")
}

/// `jobsight classify` on `runs` runs, then [`LEAK_RULE`]'s four counts.
fn leak_rule(data: &Path, runs: usize) -> [f64; 4] {
    let out = common::run_ok(jobsight(data).arg("classify"));
    assert!(out.contains(&format!("classified {runs} job(s)")), "{out}");
    let leak = &sql(data, LEAK_RULE)[0];
    eprintln!("memory-leak rule on {runs} real runs: {leak:?}");
    ["leak_runs", "inside", "elsewhere", "on_baseline"].map(|key| number(leak, key))
}

/// `jobsight import ldms-runs --labels LABELS RUNS` into `data`; its report.
fn import_ldms_runs(data: &Path, labels: &Path, runs: &Path) -> String {
    common::run_ok(
        jobsight(data)
            .args(["import", "ldms-runs", "--labels"])
            .arg(labels)
            .arg(runs),
    )
}

/// Jobs, labels and telemetry rows of a warehouse.
fn ldms_counts(data: &Path) -> (f64, f64, f64) {
    let r = &sql(
        data,
        "SELECT (SELECT count(*) FROM jobs) AS jobs, (SELECT count(*) FROM labels) AS labels, (SELECT count(*) FROM telemetry) AS rows",
    )[0];
    (number(r, "jobs"), number(r, "labels"), number(r, "rows"))
}

/// The memory-leak rule against the labels: runs with a leak, those flagged inside a leak
/// window, findings on other runs and on the baseline.
const LEAK_RULE: &str =
    "WITH leak AS (SELECT DISTINCT job_id FROM labels WHERE anomaly = 'memleak')
     SELECT (SELECT count(*) FROM leak) AS leak_runs,
            (SELECT count(DISTINCT f.job_id) FROM findings f JOIN labels l
               ON f.job_id = l.job_id AND l.anomaly = 'memleak'
             WHERE f.rule = 'memory-leak'
               AND f.window_start >= l.start AND f.window_end <= l.\"end\") AS inside,
            (SELECT count(*) FROM findings WHERE rule = 'memory-leak'
               AND job_id NOT IN (SELECT job_id FROM leak)) AS elsewhere,
            (SELECT count(*) FROM findings f JOIN labels l ON f.job_id = l.job_id
             WHERE l.anomaly = 'none' AND f.rule = 'memory-leak') AS on_baseline";

/// All 56 runs through import, features and rules: the totals.
#[test]
fn ldms_examinimd_all_runs() {
    let unchecked = "all 56 LDMS runs through import, features and rules (the memory-leak rule's 19 of 19 leak runs)";
    let Some(archive) = shared_data("hpas-ldms-examinimd.tar.xz", unchecked) else {
        return;
    };
    let Some(labels) = shared_data("hpas-ldms-examinimd.labels.csv", unchecked) else {
        return;
    };
    let work = extracted(&archive);
    let data = work.path().join("warehouse");
    let out = import_ldms_runs(&data, &labels, work.path());
    assert!(out.contains("imported 56 runs"), "{out}");
    let counts = ldms_counts(&data);
    assert_eq!(
        (counts.0, counts.1),
        (
            56.0,
            (std::fs::read_to_string(&labels).unwrap().lines().count() - 1) as f64
        )
    );
    let out = common::run_ok(jobsight(&data).arg("features"));
    assert!(out.contains("features of 56 job(s)"), "{out}");
    assert_eq!(covered_runs(&data), 56.0);
    assert_eq!(leak_rule(&data, 56), [19.0, 19.0, 0.0, 0.0]);
}

/// Runs and tasks per folder and label of the traces below `parsed`, read from the files
/// independently of the importer: runs per folder, tasks per `anomaly_type` (the second column;
/// these traces hold no quoted fields).
fn flowbench_expected(parsed: &Path) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    let mut runs: BTreeMap<String, u64> = BTreeMap::new();
    let mut labels: BTreeMap<String, u64> = BTreeMap::new();
    for file in common::files_under(parsed)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
    {
        let folder = file
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        *runs.entry(folder.to_string()).or_default() += 1;
        let text = std::fs::read_to_string(&file).unwrap();
        for line in text.lines().skip(1).filter(|l| !l.is_empty()) {
            let label = line.split(',').nth(1).unwrap();
            let label = if label == "None" { "none" } else { label };
            *labels.entry(label.to_string()).or_default() += 1;
        }
    }
    (runs, labels)
}

/// `jobsight import pegasus --dag DAG PARSED` into `data`; stdout and stderr.
fn import_pegasus(data: &Path, dag: &Path, parsed: &Path) -> (String, String) {
    common::run_ok_with_stderr(
        jobsight(data)
            .args(["import", "pegasus", "--dag"])
            .arg(dag)
            .arg(parsed),
    )
}

/// 30 of the 1000 Genome runs, the first 6 by name of each folder. The figures come from the
/// excerpt's CSV files (`tar tJf` for the runs, awk over the `anomaly_type` column for the tasks).
#[test]
fn flowbench_1000genome_traces() {
    let work = extracted(&excerpt("flowbench-1000genome.excerpt.tar.xz"));
    let parsed = work.path().join("parsed");
    let (runs, labels) = flowbench_expected(&parsed);
    // 6 CSV files in each of normal, cpu_2, cpu_3, hdd_5 and hdd_10.
    assert_eq!(runs.values().sum::<u64>(), 30);
    // 137 task lines in each of the 30 files.
    assert_eq!(labels.values().sum::<u64>(), 4110);

    let data = work.path().join("warehouse");
    let dag = work.path().join("adjacency_list_dags/1000genome.json");
    let (out, _) = import_pegasus(&data, &dag, &parsed);
    // Tasks whose anomaly_type is not None: cpu_2 174, cpu_3 188, hdd_5 202, hdd_10 615.
    assert!(
        out.contains("imported 30 workflow runs: 4110 tasks (1179 labelled anomalous)"),
        "{out}"
    );
    let count = |query: &str| -> BTreeMap<String, u64> {
        sql(&data, query)
            .iter()
            .map(|r| (r["k"].as_str().unwrap().to_string(), number(r, "n") as u64))
            .collect()
    };
    assert_eq!(
        count("SELECT label AS k, count(*) AS n FROM workflows GROUP BY 1"),
        runs
    );
    assert_eq!(
        count("SELECT label AS k, count(*) AS n FROM workflow_tasks GROUP BY 1"),
        labels
    );
    // Every task is in the DAG; the roots are the create_dir tasks; a run of the normal folder
    // has no anomalous task and a makespan.
    let dag_rows = &sql(
        &data,
        "SELECT count(*) AS n, count(depth) AS placed, max(depth) AS deepest,
                sum(CASE WHEN depth = 0 THEN 1 ELSE 0 END) AS roots FROM workflow_tasks",
    )[0];
    assert_eq!(number(dag_rows, "placed"), number(dag_rows, "n"));
    // One create_dir task (the DAG's only root) in each of the 30 runs.
    assert_eq!(number(dag_rows, "roots"), 30.0, "{dag_rows:?}");
    assert!(number(dag_rows, "deepest") >= 3.0, "{dag_rows:?}");
    let normal = &sql(
        &data,
        "SELECT max(anomalous_tasks) AS a, min(makespan_s) AS m, count(DISTINCT workflow) AS w
         FROM workflows WHERE label = 'normal'",
    )[0];
    assert_eq!(number(normal, "a"), 0.0);
    assert!(number(normal, "m") > 60.0, "{normal:?}");
    assert_eq!(number(normal, "w"), 1.0, "one workflow: 1000-genome");

    // Again, with one run copied under a second folder: replaced, not added; the copy reported.
    let copy = parsed.join("zz-copies");
    std::fs::create_dir_all(&copy).unwrap();
    let first = common::files_under(&parsed.join("normal"))
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "csv"))
        .unwrap();
    std::fs::copy(&first, copy.join(first.file_name().unwrap())).unwrap();
    let (stdout, stderr) = import_pegasus(&data, &dag, &parsed);
    assert!(stdout.contains("imported 30 workflow runs"), "{stdout}");
    assert!(stderr.contains("was already imported from"), "{stderr}");
    let tasks = &sql(&data, "SELECT count(*) AS n FROM workflow_tasks")[0];
    assert_eq!(number(tasks, "n"), 4110.0);
    // That run alone, from a folder of its label: replaced, the other runs of its day kept (a
    // day's runs share one part per table).
    let again = work.path().join("again");
    std::fs::create_dir_all(again.join("normal")).unwrap();
    std::fs::copy(
        &first,
        again.join("normal").join(first.file_name().unwrap()),
    )
    .unwrap();
    let (stdout, _) = import_pegasus(&data, &dag, &again);
    assert!(stdout.contains("imported 1 workflow runs"), "{stdout}");
    let counts = &sql(
        &data,
        "SELECT (SELECT count(*) FROM workflow_tasks) AS tasks,
                (SELECT count(*) FROM workflows) AS runs",
    )[0];
    assert_eq!(
        (number(counts, "tasks"), number(counts, "runs")),
        (4110.0, 30.0)
    );

    // Scored into workflow_scores; a run's page with its Gantt chart, flagged tasks and critical
    // path (the DAG gives every run one).
    let out = common::run_ok(jobsight(&data).args(["workflow", "score"]));
    assert!(
        out.contains("scored 4110 tasks of 30 workflow runs"),
        "{out}"
    );
    // Every query docs/workflows.md shows runs on this warehouse and answers (KIND is one of
    // the kinds it names): the ROC-AUC by ranks is a share, the label sets are counted per label.
    for (i, query) in documented_queries("docs/workflows.md").iter().enumerate() {
        let query = query.replace("'KIND'", "'individuals'");
        let rows = sql(&data, &query);
        assert!(
            !rows.is_empty(),
            "query {} of docs/workflows.md: no rows",
            i + 1
        );
        for row in &rows {
            if let Some(auc) = row.get("roc_auc") {
                let auc = auc.as_f64().unwrap();
                assert!((0.0..=1.0).contains(&auc), "{row:?}");
            }
        }
    }
    let pages = work.path().join("pages");
    // parsed/cpu_3/1000-genome-run0134.csv, its tasks on worker1-container-* and
    // worker2-container-* hosts (column kickstart_hostname).
    let page = common::run_ok(
        jobsight(&data)
            .args(["report", "workflow", "1000-genome-run0134", "--dir"])
            .arg(&pages),
    );
    let html = std::fs::read_to_string(page.trim()).unwrap();
    for wanted in [
        "<svg",
        "Gantt chart",
        "Flagged tasks",
        "Critical path",
        "worker1-container",
    ] {
        assert!(
            html.contains(wanted),
            "{wanted} missing from {}",
            page.trim()
        );
    }
    let missing = jobsight(&data)
        .args(["report", "workflow", "no-such-run", "--dir"])
        .arg(&pages)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        !missing.status.success() && err.contains("workflow run no-such-run is not in"),
        "{err}"
    );

    let empty = work.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = jobsight(&empty)
        .args(["workflow", "eval"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("found 0 labelled workflow run(s) (no labels)"),
        "{err}"
    );
}

/// All 351 runs: the evaluation against the published figures, the share of tasks the score
/// flags, and the workflow models trained into a file.
#[test]
fn flowbench_1000genome_evaluation() {
    let Some(archive) = shared_data(
        "flowbench-1000genome.tar.xz",
        "the 1000 Genome evaluation on all 351 runs (workflow eval: task ROC-AUC >= 0.85, run accuracy >= 0.95; the share of tasks workflow score flags; the trained workflow models)",
    ) else {
        return;
    };
    let work = extracted(&archive);
    let parsed = work.path().join("parsed");
    let data = work.path().join("warehouse");
    let dag = work.path().join("adjacency_list_dags/1000genome.json");
    let (out, _) = import_pegasus(&data, &dag, &parsed);
    assert!(
        out.contains("imported 351 workflow runs: 48087 tasks (15689 labelled anomalous)"),
        "{out}"
    );

    // The task score and the run labels, by run-level folds, beside the published figures
    // (Flow-Bench's best unsupervised ROC-AUC 0.610; PEARC's CNN accuracy 0.90-0.93); the
    // issue's goals are 0.85 and 0.95. Seeded: the same figures on every run.
    let eval = common::run_ok(jobsight(&data).args(["workflow", "eval"]));
    insta::assert_snapshot!("workflow-eval-1000genome", eval);
    // The figure after the first `label` (one evaluation is 10 s: the goals are read from the
    // table rather than from a second run's JSON).
    let figure = |label: &str| -> f64 {
        let after = eval
            .split(label)
            .nth(1)
            .unwrap_or_else(|| panic!("{label}: {eval}"));
        after[..after.find([',', ' ', '\n']).unwrap()]
            .parse()
            .unwrap()
    };
    assert!(figure("  ROC-AUC ") >= 0.85, "unsupervised: {eval}");
    assert!(figure("normal) accuracy ") >= 0.95, "run families: {eval}");
    // The supervised task classifier against Flow-Bench's supervised GNNs (about 0.80).
    assert!(figure(", accuracy ") >= 0.80, "supervised: {eval}");
    // The share of tasks the score flags, healthy and anomalous.
    let out = common::run_ok(jobsight(&data).args(["workflow", "score"]));
    assert!(
        out.contains("scored 48087 tasks of 351 workflow runs"),
        "{out}"
    );
    let flags = &sql(
        &data,
        "SELECT avg(CASE WHEN s.flagged THEN 1.0 ELSE 0.0 END) AS share, t.label = 'none' AS healthy
         FROM workflow_scores s JOIN workflow_tasks t USING (workflow_id, task_id)
         GROUP BY 2 ORDER BY 2",
    );
    let (anomalous, healthy) = (number(&flags[0], "share"), number(&flags[1], "share"));
    assert!(healthy < 0.05 && anomalous > 4.0 * healthy, "{flags:?}");
    // The same evaluation through `model eval --workflows`, and the workflow models trained into a
    // file, shown by `model info` and applied by `workflow score --model`.
    let eval2 = common::run_ok(jobsight(&data).args(["model", "eval", "--workflows", "--cv", "2"]));
    assert!(
        eval2.contains("2 folds by run") && eval2.contains("task classifier"),
        "{eval2}"
    );
    let model = work.path().join("workflow.model");
    common::run_ok(
        jobsight(&data)
            .args(["model", "train", "--workflows", "--out"])
            .arg(&model),
    );
    let info = common::run_ok(Command::new(JOBSIGHT).args(["model", "info"]).arg(&model));
    assert!(info.contains("351 runs, 48087 tasks"), "{info}");
    common::run_ok(
        jobsight(&data)
            .args(["workflow", "score", "--model"])
            .arg(&model),
    );
    let verdicts = &sql(
        &data,
        "SELECT avg(CASE WHEN s.run_verdict = w.label THEN 1.0 ELSE 0.0 END) AS right,
                avg(CASE WHEN t.label <> 'none' THEN s.supervised_share END) AS anomalous,
                avg(CASE WHEN t.label = 'none' THEN s.supervised_share END) AS healthy
         FROM workflow_scores s JOIN workflow_tasks t USING (workflow_id, task_id)
         JOIN workflows w USING (workflow_id)",
    );
    // On its own training runs, so only a check that the file carries the models.
    let v = &verdicts[0];
    assert!(number(v, "right") > 0.95, "{verdicts:?}");
    assert!(
        number(v, "anomalous") > number(v, "healthy") + 0.4,
        "{verdicts:?}"
    );
}
