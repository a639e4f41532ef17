//! The running stage: what jobsight decides about the jobs that still run. It owns `[running]`
//! ([`settings`]), the snapshot of the running jobs as the last run judged them ([`snapshot`]),
//! a listed job as the snapshot holds it before judging ([`live`]),
//! the policy's memory in the `interventions` table ([`audit`]), and the decisions, pure, of
//! what to do about each condition that holds: warn the owner, warn again, cancel under the
//! site's policy, or record why the policy leaves a job alone ([`plan`]).
//!
//! Like every stage it depends only on base and the warehouse. Listing the jobs (`squeue`, the
//! ingest stage), judging them (the features and rules stages), sending the warnings (notify and
//! render) and `scancel` are the application's, which composes the stages for the running DAG.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod audit;
pub mod live;
pub mod plan;
pub mod settings;
pub mod snapshot;

pub use settings::{Options, Settings};
pub use snapshot::Snapshot;
