//! Frame traces: the frames a media source emits, in time order, with the length of one pass
//! (so that a source can loop the trace); synthetic MPEG-1 GOPs; and what can be wrong with a
//! trace.

use std::fmt;

use fairstream_core::{Bitrate, DataSize, Duration, RngStream};

use crate::frame::{Frame, FrameType, GopPattern};

/// A sequence of frames in time order and the time one pass of it lasts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameTrace {
    frames: Vec<Frame>,
    duration: Duration,
}

/// What is wrong with a trace (without where: see [`TraceError`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TraceProblem {
    /// A column the trace needs is missing, from the header or from a row.
    #[error("missing column `{0}`; expected the columns time, type and bytes")]
    MissingColumn(&'static str),
    /// A frame size below zero.
    #[error("frame size `{0}` is negative; expected a number of bytes, 0 or more")]
    NegativeSize(String),
    /// A frame due before the one before it.
    #[error(
        "time {time} s is before the previous frame's {previous} s; frames must be in time order"
    )]
    Unsorted {
        /// This frame's time, seconds.
        time: f64,
        /// The previous frame's time, seconds.
        previous: f64,
    },
    /// A frame type other than I, P or B.
    #[error("unknown frame type `{0}`; expected I, P or B")]
    UnknownType(String),
    /// A time or size that is not a number of the expected kind.
    #[error("`{value}` in column `{column}` is not {expected}")]
    BadValue {
        /// The column.
        column: &'static str,
        /// The text found.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// No frames at all.
    #[error("no frames; expected a header line and at least one frame")]
    Empty,
    /// The pass is shorter than the trace's last frame time.
    #[error("the trace lasts {duration} but its last frame is due at {last}")]
    TooShort {
        /// The duration given.
        duration: Duration,
        /// The last frame's time.
        last: Duration,
    },
    /// The file could not be read.
    #[error("cannot read the file: {0}")]
    Io(String),
}

/// A trace problem and where it is: `FILE:LINE: problem` (line 0: the file as a whole).
#[derive(Clone, Debug, PartialEq)]
pub struct TraceError {
    /// The file, as the caller named it.
    pub file: String,
    /// 1-based line (0 when the problem is not on one line).
    pub line: usize,
    /// What is wrong.
    pub problem: TraceProblem,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        write!(f, ": {}", self.problem)
    }
}

impl std::error::Error for TraceError {}

impl FrameTrace {
    /// A trace of `frames` (in time order, at least one) whose pass lasts `duration` (at least
    /// the last frame's time; a looping source starts the next pass then).
    pub fn new(frames: Vec<Frame>, duration: Duration) -> Result<Self, TraceProblem> {
        let Some(last) = frames.last() else {
            return Err(TraceProblem::Empty);
        };
        if let Some(w) = frames.windows(2).find(|w| w[1].time < w[0].time) {
            return Err(TraceProblem::Unsorted {
                time: w[1].time.as_secs_f64(),
                previous: w[0].time.as_secs_f64(),
            });
        }
        if duration < last.time {
            return Err(TraceProblem::TooShort {
                duration,
                last: last.time,
            });
        }
        Ok(Self { frames, duration })
    }

    /// A trace of `frames` (in time order, at least one) whose pass lasts until the last frame
    /// plus the mean frame interval (`(last − first)/(n − 1)`; one second for a single frame),
    /// so that a looping source keeps the frame rate across the seam: how traces read from
    /// files ([`crate::csv`], [`crate::ffprobe`]) end.
    pub fn with_mean_tail(frames: Vec<Frame>) -> Result<Self, TraceProblem> {
        let (Some(first), Some(last)) = (frames.first(), frames.last()) else {
            return Err(TraceProblem::Empty);
        };
        let tail = match frames.len() {
            1 => Duration::from_secs(1),
            n => {
                Duration::from_nanos(last.time.as_nanos().saturating_sub(first.time.as_nanos()))
                    / (n as u64 - 1)
            }
        };
        let duration = Duration::from_nanos(last.time.as_nanos().saturating_add(tail.as_nanos()));
        Self::new(frames, duration)
    }

    /// `gops` GOPs (at least one) of `gop`. Frame k is due at k/frame_rate (rounded to the
    /// nanosecond, so that long traces do not drift); the pass lasts as many frame intervals as
    /// it has frames. With [`SyntheticGop::size_noise`] above zero each frame's size is drawn
    /// uniformly in `size·(1 ± noise)` from `rng` (rounded to whole bytes); otherwise `rng` is
    /// left untouched.
    pub fn synthetic(gop: &SyntheticGop, gops: usize, rng: &mut RngStream) -> Self {
        let n = gop.pattern.len() * gops.max(1);
        let noise = if gop.size_noise.is_nan() {
            0.0
        } else {
            gop.size_noise.clamp(0.0, 1.0)
        };
        let frames = (0..n)
            .map(|k| {
                let kind = gop.pattern.kinds()[k % gop.pattern.len()];
                let nominal = gop.size_of(kind).as_bytes() as f64;
                let size = if noise > 0.0 {
                    (nominal * (1.0 + noise * (2.0 * rng.uniform() - 1.0))).round()
                } else {
                    nominal
                };
                Frame {
                    time: gop.frame_time(k as u64),
                    kind,
                    size: DataSize::bytes(size.max(0.0) as u64),
                }
            })
            .collect();
        Self {
            frames,
            duration: gop.frame_time(n as u64),
        }
    }

    /// The frames, in time order.
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// How many frames one pass has.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Never true: a trace has at least one frame.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// How long one pass lasts.
    pub fn duration(&self) -> Duration {
        self.duration
    }

    /// The frame types, in order.
    pub fn kinds(&self) -> impl ExactSizeIterator<Item = FrameType> + '_ {
        self.frames.iter().map(|f| f.kind)
    }

    /// Whether any frame is an I frame: where a GOP starts, and what a sender that changes its
    /// encoding at GOP starts (MPEG_APP's lowest scale, the streamer's level switch) waits for.
    pub fn has_i_frame(&self) -> bool {
        self.kinds().any(|k| k == FrameType::I)
    }

    /// The bytes of one pass.
    pub fn total_size(&self) -> DataSize {
        DataSize::bytes(self.frames.iter().map(|f| f.size.as_bytes()).sum())
    }

    /// The encoded rate: the bytes of one pass over its duration (zero for a pass of no time).
    pub fn mean_rate(&self) -> Bitrate {
        Bitrate::from_size_per(self.total_size(), self.duration)
    }

    /// The same frames with every size scaled so that the mean rate becomes `rate` (sizes
    /// rounded to whole bytes); a trace of no bytes or no time is returned unchanged.
    pub fn scaled_to(&self, rate: Bitrate) -> Self {
        let now = self.mean_rate();
        if now.is_zero() {
            return self.clone();
        }
        let k = rate.as_bps_f64() / now.as_bps_f64();
        let frames = self
            .frames
            .iter()
            .map(|f| Frame {
                size: DataSize::bytes((f.size.as_bytes() as f64 * k).round() as u64),
                ..*f
            })
            .collect();
        Self {
            frames,
            duration: self.duration,
        }
    }
}

/// A synthetic MPEG-1 stream: a GOP pattern repeated at a frame rate, with a size per frame
/// type and optional size noise.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntheticGop {
    /// The GOP pattern.
    pub pattern: GopPattern,
    /// Frames per second (taken as at least 10⁻⁶).
    pub frame_rate: f64,
    /// Size of an I frame.
    pub i_size: DataSize,
    /// Size of a P frame.
    pub p_size: DataSize,
    /// Size of a B frame.
    pub b_size: DataSize,
    /// Relative size noise: each size is drawn uniformly in `size·(1 ± noise)`; 0 for none.
    /// Clamped to [0, 1].
    pub size_noise: f64,
}

impl SyntheticGop {
    /// Paper 001's example stream (its Fig. 2): 30 frame/s, `IBBPBBPBB`, I 11 000 B, P 8000 B,
    /// B 2000 B (the mean frame sizes of a short high-quality MPEG-1 news clip), no noise.
    pub fn paper001() -> Self {
        Self {
            pattern: GopPattern::ibbpbbpbb(),
            frame_rate: 30.0,
            i_size: DataSize::bytes(11_000),
            p_size: DataSize::bytes(8_000),
            b_size: DataSize::bytes(2_000),
            size_noise: 0.0,
        }
    }

    /// The nominal size of a frame of type `kind`.
    pub fn size_of(&self, kind: FrameType) -> DataSize {
        match kind {
            FrameType::I => self.i_size,
            FrameType::P => self.p_size,
            FrameType::B => self.b_size,
        }
    }

    /// When frame `k` is due: k/frame_rate, rounded to the nanosecond.
    pub fn frame_time(&self, k: u64) -> Duration {
        let rate = if self.frame_rate.is_nan() {
            1e-6
        } else {
            self.frame_rate.max(1e-6)
        };
        Duration::from_nanos((k as f64 * 1e9 / rate).round() as u64)
    }

    /// The time between frames (one frame's share of a second, rounded to the nanosecond).
    pub fn frame_interval(&self) -> Duration {
        self.frame_time(1)
    }
}

impl Default for SyntheticGop {
    /// [`SyntheticGop::paper001`].
    fn default() -> Self {
        Self::paper001()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(ms: u64, kind: FrameType, bytes: u64) -> Frame {
        Frame {
            time: Duration::from_millis(ms),
            kind,
            size: DataSize::bytes(bytes),
        }
    }

    #[test]
    fn the_paper001_gop_at_30_frames_per_second() {
        let t = FrameTrace::synthetic(&SyntheticGop::paper001(), 2, &mut RngStream::from_seed(1));
        assert_eq!(t.len(), 18);
        let kinds: String = t.kinds().map(FrameType::letter).collect();
        assert_eq!(kinds, "IBBPBBPBBIBBPBBPBB");
        assert_eq!(t.frames()[1].time, Duration::from_nanos(33_333_333));
        assert_eq!(t.frames()[2].time, Duration::from_nanos(66_666_667));
        assert_eq!(t.frames()[9].time, Duration::from_millis(300));
        assert_eq!(t.duration(), Duration::from_millis(600));
        assert_eq!(t.total_size(), DataSize::bytes(78_000));
        // 39 000 B per 0.3 s.
        assert_eq!(t.mean_rate(), Bitrate::kbps(1040));
        assert_eq!(t.frames()[3].size, DataSize::bytes(8000));
    }

    #[test]
    fn an_i_frame_is_found_wherever_it_is() {
        let of = |kinds: &[FrameType]| {
            let frames = kinds.iter().enumerate();
            let frames = frames
                .map(|(i, &k)| frame(100 * i as u64, k, 1000))
                .collect();
            FrameTrace::new(frames, Duration::from_millis(100 * kinds.len() as u64)).unwrap()
        };
        use FrameType::{B, I, P};
        assert!(of(&[I, B, P]).has_i_frame());
        assert!(of(&[P, B, I]).has_i_frame());
        assert!(!of(&[P, B, P]).has_i_frame());
    }

    #[test]
    fn size_noise_is_seeded_bounded_and_off_by_default() {
        let gop = SyntheticGop {
            size_noise: 0.2,
            ..SyntheticGop::paper001()
        };
        let a = FrameTrace::synthetic(&gop, 50, &mut RngStream::from_seed(7));
        let b = FrameTrace::synthetic(&gop, 50, &mut RngStream::from_seed(7));
        let c = FrameTrace::synthetic(&gop, 50, &mut RngStream::from_seed(8));
        assert_eq!(a, b);
        assert_ne!(a, c);
        for f in a.frames() {
            let nominal = gop.size_of(f.kind).as_bytes() as f64;
            let s = f.size.as_bytes() as f64;
            assert!(
                (0.8 * nominal - 0.5..=1.2 * nominal + 0.5).contains(&s),
                "{f:?}"
            );
        }
        assert!(a.frames().iter().any(|f| f.size != gop.size_of(f.kind)));
        let mut rng = RngStream::from_seed(7);
        let before = rng.clone().next_u64();
        FrameTrace::synthetic(&SyntheticGop::paper001(), 5, &mut rng);
        assert_eq!(rng.next_u64(), before, "no noise draws nothing");
    }

    #[test]
    fn new_checks_order_emptiness_and_duration() {
        use FrameType::*;
        let ok = FrameTrace::new(
            vec![frame(0, I, 10), frame(40, P, 5)],
            Duration::from_millis(80),
        );
        assert_eq!(ok.unwrap().mean_rate(), Bitrate::bps(1500));
        assert_eq!(
            FrameTrace::new(vec![], Duration::ZERO),
            Err(TraceProblem::Empty)
        );
        assert_eq!(
            FrameTrace::new(
                vec![frame(40, I, 1), frame(0, P, 1)],
                Duration::from_secs(1)
            ),
            Err(TraceProblem::Unsorted {
                time: 0.0,
                previous: 0.04
            })
        );
        assert!(matches!(
            FrameTrace::new(vec![frame(40, I, 1)], Duration::from_millis(39)),
            Err(TraceProblem::TooShort { .. })
        ));
    }

    #[test]
    fn scaling_to_a_rate_keeps_proportions() {
        let t = FrameTrace::synthetic(&SyntheticGop::paper001(), 1, &mut RngStream::from_seed(1));
        let half = t.scaled_to(Bitrate::kbps(520));
        assert_eq!(half.mean_rate(), Bitrate::kbps(520));
        assert_eq!(half.frames()[0].size, DataSize::bytes(5500));
        assert_eq!(half.frames()[1].size, DataSize::bytes(1000));
        assert_eq!(half.duration(), t.duration());
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = TraceError {
            file: "clip.csv".into(),
            line: 7,
            problem: TraceProblem::UnknownType("X".into()),
        };
        assert_eq!(
            e.to_string(),
            "clip.csv:7: unknown frame type `X`; expected I, P or B"
        );
        let whole = TraceError {
            line: 0,
            problem: TraceProblem::Empty,
            ..e
        };
        assert_eq!(
            whole.to_string(),
            "clip.csv: no frames; expected a header line and at least one frame"
        );
    }
}
