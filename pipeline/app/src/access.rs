//! Who may read which jobs: a person sees their own jobs, an admin everyone's. This is the one
//! rule that `jobsight job` and `jobsight jobs` apply on a site where users run jobsight
//! themselves (a login node), and that the web interface applies to the people it serves.
//!
//! The person is the operating system's user running the command: the process's real uid, named
//! through the system's user database (`/usr/bin/id`, so LDAP and SSSD users are named as `ls`
//! names them, and as Slurm's accounting names a job's owner). Nothing the person can set (an
//! environment variable, an option) says who they are. Admins are named in `[access]`: by user
//! name, or by a group they belong to; root is always one.
//!
//! The rule is on when `[access] own_jobs_only = true`, and always when jobsight runs with
//! privileges its user does not have (installed setgid to a group that alone may read the
//! warehouse: the way a user gets `jobsight job` without reading everyone's jobs). A privileged
//! run reads only the system's configuration file (no `--config`), lets only admins choose
//! another warehouse or spool, and runs for a person who is not an admin only the commands that
//! show their own jobs ([`Access::allows_command`]).

use std::path::Path;
use std::process::Command;

pub mod trusted;

use serde::Deserialize;

/// `[access]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// Show a person only their own jobs unless they are an admin.
    pub own_jobs_only: Option<bool>,
    /// User names that see every job.
    pub admins: Option<Vec<String>>,
    /// Groups whose members see every job.
    pub admin_groups: Option<Vec<String>>,
}

impl Options {
    pub fn resolve(self) -> Settings {
        Settings {
            own_jobs_only: self.own_jobs_only.unwrap_or(false),
            admins: self.admins.unwrap_or_default(),
            admin_groups: self.admin_groups.unwrap_or_default(),
        }
    }
}

/// `[access]` resolved.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    pub own_jobs_only: bool,
    pub admins: Vec<String>,
    pub admin_groups: Vec<String>,
}

/// Why the person running jobsight could not be named, or may not do what they asked.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error(
        "cannot tell who is running jobsight ({0}); jobs are shown only to a person it can name"
    )]
    Unknown(String),
    #[error(
        "jobsight runs with the privileges of its installation here, so it reads only the \
         system's configuration file: {0} is not accepted"
    )]
    PrivilegedOverride(&'static str),
    #[error(
        "{person} is not an admin ([access] admins or admin_groups), and this command reads \
         every user's jobs; `jobsight job JOBID` and `jobsight jobs` show your own"
    )]
    AdminsOnly { person: String },
    #[error(
        "job {job} belongs to another user; only admins ([access] admins or admin_groups) see \
         other users' jobs"
    )]
    NotYours { job: String },
    #[error(
        "the jobs of {user} are not yours; only admins ([access] admins or admin_groups) see \
         other users' jobs"
    )]
    NotYourList { user: String },
    #[error("jobsight runs with the privileges of its installation here and refuses {path}: {why}")]
    Untrusted { path: String, why: String },
}

/// The person a command runs for.
#[derive(Debug, Clone, PartialEq)]
pub struct Person {
    pub name: String,
    pub admin: bool,
}

impl Person {
    /// Whether this person may see a job of `owner`.
    pub fn may_see(&self, owner: &str) -> bool {
        self.admin || self.name == owner
    }
}

/// The process's user and group ids (real and effective), from `/proc/self/status`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ids {
    pub real_uid: u32,
    pub effective_uid: u32,
    pub real_gid: u32,
    pub effective_gid: u32,
}

impl Ids {
    /// This process's ids.
    pub fn current() -> Result<Ids, AccessError> {
        let status = std::fs::read_to_string("/proc/self/status")
            .map_err(|e| AccessError::Unknown(format!("/proc/self/status: {e}")))?;
        Ids::parse(&status).ok_or_else(|| {
            AccessError::Unknown("/proc/self/status has no Uid and Gid lines".into())
        })
    }

    /// The `Uid:` and `Gid:` lines of a `/proc/<pid>/status` (real, effective, saved, fs).
    pub fn parse(status: &str) -> Option<Ids> {
        let pair = |key: &str| -> Option<(u32, u32)> {
            let line = status.lines().find(|l| l.starts_with(key))?;
            let mut ids = line[key.len()..].split_whitespace();
            Some((ids.next()?.parse().ok()?, ids.next()?.parse().ok()?))
        };
        let (real_uid, effective_uid) = pair("Uid:")?;
        let (real_gid, effective_gid) = pair("Gid:")?;
        Some(Ids {
            real_uid,
            effective_uid,
            real_gid,
            effective_gid,
        })
    }

    /// Whether the process has privileges its user does not (setuid or setgid).
    pub fn privileged(&self) -> bool {
        self.real_uid != self.effective_uid || self.real_gid != self.effective_gid
    }
}

/// A user's name and groups from the system's user database.
pub trait Directory {
    fn name_and_groups(&self, uid: u32) -> Result<(String, Vec<String>), AccessError>;
}

/// The system's user database through `/usr/bin/id` (an absolute path: `PATH` is the person's).
#[derive(Debug)]
pub struct SystemDirectory;

impl Directory for SystemDirectory {
    fn name_and_groups(&self, uid: u32) -> Result<(String, Vec<String>), AccessError> {
        let id = |flags: &str| -> Result<String, AccessError> {
            let out = Command::new(Path::new("/usr/bin/id"))
                .arg(flags)
                .arg(uid.to_string())
                .env_clear()
                .output()
                .map_err(|e| AccessError::Unknown(format!("/usr/bin/id: {e}")))?;
            if !out.status.success() {
                return Err(AccessError::Unknown(format!(
                    "uid {uid}: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )));
            }
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        };
        let name = id("-nu")?;
        let groups = id("-Gn")?.split_whitespace().map(str::to_string).collect();
        Ok((name, groups))
    }
}

/// The rule as one command applies it: `None` when it is off (everyone sees every job).
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    pub person: Option<Person>,
    pub privileged: bool,
}

impl Access {
    /// The rule for this run: who runs it (when the rule is on) and whether the process is
    /// privileged.
    pub fn of(
        settings: &Settings,
        ids: Ids,
        directory: &dyn Directory,
    ) -> Result<Access, AccessError> {
        let privileged = ids.privileged();
        if !settings.own_jobs_only && !privileged {
            return Ok(Access {
                person: None,
                privileged,
            });
        }
        let (name, groups) = directory.name_and_groups(ids.real_uid)?;
        let admin = ids.real_uid == 0
            || settings.admins.contains(&name)
            || groups.iter().any(|g| settings.admin_groups.contains(g));
        Ok(Access {
            person: Some(Person { name, admin }),
            privileged,
        })
    }

    /// Whether this run may show a job of `owner`.
    pub fn check_job(&self, job_id: &str, owner: &str) -> Result<(), AccessError> {
        match &self.person {
            Some(person) if !person.may_see(owner) => Err(AccessError::NotYours {
                job: jobsight_base::text::printable(job_id),
            }),
            _ => Ok(()),
        }
    }

    /// The user whose jobs `jobsight jobs` lists: the one asked for, which a person who is not
    /// an admin may only leave out or name as themselves.
    pub fn jobs_of(&self, asked: Option<&str>) -> Result<Option<String>, AccessError> {
        match &self.person {
            Some(person) if !person.admin => match asked {
                Some(other) if other != person.name => Err(AccessError::NotYourList {
                    user: jobsight_base::text::printable(other),
                }),
                _ => Ok(Some(person.name.clone())),
            },
            _ => Ok(asked.map(str::to_string)),
        }
    }

    /// Whether this run's person may run a command: with the rule on, a person who is not an
    /// admin only the commands that show their own jobs (`shows_own_jobs`: `job`, `jobs`, `running`; clap
    /// answers `--help` before this).
    pub fn allows_command(&self, shows_own_jobs: bool) -> Result<(), AccessError> {
        match &self.person {
            Some(person) if !person.admin && !shows_own_jobs => Err(AccessError::AdminsOnly {
                person: person.name.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// Refuses, in a privileged run, the options that would point it at another configuration
    /// (anyone) or another warehouse or spool (anyone but an admin).
    pub fn check_overrides(&self, config: bool, data_or_spool: bool) -> Result<(), AccessError> {
        if !self.privileged {
            return Ok(());
        }
        if config {
            return Err(AccessError::PrivilegedOverride(
                "--config (or JOBSIGHT_CONFIG)",
            ));
        }
        let admin = self.person.as_ref().is_some_and(|p| p.admin);
        if data_or_spool && !admin {
            return Err(AccessError::PrivilegedOverride(
                "--data or --spool (or JOBSIGHT_DATA, JOBSIGHT_SPOOL) from a person who is not an admin",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory of two people: alice (uid 1000, in `physics`) and root.
    struct Fixed;

    impl Directory for Fixed {
        fn name_and_groups(&self, uid: u32) -> Result<(String, Vec<String>), AccessError> {
            match uid {
                0 => Ok(("root".into(), vec!["root".into()])),
                1000 => Ok(("alice".into(), vec!["alice".into(), "physics".into()])),
                1001 => Ok(("bob".into(), vec!["bob".into(), "hpcadmin".into()])),
                _ => Err(AccessError::Unknown(format!("uid {uid}: no such user"))),
            }
        }
    }

    fn ids(uid: u32, euid: u32, gid: u32, egid: u32) -> Ids {
        Ids {
            real_uid: uid,
            effective_uid: euid,
            real_gid: gid,
            effective_gid: egid,
        }
    }

    fn on() -> Settings {
        Settings {
            own_jobs_only: true,
            admins: vec!["carol".into()],
            admin_groups: vec!["hpcadmin".into()],
        }
    }

    #[test]
    fn the_ids_come_from_the_status_file() {
        let status = "Name:\tjobsight\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t998\t998\t998\n";
        let got = Ids::parse(status).unwrap();
        assert_eq!(got, ids(1000, 1000, 1000, 998));
        assert!(got.privileged(), "setgid");
        assert_eq!(Ids::parse("Name:\tx\n"), None);
        let me = Ids::current().unwrap();
        assert!(!me.privileged(), "the tests run unprivileged");
    }

    #[test]
    fn off_by_default_everyone_sees_everything() {
        let a = Access::of(&Settings::default(), ids(1000, 1000, 1000, 1000), &Fixed).unwrap();
        assert_eq!(a.person, None);
        a.check_job("42", "bob").unwrap();
        assert_eq!(a.jobs_of(Some("bob")).unwrap().as_deref(), Some("bob"));
        assert_eq!(a.jobs_of(None).unwrap(), None);
        a.allows_command(false).unwrap();
        a.check_overrides(true, true).unwrap();
    }

    #[test]
    fn a_person_sees_their_own_jobs_and_an_admin_everyones() {
        let alice = Access::of(&on(), ids(1000, 1000, 1000, 1000), &Fixed).unwrap();
        alice.check_job("41", "alice").unwrap();
        let refused = alice.check_job("42", "bob").unwrap_err().to_string();
        assert!(
            refused.contains("job 42 belongs to another user"),
            "{refused}"
        );
        assert_eq!(alice.jobs_of(None).unwrap().as_deref(), Some("alice"));
        assert_eq!(
            alice.jobs_of(Some("alice")).unwrap().as_deref(),
            Some("alice")
        );
        assert!(alice.jobs_of(Some("bob")).is_err());
        alice.allows_command(true).unwrap();
        let sql = alice.allows_command(false).unwrap_err().to_string();
        assert!(sql.contains("alice is not an admin"), "{sql}");
        // bob is an admin by his group, root always.
        for uid in [1001, 0] {
            let admin = Access::of(&on(), ids(uid, uid, uid, uid), &Fixed).unwrap();
            admin.check_job("41", "alice").unwrap();
            assert_eq!(admin.jobs_of(None).unwrap(), None, "everyone's");
            admin.allows_command(false).unwrap();
        }
    }

    #[test]
    fn a_privileged_run_applies_the_rule_and_takes_no_other_configuration() {
        // setgid jobsight with the rule off in the file: on all the same.
        let alice = Access::of(&Settings::default(), ids(1000, 1000, 1000, 998), &Fixed).unwrap();
        assert!(alice.check_job("42", "bob").is_err());
        assert!(alice.check_overrides(true, false).is_err(), "--config");
        assert!(alice.check_overrides(false, true).is_err(), "--data");
        alice.check_overrides(false, false).unwrap();
        let bob = Access::of(&on(), ids(1001, 1001, 1001, 998), &Fixed).unwrap();
        assert!(
            bob.check_overrides(true, false).is_err(),
            "not even an admin"
        );
        bob.check_overrides(false, true).unwrap();
    }

    #[test]
    fn a_person_who_cannot_be_named_sees_nothing() {
        let err = Access::of(&on(), ids(4242, 4242, 4242, 4242), &Fixed).unwrap_err();
        assert!(err.to_string().contains("cannot tell who"), "{err}");
        // The system's own database names the user running the tests.
        let me = Ids::current().unwrap();
        let (name, _) = SystemDirectory.name_and_groups(me.real_uid).unwrap();
        assert!(!name.is_empty());
    }
}
