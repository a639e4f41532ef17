//! Prometheus as a telemetry source: `query_range` over a job's nodes and run time.
//!
//! Input: a job (id, nodes, start, end) and the metric templates of the configuration
//! ([`super::settings::MetricTemplate`]): PromQL with a `{nodes}` placeholder that becomes a label
//! matcher for exactly the job's nodes. Output: one telemetry sample per node, metric and step,
//! handed to the caller. Counters are turned into rates by the templates' PromQL `rate()`, which
//! handles counter resets (a restarted exporter) the way Prometheus documents; we never difference
//! raw counters ourselves here.
//!
//! A long job is split into chunks so that no series exceeds Prometheus's limit of 11,000 points
//! per query (and no answer grows past about a million points for a job on many nodes). Chunks
//! share no timestamps: each chunk starts one step after the previous one ended, on a grid aligned
//! to the step, so the same job always gives the same samples.
//!
//! Failure: nothing from Prometheus is trusted. A connection error, a timeout, an HTTP error, an
//! answer that is not the documented JSON, a query error, a partial answer (`warnings`), a series
//! for a node that is not the job's, or two series for one node all fail the whole fetch with a
//! [`PromError`] that names the job, the metric and what went wrong; the caller keeps the job
//! pending and retries. A node with no data at all is not an error: coverage is a feature.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::settings::{MetricTemplate, PrometheusSettings};

mod together;
// The settings check templates when the configuration is resolved, so the check lives there (a
// module below this one); re-exported so that it is still found beside `render`.
pub use super::settings::check_template;

#[derive(Debug, thiserror::Error)]
pub enum PromError {
    #[error("job {job_id}, metric {metric}: cannot reach prometheus at {url}: {reason}")]
    Transport {
        job_id: String,
        metric: String,
        url: String,
        reason: String,
    },
    #[error("job {job_id}, metric {metric}: prometheus answered HTTP {status}: {body}")]
    Http {
        job_id: String,
        metric: String,
        status: u16,
        body: String,
    },
    #[error("job {job_id}, metric {metric}: prometheus answer not understood: {reason}")]
    Garbage {
        job_id: String,
        metric: String,
        reason: String,
    },
    #[error("job {job_id}, metric {metric}: query failed ({error_type}): {error}")]
    Query {
        job_id: String,
        metric: String,
        error_type: String,
        error: String,
    },
    #[error("job {job_id}, metric {metric}: partial answer, prometheus warns: {warnings}")]
    Partial {
        job_id: String,
        metric: String,
        warnings: String,
    },
    #[error("job {job_id}, metric {metric}: {reason}")]
    Series {
        job_id: String,
        metric: String,
        reason: String,
    },
    #[error("job {job_id}: {reason}")]
    Job { job_id: String, reason: String },
}

/// A label matcher selecting exactly `nodes` by `label`, allowing a `:port` suffix
/// (node_exporter's `instance` is `host:9100`). Node names come from Slurm and are checked to be
/// host names, so nothing can break out of the PromQL string.
pub fn node_matcher(label: &str, nodes: &[String]) -> Result<String, String> {
    if label.is_empty()
        || !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return Err(format!("{label:?} is not a Prometheus label name"));
    }
    if nodes.is_empty() {
        return Err("the job has no nodes".to_string());
    }
    let mut alternatives = Vec::with_capacity(nodes.len());
    for node in nodes {
        if node.is_empty()
            || !node
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        {
            return Err(format!("node name {node:?} is not a host name"));
        }
        // A regex dot must be escaped, and a backslash inside a PromQL string must be doubled.
        alternatives.push(node.replace('.', "\\\\."));
    }
    Ok(format!(
        "{label}=~\"({})(:[0-9]+)?\"",
        alternatives.join("|")
    ))
}

/// The template with its placeholders filled in.
pub fn render(
    template: &str,
    matcher: &str,
    job_id: &str,
    cluster: &str,
    rate_window: Duration,
) -> String {
    template
        .replace("{nodes}", matcher)
        .replace("{job_id}", job_id)
        .replace("{cluster}", &super::job_exporters::promql_string(cluster))
        .replace("{rate_window}", &format!("{}s", rate_window.as_secs()))
}

/// Evaluation ranges `(first, last)` in Unix seconds, inclusive, covering `[start, end]` on a grid
/// of `step` seconds, each with at most `max_points` points. A job shorter than one step gets one
/// evaluation at its end.
pub fn chunks(start: i64, end: i64, step: i64, max_points: i64) -> Vec<(i64, i64)> {
    let step = step.max(1);
    let first = start.div_euclid(step) * step + if start.rem_euclid(step) == 0 { 0 } else { step };
    if first > end {
        return vec![(end, end)];
    }
    let span = (max_points.max(1) - 1) * step;
    let mut out = Vec::new();
    let mut from = first;
    while from <= end {
        let last_on_grid = from + ((end - from) / step) * step;
        let to = (from + span).min(last_on_grid);
        out.push((from, to));
        from = to + step;
    }
    out
}

/// One series of a `query_range` answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub labels: BTreeMap<String, String>,
    /// (Unix seconds, value).
    pub values: Vec<(f64, f64)>,
}

#[derive(Deserialize)]
struct Answer {
    status: String,
    data: Option<AnswerData>,
    #[serde(rename = "errorType")]
    error_type: Option<String>,
    error: Option<String>,
    warnings: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct AnswerData {
    #[serde(rename = "resultType")]
    result_type: String,
    result: Vec<RawSeries>,
}

#[derive(Deserialize)]
struct RawSeries {
    metric: BTreeMap<String, String>,
    values: Vec<(f64, String)>,
}

/// Why an answer was not usable, before the job and metric are attached.
#[derive(Debug, PartialEq)]
pub enum AnswerError {
    Garbage(String),
    Query { error_type: String, error: String },
    Partial(String),
}

/// Parses a `query_range` answer: `{"status":"success","data":{"resultType":"matrix",...}}`, values
/// as strings (Prometheus writes `NaN`, `+Inf` and `-Inf` as such).
pub fn parse_answer(body: &[u8]) -> Result<Vec<Series>, AnswerError> {
    let answer: Answer = serde_json::from_slice(body).map_err(|e| {
        AnswerError::Garbage(format!(
            "{e} in {}",
            excerpt(&String::from_utf8_lossy(body))
        ))
    })?;
    if answer.status != "success" {
        return Err(AnswerError::Query {
            error_type: answer.error_type.unwrap_or_else(|| "unknown".into()),
            error: answer
                .error
                .unwrap_or_else(|| format!("status {:?}", answer.status)),
        });
    }
    if let Some(warnings) = answer.warnings.filter(|w| !w.is_empty()) {
        return Err(AnswerError::Partial(warnings.join("; ")));
    }
    let data = answer
        .data
        .ok_or_else(|| AnswerError::Garbage("no data in a successful answer".into()))?;
    if data.result_type != "matrix" {
        return Err(AnswerError::Garbage(format!(
            "result type {:?}, expected \"matrix\"",
            data.result_type
        )));
    }
    data.result
        .into_iter()
        .map(|raw| {
            let values = raw
                .values
                .into_iter()
                .map(|(ts, v)| {
                    let value = parse_value(&v).ok_or_else(|| {
                        AnswerError::Garbage(format!("value {:?} is not a number", excerpt(&v)))
                    })?;
                    if !ts.is_finite() {
                        return Err(AnswerError::Garbage(format!(
                            "timestamp {ts} is not finite"
                        )));
                    }
                    Ok((ts, value))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Series {
                labels: raw.metric,
                values,
            })
        })
        .collect()
}

fn parse_value(v: &str) -> Option<f64> {
    match v {
        "NaN" => Some(f64::NAN),
        "+Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ => v.parse().ok(),
    }
}

fn excerpt(text: &str) -> String {
    const MAX: usize = 200;
    let mut out: String = text.chars().take(MAX).collect();
    if text.chars().count() > MAX {
        out.push('…');
    }
    out.escape_debug().to_string()
}

/// Which of the job's nodes a series belongs to: the label's value, or the value without a
/// `:port` suffix.
fn node_of<'a>(value: &str, nodes: &'a BTreeSet<String>) -> Option<&'a String> {
    nodes.get(value).or_else(|| {
        let (host, port) = value.rsplit_once(':')?;
        if port.bytes().all(|b| b.is_ascii_digit()) {
            nodes.get(host)
        } else {
            None
        }
    })
}

/// One question to Prometheus: a template's query rendered for some nodes, over a range.
#[derive(Clone, Copy)]
struct Asked<'a> {
    /// Who it is asked for, for errors: the job id, or the jobs asked together.
    who: &'a str,
    template: &'a MetricTemplate,
    /// The label naming the node in the answer.
    label: &'a str,
    query: &'a str,
    /// Unix seconds, inclusive.
    range: (i64, i64),
    step: i64,
}

/// A Prometheus server and the metrics to ask it for.
#[derive(Debug)]
pub struct Prometheus {
    settings: PrometheusSettings,
    agent: ureq::Agent,
}

/// Largest answer accepted for one request.
const MAX_ANSWER_BYTES: u64 = 256 * 1024 * 1024;
/// Points per request beyond which a job on many nodes gets shorter chunks.
const MAX_POINTS_PER_REQUEST: i64 = 1_000_000;
/// About how many points per node the clock check asks for (one more at most): the clock drifts
/// slowly, so a few dozen over the run tell its offset.
const CLOCK_POINTS: i64 = 60;

impl Prometheus {
    pub fn new(settings: PrometheusSettings) -> Prometheus {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(settings.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Prometheus { settings, agent }
    }

    pub fn settings(&self) -> &PrometheusSettings {
        &self.settings
    }

    fn step_s(&self) -> i64 {
        self.settings.step.as_secs() as i64
    }

    /// The ranges a job on `nodes` nodes over `[start, end]` is asked for ([`chunks`]).
    fn ranges(&self, nodes: usize, start: DateTime<Utc>, end: DateTime<Utc>) -> Vec<(i64, i64)> {
        let per_series = (MAX_POINTS_PER_REQUEST / nodes.max(1) as i64)
            .clamp(2, self.settings.max_points_per_series as i64);
        chunks(
            start.timestamp(),
            end.timestamp(),
            self.step_s(),
            per_series,
        )
    }

    /// Whether a job that ended at `end` can have all its samples in Prometheus by `now`.
    pub fn ready(&self, end: DateTime<Utc>, now: DateTime<Utc>) -> bool {
        now >= end + self.settings.lag
    }

    /// Fetches every metric of job `job_id` on `nodes` over `[start, end]` and hands each sample to
    /// `emit(node, metric, ts_micros, value)`. On error, samples already emitted must be discarded
    /// by the caller. Returns the number of samples.
    pub fn fetch(
        &self,
        job_id: &str,
        cluster: &str,
        nodes: &[String],
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        emit: &mut dyn FnMut(&str, &str, i64, f64),
    ) -> Result<u64, PromError> {
        let job_err = |reason: String| PromError::Job {
            job_id: job_id.to_string(),
            reason,
        };
        if end < start {
            return Err(job_err(format!("ends ({end}) before it starts ({start})")));
        }
        let node_set: BTreeSet<String> = nodes.iter().cloned().collect();
        let step = self.step_s();
        let ranges = self.ranges(nodes.len(), start, end);
        let mut samples = 0;
        for template in &self.settings.metrics {
            let (label, query) = self.query_of(template, job_id, cluster, nodes)?;
            for &range in &ranges {
                let asked = Asked {
                    who: job_id,
                    template,
                    label,
                    query: &query,
                    range,
                    step,
                };
                samples += self.answer_by_node(&asked, &node_set, &mut |node, micros, v| {
                    emit(node, &template.name, micros, v)
                })?;
            }
        }
        Ok(samples)
    }

    /// Asks one query over one range and hands each sample to `emit(node, micros, value)`,
    /// with every series checked: it names one of `nodes` by the template's label, no node
    /// twice, no sample outside the range. `asked.who` (the job, or the jobs asked together)
    /// names the errors.
    fn answer_by_node(
        &self,
        asked: &Asked,
        nodes: &BTreeSet<String>,
        emit: &mut dyn FnMut(&String, i64, f64),
    ) -> Result<u64, PromError> {
        let Asked {
            who,
            template,
            label,
            query,
            range: (from, to),
            step,
        } = *asked;
        let series = self.query_range(who, template, query, (from, to), step)?;
        let mut seen = BTreeSet::new();
        let mut samples = 0;
        for s in series {
            let series_err = |reason: String| PromError::Series {
                job_id: who.to_string(),
                metric: template.name.clone(),
                reason,
            };
            let value = s.labels.get(label).ok_or_else(|| {
                series_err(format!(
                    "a series has no {label:?} label ({:?}); aggregate the query `by ({label})`",
                    s.labels
                ))
            })?;
            let node = node_of(value, nodes).ok_or_else(|| {
                series_err(format!(
                    "a series is for {value:?}, not one of the job's nodes"
                ))
            })?;
            // One series per node across all chunks; a node seen twice in one chunk is
            // ambiguous.
            if !seen.insert(node.clone()) {
                return Err(series_err(format!(
                    "more than one series for node {node}; aggregate the query `by ({label})`"
                )));
            }
            for (ts, v) in s.values {
                let micros = (ts * 1e6).round() as i64;
                // Prometheus evaluates only inside the range asked for; anything else is not
                // an answer to our question.
                if micros < from * 1_000_000 || micros > to * 1_000_000 {
                    return Err(series_err(format!(
                        "a sample at {ts} lies outside the range asked for ({from}..{to})"
                    )));
                }
                emit(node, micros, v);
                samples += 1;
            }
        }
        Ok(samples)
    }

    /// Each of the job's nodes' clock minus Prometheus's over `[start, end]`, in seconds: the
    /// median of the clock query's points (about [`CLOCK_POINTS`] of them), for the nodes that
    /// answered; nothing when the site turned the check off. A series that names no node of the
    /// job is left out (the check is a note, not a reason to hold the job back).
    pub fn clock_offsets(
        &self,
        job_id: &str,
        cluster: &str,
        nodes: &[String],
        start: DateTime<Utc>,
        end: DateTime<Utc>,
    ) -> Result<Vec<(String, f64)>, PromError> {
        let Some(template) = &self.settings.clock else {
            return Ok(Vec::new());
        };
        let (label, query) = self.query_of(template, job_id, cluster, nodes)?;
        let (from, to) = (start.timestamp(), end.timestamp().max(start.timestamp()));
        let step = ((to - from) / CLOCK_POINTS).max(self.settings.step.as_secs() as i64);
        let node_set: BTreeSet<String> = nodes.iter().cloned().collect();
        let mut offsets = Vec::new();
        for s in self.query_range(job_id, template, &query, (from, to), step)? {
            let Some(node) = s.labels.get(label).and_then(|v| node_of(v, &node_set)) else {
                continue;
            };
            if let Some(median) = median_of_finite(s.values.iter().map(|(_, v)| *v)) {
                offsets.push((node.clone(), median));
            }
        }
        Ok(offsets)
    }

    /// The label naming the node in `template`'s answer, and its query rendered for the job's
    /// `nodes`; the error names the job (a node list no matcher can hold).
    fn query_of<'a>(
        &'a self,
        template: &'a MetricTemplate,
        job_id: &str,
        cluster: &str,
        nodes: &[String],
    ) -> Result<(&'a str, String), PromError> {
        let label = template
            .node_label
            .as_deref()
            .unwrap_or(&self.settings.node_label);
        let matcher = node_matcher(label, nodes).map_err(|reason| PromError::Job {
            job_id: job_id.to_string(),
            reason,
        })?;
        let query = render(
            &template.query,
            &matcher,
            job_id,
            cluster,
            self.settings.rate_window,
        );
        Ok((label, query))
    }

    fn query_range(
        &self,
        job_id: &str,
        template: &MetricTemplate,
        query: &str,
        (from, to): (i64, i64),
        step_s: i64,
    ) -> Result<Vec<Series>, PromError> {
        let url = format!("{}/api/v1/query_range", self.settings.url);
        let step = format!("{step_s}s");
        let (from, to) = (from.to_string(), to.to_string());
        // POST keeps a long node matcher out of the URL's length limit.
        let response = self.agent.post(&url).send_form([
            ("query", query),
            ("start", from.as_str()),
            ("end", to.as_str()),
            ("step", step.as_str()),
        ]);
        let transport = |reason: String| PromError::Transport {
            job_id: job_id.to_string(),
            metric: template.name.clone(),
            url: url.clone(),
            reason,
        };
        let mut response = response.map_err(|e| transport(describe(e, self.settings.timeout)))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_vec()
            .map_err(|e| transport(describe(e, self.settings.timeout)))?;
        // Prometheus answers query errors (400, 422, 503) with the same JSON envelope; prefer its
        // message, fall back to the raw body for proxies and garbage.
        let metric = template.name.clone();
        match parse_answer(&body) {
            Ok(series) if status == 200 => Ok(series),
            Err(AnswerError::Query { error_type, error }) => Err(PromError::Query {
                job_id: job_id.to_string(),
                metric,
                error_type: if status == 200 {
                    error_type
                } else {
                    format!("HTTP {status}, {error_type}")
                },
                error,
            }),
            Err(AnswerError::Partial(warnings)) if status == 200 => Err(PromError::Partial {
                job_id: job_id.to_string(),
                metric,
                warnings,
            }),
            Err(AnswerError::Garbage(reason)) if status == 200 => Err(PromError::Garbage {
                job_id: job_id.to_string(),
                metric,
                reason,
            }),
            _ => Err(PromError::Http {
                job_id: job_id.to_string(),
                metric,
                status,
                body: excerpt(&String::from_utf8_lossy(&body)),
            }),
        }
    }
}

/// The median of the finite values (the upper one of an even count), if there are any.
fn median_of_finite(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut values: Vec<f64> = values.filter(|v| v.is_finite()).collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

fn describe(e: ureq::Error, timeout: Duration) -> String {
    match e {
        ureq::Error::Timeout(_) => format!("no answer within {}s", timeout.as_secs()),
        ureq::Error::BodyExceedsLimit(n) => format!("answer larger than {n} bytes"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Whatever comes back from the Prometheus URL: no panic, and every sample either
        /// arrives with the number that was sent or the answer is refused with a reason.
        #[test]
        fn answers_never_panic_nor_change_a_number(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
            value in "\\PC{0,12}",
            number in proptest::num::f64::ANY,
            ts in proptest::prop_oneof![0.0..4e9f64, proptest::num::f64::NORMAL],
        ) {
            let _ = parse_answer(&bytes);
            let answer = |v: &str| {
                serde_json::json!({"status": "success", "data": {"resultType": "matrix",
                    "result": [{"metric": {"instance": "n1"}, "values": [[ts, v]]}]}})
                .to_string()
            };
            // Any string: a number exactly as Rust reads it (or Prometheus's NaN/±Inf), or refused.
            match parse_answer(answer(&value).as_bytes()) {
                Ok(series) => {
                    let got = series[0].values[0].1;
                    let expected = parse_value(&value);
                    proptest::prop_assert!(expected.is_some_and(|e| e.to_bits() == got.to_bits()
                        || (e.is_nan() && got.is_nan())));
                }
                Err(AnswerError::Garbage(reason)) => proptest::prop_assert!(!reason.is_empty()),
                Err(other) => proptest::prop_assert!(false, "{:?}", other),
            }
            // A number written the way Prometheus writes it comes back bit for bit.
            let text = if number.is_nan() { "NaN".to_string() }
                else if number.is_infinite() { if number > 0.0 { "+Inf".into() } else { "-Inf".into() } }
                else { format!("{number:e}") };
            if let Ok(series) = parse_answer(answer(&text).as_bytes()) {
                let got = series[0].values[0].1;
                proptest::prop_assert!(got.to_bits() == number.to_bits() || (got.is_nan() && number.is_nan()));
                proptest::prop_assert!(series[0].values[0].0.is_finite());
            }
        }
    }

    #[test]
    fn chunks_stay_under_the_points_limit_and_never_overlap() {
        // 7 s past a grid point to 600 s at 30 s: first point 30, last 600, 20 points.
        let (start, end) = (1_699_999_980 + 7, 1_699_999_980 + 600);
        let c = chunks(start, end, 30, 5);
        assert_eq!(c.len(), 4);
        assert_eq!(c[0], (1_699_999_980 + 30, 1_699_999_980 + 150));
        for (from, to) in &c {
            assert!((to - from) / 30 < 5, "{from}..{to}");
            assert_eq!(from % 30, 0);
        }
        for w in c.windows(2) {
            assert_eq!(w[1].0, w[0].1 + 30);
        }
        let points: i64 = c.iter().map(|(f, t)| (t - f) / 30 + 1).sum();
        assert_eq!(points, 20);
        assert!(c.last().unwrap().1 <= end);
        // One chunk when the limit allows; a job shorter than a step is asked at its end.
        assert_eq!(chunks(0, 300, 30, 11_000), vec![(0, 300)]);
        assert_eq!(chunks(5, 20, 30, 11_000), vec![(20, 20)]);
    }

    #[test]
    fn node_matcher_selects_exactly_the_nodes() {
        let nodes = vec!["c1".to_string(), "gpu-2.example".to_string()];
        assert_eq!(
            node_matcher("instance", &nodes).unwrap(),
            r#"instance=~"(c1|gpu-2\\.example)(:[0-9]+)?""#
        );
        assert!(node_matcher("instance", &["a\"}or up{x=\"".to_string()]).is_err());
        assert!(node_matcher("inst ance", &nodes).is_err());
        assert!(node_matcher("instance", &[]).is_err());
    }

    #[test]
    fn templates_render_and_unknown_placeholders_are_refused() {
        let q = render(
            "avg by (instance) (rate(x{mode=\"user\",{nodes}}[{rate_window}])) + y{jobid=\"{job_id}\",{nodes}}",
            "instance=~\"(c1)(:[0-9]+)?\"",
            "42",
            "ci",
            Duration::from_secs(120),
        );
        assert_eq!(
            q,
            "avg by (instance) (rate(x{mode=\"user\",instance=~\"(c1)(:[0-9]+)?\"}[120s])) + y{jobid=\"42\",instance=~\"(c1)(:[0-9]+)?\"}"
        );
        assert!(check_template("x{mode=\"user\",{nodes}}[{rate_window}]").is_ok());
        assert!(check_template("x{{node}}").is_err());
        for t in crate::settings::default_node_exporter_metrics() {
            check_template(&t.query).unwrap();
        }
    }

    #[test]
    fn answers_are_parsed_and_bad_ones_explained() {
        let ok = br#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"instance":"c1:9100"},"values":[[1700000030,"0.5"],[1700000060.5,"NaN"],[1700000090,"+Inf"]]}]}}"#;
        let s = parse_answer(ok).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].values[0], (1_700_000_030.0, 0.5));
        assert!(s[0].values[1].1.is_nan());
        assert_eq!(s[0].values[2].1, f64::INFINITY);

        let e = parse_answer(b"<html>502 Bad Gateway</html>").unwrap_err();
        assert!(
            matches!(e, AnswerError::Garbage(ref r) if r.contains("502 Bad Gateway")),
            "{e:?}"
        );
        let e = parse_answer(
            br#"{"status":"error","errorType":"bad_data","error":"parse error at char 3"}"#,
        )
        .unwrap_err();
        assert_eq!(
            e,
            AnswerError::Query {
                error_type: "bad_data".into(),
                error: "parse error at char 3".into()
            }
        );
        let e = parse_answer(br#"{"status":"success","warnings":["remote read failed"],"data":{"resultType":"matrix","result":[]}}"#).unwrap_err();
        assert_eq!(e, AnswerError::Partial("remote read failed".into()));
        let e = parse_answer(br#"{"status":"success","data":{"resultType":"vector","result":[]}}"#)
            .unwrap_err();
        assert!(matches!(e, AnswerError::Garbage(ref r) if r.contains("vector")));
        let e = parse_answer(br#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"fast"]]}]}}"#).unwrap_err();
        assert!(matches!(e, AnswerError::Garbage(ref r) if r.contains("fast")));
        // Truncated mid-answer (a proxy cut the connection).
        assert!(parse_answer(&ok[..60]).is_err());
    }

    #[test]
    fn series_are_matched_to_nodes_with_or_without_port() {
        let nodes: BTreeSet<String> = ["c1".to_string(), "c2".to_string()].into();
        assert_eq!(node_of("c1:9100", &nodes).map(String::as_str), Some("c1"));
        assert_eq!(node_of("c2", &nodes).map(String::as_str), Some("c2"));
        assert_eq!(node_of("c3:9100", &nodes), None);
        assert_eq!(node_of("c1:x", &nodes), None);
    }
}
