//! What a person reads of the rules stage (`jobsight_rules`): the rule book of `jobsight rules
//! list` as aligned text ([`render_book`]) or as one JSON document for scripts and docs
//! ([`book_json`]), and `jobsight rules backtest`'s comparison of two books ([`render_backtest`]).
//! The book and the backtest's counts are the stage's; only their turning into text is here.

use serde_json::json;

use jobsight_rules::classify::backtest::Backtest;
use jobsight_rules::{Per, RuleBook, Sharing};

/// Every rule, class and characteristic with its source, as JSON.
pub fn book_json(book: &RuleBook) -> serde_json::Value {
    let rules: Vec<serde_json::Value> = book
        .rules
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "title": r.title,
                "group": r.group.name(),
                "method_group": r.group.method_number(),
                "severity": r.severity.name(),
                "per": match r.per { Per::Job => "job", Per::Node => "node" },
                "min_run_s": r.min_run_s,
                "partitions": r.partitions,
                "nodes": match r.nodes { Sharing::Any => "any", Sharing::Exclusive => "exclusive", Sharing::Shared => "shared" },
                "requires": r.requires,
                "reads": r.reads,
                "needs_telemetry": r.needs_telemetry,
                "let": r.lets.iter().map(|(n, _)| n).collect::<Vec<_>>(),
                "when": r.when_text,
                "what": r.what_text,
                "why": r.why,
                "fix": r.fix_text,
                "tools": r.tools,
                "source": format!("{}:{}", r.origin.file, r.origin.line),
            })
        })
        .collect();
    let classes: Vec<serde_json::Value> = book
        .classes
        .iter()
        .map(|c| {
            json!({
                "id": c.id,
                "name": c.name,
                "description": c.description,
                "when": c.when_text,
                "needs_telemetry": c.needs_telemetry,
                "source": format!("{}:{}", c.origin.file, c.origin.line),
            })
        })
        .collect();
    let characteristics: Vec<serde_json::Value> = book
        .characteristics
        .iter()
        .map(|c| json!({"name": c.name, "title": c.title, "limits": c.limits, "value": c.value_text}))
        .collect();
    json!({
        "version": book.version,
        "files": book.files,
        "rules": rules,
        "classes": classes,
        "characteristics": characteristics,
    })
}

/// The rule book as aligned text: rules by group, then classes and the thresholds block.
pub fn render_book(book: &RuleBook) -> String {
    let mut out = format!(
        "rule set {} from {}\n\n{} rules\n",
        book.version,
        book.files.join(", "),
        book.rules.len()
    );
    out += &format!(
        "{:<26} {:<18} {:<9} {:<5} {}\n",
        "id", "group", "severity", "per", "title"
    );
    let mut rules: Vec<_> = book.rules.iter().collect();
    rules.sort_by(|a, b| a.group.cmp(&b.group).then(a.id.cmp(&b.id)));
    for r in rules {
        let group = match r.group.method_number() {
            Some(n) => format!("{n} {}", r.group.name()),
            None => format!("- {}", r.group.name()),
        };
        let per = match r.per {
            Per::Job => "job",
            Per::Node => "node",
        };
        out += &format!(
            "{:<26} {:<18} {:<9} {:<5} {}\n",
            r.id,
            group,
            r.severity.name(),
            per,
            r.title
        );
    }
    out += &format!("\n{} classes\n", book.classes.len());
    for c in &book.classes {
        out += &format!("{:<28} {}\n", c.id, c.name);
    }
    out += &format!(
        "\nthresholds block: {} characteristics\n",
        book.characteristics.len()
    );
    for c in &book.characteristics {
        out += &format!("{:<22} {:<36} limits {}\n", c.name, c.title, c.limits);
    }
    out
}

/// The report for people: per rule counts, then the changed jobs (the first `show` of each side).
pub fn render_backtest(b: &Backtest, show: usize) -> String {
    let mut out = format!(
        "backtest over {} day(s), {} job(s): current rule set {} vs candidate {}\n\n",
        b.days, b.jobs, b.current_version, b.candidate_version
    );
    out += &format!(
        "{:<28} {:>8} {:>10} {:>13} {:>15}\n",
        "rule", "current", "candidate", "only current", "only candidate"
    );
    for r in &b.rules {
        out += &format!(
            "{:<28} {:>8} {:>10} {:>13} {:>15}\n",
            r.rule, r.current, r.candidate, r.only_current, r.only_candidate
        );
    }
    for (title, changes, users) in [
        (
            "flagged only by the candidate",
            &b.only_candidate,
            &b.users_only_candidate,
        ),
        (
            "flagged only by the current set",
            &b.only_current,
            &b.users_only_current,
        ),
    ] {
        out += &format!(
            "\n{} finding(s) {title}, {} user(s): {}\n",
            changes.len(),
            users.len(),
            users.iter().cloned().collect::<Vec<_>>().join(", ")
        );
        for c in changes.iter().take(show) {
            out += &format!(
                "  {} job {} user {} rule {}{}\n",
                c.day,
                c.job_id,
                c.user,
                c.rule,
                c.node
                    .as_ref()
                    .map(|n| format!(" node {n}"))
                    .unwrap_or_default()
            );
        }
        if changes.len() > show {
            out += &format!("  ... and {} more\n", changes.len() - show);
        }
    }
    out
}
