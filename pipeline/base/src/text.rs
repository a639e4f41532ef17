//! Text for people, made safe: control bytes escaped, values cleaned and cut, HTML entities, one
//! header line, names as file names (`slug`), and durations in hours, minutes and seconds.
//! Every stage that quotes another program's output, a job's name or a file's name in a reason or
//! a report uses these, so that no value can add a line or send an escape sequence to an admin's
//! terminal.

/// `text` with control characters escaped, for reasons that quote other programs' output.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `1h02m03s`-style durations for ages in reports.
pub fn human_duration(seconds: i64) -> String {
    let s = seconds.max(0);
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, min, sec) => format!("{min}m{sec:02}s"),
        (h, min, sec) => format!("{h}h{min:02}m{sec:02}s"),
    }
}

/// `& < > " '` as HTML entities: enough for element text and quoted attribute values.
pub fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One header line: control characters become spaces, runs of spaces one, no ends.
pub fn one_line(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A value from a user or another system, made safe to show: no control characters, at most
/// `max` characters (then an ellipsis).
pub fn clean(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .take(max)
        .collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

/// A name from Slurm (a job id, a user, a cluster) as a file name and URL path segment: ASCII
/// letters, digits, `-`, `_` and `.` pass (a leading `.` does not), every other byte becomes
/// `~XX` (its hex). Reversible and collision-free, so two users never share a page, and the
/// result needs no further encoding in a link.
pub fn slug(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, b) in name.bytes().enumerate() {
        let plain = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_') || (b == b'.' && i > 0);
        if plain {
            out.push(b as char);
        } else {
            out.push_str(&format!("~{b:02X}"));
        }
    }
    if out.is_empty() {
        // An empty name still needs a file of its own.
        out.push('~');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(human_duration(-5), "0s");
        assert_eq!(human_duration(59), "59s");
        assert_eq!(human_duration(61), "1m01s");
        assert_eq!(human_duration(3723), "1h02m03s");
    }

    #[test]
    fn control_bytes_are_escaped() {
        assert_eq!(printable("a\u{1b}[2J\nb"), "a\\u{1b}[2J\\nb");
        assert_eq!(printable("plain text"), "plain text");
    }

    #[test]
    fn slugs_are_plain_and_distinct() {
        assert_eq!(slug("12345_7"), "12345_7");
        assert_eq!(slug("alice"), "alice");
        assert_eq!(slug("../etc/passwd"), "~2E.~2Fetc~2Fpasswd");
        assert_eq!(slug("a b"), "a~20b");
        assert_eq!(slug(""), "~");
        assert_ne!(slug("a~20b"), slug("a b"));
    }
}
