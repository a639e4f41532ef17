//! Plain words for what the warehouse stores as identifiers, for everything a person reads: a
//! verdict (`memleak`, `hung-job`, `unknown`) as the problem it names, where it came from
//! (`model+rules`) as who said it, a time span as clock times with the dates where it crosses
//! midnight. The terminal, the pages, the web interface and the emails all call these, so a job
//! reads the same everywhere.

use chrono::{DateTime, Utc};

/// The problems the models and the built-in rules name, in plain words. Anything else (a site's
/// own rule or anomaly type) reads as its identifier with spaces.
const VERDICTS: [(&str, &str); 21] = [
    ("healthy", "healthy"),
    ("unknown", "unlike the healthy jobs seen"),
    ("not-judged", "not judged"),
    ("none", "healthy"),
    ("memleak", "memory leak"),
    ("memeater", "memory hog"),
    ("cpuoccupy", "CPU taken by another process"),
    ("cachecopy", "cache contention"),
    ("membw", "memory bandwidth contention"),
    ("netoccupy", "network congestion"),
    ("iobandwidth", "file-system bandwidth contention"),
    ("iometadata", "file-system metadata storm"),
    ("hung", "hung"),
    ("serial", "serial code on many cores"),
    // The built-in rules' critical findings, which name a verdict by their id.
    ("hung-job", "hung"),
    ("running-hung", "hung"),
    ("out-of-memory", "killed for memory"),
    ("gpu-idle", "GPUs idle"),
    ("running-gpu-idle", "GPUs idle"),
    ("idle-node", "a node idle"),
    ("node-fail", "a node failed"),
];

/// A verdict in plain words: `memleak` → "memory leak", `hung-job` → "hung".
pub fn verdict(id: &str) -> String {
    VERDICTS.iter().find(|(known, _)| *known == id).map_or_else(
        || id.replace(['-', '_'], " "),
        |(_, words)| words.to_string(),
    )
}

/// Who gave a verdict, for "(from …)": `model+rules` → "the models and the rules".
pub fn verdict_source(source: &str) -> &'static str {
    match source {
        "model" => "the models",
        "rules" => "the rules",
        "model+rules" => "the models and the rules",
        "anomaly-score" => "the anomaly score",
        _ => "nobody",
    }
}

/// A time span as a person reads it: `20:07 to 22:15 UTC` within a day, `27 Nov 20:07 to
/// 28 Nov 06:05 UTC` across midnight.
pub fn time_span(from: DateTime<Utc>, to: DateTime<Utc>) -> String {
    if from.date_naive() == to.date_naive() {
        format!("{} to {}", from.format("%H:%M"), to.format("%H:%M UTC"))
    } else {
        format!(
            "{} to {}",
            from.format("%-d %b %H:%M"),
            to.format("%-d %b %H:%M UTC")
        )
    }
}

/// Whole names of the warehouse's figures that read better than their parts.
const FIGURES: [(&str, &str); 24] = [
    ("limit_gb_per_node", "limit per node"),
    ("reached_gb_per_node", "reached per node"),
    ("suggest_gb", "request to ask for per node"),
    ("used_gb_per_node", "peak per node"),
    ("requested_gb_per_node", "requested per node"),
    ("judgeable", "judged on its telemetry"),
    ("mem_used_max_mb", "peak memory"),
    ("req_mem_mb", "memory requested"),
    ("mem_eff", "memory used of the request"),
    ("cpu_eff", "CPU efficiency"),
    ("time_eff", "time used of the limit"),
    ("time_limit_s", "time limit"),
    ("elapsed_s", "run time"),
    ("cpu_used_cores", "cores busy"),
    ("gpu_util", "GPU use"),
    ("gpu_busy", "GPU use"),
    (
        "acct_gpu_util_max_pct",
        "GPU use at its peak (Slurm's accounting)",
    ),
    ("shared", "shared its nodes"),
    ("num_nodes", "nodes"),
    ("cpus", "cores"),
    ("gpus", "GPUs"),
    ("job_mem_bytes", "job memory"),
    ("mem_used_bytes", "memory in use"),
    ("rise_rate_mb_s", "rise rate"),
];

/// Words for the parts of a figure's name and its statistics.
const PARTS: [(&str, &str); 32] = [
    ("cpu", "CPU"),
    ("cpus", "CPUs"),
    ("gpus", "GPUs"),
    ("gpu", "GPU"),
    ("mem", "memory"),
    ("util", "use"),
    ("rx", "received"),
    ("tx", "sent"),
    ("fs", "file-system"),
    ("io", "I/O"),
    ("net", "network"),
    ("iowait", "I/O wait"),
    ("ipc", "instructions per cycle"),
    ("eff", "efficiency"),
    ("mean", "mean"),
    ("max", "peak"),
    ("min", "lowest"),
    ("std", "spread"),
    ("median", "median"),
    ("p05", "5th percentile"),
    ("p95", "95th percentile"),
    ("p50", "median"),
    ("node_cv", "spread across nodes"),
    ("max_rise", "largest rise"),
    ("rise_s", "time rising"),
    ("slope_per_h", "change per hour"),
    ("node_mean_min", "lowest node's mean"),
    ("node_mean_max", "highest node's mean"),
    ("alert", "alert"),
    ("warn", "warning"),
    ("per", "per"),
    ("last", "last"),
];

/// A figure's name as words: whole names first ([`FIGURES`]), else each part's word with the
/// units' suffixes dropped (the value carries its unit).
fn figure_words(name: &str) -> String {
    if let Some((_, words)) = FIGURES.iter().find(|(n, _)| *n == name) {
        return words.to_string();
    }
    if let Some((_, words)) = PARTS.iter().find(|(n, _)| *n == name) {
        return words.to_string();
    }
    let trimmed = ["_bytes_per_s", "_per_s", "_bytes", "_mb", "_s"]
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
        .unwrap_or(name);
    trimmed
        .split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            PARTS
                .iter()
                .find(|(n, _)| *n == p)
                .map_or(p.to_string(), |(_, w)| w.to_string())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A finding's evidence key as words (the value beside it has its unit):
/// `summary.mem_used_max_mb` → "peak memory", `cpu_user.mean` → "CPU user, mean",
/// `limit.cpu_load.alert` → "limit of CPU load (alert)", `node.cpu_user.mean` (a per-node rule's
/// node) → "CPU user, mean on this node".
pub fn evidence_label(key: &str) -> String {
    let mut parts: Vec<&str> = key.split('.').filter(|p| !p.is_empty()).collect();
    let limit = parts.first() == Some(&"limit");
    // A per-node rule's figure of its node, beside the same figure of the whole job.
    let of_the_node = parts.first() == Some(&"node") && parts.len() > 2;
    if matches!(parts.first(), Some(&("summary" | "job" | "node" | "limit"))) && parts.len() > 1 {
        parts.remove(0);
    }
    let words: Vec<String> = parts.iter().map(|p| figure_words(p)).collect();
    match (limit, words.as_slice()) {
        (true, [what, level]) => format!("limit of {what} ({level})"),
        (true, _) => format!("limit of {}", words.join(", ")),
        (false, _) if of_the_node => format!("{} on this node", words.join(", ")),
        (false, _) => words.join(", "),
    }
}

/// A telemetry metric's name as a chart's title: `job_mem_bytes` → "Job memory",
/// `net_rx_bytes_per_s` → "Network received", `cpu_core_util` (a family) → "CPU core use".
pub fn metric_name(metric: &str) -> String {
    let words = figure_words(metric);
    let mut chars = words.chars();
    chars.next().map_or(String::new(), |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// How a job ended, from Slurm's `ExitCode` pair: `exit code 3`, `exit code 0 (signal 9)`. Only a
/// real signal (1 to 64) is named: Slurm records an out-of-memory kill as `0:125`, and there is
/// no signal 125 (the job's state says what happened).
pub fn exit_status(code: i64, signal: Option<i64>) -> String {
    match signal {
        Some(sig @ 1..=64) => format!("exit code {code} (signal {sig})"),
        _ => format!("exit code {code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn metric_names_read_as_titles() {
        assert_eq!(metric_name("job_mem_bytes"), "Job memory");
        assert_eq!(metric_name("net_rx_bytes_per_s"), "Network received");
        assert_eq!(metric_name("cpu_core_util"), "CPU core use");
        assert_eq!(metric_name("mem_used_bytes"), "Memory in use");
    }

    #[test]
    fn identifiers_read_as_words() {
        assert_eq!(verdict("memleak"), "memory leak");
        assert_eq!(verdict("hung-job"), "hung");
        assert_eq!(verdict("out-of-memory"), "killed for memory");
        assert_eq!(verdict("site-rule_x"), "site rule x");
        assert_eq!(verdict_source("model+rules"), "the models and the rules");
    }

    #[test]
    fn evidence_keys_read_as_words() {
        assert_eq!(evidence_label("summary.mem_used_max_mb"), "peak memory");
        assert_eq!(evidence_label("cpu_user.mean"), "CPU user, mean");
        assert_eq!(
            evidence_label("limit.cpu_load.alert"),
            "limit of CPU load (alert)"
        );
        assert_eq!(evidence_label("summary.shared"), "shared its nodes");
        assert_eq!(
            evidence_label("net_rx_bytes_per_s.p95"),
            "network received, 95th percentile"
        );
        assert_eq!(evidence_label("node.rise_rate_mb_s"), "rise rate");
        assert_eq!(
            evidence_label("node.job_cpu_cores.mean"),
            "job CPU cores, mean on this node"
        );
        assert_eq!(evidence_label("gpu_util.mean"), "GPU use, mean");
    }

    #[test]
    fn only_real_signals_are_named() {
        assert_eq!(exit_status(0, Some(9)), "exit code 0 (signal 9)");
        assert_eq!(exit_status(0, Some(125)), "exit code 0");
        assert_eq!(exit_status(3, None), "exit code 3");
    }

    #[test]
    fn a_span_across_midnight_has_its_dates() {
        let at = |d, h, m| Utc.with_ymd_and_hms(2026, 11, d, h, m, 0).unwrap();
        assert_eq!(
            time_span(at(27, 20, 7), at(27, 22, 15)),
            "20:07 to 22:15 UTC"
        );
        assert_eq!(
            time_span(at(27, 20, 7), at(28, 6, 5)),
            "27 Nov 20:07 to 28 Nov 06:05 UTC"
        );
    }
}
