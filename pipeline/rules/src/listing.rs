//! `jobsight rules list`: the rule book as a table for people or JSON for scripts and docs.

use serde_json::json;

use super::book::{Per, RuleBook, Sharing};

/// Every rule, class and characteristic with its source, as JSON.
pub fn json(book: &RuleBook) -> serde_json::Value {
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
pub fn text(book: &RuleBook) -> String {
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
