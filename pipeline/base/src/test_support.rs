//! Helpers for the workspace's tests, shared by every crate's unit tests (a `#[cfg(test)]` module
//! is not visible from another crate, so these are plain public functions; nothing else calls
//! them).

use std::path::{Path, PathBuf};

/// The workspace's top directory (the one with `Cargo.lock`), found from the running test's
/// crate directory (cargo sets `CARGO_MANIFEST_DIR` when it runs a test, which is read here, not
/// when this was compiled: test binaries in a shared build directory may have been built from
/// another checkout). Tests read the project's documentation and data files under it.
pub fn workspace_dir() -> PathBuf {
    let crate_dir =
        std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
    let mut dir = PathBuf::from(crate_dir);
    while !dir.join("Cargo.lock").is_file() {
        if !dir.pop() {
            panic!("no directory with Cargo.lock above CARGO_MANIFEST_DIR");
        }
    }
    dir
}

/// Makes a FIFO at `path` (with the `mkfifo` program: the workspace forbids unsafe code), for
/// the tests that a FIFO never blocks a reader.
pub fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    assert!(made, "cannot make a FIFO at {}", path.display());
}
