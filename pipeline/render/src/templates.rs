//! Templates for everything a person reads, emails and report pages alike: one engine
//! (minijinja, the Jinja syntax of the Flask applications this field grew from), one set of
//! escaping rules, one way for a site to override a file. The render crate's, since only it renders
//! what a person reads; the text helpers it escapes with are the base's ([`jobsight_base::text`]).
//!
//! A template set is the built-in files compiled into the binary, each of which a site may
//! replace by a file of the same name in its own directory (a file there that matches no
//! built-in name is an error: a typo would otherwise be ignored silently).
//!
//! Escaping is decided by the file's name, not by its author: `*.html` files escape every value for
//! HTML (minijinja's auto-escaping: `& < > " ' /`); `*.subject` files are email headers, in which
//! every control character of a value (CR and LF above all) becomes a space, and the whole result
//! is folded into one line, so a job name cannot add a header; other files (`*.txt`) put values in
//! as they are, already cleaned of control characters by [`clean`](jobsight_base::text::clean).
//! Undefined names are errors (strict mode), so a template that names a value nobody provides fails
//! when it is checked against a sample, with its file and line, and not at 2 a.m.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use jobsight_base::templates::TemplateError;
use jobsight_base::text::{html_escape, one_line};
use minijinja::value::Value;
use minijinja::{AutoEscape, Environment, UndefinedBehavior};

/// Names the engine itself provides (functions, `loop` inside a `for`).
const BUILT_IN_NAMES: [&str; 5] = ["loop", "range", "dict", "debug", "namespace"];

/// The escaping name of header templates.
const HEADER: &str = "header";

/// A set of templates: the built-in ones, some replaced by a site's files.
#[derive(Debug)]
pub struct Templates {
    env: Environment<'static>,
    /// Where each template came from, for error messages.
    origin: BTreeMap<&'static str, PathBuf>,
}

impl Templates {
    /// The `builtin` templates (name, text), each replaced by the file of the same name in
    /// `site_dir` when there is one.
    pub fn load(
        builtin: &[(&'static str, &'static str)],
        site_dir: Option<&Path>,
    ) -> Result<Templates, TemplateError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|name| match name.rsplit('.').next() {
            Some("html") => AutoEscape::Html,
            Some("subject") => AutoEscape::Custom(HEADER.into()),
            _ => AutoEscape::None,
        });
        env.set_formatter(|out, state, value| {
            // Undefined (an error in strict mode), none and safe strings: the engine's own rules.
            if value.is_undefined() || value.is_none() || value.is_safe() {
                return minijinja::escape_formatter(out, state, value);
            }
            let text = match state.auto_escape() {
                AutoEscape::Custom(name) if name == HEADER => one_line(&value.to_string()),
                // The five characters that matter in text and quoted attributes; `/` stays as
                // it is (minijinja would write `&#x2f;`), so links read plainly in a page's
                // source and in an email's.
                AutoEscape::Html => html_escape(&value.to_string()),
                _ => return minijinja::escape_formatter(out, state, value),
            };
            out.write_str(&text).map_err(minijinja::Error::from)
        });
        // Output is the template's text as written, block tags and all line breaks included
        // (no `trim_blocks`): what a text email's author sees is what the reader gets, down to
        // the file's last newline.
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .build()
            .map_err(|e| error(Path::new("(syntax)"), &e))?;
        env.set_syntax(syntax);
        let mut origin = BTreeMap::new();
        if let Some(dir) = site_dir {
            let entries = std::fs::read_dir(dir).map_err(|e| TemplateError {
                path: dir.to_path_buf(),
                line: None,
                reason: format!("cannot read the template directory: {e}"),
            })?;
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') || !entry.path().is_file() {
                    continue;
                }
                if !builtin.iter().any(|(b, _)| *b == name) {
                    let names: Vec<&str> = builtin.iter().map(|(b, _)| *b).collect();
                    return Err(TemplateError {
                        path: entry.path(),
                        line: None,
                        reason: format!(
                            "no built-in template has this name; the templates are {}",
                            names.join(", ")
                        ),
                    });
                }
            }
        }
        for (name, text) in builtin {
            let site = site_dir.map(|d| d.join(name)).filter(|p| p.is_file());
            let (path, text) = match site {
                Some(path) => {
                    let text = std::fs::read_to_string(&path).map_err(|e| TemplateError {
                        path: path.clone(),
                        line: None,
                        reason: e.to_string(),
                    })?;
                    (path, text)
                }
                None => (
                    PathBuf::from(format!("(built-in) {name}")),
                    text.to_string(),
                ),
            };
            env.add_template_owned(*name, text)
                .map_err(|e| error(&path, &e))?;
            origin.insert(*name, path);
        }
        Ok(Templates { env, origin })
    }

    /// Renders template `name` with `context`.
    pub fn render(&self, name: &str, context: &Value) -> Result<String, TemplateError> {
        let path = self
            .origin
            .get(name)
            .cloned()
            .unwrap_or_else(|| PathBuf::from(name));
        let template = self.env.get_template(name).map_err(|e| error(&path, &e))?;
        let text = template.render(context).map_err(|e| error(&path, &e))?;
        Ok(if name.ends_with(".subject") {
            one_line(&text)
        } else {
            text
        })
    }

    /// Checks that template `name` uses no top-level name outside `known` (in any branch, taken
    /// or not). Names a template sets itself (`{% set %}`, loop variables) are its own.
    pub fn check_names(&self, name: &str, known: &[&str]) -> Result<(), TemplateError> {
        let path = self
            .origin
            .get(name)
            .cloned()
            .unwrap_or_else(|| PathBuf::from(name));
        let template = self.env.get_template(name).map_err(|e| error(&path, &e))?;
        let mut unknown: Vec<String> = template
            .undeclared_variables(false)
            .into_iter()
            .filter(|n| !known.contains(&n.as_str()) && !BUILT_IN_NAMES.contains(&n.as_str()))
            .collect();
        unknown.sort();
        let Some(first) = unknown.first() else {
            return Ok(());
        };
        // The engine does not say where: the first line that names it.
        let line = template
            .source()
            .lines()
            .position(|l| {
                l.match_indices(first.as_str()).any(|(i, _)| {
                    let word = |c: char| c.is_alphanumeric() || c == '_';
                    !l[..i].chars().next_back().is_some_and(word)
                        && !l[i + first.len()..].chars().next().is_some_and(word)
                })
            })
            .map(|i| i + 1);
        Err(TemplateError {
            path,
            line,
            reason: format!(
                "unknown name `{}`; the names this template can use: {}",
                unknown.join("`, `"),
                known.join(", ")
            ),
        })
    }

    /// The names of the set's templates.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.origin.keys().copied()
    }
}

fn error(path: &Path, e: &minijinja::Error) -> TemplateError {
    // The detail without minijinja's own "(in name:line)" suffix: we name the file ourselves.
    let reason = match e.detail() {
        Some(detail) => format!("{}: {detail}", e.kind()),
        None => e.kind().to_string(),
    };
    TemplateError {
        path: path.to_path_buf(),
        line: e.line(),
        reason,
    }
}

/// A template value from anything serde can serialize (page values are built as JSON).
pub fn value<T: serde::Serialize>(v: T) -> Value {
    Value::from(minijinja::value::Serde(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(files: &[(&'static str, &'static str)]) -> Templates {
        Templates::load(files, None).unwrap()
    }

    #[test]
    fn html_escapes_every_value_and_text_does_not() {
        let t = set(&[("a.html", "<p>{{ name }}</p>"), ("a.txt", "{{ name }}")]);
        let ctx = minijinja::context! { name => "<script>alert(1)</script>&" };
        assert_eq!(
            t.render("a.html", &ctx).unwrap(),
            "<p>&lt;script&gt;alert(1)&lt;/script&gt;&amp;</p>"
        );
        assert_eq!(
            t.render("a.txt", &ctx).unwrap(),
            "<script>alert(1)</script>&"
        );
    }

    #[test]
    fn a_subject_is_one_line_whatever_the_values() {
        let t = set(&[("a.subject", "Job {{ name }}\nends")]);
        let ctx = minijinja::context! { name => "x\r\nBcc: victim@example.org" };
        assert_eq!(
            t.render("a.subject", &ctx).unwrap(),
            "Job x Bcc: victim@example.org ends"
        );
    }

    #[test]
    fn an_unknown_name_is_an_error_with_its_line() {
        let t = set(&[("a.txt", "one\n{{ nmae }}")]);
        let err = t
            .render("a.txt", &minijinja::context! { name => "x" })
            .unwrap_err();
        assert_eq!(err.line, Some(2), "{err}");
        assert!(err.to_string().contains("a.txt"), "{err}");
    }

    #[test]
    fn a_site_file_replaces_its_built_in_and_a_stray_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "site {{ name }}").unwrap();
        let t = Templates::load(&[("a.txt", "built-in")], Some(dir.path())).unwrap();
        let ctx = minijinja::context! { name => "x" };
        assert_eq!(t.render("a.txt", &ctx).unwrap(), "site x");
        std::fs::write(dir.path().join("b.txt"), "typo").unwrap();
        let err = Templates::load(&[("a.txt", "built-in")], Some(dir.path())).unwrap_err();
        assert!(err.to_string().contains("b.txt"), "{err}");
        std::fs::remove_file(dir.path().join("b.txt")).unwrap();
        std::fs::write(dir.path().join("a.txt"), "{% if %}").unwrap();
        let err = Templates::load(&[("a.txt", "built-in")], Some(dir.path())).unwrap_err();
        assert_eq!(err.line, Some(1), "{err}");
    }
}
