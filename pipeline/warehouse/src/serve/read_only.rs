//! The read-only rule: which statements the endpoint serves and which it refuses with SQLSTATE
//! 25006 (`read_only_sql_transaction`). Every statement is checked as text, and a query also as
//! a plan with DataFusion's read-only `SQLOptions`, before it runs. What clients send to set up
//! a session passes (`SET` of the client's own settings, `SHOW`, `BEGIN`/`COMMIT`, cursors over
//! a query); a `SET` of DataFusion's settings is refused, since it would change them for every
//! connection. A statement of a client that has not logged in is refused too.

use async_trait::async_trait;
use datafusion::common::ParamValues;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{Set, Statement};
use datafusion_postgres::QueryHook;
use datafusion_postgres::hooks::HookClient;
use datafusion_postgres::pgwire;
use pgwire::api::ClientInfo;
use pgwire::api::results::Response;
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};

use super::{login, too_complex};
use crate::query;

/// The SQLSTATE PostgreSQL answers a write in a read-only transaction with.
const READ_ONLY_SQLSTATE: &str = "25006";

fn refused(what: &str) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new(
        "ERROR".into(),
        READ_ONLY_SQLSTATE.into(),
        format!(
            "jobsight serve is read-only: {what} is refused (queries, EXPLAIN, SHOW, DESCRIBE, the client's \
             own SET, BEGIN/COMMIT and cursors over a query are served)"
        ),
    )))
}

/// The client settings `SET` may change: `datafusion-postgres` keeps them per connection.
/// Any other `SET` goes to DataFusion's configuration, which every connection shares.
const CLIENT_SETTINGS: [&str; 7] = [
    "statement_timeout",
    "datestyle",
    "intervalstyle",
    "bytea_output",
    "application_name",
    "extra_float_digits",
    "search_path",
];

/// Why a statement may not run on the endpoint, if it may not (see the module's description).
fn statement_refusal(statement: &Statement) -> Option<String> {
    match statement {
        Statement::Set(set) => match set {
            Set::SingleAssignment {
                scope: None,
                hivevar: false,
                variable,
                ..
            } => {
                let name = variable.to_string().to_lowercase();
                (!CLIENT_SETTINGS.contains(&name.as_str())).then(|| format!("SET {name}"))
            }
            Set::SetTimeZone { local: false, .. } => None,
            other => Some(format!("{other}")),
        },
        Statement::ShowVariable { .. }
        | Statement::ShowStatus { .. }
        | Statement::ShowCatalogs { .. }
        | Statement::ShowTables { .. }
        | Statement::ShowColumns { .. }
        | Statement::StartTransaction { .. }
        | Statement::Commit { .. }
        | Statement::Rollback { .. }
        | Statement::Fetch { .. }
        | Statement::Close { .. } => None,
        Statement::Declare { stmts } => stmts.iter().find_map(|declare| {
            let query = declare.for_query.as_ref()?;
            query::refusal(&Statement::Query(query.clone()))
        }),
        other => query::refusal(other),
    }
}

/// Runs first on every statement, in both of the protocol's query paths: refuses what
/// [`statement_refusal`] refuses, and checks a query's plan with DataFusion's read-only
/// `SQLOptions` before the default path runs it.
#[derive(Debug)]
pub(super) struct ReadOnlyHook;

impl ReadOnlyHook {
    fn check(statement: &Statement) -> Option<PgWireError> {
        statement_refusal(statement)
            .map(|what| refused(&what))
            .or_else(|| query::depth::too_complex(statement).map(|why| too_complex(&why)))
    }

    fn check_plan(plan: &LogicalPlan) -> Option<PgWireError> {
        query::read_only()
            .verify_plan(plan)
            .err()
            .map(|e| refused(&e.strip_backtrace()))
    }
}

#[async_trait]
impl QueryHook for ReadOnlyHook {
    async fn handle_simple_query(
        &self,
        statement: &Statement,
        session_context: &SessionContext,
        client: &mut dyn HookClient,
    ) -> Option<PgWireResult<Response>> {
        if let Some(error) = not_logged_in(&*client).or_else(|| Self::check(statement)) {
            return Some(Err(error));
        }
        // The default path plans the text again and runs it; a query's plan is checked here
        // first (planning does not run anything).
        if matches!(statement, Statement::Query(_) | Statement::Explain { .. }) {
            let planned = session_context
                .state()
                .statement_to_plan(datafusion::sql::parser::Statement::Statement(Box::new(
                    statement.clone(),
                )))
                .await;
            match planned {
                Ok(plan) => Self::check_plan(&plan).map(Err),
                // Planning errors are the query's own; the default path reports them.
                Err(_) => None,
            }
        } else {
            None
        }
    }

    async fn handle_extended_parse_query(
        &self,
        statement: &Statement,
        _session_context: &SessionContext,
        client: &(dyn ClientInfo + Send + Sync),
    ) -> Option<PgWireResult<LogicalPlan>> {
        not_logged_in(client)
            .or_else(|| Self::check(statement))
            .map(Err)
    }

    async fn handle_extended_query(
        &self,
        statement: &Statement,
        logical_plan: &LogicalPlan,
        _params: &ParamValues,
        _session_context: &SessionContext,
        client: &mut dyn HookClient,
    ) -> Option<PgWireResult<Response>> {
        not_logged_in(&*client)
            .or_else(|| Self::check(statement))
            .or_else(|| Self::check_plan(logical_plan))
            .map(Err)
    }
}

/// A statement of a connection whose client has not logged in: pgwire reads on after a failed
/// login (it closes only its sending side), so a query sent behind a wrong password would run.
fn not_logged_in(client: &(impl ClientInfo + ?Sized)) -> Option<PgWireError> {
    (!client.metadata().contains_key(login::LOGGED_IN)).then(|| {
        PgWireError::UserError(Box::new(ErrorInfo::new(
            "FATAL".into(),
            "28000".into(),
            "not logged in".into(),
        )))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn verdict(sql: &str) -> Option<String> {
        let statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).expect("parses");
        statement_refusal(&statements[0])
    }

    #[test]
    fn queries_and_session_set_up_pass_and_writes_are_refused() {
        for ok in [
            "SELECT 1",
            "WITH a AS (SELECT 1) SELECT * FROM a",
            "EXPLAIN SELECT * FROM jobs",
            "SET statement_timeout = 5000",
            "SET application_name = 'grafana'",
            "SET TIME ZONE 'UTC'",
            "SHOW server_version",
            "BEGIN",
            "COMMIT",
            "ROLLBACK",
            "DECLARE c CURSOR FOR SELECT * FROM jobs",
            "FETCH 10 FROM c",
            "CLOSE c",
        ] {
            assert_eq!(verdict(ok), None, "{ok}");
        }
        for (bad, form) in [
            ("DROP TABLE jobs", "DROP TABLE"),
            ("CREATE TABLE x (a INT)", "CREATE TABLE"),
            ("CREATE VIEW v AS SELECT 1", "CREATE VIEW"),
            ("INSERT INTO jobs VALUES (1)", "INSERT INTO"),
            ("COPY jobs TO '/tmp/x.csv'", "COPY jobs"),
            (
                "SET datafusion.execution.batch_size = 1",
                "SET datafusion.execution.batch_size",
            ),
            (
                "WITH a AS (SELECT 1) INSERT INTO jobs SELECT * FROM a",
                "INSERT",
            ),
            ("SELECT * INTO t FROM jobs", "SELECT ... INTO"),
            ("EXPLAIN DELETE FROM jobs", "DELETE FROM"),
            (
                "DECLARE c CURSOR FOR SELECT * INTO t FROM jobs",
                "SELECT ... INTO",
            ),
        ] {
            assert_eq!(verdict(bad).as_deref(), Some(form), "{bad}");
        }
    }
}
