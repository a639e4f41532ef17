//! A running job as the snapshot holds it before it is judged: its fields from the listing, how
//! many other jobs share its nodes, whether the site counts it as interactive, and the start
//! times of its conditions carried over from the last snapshot, so that a condition's dwell
//! counts from when it was first seen.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use jobsight_base::running_job::RunningJob;

use crate::settings::Settings;
use crate::snapshot::{LiveJob, Snapshot};

/// For each job, how many other running jobs share one of its nodes.
pub fn neighbours(jobs: &[RunningJob]) -> Vec<u32> {
    let mut on_node: BTreeMap<(&str, &str), u32> = BTreeMap::new();
    for job in jobs {
        for node in &job.node_names {
            *on_node
                .entry((job.cluster.as_str(), node.as_str()))
                .or_default() += 1;
        }
    }
    jobs.iter()
        .map(|job| {
            job.node_names
                .iter()
                .map(|n| on_node[&(job.cluster.as_str(), n.as_str())] - 1)
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// The snapshot's job before judging. It is interactive when Slurm says so (no batch script:
/// `salloc`, a bare `srun`), or when the site named its partition or, knowingly, a name prefix.
pub fn live_job(job: &RunningJob, now: DateTime<Utc>, site: &Settings) -> LiveJob {
    LiveJob {
        cluster: job.cluster.clone(),
        job_id: job.job_id.clone(),
        slurm_id: job.slurm_id.clone(),
        user: job.user.clone(),
        account: job.account.clone(),
        partition: job.partition.clone(),
        qos: job.qos.clone(),
        name: job.name.clone(),
        nodes: job.nodes.clone(),
        num_nodes: job.num_nodes,
        cpus: job.cpus,
        gpus: job.gpus,
        req_mem_mb: job.req_mem_mb,
        time_limit_s: job.time_limit_s,
        start: job.start,
        elapsed_s: (now - job.start).num_seconds().max(0) as u64,
        interactive: job.interactive
            || site.interactive_partitions.contains(&job.partition)
            || site
                .interactive_names
                .iter()
                .any(|p| job.name.starts_with(p.as_str())),
        ..LiveJob::default()
    }
}

/// Each condition of `judged` that the `previous` snapshot had for the same job and rule holds
/// since the earlier of the two times.
pub fn carry_since(previous: Option<&Snapshot>, judged: &mut [LiveJob]) {
    let earlier: BTreeMap<(&str, &str, &str), DateTime<Utc>> = previous
        .into_iter()
        .flat_map(|s| &s.jobs)
        .flat_map(|j| {
            j.conditions.iter().map(move |c| {
                (
                    (j.cluster.as_str(), j.job_id.as_str(), c.rule.as_str()),
                    c.since,
                )
            })
        })
        .collect();
    for live in judged {
        for c in &mut live.conditions {
            if let Some(since) =
                earlier.get(&(live.cluster.as_str(), live.job_id.as_str(), c.rule.as_str()))
            {
                c.since = c.since.min(*since);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn site(toml: &str) -> Settings {
        let options: crate::Options = toml::from_str(toml).unwrap();
        options.resolve(Path::new("/d")).unwrap()
    }

    #[test]
    fn a_job_is_interactive_by_slurms_flag_or_the_sites_partition_never_by_its_name_alone() {
        let now = Utc::now();
        let named = |name: &str, partition: &str, flag: bool| RunningJob {
            name: name.into(),
            partition: partition.into(),
            interactive: flag,
            start: now,
            ..RunningJob::default()
        };
        let defaults = site("");
        // Any user may name a batch job so: by default that exempts nothing.
        for name in ["interactive", "sys/dashboard/sys/jupyter"] {
            assert!(!live_job(&named(name, "batch", false), now, &defaults).interactive);
        }
        // salloc and a bare srun, as Slurm says.
        assert!(live_job(&named("bash", "batch", true), now, &defaults).interactive);
        // A partition the site keeps for sessions: Slurm decides who submits there.
        let ood = site("interactive_partitions = [\"ondemand\"]\n");
        assert!(live_job(&named("sys/dashboard/x", "ondemand", false), now, &ood).interactive);
        assert!(!live_job(&named("sys/dashboard/x", "batch", false), now, &ood).interactive);
        // Names, only when a site lists them knowingly.
        let names = site("interactive_names = [\"sys/dashboard\"]\n");
        assert!(live_job(&named("sys/dashboard/x", "batch", false), now, &names).interactive);
    }
}
