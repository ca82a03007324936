//! RAP, the Rate Adaptation Protocol (Rejaie, Handley, Estrin, INFOCOM 1999; ns-2's
//! `Agent/RAP`): the rate-based AIMD control of the streaming literature that TFRC was
//! compared against. The sender paces one packet per inter-packet gap, grows the rate by α
//! packets per RTT each RTT and divides it by 1/β at a loss; the receiver acknowledges every
//! packet with its last hole.
//!
//! - [`config`]: every parameter with its default and tag;
//! - [`sender`]: the paced sender, its RTT filter and its AIMD steps;
//! - `history`: the transmission history and the two loss detections;
//! - [`receiver`]: the ACKs and the hole they carry.
//!
//! Quality adaptation (the layered encoding RAP was built to drive) is not modelled: the
//! application is greedy and sends at the rate the gap allows. It runs in the simulator and
//! over `fairstream send`/`recv` ([`crate::RealTime`]).

pub mod config;
mod header;
mod history;
pub mod metrics;
pub mod receiver;
pub mod sender;

#[cfg(test)]
mod tests;

pub use config::{DATA_HEADERS, RapConfig};
pub use header::{RapAck, RapData};
pub use receiver::RapReceiver;
pub use sender::RapSender;

use fairstream_core::Bitrate;

use crate::metric::{RATE, RTT, SRTT};
use crate::{AnyEndpoint, DataPacket, FlowCtx, FlowDemand, FlowProtocol, MetricKind};

/// What RAP's endpoints record.
pub static METRICS: &[&MetricKind] = &[&RTT, &SRTT, &RATE, &metrics::BACKOFF];

impl FlowProtocol for RapConfig {
    const NAME: &'static str = "rap";
    const RNG_STREAM: &'static str = "rap";
    const METRICS: &'static [&'static MetricKind] = METRICS;

    fn endpoints(&self, ctx: &FlowCtx) -> (AnyEndpoint, AnyEndpoint) {
        (
            AnyEndpoint::RapSender(Box::new(RapSender::new(ctx, *self))),
            AnyEndpoint::RapReceiver(RapReceiver::new(ctx.id)),
        )
    }

    fn data_packet(&self) -> DataPacket {
        DataPacket::new(self.packet_size, DATA_HEADERS)
    }

    fn demand(&self) -> FlowDemand {
        FlowDemand {
            initial_rate: Some(Bitrate::from_size_per(
                self.packet_size,
                self.initial_interval,
            )),
            // Without ACKs the gap only grows from its first value.
            idle_interval: self
                .initial_interval
                .min(self.max_interval)
                .max(fairstream_core::Duration::from_nanos(1)),
            state_bytes: size_of::<RapSender>() + size_of::<RapReceiver>(),
            // The transmission history: a sequence number and a departure time per packet.
            bytes_per_packet_in_flight: 2 * size_of::<u64>(),
            metrics_per_packet: 2.0,
            ..FlowDemand::adaptive(self.packet_size)
        }
    }
}

/// A real run: a first gap of 10 ms, the SRTT and loss timeout taken as 100 ms and 1 s until
/// the first sample \[proposed\] (ns-2's 2 s would hold a real flow at one packet per 2 s
/// for its first seconds), and the rate at most the cap.
impl crate::RealTime for RapConfig {
    fn real_time(cap: Option<Bitrate>) -> Self {
        Self {
            initial_interval: fairstream_core::Duration::from_millis(10),
            initial_rtt: fairstream_core::Duration::from_millis(100),
            initial_timeout: fairstream_core::Duration::from_secs(1),
            max_rate: cap,
            ..Self::default()
        }
    }
}
