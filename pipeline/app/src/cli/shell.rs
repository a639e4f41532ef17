//! `jobsight sql` with no query: an interactive shell over the warehouse, as datafusion-cli and
//! psql open one. Lines are edited with arrow keys and kept in a history file
//! (`~/.jobsight_sql_history`, or `$JOBSIGHT_SQL_HISTORY`); a statement runs when a line ends
//! with `;`, so it may span lines; `\dt` lists the tables and `\d TABLE` a table's columns
//! (`SHOW TABLES` and `DESCRIBE TABLE` of the same read-only path), `\?` says this, `\q` or
//! Ctrl-D leaves, Ctrl-C drops the statement being typed. Each statement runs as `jobsight sql
//! "..."` would (the same checks, formats and engine), in a session opened for it, so a day the
//! scheduler writes while the shell is open is seen. An error is printed and the shell goes on.
//! Without a terminal (input from a pipe or a file) it reads the statements the same way,
//! without prompts.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;

use jobsight_warehouse::query::{self, Engine, SqlFormat};

/// What `\?` prints.
const HELP: &str = "\
Statements end with ; and may span lines. Read-only: SELECT, WITH ... SELECT, EXPLAIN,
SHOW TABLES, SHOW COLUMNS FROM t, DESCRIBE t and information_schema.
  \\dt          the tables (SHOW TABLES of the warehouse's own)
  \\d TABLE     a table's columns and types (DESCRIBE TABLE)
  \\?           this help
  \\q           quit (or Ctrl-D); Ctrl-C drops the statement being typed
";

/// Where `ops/install-epilog.sh` puts the documentation beside the binary it installs
/// (`PREFIX/bin/jobsight` → `PREFIX/share/doc/jobsight`), if it is there.
fn installed_docs() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let docs = exe.parent()?.parent()?.join("share/doc/jobsight");
    docs.join("tables.md").is_file().then_some(docs)
}

/// `\?`'s text: [`HELP`], then where each column's meaning is written on this machine.
fn help_text(docs: Option<&Path>) -> String {
    let tables = match docs {
        Some(dir) => format!("{}", dir.join("tables.md").display()),
        None => "docs/tables.md in jobsight's source (ops/install-epilog.sh installs it in \
                 PREFIX/share/doc/jobsight)"
            .to_string(),
    };
    format!(
        "{HELP}A table's columns and types: DESCRIBE t, or from the command line \
         jobsight sql \"DESCRIBE t\".\nWhat each column means: {tables}.\n"
    )
}

/// The query `\dt` runs: the warehouse's tables and views, without the catalogue's own.
const LIST_TABLES: &str = "SELECT table_schema, table_name, table_type FROM \
information_schema.tables WHERE table_schema NOT IN ('information_schema', 'pg_catalog') \
ORDER BY table_schema DESC, table_name";

/// Where the shell keeps its history.
fn history_file() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("JOBSIGHT_SQL_HISTORY") {
        return Some(PathBuf::from(path));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".jobsight_sql_history"))
}

/// What one line asks for, with the statement typed so far.
#[derive(Debug, PartialEq)]
enum Line {
    /// Leave the shell.
    Quit,
    /// Print the help.
    Help,
    /// Run this statement now.
    Run(String),
    /// Keep reading: the statement goes on.
    More,
}

/// Reads one line into `pending` (the statement typed so far) and says what to do.
fn interpret(line: &str, pending: &mut String) -> Line {
    let trimmed = line.trim();
    if pending.trim().is_empty() {
        match trimmed.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["\\q"] | ["quit"] | ["exit"] => return Line::Quit,
            ["\\?"] | ["help"] => return Line::Help,
            ["\\dt"] => return Line::Run(LIST_TABLES.into()),
            ["\\d", table] => return Line::Run(format!("DESCRIBE {table}")),
            [] => return Line::More,
            _ => {}
        }
    }
    if !pending.is_empty() {
        pending.push('\n');
    }
    pending.push_str(line);
    if trimmed.ends_with(';') {
        let statement = std::mem::take(pending);
        let statement = statement.trim().trim_end_matches(';').trim().to_string();
        if statement.is_empty() {
            return Line::More;
        }
        return Line::Run(statement);
    }
    Line::More
}

/// Runs the shell until `\q`, Ctrl-D or the end of the input.
pub(super) fn run(
    runtime: &tokio::runtime::Runtime,
    data: &Path,
    engine: &Engine,
    format: SqlFormat,
    stdout: &mut std::io::StdoutLock<'_>,
) -> anyhow::Result<()> {
    let interactive = std::io::stdin().is_terminal();
    let mut editor = DefaultEditor::new()?;
    let history = history_file();
    if interactive {
        if let Some(path) = &history {
            // No history yet is the normal first run.
            let _ = editor.load_history(path);
        }
        writeln!(
            stdout,
            "jobsight sql over {} (read-only). \\? for help, \\q to quit.",
            data.display()
        )?;
    }
    let mut pending = String::new();
    loop {
        let prompt = match (interactive, pending.is_empty()) {
            (false, _) => "",
            (true, true) => "jobsight> ",
            (true, false) => "       -> ",
        };
        // What the last statement wrote goes out before the editor draws its prompt.
        stdout.flush()?;
        let line = match editor.readline(prompt) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                pending.clear();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        match interpret(&line, &mut pending) {
            Line::Quit => break,
            Line::More => continue,
            Line::Help => write!(stdout, "{}", help_text(installed_docs().as_deref()))?,
            Line::Run(statement) => {
                if interactive {
                    let _ = editor.add_history_entry(statement.as_str());
                }
                let result = runtime.block_on(query::write_results(
                    data, engine, &statement, format, stdout,
                ));
                if let Err(e) = result {
                    // An error is the statement's, not the shell's: say it and go on.
                    stdout.flush()?;
                    eprintln!("error: {e}");
                }
            }
        }
    }
    if !pending.trim().is_empty() {
        eprintln!("not run (no closing ;): {}", pending.trim());
    }
    if interactive
        && let Some(path) = &history
        && let Err(e) = editor.save_history(path)
    {
        eprintln!("cannot keep the history in {}: {e}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `\?` names a path that exists where jobsight is installed, and says how to ask the
    /// warehouse itself.
    #[test]
    fn help_points_at_docs_that_exist() {
        let dir = tempfile::tempdir().unwrap();
        let docs = dir.path().join("share/doc/jobsight");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join("tables.md"), "# tables").unwrap();
        let text = help_text(Some(&docs));
        assert!(
            text.contains(&format!("{}/tables.md", docs.display())),
            "{text}"
        );
        assert!(text.contains("jobsight sql \"DESCRIBE t\""), "{text}");
        assert!(help_text(None).contains("PREFIX/share/doc/jobsight"));
    }

    /// Statements end at a line's `;` and may span lines; the backslash commands stand alone.
    #[test]
    fn lines_make_statements() {
        let mut pending = String::new();
        assert_eq!(
            interpret("SELECT 1;", &mut pending),
            Line::Run("SELECT 1".into())
        );
        assert_eq!(interpret("SELECT count(*)", &mut pending), Line::More);
        assert_eq!(
            interpret("  FROM jobs ;  ", &mut pending),
            Line::Run("SELECT count(*)\n  FROM jobs".into())
        );
        assert!(pending.is_empty());
        assert_eq!(
            interpret("\\dt", &mut pending),
            Line::Run(LIST_TABLES.into())
        );
        assert_eq!(
            interpret("\\d jobs", &mut pending),
            Line::Run("DESCRIBE jobs".into())
        );
        assert_eq!(interpret("\\?", &mut pending), Line::Help);
        assert_eq!(interpret(";", &mut pending), Line::More);
        assert_eq!(interpret("", &mut pending), Line::More);
        assert_eq!(interpret("\\q", &mut pending), Line::Quit);
        // Inside a statement, a backslash line is part of it.
        assert_eq!(interpret("SELECT", &mut pending), Line::More);
        assert_eq!(interpret("\\q", &mut pending), Line::More);
    }
}
