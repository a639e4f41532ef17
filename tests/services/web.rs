//! The web interface with a real browser and a real Slurm: `jobsight serve --http` over the web
//! tests' demo warehouse, behind a stand-in for the site's sign-in proxy, driven by a real
//! headless Chromium (tests/services/browser.py, the DevTools protocol over a pipe), with the
//! accounts' coordinators read from a real slurmdbd by `sacctmgr`.
//!
//! - A person signed in as alice lists her jobs, opens one, judges its finding "wrong" with a
//!   note by clicking the page's own button; the browser follows the answer back to the page,
//!   which shows the judgement, and the `feedback` table has the row. Bob's job, its chart and
//!   its download are refused to her in the browser as a job that does not exist.
//! - Slurm names bob the coordinator of account `physics`: he sees carol's job (physics), not
//!   alice's (chem); carol, with no such role, does not see bob's.
//! - Screenshots of the list, the job page and a comparison go to the test's folder, to look at.
//!
//! Needs root (Slurm, and Chromium installed from Debian when missing); about a minute and a
//! half, the demo's warehouse included when the pipeline suite has not made it already.
use crate::common;
use crate::web_client::{WebServer, demo_warehouse, get_as, signing_proxy};

use std::path::Path;
use std::process::Command;

use common::services::{sh, slurm_site};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

/// One session of the browser: `steps` (browser.py's), their values.
fn browse(base: &Path, name: &str, steps: serde_json::Value) -> Vec<serde_json::Value> {
    let file = base.join(format!("{name}.json"));
    std::fs::write(&file, steps.to_string()).unwrap();
    let out = Command::new("python3")
        .arg(format!(
            "{}/tests/services/browser.py",
            env!("CARGO_MANIFEST_DIR").trim_end_matches("/pipeline/app")
        ))
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "browser.py {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["value"].clone())
        .collect()
}

/// A job of `user`'s that has a finding, and the finding's rule.
fn job_with_finding(data: &Path, user: &str) -> (String, String) {
    let rows = common::sql_json(
        JOBSIGHT,
        data,
        &format!(
            "SELECT f.job_id AS j, min(f.rule) AS r FROM findings f JOIN jobs j ON j.job_id = f.job_id \
             WHERE j.\"user\" = '{user}' GROUP BY f.job_id ORDER BY f.job_id LIMIT 1"
        ),
    );
    (
        rows[0]["j"].as_str().unwrap().to_string(),
        rows[0]["r"].as_str().unwrap().to_string(),
    )
}

fn first_job(data: &Path, user: &str) -> String {
    let rows = common::sql_json(
        JOBSIGHT,
        data,
        &format!("SELECT min(job_id) AS j FROM jobs WHERE \"user\" = '{user}'"),
    );
    rows[0]["j"].as_str().unwrap().to_string()
}

#[test]
#[ignore = "needs root: installs and starts a real Slurm and Chromium (run by .ci/run with --include-ignored)"]
fn a_browser_judges_a_finding_and_slurms_coordinators_see_their_accounts() {
    let site = slurm_site(JOBSIGHT, "web", "Slurm and Chromium");
    sh(
        "command -v chromium >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null",
    );
    // The demo's accounts in Slurm's associations, bob the coordinator of physics.
    // (Each `add` fails when an earlier run added it already: what counts is the listing.)
    sh("sacctmgr -i add account physics,chem Description=web Organization=web >/dev/null || true");
    sh("sacctmgr -i add user bob,carol account=physics >/dev/null || true");
    sh("sacctmgr -i add user alice account=chem >/dev/null || true");
    sh("sacctmgr -i add coordinator account=physics names=bob >/dev/null || true");
    let listing = sh("sacctmgr -nP show account withcoord format=Account,Coordinators");
    assert!(listing.lines().any(|l| l == "physics|bob"), "{listing}");
    let data = demo_warehouse(JOBSIGHT);
    let server = WebServer::start(
        JOBSIGHT,
        &data,
        &site.base.join("web"),
        "[web]\ntrusted_proxies = [\"127.0.0.2\"]\n[access]\nadmins = [\"erin\"]\n",
    );

    // Coordinators, from sacctmgr.
    let (carols, alices, bobs) = (
        first_job(&data, "carol"),
        first_job(&data, "alice"),
        first_job(&data, "bob"),
    );
    assert_eq!(
        get_as(server.addr, "bob", &format!("/demo/jobs/{carols}.html")).status,
        200
    );
    assert_eq!(
        get_as(server.addr, "bob", &format!("/demo/jobs/{alices}.html")).status,
        404
    );
    assert_eq!(
        get_as(server.addr, "carol", &format!("/demo/jobs/{bobs}.html")).status,
        404
    );
    let list = get_as(server.addr, "bob", "/jobs?days=3660");
    assert!(list.body.contains(&format!("/demo/jobs/{carols}.html")));
    assert!(list.body.contains("account physics"), "{}", list.body);

    // alice in a real browser, through the sign-in proxy.
    let proxy = signing_proxy(server.addr, "alice");
    let root = format!("http://{proxy}");
    let (job, rule) = job_with_finding(&data, "alice");
    let note = format!("browser {}", std::process::id());
    let shots = &site.base;
    let values = browse(
        shots,
        "alice",
        serde_json::json!([
            {"go": format!("{root}/jobs?days=3660")},
            {"text": true},
            {"screenshot": shots.join("jobs.png")},
            {"go": format!("{root}/demo/jobs/{job}.html")},
            {"screenshot": shots.join("job.png")},
            {"submit": format!(
                "(() => {{ const form = [...document.querySelectorAll('form.judge')].find(f => \
                   f.subject.value === 'finding' && f.item.value === '{rule}'); \
                   form.note.value = '{note}'; \
                   form.querySelector('button[value=wrong]').click(); return 'sent'; }})()"
            )},
            {"eval": "location.pathname"},
            {"text": true},
            {"go": format!("{root}/demo/jobs/{bobs}.html")},
            {"text": true},
            {"go": format!("{root}/download/demo/{bobs}.csv")},
            {"text": true},
            {"go": format!("{root}/compare?a={alices}&b={job}")},
            {"eval": "document.querySelectorAll('svg').length"},
            {"screenshot": shots.join("compare.png")},
        ]),
    );
    let text = |i: usize| values[i].as_str().unwrap_or_default().to_string();
    assert!(text(1).contains("signed in as alice"), "{}", text(1));
    assert!(text(1).contains(&job), "her job is listed");
    assert!(!text(1).contains(&format!("\n{bobs}\t")), "bob's is not");
    assert_eq!(text(5), "sent");
    assert_eq!(
        text(6),
        format!("/demo/jobs/{job}.html"),
        "back on the job's page"
    );
    assert!(text(7).contains("you said: wrong"), "{}", text(7));
    assert!(text(9).contains("that you may see"), "{}", text(9));
    assert!(text(11).contains("that you may see"), "{}", text(11));
    assert!(
        values[13].as_u64().unwrap_or(0) > 0,
        "the comparison's charts"
    );
    let stored = common::sql_json(
        JOBSIGHT,
        &data,
        &format!("SELECT by, by_owner, item, judgement FROM feedback WHERE note = '{note}'"),
    );
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0]["by"], "alice");
    assert_eq!(stored[0]["item"], rule.as_str());
    assert_eq!(stored[0]["judgement"], "wrong");
    for shot in ["jobs.png", "job.png", "compare.png"] {
        let size = std::fs::metadata(shots.join(shot)).unwrap().len();
        assert!(size > 10_000, "{shot}: {size} bytes");
    }
    a_phone_and_a_desktop_read_the_same_pages(shots, &root, &job);
    eprintln!("screenshots in {}", shots.display());
}

/// What the layout must give at a desktop's 1280 px and a phone's 390 px (issue 67): no page
/// wider than the screen; in the job list, the state, verdict and efficiencies of every job on
/// screen, and on a desktop each on one line; on a job's page, what to do before anything
/// else. Screenshots of each (`jobs-1280.png`, `job-390.png`, ...) go to the test's folder.
fn a_phone_and_a_desktop_read_the_same_pages(shots: &Path, root: &str, job: &str) {
    // Measured against the width asked for (`WIDTH`): a phone's browser widens its layout
    // viewport to fit what is too wide, so `innerWidth` would hide the overflow.
    // [overflow px, cells off screen, cells wrapped] of the job list; [overflow (of the page,
    // or of any text outside a table, which scrolls on its own), top of the first finding, top
    // of the job's facts] of a job's page.
    const LIST: &str = "JSON.stringify((() => { const w = WIDTH; \
        const cells = [...document.querySelectorAll('table.jobs td')].filter(td => \
          ['state', 'verdict', 'CPU eff.', 'memory eff.'].includes(td.dataset.label)); \
        const off = cells.filter(td => td.getBoundingClientRect().right > w + 1).length; \
        const lines = td => { const r = document.createRange(); r.selectNodeContents(td); \
          return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; }; \
        const wrapped = cells.filter(td => lines(td) > 1).length; \
        return [document.documentElement.scrollWidth - w, off, wrapped, cells.length]; })())";
    const PAGE: &str = "JSON.stringify((() => { const w = WIDTH; \
        const top = s => { const e = document.querySelector(s); \
          return e ? e.getBoundingClientRect().top + window.scrollY : -1; }; \
        const outside = [...document.body.querySelectorAll('*')].filter(e => \
          !e.closest('table, .scroll, svg, pre')); \
        const widest = Math.max(...outside.map(e => \
          e.getBoundingClientRect().left + Math.max(e.scrollWidth, e.getBoundingClientRect().width))); \
        return [Math.max(document.documentElement.scrollWidth, widest) - w, \
          top('.finding'), top('table.facts')]; })())";
    let mut steps = Vec::new();
    for width in [1280, 390] {
        steps.extend([
            serde_json::json!({"width": width}),
            serde_json::json!({"go": format!("{root}/jobs?days=3660")}),
            serde_json::json!({"eval": LIST.replace("WIDTH", &width.to_string())}),
            serde_json::json!({"screenshot": shots.join(format!("jobs-{width}.png"))}),
            serde_json::json!({"go": format!("{root}/demo/jobs/{job}.html")}),
            serde_json::json!({"eval": PAGE.replace("WIDTH", &width.to_string())}),
            serde_json::json!({"screenshot": shots.join(format!("job-{width}.png"))}),
        ]);
    }
    let values = browse(shots, "widths", serde_json::Value::Array(steps));
    let numbers =
        |i: usize| -> Vec<f64> { serde_json::from_str(values[i].as_str().unwrap()).unwrap() };
    for (at, width) in [(0, 1280), (7, 390)] {
        let list = numbers(at + 2);
        assert!(
            list[0] <= 0.0,
            "{width} px: the list is {} px wider than the screen",
            list[0]
        );
        assert!(list[3] > 0.0, "{width} px: no job listed");
        assert_eq!(
            list[1], 0.0,
            "{width} px: state, verdict or efficiency off screen"
        );
        if width == 1280 {
            assert_eq!(
                list[2], 0.0,
                "{width} px: state, verdict or efficiency wrapped"
            );
        }
        let page = numbers(at + 5);
        assert!(
            page[0] <= 0.0,
            "{width} px: the job page is {} px wider than the screen",
            page[0]
        );
        assert!(
            page[1] >= 0.0 && page[1] < page[2],
            "{width} px: what to do ({} px down) comes after the job's facts ({} px)",
            page[1],
            page[2]
        );
    }
}
