//! The placeholders of the email templates, documented: what `jobsight check` accepts outside a
//! loop ([`super::templates::EmailTemplates::check`]), what docs/email.md lists, and what a test
//! keeps equal to the contexts [`super::context`] builds.

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
        "cpu_eff_source",
        "where the CPU efficiency came from when it is not the job's own telemetry: `Slurm accounting`, or `node, shared with other jobs`; empty otherwise",
    ),
    (
        "job",
        "mem_eff",
        "memory efficiency (peak used of requested), or `-`",
    ),
    (
        "job",
        "mem_eff_source",
        "where the memory efficiency came from, as `cpu_eff_source`",
    ),
    ("job", "time_eff", "run time used of the time limit, or `-`"),
    ("job", "core_hours", "core-hours allocated"),
    (
        "job",
        "wasted_core_hours",
        "core-hours allocated but idle; empty where the CPU efficiency is unknown",
    ),
    (
        "job",
        "energy",
        "the job's measured energy and where it came from, e.g. `0.521 kWh (Slurm accounting)`; empty where none was measured",
    ),
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
    (
        "finding",
        "earlier_run",
        "for a finding about an earlier run of a requeued job than the one reported, the line that says so (`About run 1 of 2, which ended NODE_FAIL; Slurm ran the job again.`); empty otherwise",
    ),
    (
        "job",
        "suggestions",
        "list: the `#SBATCH` lines of a request that fits what the job used, as its page has them; empty when none is safe to suggest",
    ),
    ("suggestion", "line", "`#SBATCH --time=1:30:00`"),
    ("suggestion", "why", "why, with the job's figures"),
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
        "list: severity, kind, title, message, fix, tools, node, earlier_run as in digests",
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

/// Placeholders of `running.*`, a warning about a job that still runs: (scope, name, meaning).
pub const RUNNING_PLACEHOLDERS: &[(&str, &str, &str)] = &[
    ("message", "user", "the job owner's login name"),
    ("message", "cluster", "the cluster's name"),
    ("message", "job_id", "Slurm job id"),
    (
        "message",
        "name",
        "job name (cleaned of control characters, at most 80 characters)",
    ),
    ("message", "partition", "partition"),
    ("message", "nodes", "node list"),
    ("message", "cpus", "CPUs allocated"),
    (
        "message",
        "run_time",
        "how long the job has run, e.g. `2h 05m`",
    ),
    (
        "message",
        "stage",
        "`warning`, `second-warning` (the cancel policy's) or `cancelled`",
    ),
    (
        "message",
        "condition",
        "the running rule's id, e.g. `running-hung`",
    ),
    ("message", "severity", "`critical`, `warning` or `info`"),
    ("message", "title", "the rule's title"),
    (
        "message",
        "message",
        "what was seen, with the job's numbers",
    ),
    ("message", "fix", "what to do"),
    (
        "message",
        "tools",
        "tools that help, comma-separated; may be empty",
    ),
    (
        "message",
        "held_for",
        "how long the condition has held, e.g. `1h 00m`",
    ),
    (
        "message",
        "cancel_at",
        "when the site's cancel policy cancels the job if nothing changes (UTC); empty when it will not",
    ),
];

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::email::sample::{sample_admin, sample_digest, sample_running};
    use crate::email::values::{Context, Value};

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
            (
                RUNNING_PLACEHOLDERS,
                sample_running(jobsight_notify::running::Stage::Warning),
            ),
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
                    "earlier_run",
                    "cpus",
                    "partition",
                    "end",
                    "cpu_eff",
                    "cpu_eff_source",
                    "mem_eff",
                    "mem_eff_source",
                    "time_eff",
                    "core_hours",
                    "wasted_core_hours",
                    "energy",
                    "suggestions",
                ]);
            }
            assert_eq!(used, documented);
        }
    }
}
