//! Workflows: runs of many dependent tasks (Pegasus executions, and later Slurm job arrays and
//! dependency chains), where one slow task delays everything after it.
//!
//! So far the stage imports Pegasus / Flow-Bench execution traces into the tables `workflows`
//! (one row per run) and `workflow_tasks` (one row per task, with its place in the DAG)
//! ([`pegasus`]), and scores tasks and labels runs, with an evaluation by run-level folds
//! ([`detect`]). What issue 21 asks beyond that (Slurm chains as workflows, findings in the rules
//! and emails, Gantt charts) is listed as not done in docs/workflows.md.

pub mod detect;
pub mod model;
pub mod pegasus;
pub mod slurm;
