//! TFRC's headers (RFC 5348 §3.2), their layout on the wire, and what they tell the drivers:
//! a data packet's sequence number per sub-connection (MULTFRC's connections too), and what a
//! report claims. A report leaves the newest three sequence numbers out of its echo: the
//! receiver counts a missing packet lost only after three later ones (NDUPACK).

use fairstream_core::{Bitrate, Duration, Instant};

use crate::header::HeaderKind;
use crate::wire::{
    BytesPerSec, FieldCodec, Micros, Reader, U8, U8Mod, U32, U32Of, WireError, Writer, wire_fields,
};

/// A TFRC data packet (RFC 5348 §3.2): sequence number, the sender's timestamp and its RTT
/// estimate. MULTFRC numbers its sub-connections with `conn`; ns-2's TFRC also carries the
/// sender's round number (`round_id`, used by its `PreciseLoss_` rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TfrcData {
    /// Sub-connection (0 for plain TFRC; MULTFRC's connection index).
    pub conn: u8,
    /// Sequence number, from 0, one per packet.
    pub seq: u64,
    /// When the sender emitted it (its clock).
    pub timestamp: Instant,
    /// The sender's current RTT estimate (zero before it has one).
    pub rtt: Duration,
    /// The sender's round number: how many RTTs it has counted (ns-2's `round_id`).
    pub round: u32,
}

/// A loss event rate as a real encoding carries it: a 32-bit fraction of one
/// (`u32::MAX` is p = 1), so the simulator sees exactly what a wire would deliver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, PartialOrd)]
pub struct LossRate(u32);

impl LossRate {
    /// No loss.
    pub const ZERO: Self = Self(0);

    /// `p` clamped to [0, 1] and rounded to the nearest representable value (never to zero
    /// when `p > 0`, so a small loss event rate stays a loss event rate).
    pub fn from_f64(p: f64) -> Self {
        if p.is_nan() || p <= 0.0 {
            return Self(0);
        }
        let v = (p.min(1.0) * f64::from(u32::MAX)).round();
        Self((v as u32).max(1))
    }

    /// The fraction as a real number in [0, 1].
    pub fn value(self) -> f64 {
        f64::from(self.0) / f64::from(u32::MAX)
    }

    /// The raw 32-bit encoding.
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// The rate a raw 32-bit encoding stands for (what a decoder reads off the wire).
    pub const fn from_raw(raw: u32) -> Self {
        Self(raw)
    }
}

/// A TFRC feedback report (RFC 5348 §3.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TfrcFeedback {
    /// Sub-connection it reports on (0 for plain TFRC).
    pub conn: u8,
    /// Timestamp of the last data packet received (the sender's clock).
    pub t_recvdata: Instant,
    /// Time between receiving that packet and sending this report.
    pub t_delay: Duration,
    /// Rate at which data arrived since the last report.
    pub x_recv: Bitrate,
    /// Loss event rate p.
    pub p: LossRate,
}

wire_fields! {
    TfrcData as Data {
        seq: U32Of,
        timestamp: Micros,
        rtt: Micros,
        conn: U8,
        round: U8Mod,
        pad 2,
    }
}

wire_fields! {
    TfrcFeedback as Feedback {
        conn: U8,
        pad 3,
        t_recvdata: Micros,
        t_delay: Micros,
        x_recv: BytesPerSec,
        p: U32,
    }
}

/// A loss event rate goes on the wire as its raw 32-bit fraction.
impl FieldCodec<LossRate> for U32 {
    fn put(v: &LossRate, w: &mut Writer<'_>, _: &'static str) -> Result<(), WireError> {
        w.u32(v.raw())
    }
    fn get(r: &mut Reader<'_>) -> Result<LossRate, WireError> {
        Ok(LossRate::from_raw(r.u32()?))
    }
}

impl HeaderKind for TfrcData {
    const WHAT: &'static str = "TFRC data";

    fn trace_seq(&self) -> i64 {
        crate::header::trace_number(self.seq)
    }

    fn data_seq(&self) -> Option<(u8, u64)> {
        Some((self.conn, self.seq))
    }
}

impl HeaderKind for TfrcFeedback {
    const WHAT: &'static str = "TFRC feedback";

    /// A TFRC report names no packet.
    fn trace_seq(&self) -> i64 {
        -1
    }

    fn feedback_claim(&self) -> Option<(u8, bool)> {
        Some((self.conn, self.p == LossRate::ZERO))
    }

    fn reported_loss(&self) -> Option<f64> {
        Some(self.p.value())
    }

    fn echo_lag(&self) -> u64 {
        3
    }

    fn forge_loss(&mut self) {
        self.p = LossRate::from_raw(u32::MAX);
        self.x_recv = Bitrate::ZERO;
    }

    fn hide_loss(&mut self) {
        self.p = LossRate::ZERO;
    }
}
