//! The streamer over UDP: a server that paces the packets of its current level's frames on the
//! [`Schedule`], and a player that reassembles frames, plays them out and reports.
//!
//! **Server.** Frame k is taken when it is released and split into packets of at most the
//! payload the packet size leaves; packets leave one at a time, each `payload·8 / (rate ×
//! multiplier)` after the one before (the level's rate, times `speedup` in the buffering
//! phase), never before their frame's release. A level change the rule decides takes effect at
//! the next I frame (where a decoder can switch streams). Data packets are [`MediaData`] with
//! the level in `scale`.
//!
//! **Player.** A frame is delivered when all its packets arrived (a piece of it already extends
//! the buffer to it); sequence gaps count as lost packets. Every `report_interval` from its first packet it sends a [`StreamReport`] (what
//! arrived since the last, the newest packet's timestamp to echo, its buffered media) and
//! records its playout metrics.

use crate::metric::{FEEDBACK_TIMEOUT, FRAMES_SENT, RECEIVE_RATE, RTT, SRTT};
use fairstream_core::{DataSize, Duration, FlowId, Instant};
use fairstream_media::Playout;

use super::config::{Clip, Schedule, SurestreamConfig, UDP_DATA_HEADERS};
use super::record_level;
use super::rules::UdpLevels;
use crate::media_scaling::MediaData;
use crate::player::record_playout;
use crate::surestream::StreamReport;
use crate::{
    Direction, Endpoint, EndpointStats, FlowCtx, Header, MetricSink, Packet, udp_feedback_size,
};

/// Gain of the server's smoothed RTT (TCP's 1/8).
const RTT_GAIN: f64 = 0.125;

/// The frame being sent.
#[derive(Clone, Copy, Debug)]
struct Sending {
    frame: u64,
    level: u8,
    kind: fairstream_media::FrameType,
    remaining: u64,
    fragment: u16,
    fragments: u16,
}

/// The UDP server.
#[derive(Clone, Debug)]
pub struct UdpServer {
    flow: FlowId,
    clip: Clip,
    schedule: Schedule,
    rule: UdpLevels,
    level: usize,
    payload: u64,
    start: Instant,
    stop: Option<Instant>,
    feedback_timeout: Duration,
    started: bool,
    next_frame: u64,
    current: Option<Sending>,
    next_send: Instant,
    pending: Option<Packet>,
    seq: u64,
    srtt: Option<f64>,
    last_report: Option<u32>,
    heard: Instant,
    frames_sent: u64,
    stats: EndpointStats,
}

impl UdpServer {
    /// The server of flow `ctx`: the player connects at the flow's start, and the server
    /// stops early at its stop (`None`: at the clip's end).
    pub fn new(ctx: &FlowCtx, config: &SurestreamConfig) -> Self {
        let clip = config.clip();
        let level = config.first_level();
        let start = ctx.start;
        Self {
            flow: ctx.id,
            schedule: Schedule::new(&clip, start, config.speedup, config.prebuffer),
            rule: UdpLevels::new(config.udp, level, clip.levels() - 1, start),
            level,
            payload: config.payload(),
            start,
            stop: ctx.stop,
            feedback_timeout: config.udp.feedback_timeout,
            started: false,
            next_frame: 0,
            current: None,
            next_send: start,
            pending: None,
            seq: 0,
            srtt: None,
            last_report: None,
            heard: start,
            frames_sent: 0,
            stats: EndpointStats::default(),
            clip,
        }
    }

    /// The level frames are sent at now.
    pub fn level(&self) -> usize {
        self.level
    }

    /// The level the rule asks for (taken at the next I frame).
    pub fn target_level(&self) -> usize {
        self.rule.level()
    }

    /// Frames sent (wholly or in part) so far.
    pub fn frames_sent(&self) -> u64 {
        self.frames_sent
    }

    fn stopped_at(&self, t: Instant) -> bool {
        self.stop.is_some_and(|s| t >= s)
    }

    /// Whether everything is sent.
    fn done(&self) -> bool {
        self.current.is_none() && self.next_frame >= self.clip.frames()
    }

    /// When the next packet may leave.
    fn send_due(&self) -> Option<Instant> {
        if self.pending.is_some() || self.done() {
            return None;
        }
        let t = if self.current.is_some() {
            self.next_send
        } else {
            self.next_send.max(self.schedule.release(self.next_frame))
        };
        (!self.stopped_at(t)).then_some(t)
    }

    fn feedback_deadline(&self) -> Option<Instant> {
        (self.started && !self.done() && !self.stopped_at(self.heard))
            .then(|| self.heard.saturating_add(self.feedback_timeout))
    }

    fn take_frame(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        let k = self.next_frame;
        let kind = self.clip.frame(self.level, k).kind;
        let target = self.rule.level();
        if target != self.level && kind == fairstream_media::FrameType::I {
            self.level = target;
            record_level(&self.clip, now, self.level, metrics);
        }
        let bytes = self.clip.frame(self.level, k).size.as_bytes();
        let fragments = u16::try_from(bytes.div_ceil(self.payload).max(1)).unwrap_or(u16::MAX);
        self.current = Some(Sending {
            frame: k,
            level: u8::try_from(self.level).unwrap_or(u8::MAX),
            kind,
            remaining: bytes.min(u64::from(fragments) * self.payload),
            fragment: 0,
            fragments,
        });
        self.next_frame += 1;
        self.frames_sent += 1;
        metrics.record(now, FRAMES_SENT.count(self.frames_sent));
    }

    /// Emits the next packet of the current frame into `pending`.
    fn emit(&mut self, now: Instant) {
        let Some(cur) = self.current.as_mut() else {
            return;
        };
        let payload = cur.remaining.min(self.payload);
        let header = MediaData {
            seq: self.seq,
            timestamp: now,
            rtt: self.srtt.map_or(Duration::ZERO, Duration::from_secs_f64),
            frame: cur.frame,
            fragment: cur.fragment,
            fragments: cur.fragments,
            scale: cur.level,
            kind: Some(cur.kind),
        };
        cur.remaining -= payload;
        cur.fragment += 1;
        if cur.fragment >= cur.fragments {
            self.current = None;
        }
        self.seq += 1;
        let size = DataSize::bytes(UDP_DATA_HEADERS + payload);
        self.stats.count_sent(size);
        let rate = self
            .clip
            .rate(self.level)
            .mul_f64(self.schedule.multiplier(header.frame));
        let gap = rate.transmit_time(DataSize::bytes(payload.max(1)));
        self.next_send = now.saturating_add(gap.max(Duration::from_nanos(1)));
        self.pending = Some(Packet {
            flow: self.flow,
            direction: Direction::Forward,
            size,
            payload: u32::try_from(payload).unwrap_or(u32::MAX),
            sent_at: now,
            header: Header::MediaData(header),
        });
    }

    fn on_report(&mut self, now: Instant, r: &StreamReport, metrics: &mut dyn MetricSink) {
        if self.last_report.is_some_and(|n| r.number <= n) || r.highest_seq >= self.seq {
            return;
        }
        self.last_report = Some(r.number);
        self.heard = now;
        let sample = now.saturating_since(r.t_echo).as_secs_f64() - r.t_delay.as_secs_f64();
        if sample > 0.0 && r.t_echo <= now {
            let srtt = self
                .srtt
                .map_or(sample, |s| (1.0 - RTT_GAIN) * s + RTT_GAIN * sample);
            self.srtt = Some(srtt);
            metrics.record(now, RTT.secs(Duration::from_secs_f64(sample)));
            metrics.record(now, SRTT.secs(Duration::from_secs_f64(srtt)));
        }
        metrics.record(now, RECEIVE_RATE.bps(r.receive_rate));
        self.rule.on_report(now, r.received, r.lost);
    }
}

impl Endpoint for UdpServer {
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        let Header::StreamReport(r) = packet.header else {
            return;
        };
        if packet.flow != self.flow || packet.direction != Direction::Reverse || !self.started {
            return;
        }
        self.stats.packets_received += 1;
        self.on_report(now, &r, metrics);
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        if !self.started {
            if now < self.start || self.stopped_at(self.start) {
                return;
            }
            self.started = true;
            record_level(&self.clip, now, self.level, metrics);
        }
        if self.feedback_deadline().is_some_and(|d| now >= d) {
            metrics.record(now, FEEDBACK_TIMEOUT.event());
            self.rule.on_silence(now);
            self.heard = now;
        }
        if self.send_due().is_some_and(|t| t <= now) {
            if self.current.is_none() {
                self.take_frame(now, metrics);
            }
            self.emit(now);
        }
    }

    fn poll_transmit(&mut self, _now: Instant) -> Option<Packet> {
        self.pending.take()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if !self.started {
            return (!self.stopped_at(self.start)).then_some(self.start);
        }
        [self.send_due(), self.feedback_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}

/// The frame being reassembled.
#[derive(Clone, Copy, Debug)]
struct Assembling {
    frame: u64,
    got: u16,
    fragments: u16,
}

/// The UDP player.
#[derive(Clone, Debug)]
pub struct UdpPlayer {
    flow: FlowId,
    playout: Playout,
    interval: Duration,
    next_report: Option<Instant>,
    number: u32,
    expected: u64,
    received: u32,
    lost: u32,
    bytes: u64,
    period_start: Instant,
    /// The newest data packet's timestamp and arrival.
    newest: Option<(Instant, Instant)>,
    assembling: Option<Assembling>,
    out: Option<Packet>,
    finished_recorded: bool,
    stats: EndpointStats,
}

impl UdpPlayer {
    /// The player of flow `ctx`, connecting at the flow's start.
    pub fn new(ctx: &FlowCtx, config: &SurestreamConfig) -> Self {
        Self {
            flow: ctx.id,
            playout: Playout::new(super::playout_config(config, ctx.start)),
            interval: config.report_interval.max(Duration::from_millis(1)),
            next_report: None,
            number: 0,
            expected: 0,
            received: 0,
            lost: 0,
            bytes: 0,
            period_start: ctx.start,
            newest: None,
            assembling: None,
            out: None,
            finished_recorded: false,
            stats: EndpointStats::default(),
        }
    }

    /// The playout model.
    pub fn playout(&self) -> &Playout {
        &self.playout
    }

    fn on_data(&mut self, now: Instant, p: &Packet, d: &MediaData) {
        self.stats.packets_received += 1;
        self.stats.app_bytes_received += u64::from(p.payload);
        if d.seq >= self.expected {
            let gap = d.seq - self.expected;
            self.lost = self
                .lost
                .saturating_add(u32::try_from(gap).unwrap_or(u32::MAX));
            self.expected = d.seq + 1;
        }
        self.received = self.received.saturating_add(1);
        self.bytes += u64::from(p.payload);
        self.newest = Some((d.timestamp, now));
        if self.next_report.is_none() {
            self.next_report = Some(now.saturating_add(self.interval));
            self.period_start = now;
        }
        self.playout.seen(now, d.frame);
        let a = match self.assembling {
            Some(a) if a.frame == d.frame => a,
            _ => Assembling {
                frame: d.frame,
                got: 0,
                fragments: d.fragments,
            },
        };
        let a = Assembling {
            got: a.got + 1,
            ..a
        };
        if a.got >= a.fragments {
            self.assembling = None;
            self.playout.arrive(now, a.frame);
        } else {
            self.assembling = Some(a);
        }
    }

    fn report(&mut self, now: Instant) {
        let Some((t_echo, arrived)) = self.newest else {
            return;
        };
        let period = now.saturating_since(self.period_start);
        let r = StreamReport {
            number: self.number,
            t_echo,
            t_delay: now.saturating_since(arrived),
            highest_seq: self.expected.saturating_sub(1),
            received: self.received,
            lost: self.lost,
            receive_rate: fairstream_core::Bitrate::from_size_per(
                DataSize::bytes(self.bytes),
                period,
            ),
            buffered: self.playout.buffered(),
        };
        self.number = self.number.wrapping_add(1);
        self.received = 0;
        self.lost = 0;
        self.bytes = 0;
        self.period_start = now;
        let size = udp_feedback_size(StreamReport::WIRE_LEN);
        self.stats.count_sent(size);
        self.out = Some(Packet {
            flow: self.flow,
            direction: Direction::Reverse,
            size,
            payload: 0,
            sent_at: now,
            header: Header::StreamReport(r),
        });
    }
}

impl Endpoint for UdpPlayer {
    fn handle_packet(&mut self, now: Instant, packet: &Packet, _metrics: &mut dyn MetricSink) {
        let Header::MediaData(d) = packet.header else {
            return;
        };
        if packet.flow != self.flow || packet.direction != Direction::Forward {
            return;
        }
        self.on_data(now, packet, &d);
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.playout.advance(now);
        let finished = self.playout.state() == fairstream_media::PlayState::Finished;
        if finished && !self.finished_recorded {
            self.finished_recorded = true;
            record_playout(&self.playout, now, metrics);
        }
        if let Some(due) = self.next_report
            && due <= now
        {
            self.report(now);
            if !finished {
                record_playout(&self.playout, now, metrics);
            }
            self.next_report = (!finished).then(|| due.saturating_add(self.interval));
        }
    }

    fn poll_transmit(&mut self, _now: Instant) -> Option<Packet> {
        self.out.take()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        [self.next_report, self.playout.next_event()]
            .into_iter()
            .flatten()
            .min()
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NullSink, VecSink};
    use fairstream_media::FrameType;

    /// Drives `s` until `until`, returning (time, frame, level, kind) of every packet.
    fn run(s: &mut UdpServer, until: Instant) -> Vec<(Instant, u64, u8, FrameType)> {
        let mut out = Vec::new();
        while let Some(t) = s.poll_timeout().filter(|&t| t <= until) {
            s.handle_timeout(t, &mut NullSink);
            while let Some(p) = s.poll_transmit(t) {
                let Header::MediaData(d) = p.header else {
                    panic!("not data")
                };
                out.push((t, d.frame, d.scale, d.kind.unwrap()));
            }
        }
        out
    }

    fn report(number: u32, t_echo: Instant, received: u32, lost: u32) -> Packet {
        Packet {
            flow: FlowId(0),
            direction: Direction::Reverse,
            size: DataSize::bytes(56),
            payload: 0,
            sent_at: t_echo,
            header: Header::StreamReport(StreamReport {
                number,
                t_echo,
                t_delay: Duration::ZERO,
                highest_seq: 0,
                received,
                lost,
                receive_rate: fairstream_core::Bitrate::ZERO,
                buffered: Duration::ZERO,
            }),
        }
    }

    #[test]
    fn a_lossy_report_steps_the_level_down_at_the_next_i_frame() {
        let ms = |x: u64| Instant::from_nanos(x * 1_000_000);
        let mut s = UdpServer::new(
            &FlowCtx::at_zero(FlowId(0), 1),
            &SurestreamConfig::default(),
        );
        // Top level (4) from the start; 10 s of media at 6× by 1.67 s, then 15 frame/s (a GOP of 9
        // frames every 0.6 s).
        let sent = run(&mut s, ms(2_150));
        assert!(sent.iter().all(|p| p.2 == 4));
        // 2.2 s (past down_hold): a report with 10 % loss. The rule asks for level 3 at once;
        // frames already begun at level 4 finish at it, the switch waits for an I frame.
        let mut m = VecSink::default();
        s.handle_packet(ms(2_200), &report(0, ms(2_100), 90, 10), &mut m);
        assert_eq!((s.target_level(), s.level()), (3, 4));
        // An RTT sample: 2.2 − 2.1 s.
        assert!(
            m.0.iter()
                .any(|(_, x)| *x == RTT.secs(Duration::from_millis(100)))
        );
        let after = run(&mut s, ms(3_000));
        let first_i = after.iter().position(|p| p.3 == FrameType::I).unwrap();
        assert!(first_i > 0);
        assert!(after[..first_i].iter().all(|p| p.2 == 4));
        assert!(after[first_i..].iter().all(|p| p.2 == 3));
        // A stale report (number not newer) is ignored.
        s.handle_packet(ms(3_100), &report(0, ms(3_000), 0, 100), &mut NullSink);
        assert_eq!(s.target_level(), 3);
    }
}
