//! The `jobsight` binary: everything is in the library's command-line module, [`jobsight::cli`].

fn main() -> std::process::ExitCode {
    jobsight::cli::main()
}
