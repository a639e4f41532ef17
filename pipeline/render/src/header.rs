//! The contradiction check of the figures at the head of a job's email and report page: the
//! core-hours and the idle part of them, the CPU, memory, time and GPU shares, the energy, and
//! where each came from. A reader sees them side by side, so they must agree with each other and
//! never present a node's figure as the job's; the findings below them are checked the same way
//! against their own evidence ([`jobsight_rules::contradictions`]).

/// The head figures of one job, as its email ([`jobsight_notify::plan::JobReport`]) or its page
/// (the report's job and summary facts) have them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeaderFigures<'a> {
    /// Allocated core-hours, as the email (`job_summary`) shows them.
    pub core_hours: Option<f64>,
    /// The same as the page (the `jobs` view) shows them, where it differs in origin.
    pub core_hours_jobs: Option<f64>,
    pub wasted_core_hours: Option<f64>,
    pub cpu_eff: Option<f64>,
    pub mem_eff: Option<f64>,
    pub time_eff: Option<f64>,
    pub gpu_util: Option<f64>,
    pub cpu_eff_source: Option<&'a str>,
    pub mem_source: Option<&'a str>,
    pub gpu_source: Option<&'a str>,
    pub shared: Option<bool>,
    pub energy_kwh: Option<f64>,
    pub energy_share: Option<f64>,
}

/// Allowed difference between two figures that must agree, for rounding: 0.05 core-hours plus
/// half a percent.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.05 + 0.005 * a.abs().max(b.abs())
}

/// What in the head figures contradicts itself; empty when they agree.
pub fn header_contradictions(h: &HeaderFigures) -> Vec<String> {
    let mut wrong = Vec::new();
    for (name, value) in [
        ("cpu_eff", h.cpu_eff),
        ("mem_eff", h.mem_eff),
        ("gpu_util", h.gpu_util),
        ("energy_share", h.energy_share),
    ] {
        if let Some(v) = value
            && !(0.0..=1.0).contains(&v)
        {
            wrong.push(format!("{name} {v} is not a share between 0 and 1"));
        }
    }
    for (name, value) in [
        ("time_eff", h.time_eff),
        ("core_hours", h.core_hours),
        ("wasted_core_hours", h.wasted_core_hours),
        ("energy_kwh", h.energy_kwh),
    ] {
        if let Some(v) = value
            && !(v.is_finite() && v >= 0.0)
        {
            wrong.push(format!("{name} {v} is not a non-negative number"));
        }
    }
    if let (Some(a), Some(b)) = (h.core_hours, h.core_hours_jobs)
        && !close(a, b)
    {
        wrong.push(format!(
            "core-hours {a} (job_summary) and {b} (jobs) differ"
        ));
    }
    match (
        h.wasted_core_hours,
        h.cpu_eff,
        h.core_hours.or(h.core_hours_jobs),
    ) {
        (Some(idle), None, _) => wrong.push(format!(
            "{idle} idle core-hours without a CPU efficiency they would come from"
        )),
        (Some(idle), Some(eff), Some(hours)) if !close(idle, hours * (1.0 - eff)) => {
            wrong.push(format!(
                "{idle} idle of {hours} core-hours, but a CPU efficiency of {eff} leaves {} idle",
                hours * (1.0 - eff)
            ))
        }
        _ => {}
    }
    // A node's figure on a node shared with other jobs is theirs too: the CPU and memory figures
    // say so beside them; a GPU figure is never given from it.
    if h.shared == Some(true) && h.gpu_source == Some("telemetry-node") && h.gpu_util.is_some() {
        wrong.push("GPU utilisation of all the GPUs of a shared node shown as the job's".into());
    }
    for (name, source, value) in [
        ("CPU efficiency", h.cpu_eff_source, h.cpu_eff),
        ("memory efficiency", h.mem_source, h.mem_eff),
    ] {
        if value.is_some()
            && source.is_some_and(|s| s != "telemetry-job")
            && source
                .and_then(|s| crate::figure_source_label(s, h.shared))
                .is_none()
            && h.shared == Some(true)
        {
            wrong.push(format!(
                "{name} from {} on a shared node without a label saying so",
                source.unwrap_or("-")
            ));
        }
    }
    wrong
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consistent_heads_pass() {
        let h = HeaderFigures {
            core_hours: Some(384.0),
            core_hours_jobs: Some(384.0),
            wasted_core_hours: Some(376.3),
            cpu_eff: Some(0.02),
            mem_eff: Some(0.1),
            time_eff: Some(1.0),
            cpu_eff_source: Some("accounting"),
            mem_source: Some("telemetry-node"),
            shared: Some(true),
            energy_kwh: Some(12.5),
            energy_share: Some(0.25),
            ..HeaderFigures::default()
        };
        assert_eq!(header_contradictions(&h), Vec::<String>::new());
        // Nothing known contradicts nothing.
        assert!(header_contradictions(&HeaderFigures::default()).is_empty());
    }

    /// The review's case: "54.1 core-hours, of which 0.0 idle" with the CPU efficiency withheld
    /// and a finding that the CPUs were busy 0.09 of the time; and the others the check knows.
    #[test]
    fn each_contradiction_is_named() {
        let base = HeaderFigures {
            core_hours: Some(54.1),
            ..HeaderFigures::default()
        };
        let cases: [(HeaderFigures, &str); 8] = [
            (
                HeaderFigures {
                    cpu_eff: Some(0.5),
                    cpu_eff_source: Some("telemetry-nodes"),
                    shared: Some(true),
                    ..base.clone()
                },
                "without a label",
            ),
            (
                HeaderFigures {
                    wasted_core_hours: Some(0.0),
                    ..base.clone()
                },
                "without a CPU efficiency",
            ),
            (
                HeaderFigures {
                    wasted_core_hours: Some(0.0),
                    cpu_eff: Some(0.09),
                    ..base.clone()
                },
                "leaves 49.2",
            ),
            (
                HeaderFigures {
                    cpu_eff: Some(1.4),
                    ..base.clone()
                },
                "cpu_eff 1.4 is not a share",
            ),
            (
                HeaderFigures {
                    core_hours_jobs: Some(60.0),
                    ..base.clone()
                },
                "differ",
            ),
            (
                HeaderFigures {
                    gpu_util: Some(0.4),
                    gpu_source: Some("telemetry-node"),
                    shared: Some(true),
                    ..base.clone()
                },
                "GPU utilisation of all the GPUs",
            ),
            (
                HeaderFigures {
                    energy_kwh: Some(f64::NAN),
                    ..base.clone()
                },
                "energy_kwh NaN",
            ),
            (
                HeaderFigures {
                    energy_share: Some(2.0),
                    ..base.clone()
                },
                "energy_share 2",
            ),
        ];
        for (head, expected) in cases {
            let wrong = header_contradictions(&head);
            assert!(
                wrong.iter().any(|w| w.contains(expected)),
                "{expected}: {wrong:?} of {head:?}"
            );
        }
    }
}
