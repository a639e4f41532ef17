//! The healthy references of a day's pages: the runs of the last [`HISTORY_DAYS`] that had no
//! finding and no verdict other than healthy, and the bands of each metric's job mean over them:
//! of each application (job name), of each user, and of the cluster. A job is compared with the
//! narrowest of these that has enough runs ([`HealthyBands::for_job`]): a LAMMPS run's network
//! rate is unusual against other LAMMPS runs, not against the cluster's mix of everything.
//!
//! Computing them reads 30 days of jobs, too slow for a page served on request; so the report
//! stores what it chose for each job of a day with the day's pages (`reference_runs`,
//! `reference_bands`), and a page of that day reads the job's two rows back
//! ([`stored_reference`]).

use std::collections::{BTreeMap, HashMap};

use chrono::NaiveDate;
use datafusion::prelude::SessionContext;

use super::sql::{HISTORY_DAYS, each_row, text};
use jobsight_warehouse::catalog::rows::{ReferenceBandRow, ReferenceRunRow};
use jobsight_warehouse::query::{QueryError, literal};

/// A job that ran without findings and that the models (if any) called healthy, usable as a
/// reference for the same user's runs of the same job name.
#[derive(Debug, Clone)]
pub struct HealthyRun {
    pub job_id: String,
    pub day: NaiveDate,
    pub user: String,
    pub name: String,
}

/// Each metric's healthy band: the 10th to 90th percentile of healthy runs' job means.
pub type HealthyBand = BTreeMap<String, (f64, f64)>;

/// The fewest healthy runs an application's or a user's band is taken from; with fewer, the next
/// wider group's band is used (a band of two runs says little about what is usual).
pub const MIN_REFERENCE_RUNS: i64 = 5;

/// Whose healthy runs a job is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReferenceGroup {
    /// The healthy runs of the same job name (the application), by anyone.
    Application(String),
    /// The same user's healthy runs, of any job name.
    User(String),
    /// Every healthy run of the warehouse.
    Cluster,
}

/// A group's band and how many healthy runs it was taken from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupBand {
    pub runs: i64,
    pub band: HealthyBand,
}

/// The healthy bands of the last [`HISTORY_DAYS`]: of each application with at least
/// [`MIN_REFERENCE_RUNS`] healthy runs, of each such user, and of the cluster.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HealthyBands {
    pub cluster: GroupBand,
    pub applications: HashMap<String, GroupBand>,
    pub users: HashMap<String, GroupBand>,
}

impl HealthyBands {
    /// Bands with only the cluster's (for tests and callers with one band).
    pub fn of_cluster(band: HealthyBand, runs: i64) -> HealthyBands {
        HealthyBands {
            cluster: GroupBand { runs, band },
            ..Default::default()
        }
    }

    /// The band a job of this name and user is compared with: its application's, else its
    /// user's, else the cluster's; with the group it belongs to.
    pub fn for_job(&self, name: &str, user: &str) -> (&GroupBand, ReferenceGroup) {
        if let Some(band) = self.applications.get(name) {
            return (band, ReferenceGroup::Application(name.to_string()));
        }
        if let Some(band) = self.users.get(user) {
            return (band, ReferenceGroup::User(user.to_string()));
        }
        (&self.cluster, ReferenceGroup::Cluster)
    }
}

/// The kinds of group a band is taken over, for [`healthy`]'s queries.
#[derive(Clone, Copy)]
enum Group {
    Cluster,
    Application,
    User,
}

/// Healthy runs of the [`HISTORY_DAYS`] up to `day`, newest first; and the healthy bands of each
/// metric's job mean over those runs ([`HealthyBands`]).
pub async fn healthy(
    ctx: &SessionContext,
    day: NaiveDate,
) -> Result<(Vec<HealthyRun>, HealthyBands), QueryError> {
    let from = day - chrono::Days::new(HISTORY_DAYS);
    let (same, same_x, same_p) = (
        jobsight_warehouse::catalog::same_run("s", "j"),
        jobsight_warehouse::catalog::same_run("x", "j"),
        jobsight_warehouse::catalog::same_run("p", "j"),
    );
    let healthy = format!(
        "SELECT j.job_id, j.day, j.restart_count, j.\"user\", j.name, j.\"end\" FROM jobs j \
         JOIN job_summary s ON {same} \
         LEFT JOIN (SELECT job_id, day, restart_count, count(*) AS n FROM findings \
             WHERE day >= '{from}' AND day <= '{day}' GROUP BY 1, 2, 3) x \
           ON {same_x} \
         LEFT JOIN (SELECT job_id, day, restart_count, \
             max(CASE WHEN verdict = 'healthy' THEN 0 ELSE 1 END) AS bad FROM predictions \
             WHERE day >= '{from}' AND day <= '{day}' GROUP BY 1, 2, 3) p \
           ON {same_p} \
         WHERE j.day >= '{from}' AND j.day <= '{day}' AND s.day >= '{from}' AND s.day <= '{day}' \
           AND s.judgeable \
           AND coalesce(x.n, 0) = 0 AND coalesce(p.bad, 0) = 0"
    );
    let mut runs = Vec::new();
    each_row(
        ctx,
        &format!("{healthy} ORDER BY j.\"end\" DESC, j.job_id"),
        |c, i| {
            if let Some(day) = c.text("day", i).and_then(|d| d.parse().ok()) {
                runs.push(HealthyRun {
                    job_id: text(c, "job_id", i),
                    day,
                    user: text(c, "user", i),
                    name: text(c, "name", i),
                });
            }
        },
    )
    .await?;
    // One query per kind of group; a group's band of a metric needs MIN_REFERENCE_RUNS runs,
    // the cluster's takes any.
    let mut bands = HealthyBands::default();
    let same_f = jobsight_warehouse::catalog::same_run("f", "h");
    for kind in [Group::Cluster, Group::Application, Group::User] {
        let (key, least) = match kind {
            Group::Cluster => ("'cluster'", 1),
            Group::Application => ("h.name", MIN_REFERENCE_RUNS),
            Group::User => ("h.\"user\"", MIN_REFERENCE_RUNS),
        };
        let sql = format!(
            "SELECT {key} AS grp, f.metric, count(*) AS runs, \
             approx_percentile_cont(0.1) WITHIN GROUP (ORDER BY f.mean) AS lo, \
             approx_percentile_cont(0.9) WITHIN GROUP (ORDER BY f.mean) AS hi \
             FROM features_job f JOIN ({healthy}) h ON {same_f} \
             GROUP BY 1, f.metric HAVING count(*) >= {least}"
        );
        each_row(ctx, &sql, |c, i| {
            let (Some(lo), Some(hi)) = (c.float("lo", i), c.float("hi", i)) else {
                return;
            };
            let target = match kind {
                Group::Cluster => &mut bands.cluster,
                Group::Application => bands.applications.entry(text(c, "grp", i)).or_default(),
                Group::User => bands.users.entry(text(c, "grp", i)).or_default(),
            };
            target.band.insert(text(c, "metric", i), (lo, hi));
            target.runs = target.runs.max(c.int("runs", i).unwrap_or(0));
        })
        .await?;
    }
    Ok((runs, bands))
}

impl ReferenceGroup {
    /// How `reference_runs` and `reference_bands` name the group: its kind and its name.
    pub fn stored(&self) -> (&'static str, &str) {
        match self {
            ReferenceGroup::Application(name) => ("application", name),
            ReferenceGroup::User(user) => ("user", user),
            ReferenceGroup::Cluster => ("cluster", ""),
        }
    }

    fn from_stored(kind: &str, name: String) -> Option<ReferenceGroup> {
        match kind {
            "application" => Some(ReferenceGroup::Application(name)),
            "user" => Some(ReferenceGroup::User(name)),
            "cluster" => Some(ReferenceGroup::Cluster),
            _ => None,
        }
    }
}

/// Every band of `bands` as rows of `reference_bands`.
pub fn band_rows(bands: &HealthyBands) -> Vec<ReferenceBandRow> {
    let groups = std::iter::once((ReferenceGroup::Cluster, &bands.cluster))
        .chain(
            bands
                .applications
                .iter()
                .map(|(n, b)| (ReferenceGroup::Application(n.clone()), b)),
        )
        .chain(
            bands
                .users
                .iter()
                .map(|(u, b)| (ReferenceGroup::User(u.clone()), b)),
        );
    let mut rows = Vec::new();
    for (group, band) in groups {
        let (kind, name) = group.stored();
        for (metric, (low, high)) in &band.band {
            rows.push(ReferenceBandRow {
                band_group: kind.to_string(),
                band_group_name: name.to_string(),
                metric: metric.clone(),
                runs: band.runs.max(0) as u64,
                low: *low,
                high: *high,
            });
        }
    }
    rows
}

/// A job's row of `reference_runs`: the group its band is taken over and its healthy run.
pub fn reference_run_row(
    job_id: &str,
    group: &ReferenceGroup,
    run: Option<&HealthyRun>,
) -> ReferenceRunRow {
    let (kind, name) = group.stored();
    ReferenceRunRow {
        job_id: job_id.to_string(),
        band_group: kind.to_string(),
        band_group_name: name.to_string(),
        reference_job_id: run.map(|r| r.job_id.clone()),
        reference_day: run.map(|r| r.day.to_string()),
        reference_user: run.map(|r| r.user.clone()),
        reference_name: run.map(|r| r.name.clone()),
    }
}

/// A job's healthy reference as the report stored it with its day's pages: its healthy run (at
/// most one) and its band's group's bands, the rest of [`HealthyBands`] empty. `None` when the
/// report did not store one for the job (its day not reported yet, or the job ingested after
/// it): [`healthy`] computes it then. Two small reads instead of [`healthy`]'s 30 days of jobs.
pub async fn stored_reference(
    ctx: &SessionContext,
    day: NaiveDate,
    job_id: &str,
) -> Result<Option<(Vec<HealthyRun>, HealthyBands)>, QueryError> {
    let mut chosen: Option<(ReferenceGroup, Option<HealthyRun>)> = None;
    let sql = format!(
        "SELECT * FROM reference_runs WHERE day = '{day}' AND job_id = {} LIMIT 1",
        literal(job_id)
    );
    each_row(ctx, &sql, |c, i| {
        let Some(group) =
            ReferenceGroup::from_stored(&text(c, "band_group", i), text(c, "band_group_name", i))
        else {
            return;
        };
        let run = match (
            c.text("reference_job_id", i),
            c.text("reference_day", i).and_then(|d| d.parse().ok()),
        ) {
            (Some(job_id), Some(day)) => Some(HealthyRun {
                job_id,
                day,
                user: text(c, "reference_user", i),
                name: text(c, "reference_name", i),
            }),
            _ => None,
        };
        chosen = Some((group, run));
    })
    .await?;
    let Some((group, run)) = chosen else {
        return Ok(None);
    };
    let (kind, name) = group.stored();
    let mut band = GroupBand::default();
    let sql = format!(
        "SELECT metric, runs, low, high FROM reference_bands WHERE day = '{day}' \
         AND band_group = '{kind}' AND band_group_name = {}",
        literal(name)
    );
    each_row(ctx, &sql, |c, i| {
        if let (Some(low), Some(high)) = (c.float("low", i), c.float("high", i)) {
            band.band.insert(text(c, "metric", i), (low, high));
            band.runs = band.runs.max(c.int("runs", i).unwrap_or(0));
        }
    })
    .await?;
    let mut bands = HealthyBands::default();
    match group {
        ReferenceGroup::Application(name) => {
            bands.applications.insert(name, band);
        }
        ReferenceGroup::User(user) => {
            bands.users.insert(user, band);
        }
        ReferenceGroup::Cluster => bands.cluster = band,
    }
    Ok(Some((run.into_iter().collect(), bands)))
}
