//! The exporter's HTTP side, on `std::net` alone: a thread per connection (at most
//! [`MAX_CONNECTIONS`] at once) answers `GET /metrics` with a fresh scrape and `GET /` with a
//! pointer to it, and closes the connection after every answer (`Connection: close`, no
//! keep-alive).
//!
//! It is built so that no client can hold it up or bring it down:
//!
//! - the request line and headers must arrive within [`Limits::read_timeout`] in all (not per
//!   read, so a client dribbling a byte at a time gets no longer) and fit in
//!   [`Limits::max_request_bytes`]; a silent client holds its own thread for the timeout at
//!   most, and delays nobody (round two: one connection at a time, ten silent connections
//!   delayed a scrape by 20 s, twice Prometheus's scrape timeout);
//! - past [`MAX_CONNECTIONS`] open at once a connection is closed at once, logged once per 10 s
//!   with a count;
//! - the answer must be taken within [`Limits::write_timeout`] in all;
//! - only the request line is parsed; headers and any body are ignored; anything but
//!   `GET`/`HEAD` of `/metrics` or `/` is answered 400, 404, 405 or 431 and the connection closed;
//! - a failed accept or write is logged and the loop goes on; a panic while answering is caught.
//!
//! Scrapes are serialised by the caller (one collector): Prometheus scrapes a node every 15 to
//! 60 s, and a scrape of a node's jobs takes milliseconds. What is left: a local user who keeps
//! [`MAX_CONNECTIONS`] connections open, re-opening each every 2 s, can still have a scrape
//! refused; listen on an address only Prometheus reaches where that matters.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::admission::{PerAddress, RefusalLog};

use crate::exposition::CONTENT_TYPE;

/// How long and how much a client gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// For the request line and headers, in all.
    pub read_timeout: Duration,
    /// For the whole answer.
    pub write_timeout: Duration,
    /// Request line and headers, in all.
    pub max_request_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            read_timeout: Duration::from_secs(2),
            write_timeout: Duration::from_secs(5),
            max_request_bytes: 8 * 1024,
        }
    }
}

/// After an answer to a request that was not read to its end, the rest is read and dropped for
/// at most this long and this much: closing a socket with unread input sends a reset, which can
/// destroy the answer before the client has read it.
const DRAIN_TIME: Duration = Duration::from_millis(250);
const DRAIN_BYTES: usize = 64 * 1024;

const INDEX: &str = "jobsight-exporter: per-job cgroup figures of the Slurm jobs on this node.\n\
                     Prometheus text format at /metrics.\n";

/// The connections answered at once; more are closed at once.
pub const MAX_CONNECTIONS: usize = 64;

/// Answers the listener's connections, each on a thread of its own, for ever. `metrics` makes
/// the body of each `GET /metrics`; `log` gets one line per failure worth an admin's attention.
pub fn serve(
    listener: &TcpListener,
    limits: &Limits,
    metrics: &(dyn Fn() -> String + Sync),
    log: &(dyn Fn(&str) + Sync),
) {
    let open = Arc::new(PerAddress::default());
    let refusals = RefusalLog::default();
    // One key for every connection: `open` counts them all.
    let all = IpAddr::from(Ipv4Addr::UNSPECIFIED);
    std::thread::scope(|threads| {
        for stream in listener.incoming() {
            let stream = match stream {
                Ok(stream) => stream,
                Err(e) => {
                    refusals.note_with(
                        all,
                        |line| log(line),
                        || format!("cannot accept a connection: {e}"),
                    );
                    // Out of file descriptors or memory: wait rather than spin on the error.
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            };
            let Some(slot) = open.admit(all, MAX_CONNECTIONS) else {
                refusals.note_with(
                    all,
                    |line| log(line),
                    || format!("refused a connection: {MAX_CONNECTIONS} are open"),
                );
                continue;
            };
            let spawned = std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn_scoped(threads, move || {
                    let _slot = slot;
                    let answered = std::panic::catch_unwind(AssertUnwindSafe(|| {
                        serve_connection(stream, limits, metrics)
                    }));
                    match answered {
                        Ok(Ok(())) => {}
                        Ok(Err(message)) => log(&message),
                        Err(_) => {
                            log("internal error (panic) while answering a request; serving goes on")
                        }
                    }
                });
            if let Err(e) = spawned {
                log(&format!("cannot start a thread for a connection: {e}"));
            }
        }
    });
}

/// What came in before the answer.
#[derive(Debug)]
enum Head {
    /// The request line and headers, up to the blank line; `more` when bytes followed them.
    Complete {
        bytes: Vec<u8>,
        more: bool,
    },
    TooLarge,
    /// The client stopped sending before the blank line.
    Cut,
    /// Nothing came: a connection opened and closed (a port check).
    Nothing,
    TimedOut,
}

/// An answer.
#[derive(Debug)]
struct Response {
    status: u16,
    reason: &'static str,
    content_type: &'static str,
    extra_headers: &'static str,
    body: Vec<u8>,
    /// `HEAD`: the headers of the answer, not its body.
    head_only: bool,
}

impl Response {
    fn text(status: u16, reason: &'static str, body: &str) -> Response {
        Response {
            status,
            reason,
            content_type: "text/plain; charset=utf-8",
            extra_headers: "",
            body: body.as_bytes().to_vec(),
            head_only: false,
        }
    }
}

/// Reads one request from `stream`, answers it and closes. `Err` only for what an admin should
/// hear of (a client that would not take its answer); a client that sends nothing, too much or
/// too slowly gets its answer or a closed connection, and no log line.
pub fn serve_connection(
    mut stream: TcpStream,
    limits: &Limits,
    metrics: &dyn Fn() -> String,
) -> Result<(), String> {
    let peer = stream
        .peer_addr()
        .map_or_else(|_| "a client".to_string(), |a| a.to_string());
    let (response, unread_input) = match read_head(&mut stream, limits) {
        Ok(Head::Complete { bytes, more }) => (answer(&bytes, metrics), more),
        Ok(Head::TooLarge) => (
            Response::text(
                431,
                "Request Header Fields Too Large",
                "the request line and headers are too long\n",
            ),
            true,
        ),
        Ok(Head::Cut) => (
            Response::text(400, "Bad Request", "incomplete request\n"),
            false,
        ),
        Ok(Head::Nothing | Head::TimedOut) => return Ok(()),
        // A reset or an error on the client's side is the client's business.
        Err(_) => return Ok(()),
    };
    let sent = send(&mut stream, &response, limits);
    let _ = stream.shutdown(Shutdown::Write);
    if unread_input {
        drain(&mut stream);
    }
    sent.map_err(|e| format!("answering {peer} (HTTP {}): {e}", response.status))
}

/// Reads up to the blank line that ends the headers, within the limits.
fn read_head(stream: &mut TcpStream, limits: &Limits) -> io::Result<Head> {
    let deadline = Instant::now() + limits.read_timeout;
    let mut buffer: Vec<u8> = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Head::TimedOut);
        }
        stream.set_read_timeout(Some(left))?;
        let n = match stream.read(&mut chunk) {
            Ok(0) if buffer.is_empty() => return Ok(Head::Nothing),
            Ok(0) => return Ok(Head::Cut),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(Head::TimedOut);
            }
            Err(e) => return Err(e),
        };
        // The blank line may straddle two reads: search from a little before the new bytes.
        let search_from = buffer.len().saturating_sub(3);
        buffer.extend_from_slice(chunk.get(..n).unwrap_or(&[]));
        if let Some(end) = end_of_head(&buffer, search_from) {
            if end > limits.max_request_bytes {
                return Ok(Head::TooLarge);
            }
            let more = buffer.len() > end;
            buffer.truncate(end);
            return Ok(Head::Complete {
                bytes: buffer,
                more,
            });
        }
        if buffer.len() >= limits.max_request_bytes {
            return Ok(Head::TooLarge);
        }
    }
}

/// The index just past the first blank line (`\r\n\r\n`, or `\n\n` from a hand-typed request)
/// at or after `from`.
fn end_of_head(buffer: &[u8], from: usize) -> Option<usize> {
    (from..buffer.len()).find_map(|i| {
        let rest = buffer.get(i..)?;
        if rest.starts_with(b"\n\n") {
            Some(i + 2)
        } else if rest.starts_with(b"\n\r\n") {
            Some(i + 3)
        } else {
            None
        }
    })
}

/// The answer to a complete request: only its first line is looked at.
fn answer(head: &[u8], metrics: &dyn Fn() -> String) -> Response {
    let bad = || Response::text(400, "Bad Request", "expected: GET /metrics HTTP/1.1\n");
    let first_line = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let Ok(line) = std::str::from_utf8(first_line) else {
        return bad();
    };
    let mut parts = line.strip_suffix('\r').unwrap_or(line).split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return bad();
    };
    let is_token = !method.is_empty() && method.bytes().all(|b| b.is_ascii_uppercase());
    if !is_token || !target.starts_with('/') || !matches!(version, "HTTP/1.0" | "HTTP/1.1") {
        return bad();
    }
    let head_only = match method {
        "GET" => false,
        "HEAD" => true,
        _ => {
            let mut response = Response::text(405, "Method Not Allowed", "only GET and HEAD\n");
            response.extra_headers = "Allow: GET, HEAD\r\n";
            return response;
        }
    };
    let path = target.split('?').next().unwrap_or(target);
    let mut response = match path {
        "/metrics" => Response {
            status: 200,
            reason: "OK",
            content_type: CONTENT_TYPE,
            extra_headers: "",
            body: metrics().into_bytes(),
            head_only: false,
        },
        "/" => Response::text(200, "OK", INDEX),
        _ => Response::text(404, "Not Found", "not found; the metrics are at /metrics\n"),
    };
    response.head_only = head_only;
    response
}

/// Writes the answer in one piece (status line, headers, body) before the write deadline.
fn send(stream: &mut TcpStream, response: &Response, limits: &Limits) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n",
        response.status,
        response.reason,
        response.content_type,
        response.body.len(),
        response.extra_headers,
    );
    let mut bytes = head.into_bytes();
    if !response.head_only {
        bytes.extend_from_slice(&response.body);
    }
    let deadline = Instant::now() + limits.write_timeout;
    let mut rest: &[u8] = &bytes;
    while !rest.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the client did not take the answer within {:?}",
                    limits.write_timeout
                ),
            ));
        }
        stream.set_write_timeout(Some(left))?;
        match stream.write(rest) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => rest = rest.get(n..).unwrap_or(&[]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads and drops what the client still sends, within [`DRAIN_TIME`] and [`DRAIN_BYTES`].
fn drain(stream: &mut TcpStream) {
    let deadline = Instant::now() + DRAIN_TIME;
    let mut chunk = [0u8; 4096];
    let mut drained = 0;
    while drained < DRAIN_BYTES {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => drained += n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    /// A server on a free loopback port with short timeouts, answering a fixed body.
    fn start() -> (SocketAddr, Limits) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let limits = Limits {
            read_timeout: Duration::from_millis(300),
            ..Limits::default()
        };
        let server_limits = limits.clone();
        std::thread::spawn(move || {
            let scrapes = std::sync::atomic::AtomicU64::new(0);
            let metrics = || {
                let scrape = scrapes.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                format!("jobsight_exporter_jobs {scrape}\n")
            };
            serve(&listener, &server_limits, &metrics, &|_: &str| {});
        });
        (address, limits)
    }

    /// Sends `request` and returns what came back until the server closed.
    fn ask(address: SocketAddr, request: &[u8]) -> String {
        let mut stream = TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.write_all(request).unwrap();
        // Done sending: a request cut short is then seen as such, not waited for.
        stream.shutdown(Shutdown::Write).unwrap();
        let mut answer = Vec::new();
        // A reset after the answer arrived still leaves the answer in `answer`.
        let _ = stream.read_to_end(&mut answer);
        String::from_utf8_lossy(&answer).into_owned()
    }

    #[test]
    fn metrics_are_served_and_everything_else_refused() {
        let (address, _) = start();
        let ok = ask(
            address,
            b"GET /metrics HTTP/1.1\r\nHost: node1:9306\r\nAccept: */*\r\n\r\n",
        );
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
        assert!(ok.contains("\r\nConnection: close\r\n"));
        assert!(ok.ends_with("\r\n\r\njobsight_exporter_jobs 1\n"), "{ok}");
        let length = "jobsight_exporter_jobs 1\n".len();
        assert!(ok.contains(&format!("\r\nContent-Length: {length}\r\n")));

        let head = ask(address, b"HEAD /metrics?x=1 HTTP/1.0\r\n\r\n");
        assert!(
            head.starts_with("HTTP/1.1 200 OK\r\n") && head.ends_with("\r\n\r\n"),
            "{head}"
        );
        let index = ask(address, b"GET / HTTP/1.1\n\n");
        assert!(index.starts_with("HTTP/1.1 200 OK\r\n") && index.contains("/metrics"));

        let not_found = ask(address, b"GET /metricsx HTTP/1.1\r\n\r\n");
        assert!(not_found.starts_with("HTTP/1.1 404 "), "{not_found}");
        let post = ask(
            address,
            b"POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
        );
        assert!(post.starts_with("HTTP/1.1 405 ") && post.contains("\r\nAllow: GET, HEAD\r\n"));
        for garbage in [
            &b"hello\r\n\r\n"[..],
            b"GET /metrics\r\n\r\n",
            b"GET metrics HTTP/1.1\r\n\r\n",
            b"GET /metrics HTTP/2.0\r\n\r\n",
            b"GET  /metrics HTTP/1.1\r\n\r\n",
            b"\xff\xfe /metrics HTTP/1.1\r\n\r\n",
            b"\r\n\r\n",
            b"GET /metrics HTTP/1.1\r\n",
        ] {
            let answer = ask(address, garbage);
            assert!(answer.starts_with("HTTP/1.1 400 "), "{garbage:?}: {answer}");
        }
        // The server lives on, and scraped only for the GET and HEAD of /metrics.
        let again = ask(address, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(again.ends_with("jobsight_exporter_jobs 3\n"), "{again}");
    }

    #[test]
    fn an_oversized_request_is_refused() {
        let (address, _) = start();
        let mut huge = b"GET /metrics HTTP/1.1\r\nX-Padding: ".to_vec();
        huge.extend(std::iter::repeat_n(b'a', 9000));
        let answer = ask(address, &huge);
        assert!(answer.starts_with("HTTP/1.1 431 "), "{answer}");
        // Complete, but too long.
        huge.extend_from_slice(b"\r\n\r\n");
        let answer = ask(address, &huge);
        assert!(answer.starts_with("HTTP/1.1 431 "), "{answer}");
        let fine = ask(address, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert!(fine.starts_with("HTTP/1.1 200 "), "{fine}");
    }

    /// Round two: ten silent connections delayed a scrape by 20 s. Now they hold their own
    /// threads, the scrape is answered at once beside them, and a half-sent request gets a
    /// closed connection at its timeout; past the cap a connection is closed at once.
    #[test]
    fn silent_clients_delay_no_scrape() {
        let (address, limits) = start();
        let silent: Vec<TcpStream> = (0..10)
            .map(|_| TcpStream::connect(address).unwrap())
            .collect();
        let mut slow = TcpStream::connect(address).unwrap();
        slow.write_all(b"GET /met").unwrap();
        let started = Instant::now();
        let answer = ask(address, b"GET /metrics HTTP/1.1\r\n\r\n");
        let waited = started.elapsed();
        assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
        assert!(waited < limits.read_timeout, "{waited:?}");
        // The half-sent request got nothing but a closed connection.
        let mut rest = Vec::new();
        let _ = slow.read_to_end(&mut rest);
        assert!(rest.is_empty());
        drop(silent);
        std::thread::sleep(limits.read_timeout * 2);
        let held: Vec<TcpStream> = (0..MAX_CONNECTIONS)
            .map(|_| TcpStream::connect(address).unwrap())
            .collect();
        std::thread::sleep(Duration::from_millis(50));
        let mut past = TcpStream::connect(address).unwrap();
        past.set_read_timeout(Some(limits.read_timeout / 3))
            .unwrap();
        let closed = match past.read(&mut [0u8; 1]) {
            Ok(n) => n == 0,
            Err(e) => !matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
        };
        assert!(closed, "closed at once");
        drop(held);
    }

    #[test]
    fn the_end_of_the_headers_is_found_across_reads() {
        assert_eq!(end_of_head(b"GET / HTTP/1.1\r\n\r\n", 0), Some(18));
        assert_eq!(end_of_head(b"GET / HTTP/1.1\n\nbody", 0), Some(16));
        assert_eq!(end_of_head(b"GET / HTTP/1.1\r\n", 0), None);
        assert_eq!(end_of_head(b"", 0), None);
        assert_eq!(end_of_head(b"ab", 5), None);
    }
}
