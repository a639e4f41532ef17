//! The commands on a simulated cluster: `demo` (the whole pipeline on a simulated day) and
//! `simulate` (a simulated day written into the warehouse).

use jobsight_base::choice::Choice;
use std::io::{StdoutLock, Write};

use anyhow::Context as _;

use crate::demo::{DemoOptions, default_epilog_bin};
use jobsight_ingest::simulator;
use jobsight_sim::ClusterSpec;

use crate::cli::Env;
use crate::cli::args::{DemoArgs, SimulateArgs};
use crate::cli::progress::Progress;

/// `jobsight demo`.
pub(in crate::cli) fn demo(args: DemoArgs, stdout: &mut StdoutLock<'_>) -> anyhow::Result<()> {
    let DemoArgs {
        dir,
        jobs,
        nodes,
        seed,
        epilog_bin,
    } = args;
    let options = DemoOptions {
        dir,
        spec: ClusterSpec {
            jobs: jobs as usize,
            nodes: nodes as usize,
            ..ClusterSpec::default()
        },
        seed,
        epilog_bin: epilog_bin.unwrap_or_else(default_epilog_bin),
    };
    crate::demo::run(&options, stdout).context("demo failed")?;
    Ok(())
}

/// `jobsight simulate`.
pub(in crate::cli) fn simulate(
    args: SimulateArgs,
    env: &Env,
    stdout: &mut StdoutLock<'_>,
) -> anyhow::Result<()> {
    let SimulateArgs {
        cluster,
        nodes,
        jobs,
        metrics,
        step,
        seed,
        anomaly_share,
        first_job_id,
        day,
        placement,
    } = args;
    let data = env.settings.data.clone();
    let spec = ClusterSpec {
        first_job_id,
        name: cluster.clone(),
        nodes: nodes as usize,
        jobs: jobs.map_or(4 * nodes as usize, |j| j as usize),
        node_epilog_share: 0.0,
        anomaly_share,
        placement,
        ..ClusterSpec::default()
    };
    spec.check()
        .map_err(|e| anyhow::anyhow!("--first-job-id / --jobs: {e}"))?;
    let started = std::time::Instant::now();
    let day_jobs = jobsight_sim::simulate_day(&spec, seed);
    let refs: Vec<_> = day_jobs.iter().collect();
    let part = format!(
        "sim-{cluster}-s{seed}-n{nodes}-j{}-m{metrics}-t{step}",
        spec.jobs
    );
    let bar = Progress::new("simulating", "jobs");
    let written = simulator::write_jobs(
        &data,
        &refs,
        &spec,
        day,
        step,
        metrics as usize,
        seed,
        &part,
        |i, n| bar.set(i, n),
    )?;
    drop(bar);
    let seconds = started.elapsed().as_secs_f64();
    writeln!(
        stdout,
        "wrote {} jobs and {} telemetry rows ({} files) of cluster {cluster} into {} in {seconds:.1} s ({:.2} M rows/s); peak memory {} MiB",
        written.jobs,
        written.telemetry_rows,
        written.files,
        data.display(),
        written.telemetry_rows as f64 / seconds / 1e6,
        jobsight_base::peak_memory_mib().map_or("?".into(), |m| m.to_string())
    )?;
    writeln!(
        stdout,
        "jobs ran on {:.1} % of the day's node-time (placement {}; above 100 % when jobs share nodes)",
        100.0 * jobsight_sim::busy_share(&day_jobs, spec.nodes),
        placement.name()
    )?;
    Ok(())
}
