//! Text for people, made safe: control bytes escaped, values cleaned and cut, HTML entities, one
//! header line, names as file names (`slug`), and durations in hours, minutes and seconds.
//! "Control characters" here are `char::is_control`'s and the bidirectional controls
//! ([`is_bidi_control`]), which would reorder what a reader sees.
//! Every stage that quotes another program's output, a job's name or a file's name in a reason or
//! a report uses these, so that no value can add a line or send an escape sequence to an admin's
//! terminal.

pub use slurm_hooks::text::is_bidi_control;

/// Whether `c` must never reach a reader as it is (see the module doc).
fn is_controlling(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

/// `text` with control characters escaped, for reasons that quote other programs' output.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if is_controlling(c) {
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
            // An entity would be decoded back into the same control: shown as its code instead.
            c if is_bidi_control(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// One header line: control characters become spaces, runs of spaces one, no ends.
pub fn one_line(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| if is_controlling(c) { ' ' } else { c })
        .collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A value from a user or another system, made safe to show: no control characters, at most
/// `max` characters (then an ellipsis).
pub fn clean(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if is_controlling(c) { '?' } else { c })
        .take(max)
        .collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

/// The longest [`slug`] kept whole, in bytes: with a page's `.html` and a temporary's prefix and
/// suffix it stays well under the 255 bytes a file name may have.
pub const MAX_SLUG_BYTES: usize = 120;

/// A name from Slurm (a job id, a user, a cluster) as a file name and URL path segment: ASCII
/// letters, digits, `-`, `_` and `.` pass (a leading `.` does not), every other byte becomes
/// `~XX` (its hex). Collision-free, so two users never share a page, and the result needs no
/// further encoding in a link. A name whose escaped form is longer than [`MAX_SLUG_BYTES`] is cut
/// there (after escaping, never inside a `~XX`) and ends in `~~` and a hash of the whole name,
/// so names of any length and script fit a file name and still differ.
pub fn slug(name: &str) -> String {
    let whole = slug_whole(name);
    if whole.len() <= MAX_SLUG_BYTES {
        return whole;
    }
    let bytes = whole.as_bytes();
    let mut cut = MAX_SLUG_BYTES;
    if bytes[cut - 1] == b'~' {
        cut -= 1;
    } else if bytes[cut - 2] == b'~' {
        cut -= 2;
    }
    format!("{}~~{}", &whole[..cut], name_hash(name))
}

/// The first 16 bytes of the SHA-256 of `name`, as hex: a hash no one can make two names share.
fn name_hash(name: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(name.as_bytes())[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The name a [`slug`] was made from, when it was not cut: every `~XX` decoded. `None` for a
/// cut slug, a malformed one, or one that decodes to something [`slug`] would write otherwise.
pub fn unslug(slugged: &str) -> Option<String> {
    if slugged == "~" {
        return Some(String::new());
    }
    if slugged.contains("~~") {
        return None;
    }
    let bytes = slugged.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'~' {
            let hex = slugged.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let name = String::from_utf8(out).ok()?;
    (slug(&name) == slugged).then_some(name)
}

/// [`slug`] without the cut.
fn slug_whole(name: &str) -> String {
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

/// Whether `user` is a plain login name: safe in an address template, a file name, a message
/// key and a command's argument.
pub fn is_login_name(user: &str) -> bool {
    !user.is_empty()
        && user.len() <= 64
        && !user.starts_with(['.', '-'])
        && user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slug_decodes_to_its_name() {
        for name in ["1234", "1234+0", "run 7/a", ".hidden", "é", ""] {
            assert_eq!(unslug(&slug(name)).as_deref(), Some(name), "{name:?}");
        }
        assert_eq!(unslug("~4"), None);
        assert_eq!(unslug("~2E"), Some(".".into()), "a leading dot is escaped");
        assert_eq!(unslug("a~2Eb"), None, "slug writes a.b, not a~2Eb");
        assert_eq!(unslug(&slug(&"x".repeat(200))), None, "cut");
    }

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

    /// Names of any length and script fit a file name, stay distinct, and are cut after their
    /// escaping (the review's 100 × 'é' was cut before and grew past 255 bytes).
    #[test]
    fn long_names_are_cut_after_escaping_and_keep_a_hash() {
        let accents = "é".repeat(100);
        let user = "u".repeat(300);
        for name in [accents.as_str(), user.as_str(), &"~".repeat(500)] {
            let s = slug(name);
            assert!(s.len() <= MAX_SLUG_BYTES + 2 + 32, "{} bytes: {s}", s.len());
            assert!(s.contains("~~"), "{s}");
            // Never a split escape before the hash.
            let head = s.split("~~").next().unwrap();
            assert!(
                head.rsplit('~').next().unwrap().len() >= 2 || !head.contains('~'),
                "{s}"
            );
        }
        let a = format!("{user}a");
        let b = format!("{user}b");
        assert_ne!(slug(&a), slug(&b));
        assert_eq!(slug(&a), slug(&a));
        // Short names are as before.
        assert_eq!(
            slug(&"x".repeat(MAX_SLUG_BYTES)),
            "x".repeat(MAX_SLUG_BYTES)
        );
    }

    /// U+202E and the other bidirectional controls never reach a reader raw.
    #[test]
    fn bidirectional_controls_are_escaped() {
        let name = "\u{202e}gnp.exe";
        assert_eq!(printable(name), "\\u{202e}gnp.exe");
        assert_eq!(clean(name, 20), "?gnp.exe");
        assert_eq!(one_line(name), "gnp.exe");
        assert_eq!(html_escape(name), "\\u{202e}gnp.exe");
        assert_eq!(html_escape("\u{2066}a\u{2069}"), "\\u{2066}a\\u{2069}");
    }
}
