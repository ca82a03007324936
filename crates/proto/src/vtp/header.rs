//! VTP's headers: a data packet and the receiver's Achieved Rate report, each with its layout on
//! the wire (from which its size follows) and what it tells the drivers ([`HeaderKind`]).

use fairstream_core::{Bitrate, Duration, Instant};

use crate::header::HeaderKind;
use crate::wire::{BytesPerSec, Micros, U16Of, U32Of, wire_fields};

/// A VTP data packet: sequence number, the sender's timestamp and its RTT estimate (which
/// sets the receiver's sampling period).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VtpData {
    /// Sequence number, from 0, one per packet.
    pub seq: u64,
    /// When the sender emitted it (its clock).
    pub timestamp: Instant,
    /// The sender's current RTT estimate (zero before it has one).
    pub rtt: Duration,
}

/// A VTP receiver report: the Achieved Rate and what the sampling period saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VtpFeedback {
    /// Timestamp of the last data packet received (the sender's clock).
    pub t_echo: Instant,
    /// Time between receiving that packet and sending this report.
    pub t_delay: Duration,
    /// The receiver's Achieved Rate (EWMA of the period's receive rates).
    pub achieved_rate: Bitrate,
    /// Highest sequence number received so far.
    pub highest_seq: u64,
    /// Packets found missing during the period.
    pub lost: u32,
    /// Packets received during the period.
    pub received: u32,
}

wire_fields! {
    VtpData as Data {
        seq: U32Of,
        timestamp: Micros,
        rtt: Micros,
    }
}

wire_fields! {
    VtpFeedback as Feedback {
        t_echo: Micros,
        t_delay: Micros,
        achieved_rate: BytesPerSec,
        highest_seq: U32Of,
        lost: U16Of,
        received: U16Of,
    }
}

impl HeaderKind for VtpData {
    const WHAT: &'static str = "VTP data";

    fn trace_seq(&self) -> i64 {
        crate::header::trace_number(self.seq)
    }

    fn data_seq(&self) -> Option<(u8, u64)> {
        Some((0, self.seq))
    }
}

impl HeaderKind for VtpFeedback {
    const WHAT: &'static str = "VTP feedback";

    /// The highest sequence number the report covers.
    fn trace_seq(&self) -> i64 {
        crate::header::trace_number(self.highest_seq)
    }

    fn feedback_claim(&self) -> Option<(u8, bool)> {
        Some((0, self.lost == 0))
    }

    fn reported_loss(&self) -> Option<f64> {
        crate::header::loss_fraction(self.lost, self.received)
    }

    fn report_top(&self) -> Option<u64> {
        Some(self.highest_seq)
    }

    fn forge_loss(&mut self) {
        self.lost = self.received.max(1);
        self.achieved_rate = Bitrate::ZERO;
    }

    fn hide_loss(&mut self) {
        self.lost = 0;
    }
}
