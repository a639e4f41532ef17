//! The jobs' cgroup figures in Prometheus' text exposition format 0.0.4: what
//! `jobsight-exporter` answers to `GET /metrics`.
//!
//! The names, types and labels are those of Princeton's cgroup exporter
//! (`plazonic/cgroup_exporter`, which jobstats' queries and Grafana dashboards read) wherever it
//! has the figure: every one a gauge, labelled `jobid`, `step` and `task`, with `step=""` and
//! `task=""` on a job's totals, and `cgroup_uid` labelled with `jobid` only. What it lacks is
//! named `jobsight_cgroup_*`, so no later name of theirs can collide, and the exporter's own
//! figures `jobsight_exporter_*`. Steps, when exported, have `step="<name>"` and `task=""`:
//! tasks are not exported.
//!
//! Each metric's `# HELP` and `# TYPE` come once, before all of its samples; a metric with no
//! sample is left out. Label values are escaped (`\\`, `\"`, `\n`).

use std::fmt::Write as _;

use crate::cgroup::{JobUsage, Usage};

/// The `Content-Type` of this format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A metric's Prometheus type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Gauge,
    Counter,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
    Whole(u64),
    Real(f64),
}

/// One per-cgroup metric: its name, help, type, and where its value is in a [`Usage`].
struct Family {
    name: &'static str,
    help: &'static str,
    kind: Kind,
    value: fn(&Usage) -> Option<Value>,
}

/// Princeton's per-cgroup metrics, then jobsight's, in the order they are written.
const FAMILIES: [Family; 15] = [
    Family {
        name: "cgroup_cpu_user_seconds",
        help: "CPU time in user mode (v1 cpuacct.stat user, v2 cpu.stat user_usec), seconds",
        kind: Kind::Gauge,
        value: |u| u.cpu_user_seconds.map(Value::Real),
    },
    Family {
        name: "cgroup_cpu_system_seconds",
        help: "CPU time in kernel mode (v1 cpuacct.stat system, v2 cpu.stat system_usec), seconds",
        kind: Kind::Gauge,
        value: |u| u.cpu_system_seconds.map(Value::Real),
    },
    Family {
        name: "cgroup_cpu_total_seconds",
        help: "CPU time in all (v1 cpuacct.usage, v2 cpu.stat usage_usec), seconds",
        kind: Kind::Gauge,
        value: |u| u.cpu_total_seconds.map(Value::Real),
    },
    Family {
        name: "cgroup_cpus",
        help: "CPUs of the cgroup's cpuset",
        kind: Kind::Gauge,
        value: |u| u.cpus.map(Value::Whole),
    },
    Family {
        name: "cgroup_memory_rss_bytes",
        help: "Anonymous resident memory (v1 memory.stat total_rss, v2 anon + swapcached), bytes",
        kind: Kind::Gauge,
        value: |u| u.memory_rss_bytes.map(Value::Whole),
    },
    Family {
        name: "cgroup_memory_cache_bytes",
        help: "Page cache (v1 memory.stat total_cache, v2 file), bytes",
        kind: Kind::Gauge,
        value: |u| u.memory_cache_bytes.map(Value::Whole),
    },
    Family {
        name: "cgroup_memory_shmem_bytes",
        help: "Shared memory and tmpfs (memory.stat shmem), bytes",
        kind: Kind::Gauge,
        value: |u| u.memory_shmem_bytes.map(Value::Whole),
    },
    Family {
        name: "cgroup_memory_used_bytes",
        help: "Memory in use, page cache included (v1 memory.usage_in_bytes, v2 memory.current), bytes",
        kind: Kind::Gauge,
        value: |u| u.memory_used_bytes.map(Value::Whole),
    },
    Family {
        name: "cgroup_memory_total_bytes",
        help: "Memory limit (v1 memory.limit_in_bytes, v2 memory.max or the nearest ancestor's), bytes",
        kind: Kind::Gauge,
        value: |u| u.memory_limit_bytes.map(Value::Whole),
    },
    Family {
        name: "cgroup_memory_fail_count",
        help: "Times the memory limit was hit (v1 memory.failcnt, v2 memory.events oom)",
        kind: Kind::Gauge,
        value: |u| u.memory_fail_count.map(Value::Whole),
    },
    Family {
        name: "jobsight_cgroup_memory_peak_bytes",
        help: "Peak memory in use (v1 memory.max_usage_in_bytes, v2 memory.peak), bytes",
        kind: Kind::Gauge,
        value: |u| u.memory_peak_bytes.map(Value::Whole),
    },
    Family {
        name: "jobsight_cgroup_io_read_bytes_total",
        help: "Bytes read from block devices (v2 io.stat rbytes over all devices)",
        kind: Kind::Counter,
        value: |u| u.io_read_bytes.map(Value::Whole),
    },
    Family {
        name: "jobsight_cgroup_io_write_bytes_total",
        help: "Bytes written to block devices (v2 io.stat wbytes over all devices)",
        kind: Kind::Counter,
        value: |u| u.io_write_bytes.map(Value::Whole),
    },
    Family {
        name: "jobsight_cgroup_tasks",
        help: "Threads in the cgroup and below it (v1 tasks, v2 pids.current or cgroup.threads)",
        kind: Kind::Gauge,
        value: |u| u.tasks.map(Value::Whole),
    },
    Family {
        name: "jobsight_cgroup_oom_kills_total",
        help: "Processes killed by the out-of-memory killer (memory.oom_control or memory.events oom_kill)",
        kind: Kind::Counter,
        value: |u| u.oom_kills.map(Value::Whole),
    },
];

/// Every metric name this module writes, with its type, in order (for the docs and tests).
pub fn metric_names() -> Vec<(&'static str, Kind)> {
    let mut names: Vec<(&'static str, Kind)> = FAMILIES.iter().map(|f| (f.name, f.kind)).collect();
    names.push(("cgroup_uid", Kind::Gauge));
    names.extend([
        ("jobsight_exporter_scrape_seconds", Kind::Gauge),
        ("jobsight_exporter_jobs", Kind::Gauge),
        ("jobsight_exporter_errors_total", Kind::Counter),
    ]);
    names
}

/// The exporter's own figures of this scrape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExporterFigures {
    /// Time spent reading the cgroups for this scrape.
    pub scrape_seconds: f64,
    /// Values skipped since the exporter started.
    pub errors_total: u64,
}

/// A label value with `\`, `"` and newline escaped, as the format requires.
pub fn escape_label_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A `# HELP` text with `\` and newline escaped.
fn escape_help(help: &str) -> String {
    help.replace('\\', "\\\\").replace('\n', "\\n")
}

fn header(out: &mut String, name: &str, help: &str, kind: Kind) {
    let _ = writeln!(out, "# HELP {name} {}", escape_help(help));
    let _ = writeln!(out, "# TYPE {name} {}", kind.as_str());
}

/// One sample line; nothing for a value that is not finite (the format has no place for a
/// number that is not one, and none of these can be infinite).
fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: Value) {
    if let Value::Real(x) = value
        && !x.is_finite()
    {
        return;
    }
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (label, value)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{label}=\"{}\"", escape_label_value(value));
        }
        out.push('}');
    }
    let _ = match value {
        Value::Whole(n) => writeln!(out, " {n}"),
        Value::Real(x) => writeln!(out, " {x}"),
    };
}

/// The label naming the Slurm node of a series where the host runs several slurmd (Debian's
/// `--enable-multiple-slurmd`): Prometheus makes it the series' `instance`
/// (`ops/prometheus/start-prometheus.sh`), so each node of a job is its own series.
pub const NODE_LABEL: &str = "slurm_node";

/// The labels of one job's (or step's) series: Princeton's `jobid`, `step`, `task`, and the
/// node where the tree names one.
fn job_labels<'a>(
    job_id: &'a str,
    step: &'a str,
    node: &'a Option<String>,
) -> Vec<(&'a str, &'a str)> {
    let mut labels = vec![("jobid", job_id), ("step", step), ("task", "")];
    if let Some(node) = node {
        labels.push((NODE_LABEL, node.as_str()));
    }
    labels
}

/// The scrape's text: every job's totals (and steps, when read), `cgroup_uid` where the user is
/// known, and the exporter's own figures.
pub fn render(jobs: &[JobUsage], figures: &ExporterFigures) -> String {
    let job_ids: Vec<String> = jobs.iter().map(|job| job.job_id.to_string()).collect();
    let mut out = String::with_capacity(1024 + jobs.len() * 1536);
    let mut samples = String::new();
    for family in &FAMILIES {
        samples.clear();
        for (job, job_id) in jobs.iter().zip(&job_ids) {
            if let Some(value) = (family.value)(&job.total) {
                let labels = job_labels(job_id, "", &job.node);
                sample(&mut samples, family.name, &labels, value);
            }
            for (step, usage) in &job.steps {
                if let Some(value) = (family.value)(usage) {
                    let labels = job_labels(job_id, step, &job.node);
                    sample(&mut samples, family.name, &labels, value);
                }
            }
        }
        if !samples.is_empty() {
            header(&mut out, family.name, family.help, family.kind);
            out.push_str(&samples);
        }
    }
    samples.clear();
    for (job, job_id) in jobs.iter().zip(&job_ids) {
        if let Some(uid) = job.uid {
            let mut labels = vec![("jobid", job_id.as_str())];
            if let Some(node) = &job.node {
                labels.push((NODE_LABEL, node.as_str()));
            }
            sample(
                &mut samples,
                "cgroup_uid",
                &labels,
                Value::Whole(u64::from(uid)),
            );
        }
    }
    if !samples.is_empty() {
        let help = "Uid of the job's user (v1 from the cgroup path, v2 from a process of the job)";
        header(&mut out, "cgroup_uid", help, Kind::Gauge);
        out.push_str(&samples);
    }
    let own: [(&str, &str, Kind, Value); 3] = [
        (
            "jobsight_exporter_scrape_seconds",
            "Time this scrape spent reading the jobs' cgroups, seconds",
            Kind::Gauge,
            Value::Real(figures.scrape_seconds),
        ),
        (
            "jobsight_exporter_jobs",
            "Slurm jobs whose cgroups this scrape read, a job on several nodes of this host once per node",
            Kind::Gauge,
            Value::Whole(u64::try_from(jobs.len()).unwrap_or(u64::MAX)),
        ),
        (
            "jobsight_exporter_errors_total",
            "Values skipped since the exporter started: unreadable files, bad numbers (stderr names them)",
            Kind::Counter,
            Value::Whole(figures.errors_total),
        ),
    ];
    for (name, help, kind, value) in own {
        header(&mut out, name, help, kind);
        sample(&mut out, name, &[], value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(job_id: u64, uid: Option<u32>, steps: &[&str]) -> JobUsage {
        let usage = Usage {
            cpu_user_seconds: Some(2.5),
            cpu_total_seconds: Some(3.0),
            cpus: Some(4),
            memory_rss_bytes: Some(1 << 20),
            io_read_bytes: Some(0),
            ..Usage::default()
        };
        JobUsage {
            job_id,
            node: None,
            uid,
            total: usage.clone(),
            steps: steps
                .iter()
                .map(|s| (s.to_string(), usage.clone()))
                .collect(),
        }
    }

    fn figures() -> ExporterFigures {
        ExporterFigures {
            scrape_seconds: 0.0125,
            errors_total: 3,
        }
    }

    #[test]
    fn samples_are_grouped_under_one_help_and_type_each() {
        let jobs = [job(7, Some(1001), &["batch", "0"]), job(8, None, &[])];
        let text = render(&jobs, &figures());
        for (name, kind) in metric_names() {
            let help = text.matches(&format!("# HELP {name} ")).count();
            let types = text
                .matches(&format!("# TYPE {name} {}\n", kind.as_str()))
                .count();
            let expected = usize::from(text.contains(&format!("\n{name}")));
            assert_eq!((help, types), (expected, expected), "{name}");
        }
        // Every sample follows its own TYPE line, with no other metric in between.
        let mut current = "";
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                current = rest.split(' ').next().unwrap();
            } else if !line.starts_with('#') {
                let name = line.split(['{', ' ']).next().unwrap();
                assert_eq!(name, current, "{line}");
            }
        }
        assert!(text.contains(
            "# TYPE cgroup_cpu_user_seconds gauge\n\
             cgroup_cpu_user_seconds{jobid=\"7\",step=\"\",task=\"\"} 2.5\n\
             cgroup_cpu_user_seconds{jobid=\"7\",step=\"batch\",task=\"\"} 2.5\n\
             cgroup_cpu_user_seconds{jobid=\"7\",step=\"0\",task=\"\"} 2.5\n\
             cgroup_cpu_user_seconds{jobid=\"8\",step=\"\",task=\"\"} 2.5\n"
        ));
        assert!(text.contains("cgroup_cpu_total_seconds{jobid=\"8\",step=\"\",task=\"\"} 3\n"));
        assert!(
            text.contains("cgroup_memory_rss_bytes{jobid=\"7\",step=\"\",task=\"\"} 1048576\n")
        );
        assert!(text.contains("# TYPE jobsight_cgroup_io_read_bytes_total counter\n"));
        assert!(text.contains("# TYPE cgroup_uid gauge\ncgroup_uid{jobid=\"7\"} 1001\n# HELP"));
        assert!(text.contains("jobsight_exporter_scrape_seconds 0.0125\n"));
        assert!(text.contains("jobsight_exporter_jobs 2\n"));
        assert!(text.contains("jobsight_exporter_errors_total 3\n"));
        // Figures no job has are left out entirely.
        assert!(!text.contains("cgroup_memory_cache_bytes"));
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn no_jobs_still_gives_the_exporters_own_figures() {
        let text = render(&[], &figures());
        assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 3);
        assert!(!text.contains("cgroup_uid"));
    }

    #[test]
    fn label_values_and_help_are_escaped() {
        assert_eq!(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
        assert_eq!(escape_label_value("batch"), "batch");
        assert_eq!(escape_help("a\\b\nc"), "a\\\\b\\nc");
        let mut out = String::new();
        sample(&mut out, "m", &[("step", "x\"}\n y")], Value::Whole(1));
        assert_eq!(out, "m{step=\"x\\\"}\\n y\"} 1\n");
        out.clear();
        sample(&mut out, "m", &[], Value::Real(f64::NAN));
        sample(&mut out, "m", &[], Value::Real(f64::INFINITY));
        assert_eq!(out, "");
    }

    #[test]
    fn the_names_are_princetons_where_it_has_them() {
        let names: Vec<&str> = metric_names().into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "cgroup_cpu_user_seconds",
                "cgroup_cpu_system_seconds",
                "cgroup_cpu_total_seconds",
                "cgroup_cpus",
                "cgroup_memory_rss_bytes",
                "cgroup_memory_cache_bytes",
                "cgroup_memory_shmem_bytes",
                "cgroup_memory_used_bytes",
                "cgroup_memory_total_bytes",
                "cgroup_memory_fail_count",
                "jobsight_cgroup_memory_peak_bytes",
                "jobsight_cgroup_io_read_bytes_total",
                "jobsight_cgroup_io_write_bytes_total",
                "jobsight_cgroup_tasks",
                "jobsight_cgroup_oom_kills_total",
                "cgroup_uid",
                "jobsight_exporter_scrape_seconds",
                "jobsight_exporter_jobs",
                "jobsight_exporter_errors_total",
            ]
        );
        // Princeton's are all gauges; jobsight's counters end in _total.
        for (name, kind) in metric_names() {
            assert_eq!(kind == Kind::Counter, name.ends_with("_total"), "{name}");
        }
    }
}
