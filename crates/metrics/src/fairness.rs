//! Jain's fairness index (Jain, Chiu, Hawe 1984; PROTOCOLS.md §9.2).

/// `J = (Σx)² / (n · Σx²)`, in `[1/n, 1]`; 1 when all shares are equal.
///
/// Empty input gives NaN; all-zero input gives 1 (nobody gets anything, equally).
pub fn jain(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let sum: f64 = xs.iter().sum();
    let sum_sq: f64 = xs.iter().map(|x| x * x).sum();
    if sum_sq == 0.0 {
        1.0
    } else {
        sum * sum / (xs.len() as f64 * sum_sq)
    }
}

/// Jain's index of throughputs normalised by each flow's optimal (e.g. max-min fair) share.
pub fn jain_normalised(xs: &[f64], optimal: &[f64]) -> f64 {
    let normalised: Vec<f64> = xs
        .iter()
        .zip(optimal)
        .map(|(x, o)| if *o > 0.0 { x / o } else { 0.0 })
        .collect();
    jain(&normalised)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extremes() {
        assert_eq!(jain(&[5.0, 5.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!(jain(&[]).is_nan());
        assert_eq!(jain(&[0.0, 0.0]), 1.0);
        // 3:1 split of two flows: 16 / (2 · 10) = 0.8.
        assert!((jain(&[3.0, 1.0]) - 0.8).abs() < 1e-12);
        assert!((jain_normalised(&[2.0, 1.0], &[2.0, 1.0]) - 1.0).abs() < 1e-12);
    }
}
