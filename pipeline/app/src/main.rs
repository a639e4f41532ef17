//! The `jobsight` binary: everything is in the library's command-line module, [`jobsight::cli`].
//!
//! The commands run on a thread of their own with a large stack: DataFusion plans and evaluates
//! a query's expressions by recursion, and a statement may nest as deep as
//! `query::depth::MAX_NESTING` (a dashboard's `OR` chain of a thousand terms). The main thread's
//! 8 MiB did not hold that (`jobsight sql` aborted at 30,000 terms); the stack is reserved, not
//! used, until a query needs it.

/// The commands' stack: what planning and running a statement at the nesting bound needs, with
/// room to spare (`tests/pipeline/serve_pg.rs` runs a statement at the bound through it).
const COMMAND_STACK_BYTES: usize = 256 * 1024 * 1024;

fn main() -> std::process::ExitCode {
    let commands = std::thread::Builder::new()
        .name("jobsight".into())
        .stack_size(COMMAND_STACK_BYTES)
        .spawn(jobsight::cli::main);
    match commands.map(std::thread::JoinHandle::join) {
        Ok(Ok(code)) => code,
        // The panic was reported by the panic hook as it happened.
        Ok(Err(_)) => std::process::ExitCode::from(101),
        Err(e) => {
            eprintln!("jobsight: cannot start the command thread: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
