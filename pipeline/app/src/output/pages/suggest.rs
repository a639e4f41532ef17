//! The `#SBATCH` lines a better request would use, from what a completed job used.

use serde::Serialize;

use super::format::{duration, pct};
use crate::report::load::{JobFacts, SummaryFacts};

/// A request line of a better job script, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suggestion {
    pub line: String,
    pub why: String,
}

/// Whether a figure taken from `source` is the job's own to suggest a request from: its
/// telemetry judged it, or Slurm accounting measured it; never its nodes' figure when it shared
/// them (other jobs' use is counted too).
fn trusted(s: &SummaryFacts, source: &str) -> bool {
    let nodes_of_others = source == "telemetry-node" && s.shared == Some(true);
    (s.judgeable || source == "accounting") && !nodes_of_others
}

/// The `#SBATCH` lines a better request would use, from what the job used: memory with a 20 %
/// margin when under 70 % of the request was used (jobstats' limit), time with a 50 % margin
/// rounded up to 15 minutes when under half the limit was used, CPUs with a 25 % margin when
/// under half of them worked, and no GPU when the GPUs did nothing. Nothing for a job that did
/// not complete: its usage says nothing about what it needed; nothing from figures its telemetry
/// could not judge unless Slurm accounting gave them.
pub fn suggestions(job: &JobFacts, s: Option<&SummaryFacts>) -> Vec<Suggestion> {
    let mut out = Vec::new();
    let Some(s) = s else {
        return out;
    };
    let (cpu_trusted, mem_trusted) = (trusted(s, &s.cpu_eff_source), trusted(s, &s.mem_source));
    if job.state != "COMPLETED" || !(s.judgeable || cpu_trusted || mem_trusted) {
        return out;
    }
    if let (Some(req), Some(used), Some(eff)) = (job.req_mem_mb, s.mem_used_max_mb, s.mem_eff)
        && mem_trusted
        && eff < 0.7
        && req > 0
    {
        let gb = ((used * 1.2) / 1024.0).ceil().max(1.0) as i64;
        let nodes = job.num_nodes.max(1);
        let per_node = ((gb as f64) / nodes as f64).ceil().max(1.0) as i64;
        out.push(Suggestion {
            line: format!("#SBATCH --mem={per_node}G"),
            why: format!(
                "the job's peak was {} of {} requested ({}); this asks for the peak and 20 % more{}",
                crate::output::units::size_from_mb(used),
                crate::output::units::size_from_mb(req as f64),
                crate::output::units::percent(eff),
                if nodes > 1 { ", per node" } else { "" }
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
    if let (Some(used), Some(eff)) = (s.cpu_used_cores, s.cpu_eff)
        && cpu_trusted
        && eff < 0.5
        && job.cpus > 1
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
        let s = SummaryFacts {
            judgeable: true,
            cpu_used_cores: Some(1.0),
            cpu_eff: Some(1.0 / 32.0),
            mem_used_max_mb: Some(5.0 * 1024.0),
            mem_eff: Some(5.0 / 64.0),
            ..Default::default()
        };
        let lines: Vec<String> = suggestions(&job(), Some(&s))
            .into_iter()
            .map(|s| s.line)
            .collect();
        assert_eq!(
            lines,
            [
                "#SBATCH --mem=6G",
                "#SBATCH --time=3:15:00",
                "#SBATCH --ntasks=2"
            ]
        );
        // A job that did not complete, or could not be judged, gets none.
        let mut failed = job();
        failed.state = "OUT_OF_MEMORY".into();
        assert!(suggestions(&failed, Some(&s)).is_empty());
        let unjudged = SummaryFacts {
            judgeable: false,
            ..s.clone()
        };
        assert!(suggestions(&job(), Some(&unjudged)).is_empty());
        // Unless accounting measured the memory; and a shared node's figure is not the job's.
        let on_accounting = SummaryFacts {
            mem_source: "accounting".into(),
            ..unjudged
        };
        let lines: Vec<String> = suggestions(&job(), Some(&on_accounting))
            .into_iter()
            .map(|s| s.line)
            .collect();
        assert_eq!(lines, ["#SBATCH --mem=6G", "#SBATCH --time=3:15:00"]);
        let shared = SummaryFacts {
            cpu_eff_source: "telemetry-node".into(),
            shared: Some(true),
            ..s
        };
        let lines: Vec<String> = suggestions(&job(), Some(&shared))
            .into_iter()
            .map(|s| s.line)
            .collect();
        assert_eq!(lines, ["#SBATCH --mem=6G", "#SBATCH --time=3:15:00"]);
    }
}
