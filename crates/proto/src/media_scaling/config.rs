//! Parameters of the media-scaling applications (PROTOCOLS.md §6; paper 001): the scaling rule
//! both share ([`ScalingConfig`]), MM_APP's fixed-size frames at per-scale rates
//! ([`MmAppConfig`]) and MPEG_APP's frames from a GOP trace ([`MpegAppConfig`]). Every constant
//! has its default and its tag: \[paper\] paper 001, \[code\] the ns-2 `MmApp` code, \[proposed\]
//! our choice where neither says.

use fairstream_core::{Bitrate, DataSize, Duration, Instant, RngStream};
use fairstream_media::{FrameTrace, PlayoutConfig, SyntheticGop, scale};

use crate::udp_headers;

use crate::media_scaling::MediaData;

/// How many scales there are (0 to 4).
pub const SCALES: usize = scale::SCALES;
/// The highest scale.
pub const MAX_SCALE: u8 = scale::MAX_SCALE;

/// Headers in every data packet: IP + UDP, the frame header and the media data header.
pub const DATA_HEADERS: u64 = udp_headers(MediaData::WIRE_LEN);

/// The largest packet: an IPv4 datagram's 65 535 B.
const MAX_PACKET: u64 = 65_535;

/// The receiver-driven scaling rule both applications share, and the sender's fallback when
/// reports stop.
///
/// The receiver detects loss from a gap in the sequence numbers, or when nothing arrives for
/// the timeout `TOI = RTT` if `RTT > Max_Intrvl`, else `Max_Intrvl + α·RTT`; it then halves the
/// scale (integer division) and reports it. One RTT after its last change (its checkpoint)
/// with no loss and at least one packet received, it raises the scale by one. Out-of-range
/// values never make an endpoint panic: they are clamped into the ranges documented here.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalingConfig {
    /// The scale the sender starts at; default 0 \[paper\]. Clamped to [0, 4].
    pub initial_scale: u8,
    /// α of the timeout rule as a fraction of the RTT (the paper asks 0 < α < RTT); default 0.5
    /// \[proposed\]. Clamped to [0.001, 0.999].
    pub alpha: f64,
    /// Max_Intrvl, "the longest possible frame transmission interval"; `None` (default): MM_APP's
    /// packet interval at its lowest rate (1.5× that with `random`), MPEG_APP's longest gap
    /// between frames sent at scale 0 (the GOP, for `IBBPBBPBB` at 30 frame/s 300 ms) \[paper\].
    pub max_interval: Option<Duration>,
    /// The RTT the receiver assumes until data packets carry the sender's estimate, and the
    /// sender until its first sample; default 100 ms \[proposed\].
    pub initial_rtt: Duration,
    /// Gain of the sender's RTT filter `rtt = (1 − g)·rtt + g·sample`; default 0.1 \[code\]
    /// (MmApp's `0.9·rtt + 0.1·sample`). Clamped to [0, 1].
    pub rtt_gain: f64,
    /// Losses found within one RTT of a decrease do not halve the scale again (packets sent
    /// before the sender heard of the decrease are still arriving) but still deny the next
    /// increase; default true \[proposed\] (the paper's rule is modelled on Reno's fast recovery:
    /// one reduction per loss episode). `false`: every loss found halves.
    pub one_decrease_per_rtt: bool,
    /// The sender halves its scale itself when it hears no report for
    /// `max(feedback_timeout_rtts × RTT, min_feedback_timeout)`, and again each such time;
    /// default 4 \[proposed\] (PROTOCOLS.md §6.2; the paper has no sender timeout). 0 turns the
    /// rule off. Clamped to [0, 10⁶].
    pub feedback_timeout_rtts: f64,
    /// The floor of the sender's feedback timeout; default 1 s \[proposed\] (PROTOCOLS.md §6.2).
    pub min_feedback_timeout: Duration,
    /// The receiver's player (`fairstream_media::playout`, the streamer's model): media
    /// buffered before playout starts; default 1 s \[chosen\] (paper 001 describes no player).
    pub prebuffer: Duration,
    /// Media a stalled player buffers before it resumes; default 1 s \[chosen\].
    pub rebuffer: Duration,
    /// Longest a stall waits for `rebuffer` with something buffered; default 20 s (paper 000's
    /// RealPlayer: "up to 20 seconds").
    pub max_stall: Duration,
}

impl Default for ScalingConfig {
    fn default() -> Self {
        Self {
            initial_scale: 0,
            alpha: 0.5,
            max_interval: None,
            initial_rtt: Duration::from_millis(100),
            rtt_gain: 0.1,
            one_decrease_per_rtt: true,
            feedback_timeout_rtts: 4.0,
            min_feedback_timeout: Duration::from_secs(1),
            prebuffer: Duration::from_secs(1),
            rebuffer: Duration::from_secs(1),
            max_stall: Duration::from_secs(20),
        }
    }
}

/// Media beyond the prebuffer and the longest stall that a player's window keeps, so that a
/// frame sent ahead of the playout point is never out of it \[chosen\].
const WINDOW_MARGIN: Duration = Duration::from_secs(10);

/// Where a data packet's frame sits on the player's media timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FrameClock {
    /// The packet's frame number is its index (MPEG_APP: one per frame of the trace, sent or
    /// skipped, at the trace's frame interval).
    Numbered,
    /// MM_APP's frames have no media clock of their own (one per packet at the scale's rate):
    /// a frame's index is its send time from `start` in steps of `grid`, half its shortest
    /// interval (the top scale's, less the dither), so that no two frames share a step.
    Stamped {
        /// When the flow starts.
        start: Instant,
        /// The step.
        grid: Duration,
    },
}

impl FrameClock {
    /// The media index of the frame `d` carries.
    pub(super) fn index(&self, d: &MediaData) -> u64 {
        match *self {
            Self::Numbered => d.frame,
            Self::Stamped { start, grid } => {
                d.timestamp.saturating_since(start).as_nanos() / grid.as_nanos().max(1)
            }
        }
    }
}

/// A receiver's player: its playout model's parameters and its media clock.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Player {
    pub(super) playout: PlayoutConfig,
    pub(super) clock: FrameClock,
}

impl Player {
    /// A live player of frames `interval` apart with `kinds` (empty: untyped), from `start`.
    fn live(
        scaling: &ScalingConfig,
        start: Instant,
        interval: Duration,
        kinds: Vec<fairstream_media::FrameType>,
        clock: FrameClock,
    ) -> Self {
        let interval = interval.max(Duration::from_micros(1));
        let keep = scaling.prebuffer + scaling.max_stall + WINDOW_MARGIN;
        let window = keep.as_nanos().div_ceil(interval.as_nanos()).max(1);
        Self {
            playout: PlayoutConfig {
                start,
                frame_interval: interval,
                frames: u64::MAX,
                prebuffer: scaling.prebuffer,
                rebuffer: scaling.rebuffer,
                max_stall: scaling.max_stall,
                kinds,
                window: Some(window),
            },
            clock,
        }
    }

    /// Bytes the player's window takes.
    pub(super) fn heap_bytes(&self) -> usize {
        usize::try_from(self.playout.window.unwrap_or(0)).unwrap_or(usize::MAX)
    }
}

/// MM_APP: fixed-size frames, one per packet, paced at the rate of the current scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MmAppConfig {
    /// The rate of each scale, 0 to 4, counting whole packets on the wire; default 300, 500,
    /// 700, 900, 1100 kbit/s \[paper\] (Table 1; the ns-2 code's defaults are 0.3, 0.6, 0.9,
    /// 1.2, 1.5 Mbit/s). Each taken as at least 1 bit/s.
    pub rates: [Bitrate; SCALES],
    /// Size of every packet on the wire (IP + UDP + frame header + media header + frame);
    /// default 1000 B \[code\] (`pktsize_`). Taken as at least the 58 B of headers, at most
    /// 65 535 B.
    pub packet_size: DataSize,
    /// Dither each interval by a uniform fraction in [−0.5, 0.5) of itself (ns-2's `random_`);
    /// default false \[code\].
    pub random: bool,
    /// The scaling rule.
    pub scaling: ScalingConfig,
}

impl Default for MmAppConfig {
    fn default() -> Self {
        Self {
            rates: [300, 500, 700, 900, 1100].map(Bitrate::kbps),
            packet_size: DataSize::bytes(1000),
            random: false,
            scaling: ScalingConfig::default(),
        }
    }
}

impl MmAppConfig {
    /// The player of a receiver whose flow starts at `start`: untyped frames on a grid of half
    /// the shortest packet interval.
    pub(super) fn player(&self, start: Instant) -> Player {
        let top = self.rates.iter().copied().max().unwrap_or(Bitrate::ZERO);
        let shortest = if top.as_bps() == 0 {
            Duration::from_secs(1)
        } else {
            top.transmit_time(self.packet())
        };
        let grid = (if self.random {
            shortest.mul_f64(0.5)
        } else {
            shortest
        })
        .mul_f64(0.5);
        let grid = grid.max(Duration::from_micros(1));
        Player::live(
            &self.scaling,
            start,
            grid,
            Vec::new(),
            FrameClock::Stamped { start, grid },
        )
    }

    /// Max_Intrvl: the configured one, or the packet interval at the lowest rate (× 1.5 with
    /// `random`, the longest a dithered interval gets).
    pub fn max_interval(&self) -> Duration {
        self.scaling.max_interval.unwrap_or_else(|| {
            let lowest = self.rates.iter().copied().min().unwrap_or(Bitrate::ZERO);
            let t = lowest.max(Bitrate::bps(1)).transmit_time(self.packet());
            if self.random { t.mul_f64(1.5) } else { t }
        })
    }

    /// The packet size as the endpoints use it (clamped).
    pub(super) fn packet(&self) -> DataSize {
        DataSize::bytes(self.packet_size.as_bytes().clamp(DATA_HEADERS, MAX_PACKET))
    }
}

/// Where MPEG_APP's frames come from.
#[derive(Clone, Debug, PartialEq)]
pub enum MpegTrace {
    /// A synthetic MPEG-1 stream of `gops` GOPs (at least 1), looped.
    Synthetic {
        /// The GOP pattern, frame rate, sizes and noise.
        gop: SyntheticGop,
        /// GOPs in one pass (with size noise, how many distinct GOPs before the pass repeats).
        gops: usize,
    },
    /// A given trace (e.g. read from a CSV file), looped.
    Frames(FrameTrace),
}

/// MPEG_APP: at each frame time of a trace, the frame is sent if the current scale's policy
/// (paper 001's Table 2) sends it, split into packets of at most `max_packet` on the wire.
#[derive(Clone, Debug, PartialEq)]
pub struct MpegAppConfig {
    /// The frames; default paper 001's stream, one GOP of `IBBPBBPBB` at 30 frame/s with
    /// I 11 000 B, P 8000 B, B 2000 B \[paper\] (Fig. 2).
    pub trace: MpegTrace,
    /// The largest packet on the wire; a frame is split into as few packets as fit, all but
    /// the last full, sent back to back at the frame's time; default 1500 B \[paper\]. Taken as
    /// at least the 58 B of headers + 1, at most 65 535 B.
    pub max_packet: DataSize,
    /// The scaling rule (the trace's time 0 is the flow's start).
    pub scaling: ScalingConfig,
}

impl Default for MpegAppConfig {
    fn default() -> Self {
        Self {
            trace: MpegTrace::Synthetic {
                gop: SyntheticGop::paper001(),
                gops: 1,
            },
            max_packet: DataSize::bytes(1500),
            scaling: ScalingConfig::default(),
        }
    }
}

impl MpegAppConfig {
    /// The trace one flow sends: the given one, or the synthetic one with its size noise drawn
    /// from `rng`.
    pub fn build_trace(&self, rng: &mut RngStream) -> FrameTrace {
        match &self.trace {
            MpegTrace::Synthetic { gop, gops } => FrameTrace::synthetic(gop, *gops, rng),
            MpegTrace::Frames(t) => t.clone(),
        }
    }

    /// Payload bytes per packet (at least 1).
    pub fn max_payload(&self) -> u64 {
        self.max_packet
            .as_bytes()
            .clamp(DATA_HEADERS + 1, MAX_PACKET)
            .saturating_sub(DATA_HEADERS)
    }

    /// The player of a receiver whose flow starts at `start`: the trace's frames, at its mean
    /// frame interval, with its types.
    pub(super) fn player(&self, trace: &FrameTrace, start: Instant) -> Player {
        let frames = trace.len().max(1) as u64;
        let interval = Duration::from_nanos(trace.duration().as_nanos() / frames);
        Player::live(
            &self.scaling,
            start,
            interval,
            trace.kinds().collect(),
            FrameClock::Numbered,
        )
    }

    /// Max_Intrvl for `trace`: the configured one, or the longest gap between frames sent at
    /// scale 0 (the pass's duration if no frame is sent at scale 0).
    pub fn max_interval(&self, trace: &FrameTrace) -> Duration {
        self.scaling
            .max_interval
            .unwrap_or_else(|| scale::max_interval(trace, 0).unwrap_or_else(|| trace.duration()))
    }

    /// The rate of each scale on the wire for `trace`: the frames sent per pass, split into
    /// packets with their headers, over the pass's duration.
    pub fn wire_rates(&self, trace: &FrameTrace) -> [Bitrate; SCALES] {
        let kinds: Vec<_> = trace.kinds().collect();
        let mins = scale::min_scales(&kinds);
        let payload = self.max_payload();
        std::array::from_fn(|s| {
            let bytes: u64 = trace
                .frames()
                .iter()
                .zip(&mins)
                .filter(|&(_, &m)| scale::is_sent(m, s as u8))
                .map(|(f, _)| {
                    let packets = fragments(f.size.as_bytes(), payload);
                    f.size.as_bytes() + u64::from(packets) * DATA_HEADERS
                })
                .sum();
            Bitrate::from_size_per(DataSize::bytes(bytes), trace.duration())
        })
    }
}

/// The rate of each scale, scale 0 first, of `trace` as MPEG_APP sends it in packets of at
/// most `max_packet`: `(encoded, wire)`, the frames' bytes alone and with the IP, UDP and media
/// headers of their packets.
pub fn mpeg_scale_rates(
    trace: &FrameTrace,
    max_packet: DataSize,
) -> ([Bitrate; SCALES], [Bitrate; SCALES]) {
    let config = MpegAppConfig {
        trace: MpegTrace::Frames(trace.clone()),
        max_packet,
        ..MpegAppConfig::default()
    };
    (scale::scale_rates(trace), config.wire_rates(trace))
}

/// Packets a frame of `bytes` takes at `payload` bytes per packet: at least 1 (an empty frame
/// still sends its header), at most 65 535 (the header's field; a larger frame's excess is cut).
pub(super) fn fragments(bytes: u64, payload: u64) -> u16 {
    let n = bytes.div_ceil(payload.max(1)).max(1);
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// The scaling rule in the form the endpoints compute with: every value in range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Rule {
    pub(super) initial_scale: u8,
    pub(super) alpha: f64,
    pub(super) max_interval: Duration,
    pub(super) initial_rtt: Duration,
    pub(super) rtt_gain: f64,
    pub(super) one_decrease_per_rtt: bool,
    pub(super) feedback_timeout_rtts: f64,
    pub(super) min_feedback_timeout: Duration,
}

/// `v` clamped to `[lo, hi]`, or `default` when it is not a number.
fn clamp_or(v: f64, lo: f64, hi: f64, default: f64) -> f64 {
    if v.is_nan() { default } else { v.clamp(lo, hi) }
}

impl Rule {
    /// Sanitises `c`, with Max_Intrvl as the application works it out.
    pub(super) fn new(c: &ScalingConfig, max_interval: Duration) -> Self {
        Self {
            initial_scale: c.initial_scale.min(MAX_SCALE),
            alpha: clamp_or(c.alpha, 0.001, 0.999, 0.5),
            max_interval,
            initial_rtt: c.initial_rtt.max(Duration::from_nanos(1)),
            rtt_gain: clamp_or(c.rtt_gain, 0.0, 1.0, 0.1),
            one_decrease_per_rtt: c.one_decrease_per_rtt,
            feedback_timeout_rtts: clamp_or(c.feedback_timeout_rtts, 0.0, 1e6, 4.0),
            min_feedback_timeout: c.min_feedback_timeout,
        }
    }

    /// The paper's timeout: `RTT` if `RTT > Max_Intrvl`, else `Max_Intrvl + α·RTT`.
    pub(super) fn toi(&self, rtt: Duration) -> Duration {
        if rtt > self.max_interval {
            rtt
        } else {
            Duration::from_nanos(
                self.max_interval
                    .as_nanos()
                    .saturating_add(rtt.mul_f64(self.alpha).as_nanos()),
            )
        }
    }

    /// The sender's feedback timeout at smoothed RTT `rtt` (`None`: the rule is off).
    pub(super) fn feedback_timeout(&self, rtt: Duration) -> Option<Duration> {
        (self.feedback_timeout_rtts > 0.0).then(|| {
            rtt.mul_f64(self.feedback_timeout_rtts)
                .max(self.min_feedback_timeout)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_tagged_values() {
        let mm = MmAppConfig::default();
        assert_eq!(
            mm.rates.map(|r| r.as_bps()),
            [300_000, 500_000, 700_000, 900_000, 1_100_000]
        );
        assert_eq!((mm.packet_size, mm.random), (DataSize::bytes(1000), false));
        // 1000 B at 300 kbit/s: 26.667 ms.
        assert_eq!(mm.max_interval(), Duration::from_nanos(26_666_667));
        let dithered = MmAppConfig { random: true, ..mm };
        assert_eq!(dithered.max_interval(), Duration::from_nanos(40_000_001));
        let s = ScalingConfig::default();
        assert_eq!((s.initial_scale, s.alpha, s.rtt_gain), (0, 0.5, 0.1));
        assert_eq!(s.initial_rtt, Duration::from_millis(100));
        assert!(s.one_decrease_per_rtt);
        assert_eq!(
            (s.feedback_timeout_rtts, s.min_feedback_timeout),
            (4.0, Duration::from_secs(1))
        );

        let mpeg = MpegAppConfig::default();
        let trace = mpeg.build_trace(&mut RngStream::from_seed(1));
        assert_eq!(trace.len(), 9);
        assert_eq!(mpeg.max_payload(), 1442);
        let tiny = MpegAppConfig {
            max_packet: DataSize::ZERO,
            ..MpegAppConfig::default()
        };
        assert_eq!(tiny.max_payload(), 1);
        assert_eq!(mpeg.max_interval(&trace), Duration::from_millis(300));
    }

    #[test]
    fn wire_rates_add_a_header_per_packet() {
        let mpeg = MpegAppConfig::default();
        let trace = mpeg.build_trace(&mut RngStream::from_seed(1));
        // Per 0.3 s GOP at scale 4: I 11 000 B in 8 packets, P 8000 B in 6 (twice), B 2000 B in
        // 2 (six times): 39 000 B + 32 × 58 B = 40 856 B; at scale 0 the I frame only.
        let kbps = |r: Bitrate| r.as_bps_f64() / 1e3;
        let rates = mpeg.wire_rates(&trace);
        assert!((kbps(rates[4]) - 40_856.0 * 8.0 / 300.0).abs() < 0.01);
        assert!((kbps(rates[0]) - 11_464.0 * 8.0 / 300.0).abs() < 0.01);
        assert_eq!(fragments(0, 1442), 1);
        assert_eq!(fragments(1442, 1442), 1);
        assert_eq!(fragments(1443, 1442), 2);
        assert_eq!(fragments(u64::MAX, 1), u16::MAX);
    }

    #[test]
    fn the_timeout_rule() {
        let rule = Rule::new(&ScalingConfig::default(), Duration::from_millis(40));
        // RTT above Max_Intrvl: TOI = RTT.
        assert_eq!(
            rule.toi(Duration::from_millis(60)),
            Duration::from_millis(60)
        );
        // RTT at or below: Max_Intrvl + α·RTT.
        assert_eq!(
            rule.toi(Duration::from_millis(40)),
            Duration::from_millis(60)
        );
        assert_eq!(
            rule.toi(Duration::from_millis(20)),
            Duration::from_millis(50)
        );
        assert_eq!(
            rule.feedback_timeout(Duration::from_millis(60)),
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            rule.feedback_timeout(Duration::from_millis(500)),
            Some(Duration::from_secs(2))
        );
        let off = Rule::new(
            &ScalingConfig {
                feedback_timeout_rtts: 0.0,
                initial_scale: 9,
                alpha: f64::NAN,
                ..ScalingConfig::default()
            },
            Duration::ZERO,
        );
        assert_eq!(off.feedback_timeout(Duration::from_secs(1)), None);
        assert_eq!((off.initial_scale, off.alpha), (4, 0.5));
    }
}
