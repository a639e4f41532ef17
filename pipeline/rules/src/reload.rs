//! Picks up a changed site rule directory without a restart: a long-running process keeps a
//! [`Reloader`] and asks it for the current book before each run. The directory's fingerprint
//! (every `*.toml` file's name, size and modification time) is compared with the one the book was
//! built from; when it differs the book is rebuilt. A rebuild that fails keeps the previous book in
//! use and returns the error, so a half-edited file never stops the pipeline, and the admin sees
//! why the change was not taken.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use super::book::{RuleBook, RulesError};

type Fingerprint = Vec<(PathBuf, u64, Option<SystemTime>)>;

fn fingerprint(dir: Option<&Path>) -> Fingerprint {
    let Some(dir) = dir else {
        return Vec::new();
    };
    let mut out: Fingerprint = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "toml"))
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            Some((e.path(), meta.len(), meta.modified().ok()))
        })
        .collect();
    out.sort();
    out
}

/// What [`Reloader::current`] did.
#[derive(Debug)]
pub enum Reload {
    Unchanged,
    Reloaded,
    /// The directory changed but its files do not make a valid book: the previous one is kept.
    Failed(RulesError),
}

#[derive(Debug)]
pub struct Reloader {
    dir: Option<PathBuf>,
    seen: Fingerprint,
    book: Arc<RuleBook>,
}

impl Reloader {
    /// Loads the book once; an invalid directory is an error here (at start-up nothing is kept).
    pub fn new(dir: Option<&Path>) -> Result<Reloader, RulesError> {
        let seen = fingerprint(dir);
        let book = Arc::new(RuleBook::load(dir)?);
        Ok(Reloader {
            dir: dir.map(Path::to_path_buf),
            seen,
            book,
        })
    }

    /// The book to use now, rebuilt first if the directory changed.
    pub fn current(&mut self) -> (Arc<RuleBook>, Reload) {
        let now = fingerprint(self.dir.as_deref());
        if now == self.seen {
            return (self.book.clone(), Reload::Unchanged);
        }
        self.seen = now;
        match RuleBook::load(self.dir.as_deref()) {
            Ok(book) => {
                self.book = Arc::new(book);
                (self.book.clone(), Reload::Reloaded)
            }
            Err(e) => (self.book.clone(), Reload::Failed(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const SITE_RULE: &str = r#"
[[rule]]
id = "site-rule"
title = "A site rule"
group = "low_intensity"
severity = "info"
when = "job.cpus > LIMIT"
what = "w"
fix = "f"
"#;

    #[test]
    fn a_changed_file_is_picked_up_and_a_broken_one_keeps_the_old_book() {
        let dir = tempfile::tempdir().unwrap();
        let mut reloader = Reloader::new(Some(dir.path())).unwrap();
        let (first, _) = reloader.current();
        assert!(!first.rules.iter().any(|r| r.id == "site-rule"));
        let file = dir.path().join("site.toml");
        std::fs::write(&file, SITE_RULE.replace("LIMIT", "1000")).unwrap();
        let (book, what) = reloader.current();
        assert!(matches!(what, Reload::Reloaded), "{what:?}");
        assert!(book.rules.iter().any(|r| r.id == "site-rule"));
        assert!(matches!(reloader.current().1, Reload::Unchanged));
        // A broken edit (different size, so seen even within one mtime tick): old book kept.
        std::fs::write(&file, SITE_RULE.replace("LIMIT", "job.nope")).unwrap();
        let (kept, what) = reloader.current();
        match what {
            Reload::Failed(e) => assert!(e.to_string().contains("job.nope"), "{e}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(kept.version, book.version);
        std::fs::remove_file(&file).unwrap();
        let (back, what) = reloader.current();
        assert!(matches!(what, Reload::Reloaded));
        assert_eq!(back.version, first.version);
    }
}
