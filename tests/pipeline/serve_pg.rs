//! `jobsight serve --pg` with the real psql client and a PostgreSQL driver (tokio-postgres,
//! the extended protocol Grafana's driver speaks) over the summaries' test warehouse: every
//! documented query gives its documented result, an open connection sees new days, and every
//! write is refused. Here rather than in the warehouse crate because the warehouse it serves is
//! written by the summary stage, which sits above the warehouse.

use std::path::Path;

use jobsight_warehouse::catalog;
use jobsight_warehouse::query;
use jobsight_warehouse::serve::{DEFAULT_USER, Settings, serve_pg};

/// A server on a free port of localhost, in its own thread and runtime (or the real binary's
/// process), stopped when dropped.
struct Server {
    port: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    process: Option<std::process::Child>,
}

const PASSWORD: &str = "correct horse battery staple";

/// The address the tests' clients connect from unless a test plays several addresses.
const LOCAL: [u8; 4] = [127, 0, 0, 1];

/// The password file of the tests' servers, in `secrets`.
fn password_file(secrets: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let password_file = secrets.join("pg-password");
    std::fs::write(&password_file, format!("{PASSWORD}\n")).unwrap();
    std::fs::set_permissions(&password_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    password_file
}

impl Server {
    /// `jobsight serve --pg 127.0.0.1:0` itself, as an admin starts it: its runtime and its
    /// threads' stacks, not the test's.
    fn binary(data: &Path, secrets: &Path) -> Server {
        use std::io::BufRead;
        let mut process = std::process::Command::new(env!("CARGO_BIN_EXE_jobsight"))
            .arg("--data")
            .arg(data)
            .args(["serve", "--pg", "127.0.0.1:0", "--password-file"])
            .arg(password_file(secrets))
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(secrets.join("serve.log")).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(process.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "serving W over PostgreSQL on 127.0.0.1:PORT (user ..."
        let port = line
            .split(" on 127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Server {
            port,
            stop: None,
            thread: None,
            process: Some(process),
        }
    }

    fn start(data: &Path, secrets: &Path) -> Server {
        let password_file = password_file(secrets);
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
            process: None,
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
        if let Some(mut process) = self.process.take() {
            let _ = process.kill();
            let _ = process.wait();
        }
    }
}

/// The highest resident memory the process `pid` has had, in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
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
    jobsight_summary::fixture::fixture(data);
    let day = |d| chrono::NaiveDate::from_ymd_opt(2026, 11, d).unwrap();
    jobsight_summary::write_days(
        data,
        &jobsight_summary::Settings::default(),
        day(20),
        day(21),
    )
    .unwrap();
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

    let examples = jobsight_summary::fixture::examples();
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

/// The review's deep statements (a `SELECT 1+1+...` and a `WHERE job_id = ... OR ...` of
/// thousands of terms, which aborted the server and every client with it) against the real
/// binary, through the real psql, and through `jobsight sql`: served up to the nesting bound,
/// refused beyond it with PostgreSQL's `statement_too_complex`, and the server still answers. A
/// call that would make a gigabyte is refused before it allocates.
#[test]
fn statements_of_any_depth_never_take_the_server_down() {
    use jobsight_warehouse::query::depth::{MAX_NESTING, MAX_SELECT_ITEMS, MAX_SELECTS};
    install_psql();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("warehouse");
    documented_warehouse(&data);
    let server = Server::binary(&data, dir.path());
    let sum = |terms: usize| format!("SELECT {}", vec!["1"; terms].join("+"));
    let any_of = |terms: usize| {
        let ids: Vec<String> = (0..terms).map(|i| format!("job_id = '{i}'")).collect();
        format!("SELECT count(*) FROM jobs WHERE {}", ids.join(" OR "))
    };
    let psql_file = |sql: &str| {
        let file = dir.path().join("statement.sql");
        std::fs::write(&file, sql).unwrap();
        run(server.psql(DEFAULT_USER, PASSWORD).arg("-f").arg(&file))
    };
    // A chain at the bound is served, an OR chain too; the review's 3,000 terms and more are
    // refused before planning (which takes 11 s for 3,000 terms in release and cannot be
    // stopped by a timeout), as are SELECT lists and UNIONs past their bounds.
    let served = MAX_NESTING - 10;
    let (ok, out, err) = psql_file(&sum(served));
    assert!(ok, "{err}");
    assert_eq!(out.trim(), served.to_string());
    let (ok, out, err) = psql_file(&any_of(500));
    assert!(ok && out.trim().parse::<u64>().is_ok(), "{out} {err}");
    let columns: Vec<String> = (0..=MAX_SELECT_ITEMS)
        .map(|i| format!("{i} AS c{i}"))
        .collect();
    let arms: Vec<String> = (0..=MAX_SELECTS).map(|i| format!("SELECT {i}")).collect();
    for complex in [
        sum(3000),
        any_of(3000),
        sum(30_000),
        format!("SELECT {}", columns.join(",")),
        arms.join(" UNION ALL "),
    ] {
        let (ok, _, err) = psql_file(&complex);
        assert!(!ok, "refused");
        assert!(err.contains("too complex to plan"), "{err}");
    }
    let (ok, out, err) = server.run("SELECT 41 + 1");
    assert!(ok && out.trim() == "42", "the server lives: {out} {err}");
    // Round two's 776-byte statement, whose parse never ended (it held the server and SIGTERM),
    // and a nesting of calls exponential in its depth: refused at once, the server answers.
    let casts = format!("SELECT {}1{}", "CAST(".repeat(48), " AS BIGINT)".repeat(48));
    let calls = format!("SELECT {}1{}", "abs(".repeat(40), ")".repeat(40));
    for endless in [&casts, &calls] {
        let started = std::time::Instant::now();
        let (ok, _, err) = psql_file(endless);
        assert!(!ok && err.contains("too complex"), "{err}");
        assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    }
    // Behind a first statement DataFusion's parser refuses and datafusion-postgres' accepts,
    // sent as one query (psql -c): each statement is budgeted by itself.
    for first in ["ABORT", "COPY jobs TO STDOUT"] {
        let started = std::time::Instant::now();
        let (ok, _, err) = server.run(&format!("{first}; {casts}"));
        assert!(!ok && err.contains("too complex"), "{first}: {err}");
        assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    }
    let (ok, out, err) = server.run("SELECT 41 + 1");
    assert!(ok && out.trim() == "42", "the server lives: {out} {err}");
    // The review's 40-byte statement that took the server to 3.96 GB beside its pool.
    let (ok, _, err) = server.run("SELECT length(repeat('x', 1000000000))");
    assert!(!ok, "refused");
    assert!(err.contains("repeat: the call would make about"), "{err}");
    let pid = server.process.as_ref().unwrap().id();
    let peak = peak_kib(pid);
    assert!(peak < 1 << 20, "the server's peak: {peak} KiB");
    let (ok, out, err) = server.run("SELECT 41 + 1");
    assert!(ok && out.trim() == "42", "the server lives: {out} {err}");
    // Round two's 65-byte statement that aborted the server, its kin over a column, and
    // sixteen values of 250 MB in one row, each under the bound of one call: refused, the
    // server's peak under its heap bound (2 GiB) and what it holds beside.
    let sixteen: Vec<String> = (0..16)
        .map(|i| format!("repeat(x, 250000000 + {i})"))
        .collect();
    for (statement, said) in [
        (
            "SELECT length(replace(repeat('x', 200000000), 'x', 'xxxxxxxxxx'))".to_string(),
            "a constant of about",
        ),
        (
            "SELECT length(replace(repeat(x, 200000000), 'x', 'xxxxxxxxxx')) \
             FROM (VALUES ('x')) t(x)"
                .to_string(),
            "replace: the call would make about",
        ),
        (
            format!("SELECT {} FROM (VALUES ('x')) t(x)", sixteen.join(", ")),
            "while the server holds",
        ),
    ] {
        let (ok, _, err) = server.run(&statement);
        assert!(!ok && err.contains(said), "{statement}: {err}");
    }
    let peak = peak_kib(pid);
    assert!(peak < 5 << 19, "the server's peak: {peak} KiB");
    let (ok, out, err) = server.run("SELECT 41 + 1");
    assert!(ok && out.trim() == "42", "the server lives: {out} {err}");

    // `jobsight sql` the same: the bound served, beyond it an error, never an abort.
    let sql = |query: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_jobsight"))
            .arg("--data")
            .arg(&data)
            .args(["sql", "--format", "csv", query])
            .output()
            .unwrap()
    };
    let out = sql(&sum(served));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(&served.to_string()));
    let out = sql(&sum(30_000));
    assert_eq!(
        out.status.code(),
        Some(1),
        "an error, not a signal: {:?}",
        out.status
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("too complex to plan"));
    let started = std::time::Instant::now();
    let out = sql(&casts);
    assert_eq!(out.status.code(), Some(1), "{:?}", out.status);
    assert!(String::from_utf8_lossy(&out.stderr).contains("too complex"));
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
}

/// A statement whose planning is slow but within every bound: the optimiser folds constants, and
/// `levenshtein` of two constants of 150,000 characters (each well under the 1-MiB bound of a
/// constant) takes about a minute in this debug build (60,000 took 8.5 s with `jobsight sql`, and
/// it grows with the square). It is parsed and planned on a thread of its own: at the client's
/// 1-s `statement_timeout` the client is told 57014 and the thread is abandoned; meanwhile another
/// client is served, and SIGTERM stops the server within seconds though the thread still plans.
/// Before, the plan ran on the server's own worker to its end, past every timeout, and held the
/// stop.
#[test]
fn a_slow_plan_is_abandoned_at_its_deadline_and_holds_neither_clients_nor_the_stop() {
    install_psql();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("warehouse");
    documented_warehouse(&data);
    let mut server = Server::binary(&data, dir.path());
    let file = dir.path().join("slow.sql");
    std::fs::write(
        &file,
        "SET statement_timeout = 1000;\n\
         SELECT levenshtein(repeat('a', 150000), repeat('b', 150000));\n",
    )
    .unwrap();
    let slow = {
        let mut command = server.psql(DEFAULT_USER, PASSWORD);
        command.arg("-f").arg(&file);
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let said = run(&mut command);
            (said, started.elapsed())
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    let started = std::time::Instant::now();
    let (ok, out, err) = server.run("SELECT 41 + 1");
    assert!(ok && out.trim() == "42", "{out} {err}");
    let beside = started.elapsed();
    let ((ok, _, err), took) = slow.join().unwrap();
    assert!(!ok && err.contains("statement timeout"), "{err}");
    assert!(took.as_secs() < 5, "answered after {took:?}");
    assert!(beside.as_secs() < 5, "the other client waited {beside:?}");
    let log = std::fs::read_to_string(dir.path().join("serve.log")).unwrap();
    assert!(log.contains("left to end by itself"), "{log}");
    // (Before the statements below: with them this address has its 4 planners busy.)
    let bound = slow_bound_parameters_are_abandoned_too(&server);
    behind_a_statement_datafusion_refuses_too(&server);
    // Without a timeout of its own a statement still plans at most 5 s (datafusion-postgres
    // would plan it again where nothing stops it), and a cursor's query is planned at DECLARE.
    for (script, says) in [
        (
            "SET statement_timeout = 0;\nSELECT levenshtein(repeat('a', 100000), repeat('b', 100000));\n",
            "longer than 5 s",
        ),
        (
            "SET statement_timeout = 1000;\nBEGIN;\nDECLARE c CURSOR FOR SELECT levenshtein(repeat('a', 100000), repeat('b', 100000));\n",
            "statement timeout",
        ),
    ] {
        std::fs::write(&file, script).unwrap();
        let started = std::time::Instant::now();
        let (ok, _, err) = run(server.psql(DEFAULT_USER, PASSWORD).arg("-f").arg(&file));
        assert!(!ok && err.contains(says), "{script}: {err}");
        assert!(
            started.elapsed().as_secs() < 8,
            "{script}: {:?}",
            started.elapsed()
        );
    }
    // SIGTERM while the abandoned threads still plan.
    let process = server.process.as_mut().unwrap();
    let stopping = std::time::Instant::now();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &process.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = loop {
        if let Some(status) = process.try_wait().unwrap() {
            break status;
        }
        assert!(
            stopping.elapsed().as_secs() < 10,
            "the server did not stop within 10 s of SIGTERM"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    eprintln!(
        "slow statement answered after {took:?}, the other client after {beside:?}, slow bound \
         parameters after {bound:?}, stopped {:?} after SIGTERM ({status})",
        stopping.elapsed()
    );
}

/// The same slow call with its strings bound as parameters of a prepared statement (the extended
/// protocol: Grafana's driver, JDBC, psycopg 3). The statement plans quickly at Parse, where they
/// are placeholders; datafusion-postgres folds the call when it plans the statement at Execute,
/// on a worker of the server, and the review found it held that worker and SIGTERM for about a
/// minute. Now the bound plan is planned first by the statement's deadline. Returns how long the
/// client waited.
fn slow_bound_parameters_are_abandoned_too(server: &Server) -> std::time::Duration {
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
        client
            .batch_execute("SET statement_timeout = 1000")
            .await
            .unwrap();
        // Quick values through the same statement are answered.
        let row = client
            .query_one(
                "SELECT levenshtein($1::text, $2::text)",
                &[&"kitten", &"sitting"],
            )
            .await
            .unwrap();
        assert_eq!(row.get::<_, i32>(0), 3);
        let (a, b) = ("a".repeat(150_000), "b".repeat(150_000));
        let started = std::time::Instant::now();
        let e = client
            .query_one("SELECT levenshtein($1::text, $2::text)", &[&a, &b])
            .await
            .unwrap_err();
        let took = started.elapsed();
        assert_eq!(
            e.code(),
            Some(&tokio_postgres::error::SqlState::QUERY_CANCELED),
            "{e}"
        );
        assert!(took.as_secs() < 5, "answered after {took:?}");
        // The server's workers are free: another client is answered at once.
        let beside = std::time::Instant::now();
        let (ok, out, err) = server.run("SELECT 41 + 1");
        assert!(ok && out.trim() == "42", "{out} {err}");
        assert!(
            beside.elapsed().as_secs() < 5,
            "the other client waited {:?}",
            beside.elapsed()
        );
        took
    })
}

/// The slow call followed by a statement DataFusion's parser refuses and datafusion-postgres'
/// parser takes (`COPY jobs TO STDOUT`): a vet that read the text as a whole with DataFusion's
/// parser skipped it, and datafusion-postgres planned the first statement on a worker. Through
/// the simple protocol and a prepared statement without parameters, from another loopback
/// address (this test's address has its 4 planners busy by the end).
fn behind_a_statement_datafusion_refuses_too(server: &Server) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.3:0".parse().unwrap()).unwrap();
        let stream = socket
            .connect(format!("127.0.0.1:{}", server.port).parse().unwrap())
            .await
            .unwrap();
        let config: tokio_postgres::Config =
            format!("user={DEFAULT_USER} password='{PASSWORD}' dbname=jobsight")
                .parse()
                .unwrap();
        let (client, connection) = config
            .connect_raw(stream, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
            .batch_execute("SET statement_timeout = 1000")
            .await
            .unwrap();
        let hidden =
            "SELECT levenshtein(repeat('a', 150000), repeat('b', 150000)); COPY jobs TO STDOUT";
        let started = std::time::Instant::now();
        let simple = client.simple_query(hidden).await.unwrap_err();
        let prepared = client.query(hidden, &[]).await.unwrap_err();
        for e in [&simple, &prepared] {
            assert_eq!(
                e.code(),
                Some(&tokio_postgres::error::SqlState::QUERY_CANCELED),
                "{e}"
            );
        }
        assert!(
            started.elapsed().as_secs() < 8,
            "answered after {:?}",
            started.elapsed()
        );
    });
}

/// Silent sockets (the review's lock-out: 32 of them held every slot for 60 s) cannot keep a
/// client out: one address holds at most 4 that have not logged in, the rest are closed at once,
/// a real client logs in beside them, and they are closed after the 10-s login timeout. A
/// malformed first SCRAM message (pgwire panicked on it, a backtrace per connection) is one log
/// line.
#[test]
fn silent_sockets_and_malformed_logins_cannot_keep_a_client_out() {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    install_psql();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("warehouse");
    documented_warehouse(&data);
    let server = Server::binary(&data, dir.path());
    let started = std::time::Instant::now();
    // From 127.0.0.2 (all of 127/8 is this machine's), so that the real client, from
    // 127.0.0.1, is another address.
    let silent: Vec<TcpStream> = (0..40)
        .map(|_| connect_from([127, 0, 0, 2], server.port))
        .collect();
    let (ok, out, err) = server.run("SELECT 41 + 1");
    assert!(
        ok && out.trim() == "42",
        "a client beside 40 silent sockets: {out} {err}"
    );
    // Every silent socket is closed by the server: at once beyond the address's 4, the 4 after
    // the login timeout.
    let mut closed_at = Vec::new();
    for mut socket in silent {
        socket
            .set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        let read = socket.read(&mut [0u8; 1]);
        assert!(
            matches!(read, Ok(0))
                || read.is_err_and(|e| e.kind() != std::io::ErrorKind::WouldBlock),
            "the server closes a silent socket"
        );
        closed_at.push(started.elapsed());
    }
    assert!(closed_at.iter().all(|t| t.as_secs() < 25), "{closed_at:?}");
    assert!(
        closed_at.iter().filter(|t| t.as_secs() >= 9).count() >= 1,
        "{closed_at:?}"
    );

    // A malformed SASLInitialResponse: the start-up message, then a password message whose
    // length field is cut short.
    let mut raw = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let params = b"user\0jobsight\0database\0jobsight\0\0";
    let mut startup = ((8 + params.len()) as i32).to_be_bytes().to_vec();
    startup.extend(196_608i32.to_be_bytes());
    startup.extend(params);
    raw.write_all(&startup).unwrap();
    let body = b"SCRAM-SHA-256\0\0\0";
    let mut password = vec![b'p'];
    password.extend(((4 + body.len()) as i32).to_be_bytes());
    password.extend(body);
    raw.write_all(&password).unwrap();
    raw.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let mut answer = Vec::new();
    let _ = raw.read_to_end(&mut answer);
    assert!(answer.contains(&b'E'), "an error response: {answer:?}");
    // The server lives, and logged the attempt without a panic.
    let (ok, _, err) = server.run("SELECT 1");
    assert!(ok, "{err}");
    let log = std::fs::read_to_string(dir.path().join("serve.log")).unwrap();
    assert!(!log.contains("panicked"), "{log}");
    assert!(log.contains("no login within 10 s"), "{log}");
    assert!(log.contains("max_logins_per_address"), "{log}");
}

/// The review's flood: sockets from 32 addresses (each within its own limit of 4) that send the
/// start-up message and nothing more, reconnecting as soon as they are closed, fill every slot
/// anyone may take for logging in; before, 0 of 11 real logins got through in 24 s. A client
/// whose address logged in before has slots of its own and logs in every time.
#[test]
fn a_flood_from_many_addresses_keeps_out_no_client_that_logged_in_before() {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    install_psql();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("warehouse");
    documented_warehouse(&data);
    let server = Server::binary(&data, dir.path());
    // Known before the flood, as Grafana or an admin's desk is.
    let (ok, _, err) = server.run("SELECT 1");
    assert!(ok, "{err}");

    let params = b"user\0jobsight\0database\0jobsight\0\0";
    let mut startup = ((8 + params.len()) as i32).to_be_bytes().to_vec();
    startup.extend(196_608i32.to_be_bytes());
    startup.extend(params);
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let (held, connects) = (
        std::sync::Arc::new(AtomicUsize::new(0)),
        std::sync::Arc::new(AtomicUsize::new(0)),
    );
    let flood: Vec<_> = (0..32u8)
        .flat_map(|address| (0..4).map(move |_| address))
        .map(|address| {
            let (stop, held, connects, startup) = (
                stop.clone(),
                held.clone(),
                connects.clone(),
                startup.clone(),
            );
            let port = server.port;
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let mut socket = connect_from([127, 0, 1, address + 1], port);
                    connects.fetch_add(1, Ordering::Relaxed);
                    if socket.write_all(&startup).is_err() {
                        continue;
                    }
                    socket
                        .set_read_timeout(Some(std::time::Duration::from_millis(500)))
                        .unwrap();
                    // Held until the server closes it (a refused one at once).
                    let mut first = true;
                    loop {
                        match socket.read(&mut [0u8; 512]) {
                            Ok(0) => break,
                            Ok(_) => {
                                if first {
                                    held.fetch_add(1, Ordering::Relaxed);
                                    first = false;
                                }
                            }
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                                if stop.load(Ordering::Relaxed) {
                                    break;
                                }
                            }
                            Err(_) => break,
                        }
                    }
                }
            })
        })
        .collect();
    // Let the flood take every slot anyone may take.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let mut logins = Vec::new();
    for _ in 0..11 {
        let started = std::time::Instant::now();
        let (ok, out, err) = server.run("SELECT 41 + 1");
        logins.push((ok && out.trim() == "42", started.elapsed(), err));
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    stop.store(true, Ordering::Relaxed);
    for thread in flood {
        thread.join().unwrap();
    }
    let (held, connects) = (
        held.load(Ordering::Relaxed),
        connects.load(Ordering::Relaxed),
    );
    eprintln!("flood: {connects} connections, {held} held by the server; logins: {logins:?}");
    // The flood did fill the slots anyone may take: it was answered (held) on many sockets.
    assert!(held >= 32, "the flood held {held} slots");
    assert!(
        logins.iter().all(|(ok, took, _)| *ok && took.as_secs() < 5),
        "{logins:?}"
    );
    // Refusals logged once per address per 10 s, not once per connection.
    let log = std::fs::read_to_string(dir.path().join("serve.log")).unwrap();
    let refused = log.lines().filter(|l| l.contains("refused")).count();
    assert!(
        refused < 200,
        "{refused} refusal lines for {connects} connections"
    );
}

/// `SET statement_timeout` is honoured for the whole statement, not just its planning (the
/// review's long query ran to its end): the client gets `query_canceled` at the deadline, the
/// server stops computing (its CPU time stops growing), and it goes on serving.
#[test]
fn a_statement_timeout_stops_the_work() {
    install_psql();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("warehouse");
    documented_warehouse(&data);
    let server = Server::binary(&data, dir.path());
    let pid = server.process.as_ref().unwrap().id();
    // User and system CPU time of the server so far, in clock ticks.
    let cpu_ticks = || -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let fields: Vec<&str> = stat.rsplit(") ").next().unwrap().split(' ').collect();
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    };
    let started = std::time::Instant::now();
    // Two messages of one session, as a client sets its timeout and then queries.
    let (ok, _, err) = run(server.psql(DEFAULT_USER, PASSWORD).args([
        "-c",
        "SET statement_timeout = 1500",
        "-c",
        "SELECT count(*) FROM generate_series(1, 100000000000) AS t(x) WHERE x % 7 = 3",
    ]));
    let took = started.elapsed();
    assert!(!ok, "a query of minutes ended early");
    assert!(
        err.contains("canceling statement due to statement timeout"),
        "{err}"
    );
    assert!(took.as_secs_f64() < 10.0, "{took:?}");
    // The work stopped: over the next 2 s the server computes next to nothing.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let before = cpu_ticks();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let spent = cpu_ticks() - before;
    assert!(spent < 50, "{spent} ticks of CPU in 2 s after the timeout");
    let (ok, out, err) = server.run("SELECT 41 + 1");
    assert!(ok && out.trim() == "42", "{out} {err}");

    // A client that hangs up during a long statement: the work stops within seconds, not at
    // the 300-s ceiling.
    let mut gone = server
        .psql(DEFAULT_USER, PASSWORD)
        .args([
            "-c",
            "SELECT count(*) FROM generate_series(1, 100000000000) AS t(x) WHERE x % 7 = 3",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    let busy_before = cpu_ticks();
    std::thread::sleep(std::time::Duration::from_secs(1));
    assert!(cpu_ticks() - busy_before > 30, "the statement was running");
    gone.kill().unwrap();
    gone.wait().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    let before = cpu_ticks();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let spent = cpu_ticks() - before;
    assert!(
        spent < 50,
        "{spent} ticks of CPU in 2 s after the client hung up"
    );
}

/// A TCP connection to the server on `port` from the local address `from` (all of 127/8 is this
/// machine's, so tests can play clients of several addresses).
fn connect_from(from: [u8; 4], port: u16) -> std::net::TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(std::net::SocketAddr::from((from, 0))).unwrap();
        let stream = socket.connect(([127, 0, 0, 1], port).into()).await.unwrap();
        let stream = stream.into_std().unwrap();
        stream.set_nonblocking(false).unwrap();
        stream
    })
}

/// What one raw SCRAM login saw.
struct ScramAttempt {
    /// The salt of the server's first message, as sent (base64).
    salt: String,
    /// Every message the server answered the final one with, as (type, body).
    answers: Vec<(u8, Vec<u8>)>,
    /// From sending the final message to the last answer.
    answered_after: std::time::Duration,
}

impl ScramAttempt {
    fn logged_in(&self) -> bool {
        self.answers
            .iter()
            .any(|(kind, body)| *kind == b'R' && body[..4] == 0i32.to_be_bytes())
    }

    /// The answer was PostgreSQL's wrong-password error.
    fn refused_as_wrong_password(&self) -> bool {
        matches!(self.answers.last(), Some((b'E', body)) if String::from_utf8_lossy(body).contains("28P01"))
    }
}

/// One SCRAM-SHA-256 login of `user` from `from` over the raw protocol, as libpq does it, except
/// that the final message may carry `nonce` (given the server's) instead of the server's own; its
/// proof is computed honestly over whatever it carries.
fn scram_login(
    port: u16,
    from: [u8; 4],
    user: &str,
    password: &str,
    nonce: impl Fn(&str) -> String,
) -> ScramAttempt {
    use base64::Engine;
    use hmac::{Hmac, KeyInit, Mac};
    use sha2::{Digest, Sha256};
    use std::io::{Read, Write};
    fn hmac(key: &[u8], message: &[u8]) -> Vec<u8> {
        let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
        mac.update(message);
        mac.finalize().into_bytes().to_vec()
    }
    fn read(stream: &mut std::net::TcpStream) -> (u8, Vec<u8>) {
        let mut head = [0u8; 5];
        stream.read_exact(&mut head).unwrap();
        let length = i32::from_be_bytes(head[1..].try_into().unwrap()) as usize;
        let mut body = vec![0u8; length - 4];
        stream.read_exact(&mut body).unwrap();
        (head[0], body)
    }
    fn send(stream: &mut std::net::TcpStream, kind: u8, body: &[u8]) {
        let mut message = vec![kind];
        message.extend(((4 + body.len()) as i32).to_be_bytes());
        message.extend(body);
        stream.write_all(&message).unwrap();
    }
    let base64 = base64::engine::general_purpose::STANDARD;
    let mut stream = connect_from(from, port);
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let params = format!("user\0{user}\0database\0jobsight\0\0");
    let mut startup = ((8 + params.len()) as i32).to_be_bytes().to_vec();
    startup.extend(196_608i32.to_be_bytes());
    startup.extend(params.as_bytes());
    stream.write_all(&startup).unwrap();
    let (kind, body) = read(&mut stream);
    assert_eq!((kind, &body[..4]), (b'R', &10i32.to_be_bytes()[..]), "SASL");

    let client_first_bare = "n=,r=rOprNGfwEbeRWgbNEkqO";
    let mut initial = b"SCRAM-SHA-256\0".to_vec();
    let client_first = format!("n,,{client_first_bare}");
    initial.extend((client_first.len() as i32).to_be_bytes());
    initial.extend(client_first.as_bytes());
    send(&mut stream, b'p', &initial);
    let (kind, body) = read(&mut stream);
    assert_eq!(
        (kind, &body[..4]),
        (b'R', &11i32.to_be_bytes()[..]),
        "SASLContinue"
    );
    let server_first = String::from_utf8(body[4..].to_vec()).unwrap();
    let attribute = |name: &str| {
        server_first
            .split(',')
            .find_map(|a| a.strip_prefix(name))
            .unwrap()
            .to_string()
    };
    let salt = base64.decode(attribute("s=")).unwrap();
    let iterations: usize = attribute("i=").parse().unwrap();

    // Hi(password, salt, i) of RFC 5802: PBKDF2 with HMAC-SHA-256, one block.
    let mut block = hmac(
        password.as_bytes(),
        &[salt.as_slice(), &[0, 0, 0, 1]].concat(),
    );
    let mut salted = block.clone();
    for _ in 1..iterations {
        block = hmac(password.as_bytes(), &block);
        salted.iter_mut().zip(&block).for_each(|(s, b)| *s ^= b);
    }
    let client_key = hmac(&salted, b"Client Key");
    let stored_key = Sha256::digest(&client_key);
    let without_proof = format!("c=biws,r={}", nonce(&attribute("r=")));
    let auth_message = format!("{client_first_bare},{server_first},{without_proof}");
    let signature = hmac(&stored_key, auth_message.as_bytes());
    let proof: Vec<u8> = client_key
        .iter()
        .zip(&signature)
        .map(|(k, s)| k ^ s)
        .collect();
    let client_final = format!("{without_proof},p={}", base64.encode(proof));
    let sent = std::time::Instant::now();
    send(&mut stream, b'p', client_final.as_bytes());
    let mut answers = Vec::new();
    loop {
        let (kind, body) = read(&mut stream);
        let last = kind == b'E' || kind == b'Z';
        answers.push((kind, body));
        if last {
            return ScramAttempt {
                salt: attribute("s="),
                answers,
                answered_after: sent.elapsed(),
            };
        }
    }
}

/// The client's final SCRAM message must carry the nonce this server sent on this connection
/// (RFC 5802): pgwire computes the proof over whatever nonce the client wrote, and accepted a
/// correct proof over another. Here the same honest proof logs in with the server's nonce and
/// is refused as a wrong password with any other.
#[test]
fn a_scram_proof_over_another_nonce_is_refused() {
    install_psql();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("warehouse");
    documented_warehouse(&data);
    let server = Server::binary(&data, dir.path());

    let login = scram_login(server.port, LOCAL, DEFAULT_USER, PASSWORD, |sent| {
        sent.to_string()
    });
    assert!(
        login.logged_in(),
        "the server's own nonce logs in: {:?}",
        login.answers
    );
    assert_eq!(login.answers.last().unwrap().0, b'Z', "{:?}", login.answers);

    for forged in [
        |sent: &str| format!("{sent}x"),
        |sent: &str| sent[..sent.len() - 1].to_string(),
        |_: &str| "rOprNGfwEbeRWgbNEkqO".to_string(),
    ] {
        let login = scram_login(server.port, LOCAL, DEFAULT_USER, PASSWORD, forged);
        assert!(login.refused_as_wrong_password(), "{:?}", login.answers);
        assert!(
            !login.logged_in(),
            "no AuthenticationOk: {:?}",
            login.answers
        );
    }
    let (ok, _, err) = server.run("SELECT 1");
    assert!(ok, "the real client still logs in: {err}");
}

/// Guessing learns nothing and is slowed, then stopped (the review told real user names from
/// unknown ones by their salts, and tried 200 passwords in 0.2 s): an unknown name's salt is as
/// stable as the real user's and of its form; each wrong password of an address is answered
/// later than the one before (250 ms, doubling); after 20 failures the address is refused for
/// 15 minutes, while other addresses log in as before.
#[test]
fn guessing_reveals_no_user_and_is_slowed_then_locked_out() {
    use jobsight_warehouse::serve::{LOCKOUT, LOCKOUT_FAILURES};
    install_psql();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("warehouse");
    documented_warehouse(&data);
    let server = Server::binary(&data, dir.path());
    let own_nonce = |sent: &str| sent.to_string();

    // Salts: the real user's from two correct logins, an unknown name's from two attempts, from
    // an address of their own so that these failures do not count below.
    let prober = [127, 0, 0, 4];
    let real: Vec<ScramAttempt> = (0..2)
        .map(|_| scram_login(server.port, prober, DEFAULT_USER, PASSWORD, own_nonce))
        .collect();
    assert!(real.iter().all(ScramAttempt::logged_in));
    let unknown: Vec<ScramAttempt> = (0..2)
        .map(|_| scram_login(server.port, prober, "mallory", PASSWORD, own_nonce))
        .collect();
    assert!(unknown.iter().all(ScramAttempt::refused_as_wrong_password));
    assert_eq!(real[0].salt, real[1].salt);
    assert_eq!(unknown[0].salt, unknown[1].salt, "a stable decoy");
    assert_ne!(unknown[0].salt, real[0].salt);
    assert_eq!(
        unknown[0].salt.len(),
        real[0].salt.len(),
        "of the same form"
    );

    // Wrong passwords from one address, one after another: each answered later.
    let guesser = [127, 0, 0, 3];
    let wrong = |user: &str| scram_login(server.port, guesser, user, "guess", own_nonce);
    let mut delays = Vec::new();
    for user in [DEFAULT_USER, "root", "postgres"] {
        let login = wrong(user);
        assert!(login.refused_as_wrong_password(), "{:?}", login.answers);
        delays.push(login.answered_after.as_secs_f64());
    }
    for (delay, at_least) in delays.iter().zip([0.25, 0.5, 1.0]) {
        assert!(*delay >= at_least, "{delays:?}");
    }
    // The rest of the 20 failures, two at a time (the delays reach 4 s each; an address may
    // have 4 sockets logging in, and a socket just answered holds its slot until the server
    // sees it close, so two lanes that reconnect together stay within the 4).
    let left = LOCKOUT_FAILURES as usize - delays.len();
    std::thread::scope(|scope| {
        for lane in 0..2 {
            let wrong = &wrong;
            scope.spawn(move || {
                for _ in (lane..left).step_by(2) {
                    assert!(wrong(DEFAULT_USER).refused_as_wrong_password());
                }
            });
        }
    });
    // Locked out: even the right password is not heard; the socket is closed unanswered.
    let mut locked = connect_from(guesser, server.port);
    locked
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let mut byte = [0u8; 1];
    let read = std::io::Read::read(&mut locked, &mut byte);
    assert!(
        matches!(read, Ok(0)) || read.is_err_and(|e| e.kind() != std::io::ErrorKind::WouldBlock),
        "a locked-out address is closed at once"
    );
    let log = std::fs::read_to_string(dir.path().join("serve.log")).unwrap();
    // "refused, locked out for 895 s more after 20 failed logins": the 15 minutes from the
    // 20th failure, whose answer came 4 s late.
    let left: u64 = log
        .split("refused, locked out for ")
        .nth(1)
        .and_then(|rest| rest.split(" s more").next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{log}"));
    assert!(
        (LOCKOUT.as_secs() - 60..LOCKOUT.as_secs()).contains(&left),
        "{log}"
    );
    assert!(log.contains(&format!("after {LOCKOUT_FAILURES} failed logins")));
    // Another address is served as before, the prober's too.
    let (ok, out, err) = server.run("SELECT 41 + 1");
    assert!(ok && out.trim() == "42", "{out} {err}");
    assert!(scram_login(server.port, prober, DEFAULT_USER, PASSWORD, own_nonce).logged_in());
}
