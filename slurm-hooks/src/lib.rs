//! The boundary between Slurm and jobsight: what one finished job looks like when it enters the
//! pipeline, and the code that puts it there.
//!
//! Slurm runs `jobsight-epilog` (see `src/bin/`) as `EpilogSlurmctld` or `Epilog` when a job ends.
//! The hook reads the job's environment ([`hook_env`]), turns it into a [`record::SpoolRecord`]
//! (expanding host lists with [`hostlist`]) and writes it atomically into a maildir-like spool
//! directory ([`spool_dir`]), opening and creating files only through [`safe_fs`]. The pipeline (crate `jobsight`) claims records from the same spool
//! and parses them with the same types, so the format has exactly one definition.
//!
//! The node's other jobsight program, `jobsight-exporter`, serves each running job's own cgroup
//! figures to Prometheus: [`cgroup`] finds and reads the jobs' cgroups, [`exposition`] writes
//! them in Prometheus' text format under Princeton's cgroup exporter's names, and [`http`] answers
//! the scrapes on a bounded `std::net` server, a thread per connection. [`admission`] counts a
//! server's connections per address and logs refusals once per interval, for the exporter and
//! for the pipeline's servers.
//!
//! Everything here is synchronous and allocation-light, on std alone: the hook runs once per job
//! on every cluster node and must never slow a job down or fail it, and opens no socket; only
//! the exporter binary listens, through [`http`].
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod admission;
pub mod cgroup;
pub mod exposition;
pub mod hook_env;
pub mod hostlist;
pub mod http;
pub mod record;
pub mod safe_fs;
pub mod spool_dir;
pub mod text;

pub use record::{Hook, SpoolRecord};
pub use text::Text;
