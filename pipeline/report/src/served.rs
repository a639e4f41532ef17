//! The facts of the pages `jobsight serve --http` renders on request, gathered for one page on
//! the server's session: the index (from the warehouse, not a folder), one user's history, one
//! cluster's day, one workflow run. The job page is [`crate::job_page`], as for the files.

use chrono::NaiveDate;
use datafusion::prelude::SessionContext;

use jobsight_base::text::slug;

use crate::load::{self, each_row, literal, text};
use crate::{ClusterListing, IndexListing, ReportError};

/// Every cluster's days and users in the warehouse, newest day first, and the workflow runs.
pub async fn index_listing(ctx: &SessionContext) -> Result<IndexListing, ReportError> {
    let mut clusters: Vec<ClusterListing> = Vec::new();
    let sql = "SELECT cluster, CAST(day AS VARCHAR) AS day, count(*) AS jobs FROM jobs \
               GROUP BY 1, 2 ORDER BY 1, 2 DESC";
    each_row(ctx, sql, |c, i| {
        let name = slug(&text(c, "cluster", i));
        if clusters.last().is_none_or(|l| l.name != name) {
            clusters.push(ClusterListing {
                name: name.clone(),
                ..ClusterListing::default()
            });
        }
        if let Some(l) = clusters.last_mut() {
            l.days.push(slug(&text(c, "day", i)));
            l.jobs += c.int("jobs", i).unwrap_or(0).max(0) as usize;
        }
    })
    .await?;
    let sql = "SELECT DISTINCT cluster, \"user\" FROM jobs ORDER BY 1, 2";
    each_row(ctx, sql, |c, i| {
        let cluster = slug(&text(c, "cluster", i));
        if let Some(l) = clusters.iter_mut().find(|l| l.name == cluster) {
            l.users.push(slug(&text(c, "user", i)));
        }
    })
    .await?;
    let mut workflows: Vec<String> = if ctx.table_exist("workflows").ok() == Some(true) {
        load::workflow_ids(ctx)
            .await?
            .iter()
            .map(|r| slug(r))
            .collect()
    } else {
        Vec::new()
    };
    workflows.sort();
    workflows.reverse();
    Ok(IndexListing {
        clusters,
        workflows,
    })
}

/// The newest day `user` had a job on `cluster`, and their history up to it.
pub async fn user_history(
    ctx: &SessionContext,
    cluster: &str,
    user: &str,
) -> Result<Option<(NaiveDate, load::UserHistory)>, ReportError> {
    let sql = format!(
        "SELECT CAST(max(day) AS VARCHAR) AS day FROM jobs WHERE cluster = {} AND \"user\" = {}",
        literal(cluster),
        literal(user)
    );
    let mut day: Option<NaiveDate> = None;
    each_row(ctx, &sql, |c, i| {
        day = day.or_else(|| c.text("day", i).and_then(|d| d.parse().ok()));
    })
    .await?;
    let Some(day) = day else {
        return Ok(None);
    };
    let histories = load::user_histories(ctx, day, Some(user)).await?;
    let history = histories
        .get(&(cluster.to_string(), user.to_string()))
        .cloned()
        .unwrap_or_default();
    Ok(Some((day, history)))
}

/// A cluster's daily report and the day's jobs it picks from.
pub async fn day(
    ctx: &SessionContext,
    cluster: &str,
    day: NaiveDate,
) -> Result<(load::DayFacts, load::Facts), ReportError> {
    let scope = load::Scope { day, job: None };
    let facts = load::facts(ctx, &scope).await?;
    let report = load::day_report(ctx, cluster, day).await?;
    Ok((report, facts))
}

/// A workflow run's facts, or `None` when the warehouse has no such run.
pub async fn workflow(
    data: &std::path::Path,
    ctx: &SessionContext,
    run: &str,
) -> Result<Option<load::WorkflowFacts>, ReportError> {
    use jobsight_warehouse::catalog::Table;
    if !Table::Workflows.dir(data).is_dir() {
        return Ok(None);
    }
    let scored = Table::WorkflowScores.dir(data).is_dir();
    Ok(load::workflow(ctx, run, scored).await?)
}
