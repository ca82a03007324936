//! TFRC as flow protocols: `tfrc` (RFC 5348, or ns-2's agent with the `ns2` preset) and
//! `tfrc-wireless` (the same with a loss discrimination algorithm at the receiver).

use super::{TfrcConfig, TfrcPreset, TfrcReceiver, TfrcReceiverConfig, TfrcSender};
use crate::lda::{Lda, LdaConfig};
use fairstream_core::Bitrate;

use crate::{AnyEndpoint, DataPacket, FlowCtx, FlowDemand, FlowProtocol, MetricKind, RealTime};

/// A TFRC flow: the sender's and the receiver's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct TfrcFlowConfig {
    /// The preset the parameters started from.
    pub preset: TfrcPreset,
    /// The sender.
    pub sender: TfrcConfig,
    /// The receiver.
    pub receiver: TfrcReceiverConfig,
}

impl TfrcFlowConfig {
    /// The defaults of `preset`.
    pub fn preset(preset: TfrcPreset) -> Self {
        Self {
            preset,
            sender: TfrcConfig::preset(preset),
            receiver: TfrcReceiverConfig::preset(preset),
        }
    }

    /// The sender and receiver of connection `conn` of flow `ctx`.
    pub fn pair(&self, ctx: &FlowCtx, conn: u8) -> (TfrcSender, TfrcReceiver) {
        (
            TfrcSender::new(ctx, conn, self.sender),
            TfrcReceiver::new(ctx.id, conn, self.receiver, self.sender.equation, None),
        )
    }
}

impl FlowProtocol for TfrcFlowConfig {
    const NAME: &'static str = "tfrc";
    const RNG_STREAM: &'static str = "tfrc";
    const METRICS: &'static [&'static MetricKind] = super::metrics::METRICS;

    fn endpoints(&self, ctx: &FlowCtx) -> (AnyEndpoint, AnyEndpoint) {
        let (sender, receiver) = self.pair(ctx, 0);
        (
            AnyEndpoint::TfrcSender(Box::new(sender)),
            AnyEndpoint::TfrcReceiver(Box::new(receiver)),
        )
    }

    fn data_packet(&self) -> DataPacket {
        self.sender.data_packet()
    }

    fn demand(&self) -> FlowDemand {
        FlowDemand {
            initial_rate: self.sender.first_rate,
            // Without feedback the rate halves towards one packet per t_mbi; a quarter of
            // t_mbi (at most 1 s) bounds the gaps on the way there.
            idle_interval: self
                .sender
                .t_mbi
                .min(fairstream_core::Duration::from_secs(1))
                / 4,
            state_bytes: size_of::<TfrcSender>()
                + size_of::<TfrcReceiver>()
                + TfrcReceiver::HEAP_BYTES,
            loss_limited: true,
            ..FlowDemand::adaptive(self.sender.packet_size)
        }
    }
}

/// A TFRC Wireless flow: TFRC whose receiver leaves the losses its loss discrimination
/// algorithm classes as wireless out of the loss history (PROTOCOLS.md §3.3).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct TfrcWirelessConfig {
    /// The TFRC parameters.
    pub tfrc: TfrcFlowConfig,
    /// The loss discrimination algorithm and its constants.
    pub lda: LdaConfig,
}

impl FlowProtocol for TfrcWirelessConfig {
    const NAME: &'static str = "tfrc-wireless";
    const RNG_STREAM: &'static str = "tfrc-wireless";
    const METRICS: &'static [&'static MetricKind] = super::metrics::METRICS;

    fn endpoints(&self, ctx: &FlowCtx) -> (AnyEndpoint, AnyEndpoint) {
        let (sender, _) = self.tfrc.pair(ctx, 0);
        let receiver = TfrcReceiver::new(
            ctx.id,
            0,
            self.tfrc.receiver,
            self.tfrc.sender.equation,
            Some(Lda::new(self.lda)),
        );
        (
            AnyEndpoint::TfrcWirelessSender(Box::new(sender)),
            AnyEndpoint::TfrcWirelessReceiver(Box::new(receiver)),
        )
    }

    fn data_packet(&self) -> DataPacket {
        self.tfrc.data_packet()
    }

    fn demand(&self) -> FlowDemand {
        // Losses its LDA calls wireless do not slow it: no loss bound.
        FlowDemand {
            loss_limited: false,
            ..self.tfrc.demand()
        }
    }
}

impl TfrcFlowConfig {
    /// The defaults, their sending rate capped at `cap` on the wire: TFRC's rates count segments
    /// (RFC 5348), the cap whole packets.
    pub fn capped(cap: Option<Bitrate>) -> Self {
        let mut tfrc = Self::default();
        if let Some(c) = cap {
            let wire_share = tfrc.sender.segment() / tfrc.sender.packet_size.as_bytes() as f64;
            tfrc.sender.max_rate = Bitrate::from_bps_f64(c.as_bps_f64() * wire_share);
        }
        tfrc
    }
}

impl RealTime for TfrcFlowConfig {
    fn real_time(cap: Option<Bitrate>) -> Self {
        Self::capped(cap)
    }
}

impl RealTime for TfrcWirelessConfig {
    fn real_time(cap: Option<Bitrate>) -> Self {
        Self {
            tfrc: TfrcFlowConfig::capped(cap),
            ..Self::default()
        }
    }
}
