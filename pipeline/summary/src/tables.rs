//! The writing of the `summaries` table: each day's rows, one part per day, summarised a month
//! at a time so that a year never sits in memory at once.

use std::path::Path;

use chrono::{Duration, NaiveDate};

use jobsight_warehouse::catalog::rows::SummaryRow;
use jobsight_warehouse::catalog::{self, Table};

use crate::error::SummaryError;
use crate::figures::summarize;
use crate::period::{Grouping, Period};
use crate::settings::Settings;

/// The name of a day's part of `summaries`.
pub const SUMMARY_PART: &str = "summary";

/// Summarises each day from `from` to `to` and writes it into `summaries` (one part per day,
/// replaced when the day is summarised again). Returns the rows written.
pub fn write_days(
    data: &Path,
    settings: &Settings,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<usize, SummaryError> {
    // A month at a time: a day's summary depends on that day's jobs only, and holding a whole
    // year's rows of a large cluster at once took 7 GiB (the summaries benchmark found it).
    let mut written = 0;
    let mut first = from;
    while first <= to {
        let last = (first + Duration::days(WRITE_DAYS_AT_ONCE - 1)).min(to);
        written += write_chunk(data, settings, first, last)?;
        match last.succ_opt() {
            Some(next) => first = next,
            None => break,
        }
    }
    Ok(written)
}

/// Days [`write_days`] summarises with one query.
const WRITE_DAYS_AT_ONCE: i64 = 31;

/// Summarises the days from `from` to `to` with one query and writes (or removes) each day's part.
fn write_chunk(
    data: &Path,
    settings: &Settings,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<usize, SummaryError> {
    let rows = summarize(data, settings, from, to, Period::Day, Grouping::All)?;
    // The rows by day, once: scanning them all for each day took minutes over a year.
    let mut by_day: std::collections::HashMap<String, Vec<SummaryRow>> = Default::default();
    for row in rows {
        by_day
            .entry(row.period_start.clone())
            .or_default()
            .push(row);
    }
    let mut written = 0;
    let mut day = from;
    while day <= to {
        let of_day = by_day
            .remove(&day.format("%Y-%m-%d").to_string())
            .unwrap_or_default();
        if of_day.is_empty() {
            // A day with no jobs any more (re-imported, retained away): its old summary goes.
            catalog::remove_part(data, Table::Summaries, day, SUMMARY_PART)?;
        } else {
            SummaryRow::write_part(data, day, SUMMARY_PART, &of_day)?;
            written += of_day.len();
        }
        match day.succ_opt() {
            Some(next) => day = next,
            None => break,
        }
    }
    Ok(written)
}
