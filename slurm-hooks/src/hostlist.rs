//! Slurm host lists and per-node counts: `node[01-04,07],gpu[1-2]` and `2(x3),1`.
//!
//! Slurm hands the epilog compressed lists. [`expand`] turns a host list into node names exactly as
//! `scontrol show hostnames` does (zero padding kept, several ranges per bracket, several brackets
//! per name as a cartesian product, duplicates kept in order, empty items skipped); the integration
//! test against a real Slurm compares the two. [`compress`] is the inverse used for display and
//! by the property tests. [`expand_counts`] expands `SLURM_JOB_CPUS_PER_NODE`.
//!
//! The input comes from the environment of a hook, so it is not trusted: malformed lists are
//! errors, never panics, and expansion is capped at [`MAX_HOSTS`] names.

use std::fmt;

/// Upper bound on the names one list may expand to; far above any real cluster, and low enough
/// that `n[0-99999999999]` cannot exhaust the memory of the node running the hook.
pub const MAX_HOSTS: usize = 1_000_000;
/// The most bytes of host names a list may expand to (names alone, 32 MiB): checked before
/// expanding, so a short list cannot make the hook allocate hundreds of megabytes.
pub const MAX_EXPANDED_BYTES: usize = 32 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostListError {
    pub list: String,
    pub reason: String,
}

impl fmt::Display for HostListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid host list {:?}: {}", self.list, self.reason)
    }
}

impl std::error::Error for HostListError {}

/// Expands a Slurm host list into node names, in Slurm's order.
pub fn expand(list: &str) -> Result<Vec<String>, HostListError> {
    expand_within(list, MAX_EXPANDED_BYTES)
}

/// [`expand`], refusing a list whose names would take more than `max_bytes` (at most
/// [`MAX_EXPANDED_BYTES`]): the epilog hook keeps no expansion longer than its record may be,
/// so it does not make one (a million names took 111 MB, more than Slurm may let a hook have).
pub fn expand_within(list: &str, max_bytes: usize) -> Result<Vec<String>, HostListError> {
    let max_bytes = max_bytes.min(MAX_EXPANDED_BYTES);
    let fail = |reason: String| HostListError {
        list: list.to_string(),
        reason,
    };
    // Size everything before expanding anything: a 90-byte list can name a billion hosts, and
    // the hook must fail with a reason, not run out of memory (a node whose epilog dies drains).
    let mut items = Vec::new();
    let (mut total_names, mut total_bytes) = (0usize, 0usize);
    for item in split_top_level(list).map_err(fail)? {
        if item.is_empty() {
            continue;
        }
        let pieces = parse_item(item).map_err(fail)?;
        let (names, bytes) = expanded_size(&pieces)
            .ok_or_else(|| fail(format!("expands to more than {MAX_HOSTS} names")))?;
        total_names = total_names.saturating_add(names);
        total_bytes = total_bytes.saturating_add(bytes);
        if total_names > MAX_HOSTS {
            return Err(fail(format!("expands to more than {MAX_HOSTS} names")));
        }
        if total_bytes > max_bytes {
            return Err(fail(format!(
                "expands to more than {} KiB of names",
                max_bytes >> 10
            )));
        }
        items.push(pieces);
    }
    let mut hosts = Vec::with_capacity(total_names);
    for pieces in items {
        // Cartesian product of the bracket groups, leftmost varying slowest (as Slurm does).
        let mut names = vec![String::new()];
        for piece in &pieces {
            let options: Vec<String> = match piece {
                Piece::Literal(s) => vec![s.to_string()],
                Piece::Ranges(ranges) => ranges.iter().flat_map(Range::names).collect(),
            };
            names = names
                .iter()
                .flat_map(|prefix| options.iter().map(move |o| format!("{prefix}{o}")))
                .collect();
        }
        hosts.extend(names);
    }
    Ok(hosts)
}

/// The number of names one item expands to and their total length in bytes (an upper bound),
/// or `None` beyond [`MAX_HOSTS`] names; computed without expanding.
fn expanded_size(pieces: &[Piece<'_>]) -> Option<(usize, usize)> {
    let (mut names, mut name_len) = (1usize, 0usize);
    for piece in pieces {
        match piece {
            Piece::Literal(s) => name_len += s.len(),
            Piece::Ranges(ranges) => {
                let mut options = 0usize;
                let mut widest = 0usize;
                for r in ranges {
                    let count = usize::try_from(r.hi - r.lo + 1).ok()?;
                    options = options.checked_add(count)?;
                    widest = widest.max(r.width).max(r.hi.to_string().len());
                }
                names = names.checked_mul(options)?;
                name_len += widest;
            }
        }
        if names > MAX_HOSTS {
            return None;
        }
    }
    Some((names, names.checked_mul(name_len)?))
}

/// Splits at commas that are outside brackets.
fn split_top_level(list: &str) -> Result<Vec<&str>, String> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0u32, 0usize);
    for (i, c) in list.char_indices() {
        match c {
            '[' if depth == 0 => depth = 1,
            '[' => return Err("nested '['".into()),
            ']' if depth == 1 => depth = 0,
            ']' => return Err("']' without '['".into()),
            ',' if depth == 0 => {
                items.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err("'[' without ']'".into());
    }
    items.push(&list[start..]);
    Ok(items)
}

enum Piece<'a> {
    Literal(&'a str),
    Ranges(Vec<Range>),
}

struct Range {
    lo: u64,
    hi: u64,
    width: usize,
}

impl Range {
    fn names(&self) -> impl Iterator<Item = String> + '_ {
        (self.lo..=self.hi).map(move |n| format!("{n:0width$}", width = self.width))
    }
}

fn parse_item(item: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut pieces = Vec::new();
    let mut rest = item;
    while let Some(open) = rest.find('[') {
        if open > 0 {
            pieces.push(Piece::Literal(&rest[..open]));
        }
        let close = rest[open..].find(']').ok_or("'[' without ']'")? + open;
        let ranges = rest[open + 1..close]
            .split(',')
            .map(parse_range)
            .collect::<Result<Vec<_>, _>>()?;
        pieces.push(Piece::Ranges(ranges));
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Literal(rest));
    }
    Ok(pieces)
}

fn parse_range(text: &str) -> Result<Range, String> {
    let (lo_text, hi_text) = text.split_once('-').unwrap_or((text, text));
    let number = |s: &str| -> Result<u64, String> {
        if s.is_empty() || s.len() > 18 || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("invalid range {text:?}"));
        }
        s.parse::<u64>()
            .map_err(|_| format!("invalid range {text:?}"))
    };
    let (lo, hi) = (number(lo_text)?, number(hi_text)?);
    if lo > hi {
        return Err(format!("descending range {text:?}"));
    }
    if hi - lo >= MAX_HOSTS as u64 {
        return Err(format!("range {text:?} has more than {MAX_HOSTS} names"));
    }
    // Slurm pads every number to the width of the lower bound: [08-10] -> 08 09 10, [8-10] -> 8 9 10.
    Ok(Range {
        lo,
        hi,
        width: lo_text.len(),
    })
}

/// Consecutive names that share a prefix and a zero-padding width, as inclusive number ranges.
struct Run {
    prefix: String,
    width: usize,
    ranges: Vec<(u64, u64)>,
}

impl Run {
    fn render(&self) -> String {
        let width = self.width;
        let body: Vec<String> = self
            .ranges
            .iter()
            .map(|&(lo, hi)| {
                if lo == hi {
                    format!("{lo:0width$}")
                } else {
                    format!("{lo:0width$}-{hi:0width$}")
                }
            })
            .collect();
        match self.ranges.as_slice() {
            [(lo, hi)] if lo == hi => format!("{}{}", self.prefix, body[0]),
            _ => format!("{}[{}]", self.prefix, body.join(",")),
        }
    }
}

/// Compresses node names into Slurm's notation, merging consecutive numbers with the same prefix
/// and zero-padding width. Order is kept: only neighbours are merged, so `expand(compress(x)) == x`.
pub fn compress(hosts: &[String]) -> String {
    let mut items: Vec<String> = Vec::new();
    let mut run: Option<Run> = None;
    for host in hosts {
        let numbered =
            split_numeric_suffix(host).and_then(|(p, d)| Some((p, d, d.parse::<u64>().ok()?)));
        let Some((prefix, digits, n)) = numbered else {
            items.extend(run.take().map(|r| r.render()));
            items.push(host.clone());
            continue;
        };
        // Merge only when the run's zero-padding width spells this number exactly as given.
        match &mut run {
            Some(r) if r.prefix == prefix && format!("{n:0w$}", w = r.width) == digits => {
                match r.ranges.last_mut() {
                    Some(last) if last.1 + 1 == n => last.1 = n,
                    _ => r.ranges.push((n, n)),
                }
            }
            _ => {
                items.extend(run.take().map(|r| r.render()));
                run = Some(Run {
                    prefix: prefix.to_string(),
                    width: digits.len(),
                    ranges: vec![(n, n)],
                });
            }
        }
    }
    items.extend(run.take().map(|r| r.render()));
    items.join(",")
}

/// Splits `node007` into (`node`, `007`); `None` when the name does not end in a digit or
/// contains characters that would change meaning inside a host list.
fn split_numeric_suffix(host: &str) -> Option<(&str, &str)> {
    if host.contains(['[', ']', ',']) {
        return None;
    }
    let digits_start = host.len() - host.bytes().rev().take_while(u8::is_ascii_digit).count();
    if digits_start == host.len() || host.len() - digits_start > 18 {
        return None;
    }
    Some(host.split_at(digits_start))
}

/// Expands Slurm's per-node count notation (`SLURM_JOB_CPUS_PER_NODE`): `2(x3),1` -> [2, 2, 2, 1].
pub fn expand_counts(text: &str) -> Result<Vec<u32>, HostListError> {
    let fail = |reason: String| HostListError {
        list: text.to_string(),
        reason,
    };
    let mut counts = Vec::new();
    for item in text.split(',') {
        let (value, repeat) = match item.split_once("(x") {
            Some((value, rest)) => {
                let repeat = rest
                    .strip_suffix(')')
                    .and_then(|r| r.parse::<usize>().ok())
                    .ok_or_else(|| fail(format!("invalid repeat in {item:?}")))?;
                (value, repeat)
            }
            None => (item, 1),
        };
        let value: u32 = value
            .parse()
            .map_err(|_| fail(format!("invalid count {item:?}")))?;
        if repeat > MAX_HOSTS - counts.len() {
            return Err(fail(format!("more than {MAX_HOSTS} nodes")));
        }
        counts.extend(std::iter::repeat_n(value, repeat));
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Short lists that would expand to millions of names or hundreds of megabytes, and repeat
    /// counts that would overflow, are errors found before anything is expanded.
    #[test]
    fn huge_expansions_are_refused_before_expanding() {
        let started = std::time::Instant::now();
        for list in [
            "n[0-999999,0-999999]",
            "a[0-999999],b[0-999999]",
            "n[0-999][0-999][0-9]",
            &format!("{}[0-999999]", "x".repeat(60)),
        ] {
            let e = expand(list).unwrap_err().to_string();
            assert!(e.contains("more than"), "{list}: {e}");
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!(expand("n[0-999]").unwrap().len(), 1000);
        // The hook's bound, its record's size: `n[0-999999]` (about 6.9 MB of names, 111 MB
        // once expanded) is refused unexpanded; what fits a record is expanded.
        let e = expand_within("n[0-999999]", 1 << 20)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 1024 KiB of names"), "{e}");
        assert_eq!(expand_within("n[0-9999]", 1 << 20).unwrap().len(), 10_000);
        for text in ["2(x18446744073709551615)", "2(x999999),1(x999999)"] {
            assert!(expand_counts(text).is_err(), "{text}");
        }
    }

    fn names(list: &str) -> Vec<String> {
        expand(list).unwrap()
    }

    #[test]
    fn expands_like_scontrol_show_hostnames() {
        // Expected values are what `scontrol show hostnames` printed on Slurm 22.05.8.
        assert_eq!(
            names("node[01-04,07],gpu[1-2]"),
            [
                "node01", "node02", "node03", "node04", "node07", "gpu1", "gpu2"
            ]
        );
        assert_eq!(names("n[8-10]"), ["n8", "n9", "n10"]);
        assert_eq!(names("n[08-10]"), ["n08", "n09", "n10"]);
        assert_eq!(names("n[001-3]"), ["n001", "n002", "n003"]);
        assert_eq!(names("r[1-2]n[1-2]"), ["r1n1", "r1n2", "r2n1", "r2n2"]);
        assert_eq!(names("a,b,a"), ["a", "b", "a"]);
        assert_eq!(names("n[1,1]"), ["n1", "n1"]);
        assert_eq!(names("[1-2]"), ["1", "2"]);
        assert_eq!(names("n[1-2],"), ["n1", "n2"]);
        assert_eq!(names(",n1"), ["n1"]);
        assert_eq!(names("vm"), ["vm"]);
        assert!(names("").is_empty());
    }

    #[test]
    fn rejects_malformed_lists() {
        for bad in [
            "n[3-1]", "n[1-3", "x[]", "n]1", "n[[1]]", "n[a-b]", "n[1-]", "n[-1]", "n[1-2-3]",
        ] {
            assert!(expand(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn caps_the_expansion() {
        let err = expand("n[0-99999999999]").unwrap_err();
        assert!(err.reason.contains("more than"), "{err}");
        let err = expand("a[0-999]b[0-999]c[0-999]").unwrap_err();
        assert!(err.reason.contains("more than"), "{err}");
    }

    #[test]
    fn compresses_neighbours_only() {
        let hosts: Vec<String> = ["n01", "n02", "n03", "n07", "gpu1", "gpu2", "login", "n04"]
            .map(String::from)
            .to_vec();
        assert_eq!(compress(&hosts), "n[01-03,07],gpu[1-2],login,n04");
        let hosts: Vec<String> = ["n8", "n9", "n10"].map(String::from).to_vec();
        assert_eq!(compress(&hosts), "n[8-10]");
    }

    #[test]
    fn expands_cpu_counts() {
        assert_eq!(expand_counts("2(x3),1").unwrap(), [2, 2, 2, 1]);
        assert_eq!(expand_counts("64").unwrap(), [64]);
        for bad in ["", "2(x", "x", "2(x-1)", "2(3)", "1,,2"] {
            assert!(expand_counts(bad).is_err(), "{bad} should be rejected");
        }
    }

    fn host_name() -> impl Strategy<Value = String> {
        // A prefix from a small alphabet (so neighbours often share it) and a number with or
        // without zero padding, or a name with no number at all.
        let numbered =
            ("[a-c]{1,3}", 0u64..200, 0usize..4).prop_map(|(p, n, pad)| format!("{p}{n:0pad$}"));
        prop_oneof![4 => numbered, 1 => "[a-z]{1,6}"]
    }

    proptest! {
        #[test]
        fn expand_inverts_compress(hosts in proptest::collection::vec(host_name(), 0..40)) {
            let list = compress(&hosts);
            prop_assert_eq!(expand(&list).unwrap(), hosts, "list {}", list);
        }

        #[test]
        fn expansion_of_a_range_has_the_right_size(prefix in "[a-z]{1,4}", lo in 0u64..500, len in 0u64..300, pad in 1usize..5) {
            let hi = lo + len;
            let list = format!("{prefix}[{lo:0pad$}-{hi}]");
            let hosts = expand(&list).unwrap();
            prop_assert_eq!(hosts.len() as u64, len + 1);
            let width = format!("{lo:0pad$}").len();
            for (i, h) in hosts.iter().enumerate() {
                let digits = &h[prefix.len()..];
                prop_assert!(digits.len() >= width, "{} shorter than {}", h, width);
                prop_assert_eq!(digits.parse::<u64>().unwrap(), lo + i as u64);
            }
        }

        #[test]
        fn garbage_never_panics(s in "[a-z0-9\\[\\],\\-x()]{0,30}") {
            let _ = expand(&s);
            let _ = expand_counts(&s);
        }
    }
}
