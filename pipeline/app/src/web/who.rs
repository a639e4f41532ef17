//! Who is asking, and what they may see. The person is the user name the site's reverse proxy
//! puts in `[web] user_header` after signing them in (Apache's or nginx's auth modules, Open
//! OnDemand, an OAuth2 proxy), believed only on a connection from one of `[web]
//! trusted_proxies`: from anywhere else the request is refused, header or not, so nobody can
//! name themselves. Nothing is served without a person.
//!
//! What they see comes from Slurm and `[access]`: their own jobs; the jobs of the accounts they
//! coordinate (Slurm's coordinators, read with `sacctmgr` and read again every
//! `coordinators_refresh_s`); everything, the system pages included, when they are an admin
//! (`[access] admins`, or a member of `[access] admin_groups` by the system's user database).
//! When Slurm cannot be asked, nobody is a coordinator until it can: a refusal is safe, a
//! stale grant is not.

use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::HeaderMap;

use super::settings::Settings;

/// The person a request is served for and what they may see.
#[derive(Debug, Clone, PartialEq)]
pub struct Viewer {
    pub name: String,
    pub admin: bool,
    /// The accounts whose jobs they see as a coordinator.
    pub coordinates: BTreeSet<String>,
}

/// What a job's visibility depends on.
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    pub user: &'a str,
    pub account: &'a str,
}

impl Viewer {
    /// Whether this person may see a job of `owner`.
    pub fn may_see(&self, owner: Owner<'_>) -> bool {
        self.admin || self.name == owner.user || self.coordinates.contains(owner.account)
    }

    /// Whether this person may see every job of `user` (their user page): themselves, admins.
    pub fn may_see_user(&self, user: &str) -> bool {
        self.admin || self.name == user
    }
}

/// Why a request has no person.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NotSignedIn {
    #[error(
        "this server answers only through the site's sign-in proxy; {0} is not one of [web] trusted_proxies"
    )]
    NotFromProxy(IpAddr),
    #[error("the sign-in proxy named no user (header {0}); sign in through the site's portal")]
    NoUser(String),
    #[error(
        "the sign-in proxy named a user that is no login name ({0}); it must pass the name Slurm knows"
    )]
    BadUser(String),
}

/// The user a request is for: the proxy's header, only from a trusted proxy.
pub fn signed_in(
    settings: &Settings,
    peer: IpAddr,
    headers: &HeaderMap,
) -> Result<String, NotSignedIn> {
    // An IPv4 proxy reached over an IPv6 socket arrives as ::ffff:a.b.c.d.
    let peer = match peer {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(peer, IpAddr::V4),
        v4 => v4,
    };
    if !settings.trusted_proxies.contains(&peer) {
        return Err(NotSignedIn::NotFromProxy(peer));
    }
    let mut values = headers.get_all(settings.user_header.as_str()).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        // None, or two: a client's own header passed on beside the proxy's is no name.
        return Err(NotSignedIn::NoUser(settings.user_header.clone()));
    };
    let name = value.to_str().unwrap_or("").trim();
    if name.is_empty() {
        return Err(NotSignedIn::NoUser(settings.user_header.clone()));
    }
    if !jobsight_base::text::is_login_name(name) {
        return Err(NotSignedIn::BadUser(jobsight_base::text::printable(
            &name.chars().take(64).collect::<String>(),
        )));
    }
    Ok(name.to_string())
}

/// Where coordinators and groups come from: Slurm and the system's user database, or a test's.
pub trait Directory: Send + Sync {
    /// Each account's coordinators.
    fn coordinators(&self) -> Result<HashMap<String, BTreeSet<String>>, String>;
    /// The groups `user` belongs to.
    fn groups(&self, user: &str) -> Result<Vec<String>, String>;
}

/// Slurm's `sacctmgr` and `/usr/bin/id`.
#[derive(Debug)]
pub struct SystemDirectory {
    pub sacctmgr: std::path::PathBuf,
}

impl Directory for SystemDirectory {
    fn coordinators(&self) -> Result<HashMap<String, BTreeSet<String>>, String> {
        let out = run(
            &self.sacctmgr,
            &[
                "--noheader",
                "--parsable2",
                "show",
                "account",
                "withcoord",
                "format=Account,Coordinators",
            ],
        )?;
        Ok(parse_coordinators(&out))
    }

    fn groups(&self, user: &str) -> Result<Vec<String>, String> {
        let out = run(Path::new("/usr/bin/id"), &["-Gn", "--", user])?;
        Ok(out.split_whitespace().map(str::to_string).collect())
    }
}

/// A command's standard output (no shell, killed after 20 s), or what went wrong.
fn run(program: &Path, args: &[&str]) -> Result<String, String> {
    jobsight_base::command::run_command(program, args, Duration::from_secs(20))
        .map(|out| String::from_utf8_lossy(&out).into_owned())
}

/// `sacctmgr -nP show account withcoord format=Account,Coordinators`: `account|a,b` per line.
/// Slurm keeps names in lower case; accounts are compared in lower case (as `jobs.account` may
/// be written otherwise), names exactly as the proxy passes them (as everywhere else).
pub fn parse_coordinators(text: &str) -> HashMap<String, BTreeSet<String>> {
    let mut out: HashMap<String, BTreeSet<String>> = HashMap::new();
    for line in text.lines() {
        let Some((account, names)) = line.split_once('|') else {
            continue;
        };
        let account = account.trim().to_ascii_lowercase();
        for name in names.split(',').map(str::trim) {
            if !account.is_empty() && jobsight_base::text::is_login_name(name) {
                out.entry(account.clone())
                    .or_default()
                    .insert(name.to_string());
            }
        }
    }
    out
}

/// What is known of everyone's roles, read again when it is older than the refresh.
pub struct Roles {
    directory: Box<dyn Directory>,
    admins: Vec<String>,
    admin_groups: Vec<String>,
    refresh: Duration,
    cached: Mutex<Cache>,
    /// Held while Slurm is asked: one `sacctmgr` at a time, and those who waited read its
    /// answer (round two: 30 first requests at once ran it 30 times).
    asking: Mutex<()>,
}

impl std::fmt::Debug for Roles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Roles")
            .field("admins", &self.admins)
            .field("admin_groups", &self.admin_groups)
            .field("refresh", &self.refresh)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Cache {
    /// Coordinator to accounts, and when it was read.
    coordinators: Option<(Instant, HashMap<String, BTreeSet<String>>)>,
    /// A user's groups, and when they were read.
    groups: HashMap<String, (Instant, Vec<String>)>,
}

impl Roles {
    pub fn new(
        directory: Box<dyn Directory>,
        access: &crate::access::Settings,
        refresh: Duration,
    ) -> Roles {
        Roles {
            directory,
            admins: access.admins.clone(),
            admin_groups: access.admin_groups.clone(),
            refresh,
            cached: Mutex::new(Cache::default()),
            asking: Mutex::new(()),
        }
    }

    /// The viewer `name` is. Blocking (it may run `sacctmgr`): call it off the async workers.
    pub fn viewer(&self, name: &str) -> Viewer {
        let admin = self.admins.iter().any(|a| a == name)
            || (!self.admin_groups.is_empty()
                && self
                    .groups(name)
                    .iter()
                    .any(|g| self.admin_groups.contains(g)));
        Viewer {
            name: name.to_string(),
            admin,
            coordinates: self.accounts_coordinated_by(name),
        }
    }

    fn fresh(&self, at: Instant) -> bool {
        at.elapsed() < self.refresh
    }

    fn groups(&self, name: &str) -> Vec<String> {
        {
            let cache = self.cached.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((at, groups)) = cache.groups.get(name)
                && self.fresh(*at)
            {
                return groups.clone();
            }
        }
        let groups = self.directory.groups(name).unwrap_or_else(|e| {
            eprintln!("jobsight serve: cannot read the groups of {name}: {e}");
            Vec::new()
        });
        let mut cache = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if cache.groups.len() > 100_000 {
            cache.groups.clear();
        }
        cache
            .groups
            .insert(name.to_string(), (Instant::now(), groups.clone()));
        groups
    }

    fn accounts_coordinated_by(&self, name: &str) -> BTreeSet<String> {
        let fresh = |cache: &Cache| {
            cache
                .coordinators
                .as_ref()
                .is_some_and(|(at, _)| self.fresh(*at))
        };
        let of = |cache: &Cache| {
            cache
                .coordinators
                .as_ref()
                .and_then(|(_, m)| m.get(name).cloned())
                .unwrap_or_default()
        };
        {
            let cache = self.cached.lock().unwrap_or_else(|e| e.into_inner());
            if fresh(&cache) {
                return of(&cache);
            }
        }
        // Slurm is asked without the cache's lock held: a slow sacctmgr must not stall the
        // requests that only read the cache. One asks; the others wait for its answer.
        let _asking = self.asking.lock().unwrap_or_else(|e| e.into_inner());
        {
            let cache = self.cached.lock().unwrap_or_else(|e| e.into_inner());
            if fresh(&cache) {
                return of(&cache);
            }
        }
        let by_account = self.directory.coordinators().unwrap_or_else(|e| {
            eprintln!(
                "jobsight serve: cannot read the accounts' coordinators (nobody is one until they can be read): {e}"
            );
            HashMap::new()
        });
        let mut by_person: HashMap<String, BTreeSet<String>> = HashMap::new();
        for (account, people) in by_account {
            for person in people {
                by_person.entry(person).or_default().insert(account.clone());
            }
        }
        let mut cache = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        cache.coordinators = Some((Instant::now(), by_person));
        of(&cache)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn settings() -> Settings {
        Settings {
            trusted_proxies: vec!["127.0.0.2".parse().unwrap()],
            ..Settings::default()
        }
    }

    fn headers(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append("x-forwarded-user", HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn only_a_trusted_proxy_names_the_user() {
        let s = settings();
        let proxy: IpAddr = "127.0.0.2".parse().unwrap();
        assert_eq!(signed_in(&s, proxy, &headers(&["alice"])).unwrap(), "alice");
        let mapped: IpAddr = "::ffff:127.0.0.2".parse().unwrap();
        assert_eq!(
            signed_in(&s, mapped, &headers(&["alice"])).unwrap(),
            "alice"
        );
        let other: IpAddr = "127.0.0.1".parse().unwrap();
        assert_eq!(
            signed_in(&s, other, &headers(&["alice"])),
            Err(NotSignedIn::NotFromProxy(other))
        );
        assert!(matches!(
            signed_in(&s, proxy, &headers(&[])),
            Err(NotSignedIn::NoUser(_))
        ));
        assert!(matches!(
            signed_in(&s, proxy, &headers(&["alice", "root"])),
            Err(NotSignedIn::NoUser(_))
        ));
        assert!(matches!(
            signed_in(&s, proxy, &headers(&["alice@example.org"])),
            Err(NotSignedIn::BadUser(_))
        ));
        assert!(matches!(
            signed_in(&s, proxy, &headers(&["../etc"])),
            Err(NotSignedIn::BadUser(_))
        ));
    }

    /// Slurm's answers for the tests, and how often `sacctmgr` was run.
    #[derive(Default)]
    struct Fixed {
        asked: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    }

    impl Directory for Fixed {
        fn coordinators(&self) -> Result<HashMap<String, BTreeSet<String>>, String> {
            self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            // As slow as a busy slurmdbd, so that the first requests overlap.
            std::thread::sleep(Duration::from_millis(200));
            Ok(parse_coordinators("physics|bob,frank\nchem|\nroot|\n"))
        }
        fn groups(&self, user: &str) -> Result<Vec<String>, String> {
            Ok(match user {
                "erin" => vec!["hpcadmin".into()],
                _ => vec![user.to_string()],
            })
        }
    }

    #[test]
    fn roles_come_from_slurm_and_access() {
        let access = crate::access::Settings {
            own_jobs_only: true,
            admins: vec!["carol".into()],
            admin_groups: vec!["hpcadmin".into()],
        };
        let roles = Roles::new(Box::<Fixed>::default(), &access, Duration::from_secs(60));
        let bob = roles.viewer("bob");
        assert!(!bob.admin);
        assert!(bob.may_see(Owner {
            user: "carol",
            account: "physics"
        }));
        assert!(!bob.may_see(Owner {
            user: "alice",
            account: "chem"
        }));
        assert!(
            !bob.may_see_user("carol"),
            "a coordinator sees jobs, not the user page"
        );
        assert!(roles.viewer("frank").coordinates.contains("physics"));
        assert!(roles.viewer("carol").admin);
        assert!(roles.viewer("erin").admin, "by group");
        let alice = roles.viewer("alice");
        assert!(alice.may_see(Owner {
            user: "alice",
            account: "chem"
        }));
        assert!(!alice.may_see(Owner {
            user: "bob",
            account: "physics"
        }));
    }

    /// Thirty first requests at once run `sacctmgr` once, and all get its answer.
    #[test]
    fn slurm_is_asked_once_however_many_ask_at_once() {
        let directory = Fixed::default();
        let asked = directory.asked.clone();
        let access = crate::access::Settings::default();
        let roles = Roles::new(Box::new(directory), &access, Duration::from_secs(60));
        std::thread::scope(|threads| {
            let viewers: Vec<_> = (0..30)
                .map(|_| threads.spawn(|| roles.viewer("frank")))
                .collect();
            for viewer in viewers {
                assert!(viewer.join().unwrap().coordinates.contains("physics"));
            }
        });
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
