//! A plan rule of jobsight's query sessions, in place of DataFusion's `eliminate_duplicated_expr`:
//! a key given twice in `ORDER BY` (`ORDER BY a, b, a`) or `GROUP BY` is kept once, the first
//! time, and nothing else is removed.
//!
//! Why: DataFusion 55's rule also drops an `ORDER BY` key that it believes decided by an earlier
//! one, and it believes a key unique after a join that repeats it: `WITH j AS (SELECT job_id FROM
//! jobs GROUP BY job_id) SELECT j.job_id, t.metric, count(*) FROM telemetry t JOIN j ... GROUP BY
//! 1, 2 ORDER BY 1, 2` came out sorted by job only (relatives of apache/datafusion#23626, fixed
//! upstream for DISTINCT). Removing the rule is not enough: other rules (the one that drops
//! constant `GROUP BY` keys) fail on a key given twice, which this rule removes first, as the
//! original did, from the same place in the list of rules.

use datafusion::common::Result;
use datafusion::common::tree_node::Transformed;
use datafusion::logical_expr::{Aggregate, Expr, LogicalPlan, Sort, SortExpr};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};

/// The name of the DataFusion rule this one replaces.
pub const REPLACED: &str = "eliminate_duplicated_expr";

/// The rule; put in [`REPLACED`]'s place in every session by [`super::build_session`].
#[derive(Debug, Default)]
pub struct RepeatedKeys;

/// `items` with each one kept only the first time `same` says it was seen.
fn first_of_each<T>(items: Vec<T>, same: impl Fn(&T, &T) -> bool) -> Vec<T> {
    let mut kept: Vec<T> = Vec::with_capacity(items.len());
    for item in items {
        if !kept.iter().any(|k| same(k, &item)) {
            kept.push(item);
        }
    }
    kept
}

/// Whether some item of `items` is `same` as one before it.
fn repeats<T>(items: &[T], same: impl Fn(&T, &T) -> bool) -> bool {
    (1..items.len()).any(|i| items[..i].iter().any(|k| same(k, &items[i])))
}

impl OptimizerRule for RepeatedKeys {
    fn name(&self) -> &str {
        "jobsight_repeated_keys"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::TopDown)
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        match plan {
            LogicalPlan::Sort(sort) if repeats(&sort.expr, |a, b| a.expr == b.expr) => {
                // The same key twice, whatever its direction: the first decides the order.
                let expr: Vec<SortExpr> = first_of_each(sort.expr, |a, b| a.expr == b.expr);
                Ok(Transformed::yes(LogicalPlan::Sort(Sort {
                    expr,
                    input: sort.input,
                    fetch: sort.fetch,
                })))
            }
            LogicalPlan::Aggregate(aggregate) if repeats(&aggregate.group_expr, |a, b| a == b) => {
                let group_expr: Vec<Expr> = first_of_each(aggregate.group_expr, |a, b| a == b);
                Aggregate::try_new(aggregate.input, group_expr, aggregate.aggr_expr)
                    .map(|a| Transformed::yes(LogicalPlan::Aggregate(a)))
            }
            other => Ok(Transformed::no(other)),
        }
    }
}
