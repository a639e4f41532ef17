//! DAG files: when a schedule runs and which steps it runs, in order.
//!
//! One TOML file per DAG (`dags/per-job.toml`, `dags/nightly.toml`); the file's stem is the DAG's
//! name. The built-in files are compiled in; a site directory (`schedule.dags`) adds DAGs or
//! replaces a built-in one of the same name. Everything is checked when the file is read, with
//! errors that name the file and the key, so `jobsight check` and the daemon see the same
//! problems before anything runs.
//!
//! The schedule is a `cron` crate expression evaluated in UTC, with seconds first (6 or 7 fields);
//! [`due`] decides whether a run is due and catches a missed one up once, as systemd's
//! `Persistent=true` does, never once per missed run.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::Deserialize;

// Re-exported: `dag::On` was its path before the steps had a module of their own.
pub use super::step::On;
use super::step::Step;

/// The built-in DAG files, as shipped in the repository's `dags/` folder.
pub const BUILTIN: [(&str, &str); 3] = [
    ("per-job", include_str!("../../../../dags/per-job.toml")),
    ("nightly", include_str!("../../../../dags/nightly.toml")),
    ("running", include_str!("../../../../dags/running.toml")),
];

/// A DAG's shortest allowed retry delay and its longest, and the most retries: a typo must not
/// turn into a loop that never sleeps or a run that never ends.
const RETRY_AFTER_S: std::ops::RangeInclusive<u64> = 1..=3600;
const MAX_RETRIES: u32 = 10;

#[derive(Debug, thiserror::Error)]
pub enum DagError {
    #[error("cannot read the DAG file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("DAG file {path}: {reason}")]
    Invalid { path: String, reason: String },
    #[error("no DAG named {name:?}; there are: {known}")]
    Unknown { name: String, known: String },
}

/// What a run does when the daemon finds that it missed one or more scheduled times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CatchUp {
    /// Run once for the latest missed time, however many were missed.
    Once,
    /// Wait for the next scheduled time.
    Skip,
}

/// One DAG, checked.
#[derive(Debug, Clone)]
pub struct Dag {
    pub name: String,
    pub description: String,
    /// The cron expression as written.
    pub cron: String,
    pub schedule: cron::Schedule,
    pub catch_up: CatchUp,
    /// `false` pauses the DAG: the daemon does not run it (`dag run` still does).
    pub enabled: bool,
    pub retries: u32,
    pub retry_after: std::time::Duration,
    pub steps: Vec<Step>,
    /// Where it came from: `built-in dags/NAME.toml` or a path.
    pub source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDag {
    description: Option<String>,
    schedule: String,
    catch_up: Option<CatchUp>,
    enabled: Option<bool>,
    retries: Option<u32>,
    retry_after_s: Option<u64>,
    #[serde(default)]
    step: Vec<RawStep>,
}

/// A step as written: every parameter optional here, checked against the step's kind below.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    run: String,
    limit: Option<usize>,
    on: Option<String>,
    days: Option<u32>,
    critical_only: Option<bool>,
    keep_days: Option<u32>,
}

impl Dag {
    /// Parses and checks one DAG file's text; `source` names it in errors.
    pub fn parse(name: &str, text: &str, source: &str) -> Result<Dag, DagError> {
        let invalid = |reason: String| DagError::Invalid {
            path: source.to_string(),
            reason,
        };
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(invalid(format!(
                "the DAG name {name:?} (the file's stem) may hold only letters, digits, '-' and '_'"
            )));
        }
        let raw: RawDag = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        let schedule = cron::Schedule::from_str(&raw.schedule).map_err(|e| {
            invalid(format!(
                "schedule: {:?} is not a cron expression ({e}); the fields are sec min hour \
                 day-of-month month day-of-week [year], seconds first, in UTC",
                raw.schedule
            ))
        })?;
        if schedule.upcoming(Utc).next().is_none() {
            return Err(invalid(format!(
                "schedule: {:?} never fires again",
                raw.schedule
            )));
        }
        let retries = raw.retries.unwrap_or(2);
        if retries > MAX_RETRIES {
            return Err(invalid(format!(
                "retries: {retries} is more than {MAX_RETRIES}"
            )));
        }
        let retry_after_s = raw.retry_after_s.unwrap_or(10);
        if !RETRY_AFTER_S.contains(&retry_after_s) {
            return Err(invalid(format!(
                "retry_after_s: {retry_after_s} is outside {}..={}",
                RETRY_AFTER_S.start(),
                RETRY_AFTER_S.end()
            )));
        }
        if raw.step.is_empty() {
            return Err(invalid("no [[step]]: a DAG runs at least one step".into()));
        }
        let mut steps = Vec::with_capacity(raw.step.len());
        for (i, step) in raw.step.into_iter().enumerate() {
            let at = format!("step {} ({})", i + 1, step.run);
            for step in Step::from_raw(step).map_err(|reason| invalid(format!("{at}: {reason}")))? {
                // A step that works on what an earlier step of the run hands over needs it
                // before it: predict the classify step's findings, the running steps the
                // listing, its measurements or its judged snapshot.
                if let Some((before, why)) = step.needs()
                    && !steps.contains(&before)
                {
                    return Err(invalid(format!(
                        "{at}: needs a step \"{}\" before it: {why}",
                        before.describe()
                    )));
                }
                steps.push(step);
            }
        }
        Ok(Dag {
            name: name.to_string(),
            description: raw.description.unwrap_or_default(),
            cron: raw.schedule,
            schedule,
            catch_up: raw.catch_up.unwrap_or(CatchUp::Once),
            enabled: raw.enabled.unwrap_or(true),
            retries,
            retry_after: std::time::Duration::from_secs(retry_after_s),
            steps,
            source: source.to_string(),
        })
    }

    /// The next scheduled time strictly after `t`.
    pub fn next_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.schedule.after(&t).next()
    }

    /// The latest scheduled time at or before `t`.
    pub fn latest_at_or_before(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        // Walking backwards from a time yields the times before it: start from the next whole
        // second (cron has no finer unit), so that `t` itself counts when it is a fire time.
        use chrono::SubsecRound;
        self.schedule
            .after(&(t.trunc_subsecs(0) + chrono::TimeDelta::seconds(1)))
            .next_back()
    }
}

impl Step {
    /// The step this one works on the output of, which must come before it in its DAG, and why.
    pub(super) fn needs(&self) -> Option<(Step, &'static str)> {
        match *self {
            Step::Predict { on } => Some((
                Step::Classify { on },
                "predict joins the models' verdicts with that step's findings",
            )),
            Step::Features { on: On::Running } => {
                Some((Step::ListRunning, "it measures the jobs that step lists"))
            }
            Step::Classify { on: On::Running } => Some((
                Step::Features { on: On::Running },
                "it judges the features that step computes",
            )),
            Step::Act | Step::RunningPage => Some((
                Step::Classify { on: On::Running },
                "it works on the conditions that step finds",
            )),
            _ => None,
        }
    }

    /// The steps of one `[[step]]`: one, or the running DAG's five for `run = "running"` (the
    /// one step of DAG files written before the running DAG had steps of its own).
    fn from_raw(raw: RawStep) -> Result<Vec<Step>, String> {
        if raw.run == "running" {
            if raw.limit.is_some()
                || raw.on.is_some()
                || raw.days.is_some()
                || raw.critical_only.is_some()
                || raw.keep_days.is_some()
            {
                return Err("running takes no parameter (it takes: none)".into());
            }
            return Ok(vec![
                Step::ListRunning,
                Step::Features { on: On::Running },
                Step::Classify { on: On::Running },
                Step::Act,
                Step::RunningPage,
            ]);
        }
        Self::from_raw_one(raw).map(|step| vec![step])
    }

    fn from_raw_one(raw: RawStep) -> Result<Step, String> {
        // Each step takes only its own parameters: a parameter of another step is a mistake.
        let allowed: &[&str] = match raw.run.as_str() {
            "ingest" => &["limit"],
            "features" | "classify" | "predict" => &["on", "days"],
            "compact" | "summarize" | "report" | "slurm-workflows" => &["days"],
            "retrain" | "workflow-score" | "list-running" | "act" | "running-page" => &[],
            "notify" => &["critical_only"],
            "retain" => &["keep_days"],
            other => {
                return Err(format!(
                    "unknown step {other:?}; the steps are ingest, features, classify, predict, summarize, report, compact, notify, retrain, retain, slurm-workflows, workflow-score, list-running, act, running-page, and running (list-running, features and classify on = \"running\", act, running-page)"
                ));
            }
        };
        let given = [
            ("limit", raw.limit.is_some()),
            ("on", raw.on.is_some()),
            ("days", raw.days.is_some()),
            ("critical_only", raw.critical_only.is_some()),
            ("keep_days", raw.keep_days.is_some()),
        ];
        for (key, present) in given {
            if present && !allowed.contains(&key) {
                return Err(format!(
                    "{key} is not a parameter of this step (it takes: {})",
                    if allowed.is_empty() {
                        "none".to_string()
                    } else {
                        allowed.join(", ")
                    }
                ));
            }
        }
        let on = || -> Result<On, String> {
            match (raw.on.as_deref(), raw.days) {
                (Some("ingested") | None, None) => Ok(On::Ingested),
                (Some("ingested") | None, Some(_)) => {
                    Err("days goes with on = \"days\"".to_string())
                }
                (Some("days"), days) => {
                    let days = days.unwrap_or(1);
                    if !(1..=366).contains(&days) {
                        return Err(format!("days: {days} is outside 1..=366"));
                    }
                    Ok(On::Days(days))
                }
                (Some("running"), None) => Ok(On::Running),
                (Some("running"), Some(_)) => Err("days goes with on = \"days\"".to_string()),
                (Some(other), _) => Err(format!(
                    "on: {other:?} is not \"ingested\" (the jobs this run's ingest step finished), \"days\" or \"running\" (the jobs this run's list-running step listed)"
                )),
            }
        };
        Ok(match raw.run.as_str() {
            "ingest" => {
                if raw.limit == Some(0) {
                    return Err("limit: 0 would never ingest anything".into());
                }
                Step::Ingest { limit: raw.limit }
            }
            "features" => Step::Features { on: on()? },
            "classify" => Step::Classify { on: on()? },
            "predict" => match on()? {
                On::Running => {
                    return Err("on = \"running\": the models judge finished jobs only".into());
                }
                on => Step::Predict { on },
            },
            "compact" | "summarize" | "report" | "slurm-workflows" => {
                let days = raw.days.unwrap_or(1);
                if !(1..=366).contains(&days) {
                    return Err(format!("days: {days} is outside 1..=366"));
                }
                match raw.run.as_str() {
                    "compact" => Step::Compact { days },
                    "summarize" => Step::Summarize { days },
                    "slurm-workflows" => Step::SlurmWorkflows { days },
                    _ => Step::Report { days },
                }
            }
            "notify" => Step::Notify {
                critical_only: raw.critical_only.unwrap_or(false),
            },
            "retrain" => Step::Retrain,
            "workflow-score" => Step::WorkflowScore,
            "list-running" => Step::ListRunning,
            "act" => Step::Act,
            "running-page" => Step::RunningPage,
            _ => {
                let keep_days = raw.keep_days.ok_or("keep_days is required")?;
                if !(1..=36_500).contains(&keep_days) {
                    return Err(format!("keep_days: {keep_days} is outside 1..=36500"));
                }
                Step::Retain { keep_days }
            }
        })
    }
}

/// Every DAG in effect: the built-in ones, with the `*.toml` files of `dir` (if any) added or
/// replacing a built-in one of the same name. Sorted by name.
pub fn load_all(dir: Option<&Path>) -> Result<Vec<Dag>, DagError> {
    let mut dags = Vec::new();
    for (name, text) in BUILTIN {
        dags.push(Dag::parse(
            name,
            text,
            &format!("built-in dags/{name}.toml"),
        )?);
    }
    if let Some(dir) = dir {
        let entries = std::fs::read_dir(dir).map_err(|source| DagError::Read {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).map_err(|source| DagError::Read {
                path: path.clone(),
                source,
            })?;
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let dag = Dag::parse(&name, &text, &path.display().to_string())?;
            dags.retain(|d| d.name != dag.name);
            dags.push(dag);
        }
    }
    dags.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(dags)
}

/// The DAG named `name` among `dags`.
pub fn find<'a>(dags: &'a [Dag], name: &str) -> Result<&'a Dag, DagError> {
    dags.iter()
        .find(|d| d.name == name)
        .ok_or_else(|| DagError::Unknown {
            name: name.to_string(),
            known: dags
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Whether a DAG should run at `now`, given the scheduled time of its last run: the scheduled time
/// to run for, and how many scheduled times that run stands for (more than one after a stop).
///
/// The latest scheduled time at or before `now` is due when no run has covered it. With
/// [`CatchUp::Once`] it runs once however many were missed; with [`CatchUp::Skip`] it runs only
/// when it is not older than `grace` (the daemon woke up for it), and missed times are left. A DAG
/// that has never run is due at its latest scheduled time.
pub fn due(
    dag: &Dag,
    last: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    grace: chrono::TimeDelta,
) -> Option<(DateTime<Utc>, usize)> {
    if !dag.enabled {
        return None;
    }
    let latest = dag.latest_at_or_before(now)?;
    if last.is_some_and(|l| l >= latest) {
        return None;
    }
    if dag.catch_up == CatchUp::Skip && now - latest > grace {
        return None;
    }
    let missed = match last {
        // Counted up to 100,000 (a day of a schedule every second): the number is for the log.
        Some(last) => dag
            .schedule
            .after(&last)
            .take_while(|t| *t <= now)
            .take(100_000)
            .count(),
        None => 1,
    };
    Some((latest, missed.max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 23, h, m, s).unwrap()
    }

    fn dag(schedule: &str, catch_up: &str) -> Dag {
        Dag::parse(
            "t",
            &format!(
                "schedule = \"{schedule}\"\ncatch_up = \"{catch_up}\"\n[[step]]\nrun = \"notify\"\n"
            ),
            "t.toml",
        )
        .unwrap()
    }

    #[test]
    fn the_built_in_dags_parse_and_list_their_steps() {
        let dags = load_all(None).unwrap();
        let names: Vec<&str> = dags.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["nightly", "per-job", "running"]);
        let per_job = find(&dags, "per-job").unwrap();
        assert_eq!(
            per_job.steps,
            [
                Step::Ingest { limit: Some(2000) },
                Step::Features { on: On::Ingested },
                Step::Classify { on: On::Ingested },
                Step::Predict { on: On::Ingested },
                Step::Notify {
                    critical_only: true
                },
            ]
        );
        assert_eq!(per_job.next_after(at(10, 0, 0)), Some(at(10, 2, 0)));
        let nightly = find(&dags, "nightly").unwrap();
        assert_eq!(
            nightly.next_after(at(10, 0, 0)),
            Some(at(0, 0, 0) + chrono::TimeDelta::hours(26) + chrono::TimeDelta::minutes(30))
        );
        let running = find(&dags, "running").unwrap();
        assert_eq!(
            running.steps,
            [
                Step::ListRunning,
                Step::Features { on: On::Running },
                Step::Classify { on: On::Running },
                Step::Act,
                Step::RunningPage,
            ]
        );
        // A site's file of the time when the running DAG was one step runs the same steps.
        let one_step = Dag::parse(
            "running",
            "schedule = \"0 */10 * * * *\"\n[[step]]\nrun = \"running\"\n",
            "site/running.toml",
        )
        .unwrap();
        assert_eq!(one_step.steps, running.steps);
        assert_eq!(running.next_after(at(10, 3, 0)), Some(at(10, 10, 0)));
        assert_eq!(running.catch_up, CatchUp::Skip);
    }

    #[test]
    fn errors_name_the_file_the_step_and_the_key() {
        let bad = [
            (
                "schedule = \"*/2 * * * *\"\n[[step]]\nrun = \"notify\"\n",
                "not a cron expression",
            ),
            ("schedule = \"0 * * * * *\"\n", "no [[step]]"),
            (
                "schedule = \"0 * * * * *\"\n[[step]]\nrun = \"ingets\"\n",
                "step 1 (ingets): unknown step",
            ),
            (
                "schedule = \"0 * * * * *\"\n[[step]]\nrun = \"notify\"\nlimit = 3\n",
                "step 1 (notify): limit is not a parameter of this step (it takes: critical_only)",
            ),
            (
                "schedule = \"0 * * * * *\"\n[[step]]\nrun = \"features\"\non = \"days\"\ndays = 0\n",
                "days: 0 is outside",
            ),
            (
                "schedule = \"0 * * * * *\"\n[[step]]\nrun = \"features\"\ndays = 2\n",
                "days goes with on = \"days\"",
            ),
            (
                "schedule = \"0 * * * * *\"\nretry_after_s = 0\n[[step]]\nrun = \"notify\"\n",
                "retry_after_s: 0 is outside",
            ),
            (
                "schedule = \"0 * * * * *\"\nretries = 1000\n[[step]]\nrun = \"notify\"\n",
                "retries: 1000",
            ),
            (
                "schedule = \"0 * * * * *\"\ncatchup = \"once\"\n[[step]]\nrun = \"notify\"\n",
                "unknown field `catchup`",
            ),
            (
                "schedule = \"0 * * * * *\"\n[[step]]\nrun = \"retain\"\n",
                "keep_days is required",
            ),
            (
                "schedule = \"0 0 0 1 1 * 2001\"\n[[step]]\nrun = \"notify\"\n",
                "never fires again",
            ),
            (
                "schedule = \"0 * * * * *\"\n[[step]]\nrun = \"predict\"\n",
                "step 1 (predict): needs a step \"classify of the ingested jobs\" before it",
            ),
            (
                "schedule = \"0 * * * * *\"\n[[step]]\nrun = \"classify\"\non = \"days\"\ndays = 2\n[[step]]\nrun = \"predict\"\non = \"days\"\n",
                "step 2 (predict): needs a step \"classify of yesterday\" before it",
            ),
            (
                "schedule = \"0 * * * * *\"\n[[step]]\nrun = \"list-running\"\n[[step]]\nrun = \"act\"\n",
                "step 2 (act): needs a step \"classify the running jobs",
            ),
            (
                "schedule = \"0 * * * * *\"\n[[step]]\nrun = \"features\"\non = \"running\"\n",
                "step 1 (features): needs a step \"list the running jobs (squeue)\" before it",
            ),
            (
                "schedule = \"0 * * * * *\"\n[[step]]\nrun = \"predict\"\non = \"running\"\n",
                "the models judge finished jobs only",
            ),
            (
                "schedule = \"0 * * * * *\"\n[[step]]\nrun = \"running\"\nlimit = 3\n",
                "step 1 (running): running takes no parameter",
            ),
        ];
        for (text, expected) in bad {
            let e = Dag::parse("x", text, "site/x.toml")
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("DAG file site/x.toml: "), "{e}");
            assert!(e.contains(expected), "{text:?}: {e}");
        }
        let e = Dag::parse("../x", "", "x").unwrap_err().to_string();
        assert!(e.contains("may hold only"), "{e}");
    }

    #[test]
    fn a_site_file_replaces_the_built_in_dag_of_its_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("per-job.toml"),
            "schedule = \"0 */5 * * * *\"\n[[step]]\nrun = \"ingest\"\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a DAG").unwrap();
        let dags = load_all(Some(dir.path())).unwrap();
        assert_eq!(dags.len(), 3);
        let per_job = find(&dags, "per-job").unwrap();
        assert_eq!(per_job.cron, "0 */5 * * * *");
        assert!(
            per_job.source.ends_with("per-job.toml"),
            "{}",
            per_job.source
        );
        let e = find(&dags, "weekly").unwrap_err().to_string();
        assert_eq!(
            e,
            "no DAG named \"weekly\"; there are: nightly, per-job, running"
        );
    }

    #[test]
    fn a_missed_run_is_caught_up_once_not_once_per_missed_time() {
        let every_two = dag("0 */2 * * * *", "once");
        let grace = chrono::TimeDelta::seconds(60);
        // Never run: the latest scheduled time is due.
        assert_eq!(
            due(&every_two, None, at(10, 3, 0), grace),
            Some((at(10, 2, 0), 1))
        );
        // Ran for 10:02; at 10:03 nothing is due, at 10:04 the next one is.
        assert_eq!(
            due(&every_two, Some(at(10, 2, 0)), at(10, 3, 59), grace),
            None
        );
        assert_eq!(
            due(&every_two, Some(at(10, 2, 0)), at(10, 4, 0), grace),
            Some((at(10, 4, 0), 1))
        );
        // Down from 10:02 until the next day at 10:03: one run, for 10:02 the next day, which
        // stands for the 720 scheduled times missed.
        let next_day = at(10, 3, 0) + chrono::TimeDelta::days(1);
        assert_eq!(
            due(&every_two, Some(at(10, 2, 0)), next_day, grace),
            Some((at(10, 2, 0) + chrono::TimeDelta::days(1), 720))
        );
        // With catch_up = "skip", the missed ones are left and the next one runs on time.
        let skip = dag("0 */2 * * * *", "skip");
        assert_eq!(due(&skip, Some(at(10, 2, 0)), at(10, 5, 30), grace), None);
        assert_eq!(
            due(&skip, Some(at(10, 2, 0)), at(10, 6, 20), grace),
            Some((at(10, 6, 0), 2))
        );
    }
}
