//! The condition language of rules and classes, and the message templates.
//!
//! A condition is one boolean expression an admin can read:
//! `summary.cpu_eff < 0.65 and job.num_nodes > 1 or job.state in ["TIMEOUT", "OUT_OF_MEMORY"]`.
//! - Values: numbers, strings in double quotes, `true`, `false`, and variables (dotted names such
//!   as `job.state` or `mem_used_bytes.max_rise`, resolved by the caller).
//! - Operators, loosest first: `or`, `and`, `not`, comparisons (`< <= > >= == !=`, and
//!   `x in [a, b]`), `+ -`, `* /`, unary `-`. Parentheses group.
//! - Functions: `min(a, ...)`, `max(a, ...)`, `abs(x)`, `ceil(x)`, `floor(x)`, `present(x)` (whether
//!   `x` has a value), `coalesce(a, b, ...)` (the first with a value), `hms(seconds)` (the text
//!   `H:MM:SS`, as `sbatch --time` takes it).
//!
//! A variable the job does not have (a metric that was not measured, a request Slurm did not
//! record) is *missing*, and missing spreads as SQL's NULL does: arithmetic and comparisons with
//! it are missing, `false and missing` is false, `true or missing` is true. A rule fires only when
//! its condition is true, so a job without the data a rule needs is never flagged by it.
//!
//! Safety: parsing and evaluation do no I/O and call nothing outside this module; the text is at
//! most [`MAX_SOURCE`] bytes and nests at most [`MAX_DEPTH`] deep, and evaluation is one walk of
//! the tree, so a rule file cannot make the pipeline hang or touch anything.
//!
//! Templates are text with `{name}` or `{name:.N}` (N decimals) placeholders, where `name` is a
//! variable; `{{` and `}}` are literal braces.

use std::fmt;

/// Longest accepted condition, in bytes.
pub const MAX_SOURCE: usize = 4096;
/// Deepest accepted nesting of a condition.
pub const MAX_DEPTH: usize = 48;

/// A value during evaluation.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Num(f64),
    Str(String),
    Bool(bool),
    Missing,
}

impl Value {
    pub fn is_missing(&self) -> bool {
        matches!(self, Value::Missing)
    }

    /// `Num`, or `Missing` for NaN and infinities (which would make every comparison false
    /// without saying why).
    pub fn num(v: f64) -> Value {
        if v.is_finite() {
            Value::Num(v)
        } else {
            Value::Missing
        }
    }

    pub fn from_opt(v: Option<f64>) -> Value {
        v.map_or(Value::Missing, Value::num)
    }
}

impl fmt::Display for Value {
    /// Whole numbers without decimals, others with up to three significant decimals.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Num(v) if v.fract() == 0.0 && v.abs() < 1e15 => write!(f, "{v:.0}"),
            Value::Num(v) => {
                let decimals = if v.abs() >= 100.0 {
                    1
                } else if v.abs() >= 1.0 {
                    2
                } else {
                    3
                };
                write!(f, "{v:.decimals$}")
            }
            Value::Str(s) => f.write_str(s),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Missing => f.write_str("n/a"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BinOp {
    Or,
    And,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Func {
    Min,
    Max,
    Abs,
    Ceil,
    Floor,
    Present,
    Coalesce,
    Hms,
}

impl Func {
    fn of(name: &str) -> Option<Func> {
        Some(match name {
            "min" => Func::Min,
            "max" => Func::Max,
            "abs" => Func::Abs,
            "ceil" => Func::Ceil,
            "floor" => Func::Floor,
            "present" => Func::Present,
            "coalesce" => Func::Coalesce,
            "hms" => Func::Hms,
            _ => return None,
        })
    }

    /// Accepted argument counts.
    fn arity(self) -> (usize, usize) {
        match self {
            Func::Min | Func::Max | Func::Coalesce => (1, 16),
            Func::Abs | Func::Ceil | Func::Floor | Func::Present | Func::Hms => (1, 1),
        }
    }
}

/// A parsed condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Lit(Value),
    Var(String),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    In(Box<Expr>, Vec<Expr>),
    Call(Func, Vec<Expr>),
}

/// What is wrong with a condition or template, and where (byte offset in its text).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("at column {}: {message}", .offset + 1)]
pub struct SyntaxError {
    pub offset: usize,
    pub message: String,
}

fn syntax(offset: usize, message: impl Into<String>) -> SyntaxError {
    SyntaxError {
        offset,
        message: message.into(),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Num(f64),
    Str(String),
    Ident(String),
    Op(&'static str),
}

fn tokenize(src: &str) -> Result<Vec<(usize, Token)>, SyntaxError> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                i += 1;
            }
            // An exponent: 1e9, 2.5e-3.
            if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
                let mut j = i + 1;
                if j < bytes.len() && (bytes[j] == b'-' || bytes[j] == b'+') {
                    j += 1;
                }
                if j < bytes.len() && bytes[j].is_ascii_digit() {
                    i = j;
                    while i < bytes.len() && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let text = &src[start..i];
            let v: f64 = text
                .parse()
                .map_err(|_| syntax(start, format!("`{text}` is not a number")))?;
            out.push((start, Token::Num(v)));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.')
            {
                i += 1;
            }
            out.push((start, Token::Ident(src[start..i].to_string())));
            continue;
        }
        if c == b'"' {
            let end = src[i + 1..]
                .find('"')
                .ok_or_else(|| syntax(start, "text without its closing \""))?;
            out.push((start, Token::Str(src[i + 1..i + 1 + end].to_string())));
            i += end + 2;
            continue;
        }
        let two = src.get(i..i + 2).unwrap_or("");
        let op = match two {
            "<=" | ">=" | "==" | "!=" => Some(two),
            _ => None,
        };
        let op: &'static str = match op {
            Some("<=") => "<=",
            Some(">=") => ">=",
            Some("==") => "==",
            Some("!=") => "!=",
            _ => match c {
                b'<' => "<",
                b'>' => ">",
                b'+' => "+",
                b'-' => "-",
                b'*' => "*",
                b'/' => "/",
                b'(' => "(",
                b')' => ")",
                b'[' => "[",
                b']' => "]",
                b',' => ",",
                b'=' => return Err(syntax(start, "`=` is not an operator: compare with `==`")),
                _ => {
                    let ch = src[i..].chars().next().unwrap_or('?');
                    return Err(syntax(start, format!("unexpected character `{ch}`")));
                }
            },
        };
        i += op.len();
        out.push((start, Token::Op(op)));
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<(usize, Token)>,
    pos: usize,
    end: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos).map(|t| &t.1)
    }

    fn offset(&self) -> usize {
        self.tokens.get(self.pos).map_or(self.end, |t| t.0)
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Token::Op(o)) if *o == op)
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Token::Ident(w)) if w == word)
    }

    fn expect(&mut self, op: &str) -> Result<(), SyntaxError> {
        if self.is_op(op) {
            self.pos += 1;
            Ok(())
        } else {
            Err(syntax(self.offset(), format!("expected `{op}`")))
        }
    }

    fn deeper(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(syntax(self.offset(), "nested too deeply"));
        }
        Ok(())
    }

    fn or(&mut self) -> Result<Expr, SyntaxError> {
        self.deeper()?;
        let mut left = self.and()?;
        while self.is_word("or") {
            self.pos += 1;
            let right = self.and()?;
            left = Expr::Binary(BinOp::Or, Box::new(left), Box::new(right));
        }
        self.depth -= 1;
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, SyntaxError> {
        let mut left = self.not()?;
        while self.is_word("and") {
            self.pos += 1;
            let right = self.not()?;
            left = Expr::Binary(BinOp::And, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Expr, SyntaxError> {
        if self.is_word("not") {
            self.pos += 1;
            self.deeper()?;
            let inner = self.not()?;
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(inner)));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr, SyntaxError> {
        let left = self.sum()?;
        if self.is_word("in") {
            self.pos += 1;
            self.expect("[")?;
            let mut items = Vec::new();
            while !self.is_op("]") {
                items.push(self.sum()?);
                if !self.is_op("]") {
                    self.expect(",")?;
                }
            }
            self.pos += 1;
            return Ok(Expr::In(Box::new(left), items));
        }
        let op = match self.peek() {
            Some(Token::Op("<")) => BinOp::Lt,
            Some(Token::Op("<=")) => BinOp::Le,
            Some(Token::Op(">")) => BinOp::Gt,
            Some(Token::Op(">=")) => BinOp::Ge,
            Some(Token::Op("==")) => BinOp::Eq,
            Some(Token::Op("!=")) => BinOp::Ne,
            _ => return Ok(left),
        };
        self.pos += 1;
        let right = self.sum()?;
        Ok(Expr::Binary(op, Box::new(left), Box::new(right)))
    }

    fn sum(&mut self) -> Result<Expr, SyntaxError> {
        let mut left = self.product()?;
        loop {
            let op = match self.peek() {
                Some(Token::Op("+")) => BinOp::Add,
                Some(Token::Op("-")) => BinOp::Sub,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.product()?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn product(&mut self) -> Result<Expr, SyntaxError> {
        let mut left = self.unary()?;
        loop {
            let op = match self.peek() {
                Some(Token::Op("*")) => BinOp::Mul,
                Some(Token::Op("/")) => BinOp::Div,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.unary()?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Expr, SyntaxError> {
        if self.is_op("-") {
            self.pos += 1;
            self.deeper()?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(Expr::Neg(Box::new(inner)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Expr, SyntaxError> {
        let offset = self.offset();
        let Some(token) = self.peek().cloned() else {
            return Err(syntax(offset, "unexpected end of the condition"));
        };
        self.pos += 1;
        match token {
            Token::Num(v) => Ok(Expr::Lit(Value::Num(v))),
            Token::Str(s) => Ok(Expr::Lit(Value::Str(s))),
            Token::Op("(") => {
                let inner = self.or()?;
                self.expect(")")?;
                Ok(inner)
            }
            Token::Op(op) => Err(syntax(offset, format!("unexpected `{op}`"))),
            Token::Ident(word) => match word.as_str() {
                "true" => Ok(Expr::Lit(Value::Bool(true))),
                "false" => Ok(Expr::Lit(Value::Bool(false))),
                "and" | "or" | "not" | "in" => {
                    Err(syntax(offset, format!("`{word}` needs a value before it")))
                }
                _ if self.is_op("(") => {
                    let func = Func::of(&word)
                        .ok_or_else(|| syntax(offset, format!("unknown function `{word}`")))?;
                    self.pos += 1;
                    self.deeper()?;
                    let mut args = Vec::new();
                    while !self.is_op(")") {
                        args.push(self.or()?);
                        if !self.is_op(")") {
                            self.expect(",")?;
                        }
                    }
                    self.pos += 1;
                    self.depth -= 1;
                    let (least, most) = func.arity();
                    if args.len() < least || args.len() > most {
                        return Err(syntax(
                            offset,
                            format!(
                                "`{word}` takes {least} to {most} arguments, got {}",
                                args.len()
                            ),
                        ));
                    }
                    Ok(Expr::Call(func, args))
                }
                _ => {
                    if word.ends_with('.') || word.contains("..") {
                        return Err(syntax(offset, format!("`{word}` is not a variable name")));
                    }
                    Ok(Expr::Var(word))
                }
            },
        }
    }
}

/// Parses a condition.
pub fn parse(src: &str) -> Result<Expr, SyntaxError> {
    if src.len() > MAX_SOURCE {
        return Err(syntax(
            MAX_SOURCE,
            format!("longer than {MAX_SOURCE} bytes"),
        ));
    }
    let tokens = tokenize(src)?;
    if tokens.is_empty() {
        return Err(syntax(0, "empty condition"));
    }
    let mut parser = Parser {
        tokens,
        pos: 0,
        end: src.len(),
        depth: 0,
    };
    let expr = parser.or()?;
    if parser.pos < parser.tokens.len() {
        return Err(syntax(
            parser.offset(),
            "unexpected text after the end of the condition (a missing `and`/`or`?)",
        ));
    }
    Ok(expr)
}

impl Expr {
    /// Every variable the expression reads, in order of appearance.
    pub fn variables(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if let Expr::Var(name) = e {
                out.push(name.as_str());
            }
        });
        out
    }

    fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        f(self);
        match self {
            Expr::Lit(_) | Expr::Var(_) => {}
            Expr::Not(e) | Expr::Neg(e) => e.walk(f),
            Expr::Binary(_, a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::In(e, items) => {
                e.walk(f);
                items.iter().for_each(|i| i.walk(f));
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.walk(f)),
        }
    }

    /// Evaluates the expression; `lookup` gives each variable's value. Type errors (adding text to
    /// a number) give `Missing`: a rule file error must not stop the pipeline, and
    /// `jobsight rules check` catches them on the fixtures.
    pub fn eval(&self, lookup: &dyn Fn(&str) -> Value) -> Value {
        match self {
            Expr::Lit(v) => v.clone(),
            Expr::Var(name) => lookup(name),
            Expr::Not(e) => match e.eval(lookup) {
                Value::Bool(b) => Value::Bool(!b),
                _ => Value::Missing,
            },
            Expr::Neg(e) => match e.eval(lookup) {
                Value::Num(v) => Value::num(-v),
                _ => Value::Missing,
            },
            Expr::Binary(BinOp::And, a, b) => match (a.eval(lookup), b.eval(lookup)) {
                (Value::Bool(false), _) | (_, Value::Bool(false)) => Value::Bool(false),
                (Value::Bool(true), Value::Bool(true)) => Value::Bool(true),
                _ => Value::Missing,
            },
            Expr::Binary(BinOp::Or, a, b) => match (a.eval(lookup), b.eval(lookup)) {
                (Value::Bool(true), _) | (_, Value::Bool(true)) => Value::Bool(true),
                (Value::Bool(false), Value::Bool(false)) => Value::Bool(false),
                _ => Value::Missing,
            },
            Expr::Binary(op, a, b) => binary(*op, a.eval(lookup), b.eval(lookup)),
            Expr::In(e, items) => {
                let v = e.eval(lookup);
                if v.is_missing() {
                    return Value::Missing;
                }
                Value::Bool(items.iter().any(|i| i.eval(lookup) == v))
            }
            Expr::Call(func, args) => call(*func, args.iter().map(|a| a.eval(lookup)).collect()),
        }
    }
}

fn binary(op: BinOp, a: Value, b: Value) -> Value {
    use std::cmp::Ordering;
    if a.is_missing() || b.is_missing() {
        return Value::Missing;
    }
    let order = match (&a, &b) {
        (Value::Num(x), Value::Num(y)) => x.partial_cmp(y),
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    };
    let compare =
        |want: fn(Ordering) -> bool| order.map_or(Value::Missing, |o| Value::Bool(want(o)));
    match op {
        BinOp::Lt => compare(|o| o == Ordering::Less),
        BinOp::Le => compare(|o| o != Ordering::Greater),
        BinOp::Gt => compare(|o| o == Ordering::Greater),
        BinOp::Ge => compare(|o| o != Ordering::Less),
        BinOp::Eq => compare(|o| o == Ordering::Equal),
        BinOp::Ne => compare(|o| o != Ordering::Equal),
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => {
            let (Value::Num(x), Value::Num(y)) = (a, b) else {
                return Value::Missing;
            };
            match op {
                BinOp::Add => Value::num(x + y),
                BinOp::Sub => Value::num(x - y),
                BinOp::Mul => Value::num(x * y),
                // Division by zero has no value rather than an infinity.
                _ => Value::num(x / y),
            }
        }
        BinOp::And | BinOp::Or => Value::Missing,
    }
}

fn call(func: Func, args: Vec<Value>) -> Value {
    let nums = || -> Option<Vec<f64>> {
        args.iter()
            .map(|a| match a {
                Value::Num(v) => Some(*v),
                _ => None,
            })
            .collect()
    };
    match func {
        Func::Present => Value::Bool(!args[0].is_missing()),
        Func::Coalesce => args
            .iter()
            .find(|a| !a.is_missing())
            .cloned()
            .unwrap_or(Value::Missing),
        Func::Min => nums().map_or(Value::Missing, |v| {
            Value::num(v.into_iter().fold(f64::INFINITY, f64::min))
        }),
        Func::Max => nums().map_or(Value::Missing, |v| {
            Value::num(v.into_iter().fold(f64::NEG_INFINITY, f64::max))
        }),
        Func::Abs | Func::Ceil | Func::Floor | Func::Hms => {
            let Some(v) = nums().and_then(|v| v.first().copied()) else {
                return Value::Missing;
            };
            match func {
                Func::Abs => Value::num(v.abs()),
                Func::Ceil => Value::num(v.ceil()),
                Func::Floor => Value::num(v.floor()),
                _ => {
                    let s = v.max(0.0).round() as u64;
                    Value::Str(format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60))
                }
            }
        }
    }
}

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
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn eval(src: &str) -> Value {
        parse(src).unwrap().eval(&|name| match name {
            "job.cpus" => Value::Num(64.0),
            "job.state" => Value::Str("TIMEOUT".into()),
            "summary.cpu_eff" => Value::Num(0.015),
            "gpu_util.mean" => Value::Missing,
            _ => panic!("unexpected variable {name}"),
        })
    }

    #[test]
    fn precedence_and_arithmetic() {
        assert_eq!(eval("1 + 2 * 3 == 7"), Value::Bool(true));
        assert_eq!(eval("(1 + 2) * 3"), Value::Num(9.0));
        assert_eq!(eval("-2 * -3 >= 6 and not 1 > 2"), Value::Bool(true));
        assert_eq!(eval("true or false and false"), Value::Bool(true));
        assert_eq!(eval("1.5e3 / 1e3"), Value::Num(1.5));
        assert_eq!(
            eval("summary.cpu_eff * job.cpus < 1.01 and summary.cpu_eff * job.cpus > 0.85"),
            Value::Bool(true)
        );
        assert_eq!(
            eval("job.state in [\"TIMEOUT\", \"NODE_FAIL\"]"),
            Value::Bool(true)
        );
        assert_eq!(eval("job.state == \"COMPLETED\""), Value::Bool(false));
        assert_eq!(eval("hms(3725)"), Value::Str("1:02:05".into()));
        assert_eq!(eval("max(1, ceil(2.1), min(7, 9))"), Value::Num(7.0));
    }

    #[test]
    fn missing_spreads_like_sql_null() {
        assert_eq!(eval("gpu_util.mean < 0.15"), Value::Missing);
        assert_eq!(eval("gpu_util.mean < 0.15 and false"), Value::Bool(false));
        assert_eq!(eval("gpu_util.mean < 0.15 or true"), Value::Bool(true));
        assert_eq!(eval("not gpu_util.mean < 0.15"), Value::Missing);
        assert_eq!(eval("present(gpu_util.mean)"), Value::Bool(false));
        assert_eq!(eval("coalesce(gpu_util.mean, 3)"), Value::Num(3.0));
        assert_eq!(eval("1 / 0"), Value::Missing);
        assert_eq!(eval("\"a\" + 1"), Value::Missing);
        assert_eq!(eval("gpu_util.mean in [1]"), Value::Missing);
    }

    #[test]
    fn errors_say_where() {
        let e = parse("job.cpus > ").unwrap_err();
        assert_eq!(e.offset, 11);
        let e = parse("job.cpus = 2").unwrap_err();
        assert!(e.message.contains("=="), "{e}");
        assert_eq!(e.offset, 9);
        let e = parse("job.cpus > 2 job.cpus").unwrap_err();
        assert_eq!(e.offset, 13);
        assert!(
            parse("frobnicate(1)")
                .unwrap_err()
                .message
                .contains("unknown function")
        );
        assert!(
            parse("abs(1, 2)")
                .unwrap_err()
                .message
                .contains("takes 1 to 1")
        );
        assert!(parse("\"open").is_err());
        assert!(parse("a ; b").unwrap_err().message.contains("`;`"));
        assert!(parse("").is_err());
    }

    #[test]
    fn size_and_depth_are_bounded() {
        let deep = "(".repeat(MAX_DEPTH + 1) + "1" + &")".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).unwrap_err().message.contains("deeply"));
        let deep_not = "not ".repeat(MAX_DEPTH + 1) + "true";
        assert!(parse(&deep_not).is_err());
        let long = "1 + ".repeat(MAX_SOURCE / 4) + "1";
        assert!(parse(&long).unwrap_err().message.contains("longer"));
        // Long but flat chains are fine within the size limit.
        assert!(parse(&("1 + ".repeat(500) + "1")).is_ok());
    }

    #[test]
    fn variables_are_listed() {
        let e = parse("max(a.b, 1) > c and d in [e]").unwrap();
        assert_eq!(e.variables(), vec!["a.b", "c", "d", "e"]);
    }

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
