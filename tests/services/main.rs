//! The tests against real services that need root: they install and start a real Slurm (with
//! slurmdbd), Prometheus with its node exporter and an SMTP server on this machine, one test at a
//! time ([`common::services::one_at_a_time`]). Ignored unless asked for (`--include-ignored`, as
//! `.ci/run` does).
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/web.rs"]
mod web_client;

mod canaries;
mod cgroup_v2;
mod exporters;
mod multi_node;
mod real_prometheus;
mod real_slurm;
mod running;
mod web;
