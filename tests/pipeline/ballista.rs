//! A real Ballista cluster on this machine (cargo feature `ballista`): `jobsight ballista
//! scheduler` and two `jobsight ballista executor` processes, and `jobsight sql` sent to them by
//! `[engine] ballista`. Every query's answer must equal the local run's on the same warehouse,
//! byte for byte: the features' DataFusion plan (`js_describe`), a `js_` function, the `day`
//! hive partitions and telemetry's dictionary columns (whose type must survive the shuffle), the
//! `jobs` view, joins with an empty side (which Ballista's adaptive planner never finished), the
//! ORDER BY that DataFusion 55 drops without jobsight's rule, and `jobsight summary`'s report;
//! a features backfill (`jobsight features`: the DataFusion plan on the executors) writes what
//! the single pass wrote (every command within two minutes). Both executors
//! must have done part of the work (their shuffle folders), and a scheduler that is down must be
//! named in the error.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::common::run_ok;

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");
const DAY: &str = "2026-11-20";

/// The cluster's processes, stopped when the test ends however it ends.
struct Cluster(Vec<Child>);

impl Drop for Cluster {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(port: u16, cluster: &mut Cluster) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        for child in &mut cluster.0 {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("a Ballista process exited ({status}) before port {port} opened");
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "nothing listens on port {port} after 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn spawn(args: &[&str]) -> Child {
    Command::new(JOBSIGHT)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// How long one command may take: Ballista's adaptive planner made some joins wait forever.
const LIMIT: Duration = Duration::from_secs(120);

/// `command`'s stdout; a failure, or no end within [`LIMIT`], fails the test.
fn finished(command: &mut Command) -> String {
    use std::io::Read;
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).unwrap();
        text
    });
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            assert!(status.success(), "{command:?} failed: {stderr}");
            return reader.join().unwrap();
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("{command:?} did not finish in {} s", LIMIT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `jobsight sql --format csv QUERY` with `config`'s engine (and its warehouse).
fn sql(config: &Path, query: &str) -> String {
    finished(
        Command::new(JOBSIGHT)
            .arg("--config")
            .arg(config)
            .args(["sql", "--format", "csv", query]),
    )
}

#[test]
fn queries_on_a_ballista_cluster_equal_the_local_run() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("warehouse");
    // Two days of a small cluster: two `day` partitions of every table.
    run_ok(Command::new(JOBSIGHT).arg("--data").arg(&data).args([
        "simulate", "--nodes", "4", "--jobs", "12", "--seed", "3", "--day", DAY,
    ]));
    // Features too, for the summaries' efficiency figures (the single pass: the cluster's
    // features plan is compared with it below).
    run_ok(Command::new(JOBSIGHT).arg("--data").arg(&data).args([
        "features",
        "--cores-per-node",
        "32",
    ]));
    let scheduler = free_port();
    let mut cluster = Cluster(vec![spawn(&[
        "ballista",
        "scheduler",
        "--bind",
        &format!("127.0.0.1:{scheduler}"),
    ])]);
    wait_for_port(scheduler, &mut cluster);
    let mut work_dirs = Vec::new();
    for name in ["executor-1", "executor-2"] {
        let (flight, grpc) = (free_port(), free_port());
        let work = tmp.path().join(name);
        cluster.0.push(spawn(&[
            "ballista",
            "executor",
            "--scheduler",
            &format!("127.0.0.1:{scheduler}"),
            "--flight-port",
            &flight.to_string(),
            "--grpc-port",
            &grpc.to_string(),
            "--work-dir",
            work.to_str().unwrap(),
            "--tasks",
            "2",
        ]));
        wait_for_port(grpc, &mut cluster);
        wait_for_port(flight, &mut cluster);
        work_dirs.push(work);
    }
    // An executor registers with the scheduler as it starts; give the second one a moment.
    std::thread::sleep(Duration::from_secs(2));

    let local = tmp.path().join("local.toml");
    std::fs::write(&local, format!("data = {:?}\n", data.display().to_string())).unwrap();
    let remote = tmp.path().join("ballista.toml");
    std::fs::write(
        &remote,
        format!(
            "data = {:?}\n\n[engine]\nballista = \"df://127.0.0.1:{scheduler}\"\n",
            data.display().to_string()
        ),
    )
    .unwrap();

    let day: chrono::NaiveDate = DAY.parse().unwrap();
    let queries = [
        // The features step as one DataFusion plan.
        jobsight_features::reference::describe_sql(day, 60, &[]),
        // A features function, over both days' partitions.
        "SELECT day, metric, count(*) AS n, js_p95(value) AS p95, js_slope_per_h(ts, value) AS slope \
         FROM telemetry GROUP BY day, metric ORDER BY day, metric"
            .into(),
        // Hive partitions and dictionary columns, their types as the executors return them.
        "SELECT day, arrow_typeof(job_id) AS job_type, arrow_typeof(node) AS node_type, \
         job_id, node, count(*) AS n, min(value) AS lo, max(value) AS hi \
         FROM telemetry GROUP BY day, job_id, node ORDER BY day, job_id, node"
            .into(),
        "SELECT DISTINCT day FROM jobs ORDER BY day".into(),
        // The `jobs` view (numbers added to the stored table).
        "SELECT \"user\", count(*) AS jobs, round(sum(core_hours), 6) AS core_hours, \
         max(elapsed_s) AS longest FROM jobs GROUP BY \"user\" ORDER BY \"user\""
            .into(),
        // A join with a side that is empty: a table without files yet, a day with no rows
        // (Ballista 55's adaptive planner never finished these; jobsight turns it off).
        "SELECT j.day, count(f.n) AS flagged FROM jobs j LEFT JOIN \
         (SELECT job_id, day, count(*) AS n FROM findings GROUP BY 1, 2) f \
         ON f.job_id = j.job_id AND f.day = j.day GROUP BY j.day ORDER BY j.day"
            .into(),
        "SELECT j.day, count(t.n) AS n FROM jobs j LEFT JOIN \
         (SELECT CAST(job_id AS VARCHAR) AS job_id, day, count(*) AS n FROM telemetry \
          WHERE day = '2030-01-01' GROUP BY 1, 2) t \
         ON t.job_id = j.job_id AND t.day = j.day GROUP BY j.day ORDER BY j.day"
            .into(),
        // ORDER BY after a join with a grouped subquery (DataFusion 55 drops `t.m` without
        // jobsight's rule, docs/sql.md).
        "WITH j AS (SELECT job_id FROM jobs GROUP BY job_id), \
         t AS (SELECT CAST(job_id AS VARCHAR) AS job_id, CAST(metric AS VARCHAR) AS m, value FROM telemetry) \
         SELECT j.job_id, t.m, count(*) AS n FROM t JOIN j ON t.job_id = j.job_id \
         GROUP BY j.job_id, t.m ORDER BY j.job_id, t.m"
            .into(),
        // The catalogue's statements, answered in this process whatever the engine.
        "SHOW COLUMNS FROM labels".into(),
        "DESCRIBE findings".into(),
        "SELECT table_schema, table_name FROM information_schema.tables \
         WHERE table_schema <> 'information_schema' ORDER BY 1, 2"
            .into(),
    ];
    for query in &queries {
        let here = sql(&local, query);
        let there = sql(&remote, query);
        assert!(here.lines().count() > 1, "no rows locally: {query}");
        assert_eq!(there, here, "Ballista and local differ on {query}");
    }
    let types = sql(&remote, &queries[2]);
    assert!(
        types.contains("\"Dictionary(Int32, Utf8)\",\"Dictionary(Int32, Utf8)\""),
        "the dictionary columns came back as another type: {}",
        types.lines().take(2).collect::<Vec<_>>().join("\n")
    );
    assert_eq!(
        sql(&remote, &queries[3]),
        "day\n2026-11-20\n2026-11-21\n",
        "the day partitions"
    );
    // `jobsight summary` (a year of it is what outgrows one machine) gives the same report.
    let summary = |config: &Path| {
        run_ok(Command::new(JOBSIGHT).arg("--config").arg(config).args([
            "summary",
            "--from",
            "2026-11-20",
            "--to",
            "2026-11-21",
            "--by",
            "user",
            "--wide",
        ]))
    };
    let here = summary(&local);
    assert!(
        here.contains("| alice ") && here.contains("core_hours"),
        "{here}"
    );
    assert_eq!(summary(&remote), here, "the summaries differ");
    // A features backfill on the cluster (`jobsight features` with `[engine] ballista`: the
    // DataFusion plan on the executors) writes what the single pass wrote above.
    let single_pass = super::feature_tables(&data);
    let said = finished(Command::new(JOBSIGHT).arg("--config").arg(&remote).args([
        "features",
        "--cores-per-node",
        "32",
    ]));
    assert!(
        said.contains("on 2 day(s)")
            && said.contains("by the DataFusion plan, on the Ballista cluster"),
        "{said}"
    );
    super::assert_same_features(&single_pass, &super::feature_tables(&data), "on Ballista");
    // Both executors ran tasks: each wrote shuffle files under its work folder.
    for work in &work_dirs {
        let entries = std::fs::read_dir(work).map(|d| d.count()).unwrap_or(0);
        assert!(entries > 0, "{} did no work", work.display());
    }

    // A scheduler that is down is named, not a transport error.
    drop(cluster);
    let out = Command::new(JOBSIGHT)
        .arg("--config")
        .arg(&remote)
        .args(["sql", "SELECT 1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(&format!(
            "cannot reach the Ballista scheduler at df://127.0.0.1:{scheduler}"
        )),
        "{stderr}"
    );
}
