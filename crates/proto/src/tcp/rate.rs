//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation; Linux `tcp_rate.c`),
//! in packets: each packet remembers how much the connection had delivered when it left
//! ([`SendState`]), and an ACK that delivers packets turns the newest of them into a rate sample
//! over the longer of its send and ACK intervals. BBR ([`super::bbr`]) runs on these samples.

use fairstream_core::{Duration, Instant};

use super::scoreboard::{AckUpdate, SendState};

/// The connection's delivery counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateEstimator {
    /// Packets delivered so far (cumulatively acknowledged or SACKed, each once).
    delivered: u64,
    /// When `delivered` last moved.
    delivered_at: Instant,
    /// The send time of the most recently delivered packet.
    first_sent_at: Instant,
    /// Non-zero while application-limited: the delivered count that ends it.
    app_limited: u64,
}

/// One ACK's rate sample (Linux `struct rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Packets delivered over the interval (0 when the sample is invalid).
    pub delivered: u64,
    /// The sample's interval (zero when invalid).
    pub interval: Duration,
    /// The connection's delivered count when the sample's packet was sent.
    pub prior_delivered: u64,
    /// Whether the sample's packet left while the sender was application-limited.
    pub is_app_limited: bool,
    /// Packets this ACK delivered.
    pub acked_sacked: u32,
    /// Packets this ACK made the sender deem lost.
    pub losses: u32,
    /// Packets in flight before this ACK.
    pub prior_in_flight: u64,
    /// RTT of the newest packet delivered, when it was never retransmitted.
    pub rtt: Option<Duration>,
    /// Whether the delivery rate is meaningful.
    pub valid: bool,
}

impl RateSample {
    /// Delivered packets per second (0 when invalid).
    pub fn rate(&self) -> f64 {
        if self.valid && !self.interval.is_zero() {
            self.delivered as f64 / self.interval.as_secs_f64()
        } else {
            0.0
        }
    }
}

impl RateEstimator {
    /// Packets delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// What a packet leaving at `now` with `in_flight` packets already in flight records; an
    /// empty pipe restarts the intervals (Linux `tcp_rate_skb_sent`).
    pub fn on_send(&mut self, now: Instant, in_flight: u64) -> SendState {
        if in_flight == 0 {
            self.first_sent_at = now;
            self.delivered_at = now;
        }
        SendState {
            sent_at: now,
            delivered: self.delivered,
            delivered_at: self.delivered_at,
            first_sent_at: self.first_sent_at,
            app_limited: self.app_limited != 0,
        }
    }

    /// The sender has nothing to send with `in_flight` packets in flight: samples until those
    /// are delivered are application-limited (Linux `tcp_rate_check_app_limited`).
    pub fn set_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }

    /// The rate sample of an ACK at `now` that changed the scoreboard by `update`; samples
    /// shorter than `min_rtt` are invalid (Linux `tcp_rate_gen`).
    pub fn on_ack(
        &mut self,
        now: Instant,
        update: &AckUpdate,
        min_rtt: Option<Duration>,
        losses: u32,
        prior_in_flight: u64,
    ) -> RateSample {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let mut rs = RateSample {
            acked_sacked: update.delivered,
            losses,
            prior_in_flight,
            rtt: update.newest_clean.map(|d| now.saturating_since(d.sent_at)),
            ..RateSample::default()
        };
        if update.delivered == 0 {
            return rs;
        }
        self.delivered += u64::from(update.delivered);
        self.delivered_at = now;
        let Some(send) = update.newest_send else {
            return rs;
        };
        self.first_sent_at = send.sent_at;
        rs.prior_delivered = send.delivered;
        rs.is_app_limited = send.app_limited;
        let send_interval = send.sent_at.saturating_since(send.first_sent_at);
        let ack_interval = now.saturating_since(send.delivered_at);
        let interval = send_interval.max(ack_interval);
        rs.delivered = self.delivered - send.delivered;
        rs.interval = interval;
        rs.valid = !interval.is_zero() && min_rtt.is_none_or(|m| interval >= m);
        rs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::scoreboard::Scoreboard;

    fn ms(n: u64) -> Instant {
        Instant::from_nanos(n * 1_000_000)
    }

    #[test]
    fn a_window_per_rtt_gives_its_rate() {
        // Ten packets sent 1 ms apart from 0 ms, each acknowledged 100 ms after it left.
        let mut sb = Scoreboard::with_rate_samples(0);
        let mut r = RateEstimator::default();
        for s in 0..10 {
            let st = r.on_send(ms(s as u64), sb.pipe());
            sb.sent(s, st, false);
        }
        let mut last = RateSample::default();
        for s in 0..10 {
            // Each ACK lets the next window's packet leave (ACK clocking).
            let now = ms(100 + s as u64);
            let mut u = AckUpdate::default();
            sb.ack_to(s, &mut u);
            last = r.on_ack(now, &u, Some(Duration::from_millis(100)), 0, 10);
            let st = r.on_send(now, sb.pipe());
            sb.sent(10 + s, st, false);
        }
        // The tenth ACK: 10 packets delivered since packet 9 left (at 9 ms, when 0 had been
        // delivered) over max(send 9 − 0 = 9 ms, ACK 109 − 0 = 109 ms): 91.7 packets/s.
        assert!(last.valid);
        assert_eq!(
            (last.delivered, last.interval),
            (10, Duration::from_millis(109))
        );
        assert_eq!(last.rtt, Some(Duration::from_millis(100)));
        // A second round: packet 19 left at 109 ms when 10 were delivered (last at 109 ms).
        let mut u = AckUpdate::default();
        sb.ack_to(19, &mut u);
        let rs = r.on_ack(ms(209), &u, Some(Duration::from_millis(100)), 0, 10);
        assert_eq!(
            (rs.delivered, rs.interval),
            (10, Duration::from_millis(100))
        );
        assert!((rs.rate() - 100.0).abs() < 1e-9);
    }

    #[test]
    fn app_limited_marks_samples_until_the_flight_is_delivered() {
        let mut sb = Scoreboard::with_rate_samples(0);
        let mut r = RateEstimator::default();
        let st = r.on_send(ms(0), 0);
        sb.sent(0, st, false);
        r.set_app_limited(1);
        let st = r.on_send(ms(1), 1);
        assert!(st.app_limited);
        sb.sent(1, st, false);
        let mut u = AckUpdate::default();
        sb.ack_to(1, &mut u);
        let rs = r.on_ack(ms(100), &u, None, 0, 2);
        assert!(rs.is_app_limited);
        // Delivered (2) passed the mark (1): the next packet is not application-limited.
        let mut u = AckUpdate::default();
        let st = r.on_send(ms(100), 0);
        sb.sent(2, st, false);
        sb.ack_to(2, &mut u);
        r.on_ack(ms(200), &u, None, 0, 1);
        assert!(!r.on_send(ms(200), 0).app_limited);
    }
}
