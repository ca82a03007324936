//! The media-scaling sender (paper 001, Section 2; PROTOCOLS.md §6) as a sans-IO [`Endpoint`]:
//! it sends frames at the scale the receiver last reported.
//!
//! - **MM_APP** ([`MmAppConfig`]): one fixed-size frame per packet, frame k+1 leaving
//!   `size/rate[scale]` after frame k (with `random`, that interval times a factor drawn
//!   uniformly in [0.5, 1.5) when frame k leaves); the rate is the one in force when frame k+1
//!   is due, so a scale change moves the next departure at once.
//! - **MPEG_APP** ([`MpegAppConfig`]): at each frame time of the trace (looped, one pass after
//!   another) the frame is sent if the current scale's policy sends it (paper 001's Table 2, see
//!   [`fairstream_media::scale`]), split into packets of at most `max_packet` on the wire that
//!   leave back to back; a frame the policy skips sends nothing.
//!
//! Both start at the initial scale (0) and adopt the scale of each newer report. Reports are
//! checked before use; one is ignored (and counted in [`MediaSender::ignored_reports`]) when it
//! names a packet never sent (`highest_seq` not below the packets sent, or `t_echo` outside the
//! send times so far), when it is not newer than the last report used (its number), or when its
//! scale is above 4. A report's RTT sample `now − t_echo − t_delay` feeds the smoothed RTT
//! (gain [`ScalingConfig::rtt_gain`]) that data packets carry to the receiver; a sample that is
//! not positive is not used.
//!
//! If no report is used for `max(feedback_timeout_rtts × RTT, min_feedback_timeout)` after the
//! first packet or the last report, the sender halves its scale itself and again each such time
//! (PROTOCOLS.md §6.2): a receiver that is heard no more cannot keep the sender at a high rate.
//!
//! The frame decision is taken in `handle_timeout` at the frame's time (where metrics can be
//! recorded); `poll_transmit` then emits the frame's packets. Frames due at the same instant
//! are taken one per `handle_timeout` call (`poll_timeout` reports the same instant again).
//! Nothing is allocated per packet: the trace is built once, with each frame's lowest scale.
//!
//! [`ScalingConfig::rtt_gain`]: super::ScalingConfig::rtt_gain

use crate::media_scaling::metrics::SCALE;
use crate::metric::{FEEDBACK_TIMEOUT, FRAMES_SENT, RTT, SRTT};
use fairstream_core::{Bitrate, DataSize, Duration, FlowId, Instant, RngStream};
use fairstream_media::{FrameTrace, FrameType, scale};

use super::config::{DATA_HEADERS, MAX_SCALE, MmAppConfig, MpegAppConfig, Rule, SCALES, fragments};
use crate::media_scaling::{MediaData, MediaFeedback};
use crate::{Direction, Endpoint, EndpointStats, FlowCtx, Header, MetricSink, Packet};

/// MM_APP's frames: fixed size, per-scale rates.
#[derive(Clone, Debug)]
struct Fixed {
    rates: [Bitrate; SCALES],
    size: DataSize,
    random: bool,
    rng: RngStream,
    /// The dither factor of the interval after the last frame.
    factor: f64,
    last_frame: Option<Instant>,
}

/// MPEG_APP's frames: a trace, looped.
#[derive(Clone, Debug)]
struct Frames {
    trace: FrameTrace,
    /// Each frame's lowest scale.
    mins: Vec<u8>,
    payload: u64,
    /// The next frame of the pass and the pass it belongs to.
    next: usize,
    pass: u64,
    skipped: u64,
}

#[derive(Clone, Debug)]
enum Source {
    Fixed(Fixed),
    Frames(Box<Frames>),
}

/// A frame being sent: what is left of it.
#[derive(Clone, Copy, Debug)]
struct Current {
    frame: u64,
    kind: Option<FrameType>,
    scale: u8,
    /// Payload bytes not yet sent.
    remaining: u64,
    /// Payload bytes per packet (all but the last full).
    per_packet: u64,
    fragment: u16,
    fragments: u16,
}

/// A media-scaling sender (MM_APP or MPEG_APP).
#[derive(Clone, Debug)]
pub struct MediaSender {
    flow: FlowId,
    rule: Rule,
    start: Instant,
    stop: Option<Instant>,
    source: Source,
    scale: u8,
    /// Smoothed RTT, seconds (`None` before the first sample).
    srtt: Option<f64>,
    next_seq: u64,
    frames: u64,
    current: Option<Current>,
    first_sent: Option<Instant>,
    last_sent: Option<Instant>,
    last_report: Option<u32>,
    /// Since when no report has been used (the first packet, then the last report).
    silent_since: Option<Instant>,
    started: bool,
    stats: EndpointStats,
    ignored_reports: u64,
    feedback_timeouts: u64,
}

impl MediaSender {
    /// The MM_APP sender of flow `ctx` (draws its dither from the flow's random stream when
    /// `random`).
    pub fn mm_app(ctx: &FlowCtx, config: &MmAppConfig) -> Self {
        let rng = ctx.rng.clone();
        let source = Source::Fixed(Fixed {
            rates: config.rates.map(|r| r.max(Bitrate::bps(1))),
            size: config.packet(),
            random: config.random,
            rng,
            factor: 1.0,
            last_frame: None,
        });
        let rule = Rule::new(&config.scaling, config.max_interval());
        Self::new(ctx, rule, source)
    }

    /// The MPEG_APP sender of flow `ctx` sending `trace` (see [`MpegAppConfig::build_trace`]),
    /// the trace's time 0 at the flow's start.
    pub fn mpeg_app(ctx: &FlowCtx, config: &MpegAppConfig, trace: FrameTrace) -> Self {
        let rule = Rule::new(&config.scaling, config.max_interval(&trace));
        let kinds: Vec<FrameType> = trace.kinds().collect();
        let source = Source::Frames(Box::new(Frames {
            mins: scale::min_scales(&kinds),
            trace,
            payload: config.max_payload(),
            next: 0,
            pass: 0,
            skipped: 0,
        }));
        Self::new(ctx, rule, source)
    }

    fn new(ctx: &FlowCtx, rule: Rule, src: Source) -> Self {
        Self {
            flow: ctx.id,
            scale: rule.initial_scale,
            rule,
            start: ctx.start,
            stop: ctx.stop,
            source: src,
            srtt: None,
            next_seq: 0,
            frames: 0,
            current: None,
            first_sent: None,
            last_sent: None,
            last_report: None,
            silent_since: None,
            started: false,
            stats: EndpointStats::default(),
            ignored_reports: 0,
            feedback_timeouts: 0,
        }
    }

    // ----------------------------------------------------------------- getters

    /// The flow this sender belongs to.
    pub fn flow(&self) -> FlowId {
        self.flow
    }

    /// The scale in force.
    pub fn scale(&self) -> u8 {
        self.scale
    }

    /// The smoothed RTT (`None` before the first sample).
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt.map(Duration::from_secs_f64)
    }

    /// Frames sent so far (MM_APP: packets).
    pub fn frames_sent(&self) -> u64 {
        self.frames
    }

    /// Frames of the trace the scale policy skipped so far (MPEG_APP; 0 for MM_APP).
    pub fn frames_skipped(&self) -> u64 {
        match &self.source {
            Source::Fixed(_) => 0,
            Source::Frames(f) => f.skipped,
        }
    }

    /// Reports ignored as bogus, duplicated or out of date.
    pub fn ignored_reports(&self) -> u64 {
        self.ignored_reports
    }

    /// Times the sender halved its scale for want of reports.
    pub fn feedback_timeouts(&self) -> u64 {
        self.feedback_timeouts
    }

    // ----------------------------------------------------------------- internals

    fn stopped_at(&self, t: Instant) -> bool {
        self.stop.is_some_and(|stop| t >= stop)
    }

    /// When the next frame is due (`None` once the application has stopped or the trace ended).
    fn frame_due(&self) -> Option<Instant> {
        let t = match &self.source {
            Source::Fixed(f) => match f.last_frame {
                None => self.start,
                Some(last) => {
                    let gap = f.rates[usize::from(self.scale)].transmit_time(f.size);
                    let gap = if f.random { gap.mul_f64(f.factor) } else { gap };
                    // At least 1 ns: a rate of many Gbit/s must not send twice at one instant.
                    last.saturating_add(gap.max(Duration::from_nanos(1)))
                }
            },
            Source::Frames(f) => {
                let pass_len = f.trace.duration();
                if f.pass > 0 && pass_len.is_zero() {
                    return None; // a pass of no time is sent once, not looped
                }
                let offset = pass_len.saturating_mul(f.pass);
                self.start
                    .saturating_add(offset)
                    .saturating_add(f.trace.frames()[f.next].time)
            }
        };
        (!self.stopped_at(t)).then_some(t)
    }

    /// When the sender gives up waiting for a report (`None`: not sending, or the rule is off).
    fn feedback_deadline(&self) -> Option<Instant> {
        let since = self.silent_since?;
        let rtt = self.srtt().unwrap_or(self.rule.initial_rtt);
        let wait = self.rule.feedback_timeout(rtt)?;
        Some(since.saturating_add(wait))
    }

    fn set_scale(&mut self, now: Instant, scale: u8, metrics: &mut dyn MetricSink) {
        if scale != self.scale {
            self.scale = scale;
            metrics.record(now, SCALE.count(u64::from(scale)));
        }
    }

    /// Takes the next frame due at or before `now`: the frame to send, or `None` if none is
    /// due (skipping, for MPEG_APP, the due frames the scale does not send).
    fn take_frame(&mut self, now: Instant) -> Option<Current> {
        loop {
            let due = self.frame_due()?;
            if due > now {
                return None;
            }
            let scale = self.scale;
            let frame = self.frames_seen();
            match &mut self.source {
                Source::Fixed(f) => {
                    f.last_frame = Some(due);
                    f.factor = if f.random {
                        f.rng.uniform_range(0.5, 1.5)
                    } else {
                        1.0
                    };
                    let payload = f.size.as_bytes() - DATA_HEADERS;
                    return Some(Current {
                        frame,
                        kind: None,
                        scale,
                        remaining: payload,
                        per_packet: payload,
                        fragment: 0,
                        fragments: 1,
                    });
                }
                Source::Frames(f) => {
                    let i = f.next;
                    let item = f.trace.frames()[i];
                    let sent = scale::is_sent(f.mins[i], scale);
                    f.next += 1;
                    if f.next == f.trace.len() {
                        f.next = 0;
                        f.pass += 1;
                    }
                    if !sent {
                        f.skipped += 1;
                        continue;
                    }
                    let bytes = item.size.as_bytes();
                    let fragments = fragments(bytes, f.payload);
                    return Some(Current {
                        frame,
                        kind: Some(item.kind),
                        scale,
                        remaining: bytes.min(u64::from(fragments) * f.payload),
                        per_packet: f.payload,
                        fragment: 0,
                        fragments,
                    });
                }
            }
        }
    }

    /// Frame number of the next frame of the source (sent or skipped).
    fn frames_seen(&self) -> u64 {
        match &self.source {
            Source::Fixed(_) => self.frames,
            Source::Frames(f) => f
                .pass
                .saturating_mul(f.trace.len() as u64)
                .saturating_add(f.next as u64),
        }
    }

    /// Fires whatever is due at `now`: the first scale record, the feedback timeout, a frame.
    fn on_time(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        if !self.started && now >= self.start && !self.stopped_at(self.start) {
            self.started = true;
            metrics.record(now, SCALE.count(u64::from(self.scale)));
        }
        if self.feedback_deadline().is_some_and(|d| now >= d) && !self.stopped_at(now) {
            self.feedback_timeouts += 1;
            metrics.record(now, FEEDBACK_TIMEOUT.event());
            self.set_scale(now, self.scale / 2, metrics);
            self.silent_since = Some(now);
        }
        if self.current.is_none()
            && let Some(frame) = self.take_frame(now)
        {
            self.current = Some(frame);
            self.frames += 1;
            metrics.record(now, FRAMES_SENT.count(self.frames));
        }
    }

    /// Whether `fb` is a genuine report newer than the last one used.
    fn plausible(&self, now: Instant, fb: &MediaFeedback) -> bool {
        let (Some(first), Some(last)) = (self.first_sent, self.last_sent) else {
            return false;
        };
        fb.scale <= MAX_SCALE
            && fb.highest_seq < self.next_seq
            && fb.t_echo >= first
            && fb.t_echo <= last
            && fb.t_echo <= now
            && self.last_report.is_none_or(|n| fb.number > n)
    }

    fn on_report(&mut self, now: Instant, fb: &MediaFeedback, metrics: &mut dyn MetricSink) {
        if !self.plausible(now, fb) {
            self.ignored_reports += 1;
            return;
        }
        self.last_report = Some(fb.number);
        self.silent_since = Some(now);
        let sample = now
            .saturating_since(fb.t_echo)
            .as_nanos()
            .saturating_sub(fb.t_delay.as_nanos());
        if sample > 0 {
            let sample = Duration::from_nanos(sample);
            let s = sample.as_secs_f64();
            let g = self.rule.rtt_gain;
            let srtt = self.srtt.map_or(s, |r| (1.0 - g) * r + g * s);
            self.srtt = Some(srtt);
            metrics.record(now, RTT.secs(sample));
            metrics.record(now, SRTT.secs(Duration::from_secs_f64(srtt)));
        }
        self.set_scale(now, fb.scale, metrics);
    }
}

impl Endpoint for MediaSender {
    /// Takes a report of this flow; anything else is ignored.
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        let Header::MediaFeedback(fb) = packet.header else {
            return;
        };
        if packet.flow != self.flow || packet.direction != Direction::Reverse {
            return;
        }
        self.stats.packets_received += 1;
        self.on_report(now, &fb, metrics);
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.on_time(now, metrics);
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        let cur = self.current.as_mut()?;
        let payload = if cur.fragment + 1 >= cur.fragments {
            cur.remaining
        } else {
            cur.per_packet.min(cur.remaining)
        };
        let header = MediaData {
            seq: self.next_seq,
            timestamp: now,
            rtt: self.srtt.map_or(Duration::ZERO, Duration::from_secs_f64),
            frame: cur.frame,
            fragment: cur.fragment,
            fragments: cur.fragments,
            scale: cur.scale,
            kind: cur.kind,
        };
        cur.remaining -= payload;
        cur.fragment += 1;
        if cur.fragment >= cur.fragments {
            self.current = None;
        }
        if self.first_sent.is_none() {
            self.first_sent = Some(now);
            self.silent_since = Some(now);
        }
        self.last_sent = Some(now);
        self.next_seq += 1;
        let size = DataSize::bytes(DATA_HEADERS + payload);
        self.stats.count_sent(size);
        Some(Packet {
            flow: self.flow,
            direction: Direction::Forward,
            size,
            payload: u32::try_from(payload).unwrap_or(u32::MAX),
            sent_at: now,
            header: Header::MediaData(header),
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let first = (!self.started && !self.stopped_at(self.start)).then_some(self.start);
        [first, self.frame_due(), self.feedback_deadline()]
            .into_iter()
            .flatten()
            .filter(|&t| !self.stopped_at(t))
            .min()
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}
