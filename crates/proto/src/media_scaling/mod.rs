//! Media scaling over UDP: MM_APP and MPEG_APP (paper 001, Chung and Claypool; PROTOCOLS.md
//! §6): a receiver-driven choice among five scales (0 to 4), each a sending rate (MM_APP) or a
//! frame transmission policy on an MPEG-1 trace (MPEG_APP).
//!
//! - [`config`]: every parameter with its default and tag;
//! - [`receiver`]: the scaling rule (halve on loss or timeout TOI, +1 after a loss-free RTT)
//!   and the reports;
//! - [`sender`]: the two applications' frame schedules and the sender's side of the reports.
//!
//! The sender starts at scale 0. The receiver finds losses from sequence gaps and from silence
//! (TOI = RTT if RTT > Max_Intrvl, else Max_Intrvl + α·RTT), halves the scale, and raises it
//! by one after an RTT without loss since its last change; it reports the scale at once on a
//! decrease and at each RTT checkpoint. Data packets carry the sender's smoothed RTT (from the
//! reports' echoes) for the receiver's rules.

pub mod config;
mod header;
pub mod metrics;
pub mod receiver;
pub mod sender;

#[cfg(test)]
mod tests;

use fairstream_core::{Instant, RngStream};

pub use config::{MmAppConfig, MpegAppConfig, MpegTrace, ScalingConfig, mpeg_scale_rates};
pub use header::{MediaData, MediaFeedback};
pub use receiver::MediaReceiver;
pub use sender::MediaSender;

use crate::{AnyEndpoint, DataPacket, FlowCtx, FlowDemand, FlowProtocol, MetricKind};

impl MmAppConfig {
    /// The two endpoints of flow `ctx` (the dither, if any, drawn from its random stream).
    pub fn build(&self, ctx: &FlowCtx) -> (MediaSender, MediaReceiver) {
        let rule = config::Rule::new(&self.scaling, self.max_interval());
        (
            MediaSender::mm_app(ctx, self),
            MediaReceiver::new(ctx.id, rule, self.player(ctx.start)),
        )
    }
}

impl MpegAppConfig {
    /// The two endpoints of flow `ctx` (size noise, if any, drawn from its random stream).
    pub fn build(&self, ctx: &FlowCtx) -> (MediaSender, MediaReceiver) {
        let trace = self.build_trace(&mut ctx.rng.clone());
        let rule = config::Rule::new(&self.scaling, self.max_interval(&trace));
        let player = self.player(&trace, ctx.start);
        (
            MediaSender::mpeg_app(ctx, self, trace),
            MediaReceiver::new(ctx.id, rule, player),
        )
    }
}

impl FlowProtocol for MmAppConfig {
    const NAME: &'static str = "mmapp";
    const RNG_STREAM: &'static str = "mmapp";
    const METRICS: &'static [&'static MetricKind] = metrics::METRICS;

    fn endpoints(&self, ctx: &FlowCtx) -> (AnyEndpoint, AnyEndpoint) {
        let (s, r) = self.build(ctx);
        (
            AnyEndpoint::MmAppSender(Box::new(s)),
            AnyEndpoint::MmAppReceiver(Box::new(r)),
        )
    }

    fn data_packet(&self) -> DataPacket {
        DataPacket::new(self.packet(), config::DATA_HEADERS)
    }

    fn demand(&self) -> FlowDemand {
        // Its scale follows the feedback, but its rate never exceeds the top scale's.
        FlowDemand {
            fixed_rate: self.rates.iter().copied().max(),
            state_bytes: size_of::<MediaSender>()
                + size_of::<MediaReceiver>()
                + self.player(Instant::ZERO).heap_bytes(),
            ..FlowDemand::adaptive(self.packet_size)
        }
    }
}

impl FlowProtocol for MpegAppConfig {
    const NAME: &'static str = "mpegapp";
    const RNG_STREAM: &'static str = "mpegapp";
    const METRICS: &'static [&'static MetricKind] = metrics::METRICS;

    fn endpoints(&self, ctx: &FlowCtx) -> (AnyEndpoint, AnyEndpoint) {
        let (s, r) = self.build(ctx);
        (
            AnyEndpoint::MpegAppSender(Box::new(s)),
            AnyEndpoint::MpegAppReceiver(Box::new(r)),
        )
    }

    fn data_packet(&self) -> DataPacket {
        let payload = self.max_payload();
        DataPacket::new(
            fairstream_core::DataSize::bytes(config::DATA_HEADERS + payload),
            config::DATA_HEADERS,
        )
    }

    fn demand(&self) -> FlowDemand {
        // Bounded by the top scale's wire rate (of the trace without size noise's draws, which
        // only perturb it), and the trace is held in memory.
        let trace = self.build_trace(&mut RngStream::from_seed(0));
        FlowDemand {
            fixed_rate: self.wire_rates(&trace).into_iter().max(),
            state_bytes: size_of::<MediaSender>()
                + size_of::<MediaReceiver>()
                + trace.len() * size_of::<fairstream_media::Frame>()
                + self.player(&trace, Instant::ZERO).heap_bytes(),
            ..FlowDemand::adaptive(self.max_packet)
        }
    }
}
