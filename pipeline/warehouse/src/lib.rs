//! The warehouse: where every stage's results live and how they are read. Hive-partitioned
//! Parquet, one table per folder, `day=YYYY-MM-DD` from the job's end time.
//!
//! [`catalog`] owns the tables: their names, Arrow schemas and typed rows, atomic writes of whole
//! parts, compaction and retention's deletions. [`query`] runs SQL over them with DataFusion: the
//! sessions, jobsight's SQL functions, the read-only guard, the result formats and, with the
//! cargo feature `ballista`, a Ballista cluster. [`serve`] is the read-only PostgreSQL endpoint
//! over those sessions (psql, Grafana, BI tools).
//!
//! Every stage depends on this crate and on `jobsight_base`, never on another stage; nothing
//! here knows a stage.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod catalog;
pub mod query;
pub mod serve;
