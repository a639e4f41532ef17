//! The emails' contexts: what every placeholder of a user's digest or critical email and of the
//! admins' messages holds, built from the stage's planned message ([`jobsight_notify::plan`]).
//!
//! Every value that comes from a user or another system (job names, states, node lists, rule
//! texts) goes through [`clean`] here: no control characters, bounded length. The names built
//! here are the documented ones ([`super::placeholders`]; a test keeps the two equal).

use std::collections::{BTreeMap, BTreeSet};

use jobsight_base::severity::Severity;
use jobsight_base::text::clean;

use super::values::{Context, Value};
use jobsight_notify::message::{AdminFacts, Links};
use jobsight_notify::plan::{JobReport, MessageKind, Period, Planned};
use jobsight_notify::running::Warning;

fn text(value: impl Into<String>) -> Value {
    Value::Text(value.into())
}

/// A user-controlled value made safe.
fn untrusted(value: Option<&str>, max: usize) -> Value {
    Value::Text(value.map_or("-".to_string(), |v| clean(v, max)))
}

/// A share as every view writes it ([`jobsight_base::units::percent`]).
fn percent(value: Option<f64>) -> Value {
    text(value.map_or("-".into(), jobsight_base::units::percent))
}

fn hours(value: Option<f64>) -> Value {
    text(
        value
            .filter(|v| v.is_finite())
            .map_or("-".into(), jobsight_base::units::significant),
    )
}

/// Where a CPU or memory efficiency came from ([`crate::figure_source_label`]), empty
/// when it is the job's own telemetry or unknown.
fn source_label(source: Option<&str>, shared: Option<bool>) -> Value {
    text(
        source
            .and_then(|s| crate::figure_source_label(s, shared))
            .unwrap_or_default(),
    )
}

/// A duration as every view writes it ([`jobsight_base::units::duration`]).
fn run_time(seconds: Option<i64>) -> String {
    seconds.map_or("-".into(), |s| jobsight_base::units::duration(s as f64))
}

/// A link from a URL template: placeholders replaced by the values as the report pages name
/// their files ([`jobsight_base::text::slug`]: letters, digits, `-`, `_`, `.`, and `~XX` for any
/// other byte), which needs no further encoding in a URL and finds the page.
pub fn link(template: &str, pairs: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (name, value) in pairs {
        out = out.replace(&format!("{{{name}}}"), &jobsight_base::text::slug(value));
    }
    out
}

fn findings_context(job: &JobReport) -> Value {
    Value::List(
        job.items
            .iter()
            .map(|item| {
                Context::from([
                    (
                        "earlier_run",
                        text(earlier_run(item, job).unwrap_or_default()),
                    ),
                    ("severity", text(item.severity.name())),
                    ("kind", untrusted(Some(&item.kind), 80)),
                    ("title", untrusted(Some(&item.title), 200)),
                    ("message", untrusted(Some(&item.message), 1000)),
                    ("fix", untrusted(Some(&item.fix), 1000)),
                    ("tools", text(clean(&item.tools, 300))),
                    (
                        "node",
                        text(
                            item.node
                                .as_deref()
                                .map(|n| clean(n, 80))
                                .unwrap_or_default(),
                        ),
                    ),
                ])
            })
            .collect(),
    )
}

/// For an item about an earlier run of a requeued job than the one reported, the line that says
/// so ([`crate::job::earlier_run_line`], as the job's page says it).
fn earlier_run(item: &jobsight_notify::plan::Item, job: &JobReport) -> Option<String> {
    job.earlier_run(item.run).map(|(run, last)| {
        let ended = job
            .run_states
            .iter()
            .find(|(r, _)| *r == run)
            .map(|(_, state)| state.as_str());
        crate::job::earlier_run_line(run, last, ended)
    })
}

/// The `#SBATCH` lines of a better request, made as the job's page makes them
/// ([`crate::pages::suggest::suggestions`]): one rule for what is safe to paste.
fn suggestions_context(job: &JobReport) -> Value {
    use jobsight_report::load::JobFacts;
    use jobsight_warehouse::catalog::rows::{FindingRow, JobSummaryRow};
    let facts = JobFacts {
        job_id: job.job_id.clone(),
        state: job.state.clone().unwrap_or_default(),
        num_nodes: job.num_nodes.unwrap_or(1),
        cpus: job.cpus.map_or(0, i64::from),
        gpus: job.gpus.unwrap_or(0),
        req_mem_mb: job.req_mem_mb,
        time_limit_s: job.time_limit_s,
        elapsed_s: job.run_s(),
        ..Default::default()
    };
    let summary = job.judgeable.map(|judgeable| JobSummaryRow {
        judgeable,
        cpu_used_cores: job.cpu_used_cores,
        cpu_eff: job.cpu_eff,
        cpu_eff_source: job.cpu_eff_source.clone(),
        mem_used_max_mb: job.mem_used_max_mb,
        mem_eff: job.mem_eff,
        mem_source: job.mem_source.clone(),
        gpu_util: job.gpu_util,
        shared: job.shared,
        ..Default::default()
    });
    // Every finding of the job counts, not only those this message reports: a critical one
    // sent earlier holds back the same advice as on the page.
    let critical = FindingRow {
        severity: Severity::Critical.name().to_string(),
        ..Default::default()
    };
    let findings: Vec<FindingRow> = job
        .items
        .iter()
        .filter(|item| job.earlier_run(item.run).is_none())
        .map(|item| FindingRow {
            rule: item.kind.clone(),
            severity: item.severity.name().to_string(),
            ..Default::default()
        })
        .chain(job.critical_finding.then_some(critical))
        .collect();
    let lines = crate::pages::suggest::suggestions(&facts, summary.as_ref(), &findings);
    Value::List(
        lines
            .into_iter()
            .map(|s| Context::from([("line", text(s.line)), ("why", text(s.why))]))
            .collect(),
    )
}

fn job_context(job: &JobReport, links: &Links) -> Context {
    Context::from([
        ("job_id", text(clean(&job.job_id, 64))),
        ("user", untrusted(job.user.as_deref(), 64)),
        ("account", untrusted(job.account.as_deref(), 64)),
        ("name", untrusted(job.name.as_deref(), 80)),
        ("state", untrusted(job.state.as_deref(), 40)),
        ("partition", untrusted(job.partition.as_deref(), 40)),
        ("nodes", untrusted(job.nodes.as_deref(), 200)),
        ("cpus", text(job.cpus.map_or("-".into(), |c| c.to_string()))),
        ("run_time", text(run_time(job.run_s()))),
        (
            "end",
            text(
                job.end
                    .map_or("-".into(), |e| e.format("%Y-%m-%d %H:%M UTC").to_string()),
            ),
        ),
        ("cpu_eff", percent(job.cpu_eff)),
        (
            "cpu_eff_source",
            source_label(job.cpu_eff_source.as_deref(), job.shared),
        ),
        // A job killed for memory used all it had: "100 %" would read as a well-sized request.
        (
            "mem_eff",
            if job.state.as_deref() == Some("OUT_OF_MEMORY") {
                text("not measurable: killed at its limit".to_string())
            } else {
                percent(job.mem_eff)
            },
        ),
        (
            "mem_eff_source",
            source_label(job.mem_source.as_deref(), job.shared),
        ),
        ("time_eff", percent(job.time_eff)),
        ("core_hours", hours(job.core_hours)),
        // Empty where the CPU efficiency is unknown: the idle time is unknown too.
        (
            "wasted_core_hours",
            text(
                job.wasted_core_hours
                    .map_or(String::new(), jobsight_base::units::significant),
            ),
        ),
        (
            "energy",
            text(
                crate::energy_text(
                    job.energy_kwh,
                    job.energy_source.as_deref(),
                    job.energy_share,
                )
                .unwrap_or_default(),
            ),
        ),
        (
            "report_url",
            text(link(
                &links.report_url,
                &[("job_id", &job.job_id), ("cluster", &job.cluster)],
            )),
        ),
        (
            "severity",
            text(job.top_severity().map_or("info", Severity::name)),
        ),
        ("findings", findings_context(job)),
        ("suggestions", suggestions_context(job)),
    ])
}

/// The context of a user's digest or critical email.
pub fn digest_context(message: &Planned, links: &Links) -> Context {
    let user = message.user.as_deref().unwrap_or("-");
    let cluster = message.jobs.first().map_or("-", |j| j.cluster.as_str());
    let shown: Vec<Context> = message
        .jobs
        .iter()
        .take(links.max_jobs_per_digest.max(1))
        .map(|j| job_context(j, links))
        .collect();
    let more = message.jobs.len() - shown.len();
    Context::from([
        ("user", text(clean(user, 64))),
        ("cluster", text(clean(cluster, 64))),
        ("period", text(message.period.replace("job-", "job "))),
        (
            "period_name",
            text(match links.period {
                Period::Daily => "day",
                Period::Weekly => "week",
            }),
        ),
        (
            "critical",
            Value::Bool(message.kind == MessageKind::Critical),
        ),
        ("job_count", text(message.jobs.len().to_string())),
        (
            "more_jobs",
            text(if more > 0 {
                more.to_string()
            } else {
                String::new()
            }),
        ),
        (
            "user_url",
            text(link(
                &links.user_url,
                &[("user", user), ("cluster", cluster)],
            )),
        ),
        ("min_days_between", text(links.min_days_between.to_string())),
        ("jobs", Value::List(shown)),
    ])
}

/// A node's jobs, users and kinds of findings.
type NodeSeen<'a> = (BTreeSet<&'a str>, BTreeSet<&'a str>, BTreeSet<&'a str>);

/// The context of the admins' digest or critical email. `window` is every job of the lookback
/// (for broken nodes and top wasters).
pub fn admin_context(
    message: &Planned,
    window: &[JobReport],
    facts: &AdminFacts,
    links: &Links,
    top_wasters: usize,
) -> Context {
    // Nodes named in findings of jobs of more than one user.
    let mut nodes: BTreeMap<&str, NodeSeen> = BTreeMap::new();
    for job in window {
        for item in &job.items {
            if item.severity < Severity::Warning {
                continue;
            }
            if let Some(node) = item.node.as_deref() {
                let entry = nodes.entry(node).or_default();
                entry.0.insert(&job.job_id);
                entry.1.insert(job.user.as_deref().unwrap_or("-"));
                entry.2.insert(&item.kind);
            }
        }
    }
    let broken: Vec<Context> = nodes
        .iter()
        .filter(|(_, (_, users, _))| users.len() > 1)
        .map(|(node, (jobs, users, kinds))| {
            Context::from([
                ("node", text(clean(node, 80))),
                ("jobs", text(jobs.len().to_string())),
                ("users", text(users.len().to_string())),
                (
                    "kinds",
                    text(clean(
                        &kinds.iter().copied().collect::<Vec<_>>().join(", "),
                        300,
                    )),
                ),
            ])
        })
        .collect();
    let mut wasters: BTreeMap<&str, (usize, f64, f64)> = BTreeMap::new();
    for job in window {
        if let (Some(user), Some(wasted)) = (job.user.as_deref(), job.wasted_core_hours) {
            let entry = wasters.entry(user).or_default();
            entry.0 += 1;
            entry.1 += job.core_hours.unwrap_or(0.0);
            entry.2 += wasted;
        }
    }
    let mut wasters: Vec<(&str, (usize, f64, f64))> = wasters.into_iter().collect();
    wasters.sort_by(|a, b| b.1.2.total_cmp(&a.1.2).then(a.0.cmp(b.0)));
    let top: Vec<Context> = wasters
        .iter()
        .filter(|(_, (_, _, wasted))| *wasted > 0.0)
        .take(top_wasters)
        .map(|(user, (jobs, core, wasted))| {
            Context::from([
                ("user", text(clean(user, 64))),
                ("jobs", text(jobs.to_string())),
                ("core_hours", hours(Some(*core))),
                ("wasted_core_hours", hours(Some(*wasted))),
            ])
        })
        .collect();
    let problems: Vec<Context> = facts
        .delivery_problems
        .iter()
        .map(|(key, status, reason)| {
            Context::from([
                ("key", text(clean(key, 200))),
                ("status", text(status.clone())),
                ("reason", text(clean(reason, 300))),
            ])
        })
        .collect();
    let given_up: Vec<Context> = facts
        .given_up
        .iter()
        .take(MAX_GIVEN_UP_SHOWN)
        .map(|(file, reason)| {
            Context::from([
                ("file", text(clean(file, 200))),
                ("reason", text(clean(reason, 300))),
            ])
        })
        .collect();
    let critical_jobs: Vec<Context> = message.jobs.iter().map(|j| job_context(j, links)).collect();
    Context::from([
        ("day", text(message.period.clone())),
        (
            "critical",
            Value::Bool(message.kind == MessageKind::AdminCritical),
        ),
        ("critical_count", text(message.jobs.len().to_string())),
        ("critical_jobs", Value::List(critical_jobs)),
        ("broken_nodes", Value::List(broken)),
        ("top_wasters", Value::List(top)),
        ("lookback_days", text(links.lookback_days.to_string())),
        ("users_notified", text(facts.users_notified.to_string())),
        (
            "insufficient_telemetry",
            text(facts.insufficient_telemetry.to_string()),
        ),
        ("any_delivery_problems", Value::Bool(!problems.is_empty())),
        ("delivery_problems", Value::List(problems)),
        ("any_given_up", Value::Bool(!given_up.is_empty())),
        ("given_up", Value::List(given_up)),
        ("given_up_count", text(facts.given_up.len().to_string())),
    ])
}

/// Given-up records listed one by one in the admins' digest; the count says how many in all.
pub const MAX_GIVEN_UP_SHOWN: usize = 50;

/// The context of a warning about a running job (or of the news that it was cancelled).
pub fn running_context(message: &Planned, warning: &Warning) -> Context {
    let job = &warning.job;
    let item = job.items.first();
    let item_text = |f: fn(&jobsight_notify::plan::Item) -> &str, max| untrusted(item.map(f), max);
    Context::from([
        ("user", untrusted(message.user.as_deref(), 64)),
        ("cluster", untrusted(Some(&job.cluster), 64)),
        ("job_id", text(clean(&job.job_id, 64))),
        ("name", untrusted(job.name.as_deref(), 80)),
        ("partition", untrusted(job.partition.as_deref(), 40)),
        ("nodes", untrusted(job.nodes.as_deref(), 200)),
        ("cpus", text(job.cpus.map_or("-".into(), |c| c.to_string()))),
        ("run_time", text(run_time(job.run_s()))),
        ("stage", text(warning.stage.name())),
        ("condition", untrusted(Some(&warning.rule), 80)),
        (
            "severity",
            text(item.map_or("warning", |i| i.severity.name())),
        ),
        ("title", item_text(|i| &i.title, 200)),
        ("message", item_text(|i| &i.message, 1000)),
        ("fix", item_text(|i| &i.fix, 1000)),
        (
            "tools",
            text(item.map_or(String::new(), |i| clean(&i.tools, 300))),
        ),
        ("held_for", text(run_time(Some(warning.held_s as i64)))),
        (
            "cancel_at",
            text(warning.cancel_at.map_or(String::new(), |t| {
                t.format("%Y-%m-%d %H:%M UTC").to_string()
            })),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A digest holds back task advice for a job with a critical finding, reported in it or in
    /// an earlier email, as the job's page does.
    #[test]
    fn a_critical_finding_sent_earlier_still_holds_back_task_advice() {
        let lines = |critical_finding: bool| -> Vec<String> {
            let mut job = crate::email::sample::sample_oversized_job();
            job.num_nodes = Some(1);
            job.critical_finding = critical_finding;
            let Value::List(items) = suggestions_context(&job) else {
                panic!("a list");
            };
            items
                .iter()
                .filter_map(|item| match item.get("line") {
                    Some(Value::Text(line)) => Some(line.clone()),
                    _ => None,
                })
                .collect()
        };
        assert!(
            lines(false)
                .iter()
                .any(|l| l.starts_with("#SBATCH --ntasks="))
        );
        assert!(
            !lines(true)
                .iter()
                .any(|l| l.starts_with("#SBATCH --ntasks="))
        );
    }

    /// A finding of an earlier run of a requeued job is marked as the page marks it, and its
    /// critical severity holds back no advice for the next run.
    #[test]
    fn a_finding_of_an_earlier_run_is_marked_and_holds_back_no_advice() {
        let mut job = crate::email::sample::sample_oversized_job();
        job.num_nodes = Some(1);
        job.restart_count = Some(1);
        job.run_states = vec![(0, "NODE_FAIL".into()), (1, "COMPLETED".into())];
        job.items[0].run = Some(1);
        let mut lost = job.items[0].clone();
        lost.kind = "node-fail".into();
        lost.severity = Severity::Critical;
        lost.run = Some(0);
        job.items.push(lost);
        let Value::List(findings) = findings_context(&job) else {
            panic!("a list");
        };
        let marks: Vec<Option<&Value>> = findings.iter().map(|f| f.get("earlier_run")).collect();
        assert_eq!(
            marks,
            [
                Some(&Value::Text(String::new())),
                Some(&Value::Text(
                    "About run 1 of 2, which ended NODE_FAIL; Slurm ran the job again.".into()
                ))
            ]
        );
        let Value::List(suggestions) = suggestions_context(&job) else {
            panic!("a list");
        };
        assert!(
            suggestions.iter().any(|s| matches!(
                s.get("line"),
                Some(Value::Text(line)) if line.starts_with("#SBATCH --ntasks=")
            )),
            "{suggestions:?}"
        );
    }

    #[test]
    fn links_encode_their_values() {
        assert_eq!(
            link(
                "https://x/{cluster}/jobs/{job_id}",
                &[("job_id", "1 2/\"3"), ("cluster", "c")]
            ),
            "https://x/c/jobs/1~202~2F~223"
        );
    }
}
