//! The pipeline's integration tests that need neither root nor a Slurm cluster, one binary (each
//! binary links DataFusion, so one link instead of eleven). Each module is one subject; what each
//! proves is in docs/testing.md. Run one subject with a filter: `cargo test --test pipeline rules::`.
#![allow(clippy::unwrap_used)]

#[path = "../common/features.rs"]
mod agreement;
#[path = "../common/mod.rs"]
mod common;
#[path = "../common/web.rs"]
mod web_client;

mod architecture;
mod cli_snapshots;
mod demo;
mod features;
mod import_ldms_store;
mod ingest_per_job;
mod ingest_real_data;
mod model;
mod notify_smtp;
mod real_suite;
mod rules;
mod running_dag;
mod serve_pg;
mod spool_claim;
mod web;
