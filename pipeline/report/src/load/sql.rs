//! What every loader shares: visiting each row of a query's result, reading a text column the
//! way the pages want it (empty when missing), and how far back the history queries look.

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

pub(crate) fn text(c: &Columns, name: &str, i: usize) -> String {
    c.text(name, i).unwrap_or_default()
}
