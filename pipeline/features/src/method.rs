//! Which computation runs a day's features: the single pass in this process ([`compute_day`]) or
//! the DataFusion plan ([`plan`]), here or on a Ballista cluster, as the command or the
//! configuration asks ([`Method`]) and the engine allows.

use std::path::Path;

use chrono::NaiveDate;
use jobsight_base::choice::{Choice, Named};

use super::{Computed, FeaturesError, Settings, compute_day, plan};

/// How a day's features are computed ([`compute_day_by`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// The DataFusion plan on the Ballista cluster when one is configured (work over history
    /// goes there); otherwise, or when windows are asked for, the single pass here.
    #[default]
    Auto,
    /// The single pass in this process (the fastest on one machine).
    SinglePass,
    /// The DataFusion plan on the configured engine: the Ballista cluster, or this process
    /// without one. Computes no windows.
    Plan,
}

impl Choice for Method {
    const ALL: &'static [Named<Self>] = &[
        Named {
            value: Method::Auto,
            name: "auto",
            help: "The DataFusion plan on the Ballista cluster when one is configured (work over history goes there); otherwise, or when windows are asked for, the single pass here",
        },
        Named {
            value: Method::SinglePass,
            name: "single-pass",
            help: "The single pass in this process (the fastest on one machine)",
        },
        Named {
            value: Method::Plan,
            name: "plan",
            help: "The DataFusion plan on the configured engine: the Ballista cluster, or this process without one. Computes no windows",
        },
    ];
}

/// How [`compute_day_by`] computed a day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Used {
    SinglePass,
    PlanHere,
    PlanOnBallista,
}

impl Used {
    /// For logs and the command's output.
    pub fn name(self) -> &'static str {
        match self {
            Used::SinglePass => "single pass",
            Used::PlanHere => "DataFusion plan, here",
            Used::PlanOnBallista => "DataFusion plan, on the Ballista cluster",
        }
    }
}

/// Which computation `method` means with `engine` and `settings`.
pub fn method_used(
    method: Method,
    engine: &jobsight_warehouse::query::Engine,
    settings: &Settings,
) -> Used {
    let plan = match engine {
        jobsight_warehouse::query::Engine::Local => Used::PlanHere,
        jobsight_warehouse::query::Engine::Ballista(_) => Used::PlanOnBallista,
    };
    match method {
        Method::SinglePass => Used::SinglePass,
        Method::Plan => plan,
        Method::Auto if plan == Used::PlanOnBallista && settings.windows.is_none() => plan,
        Method::Auto => Used::SinglePass,
    }
}

/// One day's features by `method` ([`compute_day`] or [`plan::compute_day_on`]), and how they
/// were computed. `progress(done, total)` counts row groups read by the single pass, ranges of
/// job ids by the plans.
pub fn compute_day_by(
    method: Method,
    engine: &jobsight_warehouse::query::Engine,
    data: &Path,
    day: NaiveDate,
    settings: &Settings,
    progress: impl Fn(usize, usize) + Sync,
) -> Result<(Computed, Used), FeaturesError> {
    let used = method_used(method, engine, settings);
    let computed = match used {
        Used::SinglePass => compute_day(data, day, settings, progress)?,
        // Here or on the cluster: whichever `engine` is.
        Used::PlanHere | Used::PlanOnBallista => {
            plan::compute_day_on(engine, data, day, settings, progress)?
        }
    };
    Ok((computed, used))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WindowSpec;
    use jobsight_warehouse::query::Engine;

    /// `auto` sends the plan to a Ballista cluster, but never a day that asks for windows (the
    /// plan computes none); without a cluster it is the single pass.
    #[test]
    fn auto_runs_the_plan_only_on_a_cluster_and_without_windows() {
        let cluster = Engine::Ballista("df://scheduler:50050".into());
        let plain = Settings::default();
        let windowed = Settings {
            windows: Some(WindowSpec {
                window_s: 60,
                stride_s: 15,
            }),
            ..Settings::default()
        };
        assert_eq!(
            method_used(Method::Auto, &cluster, &plain),
            Used::PlanOnBallista
        );
        assert_eq!(
            method_used(Method::Auto, &cluster, &windowed),
            Used::SinglePass
        );
        assert_eq!(
            method_used(Method::Auto, &Engine::Local, &plain),
            Used::SinglePass
        );
        assert_eq!(
            method_used(Method::Plan, &Engine::Local, &plain),
            Used::PlanHere
        );
        assert_eq!(
            method_used(Method::Plan, &cluster, &windowed),
            Used::PlanOnBallista
        );
        assert_eq!(
            method_used(Method::SinglePass, &cluster, &plain),
            Used::SinglePass
        );
    }
}
