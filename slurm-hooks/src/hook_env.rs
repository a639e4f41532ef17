//! Turns the environment Slurm gives an epilog into a [`SpoolRecord`].
//!
//! What each hook receives (verified on Slurm 22.05.8, see the README): both get the job id, user,
//! uid/gid, partition, cluster, node count, CPUs per node, exit codes, restart count and work dir;
//! only `EpilogSlurmctld` gets the job name, group, account, `SLURM_JOB_NODELIST` and the array
//! variables; only `Epilog` gets `SLURM_NODELIST` and `SLURMD_NODENAME`. Neither gets `PATH`.
//!
//! [`record_from_env`] is pure: the environment, the host name and the time are passed in, so tests
//! feed it any bytes. It fails only when the record would be useless (no numeric job id); every
//! other problem becomes a warning inside the record.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};

use chrono::{DateTime, Utc};

use crate::hostlist;
use crate::record::{CpusPerNode, ExitStatus, Hook, NodeList, SCHEMA_VERSION, SpoolRecord};
use crate::text::Text;

/// Why no record could be made at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookEnvError {
    #[error("SLURM_JOB_ID is not set: not running as a Slurm epilog")]
    NoJobId,
    #[error("SLURM_JOB_ID is not a job number: {0}")]
    BadJobId(String),
}

/// Environment lookup that keeps raw bytes.
struct Env(HashMap<OsString, OsString>);

impl Env {
    fn raw(&self, name: &str) -> Option<&OsStr> {
        self.0.get(OsStr::new(name)).map(OsString::as_os_str)
    }

    fn text(&self, name: &str) -> Option<Text> {
        self.raw(name).map(Text::from)
    }

    /// A value that must be ASCII to mean anything (numbers, code:signal, host lists).
    fn ascii(&self, name: &str, warnings: &mut Vec<String>) -> Option<String> {
        let raw = self.raw(name)?;
        match raw.to_str() {
            Some(s) if s.is_ascii() => Some(s.to_string()),
            _ => {
                warnings.push(format!(
                    "{name} is not ASCII: \"{}\"",
                    Text::from(raw).escaped()
                ));
                None
            }
        }
    }

    fn number<T: std::str::FromStr>(&self, name: &str, warnings: &mut Vec<String>) -> Option<T> {
        let s = self.ascii(name, warnings)?;
        match s.trim().parse() {
            Ok(n) => Some(n),
            Err(_) => {
                warnings.push(format!(
                    "{name} is not a number: \"{}\"",
                    Text::from(s.as_str()).escaped()
                ));
                None
            }
        }
    }
}

/// Builds the record for one hook run from its environment.
///
/// `hostname` is the kernel's host name, used when Slurm does not name the node (on the
/// controller). `now` is the enqueue time.
pub fn record_from_env<I>(
    vars: I,
    hostname: &str,
    now: DateTime<Utc>,
) -> Result<SpoolRecord, HookEnvError>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let env = Env(vars.into_iter().collect());
    let mut warnings = Vec::new();

    let job_id = match env.raw("SLURM_JOB_ID").or_else(|| env.raw("SLURM_JOBID")) {
        None => return Err(HookEnvError::NoJobId),
        Some(raw) => raw
            .to_str()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .ok_or_else(|| HookEnvError::BadJobId(format!("\"{}\"", Text::from(raw).escaped())))?,
    };

    // Which hook: Slurm says so; failing that, only Epilog has SLURMD_NODENAME.
    let context = env.ascii("SLURM_SCRIPT_CONTEXT", &mut warnings);
    let hook = match context.as_deref().and_then(Hook::parse) {
        Some(hook) => hook,
        None => {
            let guess = if env.raw("SLURMD_NODENAME").is_some() {
                Hook::EpilogSlurmd
            } else {
                Hook::EpilogSlurmctld
            };
            warnings.push(format!(
                "SLURM_SCRIPT_CONTEXT is {}: assumed {}",
                context.map_or("missing".to_string(), |c| format!(
                    "\"{}\"",
                    Text::from(c.as_str()).escaped()
                )),
                guess.as_str()
            ));
            guess
        }
    };

    let nodes = env
        .ascii("SLURM_JOB_NODELIST", &mut warnings)
        .or_else(|| env.ascii("SLURM_NODELIST", &mut warnings))
        .map(|given| {
            // Names beyond what a record may hold would be dropped from it anyway: not made.
            let expanded = hostlist::expand_within(&given, crate::record::MAX_RECORD_BYTES)
                .unwrap_or_else(|e| {
                    warnings.push(e.to_string());
                    Vec::new()
                });
            NodeList {
                given: Text::from(given.as_str()),
                expanded,
            }
        });

    let cpus_per_node = env
        .ascii("SLURM_JOB_CPUS_PER_NODE", &mut warnings)
        .map(|given| {
            let expanded = hostlist::expand_counts(&given).unwrap_or_else(|e| {
                warnings.push(format!("SLURM_JOB_CPUS_PER_NODE: {e}"));
                Vec::new()
            });
            CpusPerNode {
                given: Text::from(given.as_str()),
                expanded,
            }
        });

    let exit_code = exit_status(
        &env,
        "SLURM_JOB_EXIT_CODE",
        Some("SLURM_JOB_EXIT_CODE2"),
        &mut warnings,
    );
    let derived_exit_code = exit_status(&env, "SLURM_JOB_DERIVED_EC", None, &mut warnings);

    // Slurm writes "(null)" for a job without an account.
    let account = env
        .text("SLURM_JOB_ACCOUNT")
        .filter(|a| a.as_bytes() != b"(null)");

    let host = env
        .text("SLURMD_NODENAME")
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| Text::from(hostname));

    let record = SpoolRecord {
        schema_version: SCHEMA_VERSION,
        cluster: env.text("SLURM_CLUSTER_NAME"),
        job_id,
        array_job_id: env.number("SLURM_ARRAY_JOB_ID", &mut warnings),
        array_task_id: env.number("SLURM_ARRAY_TASK_ID", &mut warnings),
        restart_count: env.number("SLURM_JOB_RESTART_COUNT", &mut warnings),
        user: env.text("SLURM_JOB_USER"),
        uid: env.number("SLURM_JOB_UID", &mut warnings),
        gid: env.number("SLURM_JOB_GID", &mut warnings),
        group: env.text("SLURM_JOB_GROUP"),
        account,
        partition: env.text("SLURM_JOB_PARTITION"),
        job_name: env.text("SLURM_JOB_NAME"),
        nodes,
        num_nodes: env.number("SLURM_JOB_NUM_NODES", &mut warnings),
        cpus_per_node,
        exit_code,
        derived_exit_code,
        work_dir: env.text("SLURM_JOB_WORK_DIR"),
        hook,
        host,
        enqueued_at: now,
        warnings,
    };
    // Bounded here, so that a hostile job name or a huge node list never makes a record the
    // claim would reject: the job is kept, cut fields are named in the warnings.
    Ok(record.bounded())
}

fn exit_status(
    env: &Env,
    raw_var: &str,
    text_var: Option<&str>,
    warnings: &mut Vec<String>,
) -> Option<ExitStatus> {
    let wait_status = env.number::<u32>(raw_var, warnings);
    let code_signal = text_var.and_then(|v| env.ascii(v, warnings));
    if let (Some(var), Some(text)) = (text_var, &code_signal)
        && crate::record::parse_code_signal(text).is_none()
    {
        warnings.push(format!(
            "{var} is not code:signal: \"{}\"",
            Text::from(text.as_str()).escaped()
        ));
    }
    if wait_status.is_none() && code_signal.is_none() {
        return None;
    }
    Some(ExitStatus::new(wait_status, code_signal))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    fn env(pairs: &[(&str, &[u8])]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from_vec(v.to_vec())))
            .collect()
    }

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000, 123_000).unwrap()
    }

    /// The environment EpilogSlurmctld had for `sbatch --array=1-2 --wrap 'exit 3'` (Slurm 22.05.8).
    fn slurmctld_env() -> Vec<(OsString, OsString)> {
        env(&[
            ("PWD", b"/var/log/slurm"),
            ("SLURM_ARRAY_JOB_ID", b"2"),
            ("SLURM_ARRAY_TASK_ID", b"1"),
            ("SLURM_CLUSTER_NAME", b"ci"),
            ("SLURM_JOB_ACCOUNT", b"research"),
            ("SLURM_JOB_CPUS_PER_NODE", b"2(x2),1"),
            ("SLURM_JOB_DERIVED_EC", b"0"),
            ("SLURM_JOB_EXIT_CODE2", b"3:0"),
            ("SLURM_JOB_EXIT_CODE", b"768"),
            ("SLURM_JOB_GID", b"1001"),
            ("SLURM_JOB_GROUP", b"alice"),
            ("SLURM_JOB_ID", b"4"),
            ("SLURM_JOB_NAME", b"arr"),
            ("SLURM_JOB_NODELIST", b"node[01-02],gpu7"),
            ("SLURM_JOB_NUM_NODES", b"3"),
            ("SLURM_JOB_PARTITION", b"debug"),
            ("SLURM_JOB_RESTART_COUNT", b"0"),
            ("SLURM_JOB_UID", b"1001"),
            ("SLURM_JOB_USER", b"alice"),
            ("SLURM_JOB_WORK_DIR", b"/tmp"),
            ("SLURM_SCRIPT_CONTEXT", b"epilog_slurmctld"),
        ])
    }

    /// A hostile job name, work directory and a node list naming half a million nodes still
    /// give a record the claim accepts: the job is kept, what was cut is named.
    #[test]
    fn every_record_fits_the_claims_limit() {
        let name = vec![b'\x1b'; 100_000];
        let vars = env(&[
            ("SLURM_JOB_ID", b"7"),
            ("SLURM_SCRIPT_CONTEXT", b"epilog_slurmctld"),
            ("SLURM_JOB_NAME", &name),
            ("SLURM_JOB_WORK_DIR", &vec![b'/'; 50_000]),
            ("SLURM_JOB_NODELIST", b"n[0-499999]"),
            ("SLURM_JOB_CPUS_PER_NODE", b"64(x500000)"),
        ]);
        let r = record_from_env(vars, "ctl", now()).unwrap();
        let json = serde_json::to_vec(&r).unwrap();
        assert!(
            json.len() <= crate::record::MAX_RECORD_BYTES,
            "{}",
            json.len()
        );
        assert_eq!(r.job_id, 7);
        assert_eq!(
            r.job_name.as_ref().unwrap().as_bytes().len(),
            crate::record::MAX_FIELD_BYTES
        );
        let warnings = r.warnings.join("\n");
        assert!(
            warnings.contains("job_name cut from 100000 to 4096 bytes"),
            "{warnings}"
        );
        // Half a million names would not fit the record: not expanded at all, and said so.
        assert!(
            warnings.contains("\"n[0-499999]\": expands to more than 1024 KiB of names"),
            "{warnings}"
        );
        assert!(r.nodes.as_ref().unwrap().expanded.is_empty());
        assert_eq!(r.nodes.as_ref().unwrap().given.as_bytes(), b"n[0-499999]");
    }

    proptest::proptest! {
        // Few cases: each builds and serialises records of up to 128 KiB of values.
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        /// Whatever the values (any bytes, any length up to 64 KiB), the record fits.
        #[test]
        fn any_environment_gives_a_record_that_fits(
            name in proptest::collection::vec(proptest::num::u8::ANY, 0..65_536),
            dir in proptest::collection::vec(proptest::num::u8::ANY, 0..65_536),
            nodes in "[a-z]{0,20}(\\[[0-9]{1,6}-[0-9]{1,6}\\])?",
        ) {
            let vars = env(&[
                ("SLURM_JOB_ID", b"7"),
                ("SLURM_JOB_NAME", &name),
                ("SLURM_JOB_WORK_DIR", &dir),
                ("SLURM_JOB_NODELIST", nodes.as_bytes()),
            ]);
            let r = record_from_env(vars, "ctl", now()).unwrap();
            let json = serde_json::to_vec(&r).unwrap();
            proptest::prop_assert!(json.len() <= crate::record::MAX_RECORD_BYTES);
            proptest::prop_assert!(SpoolRecord::from_json(&json).is_ok());
        }
    }

    #[test]
    fn slurmctld_environment_gives_a_complete_record() {
        let r = record_from_env(slurmctld_env(), "ctl", now()).unwrap();
        assert_eq!(r.job_id, 4);
        assert_eq!(
            (r.array_job_id, r.array_task_id, r.restart_count),
            (Some(2), Some(1), Some(0))
        );
        assert_eq!(r.hook, Hook::EpilogSlurmctld);
        assert_eq!(r.host, Text::from("ctl"));
        assert_eq!(
            r.nodes.as_ref().unwrap().expanded,
            ["node01", "node02", "gpu7"]
        );
        assert_eq!(r.cpus_per_node.as_ref().unwrap().expanded, [2, 2, 1]);
        let exit = r.exit_code.as_ref().unwrap();
        assert_eq!(
            (exit.wait_status, exit.code, exit.signal),
            (Some(768), Some(3), Some(0))
        );
        assert_eq!(r.job_name, Some(Text::from("arr")));
        assert_eq!((r.uid, r.gid), (Some(1001), Some(1001)));
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    #[test]
    fn slurmd_environment_uses_its_own_variables() {
        let r = record_from_env(
            env(&[
                ("SLURM_JOB_ID", b"9"),
                ("SLURM_NODELIST", b"vm"),
                ("SLURMD_NODENAME", b"vm"),
                ("SLURM_SCRIPT_CONTEXT", b"epilog_slurmd"),
                ("SLURM_JOB_ACCOUNT", b"(null)"),
            ]),
            "kernel-name",
            now(),
        )
        .unwrap();
        assert_eq!(r.hook, Hook::EpilogSlurmd);
        assert_eq!(r.host, Text::from("vm"));
        assert_eq!(r.nodes.unwrap().expanded, ["vm"]);
        assert_eq!(r.account, None);
        assert_eq!(r.job_name, None);
    }

    #[test]
    fn hostile_values_are_kept_and_flagged_never_trusted() {
        let mut vars = slurmctld_env();
        vars.retain(|(k, _)| {
            !["SLURM_JOB_NAME", "SLURM_JOB_UID", "SLURM_JOB_NODELIST"]
                .contains(&k.to_str().unwrap())
        });
        vars.extend(env(&[
            ("SLURM_JOB_NAME", b"x\n\"}\xff\x1b[2J"),
            ("SLURM_JOB_UID", b"-1; rm -rf /"),
            ("SLURM_JOB_NODELIST", b"n[3-1]"),
        ]));
        let r = record_from_env(vars, "ctl", now()).unwrap();
        assert_eq!(
            r.job_name.as_ref().unwrap().as_bytes(),
            b"x\n\"}\xff\x1b[2J"
        );
        assert_eq!(r.uid, None);
        assert_eq!(r.nodes.as_ref().unwrap().expanded, Vec::<String>::new());
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
        // The JSON is one line and reads back to the same bytes.
        let json = serde_json::to_string(&r).unwrap();
        assert!(!json.contains('\n'));
        assert_eq!(SpoolRecord::from_json(json.as_bytes()).unwrap(), r);
    }

    #[test]
    fn no_job_id_is_the_only_fatal_problem() {
        assert_eq!(
            record_from_env(env(&[]), "h", now()).unwrap_err(),
            HookEnvError::NoJobId
        );
        let err = record_from_env(env(&[("SLURM_JOB_ID", b"12a")]), "h", now()).unwrap_err();
        assert_eq!(err, HookEnvError::BadJobId("\"12a\"".into()));
        let r = record_from_env(env(&[("SLURM_JOB_ID", b"12")]), "h", now()).unwrap();
        assert_eq!(
            r.warnings,
            ["SLURM_SCRIPT_CONTEXT is missing: assumed epilog_slurmctld"]
        );
    }
}
