//! [`Occupancy`]: the time-weighted mean of a count that changes at instants (a queue's length),
//! in exact integer arithmetic.

use crate::Instant;

/// A count over time and its integral, from time zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Occupancy {
    /// Count × nanoseconds up to `changed_at`.
    area: u128,
    changed_at: Instant,
    value: u64,
}

impl Occupancy {
    /// The count becomes `value` at `now` (a call that changes nothing costs nothing).
    #[inline]
    pub fn set(&mut self, now: Instant, value: u64) {
        if value != self.value {
            self.area += u128::from(self.value)
                * u128::from(now.saturating_since(self.changed_at).as_nanos());
            self.changed_at = now;
            self.value = value;
        }
    }

    /// The mean count over `[0, end]` (zero for `end` at time zero).
    pub fn mean(&self, end: Instant) -> f64 {
        let area = self.area
            + u128::from(self.value) * u128::from(end.saturating_since(self.changed_at).as_nanos());
        if end.as_nanos() == 0 {
            0.0
        } else {
            area as f64 / end.as_nanos() as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_weighs_each_count_by_how_long_it_held() {
        let ms = |n: u64| Instant::from_nanos(n * 1_000_000);
        let mut o = Occupancy::default();
        o.set(ms(10), 4);
        o.set(ms(30), 0);
        assert_eq!(o.mean(ms(40)), 2.0);
        assert_eq!(o.mean(Instant::ZERO), 0.0);
    }
}
