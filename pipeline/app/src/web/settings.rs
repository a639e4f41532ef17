//! `[web]`: who the web interface trusts to say who is asking, where it learns an account's
//! coordinators, and the limits that keep one person from holding the server.

use std::net::IpAddr;
use std::path::PathBuf;

use serde::Deserialize;

use jobsight_base::options::{Invalid, invalid, within};

/// The header a proxy names the signed-in user in when the configuration names none: what
/// oauth2-proxy and Open OnDemand's Apache set, and what docs/web.md's Apache and nginx lines set.
pub const DEFAULT_USER_HEADER: &str = "X-Forwarded-User";
/// How long an account's coordinators, read from Slurm, are trusted before they are read again.
pub const DEFAULT_COORDINATORS_REFRESH_S: u64 = 300;
/// Requests one person (or one address, before sign-in) may make per minute.
pub const DEFAULT_REQUESTS_PER_MINUTE: u64 = 240;
/// The most jobs one list shows.
pub const DEFAULT_MAX_LIST_ROWS: u64 = 500;
/// The most days one list may span.
pub const DEFAULT_MAX_LIST_DAYS: u64 = 366;
/// The longest a page may take before the request is answered with an error.
pub const DEFAULT_REQUEST_TIMEOUT_S: u64 = 60;

/// `[web]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// The addresses of the reverse proxies whose user header is believed. A request from any
    /// other address is refused, header or not.
    pub trusted_proxies: Option<Vec<String>>,
    /// The header the proxy names the signed-in user in.
    pub user_header: Option<String>,
    /// `sacctmgr`, to read which accounts each person coordinates.
    pub sacctmgr: Option<PathBuf>,
    pub coordinators_refresh_s: Option<u64>,
    pub requests_per_minute: Option<u64>,
    pub max_list_rows: Option<u64>,
    pub max_list_days: Option<u64>,
    pub request_timeout_s: Option<u64>,
}

/// `[web]` resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub trusted_proxies: Vec<IpAddr>,
    /// Lower case, as HTTP header names compare.
    pub user_header: String,
    pub sacctmgr: PathBuf,
    pub coordinators_refresh_s: u64,
    pub requests_per_minute: u64,
    pub max_list_rows: usize,
    pub max_list_days: u64,
    pub request_timeout_s: u64,
    /// The running DAG's snapshot, which `/running` shows (`[running] snapshot`; set by
    /// `serve`, not read from `[web]`).
    pub running_snapshot: Option<PathBuf>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            trusted_proxies: Vec::new(),
            user_header: DEFAULT_USER_HEADER.to_ascii_lowercase(),
            sacctmgr: PathBuf::from("sacctmgr"),
            coordinators_refresh_s: DEFAULT_COORDINATORS_REFRESH_S,
            requests_per_minute: DEFAULT_REQUESTS_PER_MINUTE,
            max_list_rows: DEFAULT_MAX_LIST_ROWS as usize,
            max_list_days: DEFAULT_MAX_LIST_DAYS,
            request_timeout_s: DEFAULT_REQUEST_TIMEOUT_S,
            running_snapshot: None,
        }
    }
}

impl Options {
    pub fn resolve(self) -> Result<Settings, Invalid> {
        let d = Settings::default();
        let trusted_proxies = self
            .trusted_proxies
            .unwrap_or_default()
            .iter()
            .map(|a| {
                // An IPv4 address written as IPv6 (::ffff:a.b.c.d) is the IPv4 address, as the
                // peers are compared.
                a.trim()
                    .parse::<IpAddr>()
                    .map(|ip| match ip {
                        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
                        v4 => v4,
                    })
                    .map_err(|_| {
                        invalid(
                            "web.trusted_proxies",
                            format!("{a:?} is not an IP address (one address per proxy)"),
                        )
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let user_header = match self.user_header {
            None => d.user_header,
            Some(h) if is_header_name(&h) => h.to_ascii_lowercase(),
            Some(h) => {
                return Err(invalid(
                    "web.user_header",
                    format!("{h:?} is not an HTTP header name"),
                ));
            }
        };
        Ok(Settings {
            trusted_proxies,
            user_header,
            sacctmgr: self.sacctmgr.unwrap_or(d.sacctmgr),
            coordinators_refresh_s: within(
                "web.coordinators_refresh_s",
                self.coordinators_refresh_s,
                d.coordinators_refresh_s,
                1..=86_400,
            )?,
            requests_per_minute: within(
                "web.requests_per_minute",
                self.requests_per_minute,
                d.requests_per_minute,
                1..=100_000,
            )?,
            max_list_rows: within(
                "web.max_list_rows",
                self.max_list_rows,
                DEFAULT_MAX_LIST_ROWS,
                1..=10_000,
            )? as usize,
            max_list_days: within(
                "web.max_list_days",
                self.max_list_days,
                d.max_list_days,
                1..=3_660,
            )?,
            request_timeout_s: within(
                "web.request_timeout_s",
                self.request_timeout_s,
                d.request_timeout_s,
                1..=3_600,
            )?,
            running_snapshot: None,
        })
    }
}

/// Whether `name` is an HTTP header name (RFC 9110's token characters).
fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_trust_no_proxy() {
        let s = Options::default().resolve().unwrap();
        assert!(s.trusted_proxies.is_empty());
        assert_eq!(s.user_header, "x-forwarded-user");
    }

    #[test]
    fn bad_values_name_their_key() {
        let e = Options {
            trusted_proxies: Some(vec!["10.0.0.0/8".into()]),
            ..Options::default()
        }
        .resolve()
        .unwrap_err();
        assert_eq!(e.key, "web.trusted_proxies");
        let e = Options {
            user_header: Some("X User".into()),
            ..Options::default()
        }
        .resolve()
        .unwrap_err();
        assert_eq!(e.key, "web.user_header");
        let s = Options {
            trusted_proxies: Some(vec!["127.0.0.2".into(), "::1".into()]),
            user_header: Some("X-Remote-User".into()),
            ..Options::default()
        }
        .resolve()
        .unwrap();
        assert_eq!(s.trusted_proxies.len(), 2);
        assert_eq!(s.user_header, "x-remote-user");
    }
}
