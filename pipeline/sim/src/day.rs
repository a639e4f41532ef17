//! The draws that make a simulated day's jobs from a seed: who submits what, where and how wide,
//! how each ends, then (each from its own random stream, so that adding one changed none of the
//! others) times and behaviours, sizes and memory requests, and chains of dependent jobs.

use super::applications::{AppProfile, PROFILES};
use super::placement::place_on_free_nodes;
use super::{
    Anomaly, Behaviour, ClusterSpec, Inefficiency, MAX_ANOMALY_SHARE, NODE_MEM_MB, Outcome,
    Placement, Rng, SimJob,
};

const USERS: [(&str, u32, &str); 5] = [
    ("alice", 2001, "chem"),
    ("bob", 2002, "physics"),
    ("carol", 2003, "physics"),
    ("dave", 2004, "bio"),
    ("erin", 2005, "ml"),
];
const PARTITIONS: [&str; 4] = ["cpu", "cpu", "bigmem", "gpu"];

/// Names that users really submit and that must not trick anything downstream.
const HOSTILE_NAMES: [&[u8]; 4] = [
    b"run\nSubject: forged",
    b"\x1b[2J\x1b[31mred",
    b"caf\xe9-latin1",
    b"x\",\"job_id\":1,\"y\":\"",
];

/// Generates the day's jobs for `spec` from `seed`. The ids count up from `spec.first_job_id`;
/// [`ClusterSpec::check`] says whether they fit (callers with user-given specs check first).
pub fn simulate_day(spec: &ClusterSpec, seed: u64) -> Vec<SimJob> {
    let mut rng = Rng::new(seed);
    let node_names: Vec<String> = (1..=spec.nodes).map(|i| format!("node{i:02}")).collect();
    let mut jobs = Vec::with_capacity(spec.jobs);
    let mut next_id = spec.first_job_id;
    let profiles: Vec<AppProfile> = PROFILES
        .iter()
        .filter(|p| Some(p.name) != spec.without_application)
        .copied()
        .collect();
    while jobs.len() < spec.jobs {
        let (user, uid, account) = *rng.pick(&USERS);
        let partition = rng.pick(&PARTITIONS).to_string();
        let width = 1 + rng.below(4.min(spec.nodes as u64)) as usize;
        let first = rng.below((spec.nodes - width + 1) as u64) as usize;
        let nodes = node_names[first..first + width].to_vec();
        let cpus_per_node = 1 + rng.below(spec.cpus_per_node as u64) as u32;
        let outcome = match rng.below(100) {
            0..=74 => Outcome::Completed,
            75..=84 => Outcome::Failed {
                code: *rng.pick(&[1, 2, 3, 127]),
            },
            85..=89 => Outcome::Cancelled,
            90..=94 => Outcome::Timeout,
            _ => Outcome::OutOfMemory,
        };
        let profile = *rng.pick(&profiles);
        let app = profile.name;
        let name = if rng.chance(0.03) {
            rng.pick(&HOSTILE_NAMES).to_vec()
        } else {
            format!("{app}-{}", rng.below(100)).into_bytes()
        };
        let work_dir = format!("/home/{user}/{app}").into_bytes();
        let node_epilogs = rng.chance(spec.node_epilog_share);
        let base = SimJob {
            job_id: next_id,
            array: None,
            restart_count: 0,
            user: user.into(),
            uid,
            account: account.into(),
            partition,
            name,
            work_dir,
            nodes,
            cpus_per_node,
            outcome,
            node_epilogs,
            submit_s: 0,
            start_s: 0,
            end_s: 0,
            time_limit_s: 0,
            req_mem_mb: 0,
            gpus: 0,
            behaviour: Behaviour::Healthy,
            app: profile,
            mem_footprint_mb: 0,
            dependency: None,
        };
        if rng.chance(0.05) {
            // An array job: tasks get consecutive job ids, the first id is the array's.
            let tasks = 2 + rng.below(3);
            for task in 0..tasks {
                let mut job = base.clone();
                job.job_id = next_id + task;
                job.array = Some((next_id, task));
                jobs.push(job);
            }
            next_id += tasks;
        } else if rng.chance(0.02) {
            // A requeued job: the interrupted run and the final run. Slurm 22.05 already reports the
            // incremented restart count in the interrupted run's epilog, so both say 1.
            let mut interrupted = base.clone();
            interrupted.restart_count = 1;
            interrupted.outcome = Outcome::Cancelled;
            let mut last = base;
            last.restart_count = 1;
            jobs.push(interrupted);
            jobs.push(last);
            next_id += 1;
        } else {
            jobs.push(base);
            next_id += 1;
        }
    }
    jobs.truncate(spec.jobs);
    assign_time_and_behaviour(&mut jobs, spec.anomaly_share, seed);
    if spec.placement == Placement::FreeNodes {
        place_on_free_nodes(&mut jobs, &node_names);
    }
    assign_sizes(&mut jobs, seed);
    assign_dependencies(&mut jobs, seed);
    jobs
}

/// Chains, from a fourth random stream (so nothing a seed gave before changes): about one job in
/// ten (not an array task) becomes the next step of a chain, waiting (`afterok`) for the same
/// user's job that completed last before it started. Times stay as they were: the dependency
/// was met when the job started.
fn assign_dependencies(jobs: &mut [SimJob], seed: u64) {
    let mut rng = Rng::new(seed ^ 0x5eed_c4a1_0000_0003);
    for i in 0..jobs.len() {
        if jobs[i].array.is_some() || !rng.chance(0.1) {
            continue;
        }
        let parent = jobs
            .iter()
            .filter(|p| {
                p.user == jobs[i].user
                    && p.job_id != jobs[i].job_id
                    && p.outcome == Outcome::Completed
                    && p.end_s <= jobs[i].start_s
            })
            .max_by_key(|p| (p.end_s, p.job_id))
            .map(|p| p.job_id);
        jobs[i].dependency = parent;
    }
}

/// Each run's input size, levels and memory request, from a third random stream (so the jobs,
/// times and behaviours of a seed stay what they were). Memory: the application's footprint
/// per core times the run's input size (a log-uniform ×0.5–×2); the request is the footprint times
/// the user's margin: most ask for a little more (×1.1–×1.6), some for much more (×1.6–×3),
/// a tenth for far more (×3–×10, a copied template), rounded up to whole GiB per node; a job that
/// runs out of memory asked for less than it needs, and one that over-requests for twenty times.
fn assign_sizes(jobs: &mut [SimJob], seed: u64) {
    let mut rng = Rng::new(seed ^ 0x5eed_a990_0000_0002);
    let uniform = |rng: &mut Rng| rng.below(1_000_001) as f64 / 1e6;
    let log_uniform =
        |rng: &mut Rng, lo: f64, hi: f64| (lo.ln() + uniform(rng) * (hi.ln() - lo.ln())).exp();
    let node_mb = NODE_MEM_MB as f64;
    for job in jobs.iter_mut() {
        let jitter = |rng: &mut Rng, scale: f64| 1.0 + (uniform(rng) * 2.0 - 1.0) * scale;
        job.app.effort = (job.app.effort * jitter(&mut rng, 0.03)).min(0.99);
        job.app.ipc *= jitter(&mut rng, 0.08);
        job.app.mem_bw_per_core *= jitter(&mut rng, 0.15);
        let input = log_uniform(&mut rng, 0.5, 2.0);
        let oom = job.outcome == Outcome::OutOfMemory;
        let footprint_mb = (job.app.mem_per_core * job.cpus_per_node as f64 * input / 1048576.0)
            .clamp(if oom { 2048.0 } else { 256.0 }, 0.9 * node_mb);
        let margin = match job.behaviour {
            _ if oom => log_uniform(&mut rng, 0.6, 0.95),
            Behaviour::Inefficiency(Inefficiency::MemOverRequest) => 20.0,
            _ => match rng.below(10) {
                0..=5 => log_uniform(&mut rng, 1.1, 1.6),
                6..=8 => log_uniform(&mut rng, 1.6, 3.0),
                _ => log_uniform(&mut rng, 3.0, 10.0),
            },
        };
        // Whole GiB: up for a margin, down for a run that will not fit.
        let gib = footprint_mb * margin / 1024.0;
        let per_node_gib = if oom { gib.floor() } else { gib.ceil() }.clamp(1.0, node_mb / 1024.0);
        job.mem_footprint_mb = footprint_mb.round() as u64;
        job.req_mem_mb = per_node_gib as u64 * 1024 * job.nodes.len() as u64;
    }
}

/// Timing, requests and behaviour, from a second random stream so that adding them did not change
/// the jobs' identities for a given seed. The draw in percent is healthy below the anomalies'
/// band and inefficient from 85 on, so the default share (15 %) gives the days it always gave.
fn assign_time_and_behaviour(jobs: &mut [SimJob], anomaly_share: f64, seed: u64) {
    let mut rng = Rng::new(seed ^ 0x5eed_7e1e_0000_0001);
    let anomalies_from = 85 - (anomaly_share.clamp(0.0, MAX_ANOMALY_SHARE) * 100.0).round() as u64;
    for job in jobs.iter_mut() {
        job.submit_s = rng.below(22 * 3600);
        job.start_s = job.submit_s + rng.below(3600);
        // Durations from minutes to hours, most of them short (a log-uniform draw).
        let minutes =
            (2.0f64 * (1.0 + rng.below(1000) as f64 / 1000.0 * 5.5).exp()).min(600.0) as u64;
        let requested = minutes * 60 * (1 + rng.below(4));
        job.time_limit_s = (requested / 600 + 1) * 600;
        let duration = match job.outcome {
            Outcome::Timeout => job.time_limit_s,
            _ => (minutes * 60).max(120),
        };
        job.end_s = job.start_s + duration;
        // Once the memory request (now [`assign_sizes`]); the draw stays so that a seed's
        // behaviours stay what they were.
        let _ = rng.below(16);
        job.gpus = if job.partition == "gpu" { 4 } else { 0 };
        job.behaviour = match rng.below(100) {
            draw if draw < anomalies_from => Behaviour::Healthy,
            0..=84 => {
                let kind = *rng.pick(&Anomaly::ALL);
                let from_s = duration / 5 + rng.below((duration / 5).max(1));
                let to_s = (from_s + duration / 3).min(duration);
                Behaviour::Anomaly {
                    kind,
                    node: rng.below(job.nodes.len() as u64) as usize,
                    from_s,
                    to_s,
                }
            }
            _ => {
                let mut kind = *rng.pick(&Inefficiency::ALL);
                if (kind == Inefficiency::IdleGpu && job.gpus == 0)
                    || (matches!(kind, Inefficiency::IdleNode | Inefficiency::Imbalance)
                        && job.nodes.len() < 2)
                {
                    kind = Inefficiency::Serial;
                }
                Behaviour::Inefficiency(kind)
            }
        };
    }
}
