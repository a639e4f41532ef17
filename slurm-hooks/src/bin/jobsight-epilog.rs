//! `jobsight-epilog`: the Slurm epilog hook. Configure it as `EpilogSlurmctld` (recommended: once
//! per job, on the controller, with every field) or as `Epilog` (on every node of the job).
//!
//! It turns the job's environment into one spool record and enqueues it atomically. It **always
//! exits 0**: a non-zero epilog makes Slurm drain the node, which would turn a monitoring problem
//! into an outage. Every failure is reported on stderr instead, which Slurm writes to its log.
//! It takes no locks, opens no sockets and finishes in a few milliseconds.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use slurm_hooks::{hook_env, spool_dir};

const HELP: &str = "\
jobsight-epilog: enqueue a finished Slurm job for analysis by jobsight

USAGE:
    jobsight-epilog [--spool DIR]

Set it as EpilogSlurmctld (or Epilog) in slurm.conf. Slurm passes the job in environment
variables (SLURM_JOB_ID, ...); the hook writes one JSON record into DIR/new/ atomically.

OPTIONS:
    --spool DIR    spool directory (default: $JOBSIGHT_SPOOL, else /var/spool/jobsight);
                   create it with `jobsight spool init --spool DIR`
    -h, --help     show this help
    -V, --version  show the version

Always exits 0, even when it cannot enqueue: the reason goes to stderr (Slurm's log).
Slurm runs hooks without arguments; to pass --spool, call it from a two-line wrapper script.";

/// Writes one line to stderr, ignoring failure: stderr may be closed, and the hook must not die.
fn report(message: &str) {
    let _ = writeln!(std::io::stderr(), "jobsight-epilog: {message}");
}

enum Action {
    Enqueue(PathBuf),
    Print(String),
}

fn parse_args(args: &[OsString]) -> Result<Action, String> {
    let mut spool: Option<PathBuf> = None;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.to_str() {
            Some("-h" | "--help") => return Ok(Action::Print(HELP.to_string())),
            Some("-V" | "--version") => {
                return Ok(Action::Print(format!(
                    "jobsight-epilog {}",
                    env!("CARGO_PKG_VERSION")
                )));
            }
            // An empty directory would mean the hook's working directory: refused.
            Some("--spool") => match iter.next() {
                Some(dir) if !dir.is_empty() => spool = Some(PathBuf::from(dir)),
                Some(_) => return Err("--spool needs a directory, not an empty value".into()),
                None => return Err("--spool needs a directory".into()),
            },
            Some(s) if s.starts_with("--spool=") => match &s["--spool=".len()..] {
                "" => return Err("--spool= needs a directory, not an empty value".into()),
                dir => spool = Some(PathBuf::from(dir)),
            },
            _ => return Err(format!("unknown argument {:?} (see --help)", arg)),
        }
    }
    let spool = spool
        .or_else(|| {
            std::env::var_os("JOBSIGHT_SPOOL")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
        })
        .unwrap_or_else(|| PathBuf::from(spool_dir::DEFAULT_SPOOL));
    Ok(Action::Enqueue(spool))
}

/// The kernel's host name, without libc: Linux exposes it under /proc.
fn kernel_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn run() {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let spool = match parse_args(&args) {
        Ok(Action::Print(text)) => {
            let _ = writeln!(std::io::stdout(), "{text}");
            return;
        }
        Ok(Action::Enqueue(spool)) => spool,
        Err(message) => {
            // Still enqueue to the default place: a typo in slurm.conf must not lose jobs.
            report(&format!("{message}; using the default spool"));
            std::env::var_os("JOBSIGHT_SPOOL")
                .filter(|s| !s.is_empty())
                .map_or_else(|| PathBuf::from(spool_dir::DEFAULT_SPOOL), PathBuf::from)
        }
    };
    let record = match hook_env::record_from_env(
        std::env::vars_os(),
        &kernel_hostname(),
        chrono::DateTime::from(std::time::SystemTime::now()),
    ) {
        Ok(record) => record,
        Err(e) => return report(&format!("nothing enqueued: {e}")),
    };
    for warning in &record.warnings {
        report(&format!("job {}: {warning}", record.job_id));
    }
    match spool_dir::enqueue(&spool, &record) {
        Ok(spool_dir::Enqueued {
            stale_tmp: Some((path, e)),
            ..
        }) => report(&format!(
            "job {} enqueued, but its temporary name {} could not be removed: {e}",
            record.job_id,
            path.display()
        )),
        Ok(_) => {}
        Err(e) => report(&format!("job {} NOT enqueued: {e}", record.job_id)),
    }
}

fn main() -> ExitCode {
    // Even a bug must not fail the epilog: catch panics and exit 0 regardless.
    if std::panic::catch_unwind(run).is_err() {
        report("internal error (panic); the job was not enqueued");
    }
    ExitCode::SUCCESS
}
