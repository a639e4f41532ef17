//! Where the simulated jobs run: the placements a day can be drawn with, putting jobs on the
//! nodes free earliest as a scheduler would, and what a placement gives (how busy the nodes are,
//! how many other jobs each job met on its nodes).

use jobsight_base::choice::{Choice, Named};

use super::SimJob;

/// How the simulator puts jobs on nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Placement {
    /// A random run of neighbouring nodes at the drawn start, whatever else runs there (jobs
    /// share nodes, so a node can carry several jobs' telemetry at once). What every seed gave
    /// before the other placement existed: the tests and the demo depend on it.
    #[default]
    Anywhere,
    /// As a scheduler would: in order of drawn start, each job on the nodes free earliest,
    /// starting when they are all free (later than drawn when the cluster is full, so jobs wait
    /// in the queue). No node runs two jobs at once: with enough jobs, a fully busy cluster.
    FreeNodes,
}

impl Choice for Placement {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: Placement::Anywhere,
            name: "anywhere",
            help: "A random run of neighbouring nodes at the drawn start, whatever else runs there (jobs share nodes, so a node can carry several jobs' telemetry at once). What every seed gave before the other placement existed: the tests and the demo depend on it",
        },
        Named {
            value: Placement::FreeNodes,
            name: "free-nodes",
            help: "As a scheduler would: in order of drawn start, each job on the nodes free earliest, starting when they are all free (later than drawn when the cluster is full, so jobs wait in the queue). No node runs two jobs at once: with enough jobs, a fully busy cluster",
        },
    ];
}

/// [`Placement::FreeNodes`]: in order of drawn start (then job id), each job takes as many
/// nodes as it drew, those free earliest (the lowest-numbered of equals), and starts when the
/// last of them is free if that is after its drawn start; its run time is kept. Its wait
/// (start − submit) grows by the delay, as in a full queue.
pub(super) fn place_on_free_nodes(jobs: &mut [SimJob], node_names: &[String]) {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| (jobs[i].start_s, jobs[i].job_id));
    // (free from, node index): the node free earliest first.
    let mut free: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize)>> = (0..node_names
        .len())
        .map(|n| std::cmp::Reverse((0, n)))
        .collect();
    for i in order {
        let job = &mut jobs[i];
        let width = job.nodes.len().min(node_names.len());
        let mut taken: Vec<(u64, usize)> = (0..width)
            .filter_map(|_| free.pop().map(|std::cmp::Reverse(slot)| slot))
            .collect();
        let ready = taken.iter().map(|&(at, _)| at).max().unwrap_or(0);
        let run_s = job.end_s - job.start_s;
        job.start_s = job.start_s.max(ready);
        job.end_s = job.start_s + run_s;
        taken.sort_by_key(|&(_, n)| n);
        job.nodes = taken.iter().map(|&(_, n)| node_names[n].clone()).collect();
        for (_, n) in taken {
            free.push(std::cmp::Reverse((job.end_s, n)));
        }
    }
}

/// The share of the day's node-time (`nodes` × 24 h from the day's start) that `jobs` run on,
/// counting a node once per job on it (above 1 when jobs share nodes).
pub fn busy_share(jobs: &[SimJob], nodes: usize) -> f64 {
    const DAY_S: u64 = 86_400;
    let busy: u64 = jobs
        .iter()
        .map(|j| (j.end_s.min(DAY_S).saturating_sub(j.start_s.min(DAY_S))) * j.nodes.len() as u64)
        .sum();
    busy as f64 / (nodes as u64 * DAY_S).max(1) as f64
}

/// For each of `jobs` (one day's runs), in order: how many other jobs ran on at least one of its
/// nodes while it ran, exactly, from the placement (what `jobs.neighbours` asks Slurm for). Runs
/// of one job id (a requeued job's) are not each other's neighbours; a neighbour on several of
/// its nodes counts once.
pub fn neighbours(jobs: &[&SimJob]) -> Vec<u32> {
    let mut on_node: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for (i, job) in jobs.iter().enumerate() {
        for node in &job.nodes {
            on_node.entry(node.as_str()).or_default().push(i);
        }
    }
    let mut met: Vec<Vec<u64>> = vec![Vec::new(); jobs.len()];
    for runs in on_node.values_mut() {
        runs.sort_by_key(|&i| (jobs[i].start_s, i));
        for (k, &i) in runs.iter().enumerate() {
            // Runs after this one start no earlier: they overlap it until one starts at its end.
            for &j in runs[k + 1..]
                .iter()
                .take_while(|&&j| jobs[j].start_s < jobs[i].end_s)
            {
                if jobs[i].job_id != jobs[j].job_id {
                    met[i].push(jobs[j].job_id);
                    met[j].push(jobs[i].job_id);
                }
            }
        }
    }
    met.into_iter()
        .map(|mut ids| {
            ids.sort_unstable();
            ids.dedup();
            ids.len() as u32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ClusterSpec, simulate_day};

    /// On free nodes no node runs two jobs at once, every job keeps its width, run time and
    /// behaviour and starts no earlier than drawn; the same seed anywhere gives the same jobs as
    /// before except their nodes and times, and a full cluster makes jobs wait.
    #[test]
    fn free_node_placement_never_shares_a_node() {
        let anywhere = ClusterSpec {
            nodes: 8,
            jobs: 300,
            ..ClusterSpec::default()
        };
        let free = ClusterSpec {
            placement: Placement::FreeNodes,
            ..anywhere.clone()
        };
        let (a, f) = (simulate_day(&anywhere, 3), simulate_day(&free, 3));
        assert_eq!(a.len(), f.len());
        let mut delayed = 0;
        for (a, f) in a.iter().zip(&f) {
            assert_eq!((a.job_id, a.nodes.len()), (f.job_id, f.nodes.len()));
            assert_eq!(a.end_s - a.start_s, f.end_s - f.start_s);
            assert_eq!(format!("{:?}", a.behaviour), format!("{:?}", f.behaviour));
            assert!(f.start_s >= a.start_s && f.submit_s == a.submit_s);
            delayed += usize::from(f.start_s > a.start_s);
        }
        assert!(
            delayed > 100,
            "300 jobs on 8 nodes must queue: {delayed} waited"
        );
        for node in (1..=8).map(|i| format!("node{i:02}")) {
            let mut runs: Vec<(u64, u64)> = (f.iter())
                .filter(|j| j.nodes.contains(&node))
                .map(|j| (j.start_s, j.end_s))
                .collect();
            runs.sort();
            assert!(
                runs.windows(2).all(|w| w[0].1 <= w[1].0),
                "{node}: {runs:?}"
            );
        }
        assert!(busy_share(&a, 8) > 1.0, "anywhere, jobs share nodes");
        let (a_runs, f_runs): (Vec<&SimJob>, Vec<&SimJob>) =
            (a.iter().collect(), f.iter().collect());
        assert!(neighbours(&f_runs).iter().all(|&n| n == 0));
        assert!(neighbours(&a_runs).iter().filter(|&&n| n > 0).count() > 200);
        // Not 1: the cluster starts the day empty, and a job's first-free nodes idle until its
        // last one is free (no backfill), which on 8 nodes is a large share.
        let busy = busy_share(&f, 8);
        assert!(busy <= 1.0 && busy > 0.7, "{busy}");
    }

    /// Neighbours are the other jobs on one of a job's nodes at the same time, each counted
    /// once; one that starts when the job ends is none.
    #[test]
    fn neighbours_overlap_on_a_node() {
        let mut jobs = simulate_day(&ClusterSpec::default(), 1);
        jobs.truncate(4);
        let run = |job: &mut SimJob, id, nodes: &[&str], start_s, end_s| {
            job.job_id = id;
            job.nodes = nodes.iter().map(|n| n.to_string()).collect();
            (job.start_s, job.end_s) = (start_s, end_s);
        };
        run(&mut jobs[0], 1, &["a", "b"], 0, 100);
        run(&mut jobs[1], 2, &["a", "b"], 50, 150);
        run(&mut jobs[2], 3, &["b"], 100, 200);
        run(&mut jobs[3], 4, &["c"], 0, 300);
        let refs: Vec<&SimJob> = jobs.iter().collect();
        assert_eq!(neighbours(&refs), [1, 2, 1, 0]);
    }
}
