//! Numbers in the units people use, for everything a person reads (the rules' messages, the
//! pages, the terminal): memory as MB, GB or TB with
//! the unit, rates as MB/s, times as hours and minutes, shares as percentages, anything else to
//! three significant digits. A value's unit comes from its name, as the warehouse names them
//! (`*_bytes`, `*_mb`, `*_bytes_per_s`, `*_s`, `*_eff`), so a finding's evidence
//! (`{"summary.mem_used_max_mb": 38909.9…}`) reads as a short table of named values.
//!
//! Memory follows Slurm's convention (`--mem=4G` is 4,096 MB: powers of 1,024, written GB);
//! rates follow the network and disk tools' (MB/s of 1,000,000 bytes).

/// A size given in bytes: `512 MB`, `38.0 GB`, `1.20 TB`.
pub fn size_from_bytes(bytes: f64) -> String {
    size_from_mb(bytes / (1024.0 * 1024.0))
}

/// A size given in MB (Slurm's unit): `512 MB`, `38.0 GB`, `1.20 TB`.
pub fn size_from_mb(mb: f64) -> String {
    let gb = mb / 1024.0;
    if !mb.is_finite() {
        "-".into()
    } else if gb.abs() >= 1024.0 {
        format!("{} TB", significant(gb / 1024.0))
    } else if gb.abs() >= 1.0 {
        format!("{} GB", significant(gb))
    } else {
        format!("{} MB", significant(mb))
    }
}

/// A rate given in bytes per second: `80.1 MB/s`, `1.25 GB/s`, `512 kB/s`.
pub fn rate_from_bytes_per_s(bytes_per_s: f64) -> String {
    let mb = bytes_per_s / 1e6;
    if !mb.is_finite() {
        "-".into()
    } else if mb.abs() >= 1000.0 {
        format!("{} GB/s", significant(mb / 1000.0))
    } else if mb.abs() >= 1.0 {
        format!("{} MB/s", significant(mb))
    } else {
        format!("{} kB/s", significant(bytes_per_s / 1e3))
    }
}

/// A duration: `45 s` under a minute, `8h 40m`, `1d 2h 03m`; `-` when negative or unknown.
pub fn duration(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        return "-".into();
    }
    let s = seconds.round() as i64;
    let (d, h, m) = (s / 86_400, (s % 86_400) / 3600, (s % 3600) / 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s} s"),
        (0, 0, m) => format!("{m} min"),
        (0, h, m) => format!("{h}h {m:02}m"),
        (d, h, m) => format!("{d}d {h}h {m:02}m"),
    }
}

/// A share of 1 as a percentage: whole from 10 % (`42 %`), with one decimal below (`1.5 %`,
/// `0.7 %`), where a whole number would hide the difference between idle and asleep.
pub fn percent(share: f64) -> String {
    if !share.is_finite() {
        "-".into()
    } else if share.abs() < 0.1 && share != 0.0 {
        format!("{:.1} %", share * 100.0)
    } else {
        format!("{:.0} %", share * 100.0)
    }
}

/// A plain number to three significant digits (`0.406`, `12.3`, `4096`, `31,200`), never in
/// exponent form.
pub fn significant(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let magnitude = v.abs().log10().floor() as i32;
    // Below a billionth nothing a person reads is told apart from none.
    if v != 0.0 && magnitude < -9 {
        return "0".into();
    }
    if v.fract() == 0.0 || magnitude >= 2 {
        return whole(v.round());
    }
    let mut decimals = (2 - magnitude).clamp(0, 11) as usize;
    let rounded: f64 = format!("{v:.decimals$}").parse().unwrap_or(v);
    // A value that rounds up a magnitude (9.996 -> 10.0) keeps three digits, not four.
    if rounded.abs() >= 10f64.powi(magnitude + 1) {
        decimals = decimals.saturating_sub(1);
        if rounded.abs() >= 100.0 {
            return whole(rounded.round());
        }
    }
    format!("{v:.decimals$}")
}

/// A whole number as written: `64`, `4096`, and from five digits on with thousands separated
/// by commas: `31,200`.
fn whole(v: f64) -> String {
    if v.abs() >= 10_000.0 && v.abs() < 9e18 {
        thousands(v as i64)
    } else {
        format!("{v:.0}")
    }
}

/// An integer with thousands separated by commas: `31,200`.
fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// The shares among the warehouse's figures: efficiencies and utilisations, between 0 and 1.
const SHARES: [&str; 6] = [
    "cpu_eff",
    "mem_eff",
    "time_eff",
    "coverage_mean",
    "changed_ratio",
    "energy_share",
];

/// The statistics of a series that keep its unit: `net_rx_bytes_per_s.mean` is a rate, while
/// `job_mem_bytes.node_cv` is a ratio.
const KEEP_UNIT: [&str; 14] = [
    "mean",
    "max",
    "min",
    "median",
    "std",
    "p05",
    "p25",
    "p50",
    "p75",
    "p95",
    "node_mean_min",
    "node_mean_max",
    "max_rise",
    "last",
];

/// A named value in its unit, the unit read from its name: `summary.mem_used_max_mb` is a
/// size, `net_rx_bytes_per_s.mean` a rate, `job.time_limit_s` a duration, `summary.cpu_eff` a
/// share; anything else (a ratio, a count, a limit of the rule book) a plain number.
pub fn named_value(name: &str, v: f64) -> String {
    let mut parts: Vec<&str> = name.split('.').collect();
    // Shares of time or of a CPU: efficiencies, `busy`, the CPU's user/system/iowait time and a
    // core's or a GPU's use (`cpu_core6_util`; `gpu_util` and `job_gpu_util`, which ingest
    // writes as 0-1 from DCGM's percent, as the rule book's GPU limits read it).
    let is_share = |p: &str| {
        // A statistic written into the name (`busy_p95`, `node_busy_mean`) keeps the unit.
        let p = ["_p95", "_p05", "_p50", "_mean", "_max", "_min"]
            .iter()
            .find_map(|stat| p.strip_suffix(stat))
            .unwrap_or(p);
        SHARES.contains(&p)
            || p.ends_with("_eff")
            || p.ends_with("_share")
            || p == "busy"
            || p.ends_with("_busy")
            || matches!(p, "cpu_user" | "cpu_system" | "cpu_iowait" | "cpu_load")
            || (p.starts_with("cpu_core") && p.ends_with("_util"))
            || matches!(p, "gpu_util" | "job_gpu_util")
    };
    // The rule book's limits are in its own units.
    if parts.first() == Some(&"limit") {
        return significant(v);
    }
    while parts.len() > 1 && parts.last().is_some_and(|p| KEEP_UNIT.contains(p)) {
        parts.pop();
    }
    if let Some(part) = parts.last() {
        if part.ends_with("_bytes_per_s") {
            return rate_from_bytes_per_s(v);
        }
        // A rate in MB per second (the rule book's `rise_rate_mb_s`), not a duration.
        if part.ends_with("_mb_s") || part.ends_with("_mb_per_s") {
            return rate_from_bytes_per_s(v * 1e6);
        }
        if part.ends_with("_bytes") {
            return size_from_bytes(v);
        }
        if part.ends_with("_mb") {
            return size_from_mb(v);
        }
        // The rule book's sizes in GB (`suggest_gb`, `limit_gb_per_node`).
        if part.ends_with("_gb") || part.contains("_gb_per_") {
            return size_from_mb(v * 1024.0);
        }
        if is_share(part) {
            return percent(v);
        }
        // Slurm's per cents (`acct_gpu_util_max_pct`).
        if part.ends_with("_pct") {
            return percent(v / 100.0);
        }
        if part.ends_with("_s") && !part.ends_with("_per_s") {
            return duration(v);
        }
    }
    significant(v)
}

/// The units after which a large whole number is a machine's figure, not a person's: seconds
/// past three hours, bytes.
const MACHINE_UNITS: [&str; 5] = [" bytes/s", " bytes", " B/s", " B", " s"];

/// The numbers of `text` a person would stumble over: an unrounded decimal (more than four
/// significant digits and three decimals, `0.4059694906469261`, or a decimal point and no unit,
/// `1727979.57`), a number in
/// exponent form (`1.05e-5`), a machine's unit on a number
/// of five digits or more (`31200 s`, `80078094 bytes/s`), and a size with a bare letter for its
/// unit (`191G`). Job ids, years, counts and a command's own argument (`--mem=26G`) are not
/// counted. For the tests that check every text a person reads.
pub fn unreadable_numbers(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let before = (i > 0).then(|| bytes[i - 1]);
        let starts = bytes[i].is_ascii_digit()
            && before.is_none_or(|b| !b.is_ascii_alphanumeric() && b != b'.');
        if !starts {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
            i += 1;
        }
        let number = text[start..i].trim_end_matches('.');
        let after = &text[start + number.len()..];
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if before == Some(b'=') || number.matches('.').count() > 1 {
            continue;
        }
        let digits = format!("{whole}{fraction}");
        let significant = digits.trim_start_matches('0').len();
        // Exponent form (`1.05e-5`, `3e8`): a machine's way to write a number.
        let exponent = after
            .strip_prefix(['e', 'E'])
            .map(|e| e.trim_start_matches(['-', '+']));
        if exponent.is_some_and(|e| e.starts_with(|c: char| c.is_ascii_digit())) {
            found.push(format!("{number}e…"));
            continue;
        }
        let unit_ends = |unit: &str| {
            after.starts_with(unit)
                && !after[unit.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
        };
        // More than four significant digits with three decimals (`0.4059694906469261`), or with
        // any and no unit after (`anomaly score 1727979.57`): nobody reads past the fourth.
        let unit_after = after
            .strip_prefix(' ')
            .is_some_and(|a| a.starts_with(|c: char| c.is_alphabetic() || c == '%'));
        if significant > 4 && (fraction.len() >= 3 || (!fraction.is_empty() && !unit_after)) {
            found.push(number.to_string());
        } else if let Some(unit) = MACHINE_UNITS.iter().find(|u| unit_ends(u))
            && whole.len() >= 5
        {
            found.push(format!("{number}{unit}"));
        } else if let Some(letter) = ["K", "M", "G", "T"].into_iter().find(|l| unit_ends(l)) {
            found.push(format!("{number}{letter}"));
        }
    }
    found
}

/// The raw identifiers in a text meant for people: `snake_case` names of columns, metrics and
/// evidence keys (`mem_used_max_mb`, `cpu_core3_util`, `limit.cpu_load.alert`), which
/// [`crate::plain`] turns into words. Skipped: what a person pastes or follows (a line with
/// `#SBATCH`, `sacct -o`, a command in backticks, a URL or a path), where the name is the thing.
pub fn raw_names(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        if line.contains("#SBATCH") || line.contains("sacct ") || line.contains("jobsight ") {
            continue;
        }
        // Outside backticks only.
        for (n, part) in line.split('`').enumerate() {
            if n % 2 == 1 {
                continue;
            }
            for word in part.split(|c: char| !(c.is_ascii_alphanumeric() || "_.:/-".contains(c))) {
                if word.contains("://") || word.contains('/') {
                    continue;
                }
                let word = word.trim_matches(|c: char| ".:-".contains(c));
                let snake = word.split('.').any(|w| {
                    w.contains('_')
                        && w.starts_with(|c: char| c.is_ascii_lowercase())
                        && w.chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                        && w.split('_').all(|p| !p.is_empty())
                });
                if snake {
                    found.push(word.to_string());
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Column and metric names are found; what a person pastes is not.
    #[test]
    fn raw_names_are_found_outside_commands() {
        assert_eq!(
            raw_names("peak mem_used_max_mb 3 GB; limit.cpu_load.alert 5 %; cpu_core3_util"),
            ["mem_used_max_mb", "limit.cpu_load.alert", "cpu_core3_util"]
        );
        assert!(
            raw_names(
                "#SBATCH --mem=4G\nsee `job_summary` or https://x.org/a_b/c_d.html\n\
                 sacct -o job_id\nNode_A 10:30 UTC, ok."
            )
            .is_empty()
        );
    }

    /// The examples read in people's units.
    #[test]
    fn machine_units_become_peoples() {
        assert_eq!(rate_from_bytes_per_s(80_078_094.0), "80.1 MB/s");
        assert_eq!(duration(31_200.0), "8h 40m");
        assert_eq!(duration(45.0), "45 s");
        assert_eq!(duration(93_780.0), "1d 2h 03m");
        assert_eq!(size_from_mb(191.0 * 1024.0), "191 GB");
        assert_eq!(size_from_mb(38_909.91), "38.0 GB");
        assert_eq!(size_from_mb(512.0), "512 MB");
        assert_eq!(size_from_bytes(1.5 * 1024f64.powi(4)), "1.50 TB");
        assert_eq!(percent(0.4059694906469261), "41 %");
        assert_eq!(percent(0.004), "0.4 %");
        assert_eq!(significant(0.4059694906469261), "0.406");
        assert_eq!(significant(9.996), "10.0");
        assert_eq!(significant(31_200.0), "31,200");
        assert_eq!(significant(64.0), "64");
        assert_eq!(significant(4096.4), "4096");
        assert_eq!(significant(0.0), "0");
        assert_eq!(significant(123.456), "123");
        assert_eq!(significant(-0.001234), "-0.00123");
        assert_eq!(significant(2.3456e-9), "0.00000000235");
        assert_eq!(significant(1.05e-5), "0.0000105");
        assert_eq!(significant(1.5e-6), "0.00000150");
        assert_eq!(significant(3e-12), "0");
        assert_eq!(significant(0.000123), "0.000123");
        assert_eq!(significant(f64::NAN), "-");
    }

    #[test]
    fn a_value_s_unit_comes_from_its_name() {
        assert_eq!(named_value("job_mem_bytes.node_cv", 0.25), "0.250");
        assert_eq!(named_value("node.job_mem_bytes.rise_s", 5400.0), "1h 30m");
        assert_eq!(named_value("limit.net_bytes.alert", 1e9), "1,000,000,000");
        assert_eq!(named_value("summary.mem_used_max_mb", 38_909.91), "38.0 GB");
        assert_eq!(
            named_value("net_rx_bytes_per_s.mean", 80_078_094.0),
            "80.1 MB/s"
        );
        assert_eq!(named_value("summary.cpu_eff", 0.148), "15 %");
        // Slurm's own per cents, and a rule's share of a GPU's time.
        assert_eq!(named_value("job.acct_gpu_util_max_pct", 2.0), percent(0.02));
        assert_eq!(named_value("gpu_busy", 0.02), percent(0.02));
        assert_eq!(named_value("node.rise_rate_mb_s", 11.2), "11.2 MB/s");
        assert_eq!(named_value("busy_p95", 0.00367), "0.4 %");
        assert_eq!(named_value("limit_gb_per_node", 64.0), "64 GB");
    }

    /// The examples are found; what people write is not.
    #[test]
    fn machine_numbers_are_found_and_readable_ones_are_not() {
        assert_eq!(
            unreadable_numbers(
                "busy 0.4059694906469261, exchanged 80078094 bytes/s, a time limit of 31200 s, memory 191G, \
                 a rate of 1.05e-5, anomaly score 1727979.57"
            ),
            [
                "0.4059694906469261",
                "80078094 bytes/s",
                "31200 s",
                "191G",
                "1.05e…",
                "1727979.57"
            ]
        );
        assert!(
            unreadable_numbers(
                "38.0 GB, 41 %, 0.406, job 4242, 2026-11-26 16:14:10, v1.2.3, 45 s, 8h 40m, 12 GB, \
                 #SBATCH --mem=26G, 1234.5 core-hours, 10.0.0.1"
            )
            .is_empty()
        );
    }
}
