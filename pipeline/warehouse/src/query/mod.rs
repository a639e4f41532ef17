//! `jobsight sql`: DataFusion SQL over every table of the catalogue, read-only.
//!
//! Each table of [`crate::catalog::Table`] is registered under its name, with its committed schema
//! and the hive partition column `day` (`WHERE day = '2026-11-22'` prunes whole directories). A
//! table with no files yet is registered empty, so a query over it returns no rows rather than
//! "table not found". Results render as an aligned table, CSV or JSON lines.
//!
//! `jobs` is a view over the stored table (`stored.jobs`) that adds what admins' first queries
//! need as plain numbers ([`JOBS_DERIVED`]): `elapsed_s`, `wait_s`, `core_hours`, `node_hours`,
//! `gpu_hours`, `req_mem_gb`, and seff's efficiencies from Slurm accounting, `acct_cpu_eff` and
//! `acct_mem_eff`, so `SELECT sum(core_hours) FROM jobs` works where `cpus * ("end" - start)`
//! cannot (an integer times a duration).
//!
//! The session is tuned for the admins' queries over a year of day parts (docs/benchmarks.md):
//! footers read with a small hint, strings read as views, computed GROUP BY keys moved under
//! the aggregation (`group_keys.rs`), so a key over `day` is one value per file, and local files
//! listed and read on the calling thread rather than through tokio's blocking pool
//! (`local_files.rs`).
//!
//! Admins run SQL, and the warehouse must not change under them: only queries run. A statement
//! is checked twice, as text (one statement, a query or an `EXPLAIN` of one) and as a plan
//! (DataFusion's `SQLOptions` refuse DDL, DML, `COPY` and `SET`), so `INSERT`, `COPY ... TO`,
//! `CREATE [EXTERNAL] TABLE`, `SELECT ... INTO`, `DROP` and `SET` are refused with one clear error.
//! Results stream to the output batch by batch (CSV and JSON hold one batch at a time; the aligned
//! table holds at most [`TABLE_ROWS`] rows and says when there are more), and the session's
//! memory pool is bounded ([`MEMORY_LIMIT`]): sorts and joins beyond it spill to disk or fail with
//! an error instead of taking the machine's memory.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Float64Type, Int64Type, Schema, TimeUnit};
use datafusion::datasource::MemTable;
use datafusion::error::DataFusionError;
use datafusion::execution::context::SQLOptions;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::{FunctionRegistry, SessionState, SessionStateBuilder};
use datafusion::optimizer::OptimizerRule;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use datafusion::sql::parser::Statement as DfStatement;
use datafusion::sql::sqlparser::ast::Statement as SqlStatement;

use crate::catalog::{PARTITION_COLUMN, Table};

#[cfg(feature = "ballista")]
pub mod ballista;
pub mod bounded;
pub mod budget;
pub mod depth;
pub mod expansion;
mod group_keys;
pub mod heap;
mod local_files;
#[cfg(test)]
mod nesting;
mod repeated_keys;
mod results;
pub mod series_functions;

pub use results::{SqlFormat, render, write_results};

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("cannot register table {table} from {path}: {source}")]
    Register {
        table: &'static str,
        path: String,
        source: DataFusionError,
    },
    #[error("{}", in_words(.0))]
    Query(DataFusionError),
    #[error(
        "jobsight sql is read-only: {0} is refused (only SELECT, WITH ... SELECT, EXPLAIN of one, \
         SHOW TABLES, SHOW COLUMNS and DESCRIBE are run; INSERT, UPDATE, DELETE, COPY, CREATE, \
         DROP and SET change or leave the warehouse)"
    )]
    ReadOnly(String),
    #[error("the statement is too complex to plan: {0}")]
    TooComplex(String),
    #[error("cannot write the result: {0}")]
    Output(std::io::Error),
    #[error("cannot render the result: {0}")]
    Render(String),
    #[error("{0}")]
    Engine(String),
}

/// A query's error as a sentence: the parser's complaint without Rust's debug quoting, and an
/// unknown table with the closest table's name.
fn in_words(e: &DataFusionError) -> String {
    let text = e.to_string();
    if let Some(rest) = text.split_once("ParserError(\"").map(|(_, r)| r) {
        let complaint = rest.trim_end_matches(['"', ')']).replace("\\\"", "\"");
        return format!("the statement could not be read: {complaint}");
    }
    if let Some(name) = text
        .split_once("table '")
        .and_then(|(_, r)| r.split_once("' not found"))
        .map(|(name, _)| name.rsplit('.').next().unwrap_or(name))
    {
        let tables: Vec<&str> = Table::ALL.iter().map(|t| t.name()).collect();
        let closest = tables
            .iter()
            .min_by_key(|t| edit_distance(name, t))
            .filter(|t| edit_distance(name, t) <= 3);
        let hint = closest.map_or(String::new(), |t| format!(" Did you mean {t}?"));
        return format!(
            "there is no table {name}.{hint} The tables: {} (`jobsight sql \"DESCRIBE jobs\"` lists a table's columns).",
            tables.join(", ")
        );
    }
    text
}

/// The number of single-character edits between two names.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

/// Where an admin's queries run: in this process, or on the Ballista cluster of a scheduler
/// (`[engine] ballista = "df://host:50050"`, cargo feature `ballista`; [`ballista`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Engine {
    #[default]
    Local,
    Ballista(String),
}

impl Engine {
    /// A session over the warehouse at `data` on this engine.
    pub async fn session(&self, data: &Path) -> Result<SessionContext, QueryError> {
        match self {
            Engine::Local => session(data).await,
            #[cfg(feature = "ballista")]
            Engine::Ballista(url) => ballista::remote_session(data, url).await,
            #[cfg(not(feature = "ballista"))]
            Engine::Ballista(url) => Err(QueryError::Engine(format!(
                "the configuration sends queries to the Ballista scheduler at {url}, but this \
                 jobsight was built without Ballista (cargo build --features ballista)"
            ))),
        }
    }
}

/// Stack of each thread of [`engine_runtime`].
const ENGINE_THREAD_STACK: usize = 32 * 1024 * 1024;

/// The runtime for work on an [`Engine`] that may be Ballista, and for the Ballista scheduler and
/// executors themselves: multi-threaded (the client's gRPC calls run beside the query's stream),
/// with 32 MiB stacks. Plans are planned, encoded and decoded recursively; the features plan's
/// first imbalance statement (SQL joins of bins) overflowed the 2 MiB default stack of a tokio
/// worker, and the scheduler died of it ("transport error" on the client).
pub fn engine_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(ENGINE_THREAD_STACK)
        .build()
}

/// Runs `sql` in an open session and collects its batches (stages that ask several questions of
/// one session: the report pages, the jobs' history).
pub async fn collect(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>, QueryError> {
    ctx.sql(sql)
        .await
        .map_err(QueryError::Query)?
        .collect()
        .await
        .map_err(QueryError::Query)
}

/// A string as an SQL literal: quotes doubled; nothing else is needed inside single quotes. For
/// values that come from the warehouse or a user (job ids, user names) in a generated query.
pub fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// A batch's columns by name, cast once to plain types.
#[derive(Debug)]
pub struct Columns {
    columns: BTreeMap<String, datafusion::arrow::array::ArrayRef>,
}

impl Columns {
    pub fn of(batch: &RecordBatch) -> Result<Columns, QueryError> {
        let mut columns = BTreeMap::new();
        for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
            let target = match field.data_type() {
                DataType::Boolean => DataType::Boolean,
                DataType::Timestamp(..) => DataType::Timestamp(TimeUnit::Microsecond, None),
                DataType::Float32 | DataType::Float64 => DataType::Float64,
                t if t.is_integer() => DataType::Int64,
                _ => DataType::Utf8,
            };
            let plain = cast(array, &target)
                .map_err(|e| QueryError::Render(format!("column {}: {e}", field.name())))?;
            // A timestamp column goes on as microseconds.
            let plain = if matches!(target, DataType::Timestamp(..)) {
                cast(&plain, &DataType::Int64)
                    .map_err(|e| QueryError::Render(format!("column {}: {e}", field.name())))?
            } else {
                plain
            };
            columns.insert(field.name().clone(), plain);
        }
        Ok(Columns { columns })
    }

    pub fn text(&self, name: &str, i: usize) -> Option<String> {
        let a = self.columns.get(name)?;
        (a.data_type() == &DataType::Utf8 && a.is_valid(i))
            .then(|| a.as_string::<i32>().value(i).to_string())
    }

    pub fn float(&self, name: &str, i: usize) -> Option<f64> {
        let a = self.columns.get(name)?;
        (a.data_type() == &DataType::Float64 && a.is_valid(i))
            .then(|| a.as_primitive::<Float64Type>().value(i))
            .filter(|v| v.is_finite())
    }

    pub fn int(&self, name: &str, i: usize) -> Option<i64> {
        let a = self.columns.get(name)?;
        (a.data_type() == &DataType::Int64 && a.is_valid(i))
            .then(|| a.as_primitive::<Int64Type>().value(i))
    }

    /// A run number (`restart_count`, selected as BIGINT): a whole number from 0 to `u32::MAX`;
    /// `None` when null, absent (a part written before runs were recorded) or out of range.
    pub fn run(&self, name: &str, i: usize) -> Option<u32> {
        self.int(name, i).and_then(|n| u32::try_from(n).ok())
    }

    pub fn boolean(&self, name: &str, i: usize) -> Option<bool> {
        let a = self.columns.get(name)?;
        (a.data_type() == &DataType::Boolean && a.is_valid(i)).then(|| a.as_boolean().value(i))
    }

    pub fn time(&self, name: &str, i: usize) -> Option<DateTime<Utc>> {
        DateTime::from_timestamp_micros(self.int(name, i)?)
    }
}

/// The rows of the catalog are read back through the same lenient readers.
impl crate::catalog::rows::Cells for Columns {
    fn text(&self, name: &str, i: usize) -> Option<String> {
        Columns::text(self, name, i)
    }
    fn float(&self, name: &str, i: usize) -> Option<f64> {
        Columns::float(self, name, i)
    }
    fn int(&self, name: &str, i: usize) -> Option<i64> {
        Columns::int(self, name, i)
    }
    fn boolean(&self, name: &str, i: usize) -> Option<bool> {
        Columns::boolean(self, name, i)
    }
    fn time(&self, name: &str, i: usize) -> Option<DateTime<Utc>> {
        Columns::time(self, name, i)
    }
}

/// Whether a directory holds at least one Parquet file anywhere below it (symlinks not followed,
/// so a link loop cannot recurse forever).
fn has_parquet(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| match e.file_type() {
        Ok(t) if t.is_dir() => has_parquet(&e.path()),
        Ok(t) if t.is_file() => e.path().extension().is_some_and(|x| x == "parquet"),
        _ => false,
    })
}

/// Rows the aligned table shows; CSV and JSON have no limit.
pub const TABLE_ROWS: usize = 10_000;
/// The memory DataFusion's operators that track memory (sorts, joins, aggregations) may hold in
/// one session; beyond it they spill to disk or fail with an error.
pub const MEMORY_LIMIT: usize = 4 << 30;

/// The columns the `jobs` view adds to the stored table, as (name, SQL over the stored columns,
/// meaning). Times are stored as microseconds since the epoch, so differences are exact integers.
pub const JOBS_DERIVED: [(&str, &str, &str); 8] = [
    (
        "elapsed_s",
        "(CAST(\"end\" AS BIGINT) - CAST(start AS BIGINT)) / 1000000",
        "seconds from start to end (null when the start is unknown)",
    ),
    (
        "wait_s",
        "(CAST(start AS BIGINT) - CAST(submit AS BIGINT)) / 1000000",
        "seconds from submission to start (queue wait)",
    ),
    (
        "core_hours",
        "CAST(cpus AS DOUBLE) * CAST(CAST(\"end\" AS BIGINT) - CAST(start AS BIGINT) AS DOUBLE) / 3.6e9",
        "allocated CPUs × elapsed hours",
    ),
    (
        "node_hours",
        "CAST(num_nodes AS DOUBLE) * CAST(CAST(\"end\" AS BIGINT) - CAST(start AS BIGINT) AS DOUBLE) / 3.6e9",
        "allocated nodes × elapsed hours",
    ),
    (
        "gpu_hours",
        "CAST(gpus AS DOUBLE) * CAST(CAST(\"end\" AS BIGINT) - CAST(start AS BIGINT) AS DOUBLE) / 3.6e9",
        "allocated GPUs × elapsed hours",
    ),
    (
        "req_mem_gb",
        "CAST(req_mem_mb AS DOUBLE) / 1024",
        "requested memory in GiB (the job's total)",
    ),
    (
        "acct_cpu_eff",
        "CASE WHEN cpus > 0 AND \"end\" > start THEN acct_cpu_total_s / (CAST(cpus AS DOUBLE) * CAST(CAST(\"end\" AS BIGINT) - CAST(start AS BIGINT) AS DOUBLE) / 1e6) END",
        "CPU efficiency from Slurm accounting, seff's: CPU time of all steps / (allocated CPUs × elapsed seconds)",
    ),
    (
        "acct_mem_eff",
        "CASE WHEN req_mem_mb > 0 THEN acct_mem_peak_mb / CAST(req_mem_mb AS DOUBLE) END",
        "memory efficiency from Slurm accounting, seff's: the largest step's memory peak / requested memory",
    ),
];

/// The table catalogue (`docs/tables.md`), generated from the catalogue's schemas and the `jobs`
/// view's derived columns, so that no column is written twice; a test keeps the file equal to it.
pub fn catalogue_markdown() -> String {
    let mut out = String::from(
        "# Tables\n\n\
         Generated from the code (`query::catalogue_markdown`); a test fails when this file differs, \
         and `JOBSIGHT_UPDATE_SCHEMAS=1 cargo test --workspace --lib schema` rewrites it. Every table \
         is hive-partitioned Parquet under `<data>/<table>/day=YYYY-MM-DD/`, and `day` \
         ('YYYY-MM-DD') is a column of every table. Example queries: [queries.md](queries.md).\n",
    );
    for table in Table::ALL {
        out += &format!(
            "\n## `{}`\n\n{}\n\n`day`: {}.\n\n| column | type | may be null |\n|---|---|---|\n",
            table.name(),
            table.description(),
            table.partition_meaning()
        );
        for field in table.schema().fields() {
            out += &format!(
                "| `{}` | {} | {} |\n",
                field.name(),
                field.data_type(),
                if field.is_nullable() { "yes" } else { "no" }
            );
        }
        if table == Table::Jobs {
            out += &format!(
                "\n`jobs` is a view over the stored table (`{STORED_SCHEMA}.jobs`) that adds:\n\n\
                 | column | what | from |\n|---|---|---|\n"
            );
            for (name, sql, meaning) in JOBS_DERIVED {
                out += &format!("| `{name}` | {meaning} | `{sql}` |\n");
            }
        }
    }
    out += "\n## Functions\n\n\
            The features' per-series statistics, as aggregate functions of every session \
            (`query/series_functions/`): the same definitions as the `features` table's \
            columns, on any selection. The `features` step also trims each series to the job's \
            run; here a `WHERE` on `ts` does that. For example:\n\n\
            ```sql\n\
            SELECT job_id, node, js_p95(value) AS p95, js_slope_per_h(ts, value) AS per_hour\n\
            FROM telemetry WHERE metric = 'mem_used_bytes' AND day = '2026-11-20'\n\
            GROUP BY job_id, node\n\
            ```\n\n\
            | function | what |\n|---|---|\n";
    for figure in series_functions::FIGURES {
        let args = if figure.timed { "ts, value" } else { "value" };
        out += &format!("| `{}({args})` | {} |\n", figure.name, figure.meaning);
    }
    out += &format!(
        "| `{}(ts, value)` | every figure above at once, as a struct (`n`, `n_nonfinite`, `min`, \
         `max`, `mean`, then the figures above without `js_`, and the times `rise_from`, \
         `rise_to`, `cliff_at`), as the `features` table has them |\n",
        series_functions::DESCRIBE
    );
    out += &format!(
        "| `{}(ts, value, seconds)` | the means of the finite samples in bins of `seconds` \
         (a constant; bins aligned to the epoch, as `date_bin`), as a struct of three lists in \
         time order, `start_us` (each bin's start, microseconds since the epoch), `mean` and \
         `n` (the bin's finite samples): what tacc_stats' node imbalance compares across a job's nodes |\n",
        series_functions::BIN_MEANS
    );
    out
}

/// `schema` with every `Utf8` column read as `Utf8View`.
fn with_string_views(schema: &Schema) -> Arc<Schema> {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Utf8 => f.as_ref().clone().with_data_type(DataType::Utf8View),
            _ => f.as_ref().clone(),
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// `base` as jobsight plans queries everywhere (a command's session, `serve --pg`, a Ballista
/// scheduler): DataFusion's rule for repeated keys replaced by one that does not drop ORDER BY
/// keys it wrongly believes decided (repeated_keys.rs), in the same place among the rules; the
/// rule that keeps grouping keys below an aggregate (group_keys.rs) last; and the features'
/// SQL functions ([`series_functions`]); the functions that could make results far larger than
/// their arguments, bounded ([`bounded`]).
pub fn jobsight_state(base: SessionState) -> Result<SessionState, QueryError> {
    let rules: Vec<Arc<dyn OptimizerRule + Send + Sync>> = (base.optimizers().iter())
        .map(|rule| match rule.name() {
            repeated_keys::REPLACED => Arc::new(repeated_keys::RepeatedKeys) as _,
            _ => Arc::clone(rule),
        })
        .chain([Arc::new(group_keys::GroupKeysBelowAggregate) as _])
        .collect();
    let mut state = SessionStateBuilder::new_from_existing(base)
        .with_optimizer_rules(rules)
        .build();
    for function in series_functions::all() {
        state
            .register_udaf(Arc::new(function))
            .map_err(QueryError::Query)?;
    }
    bounded::register(&mut state).map_err(QueryError::Query)?;
    Ok(state)
}

/// The schema that holds the stored tables a view of the same name extends (`stored.jobs`).
pub const STORED_SCHEMA: &str = "stored";

/// A DataFusion session with every catalogue table of the warehouse at `data` registered, for
/// one command: the tables are the files there now.
pub async fn session(data: &Path) -> Result<SessionContext, QueryError> {
    build_session(data, Lifetime::OneCommand).await
}

/// A session for a server that stays up while the scheduler writes (`jobsight serve --pg`):
/// every table is listed again at each query, so new days, new parts and tables that had no
/// files when the server started are seen without a restart; `information_schema` is on for
/// the clients that browse it.
pub async fn live_session(data: &Path) -> Result<SessionContext, QueryError> {
    build_session(data, Lifetime::Server).await
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lifetime {
    OneCommand,
    Server,
}

async fn build_session(data: &Path, lifetime: Lifetime) -> Result<SessionContext, QueryError> {
    let live = lifetime == Lifetime::Server;
    let mut runtime = RuntimeEnvBuilder::new().with_memory_limit(MEMORY_LIMIT, 1.0);
    if live {
        // DataFusion keeps a table's file list forever by default (no time-to-live): a server
        // would never see the day the scheduler writes after it started. Listing one table's
        // folder costs a directory walk, which a query over Parquet does not notice.
        runtime = runtime.with_object_list_cache_limit(0);
    }
    let runtime = runtime.build_arc().map_err(QueryError::Query)?;
    // Local files read on the calling thread instead of tokio's blocking pool (local_files.rs).
    let file_url = url::Url::parse("file://")
        .map_err(|e| QueryError::Query(DataFusionError::Internal(e.to_string())))?;
    runtime.register_object_store(&file_url, Arc::new(local_files::LocalFiles::default()));
    let ctx = SessionContext::new_with_state(jobsight_state(
        SessionStateBuilder::new()
            .with_default_features()
            .with_config(session_config(true)?)
            .with_runtime_env(runtime)
            .build(),
    )?);
    let tables = if live {
        Tables::Listed
    } else {
        Tables::EmptyWhenNoFiles
    };
    register_tables(&ctx, data, tables).await?;
    Ok(ctx)
}

/// The session options of every jobsight session. `information_schema` (and with it `SHOW
/// TABLES`, `SHOW COLUMNS`) is on in this process's sessions; a Ballista session has it off, as
/// its executors cannot scan it, and [`frame`] plans catalogue statements locally.
fn session_config(information_schema: bool) -> Result<SessionConfig, QueryError> {
    // PostgreSQL's dialect: what psql, Grafana and admins write, and the generic dialect of
    // sqlparser 0.62 refuses a column named `cluster` after a comma (`SELECT job_id, cluster`).
    // DataFusion's own options can be tuned from the environment (`DATAFUSION_EXECUTION_TARGET_PARTITIONS=4`
    // for `datafusion.execution.target_partitions`, docs/sql.md); the three below are jobsight's.
    Ok(SessionConfig::from_env()
        .map_err(QueryError::Query)?
        .set_str("datafusion.sql_parser.dialect", "PostgreSQL")
        // DataFusion reads the last 512 KiB of a Parquet file to find its footer: a whole day's
        // part of most tables (a 13,700-job `jobs` part is 560 KB, its footer 10 KB), read
        // again for its columns. 64 KiB holds the footer of every table here in one read
        // (a larger one costs a second read): a scan of a year of `jobs` 0.126 -> 0.100 s.
        .set_str("datafusion.execution.parquet.metadata_size_hint", "65536")
        .with_information_schema(information_schema))
}

/// Which of the warehouse's tables a session has, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tables {
    /// Every table; one without files as an empty table (a command's session: the files there now).
    EmptyWhenNoFiles,
    /// Every table as its folder, files or not: a server's session, which lists the folders
    /// again at each query so that the first day written shows up; and a Ballista session,
    /// which cannot send an in-memory table to its executors.
    Listed,
}

/// Registers the warehouse's tables at `data` in `ctx`: each table's folder of hive-partitioned
/// Parquet, `jobs` under [`STORED_SCHEMA`] with the view that extends it.
async fn register_tables(
    ctx: &SessionContext,
    data: &Path,
    tables: Tables,
) -> Result<(), QueryError> {
    // Strings are read as views (Utf8View), as DataFusion does by default when it infers a
    // schema: no copy of each string out of the Parquet page, 7-16 % off the admins' queries
    // over a year of `jobs` (docs/benchmarks.md); `day` too, whose 10 characters fit in the
    // view itself. `Columns` casts them back to plain strings for the stages.
    let day_type = DataType::Utf8View;
    let catalog = ctx
        .catalog("datafusion")
        .ok_or_else(|| QueryError::Query(DataFusionError::Internal("no default catalog".into())))?;
    catalog
        .register_schema(
            STORED_SCHEMA,
            Arc::new(datafusion::catalog::MemorySchemaProvider::new()),
        )
        .map_err(QueryError::Query)?;
    for table in Table::ALL {
        let dir = table.dir(data);
        let schema = with_string_views(&table.schema());
        // `jobs` is stored under `stored.jobs` and shown through a view that adds numbers.
        let name = if table == Table::Jobs {
            format!("{STORED_SCHEMA}.{}", table.name())
        } else {
            table.name().to_string()
        };
        let files = has_parquet(&dir);
        if tables == Tables::Listed || files {
            let path = format!("{}/", dir.display());
            let options = ParquetReadOptions::default()
                .schema(&schema)
                .table_partition_cols(vec![(PARTITION_COLUMN.to_string(), day_type.clone())]);
            ctx.register_parquet(name.as_str(), &path, options)
                .await
                .map_err(|source| QueryError::Register {
                    table: table.name(),
                    path,
                    source,
                })?;
        } else {
            let mut fields: Vec<Field> =
                schema.fields().iter().map(|f| f.as_ref().clone()).collect();
            fields.push(Field::new(PARTITION_COLUMN, day_type.clone(), false));
            let empty = MemTable::try_new(Arc::new(Schema::new(fields)), vec![vec![]]).map_err(
                |source| QueryError::Register {
                    table: table.name(),
                    path: dir.display().to_string(),
                    source,
                },
            )?;
            ctx.register_table(name.as_str(), Arc::new(empty))
                .map_err(|source| QueryError::Register {
                    table: table.name(),
                    path: dir.display().to_string(),
                    source,
                })?;
        }
    }
    let derived: Vec<String> = JOBS_DERIVED
        .iter()
        .map(|(name, sql, _)| format!("{sql} AS {name}"))
        .collect();
    let view = format!(
        "CREATE VIEW jobs AS SELECT *, {} FROM {STORED_SCHEMA}.jobs",
        derived.join(", ")
    );
    ctx.sql(&view)
        .await
        .map_err(|source| QueryError::Register {
            table: "jobs",
            path: "(the view over stored.jobs)".into(),
            source,
        })?;
    Ok(())
}

/// The writing form a query's body, its set operations or its `WITH` clauses hide, if any:
/// `WITH a AS (...) INSERT ...`, a data-modifying CTE, `SELECT ... INTO`. DataFusion plans none of
/// them today; the text check refuses them anyway so that a future version that does changes
/// nothing here.
fn writes_in(query: &datafusion::sql::sqlparser::ast::Query) -> Option<&'static str> {
    use datafusion::sql::sqlparser::ast::SetExpr;
    fn body(expr: &SetExpr) -> Option<&'static str> {
        match expr {
            SetExpr::Insert(_) => Some("INSERT"),
            SetExpr::Update(_) => Some("UPDATE"),
            SetExpr::Delete(_) => Some("DELETE"),
            SetExpr::Merge(_) => Some("MERGE"),
            SetExpr::Select(select) if select.into.is_some() => Some("SELECT ... INTO"),
            SetExpr::Query(query) => writes_in(query),
            SetExpr::SetOperation { left, right, .. } => body(left).or_else(|| body(right)),
            _ => None,
        }
    }
    let in_ctes = query
        .with
        .as_ref()
        .and_then(|with| with.cte_tables.iter().find_map(|cte| writes_in(&cte.query)));
    in_ctes.or_else(|| body(&query.body))
}

/// Refuses anything but one query (see the module's description): the check on the text, before
/// DataFusion plans it. `Ok(true)` when the statement asks about the catalogue ([`is_catalogue`]).
pub fn check_read_only(sql: &str) -> Result<bool, QueryError> {
    fn is_query(statement: &DfStatement) -> Result<(), String> {
        match statement {
            DfStatement::Statement(s) => match refusal(s) {
                None => Ok(()),
                Some(form) => Err(form),
            },
            DfStatement::Explain(explain) => is_query(&explain.statement),
            DfStatement::CreateExternalTable(_) => Err("CREATE EXTERNAL TABLE".into()),
            DfStatement::CopyTo(_) => Err("COPY".into()),
            other => Err(first_words(&other.to_string())),
        }
    }
    let statements = budget::parse(sql)?;
    match statements.len() {
        0 => Err(QueryError::ReadOnly("an empty statement".into())),
        1 => {
            is_query(&statements[0]).map_err(QueryError::ReadOnly)?;
            let statement = match &statements[0] {
                DfStatement::Explain(explain) => &*explain.statement,
                other => other,
            };
            match statement {
                DfStatement::Statement(s) => match depth::too_complex(s) {
                    Some(why) => Err(QueryError::TooComplex(why)),
                    None => Ok(is_catalogue(s)),
                },
                _ => Ok(false),
            }
        }
        n => Err(QueryError::ReadOnly(format!("{n} statements at once"))),
    }
}

/// Why one parsed statement is not a read-only query, if it is not: the form refused (`DROP
/// TABLE`, `INSERT`, `SELECT ... INTO`), for the error message. Queries, `EXPLAIN` of them and
/// the catalogue's statements ([`is_catalogue`]) pass. Shared by `jobsight sql` and the
/// PostgreSQL endpoint, which parses statements itself.
pub fn refusal(statement: &SqlStatement) -> Option<String> {
    match statement {
        SqlStatement::Query(query) => writes_in(query).map(String::from),
        SqlStatement::Explain { statement, .. } => refusal(statement),
        SqlStatement::ShowTables { .. }
        | SqlStatement::ShowColumns { .. }
        | SqlStatement::ExplainTable { .. } => None,
        other => Some(first_words(&other.to_string())),
    }
}

/// Whether a statement asks about the warehouse's tables rather than their rows: `SHOW TABLES`,
/// `SHOW COLUMNS FROM t`, `DESCRIBE t`, or a query that reads `information_schema`. They read
/// nothing but the catalogue, which a Ballista cluster's executors do not have, so they are
/// planned in this process whatever the engine.
pub fn is_catalogue(statement: &SqlStatement) -> bool {
    use datafusion::sql::sqlparser::ast::visit_relations;
    use std::ops::ControlFlow;
    match statement {
        SqlStatement::ShowTables { .. }
        | SqlStatement::ShowColumns { .. }
        | SqlStatement::ExplainTable { .. } => true,
        other => visit_relations(other, |name| {
            let schema = name.0.len() >= 2 && {
                let part = name.0[name.0.len() - 2].to_string();
                part.trim_matches('"')
                    .eq_ignore_ascii_case("information_schema")
            };
            if schema {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .is_break(),
    }
}

/// A statement's first two words (`DROP TABLE`, `CREATE VIEW`) name what it does.
fn first_words(text: &str) -> String {
    text.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The plan-level guard: no DDL, no DML (which includes `COPY`), no `SET`.
pub fn read_only() -> SQLOptions {
    SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false)
}

/// Plans one read-only SQL statement over the warehouse.
async fn frame(
    data: &Path,
    engine: &Engine,
    sql: &str,
) -> Result<datafusion::dataframe::DataFrame, QueryError> {
    let catalogue = check_read_only(sql)?;
    let ctx = if catalogue {
        session(data).await?
    } else {
        engine.session(data).await?
    };
    ctx.sql_with_options(sql, read_only())
        .await
        .map_err(|e| match e {
            // The plan check's refusal, should the text check ever miss a form.
            DataFusionError::Plan(m) if m.contains("not supported") => QueryError::ReadOnly(m),
            e => QueryError::Query(e),
        })
}

/// Runs one read-only SQL statement over the warehouse and collects its result: for the
/// pipeline's own small queries. What an admin types goes through [`write_results`].
pub async fn run(data: &Path, sql: &str) -> Result<Vec<RecordBatch>, QueryError> {
    run_on(&Engine::Local, data, sql).await
}

/// [`run`] on `engine`: for the work that grows with history (`jobsight summary` over a year).
pub async fn run_on(
    engine: &Engine,
    data: &Path,
    sql: &str,
) -> Result<Vec<RecordBatch>, QueryError> {
    frame(data, engine, sql)
        .await?
        .collect()
        .await
        .map_err(QueryError::Query)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The admins' two commonest mistakes read as sentences: a statement the parser cannot read,
    /// a misspelt table (with the table meant).
    #[test]
    fn errors_read_as_sentences() {
        let parse = DataFusionError::SQL(
            Box::new(
                datafusion::sql::sqlparser::parser::ParserError::ParserError(
                    "Expected: an expression, found: FROM at Line: 1, Column: 8".into(),
                ),
            ),
            None,
        );
        assert_eq!(
            QueryError::Query(parse).to_string(),
            "the statement could not be read: Expected: an expression, found: FROM at Line: 1, Column: 8"
        );
        let table = DataFusionError::Plan("table 'datafusion.public.jobz' not found".into());
        let said = QueryError::Query(table).to_string();
        assert!(
            said.starts_with("there is no table jobz. Did you mean jobs?"),
            "{said}"
        );
        assert_eq!(edit_distance("findigns", "findings"), 2);
    }
    use crate::catalog::{self, rows::JobRow};
    use proptest::prelude::*;

    /// A row written as a batch and read back by its columns' names is the same row; a part
    /// written before a column existed reads it as `None`, or as the default when it is not
    /// optional.
    #[test]
    fn a_row_reads_back_as_it_was_written() {
        use crate::catalog::rows::{JobSummaryRow, PredictionRow};
        let row = JobSummaryRow {
            job_id: "7".into(),
            restart_count: Some(2),
            elapsed_s: 3600.0,
            judgeable: true,
            nodes_seen: 4,
            cpu_eff: Some(0.25),
            cpu_eff_source: Some("telemetry-job".into()),
            shared: Some(false),
            ..Default::default()
        };
        let batch = JobSummaryRow::batch(std::slice::from_ref(&row)).unwrap();
        assert_eq!(JobSummaryRow::read(&Columns::of(&batch).unwrap(), 0), row);
        let schema = batch.schema();
        let older: Vec<usize> = (0..batch.num_columns())
            .filter(|&i| !["shared", "elapsed_s"].contains(&schema.field(i).name().as_str()))
            .collect();
        let older = batch.project(&older).unwrap();
        let read = JobSummaryRow::read(&Columns::of(&older).unwrap(), 0);
        assert_eq!((read.shared, read.elapsed_s), (None, 0.0));
        assert_eq!(read.cpu_eff_source.as_deref(), Some("telemetry-job"));

        let at = |s| DateTime::from_timestamp(s, 123_000).unwrap();
        let verdict = PredictionRow {
            job_id: "7".into(),
            verdict: "memleak".into(),
            window_start: Some(at(1_700_000_000)),
            window_end: Some(at(1_700_000_600)),
            windows: 12,
            anomalous_windows: 5,
            model_confidence: Some(0.9),
            ..Default::default()
        };
        let batch = PredictionRow::batch(std::slice::from_ref(&verdict)).unwrap();
        assert_eq!(
            PredictionRow::read(&Columns::of(&batch).unwrap(), 0),
            verdict
        );
    }

    /// Every statement that changes or leaves the warehouse is refused before it is planned;
    /// queries and their EXPLAIN pass.
    #[test]
    fn only_queries_pass() {
        for sql in [
            "SELECT 1",
            "select count(*) from jobs where day = '2026-11-22'",
            "WITH a AS (SELECT 1 AS x) SELECT * FROM a",
            "EXPLAIN SELECT * FROM jobs",
            "EXPLAIN ANALYZE SELECT 1",
            "SELECT 1 UNION ALL SELECT 2",
        ] {
            assert!(matches!(check_read_only(sql), Ok(false)), "{sql}");
        }
        // The catalogue's statements read no rows; they pass and are planned in this process.
        for sql in [
            "SHOW TABLES",
            "SHOW COLUMNS FROM jobs",
            "DESCRIBE jobs",
            "describe findings",
            "SELECT table_name FROM information_schema.tables",
            "SELECT * FROM jobs j JOIN INFORMATION_SCHEMA.columns c ON c.table_name = j.name",
        ] {
            assert!(matches!(check_read_only(sql), Ok(true)), "{sql}");
        }
        for sql in [
            "INSERT INTO jobs SELECT * FROM jobs",
            "insert into jobs values (1)",
            "UPDATE jobs SET user = 'x'",
            "DELETE FROM jobs",
            "COPY (SELECT 1) TO '/tmp/x.csv'",
            "COPY jobs TO '/tmp/x.parquet'",
            "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '/etc/passwd'",
            "CREATE TABLE x AS SELECT 1",
            "CREATE VIEW v AS SELECT 1",
            "DROP TABLE jobs",
            "SET datafusion.execution.batch_size = 1",
            "EXPLAIN INSERT INTO jobs SELECT * FROM jobs",
            "WITH a AS (SELECT 1) INSERT INTO jobs SELECT * FROM a",
            "WITH a AS (DELETE FROM jobs RETURNING *) SELECT * FROM a",
            "SELECT 1 UNION SELECT * INTO t FROM jobs",
            "SELECT 1; DROP TABLE jobs",
            "SHOW TABLES; DROP TABLE jobs",
            "SHOW CREATE TABLE jobs",
            "",
            ";",
        ] {
            assert!(
                matches!(
                    check_read_only(sql),
                    Err(QueryError::ReadOnly(_) | QueryError::Query(_))
                ),
                "{sql}"
            );
        }
    }

    proptest! {
        /// Whatever the text, the check answers (no panic), and what it lets through is one query.
        #[test]
        fn the_check_never_panics(sql in "\\PC{0,200}") {
            let _ = check_read_only(&sql);
        }
    }

    /// A key that a join repeats does not decide the order of the rows with that key: ORDER BY
    /// keeps every key (DataFusion 55 dropped the second: repeated_keys.rs); a key given twice
    /// is kept once.
    #[tokio::test]
    async fn order_by_keeps_keys_after_a_join() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = session(dir.path()).await.unwrap();
        let sql = "WITH j AS (SELECT k FROM (VALUES ('a'), ('b')) AS v(k) GROUP BY k), \
                   t AS (SELECT * FROM (VALUES ('a', 'z'), ('b', 'x'), ('a', 'y'), ('a', 'w')) AS v(k, m)) \
                   SELECT j.k, t.m, count(*) AS n FROM t JOIN j ON t.k = j.k \
                   GROUP BY j.k, t.m ORDER BY j.k, t.m";
        let batches = collect(&ctx, sql).await.unwrap();
        let text = render(&batches, SqlFormat::Csv).unwrap();
        assert_eq!(text, "k,m,n\na,w,1\na,y,1\na,z,1\nb,x,1\n");
        let plan = collect(&ctx, &format!("EXPLAIN {sql}")).await.unwrap();
        let plan = render(&plan, SqlFormat::Csv).unwrap();
        assert!(
            plan.contains("Sort: j.k ASC NULLS LAST, t.m ASC NULLS LAST"),
            "{plan}"
        );
        // A key given twice is still kept once (other rules fail on repeated GROUP BY keys).
        let sql = "SELECT k, count(*) AS n FROM (VALUES ('b'), ('a'), ('b')) AS v(k) \
                   GROUP BY k, k, 'x', 'x' ORDER BY k DESC, k";
        let text = render(&collect(&ctx, sql).await.unwrap(), SqlFormat::Csv).unwrap();
        assert_eq!(text, "k,n\nb,2\na,1\n");
    }

    fn job(id: u32, name: &str) -> JobRow {
        JobRow {
            cluster: "c".into(),
            job_id: id.to_string(),
            name: Some(name.into()),
            end: DateTime::from_timestamp(1_795_300_000, 0).unwrap(),
            source: "test".into(),
            ..JobRow::default()
        }
    }

    /// A refused statement changes nothing (the plan-level guard too, for `SELECT ... INTO`); the
    /// aligned table escapes control bytes and stops at its row limit; CSV writes every row.
    #[test]
    fn results_stream_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let day = chrono::NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
        let rows: Vec<JobRow> = (0..(TABLE_ROWS as u32 + 5))
            .map(|i| {
                job(
                    i,
                    if i == 0 {
                        "evil\u{1b}]0;owned\u{7}\n| 1 | forged |"
                    } else {
                        "ok"
                    },
                )
            })
            .collect();
        JobRow::write_part(data, day, "t", &rows).unwrap();
        let files = || walk(data);
        fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
            let mut out = Vec::new();
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                if e.file_type().unwrap().is_dir() {
                    out.extend(walk(&e.path()));
                } else {
                    out.push(e.path());
                }
            }
            out.sort();
            out
        }
        let before = files();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let run = |sql: &str, format| {
            let mut out = Vec::new();
            let rows = runtime.block_on(write_results(data, &Engine::Local, sql, format, &mut out));
            (rows, String::from_utf8(out).unwrap())
        };
        for sql in [
            "INSERT INTO jobs SELECT * FROM jobs",
            "SELECT * INTO copy FROM jobs",
        ] {
            let (rows, _) = run(sql, SqlFormat::Table);
            assert!(
                matches!(rows, Err(QueryError::ReadOnly(_))),
                "{sql}: {rows:?}"
            );
        }
        assert_eq!(files(), before);

        let (rows, text) = run(
            "SELECT job_id, name FROM jobs ORDER BY CAST(job_id AS INT)",
            SqlFormat::Table,
        );
        assert_eq!(rows.unwrap(), TABLE_ROWS as u64);
        assert!(
            text.contains("evil\\u{1b}]0;owned\\u{7}\\n| 1 | forged |"),
            "{}",
            &text[..400]
        );
        assert!(!text.contains('\u{1b}'));
        assert!(text.ends_with("(the first 10000 rows; --format csv or json writes them all)\n"));
        let (rows, csv) = run("SELECT job_id FROM jobs", SqlFormat::Csv);
        assert_eq!(rows.unwrap(), TABLE_ROWS as u64 + 5);
        assert_eq!(
            csv.lines().count(),
            TABLE_ROWS + 6,
            "a header, then every row"
        );
    }

    /// The statement forms that write, change the session or leave the warehouse.
    const WRITES: [&str; 16] = [
        "INSERT INTO jobs SELECT * FROM jobs",
        "INSERT INTO jobs (cluster) VALUES ('x')",
        "WITH a AS (SELECT * FROM jobs) INSERT INTO jobs SELECT * FROM a",
        "UPDATE jobs SET name = 'x'",
        "DELETE FROM jobs",
        "COPY (SELECT 1) TO 'OUT/x.csv'",
        "COPY jobs TO 'OUT/y.parquet' STORED AS PARQUET",
        "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION 'OUT/z.csv'",
        "CREATE TABLE x AS SELECT 1",
        "CREATE OR REPLACE VIEW jobs AS SELECT 1",
        "SELECT * INTO copy FROM jobs",
        "DROP TABLE jobs",
        "SET datafusion.execution.batch_size = 1",
        "TRUNCATE jobs",
        "CREATE SCHEMA s",
        "PREPARE p AS INSERT INTO jobs SELECT * FROM jobs",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every writing form, in any letter case, after comments and white space, with or
        /// without EXPLAIN and a trailing semicolon, is refused through the path `jobsight sql`
        /// takes, and no file appears or changes: not in the warehouse, not where COPY points.
        #[test]
        fn no_spelling_of_a_write_gets_through(
            form in 0..WRITES.len(),
            upper in proptest::collection::vec(any::<bool>(), 96),
            prefix in prop_oneof![Just(""), Just("  "), Just("/* x */ "), Just("-- x\n"), Just("\n\t")],
            explain in prop_oneof![Just(""), Just("EXPLAIN "), Just("explain analyze ")],
            suffix in prop_oneof![Just(""), Just(";"), Just(" ; ")],
        ) {
            let dir = tempfile::tempdir().unwrap();
            let data = dir.path().join("data");
            let out = dir.path().join("out");
            std::fs::create_dir(&out).unwrap();
            let day = chrono::NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
            JobRow::write_part(&data, day, "t", &[job(1, "a")])
                .unwrap();
            let cased: String = WRITES[form]
                .replace("OUT", &out.display().to_string())
                .chars()
                .zip(upper.iter().cycle())
                .map(|(c, &up)| if c.is_ascii_alphabetic() && !c.is_ascii_uppercase() && up {
                    c.to_ascii_uppercase()
                } else {
                    c
                })
                .collect();
            let sql = format!("{prefix}{explain}{cased}{suffix}");
            let listing = |path: &Path| -> Vec<(std::path::PathBuf, u64)> {
                let mut all = Vec::new();
                let mut stack = vec![path.to_path_buf()];
                while let Some(p) = stack.pop() {
                    for e in std::fs::read_dir(&p).unwrap().flatten() {
                        if e.file_type().unwrap().is_dir() {
                            stack.push(e.path());
                        } else {
                            all.push((e.path(), e.metadata().unwrap().len()));
                        }
                    }
                }
                all.sort();
                all
            };
            let before = listing(dir.path());
            let runtime = tokio::runtime::Runtime::new().unwrap();
            let mut sink = Vec::new();
            let result = runtime.block_on(write_results(&data, &Engine::Local, &sql, SqlFormat::Csv, &mut sink));
            prop_assert!(
                matches!(result, Err(QueryError::ReadOnly(_) | QueryError::Query(_))),
                "{}: {:?}", sql, result
            );
            prop_assert_eq!(listing(dir.path()), before, "{}", sql);
        }
    }

    /// A part written before the accounting columns existed reads them as null (the session
    /// registers the catalogue's schema, and what a file lacks is filled), and the view's seff
    /// figures come from the rows that have them.
    #[tokio::test]
    async fn parts_without_the_accounting_columns_read_as_null() {
        use datafusion::parquet::arrow::ArrowWriter;
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let day = chrono::NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
        // 100 s on 2 CPUs with 1 GiB.
        let timed = |id, name| JobRow {
            cpus: Some(2),
            req_mem_mb: Some(1024),
            start: DateTime::from_timestamp(1_795_299_900, 0),
            ..job(id, name)
        };
        let batch = JobRow::batch(&[timed(1, "older")]).unwrap();
        let kept: Vec<usize> = (batch.schema().fields().iter().enumerate())
            .filter(|(_, f)| !f.name().starts_with("acct_") && f.name() != "neighbours")
            .map(|(i, _)| i)
            .collect();
        let older = batch.project(&kept).unwrap();
        let partition = catalog::partition_dir(data, Table::Jobs, day);
        std::fs::create_dir_all(&partition).unwrap();
        let file = std::fs::File::create(partition.join("part-older.parquet")).unwrap();
        let mut writer = ArrowWriter::try_new(file, older.schema(), None).unwrap();
        writer.write(&older).unwrap();
        writer.close().unwrap();
        let newer = JobRow {
            acct_cpu_total_s: Some(100.0),
            acct_mem_peak_mb: Some(512.0),
            neighbours: Some(1),
            ..timed(2, "newer")
        };
        let batch = JobRow::batch(&[newer]).unwrap();
        catalog::write_part(data, Table::Jobs, day, "newer", &[batch]).unwrap();

        let ctx = session(data).await.unwrap();
        let sql = "SELECT job_id, acct_cpu_total_s IS NULL AS cpu_unknown, \
                   neighbours IS NULL AS neighbours_unknown, \
                   CAST(round(acct_cpu_eff * 100) AS INT) AS cpu_pct, \
                   CAST(round(acct_mem_eff * 100) AS INT) AS mem_pct \
                   FROM jobs ORDER BY job_id";
        let text = render(&collect(&ctx, sql).await.unwrap(), SqlFormat::Csv).unwrap();
        assert_eq!(
            text,
            "job_id,cpu_unknown,neighbours_unknown,cpu_pct,mem_pct\n\
             1,true,true,,\n\
             2,false,false,50,50\n"
        );
    }

    /// docs/tables.md is what the code generates (rewrite it with JOBSIGHT_UPDATE_SCHEMAS=1).
    #[test]
    fn schema_catalogue_page_matches_the_code() {
        let path = format!(
            "{}/docs/tables.md",
            jobsight_base::test_support::workspace_dir().display()
        );
        let generated = catalogue_markdown();
        if std::env::var_os("JOBSIGHT_UPDATE_SCHEMAS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap();
        assert!(
            committed == generated,
            "{path} differs from the code; regenerate it"
        );
    }
}
