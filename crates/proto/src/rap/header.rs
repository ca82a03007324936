//! RAP's headers: a data packet's sequence number, and the ACK of one data packet with the
//! receiver's last hole (ns-2's `hdr_rap`), each with its layout (from which its size follows)
//! and what it tells the drivers ([`HeaderKind`]). Sequence numbers start at 1; a hole field of
//! 0 means none.

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
}

impl HeaderKind for RapAck {
    const WHAT: &'static str = "RAP ACK";

    /// The data packet it acknowledges.
    fn trace_seq(&self) -> i64 {
        crate::header::trace_number(self.seq)
    }
}
