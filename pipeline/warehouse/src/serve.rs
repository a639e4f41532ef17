//! `jobsight serve --pg ADDR`: the warehouse over PostgreSQL's wire protocol, read-only, with a
//! password, so that `psql`, Grafana's PostgreSQL data source and BI tools query every table
//! where admins already work.
//!
//! The protocol and the `pg_catalog` answers psql and Grafana need come from
//! `datafusion-postgres`; three things come from here, because its defaults are unsafe for a
//! warehouse of users' jobs:
//! - **Authentication**: SCRAM-SHA-256, PostgreSQL's own default, against one user name and a
//!   password read from a secret file (owner-only permissions, or the server does not start).
//!   The password never crosses the wire; a wrong user fails exactly as a wrong password does,
//!   so user names cannot be probed. There is no default password.
//! - **Read-only**: every statement is checked as text ([`crate::query::refusal`]: one query, or
//!   `EXPLAIN` of one) and as a plan (DataFusion's `SQLOptions`: no DDL, DML, `COPY`, `SET`)
//!   before it runs, and refused with SQLSTATE 25006 (`read_only_sql_transaction`) otherwise.
//!   What clients send to set up a session passes: `SET` of the client's own settings
//!   (`statement_timeout`, `DateStyle`, `application_name`, ...), `SHOW`, `BEGIN`/`COMMIT`,
//!   cursors over a query. A `SET` of DataFusion's settings would change them for every
//!   connection, so it is refused.
//! - **Freshness**: the session lists each table's folder at every query
//!   ([`crate::query::live_session`]), so a day the scheduler writes is visible to connections
//!   that are already open.
//!
//! The server has no state of its own: stopping it (SIGINT, SIGTERM) loses nothing.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::common::ParamValues;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{Set, Statement};
use datafusion_postgres::datafusion_pg_catalog::pg_catalog::context::EmptyContextProvider;
use datafusion_postgres::datafusion_pg_catalog::setup_pg_catalog;
use datafusion_postgres::hooks::HookClient;
use datafusion_postgres::hooks::cursor::CursorStatementHook;
use datafusion_postgres::hooks::set_show::SetShowHook;
use datafusion_postgres::hooks::transactions::TransactionStatementHook;
use datafusion_postgres::pgwire;
use datafusion_postgres::{DfSessionService, QueryHook};
use pgwire::api::auth::sasl::SASLAuthStartupHandler;
use pgwire::api::auth::sasl::scram::{
    SCRAM_ITERATIONS, ScramAuth, gen_salted_password, random_nonce,
};
use pgwire::api::auth::{AuthSource, DefaultServerParameterProvider, LoginInfo, Password};
use pgwire::api::cancel::DefaultCancelHandler;
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::results::Response;
use pgwire::api::{ClientInfo, ConnectionManager, ErrorHandler, PgWireServerHandlers};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use serde::Deserialize;

use crate::query::{self, QueryError};
use jobsight_base::options::{Invalid, invalid, within};

/// The user name clients log in with when the configuration names none.
pub const DEFAULT_USER: &str = "jobsight";
/// Connections served at once; one more is closed at once (each holds a share of the
/// session's bounded memory while its query runs).
pub const DEFAULT_MAX_CONNECTIONS: usize = 32;
/// The shortest password accepted from the secret file.
pub const MIN_PASSWORD_CHARS: usize = 12;

/// The `[serve]` section of the configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// The user name clients log in with.
    pub pg_user: Option<String>,
    /// A file holding the password (one line), readable by its owner only.
    pub pg_password_file: Option<PathBuf>,
    pub max_connections: Option<usize>,
}

/// The server's settings, checked. The password file is read when the server starts, not here:
/// `jobsight check` and every other command work without it.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub pg_user: String,
    pub pg_password_file: Option<PathBuf>,
    pub max_connections: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Options::default()
            .resolve()
            .unwrap_or_else(|_| unreachable!("the defaults are valid"))
    }
}

impl Options {
    pub fn resolve(self) -> Result<Settings, Invalid> {
        let pg_user = self.pg_user.unwrap_or_else(|| DEFAULT_USER.into());
        let plain = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
        if pg_user.is_empty() || pg_user.len() > 63 || !pg_user.chars().all(plain) {
            return Err(invalid(
                "serve.pg_user",
                format!("{pg_user:?} is not 1 to 63 letters, digits, '_', '-' or '.'"),
            ));
        }
        let max_connections = within(
            "serve.max_connections",
            self.max_connections.map(|n| n as u64),
            DEFAULT_MAX_CONNECTIONS as u64,
            1..=10_000,
        )? as usize;
        Ok(Settings {
            pg_user,
            pg_password_file: self.pg_password_file,
            max_connections,
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "no password file: set pg_password_file in the [serve] section of the configuration \
         (or --password-file); the server never runs without a password"
    )]
    NoPassword,
    #[error("password file {path}: {reason}")]
    Password { path: PathBuf, reason: String },
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    #[error("cannot wait for SIGINT or SIGTERM: {0}")]
    Signal(std::io::Error),
    #[error("cannot set up the PostgreSQL catalogue: {0}")]
    Catalogue(String),
    #[error(transparent)]
    Query(#[from] QueryError),
}

/// The one login the server accepts, kept as SCRAM's salted password: the plain password is
/// dropped once it is hashed.
#[derive(Debug)]
pub struct Credentials {
    user: String,
    salt: Vec<u8>,
    salted_password: Vec<u8>,
}

impl Credentials {
    /// Reads the password from `path`: its first line, of at least [`MIN_PASSWORD_CHARS`]
    /// characters, in a regular file that neither its group nor others may read (as ssh demands
    /// of a private key: a password every user of a login node can read protects nothing).
    pub fn load(user: &str, path: &Path) -> Result<Credentials, ServeError> {
        use std::os::unix::fs::MetadataExt;
        let fail = |reason: String| ServeError::Password {
            path: path.to_path_buf(),
            reason,
        };
        // The site chose this path in its configuration: a link there (into /etc/secrets, say)
        // is followed. A FIFO or a device is refused rather than read.
        let file =
            jobsight_base::safe_fs::open_regular(path, jobsight_base::safe_fs::Links::Follow)
                .map_err(|e| fail(e.to_string()))?;
        let mode = file.metadata().map_err(|e| fail(e.to_string()))?.mode();
        if mode & 0o077 != 0 {
            return Err(fail(format!(
                "group or others may access it (mode {:o}); chmod 600 it",
                mode & 0o777
            )));
        }
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::Read::take(file, 4096), &mut text)
            .map_err(|e| fail(format!("not readable as text: {e}")))?;
        let password = text.lines().next().unwrap_or("").trim_end_matches('\r');
        if password.chars().count() < MIN_PASSWORD_CHARS {
            return Err(fail(format!(
                "the password (the file's first line) has fewer than {MIN_PASSWORD_CHARS} \
                 characters"
            )));
        }
        Ok(Credentials::new(user, password))
    }

    /// Hashes `password` for SCRAM with a fresh random salt.
    pub fn new(user: &str, password: &str) -> Credentials {
        let salt = random_nonce().into_bytes();
        let salted_password = gen_salted_password(password, &salt, SCRAM_ITERATIONS);
        Credentials {
            user: user.to_string(),
            salt,
            salted_password,
        }
    }
}

/// SCRAM's password lookup: the configured user's salted password; for any other user a random
/// one, so the exchange runs to its end and fails as a wrong password does.
#[derive(Debug)]
struct PasswordSource(Arc<Credentials>);

#[async_trait]
impl AuthSource for PasswordSource {
    async fn get_password(&self, login: &LoginInfo) -> PgWireResult<Password> {
        let credentials = &self.0;
        if login.user() == Some(credentials.user.as_str()) {
            Ok(Password::new(
                Some(credentials.salt.clone()),
                credentials.salted_password.clone(),
            ))
        } else {
            let decoy = Credentials::new("", &random_nonce());
            Ok(Password::new(Some(decoy.salt), decoy.salted_password))
        }
    }
}

/// The SQLSTATE PostgreSQL answers a write in a read-only transaction with.
const READ_ONLY_SQLSTATE: &str = "25006";

fn refused(what: &str) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new(
        "ERROR".into(),
        READ_ONLY_SQLSTATE.into(),
        format!(
            "jobsight serve is read-only: {what} is refused (queries, EXPLAIN, SHOW, the client's \
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
struct ReadOnlyHook;

impl ReadOnlyHook {
    fn check(statement: &Statement) -> Option<PgWireError> {
        statement_refusal(statement).map(|what| refused(&what))
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
        _client: &mut dyn HookClient,
    ) -> Option<PgWireResult<Response>> {
        if let Some(error) = Self::check(statement) {
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
        _client: &(dyn ClientInfo + Send + Sync),
    ) -> Option<PgWireResult<LogicalPlan>> {
        Self::check(statement).map(Err)
    }

    async fn handle_extended_query(
        &self,
        statement: &Statement,
        logical_plan: &LogicalPlan,
        _params: &ParamValues,
        _session_context: &SessionContext,
        _client: &mut dyn HookClient,
    ) -> Option<PgWireResult<Response>> {
        Self::check(statement)
            .or_else(|| Self::check_plan(logical_plan))
            .map(Err)
    }
}

/// Every connection's handlers: a fresh SCRAM exchange per connection (it holds the
/// exchange's state), one query service shared by all.
struct Handlers {
    service: Arc<DfSessionService>,
    credentials: Arc<Credentials>,
    connections: Arc<ConnectionManager>,
}

impl PgWireServerHandlers for Handlers {
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        self.service.clone()
    }

    fn extended_query_handler(&self) -> Arc<impl ExtendedQueryHandler> {
        self.service.clone()
    }

    fn startup_handler(&self) -> Arc<impl pgwire::api::auth::StartupHandler> {
        let mut parameters = DefaultServerParameterProvider::default();
        // Tells clients up front that this database takes no writes.
        parameters.default_transaction_read_only = true;
        parameters.is_superuser = false;
        let scram = ScramAuth::new(Arc::new(PasswordSource(self.credentials.clone())));
        Arc::new(
            SASLAuthStartupHandler::new(Arc::new(parameters))
                .with_scram(scram)
                .with_connection_manager(self.connections.clone()),
        )
    }

    fn error_handler(&self) -> Arc<impl ErrorHandler> {
        Arc::new(LogErrors)
    }

    fn cancel_handler(&self) -> Arc<impl pgwire::api::cancel::CancelHandler> {
        Arc::new(DefaultCancelHandler::new(self.connections.clone()))
    }
}

/// Writes each error sent to a client on stderr, with the client's address: failed logins and
/// refused statements show up in the server's log.
struct LogErrors;

impl ErrorHandler for LogErrors {
    fn on_error<C: ClientInfo>(&self, client: &C, error: &mut PgWireError) {
        // The user of the startup message: SCRAM's own message carries none (psql sends "").
        let user = client
            .metadata()
            .get(pgwire::api::METADATA_USER)
            .map_or("?", String::as_str);
        let what = match error {
            PgWireError::UserError(info) => info.message.clone(),
            PgWireError::InvalidPassword(_) => "wrong password (or user)".into(),
            other => other.to_string(),
        };
        eprintln!(
            "jobsight serve: {} user {:?}: {what}",
            client.socket_addr(),
            user
        );
    }
}

/// Resolves when the process gets SIGINT or SIGTERM: the `shutdown` of [`serve_pg`] for a
/// command line.
pub async fn stop_signal() -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate())?;
    tokio::select! {
        interrupted = tokio::signal::ctrl_c() => interrupted,
        _ = terminate.recv() => Ok(()),
    }
}

/// Serves the warehouse at `data` on `addr` until `shutdown` resolves ([`stop_signal`] for a
/// command line). `listening` is told the bound address once connections are accepted (port 0
/// picks a free one). Connections open at shutdown are dropped with the runtime.
pub async fn serve_pg(
    data: &Path,
    addr: &str,
    settings: &Settings,
    listening: impl FnOnce(SocketAddr),
    shutdown: impl Future<Output = std::io::Result<()>>,
) -> Result<(), ServeError> {
    let path = settings
        .pg_password_file
        .as_deref()
        .ok_or(ServeError::NoPassword)?;
    let credentials = Arc::new(Credentials::load(&settings.pg_user, path)?);
    let ctx = query::live_session(data).await?;
    setup_pg_catalog(&ctx, "datafusion", EmptyContextProvider)
        .map_err(|e| ServeError::Catalogue(e.to_string()))?;
    let hooks: Vec<Arc<dyn QueryHook>> = vec![
        Arc::new(ReadOnlyHook),
        Arc::new(CursorStatementHook),
        Arc::new(SetShowHook),
        Arc::new(TransactionStatementHook),
    ];
    let handlers = Arc::new(Handlers {
        service: Arc::new(DfSessionService::new_with_hooks(Arc::new(ctx), hooks)),
        credentials,
        connections: Arc::new(ConnectionManager::new()),
    });
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind {
            addr: addr.to_string(),
            source,
        })?;
    let bound = listener.local_addr().map_err(|source| ServeError::Bind {
        addr: addr.to_string(),
        source,
    })?;
    listening(bound);
    let slots = Arc::new(tokio::sync::Semaphore::new(settings.max_connections));
    tokio::pin!(shutdown);
    loop {
        let (socket, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // A client that hung up before it was accepted, or no file descriptors left
                // for a moment: the server goes on.
                Err(e) => {
                    eprintln!("jobsight serve: cannot accept a connection: {e}");
                    continue;
                }
            },
            stopped = &mut shutdown => {
                stopped.map_err(ServeError::Signal)?;
                break;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            eprintln!(
                "jobsight serve: {peer}: refused, {} connections are open (max_connections)",
                settings.max_connections
            );
            continue;
        };
        let handlers = handlers.clone();
        tokio::spawn(async move {
            if let Err(e) = pgwire::tokio::process_socket(socket, None, handlers).await {
                eprintln!("jobsight serve: {peer}: {e}");
            }
            drop(slot);
        });
    }
    Ok(())
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

    #[test]
    fn a_password_file_others_can_read_or_too_short_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("pg-password");
        let set = |text: &str, mode: u32| {
            std::fs::write(&path, text).expect("write");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        };
        set("correct horse battery staple\n", 0o644);
        let e = Credentials::load("jobsight", &path).expect_err("world-readable");
        assert!(e.to_string().contains("chmod 600"), "{e}");
        set("short\n", 0o600);
        let e = Credentials::load("jobsight", &path).expect_err("too short");
        assert!(e.to_string().contains("fewer than 12"), "{e}");
        set("correct horse battery staple\nignored\n", 0o600);
        let c = Credentials::load("jobsight", &path).expect("loads");
        assert_eq!(c.user, "jobsight");
        assert_eq!(
            c.salted_password,
            gen_salted_password("correct horse battery staple", &c.salt, SCRAM_ITERATIONS)
        );
        let e = Credentials::load("jobsight", &dir.path().join("missing")).expect_err("missing");
        assert!(e.to_string().contains("missing"), "{e}");
    }

    #[test]
    fn user_names_are_checked() {
        let bad = Options {
            pg_user: Some("x; DROP".into()),
            ..Options::default()
        };
        assert!(bad.resolve().is_err());
        assert_eq!(Settings::default().pg_user, "jobsight");
    }
}
