//! A finding's evidence for a person: the flat JSON the `findings` table keeps, as a short table
//! of named values, each in its unit ([`jobsight_base::units`], which reads the unit from the
//! value's name).

pub use jobsight_base::units::*;

/// A finding's evidence (flat JSON, as the `findings` table keeps it) as named values in their
/// units, in the order stored; text and yes/no as they are. Empty for empty or malformed
/// evidence.
pub fn evidence_rows(evidence: &str) -> Vec<(String, String)> {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(evidence)
    else {
        return Vec::new();
    };
    map.iter()
        .map(|(name, value)| {
            let text = match value {
                serde_json::Value::Number(n) => {
                    n.as_f64().map_or("-".into(), |v| named_value(name, v))
                }
                serde_json::Value::String(s) => jobsight_base::text::clean(s, 200),
                serde_json::Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
                serde_json::Value::Null => "-".into(),
                other => jobsight_base::text::clean(&other.to_string(), 200),
            };
            (jobsight_base::text::clean(name, 80), text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Evidence as the rules store it becomes named values, each in its unit.
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
                "cpu_user.mean=0.406",
                "job.state=COMPLETED",
                "job.time_limit_s=8h 40m",
                "net_rx_bytes_per_s.mean=80.1 MB/s",
                "summary.judgeable=yes",
                "summary.mem_eff=15 %",
                "summary.mem_used_max_mb=38.0 GB",
            ]
        );

        assert!(evidence_rows("not json").is_empty());
    }
}
