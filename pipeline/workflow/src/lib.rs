//! Workflows: runs of many dependent tasks (Pegasus executions, Slurm job arrays and dependency
//! chains), where one slow task delays everything after it.
//!
//! The stage imports Pegasus / Flow-Bench execution traces ([`pegasus`]) and rebuilds Slurm
//! arrays and `--dependency` chains from `jobs` ([`slurm`]) into the tables `workflows` (one row
//! per run) and `workflow_tasks` (one row per task, with its place in the DAG); scores tasks,
//! classifies tasks and runs, and evaluates both by run-level folds ([`detect`]); and keeps the
//! supervised models in a model file ([`model`]). The rules read the scores from the warehouse
//! (`classify::workflow`), the report pages draw the runs (docs/workflows.md).
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod detect;
pub mod model;
pub mod pegasus;
pub mod slurm;
