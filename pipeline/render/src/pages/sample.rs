//! The samples `jobsight check` renders a site's page templates against ([`super::check`]; each
//! page's folder renders its own): a job with every value set, a user's history, a day, and the
//! person the web interface's pages are served to.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, NaiveDate, Utc};

use super::served::Served;
use jobsight_report::load::{Facts, HealthyRun, JobFacts, RecentJob, Series, UserHistory};
use jobsight_report::select::References;
use jobsight_report::{Inputs, JobPage};
use jobsight_warehouse::catalog::rows::{FindingRow, JobSummaryRow, PredictionRow, ThresholdRow};

/// The person the web interface's samples are served to: an admin, so every name is used.
pub(super) fn admin() -> Served {
    Served {
        me: "alice".into(),
        admin: true,
        coordinates: vec!["physics".into()],
        csrf: "0".repeat(64),
    }
}

/// The day of the samples.
pub(super) fn sample_day() -> NaiveDate {
    NaiveDate::from_ymd_opt(2025, 11, 20).unwrap_or_default()
}

/// The model weights the sample job's metrics are ranked with.
pub(super) fn sample_inputs() -> Inputs {
    Inputs {
        importance: vec![("cpu_user:mean".into(), 0.2)],
    }
}

/// Everything the sample job's page shows.
pub(super) fn sample_page() -> JobPage {
    let start = DateTime::<Utc>::from_timestamp(1_763_625_600, 0).unwrap_or_default();
    let job = sample_job(start);
    let series = sample_series();
    let facts = sample_facts(&job, start, &series);
    let bands = jobsight_report::load::HealthyBands::of_cluster(
        BTreeMap::from([("cpu_user".to_string(), (10.0, 20.0))]),
        40,
    );
    let references = sample_references(&job.job_id, series);
    JobPage {
        job,
        facts,
        references,
        bands,
    }
}

/// The sample job: six hours on two GPU nodes, completed.
fn sample_job(start: DateTime<Utc>) -> JobFacts {
    JobFacts {
        job_id: "4242".into(),
        day: "2025-11-20".into(),
        cluster: "cluster".into(),
        user: "alice".into(),
        account: "physics".into(),
        partition: "gpu".into(),
        name: "lammps".into(),
        nodes: "node[01-02]".into(),
        num_nodes: 2,
        cpus: 64,
        gpus: 2,
        req_mem_mb: Some(256_000),
        time_limit_s: Some(86_400),
        submit: Some(start),
        start: Some(start),
        end: Some(start + chrono::Duration::hours(6)),
        state: "COMPLETED".into(),
        exit_code: Some(0),
        elapsed_s: Some(6 * 3600),
        wait_s: Some(0),
        core_hours: Some(384.0),
        ..Default::default()
    }
}

/// The sample job's telemetry: one metric on each of its two nodes.
fn sample_series() -> Series {
    let points: Vec<(f64, f64)> = (0..12).map(|i| (i as f64 * 0.5, (i % 3) as f64)).collect();
    let mut series = Series::new();
    for node in ["node01", "node02"] {
        series
            .entry(node.into())
            .or_default()
            .insert("cpu_user".into(), points.clone());
    }
    series
}

/// Everything about the sample job: its workflow run, summary, finding, class, threshold,
/// verdict, telemetry and means.
fn sample_facts(job: &JobFacts, start: DateTime<Utc>, series: &Series) -> Facts {
    let mut facts = Facts::default();
    let id = job.job_id.clone();
    facts
        .workflows
        .insert(id.clone(), format!("slurm-{}-{id}", job.cluster));
    facts.summaries.insert(
        id.clone(),
        JobSummaryRow {
            judgeable: true,
            cpu_used_cores: Some(2.0),
            cpu_eff: Some(2.0 / 64.0),
            mem_used_max_mb: Some(10_000.0),
            mem_eff: Some(0.04),
            time_eff: Some(0.25),
            gpu_util: Some(0.0),
            wasted_core_hours: Some(372.0),
            ..Default::default()
        },
    );
    let window = Some((
        start + chrono::Duration::hours(1),
        start + chrono::Duration::hours(2),
    ));
    facts.findings.insert(
        id.clone(),
        vec![FindingRow {
            rule: "hung".into(),
            title: "The job hung".into(),
            group: "hanged".into(),
            severity: "critical".into(),
            node: Some("node01".into()),
            window_start: window.map(|w| w.0),
            window_end: window.map(|w| w.1),
            message: "no CPU activity".into(),
            why: "nothing ran".into(),
            fix: "attach a debugger".into(),
            tools: "gdb".into(),
            evidence: "{}".into(),
            ..Default::default()
        }],
    );
    facts
        .classes
        .insert(id.clone(), vec![("gpu".into(), "GPU job".into())]);
    facts.thresholds.insert(
        id.clone(),
        vec![ThresholdRow {
            job_id: id.clone(),
            restart_count: Some(0),
            characteristic: "cpu_load".into(),
            title: "CPU load".into(),
            limits: "cpu_load".into(),
            value: Some(0.03),
            level: "low".into(),
            low_below: Some(0.2),
            high_from: Some(0.8),
        }],
    );
    facts.predictions.insert(
        id.clone(),
        vec![PredictionRow {
            verdict: "hung-job".into(),
            confidence: None,
            source: "rules".into(),
            node: Some("node01".into()),
            window_start: window.map(|w| w.0),
            window_end: window.map(|w| w.1),
            windows: 10,
            anomalous_windows: 4,
            unknown_windows: 3,
            model_verdict: Some("cpuoccupy".into()),
            model_confidence: Some(0.8),
            anomaly_score: Some(3.2),
            agreeing_rules: "hung-job".into(),
            reason: "rule hung-job found it; the models said cpuoccupy".into(),
            ..Default::default()
        }],
    );
    facts.telemetry.insert(id.clone(), series.clone());
    facts
        .means
        .insert(id.clone(), BTreeMap::from([("cpu_user".into(), 1.0)]));
    facts.jobs.push(job.clone());
    facts
}

/// The healthy run the sample job is compared with, and the run's telemetry.
fn sample_references(job_id: &str, series: Series) -> References {
    let reference = HealthyRun {
        job_id: "4000".into(),
        day: NaiveDate::from_ymd_opt(2025, 11, 19).unwrap_or_default(),
        user: "alice".into(),
        name: "lammps".into(),
    };
    References {
        runs: HashMap::from([(job_id.to_string(), reference.clone())]),
        series: HashMap::from([((reference.day, reference.job_id.clone()), series)]),
    }
}

/// A user's history with one of everything: a day, a repeating finding, an email and a job.
pub(super) fn sample_history() -> UserHistory {
    UserHistory {
        days: vec![("2025-11-20".into(), 1, 1, Some(0.03))],
        repeating: vec![("The job hung".into(), 1, "2025-11-20".into())],
        emails: vec![(
            "2025-11-20".into(),
            "digest".into(),
            "sent".into(),
            "2025-11-21 02:30 UTC".into(),
        )],
        recent: vec![RecentJob {
            job_id: "4242".into(),
            user: "alice".into(),
            day: "2025-11-20".into(),
            name: "lammps".into(),
            state: "COMPLETED".into(),
            elapsed_s: Some(3600),
            cpu_eff: Some(0.5),
            mem_eff: None,
            findings: 1,
            verdict: Some("hung".into()),
        }],
    }
}
