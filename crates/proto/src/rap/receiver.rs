//! The RAP receiver (ns-2's RAP sink): acknowledges every data packet at once, with the last
//! hole in the sequence numbers it has seen, from which the sender tells what arrived and what
//! was lost (see [`super::history`]).
//!
//! The hole is three numbers, kept as ns-2 keeps them: `last_recv`, the highest received;
//! `last_miss`, the top of the last hole below it (0: none); `prev_recv`, the packet just below
//! that hole. A packet above `last_recv + 1` opens a new hole; one that lands in the hole
//! shrinks it from the top or the bottom (a packet in its middle counts as its new bottom, as in
//! ns-2). A packet the receiver already counted, or one below the hole, is acknowledged without
//! moving it. Nothing a packet says makes the receiver panic.

use fairstream_core::{FlowId, Instant};

use super::{RapAck, RapData};
use crate::{Direction, Endpoint, EndpointStats, Header, MetricSink, Packet, udp_feedback_size};

/// A RAP receiver.
#[derive(Clone, Debug)]
pub struct RapReceiver {
    flow: FlowId,
    last_recv: u64,
    last_miss: u64,
    prev_recv: u64,
    /// The ACK of the packet just received, until the driver drains it.
    out: Option<Packet>,
    stats: EndpointStats,
}

impl RapReceiver {
    /// The receiver of `flow`.
    pub fn new(flow: FlowId) -> Self {
        Self {
            flow,
            last_recv: 0,
            last_miss: 0,
            prev_recv: 0,
            out: None,
            stats: EndpointStats::default(),
        }
    }

    /// The last hole: `(last_recv, last_miss, prev_recv)`.
    pub fn hole(&self) -> (u64, u64, u64) {
        (self.last_recv, self.last_miss, self.prev_recv)
    }

    /// Moves the hole for data packet `seq`; whether the packet was new to it.
    fn update_hole(&mut self, seq: u64) -> bool {
        if seq > self.last_recv.saturating_add(1) {
            self.prev_recv = self.last_recv;
            self.last_recv = seq;
            self.last_miss = seq - 1;
        } else if seq == self.last_recv.saturating_add(1) {
            self.last_recv = seq;
        } else if seq > self.last_miss {
            return false; // at or below the highest, above the hole: a duplicate
        } else if seq == self.last_miss {
            if self.prev_recv + 1 == seq {
                self.prev_recv = 0;
                self.last_miss = 0; // the hole is filled
            } else {
                self.last_miss -= 1;
            }
        } else if seq > self.prev_recv {
            self.prev_recv = seq;
        } else {
            return false; // below the hole: counted long ago, or too late to tell
        }
        true
    }
}

impl Endpoint for RapReceiver {
    /// Takes a data packet of this flow; anything else is ignored. Its ACK is ready at once
    /// through `poll_transmit` (one slot: the driver drains it after every call).
    fn handle_packet(&mut self, now: Instant, packet: &Packet, _metrics: &mut dyn MetricSink) {
        let Header::RapData(RapData { seq }) = packet.header else {
            return;
        };
        if packet.flow != self.flow || packet.direction != Direction::Forward || seq == 0 {
            return;
        }
        self.stats.packets_received += 1;
        if self.update_hole(seq) {
            self.stats.app_bytes_received += u64::from(packet.payload);
        }
        let size = udp_feedback_size(RapAck::WIRE_LEN);
        self.stats.count_sent(size);
        self.out = Some(Packet {
            flow: self.flow,
            direction: Direction::Reverse,
            size,
            payload: 0,
            sent_at: now,
            header: Header::RapAck(RapAck {
                seq,
                last_recv: self.last_recv,
                last_miss: self.last_miss,
                prev_recv: self.prev_recv,
            }),
        });
    }

    fn handle_timeout(&mut self, _now: Instant, _metrics: &mut dyn MetricSink) {}

    fn poll_transmit(&mut self, _now: Instant) -> Option<Packet> {
        self.out.take()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn got(r: &mut RapReceiver, seqs: &[u64]) -> (u64, u64, u64) {
        for &s in seqs {
            r.update_hole(s);
        }
        r.hole()
    }

    #[test]
    fn the_hole_opens_shrinks_and_closes_as_ns2s_does() {
        let mut r = RapReceiver::new(FlowId(0));
        assert_eq!(got(&mut r, &[1, 2, 3]), (3, 0, 0));
        assert_eq!(got(&mut r, &[7]), (7, 6, 3), "4–6 missing");
        assert_eq!(got(&mut r, &[6]), (7, 5, 3), "filled from the top");
        assert_eq!(got(&mut r, &[4]), (7, 5, 4), "from the bottom");
        assert_eq!(got(&mut r, &[5]), (7, 0, 0), "closed");
        assert!(!r.update_hole(6), "a duplicate is not new");
        assert!(!r.update_hole(2), "nor one below every hole");
    }
}
