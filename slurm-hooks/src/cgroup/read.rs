//! Reading the small files of a cgroup or of `/proc`, bounded in size, and telling a cgroup or
//! process that went away (normal: jobs end at any moment, in the middle of a scrape) from a
//! real failure, which is counted and reported with its path.
//!
//! "Gone" is `ENOENT` (no such file or directory), `ENODEV` (reading a file of a cgroup v1
//! directory removed after it was opened) and `ESRCH` (a process that exited): callers skip
//! what is gone without a word. Anything else (a permission, a file over the size bound, text
//! that is not UTF-8 or not a number) is a problem: the value is skipped and [`Problems`] notes
//! where and why.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::parse::Bad;
use crate::safe_fs::{self, Links};

/// The largest control file read whole. `memory.stat` is about 1.5 KiB and `io.stat` a line per
/// device; anything bigger is not what the kernel writes.
pub(crate) const MAX_FILE_BYTES: usize = 64 * 1024;

/// The most read of a list of pids or threads (`tasks`, `cgroup.procs`, `cgroup.threads`), which
/// are counted as they stream by: about two million entries.
const MAX_LIST_BYTES: u64 = 16 * 1024 * 1024;

/// How many problem messages one scrape keeps; all of them are counted.
const MAX_MESSAGES: usize = 20;

/// The values a scrape could not use: how many, and the first few with their paths.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Problems {
    pub count: u64,
    pub messages: Vec<String>,
}

impl Problems {
    pub(crate) fn note(&mut self, message: String) {
        self.count += 1;
        if self.messages.len() < MAX_MESSAGES {
            self.messages.push(message);
        }
    }

    pub(crate) fn bad_value(&mut self, path: &Path, bad: &Bad) {
        self.note(format!("{}: {bad}", path.display()));
    }
}

/// Whether an error means the cgroup, file or process is no longer there.
pub(crate) fn is_gone(error: &io::Error) -> bool {
    use rustix::io::Errno;
    error.kind() == io::ErrorKind::NotFound
        || matches!(
            Errno::from_io_error(error),
            Some(Errno::NOENT | Errno::NODEV | Errno::SRCH)
        )
}

fn failure(path: &Path, error: &io::Error) -> String {
    // safe_fs's errors already name the path; std's read errors do not.
    let text = error.to_string();
    if text.contains(&*path.to_string_lossy()) {
        text
    } else {
        format!("{}: {text}", path.display())
    }
}

/// Reads up to `limit` bytes of `path`: `Ok(None)` when it is gone, and whether more was there.
pub(crate) fn read_bytes(path: &Path, limit: usize) -> Result<Option<(Vec<u8>, bool)>, String> {
    // Regular files only, without following a link at the end of the path: cgroup and /proc
    // files are regular files, and a FIFO under a test or mistaken root must not block a scrape.
    let file = match safe_fs::open_regular(path, Links::Refuse) {
        Ok(file) => file,
        Err(e) if is_gone(&e) => return Ok(None),
        Err(e) => return Err(failure(path, &e)),
    };
    let mut bytes = Vec::with_capacity(limit.min(4096));
    // One byte more than the limit tells a file of exactly `limit` bytes from a longer one.
    let bound = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    match file.take(bound).read_to_end(&mut bytes) {
        Ok(_) => {}
        Err(e) if is_gone(&e) => return Ok(None),
        Err(e) => return Err(failure(path, &e)),
    }
    let longer = bytes.len() > limit;
    bytes.truncate(limit);
    Ok(Some((bytes, longer)))
}

fn utf8(path: &Path, bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", path.display()))
}

/// The whole of a small text file: `Ok(None)` when it is gone; an error when it is over
/// [`MAX_FILE_BYTES`], not UTF-8 or unreadable.
pub(crate) fn text(path: &Path) -> Result<Option<String>, String> {
    match read_bytes(path, MAX_FILE_BYTES)? {
        None => Ok(None),
        Some((_, true)) => Err(format!(
            "{}: longer than {MAX_FILE_BYTES} bytes, not a control file",
            path.display()
        )),
        Some((bytes, false)) => utf8(path, bytes).map(Some),
    }
}

/// The first whole lines within `limit` bytes of a text file (a list of pids, of which the
/// first few are enough): `Ok(None)` when it is gone.
pub(crate) fn first_lines(path: &Path, limit: usize) -> Result<Option<String>, String> {
    let Some((mut bytes, longer)) = read_bytes(path, limit)? else {
        return Ok(None);
    };
    if longer {
        // Cut at the last complete line, so no pid is taken from half its digits.
        let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(end);
    }
    utf8(path, bytes).map(Some)
}

/// The number of non-empty lines of a list file (`tasks`, `cgroup.threads`), counted in chunks
/// without keeping the file: `Ok(None)` when it is gone.
pub(crate) fn count_lines(path: &Path) -> Result<Option<u64>, String> {
    let file = match safe_fs::open_regular(path, Links::Refuse) {
        Ok(file) => file,
        Err(e) if is_gone(&e) => return Ok(None),
        Err(e) => return Err(failure(path, &e)),
    };
    let mut reader = file.take(MAX_LIST_BYTES + 1);
    let mut chunk = [0u8; 8192];
    let mut lines: u64 = 0;
    let mut total: u64 = 0;
    // Whether the last byte seen ended a line: a last line without '\n' still counts.
    let mut at_line_start = true;
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if is_gone(&e) => return Ok(None),
            Err(e) => return Err(failure(path, &e)),
        };
        total += n as u64;
        for &b in chunk.iter().take(n) {
            if b == b'\n' {
                if !at_line_start {
                    lines += 1;
                }
                at_line_start = true;
            } else {
                at_line_start = false;
            }
        }
    }
    if total > MAX_LIST_BYTES {
        return Err(format!(
            "{}: longer than {MAX_LIST_BYTES} bytes, not a list of tasks",
            path.display()
        ));
    }
    if !at_line_start {
        lines += 1;
    }
    Ok(Some(lines))
}

/// The subdirectories of `dir` whose names are UTF-8, sorted by name; empty when `dir` is gone.
/// At most `limit` are kept: a listing is bounded even where a job's user can make directories.
pub(crate) fn subdirs(dir: &Path, limit: usize, problems: &mut Problems) -> Vec<(String, PathBuf)> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if is_gone(&e) => return Vec::new(),
        Err(e) => {
            problems.note(failure(dir, &e));
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for entry in entries {
        if out.len() >= limit {
            break;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) if is_gone(&e) => break,
            Err(e) => {
                problems.note(failure(dir, &e));
                break;
            }
        };
        // The type from the directory listing itself: no stat per entry, and a link is not a
        // directory.
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        out.push((name, entry.path()));
    }
    out.sort();
    out
}

/// Reads `dir/name` whole; `None` when it is gone or unusable (then noted in `problems`).
pub(crate) fn file_text(dir: &Path, name: &str, problems: &mut Problems) -> Option<String> {
    match text(&dir.join(name)) {
        Ok(text) => text,
        Err(message) => {
            problems.note(message);
            None
        }
    }
}

/// Reads `dir/name` and parses it; `None` when it is gone, unreadable or bad (noted).
pub(crate) fn file_value<T>(
    dir: &Path,
    name: &str,
    problems: &mut Problems,
    parse: impl FnOnce(&str) -> Result<T, Bad>,
) -> Option<T> {
    let path = dir.join(name);
    let raw = match text(&path) {
        Ok(Some(raw)) => raw,
        Ok(None) => return None,
        Err(message) => {
            problems.note(message);
            return None;
        }
    };
    match parse(&raw) {
        Ok(value) => Some(value),
        Err(bad) => {
            problems.bad_value(&path, &bad);
            None
        }
    }
}

/// A `key value` file read once, from which several keys are taken.
#[derive(Debug)]
pub(crate) struct KeyedFile {
    path: PathBuf,
    text: String,
}

impl KeyedFile {
    /// `None` when the file is gone or unreadable (noted).
    pub(crate) fn read(dir: &Path, name: &str, problems: &mut Problems) -> Option<KeyedFile> {
        let path = dir.join(name);
        match text(&path) {
            Ok(Some(text)) => Some(KeyedFile { path, text }),
            Ok(None) => None,
            Err(message) => {
                problems.note(message);
                None
            }
        }
    }

    /// The value of `key`; `None` when the key is absent or its value bad (noted).
    pub(crate) fn get(&self, key: &str, problems: &mut Problems) -> Option<u64> {
        match super::parse::keyed(&self.text, key) {
            Ok(value) => value,
            Err(bad) => {
                problems.bad_value(&self.path, &bad);
                None
            }
        }
    }
}

/// Lines of `file` summed over `dir` and every directory below it, at most `MAX_TREE_DEPTH` deep
/// and `MAX_TREE_DIRS` directories: the threads of a job whose tasks sit in `step_*/task_*`
/// below it. `None` when `dir`'s own file is gone or unreadable.
pub(crate) fn count_lines_in_tree(dir: &Path, file: &str, problems: &mut Problems) -> Option<u64> {
    const MAX_TREE_DEPTH: usize = 4;
    const MAX_TREE_DIRS: usize = 1024;
    let mut total: u64 = 0;
    let mut visited = 0usize;
    let mut stack: Vec<(PathBuf, usize)> = vec![(dir.to_path_buf(), 0)];
    while let Some((here, depth)) = stack.pop() {
        visited += 1;
        let lines = match count_lines(&here.join(file)) {
            Ok(lines) => lines,
            Err(message) => {
                problems.note(message);
                None
            }
        };
        match lines {
            Some(n) => total = total.saturating_add(n),
            // The top's own file must be there; a child that vanished meanwhile is skipped.
            None if depth == 0 => return None,
            None => continue,
        }
        if depth < MAX_TREE_DEPTH {
            let room = MAX_TREE_DIRS.saturating_sub(visited + stack.len());
            for (_, child) in subdirs(&here, room, problems) {
                stack.push((child, depth + 1));
            }
        }
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gone_files_are_none_and_long_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.current");
        assert_eq!(text(&path), Ok(None));
        std::fs::write(&path, "42\n").unwrap();
        assert_eq!(text(&path), Ok(Some("42\n".to_string())));
        std::fs::write(&path, "1\n".repeat(MAX_FILE_BYTES)).unwrap();
        assert!(text(&path).unwrap_err().contains("memory.current"));
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert!(text(&path).unwrap_err().contains("not UTF-8"));
        // A directory where a file should be is a problem, not a hang or a panic.
        let sub = dir.path().join("cpu.stat");
        std::fs::create_dir(&sub).unwrap();
        assert!(text(&sub).is_err());
    }

    #[test]
    fn lists_are_counted_and_cut_at_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks");
        std::fs::write(&path, "").unwrap();
        assert_eq!(count_lines(&path), Ok(Some(0)));
        std::fs::write(&path, "1\n2\n\n3").unwrap();
        assert_eq!(count_lines(&path), Ok(Some(3)));
        let many: String = (0..20_000).map(|i| format!("{i}\n")).collect();
        std::fs::write(&path, &many).unwrap();
        assert_eq!(count_lines(&path), Ok(Some(20_000)));
        let head = first_lines(&path, 10).unwrap().unwrap();
        assert_eq!(head, "0\n1\n2\n3\n4\n");
        assert_eq!(count_lines(&dir.path().join("absent")), Ok(None));
    }

    #[test]
    fn trees_are_summed_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("job_1");
        for (sub, pids) in [("", "1\n"), ("step_0", ""), ("step_0/task_0", "2\n3\n")] {
            std::fs::create_dir_all(job.join(sub)).unwrap();
            std::fs::write(job.join(sub).join("tasks"), pids).unwrap();
        }
        // A directory without the file (a vanished child) adds nothing.
        std::fs::create_dir_all(job.join("step_0/task_1")).unwrap();
        let mut problems = Problems::default();
        assert_eq!(count_lines_in_tree(&job, "tasks", &mut problems), Some(3));
        assert_eq!(problems, Problems::default());
        assert_eq!(
            count_lines_in_tree(&dir.path().join("job_2"), "tasks", &mut problems),
            None
        );
    }

    #[test]
    fn problems_keep_a_few_messages_and_count_all() {
        let mut problems = Problems::default();
        for i in 0..100 {
            problems.note(format!("problem {i}"));
        }
        assert_eq!(problems.count, 100);
        assert_eq!(problems.messages.len(), MAX_MESSAGES);
    }
}
