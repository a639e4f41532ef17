//! `jobsight serve --http ADDR`: the web interface (docs/web.md). The report's job, user, day,
//! workflow and index pages rendered on request from the warehouse with the same templates as
//! the files, a job list with filters and sorting, two jobs side by side, a job's telemetry and
//! charts to download, and forms to say whether a finding or a verdict was useful (the
//! `feedback` table) and, for admins, to label a job for the models (`labels`).
//!
//! Every request passes one gate ([`gate`]) before any page is looked at: the person is the one
//! the site's sign-in proxy names, believed only from `[web] trusted_proxies` ([`who`]); their
//! requests per minute are counted; what they may see is decided from Slurm's coordinators and
//! `[access]`; the page must be ready within `request_timeout_s`; and every response carries
//! the headers of [`guard`]. Each page then checks the job, user or day it shows
//! ([`pages`]), and a job a person may not see is answered exactly as a job that does not
//! exist. Forms ([`forms`]) change state only by POST, with the person's CSRF token, from the
//! site's own pages.
//!
//! The server keeps no state of its own beyond a random key for the tokens: stopping it loses
//! nothing, and a restart only asks open forms to be reloaded.

mod forms;
pub mod guard;
pub mod listen;
mod pages;
pub mod settings;
pub mod who;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use datafusion::prelude::SessionContext;

pub use settings::{Options, Settings};

use jobsight_render::pages::PageTemplates;
use jobsight_render::pages::message::message_page;
use jobsight_render::pages::served::Served;
use who::{Roles, Viewer};

/// Pages worked on at once; more wait their turn (each holds a share of the session's memory).
const PAGES_AT_ONCE: usize = 8;
/// Requests one person may have in progress; one more is answered 429 at once, so that one
/// person cannot hold every page slot.
const PAGES_PER_PERSON: usize = 2;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error(
        "[web] trusted_proxies is empty: the web interface serves only the requests a sign-in proxy passes on, so name its address (docs/web.md)"
    )]
    NoProxy,
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Query(#[from] jobsight_warehouse::query::QueryError),
    #[error("the page templates: {0}")]
    Templates(String),
    #[error("cannot draw the CSRF key: {0}")]
    Key(std::io::Error),
}

/// Everything a request may need, shared by all of them.
pub struct Web {
    pub data: PathBuf,
    pub ctx: SessionContext,
    pub settings: Settings,
    pub report: jobsight_report::Settings,
    pub inputs: jobsight_report::Inputs,
    pub pages: PageTemplates,
    pub roles: Roles,
    pub csrf: guard::Csrf,
    pub limit: guard::RateLimit,
    /// Forms that write, per person per minute.
    writes: guard::RateLimit,
    busy: tokio::sync::Semaphore,
    /// Requests each person has in progress.
    in_flight: std::sync::Mutex<std::collections::HashMap<String, usize>>,
    /// Each day's healthy runs and bands, which every page of a job of that day compares with.
    healthy: pages::HealthyCache,
}

impl std::fmt::Debug for Web {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Web")
            .field("data", &self.data)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Web {
    /// The server's state over the warehouse at `data`: a session that sees new days as the
    /// scheduler writes them, the site's page templates, the roles from `directory`.
    pub async fn new(
        data: PathBuf,
        settings: Settings,
        report: jobsight_report::Settings,
        inputs: jobsight_report::Inputs,
        roles: Roles,
    ) -> Result<Web, WebError> {
        if settings.trusted_proxies.is_empty() {
            return Err(WebError::NoProxy);
        }
        let ctx = jobsight_warehouse::query::live_session(&data).await?;
        let pages = PageTemplates::load(&report).map_err(|e| WebError::Templates(e.to_string()))?;
        Ok(Web {
            ctx,
            pages,
            csrf: guard::Csrf::new().map_err(WebError::Key)?,
            limit: guard::RateLimit::new(settings.requests_per_minute),
            writes: forms::writes_limit(),
            busy: tokio::sync::Semaphore::new(PAGES_AT_ONCE),
            in_flight: Default::default(),
            healthy: Default::default(),
            data,
            settings,
            report,
            inputs,
            roles,
        })
    }

    /// The values every page of `viewer` gets under `served`.
    fn served(&self, viewer: &Viewer) -> Served {
        Served {
            me: viewer.name.clone(),
            admin: viewer.admin,
            coordinates: viewer.coordinates.iter().cloned().collect(),
            csrf: self.csrf.token(&viewer.name),
        }
    }

    /// A page that only says something, with `status`.
    fn message(&self, status: StatusCode, title: &str, text: &str) -> Response {
        let page = self
            .pages
            .render_message(&message_page(title, text))
            .unwrap_or_else(|e| {
                jobsight_base::text::html_escape(&format!("{title}: {text} ({e})"))
            });
        (status, Html(page)).into_response()
    }

    /// The answer to a page that failed: the person reads that it failed, the log reads why.
    fn failed(&self, what: &str, why: &str) -> Response {
        eprintln!(
            "jobsight serve: {what}: {}",
            jobsight_base::text::one_line(why)
        );
        self.message(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong",
            &format!("{what} could not be shown; the server's log says why."),
        )
    }
}

/// The routes; every one behind [`gate`].
pub fn router(web: Arc<Web>) -> Router {
    Router::new()
        .route("/", get(pages::root))
        .route("/index.html", get(pages::index))
        .route("/jobs", get(pages::jobs))
        .route("/compare", get(pages::compare))
        .route("/running", get(pages::running))
        .route("/{cluster}/jobs/{file}", get(pages::job))
        .route("/{cluster}/users/{file}", get(pages::user))
        .route("/{cluster}/days/{file}", get(pages::day))
        .route("/workflows/{file}", get(pages::workflow))
        .route("/download/{cluster}/{file}", get(pages::download))
        .route("/chart/{cluster}/{job}/{file}", get(pages::chart))
        .route("/feedback", post(forms::feedback))
        .route("/labels", post(forms::label))
        .fallback(pages::not_found)
        .layer(middleware::from_fn_with_state(web.clone(), gate))
        .with_state(web)
}

/// Seconds since the epoch divided into minutes, for the rate limit.
pub(crate) fn this_minute() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 60)
}

/// Who is asking, whether they may ask now, what they may see; then the page, in time; then
/// the safety headers on whatever the answer is. One line per request goes to the log.
async fn gate(State(web): State<Arc<Web>>, request: Request, next: Next) -> Response {
    let started = std::time::Instant::now();
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
        .unwrap_or(std::net::IpAddr::from([0, 0, 0, 0]));
    let method = request.method().clone();
    let path = jobsight_base::text::one_line(request.uri().path());
    let (user, mut response) = match who::signed_in(&web.settings, peer, request.headers()) {
        Err(refused) => {
            let status = match refused {
                who::NotSignedIn::NotFromProxy(_) => StatusCode::FORBIDDEN,
                _ => StatusCode::UNAUTHORIZED,
            };
            let limited = !web.limit.allow(&peer.to_string(), this_minute());
            let response = if limited {
                too_many(&web)
            } else {
                web.message(status, "Not signed in", &refused.to_string())
            };
            ("-".to_string(), response)
        }
        Ok(name) if !web.limit.allow(&name, this_minute()) => (name, too_many(&web)),
        Ok(name) => {
            let response = serve_person(&web, &name, request, next).await;
            (name, response)
        }
    };
    guard::secure(response.headers_mut());
    eprintln!(
        "jobsight serve: {peer} {user} {method} {path} {} {} ms",
        response.status().as_u16(),
        started.elapsed().as_millis()
    );
    response
}

/// A signed-in person's request: what they may see, their turn, the page within its time.
async fn serve_person(web: &Arc<Web>, name: &str, mut request: Request, next: Next) -> Response {
    let roles_of = web.clone();
    let who = name.to_string();
    let viewer = match tokio::task::spawn_blocking(move || roles_of.roles.viewer(&who)).await {
        Ok(viewer) => viewer,
        Err(e) => return web.failed("who you are", &e.to_string()),
    };
    let Some(_mine) = InFlight::enter(web, name) else {
        return too_many(web);
    };
    request.extensions_mut().insert(viewer);
    let limit = Duration::from_secs(web.settings.request_timeout_s);
    // The wait for a slot counts against the request's time too.
    let work = async {
        let _turn = web.busy.acquire().await;
        next.run(request).await
    };
    tokio::time::timeout(limit, work).await.unwrap_or_else(|_| {
        web.message(
            StatusCode::SERVICE_UNAVAILABLE,
            "Too slow",
            &format!(
                "The page took longer than {}s; narrow what you asked for and try again.",
                limit.as_secs()
            ),
        )
    })
}

/// One of a person's requests in progress, counted while it lives.
struct InFlight<'a> {
    web: &'a Web,
    name: String,
}

impl<'a> InFlight<'a> {
    /// Counts a request of `name`; `None` when they already have [`PAGES_PER_PERSON`].
    fn enter(web: &'a Web, name: &str) -> Option<InFlight<'a>> {
        let mut counts = web.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        let count = counts.entry(name.to_string()).or_insert(0);
        if *count >= PAGES_PER_PERSON {
            return None;
        }
        *count += 1;
        Some(InFlight {
            web,
            name: name.to_string(),
        })
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut counts = self.web.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = counts.get_mut(&self.name) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.name);
            }
        }
    }
}

fn too_many(web: &Web) -> Response {
    let mut response = web.message(
        StatusCode::TOO_MANY_REQUESTS,
        "Too many requests",
        &format!(
            "More than {} requests in a minute; wait a minute and try again.",
            web.settings.requests_per_minute
        ),
    );
    response.headers_mut().insert(
        axum::http::header::RETRY_AFTER,
        axum::http::HeaderValue::from_static("60"),
    );
    response
}

/// Serves `web` on `addr` until `shutdown` resolves. `listening` is told the bound address (port
/// 0 picks a free one).
pub async fn serve_http(
    web: Arc<Web>,
    addr: &str,
    listening: impl FnOnce(SocketAddr),
    shutdown: impl Future<Output = std::io::Result<()>> + Send + 'static,
) -> Result<(), WebError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| WebError::Listen {
            addr: addr.to_string(),
            source,
        })?;
    let bound = listener.local_addr().map_err(|source| WebError::Listen {
        addr: addr.to_string(),
        source,
    })?;
    listening(bound);
    tokio::spawn(web.clone().keep_recent_days_warm());
    listen::serve(listener, router(web.clone()), async move {
        let _ = shutdown.await;
    })
    .await;
    Ok(())
}
