//! HyStart++ (RFC 9406): slow start that watches each round's smallest RTT and, when it rises by
//! more than a threshold, grows a quarter as fast (Conservative Slow Start, CSS) for up to five
//! rounds before congestion avoidance, or back to slow start if the RTT falls again.
//!
//! A round ends when the cumulative ACK reaches the highest packet sent when it began
//! (`windowEnd`). The RFC's constants are its recommended values: 4–16 ms thresholds, an eighth
//! of the RTT, 8 samples, growth ÷ 4, 5 rounds; `L` (the per-ACK growth cap) is unbounded, as
//! the RFC recommends for a paced sender and as Linux and ns-3 grow CUBIC's slow start.

use fairstream_core::Duration;

/// `MIN_RTT_THRESH`.
pub const MIN_RTT_THRESH: Duration = Duration::from_millis(4);
/// `MAX_RTT_THRESH`.
pub const MAX_RTT_THRESH: Duration = Duration::from_millis(16);
/// `MIN_RTT_DIVISOR`.
pub const MIN_RTT_DIVISOR: u64 = 8;
/// `N_RTT_SAMPLE`.
pub const N_RTT_SAMPLE: u32 = 8;
/// `CSS_GROWTH_DIVISOR`.
pub const CSS_GROWTH_DIVISOR: f64 = 4.0;
/// `CSS_ROUNDS`.
pub const CSS_ROUNDS: u32 = 5;

/// What HyStart++ says about one ACK in slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Standard slow start: grow by the packets acknowledged.
    SlowStart,
    /// Conservative slow start: grow by a quarter of them.
    Conservative,
    /// Leave slow start: ssthresh becomes the window.
    Exit,
}

/// HyStart++'s state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HyStart {
    /// The round ends when the cumulative ACK reaches this packet (`windowEnd`).
    window_end: Option<i64>,
    last_round_min_rtt: Option<Duration>,
    current_round_min_rtt: Option<Duration>,
    rtt_sample_count: u32,
    /// Set while in CSS: the round minimum that started it.
    css_baseline: Option<Duration>,
    css_rounds: u32,
}

impl HyStart {
    /// Whether it is in Conservative Slow Start.
    pub fn in_css(&self) -> bool {
        self.css_baseline.is_some()
    }

    /// An ACK in slow start: cumulative ACK `ack`, highest packet sent `high_sent`, and the RTT
    /// sample it brought, if any.
    pub fn on_ack(&mut self, ack: i64, high_sent: i64, rtt: Option<Duration>) -> Phase {
        let round_over = self.window_end.is_none_or(|end| ack >= end);
        if round_over {
            if self.window_end.is_some() && self.css_baseline.is_some() {
                self.css_rounds += 1;
                if self.css_rounds >= CSS_ROUNDS {
                    return Phase::Exit;
                }
            }
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
            self.window_end = Some(high_sent);
        }
        if let Some(rtt) = rtt {
            self.current_round_min_rtt =
                Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.rtt_sample_count += 1;
        }
        let enough = self.rtt_sample_count >= N_RTT_SAMPLE;
        match (self.css_baseline, self.current_round_min_rtt) {
            (None, Some(cur)) if enough => {
                if let Some(last) = self.last_round_min_rtt {
                    let thresh = Duration::from_nanos(last.as_nanos() / MIN_RTT_DIVISOR)
                        .clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                    if cur.as_nanos() >= last.as_nanos().saturating_add(thresh.as_nanos()) {
                        self.css_baseline = Some(cur);
                        self.css_rounds = 0;
                    }
                }
            }
            (Some(base), Some(cur)) if enough && cur < base => {
                // The RTT fell back: the rise was spurious; slow start resumes.
                self.css_baseline = None;
                self.css_rounds = 0;
            }
            _ => {}
        }
        if self.css_baseline.is_some() {
            Phase::Conservative
        } else {
            Phase::SlowStart
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// One round of `n` ACKs with RTT `rtt`, the round ending at `end`; returns the last phase.
    fn round(h: &mut HyStart, first_ack: i64, n: i64, rtt: Duration) -> Phase {
        let mut p = Phase::SlowStart;
        for k in 0..n {
            let ack = first_ack + k;
            p = h.on_ack(ack, first_ack + 2 * n, Some(rtt));
            if p == Phase::Exit {
                return p;
            }
        }
        p
    }

    #[test]
    fn a_delay_rise_starts_css_and_five_rounds_end_slow_start() {
        let mut h = HyStart::default();
        // Round 1 at 100 ms, round 2 at 105 ms: a rise of 5 ms < 100/8 = 12.5 ms: slow start.
        assert_eq!(round(&mut h, 0, 10, ms(100)), Phase::SlowStart);
        assert_eq!(round(&mut h, 20, 20, ms(105)), Phase::SlowStart);
        // Round 3 at 118 ms: 13 ms above 105 > 105/8 = 13.125? No: 13 < 13.125.
        assert_eq!(round(&mut h, 60, 20, ms(118)), Phase::SlowStart);
        // Round 4 at 140 ms: 22 ms above 118 > min(118/8, 16) = 14.75: CSS after 8 samples.
        let mut p = Phase::SlowStart;
        for k in 0..8 {
            p = h.on_ack(100 + k, 140, Some(ms(140)));
            assert_eq!(p == Phase::Conservative, k == 7, "sample {k}");
        }
        assert!(h.in_css() && p == Phase::Conservative);
        // Five more rounds without the RTT falling below the baseline end slow start.
        let mut first = 140;
        let mut phases = Vec::new();
        for _ in 0..5 {
            phases.push(round(&mut h, first, 10, ms(150)));
            first += 20;
        }
        assert_eq!(phases[..4], [Phase::Conservative; 4]);
        assert_eq!(phases[4], Phase::Exit);
    }

    #[test]
    fn a_falling_rtt_in_css_resumes_slow_start() {
        let mut h = HyStart::default();
        round(&mut h, 0, 10, ms(20));
        // 20 ms → 30 ms: a 10 ms rise above max(4, 20/8 = 2.5) = 4 ms: CSS.
        assert_eq!(round(&mut h, 20, 10, ms(30)), Phase::Conservative);
        // The next round's samples fall below the 30 ms baseline: back to slow start.
        assert_eq!(round(&mut h, 40, 10, ms(22)), Phase::SlowStart);
        assert!(!h.in_css());
    }
}
