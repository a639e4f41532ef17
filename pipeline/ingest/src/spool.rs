//! The pipeline's side of the spool: claim records that the epilog hook enqueued, and report the
//! state of the queue.
//!
//! Input: `new/` in a spool directory written by `jobsight-epilog` (layout in
//! [`slurm_hooks::spool_dir`]). Output: records moved to `cur/` and returned to the caller, one per
//! job run. Claiming is a rename from `new/` to `cur/` (`renameat2` with `RENAME_NOREPLACE`), which
//! exactly one process can win, so concurrent claimers never get the same record. Every name is
//! resolved relative to the spool's opened subdirectories ([`jobsight_base::safe_fs::Dir`]), never through
//! a link. Then the record is parsed:
//! - unreadable or malformed records move to `failed/` beside a `.reason` file saying why;
//! - a second record of a job run that was already claimed (both hooks configured, one `Epilog`
//!   record per node, a retried hook) moves to `duplicate/` beside a `.reason` naming the first.
//!
//! The job run is identified by (cluster, job id, restart count); the first record claimed for it
//! creates a marker under `seen/` with `O_EXCL`, which again only one process can do. Nothing is
//! ever deleted: every record ends in exactly one of `new/`, `cur/`, `done/` (its job is in the
//! warehouse), `failed/`, `duplicate/`.
//!
//! Failure: an I/O error on the spool itself (missing directory, permissions) stops the claim with
//! an error naming the path; a bad record never does.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Serialize;
use slurm_hooks::record::{JobKey, SpoolRecord};
use slurm_hooks::spool_dir::{
    self, CUR, DONE, DUPLICATE, FAILED, NEW, RECORD_EXT, SEEN, SUBDIRS, TMP,
};

use jobsight_base::safe_fs::{self, Dir, Links, Refusal};

/// The hook's own bound (one definition): the hook never writes a larger record.
pub const MAX_RECORD_BYTES: u64 = slurm_hooks::record::MAX_RECORD_BYTES as u64;

/// Suffix of the note beside a record in `cur/` that is waiting for a retry.
pub const PENDING_NOTE_EXT: &str = ".pending";

/// Why a claimed record is still in `cur/`, and when to try again.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct PendingNote {
    pub attempts: u32,
    pub first_attempt: DateTime<Utc>,
    pub last_attempt: DateTime<Utc>,
    pub next_attempt: DateTime<Utc>,
    pub reason: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error(
        "{path} is not a spool directory: {reason} (create one with `jobsight spool init --spool {path}`)"
    )]
    NotASpool { path: PathBuf, reason: String },
    #[error("cannot create {path}: {source}")]
    Create { path: PathBuf, source: io::Error },
    #[error("cannot list {path}: {source}")]
    List { path: PathBuf, source: io::Error },
    #[error("cannot move {from} to {to}: {source}")]
    Move {
        from: PathBuf,
        to: PathBuf,
        source: io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
}

/// A spool directory that exists and has every subdirectory, each held open: every file name is
/// resolved relative to an opened directory ([`Dir`]), so a link planted in place of a
/// subdirectory after the spool was opened redirects nothing.
#[derive(Debug, Clone)]
pub struct Spool {
    root: Dir,
    tmp: Dir,
    new: Dir,
    cur: Dir,
    failed: Dir,
    duplicate: Dir,
    seen: Dir,
}

/// A record this process claimed: it now lives at `path` in `cur/`.
#[derive(Debug, Clone, Serialize)]
pub struct Claimed {
    pub path: PathBuf,
    pub record: SpoolRecord,
}

/// A record that was set aside, and why.
#[derive(Debug, Clone, Serialize)]
pub struct SetAside {
    pub path: PathBuf,
    pub reason: String,
}

/// What one claim did.
#[derive(Debug, Default, Serialize)]
pub struct ClaimReport {
    pub claimed: Vec<Claimed>,
    pub duplicates: Vec<SetAside>,
    pub failed: Vec<SetAside>,
    /// Records another process claimed between our listing and our rename.
    pub lost_races: usize,
}

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct StateCounts {
    pub tmp: usize,
    pub new: usize,
    pub cur: usize,
    pub failed: usize,
    pub duplicate: usize,
    pub done: usize,
}

#[derive(Debug, Serialize)]
pub struct OldestPending {
    pub file: String,
    pub enqueued_at: DateTime<Utc>,
    pub age_seconds: i64,
}

#[derive(Debug, Serialize)]
pub struct SpoolStatus {
    pub spool: PathBuf,
    pub counts: StateCounts,
    pub oldest_pending: Option<OldestPending>,
}

impl Spool {
    /// Creates the spool and its subdirectories (existing ones and their contents are kept) and
    /// sets every one of them to `mode` (e.g. 0o2770 with a group shared by slurm and the
    /// pipeline). The mode is set with chmod, so the umask does not reduce it and setgid sticks.
    pub fn init(root: &Path, mode: u32) -> Result<Spool, SpoolError> {
        let create = |path: &Path, source| SpoolError::Create {
            path: path.to_path_buf(),
            source,
        };
        let dir = Dir::create_all(root).map_err(|e| create(root, e))?;
        dir.set_mode(mode).map_err(|e| create(root, e))?;
        for sub in SUBDIRS.iter().chain([&DONE]) {
            // Created and chmod-ed through the opened spool: a link planted in a subdirectory's
            // place (this runs as root from ops/install-epilog.sh) is refused, its target's mode
            // never changed.
            dir.sub_or_create(sub, 0o700)
                .and_then(|d| d.set_mode(mode))
                .map_err(|e| create(&dir.join(sub), e))?;
        }
        Spool::open(root)
    }

    /// Opens an existing spool, checking that every subdirectory is a real directory.
    pub fn open(root: &Path) -> Result<Spool, SpoolError> {
        let not_a_spool = |reason: String| SpoolError::NotASpool {
            path: root.to_path_buf(),
            reason,
        };
        let root_dir = Dir::open(root, Links::Follow).map_err(|e| {
            not_a_spool(if e.kind() == io::ErrorKind::NotFound {
                "it does not exist".into()
            } else {
                e.to_string()
            })
        })?;
        let sub = |name: &str| {
            root_dir.sub(name).map_err(|e| {
                not_a_spool(match safe_fs::refusal(&e) {
                    Some(Refusal::Link) => format!("{name}/ is a symlink"),
                    Some(_) => format!("{name}/ is not a directory"),
                    None => format!("{name}/: {e}"),
                })
            })
        };
        Ok(Spool {
            tmp: sub(TMP)?,
            new: sub(NEW)?,
            cur: sub(CUR)?,
            failed: sub(FAILED)?,
            duplicate: sub(DUPLICATE)?,
            seen: sub(SEEN)?,
            root: root_dir,
        })
    }

    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The opened subdirectory of a state (`done/` is created on first use, so spools made
    /// before it existed keep working).
    fn state(&self, sub: &str) -> Result<Dir, SpoolError> {
        Ok(match sub {
            TMP => self.tmp.clone(),
            NEW => self.new.clone(),
            CUR => self.cur.clone(),
            FAILED => self.failed.clone(),
            DUPLICATE => self.duplicate.clone(),
            SEEN => self.seen.clone(),
            _ => self
                .root
                .sub_or_create(sub, 0o770)
                .map_err(|source| SpoolError::Create {
                    path: self.root.join(sub),
                    source,
                })?,
        })
    }

    /// Names of the entries of `sub/` that are records or stray files (not `.reason` notes, not
    /// hidden files), sorted: record names start with the enqueue time, so this is arrival order.
    /// Names are kept as raw bytes: a stray file with a non-UTF-8 name is still claimed (and
    /// quarantined), never left behind.
    fn entries(&self, sub: &str) -> Result<Vec<OsString>, SpoolError> {
        let dir = self.state(sub)?;
        let mut names = Vec::new();
        for name in dir.names().map_err(|source| SpoolError::List {
            path: dir.path().to_path_buf(),
            source,
        })? {
            let bytes = name.as_bytes();
            // Only what jobsight itself puts beside records is left out, and only where it puts
            // it: anything else in new/ (a hidden file, a stray `.reason`) is claimed and
            // quarantined with a reason, never silently ignored.
            let ours = match sub {
                CUR => bytes.ends_with(PENDING_NOTE_EXT.as_bytes()) || safe_fs::is_temporary(bytes),
                FAILED | DUPLICATE => bytes.ends_with(b".reason"),
                _ => false,
            };
            if !ours {
                names.push(name);
            }
        }
        names.sort_unstable();
        Ok(names)
    }

    /// Claims up to `limit` records from `new/` (all when `None`), oldest first.
    pub fn claim(&self, limit: Option<usize>) -> Result<ClaimReport, SpoolError> {
        let mut report = ClaimReport::default();
        let names = self.entries(NEW)?;
        for name in names {
            if limit.is_some_and(|l| report.claimed.len() >= l) {
                break;
            }
            // Only claimers write into cur/, always under the name a record had in new/, and names
            // are unique by construction. A name already in cur/ therefore means someone put a
            // record back into new/ by hand: quarantine it rather than replace the other (the
            // rename never replaces, in one step).
            match self.new.rename_no_replace(&name, &self.cur, &name) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    report.lost_races += 1;
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let reason = "a record with the same name is already in cur/".to_string();
                    match self.set_aside_from(&self.new, &name, FAILED, &reason) {
                        Ok(moved) => report.failed.push(SetAside {
                            path: moved,
                            reason,
                        }),
                        Err(SpoolError::Move { source, .. })
                            if source.kind() == io::ErrorKind::NotFound =>
                        {
                            report.lost_races += 1;
                        }
                        Err(e) => return Err(e),
                    }
                    continue;
                }
                Err(source) => {
                    return Err(SpoolError::Move {
                        from: self.new.join(&name),
                        to: self.cur.join(&name),
                        source,
                    });
                }
            }
            let path = self.cur.join(&name);
            let record = match read_record(&self.cur, &name) {
                Ok(record) => record,
                Err(reason) => {
                    let moved = self.set_aside(&name, FAILED, &reason)?;
                    report.failed.push(SetAside {
                        path: moved,
                        reason,
                    });
                    continue;
                }
            };
            match self.mark_seen(&record.key(), &name)? {
                None => report.claimed.push(Claimed { path, record }),
                Some(first) => {
                    let key = record.key();
                    let reason = format!(
                        "job {} of cluster {} (restart {}) was already claimed from record {}",
                        key.job_id,
                        key.cluster,
                        key.restart_count,
                        first.to_string_lossy()
                    );
                    let moved = self.set_aside(&name, DUPLICATE, &reason)?;
                    report.duplicates.push(SetAside {
                        path: moved,
                        reason,
                    });
                }
            }
        }
        Ok(report)
    }

    /// Records that `name` is the record of the job run `key`. Returns `None` when it is (now or
    /// from an earlier, interrupted claim of the same file) and `Some(first)` when another record
    /// got there first.
    fn mark_seen(&self, key: &JobKey, name: &OsStr) -> Result<Option<OsString>, SpoolError> {
        // Sharded by job id so no directory grows past 10,000 entries per cluster.
        let cluster = spool_dir::file_name_part(&key.cluster, 64);
        let shard = (key.job_id / 10_000).to_string();
        let dir = self
            .seen
            .sub_or_create(&cluster, 0o770)
            .and_then(|d| d.sub_or_create(&shard, 0o770))
            .map_err(|source| SpoolError::Create {
                path: self.seen.join(&cluster).join(&shard),
                source,
            })?;
        let marker = format!("{}.{}", key.job_id, key.restart_count);
        match dir.create_new(&marker, 0o640) {
            Ok(mut file) => {
                file.write_all(name.as_bytes())
                    .map_err(|source| SpoolError::Write {
                        path: dir.join(&marker),
                        source,
                    })?;
                Ok(None)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let mut first = Vec::new();
                dir.open_regular(&marker)
                    .and_then(|f| f.take(MAX_MARKER_BYTES).read_to_end(&mut first))
                    .map_err(|source| SpoolError::Read {
                        path: dir.join(&marker),
                        source,
                    })?;
                Ok(if first == name.as_bytes() {
                    None
                } else {
                    Some(OsString::from_vec(first))
                })
            }
            Err(source) => Err(SpoolError::Create {
                path: dir.join(&marker),
                source,
            }),
        }
    }

    /// Moves `cur/name` into `state/` and writes a `.reason` file beside it.
    fn set_aside(&self, name: &OsStr, state: &str, reason: &str) -> Result<PathBuf, SpoolError> {
        self.set_aside_from(&self.cur, name, state, reason)
    }

    /// Moves `name` from `from` into `state/` (with a numbered suffix if that name is taken, so
    /// nothing already there is replaced) and writes `<new name>.reason`.
    fn set_aside_from(
        &self,
        from: &Dir,
        name: &OsStr,
        state: &str,
        reason: &str,
    ) -> Result<PathBuf, SpoolError> {
        let to_dir = self.state(state)?;
        // A file named like a reason file would be taken for one beside the records: it gets a
        // suffix, so that it is listed and counted as what it is.
        let base = if name.as_bytes().ends_with(b".reason") {
            let mut b = name.to_os_string();
            b.push(".set-aside");
            b
        } else {
            name.to_os_string()
        };
        let mut target = base.clone();
        let mut n = 1;
        loop {
            match from.rename_no_replace(name, &to_dir, &target) {
                Ok(()) => break,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    target = base.clone();
                    target.push(format!(".{n}"));
                    n += 1;
                }
                Err(source) => {
                    return Err(SpoolError::Move {
                        from: from.join(name),
                        to: to_dir.join(&target),
                        source,
                    });
                }
            }
        }
        let mut reason_name = target.clone();
        reason_name.push(".reason");
        // Whatever sits at the reason's name was not written by jobsight for this record (the
        // record's name was free): a planted link or file is removed (unlink never follows a
        // link), and the reason created where nothing is, so no write goes through a link.
        let _ = to_dir.remove(&reason_name);
        to_dir
            .create_new(&reason_name, 0o644)
            // Escaped: an admin reads it with cat, and a record's bytes must not drive the terminal.
            .and_then(|mut f| {
                f.write_all(format!("{}\n", jobsight_base::text::printable(reason)).as_bytes())
            })
            .map_err(|source| SpoolError::Write {
                path: to_dir.join(&reason_name),
                source,
            })?;
        Ok(to_dir.join(&target))
    }

    /// The records in `failed/` (unreadable, or given up on after the deadline) with the reason
    /// written beside each, for the admins' report: (file name, reason), in name order. A
    /// reason file is read as a regular file only (never through a link) and at most 4 KiB.
    pub fn failed(&self) -> Result<Vec<(String, String)>, SpoolError> {
        let mut out = Vec::new();
        for name in self.entries(FAILED)? {
            let mut reason_name = name.clone();
            reason_name.push(".reason");
            let mut reason = String::new();
            // No link followed, no FIFO waited on: only a regular file is read.
            if let Ok(file) = self.failed.open_regular(&reason_name) {
                let _ = file.take(4096).read_to_string(&mut reason);
            }
            let reason = match reason.trim() {
                "" => "(no reason recorded)".to_string(),
                r => r.to_string(),
            };
            out.push((name.to_string_lossy().into_owned(), reason));
        }
        Ok(out)
    }

    /// Removes the hidden temporaries of pending notes in `cur/` that a killed ingest left
    /// ([`safe_fs::remove_stale_temporaries`]). Returns how many.
    pub fn remove_stale_temporaries(&self) -> usize {
        safe_fs::remove_stale_temporaries(&self.cur)
    }

    /// Names of the records in `cur/` (claimed, not finished), oldest first.
    pub fn claimed_names(&self) -> Result<Vec<OsString>, SpoolError> {
        self.entries(CUR)
    }

    /// Reads the record `cur/name` (no symlinks, bounded size); the error is a reason to
    /// quarantine it.
    pub fn read_claimed(&self, name: &OsStr) -> Result<SpoolRecord, String> {
        read_record(&self.cur, name)
    }

    fn note_name(name: &OsStr) -> OsString {
        let mut note = name.to_os_string();
        note.push(PENDING_NOTE_EXT);
        note
    }

    /// The pending note of `cur/name`, if any. A note that cannot be read or parsed counts as
    /// none: the record is simply tried again.
    pub fn pending_note(&self, name: &OsStr) -> Option<PendingNote> {
        let mut bytes = Vec::new();
        self.cur
            .open_regular(Self::note_name(name))
            .and_then(|f| f.take(MAX_RECORD_BYTES).read_to_end(&mut bytes))
            .ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Writes (atomically replaces) the pending note of `cur/name`.
    pub fn write_pending_note(&self, name: &OsStr, note: &PendingNote) -> Result<(), SpoolError> {
        let note_name = Self::note_name(name);
        let json = serde_json::to_vec_pretty(note).unwrap_or_default();
        let error = |path, source| SpoolError::Write { path, source };
        safe_fs::write_replacing(&self.cur, &note_name, error, |mut file, tmp| {
            file.write_all(&json)
                .map_err(|e| error(tmp.to_path_buf(), e))?;
            Ok(file)
        })
        .map(|_| ())
    }

    fn remove_pending_note(&self, name: &OsStr) -> Result<(), SpoolError> {
        let note_name = Self::note_name(name);
        match self.cur.remove(&note_name) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(SpoolError::Write {
                path: self.cur.join(&note_name),
                source: e,
            }),
            _ => Ok(()),
        }
    }

    /// Moves `cur/name` to `done/` (the job is in the warehouse) and drops its pending note.
    pub fn finish(&self, name: &OsStr) -> Result<PathBuf, SpoolError> {
        let done = self.state(DONE)?;
        // Names are unique, but never replace: a clash means a record was put back by hand.
        match self.cur.rename_no_replace(name, &done, name) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return self.quarantine(
                    name,
                    "its job is already in the warehouse from a record of the same name in done/",
                );
            }
            Err(source) => {
                return Err(SpoolError::Move {
                    from: self.cur.join(name),
                    to: done.join(name),
                    source,
                });
            }
        }
        self.remove_pending_note(name)?;
        Ok(done.join(name))
    }

    /// Moves `cur/name` to `failed/` with its reason and drops its pending note. To retry it, an
    /// admin moves it back into `new/`.
    pub fn quarantine(&self, name: &OsStr, reason: &str) -> Result<PathBuf, SpoolError> {
        let moved = self.set_aside(name, FAILED, reason)?;
        self.remove_pending_note(name)?;
        Ok(moved)
    }

    /// Counts per state and the oldest record waiting in `new/`, as of `now`.
    pub fn status(&self, now: DateTime<Utc>) -> Result<SpoolStatus, SpoolError> {
        let new = self.entries(NEW)?;
        let oldest_pending = new.first().map(|file| {
            let enqueued_at = enqueue_time_from_name(&file.to_string_lossy())
                .or_else(|| Some(DateTime::<Utc>::from(self.new.modified(file).ok()?)))
                .unwrap_or(now);
            OldestPending {
                file: file.to_string_lossy().into_owned(),
                enqueued_at,
                age_seconds: (now - enqueued_at).num_seconds(),
            }
        });
        Ok(SpoolStatus {
            spool: self.root().to_path_buf(),
            counts: StateCounts {
                tmp: self.entries(TMP)?.len(),
                new: new.len(),
                cur: self.entries(CUR)?.len(),
                failed: self.entries(FAILED)?.len(),
                duplicate: self.entries(DUPLICATE)?.len(),
                done: match self.root.exists(DONE) {
                    Ok(true) => self.entries(DONE)?.len(),
                    _ => 0,
                },
            },
            oldest_pending,
        })
    }
}

/// The most a `seen/` marker holds: one record's name.
const MAX_MARKER_BYTES: u64 = 4096;

/// The enqueue time encoded at the start of a record's name (nanoseconds since the epoch).
fn enqueue_time_from_name(name: &str) -> Option<DateTime<Utc>> {
    let nanos: i64 = name.split('.').next()?.parse().ok()?;
    Some(DateTime::from_timestamp_nanos(nanos))
}

/// Reads and parses the record `name` of `dir` without following symlinks and without reading
/// more than [`MAX_RECORD_BYTES`]. The error is the reason written beside a quarantined record.
fn read_record(dir: &Dir, name: &OsStr) -> Result<SpoolRecord, String> {
    if Path::new(name).extension().and_then(|e| e.to_str()) != Some(RECORD_EXT) {
        return Err(format!("not a .{RECORD_EXT} record file"));
    }
    // A link, a FIFO (which would block the claim for ever), a device: refused, not opened.
    let file = dir.open_regular(name).map_err(|e| {
        if safe_fs::refusal(&e).is_some() {
            format!("cannot open: {e} (symlinks are refused)")
        } else {
            format!("cannot open: {e}")
        }
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_RECORD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_RECORD_BYTES {
        return Err(format!("larger than {MAX_RECORD_BYTES} bytes"));
    }
    SpoolRecord::from_json(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_hooks::spool_dir::enqueue;
    use std::fs;

    fn record(job: u64, restart: u32, hook: &str) -> SpoolRecord {
        let json = format!(
            r#"{{"schema_version":1,"cluster":"c","job_id":{job},"array_job_id":null,"array_task_id":null,
            "restart_count":{restart},"user":"u","uid":1,"gid":1,"group":null,"account":null,"partition":"p",
            "job_name":null,"nodes":null,"num_nodes":1,"cpus_per_node":null,"exit_code":null,
            "derived_exit_code":null,"work_dir":null,"hook":"{hook}","host":"h",
            "enqueued_at":"2026-11-22T04:00:00Z","warnings":[]}}"#
        );
        SpoolRecord::from_json(json.as_bytes()).unwrap()
    }

    fn counts(spool: &Spool) -> StateCounts {
        spool.status(jobsight_base::now()).unwrap().counts
    }

    fn spool() -> (tempfile::TempDir, Spool) {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::init(&dir.path().join("spool"), 0o755).unwrap();
        (dir, spool)
    }

    /// What a hostile or broken writer may leave in `new/`.
    #[derive(Debug, Clone)]
    enum Planted {
        Record { job: u64, restart: u32 },
        Bytes(Vec<u8>),
        LinkToVictim,
        LinkToDir,
        Dangling,
        Fifo,
        Dir,
    }

    fn planted() -> impl proptest::strategy::Strategy<Value = (Vec<u8>, Planted)> {
        use proptest::prelude::*;
        let name = prop_oneof![
            // Named like a record, or anything a file name can be.
            (0u64..5, any::<bool>()).prop_map(|(n, reason)| {
                format!("{n:020}.c.{n}.json{}", if reason { ".reason" } else { "" }).into_bytes()
            }),
            proptest::collection::vec(any::<u8>(), 1..40),
        ]
        .prop_map(|mut n| {
            n.retain(|&b| b != b'/' && b != 0);
            if n.is_empty() || n == b"." || n == b".." {
                n = b"x".to_vec();
            }
            n
        });
        let what = prop_oneof![
            (0u64..4, 0u32..2).prop_map(|(job, restart)| Planted::Record { job, restart }),
            proptest::collection::vec(any::<u8>(), 0..64).prop_map(Planted::Bytes),
            Just(Planted::LinkToVictim),
            Just(Planted::LinkToDir),
            Just(Planted::Dangling),
            Just(Planted::Fifo),
            Just(Planted::Dir),
        ];
        (name, what)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Whatever is in `new/` (records, garbage, links, FIFOs, directories, any names): the
        /// claim returns, empties `new/`, loses nothing (every entry ends in exactly one of
        /// `cur/`, `failed/`, `duplicate/`, each set-aside one with a reason), and writes
        /// nothing outside the spool.
        #[test]
        fn the_claim_keeps_everything_and_writes_nothing_outside(
            entries in proptest::collection::vec(planted(), 0..12)
        ) {
            use std::os::unix::ffi::OsStrExt;
            let (dir, spool) = spool();
            let victim = dir.path().join("victim");
            fs::write(&victim, "keep me").unwrap();
            let victim_dir = dir.path().join("victim-dir");
            fs::create_dir(&victim_dir).unwrap();
            let new = spool.root().join(NEW);
            let mut made = 0;
            for (name, what) in entries {
                let path = new.join(OsStr::from_bytes(&name));
                if fs::symlink_metadata(&path).is_ok() {
                    continue;
                }
                made += 1;
                match what {
                    Planted::Record { job, restart } => {
                        let json = serde_json::to_vec(&record(job, restart, "epilog_slurmctld")).unwrap();
                        fs::write(&path, json).unwrap();
                    }
                    Planted::Bytes(bytes) => fs::write(&path, bytes).unwrap(),
                    Planted::LinkToVictim => std::os::unix::fs::symlink(&victim, &path).unwrap(),
                    Planted::LinkToDir => std::os::unix::fs::symlink(&victim_dir, &path).unwrap(),
                    Planted::Dangling => std::os::unix::fs::symlink(dir.path().join("none"), &path).unwrap(),
                    Planted::Fifo => jobsight_base::test_support::mkfifo(&path),
                    Planted::Dir => fs::create_dir(&path).unwrap(),
                }
            }
            let report = spool.claim(None).unwrap();
            proptest::prop_assert_eq!(fs::read_dir(&new).unwrap().count(), 0);
            let kept = |sub: &str| -> Vec<OsString> {
                fs::read_dir(spool.root().join(sub)).unwrap()
                    .map(|e| e.unwrap().file_name())
                    .filter(|n| !n.as_bytes().ends_with(b".reason"))
                    .collect()
            };
            let (cur, failed, duplicate) = (kept(CUR), kept(FAILED), kept(DUPLICATE));
            proptest::prop_assert_eq!(cur.len() + failed.len() + duplicate.len(), made);
            proptest::prop_assert_eq!(report.claimed.len(), cur.len());
            proptest::prop_assert_eq!(report.failed.len(), failed.len());
            proptest::prop_assert_eq!(report.duplicates.len(), duplicate.len());
            for (sub, names) in [(FAILED, &failed), (DUPLICATE, &duplicate)] {
                for name in names {
                    let mut reason = name.clone();
                    reason.push(".reason");
                    let reason = spool.root().join(sub).join(reason);
                    let meta = fs::symlink_metadata(&reason).unwrap();
                    proptest::prop_assert!(meta.is_file() && meta.len() > 0, "{}", reason.display());
                }
            }
            proptest::prop_assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me");
            proptest::prop_assert_eq!(fs::read_dir(&victim_dir).unwrap().count(), 0);
            let outside: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
            proptest::prop_assert_eq!(outside.len(), 3, "{:?}", outside);
        }
    }

    /// Hostile spool contents: a FIFO named like a record is quarantined instead of blocking the
    /// claim for ever; a link planted where a `.reason` file will go is replaced, its target never
    /// written; `spool init` refuses a link planted in a subdirectory's place and leaves the
    /// target's mode alone.
    #[test]
    fn fifos_and_planted_links_neither_block_nor_redirect() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, spool) = spool();
        let fifo = spool.root().join("new/00000000000000000009.f.json");
        jobsight_base::test_support::mkfifo(&fifo);
        let victim = dir.path().join("victim");
        fs::write(&victim, "keep me").unwrap();
        std::os::unix::fs::symlink(
            &victim,
            spool
                .root()
                .join("failed/00000000000000000009.f.json.reason"),
        )
        .unwrap();
        let report = spool.claim(None).unwrap();
        assert_eq!(report.failed.len(), 1);
        assert!(
            report.failed[0]
                .reason
                .contains("a FIFO, not a regular file"),
            "{:?}",
            report.failed
        );
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me");
        let reason = fs::read_to_string(
            spool
                .root()
                .join("failed/00000000000000000009.f.json.reason"),
        )
        .unwrap();
        assert!(reason.contains("a FIFO"), "{reason}");

        let target = dir.path().join("elsewhere");
        fs::create_dir(&target).unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o700)).unwrap();
        let root = dir.path().join("spool2");
        fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(&target, root.join("tmp")).unwrap();
        let e = Spool::init(&root, 0o777).unwrap_err().to_string();
        assert!(e.contains("tmp") && e.contains("not followed"), "{e}");
        assert_eq!(
            fs::metadata(&target).unwrap().permissions().mode() & 0o777,
            0o700
        );
    }

    /// Nothing in new/ is ignored: a hidden file and a stray `.reason` are claimed and quarantined
    /// like any other file that is not a record.
    #[test]
    fn hidden_and_reason_named_files_in_new_are_not_ignored() {
        let (_dir, spool) = spool();
        fs::write(spool.root().join("new/.x.json"), b"{}").unwrap();
        fs::write(spool.root().join("new/y.reason"), b"hello").unwrap();
        assert_eq!(counts(&spool).new, 2);
        let report = spool.claim(None).unwrap();
        assert_eq!(report.failed.len(), 2, "{:?}", report.failed);
        assert_eq!((counts(&spool).new, counts(&spool).failed), (0, 2));
    }

    #[test]
    fn claims_each_job_run_once_and_keeps_everything() {
        let (_dir, spool) = spool();
        enqueue(spool.root(), &record(1, 0, "epilog_slurmctld")).unwrap();
        enqueue(spool.root(), &record(1, 0, "epilog_slurmd")).unwrap();
        enqueue(spool.root(), &record(1, 1, "epilog_slurmctld")).unwrap(); // a requeued run
        enqueue(spool.root(), &record(2, 0, "epilog_slurmd")).unwrap();
        let report = spool.claim(None).unwrap();
        let jobs: Vec<(u64, Option<u32>)> = report
            .claimed
            .iter()
            .map(|c| (c.record.job_id, c.record.restart_count))
            .collect();
        assert_eq!(jobs, [(1, Some(0)), (1, Some(1)), (2, Some(0))]);
        assert_eq!(report.duplicates.len(), 1);
        assert!(
            report.duplicates[0].reason.contains("already claimed"),
            "{:?}",
            report.duplicates
        );

        // A duplicate arriving after the first claim is caught too.
        enqueue(spool.root(), &record(2, 0, "epilog_slurmctld")).unwrap();
        let report = spool.claim(None).unwrap();
        assert_eq!((report.claimed.len(), report.duplicates.len()), (0, 1));

        let status = spool.status(jobsight_base::now()).unwrap();
        assert_eq!(
            status.counts,
            StateCounts {
                tmp: 0,
                new: 0,
                cur: 3,
                failed: 0,
                duplicate: 2,
                done: 0
            }
        );
    }

    #[test]
    fn malformed_records_are_quarantined_with_a_reason() {
        let (_dir, spool) = spool();
        fs::write(
            spool.root().join("new/00000000000000000001.x.json"),
            b"{not json",
        )
        .unwrap();
        fs::write(
            spool.root().join("new/00000000000000000002.x.json"),
            br#"{"schema_version":9}"#,
        )
        .unwrap();
        fs::write(spool.root().join("new/stray.txt"), b"hello").unwrap();
        std::os::unix::fs::symlink(
            "/etc/passwd",
            spool.root().join("new/00000000000000000003.l.json"),
        )
        .unwrap();
        enqueue(spool.root(), &record(5, 0, "epilog_slurmctld")).unwrap();
        let report = spool.claim(None).unwrap();
        assert_eq!(report.claimed.len(), 1);
        let reasons: Vec<&str> = report.failed.iter().map(|f| f.reason.as_str()).collect();
        assert_eq!(reasons.len(), 4, "{reasons:?}");
        assert!(reasons[0].starts_with("not a spool record"), "{reasons:?}");
        assert!(
            reasons[1].contains("unsupported schema_version 9"),
            "{reasons:?}"
        );
        assert!(reasons[2].contains("symlinks are refused"), "{reasons:?}");
        assert!(reasons[3].contains("not a .json record"), "{reasons:?}");
        for f in &report.failed {
            let note = fs::read_to_string(format!("{}.reason", f.path.display())).unwrap();
            assert_eq!(note.trim_end(), f.reason);
        }
        assert_eq!(counts(&spool).failed, 4);
        // What the admins' digest lists: each record with its reason.
        let failed = spool.failed().unwrap();
        assert_eq!(failed.len(), 4);
        for f in &report.failed {
            let name = f.path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(failed.contains(&(name, f.reason.clone())), "{failed:?}");
        }
        // A reason file replaced by a link is not followed.
        let first = &report.failed[0].path;
        let reason = format!("{}.reason", first.display());
        fs::remove_file(&reason).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", &reason).unwrap();
        let name = first.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            spool
                .failed()
                .unwrap()
                .contains(&(name, "(no reason recorded)".into()))
        );
    }

    #[test]
    fn limit_and_oldest_pending() {
        let (_dir, spool) = spool();
        for job in 1..=5 {
            enqueue(spool.root(), &record(job, 0, "epilog_slurmctld")).unwrap();
        }
        let status = spool.status(jobsight_base::now()).unwrap();
        let oldest = status.oldest_pending.unwrap();
        assert!(oldest.file.contains(".c.1.0."), "{}", oldest.file);
        let report = spool.claim(Some(2)).unwrap();
        let jobs: Vec<u64> = report.claimed.iter().map(|c| c.record.job_id).collect();
        assert_eq!(jobs, [1, 2]);
        assert_eq!(counts(&spool).new, 3);
    }

    #[test]
    fn an_interrupted_claim_of_the_same_file_is_not_a_duplicate() {
        let (_dir, spool) = spool();
        let name = OsStr::new("00000000000000000001.c.1.0.json");
        let key = record(1, 0, "epilog_slurmd").key();
        assert_eq!(spool.mark_seen(&key, name).unwrap(), None);
        assert_eq!(spool.mark_seen(&key, name).unwrap(), None);
        assert_eq!(
            spool.mark_seen(&key, OsStr::new("other")).unwrap(),
            Some(name.to_os_string())
        );
    }

    #[test]
    fn odd_names_and_name_clashes_are_quarantined_not_lost() {
        let (_dir, spool) = spool();
        // A stray file whose name is not UTF-8.
        let odd = OsString::from_vec(b"stray-\xff.json".to_vec());
        fs::write(spool.root().join(NEW).join(&odd), b"x").unwrap();
        // A record put back into new/ by hand while its twin is still in cur/.
        let path = enqueue(spool.root(), &record(9, 0, "epilog_slurmctld"))
            .unwrap()
            .path;
        let name = path.file_name().unwrap().to_os_string();
        fs::copy(&path, spool.root().join(CUR).join(&name)).unwrap();
        let report = spool.claim(None).unwrap();
        assert_eq!(report.claimed.len(), 0);
        assert_eq!(report.failed.len(), 2, "{:?}", report.failed);
        assert!(
            report
                .failed
                .iter()
                .any(|f| f.reason.contains("same name is already in cur/"))
        );
        assert!(spool.root().join(FAILED).join(&odd).exists());
        assert!(
            spool.root().join(CUR).join(&name).exists(),
            "the record in cur/ is untouched"
        );
        // Quarantining the same name again keeps both copies.
        fs::write(spool.root().join(NEW).join(&odd), b"y").unwrap();
        let report = spool.claim(None).unwrap();
        assert!(
            report.failed[0].path.to_string_lossy().ends_with(".json.1"),
            "{:?}",
            report.failed
        );
        assert_eq!(counts(&spool).failed, 3);
    }

    #[test]
    fn init_sets_the_mode_despite_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::init(&dir.path().join("s"), 0o2770).unwrap();
        for sub in SUBDIRS {
            let mode = fs::metadata(spool.root().join(sub))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o7777, 0o2770, "{sub}");
        }
    }

    #[test]
    fn open_refuses_what_is_not_a_spool() {
        let dir = tempfile::tempdir().unwrap();
        let err = Spool::open(dir.path()).unwrap_err();
        assert!(
            err.to_string().contains("is not a spool directory"),
            "{err}"
        );
    }
}
