//! The spool record: one JSON document per finished job, written by the epilog hook and read by
//! the pipeline.
//!
//! The format is versioned ([`SCHEMA_VERSION`]) and described by `schemas/spool-record.v1.json`,
//! which a unit test regenerates from these types and compares with the committed file: changing a
//! field here without bumping the schema fails the build. Readers reject versions they do not know
//! and fields they do not expect, so a record is never half-understood.
//!
//! Values the hook could not interpret (a non-numeric uid, a malformed host list) are not guessed:
//! the field stays empty, the raw value is kept where it is text, and `warnings` says what went
//! wrong, so nothing is lost and nothing is silently wrong.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::text::Text;

/// Version of the on-disk record format. Bump it (and add a schema file) for any change that an
/// older reader would misread.
pub const SCHEMA_VERSION: u32 = 1;

/// Which Slurm hook produced a record (Slurm's `SLURM_SCRIPT_CONTEXT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Hook {
    /// `Epilog`: runs as root on every node of the job.
    EpilogSlurmd,
    /// `EpilogSlurmctld`: runs once per job as the slurm user on the controller.
    EpilogSlurmctld,
}

impl Hook {
    pub fn as_str(self) -> &'static str {
        match self {
            Hook::EpilogSlurmd => "epilog_slurmd",
            Hook::EpilogSlurmctld => "epilog_slurmctld",
        }
    }

    pub fn parse(s: &str) -> Option<Hook> {
        match s {
            "epilog_slurmd" => Some(Hook::EpilogSlurmd),
            "epilog_slurmctld" => Some(Hook::EpilogSlurmctld),
            _ => None,
        }
    }
}

/// A job's exit status as Slurm reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ExitStatus {
    /// Raw wait(2) status (`SLURM_JOB_EXIT_CODE`): 768 for `exit 3`.
    pub wait_status: Option<u32>,
    /// `code:signal` as Slurm prints it (`SLURM_JOB_EXIT_CODE2`), e.g. `3:0`, `0:15`.
    pub code_signal: Option<String>,
    /// Exit code of the batch script (from `code_signal`, else from `wait_status`).
    pub code: Option<u32>,
    /// Signal that ended it, 0 if none (from `code_signal`, else from `wait_status`).
    pub signal: Option<u32>,
}

impl ExitStatus {
    /// Builds the status from the raw wait status and Slurm's `code:signal` text, either of which
    /// may be missing. The text wins where both exist: it is what `sacct` shows users.
    pub fn new(wait_status: Option<u32>, code_signal: Option<String>) -> ExitStatus {
        let from_text = code_signal.as_deref().and_then(parse_code_signal);
        let from_raw = wait_status.map(|w| ((w >> 8) & 0xff, w & 0x7f));
        let (code, signal) = match from_text.or(from_raw) {
            Some((c, s)) => (Some(c), Some(s)),
            None => (None, None),
        };
        ExitStatus {
            wait_status,
            code_signal,
            code,
            signal,
        }
    }
}

/// Parses `3:0` into (3, 0).
pub fn parse_code_signal(text: &str) -> Option<(u32, u32)> {
    let (code, signal) = text.split_once(':')?;
    Some((code.parse().ok()?, signal.parse().ok()?))
}

/// The job's nodes: the list as Slurm gave it, and expanded into names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NodeList {
    /// As given, e.g. `node[01-04,07]`.
    pub given: Text,
    /// Expanded names, in Slurm's order; empty when `given` could not be expanded (see `warnings`).
    pub expanded: Vec<String>,
}

/// CPUs allocated on each node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CpusPerNode {
    /// As given (`SLURM_JOB_CPUS_PER_NODE`), e.g. `2(x3),1`.
    pub given: Text,
    /// One count per node, in node-list order; empty when `given` could not be parsed.
    pub expanded: Vec<u32>,
}

/// One finished job, as one Slurm hook saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SpoolRecord {
    /// Always [`SCHEMA_VERSION`] for records this code writes.
    pub schema_version: u32,
    /// `SLURM_CLUSTER_NAME`.
    pub cluster: Option<Text>,
    /// `SLURM_JOB_ID`: for an array task, the task's own job id.
    pub job_id: u64,
    /// `SLURM_ARRAY_JOB_ID` (EpilogSlurmctld only).
    pub array_job_id: Option<u64>,
    /// `SLURM_ARRAY_TASK_ID` (EpilogSlurmctld only).
    pub array_task_id: Option<u64>,
    /// `SLURM_JOB_RESTART_COUNT`: how often the job was requeued before this run ended.
    pub restart_count: Option<u32>,
    pub user: Option<Text>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// `SLURM_JOB_GROUP` (EpilogSlurmctld only).
    pub group: Option<Text>,
    /// `SLURM_JOB_ACCOUNT`; Slurm's `(null)` is stored as absent.
    pub account: Option<Text>,
    pub partition: Option<Text>,
    /// `SLURM_JOB_NAME` (EpilogSlurmctld only). Chosen by the user: any bytes.
    pub job_name: Option<Text>,
    /// `SLURM_JOB_NODELIST` (EpilogSlurmctld) or `SLURM_NODELIST` (Epilog).
    pub nodes: Option<NodeList>,
    pub num_nodes: Option<u32>,
    pub cpus_per_node: Option<CpusPerNode>,
    pub exit_code: Option<ExitStatus>,
    /// `SLURM_JOB_DERIVED_EC`: the highest exit status of all the job's steps.
    pub derived_exit_code: Option<ExitStatus>,
    /// `SLURM_JOB_WORK_DIR`. Chosen by the user: any bytes.
    pub work_dir: Option<Text>,
    pub hook: Hook,
    /// The host the hook ran on (`SLURMD_NODENAME`, else the kernel's host name).
    pub host: Text,
    pub enqueued_at: DateTime<Utc>,
    /// What the hook could not interpret, one sentence each; empty for a clean record.
    pub warnings: Vec<String>,
}

/// The identity of one run of one job: the same job enqueued twice (both hooks, one record per
/// node from `Epilog`) has the same key; a requeued job's next run does not.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobKey {
    pub cluster: Text,
    pub job_id: u64,
    pub restart_count: u32,
}

/// The largest record the hook writes and the claim reads: one definition for both, so that a
/// record the hook wrote is never one the claim rejects.
pub const MAX_RECORD_BYTES: usize = 1 << 20;
/// The most bytes of one text field a record keeps (a job name, a work directory, ...): a longer
/// value is cut there and a warning says so. The job is always kept.
pub const MAX_FIELD_BYTES: usize = 4096;
/// The most warnings a record keeps; one more says how many were left out.
pub const MAX_WARNINGS: usize = 32;

impl SpoolRecord {
    /// Bounds the record so that its JSON stays under [`MAX_RECORD_BYTES`] whatever the job
    /// looked like: every text field to [`MAX_FIELD_BYTES`] (a warning names the field and its
    /// length), at most [`MAX_WARNINGS`] warnings; and should it still be too large (a node
    /// list expanding to a very large job), the expansions are dropped (the lists as Slurm gave
    /// them stay) and then the given lists are cut too. Nothing makes the job itself disappear.
    pub fn bounded(mut self) -> SpoolRecord {
        let mut warnings = Vec::new();
        let mut cut = |name: &str, text: &mut Text| {
            if text.as_bytes().len() > MAX_FIELD_BYTES {
                warnings.push(format!(
                    "{name} cut from {} to {MAX_FIELD_BYTES} bytes",
                    text.as_bytes().len()
                ));
                *text = Text::from_bytes(text.as_bytes()[..MAX_FIELD_BYTES].to_vec());
            }
        };
        for (name, field) in [
            ("cluster", &mut self.cluster),
            ("user", &mut self.user),
            ("group", &mut self.group),
            ("account", &mut self.account),
            ("partition", &mut self.partition),
            ("job_name", &mut self.job_name),
            ("work_dir", &mut self.work_dir),
        ] {
            if let Some(text) = field.as_mut() {
                cut(name, text);
            }
        }
        cut("host", &mut self.host);
        for w in &mut self.warnings {
            if w.len() > MAX_FIELD_BYTES {
                let mut end = MAX_FIELD_BYTES;
                while !w.is_char_boundary(end) {
                    end -= 1;
                }
                w.truncate(end);
            }
        }
        self.warnings.extend(warnings);
        if self.warnings.len() > MAX_WARNINGS {
            let left_out = self.warnings.len() - (MAX_WARNINGS - 1);
            self.warnings.truncate(MAX_WARNINGS - 1);
            self.warnings
                .push(format!("{left_out} more warning(s) left out"));
        }
        let size = |r: &SpoolRecord| serde_json::to_vec(r).map_or(usize::MAX, |v| v.len());
        if size(&self) > MAX_RECORD_BYTES {
            let mut dropped = Vec::new();
            if let Some(nodes) = self.nodes.as_mut().filter(|n| !n.expanded.is_empty()) {
                dropped.push(format!("{} expanded node names", nodes.expanded.len()));
                nodes.expanded = Vec::new();
            }
            if let Some(cpus) = self
                .cpus_per_node
                .as_mut()
                .filter(|c| !c.expanded.is_empty())
            {
                dropped.push(format!("{} expanded CPU counts", cpus.expanded.len()));
                cpus.expanded = Vec::new();
            }
            if size(&self) > MAX_RECORD_BYTES {
                for given in [
                    self.nodes.as_mut().map(|n| &mut n.given),
                    self.cpus_per_node.as_mut().map(|c| &mut c.given),
                ]
                .into_iter()
                .flatten()
                {
                    if given.as_bytes().len() > MAX_FIELD_BYTES {
                        dropped.push(format!("the given list past {MAX_FIELD_BYTES} bytes"));
                        *given = Text::from_bytes(given.as_bytes()[..MAX_FIELD_BYTES].to_vec());
                    }
                }
            }
            self.warnings.push(format!(
                "the record would exceed {MAX_RECORD_BYTES} bytes: left out {}",
                dropped.join(", ")
            ));
        }
        self
    }

    pub fn key(&self) -> JobKey {
        JobKey {
            cluster: self.cluster.clone().unwrap_or_default(),
            job_id: self.job_id,
            restart_count: self.restart_count.unwrap_or(0),
        }
    }

    /// Parses a record, rejecting unknown versions and fields with a message that says which.
    pub fn from_json(bytes: &[u8]) -> Result<SpoolRecord, String> {
        #[derive(Deserialize)]
        struct VersionOnly {
            schema_version: u32,
        }
        let version: VersionOnly = serde_json::from_slice(bytes)
            .map_err(|e| format!("not a spool record (no readable schema_version): {e}"))?;
        if version.schema_version != SCHEMA_VERSION {
            return Err(format!(
                "unsupported schema_version {} (this build reads {SCHEMA_VERSION})",
                version.schema_version
            ));
        }
        serde_json::from_slice(bytes).map_err(|e| format!("invalid spool record: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The path of the committed schema. The crate's directory is read when the test runs (cargo
    /// sets it), not when it was compiled: test binaries in a shared target directory may have
    /// been built from another checkout.
    fn schema_file() -> String {
        let dir = std::env::var("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
        format!("{dir}/../schemas/spool-record.v1.json")
    }

    fn generated_schema() -> String {
        let mut schema = serde_json::to_value(schemars::schema_for!(SpoolRecord)).unwrap();
        let object = schema.as_object_mut().unwrap();
        object.insert(
            "$id".into(),
            "https://jobsight.example.org/schemas/spool-record.v1.json".into(),
        );
        object.insert("title".into(), "jobsight spool record, version 1".into());
        serde_json::to_string_pretty(&schema).unwrap() + "\n"
    }

    /// The committed schema is exactly what the code accepts. Regenerate it after a deliberate
    /// change with `JOBSIGHT_UPDATE_SCHEMAS=1 cargo test -p jobsight-slurm-hooks schema`.
    #[test]
    fn schema_file_matches_the_code() {
        let generated = generated_schema();
        let file = schema_file();
        if std::env::var_os("JOBSIGHT_UPDATE_SCHEMAS").is_some() {
            std::fs::write(&file, &generated).unwrap();
        }
        let committed =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("cannot read {file}: {e}"));
        assert!(
            committed == generated,
            "{file} differs from the record types: bump SCHEMA_VERSION if old readers would \
             misread the change, then regenerate with JOBSIGHT_UPDATE_SCHEMAS=1.\n--- generated ---\n{generated}"
        );
    }

    #[test]
    fn exit_status_from_raw_and_text() {
        let s = ExitStatus::new(Some(768), Some("3:0".into()));
        assert_eq!((s.code, s.signal), (Some(3), Some(0)));
        // OUT_OF_MEMORY as seen on Slurm 22.05: raw 253 = core flag 0x80 | 125.
        let s = ExitStatus::new(Some(253), None);
        assert_eq!((s.code, s.signal), (Some(0), Some(125)));
        let s = ExitStatus::new(None, Some("garbage".into()));
        assert_eq!((s.code, s.signal), (None, None));
    }

    #[test]
    fn rejects_other_versions_and_unknown_fields() {
        let err = SpoolRecord::from_json(br#"{"schema_version": 2}"#).unwrap_err();
        assert!(err.contains("unsupported schema_version 2"), "{err}");
        let err = SpoolRecord::from_json(b"[1,2]").unwrap_err();
        assert!(err.contains("not a spool record"), "{err}");
    }
}
