//! MULTFRC's receiving side: one TFRC receiver per connection number seen, created on the
//! connection's first packet; receivers of connections that fell silent make room for new ones.
//! The application's data is reassembled by counting what every connection delivers.

use fairstream_core::{FlowId, Instant};

use super::MultfrcConfig;
use crate::tfrc::TfrcReceiver;
use crate::{Endpoint, EndpointStats, Header, MetricSink, Packet};

/// The MULTFRC receiver.
#[derive(Clone, Debug)]
pub struct MultfrcReceiver {
    flow: FlowId,
    config: MultfrcConfig,
    /// Receivers and when each last heard from its connection.
    receivers: Vec<(u8, Instant, TfrcReceiver)>,
    /// Counters of receivers already dropped.
    dropped: EndpointStats,
}

impl MultfrcReceiver {
    /// Bytes a receiver for `config` allocates when built, and at most as connections open.
    pub fn heap_bytes(config: &MultfrcConfig) -> usize {
        Self::capacity(config)
            * (size_of::<(u8, Instant, TfrcReceiver)>() + TfrcReceiver::HEAP_BYTES)
    }

    /// A receiver for `flow`.
    pub fn new(flow: FlowId, config: MultfrcConfig) -> Self {
        Self {
            flow,
            config,
            receivers: Vec::with_capacity(Self::capacity(&config)),
            dropped: EndpointStats::default(),
        }
    }

    /// Receivers kept: twice the most connections the sender opens.
    fn capacity(config: &MultfrcConfig) -> usize {
        2 * config.max_connections.clamp(1, 128) as usize
    }

    fn receiver_for(&mut self, conn: u8, now: Instant) -> &mut TfrcReceiver {
        if let Some(i) = self.receivers.iter().position(|r| r.0 == conn) {
            self.receivers[i].1 = now;
            return &mut self.receivers[i].2;
        }
        if self.receivers.len() >= Self::capacity(&self.config)
            && let Some((i, _)) = self.receivers.iter().enumerate().min_by_key(|(_, r)| r.1)
        {
            let gone = self.receivers.swap_remove(i).2.stats();
            self.dropped.packets_received += gone.packets_received;
            self.dropped.app_bytes_received += gone.app_bytes_received;
            self.dropped.packets_sent += gone.packets_sent;
            self.dropped.bytes_sent += gone.bytes_sent;
        }
        let tfrc = &self.config.tfrc;
        let receiver =
            TfrcReceiver::new(self.flow, conn, tfrc.receiver, tfrc.sender.equation, None);
        self.receivers.push((conn, now, receiver));
        &mut self.receivers.last_mut().expect("just pushed").2
    }
}

impl Endpoint for MultfrcReceiver {
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        if let Header::TfrcData(d) = &packet.header {
            self.receiver_for(d.conn, now)
                .handle_packet(now, packet, metrics);
        }
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        for r in &mut self.receivers {
            r.2.handle_timeout(now, metrics);
        }
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        self.receivers
            .iter_mut()
            .find_map(|r| r.2.poll_transmit(now))
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.receivers
            .iter()
            .filter_map(|r| r.2.poll_timeout())
            .min()
    }

    fn stats(&self) -> EndpointStats {
        let mut s = self.dropped;
        for r in &self.receivers {
            let rs = r.2.stats();
            s.packets_received += rs.packets_received;
            s.app_bytes_received += rs.app_bytes_received;
            s.packets_sent += rs.packets_sent;
            s.bytes_sent += rs.bytes_sent;
        }
        s
    }
}
