//! MULTFRC (Chen and Zakhor; PROTOCOLS.md §4): n TFRC connections over one path, n adjusted
//! from end-to-end RTT measurements (grow while the RTT shows an empty bottleneck queue, shrink
//! when it rises), the application's data striped across them. The number of connections over
//! time is recorded as a metric.

mod receiver;
mod sender;

use fairstream_core::{Duration, FlowId, Instant, RngStream};

pub use receiver::MultfrcReceiver;
pub use sender::MultfrcSender;

use crate::tfrc::TfrcFlowConfig;
use crate::{AnyEndpoint, FlowDemand, FlowProtocol};

/// MULTFRC's parameters: the connections' TFRC parameters and the rule for their number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MultfrcConfig {
    /// Every connection's TFRC parameters, but for `tfrc.sender.max_rate`, which caps the
    /// aggregate: each open connection may send at most its equal share of it.
    pub tfrc: TfrcFlowConfig,
    /// RTT threshold α: n grows while the period's mean RTT is below `(1 + α)·rtt_min`
    /// (0.2, [proposed]).
    pub alpha: f64,
    /// Step β: n grows by `β/n` per period, shrinks by `β` (1, [proposed]/[paper?]).
    pub beta: f64,
    /// Initial n (1, [proposed]).
    pub initial: f64,
    /// Most connections ever open (20, [proposed] safety cap; at most 128).
    pub max_connections: u32,
    /// How often n is updated (`None`: every mean RTT of the last period, [proposed]).
    pub update_period: Option<Duration>,
    /// Forget the minimum RTT this often, to follow route changes (`None`: never; [proposed]).
    pub rtt_min_reset: Option<Duration>,
}

impl Default for MultfrcConfig {
    fn default() -> Self {
        Self {
            tfrc: TfrcFlowConfig::default(),
            alpha: 0.2,
            beta: 1.0,
            initial: 1.0,
            max_connections: 20,
            update_period: None,
            rtt_min_reset: None,
        }
    }
}

impl FlowProtocol for MultfrcConfig {
    const NAME: &'static str = "multfrc";
    const RNG_STREAM: &'static str = "multfrc";

    fn endpoints(
        &self,
        flow: FlowId,
        start: Instant,
        stop: Option<Instant>,
        _rng: RngStream,
    ) -> (AnyEndpoint, AnyEndpoint) {
        (
            AnyEndpoint::MultfrcSender(Box::new(MultfrcSender::new(flow, *self, start, stop))),
            AnyEndpoint::MultfrcReceiver(Box::new(MultfrcReceiver::new(flow, *self))),
        )
    }

    fn demand(&self) -> FlowDemand {
        FlowDemand {
            state_bytes: size_of::<MultfrcSender>()
                + size_of::<MultfrcReceiver>()
                + MultfrcSender::heap_bytes(self)
                + MultfrcReceiver::heap_bytes(self),
            idle_interval: self.tfrc.demand().idle_interval
                / u64::from(self.max_connections.clamp(1, 128)),
            // n connections each at the equation's rate: no single-flow loss bound.
            loss_limited: false,
            ..self.tfrc.demand()
        }
    }
}

#[cfg(test)]
mod tests;
