//! Sample messages with every placeholder set, for `jobsight check` (every template rendered
//! against them, in both shapes) and for tests.

use chrono::{DateTime, Utc};
use jobsight_base::severity::Severity;

use super::context::{admin_context, digest_context, running_context};
use super::values::Context;
use jobsight_notify::message::{AdminFacts, Links};
use jobsight_notify::plan::{Item, JobReport, MessageKind, Period, Planned};
use jobsight_notify::running::{Stage, Warning};

/// A job with every field and finding filled, for samples and tests.
pub fn sample_job() -> JobReport {
    let end = DateTime::<Utc>::from_timestamp(1_763_640_000, 0).unwrap_or_default();
    JobReport {
        job_id: "4242".into(),
        cluster: "cluster".into(),
        user: Some("alice".into()),
        account: Some("physics".into()),
        name: Some("lammps-run".into()),
        state: Some("TIMEOUT".into()),
        partition: Some("cpu".into()),
        nodes: Some("node[01-02]".into()),
        cpus: Some(64),
        start: Some(end - chrono::Duration::hours(6)),
        end: Some(end),
        judgeable: Some(true),
        not_judgeable_reason: None,
        cpu_eff: Some(0.02),
        mem_eff: Some(0.1),
        time_eff: Some(1.0),
        core_hours: Some(384.0),
        wasted_core_hours: Some(376.3),
        cpu_eff_source: Some("accounting".into()),
        mem_source: Some("telemetry-node".into()),
        shared: Some(true),
        energy_kwh: Some(9.6),
        energy_source: Some("accounting".into()),
        energy_share: Some(0.5),
        num_nodes: Some(2),
        gpus: Some(0),
        req_mem_mb: Some(64 * 1024),
        time_limit_s: Some(6 * 3600),
        mem_used_max_mb: Some(6.4 * 1024.0),
        cpu_used_cores: Some(1.3),
        gpu_util: None,
        critical_finding: true,
        items: vec![
            Item {
                kind: "hung".into(),
                severity: Severity::Critical,
                title: "The job hung".into(),
                message: "no CPU activity for 5 h on node01".into(),
                fix: "attach a debugger to a hung rank".into(),
                tools: "gdb, py-spy".into(),
                node: Some("node01".into()),
                run: Some(1),
            },
            Item {
                kind: "node-fail".into(),
                severity: Severity::Critical,
                title: "A node of the job failed".into(),
                message: "node02 stopped answering 40 min into the run".into(),
                fix: "nothing: Slurm ran the job again".into(),
                tools: String::new(),
                node: Some("node02".into()),
                run: Some(0),
            },
        ],
        // The job was requeued once: its first run lost a node.
        restart_count: Some(1),
        run_states: vec![(0, "NODE_FAIL".into()), (1, "TIMEOUT".into())],
    }
}

/// A completed job that asked for far more than it used, with a warning: its digest entry
/// suggests a better request (`--mem`, `--time`).
pub fn sample_oversized_job() -> JobReport {
    let mut job = sample_job();
    job.job_id = "4241".into();
    job.state = Some("COMPLETED".into());
    job.start = job.end.map(|end| end - chrono::Duration::minutes(90));
    job.time_eff = Some(0.25);
    job.shared = Some(false);
    job.critical_finding = false;
    job.items = vec![Item {
        kind: "memory-overrequest".into(),
        severity: Severity::Warning,
        title: "Much more memory requested than used".into(),
        message:
            "The job asked for 32.0 GB per node and used at most 3.20 GB (10 % of the request)."
                .into(),
        fix: "Ask for less memory next time.".into(),
        tools: "seff".into(),
        node: None,
        run: Some(0),
    }];
    job.restart_count = Some(0);
    job.run_states = vec![(0, "COMPLETED".into())];
    job
}

fn sample_links() -> Links {
    Links {
        report_url: "https://jobsight.example.org/{cluster}/jobs/{job_id}.html".into(),
        user_url: "https://jobsight.example.org/{cluster}/users/{user}.html".into(),
        max_jobs_per_digest: 1,
        min_days_between: 7,
        lookback_days: 7,
        period: Period::Daily,
    }
}

/// A digest (or critical email) context with every placeholder set, one job not shown.
pub fn sample_digest(critical: bool) -> Context {
    let message = Planned {
        key: "digest.alice.2026-11-20".into(),
        kind: if critical {
            MessageKind::Critical
        } else {
            MessageKind::Digest
        },
        user: Some("alice".into()),
        period: "2026-11-20".into(),
        jobs: vec![sample_oversized_job(), sample_job()],
    };
    digest_context(&message, &sample_links())
}

/// An admin digest (or critical email) context with every placeholder set.
pub fn sample_admin(critical: bool) -> Context {
    let mut other = sample_job();
    other.user = Some("bob".into());
    other.job_id = "4243".into();
    let message = Planned {
        key: "admin-digest.2026-11-20".into(),
        kind: if critical {
            MessageKind::AdminCritical
        } else {
            MessageKind::AdminDigest
        },
        user: None,
        period: "2026-11-20".into(),
        jobs: vec![sample_job()],
    };
    let facts = AdminFacts {
        users_notified: 2,
        insufficient_telemetry: 1,
        delivery_problems: vec![(
            "digest.bob.2026-11-19".into(),
            "in-doubt".into(),
            "x".into(),
        )],
        given_up: vec![(
            "1795322415.ci.1.vm.json".into(),
            "job 1: sacct has no record of the job".into(),
        )],
    };
    admin_context(&message, &[sample_job(), other], &facts, &sample_links(), 5)
}

/// A warning about a running job at `stage`, under a cancel policy, with every placeholder set.
pub fn sample_running(stage: Stage) -> Context {
    let mut job = sample_job();
    job.state = Some("RUNNING".into());
    job.end = job.start.map(|s| s + chrono::Duration::hours(2));
    job.items = vec![Item {
        kind: "hung-job".into(),
        severity: Severity::Critical,
        title: "Your running job looks hung".into(),
        message: "For the last 1h 00m your job used 0.02 cores per node (0.1 % of its CPUs), no GPU and at most 0 B/s of I/O: it has almost certainly stopped working, and its allocation is still being charged.".into(),
        fix: "Look at where its processes wait (`sattach`, `py-spy dump`, `gdb -p`); if it is stuck, cancel it (`scancel <job id>`) so the allocation goes back to the queue.".into(),
        tools: "scancel, gdb, py-spy dump".into(),
        node: None,
        run: None,
    }];
    job.restart_count = None;
    job.run_states.clear();
    let warning = Warning {
        cancel_at: job.end.map(|now| now + chrono::Duration::hours(1)),
        job,
        rule: "running-hung".into(),
        stage,
        held_s: 3600,
    };
    let message = Planned {
        key: warning.key().unwrap_or_default(),
        kind: MessageKind::Running,
        user: warning.job.user.clone(),
        period: "job-4242".into(),
        jobs: vec![warning.job.clone()],
    };
    running_context(&message, &warning)
}
