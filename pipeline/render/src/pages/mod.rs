//! What a person reads of the report pages and of the web interface: one folder per page,
//! holding its template, the values it is rendered with and how it is written or checked
//! (`job`, `user`, `day`, `workflow`, `index`, `running`, and the web interface's own `jobs`,
//! `compare` and `message`). Beside them what pages share: the layout every page extends
//! (`base.html`), their SVG [`charts`], how every page writes its values (`format`), the
//! `#SBATCH` lines of a job (`suggest`), what a served page adds (`served`), writing a day's
//! pages (`write`) and the samples `check` renders (`sample`).
//!
//! The templates are minijinja, HTML-escaped automatically; a site overrides them file by file
//! with `[report] templates` ([`PageTemplates`]), and [`check`] (part of `jobsight check`)
//! renders the site's against samples or checks the names they use. The report stage
//! (`jobsight_report`) gathers the facts and chooses what each page compares; this crate renders
//! and writes. Everything from Slurm (job names, users, accounts, node lists, paths) is
//! hostile: cleaned of control characters when a value is built, escaped by the engine in the
//! page, and by plotters inside the SVG.
//!
//! A new page is a new folder here (its `mod.rs` with its [`Page`], values and writing, and its
//! template), an entry in [`PAGES`], and its route in the application.

pub mod charts;
mod format;
mod sample;
pub mod served;
pub(crate) mod suggest;
pub mod write;

// The pages; public where the application calls into one (the served list, comparison and
// message, and the workflow page written on request).
pub mod compare;
mod day;
mod index;
mod job;
pub mod jobs;
pub mod message;
mod running;
mod user;
pub mod workflow;

pub use write::{write_day, write_job};

use minijinja::Value;

use crate::templates::{TemplateError, Templates};

use charts::ChartError;
use jobsight_report::Settings;

/// A page's template: the file name a site's own file replaces it by, the built-in text, and
/// how [`check`] verifies the template in effect.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub template: &'static str,
    pub text: &'static str,
    pub check: PageCheck,
}

/// How [`check`] verifies a page's template in effect.
#[derive(Debug, Clone, Copy)]
pub enum PageCheck {
    /// Rendered by the page folder's own `check` against a sample with every value set (made of
    /// `sample`'s data); an error names the template and the line that failed.
    Sample(fn(&Templates, &Settings) -> Result<(), PageError>),
    /// Allowed to use only these names (a page whose facts have no sample).
    Names(&'static [&'static str]),
}

/// The layout every page extends.
const BASE: (&str, &str) = ("base.html", include_str!("base.html"));

/// Every page, each from its folder, in the order [`check`] verifies them.
pub const PAGES: [Page; 9] = [
    job::PAGE,
    user::PAGE,
    day::PAGE,
    index::PAGE,
    workflow::PAGE,
    jobs::PAGE,
    compare::PAGE,
    message::PAGE,
    running::PAGE,
];

/// Why a page, or `jobsight check`'s samples, could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// A chart that could not be drawn, named by its title.
    #[error("cannot render the result: {0}")]
    Chart(#[from] ChartError),
}

/// The page templates in effect: the built-in ones ([`PAGES`] and the layout), each replaced by
/// the site's file of its name in `[report] templates`. Each page's folder adds the methods that
/// render it (`PageTemplates::job`, `PageTemplates::workflow_value`, …).
#[derive(Debug)]
pub struct PageTemplates {
    templates: Templates,
}

/// The built-in templates as the template engine loads them: the layout, then every page's.
fn builtin() -> Vec<(&'static str, &'static str)> {
    std::iter::once(BASE)
        .chain(PAGES.iter().map(|p| (p.template, p.text)))
        .collect()
}

impl PageTemplates {
    /// The templates of `settings`: the built-in ones and the site's from `settings.templates`.
    pub fn load(settings: &Settings) -> Result<PageTemplates, TemplateError> {
        Ok(PageTemplates {
            templates: Templates::load(&builtin(), settings.templates.as_deref())?,
        })
    }

    /// A page of the web interface: template `name` with `value` (a report page's, or one of the
    /// web interface's own) and the signed-in person's values under `served`.
    pub fn served(
        &self,
        name: &str,
        value: Result<Value, ChartError>,
        who: &served::Served,
        extra: serde_json::Value,
    ) -> Result<String, String> {
        self.render(name, value.map(|v| served::with_served(v, who, extra)))
    }

    /// Template `name` rendered with a page's `value`, or why not ([`PageError`]'s words), which
    /// the report stage lists after the page it was for.
    fn render(&self, name: &str, value: Result<Value, ChartError>) -> Result<String, String> {
        let value = value.map_err(|e| PageError::from(e).to_string())?;
        self.templates
            .render(name, &value)
            .map_err(|e| PageError::from(e).to_string())
    }
}

/// Checks the page templates in effect (`jobsight check`): each parses, and each page's is
/// verified as its [`PageCheck`] says. Returns a line for `check`'s output.
pub fn check(settings: &Settings) -> Result<String, PageError> {
    let pages = Templates::load(&builtin(), settings.templates.as_deref())?;
    for page in PAGES {
        match page.check {
            PageCheck::Sample(render) => render(&pages, settings)?,
            PageCheck::Names(names) => pages.check_names(page.template, names)?,
        }
    }
    Ok(format!(
        "report: page templates {} pass; pages go to {}",
        match &settings.templates {
            Some(dir) => format!("(built-in, with the site's from {})", dir.display()),
            None => "(built-in)".into(),
        },
        settings.dir.display()
    ))
}

#[cfg(test)]
mod bands_tests;

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use chrono::DateTime;

    use super::*;
    use chrono::NaiveDate;
    use jobsight_report::{Inputs, ReportError, load, load_telemetry};
    use jobsight_warehouse::catalog::rows::{FindingRow, JobRow, JobSummaryRow, TelemetryBuilder};
    use jobsight_warehouse::catalog::{self, Table};
    use jobsight_warehouse::query;

    const DAY: &str = "2026-11-20";
    /// What Slurm may hand over as a job name: markup, control bytes, a quote.
    const HOSTILE: &str = "<script>alert(1)</script>\u{1b}[31m\u{7}'\"&";

    /// A runtime for the report stage's loading calls, which a test awaits itself.
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// The summaries' test warehouse, its summaries, and a job whose name, user, account and
    /// node are hostile, with telemetry and a finding that quotes them.
    fn warehouse(data: &Path) -> NaiveDate {
        jobsight_summary::fixture::fixture(data);
        let day: NaiveDate = DAY.parse().unwrap();
        let start = DateTime::parse_from_rfc3339("2026-11-20T08:00:00Z")
            .unwrap()
            .to_utc();
        let job = JobRow {
            cluster: "c".into(),
            job_id: "666".into(),
            user: Some(format!("mallory{HOSTILE}")),
            account: Some(HOSTILE.into()),
            partition: Some("cpu".into()),
            num_nodes: Some(1),
            nodes: Some(format!("n<b>1{HOSTILE}")),
            cpus: Some(16),
            req_mem_mb: Some(32_768),
            time_limit_s: Some(86_400),
            submit: Some(start),
            start: Some(start),
            end: start + chrono::Duration::hours(2),
            state: Some("COMPLETED".into()),
            name: Some(HOSTILE.into()),
            source: "test".into(),
            // The note quotes what sacct printed (a node list that does not expand).
            note: Some(format!(
                "its node list cannot be expanded (\"n<b>1{HOSTILE}\": '[' without ']')\nsteps 666.extern had not ended when accounting was read"
            )),
            ..JobRow::default()
        };
        JobRow::write_part(data, day, "hostile", &[job]).unwrap();
        let summary = JobSummaryRow {
            job_id: "666".into(),
            elapsed_s: 7200.0,
            trimmed: false,
            nodes_expected: Some(1),
            nodes_seen: 1,
            nodes_missing: None,
            metrics: 1,
            samples: 240,
            coverage_min: Some(1.0),
            coverage_mean: Some(1.0),
            judgeable: true,
            not_judgeable_reason: None,
            duty_cycle: None,
            cpu_used_cores: Some(1.0),
            cpu_eff: Some(1.0 / 16.0),
            mem_used_max_mb: Some(2048.0),
            mem_eff: Some(1.0 / 16.0),
            time_eff: Some(2.0 / 24.0),
            gpu_util: None,
            core_hours: Some(32.0),
            wasted_core_hours: Some(30.0),
            ..JobSummaryRow::default()
        };
        JobSummaryRow::write_part(data, day, "hostile", &[summary]).unwrap();
        let finding = FindingRow {
            job_id: "666".into(),
            restart_count: Some(0),
            rule: "serial-on-many-cores".into(),
            title: format!("serial code {HOSTILE}"),
            group: "serial".into(),
            method_group: Some(7),
            severity: "warning".into(),
            node: Some(format!("n<b>1{HOSTILE}")),
            window_start: Some(start + chrono::Duration::minutes(30)),
            window_end: Some(start + chrono::Duration::minutes(60)),
            message: format!("job {HOSTILE} used 1 of 16 cores (cpu_user)"),
            fix: "run it with 1 core".into(),
            why: "15 cores idle".into(),
            tools: "perf".into(),
            evidence: format!("{{\"name\": \"{HOSTILE}\"}}"),
            rules_version: "t".into(),
        };
        FindingRow::write_part(data, day, "hostile", &[finding]).unwrap();
        let mut t = TelemetryBuilder::default();
        for i in 0..240 {
            let ts = (start + chrono::Duration::seconds(30 * i)).timestamp_micros();
            t.push(
                "666",
                &format!("n<b>1{HOSTILE}"),
                "cpu_user",
                ts,
                1.0 + (i % 7) as f64 * 0.01,
            );
            t.push("666", &format!("n<b>1{HOSTILE}"), HOSTILE, ts, i as f64);
        }
        catalog::write_part(
            data,
            Table::Telemetry,
            day,
            "hostile",
            &[t.finish().unwrap()],
        )
        .unwrap();
        jobsight_summary::write_days(data, &jobsight_summary::Settings::default(), day, day)
            .unwrap();
        day
    }

    fn every_page(dir: &Path) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                if e.path().is_dir() {
                    stack.push(e.path());
                } else {
                    out.push((e.path(), std::fs::read_to_string(e.path()).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    /// The page's body with each chart's SVG replaced by a mark, for a snapshot that shows the
    /// text (the layout and style are base.html's, the same on every page).
    fn without_svg(page: &str) -> String {
        let mut out = String::new();
        let mut rest = page.split_once("<body>").map_or(page, |(_, body)| body);
        while let Some(i) = rest.find("<svg") {
            out.push_str(&rest[..i]);
            let end = rest[i..].find("</svg>").map_or(rest.len(), |e| i + e + 6);
            out.push_str("[chart]");
            rest = &rest[end..];
        }
        out.push_str(rest);
        out
    }

    #[test]
    fn a_day_gets_every_page_and_hostile_names_stay_text() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let day = warehouse(&data);
        let settings = Settings {
            dir: tmp.path().join("pages"),
            ..Settings::default()
        };
        let templates = PageTemplates::load(&settings).unwrap();
        let written = write_day(
            &data,
            &settings,
            &templates,
            &Inputs::default(),
            day,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(written.failed, vec![]);
        // Jobs 1, 2, 3 and 666; alice, bob and mallory; one cluster.
        assert_eq!((written.jobs, written.users, written.days), (4, 3, 1));
        let pages = every_page(&settings.dir);
        let names: Vec<String> = pages
            .iter()
            .map(|(p, _)| p.strip_prefix(&settings.dir).unwrap().display().to_string())
            .collect();
        assert!(names.contains(&"index.html".to_string()), "{names:?}");
        assert!(names.contains(&"c/jobs/666.html".to_string()), "{names:?}");
        assert!(names.contains(&format!("c/days/{DAY}.html")), "{names:?}");
        assert!(
            names.contains(&"c/users/alice.html".to_string()),
            "{names:?}"
        );
        // The hostile user's page is a plain file name in the users folder.
        assert!(
            names
                .iter()
                .any(|n| n.starts_with("c/users/mallory~3Cscript")),
            "{names:?}"
        );
        for (path, text) in &pages {
            let shown = path.display();
            assert!(!text.contains("<script"), "{shown} runs a script");
            assert!(
                !text.contains("<b>1"),
                "{shown} has markup from a node name"
            );
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{7}'),
                "{shown} has control bytes"
            );
            // Nothing is fetched: no external script, style, image or font.
            // SVG's namespace is a name, not a fetch.
            let text = text.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
            assert!(
                !text.contains("http://") && !text.contains("https://"),
                "{shown} links out"
            );
        }
        let job = &pages
            .iter()
            .find(|(p, _)| p.ends_with("jobs/666.html"))
            .unwrap()
            .1;
        assert!(
            job.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "the name is shown, escaped"
        );
        assert!(job.contains("#SBATCH --mem=3G"), "the suggestion is there");
        assert!(job.matches("<svg").count() == 2, "a chart per metric");
        // The anomalous span of the finding is drawn on the charts.
        assert!(
            job.contains("fill=\"#D6272") || job.contains("fill=\"#d6272"),
            "anomalous span"
        );
        let link = job
            .split("href=\"")
            .nth(2)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert!(link.starts_with("../../c/users/mallory~3Cscript"), "{link}");
        insta::assert_snapshot!("job_page", without_svg(job));
        let day_page = &pages
            .iter()
            .find(|(p, _)| p.ends_with(format!("days/{DAY}.html")))
            .unwrap()
            .1;
        // Every relative link of every page lands on a page that exists.
        for (path, text) in &pages {
            for link in text.split("href=\"").skip(1) {
                let link = link.split('"').next().unwrap();
                let target = path.parent().unwrap().join(link);
                assert!(
                    target.is_file(),
                    "{} links to {link}, which is missing",
                    path.display()
                );
            }
        }
        insta::assert_snapshot!("day_page", without_svg(day_page));
        // Running the day again replaces the pages: same files, same text.
        write_day(
            &data,
            &settings,
            &templates,
            &Inputs::default(),
            day,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(every_page(&settings.dir), pages);
    }

    /// Job 667: an earlier healthy run of job 666's name by the same user, with telemetry of
    /// both of its metrics; and both jobs' `features_job` means.
    fn healthy_twin(data: &Path, day: NaiveDate) {
        use jobsight_warehouse::catalog::rows::FeaturesJobRow;
        let start = DateTime::parse_from_rfc3339("2026-11-20T04:00:00Z")
            .unwrap()
            .to_utc();
        let job = JobRow {
            cluster: "c".into(),
            job_id: "667".into(),
            user: Some(format!("mallory{HOSTILE}")),
            num_nodes: Some(1),
            nodes: Some("n2".into()),
            cpus: Some(16),
            submit: Some(start),
            start: Some(start),
            end: start + chrono::Duration::hours(2),
            state: Some("COMPLETED".into()),
            name: Some(HOSTILE.into()),
            source: "test".into(),
            ..JobRow::default()
        };
        JobRow::write_part(data, day, "twin", &[job]).unwrap();
        let summary = JobSummaryRow {
            job_id: "667".into(),
            elapsed_s: 7200.0,
            trimmed: false,
            nodes_expected: Some(1),
            nodes_seen: 1,
            nodes_missing: None,
            metrics: 2,
            samples: 480,
            coverage_min: Some(1.0),
            coverage_mean: Some(1.0),
            judgeable: true,
            not_judgeable_reason: None,
            duty_cycle: None,
            cpu_used_cores: Some(15.0),
            cpu_eff: Some(15.0 / 16.0),
            mem_used_max_mb: None,
            mem_eff: None,
            time_eff: None,
            gpu_util: None,
            core_hours: Some(32.0),
            wasted_core_hours: Some(2.0),
            ..JobSummaryRow::default()
        };
        JobSummaryRow::write_part(data, day, "twin", &[summary]).unwrap();
        let mut t = TelemetryBuilder::default();
        for i in 0..240 {
            let ts = (start + chrono::Duration::seconds(30 * i)).timestamp_micros();
            t.push("667", "n2", "cpu_user", ts, 15.0);
            t.push("667", "n2", HOSTILE, ts, 2.0 * i as f64);
        }
        catalog::write_part(data, Table::Telemetry, day, "twin", &[t.finish().unwrap()]).unwrap();
        let mean = |job: &str, metric: &str, mean: f64| FeaturesJobRow {
            job_id: job.into(),
            metric: metric.into(),
            nodes: 1,
            mean: Some(mean),
            ..Default::default()
        };
        let means = [
            mean("666", "cpu_user", 1.0),
            mean("666", HOSTILE, 120.0),
            mean("667", "cpu_user", 15.0),
            mean("667", HOSTILE, 240.0),
        ];
        FeaturesJobRow::write_part(data, day, "twin", &means).unwrap();
    }

    /// `n` healthy runs of `lammps` by ann, one a day up to `day`, each with its summary and
    /// its job mean of `cpu_user`: enough for an application's band.
    fn healthy_lammps_runs(data: &Path, day: NaiveDate, n: u32) {
        use jobsight_warehouse::catalog::rows::FeaturesJobRow;
        for k in 0..n {
            let on = day - chrono::Days::new(u64::from(k));
            let end = DateTime::parse_from_rfc3339(&format!("{on}T10:00:00Z"))
                .unwrap()
                .to_utc();
            let id = format!("{}", 900 + k);
            let job = JobRow {
                cluster: "c".into(),
                job_id: id.clone(),
                user: Some("ann".into()),
                num_nodes: Some(1),
                cpus: Some(4),
                start: Some(end - chrono::Duration::hours(1)),
                end,
                state: Some("COMPLETED".into()),
                name: Some("lammps".into()),
                source: "test".into(),
                ..JobRow::default()
            };
            let summary = JobSummaryRow {
                job_id: id.clone(),
                elapsed_s: 3600.0,
                judgeable: true,
                ..JobSummaryRow::default()
            };
            let mean = FeaturesJobRow {
                job_id: id,
                metric: "cpu_user".into(),
                nodes: 1,
                mean: Some(3.0 + f64::from(k)),
                ..Default::default()
            };
            let part = |table, batch| catalog::write_part(data, table, on, "lammps", &[batch]);
            part(Table::Jobs, JobRow::batch(&[job]).unwrap()).unwrap();
            part(Table::JobSummary, JobSummaryRow::batch(&[summary]).unwrap()).unwrap();
            part(Table::FeaturesJob, FeaturesJobRow::batch(&[mean]).unwrap()).unwrap();
        }
    }

    /// What a day's report stores as each job's reference (`reference_runs`,
    /// `reference_bands`), which the served pages read back, is what they would compute on
    /// request: the same healthy run and the same band, for every job of the day. A job the
    /// report has not seen has nothing stored (and is computed then).
    #[test]
    fn the_stored_references_are_the_computed_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let day = warehouse(&data);
        healthy_twin(&data, day);
        healthy_lammps_runs(&data, day, 6);
        let settings = Settings {
            dir: tmp.path().join("pages"),
            ..Settings::default()
        };
        let templates = PageTemplates::load(&settings).unwrap();
        write_day(
            &data,
            &settings,
            &templates,
            &Inputs::default(),
            day,
            &mut |_| {},
        )
        .unwrap();
        let groups = runtime()
            .block_on(async {
                let ctx = query::session(&data).await?;
                let facts = load::facts(&ctx, &load::Scope { day, job: None }).await?;
                let (healthy, bands) = load::healthy(&ctx, day).await?;
                let computed = jobsight_report::select::reference_runs(&facts, &healthy);
                let mut groups = Vec::new();
                for job in &facts.jobs {
                    let (runs, stored) = load::stored_reference(&ctx, day, &job.job_id)
                        .await?
                        .unwrap_or_else(|| panic!("nothing stored for job {}", job.job_id));
                    let id = |r: &load::HealthyRun| (r.job_id.clone(), r.day, r.user.clone());
                    let run = runs.first().map(id);
                    assert_eq!(run, computed.get(&job.job_id).map(id), "{}", job.job_id);
                    let (band, group) = stored.for_job(&job.name, &job.user);
                    let (want_band, want_group) = bands.for_job(&job.name, &job.user);
                    assert_eq!((band, &group), (want_band, &want_group), "{}", job.job_id);
                    groups.push((job.job_id.clone(), group, run.map(|r| r.0)));
                }
                assert!(load::stored_reference(&ctx, day, "404").await?.is_none());
                Ok::<_, ReportError>(groups)
            })
            .unwrap();
        let of = |id: &str| groups.iter().find(|g| g.0 == id).cloned().unwrap();
        assert_eq!(of("666").2.as_deref(), Some("667"), "{groups:?}");
        assert_eq!(
            of("900").1,
            load::ReferenceGroup::Application("lammps".into()),
            "{groups:?}"
        );
        assert_eq!(of("900").2.as_deref(), Some("901"), "{groups:?}");
    }

    /// A day's pages load only the telemetry they chart: with one chart per page, job 666 gets
    /// the metric its finding names, and its healthy reference run (job 667, the same day) that
    /// metric too, whatever 667's own page charts; the page shows one chart with the reference
    /// line.
    #[test]
    fn only_the_charted_telemetry_is_loaded() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let day = warehouse(&data);
        healthy_twin(&data, day);
        let settings = Settings {
            dir: tmp.path().join("pages"),
            max_charts: 1,
            ..Settings::default()
        };
        let inputs = Inputs::default();
        let (facts, references) = runtime()
            .block_on(async {
                let ctx = query::session(&data).await?;
                let mut facts = load::facts(&ctx, &load::Scope { day, job: None }).await?;
                let (healthy, bands) = load::healthy(&ctx, day).await?;
                let references = load_telemetry(
                    &data, &ctx, day, &mut facts, &healthy, &bands, &inputs, &settings,
                )
                .await?;
                Ok::<_, ReportError>((facts, references))
            })
            .unwrap();
        let metrics = |series: &load::Series| -> Vec<String> {
            let mut m: Vec<String> = series.values().flat_map(|m| m.keys().cloned()).collect();
            m.sort();
            m.dedup();
            m
        };
        assert_eq!(metrics(&facts.telemetry["666"]), vec!["cpu_user"]);
        assert_eq!(
            metrics(&facts.telemetry["667"]).len(),
            1,
            "667's own page: one chart"
        );
        let (run, series) = references.of("666").expect("666 has a reference");
        assert_eq!(run.job_id, "667");
        assert_eq!(series["n2"]["cpu_user"].len(), load::POINTS as usize);
        let templates = PageTemplates::load(&settings).unwrap();
        let written = write_day(&data, &settings, &templates, &inputs, day, &mut |_| {}).unwrap();
        assert_eq!(written.failed, vec![]);
        let page = std::fs::read_to_string(settings.dir.join("c/jobs/666.html")).unwrap();
        assert_eq!(page.matches("<svg").count(), 1, "one chart");
        assert!(
            page.contains("healthy run 667"),
            "the reference line is drawn"
        );
        // Loaded one job at a time (667 is 666's reference, loaded again for 666's page), the
        // pages are the same.
        let pages = every_page(&settings.dir);
        std::fs::remove_dir_all(&settings.dir).unwrap();
        write::write_day_by(&data, &settings, &templates, &inputs, day, 1, &mut |_| {}).unwrap();
        assert_eq!(every_page(&settings.dir), pages);
    }

    #[test]
    fn one_job_on_demand_and_an_unknown_one_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        warehouse(&data);
        let settings = Settings {
            dir: tmp.path().join("pages"),
            ..Settings::default()
        };
        let templates = PageTemplates::load(&settings).unwrap();
        let path = write_job(&data, &settings, &templates, &Inputs::default(), "1").unwrap();
        assert_eq!(path, settings.dir.join("c/jobs/1.html"));
        let page = std::fs::read_to_string(&path).unwrap();
        assert!(page.contains("Job 1"), "{page}");
        let err = write_job(
            &data,
            &settings,
            &templates,
            &Inputs::default(),
            "9' OR '1'='1",
        )
        .unwrap_err();
        assert!(matches!(err, ReportError::NoSuchJob(_)), "{err}");
    }

    #[test]
    fn the_built_in_pages_pass_the_check_and_a_broken_one_does_not() {
        check(&Settings::default()).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("job.html"), "{{ job.nmae }}").unwrap();
        std::fs::write(tmp.path().join("day.html"), "{{ totls }}").unwrap();
        let settings = Settings {
            templates: Some(tmp.path().to_path_buf()),
            ..Settings::default()
        };
        let err = check(&settings).unwrap_err().to_string();
        assert!(err.contains("job.html"), "{err}");
        std::fs::remove_file(tmp.path().join("job.html")).unwrap();
        let err = check(&settings).unwrap_err().to_string();
        assert!(err.contains("day.html") && err.contains("totls"), "{err}");
        // Every page's own check runs, and checks its own template: each page of PAGES broken
        // alone is named.
        std::fs::remove_file(tmp.path().join("day.html")).unwrap();
        for page in PAGES.map(|p| p.template) {
            std::fs::write(tmp.path().join(page), "{{ nmae }}").unwrap();
            let err = check(&settings).unwrap_err().to_string();
            assert!(err.contains(page), "{page}: {err}");
            std::fs::remove_file(tmp.path().join(page)).unwrap();
        }
        check(&settings).unwrap();
    }

    #[test]
    fn a_site_template_replaces_a_page() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        warehouse(&data);
        let templates = tmp.path().join("templates");
        std::fs::create_dir(&templates).unwrap();
        std::fs::write(
            templates.join("job.html"),
            "{% extends \"base.html\" %}{% block body %}<h1>{{ job.name }} at our site</h1>{% endblock %}",
        )
        .unwrap();
        let settings = Settings {
            dir: tmp.path().join("pages"),
            templates: Some(templates),
            ..Settings::default()
        };
        let site_pages = PageTemplates::load(&settings).unwrap();
        let path = write_job(&data, &settings, &site_pages, &Inputs::default(), "666").unwrap();
        let page = std::fs::read_to_string(path).unwrap();
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{page}"
        );
        assert!(page.contains("at our site</h1>"), "{page}");
    }

    #[test]
    fn the_page_escapes_what_slurm_hands_over() {
        let snapshot = jobsight_running::snapshot::sample();
        let settings = Settings::default();
        let page = PageTemplates::load(&settings)
            .unwrap()
            .running(&snapshot, snapshot.taken_at)
            .unwrap();
        assert!(
            page.contains("train-&lt;model&gt;"),
            "the job name is escaped"
        );
        assert!(page.contains("bar bad") && page.contains("sev-critical"));
        assert!(page.contains("not judged: telemetry of job 4243"));
    }
}
