//! The statement timeout. datafusion-postgres 0.19 accepts `SET statement_timeout` but times only
//! the planning: rows are computed while pgwire sends them, after its timer, so a long query ran
//! to its end. Here the whole statement, planning and every row, has a deadline: the client's
//! `statement_timeout` (kept in the connection's metadata by datafusion-postgres' `SET`), never
//! more than the server's `statement_timeout_s`. At the deadline the client gets PostgreSQL's
//! `query_canceled` (57014) and the result's stream is dropped, which stops DataFusion's work
//! (its tasks are aborted when their stream goes). Parsing and planning run without a pause, so
//! before datafusion-postgres parses a statement (simple or extended), [`crate::query::budget`]
//! refuses one whose parse would not end, and the [`Planner`] parses and plans it on a thread of
//! its own that is abandoned at the deadline.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use datafusion_postgres::DfSessionService;
use datafusion_postgres::pgwire;
use futures::{Sink, Stream, StreamExt};
use pgwire::api::Type;
use pgwire::api::portal::Format;
use pgwire::api::portal::Portal;
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::results::{FieldInfo, Response};
use pgwire::api::stmt::QueryParser;
use pgwire::api::store::PortalStore;
use pgwire::api::{ClientInfo, ClientPortalStore};
use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::PgWireBackendMessage;
use pgwire::messages::data::DataRow;
use tokio::time::Instant;

use super::planner::Planner;
use crate::query::QueryError;

/// Where datafusion-postgres keeps a connection's `statement_timeout`, in milliseconds.
const CLIENT_TIMEOUT_KEY: &str = "statement_timeout_ms";

/// The query service with every statement under its deadline.
pub struct Timed {
    pub inner: Arc<DfSessionService>,
    /// The server's ceiling (`serve.statement_timeout_s`).
    pub ceiling: Duration,
    /// Where each statement is parsed and planned first, by its deadline.
    pub planner: Arc<Planner>,
}

/// The deadline of a statement starting now: the client's timeout (0 or none: no timeout of its
/// own), at most the server's ceiling.
fn deadline(client: &impl ClientInfo, ceiling: Duration) -> Instant {
    let own = client
        .metadata()
        .get(CLIENT_TIMEOUT_KEY)
        .and_then(|ms| ms.parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map(Duration::from_millis);
    Instant::now() + own.map_or(ceiling, |own| own.min(ceiling))
}

/// `response` with its rows cut at `deadline`: the stream ends with [`super::timed_out`] then.
fn bounded(response: Response, deadline: Instant) -> Response {
    match response {
        Response::Query(mut query) => {
            let rows = std::mem::replace(&mut query.data_rows, Box::pin(futures::stream::empty()));
            query.data_rows = Box::pin(until(rows, deadline));
            Response::Query(query)
        }
        other => other,
    }
}

/// The rows of `rows` until `deadline`, then the timeout's error and nothing more.
fn until(
    rows: impl Stream<Item = PgWireResult<DataRow>> + Send + Unpin + 'static,
    deadline: Instant,
) -> impl Stream<Item = PgWireResult<DataRow>> + Send {
    futures::stream::unfold(Some(rows), move |rows| async move {
        let mut rows = rows?;
        tokio::select! {
            next = rows.next() => next.map(|row| (row, Some(rows))),
            () = tokio::time::sleep_until(deadline) => Some((Err(super::timed_out()), None)),
        }
    })
}

/// `statement_too_complex` for a statement whose parse would take longer than its size warrants
/// ([`crate::query::budget`]); anything else is left to datafusion-postgres' own parse.
fn over_budget(sql: &str) -> PgWireResult<()> {
    match crate::query::budget::check(sql) {
        Err(QueryError::TooComplex(why)) => Err(super::too_complex(&why)),
        _ => Ok(()),
    }
}

/// datafusion-postgres' parser of the extended protocol, after [`over_budget`] and the
/// [`Planner`] by the statement's deadline.
pub struct Budgeted<P> {
    inner: Arc<P>,
    planner: Arc<Planner>,
    ceiling: Duration,
}

#[async_trait]
impl<P: QueryParser + Send + Sync> QueryParser for Budgeted<P> {
    type Statement = P::Statement;

    async fn parse_sql<C>(
        &self,
        client: &C,
        sql: &str,
        types: &[Option<Type>],
    ) -> PgWireResult<Option<Self::Statement>>
    where
        C: ClientInfo + Unpin + Send + Sync,
    {
        over_budget(sql)?;
        self.planner
            .vet(
                sql,
                client.socket_addr().ip(),
                deadline(client, self.ceiling),
            )
            .await?;
        self.inner.parse_sql(client, sql, types).await
    }

    fn get_parameter_types(&self, statement: &Self::Statement) -> PgWireResult<Vec<Type>> {
        self.inner.get_parameter_types(statement)
    }

    fn get_result_schema(
        &self,
        statement: &Self::Statement,
        column_format: Option<&Format>,
    ) -> PgWireResult<Vec<FieldInfo>> {
        self.inner.get_result_schema(statement, column_format)
    }
}

#[async_trait]
impl SimpleQueryHandler for Timed {
    async fn do_query<C>(&self, client: &mut C, query: &str) -> PgWireResult<Vec<Response>>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        over_budget(query)?;
        let deadline = deadline(client, self.ceiling);
        self.planner
            .vet(query, client.socket_addr().ip(), deadline)
            .await?;
        let responses = tokio::time::timeout_at(
            deadline,
            SimpleQueryHandler::do_query(&*self.inner, client, query),
        )
        .await
        .map_err(|_| super::timed_out())??;
        Ok(responses
            .into_iter()
            .map(|response| bounded(response, deadline))
            .collect())
    }
}

#[async_trait]
impl ExtendedQueryHandler for Timed {
    type Statement = <DfSessionService as ExtendedQueryHandler>::Statement;
    type QueryParser = Budgeted<<DfSessionService as ExtendedQueryHandler>::QueryParser>;

    fn query_parser(&self) -> Arc<Self::QueryParser> {
        Arc::new(Budgeted {
            inner: self.inner.query_parser(),
            planner: self.planner.clone(),
            ceiling: self.ceiling,
        })
    }

    async fn do_query<C>(
        &self,
        client: &mut C,
        portal: &Portal<Self::Statement>,
        max_rows: usize,
    ) -> PgWireResult<Response>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let deadline = deadline(client, self.ceiling);
        // The values bound to its parameters may make the plan slow where the placeholders
        // were not: planned first by the deadline.
        if let Some(plan) = super::parameters::bound_plan(portal) {
            self.planner
                .vet_bound(plan, client.socket_addr().ip(), deadline)
                .await?;
        }
        let response = tokio::time::timeout_at(
            deadline,
            ExtendedQueryHandler::do_query(&*self.inner, client, portal, max_rows),
        )
        .await
        .map_err(|_| super::timed_out())??;
        Ok(bounded(response, deadline))
    }
}
