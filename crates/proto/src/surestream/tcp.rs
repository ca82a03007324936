//! The streamer over TCP: the server and the player are applications ([`StreamServer`],
//! [`StreamPlayer`]) over a reliable byte stream; in the simulator, the two ends of a
//! [`TcpSender`] / [`TcpSink`] pair through the TCP application interface ([`crate::tcp::app`])
//! ([`TcpServer`], [`TcpPlayer`]); under the emulator, a kernel TCP socket.
//!
//! **Server.** At each frame's release (the [`Schedule`]) it writes the frame, at its current
//! level, into the send buffer as one record; what does not fit is written as ACKs free room,
//! and no later frame is written before it. Its lag is how long ago the frame it is still
//! writing was released (zero when it is waiting for the next release); the rule
//! ([`TcpLevels`]) is asked every `report_interval` and a new level applies from the next frame.
//!
//! **Player.** It sees only what the sink delivers in order: each record delivered is the next
//! frame, whole (TCP loses nothing, so every frame arrives; late ones are those delivered after
//! their playout turn).

use crate::metric::FRAMES_SENT;
use fairstream_core::{Duration, Instant};
use fairstream_media::{PlayState, Playout};

use super::config::{Clip, Schedule, SurestreamConfig};
use super::record_level;
use super::rules::TcpLevels;
use crate::player::record_playout;
use crate::tcp::{TcpConfig, TcpSender, TcpSink};
use crate::{Endpoint, EndpointStats, FlowCtx, MetricSink, Packet};

/// The streamer's server as an application over any reliable byte stream: the frame
/// schedule, the level rule asked every `report_interval`, and the writing of each released
/// frame as one record through a `write` the caller gives (the simulator's [`TcpSender`], or a
/// kernel socket under the emulator). Nothing here knows the transport.
#[derive(Clone, Debug)]
pub struct StreamServer {
    clip: Clip,
    schedule: Schedule,
    rule: TcpLevels,
    level: usize,
    start: Instant,
    stop: Option<Instant>,
    interval: Duration,
    started: bool,
    /// The next frame to write.
    next_frame: u64,
    /// Bytes of the frame being written still to write (0: none being written).
    remaining: u64,
    /// Size of the frame being written.
    frame_size: u64,
    /// The next time the rule is asked.
    tick: Instant,
    frames_sent: u64,
}

impl StreamServer {
    /// The server's application of `config`, for a player connecting at `start`; the server
    /// stops early at `stop`.
    pub fn new(config: &SurestreamConfig, start: Instant, stop: Option<Instant>) -> Self {
        let clip = config.clip();
        let level = config.first_level();
        Self {
            schedule: Schedule::new(&clip, start, config.speedup, config.prebuffer),
            rule: TcpLevels::new(config.tcp_rule, level, clip.levels() - 1, start),
            level,
            start,
            stop,
            interval: config.report_interval.max(Duration::from_millis(1)),
            started: false,
            next_frame: 0,
            remaining: 0,
            frame_size: 0,
            tick: start,
            frames_sent: 0,
            clip,
        }
    }

    /// The level frames are written at now.
    pub fn level(&self) -> usize {
        self.level
    }

    /// The level the rule aims at (applied from the next frame).
    pub fn target_level(&self) -> usize {
        self.rule.level()
    }

    fn stopped_at(&self, t: Instant) -> bool {
        self.stop.is_some_and(|s| t >= s)
    }

    /// Whether every frame is written.
    fn done(&self) -> bool {
        self.remaining == 0 && self.next_frame >= self.clip.frames()
    }

    /// How long ago the frame being written was released (zero when none is).
    pub fn lag(&self, now: Instant) -> Duration {
        if self.remaining == 0 || self.next_frame == 0 {
            return Duration::ZERO;
        }
        now.saturating_since(self.schedule.release(self.next_frame - 1))
    }

    /// Writes released frames while `write(frame_size, remaining)` takes bytes: it is offered
    /// the `remaining` bytes of a frame of `frame_size` (all of it when `remaining ==
    /// frame_size`, the frame's start) and returns how many it took; a frame whose bytes are
    /// all taken ends a record.
    pub fn pump(
        &mut self,
        now: Instant,
        metrics: &mut dyn MetricSink,
        write: &mut dyn FnMut(u64, u64) -> u64,
    ) {
        if !self.started || self.stopped_at(now) {
            return;
        }
        loop {
            if self.remaining == 0 {
                let k = self.next_frame;
                if k >= self.clip.frames() || self.schedule.release(k) > now {
                    return;
                }
                let target = self.rule.level();
                if target != self.level {
                    self.level = target;
                    record_level(&self.clip, now, self.level, metrics);
                }
                self.frame_size = self.clip.frame(self.level, k).size.as_bytes().max(1);
                self.remaining = self.frame_size;
                self.next_frame += 1;
                self.frames_sent += 1;
                metrics.record(now, FRAMES_SENT.count(self.frames_sent));
            }
            let n = write(self.frame_size, self.remaining).min(self.remaining);
            self.remaining -= n;
            if self.remaining > 0 {
                return;
            }
        }
    }

    /// Its timers at `now`: the start, and the rule asked every `report_interval`.
    pub fn on_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        if !self.started && now >= self.start && !self.stopped_at(self.start) {
            self.started = true;
            record_level(&self.clip, now, self.level, metrics);
        }
        if self.started && !self.done() && now >= self.tick {
            self.rule.on_lag(now, self.lag(now));
            self.tick = now.saturating_add(self.interval);
        }
    }

    /// When it next needs [`Self::on_timeout`] (or a [`Self::pump`] for a frame's release).
    pub fn poll_timeout(&self) -> Option<Instant> {
        if !self.started {
            (!self.stopped_at(self.start)).then_some(self.start)
        } else if self.done() || self.stop.is_some_and(|s| self.tick >= s) {
            None
        } else if self.remaining == 0 {
            Some(self.tick.min(self.schedule.release(self.next_frame)))
        } else {
            Some(self.tick)
        }
    }
}

/// The server over TCP.
#[derive(Clone, Debug)]
pub struct TcpServer {
    tcp: TcpSender,
    app: StreamServer,
}

impl TcpServer {
    /// The server of flow `ctx` (the flow's random stream draws the TCP clock phase): the
    /// player connects at the flow's start, and the server stops early at its stop.
    pub fn new(ctx: &FlowCtx, config: &SurestreamConfig) -> Self {
        let tcp = TcpConfig {
            packet_size: config.packet_size,
            packets: None,
            send_buffer: Some(config.send_buffer),
            ..config.tcp
        };
        Self {
            tcp: TcpSender::new(ctx, tcp),
            app: StreamServer::new(config, ctx.start, ctx.stop),
        }
    }

    /// The TCP sender underneath.
    pub fn tcp(&self) -> &TcpSender {
        &self.tcp
    }

    /// The level frames are written at now.
    pub fn level(&self) -> usize {
        self.app.level()
    }

    /// How long ago the frame being written was released (zero when none is).
    pub fn lag(&self, now: Instant) -> Duration {
        self.app.lag(now)
    }

    /// Writes released frames while the buffer takes them.
    fn pump(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        let tcp = &mut self.tcp;
        self.app.pump(now, metrics, &mut |_, remaining| {
            tcp.write(now, remaining, true)
        });
    }
}

impl Endpoint for TcpServer {
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        self.tcp.handle_packet(now, packet, metrics);
        self.pump(now, metrics);
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.tcp.handle_timeout(now, metrics);
        self.app.on_timeout(now, metrics);
        self.pump(now, metrics);
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        self.tcp.poll_transmit(now)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        [self.tcp.poll_timeout(), self.app.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
    }

    fn stats(&self) -> EndpointStats {
        self.tcp.stats()
    }
}

/// The streamer's player as an application over any reliable byte stream: told how many whole
/// frames have arrived in order, it plays them out ([`Playout`]) and records its playout
/// metrics every `report_interval` from the first bytes on.
#[derive(Clone, Debug)]
pub struct StreamPlayer {
    playout: Playout,
    interval: Duration,
    /// Records (frames) seen so far.
    frames: u64,
    next_record: Option<Instant>,
    finished_recorded: bool,
}

impl StreamPlayer {
    /// The player's application of `config`, connecting at `start`.
    pub fn new(config: &SurestreamConfig, start: Instant) -> Self {
        Self {
            playout: Playout::new(super::playout_config(config, start)),
            interval: config.report_interval.max(Duration::from_millis(1)),
            frames: 0,
            next_record: None,
            finished_recorded: false,
        }
    }

    /// The playout model.
    pub fn playout(&self) -> &Playout {
        &self.playout
    }

    /// At `now`, `frames` whole frames have arrived in order so far, and some bytes have when
    /// `any_bytes`.
    pub fn arrived(&mut self, now: Instant, frames: u64, any_bytes: bool) {
        while self.frames < frames {
            self.playout.arrive(now, self.frames);
            self.frames += 1;
        }
        if self.next_record.is_none() && any_bytes {
            self.next_record = Some(now.saturating_add(self.interval));
        }
    }

    /// Plays out to `now` and records what is due.
    pub fn on_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.playout.advance(now);
        let finished = self.playout.state() == PlayState::Finished;
        if finished && !self.finished_recorded {
            self.finished_recorded = true;
            record_playout(&self.playout, now, metrics);
        }
        if let Some(due) = self.next_record
            && due <= now
        {
            if !finished {
                record_playout(&self.playout, now, metrics);
            }
            self.next_record = (!finished).then(|| due.saturating_add(self.interval));
        }
    }

    /// When it next needs [`Self::on_timeout`].
    pub fn poll_timeout(&self) -> Option<Instant> {
        [self.next_record, self.playout.next_event()]
            .into_iter()
            .flatten()
            .min()
    }
}

/// The player over TCP.
#[derive(Clone, Debug)]
pub struct TcpPlayer {
    sink: TcpSink,
    app: StreamPlayer,
}

impl TcpPlayer {
    /// The player of flow `ctx`, connecting at the flow's start.
    pub fn new(ctx: &FlowCtx, config: &SurestreamConfig) -> Self {
        Self {
            sink: TcpSink::new(ctx.id, config.tcp_sink),
            app: StreamPlayer::new(config, ctx.start),
        }
    }

    /// The playout model.
    pub fn playout(&self) -> &Playout {
        self.app.playout()
    }
}

impl Endpoint for TcpPlayer {
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        self.sink.handle_packet(now, packet, metrics);
        let records = self.sink.records_delivered();
        self.app
            .arrived(now, records, self.sink.delivered_bytes() > 0);
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.sink.handle_timeout(now, metrics);
        self.app.on_timeout(now, metrics);
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        self.sink.poll_transmit(now)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        [self.sink.poll_timeout(), self.app.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
    }

    fn stats(&self) -> EndpointStats {
        self.sink.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::VecSink;
    use crate::surestream::metrics::LEVEL;

    #[test]
    fn a_server_whose_buffer_stays_full_steps_down_every_lag_down() {
        // No ACK ever comes back: the 64 KB send buffer fills with the 450 kbps level's frames
        // (released at 6×) and the writes fall behind the schedule.
        let ms = |x: u64| Instant::from_nanos(x * 1_000_000);
        let mut s = TcpServer::new(
            &FlowCtx::at_zero(fairstream_core::FlowId(0), 1),
            &SurestreamConfig {
                transport: super::super::Transport::Tcp,
                ..SurestreamConfig::default()
            },
        );
        let mut m = VecSink::default();
        while let Some(t) = s.poll_timeout().filter(|&t| t <= ms(9_000)) {
            s.handle_timeout(t, &mut m);
            while s.poll_transmit(t).is_some() {}
        }
        assert_eq!(s.tcp().free_space(), 0);
        // The frame blocked is the first that did not fit, written at level 4 (released at
        // once); the rule steps down every 2 s while it lags, but the level only applies to the
        // next frame, which never comes: the server still writes level 4, aiming at level 0.
        let levels: Vec<u8> =
            m.0.iter()
                .filter_map(|(_, x)| x.of(&LEVEL).map(|l| l as u8))
                .collect();
        assert_eq!(levels, [4]);
        assert_eq!((s.level(), s.app.target_level()), (4, 0));
        assert!(s.lag(ms(9_000)) > Duration::from_secs(8));
    }
}
