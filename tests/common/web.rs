//! The web interface's test side: `jobsight serve --http` started as a site starts it, and an
//! HTTP client that plays the site's sign-in proxy (connecting from 127.0.0.2, the address the
//! server trusts, with the user header) or anyone else (127.0.0.1). Plain HTTP/1.1 by hand over
//! a socket bound to the chosen address, so the test decides which address the server sees.

// Each suite uses its part of these helpers.
#![allow(dead_code)]

use std::io::{BufRead, Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The address the tests' sign-in proxy connects from, and the one nobody trusts.
pub const PROXY: [u8; 4] = [127, 0, 0, 2];
pub const STRANGER: [u8; 4] = [127, 0, 0, 1];

/// A `jobsight serve --http 127.0.0.1:0` process, killed when dropped.
pub struct WebServer {
    pub addr: SocketAddr,
    process: Child,
    pub log: PathBuf,
}

impl WebServer {
    /// Starts the server on the warehouse `data` with `config` (TOML; the warehouse and the
    /// proxy's address are added), its log in `dir`.
    pub fn start(jobsight: &str, data: &Path, dir: &Path, config: &str) -> WebServer {
        std::fs::create_dir_all(dir).unwrap();
        let file = dir.join("jobsight.toml");
        std::fs::write(
            &file,
            format!("data = {:?}\n{config}\n", data.display().to_string()),
        )
        .unwrap();
        let log = dir.join("serve.log");
        let mut process = Command::new(jobsight)
            .arg("--config")
            .arg(&file)
            .args(["serve", "--http", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(process.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split(" over HTTP on ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| {
                panic!(
                    "no address in {line:?}; log: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )
            });
        WebServer { addr, process, log }
    }
}

impl WebServer {
    /// Sends the server SIGTERM, as systemd stops it, and waits (at most a minute) for it to
    /// end: how long that took.
    pub fn terminate(&mut self) -> std::time::Duration {
        let started = std::time::Instant::now();
        let sent = Command::new("kill")
            .args(["-TERM", &self.process.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        while self.process.try_wait().unwrap().is_none() {
            assert!(
                started.elapsed().as_secs() < 60,
                "still running after SIGTERM"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        started.elapsed()
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// An answer: status, headers (names in lower case), body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A blocking connection to `addr` from the local address `from` (all of 127/8 is this
/// machine's, so tests can play clients of several addresses).
pub fn connect_from(from: [u8; 4], addr: SocketAddr) -> std::net::TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket
            .bind(SocketAddr::from((from, 0)))
            .expect("bind the client's address");
        socket.connect(addr).await.unwrap()
    });
    let stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream
}

/// Sends one request from `from` with `headers` and `body` (a form, when given) and reads the
/// whole answer.
pub fn request(
    addr: SocketAddr,
    from: [u8; 4],
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Answer {
    let mut stream = connect_from(from, addr);
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(body) = body {
        head.push_str(&format!(
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    if let Some(body) = body {
        stream.write_all(body.as_bytes()).unwrap();
    }
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        unchunk(body)
    } else {
        body.to_string()
    };
    Answer {
        status,
        headers,
        body,
    }
}

/// A chunked body's text.
fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// A GET from the sign-in proxy for `user`.
pub fn get_as(addr: SocketAddr, user: &str, path: &str) -> Answer {
    request(
        addr,
        PROXY,
        "GET",
        path,
        &[("X-Forwarded-User", user)],
        None,
    )
}

/// A form POSTed through the sign-in proxy for `user`, as a browser on the site's page sends it.
pub fn post_as(addr: SocketAddr, user: &str, path: &str, form: &str) -> Answer {
    request(
        addr,
        PROXY,
        "POST",
        path,
        &[
            ("X-Forwarded-User", user),
            ("Sec-Fetch-Site", "same-origin"),
        ],
        Some(form),
    )
}

/// The value of the first `<input name="NAME" value="...">` of a page.
pub fn input_value(page: &str, name: &str) -> Option<String> {
    let at = page.find(&format!("name=\"{name}\" value=\""))?;
    let rest = &page[at + name.len() + 15..];
    Some(rest[..rest.find('"')?].to_string())
}

/// A demo's warehouse (40 jobs, five users in four accounts) for the web tests, made once per
/// build of `jobsight` and kept in the temporary folder: the pipeline and the services suites
/// are separate binaries, and a demo takes most of a minute. Keyed by the binary's size and
/// time, so a new build makes a new one (and removes older ones); made in a temporary folder and
/// renamed into place, so a test never sees half of one.
pub fn demo_warehouse(jobsight: &str) -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let meta = std::fs::metadata(jobsight).unwrap();
        let stamp = meta
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let base = std::env::temp_dir();
        let name = format!("jobsight-web-demo-{stamp}-{}", meta.len());
        let dir = base.join(&name);
        if !dir.join("demo").join("warehouse").is_dir() {
            for old in std::fs::read_dir(&base).unwrap().flatten() {
                let n = old.file_name().to_string_lossy().into_owned();
                if n.starts_with("jobsight-web-demo-") && n != name {
                    let _ = std::fs::remove_dir_all(old.path());
                }
            }
            let making = tempfile::Builder::new()
                .prefix("jobsight-web-demo-making-")
                .tempdir_in(&base)
                .unwrap();
            let out = Command::new(jobsight)
                .args(["demo", "--jobs", "40", "--dir"])
                .arg(making.path().join("demo"))
                .env(
                    "JOBSIGHT_EPILOG_BIN",
                    Path::new(jobsight).with_file_name("jobsight-epilog"),
                )
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            // Another process may have finished first: then its warehouse is the one.
            let _ = std::fs::rename(making.keep(), &dir);
        }
        dir.join("demo").join("warehouse")
    })
    .clone()
}

/// A stand-in for the site's sign-in proxy in front of `server`, for a browser: it listens on
/// 127.0.0.1, drops any user header the browser sends, names `user`, and passes each request on
/// from 127.0.0.2 (one request per connection). Stops with the test process.
pub fn signing_proxy(server: SocketAddr, user: &'static str) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = pass_on(client, server, user);
            });
        }
    });
    addr
}

fn pass_on(mut client: std::net::TcpStream, server: SocketAddr, user: &str) -> std::io::Result<()> {
    let mut reader = std::io::BufReader::new(client.try_clone()?);
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        if line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if lower.starts_with("x-forwarded-user:") || lower.starts_with("connection:") {
            continue;
        }
        if let Some(n) = lower.strip_prefix("content-length:") {
            length = n.trim().parse().unwrap_or(0);
        }
        head.push_str(&line);
    }
    head.push_str(&format!(
        "X-Forwarded-User: {user}\r\nConnection: close\r\n\r\n"
    ));
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let upstream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::from((PROXY, 0)))?;
        socket.connect(server).await
    })?;
    let mut upstream = upstream.into_std()?;
    upstream.set_nonblocking(false)?;
    upstream.write_all(head.as_bytes())?;
    upstream.write_all(&body)?;
    std::io::copy(&mut upstream, &mut client)?;
    Ok(())
}
