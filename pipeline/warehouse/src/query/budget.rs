//! The statement's parse within a budget. sqlparser 0.62 (DataFusion 55's) retries a failed
//! parse of `CAST(` as a function call, and parses every function argument twice, so that some
//! nestings take time exponential in their depth: `CAST(` × 48 never ended and held
//! `serve --pg` and SIGTERM (a parse cannot be stopped from outside; a thread cannot be
//! killed). Every expression of a parse passes through the dialect's `parse_prefix`, so
//! [`parse`] counts those calls against a budget in proportion to the statement's tokens: a
//! statement past it fails at its next expression, every retry fails at its first, and the
//! refusal is as quick as the parse of an ordinary statement. Each statement is checked with
//! both parsers that will read it (DataFusion's and sqlparser's own, datafusion-postgres'), so
//! what passes costs their real parse no more.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

use datafusion::error::DataFusionError;

use datafusion::sql::parser::{DFParser, Statement as DfStatement};
use datafusion::sql::sqlparser::ast::Expr;
use datafusion::sql::sqlparser::dialect::{Dialect, PostgreSqlDialect, Precedence};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

use super::QueryError;

/// Expressions parsed per token of the statement: an ordinary statement parses each of its
/// expressions a few times (alternatives tried and dropped); an exponential one soon passes
/// this.
pub const EXPRESSIONS_PER_TOKEN: usize = 32;

/// The budget of a statement of no tokens to speak of.
const MINIMUM_BUDGET: usize = 10_000;

/// Why a statement was refused before its parse could end.
pub const OVER_BUDGET: &str = "its expressions nest so that parsing it would take too long (the parser's time \
grows exponentially with nested casts and calls); write it with fewer levels of nested CAST or \
function calls";

/// PostgreSQL's dialect, counting the expressions parsed.
#[derive(Debug)]
struct Budgeted(PostgreSqlDialect, AtomicUsize);

impl Dialect for Budgeted {
    // sqlparser asks `dialect_of!(self is PostgreSqlDialect)`: this is PostgreSQL's to it.
    fn dialect(&self) -> std::any::TypeId {
        self.0.dialect()
    }

    fn parse_prefix(&self, _parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        let left = self.1.load(Ordering::Relaxed);
        if left == 0 {
            return Some(Err(ParserError::ParserError(OVER_BUDGET.into())));
        }
        self.1.store(left - 1, Ordering::Relaxed);
        None
    }

    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.0.identifier_quote_style(identifier)
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.0.is_delimited_identifier_start(ch)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        self.0.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        self.0.is_identifier_part(ch)
    }

    fn supports_unicode_string_literal(&self) -> bool {
        self.0.supports_unicode_string_literal()
    }

    fn is_reserved_for_identifier(&self, kw: Keyword) -> bool {
        self.0.is_reserved_for_identifier(kw)
    }

    fn is_custom_operator_part(&self, ch: char) -> bool {
        self.0.is_custom_operator_part(ch)
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        self.0.get_next_precedence(parser)
    }

    fn supports_filter_during_aggregation(&self) -> bool {
        self.0.supports_filter_during_aggregation()
    }

    fn supports_group_by_expr(&self) -> bool {
        self.0.supports_group_by_expr()
    }

    fn prec_value(&self, prec: Precedence) -> u8 {
        self.0.prec_value(prec)
    }

    fn allow_extract_custom(&self) -> bool {
        self.0.allow_extract_custom()
    }

    fn allow_extract_single_quotes(&self) -> bool {
        self.0.allow_extract_single_quotes()
    }

    fn supports_create_index_with_clause(&self) -> bool {
        self.0.supports_create_index_with_clause()
    }

    fn supports_explain_with_utility_options(&self) -> bool {
        self.0.supports_explain_with_utility_options()
    }

    fn supports_listen_notify(&self) -> bool {
        self.0.supports_listen_notify()
    }

    fn supports_factorial_operator(&self) -> bool {
        self.0.supports_factorial_operator()
    }

    fn supports_bitwise_shift_operators(&self) -> bool {
        self.0.supports_bitwise_shift_operators()
    }

    fn supports_comment_on(&self) -> bool {
        self.0.supports_comment_on()
    }

    fn supports_load_extension(&self) -> bool {
        self.0.supports_load_extension()
    }

    fn supports_named_fn_args_with_colon_operator(&self) -> bool {
        self.0.supports_named_fn_args_with_colon_operator()
    }

    fn supports_named_fn_args_with_expr_name(&self) -> bool {
        self.0.supports_named_fn_args_with_expr_name()
    }

    fn supports_empty_projections(&self) -> bool {
        self.0.supports_empty_projections()
    }

    fn supports_nested_comments(&self) -> bool {
        self.0.supports_nested_comments()
    }

    fn supports_string_escape_constant(&self) -> bool {
        self.0.supports_string_escape_constant()
    }

    fn supports_numeric_literal_underscores(&self) -> bool {
        self.0.supports_numeric_literal_underscores()
    }

    fn supports_array_typedef_with_brackets(&self) -> bool {
        self.0.supports_array_typedef_with_brackets()
    }

    fn supports_geometric_types(&self) -> bool {
        self.0.supports_geometric_types()
    }

    fn supports_set_names(&self) -> bool {
        self.0.supports_set_names()
    }

    fn supports_alter_column_type_using(&self) -> bool {
        self.0.supports_alter_column_type_using()
    }

    fn supports_notnull_operator(&self) -> bool {
        self.0.supports_notnull_operator()
    }

    fn supports_interval_options(&self) -> bool {
        self.0.supports_interval_options()
    }

    fn supports_insert_table_alias(&self) -> bool {
        self.0.supports_insert_table_alias()
    }

    fn supports_create_table_like_parenthesized(&self) -> bool {
        self.0.supports_create_table_like_parenthesized()
    }

    fn supports_select_wildcard_with_alias(&self) -> bool {
        self.0.supports_select_wildcard_with_alias()
    }

    fn supports_comma_separated_trim(&self) -> bool {
        self.0.supports_comma_separated_trim()
    }

    fn supports_xml_expressions(&self) -> bool {
        self.0.supports_xml_expressions()
    }

    fn supports_comment_optimizer_hint(&self) -> bool {
        self.0.supports_comment_optimizer_hint()
    }
}

/// The statements of `sql` (PostgreSQL's dialect, as DataFusion's parser reads it), or the
/// parser's error; [`QueryError::TooComplex`] when the parse of one of them would take longer
/// than its size warrants ([`check`]).
pub fn parse(sql: &str) -> Result<VecDeque<DfStatement>, QueryError> {
    check(sql)?;
    DFParser::parse_sql_with_dialect(sql, &PostgreSqlDialect {}).map_err(QueryError::Query)
}

/// The statements of `sql` that DataFusion's parser reads, each of the texts between top-level
/// `;` parsed by itself, so that one it refuses (`COPY jobs TO STDOUT`, which another parser
/// takes) does not hide the others; [`QueryError::TooComplex`] as [`check`].
pub fn parse_each(sql: &str) -> Result<Vec<DfStatement>, QueryError> {
    check(sql)?;
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize()
        .map_err(|e| QueryError::Query(DataFusionError::SQL(Box::new(e.into()), None)))?;
    Ok(tokens
        .split(|t| *t == Token::SemiColon)
        .filter_map(|statement| {
            let text: String = statement.iter().map(Token::to_string).collect();
            DFParser::parse_sql_with_dialect(&text, &dialect).ok()
        })
        .flatten()
        .collect())
}

/// [`QueryError::TooComplex`] when the parse of any statement of `sql` would take longer than
/// its size warrants, by DataFusion's parser or by sqlparser's own (datafusion-postgres'). Each
/// statement (the text between top-level `;`, which the linear tokenizer finds) is parsed by
/// itself: a parser stops at the first statement it refuses, and the one after it (`ABORT;
/// SELECT CAST(CAST(...`) would otherwise go unchecked to the other parser. A statement either
/// parser refuses for another reason passes here: that parser says why.
pub fn check(sql: &str) -> Result<(), QueryError> {
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize()
        .map_err(|e| QueryError::Query(DataFusionError::SQL(Box::new(e.into()), None)))?;
    for statement in tokens.split(|t| *t == Token::SemiColon) {
        let text: String = statement.iter().map(Token::to_string).collect();
        let budget = || {
            let left = statement
                .len()
                .saturating_mul(EXPRESSIONS_PER_TOKEN)
                .max(MINIMUM_BUDGET);
            Budgeted(PostgreSqlDialect {}, AtomicUsize::new(left))
        };
        let (datafusion, sqlparser) = (budget(), budget());
        let _ = DFParser::parse_sql_with_dialect(&text, &datafusion);
        let _ = Parser::parse_sql(&sqlparser, &text);
        if [&datafusion, &sqlparser]
            .iter()
            .any(|b| b.1.load(Ordering::Relaxed) == 0)
        {
            return Err(QueryError::TooComplex(OVER_BUDGET.into()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// The review's statements and the other shapes sqlparser 0.62 parses in exponential time
    /// are refused at once; ordinary and long statements parse.
    #[test]
    fn nestings_that_would_never_end_are_refused_at_once() {
        let nested = |open: &str, inner: &str, close: &str, n: usize| {
            format!("SELECT {}{inner}{}", open.repeat(n), close.repeat(n))
        };
        for sql in [
            nested("CAST(", "1", " AS BIGINT)", 48),
            nested("TRY_CAST(", "1", " AS BIGINT)", 48),
            nested("CAST(", "1", " AS VARCHAR)", 60),
            nested("abs(", "1", ")", 40),
            nested("CAST(CAST(", "1", ",1),1)", 20),
            // A first statement one parser refuses does not stop the check of the next.
            format!("ABORT; {}", nested("CAST(", "1", " AS BIGINT)", 48)),
            format!("COPY jobs TO STDOUT; {}", nested("abs(", "1", ")", 40)),
            format!("SELECT 1; {}", nested("CAST(", "1", " AS BIGINT)", 48)),
        ] {
            let started = Instant::now();
            let answer = parse(&sql);
            assert!(
                started.elapsed() < Duration::from_secs(2),
                "{sql}: {:?}",
                started.elapsed()
            );
            assert!(
                matches!(answer, Err(QueryError::TooComplex(_))),
                "{sql}: {answer:?}"
            );
        }
        for sql in [
            "SELECT 1".to_string(),
            nested("CAST(", "1", " AS BIGINT)", 6),
            nested("abs(", "1", ")", 8),
            format!("SELECT {}", vec!["1"; 5000].join("+")),
            "SELECT user, count(*) FILTER (WHERE state = 'FAILED') FROM jobs \
             WHERE day >= '2026-11-01' AND (cpus > 4 OR (gpus > 0 AND partition IN ('gpu', 'a100'))) \
             GROUP BY user ORDER BY 2 DESC LIMIT 10"
                .to_string(),
        ] {
            assert_eq!(
                parse(&sql).map(|s| s.len()).map_err(|e| e.to_string()),
                Ok(1),
                "{sql}"
            );
        }
    }
}
