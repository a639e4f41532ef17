//! The `[summary]` section of the configuration file, and the settings it resolves to: the
//! short-job cut, and the watts, price and CO2 that turn idle hours into energy, cost and
//! emissions.

use serde::Deserialize;

use jobsight_base::options::{DAY_S, Invalid, invalid, within};

/// Jobs shorter than this many seconds count as short (Job Defense Shield skips jobs under
/// 300 s; XDMoD reports short jobs as their own group).
pub const DEFAULT_SHORT_JOB_S: u64 = 300;

/// The `[summary]` section of the configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// Jobs that ran less than this are counted as short.
    pub short_job_s: Option<u64>,
    /// Watts one allocated core draws above the node's base while it does nothing useful.
    pub idle_core_watts: Option<f64>,
    /// Watts one allocated, idle GPU draws.
    pub idle_gpu_watts: Option<f64>,
    /// A node's base power (memory, fans, network), charged to its idle node-hours.
    pub node_watts: Option<f64>,
    /// Price of one kWh, in `currency`.
    pub price_per_kwh: Option<f64>,
    pub currency: Option<String>,
    /// Grams of CO2 per kWh of the site's electricity.
    pub co2_grams_per_kwh: Option<f64>,
}

/// The summaries' settings, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub short_job_s: u64,
    pub idle_core_watts: f64,
    pub idle_gpu_watts: f64,
    pub node_watts: f64,
    pub price_per_kwh: f64,
    pub currency: String,
    pub co2_grams_per_kwh: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Options::default()
            .resolve()
            .unwrap_or_else(|_| unreachable!("the defaults are in range"))
    }
}

impl Options {
    /// Fills in the defaults and checks every value's range.
    pub fn resolve(self) -> Result<Settings, Invalid> {
        let number = |key: &str, value: Option<f64>, default: f64, max: f64| {
            let v = value.unwrap_or(default);
            if v.is_finite() && (0.0..=max).contains(&v) {
                Ok(v)
            } else {
                Err(invalid(key, format!("{v} is outside 0..={max}")))
            }
        };
        let currency = self.currency.unwrap_or_else(|| "EUR".into());
        if currency.is_empty()
            || currency.len() > 8
            || !currency.chars().all(|c| c.is_ascii_graphic())
        {
            return Err(invalid(
                "summary.currency",
                format!(
                    "{currency:?} is not a currency code (1 to 8 printable characters, e.g. EUR)"
                ),
            ));
        }
        Ok(Settings {
            short_job_s: within(
                "summary.short_job_s",
                self.short_job_s,
                DEFAULT_SHORT_JOB_S,
                0..=DAY_S,
            )?,
            idle_core_watts: number(
                "summary.idle_core_watts",
                self.idle_core_watts,
                10.0,
                1000.0,
            )?,
            idle_gpu_watts: number("summary.idle_gpu_watts", self.idle_gpu_watts, 70.0, 5000.0)?,
            node_watts: number("summary.node_watts", self.node_watts, 100.0, 100_000.0)?,
            price_per_kwh: number("summary.price_per_kwh", self.price_per_kwh, 0.20, 100.0)?,
            currency,
            co2_grams_per_kwh: number(
                "summary.co2_grams_per_kwh",
                self.co2_grams_per_kwh,
                300.0,
                5000.0,
            )?,
        })
    }
}
