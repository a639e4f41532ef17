//! Small statistics shared by the stages (the features' per-job figures, the jobs' history), in
//! one place so that they agree: a leaf module, below the stages.

/// The median: the middle value, or the mean of the two middle ones; `None` for no values.
/// Sorts `values` in place (NaN last, as `f64::total_cmp` orders it).
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn odd_even_and_empty() {
        assert_eq!(super::median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(super::median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(super::median(&mut []), None);
    }
}
