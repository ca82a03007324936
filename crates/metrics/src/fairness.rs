//! Jain's fairness index (Jain, Chiu, Hawe 1984; PROTOCOLS.md §9.2) and the max-min fair
//! allocation of a network by progressive filling (Bertsekas and Gallager, *Data Networks*,
//! §6.5.2), the yardstick ABR's ERICA aims at.

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

/// The max-min fair rates of flows over links, by progressive filling: every unfrozen flow's
/// rate grows at the same pace until a link it crosses is full (its flows freeze there) or its
/// own `demand` is reached; repeated until every flow is frozen.
///
/// `capacity[l]` is what link `l` can carry, `paths[f]` the links flow `f` crosses, `demand[f]`
/// the most flow `f` wants (`f64::INFINITY` for a greedy one). A flow that crosses no link gets
/// its demand. Panics if a path names a link out of range.
pub fn max_min_rates(capacity: &[f64], paths: &[Vec<usize>], demand: &[f64]) -> Vec<f64> {
    assert_eq!(paths.len(), demand.len(), "one demand per flow");
    let n = paths.len();
    let mut rate = vec![0.0; n];
    let mut frozen: Vec<bool> = paths.iter().map(Vec::is_empty).collect();
    for f in 0..n {
        if frozen[f] {
            rate[f] = demand[f];
        }
    }
    let mut left = capacity.to_vec();
    while frozen.iter().any(|&z| !z) {
        // The largest equal increment every unfrozen flow can take.
        let mut step = f64::INFINITY;
        for (l, &cap) in left.iter().enumerate() {
            let users = (0..n)
                .filter(|&f| !frozen[f] && paths[f].contains(&l))
                .count();
            if users > 0 {
                step = step.min(cap / users as f64);
            }
        }
        for f in (0..n).filter(|&f| !frozen[f]) {
            step = step.min(demand[f] - rate[f]);
        }
        let step = step.max(0.0);
        for f in (0..n).filter(|&f| !frozen[f]) {
            rate[f] += step;
            for &l in &paths[f] {
                left[l] -= step;
            }
        }
        // Freeze the flows of every full link and those that reached their demand.
        let full: Vec<bool> = left.iter().map(|&c| c <= 1e-9 * (1.0 + c.abs())).collect();
        for f in 0..n {
            if !frozen[f] && (rate[f] >= demand[f] || paths[f].iter().any(|&l| full[l])) {
                frozen[f] = true;
            }
        }
    }
    rate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_min_fills_the_parking_lot_bottleneck_first() {
        // Links of 10 and 4; A crosses both, B the first, C the second.
        let paths = vec![vec![0, 1], vec![0], vec![1]];
        let greedy = [f64::INFINITY; 3];
        assert_eq!(
            max_min_rates(&[10.0, 4.0], &paths, &greedy),
            vec![2.0, 8.0, 2.0]
        );
        // A third flow on the second link: A and both C get 4/3, B the rest of the first.
        let paths = vec![vec![0, 1], vec![0], vec![1], vec![1]];
        let r = max_min_rates(&[10.0, 4.0], &paths, &[f64::INFINITY; 4]);
        for (got, want) in r
            .iter()
            .zip([4.0 / 3.0, 10.0 - 4.0 / 3.0, 4.0 / 3.0, 4.0 / 3.0])
        {
            assert!((got - want).abs() < 1e-9, "{r:?}");
        }
        // A demand below the fair share frees capacity for the others.
        let paths = vec![vec![0], vec![0]];
        assert_eq!(
            max_min_rates(&[10.0], &paths, &[1.0, f64::INFINITY]),
            vec![1.0, 9.0]
        );
        // No link: the demand.
        assert_eq!(max_min_rates(&[], &[vec![]], &[3.0]), vec![3.0]);
    }

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
