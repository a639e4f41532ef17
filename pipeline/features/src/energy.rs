//! A job's energy, measured where the data allows it, and how much of its nodes' energy it was
//! given. Summaries add these figures up in place of their constant-watts estimate.
//!
//! The first source the job has, each recorded as `job_summary.energy_source`:
//! 1. `accounting`: Slurm's `ConsumedEnergy` of the run (`jobs.acct_energy_j`), where a site
//!    collects it (an `acct_gather_energy` plugin: RAPL, IPMI, Cray's counters). Slurm reads the
//!    nodes' counters, so on a node the job shared the reading is the node's: the job is given
//!    its share of the node's CPUs of it (`energy_share`). A reading whose average draw per node
//!    is above [`MAX_NODE_WATTS`] is a counter's fault (LUMI's documentation warns of values near
//!    1e20 J) and is not used; Slurm reports 0 where nothing is collected.
//! 2. `node-power`: a node power series (`node_power_watts`, from an IPMI or Redfish exporter
//!    through `prometheus.extra_metrics`): its mean per node times the run's length, times the
//!    same share.
//! 3. `gpu-power`: the power of the job's GPUs alone (`job_gpu_power_watts`, DCGM's series mapped
//!    to the job; or all the GPUs of nodes the job did not share), the host's draw not counted.
//!
//! On a shared node the share is the job's CPUs over the node's (`features.cores_per_node`);
//! without that number, no figure is given rather than the node's.

/// The highest average draw per node believed, in watts: an eight-GPU node draws about 10 kW.
pub const MAX_NODE_WATTS: f64 = 20_000.0;

/// Where a job's energy figure came from (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnergySource {
    Accounting,
    NodePower,
    GpuPower,
}

impl EnergySource {
    /// As `job_summary.energy_source` holds it.
    pub fn name(self) -> &'static str {
        match self {
            EnergySource::Accounting => "accounting",
            EnergySource::NodePower => "node-power",
            EnergySource::GpuPower => "gpu-power",
        }
    }
}

/// What the energy is computed from.
#[derive(Debug, Clone, Copy)]
pub struct EnergyInputs {
    /// Slurm's consumed energy of the run, joules.
    pub acct_energy_j: Option<f64>,
    /// Length of the run, seconds.
    pub run_elapsed_s: f64,
    pub num_nodes: Option<u32>,
    pub cpus: Option<u32>,
    pub cores_per_node: Option<u32>,
    /// Whether the job shared a node (`job_summary.shared`).
    pub shared: Option<bool>,
    /// The mean draw of each power series, summed over the job's nodes, watts: the nodes'
    /// (`node_power_watts`), the job's own GPUs' (`job_gpu_power_watts`) and all the GPUs of its
    /// nodes (`gpu_power_watts`); none where the job has no such series.
    pub node_watts: Option<f64>,
    pub own_gpu_watts: Option<f64>,
    pub node_gpu_watts: Option<f64>,
}

/// The job's energy: (kWh, source, share of its nodes' energy it was given).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Energy {
    pub kwh: Option<f64>,
    pub source: Option<EnergySource>,
    pub share: Option<f64>,
}

/// The job's energy from the first source it has (see the module doc).
pub fn energy(inputs: &EnergyInputs) -> Energy {
    let hours = inputs.run_elapsed_s / 3600.0;
    // Also refuses a NaN length.
    if hours.is_nan() || hours <= 0.0 {
        return Energy::default();
    }
    let share = node_share(inputs);
    let nodes = f64::from(inputs.num_nodes.unwrap_or(1).max(1));
    let accounting = inputs.acct_energy_j.filter(|&j| {
        j.is_finite() && j > 0.0 && j / inputs.run_elapsed_s / nodes <= MAX_NODE_WATTS
    });
    let kwh_of = |watts: Option<f64>| {
        watts
            .filter(|w| w.is_finite() && *w >= 0.0)
            .map(|w| w * hours / 1000.0)
    };
    let of_nodes = |kwh: Option<f64>, source| {
        share.and_then(|share| {
            kwh.map(|kwh| Energy {
                kwh: Some(kwh * share),
                source: Some(source),
                share: Some(share),
            })
        })
    };
    let own_gpus = kwh_of(inputs.own_gpu_watts).map(|kwh| Energy {
        kwh: Some(kwh),
        source: Some(EnergySource::GpuPower),
        share: Some(1.0),
    });
    let unshared_gpus = kwh_of(inputs.node_gpu_watts)
        .filter(|_| inputs.shared != Some(true))
        .map(|kwh| Energy {
            kwh: Some(kwh),
            source: Some(EnergySource::GpuPower),
            share: Some(1.0),
        });
    of_nodes(accounting.map(|j| j / 3.6e6), EnergySource::Accounting)
        .or_else(|| of_nodes(kwh_of(inputs.node_watts), EnergySource::NodePower))
        .or(own_gpus)
        .or(unshared_gpus)
        .unwrap_or_default()
}

/// The job's share of its nodes' energy: all of it unless it is known to have shared a node,
/// then its CPUs over the nodes' (none when the nodes' size is unknown).
fn node_share(inputs: &EnergyInputs) -> Option<f64> {
    if inputs.shared != Some(true) {
        return Some(1.0);
    }
    match (inputs.cpus, inputs.num_nodes, inputs.cores_per_node) {
        (Some(cpus), Some(nodes), Some(cores)) if nodes > 0 && cores > 0 => {
            Some((f64::from(cpus) / (f64::from(nodes) * f64::from(cores))).min(1.0))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(acct_energy_j: Option<f64>, shared: Option<bool>) -> EnergyInputs {
        EnergyInputs {
            acct_energy_j,
            run_elapsed_s: 3600.0,
            num_nodes: Some(1),
            cpus: Some(16),
            cores_per_node: Some(64),
            shared,
            node_watts: None,
            own_gpu_watts: None,
            node_gpu_watts: None,
        }
    }

    #[test]
    fn accounting_first_and_shared_nodes_give_the_jobs_share() {
        // 1.8 MJ in an hour on a node of its own: 0.5 kWh, all of it.
        let alone = energy(&EnergyInputs {
            node_watts: Some(999.0),
            ..inputs(Some(1.8e6), Some(false))
        });
        assert_eq!(alone.source, Some(EnergySource::Accounting));
        assert!((alone.kwh.unwrap() - 0.5).abs() < 1e-9);
        assert_eq!(alone.share, Some(1.0));
        // The same node reading on a shared node: 16 of 64 CPUs, a quarter.
        let shared = energy(&inputs(Some(1.8e6), Some(true)));
        assert!((shared.kwh.unwrap() - 0.125).abs() < 1e-9);
        assert_eq!(shared.share, Some(0.25));
    }

    /// LUMI's warning: readings near 1e20 J. Zero: nothing collected. Neither is a figure.
    #[test]
    fn implausible_and_missing_readings_are_not_used() {
        for bad in [1e20, 0.0, f64::NAN, -5.0, 3600.0 * 25_000.0] {
            assert_eq!(
                energy(&inputs(Some(bad), Some(false))),
                Energy::default(),
                "{bad}"
            );
        }
    }

    #[test]
    fn power_series_when_accounting_has_nothing() {
        let all = EnergyInputs {
            node_watts: Some(400.0),
            own_gpu_watts: Some(500.0),
            node_gpu_watts: Some(700.0),
            ..inputs(None, Some(true))
        };
        // The node's 400 W for an hour, a quarter of it the job's.
        let e = energy(&all);
        assert_eq!(e.source, Some(EnergySource::NodePower));
        assert!((e.kwh.unwrap() - 0.1).abs() < 1e-9);
        // Without a node power series: the job's own GPUs, all of theirs.
        let e = energy(&EnergyInputs {
            node_watts: None,
            ..all
        });
        assert_eq!(e.source, Some(EnergySource::GpuPower));
        assert!((e.kwh.unwrap() - 0.5).abs() < 1e-9);
        // Only the node's GPUs, on a shared node: not the job's, no figure.
        let node_gpus = EnergyInputs {
            node_gpu_watts: Some(700.0),
            ..inputs(None, Some(true))
        };
        assert_eq!(energy(&node_gpus), Energy::default());
        let alone = energy(&EnergyInputs {
            shared: Some(false),
            ..node_gpus
        });
        assert!((alone.kwh.unwrap() - 0.7).abs() < 1e-9);
        // A shared node whose size is unknown: no share, no node figure.
        let unknown = EnergyInputs {
            cores_per_node: None,
            ..inputs(Some(1.8e6), Some(true))
        };
        assert_eq!(energy(&unknown), Energy::default());
    }
}
