//! The configuration file: one TOML file whose every key is optional.
//!
//! Raw [`Options`] (all optional, unknown keys rejected so that a typo is an error, not a silently
//! ignored setting) are resolved once into validated [`Settings`]; nothing downstream sees "unset".
//! Each stage owns its section, as written and as resolved (`jobsight_features::Options` into
//! `jobsight_features::Settings`, and so on for ingest, rules, model, notify, summary, serve and
//! report); this module composes them into one file, hands each what it needs of another (the
//! models' window to the features, the cores per node to the rules), names the file in an error,
//! and resolves only the application's own sections (`[schedule]`, `[engine]`).
//! The defaults make `jobsight demo` and a first `jobsight ingest` work with no file at all.
//! Command-line flags and their environment variables override the file (`main` does that).
//!
//! `ops/jobsight.example.toml` shows every key with its default and is parsed by a test, so it
//! cannot drift from this module.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jobsight_base::options::DAY_S;
use serde::Deserialize;

// Each stage owns its options and settings; this module composes them into one file. Re-exported
// here because they are part of the configuration file's shape.
pub use jobsight_ingest::job_exporters::JobExporter;
pub use jobsight_ingest::settings::{
    IngestOptions, IngestSettings, MetricTemplate, PrometheusOptions, PrometheusSettings,
    TelemetryKind, dcgm_metrics, default_node_exporter_metrics, job_exporter_metrics,
};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the configuration file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("configuration file {path}: {reason}")]
    Parse { path: PathBuf, reason: String },
    #[error("configuration file {path}: {key}: {reason}")]
    Invalid {
        path: PathBuf,
        key: String,
        reason: String,
    },
}

/// The file as written: every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    pub data: Option<PathBuf>,
    pub spool: Option<PathBuf>,
    pub ingest: Option<IngestOptions>,
    pub prometheus: Option<PrometheusOptions>,
    pub features: Option<jobsight_features::Options>,
    pub rules: Option<jobsight_rules::Options>,
    pub model: Option<jobsight_model::Options>,
    pub notify: Option<jobsight_notify::Options>,
    pub summary: Option<jobsight_summary::Options>,
    pub serve: Option<jobsight_warehouse::serve::Options>,
    pub report: Option<jobsight_report::Options>,
    pub schedule: Option<ScheduleOptions>,
    pub engine: Option<EngineOptions>,
    pub access: Option<crate::access::Options>,
    pub running: Option<jobsight_running::Options>,
    pub web: Option<crate::web::Options>,
}

/// `[engine]`: where admins' queries run.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineOptions {
    /// A Ballista scheduler, `df://host:port`: `jobsight sql`, `jobsight summary` and
    /// `jobsight features` (a backfill's features step too) run there (docs/ballista.md).
    pub ballista: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleOptions {
    /// A directory of site DAG files (*.toml) added to the built-in ones, or replacing one of
    /// the same name.
    pub dags: Option<PathBuf>,
    /// `dag status` calls the pipeline behind when a job has waited longer than this.
    pub behind_after_s: Option<u64>,
}

/// The scheduler's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleSettings {
    pub dags: Option<PathBuf>,
    pub behind_after: Duration,
}

/// Everything resolved and checked.
#[derive(Debug, Clone)]
pub struct Settings {
    pub data: PathBuf,
    pub spool: PathBuf,
    pub ingest: IngestSettings,
    pub prometheus: PrometheusSettings,
    pub features: jobsight_features::Settings,
    pub rules: jobsight_rules::Settings,
    pub model: jobsight_model::Settings,
    pub notify: jobsight_notify::Settings,
    pub summary: jobsight_summary::Settings,
    pub serve: jobsight_warehouse::serve::Settings,
    pub report: jobsight_report::Settings,
    pub schedule: ScheduleSettings,
    pub engine: jobsight_warehouse::query::Engine,
    pub access: crate::access::Settings,
    pub running: jobsight_running::Settings,
    pub web: crate::web::Settings,
}

pub const DEFAULT_DATA: &str = "./jobsight-data";

impl Options {
    /// Reads `path`; `None` gives the defaults.
    pub fn load(path: Option<&Path>) -> Result<(Options, PathBuf), ConfigError> {
        let Some(path) = path else {
            return Ok((
                Options::default(),
                PathBuf::from("(no file: defaults and flags)"),
            ));
        };
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok((Options::parse(&text, path)?, path.to_path_buf()))
    }

    pub fn parse(text: &str, path: &Path) -> Result<Options, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            reason: e.to_string().trim().to_string(),
        })
    }

    /// Fills in defaults and checks every value; `path` is only for error messages.
    pub fn resolve(self, path: &Path) -> Result<Settings, ConfigError> {
        let checker = Checker { path };
        let at = |e| checker.at(e);
        let ingest = self.ingest.unwrap_or_default().resolve().map_err(at)?;
        let prometheus = self.prometheus.unwrap_or_default().resolve().map_err(at)?;
        // The models read windows: a site that runs them gets its models' windows unless
        // `[features] windows` says otherwise.
        let model = self.model.unwrap_or_default();
        let models_window = model
            .trained_window()
            .map(|(window_s, stride_s)| jobsight_features::WindowSpec { window_s, stride_s });
        let features = self
            .features
            .unwrap_or_default()
            .resolve(models_window)
            .map_err(at)?;
        let model = model.resolve().map_err(at)?;
        let rules = self
            .rules
            .unwrap_or_default()
            .resolve(features.cores_per_node)
            .map_err(at)?;
        let notify = self.notify.unwrap_or_default().resolve().map_err(at)?;
        let summary = self.summary.unwrap_or_default().resolve().map_err(at)?;
        let serve = self.serve.unwrap_or_default().resolve().map_err(at)?;
        let schedule = checker.schedule(self.schedule.unwrap_or_default())?;
        let engine = checker.engine(self.engine.unwrap_or_default())?;
        let data = self.data.unwrap_or_else(|| PathBuf::from(DEFAULT_DATA));
        let report = self.report.unwrap_or_default().resolve(&data).map_err(at)?;
        let running = self
            .running
            .unwrap_or_default()
            .resolve(&data)
            .map_err(at)?;
        let web = self.web.unwrap_or_default().resolve().map_err(at)?;
        Ok(Settings {
            running,
            web,
            schedule,
            engine,
            access: self.access.unwrap_or_default().resolve(),
            notify,
            summary,
            serve,
            report,
            rules,
            model,
            features,
            data,
            spool: self
                .spool
                .unwrap_or_else(|| PathBuf::from(slurm_hooks::spool_dir::DEFAULT_SPOOL)),
            ingest,
            prometheus,
        })
    }
}

/// Checks the file's values: fills in the defaults, holds each value to its range, and names
/// the file and the key of a bad one. One method per section that this module resolves itself;
/// the stages' sections resolve themselves and their errors go through [`Checker::at`].
struct Checker<'a> {
    path: &'a Path,
}

impl Checker<'_> {
    /// An error of `key` in the file.
    fn invalid(&self, key: &str, reason: String) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.to_path_buf(),
            key: key.to_string(),
            reason,
        }
    }

    /// A stage's own check that failed, as an error of the file.
    fn at(&self, e: jobsight_base::options::Invalid) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.to_path_buf(),
            key: e.key,
            reason: e.reason,
        }
    }

    /// `value`, else `default`, which must lie in `range`.
    fn within(
        &self,
        key: &str,
        value: Option<u64>,
        default: u64,
        range: RangeInclusive<u64>,
    ) -> Result<u64, ConfigError> {
        jobsight_base::options::within(key, value, default, range).map_err(|e| self.at(e))
    }

    /// `[schedule]`.
    fn schedule(&self, schedule_options: ScheduleOptions) -> Result<ScheduleSettings, ConfigError> {
        Ok(ScheduleSettings {
            dags: schedule_options.dags,
            behind_after: Duration::from_secs(self.within(
                "schedule.behind_after_s",
                schedule_options.behind_after_s,
                3600,
                60..=30 * DAY_S,
            )?),
        })
    }

    /// `[engine]`: a Ballista scheduler's address must look like one.
    fn engine(
        &self,
        engine_options: EngineOptions,
    ) -> Result<jobsight_warehouse::query::Engine, ConfigError> {
        Ok(match engine_options.ballista {
            None => jobsight_warehouse::query::Engine::Local,
            Some(url) => {
                let ok = url
                    .strip_prefix("df://")
                    .and_then(|rest| rest.rsplit_once(':'))
                    .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
                if !ok {
                    return Err(self.invalid(
                        "engine.ballista",
                        format!("{url:?} is not a scheduler address like df://host:50050"),
                    ));
                }
                jobsight_warehouse::query::Engine::Ballista(url)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(text: &str) -> Result<Settings, ConfigError> {
        Options::parse(text, Path::new("t.toml"))?.resolve(Path::new("t.toml"))
    }

    /// The integer settings and their ranges as docs/configuration.md "Ranges" states them.
    const RANGES: [(&str, &str, u64, u64); 33] = [
        ("ingest", "retry_after_s", 1, 86_400),
        ("ingest", "give_up_after_s", 60, 3650 * 86_400),
        ("prometheus", "step_s", 1, 3600),
        ("prometheus", "rate_window_s", 1, 86_400),
        ("prometheus", "timeout_s", 1, 600),
        ("prometheus", "max_points_per_series", 2, 11_000),
        ("prometheus", "lag_s", 0, 86_400),
        ("features", "trim_s", 0, 86_400),
        ("features", "bin_s", 1, 86_400),
        ("features", "cores_per_node", 1, 1_000_000),
        ("rules", "min_run_s", 0, 30 * 86_400),
        ("rules", "history_days", 1, 3660),
        ("rules", "history_runs", 0, 1000),
        ("model", "min_windows", 1, 1_000_000),
        ("model", "windows_at_a_time", 1, 100_000_000),
        ("schedule", "behind_after_s", 60, 30 * 86_400),
        ("notify", "lookback_days", 1, 366),
        ("notify", "min_days_between", 0, 366),
        ("notify", "min_run_s", 0, 30 * 86_400),
        ("notify", "max_emails_per_user_per_day", 1, 100),
        ("notify", "max_jobs_per_digest", 1, 1000),
        ("notify", "top_wasters", 0, 1000),
        ("notify.smtp", "timeout_s", 1, 600),
        ("summary", "short_job_s", 0, 86_400),
        ("serve", "max_connections", 1, 10_000),
        ("serve", "pg_login_timeout_s", 1, 300),
        ("serve", "max_logins_per_address", 1, 10_000),
        ("serve", "statement_timeout_s", 1, 86_400),
        ("web", "coordinators_refresh_s", 1, 86_400),
        ("web", "requests_per_minute", 1, 100_000),
        ("web", "max_list_rows", 1, 10_000),
        ("web", "max_list_days", 1, 3_660),
        ("web", "request_timeout_s", 1, 3_600),
    ];

    proptest::proptest! {
        /// Any value of any integer setting: accepted exactly when it lies in the documented
        /// range, otherwise refused with an error naming the file and the key; never a panic.
        #[test]
        fn every_setting_is_accepted_exactly_within_its_documented_range(
            which in 0..RANGES.len(),
            value in proptest::prop_oneof![
                -5i64..1_000_000,
                proptest::num::i64::ANY,
                0i64..4_000_000_000,
            ],
            near_edge in proptest::prop_oneof![-2i64..=2],
            at_edge in proptest::bool::ANY,
        ) {
            let (section, key, lo, hi) = RANGES[which];
            let value = if at_edge {
                let edge = if value % 2 == 0 { lo } else { hi } as i64;
                edge.saturating_add(near_edge)
            } else {
                value
            };
            // retry_max_s must be at least retry_after_s: at its largest, it never refuses.
            let partner = if key == "retry_after_s" { "retry_max_s = 604800\n" } else { "" };
            let text = format!("[{section}]\n{key} = {value}\n{partner}");
            let inside = u64::try_from(value).is_ok_and(|v| (lo..=hi).contains(&v));
            match resolve(&text) {
                Ok(_) => proptest::prop_assert!(inside, "{} accepted", text),
                Err(e) => {
                    let e = e.to_string();
                    proptest::prop_assert!(!inside, "{} refused: {}", text, e);
                    proptest::prop_assert!(e.contains("t.toml") && e.contains(key), "{}", e);
                }
            }
        }
    }

    #[test]
    fn no_file_gives_working_defaults() {
        let s = resolve("").unwrap();
        assert_eq!(s.data, PathBuf::from(DEFAULT_DATA));
        assert_eq!(s.prometheus.max_points_per_series, 11_000);
        assert_eq!(s.prometheus.metrics.len(), 16);
        assert_eq!(s.ingest.give_up_after, Duration::from_secs(86_400));
    }

    #[test]
    fn typos_and_bad_values_name_the_key() {
        let e = resolve("[prometheus]\nstep = 10\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.toml") && e.contains("unknown field `step`"),
            "{e}"
        );
        let e = resolve("[prometheus]\nstep_s = 0\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("prometheus.step_s: 0 is outside 1..=3600"),
            "{e}"
        );
        // Every number has a range, checked at load: nothing later meets a value it cannot
        // handle (a bin wider than a day, a lookback of centuries, a stride wider than its
        // window).
        for (text, key) in [
            (
                "[features]\nbin_s = 18446744073709551615\n",
                "features.bin_s",
            ),
            ("[features]\nwindows = \"60:120\"\n", "features.windows"),
            ("[features]\nwindows = \"9999999:1\"\n", "features.windows"),
            (
                "[notify]\nlookback_days = 4000000000\n",
                "notify.lookback_days",
            ),
            (
                "[ingest]\nretry_max_s = 18446744073709551615\n",
                "ingest.retry_max_s",
            ),
            (
                "[prometheus]\nlag_s = 18446744073709551615\n",
                "prometheus.lag_s",
            ),
            (
                "[prometheus]\nmax_points_per_series = 20000\n",
                "prometheus.max_points_per_series",
            ),
            (
                "[schedule]\nbehind_after_s = 1\n",
                "schedule.behind_after_s",
            ),
            ("[model]\nmin_windows = 0\n", "model.min_windows"),
        ] {
            let e = resolve(text).unwrap_err().to_string();
            assert!(e.contains(key) && e.contains("t.toml"), "{text}: {e}");
        }
        let e = resolve("[prometheus]\nurl = \"localhost:9090\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("prometheus.url"), "{e}");
        let e = resolve("[[prometheus.extra_metrics]]\nname = \"x\"\nquery = \"up\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no {nodes} placeholder"), "{e}");
        let e = resolve(
            "[[prometheus.extra_metrics]]\nname = \"load1\"\nquery = \"node_load5{nodes}\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("defined twice"), "{e}");
        let e = resolve(
            "[[prometheus.extra_metrics]]\nname = \"x\"\nquery = \"node_load5{nodes}{hostname}\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown placeholder {hostname}"), "{e}");
        // The clock check: on by default, off with "", and its query checked as the metrics' are.
        let clock = |text: &str| resolve(text).map(|s| s.prometheus.clock.map(|c| c.query));
        assert_eq!(
            clock("").unwrap().as_deref(),
            Some(jobsight_ingest::settings::DEFAULT_CLOCK_QUERY)
        );
        assert_eq!(clock("[prometheus]\nclock_query = \"\"\n").unwrap(), None);
        for (query, says) in [
            ("node_time_seconds", "no {nodes} placeholder"),
            (
                "node_time_seconds{{nodes}}{host}",
                "unknown placeholder {host}",
            ),
        ] {
            let e = clock(&format!("[prometheus]\nclock_query = {query:?}\n"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("prometheus.clock_query") && e.contains(says),
                "{e}"
            );
        }
    }

    #[test]
    fn a_configured_model_brings_its_window() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("score.model");
        let header = jobsight_model::header(
            jobsight_model::Kind::Unsupervised,
            vec!["cpu_user:mean".into()],
            Vec::new(),
            (300, 150),
            jobsight_model::file::TrainingSummary::default(),
            &jobsight_model::TrainOptions::default(),
        );
        let mut line = serde_json::to_vec(&header).unwrap();
        line.extend_from_slice(b"\n{}\n");
        std::fs::write(&path, line).unwrap();
        let windows = |model: &str| {
            resolve(&format!("[model]\nunsupervised = {model:?}\n"))
                .unwrap()
                .features
                .windows
                .map(|w| (w.window_s, w.stride_s))
        };
        assert_eq!(windows(path.to_str().unwrap()), Some((300, 150)));
        // An unreadable model keeps the protocol's windows; loading it later says what is wrong.
        assert_eq!(windows("/nonexistent.model"), Some((60, 15)));
        assert_eq!(resolve("").unwrap().features.windows, None);
        // A window set by the site wins.
        let s = resolve(&format!(
            "[features]\nwindows = \"120:60\"\n[model]\nunsupervised = {:?}\n",
            path.to_str().unwrap()
        ))
        .unwrap();
        assert_eq!(s.features.windows.map(|w| w.window_s), Some(120));
    }

    #[test]
    fn gpu_and_cgroup_add_their_metrics() {
        let s = resolve("[prometheus]\ngpu = true\ncgroup = true\n").unwrap();
        let names: Vec<&str> = s
            .prometheus
            .metrics
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert!(names.contains(&"gpu_util") && names.contains(&"job_mem_rss_bytes"));
        // The job's own GPUs: DCGM's series whose job label holds the job id.
        let own = |label: &str| {
            let s = resolve(&format!(
                "[prometheus]\ngpu = true\ngpu_job_label = \"{label}\"\n"
            ))
            .unwrap();
            let m = s
                .prometheus
                .metrics
                .into_iter()
                .find(|m| m.name == "job_gpu_util");
            m.unwrap().query
        };
        assert_eq!(
            own("hpc_job"),
            "avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL{hpc_job=\"{job_id}\",{nodes}}) / 100"
        );
        assert!(own("slurm_job").contains("{slurm_job=\"{job_id}\","));
        let refused = resolve("[prometheus]\ngpu = true\ngpu_job_label = \"job\\\"\"\n");
        assert!(
            refused
                .unwrap_err()
                .to_string()
                .contains("prometheus.gpu_job_label"),
        );
    }

    #[test]
    fn the_example_file_parses_and_matches_the_defaults() {
        let path = format!(
            "{}/ops/jobsight.example.toml",
            jobsight_base::test_support::workspace_dir().display()
        );
        let (options, path) = Options::load(Some(Path::new(&path))).unwrap();
        let s = options.resolve(&path).unwrap();
        let d = resolve("").unwrap();
        assert_eq!(s.prometheus.metrics, d.prometheus.metrics);
        assert_eq!(s.prometheus.step, d.prometheus.step);
        assert_eq!(s.ingest.give_up_after, d.ingest.give_up_after);
        assert_eq!(s.features, d.features);
        assert_eq!(s.rules, d.rules);
        assert_eq!(format!("{:?}", s.notify), format!("{:?}", d.notify));
        assert_eq!(s.schedule, d.schedule);
        assert_eq!(s.report, d.report);
        assert_eq!(s.summary, d.summary);
        assert_eq!(s.serve, d.serve);
        // The snapshot's default follows `data`, which the example names differently.
        assert_eq!(
            jobsight_running::Settings {
                snapshot: d.running.snapshot.clone(),
                ..s.running.clone()
            },
            d.running
        );
        assert_eq!(s.report, d.report);
        assert_eq!(s.engine, d.engine);
        assert_eq!(s.web, d.web);
    }

    /// `[engine] ballista` takes a scheduler address and refuses anything else, naming the key.
    #[test]
    fn the_engine_is_a_ballista_scheduler_address() {
        assert_eq!(
            resolve("").unwrap().engine,
            jobsight_warehouse::query::Engine::Local
        );
        let s = resolve("[engine]\nballista = \"df://sched.example.org:50050\"").unwrap();
        assert_eq!(
            s.engine,
            jobsight_warehouse::query::Engine::Ballista("df://sched.example.org:50050".into())
        );
        for bad in [
            "sched:50050",
            "df://sched",
            "df://:50050",
            "df://sched:port",
        ] {
            let err = resolve(&format!("[engine]\nballista = \"{bad}\"")).unwrap_err();
            assert!(err.to_string().contains("engine.ballista"), "{bad}: {err}");
        }
    }
}
