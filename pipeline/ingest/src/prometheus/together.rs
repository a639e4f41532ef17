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
//! than a step (its points are not the grid's), a job that names a node twice, metrics whose
//! query names the job (`{job_id}`: a per-job exporter's or DCGM's job series), which are asked
//! per job inside the group, and the clock check, asked per job (its median is over about 60
//! points spread over the job's run, which the group's grid would not give). A group's range is
//! at most [`MAX_WASTE`] times its shortest job's and it asks for at most [`MAX_GROUP_POINTS`]
//! per metric, so one long job does not make its short neighbours' answers long. A group's
//! queries run `prometheus.parallel_queries` at a time.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use super::{Asked, PromError, Prometheus, node_matcher};
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
        // A node named twice would take its series twice here (asked alone, once).
        let distinct: BTreeSet<&String> = job.nodes.iter().collect();
        if job.end < job.start
            || distinct.len() != job.nodes.len()
            || node_matcher("instance", &job.nodes).is_err()
        {
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
    pub fn fetch_together(
        &self,
        jobs: &[&JobSpan],
        with_clock: bool,
    ) -> Result<Vec<Fetched>, PromError> {
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
        // Who takes each node's samples: the jobs on it, with the node's index among theirs.
        let mut takers: HashMap<&str, Vec<Taker>> = HashMap::new();
        for (j, (job, plan)) in jobs.iter().zip(&plans).enumerate() {
            for (i, node) in job.nodes.iter().enumerate() {
                takers.entry(node.as_str()).or_default().push(Taker {
                    job: j,
                    node: i as u32,
                    from_us: plan.from * 1_000_000,
                    to_us: plan.to * 1_000_000,
                });
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
        // One task per metric and, with the clock, one per job, `prometheus.parallel_queries` at
        // a time; each job's samples are then joined in the metrics' order, as asked alone.
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
                    self.answer_by_node(
                        &asked,
                        &own,
                        &mut share(&takers, Some(j), m, &mut samples),
                    )?;
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
            self.answer_by_node(&asked, &union, &mut share(&takers, None, m, &mut samples))?;
            Ok(samples)
        };
        // The clock is asked for each job on its own, as alone: its median is over about 60
        // points spread over the job's run, which a group's grid would not give.
        let metrics = self.settings.metrics.len();
        let clocks = if with_clock && self.settings.clock.is_some() {
            jobs.len()
        } else {
            0
        };
        let mut answers = Vec::with_capacity(metrics);
        for answer in in_parallel(metrics + clocks, self.settings.parallel_queries, |task| {
            if task < metrics {
                return Answer::Metric(metric(task));
            }
            let job = jobs[task - metrics];
            Answer::Clock(
                task - metrics,
                self.clock_offsets(&job.job_id, cluster, &job.nodes, job.start, job.end)
                    .map_err(|e| e.to_string()),
            )
        }) {
            match answer {
                Answer::Metric(samples) => answers.push(samples?),
                Answer::Clock(j, offsets) => out[j].clock = offsets,
            }
        }
        for samples in answers {
            for (fetched, samples) in out.iter_mut().zip(samples) {
                fetched.samples.extend(samples);
            }
        }
        Ok(out)
    }
}

/// A sample of one job: (index into its nodes, index into the metrics, Unix microseconds, value).
type Sample = (u32, u32, i64, f64);

/// What one task of [`Prometheus::fetch_together`] gives.
enum Answer {
    /// Each job's samples of one metric.
    Metric(Result<Vec<Vec<Sample>>, PromError>),
    /// One job's (its index) nodes' clock offsets, or why they are not known.
    Clock(usize, Result<Vec<(String, f64)>, String>),
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

/// A job of a group that takes a node's samples: the job, the node's index among its nodes, and
/// its range in Unix microseconds.
#[derive(Debug, Clone, Copy)]
struct Taker {
    job: usize,
    node: u32,
    from_us: i64,
    to_us: i64,
}

/// Hands each sample of metric `m`'s answer to the jobs that take it (only job `only`, when
/// given), within each one's range. The node's takers are looked up once per series, not per
/// sample: a series' samples come one after another, all for the same node.
fn share<'a>(
    takers: &'a HashMap<&str, Vec<Taker>>,
    only: Option<usize>,
    m: u32,
    samples: &'a mut [Vec<Sample>],
) -> impl FnMut(&String, i64, f64) + 'a {
    let mut current: (*const String, &[Taker]) = (std::ptr::null(), &[]);
    move |node, micros, v| {
        if !std::ptr::eq(current.0, node) {
            current = (node, takers.get(node.as_str()).map_or(&[], Vec::as_slice));
        }
        for t in current.1 {
            if only.is_none_or(|j| j == t.job) && (t.from_us..=t.to_us).contains(&micros) {
                samples[t.job].push((t.node, m, micros, v));
            }
        }
    }
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

    /// A stand-in Prometheus on a loopback port: any query's answer is one series per node its
    /// `instance=~"(a|b)..."` matcher names, sorted as Prometheus sorts them, with a value at
    /// every step that depends on the node, the time and the query without its node matcher
    /// (as a real node's series does not depend on which other nodes are asked for).
    fn stand_in() -> String {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut request = Vec::new();
                let mut buf = [0u8; 65536];
                let body = loop {
                    let n = stream.read(&mut buf).unwrap_or(0);
                    request.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&request).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len: usize = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap())
                            })
                            .unwrap_or(0);
                        if request.len() >= end + 4 + len || n == 0 {
                            break text[end + 4..].to_string();
                        }
                    }
                    if n == 0 {
                        break String::new();
                    }
                };
                let form: HashMap<String, String> = body
                    .split('&')
                    .filter_map(|kv| kv.split_once('='))
                    .map(|(k, v)| (k.to_string(), decode(v)))
                    .collect();
                let number = |k: &str| form[k].trim_end_matches('s').parse::<i64>().unwrap();
                let (start, end, step) = (number("start"), number("end"), number("step"));
                let query = &form["query"];
                let m = query.find("instance=~\"(").unwrap() + "instance=~\"(".len();
                let n = m + query[m..].find(")(").unwrap();
                let mut nodes: Vec<String> = query[m..n]
                    .split('|')
                    .map(|n| n.replace("\\\\.", "."))
                    .collect();
                nodes.sort_by_key(|n| format!("{n}:9100"));
                // Every node matcher's list left out (a query may hold several).
                let mut rest = query.clone();
                while let Some(at) = rest.find("instance=~\"(") {
                    let close = at + rest[at..].find(")(").unwrap();
                    rest.replace_range(at..close, "");
                }
                let series: Vec<String> = nodes
                    .iter()
                    .map(|node| {
                        let values: Vec<String> = (0..)
                            .map(|k| start + k * step)
                            .take_while(|t| *t <= end)
                            .map(|t| {
                                let v = (node.len() * 7 + rest.len()) as i64 * 1_000 + t % 997;
                                format!("[{t},\"{v}\"]")
                            })
                            .collect();
                        format!(
                            r#"{{"metric":{{"instance":"{node}:9100"}},"values":[{}]}}"#,
                            values.join(",")
                        )
                    })
                    .collect();
                let body = format!(
                    r#"{{"status":"success","data":{{"resultType":"matrix","result":[{}]}}}}"#,
                    series.join(",")
                );
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        url
    }

    /// A form field's value, percent-decoded.
    fn decode(v: &str) -> String {
        let bytes = v.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'+' => out.push(b' '),
                b'%' => {
                    out.push(u8::from_str_radix(&v[i + 1..i + 3], 16).unwrap());
                    i += 2;
                }
                b => out.push(b),
            }
            i += 1;
        }
        String::from_utf8(out).unwrap()
    }

    /// Each job of a group gets from one query per metric the very samples, in the same order,
    /// that it gets asked for alone: jobs on several nodes, two jobs sharing a node over
    /// different ranges, a metric whose query names the job, the clock; a job naming a node
    /// twice is not grouped.
    #[test]
    fn a_group_gives_each_job_what_it_gets_alone() {
        let url = stand_in();
        let prometheus = Prometheus::new(
            crate::settings::PrometheusOptions {
                url: Some(url),
                extra_metrics: Some(vec![crate::settings::MetricTemplate {
                    name: "job_cpu".into(),
                    query: r#"sum by (instance) (job_cpu{jobid="{job_id}",{nodes}})"#.into(),
                    node_label: None,
                }]),
                ..Default::default()
            }
            .resolve()
            .unwrap(),
        );
        let jobs = vec![
            job("1", "c", &["n1", "n2", "gpu.3"], 0, 3600),
            job("2", "c", &["n2", "n4"], 200, 3650),
            job("3", "c", &["n5"], 35, 3700),
            job("4", "c", &["n6", "n6"], 35, 3700),
        ];
        let groups = prometheus.groups(&jobs);
        assert_eq!(groups, vec![vec![0, 2, 1]]);
        let members: Vec<&JobSpan> = groups[0].iter().map(|&i| &jobs[i]).collect();
        let together = prometheus.fetch_together(&members, true).unwrap();
        for (job, fetched) in members.iter().zip(&together) {
            let mut alone = Vec::new();
            prometheus
                .fetch(
                    &job.job_id,
                    &job.cluster,
                    &job.nodes,
                    job.start,
                    job.end,
                    &mut |n, m, ts, v| alone.push((n.to_string(), m.to_string(), ts, v.to_bits())),
                )
                .unwrap();
            let got: Vec<_> = fetched
                .samples
                .iter()
                .map(|&(n, m, ts, v)| {
                    (
                        fetched.nodes[n as usize].clone(),
                        fetched.metrics[m as usize].clone(),
                        ts,
                        v.to_bits(),
                    )
                })
                .collect();
            // Every metric (the 16 defaults and the job's) of every node at every grid point.
            let [(from, to)] = prometheus.ranges(job.nodes.len(), job.start, job.end)[..] else {
                panic!("one range")
            };
            let points = ((to - from) / 30 + 1) as usize;
            assert_eq!(
                alone.len(),
                17 * job.nodes.len() * points,
                "job {}",
                job.job_id
            );
            let first = got.iter().zip(&alone).position(|(a, b)| a != b);
            assert!(
                got == alone,
                "job {}: first difference at {first:?}: {:?} against {:?}",
                job.job_id,
                first.map(|i| &got[i]),
                first.map(|i| &alone[i])
            );
            let clock = prometheus
                .clock_offsets(&job.job_id, &job.cluster, &job.nodes, job.start, job.end)
                .unwrap();
            assert_eq!(fetched.clock, Ok(clock));
        }
        // Without the clock, none is asked for.
        let without = prometheus.fetch_together(&members, false).unwrap();
        assert!(without.iter().all(|f| f.clock == Ok(Vec::new())));
        assert_eq!(without[0].samples, together[0].samples);
    }
}
