//! The playout model of a streaming player (paper 000, Section II: how RealPlayer buffers,
//! plays, stalls): pure and time-driven, fed frame arrivals and the time.
//!
//! A clip is `frames` frames, one every `frame_interval`. The player starts **buffering**: it
//! plays once the frames received ahead of the playout point cover `prebuffer` of media (or the
//! clip's last frame has arrived). **Playing**, it shows frame `pos` at its turn and moves on
//! one frame interval later; a frame not there at its turn is skipped (lost, or late: it may
//! still arrive and is then counted late). When the frame whose turn it is has not arrived and
//! no later frame has either (the buffer is empty), playout **stalls**: it halts until
//! `rebuffer` of media is buffered again, or until `max_stall` has passed with at least one
//! frame buffered (paper 000: "halts the clip playback for up to 20 seconds while the buffer is
//! filled again"); a stall that reaches `max_stall` with nothing buffered lasts until the next
//! frame arrives. The clip is **finished** when its last frame's turn has passed.
//!
//! Media buffered = frames from the playout point to the highest frame received or seen in part
//! ([`Playout::seen`]: a piece of it arrived), whether or not the ones between arrived (a lost
//! frame is a hole that plays as a skip).
//!
//! Statistics ([`PlayoutStats`]): frames delivered (arrived, once each), late (arrived after
//! their turn), played on time, decodable (by [`crate::decode`]'s rules over the frames that were
//! there at their turn), stalls (count and time, the one in progress up to `now`), start-up delay
//! (from `start` to the first frame played), and the RFC 3550 inter-arrival jitter of frames,
//! with a frame's media time (index × interval) as its timestamp:
//! `J += (|D| − J)/16`, `D` the difference of consecutive frames' transit times.
//!
//! The driver calls [`Playout::advance`] at every event (or at [`Playout::next_event`]) and
//! [`Playout::arrive`] for each complete frame; both take `now` and never go back in time.
//! Per-frame state is one byte per frame of the clip, allocated when built; or, for a live
//! stream of no set length ([`PlayoutConfig::window`]), one byte per frame of a window that
//! slides with the playout point: frames far enough behind it are forgotten (a frame arriving
//! from there is counted delivered and late, but a repeat of it cannot be told apart), and a
//! frame arriving more than the window ahead is not kept.

use fairstream_core::{Duration, Instant};

use crate::decode::Decoder;
use crate::frame::FrameType;

/// Parameters of a player.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayoutConfig {
    /// When the player starts (the start-up delay counts from here).
    pub start: Instant,
    /// Time between frames (one over the frame rate).
    pub frame_interval: Duration,
    /// Frames in the clip.
    pub frames: u64,
    /// Media buffered before playout starts.
    pub prebuffer: Duration,
    /// Media buffered before a stalled playout resumes.
    pub rebuffer: Duration,
    /// Longest a stall waits for `rebuffer` when something is buffered.
    pub max_stall: Duration,
    /// Frame types, repeating (frame k is `kinds[k % kinds.len()]`); empty: all I frames.
    pub kinds: Vec<FrameType>,
    /// `None`: keep a byte per frame of the clip. `Some(w)`: keep the `w` frames from just
    /// behind the playout point on, for a live stream (`frames` may then be `u64::MAX`); `w`
    /// must cover the media buffered ahead of the playout point (prebuffer and stalls).
    pub window: Option<u64>,
}

/// What the player is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayState {
    /// Filling the buffer before the first frame plays.
    Buffering,
    /// Playing frames at their turns.
    Playing,
    /// Halted on an empty buffer, refilling.
    Stalled,
    /// Every frame's turn has passed.
    Finished,
}

/// Counters a player reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlayoutStats {
    /// Frames that arrived (each once, late ones included).
    pub delivered: u64,
    /// Frames that arrived after their turn.
    pub late: u64,
    /// Frames whose turn has passed.
    pub played: u64,
    /// Frames there at their turn.
    pub on_time: u64,
    /// Frames there at their turn whose references were too (decodable).
    pub decodable: u64,
    /// Stalls begun.
    pub stalls: u64,
    /// Time spent stalled (the stall in progress counted up to `now`).
    pub stall_time: Duration,
    /// From the start to the first frame played (`None`: not yet playing).
    pub startup_delay: Option<Duration>,
    /// RFC 3550 inter-arrival jitter of frames.
    pub jitter: Duration,
    /// Media buffered ahead of the playout point.
    pub buffered: Duration,
    /// The player's state.
    pub state: PlayState,
}

/// Per-frame flags.
const ARRIVED: u8 = 1;
const ON_TIME: u8 = 2;

/// A player's playout buffer and clock.
#[derive(Clone, Debug)]
pub struct Playout {
    config: PlayoutConfig,
    /// Per-frame flags: frame k at index k, or with a window at `k % flags.len()` for k in
    /// `[base, base + flags.len())`.
    flags: Vec<u8>,
    /// The lowest frame whose flags are kept (0 without a window).
    base: u64,
    /// With a window: how far behind the playout point frames are still read (the B frames the
    /// decoder holds until the anchor after them plays).
    lag: u64,
    state: PlayState,
    /// The next frame to play.
    pos: u64,
    /// When frame `pos` plays (while playing).
    next_play: Instant,
    /// Highest frame received (+1; 0 for none).
    received_end: u64,
    stall_start: Instant,
    stalls: u64,
    stall_time: Duration,
    startup: Option<Duration>,
    delivered: u64,
    late: u64,
    on_time: u64,
    /// Frames decided decodable so far, and the decoder deciding them as they play.
    decodable: u64,
    decoder: Decoder,
    /// Jitter estimate and previous transit, seconds.
    jitter: f64,
    transit: Option<f64>,
}

impl Playout {
    /// A player buffering from `config.start`.
    pub fn new(config: PlayoutConfig) -> Self {
        let kept = config.window.map_or(config.frames, |w| w.max(1));
        let frames = usize::try_from(kept).unwrap_or(usize::MAX);
        // The longest run of B frames: a decoder holds at most that many behind the playout
        // point (the anchor before them has played).
        let mut run = 0u64;
        let mut longest = 0u64;
        for k in config.kinds.iter().chain(config.kinds.iter()) {
            run = if *k == FrameType::B { run + 1 } else { 0 };
            longest = longest.max(run);
        }
        Self {
            flags: vec![0; frames],
            base: 0,
            lag: longest.min(config.kinds.len() as u64) + 1,
            state: PlayState::Buffering,
            pos: 0,
            next_play: config.start,
            received_end: 0,
            stall_start: config.start,
            stalls: 0,
            stall_time: Duration::ZERO,
            startup: None,
            delivered: 0,
            late: 0,
            on_time: 0,
            decodable: 0,
            decoder: Decoder::default(),
            jitter: 0.0,
            transit: None,
            config,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &PlayoutConfig {
        &self.config
    }

    /// The state after the last call.
    pub fn state(&self) -> PlayState {
        self.state
    }

    /// Frames buffered ahead of the playout point.
    pub fn buffered_frames(&self) -> u64 {
        self.received_end.saturating_sub(self.pos)
    }

    /// Media buffered ahead of the playout point.
    pub fn buffered(&self) -> Duration {
        self.config.frame_interval * self.buffered_frames()
    }

    /// The next frame to play.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Whether frame `k` has arrived.
    pub fn has_arrived(&self, k: u64) -> bool {
        self.flag(k) & ARRIVED != 0
    }

    /// Where frame `k`'s flags are kept, if they are.
    fn slot(&self, k: u64) -> Option<usize> {
        let len = self.flags.len() as u64;
        if self.config.window.is_some() {
            (k >= self.base && k - self.base < len).then(|| (k % len) as usize)
        } else {
            usize::try_from(k).ok().filter(|&i| i < self.flags.len())
        }
    }

    fn flag(&self, k: u64) -> u8 {
        self.slot(k).map_or(0, |i| self.flags[i])
    }

    /// With a window, forgets the frames more than `lag` behind the playout point.
    fn slide(&mut self) {
        if self.config.window.is_none() {
            return;
        }
        let base = self.pos.saturating_sub(self.lag);
        let len = self.flags.len() as u64;
        // A jump past the whole window clears all of it.
        let from = self.base.max(base.saturating_sub(len));
        for k in from..base {
            self.flags[(k % len) as usize] = 0;
        }
        self.base = self.base.max(base);
    }

    /// Frames covering `d` of media, to the nearest frame (at least one): an interval of whole
    /// nanoseconds (66 666 666 ns at 15 frame/s) need not divide `d` exactly.
    fn frames_in(&self, d: Duration) -> u64 {
        let i = self.config.frame_interval.as_nanos().max(1);
        ((d.as_nanos() + i / 2) / i).max(1)
    }

    /// When the next time-driven change is due (a frame's turn, or the end of a stall's
    /// `max_stall` with something buffered), if any.
    pub fn next_event(&self) -> Option<Instant> {
        match self.state {
            PlayState::Playing => Some(self.next_play),
            PlayState::Stalled if self.buffered_frames() > 0 => {
                Some(self.stall_start.saturating_add(self.config.max_stall))
            }
            _ => None,
        }
    }

    /// Plays out whatever is due by `now`.
    pub fn advance(&mut self, now: Instant) {
        loop {
            match self.state {
                PlayState::Playing if self.next_play <= now => self.turn(),
                PlayState::Stalled if self.buffered_frames() > 0 => {
                    let deadline = self.stall_start.saturating_add(self.config.max_stall);
                    if deadline > now {
                        return;
                    }
                    self.play_from(deadline);
                }
                _ => return,
            }
        }
    }

    /// Frame `pos`'s turn at `next_play`: played, skipped, or a stall.
    fn turn(&mut self) {
        if self.pos >= self.config.frames {
            self.state = PlayState::Finished;
            self.decide(true);
            return;
        }
        if self.buffered_frames() == 0 {
            self.state = PlayState::Stalled;
            self.stall_start = self.next_play;
            self.stalls += 1;
            return;
        }
        if let Some(i) = self.slot(self.pos)
            && self.flags[i] & ARRIVED != 0
        {
            self.flags[i] |= ON_TIME;
            self.on_time += 1;
        }
        self.pos += 1;
        self.next_play = self.next_play.saturating_add(self.config.frame_interval);
        self.decide(false);
        self.slide();
    }

    /// Feeds the frames played so far to the decoder (all of them when `finished`).
    fn decide(&mut self, finished: bool) {
        let end = usize::try_from(self.pos).unwrap_or(usize::MAX);
        let end = if self.config.window.is_some() {
            end
        } else {
            end.min(self.flags.len())
        };
        let mut decided = 0u64;
        let this = &*self;
        let mut decoder = this.decoder;
        let kinds = &this.config.kinds;
        decoder.advance(
            |i| {
                if kinds.is_empty() {
                    FrameType::I
                } else {
                    kinds[i % kinds.len()]
                }
            },
            |i| this.flag(i as u64) & ON_TIME != 0,
            end,
            finished,
            |_, ok| decided += u64::from(ok),
        );
        self.decoder = decoder;
        self.decodable += decided;
    }

    /// Starts (or resumes) playing at `t`.
    fn play_from(&mut self, t: Instant) {
        match self.state {
            PlayState::Buffering => self.startup = Some(t.saturating_since(self.config.start)),
            PlayState::Stalled => self.stall_time += t.saturating_since(self.stall_start),
            _ => {}
        }
        self.state = PlayState::Playing;
        self.next_play = t;
    }

    /// Whether a buffering or stalled player may play at `now`.
    fn may_play(&self, now: Instant) -> bool {
        let buffered = self.buffered_frames();
        if buffered == 0 {
            return false;
        }
        let need = match self.state {
            PlayState::Buffering => self.config.prebuffer,
            PlayState::Stalled => {
                if now >= self.stall_start.saturating_add(self.config.max_stall) {
                    return true;
                }
                self.config.rebuffer
            }
            _ => return false,
        };
        buffered >= self.frames_in(need) || self.received_end >= self.config.frames
    }

    /// Frame `k` arrived complete at `now` (a repeat, or a frame beyond the clip, is ignored).
    pub fn arrive(&mut self, now: Instant, k: u64) {
        self.advance(now);
        if k >= self.config.frames {
            return;
        }
        match self.slot(k) {
            Some(i) if self.flags[i] & ARRIVED != 0 => return,
            Some(i) => self.flags[i] |= ARRIVED,
            // Forgotten behind the window: delivered, and late (its turn is long past).
            None if k < self.base => {}
            // More than the window ahead: not kept.
            None => return,
        }
        self.delivered += 1;
        // RFC 3550 §6.4.1 with the frame's media time as its timestamp.
        let transit = now.as_secs_f64() - (self.config.frame_interval * k).as_secs_f64();
        if let Some(prev) = self.transit {
            let d = (transit - prev).abs();
            self.jitter += (d - self.jitter) / 16.0;
        }
        self.transit = Some(transit);
        if k < self.pos {
            self.late += 1;
            return;
        }
        self.extend(now, k);
    }

    /// A piece of frame `k` arrived at `now` (the frame may still be incomplete): the buffer
    /// reaches at least to it.
    pub fn seen(&mut self, now: Instant, k: u64) {
        self.advance(now);
        if k >= self.pos && k < self.config.frames {
            self.extend(now, k);
        }
    }

    /// The buffer reaches to frame `k` (`k >= pos`): a buffering or stalled player may play.
    fn extend(&mut self, now: Instant, k: u64) {
        self.received_end = self.received_end.max(k + 1);
        if self.may_play(now) {
            self.play_from(now);
            self.advance(now);
        }
    }

    /// Frames there at their turn whose references were too ([`crate::decode`]'s rules), decided as
    /// they play (a B frame once the anchor after it has played).
    pub fn decodable(&self) -> u64 {
        self.decodable
    }

    /// The statistics at `now` (after [`Playout::advance`] to `now`).
    pub fn stats(&self, now: Instant) -> PlayoutStats {
        let ongoing = if self.state == PlayState::Stalled {
            now.saturating_since(self.stall_start)
        } else {
            Duration::ZERO
        };
        PlayoutStats {
            delivered: self.delivered,
            late: self.late,
            played: self.pos,
            on_time: self.on_time,
            decodable: self.decodable(),
            stalls: self.stalls,
            stall_time: self.stall_time + ongoing,
            startup_delay: self.startup,
            jitter: Duration::from_secs_f64(self.jitter),
            buffered: self.buffered(),
            state: self.state,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode;

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// 10 frames/s, 30 frames, prebuffer 1 s, rebuffer 0.5 s, max stall 20 s.
    fn player() -> Playout {
        Playout::new(PlayoutConfig {
            start: t(0),
            frame_interval: ms(100),
            frames: 30,
            prebuffer: ms(1000),
            rebuffer: ms(500),
            max_stall: Duration::from_secs(20),
            kinds: vec![],
            window: None,
        })
    }

    #[test]
    fn a_draining_buffer_stalls_refills_and_resumes() {
        let mut p = player();
        // Frames 0..10 arrive one every 50 ms from 50 ms: the 10th (1 s of media) at 500 ms.
        for k in 0..10 {
            p.arrive(t(50 + 50 * k), k);
        }
        assert_eq!(p.state(), PlayState::Playing);
        // Playout started at 500 ms: frame k plays at 500 + 100k ms. Frames 0..9 play at
        // 500..1400; frame 10's turn at 1500 finds the buffer empty: a stall.
        p.advance(t(1499));
        assert_eq!((p.state(), p.position()), (PlayState::Playing, 10));
        p.advance(t(1500));
        assert_eq!(p.state(), PlayState::Stalled);
        // Frames 10..15 (0.5 s of media = rebuffer) arrive at 2000..2400: resume at 2400.
        for k in 10..14 {
            p.arrive(t(2000 + 100 * (k - 10)), k);
            assert_eq!(p.state(), PlayState::Stalled);
        }
        p.arrive(t(2400), 14);
        assert_eq!(p.state(), PlayState::Playing);
        // Frames 10..14 play at 2400..2800; frame 15's turn at 2900 stalls again.
        p.advance(t(3000));
        assert_eq!((p.state(), p.position()), (PlayState::Stalled, 15));
        // The rest (15..30) arrive at 4000: 1.5 s ≥ rebuffer, resume at 4000, finish after
        // frame 29 plays at 5400, at 5500.
        for k in 15..30 {
            p.arrive(t(4000), k);
        }
        p.advance(t(6000));
        let s = p.stats(t(6000));
        assert_eq!(s.state, PlayState::Finished);
        assert_eq!(s.startup_delay, Some(ms(500)));
        assert_eq!(s.stalls, 2);
        // 1500 → 2400 and 2900 → 4000.
        assert_eq!(s.stall_time, ms(900 + 1100));
        assert_eq!((s.delivered, s.played, s.on_time, s.late), (30, 30, 30, 0));
        assert_eq!(s.decodable, 30);
        // Wall time = start-up + media + stalls.
        assert_eq!(ms(500) + ms(100) * 30 + s.stall_time, ms(5500));
    }

    #[test]
    fn holes_are_skipped_late_frames_counted_and_stall_capped() {
        let mut p = player();
        // Frames 0..=10 but 3, frame k at 10(k + 1) ms: at 100 ms frames up to 9 are there,
        // 1 s of media counting the hole, and playout starts.
        for k in (0..11).filter(|&k| k != 3) {
            p.arrive(t(10 * (k + 1)), k);
        }
        assert_eq!(p.state(), PlayState::Playing);
        assert_eq!(p.stats(t(100)).startup_delay, Some(ms(100)));
        // Frame 3's turn (400 ms) passes without it; it arrives at 450: late.
        p.advance(t(450));
        p.arrive(t(450), 3);
        let s = p.stats(t(450));
        assert_eq!((s.delivered, s.late, s.on_time), (11, 1, 3));
        // Frames 0..=10 play by 1100; frame 11's turn at 1200 stalls. One frame at 1300 is
        // less than the rebuffer; max_stall (20 s) resumes at 21.2 s with what is there.
        p.advance(t(1200));
        assert_eq!(p.state(), PlayState::Stalled);
        p.arrive(t(1300), 11);
        assert_eq!(p.next_event(), Some(t(21_200)));
        p.advance(t(21_199));
        assert_eq!(p.state(), PlayState::Stalled);
        p.advance(t(21_200));
        assert_eq!(p.state(), PlayState::Playing);
        assert_eq!(p.stats(t(21_200)).stall_time, Duration::from_secs(20));
        // Frame 11 plays at 21.2 s; frame 12's turn at 21.3 s stalls with nothing buffered,
        // and a stall with nothing buffered has no deadline.
        p.advance(t(21_300));
        assert_eq!((p.state(), p.next_event()), (PlayState::Stalled, None));
        assert_eq!(p.stats(t(22_300)).stall_time, Duration::from_secs(21));
        assert_eq!(p.stats(t(22_300)).stalls, 2);
    }

    #[test]
    fn decodable_follows_the_gop_rules_and_jitter_follows_rfc3550() {
        use FrameType::*;
        let mut p = Playout::new(PlayoutConfig {
            kinds: vec![I, B, B, P],
            frames: 8,
            prebuffer: ms(100),
            ..player().config().clone()
        });
        // Frame 0 (I) lost; the rest arrive at their media times + 50 ms exactly (no jitter).
        for k in 1..8 {
            p.arrive(t(50 + 100 * k), k);
        }
        assert_eq!(p.stats(t(850)).jitter, Duration::ZERO);
        p.advance(t(2000));
        // Played from 150 ms (frame 1 buffered) — frame 0's turn first, a hole. I lost: B 1,
        // B 2, P 3 undecodable; second GOP (4..8) fine: 4 decodable of 8, the same as the
        // offline rules say.
        let s = p.stats(t(2000));
        assert_eq!(
            (s.state, s.on_time, s.decodable),
            (PlayState::Finished, 7, 4)
        );
        let there: Vec<bool> = (0..8).map(|k| k != 0).collect();
        let offline = decode::counts(&[I, B, B, P, I, B, B, P], &there).decodable;
        assert_eq!(offline, 4);
        // A frame 16 ms later than its predecessor's transit: J = 16/16 ms = 1 ms.
        let mut q = player();
        q.arrive(t(0), 0);
        q.arrive(t(116), 1);
        let j = q.stats(t(116)).jitter.as_secs_f64();
        assert!((j - 0.001).abs() < 1e-9, "{j}");
    }

    #[test]
    fn a_piece_of_a_frame_extends_the_buffer_without_delivering_it() {
        let mut p = player();
        // Pieces of frames 0..=9 only: 1 s of media buffered, playout starts at 90 ms (frame 0
        // plays as a hole at once, 0.9 s left); none delivered.
        for k in 0..10 {
            p.seen(t(10 * k), k);
        }
        let s = p.stats(t(90));
        assert_eq!(
            (s.state, s.delivered, s.buffered),
            (PlayState::Playing, 0, ms(900))
        );
        // Their turns pass as holes; the clip's last frame seen in part lets a stall resume.
        p.advance(t(1090));
        assert_eq!(p.state(), PlayState::Stalled);
        p.seen(t(1200), 29);
        assert_eq!(p.state(), PlayState::Playing);
        assert_eq!(p.stats(t(1200)).on_time, 0);
    }

    #[test]
    fn a_window_plays_a_stream_longer_than_it_with_the_same_counts() {
        use FrameType::*;
        // The same 3000 frames (IBBP, 10 frames/s), every 7th lost and every 11th a second
        // late, played whole and through a window of 40 frames (4 s of media, more than the 1 s
        // buffered): the same statistics.
        let kinds = vec![I, B, B, P];
        let config = |window| PlayoutConfig {
            kinds: kinds.clone(),
            frames: 3000,
            window,
            ..player().config().clone()
        };
        let mut whole = Playout::new(config(None));
        let mut windowed = Playout::new(config(Some(40)));
        for k in 0..3000u64 {
            if k % 7 == 3 {
                continue;
            }
            let at = t(100 * k + if k % 11 == 5 { 1000 } else { 0 });
            whole.arrive(at, k);
            windowed.arrive(at, k);
        }
        let end = t(400_000);
        whole.advance(end);
        windowed.advance(end);
        let (a, b) = (whole.stats(end), windowed.stats(end));
        assert_eq!(a, b);
        assert!(
            a.decodable > 1000 && a.stalls > 0 && a.delivered > 2500,
            "{a:?}"
        );
        assert_eq!(windowed.flags.len(), 40);
        // A live stream without end never finishes, and a frame far ahead is not kept.
        let mut live = Playout::new(PlayoutConfig {
            frames: u64::MAX,
            ..config(Some(40))
        });
        for k in 0..20 {
            live.arrive(t(100 * k), k);
        }
        live.arrive(t(2000), 1_000);
        live.advance(t(3000));
        let s = live.stats(t(3000));
        assert_eq!((s.delivered, s.state), (20, PlayState::Stalled));
    }
}
