//! How a share of a request that a job used is judged for colour, one place for every view:
//! jobstats' limits, red below the first and yellow below the second (the job pages, the "what
//! runs now" page, `jobsight running`).

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

/// `bad`, `low` or `good` for a usage share, by `(red_below, low_below)` ([`CPU_LEVELS`], ...).
pub fn level(share: Option<f64>, (red_below, low_below): (f64, f64)) -> &'static str {
    match share {
        None => "unknown",
        Some(s) if s < red_below => "bad",
        Some(s) if s < low_below => "low",
        _ => "good",
    }
}
