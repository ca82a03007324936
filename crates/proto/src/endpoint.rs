//! The [`Endpoint`] trait: the one driving vocabulary every protocol endpoint speaks.

use fairstream_core::{DataSize, Instant};

use crate::{MetricSink, Packet};

/// A sans-IO protocol endpoint (see the crate documentation for the driving contract).
pub trait Endpoint {
    /// Feeds a packet that arrived for this endpoint at `now`.
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink);

    /// Fires whatever timers are due at `now`; harmless when nothing is due.
    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink);

    /// The next packet to send at `now`, if any; call until `None`.
    #[must_use]
    fn poll_transmit(&mut self, now: Instant) -> Option<Packet>;

    /// When `handle_timeout` is next due, if ever.
    #[must_use]
    fn poll_timeout(&self) -> Option<Instant>;

    /// Counters of what the endpoint did so far.
    fn stats(&self) -> EndpointStats;
}

/// Plain counters an endpoint keeps about itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Packets emitted.
    pub packets_sent: u64,
    /// Bytes emitted (on the wire).
    pub bytes_sent: u64,
    /// Packets emitted that were retransmissions.
    pub retransmits: u64,
    /// Application bytes delivered in order to the receiving application (goodput).
    pub app_bytes_received: u64,
    /// Packets received.
    pub packets_received: u64,
}

impl EndpointStats {
    /// Counts one packet of `size` (on the wire) emitted.
    #[inline]
    pub fn count_sent(&mut self, size: DataSize) {
        self.packets_sent += 1;
        self.bytes_sent += size.as_bytes();
    }
}
