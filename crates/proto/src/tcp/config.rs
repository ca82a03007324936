//! TCP parameters with their ns-2 defaults (`tcl/lib/ns-default.tcl`, PROTOCOLS.md §1.2).

use fairstream_core::{DataSize, Duration, Instant};

use super::control::Control;

/// Which loss-recovery algorithm the sender runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpVariant {
    /// Reno: fast retransmit and fast recovery, leaves recovery on the first new ACK.
    Reno,
    /// NewReno (RFC 6582): stays in recovery until the full window is acknowledged.
    NewReno,
}

/// Sender parameters. Windows count packets of `packet_size` bytes on the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    /// Reno or NewReno loss recovery.
    pub variant: TcpVariant,
    /// Window control: TCP's AIMD (ns-2 `windowOption_ 1`) or binomial (`windowOption_ 6`).
    pub control: Control,
    /// Size of a full data packet on the wire (40 bytes of it are IP+TCP header). ns-2 1000 B + 40.
    pub packet_size: DataSize,
    /// Receiver's advertised window, packets (ns-2 `window_` = 20).
    pub window: u32,
    /// Hard cap on cwnd, packets (ns-2 `maxcwnd_`; `None` = no cap).
    pub max_cwnd: Option<u32>,
    /// Initial window after the SYN is acknowledged, packets (ns-2 `windowInit_` = 2).
    pub initial_window: u32,
    /// Initial slow-start threshold, packets (`None`: the advertised window, as ns-2 does).
    pub initial_ssthresh: Option<u32>,
    /// Emulate the SYN exchange: packet 0 is a 40-byte SYN (ns-2 `syn_` = true).
    pub syn: bool,
    /// Limited transmit on the first two dup-ACKs (ns-2 `singledup_` = 1).
    pub limited_transmit: bool,
    /// Maximum packets sent in one burst (ns-2 `maxburst_`; 0 = unlimited).
    pub max_burst: u32,
    /// Clock granularity of the RTT estimator (ns-2 `tcpTick_` = 10 ms).
    pub tick: Duration,
    /// Lower bound of the RTO (ns-2 `minrto_` = 200 ms; RFC 6298: 1 s).
    pub min_rto: Duration,
    /// Upper bound of the RTO (ns-2 `maxrto_` = 60 s).
    pub max_rto: Duration,
    /// RTO before the first RTT sample (ns-2 `rtxcur_init_` = 3 s; RFC 6298: 1 s).
    pub initial_rto: Duration,
    /// When the application starts sending.
    pub start: Instant,
    /// When the application stops handing new data to TCP (`None`: never).
    pub stop: Option<Instant>,
    /// Application data to send in packets (`None`: an FTP source that always has data).
    pub packets: Option<u64>,
    /// A send buffer of this size that the application writes into
    /// ([`TcpSender::write`](super::TcpSender::write)); the sender then sends only what was
    /// written, and `packets` is not used. `None`: the source of `packets`.
    pub send_buffer: Option<DataSize>,
}

impl Default for TcpConfig {
    fn default() -> Self {
        Self {
            variant: TcpVariant::NewReno,
            control: Control::default(),
            packet_size: DataSize::bytes(1040),
            window: 20,
            max_cwnd: None,
            initial_window: 2,
            initial_ssthresh: None,
            syn: true,
            limited_transmit: true,
            max_burst: 0,
            tick: Duration::from_millis(10),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(60),
            initial_rto: Duration::from_secs(3),
            start: Instant::ZERO,
            stop: None,
            packets: None,
            send_buffer: None,
        }
    }
}

impl TcpConfig {
    /// Settings that make the sender behave like a modern Linux-era stack where ns-2's differ:
    /// initial window 10, minimum RTO 1 s, initial RTO 1 s, 1 ms timer tick (RFC 6298, RFC 6928).
    pub fn modern(self) -> Self {
        Self {
            initial_window: 10,
            min_rto: Duration::from_secs(1),
            initial_rto: Duration::from_secs(1),
            tick: Duration::from_millis(1),
            ..self
        }
    }
}

/// Receiver parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TcpSinkConfig {
    /// Delayed ACKs with this maximum delay (ns-2 `Agent/TCPSink/DelAck`, 100 ms); `None`: ACK every packet.
    pub delayed_ack: Option<Duration>,
}
