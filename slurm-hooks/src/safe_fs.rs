//! Opening and creating files the safe way, shared by the hook and the pipeline: the spool and the
//! warehouse are written as root or `slurm` in directories that users' jobs can influence, and
//! imports walk folders an admin points at.
//!
//! - A file is opened only if it is a regular file, without waiting on a FIFO or a device
//!   (`O_NONBLOCK`, then `fstat`), and a file found by walking a folder is never reached through a
//!   link (`O_NOFOLLOW`).
//! - A file is created only where nothing is (`O_CREAT | O_EXCL | O_NOFOLLOW`): a planted link
//!   makes the call fail instead of writing through it.
//! - A [`Dir`] is a directory held open. Every name below it is resolved relative to the opened
//!   directory (`openat`, `mkdirat`, `renameat2`, `linkat`, `unlinkat`), one component at a time
//!   and never through a link, so a link planted in place of the directory, or of one above it,
//!   after it was opened redirects nothing; its mode is changed through it (`fchmod`).
//!
//! Every error names the file and says why. The system calls come from `rustix`, whose wrappers
//! are safe: both crates forbid `unsafe`.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};

/// Whether a link at the path itself may be followed: yes for a path a person typed, no for one
/// found by walking a folder or made by jobsight in a shared directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    Follow,
    Refuse,
}

fn error(path: &Path, kind: io::ErrorKind, what: &str) -> io::Error {
    io::Error::new(kind, format!("{} {what}", path.display()))
}

/// Why a file was refused rather than used, for callers that act on it (a record that is a link
/// is quarantined, a spool whose `new/` is a link is not a spool). Read it with [`refusal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A symbolic link where none is followed.
    Link,
    /// Not a directory where one was expected.
    NotADirectory,
    /// Not a regular file where one was expected: a directory, a FIFO, a socket or a device.
    NotRegular(&'static str),
}

#[derive(Debug)]
struct Refused {
    path: PathBuf,
    why: Refusal,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        match self.why {
            Refusal::Link => write!(f, "{path} is a symbolic link, which is not followed here"),
            Refusal::NotADirectory => write!(f, "{path} is not a directory"),
            Refusal::NotRegular(what) => write!(f, "{path} is {what}, not a regular file"),
        }
    }
}

impl std::error::Error for Refused {}

fn refused(path: &Path, why: Refusal) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        Refused {
            path: path.to_path_buf(),
            why,
        },
    )
}

/// What was refused, if `error` is a refusal of this module (not an I/O failure).
pub fn refusal(error: &io::Error) -> Option<Refusal> {
    error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<Refused>())
        .map(|r| r.why)
}

/// The error of a failed system call on `path`, in words that name the file. `O_NOFOLLOW` on a
/// link gives `ELOOP`; `O_DIRECTORY | O_NOFOLLOW` on a link gives `ENOTDIR` or `ELOOP`: both are
/// refusals, told apart by looking at what is there.
fn explain(path: &Path, errno: rustix::io::Errno) -> io::Error {
    match errno {
        rustix::io::Errno::LOOP => refused(path, Refusal::Link),
        rustix::io::Errno::NOTDIR => match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => refused(path, Refusal::Link),
            _ => refused(path, Refusal::NotADirectory),
        },
        _ => {
            let e = io::Error::from(errno);
            io::Error::new(e.kind(), format!("{}: {e}", path.display()))
        }
    }
}

/// Refuses anything but a regular file: says what it is instead.
fn regular_only(path: &Path, file: OwnedFd) -> io::Result<File> {
    let stat = rustix::fs::fstat(&file).map_err(|e| explain(path, e))?;
    let what = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => return Ok(File::from(file)),
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        _ => "a device",
    };
    Err(refused(path, Refusal::NotRegular(what)))
}

const READ_REGULAR: OFlags = OFlags::RDONLY
    .union(OFlags::NONBLOCK)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOCTTY);
const CREATE_NEW: OFlags = OFlags::WRONLY
    .union(OFlags::CREATE)
    .union(OFlags::EXCL)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
const OPEN_DIR: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

fn no_follow_if(links: Links) -> OFlags {
    match links {
        Links::Follow => OFlags::empty(),
        Links::Refuse => OFlags::NOFOLLOW,
    }
}

/// Opens `path` for reading if it is a regular file: never blocks on a FIFO or a device, and with
/// [`Links::Refuse`] fails on a link instead of following it.
pub fn open_regular(path: &Path, links: Links) -> io::Result<File> {
    let fd = rustix::fs::open(path, READ_REGULAR | no_follow_if(links), Mode::empty())
        .map_err(|e| explain(path, e))?;
    regular_only(path, fd)
}

/// Creates `path` for writing, with `mode`, only if nothing is there: not a file, not a link.
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    rustix::fs::open(path, CREATE_NEW, Mode::from_raw_mode(mode))
        .map(File::from)
        .map_err(|e| creation_error(path, e))
}

fn creation_error(path: &Path, errno: rustix::io::Errno) -> io::Error {
    let e = io::Error::from(errno);
    io::Error::new(
        e.kind(),
        format!(
            "cannot create {} (nothing may be there, not even a link): {e}",
            path.display()
        ),
    )
}

/// A directory held open; see the module's documentation. Cloning shares the open directory.
#[derive(Debug, Clone)]
pub struct Dir {
    fd: Arc<OwnedFd>,
    path: PathBuf,
}

/// Checks that `name` is one component (no `/`, not `.` or `..`, not empty): a name given to a
/// [`Dir`] never leaves it.
fn component<'a>(dir: &Path, name: &'a OsStr) -> io::Result<&'a OsStr> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes == b"." || bytes == b".." || bytes.contains(&b'/') {
        return Err(error(
            &dir.join(name),
            io::ErrorKind::InvalidInput,
            "is not a name inside its directory",
        ));
    }
    Ok(name)
}

impl Dir {
    /// Opens the directory `path` (a link at `path` itself is followed with [`Links::Follow`]).
    pub fn open(path: &Path, links: Links) -> io::Result<Dir> {
        let fd = rustix::fs::open(path, OPEN_DIR | no_follow_if(links), Mode::empty())
            .map_err(|e| explain(path, e))?;
        Ok(Dir {
            fd: Arc::new(fd),
            path: path.to_path_buf(),
        })
    }

    /// Creates the directory `path` and its parents where missing (a path a person typed), then
    /// opens it.
    pub fn create_all(path: &Path) -> io::Result<Dir> {
        std::fs::create_dir_all(path).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
        })?;
        Dir::open(path, Links::Follow)
    }

    /// The path this directory was opened as (for messages: names are not resolved through it).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `name` in this directory, for messages.
    pub fn join(&self, name: impl AsRef<OsStr>) -> PathBuf {
        self.path.join(name.as_ref())
    }

    /// Opens the subdirectory `name`; a link in its place is refused.
    pub fn sub(&self, name: impl AsRef<OsStr>) -> io::Result<Dir> {
        let name = component(&self.path, name.as_ref())?;
        let path = self.join(name);
        let fd = rustix::fs::openat(&*self.fd, name, OPEN_DIR | OFlags::NOFOLLOW, Mode::empty())
            .map_err(|e| explain(&path, e))?;
        Ok(Dir {
            fd: Arc::new(fd),
            path,
        })
    }

    /// Opens the subdirectory `name`, creating it with `mode` (less the umask) if it is missing.
    pub fn sub_or_create(&self, name: impl AsRef<OsStr>, mode: u32) -> io::Result<Dir> {
        let name = component(&self.path, name.as_ref())?;
        match rustix::fs::mkdirat(&*self.fd, name, Mode::from_raw_mode(mode)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => {
                let e = io::Error::from(e);
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot create {}: {e}", self.join(name).display()),
                ));
            }
        }
        self.sub(name)
    }

    /// Opens `name` for reading if it is a regular file, never through a link, never blocking.
    pub fn open_regular(&self, name: impl AsRef<OsStr>) -> io::Result<File> {
        let name = component(&self.path, name.as_ref())?;
        let path = self.join(name);
        let fd = rustix::fs::openat(
            &*self.fd,
            name,
            READ_REGULAR | OFlags::NOFOLLOW,
            Mode::empty(),
        )
        .map_err(|e| explain(&path, e))?;
        regular_only(&path, fd)
    }

    /// Creates `name` for writing, with `mode`, only if nothing is there: not a file, not a link.
    pub fn create_new(&self, name: impl AsRef<OsStr>, mode: u32) -> io::Result<File> {
        let name = component(&self.path, name.as_ref())?;
        rustix::fs::openat(&*self.fd, name, CREATE_NEW, Mode::from_raw_mode(mode))
            .map(File::from)
            .map_err(|e| creation_error(&self.join(name), e))
    }

    /// Whether anything (a file, a link, a directory) is at `name`.
    pub fn exists(&self, name: impl AsRef<OsStr>) -> io::Result<bool> {
        let name = component(&self.path, name.as_ref())?;
        match rustix::fs::statat(&*self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) => Ok(true),
            Err(rustix::io::Errno::NOENT) => Ok(false),
            Err(e) => Err(explain(&self.join(name), e)),
        }
    }

    /// When `name` (itself, not what a link points to) was last modified.
    pub fn modified(&self, name: impl AsRef<OsStr>) -> io::Result<SystemTime> {
        let name = component(&self.path, name.as_ref())?;
        let stat = rustix::fs::statat(&*self.fd, name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| explain(&self.join(name), e))?;
        let seconds = u64::try_from(stat.st_mtime).unwrap_or(0);
        Ok(SystemTime::UNIX_EPOCH + Duration::from_secs(seconds))
    }

    /// Moves `name` to `to_name` in `to`, failing with [`io::ErrorKind::AlreadyExists`] if
    /// anything is there (`RENAME_NOREPLACE`, one atomic step; on a file system without it, a
    /// check and then the rename).
    pub fn rename_no_replace(
        &self,
        name: impl AsRef<OsStr>,
        to: &Dir,
        to_name: impl AsRef<OsStr>,
    ) -> io::Result<()> {
        let name = component(&self.path, name.as_ref())?;
        let to_name = component(&to.path, to_name.as_ref())?;
        let taken = || {
            error(
                &to.join(to_name),
                io::ErrorKind::AlreadyExists,
                "already exists, and is never replaced",
            )
        };
        let moved =
            rustix::fs::renameat_with(&*self.fd, name, &*to.fd, to_name, RenameFlags::NOREPLACE);
        match moved {
            Ok(()) => Ok(()),
            Err(rustix::io::Errno::EXIST) => Err(taken()),
            Err(rustix::io::Errno::INVAL) | Err(rustix::io::Errno::NOSYS) => {
                if to.exists(to_name)? {
                    return Err(taken());
                }
                self.rename(name, to, to_name)
            }
            Err(e) => Err(self.move_error(name, to, to_name, e)),
        }
    }

    /// Moves `name` to `to_name` in `to`, replacing what is there (a link there is replaced, not
    /// followed).
    pub fn rename(
        &self,
        name: impl AsRef<OsStr>,
        to: &Dir,
        to_name: impl AsRef<OsStr>,
    ) -> io::Result<()> {
        let name = component(&self.path, name.as_ref())?;
        let to_name = component(&to.path, to_name.as_ref())?;
        rustix::fs::renameat(&*self.fd, name, &*to.fd, to_name)
            .map_err(|e| self.move_error(name, to, to_name, e))
    }

    fn move_error(
        &self,
        name: &OsStr,
        to: &Dir,
        to_name: &OsStr,
        errno: rustix::io::Errno,
    ) -> io::Error {
        let e = io::Error::from(errno);
        io::Error::new(
            e.kind(),
            format!(
                "cannot move {} to {}: {e}",
                self.join(name).display(),
                to.join(to_name).display()
            ),
        )
    }

    /// Makes `to_name` in `to` a second name of the file `name`; fails if anything is there.
    pub fn hard_link(
        &self,
        name: impl AsRef<OsStr>,
        to: &Dir,
        to_name: impl AsRef<OsStr>,
    ) -> io::Result<()> {
        let name = component(&self.path, name.as_ref())?;
        let to_name = component(&to.path, to_name.as_ref())?;
        rustix::fs::linkat(&*self.fd, name, &*to.fd, to_name, AtFlags::empty())
            .map_err(|e| self.move_error(name, to, to_name, e))
    }

    /// Removes the file or link `name` (a link is removed, never what it points to).
    pub fn remove(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        let name = component(&self.path, name.as_ref())?;
        rustix::fs::unlinkat(&*self.fd, name, AtFlags::empty()).map_err(|e| {
            let e = io::Error::from(e);
            io::Error::new(
                e.kind(),
                format!("cannot remove {}: {e}", self.join(name).display()),
            )
        })
    }

    /// Sets this directory's mode (through the open directory: no link is involved).
    pub fn set_mode(&self, mode: u32) -> io::Result<()> {
        rustix::fs::fchmod(&*self.fd, Mode::from_raw_mode(mode)).map_err(|e| explain(&self.path, e))
    }

    /// Flushes this directory's entries to disk (after a rename or a link into it).
    pub fn sync(&self) -> io::Result<()> {
        rustix::fs::fsync(&*self.fd).map_err(|e| explain(&self.path, e))
    }

    /// The names in this directory (not `.` and `..`), unsorted, as raw bytes.
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        let listing = rustix::fs::Dir::read_from(&*self.fd).map_err(|e| explain(&self.path, e))?;
        let mut names = Vec::new();
        for entry in listing {
            let entry = entry.map_err(|e| explain(&self.path, e))?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(OsStr::from_bytes(name).to_os_string());
            }
        }
        Ok(names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_links_and_directories_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let fifo = dir.path().join("p");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());

        assert!(open_regular(&file, Links::Refuse).is_ok());
        assert!(open_regular(&link, Links::Follow).is_ok());
        let e = open_regular(&link, Links::Refuse).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        let e = open_regular(&fifo, Links::Follow).unwrap_err().to_string();
        assert!(e.contains("a FIFO, not a regular file"), "{e}");
        let e = open_regular(dir.path(), Links::Follow)
            .unwrap_err()
            .to_string();
        assert!(e.contains("a directory"), "{e}");

        // Creating where a link was planted fails and leaves the target alone.
        assert!(create_new(&link, 0o644).is_err());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
        assert!(create_new(&dir.path().join("new"), 0o644).is_ok());

        // The same through an opened directory.
        let opened = Dir::open(dir.path(), Links::Refuse).unwrap();
        assert!(opened.open_regular("f").is_ok());
        assert!(opened.open_regular("l").is_err());
        assert!(opened.open_regular("p").is_err());
        assert!(opened.create_new("l", 0o644).is_err());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
        for bad in ["", ".", "..", "a/b", "../f"] {
            let e = opened.open_regular(bad).unwrap_err().to_string();
            assert!(e.contains("not a name inside its directory"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_link_in_place_of_a_directory_redirects_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::create_dir(&target).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("tmp")).unwrap();
        let root = Dir::open(dir.path(), Links::Follow).unwrap();
        let e = root.sub("tmp").unwrap_err().to_string();
        assert!(e.contains("not followed"), "{e}");
        assert!(root.sub_or_create("tmp", 0o777).is_err());
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);

        // A directory opened, then swapped for a link: names still resolve in the opened one.
        let real = root.sub_or_create("real", 0o755).unwrap();
        std::fs::rename(dir.path().join("real"), dir.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("real")).unwrap();
        real.create_new("x", 0o644).unwrap();
        assert!(dir.path().join("moved/x").exists());
        assert!(!target.join("x").exists());
    }

    #[test]
    fn renames_never_replace_unless_asked() {
        let dir = tempfile::tempdir().unwrap();
        let root = Dir::open(dir.path(), Links::Follow).unwrap();
        let a = root.sub_or_create("a", 0o755).unwrap();
        let b = root.sub_or_create("b", 0o755).unwrap();
        a.create_new("one", 0o644).unwrap();
        a.create_new("two", 0o644).unwrap();
        b.create_new("one", 0o644).unwrap();
        let e = a.rename_no_replace("one", &b, "one").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert!(a.exists("one").unwrap());
        a.rename_no_replace("two", &b, "two").unwrap();
        assert!(!a.exists("two").unwrap() && b.exists("two").unwrap());
        a.rename("one", &b, "one").unwrap();
        let mut names = b.names().unwrap();
        names.sort();
        assert_eq!(names, ["one", "two"]);
        let e = a.rename_no_replace("gone", &b, "x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
    }
}
