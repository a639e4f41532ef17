//! How the pages write what they show: text from Slurm cleaned and cut short, shares as
//! percentages, durations, times, links relative to the linking page, and a page's values with
//! its charts.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use minijinja::Value;

use jobsight_base::text::clean;

/// Longest a job name, node list or other short text is shown.
const MAX_TEXT: usize = 200;

/// Longest a finding's sentences (what was seen, why it matters, what to do) are shown: whole.
const MAX_PROSE: usize = 2000;

/// `text` cleaned of control characters and cut to [`MAX_TEXT`].
pub(super) fn c(text: &str) -> String {
    clean(text, MAX_TEXT)
}

/// A finding's sentences cleaned of control characters, cut only past [`MAX_PROSE`].
pub(super) fn prose(text: &str) -> String {
    clean(text, MAX_PROSE)
}

/// A share as a percentage, as every view writes it ([`jobsight_base::units::percent`]); `-`
/// when unknown.
pub(super) fn pct(share: Option<f64>) -> String {
    share.map_or("-".into(), jobsight_base::units::percent)
}

/// A duration as every view writes it ([`jobsight_base::units::duration`]); `-` when unknown
/// or negative.
pub(super) fn duration(seconds: Option<i64>) -> String {
    seconds.map_or("-".into(), |s| jobsight_base::units::duration(s as f64))
}

/// A time to the second, in UTC; `-` when unknown.
pub(super) fn time(t: Option<DateTime<Utc>>) -> String {
    t.map_or("-".into(), |t| {
        t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
    })
}

/// A link from one page to another, both relative to the report folder: `from` is the
/// linking page's path.
pub(super) fn href(from: &std::path::Path, to: &std::path::Path) -> String {
    let depth = from.components().count().saturating_sub(1);
    format!("{}{}", "../".repeat(depth), to.display())
}

/// A page's values with its charts (SVG strings, already safe) under `chart_svgs`.
pub(super) fn with_charts(page: serde_json::Value, svgs: Vec<Value>) -> Value {
    minijinja::value::merge_maps([
        Value::from(BTreeMap::from([("chart_svgs", Value::from(svgs))])),
        crate::templates::value(page),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use jobsight_report::{job_path, user_path};

    #[test]
    fn links_are_relative() {
        let from = job_path("c", "1");
        assert_eq!(
            href(&from, &user_path("c", "a b")),
            "../../c/users/a~20b.html"
        );
        assert_eq!(
            href(&from, std::path::Path::new("index.html")),
            "../../index.html"
        );
    }
}
