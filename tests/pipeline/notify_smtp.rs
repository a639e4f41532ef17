//! `jobsight notify` against a real SMTP server (aiosmtpd, started by ops/smtp/start-smtp.sh):
//! digests arrive with the right recipients, subjects and bodies; a month of daily runs keeps
//! every anti-spam rule; a server that goes down mid-run loses and duplicates nothing once it is
//! back; a run killed between sending and recording duplicates nothing.
//!
//! The warehouse is a simulated cluster: 30 days of 4 nodes with 12 jobs a day, through the real
//! `simulate`, `features` and `classify` commands, built once and copied per test.
use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use chrono::{Datelike, NaiveDate};
use common::services::wait_until;
use common::{repo, run_ok, sql_json};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
}

/// The month's warehouse, built once per test binary.
fn month() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("jobsight-notify-month-")
            .tempdir()
            .unwrap()
            .keep();
        for d in 1..=30 {
            run_ok(
                Command::new(JOBSIGHT)
                    .arg("--data")
                    .arg(&dir)
                    .args(["simulate", "--nodes", "4", "--jobs", "12", "--step", "60"])
                    .args([
                        "--seed",
                        &(100 + d).to_string(),
                        "--day",
                        &day(d).to_string(),
                    ])
                    .args(["--first-job-id", &(d * 100).to_string()]),
            );
        }
        run_ok(
            Command::new(JOBSIGHT)
                .arg("--data")
                .arg(&dir)
                .arg("features"),
        );
        run_ok(
            Command::new(JOBSIGHT)
                .arg("--data")
                .arg(&dir)
                .arg("classify"),
        );
        dir
    })
}

/// A test's own copy of the month, its outbox, its mailbox and its config.
struct Site {
    _dir: tempfile::TempDir,
    data: PathBuf,
    outbox: PathBuf,
    mail: PathBuf,
    config: PathBuf,
    port: u16,
}

impl Site {
    fn new() -> Site {
        Site::with_smtp("host = \"127.0.0.1\"\nsecurity = \"none\"\n")
    }

    /// A site whose `[notify.smtp]` has `smtp` (host, security, login) and the test's port.
    fn with_smtp(smtp: &str) -> Site {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        run_ok(Command::new("cp").arg("-r").arg(month()).arg(&data));
        let port = free_port();
        let recipients = dir.path().join("recipients");
        std::fs::write(
            &recipients,
            "# user address\nalice alice.smith@lab.example.org\n",
        )
        .unwrap();
        let config = dir.path().join("jobsight.toml");
        std::fs::write(
            &config,
            format!(
                "[notify]\ndelivery = \"smtp\"\nfrom = \"jobsight <jobsight@example.org>\"\n\
                 admins = [\"hpc-admins@example.org\"]\nrecipient = \"{{user}}@example.org\"\n\
                 recipients_file = \"{}\"\n[notify.smtp]\n{smtp}port = {port}\ntimeout_s = 5\n",
                recipients.display()
            ),
        )
        .unwrap();
        Site {
            outbox: dir.path().join("outbox"),
            mail: dir.path().join("mail"),
            data,
            config,
            port,
            _dir: dir,
        }
    }

    /// `jobsight notify` at `now` with extra arguments; returns (success, stdout, stderr).
    fn notify(&self, now: &str, extra: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
        let out = Command::new(JOBSIGHT)
            .arg("--data")
            .arg(&self.data)
            .arg("--config")
            .arg(&self.config)
            .args(["notify", "--now", now, "--outbox"])
            .arg(&self.outbox)
            .args(extra)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn notify_ok(&self, now: &str, extra: &[&str]) -> String {
        let (ok, stdout, stderr) = self.notify(now, extra, &[]);
        assert!(ok, "notify failed:\n{stdout}\n{stderr}");
        stdout
    }

    fn sink(&self, accept: Option<usize>) -> Sink {
        Sink::start(self.port, &self.mail, accept, &[])
    }

    /// Every message the server stored.
    fn received(&self) -> Vec<serde_json::Value> {
        if !self.mail.exists() {
            return Vec::new();
        }
        let out = run_ok(
            Command::new("python3")
                .arg(repo().join("tests/fixtures/read_mail.py"))
                .arg(&self.mail),
        );
        serde_json::from_str(&out).unwrap()
    }

    fn ledger(&self, query: &str) -> Vec<serde_json::Value> {
        sql_json(JOBSIGHT, &self.data, query)
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The SMTP server; stopped when dropped.
struct Sink {
    child: Child,
    port: u16,
}

impl Sink {
    fn start(port: u16, mail: &Path, accept: Option<usize>, extra: &[String]) -> Sink {
        let mut command = Command::new("bash");
        command
            .arg(repo().join("ops/smtp/start-smtp.sh"))
            .args(["--port", &port.to_string(), "--dir"])
            .arg(mail)
            .stdout(Stdio::null());
        if let Some(n) = accept {
            command.args(["--accept", &n.to_string()]);
        }
        command.args(extra);
        let child = command.spawn().unwrap();
        wait_until("the SMTP server", Duration::from_secs(180), || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        Sink { child, port }
    }

    fn wait_gone(&mut self) {
        let port = self.port;
        wait_until("the SMTP server to stop", Duration::from_secs(30), || {
            TcpStream::connect(("127.0.0.1", port)).is_err()
        });
        let _ = self.child.wait();
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The keys a run planned, from its output (`  KEY  to ADDRESS ...` lines).
fn planned_keys(stdout: &str) -> BTreeSet<String> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter(|l| !l.starts_with(' ') && !l.starts_with("waiting") && l.contains(" to "))
        .filter_map(|l| l.split_whitespace().next())
        .map(String::from)
        .collect()
}

fn message_ids(mail: &[serde_json::Value]) -> Vec<String> {
    mail.iter()
        .map(|m| m["message_id"].as_str().unwrap().to_string())
        .collect()
}

fn assert_no_duplicates(ids: &[String]) {
    let unique: BTreeSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "a message arrived twice: {ids:?}");
}

#[test]
fn digests_arrive_with_the_right_recipients_subjects_and_bodies() {
    let site = Site::new();
    let _sink = site.sink(None);
    let stdout = site.notify_ok("2026-11-20T23:30:00Z", &[]);
    let keys = planned_keys(&stdout);
    assert!(
        keys.iter().any(|k| k.starts_with("digest.")) && keys.contains("admin-digest.2026-11-20"),
        "{stdout}"
    );
    let mail = site.received();
    assert_eq!(mail.len(), keys.len(), "{stdout}");
    let allowed: BTreeSet<&str> = [
        "X-Envelope-From",
        "X-Envelope-To",
        "From",
        "Subject",
        "Message-ID",
        "Date",
        "Auto-Submitted",
        "To",
        "MIME-Version",
        "Content-Type",
    ]
    .into();
    let mut got = BTreeSet::new();
    for m in &mail {
        let id = m["message_id"].as_str().unwrap();
        let key = id
            .trim_start_matches('<')
            .trim_end_matches("@example.org>")
            .to_string();
        // The envelope and the To header agree, and name exactly the key's user.
        let to = m["envelope_to"].as_array().unwrap();
        assert_eq!(to.len(), 1, "{m}");
        let to = to[0].as_str().unwrap();
        assert_eq!(m["to"].as_str().unwrap(), to);
        let expected = match key.split('.').collect::<Vec<_>>().as_slice() {
            [kind, ..] if kind.starts_with("admin") => "hpc-admins@example.org".to_string(),
            [_, "alice", ..] => "alice.smith@lab.example.org".to_string(),
            [_, user, ..] => format!("{user}@example.org"),
            _ => panic!("{key}"),
        };
        assert_eq!(to, expected, "{key}");
        // Job names like "run\nSubject: forged" add no header.
        assert_eq!(m["subject_headers"], 1);
        for name in m["header_names"].as_array().unwrap() {
            assert!(
                allowed.contains(name.as_str().unwrap()),
                "header {name} in {key}"
            );
        }
        assert_eq!(m["auto_submitted"], "auto-generated");
        assert!(m["text"].as_str().unwrap().contains("Hello") || key.starts_with("admin"));
        assert!(m["html"].as_str().unwrap().starts_with("<!DOCTYPE html>"));
        got.insert(key);
    }
    assert_eq!(got, keys);

    let digest = mail
        .iter()
        .filter(|m| m["message_id"].as_str().unwrap().starts_with("<digest."))
        .min_by_key(|m| m["message_id"].as_str().unwrap())
        .expect("a digest");
    insta::assert_snapshot!(
        "first_digest",
        format!(
            "To: {}\nSubject: {}\n\n{}",
            digest["to"].as_str().unwrap(),
            digest["subject"].as_str().unwrap(),
            digest["text"].as_str().unwrap()
        )
    );
    let admin = mail
        .iter()
        .find(|m| m["message_id"] == "<admin-digest.2026-11-20@example.org>")
        .unwrap();
    insta::assert_snapshot!(
        "admin_digest",
        format!(
            "Subject: {}\n\n{}",
            admin["subject"].as_str().unwrap(),
            admin["text"].as_str().unwrap()
        )
    );

    // Again: nothing new, nothing twice.
    let again = site.notify_ok("2026-11-20T23:30:00Z", &[]);
    assert!(again.contains("planned 0 message(s)"), "{again}");
    assert_eq!(site.received().len(), mail.len());
    let rows = site.ledger("SELECT DISTINCT key, status FROM notifications");
    assert_eq!(rows.len(), keys.len());
    assert!(rows.iter().all(|r| r["status"] == "sent"));
}

#[test]
fn a_month_of_daily_runs_keeps_every_anti_spam_rule() {
    let site = Site::new();
    let _sink = site.sink(None);
    for d in 1..=30 {
        // The per-job step during the day, then the nightly run with the digests.
        site.notify_ok(&format!("{}T12:00:00Z", day(d)), &["--critical-only"]);
        site.notify_ok(&format!("{}T23:30:00Z", day(d)), &[]);
    }
    let mail = site.received();
    let ids = message_ids(&mail);
    assert_no_duplicates(&ids);
    let rows = site.ledger(
        "SELECT key, kind, user, job_id, finding, severity, CAST(sent_at AS DATE) AS day, status \
         FROM notifications WHERE user IS NOT NULL ORDER BY sent_at",
    );
    let keys: BTreeSet<&str> = rows.iter().map(|r| r["key"].as_str().unwrap()).collect();
    let user_mail = ids.iter().filter(|id| !id.starts_with("<admin")).count();
    assert_eq!(
        keys.len(),
        user_mail,
        "every message recorded is received, once"
    );
    assert!(
        user_mail >= 30,
        "a month of a busy cluster gives mail: {user_mail}"
    );

    let mut last: BTreeMap<(String, String), NaiveDate> = BTreeMap::new();
    let mut per_user_day: BTreeMap<(String, NaiveDate), BTreeSet<String>> = BTreeMap::new();
    // Each job's finding goes out in one message only (one message may name it twice: a rule
    // judged per node, for two of the job's nodes).
    let mut reported: BTreeMap<(String, String, String), String> = BTreeMap::new();
    for r in &rows {
        let user = r["user"].as_str().unwrap().to_string();
        let finding = r["finding"].as_str().unwrap().to_string();
        let sent = NaiveDate::parse_from_str(r["day"].as_str().unwrap(), "%Y-%m-%d").unwrap();
        let key = r["key"].as_str().unwrap().to_string();
        assert_eq!(r["status"], "sent");
        per_user_day
            .entry((user.clone(), sent))
            .or_default()
            .insert(key.clone());
        let job = r["job_id"].as_str().unwrap().to_string();
        let first = reported
            .entry((user.clone(), job, finding.clone()))
            .or_insert_with(|| key.clone());
        assert_eq!(*first, key, "reported again: {r}");
        if r["kind"] == "digest" {
            let weekend = sent.weekday().num_days_from_monday() >= 5;
            let has_critical = rows
                .iter()
                .any(|o| o["key"] == r["key"] && o["severity"] == "critical");
            assert!(!weekend || has_critical, "digest on a weekend: {r}");
        }
        if r["severity"] != "critical" {
            if let Some(previous) = last.get(&(user.clone(), finding.clone())) {
                assert!(
                    *previous == sent || (sent - *previous).num_days() >= 7,
                    "{finding} to {user} on {previous} and again on {sent}"
                );
            }
            last.insert((user, finding), sent);
        }
    }
    for ((user, d), keys) in &per_user_day {
        assert!(
            keys.len() <= 3,
            "{user} got {} emails on {d}: {keys:?}",
            keys.len()
        );
    }
    // One admin digest a day.
    let admin_digests = ids
        .iter()
        .filter(|id| id.starts_with("<admin-digest."))
        .count();
    assert_eq!(admin_digests, 30);
}

#[test]
fn a_server_that_stops_mid_run_loses_and_duplicates_nothing() {
    let site = Site::new();
    let mut sink = site.sink(Some(3));
    let first = site.notify_ok("2026-11-20T23:30:00Z", &[]);
    let planned = planned_keys(&first);
    assert!(planned.len() > 4, "{first}");
    sink.wait_gone();
    assert_eq!(site.received().len(), 3, "{first}");
    assert!(first.contains("waiting"), "{first}");

    // Still down: the messages wait.
    let down = site.notify_ok("2026-11-20T23:32:00Z", &[]);
    assert!(down.contains("delivered 0 message(s)"), "{down}");

    // Back up. Each run while it was down tried one message (the rest cost no timeout); those
    // not tried are due at once, the tried one after its backoff.
    let _sink = site.sink(None);
    let early = site.notify_ok("2026-11-20T23:32:30Z", &[]);
    assert!(early.contains("1 waiting in the queue"), "{early}");
    let later = site.notify_ok("2026-11-20T23:59:00Z", &[]);
    assert!(later.contains("0 waiting in the queue"), "{later}");
    let mut planned = planned;
    for out in [&down, &early, &later] {
        planned.extend(planned_keys(out));
    }
    let ids = message_ids(&site.received());
    assert_no_duplicates(&ids);
    let got: BTreeSet<String> = ids
        .iter()
        .map(|id| {
            id.trim_start_matches('<')
                .trim_end_matches("@example.org>")
                .to_string()
        })
        .collect();
    assert_eq!(got, planned);
}

#[test]
fn a_run_killed_between_send_and_record_duplicates_nothing() {
    let site = Site::new();
    let _sink = site.sink(None);
    let (ok, stdout, stderr) = site.notify(
        "2026-11-20T23:30:00Z",
        &[],
        &[("JOBSIGHT_FAULT", "after-send")],
    );
    assert!(
        !ok && stderr.contains("aborting here on purpose"),
        "{stdout}\n{stderr}"
    );
    // The dead run left one message in sending/ (it reached the server) and the rest queued.
    let count = |state: &str| site.outbox.join(state).read_dir().unwrap().count();
    assert_eq!(count("sending"), 1);
    let planned = count("sending") + count("queue");
    assert!(planned > 2);
    assert_eq!(site.received().len(), 1);

    let after = site.notify_ok("2026-11-20T23:30:00Z", &[]);
    assert!(after.contains("IN DOUBT"), "{after}");
    assert!(
        planned_keys(&after).is_empty(),
        "a rerun plans nothing new: {after}"
    );
    let ids = message_ids(&site.received());
    assert_no_duplicates(&ids);
    // The in-doubt one (which did arrive) plus every other planned one: each once.
    assert_eq!(ids.len(), planned, "{after}");
    let in_doubt = site.ledger("SELECT DISTINCT key FROM notifications WHERE status = 'in-doubt'");
    assert_eq!(in_doubt.len(), 1, "{after}");
    assert!(site.outbox.join("in-doubt").read_dir().unwrap().count() == 1);
}

#[test]
fn test_mode_sends_everything_to_the_admins_and_records_nothing() {
    let site = Site::new();
    let _sink = site.sink(None);
    let test = site.notify_ok("2026-11-20T23:30:00Z", &["--test-mode"]);
    assert!(test.contains("TEST MODE"), "{test}");
    let mail = site.received();
    assert!(mail.len() > 3, "{test}");
    for m in &mail {
        assert_eq!(m["envelope_to"][0], "hpc-admins@example.org", "{m}");
        assert!(
            m["message_id"].as_str().unwrap().starts_with("<test-"),
            "{m}"
        );
    }
    // Nothing recorded: the real run afterwards plans every message again.
    assert!(!site.data.join("notifications").exists());
    let real = site.notify_ok("2026-11-20T23:30:00Z", &[]);
    assert_eq!(planned_keys(&real).len(), mail.len(), "{real}\n{test}");
}

#[test]
fn check_finds_a_broken_template_and_a_bad_holiday_line() {
    let dir = tempfile::tempdir().unwrap();
    let templates = dir.path().join("templates");
    run_ok(
        Command::new(JOBSIGHT)
            .args(["notify", "--write-templates"])
            .arg(&templates),
    );
    let config = dir.path().join("jobsight.toml");
    let holidays = dir.path().join("holidays");
    std::fs::write(&holidays, "# 2026\n2026-12-25\n2026-12-26\n").unwrap();
    std::fs::write(
        &config,
        format!(
            "[notify]\ntemplates = \"{}\"\nholidays_file = \"{}\"\n",
            templates.display(),
            holidays.display()
        ),
    )
    .unwrap();
    let check = || {
        Command::new(JOBSIGHT)
            .arg("--config")
            .arg(&config)
            .arg("check")
            .output()
            .unwrap()
    };
    let good = check();
    assert!(good.status.success(), "{good:?}");
    let text = String::from_utf8_lossy(&good.stdout).to_string();
    assert!(text.contains("2 holiday(s)"), "{text}");

    // A typo in a branch that only shows when nobody wasted anything: still found.
    let admin = templates.join("admin.txt");
    let original = std::fs::read_to_string(&admin).unwrap();
    std::fs::write(
        &admin,
        format!("{original}{{% if not top_wasters %}}\n{{{{ usr }}}}{{% endif %}}\n"),
    )
    .unwrap();
    let broken = check();
    let stderr = String::from_utf8_lossy(&broken.stderr).to_string();
    assert!(!broken.status.success());
    let line = original.lines().count() + 2;
    assert!(
        stderr.contains(&format!("admin.txt, line {line}: unknown name `usr`")),
        "{stderr}"
    );
    std::fs::write(&admin, original).unwrap();

    std::fs::write(&holidays, "2026-12-25\n25.12.2026\n").unwrap();
    let bad = check();
    let stderr = String::from_utf8_lossy(&bad.stderr).to_string();
    assert!(!bad.status.success());
    assert!(stderr.contains("holidays, line 2"), "{stderr}");
}

#[test]
fn starttls_and_tls_with_a_login_and_the_sites_ca() {
    let certs = tempfile::tempdir().unwrap();
    run_ok(
        Command::new("bash")
            .arg(repo().join("ops/smtp/make-test-certs.sh"))
            .arg(certs.path()),
    );
    let password = certs.path().join("password");
    std::fs::write(&password, "s3cret\n").unwrap();
    let server_tls = |mode: &str| -> Vec<String> {
        [
            "--tls-cert",
            &certs.path().join("cert.pem").display().to_string(),
            "--tls-key",
            &certs.path().join("key.pem").display().to_string(),
            "--tls-mode",
            mode,
            "--auth",
            "jobsight:s3cret",
        ]
        .map(String::from)
        .to_vec()
    };
    for (security, mode) in [("starttls", "starttls"), ("tls", "implicit")] {
        let site = Site::with_smtp(&format!(
            "host = \"localhost\"\nsecurity = \"{security}\"\nusername = \"jobsight\"\n\
             password_file = \"{}\"\nca_file = \"{}\"\n",
            password.display(),
            certs.path().join("ca.pem").display()
        ));
        let _sink = Sink::start(site.port, &site.mail, None, &server_tls(mode));
        let out = site.notify_ok("2026-11-20T23:30:00Z", &[]);
        let planned = planned_keys(&out);
        assert!(out.contains("0 failed"), "{security}: {out}");
        assert_eq!(site.received().len(), planned.len(), "{security}: {out}");
    }

    // A wrong password is refused for good: failed/, in the ledger, nothing sent, no retry.
    let wrong = certs.path().join("wrong");
    std::fs::write(&wrong, "guess\n").unwrap();
    let site = Site::with_smtp(&format!(
        "host = \"localhost\"\nsecurity = \"starttls\"\nusername = \"jobsight\"\n\
         password_file = \"{}\"\nca_file = \"{}\"\n",
        wrong.display(),
        certs.path().join("ca.pem").display()
    ));
    let _sink = Sink::start(site.port, &site.mail, None, &server_tls("starttls"));
    let out = site.notify_ok("2026-11-20T23:30:00Z", &[]);
    assert!(
        out.contains("FAILED") && out.contains("rejected by the server"),
        "{out}"
    );
    assert!(out.contains("0 waiting"), "{out}");
    assert!(site.received().is_empty());
    let failed =
        site.ledger("SELECT count(DISTINCT key) AS n FROM notifications WHERE status = 'failed'");
    assert_eq!(
        failed[0]["n"].as_u64(),
        Some(planned_keys(&out).len() as u64),
        "{out}"
    );

    // Without the site's CA the server's certificate is not trusted: nothing is sent, all wait.
    let site = Site::with_smtp(&format!(
        "host = \"localhost\"\nsecurity = \"starttls\"\nusername = \"jobsight\"\n\
         password_file = \"{}\"\n",
        password.display()
    ));
    let _sink = Sink::start(site.port, &site.mail, None, &server_tls("starttls"));
    let out = site.notify_ok("2026-11-20T23:30:00Z", &[]);
    assert!(out.contains("delivered 0 message(s)"), "{out}");
    assert!(site.received().is_empty());
}
