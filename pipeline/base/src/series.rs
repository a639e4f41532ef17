//! The statistics of one series (one job, node and metric after trimming), computed in memory from
//! its samples: the pure core of the features' single pass, shared by the day and per-job paths
//! and checked against the reference SQL (`features::reference`) and by hand; and of the SQL
//! functions `js_*` (`query::series_functions`), which compute the same on any selection. A leaf
//! below both, so that neither calls the other.
//!
//! Definitions (the reference SQL computes the same for the columns it has):
//! - `n` finite samples; NaN and infinities are counted in `n_nonfinite` and left out of
//!   everything else;
//! - `mean`, population `std` (divisor n), `cv` = std / mean (none when the mean is 0),
//!   `skewness` = m3 / m2^1.5 and excess `kurtosis` = m4 / m2² − 3 (scipy's defaults; none when the
//!   series is constant, min = max), central moments computed in two passes for accuracy;
//! - percentiles 5, 25, 50, 75, 95 with linear interpolation at rank p × (n − 1) (numpy's default),
//!   exact (no truncation of the weight, unlike DataFusion 55's `percentile_cont`);
//! - `interval_s`: the median spacing of the samples (all received samples, finite or not), the
//!   sampling interval the coverage figure expects;
//! - `slope_per_h`: least-squares slope of the value on time, in units per hour (memory growth);
//! - `catastrophe` (tacc_stats): the minimum over time splits of mean(after) / mean(before), where
//!   each side keeps at least a tenth of the samples and at least two, so that one odd sample at
//!   either end cannot decide it; near 0 when work fell off a cliff and did not come back, about 1
//!   for steady work, none when no split has a positive mean before it;
//! - `max_rise`: the largest increase from an earlier sample to a later one (max over t of
//!   v(t) − min over s ≤ t of v(s)): the growth of a leak that stopped before the job ended,
//!   which the whole-job slope misses;
//! - `rise_from`, `rise_to`: where the largest rise happened, as the time it last stood within a
//!   tenth of the rise above its low point and the time it first reached nine tenths of the rise:
//!   for a steady leak the middle 80 % of its growth, for a jump one sampling interval (so a rule
//!   can tell the two apart and name the time window);
//! - `cliff_at`: the time of the split that gave `catastrophe`;
//! - `idle_share`: for metrics with an idle threshold (utilisations), the share of samples below it.

/// One sample: time (microseconds since the epoch) and value.
pub type Sample = (i64, f64);

/// The percentiles computed for every series, as fractions.
pub const PERCENTILES: [f64; 5] = [0.05, 0.25, 0.50, 0.75, 0.95];

/// The statistics of one series. `None` where a figure is undefined (no finite samples, a constant
/// series, too few samples for a split).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeriesStats {
    pub n: u64,
    pub n_nonfinite: u64,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    pub std: Option<f64>,
    pub cv: Option<f64>,
    pub skewness: Option<f64>,
    pub kurtosis: Option<f64>,
    /// At [`PERCENTILES`].
    pub percentiles: [Option<f64>; 5],
    pub interval_s: Option<f64>,
    pub slope_per_h: Option<f64>,
    pub catastrophe: Option<f64>,
    pub max_rise: Option<f64>,
    /// Microseconds since the epoch; see the module doc.
    pub rise_from: Option<i64>,
    pub rise_to: Option<i64>,
    pub cliff_at: Option<i64>,
    pub idle_share: Option<f64>,
}

use std::collections::BTreeMap;

pub use crate::stats::percentile_of_sorted;

/// The percentiles of `values` (any order; reordered in place), by selection rather than a full
/// sort: each rank is selected in the part of the slice above the previous one.
fn percentiles(values: &mut [f64]) -> [Option<f64>; 5] {
    let n = values.len();
    if n == 0 {
        return [None; 5];
    }
    // The ranks each percentile needs, ascending; select each in the rest of the slice.
    let mut ranks: Vec<usize> = PERCENTILES
        .iter()
        .flat_map(|p| {
            let rank = p * (n - 1) as f64;
            let low = rank.floor() as usize;
            [low, (low + 1).min(n - 1)]
        })
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    let mut done = 0;
    for &rank in &ranks {
        if rank >= done {
            values[done..].select_nth_unstable_by(rank - done, f64::total_cmp);
            done = rank + 1;
        }
    }
    PERCENTILES.map(|p| {
        let rank = p * (n - 1) as f64;
        let low = rank.floor() as usize;
        let high = (low + 1).min(n - 1);
        Some(values[low] + (rank - low as f64) * (values[high] - values[low]))
    })
}

/// The median spacing of `ts` (ascending microseconds) in seconds; `None` with fewer than two
/// distinct times.
pub fn median_interval_s(ts: &[i64]) -> Option<f64> {
    let mut gaps: Vec<i64> = ts
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&g| g > 0)
        .collect();
    if gaps.is_empty() {
        return None;
    }
    let middle = gaps.len() / 2;
    let (_, median, _) = gaps.select_nth_unstable(middle);
    Some(*median as f64 / 1e6)
}

/// tacc_stats' catastrophe figure over `values` in time order (see the module doc).
pub fn catastrophe(values: &[f64]) -> Option<f64> {
    catastrophe_split(values).map(|(ratio, _)| ratio)
}

/// The catastrophe figure and the index of the first sample after the split that gave it.
fn catastrophe_split(values: &[f64]) -> Option<(f64, usize)> {
    let n = values.len();
    let side = (n / 10).max(2);
    if n < 2 * side {
        return None;
    }
    let total: f64 = values.iter().sum();
    let mut before = 0.0;
    let mut lowest: Option<(f64, usize)> = None;
    for (k, v) in values.iter().enumerate().take(n - side) {
        before += v;
        let split = k + 1;
        if split < side {
            continue;
        }
        let mean_before = before / split as f64;
        if mean_before > 0.0 {
            let ratio = ((total - before) / (n - split) as f64) / mean_before;
            if lowest.is_none_or(|(l, _)| ratio < l) {
                lowest = Some((ratio, split));
            }
        }
    }
    lowest
}

/// The largest rise of `values` (in time order) from an earlier sample to a later one; 0 for a
/// series that never rises.
pub fn max_rise(values: &[f64]) -> Option<f64> {
    let mut lowest = *values.first()?;
    let mut rise: f64 = 0.0;
    for &v in values {
        lowest = lowest.min(v);
        rise = rise.max(v - lowest);
    }
    Some(rise)
}

/// Where the largest rise of `values` (times `ts`) happened: `(from, to)` as in the module doc;
/// `None` when the series never rises.
pub fn rise_span(ts: &[i64], values: &[f64]) -> Option<(i64, i64)> {
    let (mut lowest_at, mut low, mut high) = (0, 0, 0);
    let mut rise: f64 = 0.0;
    for (k, &v) in values.iter().enumerate() {
        if v < values[lowest_at] {
            lowest_at = k;
        }
        if v - values[lowest_at] > rise {
            (rise, low, high) = (v - values[lowest_at], lowest_at, k);
        }
    }
    if rise <= 0.0 {
        return None;
    }
    let base = values[low];
    let reached = (low..=high).find(|&k| values[k] >= base + 0.9 * rise)?;
    let left = (low..=reached)
        .rev()
        .find(|&k| values[k] <= base + 0.1 * rise)?;
    Some((ts[left], ts[reached]))
}

/// Least-squares slope of `values` on `ts` (microseconds), per hour.
fn slope_per_h(ts: &[i64], values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let origin = ts[0];
    let hours = |t: i64| (t - origin) as f64 / 3.6e9;
    let mean_t = ts.iter().map(|&t| hours(t)).sum::<f64>() / n as f64;
    let mean_v = values.iter().sum::<f64>() / n as f64;
    let (mut covariance, mut variance) = (0.0, 0.0);
    for (&t, &v) in ts.iter().zip(values) {
        let dt = hours(t) - mean_t;
        covariance += dt * (v - mean_v);
        variance += dt * dt;
    }
    (variance > 0.0).then(|| covariance / variance)
}

/// One bin of a series: the mean of its finite samples and how many there were.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BinMean {
    pub mean: f64,
    pub n: u64,
}

/// Averages of the finite samples in bins of `bin_us` (aligned to the epoch, as DataFusion's
/// `date_bin`), by bin start, summed in the samples' order, each with its count: what tacc_stats'
/// node imbalance compares across a job's nodes (`features::job`, and `js_bin_means` for the
/// features plan). The count tells a bin the node covered from one it covered a sliver of.
pub fn bin_means(samples: &[Sample], bin_us: i64) -> BTreeMap<i64, BinMean> {
    let mut sums: BTreeMap<i64, (f64, u64)> = BTreeMap::new();
    for &(t, v) in samples.iter().filter(|s| s.1.is_finite()) {
        let sum = sums.entry(t - t.rem_euclid(bin_us)).or_default();
        sum.0 += v;
        sum.1 += 1;
    }
    sums.into_iter()
        .map(|(bin, (sum, n))| {
            let mean = sum / n as f64;
            (bin, BinMean { mean, n })
        })
        .collect()
}

/// The statistics of one series from its samples `(ts micros, value)`, sorted here by time if
/// they are not already. `idle_below`: the metric's idle threshold, if it has one.
pub fn describe(samples: &mut [Sample], idle_below: Option<f64>) -> SeriesStats {
    if !samples.is_sorted_by_key(|s| s.0) {
        samples.sort_by_key(|s| s.0);
    }
    let all_ts: Vec<i64> = samples.iter().map(|s| s.0).collect();
    let (finite, nonfinite): (Vec<Sample>, Vec<Sample>) =
        samples.iter().partition(|s| s.1.is_finite());
    let mut stats = SeriesStats {
        n: finite.len() as u64,
        n_nonfinite: nonfinite.len() as u64,
        interval_s: median_interval_s(&all_ts),
        ..SeriesStats::default()
    };
    if finite.is_empty() {
        return stats;
    }
    let ts: Vec<i64> = finite.iter().map(|s| s.0).collect();
    let values: Vec<f64> = finite.iter().map(|s| s.1).collect();
    let n = values.len() as f64;
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    for &v in &values {
        min = min.min(v);
        max = max.max(v);
    }
    // The plain sum's rounding is corrected by one pass over the deviations, and a constant
    // series gets its value exactly: 0.002 summed 3,617 times must not come out as
    // 0.0019999999999998, with a residue of a std (the peers in the benchmark give exactly 0).
    let mean = if min == max {
        min
    } else {
        let rough = values.iter().sum::<f64>() / n;
        rough + values.iter().map(|v| v - rough).sum::<f64>() / n
    };
    let (mut m2, mut m3, mut m4) = (0.0, 0.0, 0.0);
    for &v in &values {
        let d = v - mean;
        let d2 = d * d;
        m2 += d2;
        m3 += d2 * d;
        m4 += d2 * d2;
    }
    let (m2, m3, m4) = (m2 / n, m3 / n, m4 / n);
    let std = m2.sqrt();
    stats.min = Some(min);
    stats.max = Some(max);
    stats.mean = Some(mean);
    stats.std = Some(std);
    // A constant series has no shape, even when rounding in the mean leaves a tiny m2.
    let varies = min < max && m2 > 0.0;
    stats.cv = (mean != 0.0).then(|| std / mean);
    stats.skewness = varies.then(|| m3 / m2.powf(1.5));
    stats.kurtosis = varies.then(|| m4 / (m2 * m2) - 3.0);
    stats.slope_per_h = slope_per_h(&ts, &values);
    let cliff = catastrophe_split(&values);
    stats.catastrophe = cliff.map(|(ratio, _)| ratio);
    stats.cliff_at = cliff.map(|(_, split)| ts[split]);
    stats.max_rise = max_rise(&values);
    (stats.rise_from, stats.rise_to) = rise_span(&ts, &values).unzip();
    stats.idle_share =
        idle_below.map(|limit| values.iter().filter(|&&v| v < limit).count() as f64 / n);
    let mut sorted = values;
    stats.percentiles = percentiles(&mut sorted);
    stats
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    fn series(values: &[f64]) -> Vec<(i64, f64)> {
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| (i as i64 * 10_000_000, v))
            .collect()
    }

    #[test]
    fn hand_checked() {
        let mut s = series(&[1.0, 2.0, 3.0, 4.0, 10.0]);
        let d = describe(&mut s, Some(2.5));
        assert_eq!((d.n, d.n_nonfinite), (5, 0));
        assert_eq!(d.mean, Some(4.0));
        // Central moments: m2 = 10, m3 = 36, m4 = 278.8 (by hand).
        assert!((d.std.unwrap() - 10f64.sqrt()).abs() < 1e-12);
        assert!((d.skewness.unwrap() - 36.0 / 10f64.powf(1.5)).abs() < 1e-12);
        assert!((d.kurtosis.unwrap() - (278.8 / 100.0 - 3.0)).abs() < 1e-12);
        for (got, want) in d.percentiles.iter().zip([1.2, 2.0, 3.0, 4.0, 8.8]) {
            assert!((got.unwrap() - want).abs() < 1e-12, "{got:?} vs {want}");
        }
        assert_eq!(d.interval_s, Some(10.0));
        assert_eq!(d.idle_share, Some(0.4));
        // Slope: values against 0, 10, ..., 40 s; least squares gives 2 per sample = 720 per hour.
        assert!((d.slope_per_h.unwrap() - 720.0).abs() < 1e-9);
        // Five samples cannot be split with two on each side and a tenth: splits at 2 and 3.
        // After 2: mean(3,4,10)/mean(1,2) = 5.667/1.5; after 3: mean(4,10)/mean(1,2,3) = 7/2.
        assert!((d.catastrophe.unwrap() - 3.5).abs() < 1e-12);
        assert_eq!(d.max_rise, Some(9.0));
    }

    #[test]
    fn a_leak_that_stopped_still_rises() {
        // Grows by 5, then falls back below the start: the slope is about 0, the rise is 5.
        assert_eq!(max_rise(&[3.0, 4.0, 8.0, 2.0, 2.5]), Some(5.0));
        assert_eq!(max_rise(&[5.0, 4.0, 3.0]), Some(0.0));
        assert_eq!(max_rise(&[]), None);
    }

    #[test]
    fn the_span_of_a_rise_is_its_middle_for_a_ramp_and_one_step_for_a_jump() {
        let ts: Vec<i64> = (0..20).map(|k| k * 10).collect();
        // Flat at 5 with a dip to 4 early on, a ramp of 1 per sample from index 8 to 17, then freed.
        let mut ramp = vec![5.0; 20];
        ramp[2] = 4.0;
        for (k, v) in ramp.iter_mut().enumerate().take(18).skip(8) {
            *v = 5.0 + (k - 7) as f64;
        }
        ramp[18] = 5.0;
        ramp[19] = 5.0;
        // Rise 11 from the dip (4) to 15 at index 17: 10 % = 5.1 (last at index 7), 90 % = 13.9
        // (first at index 16).
        assert_eq!(rise_span(&ts, &ramp), Some((70, 160)));
        let mut jump = vec![1.0; 20];
        jump[12..].fill(9.0);
        assert_eq!(rise_span(&ts, &jump), Some((110, 120)));
        assert_eq!(rise_span(&ts, &[3.0, 2.0, 1.0]), None);
        let mut cliff = vec![(0i64, 1.0); 10];
        cliff.extend(vec![(0i64, 0.0); 10]);
        for (k, s) in cliff.iter_mut().enumerate() {
            s.0 = k as i64 * 10;
        }
        assert_eq!(describe(&mut cliff, None).cliff_at, Some(100));
    }

    #[test]
    fn a_cliff_is_a_catastrophe() {
        let mut values = vec![1.0; 50];
        values.extend(vec![0.0; 50]);
        assert_eq!(catastrophe(&values), Some(0.0));
        assert_eq!(catastrophe(&[1.0; 100]), Some(1.0));
        assert_eq!(catastrophe(&[1.0, 0.0, 1.0]), None);
        assert_eq!(catastrophe(&[0.0; 10]), None);
    }

    #[test]
    fn edge_cases_are_defined() {
        let d = describe(&mut [], None);
        assert_eq!((d.n, d.mean, d.interval_s), (0, None, None));
        let d = describe(&mut [(5, 3.0)], Some(1.0));
        assert_eq!(
            (d.n, d.mean, d.std, d.skewness),
            (1, Some(3.0), Some(0.0), None)
        );
        assert_eq!(d.percentiles, [Some(3.0); 5]);
        assert_eq!(
            (d.slope_per_h, d.interval_s, d.idle_share),
            (None, None, Some(0.0))
        );
        let mut s = vec![(0, f64::NAN), (10, f64::INFINITY), (20, f64::NEG_INFINITY)];
        let d = describe(&mut s, None);
        assert_eq!((d.n, d.n_nonfinite, d.min), (0, 3, None));
        // Out of order and a duplicate time: sorted, the duplicate is no interval.
        let mut s = vec![
            (20_000_000, 3.0),
            (0, 1.0),
            (10_000_000, 2.0),
            (10_000_000, 2.0),
        ];
        let d = describe(&mut s, None);
        assert_eq!(
            (d.interval_s, d.min, d.max),
            (Some(10.0), Some(1.0), Some(3.0))
        );
        // A constant series: its value as the mean and a std of exactly 0, however it sums.
        let d = describe(&mut vec![(0, 0.002); 3617], None);
        assert_eq!((d.mean, d.std, d.skewness), (Some(0.002), Some(0.0), None));
        // Zero mean: no cv.
        let d = describe(&mut series(&[-1.0, 1.0]), None);
        assert_eq!(d.cv, None);
    }

    proptest! {
        /// Every figure a user reads agrees with its definition, whatever the series: the
        /// percentiles in order, the mean between the extremes, std and the idle share within
        /// their bounds, the samples counted.
        #[test]
        fn figures_keep_their_definitions(
            values in proptest::collection::vec(
                prop_oneof![8 => -1e9f64..1e9, 1 => Just(f64::NAN), 1 => Just(f64::INFINITY)],
                1..300,
            ),
        ) {
            let mut samples: Vec<Sample> = values
                .iter()
                .enumerate()
                .map(|(i, v)| (i as i64 * 10_000_000, *v))
                .collect();
            let d = describe(&mut samples, Some(0.05));
            let finite = values.iter().filter(|v| v.is_finite()).count() as u64;
            prop_assert_eq!(d.n + d.n_nonfinite, values.len() as u64);
            prop_assert_eq!(d.n, finite);
            if let (Some(min), Some(max), Some(mean)) = (d.min, d.max, d.mean) {
                prop_assert!(min <= max);
                // Floating sums may land a hair outside on near-constant series.
                let slack = 1e-9 * (max.abs() + min.abs() + 1.0);
                prop_assert!(mean >= min - slack && mean <= max + slack, "{min} {mean} {max}");
                let p: Vec<f64> = d.percentiles.iter().flatten().copied().collect();
                prop_assert_eq!(p.len(), 5);
                prop_assert!(p.windows(2).all(|w| w[0] <= w[1]), "{p:?}");
                prop_assert!(min <= p[0] && p[4] <= max, "{p:?}");
            }
            if let Some(std) = d.std {
                prop_assert!(std >= 0.0);
            }
            if let Some(idle) = d.idle_share {
                prop_assert!((0.0..=1.0).contains(&idle));
            }
        }

        /// Selection gives what a full sort gives, for every percentile.
        #[test]
        fn percentiles_match_a_sort(values in proptest::collection::vec(-1e6f64..1e6, 1..200)) {
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let mut work = values.clone();
            let got = percentiles(&mut work);
            for (p, g) in PERCENTILES.iter().zip(got) {
                prop_assert_eq!(g, Some(percentile_of_sorted(&sorted, *p)));
            }
        }
    }
}
