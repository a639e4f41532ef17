//! How `serve --http` holds its connections: so that no client holds a slot it does not use,
//! and SIGTERM ends the server within seconds whatever the clients do. Round two: `axum::serve`
//! had no header timeout and no connection cap, so 1,100 half-sent requests from one address
//! (past systemd's 1,024 open files) kept every signed-in user out for 45 s, and one half-sent
//! request kept SIGTERM from stopping the server (its graceful shutdown waited for it).
//!
//! Each connection is hyper's HTTP/1 server with a header deadline ([`HEADER_TIMEOUT`]: a
//! request's headers, and the wait for the next request on a kept-alive connection, must come
//! within it); an address holds at most [`PER_ADDRESS`] connections and all addresses together
//! at most half the process's open-file limit ([`total_connections`]); a connection past
//! either is closed at once, and refusals are logged once per address per interval. At
//! shutdown every connection is asked to finish its request, and those still open after
//! [`DRAIN`] are dropped.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use jobsight_warehouse::serve::admission::{PerAddress, RefusalLog};
use tower_service::Service;

/// How long a request's headers may take to arrive, and a kept-alive connection may wait
/// for the next request.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The connections one address may hold (a browser opens six).
pub const PER_ADDRESS: usize = 32;
/// How long requests in progress at shutdown may take to finish.
pub const DRAIN: Duration = Duration::from_secs(5);
/// What the log lines begin with.
const SERVER: &str = "jobsight serve --http";

/// The connections all addresses may hold: half the process's soft limit of open files (the
/// rest is the warehouse's files), between 32 and 4,096.
pub fn total_connections() -> usize {
    let soft = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|limits| {
            let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
            line.split_whitespace().nth(3)?.parse::<usize>().ok()
        })
        .unwrap_or(1024);
    (soft / 2).clamp(32, 4096)
}

/// Serves `router` on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()>,
) {
    let mut make = router.into_make_service_with_connect_info::<SocketAddr>();
    let per_address = Arc::new(PerAddress::default());
    let total = Arc::new(tokio::sync::Semaphore::new(total_connections()));
    let refusals = RefusalLog::default();
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    let nobody = std::net::Ipv4Addr::UNSPECIFIED.into();
                    refusals.note(SERVER, nobody, || format!("cannot accept a connection: {e}"));
                    // No file descriptor left: give the connections a moment to end.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        while connections.try_join_next().is_some() {}
        let Some(counted) = per_address.admit(peer.ip(), PER_ADDRESS) else {
            refusals.note(SERVER, peer.ip(), || {
                format!("{peer}: refused, this address holds {PER_ADDRESS} connections")
            });
            continue;
        };
        let Ok(slot) = total.clone().try_acquire_owned() else {
            refusals.note(SERVER, peer.ip(), || {
                format!("{peer}: refused, the server holds all the connections it may")
            });
            continue;
        };
        let Ok(service) = make.call(peer).await;
        let service = hyper::service::service_fn(move |request| {
            let mut service = service.clone();
            async move {
                let Ok(response) = service.call(request).await;
                Ok::<_, Infallible>(response)
            }
        });
        let mut stopping = stopping.clone();
        connections.spawn(async move {
            let _held = (counted, slot);
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT);
            let connection = http.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stopping.changed() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    let _ = stop.send(true);
    let drained = tokio::time::timeout(DRAIN, async {
        while connections.join_next().await.is_some() {}
    });
    if drained.await.is_err() {
        eprintln!(
            "{SERVER}: {} connections still open {} s after the stop were dropped",
            connections.len(),
            DRAIN.as_secs()
        );
        connections.abort_all();
    }
}
