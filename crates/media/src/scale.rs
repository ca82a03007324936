//! The five media scales of paper 001 (MM_APP and MPEG_APP; PROTOCOLS.md §6): scale 0 sends the
//! least, scale 4 everything. For an MPEG stream a scale is a frame transmission policy, chosen
//! "keeping the dependencies in mind" (the paper's Table 2):
//!
//! | scale | pattern 1 `IBBPBBPBB` | pattern 2 `IBBPBBPBBPBB` |
//! |---|---|---|
//! | 4 | `I B B P B B P B B` | `I B B P B B P B B P B B` |
//! | 3 | `I . B P . B P . B` | `I . B P . B P . B P . B` |
//! | 2 | `I . . P . . P . .` | `I . . P . . P . . P . .` |
//! | 1 | `I . . P . . . . .` | `I . . P . . . . . . . .` |
//! | 0 | `I . . . . . . . .` | `I . . . . . . . . . . .` |
//!
//! Both follow one rule, which [`min_scales`] applies to any sequence of frames: each frame gets
//! the lowest scale that sends it: an I frame 0; the first P frame of its GOP 1, later P frames
//! 2; the last B frame of a run of B frames (the one just before the next anchor) 3, the other
//! B frames 4. A frame is sent at every scale from its own up. (PROTOCOLS.md §6.2 proposed a
//! different table, I + P1 at 1, I + P1 + P2 at 2, I + all P at 3; the paper's Table 2 is what
//! is implemented.)

use fairstream_core::{Bitrate, DataSize, Duration};

use crate::frame::{FrameType, GopPattern};
use crate::trace::FrameTrace;

/// How many scales there are (0 to [`MAX_SCALE`]).
pub const SCALES: usize = 5;
/// The highest scale: every frame is sent.
pub const MAX_SCALE: u8 = 4;

/// The lowest scale at which each frame of `kinds` (in display order) is sent.
///
/// A GOP starts at each I frame (frames before the first I form a GOP of their own). The last
/// frame of the sequence ends its run of B frames.
pub fn min_scales(kinds: &[FrameType]) -> Vec<u8> {
    let mut p_seen = false;
    kinds
        .iter()
        .enumerate()
        .map(|(i, &kind)| match kind {
            FrameType::I => {
                p_seen = false;
                0
            }
            FrameType::P => {
                let first = !p_seen;
                p_seen = true;
                if first { 1 } else { 2 }
            }
            FrameType::B => {
                let last_of_run = kinds.get(i + 1).is_none_or(|k| k.is_anchor());
                if last_of_run { 3 } else { 4 }
            }
        })
        .collect()
}

/// Whether a frame whose lowest scale is `min_scale` is sent at `scale`.
pub const fn is_sent(min_scale: u8, scale: u8) -> bool {
    min_scale <= scale
}

/// One row of Table 2: the letters of `pattern` sent at `scale`, `.` for a frame not sent.
pub fn policy(pattern: &GopPattern, scale: u8) -> String {
    let kinds = pattern.kinds();
    kinds
        .iter()
        .zip(min_scales(kinds))
        .map(|(k, m)| if is_sent(m, scale) { k.letter() } else { '.' })
        .collect()
}

/// The frames of `pattern` sent at each scale, as letters (row `s` for scale `s`).
pub fn policy_table(pattern: &GopPattern) -> [String; SCALES] {
    std::array::from_fn(|s| policy(pattern, s as u8))
}

/// The encoded rate of each scale: the bytes of the frames a pass of `trace` sends at that
/// scale over the pass's duration (payload only: no transport headers).
pub fn scale_rates(trace: &FrameTrace) -> [Bitrate; SCALES] {
    let kinds: Vec<FrameType> = trace.kinds().collect();
    let mins = min_scales(&kinds);
    std::array::from_fn(|s| {
        let bytes = trace
            .frames()
            .iter()
            .zip(&mins)
            .filter(|&(_, &m)| is_sent(m, s as u8))
            .map(|(f, _)| f.size.as_bytes())
            .sum();
        Bitrate::from_size_per(DataSize::bytes(bytes), trace.duration())
    })
}

/// The longest time between two consecutive frames sent at `scale` when the trace loops (the
/// seam included): the "longest possible frame transmission interval" of the paper's timeout
/// rule, at scale 0. `None` when no frame is sent at that scale.
pub fn max_interval(trace: &FrameTrace, scale: u8) -> Option<Duration> {
    let kinds: Vec<FrameType> = trace.kinds().collect();
    let mins = min_scales(&kinds);
    let mut sent = trace
        .frames()
        .iter()
        .zip(&mins)
        .filter(|&(_, &m)| is_sent(m, scale))
        .map(|(f, _)| f.time);
    let first = sent.next()?;
    let (mut prev, mut longest) = (first, Duration::ZERO);
    for t in sent {
        longest = longest.max(t - prev);
        prev = t;
    }
    let to_end = trace.duration().as_nanos().saturating_sub(prev.as_nanos());
    let seam = Duration::from_nanos(to_end.saturating_add(first.as_nanos()));
    Some(longest.max(seam))
}

#[cfg(test)]
mod tests {
    use fairstream_core::RngStream;

    use super::*;
    use crate::SyntheticGop;

    fn rows(pattern: &str) -> Vec<String> {
        let table = policy_table(&pattern.parse().unwrap());
        table.into_iter().rev().collect()
    }

    #[test]
    fn table2_pattern1() {
        // Scale 4 down to 0, as the paper prints them.
        assert_eq!(
            rows("IBBPBBPBB"),
            [
                "IBBPBBPBB",
                "I.BP.BP.B",
                "I..P..P..",
                "I..P.....",
                "I........"
            ]
        );
    }

    #[test]
    fn table2_pattern2() {
        assert_eq!(
            rows("IBBPBBPBBPBB"),
            [
                "IBBPBBPBBPBB",
                "I.BP.BP.BP.B",
                "I..P..P..P..",
                "I..P........",
                "I..........."
            ]
        );
    }

    #[test]
    fn the_rule_on_other_patterns() {
        // One B per run: it is the run's last, sent from scale 3; three B: only the last at 3.
        assert_eq!(rows("IBPBP"), ["IBPBP", "IBPBP", "I.P.P", "I.P..", "I...."]);
        assert_eq!(rows("IBBBP"), ["IBBBP", "I..BP", "I...P", "I...P", "I...."]);
        assert_eq!(rows("I"), ["I"; 5]);
        // Over a sequence, each I starts a new GOP.
        use FrameType::*;
        assert_eq!(min_scales(&[I, P, P, I, P, B]), [0, 1, 2, 0, 1, 3]);
        assert_eq!(min_scales(&[B, P, I]), [3, 1, 0]);
        assert!(is_sent(0, 0) && is_sent(3, 4) && !is_sent(4, 3));
    }

    #[test]
    fn rates_of_the_paper001_stream_per_scale() {
        let t = FrameTrace::synthetic(&SyntheticGop::paper001(), 1, &mut RngStream::from_seed(1));
        // Per 0.3 s GOP: I 11 000 B; + P 8000; + P 8000; + 3 B of 2000; + 3 more B.
        let kbps: Vec<f64> = scale_rates(&t)
            .iter()
            .map(|r| r.as_bps_f64() / 1e3)
            .collect();
        let want = [
            11_000.0 * 8.0 / 300.0,
            19_000.0 * 8.0 / 300.0,
            27_000.0 * 8.0 / 300.0,
            33_000.0 * 8.0 / 300.0,
            39_000.0 * 8.0 / 300.0,
        ];
        for (got, want) in kbps.iter().zip(want) {
            assert!((got - want).abs() < 0.001, "{got} vs {want}");
        }
    }

    #[test]
    fn longest_interval_per_scale_includes_the_seam() {
        let t = FrameTrace::synthetic(&SyntheticGop::paper001(), 2, &mut RngStream::from_seed(1));
        let ms = |s| max_interval(&t, s).unwrap().as_millis_f64().round();
        // Scale 0: I frames 300 ms apart; 1: I at 0, P at 100 ms, next I at 300 ms.
        assert_eq!((ms(0), ms(1), ms(2), ms(4)), (300.0, 200.0, 100.0, 33.0));
        assert_eq!(ms(3), 67.0);
        let no_i = FrameTrace::new(
            vec![crate::Frame {
                time: Duration::ZERO,
                kind: FrameType::B,
                size: DataSize::bytes(1),
            }],
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(max_interval(&no_i, 0), None);
        assert_eq!(max_interval(&no_i, 4), Some(Duration::from_secs(1)));
    }
}
