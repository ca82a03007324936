//! Pacing: a sender facility that spaces packets at a rate, for any window control.
//!
//! BBR sets the rate itself ([`super::bbr`]); with `TcpConfig::pacing` the other controls pace at
//! Linux's rate (`tcp_update_pacing_rate`): the window per smoothed RTT, times 2 while the window
//! is below half of ssthresh (slow start) and times 1.2 after. A packet may leave once the previous
//! one's time at the rate has passed; time spent idle earns no credit (Linux's earliest departure
//! time, `tcp_wstamp_ns`, likewise never lies in the past).

use fairstream_core::{Bitrate, DataSize, Duration, Instant};

/// Linux's `tcp_pacing_ss_ratio`: 200 %.
pub const SS_RATIO: f64 = 2.0;
/// Linux's `tcp_pacing_ca_ratio`: 120 %.
pub const CA_RATIO: f64 = 1.2;

/// When the next packet may leave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pacer {
    /// The pacing rate (none: not pacing).
    rate: Option<Bitrate>,
    /// Earliest departure of the next packet.
    next: Instant,
}

impl Pacer {
    /// The rate in force.
    pub fn rate(&self) -> Option<Bitrate> {
        self.rate
    }

    /// Sets the rate (a zero rate is taken as no pacing).
    pub fn set_rate(&mut self, rate: Option<Bitrate>) {
        self.rate = rate.filter(|r| !r.is_zero());
    }

    /// Whether a packet may leave at `now`.
    #[inline]
    pub fn ready(&self, now: Instant) -> bool {
        self.rate.is_none() || now >= self.next
    }

    /// When the next packet may leave, if that is after `now`.
    pub fn wait_until(&self, now: Instant) -> Option<Instant> {
        (!self.ready(now)).then_some(self.next)
    }

    /// A packet of `size` left at `now`.
    #[inline]
    pub fn sent(&mut self, now: Instant, size: DataSize) {
        if let Some(rate) = self.rate {
            self.next = self.next.max(now).saturating_add(rate.transmit_time(size));
        }
    }
}

/// Linux's pacing rate for a window control that does not set one: `packet` bytes × window
/// (the larger of cwnd and the packets out) per `srtt`, times [`SS_RATIO`] below half of
/// `ssthresh`, [`CA_RATIO`] above. None before an RTT sample.
pub fn window_rate(
    packet: DataSize,
    window: f64,
    ssthresh: f64,
    cwnd: f64,
    srtt: Duration,
) -> Option<Bitrate> {
    if srtt.is_zero() {
        return None;
    }
    let ratio = if cwnd < ssthresh / 2.0 {
        SS_RATIO
    } else {
        CA_RATIO
    };
    Some(Bitrate::from_bps_f64(
        packet.as_bits() as f64 * window * ratio / srtt.as_secs_f64(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_leave_a_transmission_time_apart_and_idle_earns_nothing() {
        let mut p = Pacer::default();
        let t0 = Instant::from_nanos(1_000_000);
        assert!(p.ready(t0));
        p.set_rate(Some(Bitrate::mbps(12)));
        let size = DataSize::bytes(1500);
        p.sent(t0, size);
        // 1500 B at 12 Mbit/s: 1 ms.
        let t1 = Instant::from_nanos(2_000_000);
        assert_eq!(p.wait_until(t0), Some(t1));
        assert!(p.ready(t1));
        // After 10 ms idle, one packet, then the next a full millisecond later.
        let t2 = Instant::from_nanos(12_000_000);
        p.sent(t2, size);
        assert_eq!(p.wait_until(t2), Some(Instant::from_nanos(13_000_000)));
        p.set_rate(Some(Bitrate::ZERO));
        assert!(p.ready(t2));
    }

    #[test]
    fn linux_ratios_double_in_slow_start() {
        let rtt = Duration::from_millis(100);
        let size = DataSize::bytes(1500);
        // 10 packets of 12 000 bits per 100 ms = 1.2 Mbit/s; ×2 in slow start, ×1.2 after.
        let ss = window_rate(size, 10.0, 100.0, 10.0, rtt).unwrap();
        let ca = window_rate(size, 10.0, 10.0, 10.0, rtt).unwrap();
        assert_eq!((ss.as_bps(), ca.as_bps()), (2_400_000, 1_440_000));
        assert_eq!(window_rate(size, 10.0, 10.0, 10.0, Duration::ZERO), None);
    }
}
