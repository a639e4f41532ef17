//! Helpers for the tests that run real services: a single-node Slurm (ops/slurm/) with
//! `jobsight-epilog` installed as a site would install it, and Prometheus with a node exporter
//! (ops/prometheus/). Each service is stopped by a guard when the test ends, passed or not.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::run_ok;

/// The repository, read when the test runs (see [`super::repo`]).
fn repo() -> String {
    super::repo().display().to_string()
}

pub fn sh(script: &str) -> String {
    run_ok(Command::new("bash").arg("-c").arg(script))
}

pub fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Installs Slurm's packages (which create the `slurm` user) and the test user, starting
/// nothing: what a site has before it installs the hook. Quick when they are already there.
/// Every test that installs a hook calls it first, so that the tests pass in any order on a
/// machine that has never had Slurm.
pub fn install_slurm_packages() {
    run_ok(
        Command::new("bash")
            .arg(format!("{}/ops/slurm/start-slurm-single-node.sh", repo()))
            .env("SLURM_INSTALL_ONLY", "1"),
    );
}

/// Installs `jobsight-epilog` from `bin_dir` under `base` with ops/install-epilog.sh, creates
/// `spool` for `owner`, and writes the wrapper `base/sbin/<hook>` that a site needs for a spool
/// other than the default. Returns the wrapper, which goes into slurm.conf. Slurm's packages
/// are installed first when they are missing: the hook's owner is their `slurm` user.
pub fn install_hook(base: &Path, bin_dir: &Path, spool: &Path, hook: &str, owner: &str) -> PathBuf {
    install_slurm_packages();
    run_ok(
        Command::new("bash")
            .arg(format!("{}/ops/install-epilog.sh", repo()))
            .arg("--from")
            .arg(bin_dir)
            .arg("--prefix")
            .arg(base)
            .arg("--spool")
            .arg(spool)
            .args(["--owner", owner]),
    );
    let wrapper = base.join("sbin").join(hook);
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec {}/sbin/jobsight-epilog --spool {}\n",
            base.display(),
            spool.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    wrapper
}

/// A fresh directory for a test's installation, readable by the slurm user. It is left behind
/// for a look after a failure; the next run of the same test removes every earlier one (each
/// holds a copy of the debug binary, about 1 GB, and a disk filled by them fails unrelated tests).
pub fn test_base(name: &str) -> PathBuf {
    let prefix = format!("jobsight-{name}-");
    for entry in std::fs::read_dir("/tmp").into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let base = PathBuf::from(format!("/tmp/{prefix}{}", std::process::id()));
    std::fs::create_dir_all(&base).unwrap();
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
    base
}

/// The one machine's services (Slurm, Prometheus, the SMTP server of the canaries) serve one test
/// at a time: every test of the real-services binary holds this for its whole run, so that the
/// test harness's threads never start two Slurms on one node.
pub fn one_at_a_time() -> OneAtATime {
    static SERVICES: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A test that failed while holding it leaves the services stopped by its guards: the next
    // test may go on.
    let guard = SERVICES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    OneAtATime {
        _guard: guard,
        since: Instant::now(),
    }
}

/// The machine's services held by one test ([`one_at_a_time`]). When released it prints how long
/// the test held them, for docs/testing.md's times (a test's own time: the others waited).
pub struct OneAtATime {
    _guard: std::sync::MutexGuard<'static, ()>,
    since: Instant,
}

impl Drop for OneAtATime {
    fn drop(&mut self) {
        use std::io::Write;
        let test = std::thread::current()
            .name()
            .unwrap_or("a test")
            .to_string();
        // Straight to stderr: the test harness captures `eprintln!` of passing tests.
        let _ = writeln!(
            std::io::stderr(),
            "== {test} held the services for {:.0} s",
            self.since.elapsed().as_secs_f64()
        );
    }
}

/// The Slurm release the tests run against: `JOBSIGHT_SLURM_RELEASE` (`24.11`, `26.05`: started
/// in a root file system of its own by `ops/slurm/start-slurm-release.sh`, whose client commands
/// must come first in `PATH`), else the host's 22.05.
pub fn slurm_release() -> String {
    std::env::var("JOBSIGHT_SLURM_RELEASE").unwrap_or_else(|_| "22.05".to_string())
}

/// Whether the tests run against another release than the host's own.
fn other_release() -> bool {
    slurm_release() != "22.05"
}

/// Stops Slurm when dropped.
pub struct SlurmGuard;
impl Drop for SlurmGuard {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(format!("{}/ops/slurm/stop-slurm-release.sh", repo()))
            .arg(slurm_release())
            .status();
    }
}

/// Installs (if needed) and starts Slurm with slurmdbd, with the given hooks, from a clean state
/// (an aborted earlier run may have left queued jobs or a drained node behind).
#[must_use]
pub fn start_slurm(epilog_slurmctld: &Path, epilog: Option<&Path>) -> SlurmGuard {
    start_slurm_nodes(epilog_slurmctld, epilog, 1)
}

/// [`start_slurm`] with `nodes` real slurmd on this machine (`SLURM_NODES`), named `node1`,
/// `node2`, ..., each with its share of the CPUs (with 1, the one node is named as the host).
#[must_use]
pub fn start_slurm_nodes(
    epilog_slurmctld: &Path,
    epilog: Option<&Path>,
    nodes: usize,
) -> SlurmGuard {
    let guard = SlurmGuard;
    let started = Instant::now();
    let release = slurm_release();
    // The tests, jobsight and the scripts they run call Slurm's commands by name: another
    // release's must come first in PATH. Its directory is made by the start script below, so on a
    // fresh machine it is not there yet: PATH is checked now, the commands once it has run.
    let release_bin = format!("/var/tmp/jobsight-slurm/{release}/bin");
    if other_release() {
        let path = std::env::var("PATH").unwrap_or_default();
        let sacct_before = (path.split(':'))
            .take_while(|dir| *dir != release_bin)
            .find(|dir| Path::new(dir).join("sacct").exists());
        assert!(
            path.split(':').any(|dir| dir == release_bin) && sacct_before.is_none(),
            "JOBSIGHT_SLURM_RELEASE={release} needs {release_bin} first in PATH (PATH is {path:?})"
        );
    }
    let mut command = Command::new("bash");
    command
        .arg(format!("{}/ops/slurm/start-slurm-release.sh", repo()))
        .arg(&release)
        .env("SLURM_EPILOG_SLURMCTLD", epilog_slurmctld)
        .env("SLURM_SMOKE_TEST", "0")
        .env("SLURM_CLEAN_STATE", "1")
        .env("SLURM_NODES", nodes.to_string());
    if let Some(epilog) = epilog {
        command.env("SLURM_EPILOG", epilog);
    }
    run_ok(&mut command);
    if other_release() {
        let sacct = sh("command -v sacct");
        assert!(
            sacct.trim() == format!("{release_bin}/sacct"),
            "Slurm {release} started, but sacct is {sacct:?}, not {release_bin}/sacct"
        );
    }
    eprintln!("slurm {release} up in {:.0?}", started.elapsed());
    guard
}

/// A real Slurm whose slurmctld epilog is this build's `jobsight-epilog`, installed as a site
/// installs it and enqueuing into `spool`, held for one test at a time. Slurm stops before the
/// next test may start (the fields drop in order).
pub struct SlurmSite {
    _slurm: SlurmGuard,
    _one_at_a_time: OneAtATime,
    /// The test's own folder, emptied at the start.
    pub base: PathBuf,
    pub spool: PathBuf,
}

/// Starts a [`SlurmSite`] for the test named `name` (its folder), with `jobsight`'s epilog
/// beside it; `what` says what the test installs, for the message when it is not run as root.
pub fn slurm_site(jobsight: &str, name: &str, what: &str) -> SlurmSite {
    slurm_site_of_nodes(jobsight, name, what, 1)
}

/// [`slurm_site`] with `nodes` real slurmd on this machine ([`start_slurm_nodes`]).
pub fn slurm_site_of_nodes(jobsight: &str, name: &str, what: &str, nodes: usize) -> SlurmSite {
    let one_at_a_time = one_at_a_time();
    let epilog = root_and_epilog(jobsight, what);
    let base = test_base(name);
    let spool = base.join("spool");
    let hook = install_hook(
        &base,
        epilog.parent().unwrap(),
        &spool,
        "epilog-slurmctld.sh",
        "slurm",
    );
    SlurmSite {
        _slurm: start_slurm_nodes(&hook, None, nodes),
        _one_at_a_time: one_at_a_time,
        base,
        spool,
    }
}

pub fn job_state(job: u64) -> String {
    sh(&format!("squeue -h -j {job} -o %T 2>/dev/null || true"))
        .trim()
        .to_string()
}

/// Submits the job script `jobs/<script>.sbatch` as the unprivileged test user `alice` (created
/// by the Slurm start script), with extra options (which override the script's #SBATCH lines),
/// and returns the job id. The script goes in on stdin, so the test user need not be able to read
/// the repository.
pub fn sbatch(script: &str, extra: &[OsString]) -> u64 {
    let path = format!("{}/jobs/{script}.sbatch", repo());
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    sbatch_text(&text, extra)
}

/// [`sbatch`] of a script's text (a test's own variant of one of `jobs/`).
pub fn sbatch_text(text: &str, extra: &[OsString]) -> u64 {
    // Another release's commands run in its root file system: its `as-user` enters it first.
    let mut command = Command::new(if other_release() {
        "as-user"
    } else {
        "runuser"
    });
    if other_release() {
        command.arg("alice");
    } else {
        command.args(["-u", "alice", "--"]);
    }
    command
        .args(["sbatch", "--parsable"])
        .args(extra)
        .current_dir("/tmp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{command:?} failed with {}: {}{stdout}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.trim().split(';').next().unwrap().parse().unwrap()
}

/// Stops Prometheus and its node exporter when dropped.
pub struct PrometheusGuard {
    pub dir: PathBuf,
}
impl Drop for PrometheusGuard {
    fn drop(&mut self) {
        let _ = Command::new("sh")
            .arg(self.dir.join("stop-prometheus.sh"))
            .status();
    }
}

/// Installs (if needed) and starts Prometheus scraping a node exporter every `scrape`, both on
/// loopback on the given ports, working in `dir`.
#[must_use]
pub fn start_prometheus(
    dir: &Path,
    port: u16,
    exporter_port: u16,
    scrape: &str,
) -> PrometheusGuard {
    start_prometheus_with(dir, port, exporter_port, None, scrape, None)
}

/// [`start_prometheus`], also scraping a per-job cgroup exporter on loopback `cgroup_port`
/// (started by the caller) when given, and naming the node exporter's target after `nodes`
/// (Slurm's node names separated by spaces, one target each; the host's name when none).
#[must_use]
pub fn start_prometheus_with(
    dir: &Path,
    port: u16,
    exporter_port: u16,
    cgroup_port: Option<u16>,
    scrape: &str,
    nodes: Option<&str>,
) -> PrometheusGuard {
    let guard = PrometheusGuard {
        dir: dir.to_path_buf(),
    };
    let started = Instant::now();
    let mut command = Command::new("bash");
    command
        .arg(format!("{}/ops/prometheus/start-prometheus.sh", repo()))
        .env("PROM_DIR", dir)
        .env("PROM_PORT", port.to_string())
        .env("NODE_EXPORTER_PORT", exporter_port.to_string())
        .env("SCRAPE_INTERVAL", scrape);
    if let Some(cgroup_port) = cgroup_port {
        command.env("CGROUP_EXPORTER_PORT", cgroup_port.to_string());
    }
    if let Some(nodes) = nodes {
        command.env("PROM_NODE_NAME", nodes);
    }
    run_ok(&mut command);
    eprintln!("prometheus up in {:.0?}", started.elapsed());
    guard
}

/// jobsight-exporter on loopback `cgroup_port` and Prometheus (1-s scrapes) scraping it beside
/// the node exporter: each job's own cgroup series, as `prometheus.cgroup = true` reads them.
/// Prometheus is stopped before the exporter.
#[must_use]
pub fn start_prometheus_and_job_exporter(
    jobsight: &str,
    dir: &Path,
    port: u16,
    exporter_port: u16,
    cgroup_port: u16,
) -> (PrometheusGuard, KillOnDrop) {
    start_prometheus_and_job_exporter_of(jobsight, dir, [port, exporter_port, cgroup_port], None)
}

/// [`start_prometheus_and_job_exporter`] on the ports `[prometheus, node exporter, cgroup
/// exporter]` for the Slurm nodes `nodes` (space-separated; the host's name when none).
#[must_use]
pub fn start_prometheus_and_job_exporter_of(
    jobsight: &str,
    dir: &Path,
    [port, exporter_port, cgroup_port]: [u16; 3],
    nodes: Option<&str>,
) -> (PrometheusGuard, KillOnDrop) {
    let exporter = start_jobsight_exporter(jobsight, cgroup_port);
    let prometheus =
        start_prometheus_with(dir, port, exporter_port, Some(cgroup_port), "1s", nodes);
    (prometheus, exporter)
}

/// For a test that installs services: checks that it runs as root and returns the
/// `jobsight-epilog` binary built beside `jobsight`.
pub fn root_and_epilog(jobsight: &str, what: &str) -> PathBuf {
    assert!(
        super::is_root(),
        "this test installs {what} and must run as root"
    );
    let epilog = Path::new(jobsight).with_file_name("jobsight-epilog");
    assert!(
        epilog.is_file(),
        "{} missing: run `cargo build --workspace` first",
        epilog.display()
    );
    epilog
}

/// Writes `base/jobsight.toml` for a real Prometheus on loopback `port`: retries after 1 s, series
/// at `step_s`, 5 s rate windows, 3 s lag, then `extra` (more TOML), and the outbox
/// `base/outbox`. Returns its path.
pub fn prometheus_config(base: &Path, port: u16, step_s: i64, extra: &str) -> PathBuf {
    let config = base.join("jobsight.toml");
    let outbox = format!("outbox = \"{}\"\n", base.join("outbox").display());
    std::fs::write(
        &config,
        format!(
            "[ingest]\nretry_after_s = 1\nretry_max_s = 2\n[prometheus]\nurl = \"http://127.0.0.1:{port}\"\nstep_s = {step_s}\nrate_window_s = 5\nlag_s = 3\ntimeout_s = 10\n{}",
            // The outbox goes into the test's [notify] table, or a table of its own.
            if extra.contains("[notify]\n") {
                extra.replace("[notify]\n", &format!("[notify]\n{outbox}"))
            } else {
                format!("{extra}\n[notify]\n{outbox}")
            }
        ),
    )
    .unwrap();
    config
}

/// Runs the per-job DAG (`jobsight dag run per-job`: ingest, features, classify, critical emails)
/// with `config` until `count` records are in the spool's done/ (within `limit`); returns the last
/// run's output and every run's (the summary on stdout, then the JSON log lines), each echoed to
/// stderr.
pub fn ingest_until_done(
    jobsight: &str,
    config: &Path,
    data: &Path,
    spool: &Path,
    count: usize,
    limit: Duration,
) -> (String, String) {
    let (mut last, mut every_run) = (String::new(), String::new());
    wait_until(&format!("{count} jobs to be ingested"), limit, || {
        let (stdout, stderr) = super::run_ok_with_stderr(
            Command::new(jobsight)
                .arg("--config")
                .arg(config)
                .arg("--data")
                .arg(data)
                .args(["--log-format", "json", "dag", "run", "per-job"])
                .env("JOBSIGHT_SPOOL", spool),
        );
        last = format!("{stdout}{stderr}");
        eprint!("{last}");
        every_run.push_str(&last);
        std::fs::read_dir(spool.join("done")).map_or(0, |d| d.count()) == count
    });
    (last, every_run)
}

/// The JSON log lines of `output` about jobs passing `step`.
pub fn job_events(output: &str, step: &str) -> Vec<serde_json::Value> {
    output
        .lines()
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == "job" && v["step"] == step)
        .collect()
}

/// A child process (a daemon, a server) killed when dropped, so that a failing test leaves none
/// running to disturb the next run (a left-over SMTP server held the next run's port).
#[derive(Debug)]
pub struct KillOnDrop(pub std::process::Child);

/// Starts this build's `jobsight-exporter` (beside `jobsight`) serving each job's cgroup figures
/// on loopback `port`; it stops when the guard drops.
pub fn start_jobsight_exporter(jobsight: &str, port: u16) -> KillOnDrop {
    let exporter = Path::new(jobsight).with_file_name("jobsight-exporter");
    assert!(
        exporter.is_file(),
        "{} missing: run `cargo build --workspace` first",
        exporter.display()
    );
    KillOnDrop(
        Command::new(&exporter)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    )
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Seconds of one of sacct's durations (`[D-]HH:MM:SS[.mmm]`, or `MM:SS.mmm` for TotalCPU).
pub fn sacct_seconds(text: &str) -> f64 {
    let (days, rest) = match text.split_once('-') {
        Some((d, rest)) => (d.parse::<f64>().unwrap(), rest),
        None => (0.0, text),
    };
    let parts: Vec<f64> = rest.split(':').map(|p| p.parse().unwrap()).collect();
    let clock = parts.iter().fold(0.0, |total, p| total * 60.0 + p);
    days * 86_400.0 + clock
}

/// seff's CPU efficiency of `job` and its TotalCPU in seconds, from sacct's text: the job line of
/// the newest run of the id (the test cluster's ids repeat across runs), whose TotalCPU sacct
/// sums from the steps (with `-X` it would fetch no steps and print 0).
pub fn seff(job: u64) -> (f64, f64) {
    let out = sh(&format!(
        "TZ=UTC sacct -n -P -j {job} -o JobIDRaw,Submit,TotalCPU,AllocCPUS,Elapsed"
    ));
    let newest = out
        .lines()
        .map(|l| l.split('|').collect::<Vec<&str>>())
        .filter(|f| f.len() == 5 && f[0] == job.to_string())
        .max_by(|a, b| a[1].cmp(b[1]))
        .unwrap_or_else(|| panic!("sacct has no job line for {job}: {out}"));
    let (total_cpu, alloc, elapsed) = (
        sacct_seconds(newest[2]),
        newest[3].parse::<f64>().unwrap(),
        sacct_seconds(newest[4]),
    );
    (total_cpu / (alloc * elapsed), total_cpu)
}
