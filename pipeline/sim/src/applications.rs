//! The applications the simulated jobs run, each with its own levels of work, memory, bandwidth,
//! reads and writes, metadata and traffic when it runs well: what makes one simulated job look
//! unlike another healthy one.

/// What an application looks like when it runs well. A day of one application is no test of
/// models that must hold on applications they never saw (issue 20), and no real cluster has every
/// job use the same share of its memory request; so each application has its own level of CPU
/// work, instructions per cycle, memory per core and bandwidth, reads and writes (with
/// checkpoints), metadata and network traffic. Figures at input size 1; the simulator varies each
/// run's input size (memory) and jitters its levels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AppProfile {
    pub name: &'static str,
    /// Share of its cores' time the application computes.
    pub effort: f64,
    /// Instructions per cycle.
    pub ipc: f64,
    /// Memory bandwidth per busy core, bytes/s.
    pub mem_bw_per_core: f64,
    /// Resident memory per allocated core, bytes.
    pub mem_per_core: f64,
    /// Steady reads and writes, bytes/s per node.
    pub disk_read: f64,
    pub disk_write: f64,
    /// A checkpoint every so many seconds (0: none), written for 30 s at `checkpoint_write` bytes/s.
    pub checkpoint_every_s: u64,
    pub checkpoint_write: f64,
    /// File-system metadata operations per second per node.
    pub metadata: f64,
    /// Network bytes/s per node of a multi-node run.
    pub net: f64,
}

/// The simulated cluster's applications: molecular dynamics (two codes), a Python training
/// script, plane-wave DFT, a weather model, sequence search. Levels are of the kind each code
/// shows in published job-level monitoring (compute-bound and cache-friendly MD, bandwidth-bound
/// DFT, read-heavy search with many small files, periodic history output and restarts).
pub const PROFILES: [AppProfile; 6] = [
    AppProfile {
        name: "lammps",
        effort: 0.93,
        ipc: 1.6,
        mem_bw_per_core: 0.8e9,
        mem_per_core: 0.6e9,
        disk_read: 0.2e6,
        disk_write: 0.5e6,
        checkpoint_every_s: 600,
        checkpoint_write: 60e6,
        metadata: 2.0,
        net: 60e6,
    },
    AppProfile {
        name: "gromacs",
        effort: 0.96,
        ipc: 2.3,
        mem_bw_per_core: 0.4e9,
        mem_per_core: 0.3e9,
        disk_read: 0.1e6,
        disk_write: 0.2e6,
        checkpoint_every_s: 900,
        checkpoint_write: 30e6,
        metadata: 1.0,
        net: 40e6,
    },
    AppProfile {
        name: "train.py",
        effort: 0.78,
        ipc: 1.2,
        mem_bw_per_core: 0.9e9,
        mem_per_core: 2.5e9,
        disk_read: 40e6,
        disk_write: 0.1e6,
        checkpoint_every_s: 1800,
        checkpoint_write: 100e6,
        metadata: 40.0,
        net: 20e6,
    },
    AppProfile {
        name: "vasp",
        effort: 0.9,
        ipc: 1.1,
        mem_bw_per_core: 1.2e9,
        mem_per_core: 2.0e9,
        disk_read: 1e6,
        disk_write: 2e6,
        checkpoint_every_s: 0,
        checkpoint_write: 0.0,
        metadata: 5.0,
        net: 120e6,
    },
    AppProfile {
        name: "wrf",
        effort: 0.85,
        ipc: 1.4,
        mem_bw_per_core: 0.9e9,
        mem_per_core: 1.2e9,
        disk_read: 2e6,
        disk_write: 5e6,
        checkpoint_every_s: 1200,
        checkpoint_write: 120e6,
        metadata: 10.0,
        net: 80e6,
    },
    AppProfile {
        name: "blast",
        effort: 0.8,
        ipc: 1.9,
        mem_bw_per_core: 0.25e9,
        mem_per_core: 1.5e9,
        disk_read: 30e6,
        disk_write: 1e6,
        checkpoint_every_s: 0,
        checkpoint_write: 0.0,
        metadata: 60.0,
        net: 1e6,
    },
];
