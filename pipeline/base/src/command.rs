//! Running another system's command (Slurm's `squeue`, `sacct`, `scancel`, `scontrol`, `getent`)
//! as safely as it can be: no shell, in UTC, for at most a timeout (then it is killed), with a
//! cap on the answer it is allowed to give, and an error that names the command and what it said
//! on its error output.

use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The most a Slurm command's answer may hold before it is refused: far above what `squeue` of
/// a large cluster prints (about 5 KB a job), far below what would take the pipeline's memory.
pub const MAX_COMMAND_OUTPUT: usize = 256 << 20;

/// Runs a Slurm command (`squeue`, `scancel`, `scontrol`) with `args`, no shell, in UTC, for at
/// most `timeout` (then it is killed), and returns what it printed; an error naming the command
/// and its error output when it cannot run, takes too long, fails or prints more than
/// [`MAX_COMMAND_OUTPUT`].
pub fn run_command(program: &Path, args: &[&str], timeout: Duration) -> Result<Vec<u8>, String> {
    run_command_capped(program, args, timeout, MAX_COMMAND_OUTPUT).map_err(|e| e.to_string())
}

/// Why a Slurm command gave no answer to use.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CommandError {
    /// It could not run, failed or took too long: asking again later may work.
    #[error("{0}")]
    Failed(String),
    /// It answered more than the limit: asking again would give the same.
    #[error("{0}")]
    TooLarge(String),
}

/// [`run_command`] with its own limit on the answer's size: past `max_bytes` the rest of the
/// answer is read and thrown away (so the command ends rather than blocks) and the answer is
/// [`CommandError::TooLarge`], saying how large it was.
pub fn run_command_capped(
    program: &Path,
    args: &[&str],
    timeout: Duration,
    max_bytes: usize,
) -> Result<Vec<u8>, CommandError> {
    let (out, total) =
        run_to_end(program, args, timeout, max_bytes).map_err(CommandError::Failed)?;
    if total > max_bytes {
        return Err(CommandError::TooLarge(format!(
            "{} {} answered {total} bytes, over the {} MiB an answer may have",
            program.display(),
            args.join(" "),
            max_bytes >> 20
        )));
    }
    Ok(out)
}

/// Runs the command to its end (or `timeout`), keeping the first `max_bytes` of its answer:
/// that part and the answer's whole size.
fn run_to_end(
    program: &Path,
    args: &[&str],
    timeout: Duration,
    max_bytes: usize,
) -> Result<(Vec<u8>, usize), String> {
    let shown = format!("{} {}", program.display(), args.join(" "));
    let mut child = Command::new(program)
        .args(args)
        .env("TZ", "UTC")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    // Read while waiting: output larger than the pipe would otherwise block the command.
    let drain = |pipe: Option<Box<dyn Read + Send>>, max: usize| {
        std::thread::spawn(move || {
            let (mut kept, mut total) = (Vec::new(), 0usize);
            if let Some(mut pipe) = pipe {
                let mut buffer = vec![0u8; 64 * 1024];
                while let Ok(n) = pipe.read(&mut buffer) {
                    if n == 0 {
                        break;
                    }
                    total = total.saturating_add(n);
                    if kept.len() < max {
                        kept.extend_from_slice(&buffer[..n.min(max - kept.len())]);
                    }
                }
            }
            (kept, total)
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _), max_bytes);
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _), 64 * 1024);
    let started = std::time::Instant::now();
    let status = loop {
        match child.try_wait().map_err(|e| format!("{shown}: {e}"))? {
            Some(status) => break status,
            None if started.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{shown}: no answer within {}s", timeout.as_secs()));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let (out, total) = stdout.join().unwrap_or_default();
    let (err, _) = stderr.join().unwrap_or_default();
    if !status.success() {
        return Err(format!(
            "{shown} failed ({status}): {}",
            crate::text::printable(String::from_utf8_lossy(&err).trim())
        ));
    }
    Ok((out, total))
}
