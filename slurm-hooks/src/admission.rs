//! Who may hold a server's connection slots, and how refusals are logged: the servers
//! (`serve --pg`, `serve --http`, `jobsight-exporter`) count each address's connections that have not yet done what
//! a client does first (a login, a request's headers), so that one address cannot hold every
//! slot, and log a refused address once per [`QUIET`] with a count of what they did not log.
//! Round two: 32 silent sockets, reconnecting when dropped, were refused with 784,262 log lines
//! (80 MB) in 40 s.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Sockets per address that have not yet done what a client does first.
#[derive(Debug, Default)]
pub struct PerAddress {
    counts: Mutex<HashMap<IpAddr, usize>>,
}

/// One counted socket of an address; uncounted when dropped.
#[derive(Debug)]
pub struct Counted {
    of: Arc<PerAddress>,
    address: IpAddr,
}

impl PerAddress {
    /// Counts a socket of `address`, unless it already has `limit`.
    pub fn admit(self: &Arc<Self>, address: IpAddr, limit: usize) -> Option<Counted> {
        let mut counts = lock(&self.counts);
        let count = counts.entry(address).or_default();
        (*count < limit).then(|| {
            *count += 1;
            Counted {
                of: self.clone(),
                address,
            }
        })
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut counts = lock(&self.of.counts);
        if let Some(count) = counts.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.address);
            }
        }
    }
}

/// How long an address's refusals go unlogged after one is logged.
pub const QUIET: Duration = Duration::from_secs(10);

/// The addresses [`RefusalLog`] remembers before it forgets those quiet for [`QUIET`].
const REMEMBERED: usize = 65_536;

/// Refusals, logged once per address per [`QUIET`].
#[derive(Debug, Default)]
pub struct RefusalLog {
    /// Per address: when its last refusal was logged, and how many came after it unlogged.
    seen: Mutex<HashMap<IpAddr, (Instant, u64)>>,
}

impl RefusalLog {
    /// Logs `line` on stderr, `server` first, unless a refusal of `address` was logged less
    /// than [`QUIET`] ago; the next line logged says how many were not.
    pub fn note(&self, server: &str, address: IpAddr, line: impl FnOnce() -> String) {
        self.note_with(address, |line| eprintln!("{server}: {line}"), line);
    }

    /// [`RefusalLog::note`] with the line given to `log` instead of stderr.
    pub fn note_with(
        &self,
        address: IpAddr,
        log: impl FnOnce(&str),
        line: impl FnOnce() -> String,
    ) {
        let now = Instant::now();
        let mut seen = lock(&self.seen);
        if seen.len() >= REMEMBERED {
            seen.retain(|_, (logged, _)| now.duration_since(*logged) < QUIET);
        }
        let unlogged = match seen.get_mut(&address) {
            Some((logged, unlogged)) if now.duration_since(*logged) < QUIET => {
                *unlogged += 1;
                return;
            }
            Some((logged, unlogged)) => {
                *logged = now;
                std::mem::take(unlogged)
            }
            None => {
                seen.insert(address, (now, 0));
                0
            }
        };
        drop(seen);
        let line = line();
        if unlogged == 0 {
            log(&line);
        } else {
            log(&format!(
                "{line} ({unlogged} more refusals of this address in the {} s before were not \
                 logged)",
                QUIET.as_secs()
            ));
        }
    }

    /// Whether a refusal of `address` now would be logged (for the tests).
    #[cfg(test)]
    fn would_log(&self, address: IpAddr) -> bool {
        lock(&self.seen)
            .get(&address)
            .is_none_or(|(logged, _)| logged.elapsed() >= QUIET)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_counted_and_its_refusals_logged_once_per_interval() {
        let counts = Arc::new(PerAddress::default());
        let here: IpAddr = [127, 0, 0, 1].into();
        let there: IpAddr = [127, 0, 0, 2].into();
        let held: Vec<Counted> = (0..3).filter_map(|_| counts.admit(here, 3)).collect();
        assert_eq!(held.len(), 3);
        assert!(counts.admit(here, 3).is_none(), "the address is full");
        assert!(counts.admit(there, 3).is_some(), "another is not");
        drop(held);
        assert!(counts.admit(here, 3).is_some(), "freed when dropped");

        let log = RefusalLog::default();
        let mut built = 0;
        for _ in 0..1000 {
            log.note("test", here, || {
                built += 1;
                "refused".into()
            });
        }
        assert_eq!(built, 1, "one line for a thousand refusals");
        assert!(!log.would_log(here) && log.would_log(there));
        assert_eq!(lock(&log.seen)[&here].1, 999, "the rest counted");
    }
}
