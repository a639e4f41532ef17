//! The healthy bands a job's page and `jobsight job` compare it with, loaded from a warehouse:
//! its application's, else its user's, else the cluster's.

use std::path::Path;

use chrono::{DateTime, NaiveDate};

use jobsight_report::{ReportError, load};
use jobsight_warehouse::catalog::rows::{JobRow, JobSummaryRow};
use jobsight_warehouse::catalog::{self, Table};
use jobsight_warehouse::query;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// `n` healthy runs of `name` by `user` (judgeable, no finding), each with a `cpu_user`
/// mean of 10, 11, ... cores.
fn healthy_runs(data: &Path, day: NaiveDate, name: &str, user: &str, n: usize) {
    use jobsight_warehouse::catalog::rows::FeaturesJobRow;
    let start = DateTime::parse_from_rfc3339("2026-11-20T01:00:00Z")
        .unwrap()
        .to_utc();
    let ids: Vec<String> = (0..n).map(|i| format!("{name}-{user}-{i}")).collect();
    let jobs: Vec<JobRow> = ids
        .iter()
        .map(|id| JobRow {
            cluster: "c".into(),
            job_id: id.clone(),
            user: Some(user.into()),
            name: Some(name.into()),
            start: Some(start),
            end: start + chrono::Duration::hours(1),
            source: "test".into(),
            ..JobRow::default()
        })
        .collect();
    let summaries: Vec<JobSummaryRow> = ids
        .iter()
        .map(|id| JobSummaryRow {
            job_id: id.clone(),
            judgeable: true,
            ..JobSummaryRow::default()
        })
        .collect();
    let means: Vec<FeaturesJobRow> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| FeaturesJobRow {
            job_id: id.clone(),
            metric: "cpu_user".into(),
            nodes: 1,
            mean: Some(10.0 + i as f64),
            ..Default::default()
        })
        .collect();
    let part = format!("{name}-{user}");
    JobRow::write_part(data, day, &part, &jobs).unwrap();
    let summaries = JobSummaryRow::batch(&summaries).unwrap();
    catalog::write_part(data, Table::JobSummary, day, &part, &[summaries]).unwrap();
    let means = FeaturesJobRow::batch(&means).unwrap();
    catalog::write_part(data, Table::FeaturesJob, day, &part, &[means]).unwrap();
}

/// A job is compared with its application's healthy runs when there are at least
/// MIN_REFERENCE_RUNS of them, else with its user's, else with the cluster's; the band of a
/// group too small is not kept.
#[test]
fn a_job_is_compared_with_its_application_else_its_user_else_the_cluster() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let day: NaiveDate = "2026-11-20".parse().unwrap();
    healthy_runs(&data, day, "lammps", "bob", 5);
    healthy_runs(&data, day, "gromacs", "carol", 4);
    let (_, bands) = runtime()
        .block_on(async {
            let ctx = query::session(&data).await?;
            Ok::<_, ReportError>(load::healthy(&ctx, day).await?)
        })
        .unwrap();
    let lammps = &bands.applications["lammps"];
    assert_eq!(lammps.runs, 5);
    let (lo, hi) = lammps.band["cpu_user"];
    assert!(
        (10.0..=11.0).contains(&lo) && (13.0..=14.0).contains(&hi),
        "{lo} {hi}"
    );
    assert!(bands.users.contains_key("bob"));
    assert!(
        !bands.applications.contains_key("gromacs") && !bands.users.contains_key("carol"),
        "4 runs make no band"
    );
    assert_eq!(bands.cluster.runs, 9, "every healthy run");
    let group = |name: &str, user: &str| bands.for_job(name, user).1;
    use jobsight_report::load::ReferenceGroup;
    assert_eq!(
        group("lammps", "dave"),
        ReferenceGroup::Application("lammps".into())
    );
    assert_eq!(
        group("my-script", "bob"),
        ReferenceGroup::User("bob".into())
    );
    assert_eq!(group("gromacs", "carol"), ReferenceGroup::Cluster);
    let words = crate::job::reference_group(&group("lammps", "dave"), lammps.runs);
    assert!(
        words.contains("5 healthy runs of its application, lammps,"),
        "{words}"
    );
}
