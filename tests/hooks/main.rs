//! The hook crate's integration tests, one binary: the `jobsight-epilog` process as Slurm runs it
//! ([`epilog_process`]) and under load ([`epilog_load`]).
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod epilog_load;
mod epilog_process;
