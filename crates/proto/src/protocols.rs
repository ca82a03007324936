//! The one list of protocols ([`protocol_list!`]). Each entry names a protocol's flow
//! configuration, its two endpoints, the header types it owns and their wire packet types; from
//! it follow [`ProtocolConfig`] (what a scenario says about a flow), [`AnyEndpoint`] (what a
//! driver runs), [`Header`] (what a packet carries) and their dispatch here, the wire's packet
//! types (`crate::wire`) and the real-time driver's protocols (`crate::real_time`). Adding a
//! protocol = its folder with a config implementing [`FlowProtocol`], its endpoints and headers,
//! and one entry here.

use fairstream_core::{Bitrate, DataSize, FlowId, Instant, RngStream};

use crate::cbr::{CbrConfig, CbrSource, UdpSink};
pub use fairstream_records::DataPacket;

use crate::header::HeaderKind;
use crate::tcp::{TcpConfig, TcpSender, TcpSink, TcpSinkConfig};
use crate::{Endpoint, EndpointStats, MetricKind, MetricSink, Packet};

/// What a driver tells a protocol about the flow whose two endpoints it builds: which flow it
/// is, when its application runs, and the random stream its endpoints draw from (derived by the
/// driver from the run's seed, the protocol's [`FlowProtocol::RNG_STREAM`] and the flow id). A
/// protocol's configuration holds only the protocol's own parameters; this is the rest.
#[derive(Clone, Debug)]
pub struct FlowCtx {
    /// The flow.
    pub id: FlowId,
    /// When its application starts.
    pub start: Instant,
    /// When its application stops (`None`: it runs to the end).
    pub stop: Option<Instant>,
    /// Its random stream.
    pub rng: RngStream,
}

impl FlowCtx {
    /// Flow `id`, its application running from `start` to `stop`, drawing from `rng`.
    pub fn new(id: FlowId, start: Instant, stop: Option<Instant>, rng: RngStream) -> Self {
        Self {
            id,
            start,
            stop,
            rng,
        }
    }

    /// Flow `id` starting at time zero and never stopping, drawing from the stream of `seed`
    /// (tests and examples).
    pub fn at_zero(id: FlowId, seed: u64) -> Self {
        Self::new(id, Instant::ZERO, None, RngStream::from_seed(seed))
    }

    /// Whether the application is stopped at `t` (it never runs at or after its stop).
    pub fn stopped_at(&self, t: Instant) -> bool {
        self.stop.is_some_and(|s| t >= s)
    }
}

/// What a protocol's flow configuration tells a driver: how to build the flow's two ends.
pub trait FlowProtocol {
    /// The protocol's name in scenarios and results (`"tcp"`, `"cbr"`, …).
    const NAME: &'static str;
    /// The kind of the random stream its endpoints draw from, with the flow id as identity
    /// (the driver derives it from the run's seed, so every stream comes from one place).
    const RNG_STREAM: &'static str;
    /// The metrics its endpoints record, declared in its folder (or, when several protocols
    /// record them, in `crate::metric`).
    const METRICS: &'static [&'static MetricKind];

    /// The protocol's name for this flow (its [`FlowProtocol::NAME`], unless it carries another
    /// protocol, as a flow on ABR virtual circuits does).
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// The kind of the random stream for this flow (its [`FlowProtocol::RNG_STREAM`], unless it
    /// carries another protocol).
    fn rng_stream(&self) -> &'static str {
        Self::RNG_STREAM
    }

    /// The sender and receiver of the flow `ctx` describes.
    fn endpoints(&self, ctx: &FlowCtx) -> (AnyEndpoint, AnyEndpoint);

    /// Whether the receiver sends packets back (ACKs, feedback), so that the flow needs a route
    /// in both directions; every protocol but unresponsive UDP does.
    fn sends_feedback(&self) -> bool {
        true
    }

    /// Application payload of a full data packet, bytes, where a capture numbers sequence space
    /// by it (TCP); zero otherwise.
    fn segment_payload(&self) -> u64 {
        0
    }

    /// A full data packet of the flow: its size on the wire and how much of it is headers.
    fn data_packet(&self) -> DataPacket;

    /// What the flow asks of a run, for the estimate of its memory and events made before the
    /// run starts.
    fn demand(&self) -> FlowDemand;
}

/// What a flow asks of a run: how fast it may send and what its endpoints hold. A driver
/// estimates a run's memory and events from it before the run starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowDemand {
    /// Size of a full data packet on the wire.
    pub packet_size: DataSize,
    /// The rate it sends at whatever the network does (an unresponsive source); `None`: it
    /// adapts to what the path carries.
    pub fixed_rate: Option<Bitrate>,
    /// A rate it may send at before any feedback arrives (for at most
    /// [`FlowDemand::INITIAL_PERIOD`]), beside the rate it adapts.
    pub initial_rate: Option<Bitrate>,
    /// Most data packets it keeps unacknowledged (its window), if it has one.
    pub window: Option<u64>,
    /// Bytes its two endpoints allocate when built.
    pub state_bytes: usize,
    /// Bytes its endpoints hold per packet of the window in flight (send queue, reorder ring).
    pub bytes_per_packet_in_flight: usize,
    /// Metric records its endpoints make per packet sent or received, at most.
    pub metrics_per_packet: f64,
    /// The shortest interval at which an adaptive source sends (or times out and resends) when
    /// no feedback comes back, as on a path whose rate is zero.
    pub idle_interval: fairstream_core::Duration,
    /// Whether its rate follows the TCP throughput equation of the path's loss (TCP's AIMD,
    /// TFRC), so that random loss bounds it below the bottleneck's rate.
    pub loss_limited: bool,
}

impl FlowDemand {
    /// How long a source may send at its [`FlowDemand::initial_rate`] without feedback (TFRC's
    /// first no-feedback timer is 2 s; twice that, for a margin).
    pub const INITIAL_PERIOD: fairstream_core::Duration = fairstream_core::Duration::from_secs(4);

    /// A source that adapts to the path, sending `packet_size` packets, allocating nothing.
    pub const fn adaptive(packet_size: DataSize) -> Self {
        Self {
            packet_size,
            fixed_rate: None,
            initial_rate: None,
            window: None,
            state_bytes: 0,
            bytes_per_packet_in_flight: 0,
            metrics_per_packet: 1.0,
            idle_interval: fairstream_core::Duration::from_millis(1),
            loss_limited: false,
        }
    }
}

/// A TCP flow: the sender's and the receiver's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct TcpFlowConfig {
    /// The sender.
    pub sender: TcpConfig,
    /// The receiver.
    pub sink: TcpSinkConfig,
}

impl FlowProtocol for TcpFlowConfig {
    const NAME: &'static str = "tcp";
    const RNG_STREAM: &'static str = "tcp-sender";
    const METRICS: &'static [&'static MetricKind] = crate::tcp::metrics::METRICS;

    fn endpoints(&self, ctx: &FlowCtx) -> (AnyEndpoint, AnyEndpoint) {
        (
            AnyEndpoint::TcpSender(Box::new(TcpSender::new(ctx, self.sender))),
            AnyEndpoint::TcpSink(TcpSink::new(ctx.id, self.sink)),
        )
    }

    fn segment_payload(&self) -> u64 {
        self.data_packet().payload().as_bytes()
    }

    fn data_packet(&self) -> DataPacket {
        DataPacket::new(self.sender.packet_size, self.sender.header_bytes())
    }

    fn demand(&self) -> FlowDemand {
        let window = self
            .sender
            .max_cwnd
            .map_or(self.sender.window, |c| c.min(self.sender.window));
        FlowDemand {
            window: Some(u64::from(window.max(self.sender.initial_window))),
            state_bytes: size_of::<TcpSender>()
                + TcpSender::QUEUE_CAPACITY * size_of::<Packet>()
                + TcpSink::QUEUE_CAPACITY * size_of::<Packet>()
                + if self.sender.send_buffer.is_some() {
                    size_of::<crate::tcp::SendBuffer>() // boxed beside the sender
                } else {
                    0
                },
            // The sender's queue of packets to send (a whole window at worst) and the
            // sink's reorder ring (a power of two, up to twice the window, of u64); with SACK
            // the sender's scoreboard ring likewise (with BBR's rate records).
            bytes_per_packet_in_flight: size_of::<Packet>()
                + 2 * size_of::<u64>()
                + if self.sender.sack_recovery() {
                    use crate::tcp::scoreboard::Scoreboard;
                    let rate = if self.sender.control.is_bbr() {
                        Scoreboard::RATE_BYTES
                    } else {
                        0
                    };
                    2 * (Scoreboard::ENTRY_BYTES + rate)
                } else {
                    0
                },
            // Timeouts back off to max_rto, and are never shorter than min_rto.
            idle_interval: self
                .sender
                .min_rto
                .min(self.sender.max_rto)
                .min(self.sender.initial_rto)
                .max(fairstream_core::Duration::from_nanos(1)),
            // AIMD follows the TCP equation; a binomial control need not.
            loss_limited: matches!(self.sender.control, crate::tcp::Control::Aimd(_)),
            // ns-2's TCP records the window per ACK and the RTT once per round trip; with SACK or
            // timestamps every ACK brings an RTT sample (RTT, SRTT, RTO), and pacing and BBR add
            // their rate and bandwidth.
            metrics_per_packet: if self.sender.sack_recovery()
                || self.sender.timestamps
                || self.sender.pacing
            {
                6.0
            } else {
                1.0
            },
            ..FlowDemand::adaptive(self.sender.packet_size)
        }
    }
}

impl FlowProtocol for CbrConfig {
    const NAME: &'static str = "cbr";
    const RNG_STREAM: &'static str = "cbr";
    /// A CBR source and its sink record none.
    const METRICS: &'static [&'static MetricKind] = &[];

    fn endpoints(&self, ctx: &FlowCtx) -> (AnyEndpoint, AnyEndpoint) {
        (
            AnyEndpoint::Cbr(CbrSource::new(ctx, self.clone())),
            AnyEndpoint::UdpSink(UdpSink::new()),
        )
    }

    fn sends_feedback(&self) -> bool {
        false
    }

    fn data_packet(&self) -> DataPacket {
        DataPacket::new(self.packet_size, crate::IP_UDP_HEADER)
    }

    fn demand(&self) -> FlowDemand {
        FlowDemand {
            fixed_rate: Some(self.rate.max()), // the highest step bounds the estimate
            metrics_per_packet: 0.0,
            ..FlowDemand::adaptive(self.packet_size)
        }
    }
}

/// The one list of protocols, handed to the macro `$m`: per protocol its variant and flow
/// configuration (and, for one the real-time driver runs, `real_time N`, its number in a
/// handshake), its endpoints, the header types it owns (`headers`) and among them those with a
/// fairstream wire encoding and their packet type numbers (`wire`). Every closed list follows from
/// it: [`ProtocolConfig`], [`AnyEndpoint`] and [`crate::Header`] here, the wire's packet types and
/// codec dispatch (`crate::wire`), the real-time driver's protocols (`crate::real_time`).
///
/// Adding a protocol adds its entry here (a protocol built on another, as MULTFRC on TFRC, owns
/// no header of its own).
macro_rules! protocol_list {
    ($m:ident) => {
        $m! {
            /// TCP Reno/NewReno with AIMD or binomial window control.
            Tcp(crate::protocols::TcpFlowConfig) {
                endpoints {
                    /// TCP sender.
                    TcpSender(Box<crate::tcp::TcpSender>),
                    /// TCP receiver (optionally with delayed ACKs).
                    TcpSink(crate::tcp::TcpSink),
                }
                headers {
                    /// A TCP segment (ns-2 one-way TCP: packet-numbered).
                    Tcp(crate::tcp::TcpSegment),
                }
                wire {}
            }
            /// Unresponsive UDP at a constant bit rate.
            Cbr(crate::cbr::CbrConfig) {
                endpoints {
                    /// UDP constant-bit-rate source.
                    Cbr(crate::cbr::CbrSource),
                    /// UDP receiver.
                    UdpSink(crate::cbr::UdpSink),
                }
                headers {
                    /// A UDP datagram with an application sequence number.
                    Udp(crate::cbr::UdpDatagram),
                }
                wire {}
            }
            /// TFRC (RFC 5348, or ns-2's agent).
            Tfrc(crate::tfrc::TfrcFlowConfig) real_time 1 {
                endpoints {
                    /// TFRC sender.
                    TfrcSender(Box<crate::tfrc::TfrcSender>),
                    /// TFRC receiver.
                    TfrcReceiver(Box<crate::tfrc::TfrcReceiver>),
                }
                headers {}
                wire {
                    /// A TFRC (or MULTFRC sub-connection) data packet over UDP.
                    TfrcData(crate::tfrc::TfrcData) = 1,
                    /// A TFRC receiver's feedback report over UDP.
                    TfrcFeedback(crate::tfrc::TfrcFeedback) = 2,
                }
            }
            /// TFRC Wireless: TFRC with a loss discrimination algorithm at the receiver.
            TfrcWireless(crate::tfrc::TfrcWirelessConfig) real_time 2 {
                endpoints {
                    /// TFRC Wireless sender (a TFRC sender).
                    TfrcWirelessSender(Box<crate::tfrc::TfrcSender>),
                    /// TFRC Wireless receiver.
                    TfrcWirelessReceiver(Box<crate::tfrc::TfrcReceiver>),
                }
                headers {}
                wire {}
            }
            /// MULTFRC: n TFRC connections, n adjusted from RTT measurements.
            Multfrc(crate::multfrc::MultfrcConfig) real_time 3 {
                endpoints {
                    /// MULTFRC sender.
                    MultfrcSender(Box<crate::multfrc::MultfrcSender>),
                    /// MULTFRC receiver.
                    MultfrcReceiver(Box<crate::multfrc::MultfrcReceiver>),
                }
                headers {}
                wire {}
            }
            /// VTP: Achieved Rate feedback, Spike loss discrimination, rate control.
            Vtp(crate::vtp::VtpConfig) real_time 4 {
                endpoints {
                    /// VTP sender.
                    VtpSender(Box<crate::vtp::VtpSender>),
                    /// VTP receiver.
                    VtpReceiver(Box<crate::vtp::VtpReceiver>),
                }
                headers {}
                wire {
                    /// A VTP data packet over UDP.
                    VtpData(crate::vtp::VtpData) = 3,
                    /// A VTP receiver's Achieved Rate report over UDP.
                    VtpFeedback(crate::vtp::VtpFeedback) = 4,
                }
            }
            /// MM_APP: media scaling over UDP, fixed-size frames at per-scale rates (paper 001).
            MmApp(crate::media_scaling::MmAppConfig) {
                endpoints {
                    /// MM_APP sender.
                    MmAppSender(Box<crate::media_scaling::MediaSender>),
                    /// MM_APP receiver.
                    MmAppReceiver(Box<crate::media_scaling::MediaReceiver>),
                }
                headers {}
                wire {
                    /// A media-scaling (MM_APP, MPEG_APP) data packet over UDP.
                    MediaData(crate::media_scaling::MediaData) = 5,
                    /// A media-scaling receiver's scale report over UDP.
                    MediaFeedback(crate::media_scaling::MediaFeedback) = 6,
                }
            }
            /// MPEG_APP: media scaling over UDP, per-scale frame selection from a trace (paper
            /// 001).
            MpegApp(crate::media_scaling::MpegAppConfig) {
                endpoints {
                    /// MPEG_APP sender.
                    MpegAppSender(Box<crate::media_scaling::MediaSender>),
                    /// MPEG_APP receiver.
                    MpegAppReceiver(Box<crate::media_scaling::MediaReceiver>),
                }
                headers {}
                wire {}
            }
            /// A SureStream-like streamer over UDP or TCP: multi-rate clip, playout buffer (paper
            /// 000).
            Surestream(crate::surestream::SurestreamConfig) real_time 5 {
                endpoints {
                    /// Streaming server.
                    SurestreamServer(Box<crate::surestream::Server>),
                    /// Streaming player.
                    SurestreamPlayer(Box<crate::surestream::Player>),
                }
                headers {}
                wire {
                    /// A SureStream-like player's report over UDP (paper 000).
                    StreamReport(crate::surestream::StreamReport) = 7,
                }
            }
            /// RAP: rate-based AIMD with per-packet ACKs (Rejaie et al. 1999).
            Rap(crate::rap::RapConfig) real_time 6 {
                endpoints {
                    /// RAP sender.
                    RapSender(Box<crate::rap::RapSender>),
                    /// RAP receiver.
                    RapReceiver(crate::rap::RapReceiver),
                }
                headers {}
                wire {
                    /// A RAP data packet over UDP.
                    RapData(crate::rap::RapData) = 8,
                    /// A RAP ACK with the receiver's last hole, over UDP.
                    RapAck(crate::rap::RapAck) = 9,
                }
            }
            /// Any of the above carried on ATM ABR virtual circuits (paper 003's cure).
            Abr(crate::abr::AbrFlowConfig) {
                endpoints {
                    /// The sender's end: its ABR source and the reassembly of what comes back.
                    AbrSource(Box<crate::abr::AbrVc>),
                    /// The receiver's end: reassembly, RM turn-around and the ABR source of its
                    /// replies.
                    AbrDestination(Box<crate::abr::AbrVc>),
                }
                headers {
                    /// An ATM cell of an ABR virtual circuit, data or resource management (paper
                    /// 003; see [`crate::abr`]). Cells exist only in the simulator: the wire
                    /// format refuses them.
                    Cell(crate::abr::CellHeader),
                }
                wire {}
            }
        }
    };
}
pub(crate) use protocol_list;

/// Generates [`ProtocolConfig`], [`AnyEndpoint`] and [`Header`] and their dispatch from the
/// protocol list.
macro_rules! protocols {
    ($( $(#[$pdoc:meta])* $proto:ident($config:ty) $(real_time $rt:literal)? {
        endpoints { $( $(#[$edoc:meta])* $ep:ident($ety:ty) ),+ $(,)? }
        headers { $( $(#[$hdoc:meta])* $hv:ident($hty:ty) ),* $(,)? }
        wire { $( $(#[$wdoc:meta])* $wv:ident($wty:ty) = $num:literal ),* $(,)? }
    } )+) => {
        /// A flow's protocol and its parameters, as a scenario gives them.
        #[derive(Clone, Debug, PartialEq)]
        pub enum ProtocolConfig {
            $( $(#[$pdoc])* $proto($config), )+
        }

        impl ProtocolConfig {
            /// Every metric the protocols declare, each once, in the list's order.
            pub fn declared_metrics() -> Vec<&'static MetricKind> {
                let mut out: Vec<&'static MetricKind> = Vec::new();
                for list in [$( <$config as FlowProtocol>::METRICS, )+] {
                    for &m in list {
                        if !out.iter().any(|o| std::ptr::eq(*o, m)) {
                            out.push(m);
                        }
                    }
                }
                out
            }

            /// Every flow-summary column the declared metrics summarise into, each once.
            pub fn summary_columns() -> Vec<&'static fairstream_records::Column> {
                let summarised = Self::declared_metrics()
                    .into_iter()
                    .filter_map(|m| m.summary.map(|s| std::slice::from_ref(&s.column)))
                    .collect::<Vec<_>>();
                let refs: Vec<&'static fairstream_records::Column> =
                    summarised.into_iter().flatten().collect();
                fairstream_records::column::union([refs.as_slice()])
            }

            /// The protocol's name.
            pub fn name(&self) -> &'static str {
                match self { $( Self::$proto(c) => c.name(), )+ }
            }

            /// The kind of the random stream its endpoints draw from.
            pub fn rng_stream(&self) -> &'static str {
                match self { $( Self::$proto(c) => c.rng_stream(), )+ }
            }

            /// The flow's sender and receiver (see [`FlowProtocol::endpoints`]).
            pub fn endpoints(&self, ctx: &FlowCtx) -> (AnyEndpoint, AnyEndpoint) {
                match self { $( Self::$proto(c) => c.endpoints(ctx), )+ }
            }

            /// Whether the receiver sends packets back.
            pub fn sends_feedback(&self) -> bool {
                match self { $( Self::$proto(c) => c.sends_feedback(), )+ }
            }

            /// Payload of a full data packet for capture sequence numbers (zero if not used).
            pub fn segment_payload(&self) -> u64 {
                match self { $( Self::$proto(c) => c.segment_payload(), )+ }
            }

            /// A full data packet of the flow (see [`FlowProtocol::data_packet`]).
            pub fn data_packet(&self) -> DataPacket {
                match self { $( Self::$proto(c) => c.data_packet(), )+ }
            }

            /// What the flow asks of a run (see [`FlowProtocol::demand`]).
            pub fn demand(&self) -> FlowDemand {
                match self { $( Self::$proto(c) => c.demand(), )+ }
            }
        }

        /// Any endpoint fairstream knows, dispatched by `match` rather than through a vtable.
        #[derive(Debug, Clone)]
        pub enum AnyEndpoint {
            $( $( $(#[$edoc])* $ep($ety), )+ )+
        }

        macro_rules! dispatch {
            ($self:ident, $e:ident => $body:expr) => {
                match $self { $( $( AnyEndpoint::$ep($e) => $body, )+ )+ }
            };
        }

        /// Protocol headers: each protocol's own (see [`HeaderKind`], which every header type
        /// implements in its protocol's folder).
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum Header {
            $( $( $(#[$hdoc])* $hv($hty), )* $( $(#[$wdoc])* $wv($wty), )* )+
        }

        $( $(
            impl From<$hty> for Header {
                fn from(h: $hty) -> Self {
                    Self::$hv(h)
                }
            }
        )* $(
            impl From<$wty> for Header {
                fn from(h: $wty) -> Self {
                    Self::$wv(h)
                }
            }
        )* )+

        macro_rules! header_dispatch {
            ($self:ident, $h:ident => $body:expr) => {
                match $self { $( $( Header::$hv($h) => $body, )* $( Header::$wv($h) => $body, )* )+ }
            };
        }

    };
}

protocol_list!(protocols);

/// `H`'s [`HeaderKind::WHAT`], for the dispatch over a header's value.
fn what_of<H: HeaderKind>(_: &H) -> &'static str {
    H::WHAT
}

/// `H`'s [`HeaderKind::IP_PROTOCOL`], for the dispatch over a header's value.
fn ip_protocol_of<H: HeaderKind>(_: &H) -> u8 {
    H::IP_PROTOCOL
}

impl Header {
    /// What it is, in a few words (see [`HeaderKind::WHAT`]).
    pub fn what(&self) -> &'static str {
        header_dispatch!(self, h => what_of(h))
    }

    /// The IPv4 protocol number of its transport (see [`HeaderKind::IP_PROTOCOL`]).
    pub fn ip_protocol(&self) -> u8 {
        header_dispatch!(self, h => ip_protocol_of(h))
    }

    /// The sequence number the packet trace shows (see [`HeaderKind::trace_seq`]).
    pub fn trace_seq(&self) -> i64 {
        header_dispatch!(self, h => h.trace_seq())
    }

    /// Writes the transport header for a capture (see [`HeaderKind::emit_transport`]).
    pub fn emit_transport(&self, ctx: &crate::wire::TransportContext, out: &mut [u8]) -> usize {
        header_dispatch!(self, h => h.emit_transport(ctx, out))
    }

    /// A data packet's sub-connection and sequence number (see [`HeaderKind::data_seq`]).
    pub fn data_seq(&self) -> Option<(u8, u64)> {
        header_dispatch!(self, h => h.data_seq())
    }

    /// A feedback report's sub-connection and whether it claims no loss (see
    /// [`HeaderKind::feedback_claim`]).
    pub fn feedback_claim(&self) -> Option<(u8, bool)> {
        header_dispatch!(self, h => h.feedback_claim())
    }

    /// The loss a feedback report states (see [`HeaderKind::reported_loss`]).
    pub fn reported_loss(&self) -> Option<f64> {
        header_dispatch!(self, h => h.reported_loss())
    }

    /// Sequence numbers a report's echo leaves out at its top (see [`HeaderKind::echo_lag`]).
    pub fn echo_lag(&self) -> u64 {
        header_dispatch!(self, h => h.echo_lag())
    }

    /// The highest sequence number a report covers (see [`HeaderKind::report_top`]).
    pub fn report_top(&self) -> Option<u64> {
        header_dispatch!(self, h => h.report_top())
    }

    /// States the heaviest loss in place of a lie (see [`HeaderKind::forge_loss`]).
    pub fn forge_loss(&mut self) {
        header_dispatch!(self, h => h.forge_loss())
    }

    /// Claims no loss whatever was seen (see [`HeaderKind::hide_loss`]).
    pub fn hide_loss(&mut self) {
        header_dispatch!(self, h => h.hide_loss())
    }
}

impl Endpoint for AnyEndpoint {
    #[inline]
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        dispatch!(self, e => e.handle_packet(now, packet, metrics))
    }
    #[inline]
    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        dispatch!(self, e => e.handle_timeout(now, metrics))
    }
    #[inline]
    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        dispatch!(self, e => e.poll_transmit(now))
    }
    #[inline]
    fn poll_timeout(&self) -> Option<Instant> {
        dispatch!(self, e => e.poll_timeout())
    }
    fn stats(&self) -> EndpointStats {
        dispatch!(self, e => e.stats())
    }
}
