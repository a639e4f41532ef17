//! Small statistics shared by the stages (the features' per-job figures, the jobs' history), in
//! one place so that they agree: a leaf module, below the stages.

/// The median: the middle value, or the mean of the two middle ones; `None` for no values. Found
/// by selection (linear time, not a sort), which leaves `values` in no particular order; NaN
/// counts as the largest, as `f64::total_cmp` orders it.
pub fn median(values: &mut [f64]) -> Option<f64> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let (below, middle, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    let middle = *middle;
    Some(if n % 2 == 1 {
        middle
    } else {
        // The largest of the lower half is the other middle value.
        let lower = below
            .iter()
            .copied()
            .max_by(f64::total_cmp)
            .unwrap_or(middle);
        (lower + middle) / 2.0
    })
}

/// The value at fraction `p` of `sorted` (ascending, not empty) by linear interpolation between
/// the closest ranks, numpy's default method.
pub fn percentile_of_sorted(sorted: &[f64], p: f64) -> f64 {
    let rank = p * (sorted.len() - 1) as f64;
    let low = rank.floor() as usize;
    let high = (low + 1).min(sorted.len() - 1);
    let weight = rank - low as f64;
    sorted[low] + weight * (sorted[high] - sorted[low])
}

/// The median and 95th percentile of the finite `values` (numpy's method); `None` for none.
pub fn median_and_p95(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = values.filter(|v| v.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some((
        percentile_of_sorted(&v, 0.5),
        percentile_of_sorted(&v, 0.95),
    ))
}

/// FNV-1a, defined once in the hook's crate (whose spool and SWF part names use it) and used
/// from here by the model files' checksum, the rule book's version, the LDMS store's part names,
/// the telemetry builder's maps and [`hash`].
pub use slurm_hooks::spool_dir::{FNV_OFFSET, fnv1a_from};

/// The FNV-1a hash of `bytes` as 16 hex digits: the model files' checksum and the LDMS store's
/// part names (the same text as the hook's `spool_dir::name_hash`).
pub fn fnv1a(bytes: &[u8]) -> String {
    slurm_hooks::spool_dir::name_hash(bytes)
}

/// A 64-bit mix of a string and a seed (FNV-1a then splitmix), for seeded, portable shuffles.
pub fn hash(text: &str, seed: u64) -> u64 {
    let mut h = fnv1a_from(FNV_OFFSET ^ seed, text.as_bytes());
    h = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// The area under the ROC curve of `scores` against `positive` (the probability that a positive
/// scores above a negative, ties counting half: the Mann-Whitney form); `None` without both
/// classes.
pub fn roc_auc(scores: &[f64], positive: &[bool]) -> Option<f64> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    // Mid-ranks over groups of equal scores.
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && scores[order[j + 1]] == scores[order[i]] {
            j += 1;
        }
        let mid = (i + j) as f64 / 2.0 + 1.0;
        rank_sum += mid * order[i..=j].iter().filter(|&&k| positive[k]).count() as f64;
        i = j + 1;
    }
    let p = positive.iter().filter(|&&x| x).count() as f64;
    let n = positive.len() as f64 - p;
    (p > 0.0 && n > 0.0).then(|| (rank_sum - p * (p + 1.0) / 2.0) / (p * n))
}

/// Average precision of `scores` against `positive`, as scikit-learn computes it: the mean of
/// the precision at each threshold weighted by the recall it adds, equal scores taken together;
/// `None` without a positive.
pub fn average_precision(scores: &[f64], positive: &[bool]) -> Option<f64> {
    let total = positive.iter().filter(|&&x| x).count() as f64;
    if total == 0.0 {
        return None;
    }
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    let (mut tp, mut seen, mut ap, mut recall) = (0.0, 0.0, 0.0, 0.0);
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && scores[order[j + 1]] == scores[order[i]] {
            j += 1;
        }
        tp += order[i..=j].iter().filter(|&&k| positive[k]).count() as f64;
        seen += (j - i + 1) as f64;
        let r = tp / total;
        ap += (r - recall) * (tp / seen);
        recall = r;
        i = j + 1;
    }
    Some(ap)
}

#[cfg(test)]
mod tests {
    /// The seeded shuffles' hash keeps its value (FNV-1a's own values are pinned where it is
    /// defined, in the hook's `spool_dir`).
    #[test]
    fn the_seeded_hash_keeps_its_value() {
        assert_eq!(super::hash("x", 1), 0xe5d8_60ef_9db9_5dbb);
        assert_eq!(super::fnv1a(b"a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn odd_even_and_empty() {
        assert_eq!(super::median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(super::median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(super::median(&mut []), None);
        // The middle of the sorted values (or the mean of the two), whatever the order and
        // length, repeated values included.
        let mut x = 0.37_f64;
        for n in 1..40 {
            let values: Vec<f64> = (0..n)
                .map(|_| {
                    x = (x * 9301.0 + 0.49297) % 1.0;
                    (x * 10.0).floor()
                })
                .collect();
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let middle = if n % 2 == 1 {
                sorted[n / 2]
            } else {
                (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
            };
            assert_eq!(
                super::median(&mut values.clone()),
                Some(middle),
                "{values:?}"
            );
        }
    }

    #[test]
    fn ranking_figures_agree_with_scikit_learn() {
        // sklearn.metrics: roc_auc_score 0.75, average_precision_score 0.8333 for these.
        let scores = [0.1, 0.4, 0.35, 0.8];
        let positive = [false, false, true, true];
        assert_eq!(super::roc_auc(&scores, &positive), Some(0.75));
        let ap = super::average_precision(&scores, &positive).unwrap();
        assert!((ap - 0.833_333_333).abs() < 1e-6, "{ap}");
        // Ties count half; one class only gives none.
        assert_eq!(super::roc_auc(&[1.0, 1.0], &[true, false]), Some(0.5));
        assert_eq!(super::roc_auc(&[1.0, 2.0], &[true, true]), None);
        assert_eq!(super::average_precision(&[1.0], &[false]), None);
    }
}
