//! The streamer's parameters, with their defaults and where each comes from (paper 000 where
//! it says, \[chosen\] where it does not), and the clip they describe.

use std::sync::Arc;

use fairstream_core::{Bitrate, DataSize, Duration, Instant, RngStream};
use fairstream_media::{Encoding, EncodingError, Frame, FrameType, GopPattern, SyntheticGop};

use crate::media_scaling::MediaData;
use crate::tcp::{TcpConfig, TcpSinkConfig};
use crate::{IP_TCP_HEADER, udp_headers};

/// Bytes of headers in a UDP data packet: IP and UDP, the frame header and the media header.
pub const UDP_DATA_HEADERS: u64 = udp_headers(MediaData::WIRE_LEN);

/// What carries the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// UDP: the server paces packets; the player reports loss, receive rate and RTT echoes.
    Udp,
    /// The simulator's TCP: the server writes frames into a bounded send buffer; the player
    /// sees only the bytes delivered in order.
    Tcp,
}

impl Transport {
    /// `"udp"` or `"tcp"`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Udp => "udp",
            Self::Tcp => "tcp",
        }
    }
}

/// The UDP server's level rule (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UdpRule {
    /// A report whose loss fraction is above this steps the level down [chosen: 0.02].
    pub loss_down: f64,
    /// At most one step down per this time [chosen: 2 s: a change waits for the next I frame,
    /// then its effect reaches the player and its next report, so that the losses of the level
    /// before do not step down again].
    pub down_hold: Duration,
    /// A step up after this long without a change, on a loss-free report, doubled for each
    /// failed probe so far (at most 16×) [chosen: 10 s].
    pub up_hold: Duration,
    /// No report for this long steps the level down, and again each such time [chosen: 2 s].
    pub feedback_timeout: Duration,
}

impl Default for UdpRule {
    fn default() -> Self {
        Self {
            loss_down: 0.02,
            down_hold: Duration::from_secs(2),
            up_hold: Duration::from_secs(10),
            feedback_timeout: Duration::from_secs(2),
        }
    }
}

/// The TCP server's level rule (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpRule {
    /// Writes this far behind the schedule step the level down, at most once per this time
    /// [chosen: 2 s].
    pub lag_down: Duration,
    /// A step up after this long without a change and without any lag [chosen: 10 s].
    pub up_hold: Duration,
}

impl Default for TcpRule {
    fn default() -> Self {
        Self {
            lag_down: Duration::from_secs(2),
            up_hold: Duration::from_secs(10),
        }
    }
}

/// A `surestream` flow: a clip encoded at several levels, a server and a player.
#[derive(Clone, Debug, PartialEq)]
pub struct SurestreamConfig {
    /// UDP or TCP.
    pub transport: Transport,
    /// The clip's levels (lowest rate first); frame timing is level 0's.
    pub encoding: Arc<Encoding>,
    /// How long the clip plays; the server stops after its last frame.
    pub clip_length: Duration,
    /// Buffering-phase send rate over the playout rate (paper 000: up to 6× at low rates).
    pub speedup: f64,
    /// Media the player buffers before playing (and the server sends at `speedup` until it has
    /// sent this much) [chosen: 10 s].
    pub prebuffer: Duration,
    /// Media a stalled player buffers before it resumes [chosen: 5 s].
    pub rebuffer: Duration,
    /// Longest a stall waits for `rebuffer` (paper 000: up to 20 s).
    pub max_stall: Duration,
    /// Size of a full data packet on the wire.
    pub packet_size: DataSize,
    /// The TCP server's send buffer [chosen: 64 KB].
    pub send_buffer: DataSize,
    /// Time between the UDP player's reports, and between the players' metric records
    /// [chosen: 500 ms].
    pub report_interval: Duration,
    /// The level the server starts at (`None`: the top one, as a player on a fast access link
    /// asks for) \[chosen\].
    pub initial_level: Option<usize>,
    /// The UDP server's level rule.
    pub udp: UdpRule,
    /// The TCP server's level rule.
    pub tcp_rule: TcpRule,
    /// The TCP sender's other parameters (`packet_size` and the application are the
    /// streamer's).
    pub tcp: TcpConfig,
    /// The TCP receiver's parameters.
    pub tcp_sink: TcpSinkConfig,
}

impl SurestreamConfig {
    /// The default level rates, kbps (paper 000's range: 20 to 450 kbps) \[chosen\].
    pub const DEFAULT_LEVELS_KBPS: [u64; 5] = [20, 45, 100, 225, 450];
    /// The default frame rate, frames per second \[chosen\].
    pub const DEFAULT_FRAME_RATE: f64 = 15.0;

    /// A synthetic encoding: one constant-frame-rate trace per rate, one GOP of `IBBPBBPBB`
    /// at `frame_rate` with paper 001's I:P:B size ratios, scaled to each rate.
    pub fn synthetic_encoding(
        rates: &[Bitrate],
        frame_rate: f64,
    ) -> Result<Encoding, EncodingError> {
        let gop = SyntheticGop {
            pattern: GopPattern::ibbpbbpbb(),
            frame_rate,
            ..SyntheticGop::paper001()
        };
        // No size noise: the generator draws nothing.
        Encoding::from_gop(&gop, rates, 1, &mut RngStream::from_seed(0))
    }

    /// The clip as the endpoints see it.
    pub fn clip(&self) -> Clip {
        Clip::new(Arc::clone(&self.encoding), self.clip_length)
    }

    /// Payload of a full data packet: what the wire size leaves after the headers.
    pub fn payload(&self) -> u64 {
        let headers = match self.transport {
            Transport::Udp => UDP_DATA_HEADERS,
            Transport::Tcp => IP_TCP_HEADER,
        };
        self.packet_size.as_bytes().saturating_sub(headers).max(1)
    }

    /// The level the server starts at.
    pub fn first_level(&self) -> usize {
        let top = self.encoding.levels().len() - 1;
        self.initial_level.map_or(top, |l| l.min(top))
    }
}

impl Default for SurestreamConfig {
    fn default() -> Self {
        let rates = Self::DEFAULT_LEVELS_KBPS.map(Bitrate::kbps);
        Self {
            transport: Transport::Udp,
            encoding: Arc::new(
                Self::synthetic_encoding(&rates, Self::DEFAULT_FRAME_RATE)
                    .expect("increasing default levels"),
            ),
            clip_length: Duration::from_secs(120),
            speedup: 6.0,
            prebuffer: Duration::from_secs(10),
            rebuffer: Duration::from_secs(5),
            max_stall: Duration::from_secs(20),
            packet_size: DataSize::bytes(1500),
            send_buffer: DataSize::bytes(65_536),
            report_interval: Duration::from_millis(500),
            initial_level: None,
            udp: UdpRule::default(),
            tcp_rule: TcpRule::default(),
            tcp: TcpConfig::default(),
            tcp_sink: TcpSinkConfig::default(),
        }
    }
}

/// The clip: its frames at each level, looped over each level's trace, for `frames` frames.
#[derive(Clone, Debug)]
pub struct Clip {
    encoding: Arc<Encoding>,
    frames: u64,
    interval: Duration,
}

impl Clip {
    /// The clip of `encoding` lasting `length` (at least one frame).
    pub fn new(encoding: Arc<Encoding>, length: Duration) -> Self {
        let t = &encoding.levels()[0].trace;
        let n = t.len().max(1) as u64;
        let interval = Duration::from_nanos((t.duration().as_nanos() / n).max(1));
        let frames = (length.as_nanos() / interval.as_nanos()).max(1);
        Self {
            encoding,
            frames,
            interval,
        }
    }

    /// Frames in the clip.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Time between frames (level 0's trace duration over its frames).
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// The levels.
    pub fn levels(&self) -> usize {
        self.encoding.levels().len()
    }

    /// Level `level`'s nominal rate.
    pub fn rate(&self, level: usize) -> Bitrate {
        self.encoding.levels()[level].bitrate
    }

    /// Frame `k` at `level` (its trace looped).
    pub fn frame(&self, level: usize, k: u64) -> Frame {
        let f = self.encoding.levels()[level].trace.frames();
        f[(k % f.len() as u64) as usize]
    }

    /// Level 0's frame types, one pass (the player's view of the GOP structure).
    pub fn kinds(&self) -> Vec<FrameType> {
        self.encoding.levels()[0].trace.kinds().collect()
    }
}

/// The server's send schedule: frame k is released at `start + k·interval / speedup` while
/// less than `prebuffer` of media has been released, and one interval after the frame before
/// it from then on (the buffering phase, then playout rate).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    start: Instant,
    interval: Duration,
    speedup: f64,
    /// Frames released at the accelerated rate.
    fast: u64,
}

impl Schedule {
    /// The schedule of `clip` from `start` (`speedup` taken as at least 1).
    pub fn new(clip: &Clip, start: Instant, speedup: f64, prebuffer: Duration) -> Self {
        let i = clip.interval().as_nanos().max(1);
        Self {
            start,
            interval: clip.interval(),
            speedup: speedup.max(1.0),
            // Rounded: a frame interval of whole nanoseconds need not divide the prebuffer.
            fast: (prebuffer.as_nanos() + i / 2) / i,
        }
    }

    /// When frame `k` is released.
    pub fn release(&self, k: u64) -> Instant {
        let fast = k.min(self.fast);
        let t = (self.interval * fast).mul_f64(1.0 / self.speedup)
            + self.interval * k.saturating_sub(self.fast);
        self.start.saturating_add(t)
    }

    /// The rate multiplier in force for frame `k` (`speedup` in the buffering phase, else 1).
    pub fn multiplier(&self, k: u64) -> f64 {
        if k < self.fast { self.speedup } else { 1.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_clip_and_schedule() {
        let c = SurestreamConfig::default();
        let clip = c.clip();
        // 15 frame/s for 120 s.
        assert_eq!((clip.frames(), clip.levels()), (1800, 5));
        assert_eq!(clip.interval(), Duration::from_nanos(66_666_666));
        assert_eq!(c.first_level(), 4);
        assert_eq!(c.payload(), 1500 - 28 - 8 - 22);
        // Each level's frames average its rate.
        for l in 0..5 {
            let bytes: u64 = (0..9).map(|k| clip.frame(l, k).size.as_bytes()).sum();
            let bps = bytes as f64 * 8.0 / 0.6;
            let want = clip.rate(l).as_bps_f64();
            assert!((bps - want).abs() / want < 0.01, "{l}: {bps} vs {want}");
        }
        // 10 s of media (150 frames) at 6×: frame 150 at 10/6 s; then one interval each.
        let s = Schedule::new(&clip, Instant::ZERO, 6.0, c.prebuffer);
        let at = |k| s.release(k).as_secs_f64();
        assert!((at(150) - 150.0 * 0.066_666_667 / 6.0).abs() < 1e-6);
        assert!((at(151) - at(150) - 0.066_666_667).abs() < 1e-6);
        assert!((at(75) - at(74) - 0.066_666_667 / 6.0).abs() < 1e-6);
        assert_eq!((s.multiplier(149), s.multiplier(150)), (6.0, 1.0));
    }
}
