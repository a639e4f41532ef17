//! One reader for the JSON of every Slurm release: the shapes in which `sacct --json`,
//! `squeue --json` and slurmrestd print a number, a state and a step id, from Slurm 22.05
//! (openapi `dbv0.0.38`) to 26.05 (`data_parser/v0.0.45`).
//!
//! Why it exists: each release since 23.02 dumps its records through another `data_parser`
//! plugin, and the same figure changes shape between them. A time limit is `10` in 22.05 and
//! `{"set": true, "infinite": false, "number": 10}` from 23.02; "no value" is `null`, a 32- or
//! 64-bit marker (`4294967294`, `18446744073709551614`), its signed print (`-2`) or `"set":
//! false`; a state is `"COMPLETED"` or `["FAILED", "REQUEUED"]`; a step id is `"batch"`, `4`,
//! `{"job_id": 12, "step_id": "batch"}` or `"12.batch"`. The readers here take every one of
//! those shapes and give one value, so the callers ([`super::sacct`], [`super::sacct_steps`],
//! [`super::squeue`]) never see a release. Nothing is trusted: a shape no release prints (a
//! string where a number goes, a negative count) is an error saying what was found, for the
//! caller to name the job and the field.

use serde_json::Value;

/// The `data_parser` versions whose shapes this reader was written against, oldest first, with
/// the Slurm release whose CLI prints each by default. An answer of a version not in this list
/// is read as far as it can be and the version is named in the job's note.
pub const KNOWN_PARSERS: [(&str, &str); 8] = [
    ("v0.0.38", "22.05"),
    ("v0.0.39", "23.02"),
    ("v0.0.40", "23.11"),
    ("v0.0.41", "24.05"),
    ("v0.0.42", "24.11"),
    ("v0.0.43", "25.05"),
    ("v0.0.44", "25.11"),
    ("v0.0.45", "26.05"),
];

/// Slurm's "no value" and "infinite" markers of 16, 32 and 64 bits (`NO_VAL16` … `INFINITE64`).
const NO_VAL: u64 = 0xffff_fffe;
const INFINITE: u64 = 0xffff_ffff;
const NO_VAL64: u64 = 0xffff_ffff_ffff_fffe;
const INFINITE64: u64 = u64::MAX;

/// A number as Slurm meant it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Number {
    Value(u64),
    /// No value: `null`, `"set": false`, or one of the `NO_VAL` markers.
    Unset,
    /// `"infinite": true` or one of the `INFINITE` markers (no time limit, say).
    Infinite,
}

impl Number {
    /// The value, `None` for unset and infinite.
    pub fn value(self) -> Option<u64> {
        match self {
            Number::Value(n) => Some(n),
            Number::Unset | Number::Infinite => None,
        }
    }
}

/// Reads a number in any shape a release prints: a plain integer, a marker, its signed print
/// (`-2` for `NO_VAL64`, `-1` for `INFINITE64`), `null`, or `{"set", "infinite", "number"}`.
/// `markers32` says whether the 32-bit markers mean "no value" here: they do for 32-bit fields
/// (counts, minutes, 22.05's times), but a 64-bit figure (bytes, joules) may truly be that large.
pub fn number_with(value: &Value, markers32: bool) -> Result<Number, String> {
    match value {
        Value::Null => Ok(Number::Unset),
        Value::Number(n) => {
            if let Some(n) = n.as_u64() {
                Ok(match n {
                    NO_VAL64 => Number::Unset,
                    INFINITE64 => Number::Infinite,
                    NO_VAL if markers32 => Number::Unset,
                    INFINITE if markers32 => Number::Infinite,
                    n => Number::Value(n),
                })
            } else {
                match n.as_i64() {
                    Some(-2) => Ok(Number::Unset),
                    Some(-1) => Ok(Number::Infinite),
                    Some(n) => Err(format!("{n} is negative")),
                    // A fraction: no field read through here has one.
                    None => Err(format!("{n} is not a whole number")),
                }
            }
        }
        Value::Object(o) => {
            let flag = |key: &str, default: bool| match o.get(key) {
                None => Ok(default),
                Some(Value::Bool(b)) => Ok(*b),
                Some(other) => Err(format!("{key} is {} instead of true or false", kind(other))),
            };
            let (set, infinite) = (flag("set", true)?, flag("infinite", false)?);
            if infinite {
                return Ok(Number::Infinite);
            }
            if !set {
                return Ok(Number::Unset);
            }
            match o.get("number") {
                // `{"set": true}` alone, or a nested object: neither is a release's print.
                None => Err("an object without its number".into()),
                Some(Value::Object(_)) => Err("a number object inside a number object".into()),
                Some(inner) => number_with(inner, markers32),
            }
        }
        other => Err(format!("{} where a number goes", kind(other))),
    }
}

/// [`number_with`] for a 32-bit field (counts, minutes, seconds since the epoch).
pub fn number(value: &Value) -> Result<Number, String> {
    number_with(value, true)
}

/// A whole number of at most 32 bits; `None` for unset and infinite.
pub fn number32(value: &Value) -> Result<Option<u32>, String> {
    match number(value)? {
        Number::Value(n) => u32::try_from(n)
            .map(Some)
            .map_err(|_| format!("{n} is out of range")),
        Number::Unset | Number::Infinite => Ok(None),
    }
}

/// What a JSON value is, for an error message (never its content, which may be huge or hostile).
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "true or false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A string field; `None` for `null` or an empty string (how later releases print "none").
pub fn text(value: &Value) -> Result<Option<String>, String> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) if s.is_empty() => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        other => Err(format!("{} where a text goes", kind(other))),
    }
}

/// The flags Slurm names before a job's base state, in the order of `job_state_string()`
/// (`src/common/slurm_protocol_defs.c`), which is how `sacct -o State` and 22.05's JSON print a
/// state with flags: a failed run that was requeued is `REQUEUED`, not `FAILED`.
const NAMED_FLAGS: [&str; 12] = [
    "COMPLETING",
    "STAGE_OUT",
    "CONFIGURING",
    "RESIZING",
    "REQUEUED",
    "REQUEUE_FED",
    "REQUEUE_HOLD",
    "SPECIAL_EXIT",
    "STOPPED",
    "REVOKED",
    "RESV_DEL_HOLD",
    "SIGNALING",
];

/// A job's or step's state in any shape: `"COMPLETED"` (22.05) or a list of the base state and
/// its flags (`["FAILED", "REQUEUED"]`, 23.02 on), as the one name `sacct -o State` prints.
/// `None` for `null`, an empty string or an empty list.
pub fn state(value: &Value) -> Result<Option<String>, String> {
    let names: Vec<&str> = match value {
        Value::Null => return Ok(None),
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .ok_or_else(|| format!("a state list holding {}", kind(item)))
            })
            .collect::<Result<_, _>>()?,
        other => return Err(format!("{} where a state goes", kind(other))),
    };
    let names: Vec<&str> = names.into_iter().filter(|n| !n.is_empty()).collect();
    if let Some(bad) = names.iter().find(|n| !is_state_name(n)) {
        return Err(format!("{:?} is no state name", printable_prefix(bad)));
    }
    let flagged = NAMED_FLAGS.iter().find(|flag| names.contains(flag));
    Ok(flagged
        .copied()
        .or_else(|| names.first().copied())
        .map(String::from))
}

/// Slurm's state and flag names are capital letters and underscores, and short.
fn is_state_name(name: &str) -> bool {
    name.len() <= 32 && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
}

/// At most 40 characters of `s`, for an error message about it.
fn printable_prefix(s: &str) -> String {
    jobsight_base::text::printable(&s.chars().take(40).collect::<String>())
}

/// Slurm's step ids of the special steps (`SLURM_*_STEP`/`SLURM_*_CONT`, 32-bit) and their names.
const SPECIAL_STEPS: [(u64, &str); 4] = [
    (0xffff_fffa, "interactive"),
    (0xffff_fffb, "batch"),
    (0xffff_fffc, "extern"),
    (0xffff_fffd, "pending"),
];

/// A step id in any shape, as the name `sacct` prints after the job id's dot: `batch`,
/// `extern`, `interactive`, `pending`, a number, or `N+C` for a heterogeneous job's component.
/// Shapes: a name or number (22.05), `{"job_id": 12, "step_het_component": 1, "step_id": "0"}`
/// (23.02, the component left out when there is none), `"12.batch"` or `"12.0+1"` (23.11 on). `job_id` is the record's own id: a step of another job is an error.
pub fn step_id(value: &Value, job_id: Option<u64>) -> Result<String, String> {
    let id = match value {
        Value::Object(o) => {
            if let (Some(owner), Some(job)) = (o.get("job_id"), job_id) {
                match number(owner)? {
                    Number::Value(owner) if owner != job => {
                        return Err(format!("a step of job {owner}"));
                    }
                    _ => {}
                }
            }
            let inner = o
                .get("step_id")
                .or_else(|| o.get("id"))
                .ok_or("a step id object without its step_id")?;
            let id = step_id(inner, None)?;
            // 23.02 puts a heterogeneous job's component beside the id (left out when none).
            return match o.get("step_het_component").map(number32).transpose()? {
                Some(Some(component)) if !id.contains('+') => Ok(format!("{id}+{component}")),
                _ => Ok(id),
            };
        }
        Value::Number(_) => match number(value)? {
            Number::Value(n) => special_step(n),
            Number::Unset | Number::Infinite => return Err("no step id".into()),
        },
        Value::String(s) => {
            // `12.batch`, `12_3.0`, `12+1.0`: the part before the first dot names the job (its
            // array and het parts are the record's), the rest is the step.
            let step = match s.split_once('.') {
                // A plain id must be the record's own; `A_T` and `A+C` name it another way.
                Some((job, _))
                    if job
                        .parse::<u64>()
                        .ok()
                        .zip(job_id)
                        .is_some_and(|(a, b)| a != b) =>
                {
                    return Err(format!("a step of job {job}"));
                }
                Some((job, step)) if is_job_id_text(job) => step,
                Some(_) => return Err(format!("{:?} is no step id", printable_prefix(s))),
                None => s.as_str(),
            };
            if let Ok(n) = step.parse::<u64>() {
                special_step(n)
            } else {
                step.to_string()
            }
        }
        other => return Err(format!("{} where a step id goes", kind(other))),
    };
    if is_step_name(&id) {
        Ok(id)
    } else {
        Err(format!("{:?} is no step id", printable_prefix(&id)))
    }
}

fn special_step(n: u64) -> String {
    SPECIAL_STEPS
        .iter()
        .find(|(id, _)| *id == n)
        .map_or_else(|| n.to_string(), |(_, name)| (*name).to_string())
}

/// `12`, `12_3`, `12+1`: digits joined by one `_` or `+`.
fn is_job_id_text(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 24
        && text
            .split(['_', '+'])
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
}

/// A step name as jobsight stores it: a special name, or digits with an optional `+component`.
fn is_step_name(id: &str) -> bool {
    matches!(id, "batch" | "extern" | "interactive" | "pending" | "TBD")
        || (id.len() <= 24 && is_job_id_text(id) && !id.contains('_'))
}

/// The `data_parser` version an answer was printed with (`v0.0.44`), from its `meta`: 22.05
/// names it `openapi/dbv0.0.38` (or `openapi/v0.0.38` for `squeue`), later releases
/// `data_parser/v0.0.4x`. `None` when the answer does not say.
pub fn parser_version(root: &Value) -> Option<String> {
    let plugin = root.pointer("/meta/plugin")?;
    let named = |key: &str| plugin.get(key).and_then(Value::as_str);
    let text = named("data_parser").or_else(|| named("type"))?;
    let version = text.rsplit(['/', 'b']).next()?.trim_start_matches("db");
    let valid = version.len() <= 16
        && version.starts_with('v')
        && version[1..].split('.').all(|p| p.parse::<u32>().is_ok());
    valid.then(|| version.to_string())
}

/// The release an answer names (`25.11.0`), for a note; `None` when it names none.
pub fn release(root: &Value) -> Option<String> {
    let meta = root.get("meta")?;
    let release = meta
        .pointer("/slurm/release")
        .or_else(|| meta.pointer("/Slurm/release"))?
        .as_str()?;
    let valid = release.len() <= 32
        && release
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
    valid.then(|| release.to_string())
}

/// Whether an answer's parser version is one this reader was written against.
pub fn is_known_parser(version: &str) -> bool {
    KNOWN_PARSERS.iter().any(|(known, _)| *known == version)
}

/// What to say of an answer whose parser this reader does not know (`None` when it knows it or
/// the answer names none, which 22.05's `sacct` sometimes does not).
pub fn unknown_parser_note(root: &Value) -> Option<String> {
    let version = parser_version(root)?;
    if is_known_parser(&version) {
        return None;
    }
    let newest = KNOWN_PARSERS[KNOWN_PARSERS.len() - 1];
    Some(format!(
        "Slurm {} printed its JSON with data_parser {version}, which this jobsight does not know \
         (it knows up to {} of Slurm {}): read as far as it could be",
        release(root).unwrap_or_else(|| "(release not named)".into()),
        newest.0,
        newest.1
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    proptest::proptest! {
        /// Every shape a release prints a number in gives the same value.
        #[test]
        fn every_number_shape_gives_the_same_value(n in 0u64..0xffff_fff0) {
            let shapes = [
                json!(n),
                json!({"set": true, "infinite": false, "number": n}),
                json!({"number": n}),
                json!({"set": true, "number": n}),
            ];
            for shape in shapes {
                proptest::prop_assert_eq!(number(&shape), Ok(Number::Value(n)));
            }
            let unset = [
                json!(null),
                json!({"set": false, "infinite": false, "number": n}),
                json!(NO_VAL),
                json!(NO_VAL64),
                json!(-2),
            ];
            for shape in unset {
                proptest::prop_assert_eq!(number(&shape), Ok(Number::Unset));
            }
            let infinite = [
                json!({"set": true, "infinite": true, "number": n}),
                json!({"set": false, "infinite": true, "number": 0}),
                json!(INFINITE),
                json!(INFINITE64),
                json!(-1),
            ];
            for shape in infinite {
                proptest::prop_assert_eq!(number(&shape), Ok(Number::Infinite));
            }
        }

        /// Anything at all: an answer, never a panic.
        #[test]
        fn any_value_is_read_or_refused(text in ".{0,64}") {
            if let Ok(value) = serde_json::from_str::<Value>(&text) {
                let _ = number(&value);
                let _ = state(&value);
                let _ = step_id(&value, Some(1));
                let _ = text_of(&value);
            }
        }
    }

    fn text_of(value: &Value) -> Result<Option<String>, String> {
        text(value)
    }

    #[test]
    fn shapes_no_release_prints_are_refused() {
        assert!(number(&json!("12")).unwrap_err().contains("a string"));
        assert!(number(&json!(-5)).unwrap_err().contains("negative"));
        assert!(number(&json!(1.5)).unwrap_err().contains("whole"));
        assert!(number(&json!({"set": true})).is_err());
        assert!(number(&json!({"number": {"number": 1}})).is_err());
        assert!(number(&json!({"set": "yes", "number": 1})).is_err());
        assert_eq!(
            number32(&json!(5_000_000_000u64)).unwrap_err(),
            "5000000000 is out of range"
        );
        // 64-bit figures keep a value that happens to be a 32-bit marker.
        assert_eq!(
            number_with(&json!(NO_VAL), false),
            Ok(Number::Value(NO_VAL))
        );
    }

    #[test]
    fn states_in_every_shape() {
        assert_eq!(
            state(&json!("COMPLETED")).unwrap().as_deref(),
            Some("COMPLETED")
        );
        assert_eq!(
            state(&json!(["COMPLETED"])).unwrap().as_deref(),
            Some("COMPLETED")
        );
        assert_eq!(
            state(&json!(["FAILED", "REQUEUED"])).unwrap().as_deref(),
            Some("REQUEUED")
        );
        assert_eq!(
            state(&json!(["RUNNING", "COMPLETING"])).unwrap().as_deref(),
            Some("COMPLETING")
        );
        assert_eq!(
            state(&json!(["CANCELLED", "LAUNCH_FAILED"]))
                .unwrap()
                .as_deref(),
            Some("CANCELLED")
        );
        assert_eq!(state(&json!([])).unwrap(), None);
        assert_eq!(state(&json!(null)).unwrap(), None);
        assert!(state(&json!([1])).is_err());
        assert!(state(&json!("rm -rf /")).is_err());
        assert!(state(&json!({"current": "X"})).is_err());
    }

    #[test]
    fn step_ids_in_every_shape() {
        let id = |v: Value| step_id(&v, Some(12));
        for batch in [
            json!("batch"),
            json!(0xffff_fffbu64),
            json!("4294967291"),
            json!({"job_id": 12, "step_id": "batch"}),
            json!({"job_id": 12, "step_id": 0xffff_fffbu64}),
            json!({"job_id": {"set": true, "infinite": false, "number": 12}, "step_id": "batch"}),
            json!("12.batch"),
            json!("12_3.batch"),
            json!("12+1.batch"),
        ] {
            assert_eq!(id(batch.clone()).as_deref(), Ok("batch"), "{batch}");
        }
        assert_eq!(id(json!("12.extern")).as_deref(), Ok("extern"));
        assert_eq!(id(json!(0xffff_fffcu64)).as_deref(), Ok("extern"));
        assert_eq!(id(json!(3)).as_deref(), Ok("3"));
        assert_eq!(id(json!("12.3")).as_deref(), Ok("3"));
        assert_eq!(id(json!({"job_id": 12, "step_id": 0})).as_deref(), Ok("0"));
        assert_eq!(
            id(json!({"job_id": 12, "step_het_component": 1, "step_id": "0"})).as_deref(),
            Ok("0+1")
        );
        assert_eq!(id(json!("12.0+1")).as_deref(), Ok("0+1"));
        assert!(id(json!("13.batch")).unwrap_err().contains("job 13"));
        assert!(
            id(json!({"job_id": 13, "step_id": "batch"}))
                .unwrap_err()
                .contains("job 13")
        );
        assert!(id(json!("../x.batch")).is_err());
        assert!(id(json!("12.batch;rm")).is_err());
        assert!(id(json!("")).is_err());
        assert!(id(json!(null)).is_err());
        assert!(id(json!(["batch"])).is_err());
    }

    #[test]
    fn parser_versions_and_releases() {
        let old = json!({"meta": {"plugin": {"type": "openapi/dbv0.0.38"},
                                  "Slurm": {"release": "22.05.8"}}});
        assert_eq!(parser_version(&old).as_deref(), Some("v0.0.38"));
        assert_eq!(release(&old).as_deref(), Some("22.05.8"));
        let new = json!({"meta": {"plugin": {"type": "openapi/slurmdbd",
                                             "data_parser": "data_parser/v0.0.44"},
                                  "slurm": {"release": "25.11.0"}}});
        assert_eq!(parser_version(&new).as_deref(), Some("v0.0.44"));
        assert_eq!(unknown_parser_note(&new), None);
        let future = json!({"meta": {"plugin": {"data_parser": "data_parser/v0.0.47"},
                                     "slurm": {"release": "27.05.1"}}});
        let note = unknown_parser_note(&future).unwrap();
        assert!(
            note.contains("v0.0.47") && note.contains("27.05.1"),
            "{note}"
        );
        assert_eq!(
            parser_version(&json!({"meta": {"plugin": {"type": "x/evil\n"}}})),
            None
        );
        assert_eq!(parser_version(&json!({})), None);
    }
}
