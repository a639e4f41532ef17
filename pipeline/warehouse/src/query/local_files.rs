//! The warehouse's files as the query session reads them: a local object store that lists
//! folders and reads byte ranges on the calling thread.
//!
//! object_store's `LocalFileSystem` hands every listing and every read to tokio's blocking pool
//! (`spawn_blocking`), since a file read may block. Planning a query over a year of day parts
//! reads 365 footers, each a thread hand-off and back: on the year of the summaries benchmark,
//! listing `jobs` and reading its footers took 22-33 ms through the pool and 6-8 ms in place,
//! the whole of the gap to DuckDB on its slowest query (docs/benchmarks.md). Reads of a
//! warehouse on a local disk mostly come from the page cache; one that goes to the disk holds a
//! worker thread for that read, which a one-query command and the read-only SQL server can
//! afford. Whatever the session does not do on its hot path (writes, deletes, copies, listing
//! one folder level) is `LocalFileSystem`'s, unchanged.

use std::fs::{File, Metadata};
use std::ops::Range;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::PathBuf;
use std::time::SystemTime;

use async_trait::async_trait;
use bytes::Bytes;
use datafusion::object_store::local::LocalFileSystem;
use datafusion::object_store::path::Path;
use datafusion::object_store::{
    self, Attributes, CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult,
    MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions, PutOptions, PutPayload,
    PutResult,
};
use futures::StreamExt;
use futures::stream::BoxStream;

/// Folders below a listed prefix that `list` descends into: a warehouse is two deep
/// (`table/day=.../part.parquet`); a deeper tree is a symbolic-link loop or not a warehouse.
const MAX_DEPTH: usize = 16;

const STORE: &str = "LocalFiles";

/// The local file system, read on the calling thread (see the module's paragraph).
#[derive(Debug, Default)]
pub struct LocalFiles {
    inner: LocalFileSystem,
}

impl std::fmt::Display for LocalFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{STORE}")
    }
}

/// The file an object path names: paths are relative to `/` and percent-encoded, as
/// `LocalFileSystem` with no prefix makes them.
fn file_path(location: &Path) -> object_store::Result<PathBuf> {
    let bad = |why: &str| object_store::Error::Generic {
        store: STORE,
        source: format!("{why}: {location}").into(),
    };
    let root = url::Url::parse("file:///").map_err(|_| bad("no root URL"))?;
    root.join(location.as_ref())
        .map_err(|_| bad("not a file path"))?
        .to_file_path()
        .map_err(|()| bad("not a file path"))
}

fn io_error(path: &std::path::Path, source: std::io::Error) -> object_store::Error {
    if source.kind() == std::io::ErrorKind::NotFound {
        object_store::Error::NotFound {
            path: path.display().to_string(),
            source: source.into(),
        }
    } else {
        object_store::Error::Generic {
            store: STORE,
            source: format!("{}: {source}", path.display()).into(),
        }
    }
}

/// An object's description, with the same e-tag `LocalFileSystem` gives it (inode, modification
/// time in microseconds, size), so cached footers are told apart the same way.
fn object_meta(location: Path, metadata: &Metadata) -> ObjectMeta {
    let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    let micros = modified
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_micros();
    ObjectMeta {
        location,
        last_modified: modified.into(),
        size: metadata.len(),
        e_tag: Some(format!(
            "{:x}-{micros:x}-{:x}",
            metadata.ino(),
            metadata.len()
        )),
        version: None,
    }
}

/// `LocalFileSystem` leaves out its own unfinished uploads (`name#123`); so does this store.
fn is_upload_in_progress(name: &str) -> bool {
    name.split_once('#')
        .is_some_and(|(_, suffix)| !suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_digit()))
}

fn read_range(
    file: &File,
    path: &std::path::Path,
    range: Range<u64>,
) -> object_store::Result<Bytes> {
    let len = usize::try_from(range.end.saturating_sub(range.start))
        .map_err(|_| io_error(path, std::io::Error::other("range larger than memory")))?;
    let mut buf = vec![0u8; len];
    file.read_exact_at(&mut buf, range.start)
        .map_err(|e| io_error(path, e))?;
    Ok(buf.into())
}

/// Every file below `dir` (following links, as `LocalFileSystem` does), into `out`.
fn walk(
    dir: &std::path::Path,
    depth: usize,
    out: &mut Vec<ObjectMeta>,
) -> object_store::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        // A table folder that does not exist (yet) lists as empty, as in `LocalFileSystem`.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && depth == 0 => return Ok(()),
        Err(e) => return Err(io_error(dir, e)),
    };
    let mut entries: Vec<_> = entries
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(|e| io_error(dir, e))?;
    entries.sort();
    for path in entries {
        let metadata = match std::fs::metadata(&path) {
            Ok(m) => m,
            // Removed between the listing and now (a compaction), or a dangling link.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_error(&path, e)),
        };
        if metadata.is_dir() {
            if depth + 1 >= MAX_DEPTH {
                return Err(io_error(
                    &path,
                    std::io::Error::other(format!(
                        "more than {MAX_DEPTH} folders deep (a link loop?)"
                    )),
                ));
            }
            walk(&path, depth + 1, out)?;
        } else if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(is_upload_in_progress)
        {
            continue;
        } else {
            let location = Path::from_absolute_path(&path)?;
            out.push(object_meta(location, &metadata));
        }
    }
    Ok(())
}

#[async_trait]
impl ObjectStore for LocalFiles {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    /// A range or a head is answered here; a whole file is handed out open, for the caller to
    /// stream as `LocalFileSystem` streams it.
    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let path = file_path(location)?;
        let file = File::open(&path).map_err(|e| io_error(&path, e))?;
        let metadata = file.metadata().map_err(|e| io_error(&path, e))?;
        if metadata.is_dir() {
            return Err(io_error(
                &path,
                std::io::Error::new(std::io::ErrorKind::NotFound, "is a folder"),
            ));
        }
        let meta = object_meta(location.clone(), &metadata);
        options.check_preconditions(&meta)?;
        let range = match &options.range {
            Some(r) => r
                .as_range(meta.size)
                .map_err(|source| object_store::Error::Generic {
                    store: STORE,
                    source: format!("{}: {source}", path.display()).into(),
                })?,
            None => 0..meta.size,
        };
        let payload = if options.head {
            GetResultPayload::Stream(futures::stream::empty().boxed())
        } else if options.range.is_some() {
            let bytes = read_range(&file, &path, range.clone())?;
            GetResultPayload::Stream(futures::stream::once(async { Ok(bytes) }).boxed())
        } else {
            GetResultPayload::File(file, path)
        };
        Ok(GetResult {
            payload,
            meta,
            range,
            attributes: Attributes::default(),
        })
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        let path = file_path(location)?;
        let file = File::open(&path).map_err(|e| io_error(&path, e))?;
        ranges
            .iter()
            .map(|r| read_range(&file, &path, r.clone()))
            .collect()
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let listed = file_path(&prefix.cloned().unwrap_or_default()).and_then(|dir| {
            let mut out = Vec::new();
            walk(&dir, 0, &mut out)?;
            Ok(out)
        });
        match listed {
            Ok(objects) => futures::stream::iter(objects.into_iter().map(Ok)).boxed(),
            Err(e) => futures::stream::once(async { Err(e) }).boxed(),
        }
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::TryStreamExt;
    use object_store::ObjectStoreExt;

    /// The same answers as `LocalFileSystem` for what a query session asks: the listing of a
    /// table folder (unfinished uploads left out, a missing folder empty), ranges, heads, whole
    /// files, and the errors for a missing file and a range past the end.
    #[tokio::test]
    async fn answers_as_the_local_file_system_does() {
        let dir = tempfile::tempdir().expect("tempdir");
        let table = dir.path().join("jobs");
        for (day, name, body) in [
            ("day=2025-01-01", "part-a.parquet", &b"0123456789"[..]),
            ("day=2025-01-02", "part b%.parquet", &b"abcdef"[..]),
            ("day=2025-01-02", "part-c.parquet#12", &b"unfinished"[..]),
        ] {
            std::fs::create_dir_all(table.join(day)).expect("mkdir");
            std::fs::write(table.join(day).join(name), body).expect("write");
        }
        let ours = LocalFiles::default();
        let theirs = LocalFileSystem::new();
        let prefix = Path::from_absolute_path(&table).expect("path");
        let mut listed: Vec<ObjectMeta> =
            ours.list(Some(&prefix)).try_collect().await.expect("ours");
        let mut expected: Vec<ObjectMeta> = theirs
            .list(Some(&prefix))
            .try_collect()
            .await
            .expect("theirs");
        listed.sort_by(|a, b| a.location.cmp(&b.location));
        expected.sort_by(|a, b| a.location.cmp(&b.location));
        assert_eq!(listed, expected);
        assert_eq!(listed.len(), 2);

        let missing = Path::from_absolute_path(dir.path().join("findings")).expect("path");
        let none: Vec<ObjectMeta> = ours
            .list(Some(&missing))
            .try_collect()
            .await
            .expect("empty");
        assert!(none.is_empty());

        for object in &listed {
            let at = &object.location;
            assert_eq!(
                ours.head(at).await.expect("head"),
                theirs.head(at).await.expect("head")
            );
            assert_eq!(
                ours.get_range(at, 1..4).await.expect("range"),
                theirs.get_range(at, 1..4).await.expect("range")
            );
            assert_eq!(
                ours.get_ranges(at, &[0..2, 3..5]).await.expect("ranges"),
                theirs.get_ranges(at, &[0..2, 3..5]).await.expect("ranges")
            );
            let whole = ours
                .get(at)
                .await
                .expect("get")
                .bytes()
                .await
                .expect("bytes");
            assert_eq!(
                whole,
                theirs
                    .get(at)
                    .await
                    .expect("get")
                    .bytes()
                    .await
                    .expect("bytes")
            );
            assert!(matches!(
                ours.get_range(at, 100..200).await,
                Err(object_store::Error::Generic { .. })
            ));
        }
        let gone =
            Path::from_absolute_path(table.join("day=2025-01-01/nothing.parquet")).expect("path");
        assert!(matches!(
            ours.head(&gone).await,
            Err(object_store::Error::NotFound { .. })
        ));
        assert!(matches!(
            ours.get_range(&gone, 0..1).await,
            Err(object_store::Error::NotFound { .. })
        ));
    }
}
