//! The one rule for a flow's active time, which every driver's summary divides by: a flow is
//! active from its start to its stop. Its start is its application's start where the driver
//! knows it (the simulator, a real sender), else its first packet (a real receiver, which only
//! learns of the flow when data arrives); its stop is the stop it was given, else its last
//! packet where the driver sees only packets (a real receiver), else the end of the run; and
//! never later than the end of what was recorded. The recorder's own lifetime (a receiver left
//! running after its sender finished, until Ctrl-C) is never part of it.

use fairstream_core::Instant;

/// When a flow was active: rates in its summary are per second of this span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActiveSpan {
    /// When it became active.
    pub start: Instant,
    /// When it stopped being active (never before `start`).
    pub stop: Instant,
}

impl ActiveSpan {
    /// A flow whose application started at `start` and stops at `stop` (`None`: it runs to the
    /// end), in a run recorded up to `end`.
    pub fn scheduled(start: Instant, stop: Option<Instant>, end: Instant) -> Self {
        Self {
            start,
            stop: stop.unwrap_or(end).min(end),
        }
    }

    /// A flow seen only through its packets: from the first to the last one, or an empty span
    /// at `otherwise` when none was seen.
    pub fn of_packets(first: Option<Instant>, last: Option<Instant>, otherwise: Instant) -> Self {
        match (first, last) {
            (Some(first), Some(last)) => Self {
                start: first,
                stop: last.max(first),
            },
            _ => Self {
                start: otherwise,
                stop: otherwise,
            },
        }
    }

    /// Its length in seconds (zero for a span that stops before it starts).
    pub fn secs(&self) -> f64 {
        self.stop.saturating_since(self.start).as_secs_f64()
    }

    /// `bytes` over the span, in bits per second (zero over an empty span).
    pub fn bits_per_sec(&self, bytes: u64) -> f64 {
        let secs = self.secs();
        if secs > 0.0 {
            bytes as f64 * 8.0 / secs
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairstream_core::Duration;

    fn t(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn a_scheduled_flow_runs_to_its_stop_or_the_end_and_never_past_it() {
        assert_eq!(ActiveSpan::scheduled(t(1000), None, t(5000)).secs(), 4.0);
        assert_eq!(
            ActiveSpan::scheduled(t(1000), Some(t(3000)), t(5000)).secs(),
            2.0
        );
        // A run stopped early (Ctrl-C) ends every flow there.
        assert_eq!(
            ActiveSpan::scheduled(t(1000), Some(t(3000)), t(2000)).stop,
            t(2000)
        );
        // Not started by the end: nothing to divide by, and no rate.
        let late = ActiveSpan::scheduled(t(6000), None, t(5000));
        assert_eq!((late.secs(), late.bits_per_sec(1000)), (0.0, 0.0));
    }

    #[test]
    fn a_flow_seen_by_its_packets_spans_the_first_to_the_last() {
        let s = ActiveSpan::of_packets(Some(t(100)), Some(t(5100)), t(0));
        assert_eq!(s.secs(), 5.0);
        assert_eq!(s.bits_per_sec(12_500_000), 20e6);
        let none = ActiveSpan::of_packets(None, None, t(42));
        assert_eq!((none.start, none.stop, none.secs()), (t(42), t(42), 0.0));
    }
}
