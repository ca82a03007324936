//! Sans-IO network elements that a link is built from, shared by the simulator and the emulator:
//!
//! - [`queue`]: queue disciplines — drop-tail, RED (Floyd-Jacobson, ns-2 defaults, gentle),
//!   and a token bucket filter with Linux `tbf` semantics;
//! - [`error`]: packet error models — none, Bernoulli, Gilbert-Elliott;
//!
//! None of them reads a clock: every call takes `now`, and randomness comes from a
//! [`fairstream_core::RngStream`] the caller hands in.

pub mod error;
pub mod queue;

pub use error::{ErrorModel, GeState};
pub use queue::{
    Dequeue, EricaPort, EricaPortConfig, Fq, FqConfig, LimitCounting, PacketDiscard, Queue,
    QueueConfig, QueueLimit, QueueSummary, QueuedPacket, RedConfig, TbfConfig,
};
