//! The `jobsight` command line, the top of the crate: it parses the arguments, lays the flags
//! over the configuration file's options, resolves them once, and calls one function per
//! command ([`commands`]). Below it: the scheduler, then the stages (see docs/ and the crate's
//! layout in the README). Errors become one message on stderr and exit status 1.

mod args;
mod choice_arg;
mod commands;
mod progress;
mod shell;

use std::path::PathBuf;
use std::process::ExitCode;

use crate::config::{Options, Settings};
use crate::schedule::LogFormat;
use args::{Cli, Command};

/// What every command gets besides its own arguments.
pub(crate) struct Env {
    /// The configuration file's options with the flags laid over them, resolved once.
    pub settings: Settings,
    /// The configuration file read (or a note that there was none), for messages.
    pub config_path: PathBuf,
    /// Log lines of `dag run` and `daemon`: text or JSON.
    pub log_format: LogFormat,
    /// Who may see which jobs in this run ([`crate::access`]).
    pub access: crate::access::Access,
}

pub fn main() -> ExitCode {
    use clap::FromArgMatches;
    let cli = Cli::from_arg_matches(&args::command().get_matches()).unwrap_or_else(|e| e.exit());
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A closed stdout (`jobsight spool claim | head`) is not an error worth a message.
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            // The chain of causes, each once: our messages often quote their cause already.
            let mut message = e.to_string();
            for cause in e.chain().skip(1) {
                let cause = cause.to_string();
                if !message.contains(&cause) {
                    message = format!("{message}: {cause}");
                }
            }
            eprintln!("jobsight: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    use crate::access::{Access, Ids, SystemDirectory, trusted};
    let mut stdout = std::io::stdout().lock();
    // A privileged run (setgid) must not read a file the person chose with its privileges, so
    // the ids are known before any configuration is read.
    // Ids that cannot be read stop the run: assuming "unprivileged" would let a setgid
    // installation read a file of the person's choosing.
    let ids = Ids::current()?;
    let privileged = ids.privileged();
    // Until the configuration names the admins, nobody is one: `--config` is refused here.
    let no_person = Access {
        person: None,
        privileged,
    };
    no_person.check_overrides(cli.config.is_some(), false)?;
    // A privileged run reads the admin's file alone, and a warehouse the person cannot change.
    let system_config = std::path::Path::new(trusted::SYSTEM_CONFIG);
    if privileged {
        trusted::check_system_config(system_config)?;
    }
    let (mut options, config_path) = Options::load(
        privileged
            .then_some(system_config)
            .or(cli.config.as_deref()),
    )?;
    let moves_data = cli.data.is_some() || cli.spool.is_some();
    cli.overlay(&mut options);
    let settings = options.resolve(&config_path)?;
    if privileged {
        trusted::check_warehouse(&settings.data, ids.real_uid)?;
    }
    let access = if settings.access.own_jobs_only || privileged {
        Access::of(&settings.access, ids, &SystemDirectory)?
    } else {
        no_person
    };
    access.check_overrides(cli.config.is_some(), moves_data)?;
    access.allows_command(matches!(
        cli.command,
        Command::Job(_) | Command::Jobs(_) | Command::Running(_)
    ))?;
    let env = Env {
        settings,
        config_path,
        log_format: cli.log_format,
        access,
    };
    match cli.command {
        Command::Spool { action } => commands::spool(action, &env, &mut stdout),
        Command::Ingest(args) => commands::ingest(args, &env, &mut stdout),
        Command::Dag { action } => commands::dag(action, &env, &mut stdout),
        Command::Daemon => commands::daemon(&env),
        Command::Demo(args) => commands::demo(args, &mut stdout),
        Command::Simulate(args) => commands::simulate(args, &env, &mut stdout),
        Command::Features(args) => commands::features(args, &env, &mut stdout),
        Command::Classify(args) => commands::classify(args, &env, &mut stdout),
        Command::Model { action } => commands::model(action, &env, &mut stdout),
        Command::Label(args) => commands::label(args, &env, &mut stdout),
        Command::Workflow { action } => commands::workflow(action, &env, &mut stdout),
        Command::Rules { action } => commands::rules(action, &env, &mut stdout),
        Command::Notify(args) => commands::notify(args, &env, &mut stdout),
        Command::Check { .. } => commands::check(&env, &mut stdout),
        Command::Sql(args) => commands::sql(args, &env, &mut stdout),
        Command::Serve(args) => commands::serve(args, &env, &mut stdout),
        Command::Ballista { role } => commands::ballista(role, &mut stdout),
        Command::Summary(args) => commands::summary(args, &env, &mut stdout),
        Command::Job(args) => commands::job(args, &env, &mut stdout),
        Command::Jobs(args) => commands::jobs(args, &env, &mut stdout),
        Command::Running(args) => commands::running(args, &env, &mut stdout),
        Command::Report { action, .. } => commands::report(action, &env, &mut stdout),
        Command::Import { source } => commands::import(source, &env, &mut stdout),
    }
}
