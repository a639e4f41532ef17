//! The anomaly vocabulary: the eight HPAS anomaly types whose names are the labels of real data
//! sets, of the training suite's jobs and of the simulator's. It lives here, below every stage,
//! because the model stage reads labels by these names and the simulator generates them, and
//! neither should need the other for a list of words.

/// An HPAS anomaly type (Ates et al., "HPAS: An HPC Performance Anomaly Suite").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anomaly {
    MemLeak,
    MemEater,
    CpuOccupy,
    CacheCopy,
    MemBw,
    IoBandwidth,
    IoMetadata,
    NetOccupy,
}

impl Anomaly {
    pub const ALL: [Anomaly; 8] = [
        Anomaly::MemLeak,
        Anomaly::MemEater,
        Anomaly::CpuOccupy,
        Anomaly::CacheCopy,
        Anomaly::MemBw,
        Anomaly::IoBandwidth,
        Anomaly::IoMetadata,
        Anomaly::NetOccupy,
    ];

    /// The HPAS name, as in the labels of real data sets.
    pub fn name(self) -> &'static str {
        match self {
            Anomaly::MemLeak => "memleak",
            Anomaly::MemEater => "memeater",
            Anomaly::CpuOccupy => "cpuoccupy",
            Anomaly::CacheCopy => "cachecopy",
            Anomaly::MemBw => "membw",
            Anomaly::IoBandwidth => "iobandwidth",
            Anomaly::IoMetadata => "iometadata",
            Anomaly::NetOccupy => "netoccupy",
        }
    }
}
