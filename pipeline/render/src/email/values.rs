//! The emails' template values: what each placeholder of a message holds, built by
//! [`super::context`] and handed to the one template engine of the workspace
//! ([`jobsight_base::templates`], Jinja syntax, escaping decided by the file's name).
//!
//! A value is text, a yes/no, or a list of items with names of their own (`{% for job in jobs %}
//! {{ job.name }}{% endfor %}`). Every value that comes from a user or another system is
//! cleaned when the context is built ([`jobsight_base::text::clean`]: no control characters,
//! bounded length), and escaped again by the engine for HTML and email headers.

use std::collections::BTreeMap;

/// A value a placeholder can take.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Bool(bool),
    List(Vec<Context>),
}

/// Names and their values at one level.
pub type Context = BTreeMap<&'static str, Value>;

/// The context as the template engine's value: text as strings (an empty one is false in an
/// `{% if %}`), yes/no as booleans, lists as sequences of maps.
pub fn to_jinja(context: &Context) -> minijinja::Value {
    context
        .iter()
        .map(|(name, value)| {
            let value = match value {
                Value::Text(text) => minijinja::Value::from(text.as_str()),
                Value::Bool(yes) => minijinja::Value::from(*yes),
                Value::List(items) => {
                    minijinja::Value::from(items.iter().map(to_jinja).collect::<Vec<_>>())
                }
            };
            (*name, value)
        })
        .collect::<BTreeMap<&str, minijinja::Value>>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_flags_reach_the_template() {
        let context = Context::from([
            ("critical", Value::Bool(false)),
            ("more", Value::Text(String::new())),
            (
                "jobs",
                Value::List(vec![Context::from([("job_id", Value::Text("7".into()))])]),
            ),
        ]);
        let t = crate::templates::Templates::load(
            &[(
                "t.txt",
                "{% if not critical and not more %}{% for job in jobs %}{{ job.job_id }}{% endfor %}{% endif %}",
            )],
            None,
        )
        .unwrap();
        assert_eq!(t.render("t.txt", &to_jinja(&context)).unwrap(), "7");
    }
}
