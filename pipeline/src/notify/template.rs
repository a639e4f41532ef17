//! The email templates: plain files a site can change, with a small, strict placeholder language.
//!
//! `{{name}}` inserts a value; `{{#name}} ... {{/name}}` repeats its body for every item of a list
//! (or shows it once when a value is present and not empty or `false`); `{{^name}} ... {{/name}}`
//! shows its body when the value is empty, `false` or an empty list. Inside a list, names are
//! looked up in the item first, then outside it. That is all: no code runs in a template.
//!
//! A template is parsed and then rendered against a sample context with every documented
//! placeholder ([`super::render::sample_digest`], [`super::render::sample_admin`]); a name that is
//! not documented, a section left open or closed twice is an error with the file and line.
//! `jobsight check` does exactly that, so a broken template fails there and not at 2 a.m.
//!
//! Escaping is decided by the template's kind, not by its author: in HTML templates every value is
//! HTML-escaped; in subjects every control character (CR and LF above all) becomes a space, so a
//! job name cannot add a header. Values from users are also cleaned when the context is built.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How rendered values are escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// Plain-text body: values go in as they are (already cleaned of control characters).
    Text,
    /// HTML body: `& < > " '` escaped.
    Html,
    /// A header line: control characters become spaces, the result is one line.
    Header,
}

/// A value a placeholder can take.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Bool(bool),
    List(Vec<Context>),
}

/// Names and their values at one level.
pub type Context = BTreeMap<&'static str, Value>;

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("template {path}, line {line}: {reason}")]
pub struct TemplateError {
    pub path: PathBuf,
    pub line: usize,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Literal(String),
    Value {
        name: String,
        line: usize,
    },
    Section {
        name: String,
        inverted: bool,
        body: Vec<Node>,
        line: usize,
    },
}

/// A parsed template.
#[derive(Debug, Clone)]
pub struct Template {
    path: PathBuf,
    nodes: Vec<Node>,
    escape: Escape,
}

impl Template {
    /// Parses `text`, read from `path` (named in errors).
    pub fn parse(path: &Path, text: &str, escape: Escape) -> Result<Template, TemplateError> {
        let error = |line: usize, reason: String| TemplateError {
            path: path.to_path_buf(),
            line,
            reason,
        };
        // A stack of open sections: (name, inverted, line, nodes so far).
        let mut stack: Vec<(String, bool, usize, Vec<Node>)> =
            vec![(String::new(), false, 0, Vec::new())];
        let mut rest = text;
        let mut line = 1;
        while let Some(open) = rest.find("{{") {
            let (literal, after) = rest.split_at(open);
            push_literal(&mut stack, literal);
            line += literal.matches('\n').count();
            let Some(close) = after.find("}}") else {
                return Err(error(line, "`{{` without a closing `}}`".into()));
            };
            let tag = after[2..close].trim();
            rest = &after[close + 2..];
            let valid = |name: &str| {
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            };
            if let Some(name) = tag.strip_prefix('#').or_else(|| tag.strip_prefix('^')) {
                let name = name.trim();
                if !valid(name) {
                    return Err(error(line, format!("bad section name `{name}`")));
                }
                stack.push((name.to_string(), tag.starts_with('^'), line, Vec::new()));
            } else if let Some(name) = tag.strip_prefix('/') {
                let name = name.trim();
                // The root is never closed: a close tag with only the root open is stray.
                let (open_name, inverted, open_line, body) = match stack.len() {
                    0 | 1 => {
                        return Err(error(
                            line,
                            format!("`{{{{/{name}}}}}` closes a section that is not open"),
                        ));
                    }
                    _ => stack.pop().unwrap_or_default(),
                };
                if open_name != name {
                    return Err(error(
                        line,
                        format!(
                            "`{{{{/{name}}}}}` closes `{open_name}`, opened on line {open_line}"
                        ),
                    ));
                }
                if let Some(parent) = stack.last_mut() {
                    parent.3.push(Node::Section {
                        name: open_name,
                        inverted,
                        body,
                        line: open_line,
                    });
                }
            } else {
                if !valid(tag) {
                    return Err(error(line, format!("bad placeholder `{{{{{tag}}}}}`")));
                }
                if let Some(top) = stack.last_mut() {
                    top.3.push(Node::Value {
                        name: tag.to_string(),
                        line,
                    });
                }
            }
            line += after[..close].matches('\n').count();
        }
        push_literal(&mut stack, rest);
        if stack.len() > 1 {
            let (name, _, open_line, _) = &stack[stack.len() - 1];
            return Err(error(
                *open_line,
                format!("section `{name}` is never closed"),
            ));
        }
        let nodes = stack.pop().map(|top| top.3).unwrap_or_default();
        Ok(Template {
            path: path.to_path_buf(),
            nodes,
            escape,
        })
    }

    /// Renders the template; a placeholder with no value at any level is an error.
    pub fn render(&self, context: &Context) -> Result<String, TemplateError> {
        let mut out = String::new();
        let mut scopes = vec![context];
        self.render_nodes(&self.nodes, &mut scopes, &mut out)?;
        Ok(match self.escape {
            Escape::Header => one_line(&out),
            _ => out,
        })
    }

    /// Checks every placeholder of every branch (shown or not) against `sample`, whose lists must
    /// each hold at least one item: the names inside a list section are looked up in its first
    /// item, then outside.
    pub fn check(&self, sample: &Context) -> Result<(), TemplateError> {
        let mut scopes = vec![sample];
        self.check_nodes(&self.nodes, &mut scopes)
    }

    fn check_nodes(&self, nodes: &[Node], scopes: &mut Vec<&Context>) -> Result<(), TemplateError> {
        for node in nodes {
            match node {
                Node::Literal(_) => {}
                Node::Value { name, line } => {
                    self.lookup(scopes, name, *line)?;
                }
                Node::Section {
                    name, body, line, ..
                } => match self.lookup(scopes, name, *line)? {
                    Value::List(items) if !items.is_empty() => {
                        scopes.push(&items[0]);
                        let result = self.check_nodes(body, scopes);
                        scopes.pop();
                        result?;
                    }
                    _ => self.check_nodes(body, scopes)?,
                },
            }
        }
        Ok(())
    }

    fn render_nodes(
        &self,
        nodes: &[Node],
        scopes: &mut Vec<&Context>,
        out: &mut String,
    ) -> Result<(), TemplateError> {
        for node in nodes {
            match node {
                Node::Literal(text) => out.push_str(text),
                Node::Value { name, line } => match self.lookup(scopes, name, *line)? {
                    Value::Text(text) => out.push_str(&self.escaped(text)),
                    Value::Bool(b) => out.push_str(if *b { "yes" } else { "no" }),
                    Value::List(items) => out.push_str(&items.len().to_string()),
                },
                Node::Section {
                    name,
                    inverted,
                    body,
                    line,
                } => {
                    let value = self.lookup(scopes, name, *line)?;
                    let present = match value {
                        Value::Text(t) => !t.is_empty(),
                        Value::Bool(b) => *b,
                        Value::List(items) => !items.is_empty(),
                    };
                    if *inverted {
                        if !present {
                            self.render_nodes(body, scopes, out)?;
                        }
                    } else if let Value::List(items) = value {
                        for item in items {
                            scopes.push(item);
                            let result = self.render_nodes(body, scopes, out);
                            scopes.pop();
                            result?;
                        }
                    } else if present {
                        self.render_nodes(body, scopes, out)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn lookup<'a>(
        &self,
        scopes: &[&'a Context],
        name: &str,
        line: usize,
    ) -> Result<&'a Value, TemplateError> {
        scopes
            .iter()
            .rev()
            .find_map(|scope| scope.get(name))
            .ok_or_else(|| TemplateError {
                path: self.path.clone(),
                line,
                reason: format!(
                    "unknown placeholder `{name}` here; known: {}",
                    scopes
                        .iter()
                        .flat_map(|s| s.keys())
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
    }

    fn escaped(&self, text: &str) -> String {
        match self.escape {
            Escape::Text | Escape::Header => text.to_string(),
            Escape::Html => html_escape(text),
        }
    }
}

fn push_literal(stack: &mut [(String, bool, usize, Vec<Node>)], literal: &str) {
    if literal.is_empty() {
        return;
    }
    if let Some(top) = stack.last_mut() {
        top.3.push(Node::Literal(literal.to_string()));
    }
}

/// `& < > " '` as HTML entities.
pub fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One line: every control character (CR, LF, tab, ESC, ...) becomes a space, runs of spaces
/// collapse, and the ends are trimmed.
pub fn one_line(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A value from a user or another system, made safe for any template: control characters other
/// than none at all (job names are one line) become `?`, and it is cut to `max` characters.
pub fn clean(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .take(max)
        .collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, escape: Escape) -> Result<Template, TemplateError> {
        Template::parse(Path::new("t.txt"), text, escape)
    }

    fn context() -> Context {
        let job = |id: &str, name: &str| {
            Context::from([
                ("job_id", Value::Text(id.into())),
                ("name", Value::Text(name.into())),
            ])
        };
        Context::from([
            ("user", Value::Text("alice".into())),
            ("critical", Value::Bool(false)),
            (
                "jobs",
                Value::List(vec![job("1", "a<b>&\"c\""), job("2", "plain")]),
            ),
        ])
    }

    #[test]
    fn renders_values_sections_and_inverted_sections() {
        let t = parse(
            "Hi {{user}}{{#critical}} URGENT{{/critical}}{{^critical}}, no rush{{/critical}}:\n{{#jobs}}- {{job_id}} {{name}} ({{user}})\n{{/jobs}}{{jobs}} jobs",
            Escape::Text,
        )
        .unwrap();
        assert_eq!(
            t.render(&context()).unwrap(),
            "Hi alice, no rush:\n- 1 a<b>&\"c\" (alice)\n- 2 plain (alice)\n2 jobs"
        );
    }

    #[test]
    fn html_templates_escape_every_value() {
        let t = parse("{{#jobs}}<td>{{name}}</td>{{/jobs}}", Escape::Html).unwrap();
        assert_eq!(
            t.render(&context()).unwrap(),
            "<td>a&lt;b&gt;&amp;&quot;c&quot;</td><td>plain</td>"
        );
    }

    #[test]
    fn header_templates_are_one_line() {
        let mut c = context();
        c.insert("user", Value::Text("x\r\nBcc: evil@example.org".into()));
        let t = parse("jobsight: {{user}}\n", Escape::Header).unwrap();
        assert_eq!(t.render(&c).unwrap(), "jobsight: x Bcc: evil@example.org");
    }

    #[test]
    fn errors_name_the_line() {
        let err = |text: &str| parse(text, Escape::Text).unwrap_err();
        assert_eq!(err("a\n{{#jobs}}\nb").line, 2);
        assert!(err("a\n{{#jobs}}\nb").reason.contains("never closed"));
        assert!(err("{{/jobs}}").reason.contains("not open"));
        assert!(err("{{#jobs}}{{/user}}").reason.contains("closes `jobs`"));
        assert!(err("x\n\n{{user").reason.contains("without a closing"));
        assert_eq!(err("x\n\n{{user").line, 3);
        assert!(err("{{us er}}").reason.contains("bad placeholder"));
        let unknown = parse("\n{{#jobs}}{{nmae}}{{/jobs}}", Escape::Text)
            .unwrap()
            .render(&context())
            .unwrap_err();
        assert_eq!(unknown.line, 2);
        assert!(unknown.reason.contains("unknown placeholder `nmae`"));
        assert!(unknown.reason.contains("job_id"));
    }

    #[test]
    fn clean_replaces_control_characters_and_cuts() {
        assert_eq!(clean("run\nSubject: forged", 100), "run?Subject: forged");
        assert_eq!(clean("\u{1b}[2J", 100), "?[2J");
        assert_eq!(clean("abcdef", 3), "abc…");
    }
}
