//! The streamer's report over UDP (paper 000), its layout on the wire, and what it tells the
//! drivers: a report of packets received claims no loss when it counts none missing, and its
//! echo covers no further than the highest sequence number it reports.

use fairstream_core::{Bitrate, Duration, Instant};

use crate::header::HeaderKind;
use crate::wire::{BytesPerSec, Micros, U16Of, U32, U32Of, wire_fields};

/// A SureStream-like player's report (paper 000; `surestream` over UDP): what arrived since the
/// last report, an echo for the server's RTT samples, and how much media the player holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamReport {
    /// Report number, from 0, one per report.
    pub number: u32,
    /// Timestamp of the newest data packet received (the server's clock).
    pub t_echo: Instant,
    /// Time between receiving that packet and sending this report.
    pub t_delay: Duration,
    /// Highest sequence number received so far.
    pub highest_seq: u64,
    /// Data packets received since the last report.
    pub received: u32,
    /// Data packets found missing (sequence gaps) since the last report.
    pub lost: u32,
    /// Payload bytes received since the last report over the time since it.
    pub receive_rate: Bitrate,
    /// Media the player holds ahead of its playout point.
    pub buffered: Duration,
}

wire_fields! {
    StreamReport as Feedback {
        number: U32,
        t_echo: Micros,
        t_delay: Micros,
        highest_seq: U32Of,
        received: U16Of,
        lost: U16Of,
        receive_rate: BytesPerSec,
        buffered: Micros,
    }
}

impl HeaderKind for StreamReport {
    const WHAT: &'static str = "stream report";

    /// The highest sequence number the report covers.
    fn trace_seq(&self) -> i64 {
        crate::header::trace_number(self.highest_seq)
    }

    /// A report of nothing received claims nothing.
    fn feedback_claim(&self) -> Option<(u8, bool)> {
        Some((0, self.lost == 0 && self.received > 0))
    }

    fn reported_loss(&self) -> Option<f64> {
        crate::header::loss_fraction(self.lost, self.received)
    }

    fn report_top(&self) -> Option<u64> {
        Some(self.highest_seq)
    }

    fn forge_loss(&mut self) {
        self.lost = self.received.max(1);
        self.receive_rate = Bitrate::ZERO;
    }

    fn hide_loss(&mut self) {
        self.lost = 0;
    }
}
