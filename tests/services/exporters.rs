//! The per-job exporters a site already runs (`[prometheus] job_exporter`): each preset's queries,
//! rendered by jobsight for job 12 of cluster `tiger` on node `n1`, evaluated by Prometheus's own
//! query engine (`promtool test rules`, Debian's `prometheus` package) over series written from
//! each exporter's documented exposition (labels as its source prints them, plus the `instance`
//! and `cluster` target labels a scrape adds). Beside the job's own series each set holds the
//! traps a wrong matcher falls into: the job's steps, job 123 (whose id starts with 12), job 12 of
//! another cluster, and another job on the same node. Each preset must give exactly the job's own
//! 1.5 cores (1 user, 0.5 system) and 2 GiB.

use std::process::Command;

use jobsight::config::{JobExporter, job_exporter_metrics};
use jobsight_ingest::prometheus::{node_matcher, render};

use crate::common;
use common::services::{sh, test_base};

/// A counter rising by `per_s` every second, sampled every 15 s (promtool's `a+bxN`).
fn counter(per_s: f64) -> String {
    format!("0+{}x40", per_s * 15.0)
}

/// The CPU and memory series that Princeton's, jobsight's and treydock's exporters share, under
/// `labels`: `scale` times 1.5 cores (1 user, 0.5 system) and 2 GiB.
fn cgroup_series(labels: &str, scale: f64) -> Vec<(String, String)> {
    vec![
        (
            format!("cgroup_cpu_total_seconds{{{labels}}}"),
            counter(1.5 * scale),
        ),
        (
            format!("cgroup_cpu_user_seconds{{{labels}}}"),
            counter(scale),
        ),
        (
            format!("cgroup_cpu_system_seconds{{{labels}}}"),
            counter(0.5 * scale),
        ),
        (
            format!("cgroup_memory_rss_bytes{{{labels}}}"),
            "2147483648+0x40".into(),
        ),
    ]
}

/// `(series with its labels, values)` of one exporter: the job's own and the traps.
fn exposition(exporter: JobExporter) -> Vec<(String, String)> {
    let target = r#"cluster="tiger",instance="n1:9306""#;
    let other_cluster = r#"cluster="della",instance="d1:9306""#;
    let gib = "2147483648+0x40".to_string();
    let mut series = Vec::new();
    match exporter {
        JobExporter::Jobsight | JobExporter::Princeton => {
            // plazonic/cgroup_exporter and jobsight-exporter: jobid, step, task (step="" for
            // the job's own cgroup; `--collect.fullslurm` adds steps and tasks).
            for (labels, scale) in [
                (format!(r#"jobid="12",step="",task="",{target}"#), 1.0),
                (format!(r#"jobid="12",step="batch",task="",{target}"#), 1.0),
                (format!(r#"jobid="12",step="batch",task="0",{target}"#), 1.0),
                (format!(r#"jobid="123",step="",task="",{target}"#), 7.0),
                (
                    format!(r#"jobid="12",step="",task="",{other_cluster}"#),
                    5.0,
                ),
            ] {
                series.extend(cgroup_series(&labels, scale));
                series.push((format!("cgroup_cpus{{{labels}}}"), "4+0x40".into()));
            }
        }
        JobExporter::Treydock => {
            // treydock/cgroup_exporter: only the cgroup's path (v1 here; v2 is
            // /system.slice/slurmstepd.scope/job_12, which the same matcher takes).
            for (labels, scale) in [
                (format!(r#"cgroup="/slurm/uid_1000/job_12",{target}"#), 1.0),
                (
                    format!(r#"cgroup="/slurm/uid_1000/job_12/step_0",{target}"#),
                    1.0,
                ),
                (format!(r#"cgroup="/slurm/uid_1000/job_123",{target}"#), 7.0),
                (
                    format!(r#"cgroup="/slurm/uid_1000/job_12",{other_cluster}"#),
                    5.0,
                ),
            ] {
                series.extend(cgroup_series(&labels, scale));
            }
            series.push((
                r#"cgroup_info{cgroup="/slurm/uid_1000/job_12",jobid="12",uid="1000",username="alice",cluster="tiger",instance="n1:9306"}"#.into(),
                "1+0x40".into(),
            ));
        }
        JobExporter::Ceems => {
            // CEEMS: uuid is the job id, manager "slurm"; no total CPU series.
            for (labels, scale) in [
                (
                    format!(
                        r#"cgrouphostname="",hostname="n1",manager="slurm",uuid="12",{target}"#
                    ),
                    1.0,
                ),
                (
                    format!(
                        r#"cgrouphostname="",hostname="n1",manager="slurm",uuid="123",{target}"#
                    ),
                    7.0,
                ),
                (
                    format!(
                        r#"cgrouphostname="",hostname="d1",manager="slurm",uuid="12",{other_cluster}"#
                    ),
                    5.0,
                ),
            ] {
                series.push((
                    format!("ceems_compute_unit_cpu_user_seconds_total{{{labels}}}"),
                    counter(scale),
                ));
                series.push((
                    format!("ceems_compute_unit_cpu_system_seconds_total{{{labels}}}"),
                    counter(0.5 * scale),
                ));
                series.push((
                    format!("ceems_compute_unit_memory_rss_bytes{{{labels}}}"),
                    gib.clone(),
                ));
            }
        }
        JobExporter::None => {}
    }
    series
}

fn install_promtool() {
    sh(
        "command -v promtool >/dev/null || { [ -e /usr/sbin/policy-rc.d ] || printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }",
    );
}

#[test]
#[ignore = "needs root: installs Prometheus's promtool (run by .ci/run with --include-ignored)"]
fn every_exporter_preset_reads_exactly_the_jobs_own_series() {
    // apt, which the other tests use too, takes one installer at a time.
    let _services = common::services::one_at_a_time();
    assert!(
        common::is_root(),
        "this test installs prometheus and must run as root"
    );
    install_promtool();
    let base = test_base("exporters");
    let nodes = node_matcher("instance", &["n1".to_string()]).unwrap();
    for exporter in [
        JobExporter::Jobsight,
        JobExporter::Princeton,
        JobExporter::Treydock,
        JobExporter::Ceems,
    ] {
        let mut yaml = String::from(
            "rule_files: []\nevaluation_interval: 1m\ntests:\n  - interval: 15s\n    input_series:\n",
        );
        for (series, values) in exposition(exporter) {
            yaml.push_str(&format!(
                "      - series: '{series}'\n        values: '{values}'\n"
            ));
        }
        yaml.push_str("    promql_expr_test:\n");
        let metrics = job_exporter_metrics(exporter, Some("cluster"));
        for m in &metrics {
            let expected = match m.name.as_str() {
                "job_cpu_cores_used" => Some(1.5),
                "job_cpu_user_cores" => Some(1.0),
                "job_cpu_system_cores" => Some(0.5),
                "job_mem_rss_bytes" => Some(2_147_483_648.0),
                // jobsight-exporter's I/O: no series here, so no sample.
                _ => None,
            };
            let query = render(
                &m.query,
                &nodes,
                "12",
                "tiger",
                std::time::Duration::from_secs(60),
            );
            assert!(!query.contains('\''), "{query}");
            let samples = match expected {
                Some(value) => format!(
                    "\n          - labels: '{{instance=\"n1:9306\"}}'\n            value: {value}"
                ),
                None => " []".to_string(),
            };
            yaml.push_str(&format!(
                "      - expr: '{query}'\n        eval_time: 5m\n        exp_samples:{samples}\n"
            ));
        }
        assert!(metrics.len() >= 4, "{exporter:?}");
        let file = base.join(format!("{exporter:?}.yml"));
        std::fs::write(&file, &yaml).unwrap();
        let out = Command::new("promtool")
            .arg("test")
            .arg("rules")
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{exporter:?}: {}{}\n{yaml}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Without a cluster label the presets select by job alone (one cluster per Prometheus).
    let single = job_exporter_metrics(JobExporter::Princeton, None);
    assert!(single.iter().all(|m| !m.query.contains("{cluster}")));
    // A hostile cluster name cannot end the PromQL string.
    let q = render(
        "x{cluster=\"{cluster}\",{nodes}}",
        &nodes,
        "12",
        "a\",job=~\".*",
        std::time::Duration::from_secs(60),
    );
    assert!(q.starts_with(r#"x{cluster="a\",job=~\".*","#), "{q}");
}
