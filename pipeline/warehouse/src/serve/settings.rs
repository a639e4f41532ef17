//! The `[serve]` section of the configuration: the options a site may set, their defaults, and
//! their checks, which make the [`Settings`] the server runs with. Nothing here reads the
//! password file; that happens when the server starts ([`super::Credentials::load`]).

use std::path::PathBuf;

use serde::Deserialize;

use jobsight_base::options::{Invalid, invalid, within};

/// The user name clients log in with when the configuration names none.
pub const DEFAULT_USER: &str = "jobsight";
/// Connections served at once; one more is closed at once (each holds a share of the
/// session's bounded memory while its query runs).
pub const DEFAULT_MAX_CONNECTIONS: usize = 32;
/// Seconds a client has from connecting to a finished login.
pub const DEFAULT_LOGIN_TIMEOUT_S: u64 = 10;
/// The longest a statement may run, whatever the client sets.
pub const DEFAULT_STATEMENT_TIMEOUT_S: u64 = 300;
/// Sockets one address may hold that have not logged in yet.
pub const DEFAULT_MAX_LOGINS_PER_ADDRESS: usize = 4;

/// The `[serve]` section of the configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// The user name clients log in with.
    pub pg_user: Option<String>,
    /// A file holding the password (one line), readable by its owner only.
    pub pg_password_file: Option<PathBuf>,
    pub max_connections: Option<usize>,
    pub pg_login_timeout_s: Option<u64>,
    pub max_logins_per_address: Option<usize>,
    pub statement_timeout_s: Option<u64>,
}

/// The server's settings, checked. The password file is read when the server starts, not here:
/// `jobsight check` and every other command work without it.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub pg_user: String,
    pub pg_password_file: Option<PathBuf>,
    pub max_connections: usize,
    /// From a client's connection to its finished login; then it is closed.
    pub login_timeout: std::time::Duration,
    pub max_logins_per_address: usize,
    /// The longest a statement runs; a client's `statement_timeout` may only shorten it.
    pub statement_timeout: std::time::Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Options::default()
            .resolve()
            .unwrap_or_else(|_| unreachable!("the defaults are valid"))
    }
}

impl Options {
    pub fn resolve(self) -> Result<Settings, Invalid> {
        let pg_user = self.pg_user.unwrap_or_else(|| DEFAULT_USER.into());
        let plain = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
        if pg_user.is_empty() || pg_user.len() > 63 || !pg_user.chars().all(plain) {
            return Err(invalid(
                "serve.pg_user",
                format!("{pg_user:?} is not 1 to 63 letters, digits, '_', '-' or '.'"),
            ));
        }
        let max_connections = within(
            "serve.max_connections",
            self.max_connections.map(|n| n as u64),
            DEFAULT_MAX_CONNECTIONS as u64,
            1..=10_000,
        )? as usize;
        let login_timeout_s = within(
            "serve.pg_login_timeout_s",
            self.pg_login_timeout_s,
            DEFAULT_LOGIN_TIMEOUT_S,
            1..=300,
        )?;
        let max_logins_per_address = within(
            "serve.max_logins_per_address",
            self.max_logins_per_address.map(|n| n as u64),
            DEFAULT_MAX_LOGINS_PER_ADDRESS as u64,
            1..=10_000,
        )? as usize;
        let statement_timeout_s = within(
            "serve.statement_timeout_s",
            self.statement_timeout_s,
            DEFAULT_STATEMENT_TIMEOUT_S,
            1..=86_400,
        )?;
        Ok(Settings {
            statement_timeout: std::time::Duration::from_secs(statement_timeout_s),
            pg_user,
            pg_password_file: self.pg_password_file,
            max_connections,
            login_timeout: std::time::Duration::from_secs(login_timeout_s),
            max_logins_per_address,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_names_are_checked() {
        let bad = Options {
            pg_user: Some("x; DROP".into()),
            ..Options::default()
        };
        assert!(bad.resolve().is_err());
        assert_eq!(Settings::default().pg_user, "jobsight");
    }
}
