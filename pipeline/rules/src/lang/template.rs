//! The message templates of rules: text with `{name}` placeholders, parsed once when the rule
//! book loads and rendered with each job's own numbers, each number written in the unit its name
//! or its placeholder's format ([`Spec`]) says.

use super::{SyntaxError, Value, syntax};

/// How a placeholder writes its number (`{name}`, `{name:.2}`, `{name:duration}`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spec {
    /// In the unit its name says (`job.time_limit_s` as `8h 40m`, `summary.cpu_eff` as `41 %`;
    /// [`jobsight_base::units::named_value`]), else to three significant digits.
    Named,
    /// With N decimals, as written.
    Decimals(usize),
    /// Seconds as hours and minutes.
    Duration,
    /// A share of 1 as a percentage.
    Percent,
    /// Bytes per second as MB/s.
    Rate,
    /// Bytes as MB, GB or TB.
    Size,
}

impl Spec {
    fn parse(spec: &str) -> Option<Spec> {
        match spec {
            "duration" => Some(Spec::Duration),
            "percent" => Some(Spec::Percent),
            "rate" => Some(Spec::Rate),
            "size" => Some(Spec::Size),
            _ => match spec.strip_prefix('.').and_then(|d| d.parse().ok()) {
                Some(d) if d <= 12 => Some(Spec::Decimals(d)),
                _ => None,
            },
        }
    }

    fn write(self, name: &str, v: f64) -> String {
        use jobsight_base::units;
        match self {
            Spec::Named => units::named_value(name, v),
            Spec::Decimals(d) => format!("{v:.d$}"),
            Spec::Duration => units::duration(v),
            Spec::Percent => units::percent(v),
            Spec::Rate => units::rate_from_bytes_per_s(v),
            Spec::Size => units::size_from_bytes(v),
        }
    }
}

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Text(String),
    /// A variable and how its number is written.
    Var(String, Spec),
}

/// A parsed message template.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Template {
    pub pieces: Vec<Piece>,
}

impl Template {
    pub fn parse(src: &str) -> Result<Template, SyntaxError> {
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut chars = src.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' if chars.peek().is_some_and(|&(_, n)| n == '{') => {
                    chars.next();
                    text.push('{');
                }
                '}' if chars.peek().is_some_and(|&(_, n)| n == '}') => {
                    chars.next();
                    text.push('}');
                }
                '}' => return Err(syntax(i, "`}` without `{` (write `}}` for a brace)")),
                '{' => {
                    let rest = &src[i + 1..];
                    let end = rest
                        .find('}')
                        .ok_or_else(|| syntax(i, "`{` without its `}`"))?;
                    let inner = &rest[..end];
                    let (name, spec) = match inner.split_once(':') {
                        Some((name, spec)) => match Spec::parse(spec) {
                            Some(parsed) => (name, parsed),
                            None => {
                                return Err(syntax(
                                    i,
                                    format!(
                                        "format `{spec}`: known are `.N` (N decimals), `duration`, \
                                         `percent`, `rate` (bytes/s) and `size` (bytes)"
                                    ),
                                ));
                            }
                        },
                        None => (inner, Spec::Named),
                    };
                    let name = name.trim();
                    let valid = !name.is_empty()
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
                    if !valid {
                        return Err(syntax(i, format!("`{{{inner}}}` is not a placeholder")));
                    }
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(Piece::Var(name.to_string(), spec));
                    // Skip the placeholder's characters.
                    while chars.peek().is_some_and(|&(j, _)| j <= i + 1 + end) {
                        chars.next();
                    }
                }
                c => text.push(c),
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Template { pieces })
    }

    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Var(name, _) => Some(name.as_str()),
            Piece::Text(_) => None,
        })
    }

    pub fn render(&self, lookup: &dyn Fn(&str) -> Value) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Var(name, spec) => match lookup(name) {
                    Value::Num(v) => out.push_str(&spec.write(name, v)),
                    v => out.push_str(&v.to_string()),
                },
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates() {
        let t = Template::parse("used {x:.1} of {y} GB {{literal}} on {node.name}").unwrap();
        let out = t.render(&|name| match name {
            "x" => Value::Num(1.26),
            "y" => Value::Num(64.0),
            _ => Value::Str("c1".into()),
        });
        assert_eq!(out, "used 1.3 of 64 GB {literal} on c1");
        assert_eq!(
            t.variables().collect::<Vec<_>>(),
            vec!["x", "y", "node.name"]
        );
        assert!(Template::parse("{x").is_err());
        assert!(Template::parse("{x:%d}").is_err());
        assert!(Template::parse("a } b").is_err());
        assert!(Template::parse("{not a name}").is_err());
        // A number in the unit its name says, or the one the placeholder asks for.
        let t = Template::parse(
            "limit {job.time_limit_s}, {traffic:rate}, {busy:percent} busy, {rise:duration}, {b:size}",
        )
        .unwrap();
        let out = t.render(&|name| match name {
            "job.time_limit_s" => Value::Num(31_200.0),
            "traffic" => Value::Num(80_078_094.0),
            "busy" => Value::Num(0.4059694906469261),
            "rise" => Value::Num(5400.0),
            _ => Value::Num(2.0 * 1024f64.powi(3)),
        });
        assert_eq!(out, "limit 8h 40m, 80.1 MB/s, 41 % busy, 1h 30m, 2 GB");
        assert_eq!(Value::Num(0.01234).to_string(), "0.012");
        assert_eq!(Value::Num(123.456).to_string(), "123.5");
    }
}
