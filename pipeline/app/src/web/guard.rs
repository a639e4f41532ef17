//! What keeps the web interface safe whatever a browser or another site sends: the headers of
//! every response (a content security policy under which no script runs, no framing, no
//! sniffing, no referrer leaving the site), a CSRF token in every form, tied to the person and
//! to this server's random key, and a limit on requests per person per minute.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use hmac::{KeyInit, Mac};

/// The headers every response carries. The pages are one file each: their style is inline
/// (`'unsafe-inline'` for styles only) and their charts inline SVG; no page has or needs a
/// script, so none may run.
pub const SECURITY_HEADERS: [(&str, &str); 6] = [
    (
        "content-security-policy",
        "default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; \
         form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "same-origin"),
    ("cache-control", "no-store"),
    ("cross-origin-opener-policy", "same-origin"),
];

/// Adds [`SECURITY_HEADERS`] to a response's headers.
pub fn secure(headers: &mut HeaderMap) {
    for (name, value) in SECURITY_HEADERS {
        headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
}

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The CSRF tokens of this server: a keyed hash of the person's name under a key drawn at
/// start, so a token is worth nothing to anyone else, or after a restart.
pub struct Csrf {
    key: [u8; 32],
}

impl std::fmt::Debug for Csrf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Csrf { key: (secret) }")
    }
}

impl Csrf {
    /// A fresh random key from the kernel.
    pub fn new() -> std::io::Result<Csrf> {
        let mut key = [0u8; 32];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut key)?;
        Ok(Csrf { key })
    }

    fn mac(&self, person: &str) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.key).unwrap_or_else(|_| unreachable!());
        mac.update(b"jobsight-csrf\0");
        mac.update(person.as_bytes());
        mac
    }

    /// The token of `person`'s forms.
    pub fn token(&self, person: &str) -> String {
        self.mac(person)
            .finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Whether `token` is `person`'s (compared in constant time).
    pub fn check(&self, person: &str, token: &str) -> bool {
        let Some(bytes) = unhex(token) else {
            return false;
        };
        self.mac(person).verify_slice(&bytes).is_ok()
    }
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Whether a state-changing request came from another site, by the headers browsers set
/// (`Sec-Fetch-Site`, else `Origin` against `Host`): a second wall behind the token.
pub fn cross_site(headers: &HeaderMap) -> bool {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = get("sec-fetch-site") {
        return !matches!(site, "same-origin" | "none");
    }
    match (get("origin"), get("host")) {
        (Some(origin), Some(host)) => {
            origin.split_once("://").map(|(_, h)| h) != Some(host) || origin == "null"
        }
        _ => false,
    }
}

/// Requests per person (or address) per minute.
#[derive(Debug)]
pub struct RateLimit {
    per_minute: u64,
    counts: Mutex<HashMap<String, (u64, u64)>>,
}

impl RateLimit {
    pub fn new(per_minute: u64) -> RateLimit {
        RateLimit {
            per_minute,
            counts: Mutex::new(HashMap::new()),
        }
    }

    /// Counts a request of `who` in the minute `minute`; whether it is within the limit.
    pub fn allow(&self, who: &str, minute: u64) -> bool {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if counts.len() > 100_000 {
            counts.retain(|_, (m, _)| *m == minute);
        }
        let entry = counts.entry(who.to_string()).or_insert((minute, 0));
        if entry.0 != minute {
            *entry = (minute, 0);
        }
        entry.1 += 1;
        entry.1 <= self.per_minute
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_one_persons_on_one_server() {
        let csrf = Csrf::new().unwrap();
        let alice = csrf.token("alice");
        assert_eq!(alice.len(), 64);
        assert!(csrf.check("alice", &alice));
        assert!(!csrf.check("bob", &alice));
        assert!(!csrf.check("alice", &alice[..63]));
        assert!(!csrf.check("alice", ""));
        assert!(!Csrf::new().unwrap().check("alice", &alice), "another key");
    }

    #[test]
    fn other_sites_are_told_apart() {
        let mut h = HeaderMap::new();
        assert!(!cross_site(&h), "a client that says nothing");
        h.insert("sec-fetch-site", HeaderValue::from_static("cross-site"));
        assert!(cross_site(&h));
        h.insert("sec-fetch-site", HeaderValue::from_static("same-origin"));
        assert!(!cross_site(&h));
        let mut h = HeaderMap::new();
        h.insert("host", HeaderValue::from_static("jobs.example.org"));
        h.insert("origin", HeaderValue::from_static("https://evil.example"));
        assert!(cross_site(&h));
        h.insert(
            "origin",
            HeaderValue::from_static("https://jobs.example.org"),
        );
        assert!(!cross_site(&h));
    }

    #[test]
    fn the_limit_counts_per_minute() {
        let limit = RateLimit::new(2);
        assert!(limit.allow("alice", 1));
        assert!(limit.allow("alice", 1));
        assert!(!limit.allow("alice", 1));
        assert!(limit.allow("bob", 1));
        assert!(limit.allow("alice", 2));
    }
}
