//! The pipeline's log: one line per event (a run starts or ends, a step ends, a job passes a
//! step), written to stderr or any writer.
//!
//! Two formats: `text`, for a person at a terminal or reading a log file (`TIME EVENT key=value
//! ...`, values with spaces quoted, control bytes escaped so that a job name cannot forge a line),
//! and `json`, one JSON object per line, for sites that ship logs. The fields are the same in
//! both; `ts` and `event` come first.

use std::io::Write;
use std::sync::Mutex;

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

pub struct Log {
    format: LogFormat,
    out: Mutex<Box<dyn Write + Send>>,
    /// Fixed time stamps for snapshot tests.
    fixed_time: Option<String>,
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Log").field("format", &self.format).finish()
    }
}

impl Log {
    pub fn new(format: LogFormat, out: Box<dyn Write + Send>) -> Log {
        Log {
            format,
            out: Mutex::new(out),
            fixed_time: None,
        }
    }

    pub fn stderr(format: LogFormat) -> Log {
        Log::new(format, Box::new(std::io::stderr()))
    }

    /// Every line with this time stamp instead of the clock's (for tests).
    pub fn with_fixed_time(mut self, ts: &str) -> Log {
        self.fixed_time = Some(ts.to_string());
        self
    }

    /// Writes one event. A log that cannot be written is not worth stopping the pipeline for.
    pub fn event(&self, event: &str, fields: &[(&str, Value)]) {
        let ts = self.fixed_time.clone().unwrap_or_else(|| {
            jobsight_base::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        });
        let line = match self.format {
            LogFormat::Json => {
                // Written by hand to keep the fields in order (serde_json's map sorts them).
                let mut line = format!(
                    "{{\"ts\":{},\"event\":{}",
                    Value::String(ts),
                    Value::String(event.into())
                );
                for (k, v) in fields {
                    line.push_str(&format!(",{}:{v}", Value::String((*k).into())));
                }
                line.push('}');
                line
            }
            LogFormat::Text => {
                let mut line = format!("{ts} {event:<10}");
                for (k, v) in fields {
                    line.push(' ');
                    line.push_str(k);
                    line.push('=');
                    line.push_str(&text_value(v));
                }
                line
            }
        };
        if let Ok(mut out) = self.out.lock() {
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }
}

/// A value as `key=value` text: bare when it has no spaces, quotes or control bytes, else quoted
/// with escapes.
fn text_value(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Null => return "-".into(),
        other => return other.to_string(),
    };
    let bare = !s.is_empty()
        && s.chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && c != '"' && c != '=');
    if bare {
        s
    } else {
        // JSON string escaping: quotes, backslashes and every control byte.
        Value::String(s).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);
    impl Write for Buffer {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_hostile_job_name_cannot_forge_a_line() {
        let buffer = Buffer::default();
        let log = Log::new(LogFormat::Text, Box::new(buffer.clone())).with_fixed_time("T");
        log.event(
            "job",
            &[
                ("job", json!("ci:7")),
                ("reason", json!("x\n2026 job outcome=done")),
                ("rows", json!(3)),
                ("note", Value::Null),
            ],
        );
        let json_log = Log::new(LogFormat::Json, Box::new(buffer.clone())).with_fixed_time("T");
        json_log.event("step", &[("dag", json!("per-job")), ("jobs", json!(2))]);
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "T job        job=ci:7 reason=\"x\\n2026 job outcome=done\" rows=3 note=-\n\
             {\"ts\":\"T\",\"event\":\"step\",\"dag\":\"per-job\",\"jobs\":2}\n"
        );
    }
}
