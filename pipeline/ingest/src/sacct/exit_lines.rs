//! sacct's text answer (`sacct -n -X -P -D -o JobIDRaw,Submit,ExitCode,SubmitLine`): each job's
//! exit code and signal, which 22.05's JSON answer gets wrong for failed jobs, and the
//! `--dependency` of its submit line; and the line that belongs to a record.

use super::Accounting;

/// One line of `TZ=UTC sacct -n -X -P -D -o JobIDRaw,Submit,ExitCode,SubmitLine` (submit in
/// epoch seconds). The submit line comes last because it may hold `|` itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ExitLine {
    pub job_id: u64,
    pub submit: i64,
    pub code: i32,
    pub signal: i32,
    /// The `--dependency` the job was submitted with, from its submit line (validated by
    /// [`dependency_in_submit_line`]).
    pub dependency: Option<String>,
}

/// Parses the text exit codes; lines that do not fit are ignored (sacct prints nothing else here).
pub fn parse_exit_codes(text: &str) -> Vec<ExitLine> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.trim().splitn(4, '|');
            let job_id = f.next()?.parse().ok()?;
            let submit = f.next()?;
            // `2026-11-22T05:20:24` in UTC (the query sets TZ=UTC), or epoch seconds.
            let submit = submit.parse::<i64>().ok().or_else(|| {
                chrono::NaiveDateTime::parse_from_str(submit, "%Y-%m-%dT%H:%M:%S")
                    .ok()
                    .map(|t| t.and_utc().timestamp())
            })?;
            let (code, signal) = f.next()?.split_once(':')?;
            Some(ExitLine {
                job_id,
                submit,
                code: code.parse().ok()?,
                signal: signal.parse().ok()?,
                dependency: f.next().and_then(dependency_in_submit_line),
            })
        })
        .collect()
}

/// The `--dependency` (`-d`) value of a submit line as sacct prints it (`sbatch --parsable
/// --dependency=afterok:12 job.sh`), when it is a dependency list Slurm would take. sacct joins
/// the arguments with spaces, so the search stops at `--wrap` (what follows is the job's command,
/// not options) and takes a value only when it parses, so an argument of the script that happens
/// to follow a `-d` is not taken for one. Slurm 22.05 keeps the submit line of the command line
/// only: a `#SBATCH --dependency` inside the script is not in it.
pub fn dependency_in_submit_line(line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    while let Some(word) = words.next() {
        let value = if word == "--wrap" || word.starts_with("--wrap=") {
            return None;
        } else if let Some(v) = word.strip_prefix("--dependency=") {
            v
        } else if word == "--dependency" || word == "-d" {
            words.next()?
        } else if let Some(v) = word.strip_prefix("-d").filter(|v| !v.is_empty()) {
            v
        } else {
            continue;
        };
        if jobsight_base::slurm_text::is_dependency_list(value) {
            return Some(value.to_string());
        }
    }
    None
}

/// The text output's line of `acct`, matched by job id and submit time.
pub fn line_of<'a>(acct: &Accounting, lines: &'a [ExitLine]) -> Option<&'a ExitLine> {
    let submit = acct.submit?.timestamp();
    lines
        .iter()
        .find(|l| l.job_id == acct.job_id && l.submit == submit)
}

/// The exit code and signal of `acct` from the text output, matched by job id and submit time.
pub fn exit_of(acct: &Accounting, lines: &[ExitLine]) -> Option<(i32, i32)> {
    line_of(acct, lines).map(|l| (l.code, l.signal))
}
