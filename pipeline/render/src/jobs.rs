//! `jobsight jobs`: the jobs that ended in a span of days, one line each for a person or one
//! JSON document each for scripts. `jobsight job` ([`super::job`]) shows one of them in full.

use std::fmt::Write as _;

use super::units::{duration, percent};
use jobsight_base::text::clean;
use jobsight_report::load::RecentJob;

/// `jobsight jobs` for a person: one line per job, newest first, with a heading that says which
/// jobs these are and a closing line when `limit` cut the list.
pub fn render_list(
    jobs: &[RecentJob],
    user: Option<&str>,
    since: chrono::NaiveDate,
    until: chrono::NaiveDate,
    limit: usize,
) -> String {
    let whose = user.map_or("every user's".to_string(), |u| {
        format!("{}'s", clean(u, 80))
    });
    let mut out = format!("Jobs of {whose} that ended {since} to {until}, newest first\n");
    if jobs.is_empty() {
        out += "  none\n";
        return out;
    }
    let _ = writeln!(
        out,
        "  {:<12} {:<10} {:<20} {:<14} {:>9} {:>5} {:>5} {:>8}  verdict",
        "job", "user", "name", "state", "ran", "CPU", "mem", "findings"
    );
    for j in jobs {
        let _ = writeln!(
            out,
            "  {:<12} {:<10} {:<20} {:<14} {:>9} {:>5} {:>5} {:>8}  {}",
            clean(&j.job_id, 12),
            clean(&j.user, 10),
            clean(&j.name, 20),
            clean(&j.state, 14),
            j.elapsed_s.map_or("-".into(), |s| duration(s as f64)),
            j.cpu_eff.map_or("-".into(), percent),
            j.mem_eff.map_or("-".into(), percent),
            j.findings,
            j.verdict
                .as_deref()
                .map_or("-".into(), |v| clean(&jobsight_base::plain::verdict(v), 40)),
        );
    }
    if jobs.len() >= limit {
        let _ = writeln!(
            out,
            "the newest {limit} only: --limit N shows more, --since narrows"
        );
    }
    out += "jobsight job JOB_ID shows one in full\n";
    out
}

/// `jobsight jobs` for scripts: one JSON document per line and job, plain numbers.
pub fn render_list_json(jobs: &[RecentJob]) -> String {
    jobs.iter()
        .map(|j| {
            serde_json::json!({
                "job_id": j.job_id, "user": j.user, "day": j.day, "name": j.name,
                "state": j.state, "elapsed_s": j.elapsed_s, "cpu_eff": j.cpu_eff,
                "mem_eff": j.mem_eff, "findings": j.findings, "verdict": j.verdict,
            })
            .to_string()
                + "\n"
        })
        .collect()
}
