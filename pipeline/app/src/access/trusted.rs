//! What a privileged (setgid) run may read. Its privileges are the installation's, not the
//! person's, so everything that decides what it shows must be out of the person's reach: its
//! configuration only from [`SYSTEM_CONFIG`], which root owns and nobody else can write, and a
//! warehouse only by an absolute path the person cannot change: no directory on the way that
//! they own or may write, no symbolic link that is not root's. Round two: the setgid jobsight
//! read no configuration, so it used `./jobsight-data` wherever the person stood, and a forged
//! `jobs` table there beside links to the real warehouse showed another user's job.

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use super::AccessError;

/// The only configuration a privileged run reads.
pub const SYSTEM_CONFIG: &str = "/etc/jobsight/jobsight.toml";

/// Write permission for the group and for others.
const GROUP_WRITE: u32 = 0o020;
const OTHER_WRITE: u32 = 0o002;
/// A directory whose entries only their owners may rename or remove (`/tmp`).
const STICKY: u32 = 0o1000;

fn untrusted(path: &Path, why: impl Into<String>) -> AccessError {
    AccessError::Untrusted {
        path: jobsight_base::text::printable(&path.display().to_string()),
        why: why.into(),
    }
}

/// `path` and every directory above it, from `/` down.
fn with_ancestors(path: &Path) -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = path.ancestors().map(Path::to_path_buf).collect();
    all.reverse();
    all
}

/// The canonical form of an absolute `path`, after refusing a symbolic link on the way that
/// someone other than root made (root's own links lead where root chose; the canonical path
/// is then checked itself).
fn canonical(path: &Path) -> Result<PathBuf, AccessError> {
    if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
        return Err(untrusted(
            path,
            format!(
                "a privileged run reads only an absolute path without `..`, as {SYSTEM_CONFIG} \
                 names it (e.g. data = \"/var/lib/jobsight\")"
            ),
        ));
    }
    for step in with_ancestors(path) {
        let meta = std::fs::symlink_metadata(&step)
            .map_err(|e| untrusted(path, format!("{}: {e}", step.display())))?;
        if meta.file_type().is_symlink() && meta.uid() != 0 {
            return Err(untrusted(
                path,
                format!(
                    "{} is a symbolic link of uid {}",
                    step.display(),
                    meta.uid()
                ),
            ));
        }
    }
    std::fs::canonicalize(path).map_err(|e| untrusted(path, e.to_string()))
}

/// Refuses a system configuration that anyone but root could have written: the file and every
/// directory above it must be root's and writable by nobody else.
pub fn check_system_config(path: &Path) -> Result<(), AccessError> {
    let real = canonical(path).map_err(|_| {
        untrusted(
            path,
            "a privileged (setgid) jobsight reads only this file, which is missing or cannot \
             be read; the admin installs it, owned by root (docs/reports.md)",
        )
    })?;
    for step in with_ancestors(&real) {
        let meta = std::fs::metadata(&step)
            .map_err(|e| untrusted(path, format!("{}: {e}", step.display())))?;
        if meta.uid() != 0 || meta.mode() & (GROUP_WRITE | OTHER_WRITE) != 0 {
            return Err(untrusted(
                path,
                format!(
                    "{} is owned by uid {} with mode {:o}: it must be root's and writable by \
                     root alone",
                    step.display(),
                    meta.uid(),
                    meta.mode() & 0o7777
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses a warehouse that the person running jobsight (`caller`, their real uid) could
/// have put there or changed: a directory on the way that they own, or one writable by a group
/// or by others without the sticky bit of `/tmp`.
pub fn check_warehouse(path: &Path, caller: u32) -> Result<(), AccessError> {
    let real = canonical(path)?;
    for step in with_ancestors(&real) {
        let meta = std::fs::metadata(&step)
            .map_err(|e| untrusted(path, format!("{}: {e}", step.display())))?;
        let shared = meta.mode() & (GROUP_WRITE | OTHER_WRITE) != 0;
        let sticky = meta.mode() & STICKY != 0 && meta.uid() == 0;
        if meta.uid() == caller || (shared && !sticky) {
            return Err(untrusted(
                path,
                format!(
                    "{} is owned by uid {} with mode {:o}, which the person running jobsight \
                     (uid {caller}) could change",
                    step.display(),
                    meta.uid(),
                    meta.mode() & 0o7777
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// The checks that hold for any user: relative paths, `..`, a warehouse the caller owns or
    /// that others may write, a link of the caller's on the way. (Root's ownership of the
    /// system file is checked through the binary, setgid, in tests/pipeline/demo.rs.)
    #[test]
    fn a_path_the_caller_could_change_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let me = std::fs::metadata(dir.path()).unwrap().uid();
        let warehouse = dir.path().join("warehouse");
        std::fs::create_dir(&warehouse).unwrap();
        for relative in ["./jobsight-data", "jobsight-data"] {
            let error = check_warehouse(Path::new(relative), me + 1).unwrap_err();
            assert!(error.to_string().contains("absolute path"), "{error}");
        }
        let error = check_warehouse(&dir.path().join("warehouse/.."), me + 1).unwrap_err();
        assert!(error.to_string().contains("without `..`"), "{error}");
        let error = check_warehouse(&warehouse, me).unwrap_err();
        assert!(error.to_string().contains("could change"), "{error}");
        mode(&warehouse, 0o777);
        let error = check_warehouse(&warehouse, me + 1).unwrap_err();
        assert!(error.to_string().contains("mode 777"), "{error}");
        mode(&warehouse, 0o755);
        mode(dir.path(), 0o755);
        assert!(check_warehouse(&warehouse, me + 1).is_ok());
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&warehouse, &link).unwrap();
        if me != 0 {
            let error = check_warehouse(&link, me + 1).unwrap_err();
            assert!(error.to_string().contains("symbolic link"), "{error}");
        }
        let error = check_system_config(&dir.path().join("missing.toml")).unwrap_err();
        assert!(error.to_string().contains("missing"), "{error}");
    }
}
