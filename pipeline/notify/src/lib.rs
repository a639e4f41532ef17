//! The notify stage: tells job owners what jobsight found about their jobs, and admins what needs
//! them, by email — one digest per user per period, never spam, never lost, never twice.
//!
//! Inputs: the `jobs`, `job_summary`, `findings` and `predictions` of the last
//! `notify.lookback_days` days ([`input`]), and the `notifications` ledger with the outbox (what
//! was already sent or is waiting). Outputs: messages in the outbox ([`outbox`]), delivered by
//! SMTP or left as `.eml` files, and one ledger part per message sent.
//!
//! A run is plan, then execute: [`prepare`] settles what a dead run left half-sent, reads, and
//! plans ([`plan::plan`], pure: who gets what and why everything else does not); the render crate
//! writes each message (the stage renders nothing a person reads and never calls what does);
//! [`send`] puts each message in the outbox under its idempotency key and delivers what is due.
//! `--dry-run` stops after planning and writing and changes nothing. Running it again in the same
//! period plans nothing new: every key is already in the outbox or the ledger.
//!
//! Failure: a template or configuration error stops the run before anything is queued; an SMTP
//! server that is down leaves messages queued, retried with backoff by later runs; a message
//! the server refuses for good goes to `failed/` and into the admins' digest.
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod draft;
pub mod input;
pub mod message;
pub mod outbox;
pub mod plan;
mod recipients;
pub mod running;

use recipients::recipients;
pub use recipients::{SiteFiles, address_of, check, load_site_files};

pub use draft::{Draft, Message, prepare, prepare_running, send};

use jobsight_base::choice::{Choice, Named};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc, Weekday};
use datafusion::arrow::array::RecordBatch;
use lettre::message::{Mailbox, MultiPart, header};

use jobsight_base::options::Invalid;
use jobsight_base::severity::Severity;
use jobsight_base::templates::TemplateError;
use jobsight_warehouse::catalog::CatalogError;
use jobsight_warehouse::query::QueryError;
use message::{Links, Rendered};
use outbox::{Outbox, Retry, Security, SmtpSettings, Transport};
use plan::{CriticalMode, JobReport, LedgerRow, Period, Planned, Policy};

#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("outbox entry {path}: {reason}")]
    Outbox { path: PathBuf, reason: String },
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("reading the warehouse: {0}")]
    Input(String),
    #[error("cannot start the query runtime: {0}")]
    Runtime(std::io::Error),
    #[error("{path}, line {line}: {reason}")]
    SiteFile {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("SMTP server {host}: {reason}")]
    Smtp { host: String, reason: String },
    #[error("notify run: {0}")]
    Draft(String),
    #[error("message {key}: {reason}")]
    Message { key: String, reason: String },
    #[error("cannot resend {key}: {reason}")]
    Resend { key: String, reason: String },
}

impl NotifyError {
    pub fn io(path: &Path, source: std::io::Error) -> NotifyError {
        NotifyError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// `[notify]` as written: every key optional.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    pub outbox: Option<PathBuf>,
    pub delivery: Option<DeliveryKind>,
    pub from: Option<String>,
    pub reply_to: Option<String>,
    pub admins: Option<Vec<String>>,
    pub recipient: Option<String>,
    pub recipients_file: Option<PathBuf>,
    pub report_url: Option<String>,
    pub user_url: Option<String>,
    pub period: Option<Period>,
    pub critical: Option<CriticalMode>,
    pub min_days_between: Option<u32>,
    pub workdays: Option<Vec<String>>,
    pub holidays_file: Option<PathBuf>,
    pub min_run_s: Option<u64>,
    pub min_severity: Option<String>,
    pub opt_out_users: Option<Vec<String>>,
    pub opt_out_accounts: Option<Vec<String>>,
    pub max_emails_per_user_per_day: Option<u32>,
    pub max_jobs_per_digest: Option<u32>,
    pub lookback_days: Option<u32>,
    pub test_mode: Option<bool>,
    pub admin_digest: Option<bool>,
    pub admin_immediate: Option<bool>,
    pub top_wasters: Option<u32>,
    pub templates: Option<PathBuf>,
    pub retry_after_s: Option<u64>,
    pub retry_max_s: Option<u64>,
    pub give_up_after_s: Option<u64>,
    pub smtp: Option<SmtpOptions>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryKind {
    /// `.eml` files in the outbox's `sent/` folder.
    File,
    /// An SMTP server (`[notify.smtp]`).
    Smtp,
}

impl Choice for DeliveryKind {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: DeliveryKind::File,
            name: "file",
            help: "`.eml` files in the outbox's `sent/` folder",
        },
        Named {
            value: DeliveryKind::Smtp,
            name: "smtp",
            help: "An SMTP server (`[notify.smtp]`)",
        },
    ];
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmtpOptions {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub security: Option<Security>,
    pub username: Option<String>,
    /// A file holding the password (first line); the config file never holds it.
    pub password_file: Option<PathBuf>,
    /// A PEM file of CA certificates to trust besides the public roots (a site's own CA).
    pub ca_file: Option<PathBuf>,
    pub timeout_s: Option<u64>,
}

/// Everything resolved and checked.
#[derive(Debug, Clone)]
pub struct Settings {
    pub outbox: PathBuf,
    pub transport: Transport,
    pub from: Mailbox,
    pub reply_to: Option<Mailbox>,
    pub admins: Vec<Mailbox>,
    /// With `{user}`.
    pub recipient: String,
    pub recipients_file: Option<PathBuf>,
    pub holidays_file: Option<PathBuf>,
    pub links: Links,
    pub policy: Policy,
    pub test_mode: bool,
    pub top_wasters: usize,
    /// The site's template folder (`notify.templates`), which the render crate
    /// loads; built-in templates when unset.
    pub templates: Option<PathBuf>,
    pub retry: Retry,
}

pub const DEFAULT_OUTBOX: &str = "./jobsight-outbox";

/// `notify.<key>` is invalid, and why.
fn invalid(key: &str, reason: String) -> Invalid {
    jobsight_base::options::invalid(&format!("notify.{key}"), reason)
}

/// The address `text` of `notify.<key>`.
fn mailbox(key: &str, text: &str) -> Result<Mailbox, Invalid> {
    text.parse::<Mailbox>()
        .map_err(|e| invalid(key, format!("{text:?} is not an email address: {e}")))
}

/// The number `notify.<key>`: `value`, or `default` when unset, if it lies in `range`.
fn within(
    key: &str,
    value: Option<u64>,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, Invalid> {
    jobsight_base::options::within(&format!("notify.{key}"), value, default, range)
}

impl Options {
    /// Fills in defaults and checks every value.
    pub fn resolve(self) -> Result<Settings, Invalid> {
        use jobsight_base::options::DAY_S;
        let from = mailbox(
            "from",
            self.from
                .as_deref()
                .unwrap_or("jobsight <jobsight@localhost>"),
        )?;
        let reply_to = self
            .reply_to
            .as_deref()
            .map(|r| mailbox("reply_to", r))
            .transpose()?;
        let admins = Self::resolve_admins(self.admins)?;
        let recipient = Self::resolve_recipient(self.recipient)?;
        let workdays = Self::resolve_workdays(self.workdays)?;
        let min_severity = Self::resolve_min_severity(self.min_severity.as_deref())?;
        let retry_after = within("retry_after_s", self.retry_after_s, 60, 1..=DAY_S)?;
        let retry_max = within("retry_max_s", self.retry_max_s, 3600, 1..=7 * DAY_S)?;
        if retry_max < retry_after {
            return Err(invalid(
                "retry_max_s",
                format!("{retry_max} is less than notify.retry_after_s ({retry_after})"),
            ));
        }
        let transport = Self::resolve_transport(self.delivery, self.smtp)?;
        let lookback = within(
            "lookback_days",
            self.lookback_days.map(u64::from),
            7,
            1..=366,
        )? as i64;
        let min_days_between = within(
            "min_days_between",
            self.min_days_between.map(u64::from),
            7,
            0..=366,
        )? as i64;
        let period = self.period.unwrap_or(Period::Daily);
        Ok(Settings {
            outbox: self.outbox.unwrap_or_else(|| PathBuf::from(DEFAULT_OUTBOX)),
            transport,
            from,
            reply_to,
            admins,
            recipient,
            recipients_file: self.recipients_file,
            holidays_file: self.holidays_file,
            links: Links {
                report_url: self.report_url.unwrap_or_else(|| {
                    "https://jobsight.example.org/{cluster}/jobs/{job_id}.html".into()
                }),
                user_url: self.user_url.unwrap_or_else(|| {
                    "https://jobsight.example.org/{cluster}/users/{user}.html".into()
                }),
                max_jobs_per_digest: within(
                    "max_jobs_per_digest",
                    self.max_jobs_per_digest.map(u64::from),
                    10,
                    1..=1000,
                )? as usize,
                min_days_between,
                lookback_days: lookback,
                period,
            },
            policy: Policy {
                period,
                critical: self.critical.unwrap_or(CriticalMode::Immediate),
                min_days_between,
                workdays,
                holidays: BTreeSet::new(),
                min_run_s: within("min_run_s", self.min_run_s, 600, 0..=30 * DAY_S)?,
                min_severity,
                opt_out_users: self.opt_out_users.unwrap_or_default().into_iter().collect(),
                opt_out_accounts: self
                    .opt_out_accounts
                    .unwrap_or_default()
                    .into_iter()
                    .collect(),
                max_emails_per_user_per_day: within(
                    "max_emails_per_user_per_day",
                    self.max_emails_per_user_per_day.map(u64::from),
                    3,
                    1..=100,
                )? as usize,
                lookback_days: lookback,
                admin_digest: self.admin_digest.unwrap_or(true),
                admin_immediate: self.admin_immediate.unwrap_or(false),
            },
            test_mode: self.test_mode.unwrap_or(false),
            top_wasters: within(
                "top_wasters",
                self.top_wasters.map(|t| t as u64),
                5,
                0..=1000,
            )? as usize,
            templates: self.templates,
            retry: Retry {
                initial: Duration::from_secs(retry_after),
                max: Duration::from_secs(retry_max),
                give_up_after: Duration::from_secs(within(
                    "give_up_after_s",
                    self.give_up_after_s,
                    2 * DAY_S,
                    60..=3650 * DAY_S,
                )?),
            },
        })
    }

    /// The admins' addresses (`root@localhost` when unset): at least one.
    fn resolve_admins(admins: Option<Vec<String>>) -> Result<Vec<Mailbox>, Invalid> {
        let admins = admins
            .unwrap_or_else(|| vec!["root@localhost".into()])
            .iter()
            .map(|a| mailbox("admins", a))
            .collect::<Result<Vec<_>, _>>()?;
        if admins.is_empty() {
            return Err(invalid("admins", "needs at least one address".into()));
        }
        Ok(admins)
    }

    /// The template of users' addresses (`{user}@localhost` when unset): it names `{user}`, and
    /// a user's name in it gives an address.
    fn resolve_recipient(recipient: Option<String>) -> Result<String, Invalid> {
        let recipient = recipient.unwrap_or_else(|| "{user}@localhost".into());
        if !recipient.contains("{user}") {
            return Err(invalid(
                "recipient",
                format!("{recipient:?} has no {{user}} placeholder"),
            ));
        }
        mailbox("recipient", &recipient.replace("{user}", "alice"))?;
        Ok(recipient)
    }

    /// The days digests go out on (Monday to Friday when unset).
    fn resolve_workdays(workdays: Option<Vec<String>>) -> Result<Vec<Weekday>, Invalid> {
        workdays
            .unwrap_or_else(|| {
                ["mon", "tue", "wed", "thu", "fri"]
                    .map(String::from)
                    .to_vec()
            })
            .iter()
            .map(|d| {
                d.parse::<Weekday>().map_err(|_| {
                    invalid("workdays", format!("{d:?} is not a weekday (mon ... sun)"))
                })
            })
            .collect()
    }

    /// The least severity mailed (`warning` when unset).
    fn resolve_min_severity(min_severity: Option<&str>) -> Result<Severity, Invalid> {
        let min_severity = match min_severity.unwrap_or("warning") {
            "info" => Severity::Info,
            "warning" => Severity::Warning,
            "critical" => Severity::Critical,
            other => {
                return Err(invalid(
                    "min_severity",
                    format!("{other:?} is not info, warning or critical"),
                ));
            }
        };
        Ok(min_severity)
    }

    /// How messages leave: `.eml` files, or the SMTP server of `[notify.smtp]` with its password
    /// and CA files read.
    fn resolve_transport(
        delivery: Option<DeliveryKind>,
        smtp: Option<SmtpOptions>,
    ) -> Result<Transport, Invalid> {
        let delivery = delivery.unwrap_or(DeliveryKind::File);
        let smtp = smtp.unwrap_or_default();
        // Checked whatever the delivery: a value out of range in the file is a mistake even
        // while the file outbox is used, and `check` says so before the switch to SMTP.
        let smtp_timeout = within("smtp.timeout_s", smtp.timeout_s, 30, 1..=600)?;
        let transport = match delivery {
            DeliveryKind::File => Transport::File,
            DeliveryKind::Smtp => {
                let security = smtp.security.unwrap_or(Security::Starttls);
                let password = smtp
                    .password_file
                    .as_ref()
                    .map(|file| {
                        std::fs::read_to_string(file)
                            .map(|text| text.lines().next().unwrap_or_default().to_string())
                            .map_err(|e| {
                                invalid("smtp.password_file", format!("{}: {e}", file.display()))
                            })
                    })
                    .transpose()?;
                let ca_pem = smtp
                    .ca_file
                    .as_ref()
                    .map(|file| {
                        std::fs::read(file).map_err(|e| {
                            invalid("smtp.ca_file", format!("{}: {e}", file.display()))
                        })
                    })
                    .transpose()?;
                if smtp.username.is_some() != password.is_some() {
                    return Err(invalid(
                        "smtp.username",
                        "username and password_file go together".into(),
                    ));
                }
                Transport::Smtp(SmtpSettings {
                    host: smtp.host.unwrap_or_else(|| "localhost".into()),
                    port: smtp.port.unwrap_or(match security {
                        Security::Starttls => 587,
                        Security::Tls => 465,
                        Security::None => 25,
                    }),
                    security,
                    username: smtp.username,
                    password,
                    ca_pem,
                    timeout: Duration::from_secs(smtp_timeout),
                })
            }
        };
        Ok(transport)
    }
}

/// Test-only crash points: with `JOBSIGHT_FAULT=<name>` the process aborts there, as a kill
/// would. This is how the tests kill a run between sending and recording, a moment no real
/// server can produce on demand.
pub fn fault_point(name: &str) {
    if std::env::var("JOBSIGHT_FAULT").is_ok_and(|f| f == name) {
        eprintln!("JOBSIGHT_FAULT={name}: aborting here on purpose");
        std::process::abort();
    }
}

/// The ledger rows as a `notifications` batch.
pub fn ledger_batch(rows: &[LedgerRow]) -> Result<RecordBatch, NotifyError> {
    LedgerRow::batch(rows)
        .map_err(|e| NotifyError::Input(format!("building the ledger batch: {e}")))
}

/// What a run is asked to do.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub now: DateTime<Utc>,
    /// Only the immediate critical emails (the per-job step); digests wait for a full run.
    pub critical_only: bool,
    /// Plan and render, change nothing.
    pub dry_run: bool,
    /// Jobs the pipeline gave up on (the spool's failed/ records: file, reason), for the admins'
    /// digest. The scheduler reads them from the spool; notify does not know the spool.
    pub given_up: Vec<(String, String)>,
}

/// One message as planned and rendered.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub planned: Planned,
    pub to: Vec<Mailbox>,
    pub rendered: Rendered,
    pub eml: Vec<u8>,
    /// `false` when the key was already in the outbox (a rerun).
    pub queued: bool,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Report {
    pub jobs_read: usize,
    pub recovered: outbox::Recovered,
    pub prepared: Vec<Prepared>,
    pub skipped: Vec<plan::Skipped>,
    /// Users whose messages could not be addressed.
    pub no_address: Vec<String>,
    pub delivered: outbox::Delivered,
    pub outbox: PathBuf,
}

/// Puts each prepared message in the outbox under its key, then delivers what is due. The
/// caller holds the outbox's lock.
fn queue_and_deliver(
    data: &Path,
    settings: &Settings,
    outbox: &Outbox,
    report: &mut Report,
    now: DateTime<Utc>,
    progress: &mut dyn FnMut(&str),
) -> Result<(), NotifyError> {
    progress("queueing");
    for prepared in &mut report.prepared {
        let meta = outbox::Meta {
            key: prepared.planned.key.clone(),
            from: settings.from.email.to_string(),
            to: prepared.to.iter().map(|m| m.email.to_string()).collect(),
            subject: prepared.rendered.subject.clone(),
            queued_at: now,
            attempts: 0,
            next_attempt: now,
            last_error: None,
            test: settings.test_mode,
            rows: ledger_rows(&prepared.planned, &prepared.to, now),
        };
        prepared.queued = outbox.enqueue(&meta, &prepared.eml)?;
    }
    report.delivered = outbox.deliver(
        data,
        &settings.transport,
        &settings.retry,
        now,
        &mut |i, sent| {
            if i % 20 == 0 {
                progress(&format!("delivering: {sent} sent"));
            }
        },
    )?;
    Ok(())
}

/// Messages in doubt or failed, for the admins' digest.
fn delivery_problems(outbox: &Outbox) -> Result<Vec<(String, String, String)>, NotifyError> {
    let mut problems = Vec::new();
    for state in ["in-doubt", "failed"] {
        for key in outbox.keys(state)? {
            let reason = match state {
                "in-doubt" => {
                    "the sending run died; not resent (jobsight notify --resend KEY)".into()
                }
                _ => outbox.meta(state, &key)?.last_error.unwrap_or_default(),
            };
            problems.push((key, state.to_string(), reason));
        }
    }
    Ok(problems)
}

/// The ledger rows a message records: one per job and finding, or one bare row.
fn ledger_rows(message: &Planned, to: &[Mailbox], now: DateTime<Utc>) -> Vec<LedgerRow> {
    let address = to
        .iter()
        .map(|m| m.email.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let row = |job: Option<&JobReport>, item: Option<&plan::Item>| LedgerRow {
        key: message.key.clone(),
        kind: message.kind.name().into(),
        user: message.user.clone(),
        address: address.clone(),
        period: message.period.clone(),
        job_id: job.map(|j| j.job_id.clone()),
        finding: item.map(|i| i.kind.clone()),
        severity: item.map(|i| i.severity.name().into()),
        queued_at: now,
        sent_at: None,
        status: "queued".into(),
        transport: String::new(),
    };
    let rows: Vec<LedgerRow> = message
        .jobs
        .iter()
        .flat_map(|j| j.items.iter().map(move |i| (j, i)))
        .map(|(j, i)| row(Some(j), Some(i)))
        .collect();
    if rows.is_empty() {
        vec![row(None, None)]
    } else {
        rows
    }
}

/// The MIME message: plain text and HTML alternatives, the key as Message-ID, marked as
/// automatic so that vacation responders stay quiet.
pub fn build_message(
    key: &str,
    rendered: &Rendered,
    settings: &Settings,
    to: &[Mailbox],
    now: DateTime<Utc>,
) -> Result<Vec<u8>, NotifyError> {
    let fail = |reason: String| NotifyError::Message {
        key: key.to_string(),
        reason,
    };
    let domain = settings.from.email.domain().to_string();
    let mut builder = lettre::Message::builder()
        .from(settings.from.clone())
        .subject(jobsight_base::text::one_line(&rendered.subject))
        .message_id(Some(format!("<{key}@{domain}>")))
        .date(std::time::SystemTime::from(now))
        .raw_header(header::HeaderValue::new(
            header::HeaderName::new_from_ascii_str("Auto-Submitted"),
            "auto-generated".into(),
        ));
    if let Some(reply_to) = &settings.reply_to {
        builder = builder.reply_to(reply_to.clone());
    }
    for mailbox in to {
        builder = builder.to(mailbox.clone());
    }
    let message = builder
        .multipart(MultiPart::alternative_plain_html(
            rendered.text.clone(),
            rendered.html.clone(),
        ))
        .map_err(|e| fail(e.to_string()))?;
    Ok(message.formatted())
}
