//! How the pages write what they show: text from Slurm cleaned and cut short, shares as
//! percentages, durations, times, links relative to the linking page, and a page's values with
//! its charts.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use minijinja::Value;

use jobsight_base::text::clean;

/// Longest a job name, node list or rule text is shown.
const MAX_TEXT: usize = 200;

/// `text` cleaned of control characters and cut to [`MAX_TEXT`].
pub(super) fn c(text: &str) -> String {
    clean(text, MAX_TEXT)
}

/// A share as a whole percentage; `-` when unknown.
pub(super) fn pct(share: Option<f64>) -> String {
    share.map_or("-".into(), |s| format!("{:.0} %", s * 100.0))
}

/// `1d 2h 03m`, or `2h 03m` under a day; `-` when unknown or negative.
pub(super) fn duration(seconds: Option<i64>) -> String {
    match seconds {
        Some(s) if s >= 0 => {
            let (d, h, m) = (s / 86_400, (s % 86_400) / 3600, (s % 3600) / 60);
            if d > 0 {
                format!("{d}d {h}h {m:02}m")
            } else {
                format!("{h}h {m:02}m")
            }
        }
        _ => "-".into(),
    }
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
        crate::output::templates::value(page),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{job_path, user_path};

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
