//! TCP Reno and NewReno in ns-2 one-way mode (PROTOCOLS.md §1): packet-counted windows,
//! a bulk (FTP) or finite source, and a sink with optional delayed ACKs; TCP's AIMD window
//! control or a binomial one (PROTOCOLS.md §9.1).
//!
//! - [`config`]: every parameter with its ns-2 default, and a modern-stack preset;
//! - [`sender`]: the sender state machine (Reno or NewReno loss recovery);
//! - [`control`]: window control, the congestion-control interface (AIMD, binomial);
//! - [`rtt`]: the tick-based RTT estimator and RTO (ns-2 `rtt_update`/`rtt_timeout`);
//! - [`sink`]: the receiver;
//! - [`app`]: the application interface: a bounded send buffer the sending application writes
//!   into, cut into segments that end at its records, and in-order delivery at the sink.

pub mod app;
pub mod config;
pub mod control;
pub mod rtt;
pub mod sender;
pub mod sink;

pub use app::SendBuffer;
pub use config::{TcpConfig, TcpSinkConfig, TcpVariant};
pub use control::{Aimd, Binomial, Control, WindowControl};
pub use rtt::RttEstimator;
pub use sender::{CwndAction, TcpSender};
pub use sink::TcpSink;
