//! The TCP receiver of ns-2's one-way agents (`Agent/TCPSink`, `Agent/TCPSink/DelAck`;
//! PROTOCOLS.md §1.4): cumulative packet-numbered ACKs, optionally delayed; with SACK (RFC 2018)
//! its ACKs carry the runs it holds above the cumulative ACK ([`super::sack_list`]), and with
//! timestamps (RFC 7323) they echo the TSval of the segment that last reached the left edge of
//! the window (TS.Recent), each option counted in the ACK's size ([`super::options`]).
//!
//! The sink remembers which packets beyond the next expected one arrived in a ring of slots
//! indexed by packet number modulo a power-of-two capacity (grown on demand, never shrunk),
//! so steady-state reception allocates nothing. Each data packet's payload is counted as
//! goodput exactly once, when it becomes in order.

use std::collections::VecDeque;

use fairstream_core::{DataSize, FlowId, Instant};

use super::TcpSinkConfig;
use super::options::{header_len, max_sack_blocks, sack_len};
use super::sack_list::SackList;
use crate::tcp::{TcpFlags, TcpSegment};
use crate::{Direction, Endpoint, EndpointStats, Header, MetricSink, Packet};

/// The flag of a held segment that ends an application record (above any `payload + 1`).
const PUSH_BIT: u64 = 1 << 40;

/// Smallest ring allocated on the first out-of-order packet.
const MIN_RING: usize = 64;

/// Out-of-order packets waiting for the gap before them to fill: slot `seq & mask` holds
/// `payload + 1` (plus [`PUSH_BIT`] for a segment ending a record) for a received packet `seq`
/// in `[next, next + capacity)`, 0 otherwise.
#[derive(Clone, Debug, Default)]
struct ReorderRing {
    slots: Vec<u64>,
}

impl ReorderRing {
    #[inline]
    fn index(&self, seq: i64) -> usize {
        // The capacity is a power of two: masking is the modulo. seq >= 0 here.
        (seq as u64 & (self.slots.len() as u64 - 1)) as usize
    }

    /// Makes room for `seq` (`next < seq`), moving the entries in `[next, maxseen]`.
    fn reserve(&mut self, next: i64, maxseen: i64, seq: i64) {
        let need = (seq - next + 1) as u64;
        if need <= self.slots.len() as u64 {
            return;
        }
        let old_len = self.slots.len();
        let new_len = usize::try_from(need.next_power_of_two())
            .unwrap_or(usize::MAX)
            .max(MIN_RING)
            .max(2 * old_len);
        let mut slots = vec![0u64; new_len];
        if old_len > 0 {
            let last = maxseen.min(next + old_len as i64 - 1);
            for s in next..=last {
                let v = self.slots[self.index(s)];
                slots[(s as u64 & (new_len as u64 - 1)) as usize] = v;
            }
        }
        self.slots = slots;
    }

    /// Whether `seq` (in the ring's range) is held.
    #[inline]
    fn contains(&self, seq: i64) -> bool {
        !self.slots.is_empty() && self.slots[self.index(seq)] != 0
    }

    /// Holds `seq` with its payload and push mark (`reserve` was called for it).
    #[inline]
    fn put(&mut self, seq: i64, payload: u32, push: bool) {
        let i = self.index(seq);
        self.slots[i] = u64::from(payload) + 1 + if push { PUSH_BIT } else { 0 };
    }

    /// Removes `seq` and returns its payload and push mark, if held.
    #[inline]
    fn take(&mut self, seq: i64) -> Option<(u32, bool)> {
        if self.slots.is_empty() {
            return None;
        }
        let i = self.index(seq);
        let v = std::mem::take(&mut self.slots[i]);
        // v = payload + 1 (+ PUSH_BIT) with payload a u32, so the payload fits.
        (v != 0).then(|| (((v & (PUSH_BIT - 1)) - 1) as u32, v & PUSH_BIT != 0))
    }
}

/// A TCP receiver acknowledging every packet, or every second in-order packet with delayed
/// ACKs (ns-2 DelAck).
#[derive(Clone, Debug)]
pub struct TcpSink {
    flow: FlowId,
    config: TcpSinkConfig,
    /// Next packet expected in order.
    next: i64,
    /// Highest packet number seen (−1: none).
    maxseen: i64,
    ring: ReorderRing,
    /// Pending delayed ACK: when it is due, and the packet that triggered it.
    delayed: Option<(Instant, i64)>,
    out: VecDeque<Packet>,
    stats: EndpointStats,
    duplicates: u64,
    /// Records (segments with the push mark) delivered in order.
    records: u64,
    /// The runs held above the cumulative ACK that SACK blocks report.
    sack: SackList,
    /// TS.Recent: the TSval the next ACK echoes (RFC 7323 §4.3).
    ts_recent: u32,
    /// The cumulative ACK last sent (Last.ACK.sent; −1 before any).
    last_ack_sent: i64,
}

impl TcpSink {
    /// ACKs its send queue holds room for when built.
    pub const QUEUE_CAPACITY: usize = 8;

    /// A receiver for `flow`.
    pub fn new(flow: FlowId, config: TcpSinkConfig) -> Self {
        Self {
            flow,
            config,
            next: 0,
            maxseen: -1,
            ring: ReorderRing::default(),
            delayed: None,
            out: VecDeque::with_capacity(Self::QUEUE_CAPACITY),
            stats: EndpointStats::default(),
            duplicates: 0,
            records: 0,
            sack: SackList::default(),
            ts_recent: 0,
            last_ack_sent: -1,
        }
    }

    /// The flow this sink belongs to.
    pub fn flow(&self) -> FlowId {
        self.flow
    }

    /// The cumulative ACK: the highest packet received in order (−1: none).
    pub fn cumulative_ack(&self) -> i64 {
        self.next - 1
    }

    /// The next packet expected in order.
    pub fn next_expected(&self) -> i64 {
        self.next
    }

    /// The highest packet number received (−1: none).
    pub fn max_seen(&self) -> i64 {
        self.maxseen
    }

    /// Data packets received that had already been received.
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    /// Application bytes delivered in order so far.
    pub fn delivered_bytes(&self) -> u64 {
        self.stats.app_bytes_received
    }

    /// Application records (see [`super::SendBuffer`]) whose last byte was delivered in order
    /// so far.
    pub fn records_delivered(&self) -> u64 {
        self.records
    }

    /// Whether an ACK is being held back (delayed ACKs only).
    pub fn ack_pending(&self) -> bool {
        self.delayed.is_some()
    }

    /// The runs of packets held above the cumulative ACK, most recently reported first (kept
    /// with SACK only).
    pub fn sack_runs(&self) -> &[(i64, i64)] {
        self.sack.runs()
    }

    /// Records packet `seq`; returns whether it was new. Delivers what became in order.
    fn receive(&mut self, seq: i64, payload: u32, push: bool) -> bool {
        if seq < self.next {
            return false;
        }
        if seq == self.next {
            self.deliver(payload, push);
            self.next += 1;
            self.maxseen = self.maxseen.max(seq);
            while self.next <= self.maxseen {
                match self.ring.take(self.next) {
                    Some((p, push)) => {
                        self.deliver(p, push);
                        self.next += 1;
                    }
                    None => break,
                }
            }
            if self.config.sack {
                self.sack.advanced(self.next);
            }
            return true;
        }
        self.ring.reserve(self.next, self.maxseen, seq);
        let new = !self.ring.contains(seq);
        if new {
            self.ring.put(seq, payload, push);
            self.maxseen = self.maxseen.max(seq);
        }
        if self.config.sack {
            let ring = &self.ring;
            self.sack
                .arrived(seq, self.next, self.maxseen, |s| ring.contains(s));
        }
        new
    }

    #[inline]
    fn deliver(&mut self, payload: u32, push: bool) {
        self.stats.app_bytes_received += u64::from(payload);
        self.records += u64::from(push);
    }

    /// Queues an ACK of `seq` carrying the current cumulative ACK and the options in use.
    fn ack(&mut self, now: Instant, seq: i64) {
        let ack = self.next - 1;
        let ts = self.config.timestamps;
        let sack = if self.config.sack {
            self.sack.blocks(ack, max_sack_blocks(ts))
        } else {
            super::SackBlocks::NONE
        };
        let size = header_len(ts) + sack_len(sack.len());
        self.out.push_back(Packet {
            flow: self.flow,
            direction: Direction::Reverse,
            size: DataSize::bytes(size),
            payload: 0,
            sent_at: now,
            header: Header::Tcp(TcpSegment {
                seq,
                ack,
                is_ack: true,
                flags: TcpFlags::default(),
                ts: if ts { self.ts_recent } else { 0 },
                sack,
            }),
        });
        self.last_ack_sent = ack;
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += size;
    }
}

impl Endpoint for TcpSink {
    /// Feeds a data packet (a TCP packet of this flow, not an ACK, travelling
    /// [`Direction::Forward`]); anything else is ignored.
    fn handle_packet(&mut self, now: Instant, packet: &Packet, _metrics: &mut dyn MetricSink) {
        let Header::Tcp(seg) = &packet.header else {
            return;
        };
        if seg.is_ack || packet.direction != Direction::Forward || packet.flow != self.flow {
            return;
        }
        self.stats.packets_received += 1;
        let seq = seg.seq;
        // RFC 7323 §4.3: a segment at or below the left edge of the window (as last
        // acknowledged) with a TSval no older than TS.Recent sets what the next ACK echoes.
        if self.config.timestamps
            && seq <= self.last_ack_sent.saturating_add(1)
            && (self.last_ack_sent < 0 || seg.ts.wrapping_sub(self.ts_recent) < 1 << 31)
        {
            self.ts_recent = seg.ts;
        }
        let beyond = self
            .config
            .window
            .is_some_and(|w| seq > self.next.saturating_add(i64::from(w)));
        if beyond || !self.receive(seq, packet.payload, seg.flags.push) {
            self.duplicates += 1;
        }
        let Some(interval) = self.config.delayed_ack else {
            self.ack(now, seq);
            return;
        };
        // ns-2 DelAck: hold the ACK of a packet that is the new in-order edge when no ACK is
        // already held, unless it fills a gap or is the SYN (packet 0).
        if self.delayed.is_none() && seq == self.next - 1 && seq < self.maxseen {
            // Gap filled: ACK at once (RFC2581_immediate_ack_).
        } else if self.delayed.is_none() && seq == self.next - 1 && !(seq == 0 || seg.flags.syn) {
            self.delayed = Some((now.saturating_add(interval), seq));
            return;
        }
        self.delayed = None;
        self.ack(now, seq);
    }

    fn handle_timeout(&mut self, now: Instant, _metrics: &mut dyn MetricSink) {
        if let Some((due, seq)) = self.delayed
            && due <= now
        {
            self.delayed = None;
            self.ack(now, seq);
        }
    }

    fn poll_transmit(&mut self, _now: Instant) -> Option<Packet> {
        fairstream_core::pop_front_rewinding(&mut self.out)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.delayed.map(|(due, _)| due)
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NullSink;
    use fairstream_core::Duration;

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    fn data(seq: i64, syn: bool) -> Packet {
        Packet {
            flow: FlowId(2),
            direction: Direction::Forward,
            size: DataSize::bytes(if syn { 40 } else { 1040 }),
            payload: if syn { 0 } else { 1000 },
            sent_at: Instant::ZERO,
            header: Header::Tcp(TcpSegment {
                seq,
                ack: -1,
                is_ack: false,
                flags: TcpFlags {
                    syn,
                    retransmit: false,
                    push: false,
                },
                ts: 0,
                sack: crate::tcp::SackBlocks::NONE,
            }),
        }
    }

    /// Feeds packet `seq` at `now`; returns the (seq, ack) of every ACK sent in response.
    fn feed(s: &mut TcpSink, seq: i64, now: Instant) -> Vec<(i64, i64)> {
        s.handle_packet(now, &data(seq, false), &mut NullSink);
        acks(s, now)
    }

    fn acks(s: &mut TcpSink, now: Instant) -> Vec<(i64, i64)> {
        let mut v = Vec::new();
        while let Some(p) = s.poll_transmit(now) {
            assert_eq!(p.direction, Direction::Reverse);
            assert_eq!((p.size.as_bytes(), p.payload, p.sent_at), (40, 0, now));
            let h = p.tcp().expect("TCP ACK");
            assert!(h.is_ack);
            v.push((h.seq, h.ack));
        }
        v
    }

    fn plain() -> TcpSink {
        TcpSink::new(FlowId(2), TcpSinkConfig::default())
    }

    fn delack() -> TcpSink {
        TcpSink::new(
            FlowId(2),
            TcpSinkConfig {
                delayed_ack: Some(Duration::from_millis(100)),
                ..TcpSinkConfig::default()
            },
        )
    }

    /// Data packet `seq` of `payload` bytes, ending a record when `push`.
    fn app_data(seq: i64, payload: u32, push: bool) -> Packet {
        let mut p = data(seq, false);
        p.payload = payload;
        p.size = DataSize::bytes(40 + u64::from(payload));
        if let Header::Tcp(h) = &mut p.header {
            h.flags.push = push;
        }
        p
    }

    #[test]
    fn records_are_delivered_when_their_last_byte_is_in_order() {
        let mut s = plain();
        let feed = |s: &mut TcpSink, seq, payload, push| {
            s.handle_packet(t(1), &app_data(seq, payload, push), &mut NullSink);
            (s.delivered_bytes(), s.records_delivered())
        };
        // Record A = packets 0 (1000 B) and 1 (300 B, push); record B = packet 2 (200 B, push).
        assert_eq!(feed(&mut s, 0, 1000, false), (1000, 0));
        // Packet 2 arrives before 1: B cannot be delivered before A.
        assert_eq!(feed(&mut s, 2, 200, true), (1000, 0));
        // Packet 1 fills the gap: both records, 1500 B, in order.
        assert_eq!(feed(&mut s, 1, 300, true), (1500, 2));
        // A duplicate delivers nothing twice.
        assert_eq!(feed(&mut s, 2, 200, true), (1500, 2));
        assert_eq!(s.duplicates(), 1);
    }

    #[test]
    fn in_order_packets_each_acked_cumulatively() {
        let mut s = plain();
        for i in 0..5 {
            assert_eq!(feed(&mut s, i, t(i as u64)), vec![(i, i)]);
        }
        assert_eq!(s.stats().app_bytes_received, 5000);
        assert_eq!(s.stats().packets_received, 5);
        assert_eq!(s.stats().packets_sent, 5);
        assert_eq!(s.stats().bytes_sent, 200);
    }

    #[test]
    fn out_of_order_dupacks_then_gap_fill_jumps_and_counts_once() {
        let mut s = plain();
        feed(&mut s, 0, t(0));
        assert_eq!(feed(&mut s, 2, t(1)), vec![(2, 0)]);
        assert_eq!(feed(&mut s, 3, t(2)), vec![(3, 0)]);
        assert_eq!(s.stats().app_bytes_received, 1000);
        assert_eq!(feed(&mut s, 1, t(3)), vec![(1, 3)]);
        assert_eq!(s.stats().app_bytes_received, 4000);
        // Duplicates are acknowledged but not delivered again.
        assert_eq!(feed(&mut s, 2, t(4)), vec![(2, 3)]);
        assert_eq!(s.stats().app_bytes_received, 4000);
        assert_eq!(s.duplicates(), 1);
    }

    #[test]
    fn duplicate_out_of_order_packet_not_counted_twice() {
        let mut s = plain();
        feed(&mut s, 0, t(0));
        feed(&mut s, 5, t(1));
        feed(&mut s, 5, t(2));
        assert_eq!(s.duplicates(), 1);
        for i in 1..5 {
            feed(&mut s, i, t(3));
        }
        assert_eq!(s.cumulative_ack(), 5);
        assert_eq!(s.stats().app_bytes_received, 6000);
    }

    #[test]
    fn far_out_of_order_grows_ring_and_keeps_entries() {
        let mut s = plain();
        for i in (1..300).step_by(3) {
            feed(&mut s, i, t(0));
        }
        feed(&mut s, 1000, t(0));
        for i in 0..1000 {
            if i % 3 != 1 {
                feed(&mut s, i, t(0));
            }
        }
        assert_eq!(s.cumulative_ack(), 300);
        for i in 300..1000 {
            if i % 3 == 1 {
                feed(&mut s, i, t(0));
            }
        }
        assert_eq!(s.cumulative_ack(), 1000);
        assert_eq!(s.stats().app_bytes_received, 1001 * 1000);
        assert_eq!(s.duplicates(), 0);
    }

    #[test]
    fn syn_carries_no_goodput() {
        let mut s = plain();
        s.handle_packet(t(0), &data(0, true), &mut NullSink);
        assert_eq!(acks(&mut s, t(0)), vec![(0, 0)]);
        assert_eq!(s.stats().app_bytes_received, 0);
        feed(&mut s, 1, t(1));
        assert_eq!(s.stats().app_bytes_received, 1000);
    }

    #[test]
    fn delack_syn_acked_immediately() {
        let mut s = delack();
        s.handle_packet(t(0), &data(0, true), &mut NullSink);
        assert_eq!(acks(&mut s, t(0)), vec![(0, 0)]);
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn delack_every_second_in_order_packet_acked() {
        let mut s = delack();
        feed(&mut s, 0, t(0));
        assert!(feed(&mut s, 1, t(10)).is_empty());
        assert_eq!(s.poll_timeout(), Some(t(110)));
        assert_eq!(feed(&mut s, 2, t(20)), vec![(2, 2)]);
        assert_eq!(s.poll_timeout(), None);
        assert!(feed(&mut s, 3, t(30)).is_empty());
        assert_eq!(feed(&mut s, 4, t(40)), vec![(4, 4)]);
    }

    #[test]
    fn delack_lone_packet_acked_after_delay() {
        let mut s = delack();
        feed(&mut s, 0, t(0));
        assert!(feed(&mut s, 1, t(10)).is_empty());
        s.handle_timeout(t(109), &mut NullSink);
        assert!(acks(&mut s, t(109)).is_empty());
        s.handle_timeout(t(110), &mut NullSink);
        assert_eq!(acks(&mut s, t(110)), vec![(1, 1)]);
        assert_eq!(s.poll_timeout(), None);
        // Idle again: the next packet is held anew.
        assert!(feed(&mut s, 2, t(500)).is_empty());
        assert_eq!(s.poll_timeout(), Some(t(600)));
    }

    #[test]
    fn delack_out_of_order_dupack_immediate_and_cancels_timer() {
        let mut s = delack();
        feed(&mut s, 0, t(0));
        assert!(feed(&mut s, 1, t(10)).is_empty());
        // Packet 2 lost: 3 is out of order and is ACKed at once with the cumulative 1.
        assert_eq!(feed(&mut s, 3, t(20)), vec![(3, 1)]);
        assert_eq!(s.poll_timeout(), None);
        assert_eq!(feed(&mut s, 4, t(30)), vec![(4, 1)]);
        // The retransmitted 2 fills the gap: immediate ACK of everything.
        assert_eq!(feed(&mut s, 2, t(40)), vec![(2, 4)]);
        assert_eq!(s.stats().app_bytes_received, 5000);
    }

    #[test]
    fn delack_duplicate_below_edge_acked_immediately() {
        let mut s = delack();
        feed(&mut s, 0, t(0));
        feed(&mut s, 1, t(1));
        feed(&mut s, 2, t(2));
        assert_eq!(feed(&mut s, 0, t(3)), vec![(0, 2)]);
    }

    #[test]
    fn non_data_packets_ignored() {
        let mut s = plain();
        let mut p = data(0, false);
        p.direction = Direction::Reverse;
        s.handle_packet(t(0), &p, &mut NullSink);
        let mut q = data(0, false);
        q.flow = FlowId(7);
        s.handle_packet(t(0), &q, &mut NullSink);
        assert!(s.poll_transmit(t(0)).is_none());
        assert_eq!(s.stats().packets_received, 0);
    }

    /// A sink with SACK and timestamps, as the `linux` preset has (no delayed ACKs here).
    fn sack_ts() -> TcpSink {
        TcpSink::new(
            FlowId(2),
            TcpSinkConfig {
                sack: true,
                timestamps: true,
                ..TcpSinkConfig::default()
            },
        )
    }

    /// An ACK as the tests read it: cumulative ACK, TSecr, SACK blocks, size on the wire.
    type AckSeen = (i64, u32, Vec<(i64, i64)>, u64);

    /// Feeds packet `seq` sent with TSval `ts`; returns the ACKs it caused.
    fn feed_ts(s: &mut TcpSink, seq: i64, ts: u32) -> Vec<AckSeen> {
        let mut p = data(seq, false);
        if let Header::Tcp(h) = &mut p.header {
            h.ts = ts;
        }
        s.handle_packet(t(1), &p, &mut NullSink);
        std::iter::from_fn(|| s.poll_transmit(t(1)))
            .map(|p| {
                let h = *p.tcp().unwrap();
                (h.ack, h.ts, h.sack.iter(h.ack).collect(), p.size.as_bytes())
            })
            .collect()
    }

    #[test]
    fn sack_blocks_report_held_runs_and_are_paid_for() {
        let mut s = sack_ts();
        // In order: 40 + 12 bytes of timestamps, no blocks.
        assert_eq!(feed_ts(&mut s, 0, 100), [(0, 100, vec![], 52)]);
        // 1 lost; 2 and 3 arrive: one block, 52 + 4 + 8 bytes.
        assert_eq!(feed_ts(&mut s, 2, 102), [(0, 100, vec![(2, 3)], 64)]);
        assert_eq!(feed_ts(&mut s, 3, 103), [(0, 100, vec![(2, 4)], 64)]);
        // 5 lost too: 6 opens a second block, reported first.
        assert_eq!(
            feed_ts(&mut s, 6, 106),
            [(0, 100, vec![(6, 7), (2, 4)], 72)]
        );
        // The retransmitted 1 fills the first hole: its TSval is echoed (it reached the left
        // edge); the run 2..4 is delivered, 6 stays.
        assert_eq!(feed_ts(&mut s, 1, 150), [(3, 150, vec![(6, 7)], 64)]);
        // Beside timestamps at most three blocks.
        for seq in [8, 10, 12, 14] {
            feed_ts(&mut s, seq, 200);
        }
        let last = feed_ts(&mut s, 16, 201);
        assert_eq!(last[0].2, [(16, 17), (14, 15), (12, 13)]);
        assert_eq!(last[0].3, 40 + 12 + 4 + 24);
        assert_eq!(s.sack_runs().len(), 4);
        // An out-of-order segment does not move TS.Recent: the echo is still 150's.
        assert_eq!(last[0].1, 150);
    }

    #[test]
    fn without_timestamps_four_blocks_fit() {
        let mut s = TcpSink::new(
            FlowId(2),
            TcpSinkConfig {
                sack: true,
                ..TcpSinkConfig::default()
            },
        );
        feed_ts(&mut s, 0, 0);
        for seq in [2, 4, 6, 8, 10] {
            feed_ts(&mut s, seq, 0);
        }
        let a = feed_ts(&mut s, 12, 0);
        assert_eq!(a[0].2.len(), 4);
        assert_eq!((a[0].1, a[0].3), (0, 40 + 36));
    }

    #[test]
    fn delayed_ack_echoes_the_first_of_the_pair() {
        let mut s = TcpSink::new(
            FlowId(2),
            TcpSinkConfig {
                delayed_ack: Some(Duration::from_millis(40)),
                timestamps: true,
                ..TcpSinkConfig::default()
            },
        );
        assert_eq!(feed_ts(&mut s, 0, 10).len(), 1);
        assert!(feed_ts(&mut s, 1, 20).is_empty());
        // The ACK of the pair echoes packet 1's TSval (RFC 7323 §4.3: the RTT includes the wait).
        assert_eq!(feed_ts(&mut s, 2, 30), [(2, 20, vec![], 52)]);
    }
}
