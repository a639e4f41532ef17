//! One typed row per table: the only place that turns rows into Arrow record batches, and the
//! only place that lists each table's columns. A row struct's fields are its table's columns, in
//! order, with their names and types; [`super::Table::schema`] is built from them, so a column is
//! written once and a batch can never be filled by position against the wrong schema.
//!
//! Tables whose statistics columns come from a list (`features`, `windows`) carry those values as
//! an array in the list's order; `telemetry`, the one table written at millions of rows a second,
//! has a streaming builder with dictionary-encoded ids ([`TelemetryBuilder`]) instead of a row
//! struct.

use chrono::{DateTime, NaiveDate, Utc};
use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;

use super::{FEATURE_STATS, Table, WINDOW_STATS};

mod column;
mod telemetry;

use column::time_type;
pub use column::{Cells, Column, from_micros};
pub use telemetry::{TelemetryBuilder, telemetry_fields};

/// Declares a table's row: the struct (its fields are the table's columns, in order) and the
/// functions that give the columns' fields, turn rows into a batch, write them as a part and read a
/// row back.
macro_rules! table_row {
    (
        $(#[$meta:meta])*
        $row:ident => $table:ident {
            $($(#[$field_meta:meta])* $field:ident: $ty:ty,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $row {
            $($(#[$field_meta])* pub $field: $ty,)+
        }

        impl $row {
            /// The table's columns, in order.
            pub fn fields() -> Vec<Field> {
                vec![$(Field::new(stringify!($field), <$ty as Column>::data_type(), <$ty as Column>::NULLABLE),)+]
            }

            /// `rows` as one batch of the table.
            pub fn batch(rows: &[$row]) -> Result<RecordBatch, ArrowError> {
                RecordBatch::try_new(
                    Table::$table.schema(),
                    vec![$(<$ty as Column>::array(rows.iter().map(|r| &r.$field)),)+],
                )
            }

            /// `rows` written as part `name` of the table's partition of `day`
            /// ([`write_part`](crate::catalog::write_part)); a row the schema refuses is a
            /// [`CatalogError::Schema`](crate::catalog::CatalogError::Schema).
            pub fn write_part(
                data: &std::path::Path,
                day: chrono::NaiveDate,
                name: &str,
                rows: &[$row],
            ) -> Result<std::path::PathBuf, $crate::catalog::CatalogError> {
                let batch = Self::batch(rows).map_err(|e| $crate::catalog::CatalogError::Schema {
                    table: Table::$table.name(),
                    reason: e.to_string(),
                })?;
                $crate::catalog::write_part(data, Table::$table, day, name, &[batch])
            }

            /// Row `i` of a query's result over the table, its columns read by name
            /// ([`Column::read`]: what is null or missing reads as `None` or the default).
            pub fn read(cells: &dyn $crate::catalog::rows::Cells, i: usize) -> $row {
                $row {
                    $($field: <$ty as $crate::catalog::rows::Column>::read(cells, stringify!($field), i),)+
                }
            }
        }
    };
}

// After the macro, which the module uses.
mod reference;
mod workflow;
pub use reference::{ReferenceBandRow, ReferenceRunRow};
pub use workflow::{WorkflowRow, WorkflowScoreRow, WorkflowTaskRow};

table_row! {
    /// One row of `jobs`: a job run's identity, request, timing and outcome.
    #[derive(Default)]
    JobRow => Jobs {
        cluster: String,
        job_id: String,
        array_job_id: Option<String>,
        array_task_id: Option<u32>,
        restart_count: u32,
        user: Option<String>,
        account: Option<String>,
        partition: Option<String>,
        qos: Option<String>,
        num_nodes: Option<u32>,
        nodes: Option<String>,
        cpus: Option<u32>,
        gpus: Option<u32>,
        req_mem_mb: Option<u64>,
        time_limit_s: Option<u64>,
        submit: Option<DateTime<Utc>>,
        start: Option<DateTime<Utc>>,
        end: DateTime<Utc>,
        state: Option<String>,
        exit_code: Option<i32>,
        exit_signal: Option<i32>,
        name: Option<String>,
        source: String,
        /// The jobs it waited for, as Slurm's `--dependency` takes them (`afterok:12:13`,
        /// `afterany:7_2?singleton`), when the accounting record or log says so.
        dependency: Option<String>,
        /// For a component of a heterogeneous job (`#SBATCH hetjob`): the job id of its first
        /// component, which links the components (each is stored as a job of its own, as Slurm's
        /// epilog reports them), and its place among them (0, 1, ...). Null for other jobs.
        het_job_id: Option<String>,
        het_job_offset: Option<u32>,
        /// What Slurm accounting measured, summed over the steps of this run (see `job_steps`):
        /// user, system and total (user + system) CPU time in seconds. The total is seff's
        /// "CPU Utilized". `None` where accounting has no figure (no steps, an import without it).
        acct_cpu_user_s: Option<f64>,
        acct_cpu_system_s: Option<f64>,
        acct_cpu_total_s: Option<f64>,
        /// The largest memory of one step in MiB: the sum of its tasks' peaks where accounting
        /// has it, else its largest task's peak × its tasks (seff's estimate).
        acct_mem_peak_mb: Option<f64>,
        /// The largest peak resident memory of a single task of any step, MiB (MaxRSS).
        acct_max_rss_mb: Option<f64>,
        /// Energy the job consumed in joules, where an energy plugin measured it.
        acct_energy_j: Option<f64>,
        /// Slurm's own GPU usage (`gres/gpuutil`, `gres/gpumem` in `AccountingStorageTRES`):
        /// the largest of the steps' busiest-task GPU utilisation in per cent (summed over the
        /// task's GPUs since 24.05) and GPU memory in MiB. Null where Slurm does not gather them.
        acct_gpu_util_max_pct: Option<f64>,
        acct_gpu_mem_max_mb: Option<f64>,
        /// How many steps the accounting figures cover.
        acct_steps: Option<u32>,
        /// Other jobs that ran on at least one of this job's nodes during its run.
        neighbours: Option<u32>,
        /// What the ingest found missing or odd about this run, one sentence a line: a node
        /// without telemetry or whose series end early (lost mid-run), nodes changed on requeue,
        /// a node list that cannot be expanded, steps not ended. Null when nothing.
        note: Option<String>,
    }
}

impl JobRow {
    /// The partition a job belongs to: the UTC day of its end.
    pub fn day(&self) -> NaiveDate {
        self.end.date_naive()
    }
}

table_row! {
    /// One row of `job_steps`: one step of a job run (`batch`, `extern`, `0`, ...) as Slurm
    /// accounting recorded it, partitioned with its job (the UTC day of the job's end).
    #[derive(Default)]
    JobStepRow => JobSteps {
        cluster: String,
        job_id: String,
        /// The job run's submit time: which run of a repeated job id the step belongs to (joins
        /// `jobs` on cluster, job_id and submit).
        submit: Option<DateTime<Utc>>,
        /// The step's id as sacct prints it after the job id: `batch`, `extern`, `interactive`,
        /// `0`, `1`, ... (`0+1` for a heterogeneous job's component).
        step: String,
        name: Option<String>,
        state: Option<String>,
        /// Slurm host list of the step's nodes.
        nodes: Option<String>,
        num_nodes: Option<u32>,
        ntasks: Option<u32>,
        start: Option<DateTime<Utc>>,
        end: Option<DateTime<Utc>>,
        cpu_user_s: Option<f64>,
        cpu_system_s: Option<f64>,
        cpu_total_s: Option<f64>,
        /// The largest peak resident memory of one task (MaxRSS), MiB, with the node and task
        /// it was on.
        max_rss_mb: Option<f64>,
        max_rss_node: Option<String>,
        max_rss_task: Option<u32>,
        /// The sum of the tasks' peak resident memories (TRESUsageInTot mem), MiB.
        tot_rss_mb: Option<f64>,
        energy_j: Option<f64>,
        /// Slurm's own GPU usage (`gres/gpuutil`, `gres/gpumem` in `AccountingStorageTRES`, the
        /// nvml or rsmi GPU plugin): the largest task's GPU utilisation in per cent (summed over
        /// its GPUs since Slurm 24.05) and GPU memory in MiB (TRESUsageInMax); null elsewhere.
        gpu_util_max_pct: Option<f64>,
        gpu_mem_max_mb: Option<f64>,
    }
}

table_row! {
    /// One row of `labels`: which anomaly ran in which job and when, where a data set or an
    /// admin says so. An admin's labels (`jobsight label`) say who and when; a job's newest
    /// such labels replace its older ones.
    LabelRow => Labels {
        job_id: String,
        anomaly: String,
        start: Option<DateTime<Utc>>,
        end: Option<DateTime<Utc>>,
        params: Option<String>,
        source: String,
        labelled_by: Option<String>,
        labelled_at: Option<DateTime<Utc>>,
    }
}

table_row! {
    /// One row of `findings`: a triggered rule with its evidence and rendered texts.
    #[derive(Default)]
    FindingRow => Findings {
        job_id: String,
        /// The run it is about (`jobs.restart_count`): a requeued job's runs are judged one by
        /// one. Null in rows written before the run was recorded.
        restart_count: Option<u32>,
        rule: String,
        title: String,
        group: String,
        method_group: Option<u8>,
        severity: String,
        node: Option<String>,
        window_start: Option<DateTime<Utc>>,
        window_end: Option<DateTime<Utc>>,
        message: String,
        fix: String,
        why: String,
        tools: String,
        evidence: String,
        rules_version: String,
    }
}

impl FindingRow {
    /// The finding's time window, when the row has both ends.
    pub fn window(&self) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
        Some((self.window_start?, self.window_end?))
    }
}

impl PredictionRow {
    /// The verdict's time window, when the row has both ends.
    pub fn window(&self) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
        Some((self.window_start?, self.window_end?))
    }
}

table_row! {
    /// One row of `classes`: a job and a class it belongs to.
    ClassRow => Classes {
        job_id: String,
        /// The run it is about (`jobs.restart_count`). Null in rows written before the run was
        /// recorded.
        restart_count: Option<u32>,
        class: String,
        name: String,
        rules_version: String,
    }
}

table_row! {
    /// One row of `thresholds`: a job's main characteristic marked low / average / high.
    #[derive(Default)]
    ThresholdRow => Thresholds {
        job_id: String,
        /// The run it is about (`jobs.restart_count`). Null in rows written before the run was
        /// recorded.
        restart_count: Option<u32>,
        characteristic: String,
        title: String,
        limits: String,
        value: Option<f64>,
        level: String,
        low_below: Option<f64>,
        high_from: Option<f64>,
    }
}

table_row! {
    /// One row of the `notifications` ledger: one per message and finding it reported (one with
    /// no job and finding for a message that reported none).
    #[derive(serde::Serialize, serde::Deserialize)]
    LedgerRow => Notifications {
        key: String,
        kind: String,
        user: Option<String>,
        address: String,
        period: String,
        job_id: Option<String>,
        finding: Option<String>,
        severity: Option<String>,
        queued_at: DateTime<Utc>,
        sent_at: Option<DateTime<Utc>>,
        /// `queued` (in the outbox), `sent`, `in-doubt` (the process died while sending), `failed`.
        status: String,
        transport: String,
    }
}

table_row! {
    /// One row of `interventions`: a warning the running DAG sent about a running job, or a
    /// cancellation under the site's policy, done or (dry run) only decided.
    InterventionRow => Interventions {
        decided_at: DateTime<Utc>,
        cluster: String,
        job_id: String,
        user: String,
        account: String,
        partition: String,
        qos: String,
        /// The running rule whose condition held.
        condition: String,
        /// `warning`, `second-warning` or `cancel`.
        stage: String,
        /// How long the condition had held, seconds.
        held_s: u64,
        /// The cancel policy was in dry-run: nothing but this row was done for a `cancel` (and
        /// a `second-warning` was not mailed).
        dry_run: bool,
        /// What was done: `emailed`, `email not sent: <why>`, `cancelled`, `would cancel`,
        /// `cancel failed: <why>`, `exempt: <why>`.
        outcome: String,
        /// The finding's evidence, JSON.
        evidence: String,
        rules_version: String,
    }
}

table_row! {
    /// One row of `feedback`: a person's judgement of a finding or a verdict on a job's served
    /// page.
    FeedbackRow => Feedback {
        given_at: DateTime<Utc>,
        /// Who judged: the user name the site's proxy authenticated.
        by: String,
        /// Whether `by` owns the job (the owner's word and a coordinator's or admin's differ).
        by_owner: bool,
        cluster: String,
        job_id: String,
        /// `finding` or `verdict`.
        subject: String,
        /// The finding's rule, or the verdict (`healthy`, an anomaly class, ...).
        item: String,
        /// `useful` or `wrong`.
        judgement: String,
        /// What the person wrote, cleaned of control characters, at most 500 characters.
        note: String,
    }
}

table_row! {
    /// One row of `predictions`: a job's verdict from the models and the rules together.
    #[derive(Default)]
    PredictionRow => Predictions {
        job_id: String,
        /// The run judged (`jobs.restart_count`); null in rows written before it was recorded.
        restart_count: Option<u32>,
        verdict: String,
        confidence: Option<f64>,
        source: String,
        node: Option<String>,
        window_start: Option<DateTime<Utc>>,
        window_end: Option<DateTime<Utc>>,
        windows: u64,
        anomalous_windows: u64,
        unknown_windows: u64,
        model_verdict: Option<String>,
        model_confidence: Option<f64>,
        anomaly_score: Option<f64>,
        agreeing_rules: String,
        reason: String,
        model_version: String,
    }
}

table_row! {
    /// One row of `runs`: a DAG run (`step` empty) or one of its steps.
    RunRow => Runs {
        run_id: String,
        dag: String,
        /// Empty for the row of the whole run; the step's name (and position) otherwise.
        step: String,
        position: u32,
        trigger: String,
        scheduled_for: DateTime<Utc>,
        started: DateTime<Utc>,
        ended: DateTime<Utc>,
        outcome: String,
        attempts: u32,
        jobs: u64,
        counts: String,
        error: Option<String>,
        host: String,
        pid: u32,
    }
}

table_row! {
    /// One row of `job_summary`: a job's telemetry coverage, whether it can be judged, and its
    /// efficiency figures.
    #[derive(Default)]
    JobSummaryRow => JobSummary {
        job_id: String,
        /// The run it measures (`jobs.restart_count`). Null in rows written before the run was
        /// recorded.
        restart_count: Option<u32>,
        elapsed_s: f64,
        trimmed: bool,
        nodes_expected: Option<u64>,
        nodes_seen: u64,
        nodes_missing: Option<String>,
        metrics: u64,
        samples: u64,
        coverage_min: Option<f64>,
        coverage_mean: Option<f64>,
        judgeable: bool,
        not_judgeable_reason: Option<String>,
        duty_cycle: Option<String>,
        cpu_used_cores: Option<f64>,
        cpu_eff: Option<f64>,
        mem_used_max_mb: Option<f64>,
        mem_eff: Option<f64>,
        time_eff: Option<f64>,
        gpu_util: Option<f64>,
        core_hours: Option<f64>,
        wasted_core_hours: Option<f64>,
        /// Where `cpu_used_cores`, `cpu_eff` and `wasted_core_hours` come from: `telemetry-job`
        /// (the job's own series), `telemetry-node` (its nodes' series) or `accounting` (Slurm's
        /// CPU time); `None` without a figure.
        cpu_eff_source: Option<String>,
        /// Where `mem_used_max_mb` and `mem_eff` come from, as `cpu_eff_source`.
        mem_source: Option<String>,
        /// The efficiencies telemetry gives (the job's own series where it has them, else its
        /// nodes'), not left empty above 1.
        cpu_eff_telemetry: Option<f64>,
        mem_eff_telemetry: Option<f64>,
        /// seff's efficiencies from Slurm accounting: CPU time / (CPUs × elapsed), the memory
        /// peak / the requested memory.
        cpu_eff_acct: Option<f64>,
        mem_eff_acct: Option<f64>,
        /// Whether another job ran on one of the job's nodes during its run; `None` when unknown.
        shared: Option<bool>,
        /// Where `gpu_util` comes from: `telemetry-job` (the job's own GPUs, DCGM's series
        /// mapped to the job) or `telemetry-node` (all its nodes' GPUs).
        gpu_source: Option<String>,
        /// The job's energy, measured: Slurm's consumed energy, a node power series or its GPUs'
        /// power, times `energy_share`; `None` where none of them was collected.
        energy_kwh: Option<f64>,
        /// `accounting`, `node-power` or `gpu-power` (the GPUs alone, not the host).
        energy_source: Option<String>,
        /// The share of its nodes' energy the job was given: 1 on nodes of its own, its CPUs over
        /// the nodes' on a node it shared.
        energy_share: Option<f64>,
        /// The job's GPU memory peak in MiB, summed over its GPUs, from the series `gpu_util`
        /// comes from (`gpu_source`); `None` where that has none.
        gpu_mem_used_max_mb: Option<f64>,
        /// The memory of the job's own GPUs in MiB (DCGM's job-mapped used + free, summed);
        /// `None` without those series (a node's count every GPU of the node).
        gpu_mem_total_mb: Option<f64>,
    }
}

table_row! {
    /// One row of `features_job`: a job's metric across its nodes.
    #[derive(Default)]
    FeaturesJobRow => FeaturesJob {
        job_id: String,
        /// The run it measures (`jobs.restart_count`). Null in rows written before the run was
        /// recorded.
        restart_count: Option<u32>,
        metric: String,
        nodes: u64,
        mean: Option<f64>,
        min: Option<f64>,
        max: Option<f64>,
        node_mean_min: Option<f64>,
        node_mean_max: Option<f64>,
        node_cv: Option<f64>,
        imbalance: Option<f64>,
    }
}

/// The statistics columns of a list (`FEATURE_STATS`, `WINDOW_STATS`), each a nullable Float64.
fn stat_fields(names: &[&str]) -> Vec<Field> {
    names
        .iter()
        .map(|name| Field::new(*name, DataType::Float64, true))
        .collect()
}

fn stat_arrays<const N: usize>(
    stats: impl Iterator<Item = [Option<f64>; N]> + Clone,
) -> Vec<ArrayRef> {
    (0..N)
        .map(|i| Column::array(stats.clone().map(|s| s[i]).collect::<Vec<_>>().iter()))
        .collect()
}

/// One row of `features`: the statistics of a job's metric on one node, the statistics in the
/// order of [`FEATURE_STATS`].
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureRow {
    pub job_id: String,
    /// The run it measures (`jobs.restart_count`); null in rows written before it was recorded.
    pub restart_count: Option<u32>,
    pub node: String,
    pub metric: String,
    pub n: u64,
    pub n_nonfinite: u64,
    pub trimmed: bool,
    pub stats: [Option<f64>; FEATURE_STATS.len()],
    pub rise_from: Option<DateTime<Utc>>,
    pub rise_to: Option<DateTime<Utc>>,
    pub cliff_at: Option<DateTime<Utc>>,
}

impl FeatureRow {
    pub fn fields() -> Vec<Field> {
        let mut fields = vec![
            Field::new("job_id", String::data_type(), false),
            Field::new("restart_count", u32::data_type(), true),
            Field::new("node", String::data_type(), false),
            Field::new("metric", String::data_type(), false),
            Field::new("n", u64::data_type(), false),
            Field::new("n_nonfinite", u64::data_type(), false),
            Field::new("trimmed", bool::data_type(), false),
        ];
        fields.extend(stat_fields(&FEATURE_STATS));
        fields
            .extend(["rise_from", "rise_to", "cliff_at"].map(|n| Field::new(n, time_type(), true)));
        fields
    }

    pub fn batch(rows: &[FeatureRow]) -> Result<RecordBatch, ArrowError> {
        let mut columns = vec![
            Column::array(rows.iter().map(|r| &r.job_id)),
            Column::array(rows.iter().map(|r| &r.restart_count)),
            Column::array(rows.iter().map(|r| &r.node)),
            Column::array(rows.iter().map(|r| &r.metric)),
            Column::array(rows.iter().map(|r| &r.n)),
            Column::array(rows.iter().map(|r| &r.n_nonfinite)),
            Column::array(rows.iter().map(|r| &r.trimmed)),
        ];
        columns.extend(stat_arrays(rows.iter().map(|r| r.stats)));
        columns.push(Column::array(rows.iter().map(|r| &r.rise_from)));
        columns.push(Column::array(rows.iter().map(|r| &r.rise_to)));
        columns.push(Column::array(rows.iter().map(|r| &r.cliff_at)));
        RecordBatch::try_new(Table::Features.schema(), columns)
    }
}

/// One row of `windows`: the statistics of a job's metric on one node over one window, in the
/// order of [`WINDOW_STATS`].
#[derive(Debug, Clone, PartialEq)]
pub struct WindowRow {
    pub job_id: String,
    /// The run it measures (`jobs.restart_count`); null in rows written before it was recorded.
    pub restart_count: Option<u32>,
    pub node: String,
    pub metric: String,
    pub window_start: DateTime<Utc>,
    pub window_end: DateTime<Utc>,
    pub n: u64,
    pub n_nonfinite: u64,
    pub stats: [Option<f64>; WINDOW_STATS.len()],
}

impl WindowRow {
    pub fn fields() -> Vec<Field> {
        let mut fields = vec![
            Field::new("job_id", String::data_type(), false),
            Field::new("restart_count", u32::data_type(), true),
            Field::new("node", String::data_type(), false),
            Field::new("metric", String::data_type(), false),
            Field::new("window_start", time_type(), false),
            Field::new("window_end", time_type(), false),
            Field::new("n", u64::data_type(), false),
            Field::new("n_nonfinite", u64::data_type(), false),
        ];
        fields.extend(stat_fields(&WINDOW_STATS));
        fields
    }

    pub fn batch(rows: &[WindowRow]) -> Result<RecordBatch, ArrowError> {
        let mut columns = vec![
            Column::array(rows.iter().map(|r| &r.job_id)),
            Column::array(rows.iter().map(|r| &r.restart_count)),
            Column::array(rows.iter().map(|r| &r.node)),
            Column::array(rows.iter().map(|r| &r.metric)),
            Column::array(rows.iter().map(|r| &r.window_start)),
            Column::array(rows.iter().map(|r| &r.window_end)),
            Column::array(rows.iter().map(|r| &r.n)),
            Column::array(rows.iter().map(|r| &r.n_nonfinite)),
        ];
        columns.extend(stat_arrays(rows.iter().map(|r| r.stats)));
        RecordBatch::try_new(Table::Windows.schema(), columns)
    }
}

table_row! {
    /// One row of `summaries`: a period's jobs of one cluster, partition, account and user, their
    /// usage, efficiency and waste (see the crate `jobsight_summary` for how each figure is derived).
    /// Shares are `None` where no job of the group had the figure.
    SummaryRow => Summaries {
        /// `day`, `week` or `month`.
        period: String,
        /// The period's first day, `YYYY-MM-DD`.
        period_start: String,
        cluster: String,
        partition: String,
        account: String,
        user: String,
        jobs: u64,
        completed: u64,
        failed: u64,
        cancelled: u64,
        timeout: u64,
        out_of_memory: u64,
        node_fail: u64,
        short_jobs: u64,
        core_hours: f64,
        node_hours: f64,
        gpu_hours: f64,
        judged_jobs: u64,
        judged_share: Option<f64>,
        cpu_eff: Option<f64>,
        /// The core-hours `cpu_eff` is weighted by: fold rows with
        /// `sum(cpu_eff * cpu_eff_core_hours) / sum(cpu_eff_core_hours)`.
        cpu_eff_core_hours: f64,
        mem_eff: Option<f64>,
        mem_eff_core_hours: f64,
        gpu_util: Option<f64>,
        gpu_util_gpu_hours: f64,
        walltime_accuracy: Option<f64>,
        wait_p50_s: Option<f64>,
        wait_p95_s: Option<f64>,
        findings: u64,
        jobs_flagged: u64,
        jobs_anomalous: u64,
        idle_core_hours: f64,
        idle_gpu_hours: f64,
        idle_node_hours: f64,
        overrequested_mem_gb_hours: f64,
        wasted_nodes: f64,
        /// Estimated, not measured: the idle core-, GPU- and node-hours times the configured
        /// idle draws (`summary.idle_core_watts`, ...).
        waste_kwh: f64,
        waste_cost: f64,
        currency: String,
        waste_co2_kg: f64,
        /// Measured: the sum of the jobs' `job_summary.energy_kwh` (Slurm's consumed energy or
        /// power series, each job's share of its nodes), over the jobs that have one.
        energy_kwh: f64,
        energy_cost: f64,
        energy_co2_kg: f64,
        /// The share of the core-hours whose jobs' energy was measured; `None` without core-hours.
        energy_measured_share: Option<f64>,
    }
}
