//! A SureStream-like streamer (paper 000, Section II; RealServer and RealPlayer): a server
//! holding a clip encoded at several levels ([`fairstream_media::Encoding`]) and a player with a
//! playout buffer ([`fairstream_media::Playout`]), over UDP or over the simulator's TCP.
//!
//! - [`config`]: the parameters, the clip, and the server's send [`Schedule`];
//! - [`rules`]: the two level rules as step functions;
//! - [`udp`]: the server and player over UDP;
//! - [`tcp`]: the server and player as applications over TCP.
//!
//! **Schedule (both transports).** The server releases frame k at `start + k·T/speedup` until
//! `prebuffer` of media is released (the buffering phase, paper 000: up to 6× the playout rate),
//! then one frame interval T after the frame before. It never sends a frame before its release;
//! the clip ends after `clip_length` of media and the server stops.
//!
//! **Levels over UDP** ([`rules::UdpLevels`]): the player reports every `report_interval` the
//! packets received and lost (sequence gaps) since its last report. A report with a loss
//! fraction above `loss_down` steps the level down by one, at most once per `down_hold`; no
//! report for `feedback_timeout` steps it down by one (and again each such time); a loss-free
//! report at least `up_hold` after the last change steps it up by one. All four constants are
//! \[chosen\] (`loss_down` 0.02, `down_hold` 1 s, `up_hold` 10 s, `feedback_timeout` 2 s).
//!
//! **Levels over TCP** ([`rules::TcpLevels`]): the server sees only its send buffer. It writes
//! each released frame into the buffer (whole, or as much as fits, the rest when ACKs free
//! room); its lag is how long ago the oldest frame not yet wholly written was released. A lag
//! of `lag_down` or more steps the level down by one, at most once per `lag_down`; `up_hold`
//! after the last change, with no lag at all during it, steps it up by one (\[chosen\]: 2 s and
//! 10 s). The player sees the bytes TCP delivers in order and a frame's end by the push mark of
//! the TCP application interface ([`crate::tcp::SendBuffer`]).
//!
//! A level change takes effect at the next I frame over UDP and at the next frame over TCP (whose
//! frames all arrive). Servers record `level` and `encoded_rate` at the start and each change,
//! `frames_sent` per frame; players record their playout metrics (`frames_delivered`,
//! `frames_decodable`, `frames_late`, `stalls`, `stall_time`, `startup_delay`, `jitter`,
//! `buffered`) every `report_interval` and when the clip has played out.

pub mod config;
mod header;
pub mod metrics;
pub mod rules;
pub mod tcp;
pub mod udp;

use crate::surestream::metrics::{ENCODED_RATE, LEVEL};
use fairstream_core::Instant;
use fairstream_media::PlayoutConfig;

pub use config::{Clip, Schedule, SurestreamConfig, TcpRule, Transport, UdpRule};
pub use header::StreamReport;
pub use tcp::{StreamPlayer, StreamServer, TcpPlayer, TcpServer};
pub use udp::{UdpPlayer, UdpServer};

use crate::{
    AnyEndpoint, DataPacket, Endpoint, EndpointStats, FlowCtx, FlowDemand, FlowProtocol,
    MetricKind, MetricSink, Packet,
};

/// Records the level and its rate at `now`.
fn record_level(clip: &Clip, now: Instant, level: usize, metrics: &mut dyn MetricSink) {
    metrics.record(
        now,
        LEVEL.count(u64::from(u8::try_from(level).unwrap_or(u8::MAX))),
    );
    metrics.record(now, ENCODED_RATE.bps(clip.rate(level)));
}

/// The playout parameters of a player connecting at `start`.
fn playout_config(c: &SurestreamConfig, start: Instant) -> PlayoutConfig {
    let clip = c.clip();
    PlayoutConfig {
        start,
        frame_interval: clip.interval(),
        frames: clip.frames(),
        prebuffer: c.prebuffer,
        rebuffer: c.rebuffer,
        max_stall: c.max_stall,
        kinds: clip.kinds(),
        window: None,
    }
}

/// A streamer's server, over UDP or TCP.
#[derive(Clone, Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "held boxed in AnyEndpoint; boxing a variant again would add a pointer chase per packet"
)]
pub enum Server {
    /// Over UDP.
    Udp(UdpServer),
    /// Over TCP.
    Tcp(TcpServer),
}

/// A streamer's player, over UDP or TCP.
#[derive(Clone, Debug)]
pub enum Player {
    /// Over UDP.
    Udp(UdpPlayer),
    /// Over TCP.
    Tcp(TcpPlayer),
}

/// `Endpoint` for an enum of a UDP and a TCP variant, dispatching to the variant.
macro_rules! endpoint_by_transport {
    ($t:ty) => {
        impl Endpoint for $t {
            fn handle_packet(&mut self, now: Instant, p: &Packet, m: &mut dyn MetricSink) {
                match self {
                    Self::Udp(e) => e.handle_packet(now, p, m),
                    Self::Tcp(e) => e.handle_packet(now, p, m),
                }
            }
            fn handle_timeout(&mut self, now: Instant, m: &mut dyn MetricSink) {
                match self {
                    Self::Udp(e) => e.handle_timeout(now, m),
                    Self::Tcp(e) => e.handle_timeout(now, m),
                }
            }
            fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
                match self {
                    Self::Udp(e) => e.poll_transmit(now),
                    Self::Tcp(e) => e.poll_transmit(now),
                }
            }
            fn poll_timeout(&self) -> Option<Instant> {
                match self {
                    Self::Udp(e) => e.poll_timeout(),
                    Self::Tcp(e) => e.poll_timeout(),
                }
            }
            fn stats(&self) -> EndpointStats {
                match self {
                    Self::Udp(e) => e.stats(),
                    Self::Tcp(e) => e.stats(),
                }
            }
        }
    };
}

endpoint_by_transport!(Server);
endpoint_by_transport!(Player);

impl SurestreamConfig {
    /// The server and player of flow `ctx` (over TCP, its random stream draws the TCP clock
    /// phase).
    pub fn build(&self, ctx: &FlowCtx) -> (Server, Player) {
        match self.transport {
            Transport::Udp => (
                Server::Udp(UdpServer::new(ctx, self)),
                Player::Udp(UdpPlayer::new(ctx, self)),
            ),
            Transport::Tcp => (
                Server::Tcp(TcpServer::new(ctx, self)),
                Player::Tcp(TcpPlayer::new(ctx, self)),
            ),
        }
    }
}

impl FlowProtocol for SurestreamConfig {
    const NAME: &'static str = "surestream";
    const RNG_STREAM: &'static str = "surestream";
    const METRICS: &'static [&'static MetricKind] = metrics::METRICS;

    fn endpoints(&self, ctx: &FlowCtx) -> (AnyEndpoint, AnyEndpoint) {
        let (s, p) = self.build(ctx);
        (
            AnyEndpoint::SurestreamServer(Box::new(s)),
            AnyEndpoint::SurestreamPlayer(Box::new(p)),
        )
    }

    fn segment_payload(&self) -> u64 {
        match self.transport {
            Transport::Tcp => self.payload(),
            Transport::Udp => 0,
        }
    }

    fn data_packet(&self) -> DataPacket {
        let size = self.packet_size;
        DataPacket::new(size, size.as_bytes().saturating_sub(self.payload()))
    }

    fn demand(&self) -> FlowDemand {
        let clip = self.clip();
        let top = self.encoding.levels().iter().map(|l| l.bitrate).max();
        let traces: usize = self.encoding.levels().iter().map(|l| l.trace.len()).sum();
        FlowDemand {
            // Never above the top level's rate times the speedup (plus headers).
            fixed_rate: top.map(|r| {
                let overhead = self.packet_size.as_bytes() as f64 / self.payload() as f64;
                r.mul_f64(self.speedup.max(1.0) * overhead)
            }),
            state_bytes: size_of::<Server>()
                + size_of::<Player>()
                + usize::try_from(clip.frames()).unwrap_or(usize::MAX)
                + traces * size_of::<fairstream_media::Frame>()
                + crate::tcp::TcpSender::QUEUE_CAPACITY * size_of::<Packet>(),
            window: (self.transport == Transport::Tcp).then_some(u64::from(self.tcp.window)),
            bytes_per_packet_in_flight: size_of::<Packet>() + 2 * size_of::<u64>(),
            ..FlowDemand::adaptive(self.packet_size)
        }
    }
}

/// Its default clip and levels: it sends at its level's rate, so it takes no rate cap.
impl crate::RealTime for SurestreamConfig {
    const TAKES_RATE_CAP: bool = false;

    fn real_time(_cap: Option<fairstream_core::Bitrate>) -> Self {
        Self::default()
    }
}
