//! TCP in ns-2 one-way mode (PROTOCOLS.md §1): packet-counted windows, a bulk (FTP) or finite
//! source, and a sink with optional delayed ACKs; Reno, NewReno or SACK loss recovery (RFC 6675,
//! with PRR) and a window control: TCP's AIMD, a binomial one (PROTOCOLS.md §9.1), CUBIC
//! (RFC 9438) or BBR v1, optionally paced; timestamps (RFC 7323) and a `linux` preset.
//!
//! - [`config`]: every parameter with its ns-2 default, and the `modern` and `linux` presets;
//! - [`sender`]: the sender state machine (Reno, NewReno or SACK loss recovery);
//! - [`control`]: window control, the congestion-control interface (AIMD, binomial, CUBIC);
//! - [`cubic`], [`hystart`]: CUBIC and HyStart++;
//! - [`bbr`], [`filter`]: BBR v1 and its windowed maximum;
//! - [`scoreboard`]: the SACK sender's scoreboard (`pipe`, `IsLost`, `NextSeg`);
//! - [`rate`]: delivery-rate samples; [`pacing`]: the pacer;
//! - [`options`]: SACK blocks and timestamps, and their bytes on the wire;
//! - [`rtt`]: the tick-based RTT estimator and RTO (ns-2 `rtt_update`/`rtt_timeout`);
//! - [`sink`] and [`sack_list`]: the receiver and the SACK blocks it reports;
//! - [`app`]: the application interface: a bounded send buffer the sending application writes
//!   into, cut into segments that end at its records, and in-order delivery at the sink.

pub mod app;
pub mod bbr;
pub mod config;
pub mod control;
pub mod cubic;
pub mod filter;
pub mod hystart;
pub mod metrics;
pub mod options;
pub mod pacing;
pub mod rate;
#[cfg(test)]
mod robust;
pub mod rtt;
pub mod sack_list;
pub mod scoreboard;
pub mod segment;
pub mod sender;
pub mod sink;

pub use app::SendBuffer;
pub use bbr::BbrParams;
pub use config::{TcpConfig, TcpSinkConfig, TcpVariant};
pub use control::{AckInfo, Aimd, Binomial, Control, Controller, WindowControl};
pub use cubic::{Cubic, CubicParams};
pub use options::SackBlocks;
pub use rtt::RttEstimator;
pub use segment::{TcpFlags, TcpSegment};
pub use sender::{CwndAction, TcpSender};
pub use sink::TcpSink;
