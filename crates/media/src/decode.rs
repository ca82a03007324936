//! Which frames a decoder can show, given which arrived and the MPEG dependencies (display
//! order, open GOPs):
//!
//! - an I frame is decodable when it arrived;
//! - a P frame when it arrived and the anchor (I or P) before it is decodable;
//! - a B frame when it arrived and the anchors before and after it are decodable.
//!
//! So a lost I frame makes every P and B frame of its GOP undecodable, and also the B frames
//! at the end of the GOP before it, which are predicted from it (an open GOP); a lost P frame
//! makes the later P and B frames of its GOP undecodable and the B frames just before it; a
//! lost B frame affects only itself. A reference outside the sequence (a P or B frame before
//! the first anchor, B frames after the last) is not required: the sequence is taken as a
//! window on a longer stream whose frames outside it are not judged.

use crate::frame::FrameType;

/// Whether each frame of `kinds` is decodable when `arrived[i]` says whether frame `i` arrived
/// (both in display order; a missing `arrived` entry counts as not arrived).
pub fn decodable(kinds: &[FrameType], arrived: &[bool]) -> Vec<bool> {
    let mut ok = vec![false; kinds.len()];
    Decoder::default().advance(
        |i| kinds[i],
        |i| arrived.get(i).copied().unwrap_or(false),
        kinds.len(),
        true,
        |i, d| ok[i] = d,
    );
    ok
}

/// The rules above as a stream: frames are fed in display order and each is decided once its
/// references are known, an anchor at once, a B frame when the anchor after it is decided (or
/// when the sequence is declared finished). A player decides frames as they play with it,
/// without keeping or rescanning the sequence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Decoder {
    /// The next frame not yet fed.
    next: usize,
    /// Whether the last anchor fed is decodable (`None`: no anchor yet).
    before: Option<bool>,
    /// The first B frame waiting for the anchor after it.
    b_start: usize,
}

impl Decoder {
    /// Feeds frames from the next one not yet fed up to `end` (exclusive), frame `i` of type
    /// `kind(i)` having arrived when `got(i)`; `out(i, decodable)` is called once per frame as
    /// it is decided. With `finished`, the B frames after the last anchor are decided too (their
    /// later reference lies outside the sequence and is not required). `got` is asked about
    /// waiting B frames only when they are decided.
    pub fn advance(
        &mut self,
        kind: impl Fn(usize) -> FrameType,
        got: impl Fn(usize) -> bool,
        end: usize,
        finished: bool,
        mut out: impl FnMut(usize, bool),
    ) {
        for i in self.next..end {
            let ok = match kind(i) {
                FrameType::B => continue,
                FrameType::I => got(i),
                FrameType::P => got(i) && self.before.unwrap_or(true),
            };
            let before = self.before.unwrap_or(true);
            for b in self.b_start..i {
                out(b, got(b) && before && ok);
            }
            out(i, ok);
            self.before = Some(ok);
            self.b_start = i + 1;
        }
        self.next = self.next.max(end);
        if finished {
            let before = self.before.unwrap_or(true);
            for b in self.b_start..self.next {
                out(b, got(b) && before);
            }
            self.b_start = self.next;
        }
    }
}

/// How many frames arrived and how many of them are decodable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeCounts {
    /// Frames in the sequence.
    pub frames: usize,
    /// Frames that arrived.
    pub arrived: usize,
    /// Frames a decoder can show.
    pub decodable: usize,
}

/// The counts of [`decodable`] for one sequence.
pub fn counts(kinds: &[FrameType], arrived: &[bool]) -> DecodeCounts {
    let ok = decodable(kinds, arrived);
    DecodeCounts {
        frames: kinds.len(),
        arrived: (0..kinds.len())
            .filter(|&i| arrived.get(i).copied().unwrap_or(false))
            .count(),
        decodable: ok.iter().filter(|&&d| d).count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GopPattern;

    /// Two GOPs of IBBPBBPBB and the next I frame: 19 frames.
    fn stream() -> Vec<FrameType> {
        let gop = GopPattern::ibbpbbpbb();
        let mut k: Vec<FrameType> = gop.kinds().repeat(2);
        k.push(FrameType::I);
        k
    }

    fn lose(n: usize, lost: &[usize]) -> Vec<bool> {
        (0..n).map(|i| !lost.contains(&i)).collect()
    }

    /// The frames that are not decodable.
    fn undecodable(lost: &[usize]) -> Vec<usize> {
        let k = stream();
        let ok = decodable(&k, &lose(k.len(), lost));
        (0..k.len()).filter(|&i| !ok[i]).collect()
    }

    #[test]
    fn everything_arrived_everything_decodes() {
        assert_eq!(undecodable(&[]), Vec::<usize>::new());
    }

    #[test]
    fn a_lost_b_frame_affects_only_itself() {
        assert_eq!(undecodable(&[4]), [4]);
        assert_eq!(undecodable(&[1, 17]), [1, 17]);
    }

    #[test]
    fn a_lost_i_frame_takes_its_gop_and_the_open_b_frames_before_it() {
        // The first GOP's I (frame 0): all of GOP 1; GOP 2 (I at 9) is untouched.
        assert_eq!(undecodable(&[0]), (0..9).collect::<Vec<_>>());
        // The second GOP's I (frame 9): GOP 2 up to the next I, and B 7, 8 of GOP 1, which are
        // predicted from it.
        let mut want = vec![7, 8];
        want.extend(9..18);
        assert_eq!(undecodable(&[9]), want);
    }

    #[test]
    fn a_lost_p_frame_takes_the_later_frames_of_its_gop_and_the_b_frames_before_it() {
        // P 3: P 6 and every B of the GOP (1, 2 before it; 4, 5, 7, 8 after), not the I frames.
        assert_eq!(undecodable(&[3]), [1, 2, 3, 4, 5, 6, 7, 8]);
        // P 6: B 4, 5 (before), B 7, 8 (after); P 3 and B 1, 2 stay decodable.
        assert_eq!(undecodable(&[6]), [4, 5, 6, 7, 8]);
    }

    #[test]
    fn frames_never_sent_count_as_not_arrived() {
        // Scale 2 of paper 001 sends I P P: B frames are "lost" but nothing else suffers.
        let k = stream();
        let sent: Vec<bool> = k.iter().map(|f| f.is_anchor()).collect();
        let ok = decodable(&k, &sent);
        assert_eq!(ok, sent);
        let c = counts(&k, &sent);
        assert_eq!((c.frames, c.arrived, c.decodable), (19, 7, 7));
        // A short `arrived` leaves the rest not arrived.
        assert_eq!(counts(&k, &[true]).decodable, 1);
    }

    #[test]
    fn references_outside_the_window_are_not_required() {
        use FrameType::*;
        assert_eq!(decodable(&[B, P, B], &[true; 3]), [true; 3]);
        assert_eq!(decodable(&[B, P, B], &[true, false, true]), [false; 3]);
    }
}
