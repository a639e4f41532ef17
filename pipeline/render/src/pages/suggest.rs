//! The `#SBATCH` lines a better request would use, from what a job used: safe to paste, so never
//! from figures that say nothing about what the program needs.

use serde::Serialize;

use super::format::{duration, pct};
use crate::units::{percent, size_from_mb};
use jobsight_report::load::JobFacts;
use jobsight_warehouse::catalog::rows::{FindingRow, JobSummaryRow};

/// A request line of a better job script, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suggestion {
    pub line: String,
    pub why: String,
}

/// Whether a figure taken from `source` is the job's own to suggest a request from: its
/// telemetry judged it, or Slurm accounting measured it; never its nodes' figure when it shared
/// them (other jobs' use is counted too).
fn trusted(s: &JobSummaryRow, source: &str) -> bool {
    let nodes_of_others = source == "telemetry-node" && s.shared == Some(true);
    (s.judgeable || source == "accounting") && !nodes_of_others
}

/// The `#SBATCH` lines a better request would use, from what the job used, every memory figure
/// per node beside the per-node `--mem` it suggests:
/// - a job killed for memory: `--mem` 50 % over what it reached per node (its limit, or its
///   peak where that was higher): the peak of a killed job is a lower bound of what it needs;
/// - a completed job: memory with a 20 % margin when under 70 % of the request was used
///   (jobstats' limit), time with a 50 % margin rounded up to 15 minutes when under half the
///   limit was used, and no GPU when the GPUs did nothing; CPUs with a 25 % margin when under half
///   of them worked, only on one node and only without a critical finding (a hung or idle job's
///   cores say nothing about what its program needs).
///
/// Nothing else for a job that did not complete: its usage says nothing about what it needed;
/// nothing from figures its telemetry could not judge unless Slurm accounting gave them.
pub fn suggestions(
    job: &JobFacts,
    s: Option<&JobSummaryRow>,
    findings: &[FindingRow],
) -> Vec<Suggestion> {
    let mut out = Vec::new();
    let nodes = job.num_nodes.max(1);
    let per_node = |mb: f64| mb / nodes as f64;
    let each = if nodes > 1 { " per node" } else { "" };
    if job.state == "OUT_OF_MEMORY"
        && let Some(req) = job.req_mem_mb.filter(|r| *r > 0)
    {
        let reached = s
            .and_then(|s| s.mem_used_max_mb)
            .map_or(req as f64, |used| used.max(req as f64));
        let gb = (per_node(reached) * 1.5 / 1024.0).ceil().max(1.0) as i64;
        out.push(Suggestion {
            line: format!("#SBATCH --mem={gb}G"),
            why: format!(
                "the job was killed for memory at {}{each}; what it reached is a lower bound of what it needs, so this asks for 50 % more",
                size_from_mb(per_node(reached)),
            ),
        });
        return out;
    }
    let Some(s) = s else {
        return out;
    };
    let (cpu_trusted, mem_trusted) = (
        trusted(s, s.cpu_eff_source.as_deref().unwrap_or_default()),
        trusted(s, s.mem_source.as_deref().unwrap_or_default()),
    );
    if job.state != "COMPLETED" || !(s.judgeable || cpu_trusted || mem_trusted) {
        return out;
    }
    if let (Some(req), Some(used), Some(eff)) = (job.req_mem_mb, s.mem_used_max_mb, s.mem_eff)
        && mem_trusted
        && eff < 0.7
        && req > 0
    {
        let gb = (per_node(used) * 1.2 / 1024.0).ceil().max(1.0) as i64;
        out.push(Suggestion {
            line: format!("#SBATCH --mem={gb}G"),
            why: format!(
                "the job's peak was {} of {} requested{each} ({}); this asks for the peak and 20 % more",
                size_from_mb(per_node(used)),
                size_from_mb(per_node(req as f64)),
                percent(eff),
            ),
        });
    }
    if let (Some(limit), Some(elapsed)) = (job.time_limit_s, job.elapsed_s)
        && limit > 0
        && (elapsed as f64) < 0.5 * limit as f64
    {
        let want = ((elapsed as f64 * 1.5) / 900.0).ceil().max(1.0) as i64 * 900;
        out.push(Suggestion {
            line: format!(
                "#SBATCH --time={}:{:02}:00",
                want / 3600,
                (want % 3600) / 60
            ),
            why: format!(
                "it ran {} of a {} limit; a shorter limit starts sooner (backfill)",
                duration(Some(elapsed)),
                duration(Some(limit))
            ),
        });
    }
    let critical = findings.iter().any(|f| f.severity == "critical");
    if let (Some(used), Some(eff)) = (s.cpu_used_cores, s.cpu_eff)
        && cpu_trusted
        && eff < 0.5
        && job.cpus > 1
        && nodes == 1
        && !critical
    {
        let cores = (used * 1.25).ceil().max(1.0) as i64;
        if cores < job.cpus {
            out.push(Suggestion {
                line: format!("#SBATCH --ntasks={cores}"),
                why: format!(
                    "on average {used:.1} of {} allocated cores worked ({}); check whether the program can use more before asking for them",
                    job.cpus,
                    pct(Some(eff))
                ),
            });
        }
    }
    if let Some(util) = s.gpu_util
        && s.judgeable
        && job.gpus > 0
        && util < 0.05
    {
        out.push(Suggestion {
            line: "#SBATCH --gres=gpu:0   (and a CPU partition)".into(),
            why: format!(
                "the {} GPU(s) were busy {} of the time",
                job.gpus,
                pct(Some(util))
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> JobFacts {
        JobFacts {
            job_id: "42".into(),
            state: "COMPLETED".into(),
            cpus: 32,
            num_nodes: 1,
            req_mem_mb: Some(64 * 1024),
            time_limit_s: Some(24 * 3600),
            elapsed_s: Some(2 * 3600 + 10 * 60),
            ..Default::default()
        }
    }

    #[test]
    fn suggestions_follow_what_the_job_used() {
        let lines = |summary: &JobSummaryRow| -> Vec<String> {
            (suggestions(&job(), Some(summary), &[]).into_iter())
                .map(|s| s.line)
                .collect()
        };
        let s = JobSummaryRow {
            judgeable: true,
            cpu_used_cores: Some(1.0),
            cpu_eff: Some(1.0 / 32.0),
            mem_used_max_mb: Some(5.0 * 1024.0),
            mem_eff: Some(5.0 / 64.0),
            ..Default::default()
        };
        assert_eq!(
            lines(&s),
            [
                "#SBATCH --mem=6G",
                "#SBATCH --time=3:15:00",
                "#SBATCH --ntasks=2"
            ]
        );
        // A job killed for memory gets only --mem, from what it reached; one that could not be
        // judged gets none.
        let mut failed = job();
        failed.state = "OUT_OF_MEMORY".into();
        assert!(suggestions(&failed, Some(&s), &[]).len() == 1);
        let unjudged = JobSummaryRow {
            judgeable: false,
            ..s.clone()
        };
        assert!(suggestions(&job(), Some(&unjudged), &[]).is_empty());
        // Unless accounting measured the memory; and a shared node's figure is not the job's.
        let on_accounting = JobSummaryRow {
            mem_source: Some("accounting".into()),
            ..unjudged
        };
        assert_eq!(
            lines(&on_accounting),
            ["#SBATCH --mem=6G", "#SBATCH --time=3:15:00"]
        );
        let shared = JobSummaryRow {
            cpu_eff_source: Some("telemetry-node".into()),
            shared: Some(true),
            ..s
        };
        assert_eq!(
            lines(&shared),
            ["#SBATCH --mem=6G", "#SBATCH --time=3:15:00"]
        );
    }

    /// The jobs: a hung 4-node job gets no task advice, and a multi-node job's memory
    /// figures are per node beside the per-node --mem; a job killed at 2 GB with a peak of
    /// 3.52 GB is asked to take more than its peak.
    #[test]
    fn advice_is_safe_to_paste() {
        let four_nodes = JobFacts {
            cpus: 128,
            num_nodes: 4,
            req_mem_mb: Some(4 * 26 * 1024),
            ..job()
        };
        let used = JobSummaryRow {
            judgeable: true,
            cpu_used_cores: Some(0.1),
            cpu_eff: Some(0.001),
            mem_used_max_mb: Some(66.4 * 1024.0),
            mem_eff: Some(66.4 / 104.0),
            ..Default::default()
        };
        let hung = FindingRow {
            rule: "hung-job".into(),
            severity: "critical".into(),
            ..Default::default()
        };
        let advice = suggestions(&four_nodes, Some(&used), std::slice::from_ref(&hung));
        assert!(
            advice.iter().all(|s| !s.line.contains("--ntasks")),
            "{advice:?}"
        );
        assert_eq!(advice[0].line, "#SBATCH --mem=20G");
        assert!(
            advice[0]
                .why
                .contains("16.6 GB of 26 GB requested per node"),
            "{}",
            advice[0].why
        );
        let oom = JobFacts {
            state: "OUT_OF_MEMORY".into(),
            cpus: 4,
            req_mem_mb: Some(2048),
            ..job()
        };
        let peak = JobSummaryRow {
            mem_used_max_mb: Some(3.52 * 1024.0),
            ..Default::default()
        };
        let advice = suggestions(&oom, Some(&peak), &[]);
        assert_eq!(advice.len(), 1);
        assert_eq!(advice[0].line, "#SBATCH --mem=6G");
        assert!(advice[0].why.contains("lower bound"), "{}", advice[0].why);
    }
}
