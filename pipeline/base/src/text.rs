//! Text for people, made safe: control bytes escaped and durations in hours, minutes and seconds.
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
}
