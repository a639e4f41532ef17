//! The consistency check of a finding: what its evidence and text say that cannot all be true,
//! whatever the rule. Tests run it on every rule's fixture and on the demo's findings;
//! [`crate::Finding::contradictions`] runs it on one finding.

/// The order of a series' statistics: each is at most the next.
const STAT_ORDER: [&str; 7] = ["min", "p05", "p25", "p50", "p75", "p95", "max"];

/// What a finding's evidence (name, number) and text say that cannot all be true, whatever the
/// rule: a series' statistics out of order (`p05 ≤ … ≤ p95`, mean within `[min, max]`), a node
/// range upside down, a figure quoted as an average beside its 95th percentile (`X` and `X_p95`)
/// with the percentile below it, a share or efficiency outside `[0, 1]`, a negative or non-finite
/// size, count or time, and a text with an unfilled `{placeholder}`, `NaN` or `inf`. Empty when
/// the finding is consistent; tests run it on every rule's fixture and on the demo's findings.
pub fn contradictions(evidence: &[(&str, f64)], text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let get = |name: &str| evidence.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    for &(name, value) in evidence {
        let last = name.rsplit('.').next().unwrap_or(name);
        if !value.is_finite() {
            found.push(format!(
                "{name} = {value} is not a number a person can read"
            ));
            continue;
        }
        let (base, stat) = name.rsplit_once('.').unwrap_or(("", name));
        if let Some(rank) = STAT_ORDER.iter().position(|s| *s == stat) {
            for higher in &STAT_ORDER[rank + 1..] {
                if let Some(h) = get(&format!("{base}.{higher}")).filter(|h| *h < value) {
                    found.push(format!("{name} = {value} is above {base}.{higher} = {h}"));
                }
            }
        }
        if stat == "mean" {
            let (min, max) = (get(&format!("{base}.min")), get(&format!("{base}.max")));
            if min.is_some_and(|m| value < m) || max.is_some_and(|m| value > m) {
                found.push(format!(
                    "{name} = {value} is outside {base}.min..{base}.max"
                ));
            }
        }
        let node_max = get(&format!("{base}.node_mean_max"));
        if let Some(max) = node_max.filter(|m| stat == "node_mean_min" && *m < value) {
            found.push(format!(
                "{name} = {value} is above {base}.node_mean_max = {max}"
            ));
        }
        if let Some(p95) = get(&format!("{name}_p95")).filter(|p| *p < value) {
            found.push(format!(
                "{name} = {value} is quoted as an average above its 95th percentile {name}_p95 = {p95}"
            ));
        }
        let is_share = last.ends_with("_eff")
            || last.ends_with("_share")
            || last.starts_with("busy")
            || last == "node_busy"
            || last == "imbalance"
            || ["cpu_user", "cpu_system", "cpu_iowait"]
                .contains(&base.rsplit('.').next().unwrap_or(""))
                && STAT_ORDER.contains(&stat);
        if is_share && !(0.0..=1.0).contains(&value) && !name.starts_with("limit.") {
            found.push(format!("{name} = {value} is a share, outside 0..1"));
        }
        let may_be_negative =
            name.contains("slope") || name.contains("rise") || name.starts_with("limit.");
        if value < 0.0 && !may_be_negative {
            found.push(format!("{name} = {value} is negative"));
        }
    }
    let words = text.split(|c: char| c.is_whitespace() || "(),;:".contains(c));
    for word in words {
        if ["NaN", "inf", "-inf"].contains(&word) {
            found.push(format!("the text quotes {word}: {text}"));
        }
    }
    // An unfilled placeholder: `{name}` or `{name:.N}` left in the text.
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        let inside = &after[..close];
        let name = inside.split(':').next().unwrap_or("");
        if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            found.push(format!("the text has an unfilled {{{inside}}}: {text}"));
        }
        rest = &after[close + 1..];
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generic check finds what the review found (a percentile below its mean, an
    /// efficiency of 4.16) and the rest of its list, and passes a consistent finding.
    #[test]
    fn contradictions_are_found_and_consistent_findings_pass() {
        let ok = [
            ("busy", 0.006),
            ("busy_p95", 0.01),
            ("cpu_user.min", 0.0),
            ("cpu_user.mean", 0.2),
            ("cpu_user.p95", 0.4),
            ("cpu_user.max", 0.5),
            ("rise_gb", -1.0),
        ];
        assert_eq!(
            contradictions(&ok, "busy 0.006 on average"),
            Vec::<String>::new()
        );
        type Case<'a> = (&'a [(&'a str, f64)], &'a str, &'a str);
        let cases: [Case; 7] = [
            (
                &[("busy", 0.006), ("busy_p95", 0.001)],
                "",
                "above its 95th percentile",
            ),
            (&[("summary.mem_eff", 4.16)], "", "a share, outside 0..1"),
            (&[("x.p05", 3.0), ("x.p95", 2.0)], "", "is above x.p95"),
            (
                &[("x.mean", 3.0), ("x.max", 2.0)],
                "",
                "outside x.min..x.max",
            ),
            (&[("job.elapsed_s", -5.0)], "", "negative"),
            (&[("y", f64::NAN)], "", "not a number"),
            (&[], "busy {busy:.3} of the time", "unfilled {busy:.3}"),
        ];
        for (evidence, text, expected) in cases {
            let found = contradictions(evidence, text);
            assert!(
                found.iter().any(|f| f.contains(expected)),
                "{expected}: {found:?}"
            );
        }
        assert!(contradictions(&[], "job named {weird name}").is_empty());
    }
}
