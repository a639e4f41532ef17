//! The spool directory shared by the hook (writer) and the pipeline (reader), and atomic enqueue.
//!
//! Layout (maildir-like): `tmp/` holds records being written, `new/` records waiting to be claimed,
//! `cur/` claimed records, `failed/` records that could not be read (each with a `.reason` file),
//! `duplicate/` further records of a job already claimed (with a `.reason`), `seen/` one marker
//! per claimed job, and `done/` records whose job is in the warehouse (made by the pipeline on
//! first use). The hook only ever touches `tmp/` and `new/`.
//!
//! [`enqueue`] opens `tmp/` and `new/` (refusing links in their place), writes the record under
//! `tmp/` with `O_CREAT|O_EXCL|O_NOFOLLOW` (which never follows a link and never reuses a name),
//! fsyncs it, hard-links it into `new/` (which fails rather than replace an existing file), removes
//! the `tmp/` name and fsyncs `new/`, every name relative to the opened directories. A reader therefore sees a whole
//! record or none, a crash leaves at worst a stray file in `tmp/`, and no record overwrites another.
//! `tmp/` and `new/` must be real directories, not symlinks.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::record::SpoolRecord;
use crate::safe_fs::{Dir, Links, Refusal};
use crate::text::Text;

/// Where the hook writes when neither `--spool` nor `JOBSIGHT_SPOOL` says otherwise.
pub const DEFAULT_SPOOL: &str = "/var/spool/jobsight";
pub const TMP: &str = "tmp";
pub const NEW: &str = "new";
pub const CUR: &str = "cur";
pub const FAILED: &str = "failed";
pub const DUPLICATE: &str = "duplicate";
pub const SEEN: &str = "seen";
/// Where the ingest step puts a record once its job is in the warehouse. Not in [`SUBDIRS`]:
/// it is created on first use, so spools made before it existed keep working.
pub const DONE: &str = "done";
/// Every subdirectory a spool must have, in the order a spool is created.
pub const SUBDIRS: [&str; 6] = [TMP, NEW, CUR, FAILED, DUPLICATE, SEEN];
/// File extension of a record.
pub const RECORD_EXT: &str = "json";

/// Why a record could not be enqueued. Each variant names the path involved.
#[derive(Debug, thiserror::Error)]
pub enum EnqueueError {
    #[error(
        "spool directory {path} is missing or not a directory (create it with `jobsight spool init --spool {path}`)"
    )]
    NotADirectory { path: PathBuf },
    #[error("spool directory {path} is a symlink; refusing to follow it")]
    Symlink { path: PathBuf },
    #[error("cannot inspect {path}: {source}")]
    Stat { path: PathBuf, source: io::Error },
    #[error("cannot create {path}: {source}")]
    Create { path: PathBuf, source: io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot move {from} to {to}: {source}")]
    Link {
        from: PathBuf,
        to: PathBuf,
        source: io::Error,
    },
    #[error("cannot serialise the record of job {job_id}: {source}")]
    Serialise {
        job_id: u64,
        source: serde_json::Error,
    },
}

/// Opens the spool's subdirectory `sub`, refusing a link in its place.
fn real_dir(spool: &Dir, sub: &str) -> Result<Dir, EnqueueError> {
    let path = spool.join(sub);
    match spool.sub(sub) {
        Ok(dir) => Ok(dir),
        Err(e) => match crate::safe_fs::refusal(&e) {
            Some(Refusal::Link) => Err(EnqueueError::Symlink { path }),
            Some(_) => Err(EnqueueError::NotADirectory { path }),
            None if e.kind() == io::ErrorKind::NotFound => {
                Err(EnqueueError::NotADirectory { path })
            }
            None => Err(EnqueueError::Stat { path, source: e }),
        },
    }
}

/// A file-name-safe, injective spelling of a value: ASCII letters, digits and `-` stay, every other
/// byte becomes `_xx` (hex). A value longer than `max` bytes keeps its first `max` bytes and gets
/// `~` and a 64-bit FNV-1a hash of the whole value, so that two long values with a common
/// beginning still get different names (`~` never appears otherwise).
///
/// Escaping can triple a value, so a cut value of many non-ASCII bytes (a Pegasus trace named
/// with 100 × 'é') would grow past the 255 bytes a file name may have. Such a spelling, longer
/// than [`MAX_SPELLED_BYTES`], is cut after escaping instead, at `max` bytes and never inside a
/// `_xx`. Spellings within the bound are as they always were, so the parts already in a warehouse
/// keep their names (a new name would let a re-import add the same rows a second time).
pub fn file_name_part(text: &Text, max: usize) -> String {
    let bytes = text.as_bytes();
    let spelled = spell(&bytes[..bytes.len().min(max)]);
    let hash = format!("~{}", name_hash(bytes));
    if spelled.len() <= MAX_SPELLED_BYTES {
        return if bytes.len() > max {
            spelled + &hash
        } else {
            spelled
        };
    }
    let whole = spell(bytes);
    let mut cut = max.min(whole.len());
    // `_xx` is three bytes: back off to the start of an escape the cut would split.
    let window = cut.saturating_sub(2);
    if let Some(underscore) = whole[window..cut].rfind('_') {
        cut = window + underscore;
    }
    whole[..cut].to_string() + &hash
}

/// The longest spelling [`file_name_part`] keeps as it is: with a part's own prefix, suffix and
/// hash it leaves the file name under 255 bytes.
pub const MAX_SPELLED_BYTES: usize = 160;

/// `bytes` spelled as [`file_name_part`] spells them, whole.
fn spell(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b == b'-' {
            out.push(b as char);
        } else {
            out.push_str(&format!("_{b:02x}"));
        }
    }
    out
}

/// The 16 hex digits of the hash [`file_name_part`] appends to a cut value: for a name that
/// must tell apart values it does not spell out (an import's full path).
pub fn name_hash(bytes: &[u8]) -> String {
    format!("{:016x}", fnv1a_from(FNV_OFFSET, bytes))
}

/// FNV-1a's starting value (its 64-bit offset basis), for [`fnv1a_from`].
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a, 64 bits, of `bytes` continued from `hash` ([`FNV_OFFSET`] to start): the names' hash
/// of a value too long to spell out, and, through `jobsight_base::stats`, every other FNV-1a of
/// jobsight. Stable across releases and machines: stored names, part names and checksums depend
/// on it. Not a defence against an adversary choosing values (the values cut are cluster names,
/// host names and paths an admin chose), only against two honest long values sharing a prefix.
#[inline]
pub fn fnv1a_from(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The name a record gets in the spool: enqueue time first, so that sorting names gives arrival
/// order, then what identifies the job and the writer. Only sanitised values appear in it.
pub fn record_file_name(record: &SpoolRecord, pid: u32, attempt: u32) -> String {
    let nanos = record.enqueued_at.timestamp_nanos_opt().unwrap_or(0);
    format!(
        "{nanos:020}.{cluster}.{job}.{restart}.{hook}.{host}.{pid}.{attempt}.{RECORD_EXT}",
        cluster = file_name_part(&record.cluster.clone().unwrap_or_default(), 32),
        job = record.job_id,
        restart = record.restart_count.unwrap_or(0),
        hook = record.hook.as_str(),
        host = file_name_part(&record.host, 64),
    )
}

/// A record that is in `new/`.
#[derive(Debug)]
pub struct Enqueued {
    pub path: PathBuf,
    /// Set when the record's temporary name in `tmp/` could not be removed (say, `tmp/` became
    /// read-only): the record is safely enqueued, `tmp/` keeps a second hard link to it.
    pub stale_tmp: Option<(PathBuf, io::Error)>,
}

/// Writes `record` atomically into `spool/new/`. The spool's `tmp/` and `new/` are opened once and
/// every name is resolved relative to them, so a link planted in their place is refused and one
/// planted after they were opened redirects nothing.
pub fn enqueue(spool: &Path, record: &SpoolRecord) -> Result<Enqueued, EnqueueError> {
    let root = Dir::open(spool, Links::Follow).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound || crate::safe_fs::refusal(&e).is_some() {
            EnqueueError::NotADirectory {
                path: spool.to_path_buf(),
            }
        } else {
            EnqueueError::Stat {
                path: spool.to_path_buf(),
                source: e,
            }
        }
    })?;
    let tmp_dir = real_dir(&root, TMP)?;
    let new_dir = real_dir(&root, NEW)?;
    let mut bytes = serde_json::to_vec(record).map_err(|source| EnqueueError::Serialise {
        job_id: record.job_id,
        source,
    })?;
    bytes.push(b'\n');

    // Several processes of one host may enqueue in the same nanosecond; the pid and a per-process
    // counter keep names apart, and O_EXCL catches anything else.
    static ATTEMPT: AtomicU32 = AtomicU32::new(0);
    let pid = std::process::id();
    let name = loop {
        let attempt = ATTEMPT.fetch_add(1, Ordering::Relaxed);
        let name = record_file_name(record, pid, attempt);
        match tmp_dir.create_new(&name, 0o640) {
            Ok(mut file) => {
                let written = file.write_all(&bytes).and_then(|()| file.sync_all());
                if let Err(source) = written {
                    // Do not leave a partial record behind; the error is what matters.
                    let _ = tmp_dir.remove(&name);
                    return Err(EnqueueError::Write {
                        path: tmp_dir.join(&name),
                        source,
                    });
                }
                break name;
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 1000 => continue,
            Err(source) => {
                return Err(EnqueueError::Create {
                    path: tmp_dir.join(&name),
                    source,
                });
            }
        }
    };

    if let Err(source) = tmp_dir.hard_link(&name, &new_dir, &name) {
        let _ = tmp_dir.remove(&name);
        return Err(EnqueueError::Link {
            from: tmp_dir.join(&name),
            to: new_dir.join(&name),
            source,
        });
    }
    // The record is in new/ now; a failure to tidy tmp/ or to sync the directory is not a loss.
    let stale_tmp = tmp_dir
        .remove(&name)
        .err()
        .map(|e| (tmp_dir.join(&name), e));
    let _ = new_dir.sync();
    Ok(Enqueued {
        path: new_dir.join(&name),
        stale_tmp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook_env::record_from_env;
    use std::ffi::OsString;

    /// FNV-1a's published test values (stored spool names, part names, model checksums and rule
    /// book versions depend on them), and a hash continued over two pieces equals the hash of
    /// the whole.
    #[test]
    fn fnv1a_matches_its_published_values() {
        assert_eq!(name_hash(b""), "cbf29ce484222325");
        assert_eq!(name_hash(b"a"), "af63dc4c8601ec8c");
        assert_eq!(name_hash(b"foobar"), "85944171f73967e8");
        assert_eq!(
            fnv1a_from(fnv1a_from(FNV_OFFSET, b"foo"), b"bar"),
            0x8594_4171_f739_67e8
        );
    }
    use std::fs;

    fn record(job: &str, host: &[u8]) -> SpoolRecord {
        use std::os::unix::ffi::OsStringExt;
        let vars = [
            ("SLURM_JOB_ID", job.as_bytes().to_vec()),
            ("SLURM_CLUSTER_NAME", b"c/../x".to_vec()),
            ("SLURMD_NODENAME", host.to_vec()),
            ("SLURM_SCRIPT_CONTEXT", b"epilog_slurmd".to_vec()),
        ];
        let vars = vars
            .into_iter()
            .map(|(k, v)| (OsString::from(k), OsString::from_vec(v)));
        record_from_env(
            vars,
            "h",
            chrono::DateTime::from(std::time::SystemTime::now()),
        )
        .unwrap()
    }

    fn make_spool() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for sub in SUBDIRS {
            fs::create_dir(dir.path().join(sub)).unwrap();
        }
        dir
    }

    #[test]
    fn file_names_are_sanitised_and_injective() {
        assert_eq!(file_name_part(&Text::from("a.b/c"), 32), "a_2eb_2fc");
        // 100 × 'é' (200 bytes) cut at 128 would spell 384 bytes: cut after spelling instead,
        // at a whole escape, and still told apart from its neighbours by the hash.
        let accents = Text::from("é".repeat(100).as_str());
        let spelled = file_name_part(&accents, 128);
        assert!(
            spelled.len() <= 128 + 17,
            "{} bytes: {spelled}",
            spelled.len()
        );
        assert!(
            spelled.starts_with("_c3_a9") && spelled.contains('~'),
            "{spelled}"
        );
        assert_eq!(spelled.split('~').next().unwrap().len() % 3, 0, "{spelled}");
        let other = Text::from(format!("{}è", "é".repeat(99)).as_str());
        assert_ne!(file_name_part(&other, 128), spelled);
        // Cut values keep a hash of the whole: a common beginning is not a common name.
        let long_a = Text::from(format!("{}a", "x".repeat(40)).as_str());
        let long_b = Text::from(format!("{}b", "x".repeat(40)).as_str());
        let (a, b) = (file_name_part(&long_a, 32), file_name_part(&long_b, 32));
        assert_ne!(a, b);
        assert!(a.starts_with(&"x".repeat(32)) && a.contains('~'), "{a}");
        assert_eq!(
            file_name_part(&Text::from("x".repeat(32).as_str()), 32),
            "x".repeat(32)
        );
        assert_ne!(
            file_name_part(&Text::from("a_2e"), 32),
            file_name_part(&Text::from("a."), 32)
        );
        let name = record_file_name(&record("7", b"../../etc\n"), 1, 0);
        assert!(!name.contains('/') && !name.contains('\n'), "{name}");
    }

    #[test]
    fn enqueue_writes_one_readable_record_into_new() {
        let spool = make_spool();
        let r = record("42", b"node1");
        let path = enqueue(spool.path(), &r).unwrap().path;
        assert!(path.starts_with(spool.path().join(NEW)));
        assert_eq!(
            SpoolRecord::from_json(&fs::read(&path).unwrap()).unwrap(),
            r
        );
        assert_eq!(fs::read_dir(spool.path().join(TMP)).unwrap().count(), 0);
        // The same record again is a second file, never an overwrite.
        let again = enqueue(spool.path(), &r).unwrap().path;
        assert_ne!(again, path);
        assert_eq!(fs::read_dir(spool.path().join(NEW)).unwrap().count(), 2);
    }

    #[test]
    fn refuses_missing_dirs_and_symlinks() {
        let spool = tempfile::tempdir().unwrap();
        let err = enqueue(spool.path(), &record("1", b"n")).unwrap_err();
        assert!(matches!(err, EnqueueError::NotADirectory { .. }), "{err}");

        let elsewhere = make_spool();
        let spool = make_spool();
        fs::remove_dir(spool.path().join(NEW)).unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join(NEW), spool.path().join(NEW)).unwrap();
        let err = enqueue(spool.path(), &record("1", b"n")).unwrap_err();
        assert!(matches!(err, EnqueueError::Symlink { .. }), "{err}");
        assert_eq!(fs::read_dir(elsewhere.path().join(NEW)).unwrap().count(), 0);
    }
}
