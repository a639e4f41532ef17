//! What the web interface changes, only by POST from its own pages: a person's judgement of a
//! finding or a verdict (`feedback`), an admin's label of a job (`labels`, which retraining and
//! active learning read). Each form carries the person's CSRF token and must come from the
//! site itself; each names a job the person may see and a finding or verdict the job has; each
//! write is a new part of its table, written whole or not at all. Also here: what the job page
//! reads back (the person's earlier judgements) and the telemetry download.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Extension;
use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use jobsight_base::text::{clean, slug};

use super::Web;
use super::who::Viewer;
use jobsight_render::pages::served::{LABELS, job_href};
use jobsight_report::load::{JobOwner, literal};
use jobsight_warehouse::catalog::rows::FeedbackRow;
use jobsight_warehouse::catalog::{self, Table};

/// The longest note kept (with the ellipsis of a cut note, 500 characters).
const MAX_NOTE: usize = 499;
/// The most telemetry rows one download holds (about 80 MB of CSV); the answer says when a
/// job had more.
pub const MAX_DOWNLOAD_ROWS: usize = 1_000_000;
/// Judgements and labels one person may send per minute (each is a file in the warehouse).
const WRITES_PER_MINUTE: u64 = 30;

/// A judgement as the job page's form sends it.
#[derive(Debug, Deserialize)]
pub struct FeedbackForm {
    csrf: String,
    cluster: String,
    job: String,
    subject: String,
    item: String,
    judgement: String,
    #[serde(default)]
    note: String,
}

/// An admin's label as the job page's form sends it.
#[derive(Debug, Deserialize)]
pub struct LabelForm {
    csrf: String,
    cluster: String,
    job: String,
    label: String,
    #[serde(default)]
    start: String,
    #[serde(default)]
    end: String,
}

fn refused(web: &Web, why: &str) -> Response {
    web.message(StatusCode::FORBIDDEN, "Refused", why)
}

/// The checks every form passes: from the site's own page, with the person's token.
fn checked(web: &Web, viewer: &Viewer, headers: &HeaderMap, token: &str) -> Option<Response> {
    if super::guard::cross_site(headers) {
        return Some(refused(
            web,
            "This form was sent from another site; use the form on jobsight's own page.",
        ));
    }
    if !web.csrf.check(&viewer.name, token) {
        return Some(refused(
            web,
            "This form is out of date (the server restarted, or it was not yours); reload the page and send it again.",
        ));
    }
    None
}

/// A unique name for a part written by this server.
fn part_name(now: chrono::DateTime<chrono::Utc>) -> String {
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    format!(
        "web-{}-{}-{}",
        now.format("%Y%m%dT%H%M%S%.6f"),
        std::process::id(),
        SEQUENCE.fetch_add(1, Ordering::Relaxed)
    )
}

/// `POST /feedback`: a person's judgement of one finding or verdict of a job they may see.
pub async fn feedback(
    State(web): State<Arc<Web>>,
    Extension(viewer): Extension<Viewer>,
    headers: HeaderMap,
    Form(form): Form<FeedbackForm>,
) -> Response {
    if let Some(refusal) = checked(&web, &viewer, &headers, &form.csrf) {
        return refusal;
    }
    let owner = match web
        .visible_job(&viewer, &slug(&form.cluster), &form.job)
        .await
    {
        Ok(Some(owner)) => owner,
        Ok(None) => {
            return web.message(
                StatusCode::NOT_FOUND,
                "No such job",
                &format!("No job {} that you may see.", clean(&form.job, 128)),
            );
        }
        Err(e) => return web.failed("the job", &e),
    };
    if !matches!(form.judgement.as_str(), "useful" | "wrong") {
        return bad(&web, "A judgement is `useful` or `wrong`.");
    }
    // One format with every value a literal (a value must never be spliced into another's).
    let (table, column) = match form.subject.as_str() {
        "finding" => ("findings", "rule"),
        "verdict" => ("predictions", "verdict"),
        _ => return bad(&web, "Feedback is about a `finding` or a `verdict`."),
    };
    let sql = format!(
        "SELECT 1 FROM {table} WHERE job_id = {} AND day = '{}' AND {column} = {}",
        literal(&owner.job_id),
        owner.day,
        literal(&form.item)
    );
    match jobsight_warehouse::query::collect(&web.ctx, &sql).await {
        Ok(rows) if rows.iter().any(|b| b.num_rows() > 0) => {}
        Ok(_) => {
            return bad(
                &web,
                &format!(
                    "Job {} has no {} {}.",
                    clean(&owner.job_id, 128),
                    form.subject,
                    clean(&form.item, 128)
                ),
            );
        }
        Err(e) => return web.failed("the job's findings", &e.to_string()),
    }
    let note = clean(form.note.trim(), MAX_NOTE);
    // The same judgement again (a second click, a reload that sends the form again) is kept once.
    let earlier = judged(&web, &viewer.name, &owner).await.unwrap_or_default();
    let key = format!("{}:{}", form.subject, form.item);
    if note.is_empty() && earlier.get(&key) == Some(&form.judgement) {
        return Redirect::to(&job_href(&owner.cluster, &owner.job_id)).into_response();
    }
    if let Some(refusal) = too_many_writes(&web, &viewer) {
        return refusal;
    }
    let now = chrono::Utc::now();
    let row = FeedbackRow {
        given_at: now,
        by_owner: viewer.name == owner.user,
        by: viewer.name.clone(),
        cluster: owner.cluster.clone(),
        job_id: owner.job_id.clone(),
        subject: form.subject.clone(),
        item: form.item.clone(),
        judgement: form.judgement.clone(),
        note,
    };
    let data = web.data.clone();
    let written = tokio::task::spawn_blocking(move || -> Result<(), String> {
        let batch = FeedbackRow::batch(&[row]).map_err(|e| e.to_string())?;
        catalog::write_part(
            &data,
            Table::Feedback,
            now.date_naive(),
            &part_name(now),
            &[batch],
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    })
    .await;
    match written {
        Ok(Ok(())) => Redirect::to(&job_href(&owner.cluster, &owner.job_id)).into_response(),
        Ok(Err(e)) => web.failed("your judgement", &e),
        Err(e) => web.failed("your judgement", &e.to_string()),
    }
}

/// The answer when `viewer` sent more than [`WRITES_PER_MINUTE`] forms this minute.
fn too_many_writes(web: &Web, viewer: &Viewer) -> Option<Response> {
    (!web.writes.allow(&viewer.name, super::this_minute())).then(|| {
        web.message(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many",
            &format!(
                "More than {WRITES_PER_MINUTE} judgements or labels in a minute; wait a minute."
            ),
        )
    })
}

/// The rate limit of forms that write.
pub(super) fn writes_limit() -> super::guard::RateLimit {
    super::guard::RateLimit::new(WRITES_PER_MINUTE)
}

fn bad(web: &Web, why: &str) -> Response {
    web.message(StatusCode::BAD_REQUEST, "Not understood", why)
}

/// `POST /labels`: an admin's label of a job (the whole run, or a span), by them, now.
pub async fn label(
    State(web): State<Arc<Web>>,
    Extension(viewer): Extension<Viewer>,
    headers: HeaderMap,
    Form(form): Form<LabelForm>,
) -> Response {
    if let Some(refusal) = checked(&web, &viewer, &headers, &form.csrf) {
        return refusal;
    }
    if !viewer.admin {
        return refused(&web, "Only admins label jobs.");
    }
    let owner = match web
        .visible_job(&viewer, &slug(&form.cluster), &form.job)
        .await
    {
        Ok(Some(owner)) => owner,
        Ok(None) => return bad(&web, "There is no such job."),
        Err(e) => return web.failed("the job", &e),
    };
    if !LABELS.contains(&form.label.as_str()) {
        return bad(&web, &format!("A label is one of: {}.", LABELS.join(", ")));
    }
    let time = |text: &str| -> Result<Option<i64>, String> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        chrono::DateTime::parse_from_rfc3339(text)
            .map(|t| Some(t.timestamp_micros()))
            .map_err(|_| format!("{} is not an RFC 3339 time", clean(text, 64)))
    };
    let (start_us, end_us) = match (time(&form.start), time(&form.end)) {
        (Ok(s), Ok(e)) => (s, e),
        (Err(why), _) | (_, Err(why)) => return bad(&web, &why),
    };
    let line = jobsight_model::dataset::LabelLine {
        job_id: owner.job_id.clone(),
        anomaly: form.label.clone(),
        start_us,
        end_us,
        node: None,
    };
    if let Some(refusal) = too_many_writes(&web, &viewer) {
        return refusal;
    }
    let (data, by) = (web.data.clone(), viewer.name.clone());
    let kept = tokio::task::spawn_blocking(move || {
        jobsight_model::labelling::keep_labels(&data, &[line], &by, chrono::Utc::now())
            .map_err(|e| e.to_string())
    })
    .await;
    match kept {
        Ok(Ok(_)) => Redirect::to(&job_href(&owner.cluster, &owner.job_id)).into_response(),
        Ok(Err(e)) => bad(&web, &e),
        Err(e) => web.failed("the label", &e.to_string()),
    }
}

/// `by`'s latest judgement of each finding and verdict of one job (`subject:item` to it).
pub(super) async fn judged(
    web: &Web,
    by: &str,
    owner: &JobOwner,
) -> Result<BTreeMap<String, String>, String> {
    if !Table::Feedback.dir(&web.data).is_dir() {
        return Ok(BTreeMap::new());
    }
    let sql = format!(
        "SELECT subject, item, judgement FROM feedback WHERE by = {} AND cluster = {} \
         AND job_id = {} ORDER BY given_at",
        literal(by),
        literal(&owner.cluster),
        literal(&owner.job_id)
    );
    let mut rows = Vec::new();
    for batch in jobsight_warehouse::query::collect(&web.ctx, &sql)
        .await
        .map_err(|e| e.to_string())?
    {
        let c = jobsight_warehouse::query::Columns::of(&batch).map_err(|e| e.to_string())?;
        for i in 0..batch.num_rows() {
            let text = |name: &str| c.text(name, i).unwrap_or_default();
            rows.push((text("subject"), text("item"), text("judgement")));
        }
    }
    Ok(rows
        .into_iter()
        .map(|(subject, item, judgement)| (format!("{subject}:{item}"), judgement))
        .collect())
}

/// A job's telemetry as CSV: node, metric, time (RFC 3339), value; names quoted as CSV quotes.
/// At most [`MAX_DOWNLOAD_ROWS`] rows; whether the job had more.
pub(super) async fn telemetry_csv(web: &Web, owner: &JobOwner) -> Result<(String, bool), String> {
    let sql = format!(
        "SELECT node, metric, ts, value FROM telemetry WHERE job_id = {} AND day = '{}' \
         ORDER BY node, metric, ts LIMIT {}",
        literal(&owner.job_id),
        owner.day,
        MAX_DOWNLOAD_ROWS + 1
    );
    // Quoted, and a name a spreadsheet would take for a formula starts with a quote mark.
    let quote = |s: &str| {
        let s = if s.starts_with(['=', '+', '-', '@']) {
            format!("'{s}")
        } else {
            s.to_string()
        };
        format!("\"{}\"", s.replace('"', "\"\""))
    };
    let mut out = String::from("node,metric,time,value\n");
    let mut rows = 0;
    for batch in jobsight_warehouse::query::collect(&web.ctx, &sql)
        .await
        .map_err(|e| e.to_string())?
    {
        let c = jobsight_warehouse::query::Columns::of(&batch).map_err(|e| e.to_string())?;
        for i in 0..batch.num_rows() {
            rows += 1;
            if rows > MAX_DOWNLOAD_ROWS {
                return Ok((out, true));
            }
            let text = |name: &str| clean(&c.text(name, i).unwrap_or_default(), 200);
            let _ = writeln!(
                out,
                "{},{},{},{}",
                quote(&text("node")),
                quote(&text("metric")),
                c.time("ts", i).map_or(String::new(), |t| t.to_rfc3339()),
                c.float("value", i).map_or(String::new(), |v| v.to_string())
            );
        }
    }
    Ok((out, false))
}
