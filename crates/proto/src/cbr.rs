//! Unresponsive UDP constant-bit-rate source (optionally on/off, optionally following a rate
//! schedule) and the UDP sink.

use fairstream_core::{Bitrate, DataSize, Duration, FlowId, Instant, RateSchedule, RngStream};

use crate::header::HeaderKind;
use crate::{
    Direction, Endpoint, EndpointStats, FlowCtx, Header, IP_UDP_HEADER, MetricSink, Packet,
};

/// Fixed on/off periods: send for `on`, stay silent for `off`, repeat. The packet clock runs
/// only while on: a gap that an on period ends continues in the next one, so the mean rate is
/// the rate × `on` ÷ (`on` + `off`) whatever the periods' length against a packet's gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnOff {
    /// Length of a sending period.
    pub on: Duration,
    /// Length of a silent period.
    pub off: Duration,
}

/// Parameters of a [`CbrSource`].
#[derive(Clone, Debug, PartialEq)]
pub struct CbrConfig {
    /// Sending rate (counting whole packets on the wire), possibly changing at given instants
    /// (a plain `Bitrate` converts into a constant schedule).
    pub rate: RateSchedule,
    /// Size of every packet on the wire.
    pub packet_size: DataSize,
    /// Optional on/off pattern, starting with an on period at the flow's start.
    pub on_off: Option<OnOff>,
    /// Dither each inter-packet gap uniformly in `[0.5, 1.5)` of its nominal value, as ns-2's
    /// CBR `random_` option does: same mean rate, but no phase lock with other periodic
    /// traffic (a perfectly periodic source at exactly a link's rate can win or lose every
    /// same-instant race with that link's departures).
    pub random: bool,
}

impl Default for CbrConfig {
    fn default() -> Self {
        Self {
            rate: Bitrate::mbps(1).into(),
            packet_size: DataSize::bytes(1000),
            on_off: None,
            random: false,
        }
    }
}

/// A source that sends fixed-size packets at a constant rate and ignores all feedback.
#[derive(Clone, Debug)]
pub struct CbrSource {
    flow: FlowId,
    config: CbrConfig,
    /// When the source falls silent (`None`: never).
    stop: Option<Instant>,
    /// Start of the current stretch of constant rate (an on period, or a schedule step);
    /// packet `k` of it leaves at `base + carry + k·interval`.
    base: Instant,
    /// What the previous on period left of the gap it ended in (zero after a schedule step,
    /// which restarts the packet clock).
    carry: Duration,
    /// The rate in force since `base`.
    rate: Bitrate,
    k: u64,
    /// With `random`: when the next packet leaves (gaps are drawn, so not `base + k·interval`).
    next_at: Instant,
    rng: RngStream,
    /// When the next packet is due (`None` once stopped): kept current after every send, so
    /// that `poll_timeout` is a field read.
    next_due: Option<Instant>,
    next_seq: u64,
    stats: EndpointStats,
}

impl CbrSource {
    /// The source of flow `ctx`: its first packet leaves at the flow's start, none at or after
    /// its stop; the flow's random stream draws the gaps when `config.random` is set.
    pub fn new(ctx: &FlowCtx, config: CbrConfig) -> Self {
        let mut source = Self {
            flow: ctx.id,
            base: ctx.start,
            carry: Duration::ZERO,
            rate: config.rate.rate_at(ctx.start),
            next_at: ctx.start,
            config,
            stop: ctx.stop,
            k: 0,
            rng: ctx.rng.clone(),
            next_due: None,
            next_seq: 0,
            stats: EndpointStats::default(),
        };
        source.next_due = source.next_send();
        source
    }

    /// Nominal time between packets at the rate in force, in nanoseconds.
    fn nominal_gap_ns(&self) -> f64 {
        self.config.packet_size.as_bits() as f64 * 1e9 / self.rate.as_bps() as f64
    }

    /// When packet `k` of the current stretch is due, moving to the next on period or schedule
    /// step when the current one is over; `None` once stopped.
    fn next_send(&mut self) -> Option<Instant> {
        if self.config.packet_size.as_bytes() == 0 {
            return None;
        }
        loop {
            let t = if self.rate.is_zero() {
                Instant::MAX
            } else if self.config.random {
                self.next_at
            } else {
                let offset =
                    self.config.packet_size.as_bits() as u128 * 1_000_000_000u128 * self.k as u128
                        / self.rate.as_bps() as u128;
                self.base
                    .saturating_add(self.carry)
                    .saturating_add(Duration::from_nanos(offset.min(u64::MAX as u128) as u64))
            };
            if let Some(on_off) = self.config.on_off
                && t.saturating_since(self.base) >= on_off.on
                && !self.rate.is_zero()
            {
                let end = self.base.saturating_add(on_off.on);
                let next = end.saturating_add(on_off.off);
                // The gap in progress goes on in the next on period, unless a rate step came
                // before it, which restarts the packet clock.
                let carry = match self.config.rate.next_change_after(self.base) {
                    Some(change) if change <= next => Duration::ZERO,
                    _ => t.saturating_since(end),
                };
                self.restart(next, carry);
                continue;
            }
            if let Some(change) = self.config.rate.next_change_after(self.base)
                && change <= t
            {
                self.restart(change, Duration::ZERO);
                continue;
            }
            if t == Instant::MAX {
                return None;
            }
            return match self.stop {
                Some(stop) if t >= stop => None,
                _ => Some(t),
            };
        }
    }

    /// Starts a new stretch at `at` with the rate the schedule gives then, its first packet
    /// `carry` after it.
    fn restart(&mut self, at: Instant, carry: Duration) {
        self.base = at;
        self.carry = carry;
        self.k = 0;
        self.next_at = at.saturating_add(carry);
        self.rate = self.config.rate.rate_at(at);
    }
}

impl Endpoint for CbrSource {
    fn handle_packet(&mut self, _now: Instant, _packet: &Packet, _metrics: &mut dyn MetricSink) {}

    fn handle_timeout(&mut self, _now: Instant, _metrics: &mut dyn MetricSink) {}

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        let due = self.next_due?;
        if due > now {
            return None;
        }
        self.k += 1;
        if self.config.random {
            let gap = self.nominal_gap_ns() * self.rng.uniform_range(0.5, 1.5);
            self.next_at = due.saturating_add(Duration::from_nanos(gap.round() as u64));
        }
        self.next_due = self.next_send();
        let seq = self.next_seq;
        self.next_seq += 1;
        let size = self.config.packet_size;
        self.stats.count_sent(size);
        Some(Packet {
            flow: self.flow,
            direction: Direction::Forward,
            size,
            payload: size.as_bytes().saturating_sub(IP_UDP_HEADER) as u32,
            sent_at: now,
            header: Header::Udp(UdpDatagram { seq }),
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.next_due
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}

/// Receives UDP datagrams and counts them; sends nothing back.
#[derive(Clone, Debug, Default)]
pub struct UdpSink {
    stats: EndpointStats,
}

impl UdpSink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Endpoint for UdpSink {
    fn handle_packet(&mut self, _now: Instant, packet: &Packet, _metrics: &mut dyn MetricSink) {
        self.stats.packets_received += 1;
        self.stats.app_bytes_received += u64::from(packet.payload);
    }
    fn handle_timeout(&mut self, _now: Instant, _metrics: &mut dyn MetricSink) {}
    fn poll_transmit(&mut self, _now: Instant) -> Option<Packet> {
        None
    }
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
    fn stats(&self) -> EndpointStats {
        self.stats
    }
}

/// A UDP datagram header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpDatagram {
    /// Application sequence number, from 0.
    pub seq: u64,
}

impl HeaderKind for UdpDatagram {
    const WHAT: &'static str = "plain UDP";

    fn trace_seq(&self) -> i64 {
        crate::header::trace_number(self.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NullSink;

    fn drain(src: &mut CbrSource, until: Instant) -> Vec<Instant> {
        let mut sent = Vec::new();
        while let Some(t) = src.poll_timeout() {
            if t > until {
                break;
            }
            src.handle_timeout(t, &mut NullSink);
            while let Some(p) = src.poll_transmit(t) {
                sent.push(p.sent_at);
            }
        }
        sent
    }

    #[test]
    fn sends_at_exact_rate_without_drift() {
        let cfg = CbrConfig {
            rate: Bitrate::kbps(1500).into(),
            packet_size: DataSize::bytes(1500),
            ..Default::default()
        };
        let mut src = CbrSource::new(&FlowCtx::at_zero(FlowId(0), 1), cfg);
        let sent = drain(&mut src, Instant::from_nanos(10_000_000_000 - 1));
        // 1.5 Mbit/s of 1500-byte packets = 125 packets/s.
        assert_eq!(sent.len(), 1250);
        assert_eq!(sent[1] - sent[0], Duration::from_millis(8));
    }

    #[test]
    fn on_off_skips_silent_periods_and_stop_ends_it() {
        let cfg = CbrConfig {
            rate: Bitrate::kbps(80).into(),
            packet_size: DataSize::bytes(1000),
            on_off: Some(OnOff {
                on: Duration::from_secs(1),
                off: Duration::from_secs(1),
            }),
            random: false,
        };
        let stop = Some(Instant::from_nanos(4_000_000_000));
        let ctx = FlowCtx::new(FlowId(0), Instant::ZERO, stop, RngStream::from_seed(1));
        let mut src = CbrSource::new(&ctx, cfg);
        let sent = drain(&mut src, Instant::MAX);
        // 10 packets/s, on during [0,1) and [2,3).
        assert_eq!(sent.len(), 20);
        assert!(
            sent.iter()
                .all(|t| t.as_secs_f64() < 1.0 || (2.0..3.0).contains(&t.as_secs_f64()))
        );
        assert_eq!(src.poll_timeout(), None);
    }

    #[test]
    fn on_periods_shorter_than_a_gap_keep_the_mean_rate() {
        // 1 Mbit/s of 1000-byte packets: one every 8 ms.
        let with = |on_ms: u64, off_ms: u64| {
            let cfg = CbrConfig {
                on_off: Some(OnOff {
                    on: Duration::from_millis(on_ms),
                    off: Duration::from_millis(off_ms),
                }),
                ..Default::default()
            };
            let mut src = CbrSource::new(&FlowCtx::at_zero(FlowId(0), 1), cfg);
            drain(&mut src, Instant::from_nanos(2_000_000_000 - 1))
        };
        let plain = drain(
            &mut CbrSource::new(&FlowCtx::at_zero(FlowId(0), 1), CbrConfig::default()),
            Instant::from_nanos(2_000_000_000 - 1),
        );
        assert_eq!(plain.len(), 250);
        // Never off: plain CBR, packet for packet.
        assert_eq!(with(1, 0), plain);
        assert_eq!(with(3, 0), plain);
        // On half the time: half the packets, each leaving in an on period.
        for (on, off) in [(4, 4), (1, 1), (100, 100), (3, 5)] {
            let sent = with(on, off);
            let expected = 250.0 * on as f64 / (on + off) as f64;
            assert!(
                (sent.len() as f64 - expected).abs() <= 1.0,
                "on {on} ms, off {off} ms: {} packets, not {expected}",
                sent.len()
            );
            let cycle = (on + off) * 1_000_000;
            assert!(sent.iter().all(|t| t.as_nanos() % cycle < on * 1_000_000));
        }
    }

    #[test]
    fn random_gaps_keep_the_mean_rate_but_break_the_period() {
        let cfg = CbrConfig {
            rate: Bitrate::kbps(1500).into(),
            packet_size: DataSize::bytes(1500),
            random: true,
            ..Default::default()
        };
        let mut src = CbrSource::new(&FlowCtx::at_zero(FlowId(0), 3), cfg);
        let sent = drain(&mut src, Instant::from_nanos(100_000_000_000));
        // 125 packets/s on average over 100 s.
        assert!(
            (sent.len() as f64 - 12_500.0).abs() < 250.0,
            "{}",
            sent.len()
        );
        let gaps: Vec<u64> = sent.windows(2).map(|w| (w[1] - w[0]).as_nanos()).collect();
        assert!(gaps.iter().all(|&g| (4_000_000..12_000_000).contains(&g)));
        assert!(gaps.iter().any(|&g| g != gaps[0]));
    }

    #[test]
    fn zero_rate_never_sends() {
        let mut src = CbrSource::new(
            &FlowCtx::at_zero(FlowId(0), 1),
            CbrConfig {
                rate: Bitrate::ZERO.into(),
                ..Default::default()
            },
        );
        assert_eq!(src.poll_timeout(), None);
        assert!(src.poll_transmit(Instant::from_nanos(1)).is_none());
    }

    #[test]
    fn a_rate_schedule_steps_the_rate_and_zero_silences_it() {
        // 0 until 1 s, 80 kbit/s (10 packets/s) until 2 s, 160 kbit/s until 3 s, then 0.
        let rate = RateSchedule::new(
            Bitrate::ZERO,
            vec![
                (Instant::from_nanos(1_000_000_000), Bitrate::kbps(80)),
                (Instant::from_nanos(2_000_000_000), Bitrate::kbps(160)),
                (Instant::from_nanos(3_000_000_000), Bitrate::ZERO),
            ],
        );
        let cfg = CbrConfig {
            rate,
            ..Default::default()
        };
        let mut src = CbrSource::new(&FlowCtx::at_zero(FlowId(0), 1), cfg);
        let sent = drain(&mut src, Instant::MAX);
        let in_second = |s: u64| {
            sent.iter()
                .filter(|t| t.as_nanos() / 1_000_000_000 == s)
                .count()
        };
        assert_eq!((in_second(0), in_second(1), in_second(2)), (0, 10, 20));
        assert_eq!(sent.len(), 30);
        assert_eq!(sent[0], Instant::from_nanos(1_000_000_000));
        assert_eq!(sent[10], Instant::from_nanos(2_000_000_000));
        assert_eq!(src.poll_timeout(), None);
    }
}
