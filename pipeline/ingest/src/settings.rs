//! The per-job ingest step's own options and settings: where accounting and telemetry come from
//! (`[ingest]`), and the Prometheus queries (`[prometheus]`). The application's `config` composes them
//! into the configuration file.
//!
//! Resolving checks every value, the query templates' placeholders included ([`check_template`]),
//! so that a bad template is refused when the configuration is read, not when a job is fetched.
//! The check lives here rather than in the Prometheus source, which builds on these settings, so
//! that this module needs no other module of the crate.

use jobsight_base::choice::{Choice, Named};
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use jobsight_base::options::{DAY_S, Invalid, invalid, within};

use super::job_exporters::{JobExporter, job_exporter_queries};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IngestOptions {
    pub telemetry: Option<TelemetryKind>,
    pub sacct: Option<PathBuf>,
    pub give_up_after_s: Option<u64>,
    pub retry_after_s: Option<u64>,
    pub retry_max_s: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrometheusOptions {
    pub url: Option<String>,
    pub step_s: Option<u64>,
    pub rate_window_s: Option<u64>,
    pub timeout_s: Option<u64>,
    pub max_points_per_series: Option<u64>,
    pub lag_s: Option<u64>,
    pub node_label: Option<String>,
    pub gpu: Option<bool>,
    /// The label DCGM's exporter puts the job id in (`--hpc-job-mapping-dir`); default `hpc_job`.
    pub gpu_job_label: Option<String>,
    /// The old spelling of `job_exporter = "jobsight"`.
    pub cgroup: Option<bool>,
    /// The per-job exporter the site runs ([`JobExporter`]); default none.
    pub job_exporter: Option<JobExporter>,
    /// The label that names the cluster on a Prometheus holding several (jobstats: `cluster`):
    /// the per-job exporter's queries then match it against the job's cluster (`{cluster}`).
    pub cluster_label: Option<String>,
    /// Replaces the default node_exporter metrics when given.
    pub metrics: Option<Vec<MetricTemplate>>,
    /// Added to the default (or given) metrics.
    pub extra_metrics: Option<Vec<MetricTemplate>>,
    /// PromQL giving each node's clock minus Prometheus's (seconds), one series per node; empty
    /// turns the check off. Default [`DEFAULT_CLOCK_QUERY`].
    pub clock_query: Option<String>,
    /// Ask for the jobs of one ingest run together, one query per metric for a group of them
    /// ([`crate::prometheus`]'s `together`); default true.
    pub batch_jobs: Option<bool>,
    /// Queries of jobs asked for together that run at once (one per metric); default 4.
    pub parallel_queries: Option<u64>,
}

/// Each node's clock against Prometheus's: node_exporter's `node_time_seconds` is the node's
/// own time when it was scraped, and `timestamp()` the moment Prometheus stamped that scrape.
pub const DEFAULT_CLOCK_QUERY: &str =
    "node_time_seconds{{nodes}} - timestamp(node_time_seconds{{nodes}})";
/// The name the clock query's series go by in errors (they are not stored).
pub const CLOCK_METRIC: &str = "clock_offset_s";

/// Where the per-job ingest step gets telemetry from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TelemetryKind {
    /// Prometheus `query_range` over the job's nodes and run time.
    Prometheus,
    /// Job records only (accounting), no telemetry.
    None,
}

impl Choice for TelemetryKind {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: TelemetryKind::Prometheus,
            name: "prometheus",
            help: "Prometheus `query_range` over the job's nodes and run time",
        },
        Named {
            value: TelemetryKind::None,
            name: "none",
            help: "Job records only (accounting), no telemetry",
        },
    ];
}

/// One telemetry series family: a metric name in the warehouse and the PromQL that yields it,
/// one series per node.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricTemplate {
    pub name: String,
    /// PromQL with placeholders `{nodes}` (a label matcher selecting the job's nodes),
    /// `{job_id}`, `{cluster}` (the job's cluster, escaped for a PromQL string) and
    /// `{rate_window}` (e.g. `60s`).
    pub query: String,
    /// The label that names the node in this query's result; default `prometheus.node_label`.
    pub node_label: Option<String>,
}

/// The placeholders a template may use.
const PLACEHOLDERS: [&str; 4] = ["nodes", "job_id", "cluster", "rate_window"];

/// Checks that a template uses only known placeholders (`{name}` where name is a lower-case word).
/// The Prometheus source's `render` fills in the same four.
pub fn check_template(query: &str) -> Result<(), String> {
    let bytes = query.as_bytes();
    let mut i = 0;
    while let Some(open) = query[i..].find('{').map(|o| o + i) {
        let word_end = bytes[open + 1..]
            .iter()
            .position(|b| !(b.is_ascii_lowercase() || *b == b'_'))
            .map(|p| open + 1 + p);
        if let Some(end) = word_end
            && end > open + 1
            && bytes[end] == b'}'
        {
            let word = &query[open + 1..end];
            if !PLACEHOLDERS.contains(&word) {
                return Err(format!(
                    "unknown placeholder {{{word}}} (known: {{nodes}}, {{job_id}}, {{cluster}}, {{rate_window}})"
                ));
            }
        }
        i = open + 1;
    }
    Ok(())
}

#[derive(Debug, Clone)]
pub struct IngestSettings {
    pub telemetry: TelemetryKind,
    pub sacct: PathBuf,
    /// A record still pending this long after its enqueue is quarantined with the last reason.
    pub give_up_after: Duration,
    /// First retry delay; doubles per attempt up to `retry_max`.
    pub retry_after: Duration,
    pub retry_max: Duration,
}

#[derive(Debug, Clone)]
pub struct PrometheusSettings {
    /// Base URL, without `/api/v1/...`.
    pub url: String,
    pub step: Duration,
    pub rate_window: Duration,
    pub timeout: Duration,
    /// Prometheus refuses a `query_range` that would return more than 11,000 points per series.
    pub max_points_per_series: u64,
    /// How long after a job's end its last samples can be expected in Prometheus (scrape interval
    /// plus ingestion delay); the job waits that long before its telemetry is fetched.
    pub lag: Duration,
    /// Label naming the node; its value may carry a `:port` suffix (node_exporter's `instance`).
    pub node_label: String,
    pub metrics: Vec<MetricTemplate>,
    /// The nodes' clocks against Prometheus's, for the job's note ([`DEFAULT_CLOCK_QUERY`]);
    /// none when the site turned the check off.
    pub clock: Option<MetricTemplate>,
    /// Whether the jobs of one ingest run are asked for together (one query per metric for a
    /// group of them) rather than one at a time.
    pub batch_jobs: bool,
    /// How many of a group's queries (one per metric) run at once.
    pub parallel_queries: usize,
}

/// node_exporter metrics under the warehouse's canonical names (the simulator uses the same names,
/// so features and rules read both alike). CPU shares are fractions of all the node's CPUs.
pub fn default_node_exporter_metrics() -> Vec<MetricTemplate> {
    let cpu = |mode: &str| {
        format!(
            "avg by (instance) (rate(node_cpu_seconds_total{{mode=\"{mode}\",{{nodes}}}}[{{rate_window}}]))"
        )
    };
    let sum_rate = |metric: &str, extra: &str| {
        format!("sum by (instance) (rate({metric}{{{extra}{{nodes}}}}[{{rate_window}}]))")
    };
    // Loopback and virtual interfaces carry no job traffic between nodes.
    let nic = r#"device!~"lo|veth.*|docker.*|virbr.*","#;
    // node_exporter already leaves out partitions and loop devices; device-mapper and md RAID
    // volumes would count the same bytes a second time.
    let disk = r#"device!~"dm-.*|md.*","#;
    [
        ("cpu_user", cpu("user")),
        ("cpu_system", cpu("system")),
        ("cpu_iowait", cpu("iowait")),
        ("cpu_idle", cpu("idle")),
        ("load1", "node_load1{{nodes}}".to_string()),
        (
            "mem_used_bytes",
            "node_memory_MemTotal_bytes{{nodes}} - node_memory_MemAvailable_bytes{{nodes}}"
                .to_string(),
        ),
        (
            "mem_available_bytes",
            "node_memory_MemAvailable_bytes{{nodes}}".to_string(),
        ),
        (
            "net_rx_bytes_per_s",
            sum_rate("node_network_receive_bytes_total", nic),
        ),
        (
            "net_tx_bytes_per_s",
            sum_rate("node_network_transmit_bytes_total", nic),
        ),
        (
            "net_rx_packets_per_s",
            sum_rate("node_network_receive_packets_total", nic),
        ),
        (
            "net_tx_packets_per_s",
            sum_rate("node_network_transmit_packets_total", nic),
        ),
        (
            "disk_read_bytes_per_s",
            sum_rate("node_disk_read_bytes_total", disk),
        ),
        (
            "disk_write_bytes_per_s",
            sum_rate("node_disk_written_bytes_total", disk),
        ),
        // Pressure stall information (Linux 4.20+): the share of time at least one task of the
        // node waited for a CPU, for memory or for I/O. A neighbour competing for the cores of a
        // job that already keeps them busy leaves the CPU shares as they were and shows here.
        (
            "cpu_pressure",
            sum_rate("node_pressure_cpu_waiting_seconds_total", ""),
        ),
        (
            "mem_pressure",
            sum_rate("node_pressure_memory_waiting_seconds_total", ""),
        ),
        (
            "io_pressure",
            sum_rate("node_pressure_io_waiting_seconds_total", ""),
        ),
    ]
    .into_iter()
    .map(|(name, query)| MetricTemplate {
        name: name.to_string(),
        query: query.to_string(),
        node_label: None,
    })
    .collect()
}

/// NVIDIA DCGM exporter metrics (`prometheus.gpu = true`). DCGM names the node in `Hostname`.
///
/// Two families: the node's GPUs (`gpu_util`, `gpu_mem_used_bytes`, `gpu_power_watts`: every GPU
/// of the node, whoever held it) and the job's own GPUs (`job_gpu_*`: only the series whose
/// `job_label` holds the job id). DCGM's exporter adds that label (`hpc_job`) when it is started
/// with `--hpc-job-mapping-dir` and a Slurm prolog writes the job id into a file named after each
/// GPU index the job was given; a job without such series has only the node family.
pub fn dcgm_metrics(job_label: &str) -> Vec<MetricTemplate> {
    let job = format!("{job_label}=\"{{job_id}}\",");
    let families = [
        ("gpu_util", "avg", "DCGM_FI_DEV_GPU_UTIL", " / 100"),
        (
            "gpu_mem_used_bytes",
            "sum",
            "DCGM_FI_DEV_FB_USED",
            " * 1048576",
        ),
        // What is free beside it: used + free is the GPUs' memory, for the share a job used.
        (
            "gpu_mem_free_bytes",
            "sum",
            "DCGM_FI_DEV_FB_FREE",
            " * 1048576",
        ),
        ("gpu_power_watts", "sum", "DCGM_FI_DEV_POWER_USAGE", ""),
    ];
    let node = families.iter().map(|(name, fold, metric, scale)| {
        (
            name.to_string(),
            format!("{fold} by (Hostname) ({metric}{{{{nodes}}}}){scale}"),
        )
    });
    let own = families.iter().map(|(name, fold, metric, scale)| {
        (
            format!("job_{name}"),
            format!("{fold} by (Hostname) ({metric}{{{job}{{nodes}}}}){scale}"),
        )
    });
    node.chain(own)
        .map(|(name, query)| MetricTemplate {
            name,
            query,
            node_label: Some("Hostname".to_string()),
        })
        .collect()
}

/// The metrics of the per-job exporter the site runs (`prometheus.job_exporter`), matching the
/// job's cluster on `cluster_label` when given ([`super::job_exporters`]).
pub fn job_exporter_metrics(
    exporter: JobExporter,
    cluster_label: Option<&str>,
) -> Vec<MetricTemplate> {
    job_exporter_queries(exporter, cluster_label)
        .into_iter()
        .map(|(name, query)| MetricTemplate {
            name: name.to_string(),
            query,
            node_label: None,
        })
        .collect()
}

/// Whether `name` is a valid Prometheus label name.
fn is_label_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl IngestOptions {
    /// Fills in the defaults and checks every value.
    pub fn resolve(self) -> Result<IngestSettings, Invalid> {
        let retry_after = within("ingest.retry_after_s", self.retry_after_s, 60, 1..=DAY_S)?;
        let retry_max = within("ingest.retry_max_s", self.retry_max_s, 3600, 1..=7 * DAY_S)?;
        if retry_max < retry_after {
            return Err(invalid(
                "ingest.retry_max_s",
                format!("{retry_max} is less than self.retry_after_s ({retry_after})"),
            ));
        }
        Ok(IngestSettings {
            telemetry: self.telemetry.unwrap_or(TelemetryKind::Prometheus),
            sacct: self.sacct.unwrap_or_else(|| PathBuf::from("sacct")),
            give_up_after: Duration::from_secs(within(
                "ingest.give_up_after_s",
                self.give_up_after_s,
                DAY_S,
                60..=3650 * DAY_S,
            )?),
            retry_after: Duration::from_secs(retry_after),
            retry_max: Duration::from_secs(retry_max),
        })
    }
}

impl PrometheusOptions {
    /// Fills in the defaults and checks every value, every query template included.
    pub fn resolve(self) -> Result<PrometheusSettings, Invalid> {
        let url = self
            .url
            .unwrap_or_else(|| "http://127.0.0.1:9090".to_string());
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(invalid(
                "prometheus.url",
                format!("{url:?} is not an http:// or https:// URL"),
            ));
        }
        // Prometheus itself refuses more than 11,000 points per series in one query.
        let max_points = within(
            "prometheus.max_points_per_series",
            self.max_points_per_series,
            11_000,
            2..=11_000,
        )?;
        let mut metrics = self.metrics.unwrap_or_else(default_node_exporter_metrics);
        let gpu_job_label = self.gpu_job_label.unwrap_or_else(|| "hpc_job".to_string());
        if !is_label_name(&gpu_job_label) {
            return Err(invalid(
                "prometheus.gpu_job_label",
                format!(
                    "{gpu_job_label:?} is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)"
                ),
            ));
        }
        if self.gpu.unwrap_or(false) {
            metrics.extend(dcgm_metrics(&gpu_job_label));
        }
        let job_exporter = match (self.cgroup, self.job_exporter) {
            (Some(true), Some(e)) if e != JobExporter::Jobsight => {
                return Err(invalid(
                    "prometheus.cgroup",
                    "`cgroup = true` means `job_exporter = \"jobsight\"`: give one of the two"
                        .to_string(),
                ));
            }
            (Some(true), _) => JobExporter::Jobsight,
            (_, e) => e.unwrap_or(JobExporter::None),
        };
        if let Some(label) = self.cluster_label.as_deref().filter(|l| !is_label_name(l)) {
            return Err(invalid(
                "prometheus.cluster_label",
                format!("{label:?} is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)"),
            ));
        }
        metrics.extend(job_exporter_metrics(
            job_exporter,
            self.cluster_label.as_deref(),
        ));
        metrics.extend(self.extra_metrics.unwrap_or_default());
        let mut names = std::collections::BTreeSet::new();
        for m in &metrics {
            if m.name.is_empty()
                || !m
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
            {
                return Err(invalid(
                    "prometheus.metrics",
                    format!(
                        "metric name {:?} must be letters, digits, '_' or '.'",
                        m.name
                    ),
                ));
            }
            if !names.insert(m.name.as_str()) {
                return Err(invalid(
                    "prometheus.metrics",
                    format!("metric {:?} is defined twice", m.name),
                ));
            }
            if !m.query.contains("{nodes}") {
                return Err(invalid(
                    "prometheus.metrics",
                    format!(
                        "the query of {:?} has no {{nodes}} placeholder, so it would not select the job's nodes",
                        m.name
                    ),
                ));
            }
            if let Err(reason) = check_template(&m.query) {
                return Err(invalid(
                    "prometheus.metrics",
                    format!("the query of {:?}: {reason}", m.name),
                ));
            }
        }
        let clock_query = self
            .clock_query
            .unwrap_or_else(|| DEFAULT_CLOCK_QUERY.to_string());
        if !clock_query.is_empty() && !clock_query.contains("{nodes}") {
            return Err(invalid(
                "prometheus.clock_query",
                "has no {nodes} placeholder, so it would not select the job's nodes".to_string(),
            ));
        }
        if let Err(reason) = check_template(&clock_query) {
            return Err(invalid("prometheus.clock_query", reason));
        }
        let clock = (!clock_query.is_empty()).then(|| MetricTemplate {
            name: CLOCK_METRIC.to_string(),
            query: clock_query,
            node_label: None,
        });
        Ok(PrometheusSettings {
            url: url.trim_end_matches('/').to_string(),
            step: Duration::from_secs(within("prometheus.step_s", self.step_s, 30, 1..=3600)?),
            rate_window: Duration::from_secs(within(
                "prometheus.rate_window_s",
                self.rate_window_s,
                120,
                1..=DAY_S,
            )?),
            timeout: Duration::from_secs(within(
                "prometheus.timeout_s",
                self.timeout_s,
                30,
                1..=600,
            )?),
            max_points_per_series: max_points,
            lag: Duration::from_secs(within("prometheus.lag_s", self.lag_s, 60, 0..=DAY_S)?),
            node_label: self.node_label.unwrap_or_else(|| "instance".to_string()),
            metrics,
            clock,
            batch_jobs: self.batch_jobs.unwrap_or(true),
            parallel_queries: within(
                "prometheus.parallel_queries",
                self.parallel_queries,
                4,
                1..=64,
            )? as usize,
        })
    }
}
