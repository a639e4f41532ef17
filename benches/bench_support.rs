//! What the benchmarks share: where the repository is, and the Python environment with the peers
//! they compare against (included with `#[path]` by each benchmark).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The project's top directory (the one with `Cargo.lock`), found when the benchmark runs.
pub fn repo_dir() -> PathBuf {
    jobsight_base::test_support::workspace_dir()
}

/// A Python that can import `modules` (e.g. "duckdb, polars"): the virtual environment
/// JOBSIGHT_BENCH_VENV (default /var/tmp/jobsight-bench-venv), created and filled from
/// benches/requirements.txt if needed. `None` when that fails.
pub fn bench_python(modules: &str) -> Option<PathBuf> {
    let venv = PathBuf::from(
        std::env::var("JOBSIGHT_BENCH_VENV")
            .unwrap_or_else(|_| "/var/tmp/jobsight-bench-venv".to_string()),
    );
    let python = venv.join("bin/python");
    let ready = |p: &Path| {
        Command::new(p)
            .args(["-c", &format!("import {modules}")])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ready(&python) {
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success())
            && Command::new(venv.join("bin/pip"))
                .args(["install", "-q", "-r"])
                .arg(repo_dir().join("benches/requirements.txt"))
                .status()
                .is_ok_and(|s| s.success());
        if !made {
            return None;
        }
    }
    ready(&python).then_some(python)
}
