//! What `jobsight summary` prints: the summary rows as a table with a heading that says what they
//! are (or as CSV or JSON for programs), and the effect of the emails (`--email-effect`) as a
//! table with a closing count. The figures are the summary stage's (`jobsight_summary`); only
//! their turning into text is here.

use chrono::NaiveDate;

use jobsight_summary::{EmailEffect, Grouping, Period, SummaryError};
use jobsight_warehouse::catalog::rows::SummaryRow;
use jobsight_warehouse::catalog::{CatalogError, Table};
use jobsight_warehouse::query;

/// The effect of the emails as a table for a person, with a closing line that counts the users
/// whose efficiency rose, fell or could not be compared.
pub fn render_email_effect(effects: &[EmailEffect], days: u32) -> String {
    let share = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    let mut out = format!(
        "CPU efficiency (weighted by core-hours) of emailed users' judged jobs, {days} days before and after their first email\n\n"
    );
    out += &format!(
        "{:<16} {:<28} {:>11} {:>10} {:>10} {:>9} {:>7}\n",
        "user", "first email", "jobs before", "eff before", "jobs after", "eff after", "change"
    );
    let (mut up, mut down, mut unknown) = (0, 0, 0);
    for e in effects {
        let change = e.change();
        match change {
            Some(c) if c > 0.0 => up += 1,
            Some(_) => down += 1,
            None => unknown += 1,
        }
        out += &format!(
            "{:<16} {:<28} {:>11} {:>10} {:>10} {:>9} {:>7}\n",
            jobsight_base::text::printable(&e.user),
            e.emailed_at,
            e.jobs_before,
            share(e.cpu_eff_before),
            e.jobs_after,
            share(e.cpu_eff_after),
            change.map_or("-".to_string(), |c| format!("{c:+.3}")),
        );
    }
    out += &format!(
        "\n{} emailed users: {up} improved, {down} did not, {unknown} without jobs on both sides\n",
        effects.len()
    );
    out
}

/// The columns the table format shows, after the period and the group's keys.
const SHOWN: [&str; 16] = [
    "jobs",
    "core_hours",
    "gpu_hours",
    "judged_share",
    "cpu_eff",
    "mem_eff",
    "gpu_util",
    "walltime_accuracy",
    "wait_p50_s",
    "idle_core_hours",
    "wasted_nodes",
    "waste_kwh",
    "waste_cost",
    "waste_co2_kg",
    "energy_kwh",
    "energy_measured_share",
];

/// Widest the table for a person is, in columns.
const PERSON_WIDTH: usize = 120;

/// One figure of the table for a person: its label, its value in a row, and what it means (for
/// the derived ones).
struct Figure {
    label: &'static str,
    value: fn(&SummaryRow) -> String,
    means: &'static str,
}

/// The figures a person reads, in people's units; `--wide` gives the stored columns.
const FIGURES: [Figure; 15] = {
    use jobsight_base::units::{duration, percent, significant};
    fn share(v: Option<f64>) -> String {
        v.map_or("-".into(), percent)
    }
    [
        Figure {
            label: "jobs",
            value: |r| significant(r.jobs as f64),
            means: "",
        },
        Figure {
            label: "core-hours",
            value: |r| significant(r.core_hours),
            means: "",
        },
        Figure {
            label: "GPU-hours",
            value: |r| significant(r.gpu_hours),
            means: "",
        },
        Figure {
            label: "jobs judged",
            value: |r| share(r.judged_share),
            means: "the share of jobs whose telemetry was complete enough to judge",
        },
        Figure {
            label: "CPU efficiency",
            value: |r| share(r.cpu_eff),
            means: "busy cores over allocated cores, weighted by core-hours",
        },
        Figure {
            label: "memory efficiency",
            value: |r| share(r.mem_eff),
            means: "peak memory over the request, weighted by core-hours",
        },
        Figure {
            label: "GPU use",
            value: |r| share(r.gpu_util),
            means: "weighted by GPU-hours",
        },
        Figure {
            label: "time limit used",
            value: |r| share(r.walltime_accuracy),
            means: "run time over the time limit asked for, summed over the jobs",
        },
        Figure {
            label: "median wait",
            value: |r| r.wait_p50_s.map_or("-".into(), duration),
            means: "from submission to start",
        },
        Figure {
            label: "idle core-hours",
            value: |r| significant(r.idle_core_hours),
            means: "",
        },
        Figure {
            label: "idle nodes",
            value: |r| significant(r.wasted_nodes),
            means: "idle node-hours over the period's hours: whole nodes idle on average over the \
                    whole period (so a week with one bad day reads a seventh of that day's)",
        },
        Figure {
            label: "waste energy",
            value: |r| format!("{} kWh", significant(r.waste_kwh)),
            means: "estimated: idle core-, GPU- and node-hours times the configured idle draws \
                    (`summary.idle_core_watts`, `idle_gpu_watts`, `node_watts`)",
        },
        Figure {
            label: "waste cost",
            value: |r| format!("{} {}", significant(r.waste_cost), r.currency),
            means: "the waste energy at the configured price (`summary.price_per_kwh`)",
        },
        Figure {
            label: "waste CO2",
            value: |r| format!("{} kg", significant(r.waste_co2_kg)),
            means: "the waste energy at the configured CO2 per kWh (`summary.co2_kg_per_kwh`)",
        },
        Figure {
            label: "energy measured",
            value: |r| match r.energy_measured_share {
                Some(s) if s > 0.0 => format!("{} kWh", significant(r.energy_kwh)),
                _ => "-".into(),
            },
            means: "Slurm's consumed energy or power series, each job's share of its nodes",
        },
    ]
};

/// `rows` as a person reads them: one column per period and group (the newest that fit in
/// [`PERSON_WIDTH`] columns), one line per figure in people's units, each derived figure
/// explained once below.
pub fn render_for_people(
    rows: &[SummaryRow],
    period: Period,
    grouping: Grouping,
    from: NaiveDate,
    to: NaiveDate,
) -> String {
    let heading = format!(
        "Jobs that ended {from} to {to}, per {} and {}\n",
        period.name(),
        grouping.column().unwrap_or("cluster"),
    );
    if rows.is_empty() {
        return heading + "no jobs in these days\n";
    }
    let name = |r: &SummaryRow| {
        let group = match grouping {
            Grouping::All => format!("{} {} {}", r.partition, r.account, r.user),
            Grouping::Cluster => r.cluster.clone(),
            Grouping::Partition => r.partition.clone(),
            Grouping::Account => r.account.clone(),
            Grouping::User => r.user.clone(),
        };
        jobsight_base::text::clean(&format!("{} {group}", r.period_start), 24)
    };
    let label_width = FIGURES.iter().map(|f| f.label.len()).max().unwrap_or(0);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            std::iter::once(name(r))
                .chain(FIGURES.iter().map(|f| (f.value)(r)))
                .collect()
        })
        .collect();
    let widths: Vec<usize> = cells
        .iter()
        .map(|c| c.iter().map(|v| v.chars().count()).max().unwrap_or(0))
        .collect();
    // The newest columns that fit (rows come oldest first).
    let mut used = label_width;
    let mut first = cells.len();
    while first > 0 && used + 2 + widths[first - 1] <= PERSON_WIDTH {
        used += 2 + widths[first - 1];
        first -= 1;
    }
    let first = first.min(cells.len() - 1);
    let mut out = heading;
    for line in 0..=FIGURES.len() {
        let label = if line == 0 {
            ""
        } else {
            FIGURES[line - 1].label
        };
        let mut text = format!("{label:<label_width$}");
        for (column, width) in cells[first..].iter().zip(&widths[first..]) {
            text += &format!("  {:>width$}", column[line]);
        }
        out += text.trim_end();
        out += "\n";
    }
    if first > 0 {
        out += &format!(
            "(the newest {} of {} columns; --wide or --format csv for all)\n",
            cells.len() - first,
            cells.len()
        );
    }
    out += "\n";
    for f in FIGURES.iter().filter(|f| !f.means.is_empty()) {
        let line = format!("{}: {}", f.label, f.means);
        out += &super::job::wrap(&line, PERSON_WIDTH, "  ");
        out += "\n";
    }
    out
}

/// `rows` for a person (`table`: the main figures, rounded, with a heading that says what the
/// rows are) or a program (`csv`, `json`: every column as stored).
pub fn render(
    rows: &[SummaryRow],
    period: Period,
    grouping: Grouping,
    from: NaiveDate,
    to: NaiveDate,
    format: query::SqlFormat,
) -> Result<String, SummaryError> {
    use datafusion::arrow::array::{ArrayRef, Float64Array};
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::arrow::record_batch::RecordBatch;
    let schema_error = |e: datafusion::arrow::error::ArrowError| {
        SummaryError::Catalog(CatalogError::Schema {
            table: Table::Summaries.name(),
            reason: e.to_string(),
        })
    };
    let batch = SummaryRow::batch(rows).map_err(schema_error)?;
    if format != query::SqlFormat::Table {
        return Ok(query::render(&[batch], format)?);
    }
    let mut columns = vec!["period_start", "cluster"];
    match grouping {
        Grouping::All => columns.extend(["partition", "account", "user"]),
        other => columns.extend(other.column()),
    }
    let mut left_out: Vec<(&str, &str)> = Vec::new();
    for name in SHOWN {
        match (!rows.is_empty())
            .then(|| nothing_to_show(&batch, name))
            .flatten()
        {
            Some(why) => left_out.push((name, why)),
            None => columns.push(name),
        }
    }
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for name in columns {
        let Some((index, field)) = batch
            .schema()
            .column_with_name(name)
            .map(|(i, f)| (i, f.clone()))
        else {
            continue;
        };
        let array = batch.column(index).clone();
        // Rounded for reading: shares to 3 places, hours and the rest to 1.
        let array: ArrayRef = match array.as_any().downcast_ref::<Float64Array>() {
            Some(values) => {
                let places = if matches!(
                    name,
                    "judged_share"
                        | "cpu_eff"
                        | "mem_eff"
                        | "gpu_util"
                        | "walltime_accuracy"
                        | "energy_measured_share"
                ) {
                    1000.0
                } else {
                    10.0
                };
                std::sync::Arc::new(
                    values.unary::<_, datafusion::arrow::datatypes::Float64Type>(|v| {
                        (v * places).round() / places
                    }),
                )
            }
            None => array,
        };
        let name = if name == "waste_cost" {
            format!(
                "waste_{}",
                rows.first().map_or("cost", |r| r.currency.as_str())
            )
        } else {
            name.to_string()
        };
        fields.push(Field::new(name, field.data_type().clone(), true));
        arrays.push(array);
    }
    let shown = RecordBatch::try_new(std::sync::Arc::new(Schema::new(fields)), arrays)
        .map_err(schema_error)?;
    let heading = format!(
        "Jobs that ended {from} to {to}, per {} and {}{}\n",
        period.name(),
        grouping.column().unwrap_or("cluster"),
        if grouping == Grouping::All {
            " × partition × account × user"
        } else {
            ""
        },
    );
    // The waste's kWh is a model, the energy a measurement: the reader is told which is which.
    let mut footnote = String::from(
        "waste_*: estimated, idle core-, GPU- and node-hours times the configured idle draws \
         (summary.idle_core_watts, idle_gpu_watts, node_watts)",
    );
    if !left_out.iter().any(|(name, _)| *name == "energy_kwh") {
        footnote += "; energy_kwh: measured (Slurm's consumed energy or power series, each job's \
                     share of its nodes), for energy_measured_share of the core-hours";
    }
    footnote += "\n";
    if !left_out.is_empty() {
        footnote += &left_out_note(&left_out);
    }
    Ok(heading + &query::render(&[shown], format)? + &footnote)
}

/// Why a figure of the table format has nothing to show in these rows, if so: no GPU-hours (a
/// cluster without GPUs), no measured energy, or no value in any row. Left out of the table, it
/// would only widen it; `--format csv` still gives it.
fn nothing_to_show(
    batch: &datafusion::arrow::record_batch::RecordBatch,
    name: &str,
) -> Option<&'static str> {
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::datatypes::{DataType, Float64Type};
    let zero_everywhere = |column: &str| {
        batch
            .column_by_name(column)
            .and_then(|a| datafusion::arrow::compute::cast(a, &DataType::Float64).ok())
            .is_none_or(|a| {
                a.as_primitive::<Float64Type>()
                    .iter()
                    .all(|v| v.is_none_or(|v| v == 0.0))
            })
    };
    match name {
        "gpu_hours" | "gpu_util" if zero_everywhere("gpu_hours") => Some("no GPU-hours"),
        "energy_kwh" | "energy_measured_share" if zero_everywhere("energy_measured_share") => {
            Some("no job with a measured energy")
        }
        _ if batch
            .column_by_name(name)
            .is_some_and(|a| a.null_count() == a.len()) =>
        {
            Some("no value in any row")
        }
        _ => None,
    }
}

/// The closing line that names the figures left out of the table and why, grouped by reason.
fn left_out_note(left_out: &[(&str, &str)]) -> String {
    let mut reasons: Vec<&str> = Vec::new();
    for (_, why) in left_out {
        if !reasons.contains(why) {
            reasons.push(why);
        }
    }
    let parts: Vec<String> = reasons
        .iter()
        .map(|why| {
            let names: Vec<&str> = left_out
                .iter()
                .filter(|(_, w)| w == why)
                .map(|(name, _)| *name)
                .collect();
            format!("{} ({why})", names.join(", "))
        })
        .collect();
    format!(
        "left out, nothing to show: {}; --format csv gives every column\n",
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Alice's judged jobs before her email ran at 0.6 (weighted by core-hours), her job after
    /// it at 0.9 (the summary stage's test warehouse): the closing line counts her as improved.
    #[test]
    fn the_effect_of_an_email_is_rendered() {
        let dir = tempfile::tempdir().unwrap();
        jobsight_summary::fixture::fixture(dir.path());
        let effects = jobsight_summary::email_effect(dir.path(), 14).unwrap();
        let text = render_email_effect(&effects, 14);
        assert!(
            text.ends_with(
                "1 emailed users: 1 improved, 0 did not, 0 without jobs on both sides\n"
            ),
            "{text}"
        );
    }
}
