//! Opening and creating files the safe way: one definition, shared with the hook
//! ([`slurm_hooks::safe_fs`]) and re-exported here so that every stage finds it, plus the one way
//! the pipeline replaces a file (a spool note, a warehouse part): [`write_replacing`], and the one
//! way an importer walks a folder it is given: [`files_below`].

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

pub use slurm_hooks::safe_fs::*;

/// How long a hidden temporary file of a writer may sit untouched before a later write of the
/// same file removes it as the leftover of a killed process: far longer than any write takes.
pub const STALE_TEMPORARY_S: u64 = 6 * 3600;

/// Every regular file below `dir`, sorted: what an importer reads of a folder it is given.
/// `dir` itself may be a link (a person named it); nothing below it is followed through a link
/// (a link loop, `a -> .`, would walk for ever, and a link could lead out of the tree); links,
/// FIFOs, sockets and devices are left out, and a folder that cannot be read is passed over.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(entry.path()),
                Ok(t) if t.is_file() => files.push(entry.path()),
                _ => {}
            }
        }
    }
    files.sort();
    files
}

/// The text of a regular file (no FIFO or device; a link only when `links` allows it), refused
/// with [`io::ErrorKind::FileTooLarge`] beyond `limit` bytes, so that an input file cannot make
/// an importer read gigabytes.
pub fn read_text_at_most(path: &Path, links: Links, limit: u64) -> io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    open_regular(path, links)?
        .take(limit + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than {limit} bytes"),
        ));
    }
    Ok(text)
}

/// Whether a name is a hidden temporary file of [`write_replacing`] (`.<name>.tmp-<pid>`).
pub fn is_temporary(name: &[u8]) -> bool {
    name.starts_with(b".") && name.windows(5).any(|w| w == b".tmp-")
}

/// Writes `name` in `dir` through `fill` into a hidden temporary file created where nothing is
/// (never through a link), fsyncs it and renames it over `name`: readers see the old file or the
/// new one, never half of one. A killed writer's temporary stays until [`remove_stale_temporaries`]
/// (the nightly `compact` step, each ingest for the spool) or a writer with the same pid removes
/// it; the directory is not listed here, so writing the 20,000th part of a day costs what the
/// first did. `fill` gets
/// the open temporary and its path (for its own errors) and hands the file back; `error` turns an
/// I/O error on a path into the caller's error. Returns the final path.
pub fn write_replacing<E>(
    dir: &Dir,
    name: &OsStr,
    error: impl Fn(PathBuf, io::Error) -> E,
    fill: impl FnOnce(File, &Path) -> Result<File, E>,
) -> Result<PathBuf, E> {
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp_path = dir.join(&tmp);
    // Our own leftover of a killed run with the same pid is ours to remove.
    let _ = dir.remove(&tmp);
    let written = (|| {
        let file = dir
            .create_new(&tmp, 0o644)
            .map_err(|e| error(tmp_path.clone(), e))?;
        let file = fill(file, &tmp_path)?;
        file.sync_all().map_err(|e| error(tmp_path.clone(), e))?;
        dir.rename(&tmp, dir, name)
            .map_err(|e| error(dir.join(name), e))?;
        let _ = dir.sync();
        Ok(dir.join(name))
    })();
    if written.is_err() {
        let _ = dir.remove(&tmp);
    }
    written
}

/// Removes the hidden temporaries of [`write_replacing`] in `dir` that nobody touched for
/// [`STALE_TEMPORARY_S`]: leftovers of a writer that was killed. Returns how many.
pub fn remove_stale_temporaries(dir: &Dir) -> usize {
    let now = std::time::SystemTime::now();
    let stale = std::time::Duration::from_secs(STALE_TEMPORARY_S);
    let Ok(names) = dir.names() else { return 0 };
    names
        .into_iter()
        .filter(|n| is_temporary(n.as_bytes()))
        .filter(|n| {
            dir.modified(n)
                .is_ok_and(|m| now.duration_since(m).is_ok_and(|age| age > stale))
        })
        .filter(|n| dir.remove(n).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_read_up_to_its_limit_and_refused_beyond() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.csv");
        std::fs::write(&path, "12345").unwrap();
        assert_eq!(read_text_at_most(&path, Links::Refuse, 5).unwrap(), "12345");
        let e = read_text_at_most(&path, Links::Refuse, 4).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert_eq!(e.to_string(), "larger than 4 bytes");
    }

    /// The importers' walk: regular files at any depth, sorted; a link loop, a link to a file
    /// outside and a FIFO below the folder are not followed or listed; the folder itself may be
    /// reached through a link (a person named it).
    #[test]
    fn files_below_lists_regular_files_and_follows_no_link() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = tmp.path().join("runs");
        std::fs::create_dir_all(root.join("b/c")).unwrap();
        std::fs::write(root.join("z.csv"), "").unwrap();
        std::fs::write(root.join("b/c/a.csv"), "").unwrap();
        std::fs::write(outside.path().join("secret"), "").unwrap();
        std::os::unix::fs::symlink(&root, root.join("b/loop")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.join("secret")).unwrap();
        crate::test_support::mkfifo(&root.join("fifo"));
        let expected = [root.join("b/c/a.csv"), root.join("z.csv")];
        assert_eq!(files_below(&root), expected);
        let named = tmp.path().join("named");
        std::os::unix::fs::symlink(&root, &named).unwrap();
        assert_eq!(
            files_below(&named),
            [named.join("b/c/a.csv"), named.join("z.csv")]
        );
        assert!(files_below(&tmp.path().join("missing")).is_empty());
    }

    #[test]
    fn replacing_writes_whole_files_and_clears_stale_temporaries_only() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(tmp.path(), Links::Follow).unwrap();
        let write = |text: &'static str| {
            write_replacing(
                &dir,
                OsStr::new("part.parquet"),
                |_, e| e,
                |mut f, _| {
                    io::Write::write_all(&mut f, text.as_bytes())?;
                    Ok(f)
                },
            )
        };
        write("one").unwrap();
        // A killed writer's leftover, old, and a live writer's, fresh; a planted link at the
        // final name is replaced, not written through.
        let old = tmp.path().join(".part.parquet.tmp-1");
        let fresh = tmp.path().join(".part.parquet.tmp-2");
        std::fs::write(&old, "x").unwrap();
        std::fs::write(&fresh, "y").unwrap();
        let ago =
            std::time::SystemTime::now() - std::time::Duration::from_secs(STALE_TEMPORARY_S + 60);
        File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(ago)
            .unwrap();
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::fs::remove_file(tmp.path().join("part.parquet")).unwrap();
        std::os::unix::fs::symlink(&victim, tmp.path().join("part.parquet")).unwrap();
        let path = write("two").unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), "two");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(remove_stale_temporaries(&dir), 1);
        assert!(!old.exists(), "a stale temporary is removed");
        assert!(fresh.exists(), "a live writer's temporary is left alone");
        // A failed fill leaves nothing behind.
        let failed = write_replacing(
            &dir,
            OsStr::new("other"),
            |_, e| e,
            |_, _| Err(io::Error::other("no")),
        );
        assert!(failed.is_err());
        let mut names = dir.names().unwrap();
        names.sort();
        assert_eq!(names, [".part.parquet.tmp-2", "part.parquet", "victim"]);
    }
}
