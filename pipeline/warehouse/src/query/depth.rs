//! How deep and how large a statement may be before it is planned.
//!
//! Depth: DataFusion plans and evaluates expressions by recursion, some of it without stack
//! growth (`Expr::to_field` builds each level's name from the one below), so a 6-KB
//! `SELECT 1+1+...` of 3,000 terms, or the `WHERE id = 0 OR id = 1 OR ...` dashboards generate,
//! overflowed a thread's stack and aborted the process, every client of the server with it. The
//! parser builds such chains without recursion; this check counts their depth (with an early
//! stop, so counting recurses no deeper than the bound) and refuses a statement beyond
//! [`MAX_NESTING`] before anything recursive sees it. Every thread that plans or runs a query has
//! the stack a statement at the bound needs (`tests/pipeline/serve_pg.rs`,
//! `statements_of_any_depth_never_take_the_server_down`).
//!
//! Size: planning runs without a pause, so no statement timeout can stop it, and its cost grows
//! with the square of some shapes. Measured with the release build on these 2 cores (planning a
//! statement over the demo's warehouse): a chain of 1,000 / 2,000 / 3,000 `+` terms 1.5 / 5.5 /
//! 11.4 s; a SELECT list of 2,000 / 5,000 / 10,000 / 20,000 items 0.3 / 1.4 / 5.0 / 24.8 s;
//! 300 / 1,000 / 3,000 UNION ALL arms 0.2 / 1.0 / 10.0 s; an IN list of 10,000 / 30,000 /
//! 100,000 items 0.2 / 0.5 / 2.3 s. The bounds below hold each of these shapes to about a second
//! and a half of one core, and a statement's chains together ([`MAX_PLANNING_COST`]) to about
//! four, whatever timeout its client set (measured shape by shape; a statement mixing several
//! shapes at their bounds adds their times).

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{Expr, Query, SetExpr, Statement, Visit, Visitor};

/// The deepest nesting of expressions and subqueries planned: a chain of this many `+` or `OR`
/// terms is served, a longer one refused with [`too_complex`]'s reason.
pub const MAX_NESTING: usize = 1000;
/// The most expressions in one statement (each item of an `IN` list is one).
pub const MAX_EXPRESSIONS: usize = 20_000;
/// The most items in all the `SELECT` lists of one statement.
pub const MAX_SELECT_ITEMS: usize = 2000;
/// The most planning work one statement may ask for, counted as the sum over its expressions of
/// how deep each one lies, which grows as planning does: a chain of n `+` terms costs about n²
/// (1,000,000 for 1,000 terms, planned in 1.5 s), one of n `OR`ed comparisons about 2n² (0.6 s
/// for 1,000), an `IN` list of n items about 2n. One chain at [`MAX_NESTING`] passes; several
/// long chains in one statement, each within it, are refused.
pub const MAX_PLANNING_COST: usize = 2_500_000;
/// The most `SELECT`s in one statement (subqueries and the arms of `UNION` and its kin).
pub const MAX_SELECTS: usize = 1000;

/// Why `statement` is too deep or too large to plan, if it is: its expressions or subqueries
/// nest more than [`MAX_NESTING`] levels, or it has more expressions, `SELECT` items, `SELECT`s
/// or planning cost than the bounds above.
pub fn too_complex(statement: &Statement) -> Option<String> {
    struct Shape {
        depth: usize,
        expressions: usize,
        selects: usize,
        select_items: usize,
        cost: usize,
        /// Why the walk stopped.
        refused: Option<String>,
    }
    impl Visitor for Shape {
        type Break = ();
        fn pre_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
            self.expressions += 1;
            if self.expressions > MAX_EXPRESSIONS {
                return self.refuse(format!(
                    "it has more than {MAX_EXPRESSIONS} expressions (each item of an IN list is \
                     one); split it into several statements"
                ));
            }
            if self.enter().is_break() {
                return ControlFlow::Break(());
            }
            self.cost += self.depth;
            if self.cost > MAX_PLANNING_COST {
                return self.refuse(
                    "its chains of + or OR terms are too long together (DataFusion's planning \
                     grows with the square of a chain's length); write long lists of \
                     alternatives as IN (...), or split the statement"
                        .to_string(),
                );
            }
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
            let mut bodies = vec![&*query.body];
            while let Some(body) = bodies.pop() {
                match body {
                    SetExpr::Select(select) => {
                        self.selects += 1;
                        self.select_items += select.projection.len();
                        if self.select_items > MAX_SELECT_ITEMS {
                            return self.refuse(format!(
                                "its SELECT lists have more than {MAX_SELECT_ITEMS} items in all \
                                 (planning grows with the square of a list's length); select \
                                 fewer columns, or split the statement"
                            ));
                        }
                    }
                    SetExpr::SetOperation { left, right, .. } => {
                        bodies.push(left);
                        bodies.push(right);
                    }
                    // A nested query's own SELECTs are counted when the walk reaches it.
                    _ => {}
                }
            }
            if self.selects > MAX_SELECTS {
                return self.refuse(format!(
                    "more than {MAX_SELECTS} SELECTs (subqueries and the arms of UNION, \
                     INTERSECT and EXCEPT); split it into several statements"
                ));
            }
            self.enter()
        }
        fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
    }
    impl Shape {
        fn enter(&mut self) -> ControlFlow<()> {
            self.depth += 1;
            if self.depth > MAX_NESTING {
                return self.refuse(format!(
                    "its expressions or subqueries nest more than {MAX_NESTING} levels deep (a \
                     chain of that many + or OR terms); write a long list of alternatives as \
                     IN (...), which is flat"
                ));
            }
            ControlFlow::Continue(())
        }
        fn refuse(&mut self, why: String) -> ControlFlow<()> {
            self.refused = Some(why);
            ControlFlow::Break(())
        }
    }
    let mut shape = Shape {
        depth: 0,
        expressions: 0,
        selects: 0,
        select_items: 0,
        cost: 0,
        refused: None,
    };
    let _ = statement.visit(&mut shape);
    shape
        .refused
        .or_else(|| super::expansion::too_large(statement))
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
        // One at the bound passes, the costliest single chain there is (MAX_PLANNING_COST).
        assert_eq!(too_complex(&parse(&chain(MAX_NESTING - 10, " OR "))), None);
        let refused = too_complex(&parse(&chain(MAX_NESTING + 10, " OR "))).unwrap();
        assert!(refused.contains("nest more than 1000 levels"), "{refused}");
        let sum = format!("SELECT {}", vec!["1"; MAX_NESTING + 1].join("+"));
        assert!(too_complex(&parse(&sum)).is_some());
        // Ten chains of 900 terms, each within the nesting bound, cost ten times one chain.
        let sum = vec!["1"; 900].join("+");
        assert_eq!(too_complex(&parse(&format!("SELECT {sum}"))), None);
        let sums = vec![sum; 10].join(", ");
        let refused = too_complex(&parse(&format!("SELECT {sums}"))).unwrap();
        assert!(refused.contains("too long together"), "{refused}");
        // An IN list is flat: refused only beyond the expressions' bound.
        let in_list = |n: usize| {
            let list: Vec<String> = (0..n).map(|i| format!("'{i}'")).collect();
            format!("SELECT * FROM jobs WHERE job_id IN ({})", list.join(","))
        };
        assert_eq!(too_complex(&parse(&in_list(MAX_EXPRESSIONS - 10))), None);
        let refused = too_complex(&parse(&in_list(MAX_EXPRESSIONS + 10))).unwrap();
        assert!(refused.contains("more than 20000 expressions"), "{refused}");
    }

    /// Wide SELECT lists and many UNION arms (quadratic to plan) are refused beyond their
    /// bounds, subqueries counted with the arms.
    #[test]
    fn wide_lists_and_many_selects_are_refused() {
        let parse = |sql: &str| {
            Parser::parse_sql(&PostgreSqlDialect {}, sql)
                .unwrap()
                .remove(0)
        };
        let columns = |n: usize| {
            let items: Vec<String> = (0..n).map(|i| format!("{i} AS c{i}")).collect();
            format!("SELECT {}", items.join(","))
        };
        assert_eq!(too_complex(&parse(&columns(MAX_SELECT_ITEMS))), None);
        let refused = too_complex(&parse(&columns(MAX_SELECT_ITEMS + 1))).unwrap();
        assert!(refused.contains("more than 2000 items in all"), "{refused}");
        let arms = |n: usize| {
            let arms: Vec<String> = (0..n).map(|i| format!("SELECT {i}")).collect();
            arms.join(" UNION ALL ")
        };
        assert_eq!(too_complex(&parse(&arms(MAX_SELECTS))), None);
        let refused = too_complex(&parse(&arms(MAX_SELECTS + 1))).unwrap();
        assert!(refused.contains("more than 1000 SELECTs"), "{refused}");
        let with_subquery = format!("SELECT (SELECT 1) UNION ALL {}", arms(MAX_SELECTS - 1));
        assert!(too_complex(&parse(&with_subquery)).is_some());
    }
}
