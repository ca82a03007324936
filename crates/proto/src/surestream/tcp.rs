//! The streamer over the simulator's TCP: the server and the player are applications on the
//! two ends of a [`TcpSender`] / [`TcpSink`] pair, through the TCP application interface
//! ([`crate::tcp::app`]).
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

use fairstream_core::{Duration, FlowId, Instant, RngStream};
use fairstream_media::{PlayState, Playout};

use super::config::{Clip, Schedule, SurestreamConfig};
use super::record_level;
use super::rules::TcpLevels;
use crate::player::record_playout;
use crate::tcp::{TcpConfig, TcpSender, TcpSink};
use crate::{Endpoint, EndpointStats, Metric, MetricSink, Packet};

/// The server over TCP.
#[derive(Clone, Debug)]
pub struct TcpServer {
    tcp: TcpSender,
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
    /// The next time the rule is asked.
    tick: Instant,
    frames_sent: u64,
}

impl TcpServer {
    /// The server of `flow` (`rng` draws the TCP clock phase).
    pub fn new(flow: FlowId, config: &SurestreamConfig, rng: &mut RngStream) -> Self {
        let clip = config.clip();
        let level = config.first_level();
        let tcp = TcpConfig {
            packet_size: config.packet_size,
            start: config.start,
            stop: config.stop,
            packets: None,
            send_buffer: Some(config.send_buffer),
            ..config.tcp
        };
        Self {
            tcp: TcpSender::new(flow, tcp, rng),
            schedule: Schedule::new(&clip, config.start, config.speedup, config.prebuffer),
            rule: TcpLevels::new(config.tcp_rule, level, clip.levels() - 1, config.start),
            level,
            start: config.start,
            stop: config.stop,
            interval: config.report_interval.max(Duration::from_millis(1)),
            started: false,
            next_frame: 0,
            remaining: 0,
            tick: config.start,
            frames_sent: 0,
            clip,
        }
    }

    /// The TCP sender underneath.
    pub fn tcp(&self) -> &TcpSender {
        &self.tcp
    }

    /// The level frames are written at now.
    pub fn level(&self) -> usize {
        self.level
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

    /// Writes released frames while the buffer takes them.
    fn pump(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
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
                self.remaining = self.clip.frame(self.level, k).size.as_bytes().max(1);
                self.next_frame += 1;
                self.frames_sent += 1;
                metrics.record(now, Metric::FramesSent(self.frames_sent));
            }
            let n = self.tcp.write(now, self.remaining, true);
            self.remaining -= n;
            if self.remaining > 0 {
                return;
            }
        }
    }
}

impl Endpoint for TcpServer {
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        self.tcp.handle_packet(now, packet, metrics);
        self.pump(now, metrics);
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.tcp.handle_timeout(now, metrics);
        if !self.started && now >= self.start && !self.stopped_at(self.start) {
            self.started = true;
            record_level(&self.clip, now, self.level, metrics);
        }
        if self.started && !self.done() && now >= self.tick {
            self.rule.on_lag(now, self.lag(now));
            self.tick = now.saturating_add(self.interval);
        }
        self.pump(now, metrics);
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        self.tcp.poll_transmit(now)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let app = if !self.started {
            (!self.stopped_at(self.start)).then_some(self.start)
        } else if self.done() || self.stop.is_some_and(|s| self.tick >= s) {
            None
        } else if self.remaining == 0 {
            Some(self.tick.min(self.schedule.release(self.next_frame)))
        } else {
            Some(self.tick)
        };
        [self.tcp.poll_timeout(), app].into_iter().flatten().min()
    }

    fn stats(&self) -> EndpointStats {
        self.tcp.stats()
    }
}

/// The player over TCP.
#[derive(Clone, Debug)]
pub struct TcpPlayer {
    sink: TcpSink,
    playout: Playout,
    interval: Duration,
    /// Records (frames) seen so far.
    frames: u64,
    next_record: Option<Instant>,
    finished_recorded: bool,
}

impl TcpPlayer {
    /// The player of `flow`.
    pub fn new(flow: FlowId, config: &SurestreamConfig) -> Self {
        Self {
            sink: TcpSink::new(flow, config.tcp_sink),
            playout: Playout::new(super::playout_config(config)),
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
}

impl Endpoint for TcpPlayer {
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        self.sink.handle_packet(now, packet, metrics);
        let records = self.sink.records_delivered();
        while self.frames < records {
            self.playout.arrive(now, self.frames);
            self.frames += 1;
        }
        if self.next_record.is_none() && self.sink.delivered_bytes() > 0 {
            self.next_record = Some(now.saturating_add(self.interval));
        }
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.sink.handle_timeout(now, metrics);
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

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        self.sink.poll_transmit(now)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        [
            self.sink.poll_timeout(),
            self.next_record,
            self.playout.next_event(),
        ]
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

    #[test]
    fn a_server_whose_buffer_stays_full_steps_down_every_lag_down() {
        // No ACK ever comes back: the 64 KB send buffer fills with the 450 kbps level's frames
        // (released at 6×) and the writes fall behind the schedule.
        let ms = |x: u64| Instant::from_nanos(x * 1_000_000);
        let mut s = TcpServer::new(
            FlowId(0),
            &SurestreamConfig {
                transport: super::super::Transport::Tcp,
                ..SurestreamConfig::default()
            },
            &mut RngStream::from_seed(1),
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
                .filter_map(|(_, x)| match x {
                    Metric::Level(l) => Some(*l),
                    _ => None,
                })
                .collect();
        assert_eq!(levels, [4]);
        assert_eq!((s.level(), s.rule.level()), (4, 0));
        assert!(s.lag(ms(9_000)) > Duration::from_secs(8));
    }
}
