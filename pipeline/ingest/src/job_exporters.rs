//! The per-job exporters a site may already run, and the queries that read a job's own series from
//! each (`[prometheus] job_exporter`): jobsight's own, Princeton's (jobstats), OSC's (treydock's
//! cgroup_exporter, also used by XDMoD sites) and CEEMS. Each gives the same warehouse metrics
//! (`job_cpu_cores_used`, `job_mem_rss_bytes`, ...), so the features and rules read them alike.
//!
//! What each exporter exposes, from its own source (the tests render each preset's queries
//! against exposition text written from that source's documented output):
//! - `jobsight`: `cgroup_cpu_total_seconds{jobid,step,task}` and the rest of Princeton's names,
//!   plus `jobsight_cgroup_io_*_bytes_total` (cgroup v2 only).
//! - `princeton` (plazonic/cgroup_exporter): the same names and labels, no I/O; job-level series
//!   have `step=""` and `task=""` (steps and tasks only with `--collect.fullslurm`); on a Slurm
//!   26.05 node with cgroup v2 the `jobid` label is the job's SLUID unless `CgroupJobIdPaths=yes`.
//! - `treydock` (treydock/cgroup_exporter): the same metric names but only a `cgroup` label, the
//!   cgroup's path: `/slurm/uid_1000/job_12` (v1) or `/system.slice/slurmstepd.scope/job_12` (v2).
//! - `ceems` (CEEMS's exporter): `ceems_compute_unit_cpu_{user,system}_seconds_total` and
//!   `ceems_compute_unit_memory_rss_bytes`, labelled `uuid` (the job id) and `manager="slurm"`;
//!   it has no total CPU series, so the total is user plus system.
//!
//! `{cluster}`: on a Prometheus that holds several clusters (jobstats' setup), the job's cluster
//! name selects its series; `prometheus.cluster_label` names the label (jobstats: `cluster`) and
//! the presets match on it. Every template may use `{cluster}` itself.

use jobsight_base::choice::{Choice, Named};
use serde::Deserialize;

/// Which per-job exporter the site runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobExporter {
    None,
    Jobsight,
    Princeton,
    Treydock,
    Ceems,
}

impl Choice for JobExporter {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: JobExporter::None,
            name: "none",
            help: "no per-job exporter: node figures only",
        },
        Named {
            value: JobExporter::Jobsight,
            name: "jobsight",
            help: "jobsight-exporter: CPU, memory and I/O of each job's cgroup (jobid label)",
        },
        Named {
            value: JobExporter::Princeton,
            name: "princeton",
            help: "Princeton's cgroup_exporter (jobstats): CPU and memory (jobid label)",
        },
        Named {
            value: JobExporter::Treydock,
            name: "treydock",
            help: "treydock/cgroup_exporter (OSC, XDMoD): CPU and memory (cgroup path label)",
        },
        Named {
            value: JobExporter::Ceems,
            name: "ceems",
            help: "CEEMS's exporter: CPU and memory of each compute unit (uuid label)",
        },
    ];
}

/// The label matcher that picks a job's own series on one exporter, with the cluster's when
/// `cluster_label` is given (ending in `,` so that `{nodes}` follows).
fn job_matcher(exporter: JobExporter, cluster_label: Option<&str>) -> String {
    let cluster = cluster_label
        .map(|label| format!("{label}=\"{{cluster}}\","))
        .unwrap_or_default();
    let job = match exporter {
        JobExporter::None => return String::new(),
        // Only the job's own series: an exporter that also reports steps and tasks would count the
        // job two or three times in the sum.
        JobExporter::Jobsight | JobExporter::Princeton => r#"jobid="{job_id}",step="",task="","#,
        // The job's cgroup itself, not its steps' (`.../job_12/step_0` does not end in job_12).
        JobExporter::Treydock => r#"cgroup=~".*/job_{job_id}","#,
        JobExporter::Ceems => r#"manager="slurm",uuid="{job_id}","#,
    };
    format!("{cluster}{job}")
}

/// The warehouse metrics of `exporter` as `(name, PromQL template)`, reading only the job's own
/// series (the settings make them templates: `settings::job_exporter_metrics`).
pub fn job_exporter_queries(
    exporter: JobExporter,
    cluster_label: Option<&str>,
) -> Vec<(&'static str, String)> {
    let on = job_matcher(exporter, cluster_label);
    let rate = |metric: &str| {
        format!("sum by (instance) (rate({metric}{{{on}{{nodes}}}}[{{rate_window}}]))")
    };
    let gauge = |metric: &str| format!("sum by (instance) ({metric}{{{on}{{nodes}}}})");
    let queries: Vec<(&str, String)> = match exporter {
        JobExporter::None => Vec::new(),
        JobExporter::Jobsight | JobExporter::Princeton | JobExporter::Treydock => {
            let mut q = vec![
                ("job_cpu_cores_used", rate("cgroup_cpu_total_seconds")),
                ("job_mem_rss_bytes", gauge("cgroup_memory_rss_bytes")),
                ("job_cpu_user_cores", rate("cgroup_cpu_user_seconds")),
                ("job_cpu_system_cores", rate("cgroup_cpu_system_seconds")),
            ];
            if exporter == JobExporter::Jobsight {
                // Only jobsight-exporter serves I/O (cgroup v2 `io.stat`); a series never served
                // is simply absent from the job's features.
                q.push((
                    "job_io_read_bytes_per_s",
                    rate("jobsight_cgroup_io_read_bytes_total"),
                ));
                q.push((
                    "job_io_write_bytes_per_s",
                    rate("jobsight_cgroup_io_write_bytes_total"),
                ));
            }
            q
        }
        JobExporter::Ceems => {
            let user = rate("ceems_compute_unit_cpu_user_seconds_total");
            let system = rate("ceems_compute_unit_cpu_system_seconds_total");
            vec![
                ("job_cpu_cores_used", format!("{user} + {system}")),
                (
                    "job_mem_rss_bytes",
                    gauge("ceems_compute_unit_memory_rss_bytes"),
                ),
                ("job_cpu_user_cores", user),
                ("job_cpu_system_cores", system),
            ]
        }
    };
    queries
}

/// `value` as the inside of a PromQL double-quoted string: a cluster name from accounting must
/// not end the string and add matchers of its own. PromQL escapes `\`, `"` and newlines as the
/// exposition format does; other control characters are dropped.
pub fn promql_string(value: &str) -> String {
    let printable: String = value
        .chars()
        .filter(|&c| c == '\n' || !c.is_control())
        .collect();
    slurm_hooks::exposition::escape_label_value(&printable)
}
