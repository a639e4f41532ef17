//! `jobsight serve --pg` with the real psql client and a PostgreSQL driver (tokio-postgres,
//! the extended protocol Grafana's driver speaks) over the summaries' test warehouse: every
//! documented query gives its documented result, an open connection sees new days, and every
//! write is refused. Here rather than in the warehouse crate because the warehouse it serves is
//! written by the summary stage, which sits above the warehouse.

use std::path::Path;

use jobsight::serve::{DEFAULT_USER, Settings, serve_pg};
use jobsight::{catalog, query, summary};

/// A server on a free port of localhost, in its own thread and runtime, stopped when dropped.
struct Server {
    port: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

const PASSWORD: &str = "correct horse battery staple";

impl Server {
    fn start(data: &Path, secrets: &Path) -> Server {
        use std::os::unix::fs::PermissionsExt;
        let password_file = secrets.join("pg-password");
        std::fs::write(&password_file, format!("{PASSWORD}\n")).unwrap();
        std::fs::set_permissions(&password_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let settings = Settings {
            pg_password_file: Some(password_file),
            ..Settings::default()
        };
        let (bound, listening) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let data = data.to_path_buf();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime
                .block_on(serve_pg(
                    &data,
                    "127.0.0.1:0",
                    &settings,
                    |addr| bound.send(addr).unwrap(),
                    async {
                        let _ = stopped.await;
                        Ok(())
                    },
                ))
                .unwrap();
        });
        let addr = listening
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("the server listens");
        Server {
            port: addr.port(),
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `psql` logging in as `user` with `password`, quiet, unaligned, tuples only, nulls
    /// shown as NULL, stopping at the first error.
    fn psql(&self, user: &str, password: &str) -> std::process::Command {
        let mut command = std::process::Command::new("psql");
        command
            .args(["-X", "-q", "-A", "-t", "-F", "|", "-P", "null=NULL"])
            .args(["-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-d", "jobsight"])
            .args(["-p", &self.port.to_string(), "-U", user])
            .env("PGPASSWORD", password)
            .env("PGCONNECT_TIMEOUT", "20")
            .env_remove("PGSERVICE")
            .env_remove("PGSSLMODE");
        command
    }

    /// Runs `sql` as the configured user; (succeeded, stdout, stderr).
    fn run(&self, sql: &str) -> (bool, String, String) {
        run(self.psql(DEFAULT_USER, PASSWORD).arg("-c").arg(sql))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(command: &mut std::process::Command) -> (bool, String, String) {
    let out = command.output().expect("psql runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// psql from Debian's postgresql-client, installed by ops/sql/install-psql.sh when missing:
/// once per test process (two apt-gets at once would fight over dpkg's lock).
fn install_psql() {
    static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let installed = INSTALLED.get_or_init(|| {
        let script = format!(
            "{}/ops/sql/install-psql.sh",
            jobsight_base::test_support::workspace_dir().display()
        );
        let status = std::process::Command::new("bash")
            .arg(script)
            .status()
            .unwrap();
        status.success()
    });
    assert!(installed, "cannot install psql (ops/sql/install-psql.sh)");
}

/// The fixture warehouse of the summaries' tests, with its summaries written: the one the
/// documented queries' results come from.
fn documented_warehouse(data: &Path) {
    summary::fixture::fixture(data);
    let day = |d| chrono::NaiveDate::from_ymd_opt(2026, 11, d).unwrap();
    summary::write_days(data, &summary::Settings::default(), day(20), day(21)).unwrap();
}

/// The real psql client: lists the tables, describes `jobs`, gets every documented query's
/// documented result, and is refused a wrong password, another user and every write.
#[test]
fn psql_reads_every_table_and_changes_nothing() {
    install_psql();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("warehouse");
    documented_warehouse(&data);
    let server = Server::start(&data, dir.path());

    let (ok, tables, e) = server.run("\\dt");
    assert!(ok, "{e}");
    for table in catalog::Table::ALL {
        let schema = if table == catalog::Table::Jobs {
            query::STORED_SCHEMA
        } else {
            "public"
        };
        assert!(
            tables.contains(&format!("{schema}|{}|table", table.name())),
            "{} missing from \\dt:\n{tables}",
            table.name()
        );
    }
    let (ok, jobs, e) = server.run("\\d jobs");
    assert!(ok, "{e}");
    for column in [
        "core_hours|double precision",
        "elapsed_s|bigint",
        "day|text",
    ] {
        assert!(
            jobs.contains(column),
            "{column} missing from \\d jobs:\n{jobs}"
        );
    }

    let examples = summary::fixture::examples();
    assert!(examples.len() >= 7);
    for example in &examples {
        let (ok, out, e) = server.run(&example.sql);
        assert!(ok, "{}: {e}", example.sql);
        let rows: Vec<String> = out
            .lines()
            .map(|line| {
                line.split('|')
                    .zip(example.types.chars())
                    .map(|(value, kind)| match (kind, value.parse::<f64>()) {
                        ('R', Ok(v)) => format!("{v:.3}"),
                        _ => value.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert_eq!(rows, example.rows, "{}", example.sql);
    }

    let copied = dir.path().join("jobs.csv");
    for write in [
        "DROP TABLE jobs".to_string(),
        "DROP VIEW jobs".into(),
        "CREATE TABLE x AS SELECT * FROM jobs".into(),
        "INSERT INTO findings SELECT * FROM findings".into(),
        format!("COPY jobs TO '{}'", copied.display()),
        "CREATE EXTERNAL TABLE x STORED AS PARQUET LOCATION '/etc/'".into(),
        "SET datafusion.execution.batch_size = 1".into(),
    ] {
        let (ok, _, e) = server.run(&write);
        assert!(
            !ok && e.contains("jobsight serve is read-only"),
            "{write}: {e}"
        );
    }
    let (ok, count, e) = server.run("SELECT count(*) FROM jobs");
    assert!(ok && count.trim() == "5", "{count} {e}");
    assert!(!copied.exists());

    let (ok, _, e) = run(server
        .psql(DEFAULT_USER, "wrong horse battery staple")
        .args(["-c", "SELECT 1"]));
    assert!(!ok && e.contains("authentication failed"), "{e}");
    let (ok, _, e) = run(server.psql("postgres", PASSWORD).args(["-c", "SELECT 1"]));
    assert!(!ok && e.contains("authentication failed"), "{e}");
}

/// A connection opened on an empty warehouse sees the day the scheduler writes afterwards,
/// and a table that had no folder when the server started.
#[test]
fn an_open_connection_sees_new_days_and_new_tables() {
    use std::io::{BufRead, Write};
    install_psql();
    let dir = tempfile::tempdir().unwrap();
    let written = dir.path().join("written");
    documented_warehouse(&written);
    let data = dir.path().join("warehouse");
    std::fs::create_dir(&data).unwrap();
    let server = Server::start(&data, dir.path());
    let mut psql = server
        .psql(DEFAULT_USER, PASSWORD)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = psql.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(psql.stdout.take().unwrap());
    let mut ask = |sql: &str| {
        writeln!(stdin, "{sql};").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        line.trim().to_string()
    };
    let count = "SELECT (SELECT count(*) FROM jobs) || ' ' || (SELECT count(*) FROM summaries)";
    assert_eq!(ask(count), "0 0");
    // One day of jobs (three jobs), then the next, then the summaries table.
    let copy = |table: &str, day: Option<&str>| {
        let from = written.join(table);
        let to = data.join(table);
        for entry in std::fs::read_dir(&from).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            if day.is_some_and(|d| name != format!("day={d}")) {
                continue;
            }
            std::fs::create_dir_all(to.join(&name)).unwrap();
            for part in std::fs::read_dir(entry.path()).unwrap() {
                let part = part.unwrap();
                std::fs::copy(part.path(), to.join(&name).join(part.file_name())).unwrap();
            }
        }
    };
    copy("jobs", Some("2026-11-20"));
    assert_eq!(ask(count), "3 0");
    copy("jobs", Some("2026-11-21"));
    copy("summaries", None);
    let summaries = ask("SELECT count(*) FROM summaries");
    assert_ne!(summaries, "0");
    assert_eq!(ask(count), format!("5 {summaries}"));
    drop(stdin);
    assert!(psql.wait().unwrap().success());
}

/// The extended protocol (what Grafana's driver, JDBC and psycopg 3 speak): a prepared
/// statement with a parameter runs; a write is refused with SQLSTATE 25006 at its parse.
#[test]
fn the_extended_protocol_binds_parameters_and_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("warehouse");
    documented_warehouse(&data);
    let server = Server::start(&data, dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let config = format!(
            "host=127.0.0.1 port={} user={DEFAULT_USER} password='{PASSWORD}' dbname=jobsight",
            server.port
        );
        let (client, connection) = tokio_postgres::connect(&config, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let rows = client
            .query(
                "SELECT job_id FROM jobs WHERE \"user\" = $1 ORDER BY job_id",
                &[&"alice"],
            )
            .await
            .unwrap();
        let ids: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        let literal = query::run(
            &data,
            "SELECT job_id FROM jobs WHERE \"user\" = 'alice' ORDER BY job_id",
        )
        .await
        .unwrap();
        let c = query::Columns::of(&literal[0]).unwrap();
        let expected: Vec<String> = (0..literal[0].num_rows())
            .map(|i| c.text("job_id", i).unwrap())
            .collect();
        assert!(expected.len() >= 2);
        assert_eq!(ids, expected);
        for write in [
            "DROP TABLE jobs",
            "INSERT INTO findings SELECT * FROM findings",
        ] {
            let e = client.execute(write, &[]).await.unwrap_err();
            assert_eq!(
                e.code(),
                Some(&tokio_postgres::error::SqlState::READ_ONLY_SQL_TRANSACTION),
                "{write}: {e}"
            );
        }
        let bad = tokio_postgres::connect(
            &config.replace(PASSWORD, "wrong horse battery staple"),
            tokio_postgres::NoTls,
        )
        .await;
        assert!(bad.is_err());
    });
}
