//! A finding's evidence for a person: the flat JSON the `findings` table keeps, as a short table
//! of named values, each in its unit ([`jobsight_base::units`], which reads the unit from the
//! value's name).

pub use jobsight_base::units::*;

/// A finding's evidence (flat JSON, as the `findings` table keeps it) as values in their units
/// under labels in words ([`jobsight_base::plain::evidence_label`]), in the order stored; text and
/// yes/no as they are. Empty for empty or malformed evidence.
pub fn evidence_rows(evidence: &str) -> Vec<(String, String)> {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(evidence)
    else {
        return Vec::new();
    };
    map.iter()
        .map(|(name, value)| {
            let text = match value {
                // A rule book limit in the unit of what it limits.
                serde_json::Value::Number(n) => match name.strip_prefix("limit.") {
                    Some(limit) => n.as_f64().map_or("-".into(), |v| {
                        threshold_value(limit.split('.').next().unwrap_or(limit), v)
                    }),
                    None => n.as_f64().map_or("-".into(), |v| named_value(name, v)),
                },
                serde_json::Value::String(s) => jobsight_base::text::clean(s, 200),
                serde_json::Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
                serde_json::Value::Null => "-".into(),
                other => jobsight_base::text::clean(&other.to_string(), 200),
            };
            let label = jobsight_base::plain::evidence_label(name);
            (jobsight_base::text::clean(&label, 80), text)
        })
        .collect()
}

/// A value of the thresholds block in its unit, read from the rule book's limits it is judged
/// by (`[limits.<name>]`): the built-in book's characteristics are shares, sizes, byte rates or
/// counts per second. A site's own limits print as plain numbers to three significant digits.
pub fn threshold_value(limits: &str, v: f64) -> String {
    match limits {
        "cpu_load" | "mem_eff" | "gpu_util" | "iowait" => percent(v),
        "mem_per_node" | "gpu_mem" => size_from_bytes(v),
        "mem_bw" | "net_bytes" | "fs_bytes" => rate_from_bytes_per_s(v),
        "net_packets" | "fs_metadata" => format!("{}/s", significant(v)),
        // `load_per_core`, `ipc` and a site's own limits: plain numbers.
        _ => significant(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in limits whose values are plain numbers (a load average per core, instructions
    /// per cycle).
    const PLAIN_LIMITS: [&str; 2] = ["load_per_core", "ipc"];

    /// Every limit of the built-in rule book has its unit: a new one without fails here.
    #[test]
    fn every_built_in_limit_has_a_unit() {
        let book = include_str!("../../rules/book/thresholds.toml");
        let limits: Vec<&str> = book
            .lines()
            .filter_map(|l| l.strip_prefix("[limits."))
            .filter_map(|l| l.split(']').next())
            .collect();
        assert!(limits.len() >= 13, "{limits:?}");
        for name in limits {
            let shown = threshold_value(name, 4.38e9);
            assert!(
                PLAIN_LIMITS.contains(&name) || shown != significant(4.38e9),
                "[limits.{name}] has no unit"
            );
        }
        assert_eq!(threshold_value("net_bytes", 4.38e9), "4.38 GB/s");
        assert_eq!(threshold_value("gpu_mem", 4.38e9), "4.08 GB");
        assert_eq!(threshold_value("cpu_load", 0.42), "42 %");
        assert_eq!(threshold_value("ipc", 1.234), "1.23");
    }

    /// Evidence as the rules store it becomes values in their units under labels in words.
    #[test]
    fn evidence_reads_as_named_values() {
        let rows = evidence_rows(
            r#"{"summary.mem_eff":0.1484295353293419,"summary.mem_used_max_mb":38909.91,"job.time_limit_s":31200,"net_rx_bytes_per_s.mean":80078094.0,"cpu_user.mean":0.4059694906469261,"job.state":"COMPLETED","summary.judgeable":true}"#,
        );
        let mut text: Vec<String> = rows.iter().map(|(k, v)| format!("{k}={v}")).collect();
        text.sort();
        assert_eq!(
            text,
            [
                "CPU user, mean=41 %",
                "judged on its telemetry=yes",
                "memory used of the request=15 %",
                "network received, mean=80.1 MB/s",
                "peak memory=38.0 GB",
                "state=COMPLETED",
                "time limit=8h 40m",
            ]
        );

        assert!(evidence_rows("not json").is_empty());
    }
}
