//! TFRC, TCP-Friendly Rate Control (RFC 5348; PROTOCOLS.md §2): the throughput equation, the
//! sender and the receiver as sans-IO endpoints, their parameters with an `ns2` preset, and the
//! flow protocols built on them: plain TFRC and TFRC Wireless (a receiver with a loss
//! discrimination algorithm, PROTOCOLS.md §3).

mod config;
mod equation;
mod flow;
mod header;
mod loss_history;
pub mod metrics;
mod receiver;
mod sender;

pub use config::{
    IncreaseRule, NoFeedbackRule, ReceiveLimit, SlowStartRule, TfrcConfig, TfrcPreset,
    TfrcReceiverConfig, TimeoutRule,
};
pub use equation::EquationForm;
pub use flow::{TfrcFlowConfig, TfrcWirelessConfig};
pub use header::{LossRate, TfrcData, TfrcFeedback};
pub use loss_history::{INTERVALS, LossHistory, WEIGHTS};
pub use receiver::TfrcReceiver;
pub use sender::TfrcSender;

#[cfg(test)]
mod tests;
