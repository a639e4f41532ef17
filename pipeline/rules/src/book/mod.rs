//! The rule book: rule, class, metric, characteristic and limit definitions read from TOML files
//! and checked once, so that evaluation never meets an unknown name.
//!
//! A file may hold any of these tables (see `pipeline/rules/book/*.toml` for the built-in set and
//! docs/rules.md for every key):
//! - `[[rule]]`: id, title, group, severity, which jobs it applies to (`min_run_s`, `partitions`,
//!   `nodes` = any/exclusive/shared, `requires` metrics, `needs_telemetry`), `per` = job/node,
//!   derived variables (`[rule.let]`), the condition `when`, the texts `what` and `fix`
//!   (templates), `why` (likely root causes), `tools`, and for node rules the `window`
//!   (`rise:<metric>` or `cliff:<metric>`) the finding concerns;
//! - `[[class]]`: id, name, description, `when` (classes may not read other classes);
//! - `[[metric]]`: a name the conditions use and the warehouse series it is read from, first
//!   found wins, each with a scale (`meminfo.AnonPages` in kB for `mem_used_bytes`, say);
//! - `[[characteristic]]`: one line of the thresholds block: a value (an expression, usually a
//!   metric's mean) marked low below its metric's `caution` limit and high from its `normal` limit;
//! - `[limits.<metric>]`, `[cluster.<name>.limits.<metric>]`,
//!   `[partition.<name>.limits.<metric>]`: ClusterCockpit's per-metric peak / normal / caution /
//!   alert, the most specific one winning key by key.
//!
//! The built-in files are compiled in. A site directory (config `rules.dir`) adds files; a site
//! file with the name of a built-in one replaces it, and a site definition with the id of an
//! earlier one replaces that definition. Errors name the file, the line, and the unknown name.
//!
//! The modules, each reading only those listed before it: `error`, the book's one error;
//! `vocabulary`, the names a condition may read; `definitions`, the checked book's types;
//! `options`, a file as written; `sources`, the built-in and site files; `scope`, which names a
//! condition may read where it stands; and `check`, which parses the files and validates every
//! definition into a [`RuleBook`]. Everything public is re-exported here, where the rest of the
//! crate, the other stages and the application name it.

mod check;
mod definitions;
mod error;
mod options;
mod scope;
mod sources;
mod vocabulary;

pub use definitions::{
    Characteristic, Class, Group, LimitOptions, Metric, Origin, Per, Rule, RuleBook, Sharing,
    TelemetryReads, WindowOf,
};
pub use error::RulesError;
pub use sources::{BUILT_IN, Source, layered_sources, site_sources};
pub use vocabulary::{
    CPU_FIGURES, DERIVED_NODE_STATS, FROM_ACCOUNTING, FROM_NODES, HISTORY_FIELDS, JOB_FIELDS,
    JOB_STATS, LIMIT_LEVELS, MEMORY_FIGURES, Reads, SCALE_FREE, SUMMARY_FIELDS,
    SUMMARY_WITHOUT_TELEMETRY, WORKFLOW_FIELDS, node_stats, read_kind,
};

// Shared with the stages that report findings (notify): a leaf type below the stages.
pub use jobsight_base::severity::Severity;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn source(name: &str, text: &str) -> Source {
        Source {
            label: format!("site/{name}"),
            name: name.into(),
            text: text.into(),
        }
    }

    fn with_built_in(extra: &str) -> Result<RuleBook, RulesError> {
        let mut sources = layered_sources(None).unwrap();
        sources.push(source("extra.toml", extra));
        RuleBook::from_sources(&sources)
    }

    const RULE: &str = r#"
[[rule]]
id = "x"
title = "t"
group = "hung"
severity = "info"
when = "cpu_user.mean < 0.1"
what = "w"
fix = "f"
"#;

    #[test]
    fn the_built_in_book_loads() {
        let book = RuleBook::load(None).unwrap();
        assert!(book.rules.len() >= 25, "{} rules", book.rules.len());
        assert!(book.classes.len() >= 20, "{} classes", book.classes.len());
        for n in 1..=9 {
            assert!(
                book.rules
                    .iter()
                    .any(|r| r.group.method_number() == Some(n)),
                "no rule in group {n}"
            );
        }
    }

    #[test]
    fn an_unknown_variable_names_file_line_and_name() {
        let text = RULE.replace("cpu_user.mean", "summry.cpu_eff");
        let e = with_built_in(&text).unwrap_err().to_string();
        assert!(
            e.starts_with("site/extra.toml line 7: rule x: when:"),
            "{e}"
        );
        assert!(e.contains("`summry.cpu_eff`"), "{e}");
        let e = with_built_in(&RULE.replace("cpu_user.mean", "cpu_usr.mean"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`cpu_usr` is no metric"), "{e}");
        let e = with_built_in(&RULE.replace("cpu_user.mean", "cpu_user.average"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`average` is no statistic"), "{e}");
        let e = with_built_in(&RULE.replace("cpu_user.mean", "node.cpu_user.mean"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("per = \"node\""), "{e}");
        let e = with_built_in(&RULE.replace("what = \"w\"", "what = \"{jobb.cpus}\""))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 8: rule x: what:") && e.contains("jobb.cpus"),
            "{e}"
        );
        let e = with_built_in(&RULE.replace("< 0.1", "<< 0.1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 7") && e.contains("column"), "{e}");
        let e = with_built_in(&RULE.replace("group = \"hung\"", "group = \"hanging\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 5") && e.contains("hanging"), "{e}");
        let e = with_built_in(&(RULE.to_string() + "colour = 1\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("colour"), "{e}");
    }

    #[test]
    fn lets_resolve_in_order_and_cycles_are_refused() {
        let ok = RULE.replace(
            "when = \"cpu_user.mean < 0.1\"",
            "when = \"b > 1\"\nlet.b = \"a * 2\"\nlet.a = \"job.cpus\"",
        );
        let book = with_built_in(&ok).unwrap();
        let rule = book.rules.iter().find(|r| r.id == "x").unwrap();
        assert_eq!(
            rule.lets.iter().map(|l| l.0.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(rule.evidence, ["job.cpus", "a", "b"]);
        let cycle = RULE.replace(
            "when = \"cpu_user.mean < 0.1\"",
            "when = \"b > 1\"\nlet.b = \"a * 2\"\nlet.a = \"b\"",
        );
        assert!(
            with_built_in(&cycle)
                .unwrap_err()
                .to_string()
                .contains("cycle")
        );
    }

    #[test]
    fn site_files_replace_by_name_and_by_id() {
        let built_in = RuleBook::load(None).unwrap();
        let hung = built_in.rules.iter().find(|r| r.id == "hung-job").unwrap();
        assert_eq!(hung.origin.file, "built-in:method.toml");
        // Same id: replaced. `disabled`: removed.
        let over = r#"
[[rule]]
id = "hung-job"
title = "Site hung rule"
group = "hung"
severity = "warning"
when = "cpu_user.max < 0.5"
what = "w"
fix = "f"

[[rule]]
id = "wrong-partition-gpu"
title = "off"
group = "wrong_partition"
severity = "info"
when = "false"
what = "w"
fix = "f"
disabled = true
"#;
        let book = with_built_in(over).unwrap();
        let hung = book.rules.iter().find(|r| r.id == "hung-job").unwrap();
        assert_eq!(hung.title, "Site hung rule");
        assert!(!book.rules.iter().any(|r| r.id == "wrong-partition-gpu"));
        assert_eq!(book.rules.len(), built_in.rules.len() - 1);
        assert_ne!(book.version, built_in.version);
        // Same file name: the built-in file is left out.
        let mut sources = layered_sources(None).unwrap();
        sources.retain(|s| s.name != "production.toml");
        // The running rules name finished-job rules of that file (`at_end`): said by name.
        let e = RuleBook::from_sources(&sources).unwrap_err().to_string();
        assert!(e.contains("at_end: no rule `out-of-memory`"), "{e}");
        sources.retain(|s| s.name != "running.toml");
        let without = RuleBook::from_sources(&sources).unwrap();
        assert!(without.rules.len() < built_in.rules.len());
    }

    #[test]
    fn running_rules_are_judged_only_on_running_jobs() {
        let book = RuleBook::load(None).unwrap();
        let running: Vec<&str> = book
            .rules
            .iter()
            .filter(|r| r.group == Group::Running)
            .map(|r| r.id.as_str())
            .collect();
        assert_eq!(
            running,
            [
                "running-hung",
                "running-gpu-idle",
                "running-memory-near-limit",
                "running-serial",
                "running-idle-node"
            ]
        );
        assert_eq!(crate::running_dwells(&book), [Some(1800), Some(3600)]);
        // A dwell belongs to a running rule.
        let e = with_built_in(&RULE.replace("fix = \"f\"", "fix = \"f\"\ndwell_s = 60"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("group \"running\" only"), "{e}");
        let e = with_built_in(
            &RULE
                .replace("group = \"hung\"", "group = \"running\"")
                .replace("fix = \"f\"", "fix = \"f\"\nat_end = \"hung-jobb\""),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("at_end: no rule `hung-jobb`"), "{e}");
    }

    #[test]
    fn limits_layer_partition_over_cluster_over_default() {
        let book = with_built_in(
            "[cluster.big.limits.cpu_load]\nalert = 0.2\n[partition.debug.limits.cpu_load]\nalert = 0.3\n",
        )
        .unwrap();
        let default = book.limit("cpu_load", "alert", "other", "other").unwrap();
        assert_eq!(book.limit("cpu_load", "alert", "big", "other"), Some(0.2));
        assert_eq!(book.limit("cpu_load", "alert", "big", "debug"), Some(0.3));
        assert_ne!(default, 0.2);
        // Keys not overridden stay.
        assert_eq!(
            book.limit("cpu_load", "peak", "big", "debug"),
            book.limit("cpu_load", "peak", "x", "y")
        );
        let e = with_built_in("[limits.\"no pe\"]\nalert = 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("limits `no pe`"), "{e}");
    }
}
