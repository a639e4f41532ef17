//! How large a statement's plan becomes once its common table expressions are inlined. DataFusion
//! plans a CTE anew wherever it is named, so a chain of CTEs that each name the one before twice
//! (`c1 AS (SELECT … FROM c0 a, c0 b)`, `c2 AS (… FROM c1 a, c1 b)`, …) doubles the plan at each
//! link, and planning it takes four times as long and as much memory for every two links: in a
//! debug build, DataFusion alone, 14 links took 8 s to plan and 16 s in all (48 MB), 16 links 35 s
//! and 73 s (192 MB), 18 links 153 s and 306 s (768 MB), so 30 links, 700 bytes of SQL, would hold
//! a core for days and take terabytes outside the query memory pool. No bound on the text's own
//! size or depth ([`super::depth`]) sees it. Here each table a statement reads counts as what it stands for: a
//! table of the warehouse 1, a CTE the count of its own body, wherever it is in scope; more than
//! [`MAX_EXPANDED_RELATIONS`] is refused before planning.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{ObjectName, Query, Statement, Visit, Visitor};

/// The most tables a statement may read once its CTEs are inlined: 512 scans from nine doubling
/// links plan in about 0.1 s in a debug build.
pub const MAX_EXPANDED_RELATIONS: usize = 1000;

/// Why `statement` is refused, if it is: its CTEs inline to more than [`MAX_EXPANDED_RELATIONS`]
/// table reads. A query that reads no table counts as one.
pub fn too_large(statement: &Statement) -> Option<String> {
    /// One query being walked: the CTEs it defines (name, inlined size), the tables read so far,
    /// and the queries of its `WITH` (by address) with their names.
    struct Frame {
        ctes: Vec<(String, usize)>,
        reads: usize,
        bodies: Vec<(*const Query, String)>,
    }
    struct Walk {
        frames: Vec<Frame>,
        /// The inlined size of the whole statement, as the outermost frames end.
        total: usize,
    }
    impl Walk {
        fn size_of(&self, relation: &ObjectName) -> usize {
            // The identifier's own value, as the WITH query's alias has it (a quoted name may hold
            // quotes: its printed form is not its name). Compared without case: counting two
            // names as one can only over-count.
            let [part] = relation.0.as_slice() else {
                return 1;
            };
            let Some(ident) = part.as_ident() else {
                return 1;
            };
            let name = ident.value.to_lowercase();
            self.frames
                .iter()
                .rev()
                .flat_map(|f| f.ctes.iter().rev())
                .find(|(cte, _)| *cte == name)
                .map_or(1, |(_, size)| *size)
        }
    }
    impl Visitor for Walk {
        type Break = ();
        fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
            let bodies = query.with.as_ref().map_or_else(Vec::new, |with| {
                with.cte_tables
                    .iter()
                    .map(|cte| {
                        let body: *const Query = &*cte.query;
                        (body, cte.alias.name.value.to_lowercase())
                    })
                    .collect()
            });
            self.frames.push(Frame {
                ctes: Vec::new(),
                reads: 0,
                bodies,
            });
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
            let Some(done) = self.frames.pop() else {
                return ControlFlow::Continue(());
            };
            // A query that reads no table (`SELECT 1`) is still one plan to make wherever named.
            let size = done.reads.max(1);
            let address: *const Query = query;
            match self.frames.last_mut() {
                // A CTE of the enclosing query: named from here on, at its size.
                Some(parent) => match parent.bodies.iter().find(|(body, _)| *body == address) {
                    Some((_, name)) => {
                        let name = name.clone();
                        parent.ctes.push((name, size));
                    }
                    // A subquery: read where it stands.
                    None => parent.reads = parent.reads.saturating_add(size),
                },
                None => self.total = self.total.saturating_add(size),
            }
            if self.total > MAX_EXPANDED_RELATIONS {
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_relation(&mut self, relation: &ObjectName) -> ControlFlow<()> {
            let size = self.size_of(relation);
            if let Some(frame) = self.frames.last_mut() {
                frame.reads = frame.reads.saturating_add(size);
                if frame.reads > MAX_EXPANDED_RELATIONS {
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut walk = Walk {
        frames: Vec::new(),
        total: 0,
    };
    let stopped = statement.visit(&mut walk).is_break();
    (stopped || walk.total > MAX_EXPANDED_RELATIONS).then(|| {
        format!(
            "once its WITH queries are put where they are named, it reads more than \
             {MAX_EXPANDED_RELATIONS} tables (DataFusion plans a WITH query anew at each use, so \
             WITH queries that each name the one before twice double the plan at every step); \
             name each WITH query fewer times, or split the statement"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn doubling(links: usize) -> String {
        let mut ctes = vec!["c0 AS (SELECT 1 AS x)".to_string()];
        ctes.extend(
            (1..=links).map(|i| format!("c{i} AS (SELECT a.x FROM c{} a, c{} b)", i - 1, i - 1)),
        );
        format!("SELECT count(*) FROM c{links}")
            .replace("SELECT", &format!("WITH {} SELECT", ctes.join(", ")))
    }

    fn verdict(sql: &str) -> Option<String> {
        too_large(&Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap()[0])
    }

    #[test]
    fn doubling_ctes_are_refused_past_the_bound_and_ordinary_ones_pass() {
        // 2^9 = 512 reads pass, 2^10 = 1,024 do not.
        assert_eq!(verdict(&doubling(9)), None);
        let refused = verdict(&doubling(10)).unwrap();
        assert!(refused.contains("more than 1000 tables"), "{refused}");
        assert!(verdict(&doubling(40)).is_some());
        // The same chain inside a subquery, and a chain whose links name an outer CTE.
        assert!(verdict(&format!("SELECT * FROM ({}) t", doubling(12))).is_some());
        let mut nested = "SELECT 1 AS x".to_string();
        for _ in 0..12 {
            nested = format!("WITH c AS ({nested}) SELECT a.x FROM c a, c b");
        }
        assert!(verdict(&nested).is_some(), "nested WITHs double too");
        // Quoted names, quotes inside them included, are the names the WITH queries have.
        let mut quoted = vec!["\"c0\"\"\" AS (SELECT 1 AS x)".to_string()];
        quoted.extend((1..=12).map(|i| {
            format!(
                "\"c{i}\"\"\" AS (SELECT a.x FROM \"c{}\"\"\" a, \"c{}\"\"\" b)",
                i - 1,
                i - 1
            )
        }));
        let sql = format!(
            "WITH {} SELECT count(*) FROM \"c12\"\"\"",
            quoted.join(", ")
        );
        assert!(verdict(&sql).is_some(), "{sql}");
        // Everyday statements: tables read once or a few times, a CTE named twice.
        for ok in [
            "SELECT * FROM jobs",
            "SELECT * FROM jobs j JOIN findings f ON f.job_id = j.job_id",
            "WITH busy AS (SELECT * FROM job_summary WHERE cpu_eff > 0.9) \
             SELECT * FROM busy a JOIN busy b ON a.user = b.user",
            "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r",
            "SELECT (SELECT count(*) FROM jobs), (SELECT count(*) FROM findings)",
        ] {
            assert_eq!(verdict(ok), None, "{ok}");
        }
    }
}
