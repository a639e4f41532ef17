//! How deep a statement may nest before it is planned. DataFusion plans and evaluates expressions
//! by recursion, some of it without stack growth (`Expr::to_field` builds each level's name from
//! the one below), so a 6-KB `SELECT 1+1+...` of 3,000 terms, or the `WHERE id = 0 OR id = 1 OR
//! ...` dashboards generate, overflowed a thread's stack and aborted the process, every client of
//! the server with it. The parser builds such chains without recursion; this check counts their
//! depth (with an early stop, so counting recurses no deeper than the bound) and refuses a
//! statement beyond [`MAX_NESTING`] before anything recursive sees it. The bound is measured:
//! every thread that plans or runs a query has the stack a statement at the bound needs
//! (`tests/pipeline/serve_pg.rs`, `statements_of_any_depth_never_take_the_server_down`).

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{Expr, Query, Statement, Visit, Visitor};

/// The deepest nesting of expressions and subqueries planned: a chain of this many `+` or `OR`
/// terms is served, a longer one refused with [`too_deep`]'s reason.
pub const MAX_NESTING: usize = 4000;

/// Why `statement` is too deep to plan, if it is: its expressions or subqueries nest more than
/// [`MAX_NESTING`] levels.
pub fn too_deep(statement: &Statement) -> Option<String> {
    struct Depth {
        now: usize,
    }
    impl Visitor for Depth {
        type Break = ();
        fn pre_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
            self.enter()
        }
        fn post_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
            self.now -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.enter()
        }
        fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.now -= 1;
            ControlFlow::Continue(())
        }
    }
    impl Depth {
        fn enter(&mut self) -> ControlFlow<()> {
            self.now += 1;
            if self.now > MAX_NESTING {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
    }
    statement.visit(&mut Depth { now: 0 }).is_break().then(|| {
        format!(
            "a statement whose expressions or subqueries nest more than {MAX_NESTING} levels deep \
             (a chain of that many + or OR terms; an IN list of any length is not nested)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn chain(terms: usize, op: &str) -> String {
        let body: Vec<String> = (0..terms).map(|i| format!("job_id = '{i}'")).collect();
        format!("SELECT * FROM jobs WHERE {}", body.join(op))
    }

    /// Run on a thread with room for the parser's statements, which are dropped by recursion.
    #[test]
    fn chains_up_to_the_bound_pass_and_longer_ones_are_refused() {
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(chains)
            .unwrap()
            .join()
            .unwrap();
    }

    fn chains() {
        let parse = |sql: &str| {
            Parser::parse_sql(&PostgreSqlDialect {}, sql)
                .unwrap()
                .remove(0)
        };
        // A chain of n terms nests n levels deep (each `job_id = 'i'` one more at its place).
        assert_eq!(too_deep(&parse(&chain(MAX_NESTING - 10, " OR "))), None);
        let refused = too_deep(&parse(&chain(MAX_NESTING + 10, " OR "))).unwrap();
        assert!(refused.contains("nest more than 4000 levels"), "{refused}");
        let sum = format!("SELECT {}", vec!["1"; MAX_NESTING + 1].join("+"));
        assert!(too_deep(&parse(&sum)).is_some());
        // An IN list of any length is flat.
        let list: Vec<String> = (0..50_000).map(|i| format!("'{i}'")).collect();
        let in_list = format!("SELECT * FROM jobs WHERE job_id IN ({})", list.join(","));
        assert_eq!(too_deep(&parse(&in_list)), None);
    }
}
