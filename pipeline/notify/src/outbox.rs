//! The outbox: every message waits here until it is delivered, and what happened to it stays here.
//!
//! One directory per message, named by its key (unique per recipient and period), holding
//! `message.eml` (byte-exact, what goes over SMTP) and `meta.json` (envelope, attempts, the ledger
//! rows it will record). A message moves between state folders by renaming its directory, which
//! is atomic, so it is always in exactly one state:
//!
//! ```text
//! tmp/ ──enqueue──> queue/ ──claim──> sending/ ──sent, ledger written──> sent/
//!                     ^                  │  │
//!                     └─transient error──┘  └─permanent error or gave up──> failed/
//! sending/ found at the start of a run (the process died while sending) ──> in-doubt/
//! ```
//!
//! The idempotency key is recorded before sending (the move to `sending/`) and after (the
//! `notifications` ledger part named by the key, then the move to `sent/`). A message found in
//! `sending/` whose ledger part exists was sent; one without it may or may not have reached the
//! server, and SMTP gives no way to ask. It goes to `in-doubt/` and is **not** sent again: a
//! duplicate is what destroys trust, while an in-doubt message is listed by every run and in the
//! admins' digest, and `jobsight notify --resend KEY` sends it on purpose. The Message-ID is the
//! key, so a mail system that drops duplicate Message-IDs drops a resent copy too.
//!
//! With the file transport (the default) delivery is the move to `sent/`: the `.eml` files there
//! are the output.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use lettre::Transport as _;
use lettre::address::Envelope;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};

use super::NotifyError;
use super::plan::LedgerRow;
use jobsight_warehouse::catalog::{self, Table};

/// The state folders, in the order a message passes them.
pub const STATES: [&str; 5] = ["queue", "sending", "sent", "in-doubt", "failed"];

/// Everything about a message except its bytes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Meta {
    pub key: String,
    pub from: String,
    pub to: Vec<String>,
    pub subject: String,
    pub queued_at: DateTime<Utc>,
    pub attempts: u32,
    pub next_attempt: DateTime<Utc>,
    pub last_error: Option<String>,
    /// Test mode: delivered to the admins, recorded nowhere.
    pub test: bool,
    /// The ledger rows this message records once sent (status and times filled in then).
    pub rows: Vec<LedgerRow>,
}

/// How messages leave the outbox.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// Delivered means written to `sent/`.
    File,
    Smtp(SmtpSettings),
}

impl Transport {
    pub fn name(&self) -> &'static str {
        match self {
            Transport::File => "file",
            Transport::Smtp(_) => "smtp",
        }
    }
}

/// How the SMTP connection is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Security {
    /// Plain connection upgraded with STARTTLS (required), usually port 587.
    Starttls,
    /// TLS from the first byte, usually port 465.
    Tls,
    /// No encryption: only for a relay on the same host or a test server.
    None,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SmtpSettings {
    pub host: String,
    pub port: u16,
    pub security: Security,
    pub username: Option<String>,
    /// Read from `password_file` when the settings are resolved; never in the config itself.
    pub password: Option<String>,
    /// Extra trusted CA certificates (PEM), from `ca_file`.
    pub ca_pem: Option<Vec<u8>>,
    pub timeout: Duration,
}

/// Retry timing for messages the server did not take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Retry {
    pub initial: Duration,
    pub max: Duration,
    pub give_up_after: Duration,
}

/// What one delivery pass did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Delivered {
    pub sent: Vec<String>,
    /// (key, next attempt, last error).
    pub waiting: Vec<(String, DateTime<Utc>, String)>,
    /// (key, reason).
    pub failed: Vec<(String, String)>,
}

/// What recovery at the start of a run found in `sending/`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recovered {
    /// Their ledger part existed: they were sent, only the last move was missing.
    pub sent: Vec<String>,
    pub in_doubt: Vec<String>,
}

#[derive(Debug)]
pub struct Outbox {
    pub root: PathBuf,
}

impl Outbox {
    /// Opens (and creates) the outbox at `root`.
    pub fn open(root: &Path) -> Result<Outbox, NotifyError> {
        for dir in STATES.iter().chain(&["tmp"]) {
            let path = root.join(dir);
            fs::create_dir_all(&path).map_err(|e| NotifyError::io(&path, e))?;
        }
        Ok(Outbox {
            root: root.to_path_buf(),
        })
    }

    /// Waits for, then holds, the outbox's lock (`.lock` in it) until the file is dropped: one
    /// run at a time recovers, queues and delivers, so that no run takes another's messages in
    /// `sending/` for those of a run that died.
    pub fn lock(&self) -> Result<fs::File, NotifyError> {
        let path = self.root.join(".lock");
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| NotifyError::io(&path, e))?;
        file.lock().map_err(|e| NotifyError::io(&path, e))?;
        Ok(file)
    }

    /// A handle on the outbox at `root` that creates nothing, for a dry run: a missing outbox
    /// reads as empty.
    pub fn at(root: &Path) -> Outbox {
        Outbox {
            root: root.to_path_buf(),
        }
    }

    fn dir(&self, state: &str, key: &str) -> PathBuf {
        self.root.join(state).join(key)
    }

    /// The state a key is in, if any.
    pub fn state_of(&self, key: &str) -> Option<&'static str> {
        STATES.into_iter().find(|s| self.dir(s, key).is_dir())
    }

    /// The keys in a state, sorted.
    pub fn keys(&self, state: &str) -> Result<Vec<String>, NotifyError> {
        let dir = self.root.join(state);
        let entries = match fs::read_dir(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            other => other,
        };
        let mut keys: Vec<String> = entries
            .map_err(|e| NotifyError::io(&dir, e))?
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        keys.sort();
        Ok(keys)
    }

    pub fn meta(&self, state: &str, key: &str) -> Result<Meta, NotifyError> {
        let path = self.dir(state, key).join("meta.json");
        let text = fs::read(&path).map_err(|e| NotifyError::io(&path, e))?;
        serde_json::from_slice(&text).map_err(|e| NotifyError::Outbox {
            path,
            reason: e.to_string(),
        })
    }

    /// The message's bytes.
    pub fn eml(&self, state: &str, key: &str) -> Result<Vec<u8>, NotifyError> {
        let path = self.dir(state, key).join("message.eml");
        fs::read(&path).map_err(|e| NotifyError::io(&path, e))
    }

    /// Puts a message into `queue/`, unless its key is already in the outbox (then `false`).
    pub fn enqueue(&self, meta: &Meta, eml: &[u8]) -> Result<bool, NotifyError> {
        if self.state_of(&meta.key).is_some() {
            return Ok(false);
        }
        let tmp = self.dir("tmp", &meta.key);
        if tmp.exists() {
            // Left by a run that died while writing it: never queued, so start again.
            fs::remove_dir_all(&tmp).map_err(|e| NotifyError::io(&tmp, e))?;
        }
        fs::create_dir_all(&tmp).map_err(|e| NotifyError::io(&tmp, e))?;
        write_synced(&tmp.join("message.eml"), eml)?;
        write_meta(&tmp, meta)?;
        self.rename(&meta.key, "tmp", "queue")?;
        Ok(true)
    }

    fn rename(&self, key: &str, from: &str, to: &str) -> Result<(), NotifyError> {
        let (src, dst) = (self.dir(from, key), self.dir(to, key));
        fs::rename(&src, &dst).map_err(|e| NotifyError::io(&src, e))?;
        for dir in [from, to] {
            if let Ok(d) = fs::File::open(self.root.join(dir)) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }

    /// Ledger rows of messages not yet in the ledger (queued or being sent), for the plan's
    /// history: their findings must not be planned again.
    pub fn pending_rows(&self) -> Result<Vec<LedgerRow>, NotifyError> {
        let mut rows = Vec::new();
        for state in ["queue", "sending"] {
            for key in self.keys(state)? {
                let meta = self.meta(state, &key)?;
                if !meta.test {
                    rows.extend(meta.rows);
                }
            }
        }
        Ok(rows)
    }

    /// Settles messages a dead run left in `sending/` (see the module doc). With the file
    /// transport nothing left the machine: the message in the outbox is its delivery, so it is
    /// recorded as sent rather than held in doubt for ever.
    pub fn recover(
        &self,
        data: &Path,
        transport: &Transport,
        now: DateTime<Utc>,
    ) -> Result<Recovered, NotifyError> {
        let mut recovered = Recovered::default();
        for key in self.keys("sending")? {
            let meta = self.meta("sending", &key)?;
            if matches!(transport, Transport::File) {
                if !meta.test && !ledger_has(data, &key) {
                    record(data, &meta, "sent", Some(now), transport.name(), now)?;
                }
                self.rename(&key, "sending", "sent")?;
                recovered.sent.push(key);
            } else if meta.test || !ledger_has(data, &key) {
                if !meta.test {
                    record(data, &meta, "in-doubt", None, "unknown", now)?;
                }
                self.rename(&key, "sending", "in-doubt")?;
                recovered.in_doubt.push(key);
            } else {
                self.rename(&key, "sending", "sent")?;
                recovered.sent.push(key);
            }
        }
        Ok(recovered)
    }

    /// Moves an in-doubt or failed message back to the queue, due now: the admin's decision.
    pub fn resend(&self, data: &Path, key: &str, now: DateTime<Utc>) -> Result<(), NotifyError> {
        let state = match self.state_of(key) {
            Some(state @ ("in-doubt" | "failed")) => state,
            Some(state) => {
                return Err(NotifyError::Resend {
                    key: key.into(),
                    reason: format!("it is in {state}/, not in in-doubt/ or failed/"),
                });
            }
            None => {
                return Err(NotifyError::Resend {
                    key: key.into(),
                    reason: "no such message in the outbox".into(),
                });
            }
        };
        let mut meta = self.meta(state, key)?;
        // Its in-doubt or failed rows go; sending it records it again.
        for part in ledger_parts(data, key) {
            fs::remove_file(&part).map_err(|e| NotifyError::io(&part, e))?;
        }
        meta.next_attempt = now;
        meta.attempts = 0;
        meta.queued_at = now;
        write_meta(&self.dir(state, key), &meta)?;
        self.rename(key, state, "queue")
    }

    /// Sends every queued message that is due. After a connection failure the rest wait for the
    /// next run (the server is down; trying each would only cost a timeout each).
    pub fn deliver(
        &self,
        data: &Path,
        transport: &Transport,
        retry: &Retry,
        now: DateTime<Utc>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Delivered, NotifyError> {
        let mut delivered = Delivered::default();
        let due: Vec<(String, Meta)> = self
            .keys("queue")?
            .into_iter()
            .map(|key| self.meta("queue", &key).map(|meta| (key, meta)))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .filter(|(_, meta)| meta.next_attempt <= now)
            .collect();
        let smtp = match transport {
            Transport::Smtp(settings) if !due.is_empty() => Some(smtp_transport(settings)?),
            _ => None,
        };
        let mut server_down: Option<String> = None;
        for (i, (key, mut meta)) in due.into_iter().enumerate() {
            progress(i, delivered.sent.len());
            if let Some(error) = &server_down {
                delivered
                    .waiting
                    .push((key, meta.next_attempt, error.clone()));
                continue;
            }
            // Recorded before sending: from here a crash leaves it in sending/, in doubt.
            self.rename(&key, "queue", "sending")?;
            let result = match &smtp {
                None => Ok(()),
                Some(smtp) => self.send_one(smtp, &key, &meta),
            };
            crate::fault_point("after-send");
            match result {
                Ok(()) => {
                    if !meta.test {
                        record(data, &meta, "sent", Some(now), transport.name(), now)?;
                    }
                    self.rename(&key, "sending", "sent")?;
                    delivered.sent.push(key);
                }
                Err(SendError::Permanent(reason)) => {
                    self.fail(
                        data,
                        &key,
                        &mut meta,
                        transport,
                        reason,
                        now,
                        &mut delivered,
                    )?;
                }
                Err(SendError::Transient(reason)) => {
                    meta.attempts += 1;
                    let age = (now - meta.queued_at).to_std().unwrap_or_default();
                    if age >= retry.give_up_after {
                        let reason = format!(
                            "gave up after {} attempts over {}: {reason}",
                            meta.attempts,
                            jobsight_base::text::human_duration(age.as_secs() as i64)
                        );
                        self.fail(
                            data,
                            &key,
                            &mut meta,
                            transport,
                            reason,
                            now,
                            &mut delivered,
                        )?;
                        continue;
                    }
                    let backoff = retry
                        .initial
                        .saturating_mul(1 << meta.attempts.saturating_sub(1).min(20))
                        .min(retry.max);
                    meta.next_attempt =
                        now + chrono::Duration::from_std(backoff).unwrap_or_default();
                    meta.last_error = Some(reason.clone());
                    write_meta(&self.dir("sending", &key), &meta)?;
                    self.rename(&key, "sending", "queue")?;
                    delivered
                        .waiting
                        .push((key, meta.next_attempt, reason.clone()));
                    if !reason.starts_with("rejected") {
                        server_down = Some(reason);
                    }
                }
            }
        }
        // Messages not due yet are waiting too.
        for key in self.keys("queue")? {
            if !delivered.waiting.iter().any(|(k, ..)| *k == key) {
                let meta = self.meta("queue", &key)?;
                delivered.waiting.push((
                    key,
                    meta.next_attempt,
                    meta.last_error.unwrap_or_default(),
                ));
            }
        }
        Ok(delivered)
    }

    #[allow(clippy::too_many_arguments)]
    fn fail(
        &self,
        data: &Path,
        key: &str,
        meta: &mut Meta,
        transport: &Transport,
        reason: String,
        now: DateTime<Utc>,
        delivered: &mut Delivered,
    ) -> Result<(), NotifyError> {
        meta.last_error = Some(reason.clone());
        write_meta(&self.dir("sending", key), meta)?;
        if !meta.test {
            record(data, meta, "failed", None, transport.name(), now)?;
        }
        self.rename(key, "sending", "failed")?;
        delivered.failed.push((key.to_string(), reason));
        Ok(())
    }

    fn send_one(
        &self,
        smtp: &lettre::SmtpTransport,
        key: &str,
        meta: &Meta,
    ) -> Result<(), SendError> {
        let eml = self
            .eml("sending", key)
            .map_err(|e| SendError::Permanent(e.to_string()))?;
        let parse = |a: &str| {
            a.parse::<lettre::Address>()
                .map_err(|e| SendError::Permanent(format!("bad address {a:?}: {e}")))
        };
        let to = meta
            .to
            .iter()
            .map(|a| parse(a))
            .collect::<Result<Vec<_>, _>>()?;
        let envelope = Envelope::new(Some(parse(&meta.from)?), to)
            .map_err(|e| SendError::Permanent(format!("envelope: {e}")))?;
        smtp.send_raw(&envelope, &eml).map(|_| ()).map_err(|e| {
            if e.is_permanent() {
                SendError::Permanent(format!("rejected by the server: {e}"))
            } else if e.is_transient() {
                SendError::Transient(format!("rejected for now by the server: {e}"))
            } else {
                SendError::Transient(format!("cannot reach the server: {e}"))
            }
        })
    }
}

enum SendError {
    /// The server will never take it (5xx), or the message is broken.
    Permanent(String),
    /// The server is down or said "try later" (4xx).
    Transient(String),
}

fn smtp_transport(settings: &SmtpSettings) -> Result<lettre::SmtpTransport, NotifyError> {
    let fail = |reason: String| NotifyError::Smtp {
        host: settings.host.clone(),
        reason,
    };
    // Public roots (webpki-roots), plus the site's CA when configured; the host name is checked.
    let tls = || -> Result<TlsParameters, NotifyError> {
        let mut builder = TlsParameters::builder(settings.host.clone());
        if let Some(pem) = &settings.ca_pem {
            let cert = Certificate::from_pem(pem)
                .map_err(|e| fail(format!("notify.smtp.ca_file: {e}")))?;
            builder = builder.add_root_certificate(cert);
        }
        builder.build_rustls().map_err(|e| fail(e.to_string()))
    };
    let mut builder = lettre::SmtpTransport::builder_dangerous(&settings.host)
        .port(settings.port)
        .timeout(Some(settings.timeout));
    builder = match settings.security {
        Security::Starttls => builder.tls(Tls::Required(tls()?)),
        Security::Tls => builder.tls(Tls::Wrapper(tls()?)),
        Security::None => builder.tls(Tls::None),
    };
    if let (Some(user), Some(password)) = (&settings.username, &settings.password) {
        builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
    }
    Ok(builder.build())
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), NotifyError> {
    use std::io::Write;
    let mut file = fs::File::create(path).map_err(|e| NotifyError::io(path, e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| NotifyError::io(path, e))
}

/// Replaces `dir/meta.json` atomically.
fn write_meta(dir: &Path, meta: &Meta) -> Result<(), NotifyError> {
    let tmp = dir.join(".meta.json.tmp");
    let bytes = serde_json::to_vec_pretty(meta).map_err(|e| NotifyError::Outbox {
        path: tmp.clone(),
        reason: e.to_string(),
    })?;
    write_synced(&tmp, &bytes)?;
    let path = dir.join("meta.json");
    fs::rename(&tmp, &path).map_err(|e| NotifyError::io(&path, e))
}

/// Whether the ledger has the part of message `key` (on any day).
fn ledger_has(data: &Path, key: &str) -> bool {
    ledger_parts(data, key).next().is_some()
}

/// The ledger parts of message `key` (one, unless a resent message was recorded on two days).
fn ledger_parts(data: &Path, key: &str) -> impl Iterator<Item = PathBuf> {
    catalog::days(data, Table::Notifications)
        .into_iter()
        .map(move |day| catalog::part_path(data, Table::Notifications, day, key))
        .filter(|path| path.is_file())
}

/// Writes the message's ledger rows with `status` as part `<key>` of the day of `now`.
fn record(
    data: &Path,
    meta: &Meta,
    status: &str,
    sent_at: Option<DateTime<Utc>>,
    transport: &str,
    now: DateTime<Utc>,
) -> Result<(), NotifyError> {
    let rows: Vec<LedgerRow> = meta
        .rows
        .iter()
        .map(|r| LedgerRow {
            sent_at,
            status: status.to_string(),
            transport: transport.to_string(),
            ..r.clone()
        })
        .collect();
    let batch = super::ledger_batch(&rows)?;
    catalog::write_part(
        data,
        Table::Notifications,
        now.date_naive(),
        &meta.key,
        &[batch],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// With the file transport nothing leaves the machine: a message a dead run left in
    /// `sending/` is delivered (recorded as sent), not held in doubt for ever.
    #[test]
    fn the_file_transport_recovers_to_sent() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let outbox = Outbox::open(&dir.path().join("outbox")).unwrap();
        let now = DateTime::from_timestamp(1_795_300_000, 0).unwrap();
        let row = LedgerRow {
            key: "digest.alice.2026-11-22".into(),
            kind: "digest".into(),
            user: Some("alice".into()),
            address: "alice@example.org".into(),
            period: "2026-11-22".into(),
            job_id: Some("1".into()),
            finding: Some("timeout".into()),
            severity: Some("warning".into()),
            queued_at: now,
            sent_at: None,
            status: "queued".into(),
            transport: "file".into(),
        };
        let meta = Meta {
            key: row.key.clone(),
            from: "jobsight@example.org".into(),
            to: vec![row.address.clone()],
            subject: "s".into(),
            queued_at: now,
            attempts: 0,
            next_attempt: now,
            last_error: None,
            test: false,
            rows: vec![row.clone()],
        };
        assert!(
            outbox
                .enqueue(&meta, b"Subject: s\r\n\r\nbody\r\n")
                .unwrap()
        );
        // As a run killed right after it took the message leaves it.
        outbox.rename(&row.key, "queue", "sending").unwrap();
        let recovered = outbox.recover(&data, &Transport::File, now).unwrap();
        assert_eq!(recovered.sent, std::slice::from_ref(&row.key));
        assert!(recovered.in_doubt.is_empty());
        assert_eq!(outbox.state_of(&row.key), Some("sent"));
        assert!(ledger_has(&data, &row.key));
    }
}
