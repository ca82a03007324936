//! The real-time driver (`rt`): runs any sans-IO sender or receiver endpoint of
//! `fairstream-proto` over a UDP socket on the monotonic clock, unchanged.
//!
//! - [`clock`] maps the OS monotonic clock to the project's [`fairstream_core::Instant`] at
//!   the driver's edge; [`pacer`] sleeps to each send time, spins the last stretch and keeps a
//!   histogram of how late each paced send went out.
//! - [`session`] holds what a real endpoint needs beyond the protocol: the handshake proving
//!   the receiver's address, the filter that ignores (and counts) datagrams from any address or
//!   connection but the peer's, and the circuit breaker that stops a sender without feedback.
//! - [`record`] turns what the driver sees into the simulator's own result types
//!   ([`fairstream_records::RunOutput`]), so that the same Parquet tables and `summary.json` are
//!   written for a real run.
//! - [`sender`] and [`receiver`] are the two loops; [`protocol`] names what they can run.

pub mod clock;
mod error;
pub mod pacer;
pub mod proof;
pub mod protocol;
pub mod receiver;
pub mod record;
pub mod sender;
pub mod session;
mod socket;

pub use error::RtError;
pub use protocol::RtProtocol;
pub use receiver::{Impairment, RecvConfig, RecvReport, bind_receiver, run_receiver};
pub use sender::{SendConfig, SendReport, run_sender};
pub use session::StopReason;
