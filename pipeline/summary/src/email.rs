//! The effect of the emails, measured: each emailed user's CPU efficiency before and after their
//! first email, from the notifications ledger and their jobs.

use std::path::Path;

use jobsight_warehouse::query;

use crate::error::SummaryError;

/// What an email changed for one user: the core-hour-weighted CPU efficiency of their judged
/// jobs (and of those whose efficiency came from Slurm accounting) that ended in the `days`
/// before their first email, against that of their jobs that started after it (jobs running when
/// it was sent count for neither).
#[derive(Debug, Clone, PartialEq)]
pub struct EmailEffect {
    pub user: String,
    pub emailed_at: String,
    pub jobs_before: u64,
    pub cpu_eff_before: Option<f64>,
    pub jobs_after: u64,
    pub cpu_eff_after: Option<f64>,
}

impl EmailEffect {
    /// After minus before, where both are known.
    pub fn change(&self) -> Option<f64> {
        Some(self.cpu_eff_after? - self.cpu_eff_before?)
    }
}

/// The SQL of [`email_effect`]: the notifications ledger joined with the owners' jobs around
/// their first email to them (a digest or a critical email that was sent).
pub fn email_effect_sql(days: u32) -> String {
    let same = jobsight_warehouse::catalog::same_run("s", "j");
    format!(
        r##"WITH mail AS (
    SELECT "user", min(sent_at) AS sent_at FROM notifications
    WHERE status = 'sent' AND kind IN ('digest', 'critical') AND "user" IS NOT NULL
    GROUP BY "user"
), judged AS (
    SELECT j."user", j.start, j."end", j.core_hours, s.cpu_eff
    FROM jobs j JOIN job_summary s ON {same}
    WHERE (s.judgeable OR s.cpu_eff_source = 'accounting') AND s.cpu_eff IS NOT NULL
      AND j.core_hours > 0
), around AS (
    SELECT m."user", m.sent_at, j.core_hours, j.cpu_eff,
        j."end" < m.sent_at AS before, j.start > m.sent_at AS after
    FROM mail m JOIN judged j ON j."user" = m."user"
    WHERE j."end" >= m.sent_at - INTERVAL '{days} days'
      AND j.start <= m.sent_at + INTERVAL '{days} days'
)
SELECT "user", CAST(sent_at AS VARCHAR) AS emailed_at,
    sum(CASE WHEN before THEN 1 ELSE 0 END) AS jobs_before,
    sum(CASE WHEN before THEN cpu_eff * core_hours END)
        / sum(CASE WHEN before THEN core_hours END) AS cpu_eff_before,
    sum(CASE WHEN after THEN 1 ELSE 0 END) AS jobs_after,
    sum(CASE WHEN after THEN cpu_eff * core_hours END)
        / sum(CASE WHEN after THEN core_hours END) AS cpu_eff_after
FROM around
GROUP BY "user", sent_at
ORDER BY "user""##
    )
}

/// The effect of the emails, measured: for every user who was emailed, their CPU efficiency in
/// the `days` before their first email and in the `days` after it, from the ledger and their jobs.
pub fn email_effect(data: &Path, days: u32) -> Result<Vec<EmailEffect>, SummaryError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(SummaryError::Runtime)?;
    let batches = runtime.block_on(query::run(data, &email_effect_sql(days)))?;
    let mut out = Vec::new();
    for batch in &batches {
        let c = query::Columns::of(batch)?;
        for i in 0..batch.num_rows() {
            let count = |name| {
                c.int(name, i)
                    .and_then(|v| u64::try_from(v).ok())
                    .unwrap_or(0)
            };
            out.push(EmailEffect {
                user: c.text("user", i).unwrap_or_default(),
                emailed_at: c.text("emailed_at", i).unwrap_or_default(),
                jobs_before: count("jobs_before"),
                cpu_eff_before: c.float("cpu_eff_before", i),
                jobs_after: count("jobs_after"),
                cpu_eff_after: c.float("cpu_eff_after", i),
            });
        }
    }
    Ok(out)
}
