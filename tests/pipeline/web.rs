//! `jobsight serve --http` over a demo's warehouse (five users in four accounts), the test
//! playing the site's sign-in proxy: who is believed, what each person sees and is refused, the
//! forms, the comparison, the headers of every answer. Coordinators come from a real Slurm's
//! `sacctmgr` in tests/services/web.rs, with a real browser.

use std::path::PathBuf;

use crate::common::sql_json;
use crate::web_client::{
    PROXY, STRANGER, WebServer, connect_from, get_as, input_value, post_as, request,
};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

/// The web tests' demo warehouse ([`crate::web_client::demo_warehouse`]).
fn demo() -> PathBuf {
    crate::web_client::demo_warehouse(JOBSIGHT)
}

/// A job of `user`'s (the first by id).
fn job_of(user: &str) -> String {
    let rows = sql_json(
        JOBSIGHT,
        &demo(),
        &format!("SELECT min(job_id) AS j FROM jobs WHERE \"user\" = '{user}'"),
    );
    rows[0]["j"].as_str().unwrap().to_string()
}

/// A server on the demo's warehouse where erin is an admin, for the test `name`.
fn server(name: &str, extra: &str) -> (WebServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let server = WebServer::start(
        JOBSIGHT,
        &demo(),
        &dir.path().join(name),
        &format!(
            "[web]\ntrusted_proxies = [\"127.0.0.2\"]\n\
             sacctmgr = \"/nonexistent/sacctmgr\"\n{extra}\n[access]\nadmins = [\"erin\"]\n"
        ),
    );
    (server, dir)
}

/// The refusal of `id` with the id taken out: what tells a refused job from a missing one.
fn without(body: &str, id: &str) -> String {
    body.replace(id, "ID")
}

#[test]
fn a_person_sees_their_own_jobs_and_nothing_of_anyone_elses() {
    let (web, _dir) = server("own", "");
    let (mine, theirs) = (job_of("alice"), job_of("bob"));
    let list = get_as(web.addr, "alice", "/jobs?days=3660");
    assert_eq!(list.status, 200);
    assert!(list.body.contains(&format!("/demo/jobs/{mine}.html")));
    assert!(!list.body.contains(&format!("/demo/jobs/{theirs}.html")));
    // Without a period the list is the person's latest jobs whatever their age (the demo's days
    // are in the past), flagged ones marked, every column sortable, stacking on a phone.
    let latest = get_as(web.addr, "alice", "/jobs");
    assert!(
        latest.body.contains(&format!("/demo/jobs/{mine}.html")),
        "{}",
        latest.body
    );
    assert!(
        latest.body.contains("class=\"flagged\""),
        "no flagged job marked"
    );
    for key in [
        "job", "state", "verdict", "name", "user", "cpu", "memory", "ended",
    ] {
        let key = if key == "ended" { "end" } else { key };
        assert!(
            latest.body.contains(&format!("/jobs?sort={key}&")),
            "{key} not sortable"
        );
    }
    assert!(latest.body.contains("data-label=\"verdict\""));
    // The running jobs' page is served (nothing runs in the demo's warehouse).
    let running = get_as(web.addr, "alice", "/running");
    assert_eq!(running.status, 200, "{}", running.body);
    // Asking for bob's jobs by filter lists none of them.
    let filtered = get_as(web.addr, "alice", "/jobs?days=3660&user=bob");
    assert!(
        filtered.body.contains("No job matches"),
        "{}",
        filtered.body
    );

    let page = get_as(web.addr, "alice", &format!("/demo/jobs/{mine}.html"));
    assert_eq!(page.status, 200);
    assert!(page.body.contains("signed in as alice"));
    // None of her pages names another user: a healthy reference run of the same job name by
    // someone else is not hers to see.
    let hers = sql_json(
        JOBSIGHT,
        &demo(),
        "SELECT job_id FROM jobs WHERE \"user\" = 'alice'",
    );
    for row in &hers {
        let id = row["job_id"].as_str().unwrap();
        let page = get_as(web.addr, "alice", &format!("/demo/jobs/{id}.html"));
        assert_eq!(page.status, 200, "{id}");
        for other in ["bob", "carol", "dave", "erin"] {
            assert!(
                !page.body.contains(&format!(" by {other}")),
                "{id} names {other}"
            );
        }
    }
    // Another's job page, chart and download, and a comparison with it, are answered as a job
    // that does not exist (an id of the same length, so only the id differs).
    let nobody = "9".repeat(theirs.len());
    for path in [
        "/demo/jobs/{}.html",
        "/download/demo/{}.csv",
        "/chart/demo/{}/cpu_user.svg",
    ] {
        let refused = get_as(web.addr, "alice", &path.replace("{}", &theirs));
        let missing = get_as(web.addr, "alice", &path.replace("{}", &nobody));
        assert_eq!(refused.status, 404, "{path}");
        assert_eq!(missing.status, 404, "{path}");
        assert_eq!(
            without(&refused.body, &theirs),
            without(&missing.body, &nobody),
            "{path}"
        );
        assert!(refused.body.contains("that you may see"), "{path}");
    }
    let compared = get_as(web.addr, "alice", &format!("/compare?a={mine}&b={theirs}"));
    assert_eq!(compared.status, 404);
    assert!(
        !compared.body.contains(&mine),
        "nothing of either job is shown"
    );
    // Their own download and chart.
    let csv = get_as(web.addr, "alice", &format!("/download/demo/{mine}.csv"));
    assert_eq!(csv.status, 200);
    assert!(csv.body.starts_with("node,metric,time,value\n"));
    assert!(csv.body.lines().count() > 10, "{}", csv.body.len());
    // User pages: their own; the system pages and the index are admins'.
    assert_eq!(
        get_as(web.addr, "alice", "/demo/users/alice.html").status,
        200
    );
    assert_eq!(
        get_as(web.addr, "alice", "/demo/users/bob.html").status,
        404
    );
    let days = sql_json(
        JOBSIGHT,
        &demo(),
        "SELECT DISTINCT CAST(day AS VARCHAR) AS d FROM jobs",
    );
    let day = days[0]["d"].as_str().unwrap();
    assert_eq!(
        get_as(web.addr, "alice", &format!("/demo/days/{day}.html")).status,
        403
    );
    assert_eq!(get_as(web.addr, "alice", "/index.html").status, 303);
}

#[test]
fn an_admin_sees_every_job_and_the_system_pages() {
    let (web, _dir) = server("admin", "");
    let theirs = job_of("bob");
    let list = get_as(
        web.addr,
        "erin",
        "/jobs?days=3660&user=bob&sort=cpu&order=asc",
    );
    assert!(list.body.contains(&format!("/demo/jobs/{theirs}.html")));
    assert!(list.body.contains("every user"), "{}", list.body);
    let page = get_as(web.addr, "erin", &format!("/demo/jobs/{theirs}.html"));
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Label this job"), "admins label");
    let index = get_as(web.addr, "erin", "/index.html");
    assert_eq!(index.status, 200);
    let days = sql_json(
        JOBSIGHT,
        &demo(),
        "SELECT DISTINCT CAST(day AS VARCHAR) AS d FROM jobs",
    );
    let day = days[0]["d"].as_str().unwrap();
    assert!(index.body.contains(&format!("demo/days/{day}.html")));
    let report = get_as(web.addr, "erin", &format!("/demo/days/{day}.html"));
    assert_eq!(report.status, 200);
    assert!(report.body.contains("What users say about the rules"));
    assert_eq!(get_as(web.addr, "erin", "/demo/users/bob.html").status, 200);
}

#[test]
fn only_the_proxy_names_the_user() {
    let (web, _dir) = server("proxy", "");
    let mine = job_of("alice");
    let path = format!("/demo/jobs/{mine}.html");
    // The header from anyone but the proxy is refused; so is the proxy without a user, or
    // with a name that is no login name, or two names.
    let stranger = request(
        web.addr,
        STRANGER,
        "GET",
        &path,
        &[("X-Forwarded-User", "alice")],
        None,
    );
    assert_eq!(stranger.status, 403);
    assert!(stranger.body.contains("trusted_proxies"));
    assert!(!stranger.body.contains(&format!("Job {mine}")));
    assert_eq!(
        request(web.addr, PROXY, "GET", &path, &[], None).status,
        401
    );
    for name in ["alice@example.org", "../root", ""] {
        let answer = request(
            web.addr,
            PROXY,
            "GET",
            &path,
            &[("X-Forwarded-User", name)],
            None,
        );
        assert_eq!(answer.status, 401, "{name:?}");
    }
    let two = request(
        web.addr,
        PROXY,
        "GET",
        &path,
        &[("X-Forwarded-User", "alice"), ("X-Forwarded-User", "erin")],
        None,
    );
    assert_eq!(two.status, 401);
    // Every answer, refusals too, carries the headers under which no script runs.
    for answer in [&stranger, &get_as(web.addr, "alice", &path)] {
        let csp = answer.header("content-security-policy").unwrap();
        assert!(csp.contains("script-src 'none'") && csp.contains("frame-ancestors 'none'"));
        assert_eq!(answer.header("x-content-type-options"), Some("nosniff"));
    }
}

#[test]
fn feedback_round_trips_and_needs_the_persons_token() {
    let (web, _dir) = server("feedback", "");
    // A job of alice's with a finding.
    let rows = sql_json(
        JOBSIGHT,
        &demo(),
        "SELECT min(f.job_id) AS j, min(f.rule) AS r FROM findings f JOIN jobs j \
         ON j.job_id = f.job_id WHERE j.\"user\" = 'alice' GROUP BY f.job_id ORDER BY 1 LIMIT 1",
    );
    let (job, rule) = (
        rows[0]["j"].as_str().unwrap().to_string(),
        rows[0]["r"].as_str().unwrap().to_string(),
    );
    let page = get_as(web.addr, "alice", &format!("/demo/jobs/{job}.html"));
    let token = input_value(&page.body, "csrf").unwrap();
    // The warehouse outlives this run (it is shared by the runs of one build): a note of this
    // run's own finds this run's row.
    let nonce = format!(
        "{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_micros()
    );
    let form = |token: &str| {
        format!(
            "csrf={token}&cluster=demo&job={job}&subject=finding&item={rule}&judgement=wrong&note=input+{nonce}+%3Cb%3E"
        )
    };
    // No token, another person's token, another site, a GET: refused, nothing written.
    assert_eq!(
        post_as(web.addr, "alice", "/feedback", &form("")).status,
        403
    );
    let bobs = input_value(
        &get_as(
            web.addr,
            "bob",
            &format!("/demo/jobs/{}.html", job_of("bob")),
        )
        .body,
        "csrf",
    )
    .unwrap();
    assert_eq!(
        post_as(web.addr, "alice", "/feedback", &form(&bobs)).status,
        403
    );
    let cross = request(
        web.addr,
        PROXY,
        "POST",
        "/feedback",
        &[
            ("X-Forwarded-User", "alice"),
            ("Sec-Fetch-Site", "cross-site"),
        ],
        Some(&form(&token)),
    );
    assert_eq!(cross.status, 403);
    assert_eq!(get_as(web.addr, "alice", "/feedback").status, 405);
    // bob may not judge alice's job even with his own token.
    let bob_form = form(&bobs);
    assert_eq!(post_as(web.addr, "bob", "/feedback", &bob_form).status, 404);
    let data = &demo();
    assert!(
        !data.join("feedback").exists()
            || sql_json(
                JOBSIGHT,
                data,
                &format!(
                    "SELECT * FROM feedback WHERE job_id = '{job}' AND note LIKE 'input {nonce}%'"
                )
            )
            .is_empty()
    );
    // A finding the job does not have is not stored either.
    let unknown = form(&token).replace(&format!("item={rule}"), "item=no-such-rule");
    assert_eq!(
        post_as(web.addr, "alice", "/feedback", &unknown).status,
        400
    );

    let sent = post_as(web.addr, "alice", "/feedback", &form(&token));
    assert_eq!(sent.status, 303, "{}", sent.body);
    assert_eq!(
        sent.header("location"),
        Some(format!("/demo/jobs/{job}.html").as_str())
    );
    let stored = sql_json(
        JOBSIGHT,
        data,
        &format!("SELECT * FROM feedback WHERE job_id = '{job}' AND note LIKE 'input {nonce}%'"),
    );
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0]["by"], "alice");
    assert_eq!(stored[0]["by_owner"], true);
    assert_eq!(stored[0]["item"], rule.as_str());
    assert_eq!(stored[0]["judgement"], "wrong");
    let again = get_as(web.addr, "alice", &format!("/demo/jobs/{job}.html"));
    assert!(again.body.contains("you said: wrong"));
}

#[test]
fn two_jobs_compare_on_one_time_axis() {
    let (web, _dir) = server("compare", "");
    let rows = sql_json(
        JOBSIGHT,
        &demo(),
        "SELECT job_id FROM jobs WHERE \"user\" = 'alice' ORDER BY job_id LIMIT 2",
    );
    let (a, b) = (
        rows[0]["job_id"].as_str().unwrap(),
        rows[1]["job_id"].as_str().unwrap(),
    );
    let page = get_as(web.addr, "alice", &format!("/compare?a=demo/{a}&b={b}"));
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains(&format!("job {a}")) && page.body.contains(&format!("job {b}")));
    assert!(
        page.body.contains("<svg"),
        "charts of the metrics both have"
    );
    // Where the two jobs differ most first: each chart's caption says by how much.
    let differences: Vec<f64> = page
        .body
        .split("the means differ by ")
        .skip(1)
        .map(|rest| {
            let number = rest.split(' ').next().unwrap().replace(',', "");
            number
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("{rest:.40}"))
        })
        .collect();
    assert!(differences.len() > 2, "{differences:?}");
    assert!(
        differences.windows(2).all(|w| w[0] >= w[1]),
        "charts sorted by difference: {differences:?}"
    );
    assert!(!page.body.contains("cpu_core"), "titles in words");
}

#[test]
fn a_person_who_asks_too_often_waits() {
    let (web, _dir) = server("limit", "requests_per_minute = 3");
    // Eight requests span at most two minutes, so one minute has at least four of them.
    let answers: Vec<_> = (0..8).map(|_| get_as(web.addr, "alice", "/jobs")).collect();
    let limited = answers.iter().find(|a| a.status == 429);
    let limited = limited.unwrap_or_else(|| panic!("no 429 in {answers:?}"));
    assert_eq!(limited.header("retry-after"), Some("60"));
    assert_eq!(get_as(web.addr, "erin", "/jobs").status, 200, "per person");
}

/// Round two's lock-out: 1,100 half-sent requests from an address nobody trusts kept every
/// signed-in user out for 45 s, and one kept SIGTERM from stopping the server. Now the address
/// holds at most 32 connections and the rest are closed at once, a person's requests are
/// served beside them, a half-sent request is closed at the 10-s header deadline, the
/// refusals are a few log lines, and SIGTERM ends the server within its 5-s drain.
#[test]
fn half_sent_requests_keep_nobody_out_and_do_not_hold_the_stop() {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};
    let (mut web, _dir) = server("slow", "");
    let half_sent = |n: usize| -> Vec<std::net::TcpStream> {
        (0..n)
            .map(|_| {
                let mut socket = connect_from(STRANGER, web.addr);
                socket
                    .write_all(b"GET /jobs HTTP/1.1\r\nHost: x\r\n")
                    .unwrap();
                socket
            })
            .collect()
    };
    // Closed by the server: the end of the stream (after an answer, if any) or a reset.
    let closed = |socket: &std::net::TcpStream, within: Duration| {
        socket.set_read_timeout(Some(within)).unwrap();
        let mut socket = socket;
        let mut buffer = [0u8; 1024];
        loop {
            match socket.read(&mut buffer) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e) => {
                    use std::io::ErrorKind::{TimedOut, WouldBlock};
                    return !matches!(e.kind(), WouldBlock | TimedOut);
                }
            }
        }
    };
    let held = half_sent(300);
    let started = Instant::now();
    assert_eq!(get_as(web.addr, "alice", "/jobs").status, 200);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let refused = (held.iter().skip(40))
        .filter(|s| closed(s, Duration::from_millis(500)))
        .count();
    assert_eq!(
        refused, 260,
        "every connection past the address's 32 closed at once"
    );
    let kept = &held[0];
    assert!(
        !closed(kept, Duration::from_millis(100)),
        "within the deadline"
    );
    std::thread::sleep(Duration::from_secs(11));
    assert!(
        closed(kept, Duration::from_secs(1)),
        "closed at the header deadline"
    );
    let log = std::fs::read_to_string(&web.log).unwrap();
    let lines = log.lines().filter(|l| l.contains("refused")).count();
    assert_eq!(lines, 1, "one line for 268 refusals within 10 s: {log}");
    drop(held);
    let _waiting = half_sent(5);
    let took = web.terminate();
    assert!(took < Duration::from_secs(8), "SIGTERM took {took:?}");
}

/// The demo's nightly report stored every day's references (`reference_runs`,
/// `reference_bands`), which the server reads back for a job's page, and they are what the
/// server would compute for it: the same healthy run and the same band, for every job. (The
/// demo's 40 jobs have no healthy run; the report's own test has some:
/// `jobsight_render::pages::tests::the_stored_references_are_the_computed_ones`.)
#[test]
fn a_stored_reference_is_the_one_computed_on_request() {
    use jobsight_report::{load, select};
    use jobsight_warehouse::catalog::{self, Table};
    let data = demo();
    let days = catalog::days(&data, Table::Jobs);
    assert_eq!(catalog::days(&data, Table::ReferenceRuns), days);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (mut with_run, mut narrower_than_cluster, mut jobs) = (0, 0, 0);
    runtime.block_on(async {
        let ctx = jobsight_warehouse::query::session(&data).await.unwrap();
        for day in days {
            let (healthy, bands) = load::healthy(&ctx, day).await.unwrap();
            let mut facts = load::Facts::default();
            for row in sql_json(
                JOBSIGHT,
                &data,
                &format!("SELECT job_id, \"user\", name FROM jobs WHERE day = '{day}'"),
            ) {
                facts.jobs.push(load::JobFacts {
                    job_id: row["job_id"].as_str().unwrap().into(),
                    user: row["user"].as_str().unwrap().into(),
                    name: row["name"].as_str().unwrap().into(),
                    ..Default::default()
                });
            }
            let computed = select::reference_runs(&facts, &healthy);
            for job in &facts.jobs {
                let (runs, stored) = load::stored_reference(&ctx, day, &job.job_id)
                    .await
                    .unwrap()
                    .unwrap_or_else(|| panic!("nothing stored for job {}", job.job_id));
                let run = runs.first().map(|r| (&r.job_id, r.day, &r.user, &r.name));
                let expected = computed
                    .get(&job.job_id)
                    .map(|r| (&r.job_id, r.day, &r.user, &r.name));
                assert_eq!(run, expected, "job {}", job.job_id);
                let (band, group) = stored.for_job(&job.name, &job.user);
                let (want_band, want_group) = bands.for_job(&job.name, &job.user);
                assert_eq!(
                    (band, &group),
                    (want_band, &want_group),
                    "job {}",
                    job.job_id
                );
                jobs += 1;
                with_run += usize::from(run.is_some());
                narrower_than_cluster += usize::from(group != load::ReferenceGroup::Cluster);
            }
        }
    });
    eprintln!(
        "{jobs} jobs: {with_run} with a healthy run, {narrower_than_cluster} with an application's or a user's band"
    );
    assert!(jobs > 0);
}

/// `jobsight report references` stores, without writing pages, what the demo's report stored with
/// its pages: on a copy of the warehouse without the two tables, every day's rows come back the
/// same.
#[test]
fn report_references_stores_what_the_report_stored() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(demo())
        .arg(&data)
        .status()
        .unwrap();
    assert!(copied.success());
    let every = "SELECT CAST(day AS VARCHAR) AS day, job_id, band_group, band_group_name, \
                 reference_job_id FROM reference_runs ORDER BY day, job_id";
    let bands = "SELECT CAST(day AS VARCHAR) AS day, band_group, band_group_name, metric, runs, \
                 low, high FROM reference_bands ORDER BY 1, 2, 3, 4";
    let (runs_before, bands_before) = (
        sql_json(JOBSIGHT, &data, every),
        sql_json(JOBSIGHT, &data, bands),
    );
    assert!(!runs_before.is_empty());
    for table in ["reference_runs", "reference_bands"] {
        std::fs::remove_dir_all(data.join(table)).unwrap();
    }
    let out = std::process::Command::new(JOBSIGHT)
        .arg("--data")
        .arg(&data)
        .args(["report", "references"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("the references of {} jobs of", runs_before.len())),
        "{stdout}"
    );
    assert_eq!(sql_json(JOBSIGHT, &data, every), runs_before);
    assert_eq!(sql_json(JOBSIGHT, &data, bands), bands_before);
}
