//! The demo's report as text: writing a part of it, indenting what a command would print under
//! the part that shows it, counts as `key count` pairs, and the hooks' latency figures.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use super::error::DemoError;

/// Writes `text` to the report.
pub(super) fn show(out: &mut dyn Write, text: String) -> Result<(), DemoError> {
    out.write_all(text.as_bytes()).map_err(DemoError::Output)
}

/// Latency percentile (nearest rank) of a sorted list.
pub(super) fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// A duration in milliseconds, e.g. `1.3 ms`.
pub(super) fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// `key count` pairs, comma-separated.
pub(super) fn join(counts: &BTreeMap<String, usize>) -> String {
    counts
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first `n` lines of `text`.
pub(super) fn first_lines(text: &str, n: usize) -> String {
    text.lines().take(n).map(|l| format!("{l}\n")).collect()
}

/// `text` indented by three spaces: what a command prints, under the part of the report that
/// shows it.
pub(super) fn indent(text: &str) -> String {
    text.lines().map(|l| format!("   {l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let v: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&v, 50.0), Duration::from_millis(50));
        assert_eq!(percentile(&v, 99.0), Duration::from_millis(99));
        assert_eq!(percentile(&v, 100.0), Duration::from_millis(100));
        assert_eq!(percentile(&[], 50.0), Duration::ZERO);
    }
}
