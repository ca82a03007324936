//! What every protocol header tells the drivers, as the methods of [`HeaderKind`], which each
//! header type implements in its protocol's folder; the [`crate::Header`] enum (generated from
//! the protocol list) dispatches to them, so no driver matches on a protocol's header:
//!
//! - the simulator's packet trace asks for a sequence number ([`HeaderKind::trace_seq`]) and a
//!   capture for the transport header to write ([`HeaderKind::emit_transport`]);
//! - the real-time driver's proof of feedback (`fairstream_rt::proof`) asks a data header for
//!   its sequence number, and a feedback report what it claims, what its echo covers, and how to
//!   state the heaviest loss in its place when it lies.

use crate::wire::TransportContext;

/// A protocol header type. The defaults are those of a header that is neither a data packet
/// nor a feedback report the real-time driver checks (TCP's, which the kernel carries; a plain
/// UDP datagram's; a cell's).
pub trait HeaderKind: Copy {
    /// What it is, in a few words (`"TCP"`, `"plain UDP"`): an error that refuses it names it.
    const WHAT: &'static str;

    /// The IPv4 protocol number of its transport (17, UDP, unless it says otherwise).
    const IP_PROTOCOL: u8 = 17;

    /// The sequence number the packet trace shows (−1 for a header that names no packet).
    fn trace_seq(&self) -> i64;

    /// Writes its transport header for a capture into the start of `out` (at least
    /// [`crate::wire::MAX_TRANSPORT_HEADER`] bytes) and returns its length: a UDP header unless
    /// it says otherwise.
    fn emit_transport(&self, ctx: &TransportContext, out: &mut [u8]) -> usize {
        crate::wire::emit_udp(ctx, out)
    }

    /// A data packet's sub-connection and sequence number, whose nonce a real sender remembers
    /// and a real receiver sums for its reports (`None`: not a data packet).
    fn data_seq(&self) -> Option<(u8, u64)> {
        None
    }

    /// A feedback report's sub-connection, and whether it claims no loss (which its echo must
    /// then prove); `None`: not a feedback report.
    fn feedback_claim(&self) -> Option<(u8, bool)> {
        None
    }

    /// The loss fraction a feedback report states, if it states one (the circuit breaker's).
    fn reported_loss(&self) -> Option<f64> {
        None
    }

    /// Sequence numbers a report's echo leaves out at its top: the newest packets its receiver
    /// does not yet count as received or lost.
    fn echo_lag(&self) -> u64 {
        0
    }

    /// The highest sequence number a report says it covers, if it says one: its echo covers no
    /// further.
    fn report_top(&self) -> Option<u64> {
        None
    }

    /// Replaces a report whose claim of no loss its echo did not prove with the heaviest loss it
    /// can state, nothing received.
    fn forge_loss(&mut self) {}

    /// Makes a report claim no loss, whatever it saw (a receiver that lies on purpose, to test
    /// the proof).
    fn hide_loss(&mut self) {}
}

/// A sequence number as the packet trace shows it (one past `i64::MAX` shows as `i64::MAX`).
pub fn trace_number(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

/// The loss fraction a report of `lost` and `received` packets states (`None` when it counts
/// none).
pub fn loss_fraction(lost: u32, received: u32) -> Option<f64> {
    (lost + received > 0).then(|| f64::from(lost) / f64::from(lost + received))
}
