//! `jobsight-exporter`: each Slurm job's own CPU, memory, I/O and task figures on this node,
//! read from the job's cgroups at every scrape and served to Prometheus at `/metrics` in the
//! names Princeton's cgroup exporter uses (docs/exporter.md). One runs on every compute node.
//!
//! Without `--once` it listens until stopped; a bad request, a slow client or an unreadable
//! cgroup file never ends it. `--once` prints one scrape and exits, for tests and for an admin
//! checking a node.
#![cfg_attr(test, allow(clippy::unwrap_used))]

use std::ffi::OsString;
use std::io::Write;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::ExitCode;
use std::slice::Iter;
use std::time::Instant;

use slurm_hooks::cgroup::{self, Collector, Config};
use slurm_hooks::exposition::{self, ExporterFigures};
use slurm_hooks::http::{self, Limits};

/// Princeton's exporter's port, so Prometheus configurations need no change; loopback unless
/// told otherwise.
const DEFAULT_LISTEN: &str = "127.0.0.1:9306";

const HELP: &str = "\
jobsight-exporter: per-job cgroup figures of the Slurm jobs on this node, for Prometheus

USAGE:
    jobsight-exporter [--listen ADDR] [--steps] [--cgroup-root PATH] [--proc-root PATH]
    jobsight-exporter --once [--steps] [--cgroup-root PATH] [--proc-root PATH]

Serves GET /metrics in Prometheus' text format: every job's CPU time, CPUs, memory (rss, cache,
shmem, used, limit, peak), limit hits, OOM kills, threads and (cgroup v2 with the io controller)
bytes read and written, under Princeton's cgroup_exporter names (cgroup_*, labels jobid, step,
task) plus jobsight_cgroup_*. Finds Slurm's cgroup v1 (slurm/ or slurm_<node>/) and v2
([<node>_]slurmstepd.scope) layouts by itself at every scrape.

OPTIONS:
    --listen ADDR        address to serve on (default 127.0.0.1:9306; e.g. 0.0.0.0:9306 for a
                         Prometheus on another host)
    --steps              also export each step (step=\"batch\", \"extern\", \"0\", ...); default:
                         the jobs' totals only (step=\"\", task=\"\"), which is what jobsight reads
    --cgroup-root PATH   where the cgroup file systems are mounted (default /sys/fs/cgroup)
    --proc-root PATH     where /proc is (default /proc); cgroup v2 learns a job's uid there
    --once               print one scrape to stdout and exit; problems go to stderr
    -h, --help           show this help
    -V, --version        show the version";

/// Writes one line to stderr, ignoring failure: a closed stderr must not stop the exporter.
fn report(message: &str) {
    let _ = writeln!(std::io::stderr(), "jobsight-exporter: {message}");
}

#[derive(Debug)]
struct Options {
    listen: String,
    config: Config,
    once: bool,
}

#[derive(Debug)]
enum Action {
    Run(Options),
    Print(String),
}

/// The value of an option: after `=` or as the next argument, UTF-8 and not empty.
fn value_of(
    name: &str,
    inline: Option<&str>,
    rest: &mut Iter<'_, OsString>,
    what: &str,
) -> Result<String, String> {
    let value = match inline {
        Some(value) => value.to_string(),
        None => match rest.next() {
            Some(value) => value
                .to_str()
                .ok_or_else(|| format!("{name}: {value:?} is not UTF-8"))?
                .to_string(),
            None => return Err(format!("{name} needs {what}")),
        },
    };
    if value.is_empty() {
        return Err(format!("{name} needs {what}, not an empty value"));
    }
    Ok(value)
}

fn parse_args(args: &[OsString]) -> Result<Action, String> {
    let mut options = Options {
        listen: DEFAULT_LISTEN.to_string(),
        config: Config::default(),
        once: false,
    };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let Some(arg) = arg.to_str() else {
            return Err(format!("unknown argument {arg:?} (see --help)"));
        };
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (arg, None),
        };
        let flag = |set: &mut bool| match inline {
            Some(_) => Err(format!("{name} takes no value")),
            None => {
                *set = true;
                Ok(())
            }
        };
        match name {
            "-h" | "--help" => return Ok(Action::Print(HELP.to_string())),
            "-V" | "--version" => {
                let version = format!("jobsight-exporter {}", env!("CARGO_PKG_VERSION"));
                return Ok(Action::Print(version));
            }
            "--listen" => {
                options.listen = value_of(name, inline, &mut rest, "an address like 0.0.0.0:9306")?
            }
            "--cgroup-root" => {
                options.config.cgroup_root =
                    PathBuf::from(value_of(name, inline, &mut rest, "a directory")?);
            }
            "--proc-root" => {
                options.config.proc_root =
                    PathBuf::from(value_of(name, inline, &mut rest, "a directory")?);
            }
            "--steps" => flag(&mut options.config.steps)?,
            "--once" => flag(&mut options.once)?,
            _ => return Err(format!("unknown argument {arg:?} (see --help)")),
        }
    }
    Ok(Action::Run(options))
}

/// One scrape as the text Prometheus reads. The first problem is logged when it differs from the
/// one logged last: a file that stays unreadable is named once, not at every scrape.
fn scrape(collector: &mut Collector, last_logged: &mut String) -> String {
    let started = Instant::now();
    let scrape = collector.collect();
    let seconds = started.elapsed().as_secs_f64();
    if let Some(first) = scrape.problems.messages.first()
        && first.as_str() != last_logged.as_str()
    {
        report(&format!(
            "{} value(s) skipped in this scrape (counted in jobsight_exporter_errors_total); first: {first}",
            scrape.problems.count
        ));
        last_logged.clone_from(first);
    }
    let figures = ExporterFigures {
        scrape_seconds: seconds,
        errors_total: collector.errors_total(),
    };
    exposition::render(&scrape.jobs, &figures)
}

/// `--once`: one scrape to stdout, every problem to stderr.
fn print_once(collector: &mut Collector) -> ExitCode {
    let started = Instant::now();
    let scrape = collector.collect();
    let seconds = started.elapsed().as_secs_f64();
    for message in &scrape.problems.messages {
        report(message);
    }
    let shown = scrape.problems.messages.len() as u64;
    if scrape.problems.count > shown {
        report(&format!("... and {} more", scrape.problems.count - shown));
    }
    let figures = ExporterFigures {
        scrape_seconds: seconds,
        errors_total: collector.errors_total(),
    };
    let text = exposition::render(&scrape.jobs, &figures);
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            report(&format!("cannot write to stdout: {e}"));
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let mut options = match parse_args(&args) {
        Ok(Action::Print(text)) => {
            let _ = writeln!(std::io::stdout(), "{text}");
            return ExitCode::SUCCESS;
        }
        Ok(Action::Run(options)) => options,
        Err(message) => {
            report(&message);
            return ExitCode::from(2);
        }
    };
    let root = &options.config.cgroup_root;
    if !root.is_dir() {
        report(&format!(
            "{} is not a directory: give the cgroup file systems' mount point with --cgroup-root",
            root.display()
        ));
        return ExitCode::FAILURE;
    }
    options.config.clock_ticks_per_second = cgroup::clock_ticks_per_second();
    let mut collector = Collector::new(options.config.clone());
    if options.once {
        return print_once(&mut collector);
    }
    let listener = match TcpListener::bind(options.listen.as_str()) {
        Ok(listener) => listener,
        Err(e) => {
            report(&format!("cannot listen on {}: {e}", options.listen));
            return ExitCode::FAILURE;
        }
    };
    let address = listener
        .local_addr()
        .map_or_else(|_| options.listen.clone(), |a| a.to_string());
    report(&format!(
        "serving http://{address}/metrics: {} of the jobs under {}",
        if options.config.steps {
            "totals and steps"
        } else {
            "totals"
        },
        options.config.cgroup_root.display()
    ));
    // One scrape at a time, whichever connection asks.
    let scraping = std::sync::Mutex::new((collector, String::new()));
    let metrics = || {
        let mut scraping = scraping
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (collector, last_logged) = &mut *scraping;
        scrape(collector, last_logged)
    };
    http::serve(&listener, &Limits::default(), &metrics, &report);
    // `incoming()` never ends, so this is not reached; should it be, say so.
    report("the listener stopped");
    ExitCode::FAILURE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Action, String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        parse_args(&args)
    }

    #[test]
    fn options_are_read_in_both_spellings() {
        let Ok(Action::Run(o)) = parse(&[
            "--listen=0.0.0.0:9306",
            "--steps",
            "--cgroup-root",
            "/tmp/cg",
            "--proc-root=/tmp/proc",
            "--once",
        ]) else {
            panic!("not parsed");
        };
        assert_eq!(o.listen, "0.0.0.0:9306");
        assert!(o.config.steps && o.once);
        assert_eq!(o.config.cgroup_root, PathBuf::from("/tmp/cg"));
        assert_eq!(o.config.proc_root, PathBuf::from("/tmp/proc"));
        let Ok(Action::Run(o)) = parse(&[]) else {
            panic!("defaults not parsed");
        };
        assert_eq!(o.listen, DEFAULT_LISTEN);
        assert!(!o.config.steps && !o.once);
        assert_eq!(
            o.config.cgroup_root,
            PathBuf::from(cgroup::DEFAULT_CGROUP_ROOT)
        );
        assert!(matches!(parse(&["--help"]), Ok(Action::Print(h)) if h.contains("--listen")));
        assert!(
            matches!(parse(&["-V"]), Ok(Action::Print(v)) if v.starts_with("jobsight-exporter "))
        );
    }

    #[test]
    fn bad_arguments_are_refused_with_a_reason() {
        for (args, expected) in [
            (&["--listen"][..], "--listen needs"),
            (&["--listen="][..], "not an empty value"),
            (&["--steps=yes"][..], "takes no value"),
            (&["--port", "1"][..], "unknown argument"),
            (&["-x"][..], "unknown argument"),
        ] {
            let error = parse(args).unwrap_err();
            assert!(error.contains(expected), "{args:?}: {error}");
        }
    }
}
