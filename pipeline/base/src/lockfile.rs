//! Exclusive locks on files, for "one at a time" across processes: one ingest step per spool, one
//! run per DAG. The lock is the kernel's (`flock`), so it is released when its holder exits,
//! however it exits: a killed process never leaves a stale lock behind.

use std::fs::File;
use std::path::Path;

/// Takes the lock on `path` (created if missing) without waiting: `Ok(Some(file))` holds it until
/// the file is dropped, `Ok(None)` means another process holds it.
pub fn try_lock(path: &Path) -> Result<Option<File>, std::io::Error> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}
