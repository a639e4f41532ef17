//! Rendering: the template contexts of users' and admins' messages, the six template files, and
//! their documentation.
//!
//! The built-in templates live in `pipeline/notify/templates/` and are compiled in; a site sets
//! `notify.templates` to a directory with its own six files (`jobsight notify --write-templates
//! DIR` starts one from the built-in ones). Every placeholder is listed in [`DIGEST_PLACEHOLDERS`]
//! and [`ADMIN_PLACEHOLDERS`] (and in the README); a unit test keeps those lists and the contexts
//! built here equal, and [`Templates::check`] renders every template against a sample with all of
//! them, so an unknown name is an error at `jobsight check`.
//!
//! Every value that comes from a user or another system (job names, states, node lists, rule
//! texts) goes through [`clean`] here: no control characters, bounded length.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use super::plan::{JobReport, MessageKind, Period, Planned};
use super::template::{Context, TemplateError, Value, clean, to_jinja};
use jobsight_base::severity::Severity;

/// The six template files: name and built-in text. How a file's values are escaped follows
/// from its name ([`jobsight_base::templates`]): `.html` for HTML, `.subject` as one header line.
pub const FILES: [(&str, &str); 6] = [
    (
        "digest.subject",
        include_str!("../templates/digest.subject"),
    ),
    ("digest.txt", include_str!("../templates/digest.txt")),
    ("digest.html", include_str!("../templates/digest.html")),
    ("admin.subject", include_str!("../templates/admin.subject")),
    ("admin.txt", include_str!("../templates/admin.txt")),
    ("admin.html", include_str!("../templates/admin.html")),
];

/// Placeholders of `digest.*`: (scope, name, meaning).
pub const DIGEST_PLACEHOLDERS: &[(&str, &str, &str)] = &[
    ("message", "user", "the job owner's login name"),
    ("message", "cluster", "the cluster's name"),
    (
        "message",
        "period",
        "the digest's period: `2026-11-20` or `2026-W47`; `job 123` for a critical email",
    ),
    ("message", "period_name", "`day` or `week`"),
    (
        "message",
        "critical",
        "true in an email about one job's critical finding",
    ),
    (
        "message",
        "job_count",
        "jobs with findings in this message (shown or not)",
    ),
    (
        "message",
        "more_jobs",
        "jobs beyond `notify.max_jobs_per_digest`, not shown; empty when none",
    ),
    (
        "message",
        "user_url",
        "`notify.user_url` for this user: all their jobs",
    ),
    ("message", "min_days_between", "`notify.min_days_between`"),
    (
        "message",
        "jobs",
        "list: the jobs shown, most important first",
    ),
    ("job", "job_id", "Slurm job id"),
    (
        "job",
        "name",
        "job name (cleaned of control characters, at most 80 characters)",
    ),
    (
        "job",
        "state",
        "final state, e.g. COMPLETED, TIMEOUT, OUT_OF_MEMORY",
    ),
    ("job", "partition", "partition"),
    ("job", "account", "Slurm account"),
    ("job", "nodes", "node list"),
    ("job", "cpus", "CPUs allocated"),
    ("job", "run_time", "run time, e.g. `2h 05m`"),
    ("job", "end", "end time, UTC"),
    ("job", "cpu_eff", "CPU efficiency, e.g. `12 %`, or `-`"),
    (
        "job",
        "mem_eff",
        "memory efficiency (peak used of requested), or `-`",
    ),
    ("job", "time_eff", "run time used of the time limit, or `-`"),
    ("job", "core_hours", "core-hours allocated"),
    ("job", "wasted_core_hours", "core-hours allocated but idle"),
    ("job", "report_url", "`notify.report_url` for this job"),
    (
        "job",
        "severity",
        "the job's most severe finding: critical, warning, info",
    ),
    (
        "job",
        "findings",
        "list: the job's findings reported now, most severe first",
    ),
    ("finding", "severity", "critical, warning or info"),
    (
        "finding",
        "kind",
        "rule id, or `diagnosis:<type>` for a model's verdict",
    ),
    ("finding", "title", "one-line title"),
    (
        "finding",
        "message",
        "what was seen, with the job's numbers",
    ),
    ("finding", "fix", "what to do"),
    ("finding", "tools", "tools that help, empty when none"),
    (
        "finding",
        "node",
        "the node, for per-node findings; empty otherwise",
    ),
];

/// Placeholders of `admin.*`: (scope, name, meaning).
pub const ADMIN_PLACEHOLDERS: &[(&str, &str, &str)] = &[
    ("message", "day", "the report's day (UTC)"),
    (
        "message",
        "critical",
        "true in an immediate email about one job",
    ),
    (
        "message",
        "critical_count",
        "jobs with critical findings in this message",
    ),
    (
        "message",
        "critical_jobs",
        "list: those jobs, most important first",
    ),
    (
        "message",
        "broken_nodes",
        "list: nodes named in findings of more than one user's jobs",
    ),
    (
        "message",
        "top_wasters",
        "list: users with the most idle core-hours over the lookback",
    ),
    ("message", "lookback_days", "`notify.lookback_days`"),
    (
        "message",
        "users_notified",
        "users who get a message in this run",
    ),
    (
        "message",
        "insufficient_telemetry",
        "jobs left out of users' digests for lack of telemetry",
    ),
    (
        "message",
        "delivery_problems",
        "list: messages in doubt or failed",
    ),
    (
        "message",
        "any_delivery_problems",
        "true when there are delivery problems",
    ),
    (
        "message",
        "any_given_up",
        "true when the pipeline gave up on jobs",
    ),
    (
        "message",
        "given_up",
        "list: jobs the pipeline gave up on (spool failed/), with file and reason",
    ),
    (
        "message",
        "given_up_count",
        "how many jobs the pipeline gave up on",
    ),
    ("critical job", "job_id", "as in digests"),
    ("critical job", "user", "job owner"),
    ("critical job", "account", "Slurm account"),
    ("critical job", "name", "as in digests"),
    ("critical job", "state", "as in digests"),
    ("critical job", "nodes", "as in digests"),
    ("critical job", "run_time", "as in digests"),
    ("critical job", "report_url", "as in digests"),
    (
        "critical job",
        "findings",
        "list: severity, kind, title, message, fix, tools, node as in digests",
    ),
    ("broken node", "node", "node name"),
    ("broken node", "jobs", "jobs with findings on it"),
    ("broken node", "users", "distinct users of those jobs"),
    (
        "broken node",
        "kinds",
        "the kinds of findings, comma-separated",
    ),
    ("top waster", "user", "login name"),
    ("top waster", "jobs", "jobs"),
    ("top waster", "core_hours", "core-hours allocated"),
    ("top waster", "wasted_core_hours", "core-hours idle"),
    ("delivery problem", "key", "the message's key"),
    ("delivery problem", "status", "`in-doubt` or `failed`"),
    ("delivery problem", "reason", "what happened"),
    (
        "given-up job",
        "file",
        "the record's name in the spool's failed/",
    ),
    (
        "given-up job",
        "reason",
        "why it was given up (its `.reason` file)",
    ),
];

/// The loaded templates.
#[derive(Debug)]
pub struct Templates {
    set: jobsight_base::templates::Templates,
}

/// What a message's text parts are made from.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// Site settings the texts need.
#[derive(Debug, Clone)]
pub struct Links {
    /// With `{job_id}` and `{cluster}`.
    pub report_url: String,
    /// With `{user}` and `{cluster}`.
    pub user_url: String,
    pub max_jobs_per_digest: usize,
    pub min_days_between: i64,
    pub lookback_days: i64,
    pub period: Period,
}

impl Templates {
    /// The built-in templates, each replaced by the file of the same name in `dir` if it has one.
    pub fn load(dir: Option<&Path>) -> Result<Templates, TemplateError> {
        Ok(Templates {
            set: jobsight_base::templates::Templates::load(&FILES, dir)?,
        })
    }

    /// Checks every template: the names it uses outside a loop are documented placeholders of
    /// its message (found in any branch, taken or not), and it renders against samples with
    /// every placeholder set, in both shapes (a digest and a critical email), so a misspelt
    /// name inside a loop is found too.
    pub fn check(&self) -> Result<(), TemplateError> {
        for (name, _) in FILES {
            let documented = if name.starts_with("digest") {
                DIGEST_PLACEHOLDERS
            } else {
                ADMIN_PLACEHOLDERS
            };
            let known: Vec<&str> = documented
                .iter()
                .filter(|(scope, _, _)| *scope == "message")
                .map(|(_, n, _)| *n)
                .collect();
            self.set.check_names(name, &known)?;
        }
        for critical in [false, true] {
            self.render_digest(&sample_digest(critical))?;
            self.render_admin(&sample_admin(critical))?;
        }
        Ok(())
    }

    fn render(&self, prefix: &str, context: &Context) -> Result<Rendered, TemplateError> {
        let value = to_jinja(context);
        let get = |suffix: &str| self.set.render(&format!("{prefix}.{suffix}"), &value);
        Ok(Rendered {
            subject: get("subject")?,
            text: get("txt")?,
            html: get("html")?,
        })
    }

    pub fn render_digest(&self, context: &Context) -> Result<Rendered, TemplateError> {
        self.render("digest", context)
    }

    pub fn render_admin(&self, context: &Context) -> Result<Rendered, TemplateError> {
        self.render("admin", context)
    }
}

/// Writes the built-in templates into `dir` (created), refusing to overwrite a file.
pub fn write_builtin(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (name, text) in FILES {
        let path = dir.join(name);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        std::io::Write::write_all(&mut file, text.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

fn text(value: impl Into<String>) -> Value {
    Value::Text(value.into())
}

/// A user-controlled value made safe.
fn untrusted(value: Option<&str>, max: usize) -> Value {
    Value::Text(value.map_or("-".to_string(), |v| clean(v, max)))
}

fn percent(value: Option<f64>) -> Value {
    text(
        value
            .filter(|v| v.is_finite())
            .map_or("-".into(), |v| format!("{:.0} %", v * 100.0)),
    )
}

fn hours(value: Option<f64>) -> Value {
    text(
        value
            .filter(|v| v.is_finite())
            .map_or("-".into(), |v| format!("{v:.1}")),
    )
}

fn run_time(seconds: Option<i64>) -> String {
    match seconds {
        Some(s) if s >= 0 => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
        _ => "-".into(),
    }
}

/// A link from a URL template: placeholders replaced by the values as the report pages name
/// their files ([`jobsight_base::templates::slug`]: letters, digits, `-`, `_`, `.`, and `~XX` for any
/// other byte), which needs no further encoding in a URL and finds the page.
pub fn link(template: &str, pairs: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (name, value) in pairs {
        out = out.replace(
            &format!("{{{name}}}"),
            &jobsight_base::templates::slug(value),
        );
    }
    out
}

fn findings_context(job: &JobReport) -> Value {
    Value::List(
        job.items
            .iter()
            .map(|item| {
                Context::from([
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
        ("mem_eff", percent(job.mem_eff)),
        ("time_eff", percent(job.time_eff)),
        ("core_hours", hours(job.core_hours)),
        ("wasted_core_hours", hours(job.wasted_core_hours)),
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

/// What the admins' digest says besides the critical jobs.
#[derive(Debug, Clone, Default)]
pub struct AdminFacts {
    pub users_notified: usize,
    pub insufficient_telemetry: usize,
    /// (key, status, reason).
    pub delivery_problems: Vec<(String, String, String)>,
    /// Jobs the pipeline gave up on (the spool's failed/ records): (file, reason).
    pub given_up: Vec<(String, String)>,
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

/// A job with every field and finding filled, for samples and tests.
pub fn sample_job() -> JobReport {
    use super::plan::Item;
    let end = DateTime::<Utc>::from_timestamp(1_763_640_000, 0).unwrap_or_default();
    JobReport {
        job_id: "4242".into(),
        cluster: "cluster".into(),
        user: Some("alice".into()),
        account: Some("physics".into()),
        name: Some("lammps-run".into()),
        state: Some("TIMEOUT".into()),
        partition: Some("cpu".into()),
        nodes: Some("node[01-02]".into()),
        cpus: Some(64),
        start: Some(end - chrono::Duration::hours(6)),
        end: Some(end),
        judgeable: Some(true),
        not_judgeable_reason: None,
        cpu_eff: Some(0.02),
        mem_eff: Some(0.1),
        time_eff: Some(1.0),
        core_hours: Some(384.0),
        wasted_core_hours: Some(376.3),
        items: vec![Item {
            kind: "hung".into(),
            severity: Severity::Critical,
            title: "The job hung".into(),
            message: "no CPU activity for 5 h on node01".into(),
            fix: "attach a debugger to a hung rank".into(),
            tools: "gdb, py-spy".into(),
            node: Some("node01".into()),
        }],
    }
}

fn sample_links() -> Links {
    Links {
        report_url: "https://jobsight.example.org/{cluster}/jobs/{job_id}.html".into(),
        user_url: "https://jobsight.example.org/{cluster}/users/{user}.html".into(),
        max_jobs_per_digest: 1,
        min_days_between: 7,
        lookback_days: 7,
        period: Period::Daily,
    }
}

/// A digest (or critical email) context with every placeholder set, one job not shown.
pub fn sample_digest(critical: bool) -> Context {
    let message = Planned {
        key: "digest.alice.2026-11-20".into(),
        kind: if critical {
            MessageKind::Critical
        } else {
            MessageKind::Digest
        },
        user: Some("alice".into()),
        period: "2026-11-20".into(),
        jobs: vec![sample_job(), sample_job()],
    };
    digest_context(&message, &sample_links())
}

/// An admin digest (or critical email) context with every placeholder set.
pub fn sample_admin(critical: bool) -> Context {
    let mut other = sample_job();
    other.user = Some("bob".into());
    other.job_id = "4243".into();
    let message = Planned {
        key: "admin-digest.2026-11-20".into(),
        kind: if critical {
            MessageKind::AdminCritical
        } else {
            MessageKind::AdminDigest
        },
        user: None,
        period: "2026-11-20".into(),
        jobs: vec![sample_job()],
    };
    let facts = AdminFacts {
        users_notified: 2,
        insufficient_telemetry: 1,
        delivery_problems: vec![(
            "digest.bob.2026-11-19".into(),
            "in-doubt".into(),
            "x".into(),
        )],
        given_up: vec![(
            "1795322415.ci.1.vm.json".into(),
            "job 1: sacct has no record of the job".into(),
        )],
    };
    admin_context(&message, &[sample_job(), other], &facts, &sample_links(), 5)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name in a context tree, by scope depth.
    fn names(context: &Context, into: &mut BTreeSet<&'static str>) {
        for (name, value) in context {
            into.insert(name);
            if let Value::List(items) = value {
                for item in items {
                    names(item, into);
                }
            }
        }
    }

    #[test]
    fn documented_placeholders_are_exactly_the_context() {
        for (docs, sample) in [
            (DIGEST_PLACEHOLDERS, sample_digest(false)),
            (ADMIN_PLACEHOLDERS, sample_admin(false)),
        ] {
            let mut used = BTreeSet::new();
            names(&sample, &mut used);
            let mut documented: BTreeSet<&str> = docs.iter().map(|(_, n, _)| *n).collect();
            if docs == ADMIN_PLACEHOLDERS {
                // Findings of critical jobs are documented once, as in digests.
                documented.extend([
                    "severity",
                    "kind",
                    "title",
                    "message",
                    "fix",
                    "tools",
                    "node",
                    "cpus",
                    "partition",
                    "end",
                    "cpu_eff",
                    "mem_eff",
                    "time_eff",
                    "core_hours",
                    "wasted_core_hours",
                ]);
            }
            assert_eq!(used, documented);
        }
    }

    #[test]
    fn builtin_templates_pass_the_check() {
        Templates::load(None).unwrap().check().unwrap();
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

    #[test]
    fn a_broken_site_template_is_reported_with_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        write_builtin(dir.path()).unwrap();
        // In a branch the samples never show: still found.
        std::fs::write(
            dir.path().join("digest.txt"),
            "Hello {{ user }}\n{% if not jobs %}{{ jobid }}{% endif %}",
        )
        .unwrap();
        let err = Templates::load(Some(dir.path()))
            .unwrap()
            .check()
            .unwrap_err();
        assert!(err.path.ends_with("digest.txt"));
        assert_eq!(err.line, Some(2));
        assert!(err.reason.contains("`jobid`"), "{err}");
        // A file that is no template's is refused: a typo would otherwise be ignored.
        std::fs::write(dir.path().join("admin.htm"), "x").unwrap();
        let err = Templates::load(Some(dir.path())).unwrap_err();
        assert!(err.to_string().contains("admin.htm"), "{err}");
    }
}
