//! What the report keeps in the warehouse beside a day's pages: what each job was compared with
//! (`reference_runs`, `reference_bands`), so that a page served or written later reads the job's
//! two rows ([`load::stored_reference`]) instead of finding the 30 days' healthy runs again.

use std::path::Path;

use chrono::NaiveDate;

use jobsight_warehouse::query;

use crate::{ReportError, load, select};

/// Stores what each of a day's `jobs` is compared with: its band's group and its healthy run
/// (`reference_runs`), and the day's bands (`reference_bands`), for its pages served later
/// ([`crate::reference_of`]). Replaces what an earlier report of the day stored. Returns how many
/// jobs (a requeued job's records are one).
pub(crate) fn store_references(
    data: &Path,
    day: NaiveDate,
    jobs: &[load::JobFacts],
    runs: &std::collections::HashMap<String, load::HealthyRun>,
    bands: &load::HealthyBands,
) -> Result<usize, ReportError> {
    use jobsight_warehouse::catalog::{self, CatalogError, Table, rows};
    let mut seen = std::collections::HashSet::new();
    let run_rows: Vec<rows::ReferenceRunRow> = jobs
        .iter()
        .filter(|job| seen.insert(job.job_id.as_str()))
        .map(|job| {
            let (_, group) = bands.for_job(&job.name, &job.user);
            load::reference_run_row(&job.job_id, &group, runs.get(&job.job_id))
        })
        .collect();
    let stored = run_rows.len();
    let band_rows = load::band_rows(bands);
    let schema_error = |table: Table| {
        move |e: datafusion::arrow::error::ArrowError| CatalogError::Schema {
            table: table.name(),
            reason: e.to_string(),
        }
    };
    let batches = [
        (
            Table::ReferenceRuns,
            run_rows.len(),
            rows::ReferenceRunRow::batch(&run_rows).map_err(schema_error(Table::ReferenceRuns))?,
        ),
        (
            Table::ReferenceBands,
            band_rows.len(),
            rows::ReferenceBandRow::batch(&band_rows)
                .map_err(schema_error(Table::ReferenceBands))?,
        ),
    ];
    for (table, n, batch) in batches {
        if n == 0 {
            catalog::remove_part(data, table, day, REFERENCE_PART)?;
        } else {
            catalog::write_part(data, table, day, REFERENCE_PART, &[batch])?;
        }
    }
    Ok(stored)
}

/// The name of the part the report writes each day's references to.
const REFERENCE_PART: &str = "report";

/// Stores the references of `day`'s jobs (what the report stores with the day's pages, without
/// writing them): for a warehouse whose pages are served but not written. Returns how many jobs
/// (a requeued job's records are one).
pub fn write_references(data: &Path, day: NaiveDate) -> Result<usize, ReportError> {
    crate::runtime()?.block_on(async {
        let ctx = query::session(data).await?;
        let mut facts = load::Facts::default();
        load::each_row(
            &ctx,
            &format!("SELECT job_id, \"user\", name FROM jobs WHERE day = '{day}'"),
            |c, i| {
                facts.jobs.push(load::JobFacts {
                    job_id: load::text(c, "job_id", i),
                    user: load::text(c, "user", i),
                    name: load::text(c, "name", i),
                    ..Default::default()
                });
            },
        )
        .await?;
        let (healthy, bands) = load::healthy(&ctx, day).await?;
        let runs = select::reference_runs(&facts, &healthy);
        store_references(data, day, &facts.jobs, &runs, &bands)
    })
}
