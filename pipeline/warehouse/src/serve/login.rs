//! Who may hold a connection before logging in, and for how long. A TCP connection that never
//! speaks held one of the server's slots for pgwire's fixed 60 s, so 32 silent sockets, renewed
//! each minute, kept every real client out without knowing the password. Here:
//! - a client has [`Settings::login_timeout`](super::Settings) (10 s) from its first byte to a
//!   finished login, then it is closed;
//! - sockets that have not logged in yet hold slots of their own (as many as `max_connections`),
//!   never the logged-in ones: a client takes a logged-in slot only at the last step of a
//!   correct login, so logged-in clients are always served first, and a flood of silent sockets
//!   only delays other logins;
//! - one address holds at most `max_logins_per_address` sockets that have not logged in;
//! - an address that logged in correctly within [`KNOWN_FOR`] has as many more slots for logging
//!   in, reserved for such addresses ([`KnownAddresses`]): a slow flood of sockets from many
//!   addresses (each under its own limit) fills the slots anyone may take and keeps them full by
//!   reconnecting, but it cannot log in, so it never reaches the reserved ones, and the clients
//!   that use the server (Grafana, the admins' desks) go on logging in. An address that never
//!   logged in before, or not since the server started, waits for the flood to end;
//! - a malformed first SCRAM message (which made pgwire panic and log a backtrace per
//!   connection) is refused as a protocol error, in one log line;
//! - the client's final SCRAM message must carry the nonce the server sent (RFC 5802 §5.1);
//!   pgwire 0.41 computes the proof over whatever nonce the client wrote, so a proof captured
//!   from an earlier login would be accepted again. [`NonceWatch`] keeps the nonce the server
//!   sends, and a final message with another one is a failed login;
//! - a failed login is answered late ([`Failures`]): 250 ms after the first failure of an address
//!   or a user name within [`FAILURE_WINDOW`], doubling with each to 4 s; an address with
//!   [`LOCKOUT_FAILURES`] failures in the window is refused for [`LOCKOUT`]. A user name is only
//!   delayed, never locked out: locking out the one real user would lock out everyone.

use std::collections::HashMap;
use std::fmt::Debug;
use std::net::{IpAddr, SocketAddr};

use super::admission;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use async_trait::async_trait;
use datafusion_postgres::pgwire;
use futures::Sink;
use pgwire::api::auth::StartupHandler;
use pgwire::api::{ClientInfo, PgWireConnectionState, SessionExtensions};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::response::TransactionStatus;
use pgwire::messages::startup::{Authentication, PasswordMessageFamily, SecretKey};
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage, ProtocolVersion};
use pgwire::tokio::tokio_rustls::rustls::pki_types::CertificateDer;
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};

/// How long failed logins are remembered.
pub const FAILURE_WINDOW: Duration = Duration::from_secs(600);
/// Failed logins of one address within the window that lock it out.
pub const LOCKOUT_FAILURES: u32 = 20;
/// How long a locked-out address is refused.
pub const LOCKOUT: Duration = Duration::from_secs(900);
/// The most addresses and names remembered; beyond it the oldest records are forgotten.
const MAX_REMEMBERED: usize = 100_000;

/// Failed logins per address and per user name.
#[derive(Default)]
pub struct Failures {
    records: Mutex<HashMap<Who, Record>>,
}

#[derive(Clone, PartialEq, Eq, Hash)]
enum Who {
    Address(IpAddr),
    User(String),
}

#[derive(Clone, Copy)]
struct Record {
    count: u32,
    first: Instant,
    locked_until: Option<Instant>,
}

impl Failures {
    /// How much longer `address` is locked out, if it is.
    pub fn locked(&self, address: IpAddr) -> Option<Duration> {
        let now = Instant::now();
        lock(&self.records)
            .get(&Who::Address(address))
            .and_then(|r| r.locked_until)
            .and_then(|until| until.checked_duration_since(now))
    }

    /// Counts a failed login of `user` from `address`; returns how long to wait before answering.
    pub fn failed(&self, address: IpAddr, user: &str) -> Duration {
        let now = Instant::now();
        let mut records = lock(&self.records);
        if records.len() >= MAX_REMEMBERED {
            records.retain(|_, r| now.duration_since(r.first) < FAILURE_WINDOW);
        }
        let mut count = |who: Who| -> u32 {
            let record = records.entry(who).or_insert(Record {
                count: 0,
                first: now,
                locked_until: None,
            });
            if now.duration_since(record.first) >= FAILURE_WINDOW {
                *record = Record {
                    count: 0,
                    first: now,
                    locked_until: record.locked_until,
                };
            }
            record.count += 1;
            record.count
        };
        let address_count = count(Who::Address(address));
        let user_count = count(Who::User(user.chars().take(64).collect()));
        if address_count >= LOCKOUT_FAILURES
            && let Some(record) = records.get_mut(&Who::Address(address))
        {
            record.locked_until = Some(now + LOCKOUT);
        }
        let worst = address_count.max(user_count).min(5);
        Duration::from_millis(250 << (worst - 1))
    }

    /// Forgets the failures of `address` after a correct login from it.
    pub fn succeeded(&self, address: IpAddr) {
        lock(&self.records).remove(&Who::Address(address));
    }
}

/// How long an address that logged in correctly keeps its reserved slots for logging in.
pub const KNOWN_FOR: Duration = Duration::from_secs(7 * 24 * 3600);
/// The most addresses remembered as known; beyond it the one that logged in longest ago goes.
const MAX_KNOWN: usize = 4096;

/// The addresses that logged in correctly within [`KNOWN_FOR`], held in memory only (a restarted
/// server knows none until they log in again).
#[derive(Default)]
pub struct KnownAddresses {
    last_login: Mutex<HashMap<IpAddr, Instant>>,
}

impl KnownAddresses {
    /// Whether `address` logged in correctly within [`KNOWN_FOR`].
    pub fn knows(&self, address: IpAddr) -> bool {
        lock(&self.last_login)
            .get(&address)
            .is_some_and(|at| at.elapsed() < KNOWN_FOR)
    }

    /// Remembers a correct login from `address`.
    pub fn logged_in(&self, address: IpAddr) {
        let mut known = lock(&self.last_login);
        if known.len() >= MAX_KNOWN && !known.contains_key(&address) {
            known.retain(|_, at| at.elapsed() < KNOWN_FOR);
            if known.len() >= MAX_KNOWN
                && let Some(oldest) = known.iter().min_by_key(|(_, at)| **at).map(|(a, _)| *a)
            {
                known.remove(&oldest);
            }
        }
        known.insert(address, Instant::now());
    }
}

/// Who may start logging in (see the module's description): not a locked-out address, at most
/// `max_logins_per_address` sockets of one address still logging in, and a slot for logging in:
/// `max_connections` that anyone may take, and as many again for addresses that logged in
/// correctly before (a flood that cannot log in never takes these). Each refusal is logged,
/// once per address per 10 s.
pub(super) struct Doorway {
    failures: Arc<Failures>,
    per_address: Arc<admission::PerAddress>,
    max_per_address: usize,
    max_connections: usize,
    logging_in: Arc<Semaphore>,
    logging_in_known: Arc<Semaphore>,
    pub(super) known: Arc<KnownAddresses>,
    refusals: Arc<admission::RefusalLog>,
}

impl Doorway {
    pub(super) fn new(
        settings: &super::Settings,
        failures: Arc<Failures>,
        refusals: Arc<admission::RefusalLog>,
    ) -> Doorway {
        let slots = || Arc::new(Semaphore::new(settings.max_connections));
        Doorway {
            failures,
            per_address: Arc::new(admission::PerAddress::default()),
            max_per_address: settings.max_logins_per_address,
            max_connections: settings.max_connections,
            logging_in: slots(),
            logging_in_known: slots(),
            known: Arc::new(KnownAddresses::default()),
            refusals,
        }
    }

    /// The address's count and the login slot `peer` holds until it has logged in, or `None`
    /// (logged) when it is refused.
    pub(super) fn admit(
        &self,
        peer: SocketAddr,
    ) -> Option<(admission::Counted, OwnedSemaphorePermit)> {
        if let Some(left) = self.failures.locked(peer.ip()) {
            self.refusals.note(super::SERVER, peer.ip(), || {
                format!(
                    "{peer}: refused, locked out for {} s more after {} failed logins",
                    left.as_secs(),
                    LOCKOUT_FAILURES
                )
            });
            return None;
        }
        let Some(counted) = self.per_address.admit(peer.ip(), self.max_per_address) else {
            self.refusals.note(super::SERVER, peer.ip(), || {
                format!(
                    "{peer}: refused, {} connections of this address are logging in \
                         (max_logins_per_address)",
                    self.max_per_address
                )
            });
            return None;
        };
        let reserved = self
            .known
            .knows(peer.ip())
            .then(|| self.logging_in_known.clone().try_acquire_owned().ok())
            .flatten();
        let Some(login_slot) =
            reserved.or_else(|| self.logging_in.clone().try_acquire_owned().ok())
        else {
            self.refusals.note(super::SERVER, peer.ip(), || {
                format!(
                    "{peer}: refused, {} connections are logging in (max_connections)",
                    self.max_connections
                )
            });
            return None;
        };
        Some((counted, login_slot))
    }
}

/// The metadata key set on a connection once its client has logged in; the query hooks refuse
/// every statement of a connection without it (pgwire reads on after a failed login).
pub const LOGGED_IN: &str = "jobsight.logged_in";

/// One connection's way through the login: the slot it takes at the login's last step, and the
/// message that tells the connection's task it may stay.
pub struct Gate {
    logged_in_slots: Arc<Semaphore>,
    /// Sent the logged-in slot once the client has logged in.
    done: Mutex<Option<oneshot::Sender<OwnedSemaphorePermit>>>,
    /// The slot taken for the login's last step, until the login ends.
    slot: Mutex<Option<OwnedSemaphorePermit>>,
    password_messages: AtomicU32,
    /// The nonce of the server's first SCRAM message, once sent.
    server_nonce: Mutex<Option<String>>,
}

impl Gate {
    /// A gate for one connection, and what its task waits on: the logged-in slot, sent once the
    /// client has logged in.
    pub fn new(
        logged_in_slots: Arc<Semaphore>,
    ) -> (Arc<Gate>, oneshot::Receiver<OwnedSemaphorePermit>) {
        let (done, logged_in) = oneshot::channel();
        let gate = Gate {
            logged_in_slots,
            done: Mutex::new(Some(done)),
            slot: Mutex::new(None),
            password_messages: AtomicU32::new(0),
            server_nonce: Mutex::new(None),
        };
        (Arc::new(gate), logged_in)
    }
}

/// pgwire's start-up handler (the SCRAM exchange) behind a [`Gate`].
pub struct LoginGate<H> {
    pub inner: Arc<H>,
    pub gate: Arc<Gate>,
    pub failures: Arc<Failures>,
}

#[async_trait]
impl<H: StartupHandler> StartupHandler for LoginGate<H> {
    async fn on_startup<C>(
        &self,
        client: &mut C,
        message: PgWireFrontendMessage,
    ) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        if let PgWireFrontendMessage::PasswordMessageFamily(message) = &message {
            match self.gate.password_messages.fetch_add(1, Ordering::SeqCst) {
                0 => {
                    if let PasswordMessageFamily::Raw(body) = message
                        && let Err(what) = sasl_initial_response_shape(body)
                    {
                        return Err(PgWireError::InvalidScramMessage(what.into()));
                    }
                }
                // The client's final SCRAM message: the proof. It must answer this connection's
                // nonce. Only now does the connection need a logged-in slot; none free refuses it
                // as PostgreSQL does.
                1 => {
                    if let PasswordMessageFamily::Raw(body) = message {
                        let sent = lock(&self.gate.server_nonce).clone();
                        if sent.is_none() || client_final_nonce(body) != sent.as_deref() {
                            return Err(self.failed(client).await);
                        }
                    }
                    let permit = self
                        .gate
                        .logged_in_slots
                        .clone()
                        .try_acquire_owned()
                        .map_err(|_| too_many_connections())?;
                    *lock(&self.gate.slot) = Some(permit);
                }
                _ => {}
            }
        }
        let address = client.socket_addr().ip();
        let mut watched = NonceWatch {
            client: &mut *client,
            server_nonce: &self.gate.server_nonce,
        };
        if let Err(error) = self.inner.on_startup(&mut watched, message).await {
            if matches!(error, PgWireError::InvalidPassword(_)) {
                return Err(self.failed(client).await);
            }
            return Err(error);
        }
        if matches!(client.state(), PgWireConnectionState::ReadyForQuery) {
            self.failures.succeeded(address);
            client
                .metadata_mut()
                .insert(LOGGED_IN.to_string(), "1".to_string());
            if let (Some(done), Some(slot)) =
                (lock(&self.gate.done).take(), lock(&self.gate.slot).take())
            {
                let _ = done.send(slot);
            }
        }
        Ok(())
    }
}

impl<H> LoginGate<H> {
    /// Counts a failed login of this client's address and user, waits the delay it earns, and
    /// gives the error to answer with: PostgreSQL's wrong-password error, whatever failed.
    async fn failed<C: ClientInfo>(&self, client: &C) -> PgWireError {
        let user = client
            .metadata()
            .get(pgwire::api::METADATA_USER)
            .cloned()
            .unwrap_or_default();
        let delay = self.failures.failed(client.socket_addr().ip(), &user);
        tokio::time::sleep(delay).await;
        PgWireError::InvalidPassword(user)
    }
}

/// The nonce (`r=`) of a SCRAM client-final message, if it has one.
pub fn client_final_nonce(body: &[u8]) -> Option<&str> {
    std::str::from_utf8(body)
        .ok()?
        .split(',')
        .find_map(|attribute| attribute.strip_prefix("r="))
}

/// The connection as pgwire's SCRAM handler sees it: everything passes through, and the nonce
/// of the server's first message (`r=` of a SASLContinue) is kept for the final message's check.
struct NonceWatch<'a, C> {
    client: &'a mut C,
    server_nonce: &'a Mutex<Option<String>>,
}

impl<C: Sink<PgWireBackendMessage> + Unpin> Sink<PgWireBackendMessage> for NonceWatch<'_, C> {
    type Error = C::Error;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), C::Error>> {
        Pin::new(&mut *self.client).poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, item: PgWireBackendMessage) -> Result<(), C::Error> {
        if let PgWireBackendMessage::Authentication(Authentication::SASLContinue(data)) = &item {
            *lock(self.server_nonce) = client_final_nonce(data).map(str::to_string);
        }
        Pin::new(&mut *self.client).start_send(item)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), C::Error>> {
        Pin::new(&mut *self.client).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), C::Error>> {
        Pin::new(&mut *self.client).poll_close(cx)
    }
}

impl<C: ClientInfo> ClientInfo for NonceWatch<'_, C> {
    fn socket_addr(&self) -> SocketAddr {
        self.client.socket_addr()
    }
    fn is_secure(&self) -> bool {
        self.client.is_secure()
    }
    fn protocol_version(&self) -> ProtocolVersion {
        self.client.protocol_version()
    }
    fn set_protocol_version(&mut self, version: ProtocolVersion) {
        self.client.set_protocol_version(version)
    }
    fn pid_and_secret_key(&self) -> (i32, SecretKey) {
        self.client.pid_and_secret_key()
    }
    fn set_pid_and_secret_key(&mut self, pid: i32, secret_key: SecretKey) {
        self.client.set_pid_and_secret_key(pid, secret_key)
    }
    fn state(&self) -> PgWireConnectionState {
        self.client.state()
    }
    fn set_state(&mut self, new_state: PgWireConnectionState) {
        self.client.set_state(new_state)
    }
    fn transaction_status(&self) -> TransactionStatus {
        self.client.transaction_status()
    }
    fn set_transaction_status(&mut self, new_status: TransactionStatus) {
        self.client.set_transaction_status(new_status)
    }
    fn metadata(&self) -> &HashMap<String, String> {
        self.client.metadata()
    }
    fn metadata_mut(&mut self) -> &mut HashMap<String, String> {
        self.client.metadata_mut()
    }
    fn session_extensions(&self) -> &SessionExtensions {
        self.client.session_extensions()
    }
    fn sni_server_name(&self) -> Option<&str> {
        self.client.sni_server_name()
    }
    fn client_certificates<'a>(&self) -> Option<&[CertificateDer<'a>]> {
        self.client.client_certificates()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// PostgreSQL's `too_many_connections`.
fn too_many_connections() -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new(
        "FATAL".into(),
        "53300".into(),
        "too many clients are logged in (serve.max_connections); try again later".into(),
    )))
}

/// Whether a SASLInitialResponse body is what pgwire's decoder reads without panicking: the
/// mechanism's name ending in NUL, a 4-byte length, then that many bytes (or -1 for none).
pub fn sasl_initial_response_shape(body: &[u8]) -> Result<(), &'static str> {
    let nul = body
        .iter()
        .position(|&b| b == 0)
        .ok_or("a SASL mechanism without its ending NUL")?;
    let rest = &body[nul + 1..];
    let length: [u8; 4] = rest
        .get(..4)
        .and_then(|l| l.try_into().ok())
        .ok_or("a SASL initial response without its length")?;
    match i32::from_be_bytes(length) {
        -1 => Ok(()),
        n if n >= 0 && n as usize <= rest.len() - 4 => Ok(()),
        _ => Err("a SASL initial response whose length is not what follows"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_first_scram_messages_are_told_apart() {
        let mut good = b"SCRAM-SHA-256\0".to_vec();
        good.extend(5i32.to_be_bytes());
        good.extend(b"n,,n=");
        assert_eq!(sasl_initial_response_shape(&good), Ok(()));
        let mut none = b"SCRAM-SHA-256\0".to_vec();
        none.extend((-1i32).to_be_bytes());
        assert_eq!(sasl_initial_response_shape(&none), Ok(()));
        for bad in [
            b"SCRAM-SHA-256".to_vec(),
            b"SCRAM-SHA-256\0\0\0".to_vec(),
            [b"M\0".as_slice(), &9i32.to_be_bytes(), b"short"].concat(),
            [b"M\0".as_slice(), &(-7i32).to_be_bytes()].concat(),
        ] {
            assert!(sasl_initial_response_shape(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn failures_are_answered_later_each_time_and_an_address_is_locked_out() {
        let failures = Failures::default();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let delays: Vec<u64> = (0..6)
            .map(|_| failures.failed(a, "jobsight").as_millis() as u64)
            .collect();
        assert_eq!(delays, [250, 500, 1000, 2000, 4000, 4000]);
        // Another address guessing the same user is delayed as the user is.
        assert_eq!(failures.failed(b, "jobsight").as_millis(), 4000);
        assert_eq!(
            failures.failed(b, "other").as_millis(),
            500,
            "b's second failure"
        );
        assert!(failures.locked(a).is_none());
        for _ in 6..LOCKOUT_FAILURES {
            failures.failed(a, "x");
        }
        let left = failures.locked(a).unwrap();
        assert!(left > LOCKOUT - Duration::from_secs(5), "{left:?}");
        assert!(failures.locked(b).is_none());
        failures.succeeded(b);
        assert!(failures.locked(b).is_none());
    }
}
