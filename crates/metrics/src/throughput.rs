//! Throughput and loss over recorded byte and packet counts.

/// Mean throughput in bit/s of `bytes` over `seconds` (0 for an empty interval).
pub fn mean_throughput_bps(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 * 8.0 / seconds
    } else {
        0.0
    }
}

/// Throughput in bit/s of each bin of width `bin_s` from per-bin byte counts.
pub fn interval_throughput_bps(bytes_per_bin: &[u64], bin_s: f64) -> Vec<f64> {
    bytes_per_bin
        .iter()
        .map(|&b| mean_throughput_bps(b, bin_s))
        .collect()
}

/// Mean throughput in bit/s over `[from_s, to_s)` of a binned series (`t_start`, `t_end`,
/// bytes); bins partly inside count in proportion to their overlap.
pub fn window_throughput_bps(
    t_start: &[f64],
    t_end: &[f64],
    bytes: &[u64],
    from_s: f64,
    to_s: f64,
) -> f64 {
    if to_s <= from_s {
        return 0.0;
    }
    let bits: f64 = t_start
        .iter()
        .zip(t_end)
        .zip(bytes)
        .map(|((&a, &b), &n)| {
            let overlap = (b.min(to_s) - a.max(from_s)).max(0.0);
            if b > a {
                n as f64 * 8.0 * overlap / (b - a)
            } else {
                0.0
            }
        })
        .sum();
    bits / (to_s - from_s)
}

/// Throughput as a fraction of a reference rate (a link's capacity or a fair share).
pub fn normalised(throughput_bps: f64, reference_bps: f64) -> f64 {
    if reference_bps > 0.0 {
        throughput_bps / reference_bps
    } else {
        f64::NAN
    }
}

/// Fraction of packets lost: `lost / sent` (0 when nothing was sent).
pub fn loss_rate(lost: u64, sent: u64) -> f64 {
    if sent == 0 {
        0.0
    } else {
        lost as f64 / sent as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_prorate_partial_bins() {
        let (t0, t1, b) = ([0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [100, 200, 300]);
        assert_eq!(
            window_throughput_bps(&t0, &t1, &b, 0.0, 3.0),
            600.0 * 8.0 / 3.0
        );
        assert_eq!(
            window_throughput_bps(&t0, &t1, &b, 1.5, 2.5),
            (100.0 + 150.0) * 8.0
        );
        assert_eq!(mean_throughput_bps(1000, 2.0), 4000.0);
        assert_eq!(loss_rate(1, 4), 0.25);
        assert_eq!(normalised(750.0, 1500.0), 0.5);
        assert_eq!(interval_throughput_bps(&[10, 20], 0.1), vec![800.0, 1600.0]);
    }
}
