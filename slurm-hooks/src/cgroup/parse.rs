//! The text formats of cgroup and /proc files, as pure functions of `&str`: whole numbers,
//! `key value` files (`memory.stat`, `cpu.stat`, `memory.events`, `cpuacct.stat`), CPU lists
//! (`cpuset.cpus`), `io.stat`, the `Uid:` line of `/proc/<pid>/status`, the directory names
//! Slurm gives jobs, users and steps, and the auxiliary vector's clock tick.
//!
//! Nothing here trusts its input: a value that is not a plain whole number in range (garbage, a
//! sign, more digits than fit) is a [`Bad`], which the caller counts and skips. Nothing panics.

use crate::text::Text;

/// Why a value was refused, with a short, escaped quote of what was there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bad(pub(crate) String);

impl Bad {
    fn new(what: &str, raw: &str) -> Bad {
        // A quote of at most 40 characters, escaped: a file must not fill or forge a log line.
        let quoted: String = raw.chars().take(40).collect();
        let ellipsis = if raw.chars().nth(40).is_some() {
            "..."
        } else {
            ""
        };
        Bad(format!(
            "\"{}{ellipsis}\" is not {what}",
            Text::from(quoted.as_str()).escaped()
        ))
    }
}

impl std::fmt::Display for Bad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The largest CPU number a CPU list may name. Linux allows at most 8192 CPUs (`NR_CPUS`); a
/// bound keeps a hostile list like `0-18446744073709551615` from being counted as real.
const MAX_CPU_NUMBER: u64 = 1 << 20;

/// Digits only, then parsed: `u64::from_str` would also take a leading `+`.
fn digits(raw: &str) -> Option<u64> {
    if raw.is_empty() || raw.len() > 20 || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    raw.parse().ok()
}

/// A file holding one whole number (`memory.current`, `cpuacct.usage`, `pids.current`).
pub(crate) fn number(raw: &str) -> Result<u64, Bad> {
    let raw = raw.trim();
    digits(raw).ok_or_else(|| Bad::new("a whole number from 0 to 2^64-1", raw))
}

/// A memory limit: a number of bytes, or `max` (cgroup v2's "no limit").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    Bytes(u64),
    Unlimited,
}

pub(crate) fn limit(raw: &str) -> Result<Limit, Bad> {
    match raw.trim() {
        "max" => Ok(Limit::Unlimited),
        other => digits(other)
            .map(Limit::Bytes)
            .ok_or_else(|| Bad::new("a number of bytes or \"max\"", other)),
    }
}

/// The value of `key` in a file of `key value` lines: `Ok(None)` when the key is not there (an
/// older kernel, a controller that is off), an error when it is there with a bad value. The
/// first line with the key counts.
pub(crate) fn keyed(text: &str, key: &str) -> Result<Option<u64>, Bad> {
    for line in text.lines() {
        let mut fields = line.split_ascii_whitespace();
        if fields.next() != Some(key) {
            continue;
        }
        let value = fields.next().unwrap_or("");
        return match (digits(value), fields.next()) {
            (Some(n), None) => Ok(Some(n)),
            _ => Err(Bad::new(&format!("\"{key} <whole number>\""), line)),
        };
    }
    Ok(None)
}

/// The number of CPUs in a kernel CPU list such as `0-3,8,10-11` (7). An empty list (a cpuset
/// that inherits its parent's) counts 0.
pub(crate) fn count_cpu_list(raw: &str) -> Result<u64, Bad> {
    let list = raw.trim();
    if list.is_empty() {
        return Ok(0);
    }
    let bad = || Bad::new("a CPU list like 0-3,8", list);
    let mut count: u64 = 0;
    for item in list.split(',') {
        let (first, last) = match item.split_once('-') {
            Some((a, b)) => (digits(a).ok_or_else(bad)?, digits(b).ok_or_else(bad)?),
            None => {
                let cpu = digits(item).ok_or_else(bad)?;
                (cpu, cpu)
            }
        };
        if first > last || last > MAX_CPU_NUMBER {
            return Err(bad());
        }
        count = count.checked_add(last - first + 1).ok_or_else(bad)?;
    }
    if count > MAX_CPU_NUMBER {
        return Err(bad());
    }
    Ok(count)
}

/// Bytes read and written, summed over the devices of a cgroup v2 `io.stat`, whose lines look
/// like `8:0 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0`.
pub(crate) fn io_bytes(text: &str) -> Result<(u64, u64), Bad> {
    let mut read: u64 = 0;
    let mut written: u64 = 0;
    for line in text.lines() {
        // The first field is the device; the others are key=value.
        for field in line.split_ascii_whitespace().skip(1) {
            let (sum, value) = match field.split_once('=') {
                Some(("rbytes", v)) => (&mut read, v),
                Some(("wbytes", v)) => (&mut written, v),
                _ => continue,
            };
            let n = digits(value).ok_or_else(|| Bad::new("an io.stat byte count", field))?;
            *sum = sum
                .checked_add(n)
                .ok_or_else(|| Bad::new("a byte total below 2^64", line))?;
        }
    }
    Ok((read, written))
}

/// The real uid of a process: the first number of the `Uid:` line of `/proc/<pid>/status`.
pub(crate) fn status_uid(text: &str) -> Result<u32, Bad> {
    let ids = text
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .ok_or_else(|| Bad::new("a status file with a Uid: line", ""))?;
    ids.split_ascii_whitespace()
        .next()
        .and_then(digits)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| Bad::new("a Uid: line with a uid", ids))
}

/// A number as Slurm prints one (`%u`): digits without a leading zero, so that one id has one
/// spelling. A `job_0007` directory (made where the job's user may make directories) must not
/// stand for job 7 and shadow its real `job_7`.
fn canonical(raw: &str) -> Option<u64> {
    if raw.len() > 1 && raw.starts_with('0') {
        return None;
    }
    digits(raw)
}

/// The job id of a directory named `job_<id>`, Slurm's spelling only (job ids start at 1).
pub(crate) fn job_dir(name: &str) -> Option<u64> {
    name.strip_prefix("job_")
        .and_then(canonical)
        .filter(|&id| id > 0)
}

/// Whether a directory name is a Slurm 26.05 SLUID (`s` and 13 Crockford base32 characters,
/// `src/common/sluid.c`), which names a job's cgroup v2 directory unless `CgroupJobIdPaths=yes`.
pub(crate) fn is_sluid(name: &str) -> bool {
    let mut bytes = name.bytes();
    name.len() == 14
        && matches!(bytes.next(), Some(b's' | b'S'))
        && bytes.all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
}

/// The job id in slurmstepd's process title, `slurmstepd: [12.batch]` or `[12]` (Slurm's
/// `log_build_step_id_str`, which prints the job id where there is one, the SLUID only where not).
pub(crate) fn stepd_title_job(cmdline: &[u8]) -> Option<u64> {
    let title = cmdline.split(|&b| b == 0).next()?;
    let title = std::str::from_utf8(title).ok()?;
    let inside = title.strip_prefix("slurmstepd: [")?;
    let end = inside.find(['.', ']', ' '])?;
    canonical(&inside[..end]).filter(|&id| id > 0)
}

/// The uid of a cgroup v1 directory named `uid_<uid>`.
pub(crate) fn uid_dir(name: &str) -> Option<u32> {
    name.strip_prefix("uid_")
        .and_then(canonical)
        .and_then(|n| u32::try_from(n).ok())
}

/// The step of a directory named `step_<step>`: `batch`, `extern`, `interactive`, a number, or
/// a heterogeneous component like `0+1`. Anything else is refused: in cgroup v1 the job's user
/// owns the job's directory and could make a `step_` directory of any name, which would become a
/// label value.
pub(crate) fn step_dir(name: &str) -> Option<&str> {
    let step = name.strip_prefix("step_")?;
    let plausible = !step.is_empty()
        && step.len() <= 32
        && step
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'_' | b'-'));
    plausible.then_some(step)
}

/// `AT_CLKTCK` in the auxiliary vector: the unit of `cpuacct.stat` (USER_HZ), which
/// `sysconf(_SC_CLK_TCK)` returns. The vector is pairs of native-endian machine words.
pub(crate) fn auxv_clock_ticks(auxv: &[u8]) -> Option<u64> {
    const AT_NULL: u64 = 0;
    const AT_CLKTCK: u64 = 17;
    let word = size_of::<usize>();
    let value = |bytes: &[u8]| -> Option<u64> {
        let array: [u8; size_of::<usize>()] = bytes.try_into().ok()?;
        u64::try_from(usize::from_ne_bytes(array)).ok()
    };
    for pair in auxv.chunks_exact(2 * word) {
        let key = value(&pair[..word])?;
        let ticks = value(&pair[word..])?;
        match key {
            AT_NULL => return None,
            AT_CLKTCK => return (1..=1_000_000).contains(&ticks).then_some(ticks),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_plain_digits_in_range() {
        assert_eq!(number("4096\n"), Ok(4096));
        assert_eq!(number(" 0 "), Ok(0));
        assert_eq!(number("18446744073709551615"), Ok(u64::MAX));
        for bad in [
            "",
            "-1",
            "+5",
            "abc",
            "1.5",
            "18446744073709551616",
            "99999999999999999999999",
            "12 34",
        ] {
            assert!(number(bad).is_err(), "{bad:?} was taken");
        }
        let long = "x".repeat(1000);
        let message = number(&long).unwrap_err().0;
        assert!(message.len() < 120, "{message}");
        assert!(number("\x1b[2J").unwrap_err().0.contains("\\u{1b}"));
    }

    #[test]
    fn limits_are_bytes_or_max() {
        assert_eq!(limit("max\n"), Ok(Limit::Unlimited));
        assert_eq!(limit("1073741824\n"), Ok(Limit::Bytes(1 << 30)));
        assert!(limit("-1").is_err());
        assert!(limit("maximum").is_err());
    }

    #[test]
    fn keyed_files_give_the_first_matching_line() {
        let stat = "cache 10\nrss 20\ntotal_rss 300\ntotal_cache 400\n";
        assert_eq!(keyed(stat, "total_rss"), Ok(Some(300)));
        assert_eq!(keyed(stat, "rss"), Ok(Some(20)));
        assert_eq!(keyed(stat, "total_shmem"), Ok(None));
        assert!(keyed("anon -5\n", "anon").is_err());
        assert!(keyed("anon\n", "anon").is_err());
        assert!(keyed("anon 5 6\n", "anon").is_err());
        assert_eq!(keyed("anon 5\nanon 6\n", "anon"), Ok(Some(5)));
        assert_eq!(keyed("", "anon"), Ok(None));
    }

    #[test]
    fn cpu_lists_are_counted() {
        assert_eq!(count_cpu_list("0-3,8\n"), Ok(5));
        assert_eq!(count_cpu_list("0-3,8,10-11"), Ok(7));
        assert_eq!(count_cpu_list("5"), Ok(1));
        assert_eq!(count_cpu_list("\n"), Ok(0));
        for bad in [
            "3-1",
            "0-",
            "-3",
            "a",
            "0,,1",
            "0-18446744073709551615",
            "0-3;8",
        ] {
            assert!(count_cpu_list(bad).is_err(), "{bad:?} was counted");
        }
    }

    #[test]
    fn io_stat_is_summed_over_devices() {
        let text = "8:0 rbytes=100 wbytes=20 rios=1 wios=1 dbytes=0 dios=0\n\
                    259:0 rbytes=5 wbytes=7 rios=1 wios=1 dbytes=0 dios=0\n";
        assert_eq!(io_bytes(text), Ok((105, 27)));
        assert_eq!(io_bytes(""), Ok((0, 0)));
        assert!(io_bytes("8:0 rbytes=x wbytes=1\n").is_err());
        let overflow = "8:0 rbytes=18446744073709551615\n8:1 rbytes=1\n";
        assert!(io_bytes(overflow).is_err());
    }

    #[test]
    fn the_real_uid_comes_from_the_status_file() {
        let status = "Name:\tpython\nUmask:\t0022\nUid:\t1001\t1001\t1001\t1001\nGid:\t100\n";
        assert_eq!(status_uid(status), Ok(1001));
        assert!(status_uid("Name:\tx\n").is_err());
        assert!(status_uid("Uid:\t-1\t0\n").is_err());
        assert!(status_uid("Uid:\t4294967296\n").is_err());
    }

    #[test]
    fn directory_names() {
        assert_eq!(job_dir("job_123"), Some(123));
        assert_eq!(job_dir("job_+1"), None);
        assert_eq!(job_dir("job_"), None);
        assert_eq!(job_dir("jobs_1"), None);
        // One spelling per id: a job_0007 made beside job_7 is nobody's.
        assert_eq!(job_dir("job_0007"), None);
        assert_eq!(job_dir("job_0"), None);
        assert_eq!(job_dir("job_10"), Some(10));
        assert_eq!(uid_dir("uid_0"), Some(0));
        assert_eq!(uid_dir("uid_01001"), None);
        assert_eq!(stepd_title_job(b"slurmstepd: [007.batch]\0"), None);
        assert_eq!(stepd_title_job(b"slurmstepd: [7.batch]\0"), Some(7));
        assert_eq!(uid_dir("uid_1001"), Some(1001));
        assert_eq!(uid_dir("uid_4294967296"), None);
        assert_eq!(step_dir("step_batch"), Some("batch"));
        assert_eq!(step_dir("step_0+1"), Some("0+1"));
        assert_eq!(step_dir("step_"), None);
        assert_eq!(step_dir("step_a\"b"), None);
        assert_eq!(step_dir("step_a\nb"), None);
        assert_eq!(step_dir(&format!("step_{}", "9".repeat(33))), None);
    }

    #[test]
    fn the_clock_tick_is_found_in_the_auxiliary_vector() {
        let words = |pairs: &[(usize, usize)]| -> Vec<u8> {
            pairs
                .iter()
                .flat_map(|&(k, v)| [k.to_ne_bytes(), v.to_ne_bytes()])
                .flatten()
                .collect()
        };
        assert_eq!(
            auxv_clock_ticks(&words(&[(6, 4096), (17, 100), (0, 0)])),
            Some(100)
        );
        assert_eq!(
            auxv_clock_ticks(&words(&[(6, 4096), (0, 0), (17, 100)])),
            None
        );
        assert_eq!(auxv_clock_ticks(&words(&[(17, 0), (0, 0)])), None);
        assert_eq!(auxv_clock_ticks(&[1, 2, 3]), None);
        // The real one, where there is a /proc.
        if let Ok(auxv) = std::fs::read("/proc/self/auxv") {
            assert!(auxv_clock_ticks(&auxv).is_some());
        }
    }
}
