//! RAP's headers: a data packet's sequence number, and the ACK of one data packet with the
//! receiver's last hole (ns-2's `hdr_rap`), each with its layout (from which its size follows)
//! and what it tells the drivers ([`HeaderKind`]). Sequence numbers start at 1; a hole field of
//! 0 means none.
//!
//! For the real-time driver's proof of feedback, an ACK covers the packets up to its
//! `last_recv`, and claims no loss when it reports no hole and acknowledges that highest packet
//! (an in-order arrival, whose range is never empty). An ACK of a late or duplicated packet
//! claims nothing. A lie is replaced by the heaviest loss an ACK can state: every packet below
//! the highest missing.

use crate::header::HeaderKind;
use crate::wire::{U32Of, wire_fields};

/// A RAP data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RapData {
    /// Sequence number, from 1, one per packet.
    pub seq: u64,
}

/// A RAP ACK: the packet it acknowledges and the last hole in what the receiver has seen.
/// Packets `last_miss + 1 ..= last_recv` and `prev_recv` arrived; packets `prev_recv + 1 ..=
/// last_miss` did not (yet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RapAck {
    /// The data packet acknowledged.
    pub seq: u64,
    /// The highest sequence number received.
    pub last_recv: u64,
    /// The top of the last hole below it (0: no hole).
    pub last_miss: u64,
    /// The packet received just below that hole (0: none).
    pub prev_recv: u64,
}

wire_fields! {
    RapData as Data {
        seq: U32Of,
    }
}

wire_fields! {
    RapAck as Feedback {
        seq: U32Of,
        last_recv: U32Of,
        last_miss: U32Of,
        prev_recv: U32Of,
    }
}

impl HeaderKind for RapData {
    const WHAT: &'static str = "RAP data";

    fn trace_seq(&self) -> i64 {
        crate::header::trace_number(self.seq)
    }

    fn data_seq(&self) -> Option<(u8, u64)> {
        Some((0, self.seq))
    }
}

impl HeaderKind for RapAck {
    const WHAT: &'static str = "RAP ACK";

    /// The data packet it acknowledges.
    fn trace_seq(&self) -> i64 {
        crate::header::trace_number(self.seq)
    }

    fn feedback_claim(&self) -> Option<(u8, bool)> {
        Some((0, self.last_miss == 0 && self.seq == self.last_recv))
    }

    fn report_top(&self) -> Option<u64> {
        Some(self.last_recv)
    }

    fn forge_loss(&mut self) {
        if self.last_recv >= 2 {
            self.last_miss = self.last_recv - 1;
            self.prev_recv = 0;
        }
    }

    fn hide_loss(&mut self) {
        self.last_miss = 0;
        self.prev_recv = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_in_order_ack_without_a_hole_claims_no_loss_and_a_forged_one_states_every_loss() {
        let mut a = RapAck {
            seq: 9,
            last_recv: 9,
            last_miss: 0,
            prev_recv: 0,
        };
        assert_eq!(a.feedback_claim(), Some((0, true)));
        assert_eq!(a.report_top(), Some(9));
        a.forge_loss();
        assert_eq!((a.last_miss, a.prev_recv), (8, 0));
        assert_eq!(a.feedback_claim(), Some((0, false)));
        a.hide_loss();
        assert_eq!(a.feedback_claim(), Some((0, true)));
        let late = RapAck {
            seq: 4,
            last_recv: 9,
            last_miss: 0,
            prev_recv: 0,
        };
        assert_eq!(
            late.feedback_claim(),
            Some((0, false)),
            "a late packet's ACK"
        );
    }
}
