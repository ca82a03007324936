//! Simulated time: [`Instant`] and [`Duration`] in integer nanoseconds.
//!
//! Integer nanoseconds keep arithmetic exact and runs bit-identical across machines; one
//! nanosecond resolves the serialisation of a 1500-byte packet even at 10 Gbit/s.

use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

use serde::{Deserialize, Serialize};

const NANOS_PER_SEC: u64 = 1_000_000_000;

/// A point in simulated (or driver-supplied) time: nanoseconds since the start of the run.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Instant(u64);

/// A span of time in nanoseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Duration(u64);

impl Instant {
    /// The start of the run.
    pub const ZERO: Self = Self(0);
    /// Later than any real event; used for "never".
    pub const MAX: Self = Self(u64::MAX);

    /// An instant `nanos` nanoseconds after the start.
    pub const fn from_nanos(nanos: u64) -> Self {
        Self(nanos)
    }
    /// An instant `secs` seconds after the start (rounded to the nearest nanosecond).
    pub fn from_secs_f64(secs: f64) -> Self {
        Self(Duration::from_secs_f64(secs).0)
    }
    /// Nanoseconds since the start.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the start.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later.
    pub const fn saturating_since(self, earlier: Self) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    /// This instant plus `d`, saturating at [`Instant::MAX`].
    pub const fn saturating_add(self, d: Duration) -> Self {
        Self(self.0.saturating_add(d.0))
    }
}

impl Duration {
    /// No time.
    pub const ZERO: Self = Self(0);
    /// The longest representable span.
    pub const MAX: Self = Self(u64::MAX);

    /// `nanos` nanoseconds.
    pub const fn from_nanos(nanos: u64) -> Self {
        Self(nanos)
    }
    /// `micros` microseconds.
    pub const fn from_micros(micros: u64) -> Self {
        Self(micros * 1_000)
    }
    /// `millis` milliseconds.
    pub const fn from_millis(millis: u64) -> Self {
        Self(millis * 1_000_000)
    }
    /// `secs` seconds.
    pub const fn from_secs(secs: u64) -> Self {
        Self(secs * NANOS_PER_SEC)
    }
    /// `secs` seconds, rounded to the nearest nanosecond; negative or NaN gives zero.
    pub fn from_secs_f64(secs: f64) -> Self {
        if secs.is_nan() || secs <= 0.0 {
            Self::ZERO
        } else if secs >= u64::MAX as f64 / NANOS_PER_SEC as f64 {
            Self::MAX
        } else {
            Self((secs * NANOS_PER_SEC as f64).round() as u64)
        }
    }
    /// The span in nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// The span in seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// The span in milliseconds.
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// Whether the span is empty.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// `self * k`, saturating.
    pub const fn saturating_mul(self, k: u64) -> Self {
        Self(self.0.saturating_mul(k))
    }
    /// `self * k` for a real factor, rounded; negative gives zero.
    pub fn mul_f64(self, k: f64) -> Self {
        Self::from_secs_f64(self.as_secs_f64() * k)
    }
}

impl Add<Duration> for Instant {
    type Output = Self;
    #[inline]
    fn add(self, d: Duration) -> Self {
        Self(self.0 + d.0)
    }
}
impl AddAssign<Duration> for Instant {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        self.0 += d.0;
    }
}
impl Sub<Duration> for Instant {
    type Output = Self;
    #[inline]
    fn sub(self, d: Duration) -> Self {
        Self(self.0 - d.0)
    }
}
impl Sub for Instant {
    type Output = Duration;
    /// Panics (in debug builds) if `rhs` is later: use [`Instant::saturating_since`] when in doubt.
    #[inline]
    fn sub(self, rhs: Self) -> Duration {
        Duration(self.0 - rhs.0)
    }
}
impl Add for Duration {
    type Output = Self;
    #[inline]
    fn add(self, d: Self) -> Self {
        Self(self.0 + d.0)
    }
}
impl AddAssign for Duration {
    #[inline]
    fn add_assign(&mut self, d: Self) {
        self.0 += d.0;
    }
}
impl Sub for Duration {
    type Output = Self;
    #[inline]
    fn sub(self, d: Self) -> Self {
        Self(self.0 - d.0)
    }
}
impl SubAssign for Duration {
    #[inline]
    fn sub_assign(&mut self, d: Self) {
        self.0 -= d.0;
    }
}
impl Mul<u64> for Duration {
    type Output = Self;
    #[inline]
    fn mul(self, k: u64) -> Self {
        Self(self.0 * k)
    }
}
impl Div<u64> for Duration {
    type Output = Self;
    #[inline]
    fn div(self, k: u64) -> Self {
        Self(self.0 / k)
    }
}

/// Prints the shortest exact unit: `35ms`, `1.5s`, `12us`, `0s`.
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        let (div, unit) = if n.is_multiple_of(NANOS_PER_SEC) {
            (NANOS_PER_SEC, "s")
        } else if n >= NANOS_PER_SEC {
            return write!(f, "{}s", self.as_secs_f64());
        } else if n >= 1_000_000 {
            (1_000_000, "ms")
        } else if n >= 1_000 {
            (1_000, "us")
        } else {
            (1, "ns")
        };
        if n.is_multiple_of(div) {
            write!(f, "{}{unit}", n / div)
        } else {
            write!(f, "{}{unit}", n as f64 / div as f64)
        }
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_display_picks_exact_unit() {
        assert_eq!(Duration::from_millis(35).to_string(), "35ms");
        assert_eq!(Duration::from_secs(300).to_string(), "300s");
        assert_eq!(Duration::from_millis(1500).to_string(), "1.5s");
        assert_eq!(Duration::from_micros(12).to_string(), "12us");
        assert_eq!(Duration::ZERO.to_string(), "0s");
    }

    #[test]
    fn instant_arithmetic_is_exact() {
        let t = Instant::from_nanos(5) + Duration::from_nanos(7);
        assert_eq!(t.as_nanos(), 12);
        assert_eq!(t - Instant::from_nanos(2), Duration::from_nanos(10));
        assert_eq!(Instant::from_nanos(1).saturating_since(t), Duration::ZERO);
    }

    #[test]
    fn from_secs_f64_clamps() {
        assert_eq!(Duration::from_secs_f64(-1.0), Duration::ZERO);
        assert_eq!(Duration::from_secs_f64(f64::NAN), Duration::ZERO);
        assert_eq!(Duration::from_secs_f64(0.035), Duration::from_millis(35));
    }
}
