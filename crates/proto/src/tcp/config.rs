//! TCP parameters with their ns-2 defaults (`tcl/lib/ns-default.tcl`, PROTOCOLS.md §1.2), the
//! `modern` preset, and the `linux` preset: the closest settings of a Linux 6.x flow
//! (docs/scenarios.md says which Linux setting each one stands for and what still differs).

use fairstream_core::{DataSize, Duration};

use super::control::Control;
use super::cubic::CubicParams;
use super::options::header_len;

/// Which loss-recovery algorithm the sender runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpVariant {
    /// Reno: fast retransmit and fast recovery, leaves recovery on the first new ACK.
    Reno,
    /// NewReno (RFC 6582): stays in recovery until the full window is acknowledged.
    NewReno,
    /// SACK (RFC 2018) with RFC 6675 loss recovery: a scoreboard, `pipe`, `NextSeg` and the
    /// rescue retransmission; the window during recovery as RFC 6675 sets it, or by PRR
    /// ([`TcpConfig::prr`]).
    Sack,
}

/// Sender parameters. Windows count packets of `packet_size` bytes on the wire.
///
/// Laid out in the order written (`repr(C)`): the fields a sender reads on every ACK and every
/// packet it sends come first and share a cache line (see [`TcpSender`](super::TcpSender)).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct TcpConfig {
    /// Reno, NewReno or SACK loss recovery.
    pub variant: TcpVariant,
    /// The timestamps option (RFC 7323): 12 more bytes of header on every segment, and an RTT
    /// sample from every ACK that acknowledges new data (instead of ns-2's one timed packet per
    /// round trip).
    pub timestamps: bool,
    /// Pace transmissions at Linux's rate (the window per smoothed RTT, ×2 in slow start, ×1.2
    /// after); BBR always paces at its own rate.
    pub pacing: bool,
    /// Emulate the SYN exchange: packet 0 is a 40-byte SYN (ns-2 `syn_` = true).
    pub syn: bool,
    /// Limited transmit on the first two dup-ACKs (ns-2 `singledup_` = 1).
    pub limited_transmit: bool,
    /// With SACK: set the window during recovery by Proportional Rate Reduction (RFC 6937, with
    /// slow-start reduction bound), as Linux and ns-3 do; otherwise RFC 6675's `cwnd = ssthresh`.
    pub prr: bool,
    /// Maximum packets sent in one burst (ns-2 `maxburst_`; 0 = unlimited).
    pub max_burst: u32,
    /// Receiver's advertised window, packets (ns-2 `window_` = 20).
    pub window: u32,
    /// Size of a full data packet on the wire (40 bytes of it are IP+TCP header, 52 with
    /// timestamps). ns-2 1000 B + 40.
    pub packet_size: DataSize,
    /// Hard cap on cwnd, packets (ns-2 `maxcwnd_`; `None` = no cap).
    pub max_cwnd: Option<u32>,
    /// Initial window after the SYN is acknowledged, packets (ns-2 `windowInit_` = 2).
    pub initial_window: u32,
    /// Initial slow-start threshold, packets (`None`: the advertised window, as ns-2 does).
    pub initial_ssthresh: Option<u32>,
    /// Clock granularity of the RTT estimator (ns-2 `tcpTick_` = 10 ms).
    pub tick: Duration,
    /// Lower bound of the RTO (ns-2 `minrto_` = 200 ms; RFC 6298: 1 s).
    pub min_rto: Duration,
    /// Upper bound of the RTO (ns-2 `maxrto_` = 60 s).
    pub max_rto: Duration,
    /// RTO before the first RTT sample (ns-2 `rtxcur_init_` = 3 s; RFC 6298: 1 s).
    pub initial_rto: Duration,
    /// Application data to send in packets (`None`: an FTP source that always has data).
    pub packets: Option<u64>,
    /// A send buffer of this size that the application writes into
    /// ([`TcpSender::write`](super::TcpSender::write)); the sender then sends only what was
    /// written, and `packets` is not used. `None`: the source of `packets`.
    pub send_buffer: Option<DataSize>,
    /// Window control: TCP's AIMD (ns-2 `windowOption_ 1`), binomial (`windowOption_ 6`), CUBIC
    /// or BBR.
    pub control: Control,
}

impl Default for TcpConfig {
    fn default() -> Self {
        Self {
            variant: TcpVariant::NewReno,
            control: Control::default(),
            packet_size: DataSize::bytes(1040),
            timestamps: false,
            pacing: false,
            prr: false,
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

    /// The closest settings of a Linux 6.x sender: SACK with PRR, CUBIC with HyStart++,
    /// timestamps, 1500-byte packets (1448 bytes of payload), initial window 10, RTO per RFC
    /// 6298 with a 200 ms minimum, a 1 s initial RTO and a 120 s maximum, a 1 ms clock, and
    /// Linux's default receive window (its receiver: [`TcpSinkConfig::linux`]).
    pub fn linux(self) -> Self {
        Self {
            variant: TcpVariant::Sack,
            control: Control::Cubic(CubicParams {
                hystart: true,
                ..CubicParams::default()
            }),
            packet_size: DataSize::bytes(1500),
            timestamps: true,
            pacing: false,
            prr: true,
            window: LINUX_WINDOW,
            initial_window: 10,
            initial_ssthresh: None,
            limited_transmit: true,
            max_burst: 0,
            tick: Duration::from_millis(1),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(120),
            initial_rto: Duration::from_secs(1),
            ..self
        }
    }

    /// Bytes of IP and TCP header (with options) on every data segment.
    pub fn header_bytes(&self) -> u64 {
        header_len(self.timestamps)
    }

    /// Whether the sender runs SACK recovery on a scoreboard: the SACK variant, and BBR always
    /// (its rate samples come from the scoreboard). Its receiver then reports SACK blocks.
    pub fn sack_recovery(&self) -> bool {
        self.variant == TcpVariant::Sack || self.control.is_bbr()
    }

    /// Payload bytes of a full data packet.
    pub fn segment_payload(&self) -> u64 {
        self.packet_size
            .as_bytes()
            .saturating_sub(self.header_bytes())
    }
}

/// Receiver parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TcpSinkConfig {
    /// Delayed ACKs with this maximum delay (ns-2 `Agent/TCPSink/DelAck`, 100 ms); `None`: ACK every packet.
    pub delayed_ack: Option<Duration>,
    /// Report SACK blocks (the sender runs SACK recovery).
    pub sack: bool,
    /// Echo timestamps (the sender sends them).
    pub timestamps: bool,
    /// The receive window, packets beyond the next expected one: data beyond it is not kept,
    /// only acknowledged (RFC 9293 §3.10.7.4), which bounds what a forged packet number can
    /// make the receiver hold. `None`: no bound (ns-2's sink).
    pub window: Option<u32>,
}

impl TcpSinkConfig {
    /// The receiver of a sender with `sender`'s options and delayed ACKs `delayed_ack`.
    pub fn for_sender(sender: &TcpConfig, delayed_ack: Option<Duration>) -> Self {
        Self {
            delayed_ack,
            sack: sender.sack_recovery(),
            timestamps: sender.timestamps,
            window: Some(sender.window),
        }
    }

    /// A Linux 6.x receiver: delayed ACKs (every second segment, 40 ms at most), SACK and
    /// timestamps.
    pub fn linux() -> Self {
        Self {
            delayed_ack: Some(LINUX_DELACK),
            sack: true,
            timestamps: true,
            window: Some(LINUX_WINDOW),
        }
    }
}

/// Linux's minimum delayed-ACK timeout (`TCP_DELACK_MIN`, HZ/25).
pub const LINUX_DELACK: Duration = Duration::from_millis(40);
/// The advertised window of the `linux` preset, packets: Linux's default `tcp_rmem` maximum
/// (6 MiB) with about half of it advertised, in 1448-byte segments.
pub const LINUX_WINDOW: u32 = 2172;
