//! VTP, the Video Transport Protocol with its wireless extension (PROTOCOLS.md §5; Balk,
//! Gerla, Sanadidi, Maggiorini 2003; Yang, Gerla, Sanadidi 2004): a receiver that measures
//! and reports the Achieved Rate (AR), and a rate-based sender that cuts to a fraction of AR
//! on congestion losses, tells wireless losses from congestion ones with Spike on its RTT
//! samples, and prorates AR by (1 + e) for the wireless loss fraction e.
//!
//! - [`config`]: every parameter with its default and tag;
//! - [`sender`]: the paced sender endpoint and the checks on reports;
//! - [`control`]: the rate control (modes, cut and hold, the equivalent-window increase);
//! - [`receiver`]: AR measurement and the reports.
//!
//! Video levels (choosing the highest encoding rate ≤ R) are not modelled: the application is
//! greedy and sends at R.

pub mod config;
pub mod control;
mod header;
pub mod receiver;
pub mod sender;

#[cfg(test)]
mod tests;

pub use config::{DATA_HEADERS, VtpConfig};
pub use control::VtpMode;
pub use header::{VtpData, VtpFeedback};
pub use receiver::VtpReceiver;
pub use sender::VtpSender;

use crate::lda::metrics::{CONGESTION_LOSS, WIRELESS_LOSS};
use crate::metric::{ACHIEVED_RATE, RATE, RTT, SPIKE, SRTT, WIRELESS_LOSS_ESTIMATE};
use crate::{AnyEndpoint, DataPacket, FlowCtx, FlowDemand, FlowProtocol, MetricKind};

/// What VTP's endpoints record.
pub static METRICS: &[&MetricKind] = &[
    &RTT,
    &SRTT,
    &RATE,
    &ACHIEVED_RATE,
    &SPIKE,
    &WIRELESS_LOSS_ESTIMATE,
    &CONGESTION_LOSS,
    &WIRELESS_LOSS,
];

impl FlowProtocol for VtpConfig {
    const NAME: &'static str = "vtp";
    const RNG_STREAM: &'static str = "vtp";
    const METRICS: &'static [&'static MetricKind] = METRICS;

    fn endpoints(&self, ctx: &FlowCtx) -> (AnyEndpoint, AnyEndpoint) {
        (
            AnyEndpoint::VtpSender(Box::new(VtpSender::new(ctx, *self))),
            AnyEndpoint::VtpReceiver(Box::new(VtpReceiver::new(ctx.id, self))),
        )
    }

    fn data_packet(&self) -> DataPacket {
        DataPacket::new(self.packet_size, DATA_HEADERS)
    }

    fn demand(&self) -> FlowDemand {
        FlowDemand {
            initial_rate: self.initial_rate,
            // Without feedback the rate falls to its floor of packets per (initial) RTT.
            idle_interval: self
                .initial_rtt
                .mul_f64(1.0 / self.min_rate_packets_per_rtt.max(1e-3))
                .max(fairstream_core::Duration::from_nanos(1)),
            state_bytes: size_of::<VtpSender>() + size_of::<VtpReceiver>(),
            ..FlowDemand::adaptive(self.packet_size)
        }
    }
}

/// A real run: the default configuration, its rate at most the cap.
impl crate::RealTime for VtpConfig {
    fn real_time(cap: Option<fairstream_core::Bitrate>) -> Self {
        let mut v = Self::default();
        if let Some(c) = cap {
            v.max_rate = c;
        }
        v
    }
}
