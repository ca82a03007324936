//! Piecewise-constant rate schedules: a rate as a step function of time (a link's capacity, a
//! constant-bit-rate source's rate).

use crate::{Bitrate, Instant};

/// A rate that changes at given instants; before the first step the base rate applies.
#[derive(Clone, Debug, PartialEq)]
pub struct RateSchedule {
    base: Bitrate,
    /// `(from, rate)` steps, sorted by time.
    steps: Vec<(Instant, Bitrate)>,
}

impl RateSchedule {
    /// A constant rate.
    pub fn constant(rate: Bitrate) -> Self {
        Self {
            base: rate,
            steps: Vec::new(),
        }
    }

    /// `base` until the first step, then each step's rate from its instant on.
    /// Steps are sorted by time; a later step at the same instant wins.
    pub fn new(base: Bitrate, mut steps: Vec<(Instant, Bitrate)>) -> Self {
        steps.sort_by_key(|&(t, _)| t);
        Self { base, steps }
    }

    /// The rate in force at `now`.
    pub fn rate_at(&self, now: Instant) -> Bitrate {
        match self.steps.partition_point(|&(t, _)| t <= now) {
            0 => self.base,
            i => self.steps[i - 1].1,
        }
    }

    /// The highest rate it ever takes.
    pub fn max(&self) -> Bitrate {
        self.steps
            .iter()
            .map(|&(_, r)| r)
            .fold(self.base, Bitrate::max)
    }

    /// The rate before any step.
    pub fn base(&self) -> Bitrate {
        self.base
    }

    /// The steps, sorted by time.
    pub fn steps(&self) -> &[(Instant, Bitrate)] {
        &self.steps
    }

    /// The first instant after `t` at which the rate changes, if any.
    pub fn next_change_after(&self, t: Instant) -> Option<Instant> {
        let i = self.steps.partition_point(|&(at, _)| at <= t);
        self.steps.get(i).map(|&(at, _)| at)
    }

    /// Whether the rate never changes.
    pub fn is_constant(&self) -> bool {
        self.steps.is_empty()
    }

    /// The first instant after `now` at which the rate becomes non-zero, if any.
    pub fn next_nonzero_after(&self, now: Instant) -> Option<Instant> {
        self.steps
            .iter()
            .find(|&&(t, r)| t > now && !r.is_zero())
            .map(|&(t, _)| t)
    }

    /// Bits the rate carries over `[from, to)`.
    pub fn bits_between(&self, from: Instant, to: Instant) -> f64 {
        if self.is_constant() {
            return self.base.bits_in(to.saturating_since(from));
        }
        let mut bits = 0.0;
        let mut t = from;
        let mut rate = self.rate_at(from);
        for &(at, r) in self.steps.iter().filter(|&&(at, _)| at > from && at < to) {
            bits += rate.bits_in(at.saturating_since(t));
            t = at;
            rate = r;
        }
        bits + rate.bits_in(to.saturating_since(t))
    }
}

impl From<Bitrate> for RateSchedule {
    fn from(rate: Bitrate) -> Self {
        Self::constant(rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_follows_steps() {
        let s = RateSchedule::new(
            Bitrate::mbps(10),
            vec![
                (Instant::from_nanos(200), Bitrate::mbps(2)),
                (Instant::from_nanos(100), Bitrate::mbps(5)),
            ],
        );
        assert_eq!(s.rate_at(Instant::ZERO), Bitrate::mbps(10));
        assert_eq!(s.rate_at(Instant::from_nanos(100)), Bitrate::mbps(5));
        assert_eq!(s.rate_at(Instant::from_nanos(199)), Bitrate::mbps(5));
        assert_eq!(s.rate_at(Instant::from_nanos(10_000)), Bitrate::mbps(2));
        assert_eq!(
            s.next_change_after(Instant::ZERO),
            Some(Instant::from_nanos(100))
        );
        assert_eq!(
            s.next_change_after(Instant::from_nanos(100)),
            Some(Instant::from_nanos(200))
        );
        assert_eq!(s.next_change_after(Instant::from_nanos(200)), None);
        assert_eq!(s.max(), Bitrate::mbps(10));
    }
}
