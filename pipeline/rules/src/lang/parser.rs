//! The tokenizer and parser of the condition language: a condition's text into its [`Expr`]
//! tree, or a [`SyntaxError`] that says where the text goes wrong. The parser descends one
//! function per precedence level, loosest first, and counts its depth so no text nests deeper
//! than [`MAX_DEPTH`].

use super::{BinOp, Expr, Func, MAX_DEPTH, MAX_SOURCE, SyntaxError, Value, syntax};

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
