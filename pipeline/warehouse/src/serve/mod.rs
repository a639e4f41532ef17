//! `jobsight serve --pg ADDR`: the warehouse over PostgreSQL's wire protocol, read-only, with a
//! password, so that `psql`, Grafana's PostgreSQL data source and BI tools query every table
//! where admins already work.
//!
//! The protocol and the `pg_catalog` answers psql and Grafana need come from
//! `datafusion-postgres`; the rest comes from here, because its defaults are unsafe for a
//! warehouse of users' jobs:
//! - **Authentication** ([`credentials`]): SCRAM-SHA-256, PostgreSQL's own default, against one
//!   user name and a password read from a secret file (owner-only permissions, or the server
//!   does not start). The password never crosses the wire; a wrong user fails exactly as a
//!   wrong password does, so user names cannot be probed. There is no default password.
//! - **Read-only** ([`read_only`]): every statement is checked as text
//!   ([`crate::query::refusal`]: one query, or `EXPLAIN` of one) and as a plan (DataFusion's
//!   `SQLOptions`: no DDL, DML, `COPY`, `SET`) before it runs, and refused with SQLSTATE 25006
//!   (`read_only_sql_transaction`) otherwise.
//!   What clients send to set up a session passes: `SET` of the client's own settings
//!   (`statement_timeout`, `DateStyle`, `application_name`, ...), `SHOW`, `BEGIN`/`COMMIT`,
//!   cursors over a query. A `SET` of DataFusion's settings would change them for every
//!   connection, so it is refused.
//! - **Freshness**: the session lists each table's folder at every query
//!   ([`crate::query::live_session`]), so a day the scheduler writes is visible to connections
//!   that are already open.
//! - **Connections** ([`login`]): a login within `pg_login_timeout_s`, slots for clients not
//!   logged in yet apart from the logged-in ones, at most `max_logins_per_address` of them per
//!   address, and as many again reserved for addresses that logged in before; statements too
//!   deep or too large to plan are refused ([`crate::query::depth`]).
//! - **Time** ([`timeout`]): every statement, planning and rows, within the client's
//!   `statement_timeout` and never longer than `statement_timeout_s`.
//!
//! This module starts the server and wires its handlers ([`serve_pg`], [`stop_signal`]);
//! statements are planned in [`planner`] and bound parameters read in [`parameters`]. The
//! `[serve]` section of the configuration, its defaults and checks, is [`settings`].
//!
//! The server has no state of its own: stopping it (SIGINT, SIGTERM) loses nothing.

pub use slurm_hooks::admission;
mod credentials;
mod login;
mod parameters;
mod planner;
mod read_only;
mod settings;
mod timeout;

pub use credentials::{Credentials, MIN_PASSWORD_CHARS};
pub use login::{LOCKOUT, LOCKOUT_FAILURES};
pub use settings::{
    DEFAULT_LOGIN_TIMEOUT_S, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_LOGINS_PER_ADDRESS,
    DEFAULT_STATEMENT_TIMEOUT_S, DEFAULT_USER, Options, Settings,
};

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion_postgres::datafusion_pg_catalog::pg_catalog::context::EmptyContextProvider;
use datafusion_postgres::datafusion_pg_catalog::setup_pg_catalog;
use datafusion_postgres::hooks::cursor::CursorStatementHook;
use datafusion_postgres::hooks::set_show::SetShowHook;
use datafusion_postgres::hooks::transactions::TransactionStatementHook;
use datafusion_postgres::pgwire;
use datafusion_postgres::{DfSessionService, QueryHook};
use pgwire::api::auth::DefaultServerParameterProvider;
use pgwire::api::auth::sasl::SASLAuthStartupHandler;
use pgwire::api::auth::sasl::scram::ScramAuth;
use pgwire::api::cancel::DefaultCancelHandler;
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::{ClientInfo, ConnectionManager, ErrorHandler, PgWireServerHandlers};
use pgwire::error::{ErrorInfo, PgWireError};

use crate::query::{self, QueryError};
use credentials::PasswordSource;
use read_only::ReadOnlyHook;

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
