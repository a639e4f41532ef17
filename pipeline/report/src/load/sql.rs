//! What every loader shares: visiting each row of a query's result (or grouping its rows by job),
//! reading a text column the way the pages want it (empty when missing), and how far back the
//! history queries look.

use std::collections::HashMap;

use datafusion::prelude::SessionContext;

use jobsight_warehouse::query::{Columns, QueryError, collect};

/// How far back a healthy reference and a user's history are looked for.
pub const HISTORY_DAYS: u64 = 30;

/// Calls `each` with every row of `sql`'s result.
pub(crate) async fn each_row(
    ctx: &SessionContext,
    sql: &str,
    mut each: impl FnMut(&Columns, usize),
) -> Result<(), QueryError> {
    for batch in collect(ctx, sql).await? {
        let c = Columns::of(&batch)?;
        for i in 0..batch.num_rows() {
            each(&c, i);
        }
    }
    Ok(())
}

/// `read` of every row of `sql`'s result, grouped by the row's `job_id`, in the result's order.
pub(crate) async fn by_job<T>(
    ctx: &SessionContext,
    sql: &str,
    mut read: impl FnMut(&Columns, usize) -> T,
) -> Result<HashMap<String, Vec<T>>, QueryError> {
    let mut rows: HashMap<String, Vec<T>> = HashMap::new();
    each_row(ctx, sql, |c, i| {
        rows.entry(text(c, "job_id", i))
            .or_default()
            .push(read(c, i))
    })
    .await?;
    Ok(rows)
}

pub(crate) fn text(c: &Columns, name: &str, i: usize) -> String {
    c.text(name, i).unwrap_or_default()
}
