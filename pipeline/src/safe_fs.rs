//! Opening and creating files the safe way, below every stage: the spool and the warehouse are
//! written as root or `slurm` in directories that users' jobs can influence, and imports walk
//! folders an admin points at. So a file is opened only if it is a regular file, without waiting
//! on a FIFO or a device (`O_NONBLOCK`, then `fstat`); a file found by walking a folder is never
//! reached through a link (`O_NOFOLLOW`); a file is created only where nothing is (`O_CREAT |
//! O_EXCL | O_NOFOLLOW`: a planted link makes the call fail instead of writing through it); and a
//! directory's mode is changed through the opened directory (`O_DIRECTORY | O_NOFOLLOW`, then
//! `fchmod`), never through a link planted in its place. Each error says which file and why.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Whether a link at the path itself may be followed: yes for a path a person typed, no for one
/// found by walking a folder or made by jobsight in a shared directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    Follow,
    Refuse,
}

fn not_regular(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{} is {what}, not a regular file", path.display()),
    )
}

/// Opens `path` for reading if it is a regular file: never blocks on a FIFO or a device, and with
/// [`Links::Refuse`] fails on a link (ELOOP) instead of following it.
pub fn open_regular(path: &Path, links: Links) -> io::Result<File> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a symbolic link, which is not followed here",
                    path.display()
                ),
            ),
            _ => e,
        })?;
    let kind = file.metadata()?.file_type();
    use std::os::unix::fs::FileTypeExt;
    if kind.is_file() {
        Ok(file)
    } else if kind.is_dir() {
        Err(not_regular(path, "a directory"))
    } else if kind.is_fifo() {
        Err(not_regular(path, "a FIFO"))
    } else if kind.is_socket() {
        Err(not_regular(path, "a socket"))
    } else {
        Err(not_regular(path, "a device"))
    }
}

/// Creates `path` for writing, with `mode`, only if nothing is there: not a file, not a link.
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot create {} (nothing may be there, not even a link): {e}",
                    path.display()
                ),
            )
        })
}

/// Sets the mode of the directory `path` through the opened directory: a link in its place is
/// refused, so the mode of what it points to never changes.
pub fn set_dir_mode(path: &Path, mode: u32) -> io::Result<()> {
    let dir = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) => io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is not a directory (a symbolic link or a file): refused",
                    path.display()
                ),
            ),
            _ => e,
        })?;
    dir.set_permissions(std::fs::Permissions::from_mode(mode))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn fifos_links_and_directories_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let fifo = dir.path().join("p");
        crate::tests_support::mkfifo(&fifo);

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

        // A link in a directory's place keeps its target's mode.
        let target = dir.path().join("target");
        std::fs::create_dir(&target).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o700)).unwrap();
        let planted = dir.path().join("tmp");
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        assert!(set_dir_mode(&planted, 0o777).is_err());
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}
