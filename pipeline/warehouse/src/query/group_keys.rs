//! A plan rule of jobsight's query sessions: GROUP BY keys that are computed (`substr(day, 1, 7)`,
//! `date_trunc('week', "end")`) are computed in a projection under the aggregation instead of
//! inside it.
//!
//! Why: DataFusion 55 pushes a projection into the Parquet scan, and the scan replaces a hive
//! partition column by its file's value before evaluating it, so a key that depends only on
//! `day` is then computed once per file instead of once per row. Inside the aggregation it is
//! computed for every row (`substr` was 10 % of "jobs and core-hours by month and state" over a
//! year of 5 M jobs; DuckDB evaluates a partition value once per vector). For a key over other
//! columns the work is the same in either place. The rule leaves an aggregation alone when it has
//! grouping sets (ROLLUP, CUBE), a key with a subquery, or no computed key, and it checks that the
//! aggregation's output (names, types) is unchanged, so nothing above it notices.

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, Result};
use datafusion::logical_expr::{Aggregate, Expr, LogicalPlan, Projection};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};

/// The rule; added to every session by [`super::build_session`].
#[derive(Debug, Default)]
pub struct GroupKeysBelowAggregate;

/// The name a computed key gets in the projection (unlikely to meet a real column).
fn key_name(i: usize) -> String {
    format!("__jobsight_group_key_{i}")
}

/// A key worth moving: not a column or a literal (under any aliases), and no subquery in it.
fn is_computed(expr: &Expr) -> bool {
    let inner = strip_aliases(expr);
    let simple = matches!(inner, Expr::Column(_) | Expr::Literal(..));
    let subquery = inner
        .exists(|e| {
            Ok(matches!(
                e,
                Expr::ScalarSubquery(_) | Expr::Exists(_) | Expr::InSubquery(_)
            ))
        })
        .unwrap_or(true);
    !simple && !subquery && !matches!(inner, Expr::GroupingSet(_))
}

fn strip_aliases(expr: &Expr) -> &Expr {
    match expr {
        Expr::Alias(alias) => strip_aliases(&alias.expr),
        other => other,
    }
}

impl OptimizerRule for GroupKeysBelowAggregate {
    fn name(&self) -> &str {
        "jobsight_group_keys_below_aggregate"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::BottomUp)
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let LogicalPlan::Aggregate(aggregate) = plan else {
            return Ok(Transformed::no(plan));
        };
        let grouping_sets = aggregate
            .group_expr
            .iter()
            .any(|e| matches!(e, Expr::GroupingSet(_)));
        if grouping_sets || !aggregate.group_expr.iter().any(is_computed) {
            return Ok(Transformed::no(LogicalPlan::Aggregate(aggregate)));
        }
        match moved(&aggregate)? {
            Some(rewritten) => Ok(Transformed::yes(LogicalPlan::Aggregate(rewritten))),
            None => Ok(Transformed::no(LogicalPlan::Aggregate(aggregate))),
        }
    }
}

/// The aggregation with its computed keys in a projection below it, or `None` when the result
/// would not have the same output.
fn moved(aggregate: &Aggregate) -> Result<Option<Aggregate>> {
    let input_schema = aggregate.input.schema();
    // Everything the input has goes through unchanged (the optimizer's later pass removes what
    // nothing above uses), then one column per computed key.
    let mut projected: Vec<Expr> = input_schema
        .iter()
        .map(|(qualifier, field)| Expr::Column(Column::from((qualifier, field))))
        .collect();
    let mut keys = Vec::with_capacity(aggregate.group_expr.len());
    for (i, key) in aggregate.group_expr.iter().enumerate() {
        let (qualifier, field) = aggregate.schema.qualified_field(i);
        if is_computed(key) {
            projected.push(strip_aliases(key).clone().alias(key_name(i)));
            keys.push(
                Expr::Column(Column::new_unqualified(key_name(i)))
                    .alias_qualified(qualifier.cloned(), field.name()),
            );
        } else {
            keys.push(key.clone());
        }
    }
    let projection = Projection::try_new(projected, Arc::clone(&aggregate.input))?;
    let rewritten = Aggregate::try_new(
        Arc::new(LogicalPlan::Projection(projection)),
        keys,
        aggregate.aggr_expr.clone(),
    )?;
    let same = rewritten.schema.fields().len() == aggregate.schema.fields().len()
        && rewritten
            .schema
            .iter()
            .zip(aggregate.schema.iter())
            .all(|((q1, f1), (q2, f2))| {
                q1 == q2 && f1.name() == f2.name() && f1.data_type() == f2.data_type()
            });
    Ok(same.then_some(rewritten))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::datasource::MemTable;
    use datafusion::prelude::SessionContext;

    async fn session(with_rule: bool) -> SessionContext {
        let ctx = SessionContext::new();
        if with_rule {
            ctx.add_optimizer_rule(Arc::new(GroupKeysBelowAggregate));
        }
        let schema = Arc::new(Schema::new(vec![
            Field::new("day", DataType::Utf8, false),
            Field::new("state", DataType::Utf8, true),
            Field::new("n", DataType::Int64, true),
        ]));
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(StringArray::from(vec![
                    "2025-01-01",
                    "2025-01-31",
                    "2025-02-01",
                    "2025-02-02",
                ])),
                Arc::new(StringArray::from(vec![
                    Some("COMPLETED"),
                    Some("FAILED"),
                    None,
                    Some("COMPLETED"),
                ])),
                Arc::new(Int64Array::from(vec![1, 2, 3, 4])),
            ],
        )
        .expect("batch");
        let table = MemTable::try_new(schema, vec![vec![batch]]).expect("table");
        ctx.register_table("t", Arc::new(table)).expect("register");
        ctx
    }

    async fn answer(ctx: &SessionContext, sql: &str) -> String {
        let batches = ctx
            .sql(sql)
            .await
            .expect("plan")
            .collect()
            .await
            .expect("run");
        datafusion::arrow::util::pretty::pretty_format_batches(&batches)
            .expect("format")
            .to_string()
    }

    #[tokio::test]
    async fn answers_are_those_without_the_rule() {
        let queries = [
            "SELECT substr(day, 1, 7) AS month, state, count(*) AS c, sum(n) AS s FROM t GROUP BY 1, 2 ORDER BY 1, 2",
            "SELECT substr(day, 1, 7), sum(n) FROM t GROUP BY substr(day, 1, 7) ORDER BY 1",
            "SELECT upper(state) AS s, max(n) FROM t GROUP BY upper(state) HAVING max(n) > 1 ORDER BY 1",
            "SELECT substr(day, 1, 4) AS y, count(DISTINCT state) FROM t GROUP BY ROLLUP(substr(day, 1, 4)) ORDER BY 1",
            "SELECT state, sum(n) FROM t GROUP BY state ORDER BY 1",
            "SELECT n % 2 AS odd, substr(day, 6, 2) AS m, count(*) FROM t GROUP BY 1, 2 ORDER BY 1, 2",
        ];
        let (with, without) = (session(true).await, session(false).await);
        for sql in queries {
            assert_eq!(
                answer(&with, sql).await,
                answer(&without, sql).await,
                "{sql}"
            );
        }
    }

    #[tokio::test]
    async fn a_computed_key_is_computed_below_the_aggregation() {
        let ctx = session(true).await;
        let plan = answer(
            &ctx,
            "EXPLAIN SELECT substr(day, 1, 7) AS month, count(*) FROM t GROUP BY 1",
        )
        .await;
        assert!(plan.contains("__jobsight_group_key_0"), "{plan}");
        let plan = answer(&ctx, "EXPLAIN SELECT state, count(*) FROM t GROUP BY 1").await;
        assert!(!plan.contains("__jobsight_group_key"), "{plan}");
    }
}
