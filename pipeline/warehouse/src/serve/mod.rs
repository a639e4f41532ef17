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
//! - **Connections** ([`login`]): a login within `pg_login_timeout_s`, slots for clients not
//!   logged in yet apart from the logged-in ones, at most `max_logins_per_address` of them per
//!   address, and as many again reserved for addresses that logged in before; statements too deep or too large to plan are refused ([`crate::query::depth`]).
//! - **Time** ([`timeout`]): every statement, planning and rows, within the client's
//!   `statement_timeout` and never longer than `statement_timeout_s`.
//!
//! The server has no state of its own: stopping it (SIGINT, SIGTERM) loses nothing.

pub use slurm_hooks::admission;
mod login;
mod parameters;
mod planner;
mod timeout;

pub use login::{LOCKOUT, LOCKOUT_FAILURES};

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
/// Seconds a client has from connecting to a finished login.
pub const DEFAULT_LOGIN_TIMEOUT_S: u64 = 10;
/// The longest a statement may run, whatever the client sets.
pub const DEFAULT_STATEMENT_TIMEOUT_S: u64 = 300;
/// Sockets one address may hold that have not logged in yet.
pub const DEFAULT_MAX_LOGINS_PER_ADDRESS: usize = 4;
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
    pub pg_login_timeout_s: Option<u64>,
    pub max_logins_per_address: Option<usize>,
    pub statement_timeout_s: Option<u64>,
}

/// The server's settings, checked. The password file is read when the server starts, not here:
/// `jobsight check` and every other command work without it.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub pg_user: String,
    pub pg_password_file: Option<PathBuf>,
    pub max_connections: usize,
    /// From a client's connection to its finished login; then it is closed.
    pub login_timeout: std::time::Duration,
    pub max_logins_per_address: usize,
    /// The longest a statement runs; a client's `statement_timeout` may only shorten it.
    pub statement_timeout: std::time::Duration,
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
        let login_timeout_s = within(
            "serve.pg_login_timeout_s",
            self.pg_login_timeout_s,
            DEFAULT_LOGIN_TIMEOUT_S,
            1..=300,
        )?;
        let max_logins_per_address = within(
            "serve.max_logins_per_address",
            self.max_logins_per_address.map(|n| n as u64),
            DEFAULT_MAX_LOGINS_PER_ADDRESS as u64,
            1..=10_000,
        )? as usize;
        let statement_timeout_s = within(
            "serve.statement_timeout_s",
            self.statement_timeout_s,
            DEFAULT_STATEMENT_TIMEOUT_S,
            1..=86_400,
        )?;
        Ok(Settings {
            statement_timeout: std::time::Duration::from_secs(statement_timeout_s),
            pg_user,
            pg_password_file: self.pg_password_file,
            max_connections,
            login_timeout: std::time::Duration::from_secs(login_timeout_s),
            max_logins_per_address,
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

/// SCRAM's password lookup: the configured user's salted password; for any other user a decoy,
/// so the exchange runs to its end and fails as a wrong password does. The decoy is the same on
/// every attempt for the same name, as the real user's salt is (a salt that changed each time
/// told an unknown name from the real one), of the same form, and as quick to make as the real
/// one is to look up (no key derivation a stopwatch could tell apart).
#[derive(Debug)]
struct PasswordSource {
    credentials: Arc<Credentials>,
    /// This run's secret behind the decoys.
    decoy_key: [u8; 32],
}

impl PasswordSource {
    fn new(credentials: Arc<Credentials>) -> PasswordSource {
        use sha2::Digest;
        // Two nonces of pgwire's random source: 36 random bytes.
        let seed = format!("{}{}", random_nonce(), random_nonce());
        PasswordSource {
            credentials,
            decoy_key: sha2::Sha256::digest(seed.as_bytes()).into(),
        }
    }

    /// The decoy salt and salted password of `user`: keyed hashes of the name, the salt in the
    /// form of a real one (18 bytes in base64, as `random_nonce` gives).
    fn decoy(&self, user: &str) -> (Vec<u8>, Vec<u8>) {
        use sha2::Digest;
        let keyed = |purpose: &str| -> [u8; 32] {
            let mut hash = sha2::Sha256::new();
            hash.update(self.decoy_key);
            hash.update(purpose.as_bytes());
            hash.update([0]);
            hash.update(user.as_bytes());
            hash.finalize().into()
        };
        let salt = base64(&keyed("salt")[..18]).into_bytes();
        (salt, keyed("salted password").to_vec())
    }
}

/// Standard base64 of `bytes`, whose length is a multiple of 3 (no padding needed).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    bytes
        .chunks(3)
        .flat_map(|c| {
            let n = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
            [18, 12, 6, 0].map(|shift| ALPHABET[(n >> shift) as usize & 63] as char)
        })
        .collect()
}

#[async_trait]
impl AuthSource for PasswordSource {
    async fn get_password(&self, login: &LoginInfo) -> PgWireResult<Password> {
        let credentials = &self.credentials;
        if login.user() == Some(credentials.user.as_str()) {
            Ok(Password::new(
                Some(credentials.salt.clone()),
                credentials.salted_password.clone(),
            ))
        } else {
            let (salt, salted_password) = self.decoy(login.user().unwrap_or(""));
            Ok(Password::new(Some(salt), salted_password))
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
            "jobsight serve is read-only: {what} is refused (queries, EXPLAIN, SHOW, DESCRIBE, the client's \
             own SET, BEGIN/COMMIT and cursors over a query are served)"
        ),
    )))
}

/// PostgreSQL's answer to a statement past its timeout.
fn timed_out() -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new(
        "ERROR".into(),
        "57014".into(),
        "canceling statement due to statement timeout".into(),
    )))
}

/// The error for a statement too deep or too large to plan ([`query::depth`]): PostgreSQL's
/// `statement_too_complex`.
fn too_complex(why: &str) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new(
        "ERROR".into(),
        "54001".into(),
        format!("the statement is too complex to plan: {why}"),
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

/// One connection's handlers: the shared ones, with its start-up behind its [`login::Gate`].
struct Connection {
    shared: Arc<Handlers>,
    gate: Arc<login::Gate>,
}

impl PgWireServerHandlers for Connection {
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        self.shared.simple_query_handler()
    }

    fn extended_query_handler(&self) -> Arc<impl ExtendedQueryHandler> {
        self.shared.extended_query_handler()
    }

    fn startup_handler(&self) -> Arc<impl pgwire::api::auth::StartupHandler> {
        Arc::new(login::LoginGate {
            inner: self.shared.startup_handler(),
            gate: self.gate.clone(),
            failures: self.shared.failures.clone(),
        })
    }

    fn error_handler(&self) -> Arc<impl ErrorHandler> {
        self.shared.error_handler()
    }

    fn cancel_handler(&self) -> Arc<impl pgwire::api::cancel::CancelHandler> {
        self.shared.cancel_handler()
    }
}

/// Every connection's handlers: a fresh SCRAM exchange per connection (it holds the
/// exchange's state), one query service shared by all.
struct Handlers {
    service: Arc<timeout::Timed>,
    passwords: Arc<PasswordSource>,
    connections: Arc<ConnectionManager>,
    /// Failed logins, of every connection.
    failures: Arc<login::Failures>,
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
        let scram = ScramAuth::new(self.passwords.clone());
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

/// Resolves once the client at the other end of `socket` has closed it: checked every second
/// without reading (a peek at a socket the runtime keeps non-blocking).
async fn hung_up(socket: std::net::TcpStream) {
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        match socket.peek(&mut [0u8; 1]) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return,
        }
    }
}

/// What the server's log lines begin with.
const SERVER: &str = "jobsight serve";

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
    let ctx = Arc::new(query::live_session(data).await?);
    setup_pg_catalog(&ctx, "datafusion", EmptyContextProvider)
        .map_err(|e| ServeError::Catalogue(e.to_string()))?;
    let hooks: Vec<Arc<dyn QueryHook>> = vec![
        Arc::new(ReadOnlyHook),
        Arc::new(CursorStatementHook),
        Arc::new(SetShowHook),
        Arc::new(TransactionStatementHook),
    ];
    let handlers = Arc::new(Handlers {
        service: Arc::new(timeout::Timed {
            planner: Arc::new(planner::Planner::new(ctx.clone())),
            inner: Arc::new(DfSessionService::new_with_hooks(ctx, hooks)),
            ceiling: settings.statement_timeout,
        }),
        // One for the server's life: a decoy must not change from one attempt to the next.
        passwords: Arc::new(PasswordSource::new(credentials)),
        connections: Arc::new(ConnectionManager::new()),
        failures: Arc::new(login::Failures::default()),
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
    // Logged-in clients' slots, and those of clients still logging in: apart, so that sockets
    // that never log in cannot keep a logged-in client out ([`login`]).
    let slots = Arc::new(tokio::sync::Semaphore::new(settings.max_connections));
    let refusals = Arc::new(admission::RefusalLog::default());
    let doorway = login::Doorway::new(settings, handlers.failures.clone(), refusals.clone());
    let known = doorway.known.clone();
    let login_timeout = settings.login_timeout;
    tokio::pin!(shutdown);
    loop {
        let (socket, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // A client that hung up before it was accepted, or no file descriptors left
                // for a moment: the server goes on.
                Err(e) => {
                    let nobody = std::net::Ipv4Addr::UNSPECIFIED.into();
                    refusals.note(SERVER, nobody, || format!("cannot accept a connection: {e}"));
                    // No file descriptor left: give the connections a moment to end.
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
            },
            stopped = &mut shutdown => {
                stopped.map_err(ServeError::Signal)?;
                break;
            }
        };
        let Some((counted, login_slot)) = doorway.admit(peer) else {
            continue;
        };
        let (gate, logged_in) = login::Gate::new(slots.clone());
        let connection = Arc::new(Connection {
            shared: handlers.clone(),
            gate,
        });
        // A second handle on the socket, to see the client hang up while its statement runs
        // (pgwire reads nothing then, so it would run on to its timeout).
        let watch = std::os::fd::AsFd::as_fd(&socket)
            .try_clone_to_owned()
            .map(std::net::TcpStream::from);
        let closed = refusals.clone();
        let known = known.clone();
        tokio::spawn(async move {
            let served = pgwire::tokio::process_socket(socket, None, connection);
            tokio::pin!(served);
            let login = tokio::time::timeout(login_timeout, logged_in);
            let ended = tokio::select! {
                ended = &mut served => ended,
                login = login => match login {
                    // Logged in: the login's slots go to the next client, the logged-in slot
                    // stays with this one until it leaves.
                    Ok(Ok(slot)) => {
                        known.logged_in(peer.ip());
                        drop((login_slot, counted));
                        let ended = match watch {
                            // Dropping the connection drops its statement's stream, which stops
                            // the statement's work.
                            Ok(watch) => tokio::select! {
                                ended = &mut served => ended,
                                () = hung_up(watch) => Ok(()),
                            },
                            Err(_) => served.await,
                        };
                        drop(slot);
                        ended
                    }
                    _ => {
                        closed.note(SERVER, peer.ip(), || {
                            format!(
                                "{peer}: closed, no login within {} s (pg_login_timeout_s)",
                                login_timeout.as_secs()
                            )
                        });
                        return;
                    }
                },
            };
            if let Err(e) = ended {
                eprintln!("jobsight serve: {peer}: {e}");
            }
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    /// An unknown name's salt is the same on every attempt, as the real user's is, and looks
    /// like one: the review told names apart by a salt that changed each time.
    #[test]
    fn decoys_are_stable_per_name_and_look_real() {
        let source = PasswordSource::new(Arc::new(Credentials::new("jobsight", "a long password")));
        let (salt, salted) = source.decoy("mallory");
        assert_eq!(source.decoy("mallory"), (salt.clone(), salted.clone()));
        assert_ne!(source.decoy("eve").0, salt);
        let real = &source.credentials;
        assert_eq!(salt.len(), real.salt.len());
        assert_eq!(salted.len(), real.salted_password.len());
        assert!(
            salt.iter()
                .all(|b| b.is_ascii_alphanumeric() || b"+/".contains(b))
        );
        // Another run of the server has other decoys (the key is random).
        let other = PasswordSource::new(Arc::new(Credentials::new("jobsight", "a long password")));
        assert_ne!(other.decoy("mallory").0, salt);
        assert_eq!(base64(b"Man"), "TWFu");
    }

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
