//! `jobsight job JOBID`: one job in the terminal, the way `seff` and Princeton's `jobstats`
//! show one on a login node. What it asked for and what it used (cores, memory, time, GPUs),
//! its efficiencies and where they came from, each finding with what to do and its evidence as
//! named values, the verdict of the rules and the models with the metrics in which the job
//! differed most from healthy jobs, how the two combine, and the `#SBATCH` lines a better
//! request would use. Every figure in people's units ([`super::units`]); `--format json` gives
//! the same figures as plain numbers in their stored units, for scripts.
//!
//! This module gathers the view ([`JobView`]) from the report's facts and writes it as JSON;
//! `text` writes it for a person, with the words every view of a verdict shares.

mod text;

pub(crate) use text::wrap;
pub use text::{HOW_THE_VERDICT_IS_MADE, render_text, verdict_details, verdict_said};

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::pages::suggest::{Suggestion, suggestions};
use super::per_node::{NodeUse, node_uses};
use jobsight_base::text::clean;
use jobsight_report::load::{Facts, HealthyBands, JobFacts, MIN_REFERENCE_RUNS, ReferenceGroup};
use jobsight_report::select::deviation;
use jobsight_warehouse::catalog::rows::{FindingRow, JobSummaryRow, PredictionRow};

/// Longest a name or a finding's text is shown.
const MAX_TEXT: usize = 400;

/// How many metrics the verdict's explanation lists.
const DIFFERENCES: usize = 5;

/// One job, as `jobsight job` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct JobView {
    pub job_id: String,
    pub name: String,
    pub user: String,
    pub account: String,
    pub partition: String,
    pub qos: String,
    pub cluster: String,
    pub state: String,
    pub exit_code: Option<i64>,
    pub exit_signal: Option<i64>,
    pub nodes: String,
    pub num_nodes: i64,
    pub cpus: i64,
    pub gpus: i64,
    pub req_mem_mb: Option<i64>,
    pub time_limit_s: Option<i64>,
    pub submit: Option<DateTime<Utc>>,
    pub start: Option<DateTime<Utc>>,
    pub end: Option<DateTime<Utc>>,
    pub wait_s: Option<i64>,
    pub elapsed_s: Option<i64>,
    pub core_hours: Option<f64>,
    /// What the features step measured; none before it ran.
    pub usage: Option<Usage>,
    pub findings: Vec<Finding>,
    /// The one verdict of the rules and the models; none where no model or rule judged it.
    pub verdict: Option<Verdict>,
    /// Whose healthy runs the job is compared with, in words ([`reference_group`]).
    pub compared_with: String,
    /// The metrics whose job mean lay furthest outside the healthy band, furthest first.
    pub differed: Vec<Difference>,
    pub suggestions: Vec<Suggestion>,
    /// A job of several nodes, node by node; empty for one node.
    pub per_node: Vec<NodeUse>,
    /// What the ingest found missing or odd about the run's data, one sentence each.
    pub notes: Vec<String>,
}

/// What the job used of what it asked for (`job_summary`).
#[derive(Debug, Clone, Serialize)]
pub struct Usage {
    pub judgeable: bool,
    pub not_judgeable_reason: String,
    pub cpu_used_cores: Option<f64>,
    pub cpu_eff: Option<f64>,
    pub cpu_source: String,
    pub mem_used_max_mb: Option<f64>,
    pub mem_eff: Option<f64>,
    pub mem_source: String,
    pub time_eff: Option<f64>,
    pub gpu_util: Option<f64>,
    pub gpu_mem_used_max_mb: Option<f64>,
    pub gpu_mem_total_mb: Option<f64>,
    /// Slurm's own GPU figures (the busiest task's peaks), where the site accounts them.
    pub acct_gpu_util_max_pct: Option<f64>,
    pub acct_gpu_mem_max_mb: Option<f64>,
    pub shared: Option<bool>,
    pub energy_kwh: Option<f64>,
}

/// A finding of the rule book, its evidence as stored (numbers as numbers).
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// Set when the finding is about an earlier run of a requeued job than the one shown: the
    /// sentence that says which.
    pub earlier_run: Option<String>,
    pub rule: String,
    pub title: String,
    pub severity: String,
    pub node: Option<String>,
    pub window_start: Option<DateTime<Utc>>,
    pub window_end: Option<DateTime<Utc>>,
    pub message: String,
    pub why: String,
    pub fix: String,
    pub tools: String,
    pub evidence: serde_json::Value,
}

/// The job's verdict (`predictions`).
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub verdict: String,
    pub confidence: Option<f64>,
    /// `model`, `anomaly-score`, `rules`, `model+rules`, or `none`.
    pub source: String,
    pub node: Option<String>,
    pub window_start: Option<DateTime<Utc>>,
    pub window_end: Option<DateTime<Utc>>,
    pub windows: u64,
    pub anomalous_windows: u64,
    pub unknown_windows: u64,
    pub anomaly_score: Option<f64>,
    pub agreeing_rules: String,
    pub reason: String,
}

/// A metric in which the job differed from healthy runs: its mean over the run against the
/// middle 80 % of the means of its application's healthy runs of the last 30 days, else its
/// user's, else the cluster's ([`HealthyBands::for_job`]).
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    pub metric: String,
    pub job_mean: f64,
    pub healthy_low: f64,
    pub healthy_high: f64,
    /// How far outside the band, in band widths.
    pub band_widths: f64,
}

/// Whose healthy runs a job is compared with, in words: its application's (runs of its job
/// name), its user's, or the cluster's, with how many runs the band was taken from.
pub fn reference_group(group: &ReferenceGroup, runs: i64) -> String {
    let (runs, days) = (runs.max(0), jobsight_report::load::HISTORY_DAYS);
    match group {
        ReferenceGroup::Application(name) => format!(
            "the {runs} healthy runs of its application, {}, in the last {days} days",
            clean(name, MAX_TEXT)
        ),
        ReferenceGroup::User(user) => format!(
            "the {runs} healthy jobs of its user, {}, in the last {days} days (its job name \
             has fewer than {MIN_REFERENCE_RUNS} healthy runs)",
            clean(user, MAX_TEXT)
        ),
        ReferenceGroup::Cluster => format!(
            "the {runs} healthy jobs of the warehouse in the last {days} days (its job name \
             and its user have fewer than {MIN_REFERENCE_RUNS} healthy runs each)"
        ),
    }
}

/// The view of the last job of `facts` (the job asked for), compared with the healthy band of
/// its application, its user or the cluster (`bands`).
pub fn job_view(facts: &Facts, bands: &HealthyBands) -> Option<JobView> {
    let job = facts.jobs.last()?;
    let (group_band, group) = bands.for_job(&job.name, &job.user);
    let band = &group_band.band;
    let summary = facts.summaries.get(&job.job_id);
    let all_findings = facts
        .findings
        .get(&job.job_id)
        .map_or(&[][..], Vec::as_slice);
    let findings = all_findings
        .iter()
        .map(|f| Finding {
            earlier_run: earlier_run(f, job, &facts.jobs),
            ..finding(f)
        })
        .collect();
    let this_run = of_run_shown(all_findings, job);
    let verdict = facts
        .predictions
        .get(&job.job_id)
        .and_then(|p| p.last())
        .map(verdict);
    let mut differed: Vec<Difference> = facts
        .means
        .get(&job.job_id)
        .into_iter()
        .flatten()
        .filter_map(|(metric, mean)| {
            let (lo, hi) = *band.get(metric)?;
            let widths = deviation(Some(*mean), Some(&(lo, hi)));
            (widths > 0.0).then(|| Difference {
                metric: metric.clone(),
                job_mean: *mean,
                healthy_low: lo,
                healthy_high: hi,
                band_widths: widths,
            })
        })
        .collect();
    differed.sort_by(|a, b| b.band_widths.total_cmp(&a.band_widths));
    // One line per family of per-core series (`cpu_core6_util`, `cpu_core7_util`), its furthest.
    let mut families = std::collections::HashSet::new();
    differed.retain(|d| families.insert(d.metric.replace(|c: char| c.is_ascii_digit(), "")));
    differed.truncate(DIFFERENCES);
    Some(JobView {
        job_id: job.job_id.clone(),
        name: job.name.clone(),
        user: job.user.clone(),
        account: job.account.clone(),
        partition: job.partition.clone(),
        qos: job.qos.clone(),
        cluster: job.cluster.clone(),
        state: job.state.clone(),
        exit_code: job.exit_code,
        exit_signal: job.exit_signal,
        nodes: job.nodes.clone(),
        num_nodes: job.num_nodes,
        cpus: job.cpus,
        gpus: job.gpus,
        req_mem_mb: job.req_mem_mb,
        time_limit_s: job.time_limit_s,
        submit: job.submit,
        start: job.start,
        end: job.end,
        wait_s: job.wait_s,
        elapsed_s: job.elapsed_s,
        core_hours: job.core_hours,
        usage: summary.map(|s| usage(s, job)),
        findings,
        verdict,
        compared_with: reference_group(&group, group_band.runs),
        differed,
        suggestions: suggestions(job, summary, &this_run),
        per_node: node_uses(facts.per_node.get(&job.job_id)),
        notes: notes(&job.note),
    })
}

/// The sentences of a job's note (`jobs.note`, one a line).
pub fn notes(note: &str) -> Vec<String> {
    note.lines()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn usage(s: &JobSummaryRow, job: &JobFacts) -> Usage {
    Usage {
        judgeable: s.judgeable,
        not_judgeable_reason: s.not_judgeable_reason.clone().unwrap_or_default(),
        cpu_used_cores: s.cpu_used_cores,
        cpu_eff: s.cpu_eff,
        cpu_source: s.cpu_eff_source.clone().unwrap_or_default(),
        mem_used_max_mb: s.mem_used_max_mb,
        mem_eff: s.mem_eff,
        mem_source: s.mem_source.clone().unwrap_or_default(),
        time_eff: s.time_eff,
        gpu_util: s.gpu_util,
        gpu_mem_used_max_mb: s.gpu_mem_used_max_mb,
        gpu_mem_total_mb: s.gpu_mem_total_mb,
        acct_gpu_util_max_pct: job.acct_gpu_util_max_pct,
        acct_gpu_mem_max_mb: job.acct_gpu_mem_max_mb,
        shared: s.shared,
        energy_kwh: s.energy_kwh,
    }
}

/// The run of `f` when it is an earlier run of a requeued job than `job` (the job's last run, the
/// one shown); `None` for a finding of `job`'s own run, or one whose run is not recorded.
fn earlier(f: &FindingRow, job: &JobFacts) -> Option<(u32, u32)> {
    let (run, last) = (f.restart_count?, job.restart_count?);
    (run < last).then_some((run, last))
}

/// The findings of the run shown (`job`), on which advice for the next run rests: not those of an
/// earlier run of a requeued job.
pub fn of_run_shown(findings: &[FindingRow], job: &JobFacts) -> Vec<FindingRow> {
    findings
        .iter()
        .filter(|f| earlier(f, job).is_none())
        .cloned()
        .collect()
}

/// For a finding about an earlier run of a requeued job than `job` (see [`earlier`]), the sentence
/// that says so, with how that run ended where `runs` has it.
pub fn earlier_run(f: &FindingRow, job: &JobFacts, runs: &[JobFacts]) -> Option<String> {
    earlier(f, job).map(|(run, last)| {
        let ended = runs
            .iter()
            .find(|r| r.job_id == job.job_id && r.restart_count == Some(run))
            .map(|r| r.state.as_str());
        earlier_run_line(run, last, ended)
    })
}

/// The line that marks something found about `run`, an earlier run of a requeued job than `last`
/// (the run shown), with how that run `ended` where known: the page, `jobsight job` and the
/// emails say it alike.
pub fn earlier_run_line(run: u32, last: u32, ended: Option<&str>) -> String {
    let ended = ended
        .filter(|state| !state.is_empty())
        .map(|state| format!(", which ended {}", clean(state, 40)))
        .unwrap_or_default();
    format!(
        "About run {} of {}{ended}; Slurm ran the job again.",
        run + 1,
        last + 1
    )
}

fn finding(f: &FindingRow) -> Finding {
    Finding {
        earlier_run: None,
        rule: f.rule.clone(),
        title: f.title.clone(),
        severity: f.severity.clone(),
        node: f.node.clone(),
        window_start: f.window().map(|w| w.0),
        window_end: f.window().map(|w| w.1),
        message: f.message.clone(),
        why: f.why.clone(),
        fix: f.fix.clone(),
        tools: f.tools.clone(),
        evidence: serde_json::from_str(&f.evidence).unwrap_or(serde_json::Value::Null),
    }
}

pub fn verdict(p: &PredictionRow) -> Verdict {
    Verdict {
        verdict: p.verdict.clone(),
        confidence: p.confidence,
        source: p.source.clone(),
        node: p.node.clone(),
        window_start: p.window().map(|w| w.0),
        window_end: p.window().map(|w| w.1),
        windows: p.windows,
        anomalous_windows: p.anomalous_windows,
        unknown_windows: p.unknown_windows,
        anomaly_score: p.anomaly_score,
        agreeing_rules: p.agreeing_rules.clone(),
        reason: p.reason.clone(),
    }
}

/// The view as one JSON document for scripts.
pub fn render_json(v: &JobView) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}")) + "\n"
}

#[cfg(test)]
mod tests {
    use super::text::how_verdict;
    use super::*;
    use jobsight_report::load::{GroupBand, JobFacts};
    use std::collections::BTreeMap;

    fn at(minutes: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_795_000_000 + minutes * 60, 0).unwrap()
    }

    fn job(id: &str, name: &str, cpus: i64, mem_mb: i64, hours: i64, state: &str) -> JobFacts {
        JobFacts {
            job_id: id.into(),
            restart_count: Some(0),
            day: "2026-11-18".into(),
            cluster: "della".into(),
            user: "alice".into(),
            account: "physics".into(),
            partition: "cpu".into(),
            qos: "normal".into(),
            name: name.into(),
            nodes: "node09".into(),
            num_nodes: 1,
            cpus,
            gpus: 0,
            req_mem_mb: Some(mem_mb),
            time_limit_s: Some(8 * 3600 + 40 * 60),
            submit: Some(at(-12)),
            start: Some(at(0)),
            end: Some(at(hours * 60)),
            state: state.into(),
            exit_code: Some(if state == "COMPLETED" { 0 } else { 1 }),
            exit_signal: Some(if state == "OUT_OF_MEMORY" { 9 } else { 0 }),
            elapsed_s: Some(hours * 3600),
            wait_s: Some(12 * 60),
            core_hours: Some((cpus * hours) as f64),
            acct_gpu_util_max_pct: None,
            acct_gpu_mem_max_mb: None,
            note: String::new(),
        }
    }

    fn measured(
        cpu_eff: f64,
        cpus: f64,
        mem_used_mb: f64,
        mem_eff: f64,
        time_eff: f64,
    ) -> JobSummaryRow {
        JobSummaryRow {
            judgeable: true,
            cpu_used_cores: Some(cpu_eff * cpus),
            cpu_eff: Some(cpu_eff),
            mem_used_max_mb: Some(mem_used_mb),
            mem_eff: Some(mem_eff),
            time_eff: Some(time_eff),
            cpu_eff_source: Some("telemetry-job".into()),
            mem_source: Some("telemetry-job".into()),
            shared: Some(false),
            ..Default::default()
        }
    }

    fn facts(
        job: JobFacts,
        summary: JobSummaryRow,
        findings: Vec<FindingRow>,
        prediction: Option<PredictionRow>,
        means: &[(&str, f64)],
    ) -> Facts {
        let id = job.job_id.clone();
        let mut f = Facts {
            jobs: vec![job],
            ..Default::default()
        };
        f.summaries.insert(id.clone(), summary);
        f.findings.insert(id.clone(), findings);
        if let Some(p) = prediction {
            f.predictions.insert(id.clone(), vec![p]);
        }
        f.means
            .insert(id, means.iter().map(|(m, v)| (m.to_string(), *v)).collect());
        f
    }

    /// The healthy band of each metric the examples have, as the report loader gives it.
    fn band() -> BTreeMap<String, (f64, f64)> {
        BTreeMap::from([
            ("cpu_user".to_string(), (0.85, 0.98)),
            ("cpu_pressure".to_string(), (0.0, 0.05)),
            ("mem_used_bytes".to_string(), (2.0e9, 9.0e9)),
            ("net_rx_bytes_per_s".to_string(), (1.0e5, 2.0e7)),
        ])
    }

    /// The four jobs the issue names, each as a person reads it: healthy, flagged by the model,
    /// out of memory (found by the rules alone), and a sleeping job on a shared node whose
    /// figures come from Slurm accounting.
    fn examples() -> Vec<(&'static str, JobView)> {
        let healthy = facts(
            job("5001", "lammps-prod", 16, 32_768, 6, "COMPLETED"),
            measured(0.93, 16.0, 22_118.4, 0.675, 0.69),
            vec![],
            Some(PredictionRow {
                verdict: "healthy".into(),
                confidence: Some(0.97),
                source: "model".into(),
                windows: 1436,
                ..Default::default()
            }),
            &[("cpu_user", 0.93), ("mem_used_bytes", 7.1e9)],
        );
        let flagged = facts(
            job("5002", "gromacs-md", 32, 65_536, 5, "COMPLETED"),
            measured(0.52, 32.0, 12_000.0, 0.183, 0.58),
            vec![FindingRow {
                rule: "cpu-contention".into(),
                title: "Something else competed for the CPUs of the job's nodes".into(),
                group: "interference".into(),
                severity: "warning".into(),
                node: Some("node09".into()),
                window_start: Some(at(60)),
                window_end: Some(at(240)),
                message: "node09 ran 41 % of the time on the job's cores while tasks waited for a CPU 38 % of the time".into(),
                why: "a process outside the job (another job, a stray daemon) takes cycles the job paid for".into(),
                fix: "ask the admins whether node09 was shared; rerun with --exclusive to compare".into(),
                tools: "top, htop, ps -eo pid,user,pcpu --sort=-pcpu".into(),
                evidence: r#"{"cpu_user.mean":0.4059694906469261,"cpu_pressure.mean":0.3812,"net_rx_bytes_per_s.mean":80078094.0,"job.time_limit_s":31200}"#.into(),
                ..Default::default()
            }],
            Some(PredictionRow {
                verdict: "cpuoccupy".into(),
                confidence: Some(0.99),
                source: "model+rules".into(),
                node: Some("node09".into()),
                window_start: Some(at(60)),
                window_end: Some(at(240)),
                windows: 1196,
                anomalous_windows: 712,
                model_verdict: Some("cpuoccupy".into()),
                model_confidence: Some(0.99),
                anomaly_score: Some(3.4),
                agreeing_rules: "cpu-contention".into(),
                ..Default::default()
            }),
            &[("cpu_user", 0.41), ("cpu_pressure", 0.38), ("mem_used_bytes", 3.0e9)],
        );
        let oom = facts(
            job("5003", "assemble", 8, 16_384, 2, "OUT_OF_MEMORY"),
            measured(0.88, 8.0, 16_384.0, 1.0, 0.23),
            vec![FindingRow {
                rule: "out-of-memory".into(),
                title: "The job ran out of memory".into(),
                severity: "critical".into(),
                node: Some("node09".into()),
                message: "the kernel killed the job's largest process when it reached its 16.0 GB limit".into(),
                fix: "ask for more memory (#SBATCH --mem=24G) or process the input in parts".into(),
                evidence: r#"{"summary.mem_used_max_mb":16384.0,"job.req_mem_mb":16384,"summary.mem_eff":1.0}"#.into(),
                ..Default::default()
            }],
            Some(PredictionRow {
                verdict: "out-of-memory".into(),
                source: "rules".into(),
                windows: 470,
                model_verdict: Some("healthy".into()),
                model_confidence: Some(0.96),
                agreeing_rules: "out-of-memory".into(),
                reason: "rule out-of-memory found it; the models saw nothing wrong".into(),
                ..Default::default()
            }),
            &[("mem_used_bytes", 1.7e10)],
        );
        let mut asleep = measured(0.007, 1.0, 3.1, 0.003, 0.11);
        asleep.cpu_eff_source = Some("accounting".into());
        asleep.mem_source = Some("accounting".into());
        asleep.shared = Some(true);
        let shared = facts(
            JobFacts {
                note: "steps 5004.extern had not ended when accounting was read\njobs sharing its nodes unknown: sacct failed; exit 1".into(),
                ..job("5004", "sleep-canary", 1, 1_024, 1, "COMPLETED")
            },
            asleep,
            vec![FindingRow {
                rule: "idle-job".into(),
                title: "The job did nothing".into(),
                severity: "warning".into(),
                message: "its one core was busy 0.7 % of the run".into(),
                fix: "check that the program started; a job waiting on input holds its core for nothing".into(),
                evidence: r#"{"summary.cpu_eff":0.007,"summary.cpu_used_cores":0.007,"job.cpus":1}"#.into(),
                ..Default::default()
            }],
            None,
            &[],
        );
        // The LAMMPS runs have a band of their own; the others are compared with the cluster.
        let mut bands = HealthyBands::of_cluster(band(), 412);
        bands.applications.insert(
            "lammps-prod".into(),
            GroupBand {
                runs: 12,
                band: band(),
            },
        );
        [
            ("healthy", healthy),
            ("flagged", flagged),
            ("out_of_memory", oom),
            ("shared_node", shared),
        ]
        .into_iter()
        .map(|(name, f)| (name, job_view(&f, &bands).unwrap()))
        .collect()
    }

    /// What a user sees for each kind of job, pinned.
    #[test]
    fn the_four_kinds_of_job_read_as_pinned() {
        for (name, view) in examples() {
            insta::assert_snapshot!(format!("job_{name}"), render_text(&view));
        }
    }

    /// A requeued job is shown as its last run; a finding of an earlier run says which run it is
    /// about and how that run ended, and no advice for the next run rests on it.
    #[test]
    fn a_finding_of_an_earlier_run_says_so() {
        let lost = JobFacts {
            restart_count: Some(0),
            ..job("5007", "lose-node", 2, 2048, 1, "NODE_FAIL")
        };
        let last = JobFacts {
            restart_count: Some(1),
            ..job("5007", "lose-node", 2, 2048, 1, "COMPLETED")
        };
        let node_fail = FindingRow {
            restart_count: Some(0),
            rule: "node-fail".into(),
            title: "A node failed: not your fault".into(),
            severity: "info".into(),
            message: "The job ended because a node of its allocation failed.".into(),
            fix: "Resubmit the job.".into(),
            ..Default::default()
        };
        let mut f = facts(
            last,
            measured(0.92, 2.0, 6.0, 0.003, 0.13),
            vec![node_fail],
            None,
            &[],
        );
        f.jobs.insert(0, lost);
        let view = job_view(&f, &HealthyBands::default()).unwrap();
        assert_eq!(view.state, "COMPLETED");
        assert_eq!(
            view.findings[0].earlier_run.as_deref(),
            Some("About run 1 of 2, which ended NODE_FAIL; Slurm ran the job again.")
        );
        let text = render_text(&view);
        assert!(
            text.contains("About run 1 of 2, which ended NODE_FAIL"),
            "{text}"
        );
        // A finding of the run shown has no such line.
        f.findings.get_mut("5007").unwrap()[0].restart_count = Some(1);
        let view = job_view(&f, &HealthyBands::default()).unwrap();
        assert_eq!(view.findings[0].earlier_run, None);
    }

    /// A GPU job at a site without DCGM: its GPU rows show Slurm's own peaks (the figure
    /// `gpu-never-busy` reads), said as the busiest task's peaks, without a bar of a mean.
    #[test]
    fn a_gpu_job_without_dcgm_shows_slurm_s_gpu_figures() {
        let job = JobFacts {
            gpus: 2,
            acct_gpu_util_max_pct: Some(3.0),
            acct_gpu_mem_max_mb: Some(1024.0),
            ..job("5010", "train", 8, 32_768, 2, "COMPLETED")
        };
        let f = facts(
            job,
            measured(0.9, 8.0, 9_000.0, 0.27, 0.25),
            vec![],
            None,
            &[],
        );
        let view = job_view(&f, &HealthyBands::default()).unwrap();
        let text = render_text(&view);
        let row = |name: &str| {
            text.lines()
                .find(|l| l.trim_start().starts_with(name))
                .unwrap_or_else(|| panic!("no {name} row: {text}"))
                .to_string()
        };
        let gpus = row("GPUs ");
        assert!(gpus.contains("peak 3.0 % (Slurm, busiest task)"), "{gpus}");
        assert!(
            row("GPU mem").contains("peak 1 GB (Slurm, busiest task)"),
            "{text}"
        );
    }

    /// Every view has an explanation for each finding and the verdict, no long raw decimal and
    /// every size with its unit; JSON gives plain numbers a script can read.
    #[test]
    fn every_view_is_readable_and_its_json_is_plain_numbers() {
        for (name, view) in examples() {
            let text = render_text(&view);
            assert!(
                super::super::units::unreadable_numbers(&text).is_empty(),
                "{name}: {text}"
            );
            assert!(!text.contains('{'), "{name}: raw JSON in {text}");
            // Each finding says what to do, in words.
            for f in &view.findings {
                assert!(
                    !f.fix.trim().is_empty() && !f.message.trim().is_empty(),
                    "{name}"
                );
            }
            assert_eq!(
                text.matches("What to do: ").count(),
                view.findings.len(),
                "{name}"
            );
            assert!(text.contains(&how_verdict()), "{name}");
            let json: serde_json::Value = serde_json::from_str(&render_json(&view)).unwrap();
            assert_eq!(json["job_id"], view.job_id.as_str());
            assert!(json["usage"]["cpu_eff"].is_number(), "{name}");
        }
    }
}
