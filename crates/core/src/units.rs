//! Typed units: [`Bitrate`], [`DataSize`] and [`Probability`].

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::Duration;

/// A data rate in bits per second (decimal prefixes: 1 kbps = 1000 bit/s).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Bitrate(u64);

/// An amount of data in bytes (1 KB = 1000 B; 1 KiB = 1024 B).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct DataSize(u64);

/// A probability in `[0, 1]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
pub struct Probability(f64);

impl Bitrate {
    /// Zero bits per second.
    pub const ZERO: Self = Self(0);
    /// `bps` bits per second.
    pub const fn bps(bps: u64) -> Self {
        Self(bps)
    }
    /// `k` kilobits per second.
    pub const fn kbps(k: u64) -> Self {
        Self(k * 1_000)
    }
    /// `m` megabits per second.
    pub const fn mbps(m: u64) -> Self {
        Self(m * 1_000_000)
    }
    /// `g` gigabits per second.
    pub const fn gbps(g: u64) -> Self {
        Self(g * 1_000_000_000)
    }
    /// A rate from a real number of bits per second (rounded; negative gives zero).
    pub fn from_bps_f64(bps: f64) -> Self {
        if bps.is_nan() || bps <= 0.0 {
            Self(0)
        } else {
            Self(bps.round() as u64)
        }
    }
    /// The rate that carries `size` in `d` (zero if `d` is zero).
    pub fn from_size_per(size: DataSize, d: Duration) -> Self {
        if d.is_zero() {
            Self(0)
        } else {
            Self::from_bps_f64(size.as_bits() as f64 / d.as_secs_f64())
        }
    }
    /// Bits per second.
    pub const fn as_bps(self) -> u64 {
        self.0
    }
    /// Bits per second as a real number.
    pub fn as_bps_f64(self) -> f64 {
        self.0 as f64
    }
    /// Bits this rate carries over `d`, as a real number.
    #[inline]
    pub fn bits_in(self, d: Duration) -> f64 {
        self.as_bps_f64() * d.as_secs_f64()
    }
    /// Bytes per second as a real number.
    pub fn as_bytes_per_sec(self) -> f64 {
        self.0 as f64 / 8.0
    }
    /// Whether the rate is zero.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// Time to serialise `size` at this rate, rounded to the nearest nanosecond
    /// ([`Duration::MAX`] for a zero rate).
    pub fn transmit_time(self, size: DataSize) -> Duration {
        if self.0 == 0 {
            return Duration::MAX;
        }
        let (bits, bps) = (size.as_bits(), self.0);
        // Every packet's numerator fits 64 bits (up to 18 Gbit, whatever the rate): a machine
        // division then, not a 128-bit one through a library call (2 % of a run of cells). The
        // quotient is the same either way.
        let nanos = match bits
            .checked_mul(1_000_000_000)
            .and_then(|n| n.checked_add(bps / 2))
        {
            Some(num) => num / bps,
            None => {
                let num = u128::from(bits) * 1_000_000_000 + u128::from(bps / 2);
                (num / u128::from(bps)) as u64
            }
        };
        Duration::from_nanos(nanos)
    }
    /// Data carried at this rate during `d` (rounded down to whole bytes); `None` if it is more
    /// than a [`DataSize`] holds.
    pub fn data_in(self, d: Duration) -> Option<DataSize> {
        let bytes = u128::from(self.0) * u128::from(d.as_nanos()) / 8_000_000_000u128;
        u64::try_from(bytes).ok().map(DataSize)
    }
    /// This rate scaled by `k` (negative gives zero).
    pub fn mul_f64(self, k: f64) -> Self {
        Self::from_bps_f64(self.0 as f64 * k)
    }
}

impl DataSize {
    /// Zero bytes.
    pub const ZERO: Self = Self(0);
    /// `b` bytes.
    pub const fn bytes(b: u64) -> Self {
        Self(b)
    }
    /// `k` kilobytes (1000 B).
    pub const fn kbytes(k: u64) -> Self {
        Self(k * 1_000)
    }
    /// Bytes.
    pub const fn as_bytes(self) -> u64 {
        self.0
    }
    /// Bits.
    pub const fn as_bits(self) -> u64 {
        self.0 * 8
    }
}

impl Probability {
    /// Never.
    pub const ZERO: Self = Self(0.0);
    /// Always.
    pub const ONE: Self = Self(1.0);
    /// A probability; `None` unless `p` is in `[0, 1]`.
    pub fn new(p: f64) -> Option<Self> {
        (0.0..=1.0).contains(&p).then_some(Self(p))
    }
    /// The probability as a real number in `[0, 1]`.
    pub const fn value(self) -> f64 {
        self.0
    }
}

/// Prints the largest decimal unit that keeps the number short: `11Mbps`, `1.5Mbps`, `56kbps`.
impl fmt::Display for Bitrate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (div, unit) in [
            (1_000_000_000, "Gbps"),
            (1_000_000, "Mbps"),
            (1_000, "kbps"),
        ] {
            if b >= div {
                return if b.is_multiple_of(div) {
                    write!(f, "{}{unit}", b / div)
                } else {
                    write!(f, "{}{unit}", b as f64 / div as f64)
                };
            }
        }
        write!(f, "{b}bps")
    }
}

/// Prints bytes with a `B` suffix: `1500B`.
impl fmt::Display for DataSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}

/// Prints a percentage: `1%`, `0.5%`.
impl fmt::Display for Probability {
    /// As a percentage where that reads back as the same number (`"1%"`), else as the fraction
    /// itself (`0.09445739962666873`): a resolved scenario must load back to the same
    /// probability, and `p · 100 / 100` is not always `p`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let percent = self.0 * 100.0;
        if percent / 100.0 == self.0 {
            write!(f, "{percent}%")
        } else {
            write!(f, "{}", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmit_time_rounds_to_nearest_nanosecond() {
        assert_eq!(
            Bitrate::mbps(11).transmit_time(DataSize::bytes(1000)),
            Duration::from_nanos(727_273)
        );
        assert_eq!(
            Bitrate::mbps(10).transmit_time(DataSize::bytes(1500)),
            Duration::from_micros(1200)
        );
        assert_eq!(
            Bitrate::ZERO.transmit_time(DataSize::bytes(1)),
            Duration::MAX
        );
    }

    #[test]
    fn transmit_time_is_exact_on_both_sides_of_64_bit_numerators() {
        // Rounded to nearest, half up: (bits × 10^9 + bps / 2) div bps, computed in 128 bits.
        let exact = |bytes: u64, bps: u64| {
            let num = u128::from(bytes * 8) * 1_000_000_000 + u128::from(bps / 2);
            Duration::from_nanos((num / u128::from(bps)) as u64)
        };
        // 18.4 Gbit is where bits × 10^9 leaves 64 bits.
        let edge = u64::MAX / 1_000_000_000 / 8;
        for bytes in [1, 53, 1500, edge - 1, edge, edge + 1, 1 << 40] {
            for bps in [1, 3, 56_000, 155_000_000, 1_000_000_007, u64::MAX] {
                assert_eq!(
                    Bitrate::bps(bps).transmit_time(DataSize::bytes(bytes)),
                    exact(bytes, bps),
                    "{bytes} B at {bps} bit/s"
                );
            }
        }
    }

    #[test]
    fn data_in_inverts_transmit_time() {
        assert_eq!(
            Bitrate::mbps(8).data_in(Duration::from_secs(1)),
            Some(DataSize::bytes(1_000_000))
        );
    }

    #[test]
    fn display_is_short() {
        assert_eq!(Bitrate::mbps(11).to_string(), "11Mbps");
        assert_eq!(Bitrate::kbps(1500).to_string(), "1.5Mbps");
        assert_eq!(Bitrate::kbps(56).to_string(), "56kbps");
        assert_eq!(Probability::new(0.01).unwrap().to_string(), "1%");
    }

    #[test]
    fn a_probability_reads_back_as_itself() {
        for p in [0.01, 0.005, 0.09445739962666873, 1.0 / 3.0, 0.0, 1.0] {
            let shown = Probability::new(p).unwrap().to_string();
            let back: Probability = shown.parse().unwrap();
            assert_eq!(back.value().to_bits(), p.to_bits(), "{p} shown as {shown}");
        }
    }

    #[test]
    fn probability_rejects_out_of_range() {
        assert!(Probability::new(1.5).is_none());
        assert!(Probability::new(-0.1).is_none());
        assert!(Probability::new(f64::NAN).is_none());
    }
}
