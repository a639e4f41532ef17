//! Parsing and planning where no statement can hold the server. A parse or a plan runs without a
//! pause: no timer, no other client's task and no SIGTERM reaches the thread doing it until it
//! ends. Round two of the hostile-client review found a 776-byte statement whose parse never ended
//! on a tokio worker: it took a core, every later login and the stop with it.
//! [`crate::query::budget`] and [`crate::query::depth`] bound what is known to be slow; this is
//! for what is not: `levenshtein(repeat('a', 150000), repeat('b', 150000))`, each constant well
//! under the bound of one ([`crate::query::bounded`]), is computed by the optimiser's constant
//! folding while the statement is planned (about a minute in a debug build, tested). Before datafusion-postgres parses and plans a statement (simple and
//! extended protocol), the statement is parsed within its budget, checked for depth, and each of
//! its queries planned by DataFusion down to its physical plan (constants folded, scans laid out), on a thread of its own with the stack a
//! statement at the bounds needs, while the connection's task waits for it at most until the
//! statement's deadline, and never longer than [`PLANNING_LIMIT`] (datafusion-postgres plans it
//! again where nothing can stop it). Past the deadline the client gets `query_canceled` (57014),
//! past the limit `statement_too_complex` (54001), and the thread is abandoned: it ends when its
//! work ends, and the process's end (SIGTERM) ends it. A cursor's query is planned at its
//! `DECLARE`; a prepared statement at its Parse, and again at Execute with the values bound to its
//! parameters ([`super::parameters`]).
//!
//! At most [`PLANNERS`] such threads run at once, abandoned ones included, and
//! [`PLANNERS_PER_ADDRESS`] for one client address, so that statements that never end can take
//! at most that many cores and one client cannot take them all; a statement that finds them all
//! busy waits
//! for one at most [`WAIT_FOR_PLANNER`] and is then refused with 53000 (`insufficient_resources`).
//! A plan found here is not reused (datafusion-postgres plans again, with its own hooks): a quick
//! statement costs its planning twice, a statement that plans slowly is stopped at its deadline.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DfStatement;
use datafusion::sql::sqlparser::ast::Statement as SqlStatement;
use datafusion_postgres::pgwire;
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use tokio::sync::{Semaphore, oneshot};
use tokio::time::Instant;

use super::admission::{Counted, PerAddress};
use crate::query::{self, QueryError};

/// Threads that parse and plan at once, abandoned ones included.
pub const PLANNERS: usize = 8;
/// Planner threads of one client address at once, abandoned ones included.
pub const PLANNERS_PER_ADDRESS: usize = 4;
/// The longest a statement may take to parse and plan, whatever its timeout: datafusion-postgres
/// plans it again where nothing can stop it, so a slow plan that ended just inside a long
/// timeout would hold a worker of the server as long again.
pub const PLANNING_LIMIT: Duration = Duration::from_secs(5);
/// How long a statement waits for a planner when all are busy.
pub const WAIT_FOR_PLANNER: Duration = Duration::from_secs(10);
/// Each planner's stack: what the server's workers have, which a statement at the depth bound
/// needs ([`crate::query::engine_runtime`]).
const PLANNER_STACK: usize = 32 * 1024 * 1024;

/// The planners of one server.
pub struct Planner {
    ctx: Arc<SessionContext>,
    slots: Arc<Semaphore>,
    /// Planner threads per client address, abandoned ones included (the same count the
    /// servers keep of sockets per address).
    per_address: Arc<PerAddress>,
}

impl Planner {
    pub fn new(ctx: Arc<SessionContext>) -> Planner {
        Planner {
            ctx,
            slots: Arc::new(Semaphore::new(PLANNERS)),
            per_address: Arc::new(PerAddress::default()),
        }
    }

    /// Parses and plans `sql`, a statement of the client at `address`, on a planner thread by
    /// `deadline` and within [`PLANNING_LIMIT`]. Only the bounds' refusals, the deadline, the
    /// limit, a lack of planners and a planner's failure are errors here: any other error of the
    /// parse or the plan is left to datafusion-postgres, which says it in its own words (and plans
    /// `SET`, cursors and the catalogue's functions, which plain DataFusion does not know).
    pub async fn vet(&self, sql: &str, address: IpAddr, deadline: Instant) -> PgWireResult<()> {
        let sql = sql.to_owned();
        self.on_a_planner(address, deadline, move |ctx| vet_here(ctx, &sql))
            .await
    }

    /// Optimises and plans `plan`, a prepared statement with its parameters' values in
    /// ([`super::parameters`]), the same way as [`Planner::vet`]: what the values let the
    /// optimiser fold is computed here, by the deadline.
    pub async fn vet_bound(
        &self,
        plan: LogicalPlan,
        address: IpAddr,
        deadline: Instant,
    ) -> PgWireResult<()> {
        self.on_a_planner(address, deadline, move |ctx| {
            on_this_thread(|| async {
                let _ = ctx.state().create_physical_plan(&plan).await;
            });
            Ok(())
        })
        .await
    }

    /// `work` on a planner thread of its own, waited for until `deadline` and at most
    /// [`PLANNING_LIMIT`], then abandoned.
    async fn on_a_planner(
        &self,
        address: IpAddr,
        deadline: Instant,
        work: impl FnOnce(&SessionContext) -> Result<(), QueryError> + Send + 'static,
    ) -> PgWireResult<()> {
        let claim = self.claim(address)?;
        let wait_until = deadline.min(Instant::now() + WAIT_FOR_PLANNER);
        let slot =
            match tokio::time::timeout_at(wait_until, self.slots.clone().acquire_owned()).await {
                Ok(Ok(slot)) => slot,
                Ok(Err(_)) | Err(_) => return Err(self.busy()),
            };
        let (answer, answered) = oneshot::channel();
        let ctx = self.ctx.clone();
        let spawned = std::thread::Builder::new()
            .name("jobsight-plan".into())
            .stack_size(PLANNER_STACK)
            .spawn(move || {
                let vetted = work(&ctx);
                // The slots are free when the work has ended, not when the client stopped
                // waiting.
                drop((slot, claim));
                let _ = answer.send(vetted);
            });
        if spawned.is_err() {
            return Err(self.busy());
        }
        let started = std::time::Instant::now();
        // datafusion-postgres plans the statement again on the server's worker, where nothing
        // can stop it: only a statement that planned quickly here may go on, whatever its own
        // timeout.
        let limit = Instant::now() + PLANNING_LIMIT;
        match tokio::time::timeout_at(deadline.min(limit), answered).await {
            Ok(Ok(Err(QueryError::TooComplex(why)))) => Err(super::too_complex(&why)),
            Ok(Ok(_)) => Ok(()),
            // The planner thread ended without an answer: it panicked.
            Ok(Err(_)) => Err(PgWireError::UserError(Box::new(ErrorInfo::new(
                "ERROR".into(),
                "XX000".into(),
                "internal error while planning the statement; it was not run".into(),
            )))),
            Err(_) => {
                eprintln!(
                    "jobsight serve: {address}: a statement was still being parsed or planned \
                     after {:.1} s; refused, its thread left to end by itself ({} of {PLANNERS} \
                     planners busy)",
                    started.elapsed().as_secs_f64(),
                    PLANNERS - self.slots.available_permits()
                );
                if deadline <= limit {
                    Err(super::timed_out())
                } else {
                    Err(super::too_complex(&format!(
                        "planning it took longer than {} s (what a statement may take to plan, \
                         whatever its timeout)",
                        PLANNING_LIMIT.as_secs()
                    )))
                }
            }
        }
    }

    /// One more planner for `address`, or 53000 when it has [`PLANNERS_PER_ADDRESS`] running:
    /// one client that abandons slow statements one after another takes half the planners, not all.
    fn claim(&self, address: IpAddr) -> PgWireResult<Counted> {
        self.per_address
            .admit(address, PLANNERS_PER_ADDRESS)
            .ok_or_else(|| {
                PgWireError::UserError(Box::new(ErrorInfo::new(
                    "ERROR".into(),
                    "53000".into(),
                    format!(
                        "{PLANNERS_PER_ADDRESS} statements of this address are still being \
                         planned (some past their deadline); try again when they end"
                    ),
                )))
            })
    }

    /// 53000 when no planner is free.
    fn busy(&self) -> PgWireError {
        PgWireError::UserError(Box::new(ErrorInfo::new(
            "ERROR".into(),
            "53000".into(),
            format!(
                "the server is parsing and planning {PLANNERS} statements at once (some may be \
                 past their deadline, still running); try again shortly"
            ),
        )))
    }
}

/// The budgeted parse, the depth check and DataFusion's plan and optimisation of each query of
/// `sql`, on this thread. Only [`QueryError::TooComplex`] is an error the caller acts on.
fn vet_here(ctx: &SessionContext, sql: &str) -> Result<(), QueryError> {
    // Statement by statement: a text DataFusion's parser refuses as a whole may still hold a
    // statement datafusion-postgres' parser takes and plans.
    let statements = match query::budget::parse_each(sql) {
        Err(QueryError::TooComplex(why)) => return Err(QueryError::TooComplex(why)),
        Err(_) => return Ok(()),
        Ok(statements) => statements,
    };
    let state = ctx.state();
    for statement in statements {
        let query = match &statement {
            DfStatement::Statement(s) => s,
            DfStatement::Explain(explain) => match &*explain.statement {
                DfStatement::Statement(s) => s,
                _ => continue,
            },
            _ => continue,
        };
        if let Some(why) = query::depth::too_complex(query) {
            return Err(QueryError::TooComplex(why));
        }
        // A cursor's query is planned where it is declared.
        let statement = match &**query {
            SqlStatement::Query(_) => statement,
            SqlStatement::Declare { stmts } => match stmts.iter().find_map(|d| d.for_query.clone())
            {
                Some(for_query) => DfStatement::Statement(Box::new(SqlStatement::Query(for_query))),
                None => continue,
            },
            _ => continue,
        };
        // The physical plan too: its optimiser folds constants (a `levenshtein` of two long
        // constants is computed here) and lays out every scan.
        on_this_thread(|| async {
            if let Ok(plan) = state.statement_to_plan(statement).await {
                let _ = state.create_physical_plan(&plan).await;
            }
        });
    }
    Ok(())
}

/// DataFusion's planning (async in its API, without a pause in fact) run to its end on this
/// thread. Without a runtime the work is skipped: datafusion-postgres plans it and says what
/// failed.
fn on_this_thread<F: Future<Output = ()>>(work: impl FnOnce() -> F) {
    if let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        runtime.block_on(work());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_address_holds_at_most_its_share_of_the_planners() {
        let planner = Planner::new(Arc::new(SessionContext::new()));
        let (one, other): (IpAddr, IpAddr) = ([192, 0, 2, 1].into(), [192, 0, 2, 2].into());
        let mut held: Vec<Counted> = (0..PLANNERS_PER_ADDRESS)
            .map(|_| planner.claim(one).unwrap())
            .collect();
        assert!(planner.claim(one).is_err());
        assert!(planner.claim(other).is_ok());
        held.pop();
        assert!(planner.claim(one).is_ok());
    }
}
