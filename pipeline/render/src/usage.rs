//! How a share of a request that a job used is judged for colour, one place for every view:
//! jobstats' limits, red below the first and yellow below the second (the job pages, the "what
//! runs now" page, `jobsight running`).

use super::units::size_from_mb;

/// A bar's width in percent of a share (0 to 100).
pub fn bar_width(share: Option<f64>) -> f64 {
    (share.unwrap_or(0.0).clamp(0.0, 1.0) * 100.0).round()
}

/// The usage shares' limits, jobstats' (red below the first, yellow below the second): the job
/// pages, the "what runs now" page and `jobsight running` colour by these.
pub const CPU_LEVELS: (f64, f64) = (0.65, 0.8);
pub const MEMORY_LEVELS: (f64, f64) = (0.3, 0.7);
pub const TIME_LEVELS: (f64, f64) = (0.1, 0.5);
pub const GPU_LEVELS: (f64, f64) = (0.15, 0.25);

/// How much of its memory request a job used, as every view shows it: over-use is a problem, not
/// a full green bar.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryUse {
    /// Peak over request, not capped at 1 (the warehouse's `mem_eff` is).
    pub share: Option<f64>,
    /// `68 %`, `22× the request`, `killed at its limit`.
    pub text: String,
    /// [`level`]'s, or `over` for a job killed for memory or past its request.
    pub level: &'static str,
}

/// [`MemoryUse`] of a job from its state, request and peak (both the whole job's, in MB), else
/// its stored efficiency.
pub fn memory_use(
    state: &str,
    req_mb: Option<i64>,
    used_mb: Option<f64>,
    eff: Option<f64>,
) -> MemoryUse {
    let share = match (req_mb, used_mb) {
        (Some(req), Some(used)) if req > 0 && used.is_finite() => Some(used / req as f64),
        _ => eff,
    };
    let over = |text: String| MemoryUse {
        share,
        text,
        level: "over",
    };
    match share {
        _ if state == "OUT_OF_MEMORY" => over("killed at its limit".into()),
        Some(s) if s >= 2.0 => over(format!("{s:.0}× the request")),
        Some(s) if s > 1.05 => over(format!("{s:.1}× the request")),
        _ => MemoryUse {
            share,
            text: share.map_or("-".into(), super::units::percent),
            level: level(share, MEMORY_LEVELS),
        },
    }
}

/// What a job's GPUs did, in words, from `job_summary`'s figures: the ones the GPU rules read,
/// so that no finding rests on a figure this row refuses.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuUse {
    /// `0.4 of 4 busy on average`, or why it is not known.
    pub busy: String,
    /// `31.6 GB at its peak (7.91 GB per GPU)`, or why it is not known.
    pub memory: String,
    /// The GPUs' memory it held (`160 GB`), where known.
    pub memory_size: String,
    /// The peak over the GPUs' memory (0 to 1), where both are known.
    pub memory_share: Option<f64>,
    /// How busy the GPUs were on average (0 to 1), for the row's bar: only the telemetry's mean
    /// (Slurm's figure is a peak, shown in words alone).
    pub busy_share: Option<f64>,
}

/// A job's GPU figures as `job_summary` has them: mean utilisation (0–1), memory peak and the
/// GPUs' memory (MiB, all its GPUs), and whether it shared its nodes (where the nodes' GPUs are
/// not the job's alone); and as Slurm's accounting has them (`jobs.acct_gpu_*`: the busiest
/// task's peak utilisation in per cent and its peak memory), which a site without DCGM still has
/// and which the rule `gpu-never-busy` reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct GpuFigures {
    pub util: Option<f64>,
    pub mem_mb: Option<f64>,
    pub total_mb: Option<f64>,
    pub shared: Option<bool>,
    pub slurm_util_peak_pct: Option<f64>,
    pub slurm_mem_peak_mb: Option<f64>,
}

/// [`GpuUse`] of a job with `gpus` GPUs.
pub fn gpu_use(gpus: i64, figures: GpuFigures) -> GpuUse {
    let GpuFigures {
        util,
        mem_mb,
        total_mb,
        shared,
        slurm_util_peak_pct,
        slurm_mem_peak_mb,
    } = figures;
    let unknown = if shared == Some(true) {
        "not measurable: shared nodes, no series of its own GPUs"
    } else {
        "-"
    };
    // Slurm measures each task's own GPUs, so its figures hold on a shared node too; they are
    // the busiest task's peaks (its GPUs' use added up since Slurm 24.05, so above 100 % where a
    // task has several), said in words and never drawn as the job's mean.
    let slurm_busy = slurm_util_peak_pct.map(|pct| {
        format!(
            "peak {} (Slurm, busiest task)",
            super::units::percent(pct / 100.0)
        )
    });
    let slurm_memory =
        slurm_mem_peak_mb.map(|mb| format!("peak {} (Slurm, busiest task)", size_from_mb(mb)));
    let own_memory = mem_mb.map(|mb| {
        format!(
            "{} at its peak ({} per GPU)",
            size_from_mb(mb),
            size_from_mb(mb / gpus.max(1) as f64)
        )
    });
    GpuUse {
        busy: util
            .map(|u| format!("{:.1} of {gpus} busy on average", u * gpus as f64))
            .or(slurm_busy)
            .unwrap_or_else(|| unknown.into()),
        memory: own_memory
            .or(slurm_memory)
            .unwrap_or_else(|| unknown.into()),
        memory_size: total_mb.map_or("-".into(), size_from_mb),
        memory_share: mem_mb
            .zip(total_mb.filter(|t| *t > 0.0))
            .map(|(used, total)| used / total),
        busy_share: util,
    }
}

/// `bad`, `low` or `good` for a usage share, by `(red_below, low_below)` ([`CPU_LEVELS`], ...).
pub fn level(share: Option<f64>, (red_below, low_below): (f64, f64)) -> &'static str {
    match share {
        None => "unknown",
        Some(s) if s < red_below => "bad",
        Some(s) if s < low_below => "low",
        _ => "good",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bars: a 130.5 GB peak against 6 GB is 22× the request, not a green 100 %; a
    /// job killed for memory says so.
    #[test]
    fn over_use_is_shown_as_over_use() {
        let over = memory_use("COMPLETED", Some(6 * 1024), Some(130.5 * 1024.0), Some(1.0));
        assert_eq!(
            (over.text.as_str(), over.level),
            ("22× the request", "over")
        );
        let killed = memory_use("OUT_OF_MEMORY", Some(2048), Some(2048.0), Some(1.0));
        assert_eq!(
            (killed.text.as_str(), killed.level),
            ("killed at its limit", "over")
        );
        let fine = memory_use("COMPLETED", Some(32 * 1024), Some(21.6 * 1024.0), None);
        assert_eq!((fine.text.as_str(), fine.level), ("68 %", "low"));
    }

    /// The GPU rows say what the GPU rules read, and why a figure is missing on a shared node.
    #[test]
    fn gpu_use_reads_the_summary_s_figures() {
        let own = gpu_use(
            4,
            GpuFigures {
                util: Some(0.1),
                mem_mb: Some(4.0 * 8192.0),
                total_mb: Some(4.0 * 40960.0),
                shared: Some(true),
                ..Default::default()
            },
        );
        assert_eq!(own.busy, "0.4 of 4 busy on average");
        assert_eq!(own.memory, "32 GB at its peak (8 GB per GPU)");
        assert_eq!(
            (own.memory_size.as_str(), own.memory_share),
            ("160 GB", Some(0.2))
        );
        let shared = gpu_use(
            4,
            GpuFigures {
                shared: Some(true),
                ..Default::default()
            },
        );
        assert!(shared.busy.starts_with("not measurable"), "{shared:?}");
        assert_eq!(shared.memory_share, None);
        let alone = GpuFigures {
            shared: Some(false),
            ..Default::default()
        };
        assert_eq!(gpu_use(1, alone).busy, "-");
        // A site without DCGM: Slurm's own peaks, said as peaks, on a shared node too; the
        // telemetry's mean wins where there is one.
        let slurm = GpuFigures {
            shared: Some(true),
            slurm_util_peak_pct: Some(3.0),
            slurm_mem_peak_mb: Some(1024.0),
            ..Default::default()
        };
        let from_slurm = gpu_use(2, slurm);
        assert_eq!(from_slurm.busy, "peak 3.0 % (Slurm, busiest task)");
        assert_eq!(from_slurm.memory, "peak 1 GB (Slurm, busiest task)");
        assert_eq!(from_slurm.busy_share, None);
        assert_eq!(from_slurm.memory_share, None);
        let both = gpu_use(
            2,
            GpuFigures {
                util: Some(0.5),
                ..slurm
            },
        );
        assert_eq!(
            (both.busy.as_str(), both.busy_share),
            ("1.0 of 2 busy on average", Some(0.5))
        );
    }
}
