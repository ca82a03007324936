//! Paced waiting: sleep towards a deadline in short slices (so the socket is read meanwhile),
//! spin the last [`SPIN`], and count how late each paced send went out in a fixed histogram
//! (nothing allocated per packet).

use fairstream_core::{Duration, Instant};

use crate::clock::Clock;

/// The stretch before a deadline spent spinning rather than sleeping: the OS's sleep overshoots
/// by tens of microseconds (Linux's default timer slack alone is 50 µs). 100 µs rather than 60
/// took the loopback p99 at 100 Mbit/s from 54-104 µs to 16-74 µs (docs/PERFORMANCE.md), for a
/// sender that spins most of each packet interval at such rates.
pub const SPIN: Duration = Duration::from_micros(100);
/// The longest sleep slice: the socket is read at least this often.
pub const SLICE: Duration = Duration::from_micros(250);

/// Waits until `deadline` or for one [`SLICE`], whichever comes first; returns whether the
/// deadline has come.
pub fn wait_towards(clock: &Clock, deadline: Option<Instant>) -> bool {
    let now = clock.now();
    let Some(d) = deadline else {
        std::thread::sleep(std::time::Duration::from_nanos(SLICE.as_nanos()));
        return false;
    };
    if d <= now {
        return true;
    }
    let left = d.saturating_since(now);
    if left > SPIN {
        let nap = (left - SPIN).min(SLICE);
        std::thread::sleep(std::time::Duration::from_nanos(nap.as_nanos()));
        return clock.now() >= d;
    }
    while clock.now() < d {
        std::hint::spin_loop();
    }
    true
}

/// Lateness of paced sends, by microsecond up to 10 ms (later ones in the last bucket).
#[derive(Clone, Debug)]
pub struct Lateness {
    buckets: Box<[u64; Self::BUCKETS]>,
    count: u64,
    max: Duration,
}

impl Default for Lateness {
    fn default() -> Self {
        Self {
            buckets: Box::new([0; Self::BUCKETS]),
            count: 0,
            max: Duration::ZERO,
        }
    }
}

impl Lateness {
    const BUCKETS: usize = 10_001;

    /// Counts one send that went out `late` after its time.
    pub fn record(&mut self, late: Duration) {
        let us = (late.as_nanos() / 1_000).min(Self::BUCKETS as u64 - 1) as usize;
        self.buckets[us] += 1;
        self.count += 1;
        self.max = self.max.max(late);
    }

    /// Sends counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The `q`-quantile (0 ≤ q ≤ 1) of lateness, to the microsecond; zero with no sends.
    pub fn quantile(&self, q: f64) -> Duration {
        if self.count == 0 {
            return Duration::ZERO;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (us, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Duration::from_micros(us as u64);
            }
        }
        self.max
    }

    /// The latest send.
    pub fn max(&self) -> Duration {
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_from_the_counted_sends() {
        let mut l = Lateness::default();
        assert_eq!(l.quantile(0.99), Duration::ZERO);
        for us in 1..=100 {
            l.record(Duration::from_micros(us));
        }
        l.record(Duration::from_secs(1));
        assert_eq!(l.count(), 101);
        assert_eq!(l.quantile(0.5), Duration::from_micros(51));
        assert_eq!(l.quantile(0.99), Duration::from_micros(100));
        assert_eq!(l.quantile(1.0), Duration::from_micros(10_000));
        assert_eq!(l.max(), Duration::from_secs(1));
    }

    #[test]
    fn waiting_reaches_the_deadline_and_not_much_later() {
        let clock = Clock::start();
        let d = clock.now() + Duration::from_millis(2);
        while !wait_towards(&clock, Some(d)) {}
        assert!(clock.now() >= d);
    }
}
