//! Several jobs' telemetry in one `query_range` per metric (`prometheus.batch_jobs`, on by
//! default).
//!
//! One job at a time, the per-job ingest asks Prometheus one query per metric per job (17 with
//! the default metrics and the clock check); against a Prometheus holding a 1,000-node cluster
//! that is most of the ingest's time (docs/benchmarks.md, "Ingest against a real Prometheus").
//! The jobs due in one run mostly ran at similar times on different nodes, so they are grouped:
//! each group is asked once per metric over all its jobs' nodes and over the range from its
//! first job's start to its last job's end, and each job takes its own nodes' points within
//! its own range. A range query evaluates every point on its own (a rate looks back from the
//! point, an instant selector looks back from it), and both ways ask for the same grid (every
//! multiple of the step), so each job gets the same samples in the same order as asked on its
//! own (the bench compares the two warehouses byte for byte).
//!
//! What is never grouped, and so asked as before: a job asked in more than one chunk or shorter
//! than a step (its points are not the grid's), and metrics whose query names the job
//! (`{job_id}`: a per-job exporter's or DCGM's job series), which are asked per job inside the
//! group. A group asks for at most [`MAX_WASTE`] times the points its jobs need and at most
//! [`MAX_GROUP_POINTS`] per metric, so one long job does not make its short neighbours' answer
//! large. The clock check of a group takes, for each job, the median over all the points of its
//! run at the query step (asked on its own, about 60 points spread over the run).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use super::{Asked, PromError, Prometheus, median_of_finite, node_matcher, node_of};
use crate::sources::{Fetched, JobSpan};

/// Points per metric a group asks for at most (about 7 MB of JSON an answer).
const MAX_GROUP_POINTS: i64 = 250_000;
/// Jobs in a group at most: the node matcher grows with them.
const MAX_GROUP_JOBS: usize = 200;
/// A group's range is at most this many times its shortest job's (plus [`SLACK_POINTS`]): a
/// node's series is asked for over the group's range, and its job needs only its own.
const MAX_WASTE: i64 = 2;
/// Points of a group's range beyond [`MAX_WASTE`] times its shortest job's (5 minutes at the
/// default step), so that short jobs ending in the same run are asked together.
const SLACK_POINTS: i64 = 10;

/// A job as a group plans it: its index among the jobs, its one range on the step's grid.
#[derive(Debug, Clone, Copy)]
struct Planned {
    index: usize,
    from: i64,
    to: i64,
}

impl Prometheus {
    /// The range a job is asked for in a group, or none when it is asked on its own: more than
    /// one chunk, off the grid (shorter than a step), more points than a group takes, or a node
    /// name no matcher holds (its own fetch says why).
    fn planned(&self, index: usize, job: &JobSpan) -> Option<Planned> {
        let step = self.step_s();
        if job.end < job.start || node_matcher("instance", &job.nodes).is_err() {
            return None;
        }
        match self.ranges(job.nodes.len(), job.start, job.end)[..] {
            [(from, to)] if from.rem_euclid(step) == 0 && to.rem_euclid(step) == 0 => {
                let planned = Planned { index, from, to };
                (points(job.nodes.len(), planned.from, planned.to, step) <= MAX_GROUP_POINTS)
                    .then_some(planned)
            }
            _ => None,
        }
    }

    /// Groups of at least two of `jobs` (indexes into it) to be asked together; none when
    /// `prometheus.batch_jobs` is off. Jobs of one cluster, in the order of their start, join
    /// a group while its answer stays within [`MAX_GROUP_POINTS`] and Prometheus's points per
    /// series, and its range within [`MAX_WASTE`] times its shortest job's.
    pub fn groups(&self, jobs: &[JobSpan]) -> Vec<Vec<usize>> {
        if !self.settings.batch_jobs {
            return Vec::new();
        }
        let step = self.step_s();
        let mut planned: Vec<Planned> = jobs
            .iter()
            .enumerate()
            .filter_map(|(i, job)| self.planned(i, job))
            .collect();
        planned.sort_by(|a, b| {
            (&jobs[a.index].cluster, a.from, a.to, a.index).cmp(&(
                &jobs[b.index].cluster,
                b.from,
                b.to,
                b.index,
            ))
        });
        let mut groups = Vec::new();
        let mut group: Vec<usize> = Vec::new();
        let mut nodes: BTreeSet<&str> = BTreeSet::new();
        let (mut from, mut to, mut shortest) = (0, 0, 0);
        for p in planned {
            let job = &jobs[p.index];
            let own_span = points(1, p.from, p.to, step);
            if let Some(&first) = group.first() {
                let joined: usize = nodes.len()
                    + job
                        .nodes
                        .iter()
                        .filter(|n| !nodes.contains(n.as_str()))
                        .collect::<BTreeSet<_>>()
                        .len();
                let (f, t) = (from.min(p.from), to.max(p.to));
                let span = points(1, f, t, step);
                if jobs[first].cluster == job.cluster
                    && group.len() < MAX_GROUP_JOBS
                    && points(joined, f, t, step) <= MAX_GROUP_POINTS
                    && span <= MAX_WASTE * shortest.min(own_span) + SLACK_POINTS
                    && span <= self.settings.max_points_per_series as i64
                {
                    group.push(p.index);
                    nodes.extend(job.nodes.iter().map(String::as_str));
                    (from, to, shortest) = (f, t, shortest.min(own_span));
                    continue;
                }
                if group.len() > 1 {
                    groups.push(std::mem::take(&mut group));
                }
            }
            group = vec![p.index];
            nodes = job.nodes.iter().map(String::as_str).collect();
            (from, to, shortest) = (p.from, p.to, own_span);
        }
        if group.len() > 1 {
            groups.push(group);
        }
        groups
    }

    /// The telemetry of a group of [`Prometheus::groups`]: one query per metric for all its
    /// jobs (a metric whose query names the job: one per job), one clock query; each job's
    /// samples as [`Prometheus::fetch`] would give them.
    pub fn fetch_together(&self, jobs: &[&JobSpan]) -> Result<Vec<Fetched>, PromError> {
        let step = self.step_s();
        let plans: Vec<Planned> = jobs
            .iter()
            .enumerate()
            .map(|(i, job)| {
                self.planned(i, job).ok_or_else(|| PromError::Job {
                    job_id: job.job_id.clone(),
                    reason: "cannot be asked together with other jobs".to_string(),
                })
            })
            .collect::<Result<_, _>>()?;
        let (Some(from), Some(to)) = (
            plans.iter().map(|p| p.from).min(),
            plans.iter().map(|p| p.to).max(),
        ) else {
            return Ok(Vec::new());
        };
        let cluster = jobs[0].cluster.as_str();
        let who = together_name(jobs);
        let union: BTreeSet<String> = jobs.iter().flat_map(|j| j.nodes.iter().cloned()).collect();
        let all_nodes: Vec<String> = union.iter().cloned().collect();
        // Each job's node indexes, and the jobs on each node.
        let index_of: Vec<HashMap<&str, u32>> = jobs
            .iter()
            .map(|j| {
                j.nodes
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (n.as_str(), i as u32))
                    .collect()
            })
            .collect();
        let mut jobs_on: HashMap<&str, Vec<usize>> = HashMap::new();
        for (j, job) in jobs.iter().enumerate() {
            for node in &job.nodes {
                jobs_on.entry(node.as_str()).or_default().push(j);
            }
        }
        let metrics: Arc<[String]> = self
            .settings
            .metrics
            .iter()
            .map(|m| m.name.clone())
            .collect();
        let mut out: Vec<Fetched> = jobs
            .iter()
            .map(|j| Fetched {
                nodes: j.nodes.clone(),
                metrics: metrics.clone(),
                samples: Vec::new(),
                clock: Ok(Vec::new()),
            })
            .collect();
        // One task per metric and one for the clock, `prometheus.parallel_queries` at a time;
        // each job's samples are then joined in the metrics' order, as asked alone.
        let metric = |m: usize| -> Result<Vec<Vec<Sample>>, PromError> {
            let template = &self.settings.metrics[m];
            let m = m as u32;
            let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); jobs.len()];
            if template.query.contains("{job_id}") {
                for (j, job) in jobs.iter().enumerate() {
                    let (label, query) =
                        self.query_of(template, &job.job_id, cluster, &job.nodes)?;
                    let own: BTreeSet<String> = job.nodes.iter().cloned().collect();
                    let asked = Asked {
                        who: &job.job_id,
                        template,
                        label,
                        query: &query,
                        range: (plans[j].from, plans[j].to),
                        step,
                    };
                    let (index, samples) = (&index_of[j], &mut samples[j]);
                    self.answer_by_node(&asked, &own, &mut |node, micros, v| {
                        samples.push((index[node.as_str()], m, micros, v));
                    })?;
                }
                return Ok(samples);
            }
            let (label, query) = self.query_of(template, "", cluster, &all_nodes)?;
            let asked = Asked {
                who: &who,
                template,
                label,
                query: &query,
                range: (from, to),
                step,
            };
            self.answer_by_node(&asked, &union, &mut |node, micros, v| {
                for &j in &jobs_on[node.as_str()] {
                    let Planned { from, to, .. } = plans[j];
                    if (from * 1_000_000..=to * 1_000_000).contains(&micros) {
                        samples[j].push((index_of[j][node.as_str()], m, micros, v));
                    }
                }
            })?;
            Ok(samples)
        };
        let metrics = self.settings.metrics.len();
        let mut clock = None;
        let mut answers = Vec::with_capacity(metrics);
        for answer in in_parallel(metrics + 1, self.settings.parallel_queries, |task| {
            if task < metrics {
                Answer::Metric(metric(task))
            } else {
                Answer::Clock(self.settings.clock.as_ref().map(|template| {
                    self.clocks_together(template, &who, cluster, jobs, &union, &jobs_on)
                }))
            }
        }) {
            match answer {
                Answer::Metric(samples) => answers.push(samples?),
                Answer::Clock(offsets) => clock = offsets,
            }
        }
        for samples in answers {
            for (fetched, samples) in out.iter_mut().zip(samples) {
                fetched.samples.extend(samples);
            }
        }
        match clock {
            None => {}
            Some(Ok(offsets)) => {
                for (fetched, offsets) in out.iter_mut().zip(offsets) {
                    fetched.clock = Ok(offsets);
                }
            }
            Some(Err(e)) => {
                for fetched in &mut out {
                    fetched.clock = Err(e.to_string());
                }
            }
        }
        Ok(out)
    }

    /// Each job's nodes' clock offsets from one clock query over the group's runs at the
    /// query step: per node, the median over the points within the job's run.
    fn clocks_together(
        &self,
        template: &crate::settings::MetricTemplate,
        who: &str,
        cluster: &str,
        jobs: &[&JobSpan],
        union: &BTreeSet<String>,
        jobs_on: &HashMap<&str, Vec<usize>>,
    ) -> Result<Vec<Offsets>, PromError> {
        let all_nodes: Vec<String> = union.iter().cloned().collect();
        let (label, query) = self.query_of(template, "", cluster, &all_nodes)?;
        let (Some(from), Some(to)) = (
            jobs.iter().map(|j| j.start.timestamp()).min(),
            jobs.iter().map(|j| j.end.timestamp()).max(),
        ) else {
            return Ok(Vec::new());
        };
        // The step, or a longer one where the runs span more points than a series may have.
        let most = self.settings.max_points_per_series as i64 - 1;
        let step = self.step_s().max((to - from + most - 1) / most.max(1));
        let mut offsets = vec![Vec::new(); jobs.len()];
        for s in self.query_range(who, template, &query, (from, to), step)? {
            let Some(node) = s.labels.get(label).and_then(|v| node_of(v, union)) else {
                continue;
            };
            for &j in &jobs_on[node.as_str()] {
                let (start, end) = (jobs[j].start.timestamp(), jobs[j].end.timestamp());
                let within = s
                    .values
                    .iter()
                    .filter(|(ts, _)| (start as f64..=end as f64).contains(ts))
                    .map(|(_, v)| *v);
                if let Some(median) = median_of_finite(within) {
                    offsets[j].push((node.clone(), median));
                }
            }
        }
        Ok(offsets)
    }
}

/// A sample of one job: (index into its nodes, index into the metrics, Unix microseconds, value).
type Sample = (u32, u32, i64, f64);

/// One job's nodes' clock offsets, in seconds.
type Offsets = Vec<(String, f64)>;

/// What one task of [`Prometheus::fetch_together`] gives.
enum Answer {
    /// Each job's samples of one metric.
    Metric(Result<Vec<Vec<Sample>>, PromError>),
    /// Each job's nodes' clock offsets; none when the check is off.
    Clock(Option<Result<Vec<Offsets>, PromError>>),
}

/// `task(0..tasks)` on at most `threads` threads at a time, the results in task order.
fn in_parallel<T: Send>(tasks: usize, threads: usize, task: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<Option<T>>> =
        std::sync::Mutex::new((0..tasks).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, tasks.max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= tasks {
                        break;
                    }
                    let result = task(i);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every task ran"))
        .collect()
}

/// Points of a range query for `nodes` series over `[from, to]` on a grid of `step`.
fn points(nodes: usize, from: i64, to: i64, step: i64) -> i64 {
    nodes as i64 * ((to - from) / step.max(1) + 1)
}

/// How errors name a group: its number of jobs and the first few ids.
fn together_name(jobs: &[&JobSpan]) -> String {
    let mut ids: Vec<&str> = jobs.iter().take(3).map(|j| j.job_id.as_str()).collect();
    if jobs.len() > 3 {
        ids.push("…");
    }
    format!("{} jobs asked together ({})", jobs.len(), ids.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    fn prometheus(batch_jobs: bool) -> Prometheus {
        Prometheus::new(
            crate::settings::PrometheusOptions {
                batch_jobs: Some(batch_jobs),
                ..Default::default()
            }
            .resolve()
            .unwrap(),
        )
    }

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_795_300_000 + s, 0).unwrap()
    }

    fn job(id: &str, cluster: &str, nodes: &[&str], start: i64, end: i64) -> JobSpan {
        JobSpan {
            job_id: id.to_string(),
            cluster: cluster.to_string(),
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
            start: at(start),
            end: at(end),
        }
    }

    #[test]
    fn jobs_that_ran_alike_are_grouped_and_the_others_asked_alone() {
        let jobs = vec![
            // Three one-hour jobs on other nodes, ending within two minutes: one group.
            job("1", "c", &["n1"], 0, 3600),
            job("2", "c", &["n2"], 60, 3650),
            job("3", "c", &["n3", "n4"], 30, 3700),
            // A day-long job ending with them would make their answer 24 times as long.
            job("4", "c", &["n5"], -82_800, 3650),
            // Another cluster's job is not asked with this cluster's.
            job("5", "d", &["n6"], 0, 3600),
            // Shorter than a step: asked at its end, off the grid.
            job("6", "c", &["n7"], 3601, 3610),
            // A job on a thousand nodes over a day is more than a group takes.
            job(
                "7",
                "c",
                &(0..1000)
                    .map(|i| format!("m{i}"))
                    .collect::<Vec<_>>()
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
                -82_800,
                3600,
            ),
            // Its own nodes' series, over a range like the first three's.
            job("8", "c", &["n1", "n8"], 10, 3640),
        ];
        assert_eq!(prometheus(true).groups(&jobs), vec![vec![0, 7, 2, 1]]);
        assert!(prometheus(false).groups(&jobs).is_empty());
        // Every group keeps within its limits.
        let many: Vec<JobSpan> = (0..500)
            .map(|i| {
                job(
                    &i.to_string(),
                    "c",
                    &[&format!("n{i}")],
                    i * 10,
                    7200 + i * 10,
                )
            })
            .collect();
        let groups = prometheus(true).groups(&many);
        assert!(
            groups.iter().all(|g| g.len() <= MAX_GROUP_JOBS),
            "{groups:?}"
        );
        assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), 500);
        for g in &groups {
            let (from, to) = (
                g.iter().map(|&i| many[i].start.timestamp()).min().unwrap(),
                g.iter().map(|&i| many[i].end.timestamp()).max().unwrap(),
            );
            let shortest = g
                .iter()
                .map(|&i| (many[i].end - many[i].start).num_seconds() / 30)
                .min()
                .unwrap();
            let span = (to - from) / 30;
            assert!(points(g.len(), from, to, 30) <= MAX_GROUP_POINTS, "{g:?}");
            assert!(span <= MAX_WASTE * shortest + SLACK_POINTS, "{g:?}");
        }
    }
}
