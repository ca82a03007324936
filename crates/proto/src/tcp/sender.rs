//! The TCP sender of ns-2's one-way agents (`Agent/TCP/Reno`, `Agent/TCP/Newreno`;
//! PROTOCOLS.md §1.3–1.5), as a sans-IO [`Endpoint`]. Reno, NewReno and SACK (RFC 6675, in
//! [`sack`]) are its loss-recovery variants; how the window grows and shrinks is its
//! [`WindowControl`] (TCP's AIMD by default, binomial or CUBIC),
//! or BBR's model. Any control can be paced ([`super::pacing`]).
//!
//! Everything counts packets: sequence numbers are packet numbers (packet 0 is a 40-byte SYN
//! when the SYN exchange is emulated), `cwnd` is a real number of packets and the usable
//! window is `min(int(cwnd) + dupwnd, window)`. The sender is fed ACKs through
//! [`Endpoint::handle_packet`] and its timers (application start, retransmission) through
//! [`Endpoint::handle_timeout`]; whatever it decides to send is queued and drained through
//! [`Endpoint::poll_transmit`].
//!
//! With [`TcpConfig::send_buffer`] the application writes bytes with [`TcpSender::write`] and the
//! sender sends only those, cut into segments by a [`SendBuffer`] (the TCP application
//! interface, [`super::app`]); otherwise it is ns-2's FTP or finite source.

use crate::metric::{RTT, SRTT};
use crate::tcp::metrics::{
    BANDWIDTH, BBR_MODE, CWND, FAST_RETRANSMIT, LOSS_WINDOW, PACING_RATE, RTO, SSTHRESH, TIMEOUT,
};
use std::collections::VecDeque;

use fairstream_core::{DataSize, Duration, FlowId, Instant};

use super::app::SendBuffer;
use super::bbr::{Bbr, LossState};
use super::control::{AckInfo, Controller, WindowControl};
use super::options::ts_value;
use super::pacing::{Pacer, window_rate};
use super::rate::RateEstimator;
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use super::{TcpConfig, TcpVariant};
use crate::tcp::{TcpFlags, TcpSegment};
use crate::{Direction, Endpoint, EndpointStats, FlowCtx, Header, MetricSink, Packet};

mod sack;

/// Duplicate ACKs that trigger fast retransmit (ns-2 `numdupacks_`).
const NUM_DUPACKS: i64 = 3;
/// Burst limit of NewReno's `send_much` while in fast recovery.
const NEWRENO_RECOVERY_BURST: u32 = 2;
/// `curseq` of an FTP source that always has data.
const INFINITE_DATA: i64 = i64::MAX;

/// The last congestion-window action of the sender (ns-2 `last_cwnd_action_`; ECN is not
/// modelled, so its `CWND_ACTION_ECN` never occurs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndAction {
    /// No reduction yet.
    None,
    /// Fast retransmit / recovery entered and not yet left.
    DupAck,
    /// A retransmission timeout fired.
    Timeout,
    /// Fast recovery was left by a new ACK.
    Exited,
}

/// The sender's timers, indexing its timer table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timer {
    /// The application starts (the flow's start).
    Start = 0,
    /// Retransmission timeout.
    Rtx = 1,
    /// The pacer lets the next packet leave.
    Pace = 2,
}

impl Timer {
    const COUNT: usize = 3;
    const ALL: [Self; Self::COUNT] = [Self::Start, Self::Rtx, Self::Pace];
}

/// SACK recovery's state besides the scoreboard (RFC 6675 §5, RFC 6937).
#[derive(Clone, Copy, Debug)]
struct SackRecovery {
    /// Open, in fast recovery, or after a timeout until the recovery point is acknowledged.
    state: LossState,
    /// `HighRxt`: the highest packet retransmitted by `NextSeg` rules (1) and (3).
    high_rxt: i64,
    /// `RescueRxt` (none: undefined).
    rescue_rxt: Option<i64>,
    /// PRR: data delivered and sent since recovery began, and the flight when it began.
    prr_delivered: u64,
    prr_out: u64,
    recover_fs: u64,
}

/// A TCP Reno, NewReno or SACK sender in ns-2 one-way mode.
///
/// Laid out hot first (`repr(C)`, starting a cache line): what every ACK of a Reno or NewReno
/// flow reads or writes fills the first six lines, followed by the RTT estimator, the
/// configuration (whose per-packet fields lead it) and the window control; SACK's and BBR's
/// state and the counters read once per run come last. With a thousand flows each ACK touches
/// a different sender, and every further line it touches is a further cache miss
/// (docs/PERFORMANCE.md, "2026-11-29 (fifth session)").
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct TcpSender {
    // --- line 0
    /// When the application stops handing new data (`None`: never).
    stop: Option<Instant>,
    /// Highest packet sent (−1: none).
    maxseq: i64,
    highest_ack: i64,
    last_ack: i64,
    recover: i64,
    /// Next new packet to send.
    t_seqno: i64,
    /// Application data limit: packets `< curseq` may be sent.
    curseq: i64,
    // --- line 1
    cwnd: f64,
    ssthresh: i64,
    /// Advertised window (`wnd_`).
    wnd: i64,
    dupacks: i64,
    dupwnd: i64,
    rtt_seq: i64,
    flow: FlowId,
    /// The TSecr of the ACK being processed (timestamps).
    ack_ts: u32,
    started: bool,
    stopped: bool,
    /// Whether SACK recovery runs (the SACK variant, and always under BBR).
    sack: bool,
    rtt_active: bool,
    first_partial: bool,
    /// No window reduction yet: the first one halves whatever the control (ns-2
    /// `first_decrease_`).
    first_decrease: bool,
    last_cwnd_action: CwndAction,
    // --- line 2
    timers: [Option<Instant>; Timer::COUNT],
    rtt_ts: Instant,
    /// Payload of a full data packet, bytes.
    data_payload: u32,
    // --- line 3
    reported_cwnd: Option<f64>,
    reported_ssthresh: Option<i64>,
    reported_rto: Option<Duration>,
    reported_pacing: Option<fairstream_core::Bitrate>,
    // --- line 4
    stats: EndpointStats,
    /// The RTT sample of the ACK being processed, for the window control.
    ack_rtt: Option<Duration>,
    /// BBR's model, when the control is BBR.
    bbr: Option<Box<Bbr>>,
    // --- line 5
    pacer: Pacer,
    out: VecDeque<Packet>,
    /// The application's send buffer, when the application writes its data.
    app: Option<Box<SendBuffer>>,
    // --- lines 6 and on
    rtt: RttEstimator,
    config: TcpConfig,
    /// The window control's running state.
    cc: Controller,
    // --- read seldom
    /// Header bytes of every data segment (IP, TCP and its options).
    header: u64,
    /// Initial window used when the SYN is acknowledged (forced to 1 if the first packet is
    /// lost, as ns-2 does).
    iw: f64,
    /// The smallest RTT sample so far.
    min_rtt: Option<Duration>,
    /// With an RTT sample per ACK, when the next one is recorded.
    next_rtt_record: Instant,
    /// RTT samples the estimator took.
    rtt_samples: u64,
    timeouts: u64,
    fast_retransmits: u64,
    reported_bbr: Option<(u8, u64)>,
    /// The SACK scoreboard (empty otherwise).
    sb: Scoreboard,
    rec: SackRecovery,
    /// Delivery-rate samples (SACK).
    rate: RateEstimator,
}

impl TcpSender {
    /// Packets its send queue holds room for when built.
    pub const QUEUE_CAPACITY: usize = 64;

    /// The sender of flow `ctx`; the flow's random stream is only used to draw the RTT clock
    /// phase `boot_time`.
    ///
    /// Nothing is sent before the flow's start, which [`Endpoint::poll_timeout`] reports until
    /// then; no new data after its stop. A stop at or before the start means the sender never
    /// sends. An `initial_window` of 0 is taken as 1.
    pub fn new(ctx: &FlowCtx, config: TcpConfig) -> Self {
        let mut rng = ctx.rng.clone();
        let rtt = RttEstimator::from_config(&config, &mut rng);
        let iw = f64::from(config.initial_window.max(1));
        let wnd = i64::from(config.window);
        let never = ctx.stop.is_some_and(|stop| stop <= ctx.start);
        let mut timers = [None; Timer::COUNT];
        if !never {
            timers[Timer::Start as usize] = Some(ctx.start);
        }
        let bbr = match config.control {
            super::Control::Bbr(p) => Some(Box::new(Bbr::new(p, ctx.start, iw, rng.next_u64()))),
            _ => None,
        };
        let sack = config.sack_recovery();
        let header = config.header_bytes();
        Self {
            flow: ctx.id,
            stop: ctx.stop,
            data_payload: u32::try_from(config.segment_payload()).unwrap_or(u32::MAX),
            header,
            cc: config.control.controller(),
            bbr,
            sack,
            sb: if config.control.is_bbr() {
                Scoreboard::with_rate_samples(0)
            } else {
                Scoreboard::new(0)
            },
            rec: SackRecovery {
                state: LossState::Open,
                high_rxt: -1,
                rescue_rxt: None,
                prr_delivered: 0,
                prr_out: 0,
                recover_fs: 0,
            },
            rate: RateEstimator::default(),
            pacer: Pacer::default(),
            min_rtt: None,
            ack_ts: 0,
            ack_rtt: None,
            rtt,
            cwnd: if config.syn { 1.0 } else { iw },
            ssthresh: config.initial_ssthresh.map_or(wnd, i64::from),
            wnd,
            iw,
            t_seqno: 0,
            maxseq: -1,
            highest_ack: -1,
            last_ack: -1,
            curseq: 0,
            dupacks: 0,
            dupwnd: 0,
            recover: 0,
            last_cwnd_action: CwndAction::None,
            first_decrease: true,
            first_partial: false,
            rtt_active: false,
            rtt_seq: -1,
            rtt_ts: Instant::ZERO,
            timers,
            app: config.send_buffer.map(|capacity| {
                Box::new(SendBuffer::new(
                    capacity,
                    config.segment_payload(),
                    i64::from(config.syn),
                ))
            }),
            started: false,
            stopped: never,
            out: VecDeque::with_capacity(Self::QUEUE_CAPACITY),
            stats: EndpointStats::default(),
            timeouts: 0,
            fast_retransmits: 0,
            reported_cwnd: None,
            reported_ssthresh: None,
            reported_rto: None,
            next_rtt_record: Instant::ZERO,
            rtt_samples: 0,
            reported_pacing: None,
            reported_bbr: None,
            config,
        }
    }

    // ----------------------------------------------------------------- getters

    /// The flow this sender belongs to.
    pub fn flow(&self) -> FlowId {
        self.flow
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &TcpConfig {
        &self.config
    }

    /// Congestion window, packets (real-valued; never below 1).
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// Slow-start threshold, packets (at least 2 after any reduction).
    pub fn ssthresh(&self) -> u32 {
        u32::try_from(self.ssthresh).unwrap_or(u32::MAX)
    }

    /// Fast-recovery window inflation, packets (ns-2 `dupwnd_`; non-zero only in recovery).
    pub fn dupwnd(&self) -> u32 {
        u32::try_from(self.dupwnd).unwrap_or(0)
    }

    /// The usable window: packets that may be outstanding beyond the highest ACK,
    /// `min(int(cwnd) + dupwnd, window)`.
    pub fn window(&self) -> u32 {
        u32::try_from(self.window_packets()).unwrap_or(0)
    }

    /// The retransmission timeout now in force (backoff included).
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }

    /// Smoothed RTT in whole ticks (zero before the first sample).
    pub fn srtt(&self) -> Duration {
        self.rtt.srtt()
    }

    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Highest cumulative ACK received (−1: none).
    pub fn highest_ack(&self) -> i64 {
        self.highest_ack
    }

    /// Next new packet number to send (`t_seqno`).
    pub fn next_seq(&self) -> i64 {
        self.t_seqno
    }

    /// Highest packet number sent so far (−1: none).
    pub fn max_seq(&self) -> i64 {
        self.maxseq
    }

    /// The recovery point: highest packet sent when loss recovery last began.
    pub fn recover(&self) -> i64 {
        self.recover
    }

    /// Duplicate ACKs received for the current cumulative ACK.
    pub fn dupacks(&self) -> u32 {
        u32::try_from(self.dupacks).unwrap_or(0)
    }

    /// The last congestion-window action.
    pub fn last_cwnd_action(&self) -> CwndAction {
        self.last_cwnd_action
    }

    /// Whether the sender is in fast retransmit / fast recovery.
    pub fn in_fast_recovery(&self) -> bool {
        self.last_cwnd_action == CwndAction::DupAck
    }

    /// The SACK scoreboard (empty without SACK).
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.sb
    }

    /// RFC 6675's `pipe`: packets deemed in flight (SACK; otherwise those sent and not
    /// cumulatively acknowledged).
    pub fn pipe(&self) -> u64 {
        if self.sack {
            self.sb.pipe()
        } else {
            (self.maxseq - self.highest_ack).max(0) as u64
        }
    }

    /// SACK recovery's `HighRxt` (−1 before any retransmission).
    pub fn high_rxt(&self) -> i64 {
        self.rec.high_rxt
    }

    /// The window control's state.
    pub fn controller(&self) -> &Controller {
        &self.cc
    }

    /// BBR's model, when the control is BBR.
    pub fn bbr(&self) -> Option<&Bbr> {
        self.bbr.as_deref()
    }

    /// The pacing rate in force (none: not pacing).
    pub fn pacing_rate(&self) -> Option<fairstream_core::Bitrate> {
        self.pacer.rate()
    }

    /// The smallest RTT sample so far.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// RTT samples the estimator took so far.
    pub fn rtt_samples(&self) -> u64 {
        self.rtt_samples
    }

    /// The initial window in force when the SYN is acknowledged.
    pub fn initial_window(&self) -> f64 {
        self.iw
    }

    /// Retransmission timeouts so far.
    pub fn timeouts(&self) -> u64 {
        self.timeouts
    }

    /// Fast retransmits so far.
    pub fn fast_retransmits(&self) -> u64 {
        self.fast_retransmits
    }

    /// Whether the application has started.
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// Whether a finite transfer (`config.packets`, or data cut by the flow's stop) is entirely
    /// acknowledged. Always `false` for an FTP source still running.
    pub fn is_complete(&self) -> bool {
        (self.started || self.stopped)
            && self.curseq != INFINITE_DATA
            && self.highest_ack >= self.curseq - 1
    }

    /// The application's send buffer (`None` without [`TcpConfig::send_buffer`]).
    pub fn send_buffer(&self) -> Option<&SendBuffer> {
        self.app.as_deref()
    }

    /// Room in the send buffer (zero without one).
    pub fn free_space(&self) -> u64 {
        self.app.as_deref().map_or(0, SendBuffer::free)
    }

    /// Writes up to `bytes` of application data into the send buffer at `now` and sends what
    /// the window allows; returns how many bytes were accepted (none without a send buffer, or
    /// after the flow's stop). When all were accepted, `push` ends a record with the last of them
    /// (its segment carries [`TcpFlags::push`]).
    pub fn write(&mut self, now: Instant, bytes: u64, push: bool) -> u64 {
        self.apply_stop(now);
        if self.stopped {
            return 0;
        }
        let Some(app) = self.app.as_mut() else {
            return 0;
        };
        let n = app.write(bytes, push);
        if n > 0 {
            self.update_app_limit();
            if self.started {
                self.send(now);
            }
        }
        n
    }

    /// With a send buffer, packets below `curseq` may be sent: those already cut, the SYN, and
    /// one more while bytes are unsent (the next is allowed once that one is cut).
    fn update_app_limit(&mut self) {
        if let Some(app) = &self.app
            && !self.stopped
        {
            self.curseq =
                (self.maxseq + 1).max(i64::from(self.config.syn)) + i64::from(app.unsent() > 0);
        }
    }

    // ----------------------------------------------------------------- machinery

    fn window_packets(&self) -> i64 {
        (self.cwnd as i64 + self.dupwnd).min(self.wnd)
    }

    fn set_rtx_timer(&mut self, now: Instant) {
        self.timers[Timer::Rtx as usize] = Some(now.saturating_add(self.rtt.rto()));
    }

    fn rtx_timer_pending(&self) -> bool {
        self.timers[Timer::Rtx as usize].is_some()
    }

    /// Applies the flow's stop once `now` reaches it: no new data after what was sent so far.
    fn apply_stop(&mut self, now: Instant) {
        if let Some(stop) = self.stop
            && !self.stopped
            && now >= stop
        {
            self.stopped = true;
            self.curseq = self.curseq.min(self.maxseq + 1);
        }
    }

    fn start(&mut self, now: Instant) {
        self.started = true;
        if self.stopped {
            return;
        }
        if self.app.is_some() {
            self.update_app_limit();
            self.send(now);
            return;
        }
        self.curseq = match self.config.packets {
            None => INFINITE_DATA,
            Some(0) => 0,
            Some(n) => i64::try_from(n)
                .unwrap_or(INFINITE_DATA - 1)
                .saturating_add(i64::from(self.config.syn)),
        };
        self.send(now);
    }

    /// Sends what the variant's rules allow now (start, writes, pacing timer).
    fn send(&mut self, now: Instant) {
        if self.sack {
            self.send_sack(now);
        } else {
            self.send_much(now, self.config.max_burst);
        }
    }

    /// Whether the pacer holds the next packet back; if so its timer is armed.
    #[inline]
    fn paced_out(&mut self, now: Instant) -> bool {
        match self.pacer.wait_until(now) {
            Some(at) => {
                self.timers[Timer::Pace as usize] = Some(at);
                true
            }
            None => false,
        }
    }

    /// With `pacing` (and not BBR, which sets its own), the pacing rate from the window.
    #[inline]
    fn update_pacing(&mut self) {
        if self.config.pacing && self.bbr.is_none() {
            let window = self.cwnd.max(self.pipe() as f64);
            self.pacer.set_rate(window_rate(
                self.config.packet_size,
                window,
                self.ssthresh as f64,
                self.cwnd,
                self.rtt.srtt(),
            ));
        }
    }

    /// Sends new packets while the window and the application allow (ns-2 `send_much`).
    fn send_much(&mut self, now: Instant, max_burst: u32) {
        self.update_pacing();
        let mut n = 0u32;
        while self.t_seqno <= self.highest_ack + self.window_packets() && self.t_seqno < self.curseq
        {
            if self.paced_out(now) {
                break;
            }
            self.output(now, self.t_seqno);
            self.t_seqno += 1;
            n += 1;
            if max_burst != 0 && n == max_burst {
                break;
            }
        }
    }

    /// Limited transmit (ns-2 `send_one`): one new packet on the first and second dup-ACK.
    fn send_one(&mut self, now: Instant) {
        if self.t_seqno <= self.highest_ack + self.wnd
            && self.t_seqno < self.curseq
            && self.t_seqno as f64 <= self.highest_ack as f64 + self.cwnd + self.dupacks as f64
            && !self.paced_out(now)
        {
            self.output(now, self.t_seqno);
            self.t_seqno += 1;
        }
    }

    /// Emits packet `seq` (ns-2 `output`): times it if it is new, arms the retransmission
    /// timer if none is pending or nothing was outstanding.
    fn output(&mut self, now: Instant, seq: i64) {
        self.output_with(now, seq, false);
    }

    /// [`Self::output`]; `rescue` marks SACK's rescue retransmission (not counted in `pipe`).
    fn output_with(&mut self, now: Instant, seq: i64, rescue: bool) {
        let syn = seq == 0 && self.config.syn;
        let retransmit = seq <= self.maxseq;
        let (size, payload, push) = if syn {
            (DataSize::bytes(self.header), 0, false)
        } else if let Some(app) = self.app.as_mut() {
            let (bytes, push) = if retransmit {
                app.segment(seq)
            } else {
                app.cut()
            }
            .unwrap_or((0, false));
            (
                DataSize::bytes(self.header + bytes),
                u32::try_from(bytes).unwrap_or(u32::MAX),
                push,
            )
        } else {
            (self.config.packet_size, self.data_payload, false)
        };
        self.out.push_back(Packet {
            flow: self.flow,
            direction: Direction::Forward,
            size,
            payload,
            sent_at: now,
            header: Header::Tcp(TcpSegment {
                seq,
                ack: -1,
                is_ack: false,
                flags: TcpFlags {
                    syn,
                    retransmit,
                    push,
                },
                ts: if self.config.timestamps {
                    ts_value(now)
                } else {
                    0
                },
                sack: super::SackBlocks::NONE,
            }),
        });
        self.stats.count_sent(size);
        if retransmit {
            self.stats.retransmits += 1;
        }
        self.pacer.sent(now, size);
        if self.sack {
            // Delivery-rate samples are BBR's; other controls need only the send time (RTT).
            let send = if self.bbr.is_some() {
                self.rate.on_send(now, self.sb.pipe())
            } else {
                super::scoreboard::SendState {
                    sent_at: now,
                    ..Default::default()
                }
            };
            self.sb.sent(seq, send, rescue);
        }
        let nothing_outstanding = self.highest_ack == self.maxseq;
        if seq > self.maxseq {
            self.maxseq = seq;
            self.update_app_limit();
            if !self.rtt_active && !self.sack && !self.config.timestamps {
                // Karn: only packets sent once are timed.
                self.rtt_active = true;
                if seq > self.rtt_seq {
                    self.rtt_seq = seq;
                    self.rtt_ts = now;
                }
            }
        }
        if !self.rtx_timer_pending() || nothing_outstanding {
            self.set_rtx_timer(now);
        }
    }

    /// Per new ACK window growth (ns-2 `opencwnd`): the control's slow start (ns-2: +1) below
    /// ssthresh, its increase in congestion avoidance; `acked` packets were delivered.
    fn opencwnd(&mut self, now: Instant, acked: u32) {
        let info = AckInfo {
            now,
            acked,
            srtt: self.rtt.srtt(),
            ack: self.highest_ack,
            high_sent: self.maxseq,
            rtt: self.ack_rtt,
        };
        if self.cwnd < self.ssthresh as f64 {
            let (w, exit) = self.cc.slow_start(self.cwnd, &info);
            self.cwnd = w;
            if exit {
                // The control ends slow start here (HyStart++): ssthresh is the window.
                self.ssthresh = (self.cwnd.floor() as i64).max(2);
            }
        } else {
            self.cwnd = self.cc.on_ack(self.cwnd, &info);
        }
        if let Some(max) = self.config.max_cwnd
            && max > 0
            && self.cwnd as i64 > i64::from(max)
        {
            self.cwnd = f64::from(max);
        }
    }

    /// The slow-start threshold after a loss event with window `win` in force (ns-2
    /// `slowdown(CLOSE_SSTHRESH_HALF)`): half the window on the first decrease, in slow start
    /// or right after a timeout; otherwise the window control's decrease. At least 2.
    fn reduced_ssthresh(&mut self, win: f64) -> i64 {
        let slow_start = self.cwnd < self.ssthresh as f64;
        let ss =
            if self.first_decrease || slow_start || self.last_cwnd_action == CwndAction::Timeout {
                win / 2.0
            } else {
                self.cc.on_loss(win)
            };
        (ss.floor() as i64).max(2)
    }

    /// Reduces ssthresh and cwnd on fast retransmit (ns-2
    /// `slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_HALF)` with `precisionReduce_`): TCP's
    /// halving, or the window control's decrease past the first reduction and slow start.
    fn reduce(&mut self) {
        let win = (self.cwnd + self.dupwnd as f64).min(self.wnd as f64);
        if !self.cc.ns2_rules() {
            // The control's own decrease (CUBIC: β·cwnd, at least 2), whatever came before.
            let w = self.cc.on_loss(win).max(1.0);
            self.ssthresh = (w.floor() as i64).max(2);
            self.cwnd = w;
            self.first_decrease = false;
            return;
        }
        let halve = self.first_decrease || self.cwnd < self.ssthresh as f64 || self.cc.halves();
        self.ssthresh = self.reduced_ssthresh(win);
        self.cwnd = if halve {
            win / 2.0
        } else {
            self.cc.on_loss(win)
        }
        .max(1.0);
        self.first_decrease = false;
    }

    /// The ssthresh a timeout leaves with window `win` in force: ns-2's rule, or the control's.
    fn timeout_ssthresh(&mut self, win: f64) -> i64 {
        if self.cc.ns2_rules() {
            self.reduced_ssthresh(win)
        } else {
            (self.cc.on_timeout(win).floor() as i64).max(2)
        }
    }

    /// Takes an RTT sample taken at `now` into the estimator and reports it with the SRTT and
    /// RTO after it. With a sample from every ACK (SACK or timestamps) the estimator takes every
    /// one but the metric records are made once per smoothed RTT, as dense as ns-2's one timed
    /// packet per round trip (the summary's mean RTT is their mean).
    fn rtt_sample(&mut self, now: Instant, sample: Duration, metrics: &mut dyn MetricSink) {
        self.rtt_samples += 1;
        self.rtt.reset_backoff();
        self.rtt.update(now, sample);
        let every_ack = self.sack || self.config.timestamps;
        if !every_ack || now >= self.next_rtt_record {
            let rto = self.rtt.rto();
            metrics.record(now, RTT.secs(sample));
            metrics.record(now, SRTT.secs(self.rtt.srtt()));
            metrics.record(now, RTO.secs(rto));
            self.reported_rto = Some(rto);
            self.next_rtt_record = now.saturating_add(self.rtt.srtt().max(sample));
        }
        self.ack_rtt = Some(sample);
        if self.min_rtt.is_none_or(|m| sample < m) {
            self.min_rtt = Some(sample);
        }
    }

    /// The RTT the timestamp echo of the ACK being processed gives (RFC 7323 §4.1), if it is a
    /// time this sender could have sent (a forged echo from the future gives none).
    fn ts_rtt(&self, now: Instant) -> Option<Duration> {
        let us = ts_value(now).wrapping_sub(self.ack_ts);
        (us < 1 << 31).then(|| Duration::from_micros(u64::from(us)))
    }

    /// The cumulative ACK moved to `a`: the application's buffer, the duplicate-ACK count, and
    /// the next packet to send no lower than `a + 1`.
    fn cumulative_ack(&mut self, a: i64) {
        if let Some(app) = self.app.as_mut() {
            app.ack(a);
        }
        self.dupacks = 0;
        self.last_ack = a;
        self.highest_ack = a;
        if self.t_seqno < a + 1 {
            self.t_seqno = a + 1;
        }
    }

    /// Processes an ACK of new data (ns-2 `newack`).
    fn newack(&mut self, now: Instant, a: i64, metrics: &mut dyn MetricSink) {
        self.cumulative_ack(a);
        if self.config.timestamps {
            // RFC 7323 RTTM: every ACK of new data gives a sample.
            if let Some(sample) = self.ts_rtt(now) {
                self.rtt_sample(now, sample, metrics);
            }
        } else if self.rtt_active && a >= self.rtt_seq {
            self.rtt_active = false;
            let sample = now.saturating_since(self.rtt_ts);
            self.rtt_sample(now, sample, metrics);
        }
        if self.t_seqno > a + 1 || a < self.maxseq || self.cwnd < 1.0 {
            self.set_rtx_timer(now);
        } else {
            self.timers[Timer::Rtx as usize] = None;
        }
    }

    /// Enters fast retransmit / fast recovery (ns-2 Reno/NewReno `dupack_action`, past the
    /// `recover` check).
    fn fast_retransmit(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        metrics.record(now, LOSS_WINDOW.at(self.cwnd));
        self.recover = self.maxseq;
        self.last_cwnd_action = CwndAction::DupAck;
        self.reduce();
        self.set_rtx_timer(now);
        self.rtt_active = false;
        self.fast_retransmits += 1;
        metrics.record(now, FAST_RETRANSMIT.event());
        self.output(now, self.last_ack + 1);
        self.dupwnd = NUM_DUPACKS;
    }

    /// An ACK of new data up to `a` outside recovery (Reno and NewReno alike): `newack`, the
    /// window grown by the packets it acknowledged, and the initial window once the SYN is
    /// acknowledged.
    fn new_data_acked(&mut self, now: Instant, a: i64, metrics: &mut dyn MetricSink) {
        let acked = (a - self.last_ack).clamp(0, i64::from(u32::MAX)) as u32;
        self.newack(now, a, metrics);
        self.opencwnd(now, acked);
        if a == 0 && self.config.syn {
            self.cwnd = self.iw;
        }
    }

    fn on_ack_reno(&mut self, now: Instant, a: i64, metrics: &mut dyn MetricSink) {
        if a > self.last_ack {
            if self.last_cwnd_action == CwndAction::DupAck {
                self.last_cwnd_action = CwndAction::Exited;
            }
            self.dupwnd = 0;
            self.new_data_acked(now, a, metrics);
        } else if a == self.last_ack {
            self.dupacks += 1;
            if self.dupacks == NUM_DUPACKS {
                // bugFix_: no new fast retransmit for losses of a window already recovered,
                // unless the last action was a fast retransmit or only the SYN was ACKed.
                if self.highest_ack > self.recover
                    || self.last_cwnd_action == CwndAction::DupAck
                    || self.highest_ack == 0
                {
                    self.fast_retransmit(now, metrics);
                }
            } else if self.dupacks > NUM_DUPACKS && self.last_cwnd_action == CwndAction::DupAck {
                self.dupwnd += 1;
            } else if self.dupacks < NUM_DUPACKS && self.config.limited_transmit {
                self.send_one(now);
            }
        }
        // Stale ACKs (below last_ack) never clock out data.
        if a >= self.last_ack && (self.dupacks == 0 || self.dupacks >= NUM_DUPACKS) {
            self.send_much(now, self.config.max_burst);
        }
    }

    fn on_ack_newreno(&mut self, now: Instant, a: i64, metrics: &mut dyn MetricSink) {
        if a > self.last_ack {
            if a >= self.recover || self.last_cwnd_action != CwndAction::DupAck {
                // Full ACK, or not in recovery.
                if self.dupwnd > 0 {
                    self.dupwnd = 0;
                    if self.last_cwnd_action == CwndAction::DupAck {
                        self.last_cwnd_action = CwndAction::Exited;
                    }
                }
                self.first_partial = false;
                self.new_data_acked(now, a, metrics);
            } else {
                // Partial ACK: stay in recovery, retransmit the next hole.
                if !self.first_partial {
                    self.set_rtx_timer(now);
                    self.first_partial = true;
                }
                let deflate = a - self.last_ack;
                if self.dupwnd > deflate {
                    self.dupwnd -= deflate - 1;
                } else {
                    self.cwnd -= (deflate - self.dupwnd) as f64;
                    // Keep dupwnd > 0 to flag fast recovery.
                    self.dupwnd = 1;
                }
                if self.cwnd < 1.0 {
                    self.cwnd = 1.0;
                }
                self.last_ack = a;
                self.highest_ack = a;
                if let Some(app) = self.app.as_mut() {
                    app.ack(a);
                }
                if self.t_seqno < a + 1 {
                    self.t_seqno = a + 1;
                }
                if self.rtt_active && a >= self.rtt_seq {
                    self.rtt_active = false;
                    self.rtt.reset_backoff();
                }
                self.output(now, a + 1);
                // dupacks is deliberately not reset by a partial ACK (as in ns-2).
            }
        } else if a == self.last_ack {
            self.dupacks += 1;
            if self.dupacks == NUM_DUPACKS {
                // Careful variant (RFC 6582): only beyond the previous recovery point, or
                // when only the SYN was ACKed.
                if self.highest_ack > self.recover || self.highest_ack == 0 {
                    self.fast_retransmit(now, metrics);
                }
            } else if self.dupacks > NUM_DUPACKS && self.last_cwnd_action == CwndAction::DupAck {
                self.dupwnd += 1;
            } else if self.dupacks < NUM_DUPACKS && self.config.limited_transmit {
                self.send_one(now);
            }
        }
        if a >= self.last_ack {
            if self.dupacks == 0 {
                self.send_much(now, self.config.max_burst);
            } else if self.dupacks >= NUM_DUPACKS {
                self.send_much(now, NEWRENO_RECOVERY_BURST);
            }
        }
    }

    /// The retransmission timer fired (ns-2 Reno `timeout(TCP_TIMER_RTX)`).
    fn on_rtx_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        if self.sack {
            self.on_rtx_timeout_sack(now, metrics);
            return;
        }
        self.timeouts += 1;
        metrics.record(now, LOSS_WINDOW.at(self.cwnd));
        metrics.record(now, TIMEOUT.event());
        self.dupwnd = 0;
        self.dupacks = 0;
        self.recover = self.maxseq;
        if self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
        if self.highest_ack == self.maxseq {
            // Nothing outstanding: restart from one packet, keep ssthresh, no backoff.
            self.cwnd = 1.0;
            self.set_rtx_timer(now);
        } else {
            if self.highest_ack == -1 {
                // The first packet was lost: no large initial window.
                self.iw = 1.0;
            }
            let win = self.cwnd.min(self.wnd as f64);
            self.ssthresh = self.timeout_ssthresh(win);
            self.first_decrease = false;
            self.cwnd = 1.0;
            self.rtt.backoff_timer();
            self.set_rtx_timer(now);
        }
        // Go-back-N.
        self.t_seqno = self.highest_ack + 1;
        self.rtt_active = false;
        self.last_cwnd_action = CwndAction::Timeout;
        self.send_much(now, self.config.max_burst);
    }

    /// Reports cwnd, ssthresh and RTO when they changed since the last report, and the pacing
    /// rate and BBR's mode and bandwidth estimate likewise.
    fn report(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        if self.pacer.rate() != self.reported_pacing {
            self.reported_pacing = self.pacer.rate();
            if let Some(r) = self.reported_pacing {
                metrics.record(now, PACING_RATE.bps(r));
            }
        }
        if let Some(b) = self.bbr.as_deref() {
            let bw = (b.bandwidth() * self.config.packet_size.as_bits() as f64) as u64;
            let state = (b.mode().code(), bw);
            if self.reported_bbr != Some(state) {
                if self.reported_bbr.is_none_or(|(m, _)| m != state.0) {
                    metrics.record(now, BBR_MODE.count(u64::from(state.0)));
                }
                if self.reported_bbr.is_none_or(|(_, w)| w != bw) {
                    metrics.record(now, BANDWIDTH.bps(fairstream_core::Bitrate::bps(bw)));
                }
                self.reported_bbr = Some(state);
            }
        }
        if self.reported_cwnd != Some(self.cwnd) {
            self.reported_cwnd = Some(self.cwnd);
            metrics.record(now, CWND.at(self.cwnd));
        }
        if self.reported_ssthresh != Some(self.ssthresh) {
            self.reported_ssthresh = Some(self.ssthresh);
            metrics.record(now, SSTHRESH.at(self.ssthresh as f64));
        }
        let rto = self.rtt.rto();
        if self.reported_rto != Some(rto) {
            self.reported_rto = Some(rto);
            metrics.record(now, RTO.secs(rto));
        }
    }
}

impl Endpoint for TcpSender {
    /// Feeds an ACK (a TCP packet of this flow with `is_ack`, travelling [`Direction::Reverse`]);
    /// anything else, and ACKs before the start or for packets never sent, are ignored.
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        let Header::Tcp(seg) = &packet.header else {
            return;
        };
        if !seg.is_ack || packet.direction != Direction::Reverse || packet.flow != self.flow {
            return;
        }
        self.apply_stop(now);
        if !self.started || seg.ack > self.maxseq {
            return;
        }
        self.stats.packets_received += 1;
        self.ack_ts = seg.ts;
        self.ack_rtt = None;
        if self.sack {
            self.on_ack_sack(now, seg, metrics);
        } else {
            match self.config.variant {
                TcpVariant::Reno => self.on_ack_reno(now, seg.ack, metrics),
                _ => self.on_ack_newreno(now, seg.ack, metrics),
            }
        }
        self.report(now, metrics);
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.apply_stop(now);
        for timer in Timer::ALL {
            let slot = &mut self.timers[timer as usize];
            if slot.is_some_and(|due| due <= now) {
                *slot = None;
                match timer {
                    Timer::Start => self.start(now),
                    Timer::Rtx => self.on_rtx_timeout(now, metrics),
                    Timer::Pace => self.send(now),
                }
            }
        }
        if self.started {
            self.report(now, metrics);
        }
    }

    fn poll_transmit(&mut self, _now: Instant) -> Option<Packet> {
        fairstream_core::pop_front_rewinding(&mut self.out)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.iter().flatten().min().copied()
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NullSink, VecSink};

    /// The layout [`TcpSender`]'s doc promises: the fields an ACK of a Reno or NewReno flow
    /// reads in the first six cache lines, then the RTT estimator, then the configuration with
    /// its per-packet fields in its first 32 bytes (so in the estimator's second line).
    #[test]
    fn what_an_ack_reads_fills_the_senders_first_lines() {
        use std::mem::{align_of, offset_of, size_of};
        const LINE: usize = 64;
        assert_eq!(align_of::<TcpSender>(), LINE);
        let hot_end = offset_of!(TcpSender, app) + size_of::<Option<Box<SendBuffer>>>();
        assert!(
            hot_end <= 6 * LINE,
            "the per-ACK fields end at byte {hot_end}"
        );
        assert_eq!(offset_of!(TcpSender, rtt), 6 * LINE);
        let config = offset_of!(TcpSender, config);
        let per_packet_end = [
            offset_of!(TcpConfig, variant) + size_of::<TcpVariant>(),
            offset_of!(TcpConfig, timestamps) + 1,
            offset_of!(TcpConfig, pacing) + 1,
            offset_of!(TcpConfig, syn) + 1,
            offset_of!(TcpConfig, limited_transmit) + 1,
            offset_of!(TcpConfig, max_burst) + size_of::<u32>(),
            offset_of!(TcpConfig, window) + size_of::<u32>(),
            offset_of!(TcpConfig, packet_size) + size_of::<DataSize>(),
            offset_of!(TcpConfig, max_cwnd) + size_of::<Option<u32>>(),
        ]
        .into_iter()
        .max()
        .unwrap();
        assert_eq!(config / LINE, (config + per_packet_end - 1) / LINE);
        assert!(offset_of!(TcpSender, cc) > config);
    }

    const MS: u64 = 1_000_000;

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * MS)
    }

    /// A sender without SYN emulation started at 0, with `f` applied to the defaults.
    fn started(f: impl FnOnce(&mut TcpConfig)) -> (TcpSender, Vec<i64>) {
        let mut cfg = TcpConfig {
            syn: false,
            ..TcpConfig::default()
        };
        f(&mut cfg);
        let mut s = TcpSender::new(&ctx(), cfg);
        s.handle_timeout(Instant::ZERO, &mut NullSink);
        let sent = drain(&mut s, Instant::ZERO);
        (s, sent)
    }

    /// Flow 1 from time zero, never stopping.
    fn ctx() -> FlowCtx {
        FlowCtx::at_zero(FlowId(1), 1)
    }

    fn drain(s: &mut TcpSender, now: Instant) -> Vec<i64> {
        let mut v = Vec::new();
        while let Some(p) = s.poll_transmit(now) {
            v.push(p.tcp().map_or(-99, |h| h.seq));
        }
        v
    }

    fn ack_packet(a: i64, now: Instant) -> Packet {
        Packet {
            flow: FlowId(1),
            direction: Direction::Reverse,
            size: DataSize::bytes(40),
            payload: 0,
            sent_at: now,
            header: Header::Tcp(TcpSegment {
                seq: a,
                ack: a,
                is_ack: true,
                flags: TcpFlags::default(),
                ts: 0,
                sack: crate::tcp::SackBlocks::NONE,
            }),
        }
    }

    /// Feeds cumulative ACK `a` at `now`, returns the packet numbers sent in response.
    fn ack(s: &mut TcpSender, a: i64, now: Instant) -> Vec<i64> {
        s.handle_packet(now, &ack_packet(a, now), &mut NullSink);
        drain(s, now)
    }

    /// Sender with 8 packets (0..=7) in flight, cwnd 8, ssthresh 20.
    fn eight_in_flight(variant: TcpVariant) -> TcpSender {
        let (s, sent) = started(|c| {
            c.variant = variant;
            c.initial_window = 8;
        });
        assert_eq!(sent, (0..8).collect::<Vec<_>>());
        s
    }

    /// Three dup-ACKs for packet `a` at `now` (a fast retransmit).
    fn three_dupacks(s: &mut TcpSender, a: i64, now: Instant) {
        for _ in 0..3 {
            ack(s, a, now);
        }
    }

    /// (seq, payload, push) of every packet queued at `now`.
    fn drain_app(s: &mut TcpSender, now: Instant) -> Vec<(i64, u32, bool)> {
        std::iter::from_fn(|| s.poll_transmit(now))
            .map(|p| {
                let h = p.tcp().unwrap();
                assert_eq!(p.size.as_bytes(), 40 + u64::from(p.payload));
                (h.seq, p.payload, h.flags.push)
            })
            .collect()
    }

    #[test]
    fn an_application_sender_sends_what_was_written_in_segments_ending_at_records() {
        // SYN, 1040 B packets (1000 B payload), a 3000 B send buffer, initial window 2.
        let cfg = TcpConfig {
            send_buffer: Some(DataSize::bytes(3000)),
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(&ctx(), cfg);
        // Nothing written: the start sends the SYN only.
        s.handle_timeout(t(0), &mut NullSink);
        assert_eq!(drain_app(&mut s, t(0)), [(0, 0, false)]);
        // A 1500 B record and a 2000 B one, of which 1500 B fit.
        assert_eq!(s.write(t(1), 1500, true), 1500);
        assert_eq!(s.write(t(1), 2000, true), 1500);
        assert_eq!(s.free_space(), 0);
        // Nothing leaves before the SYN's ACK (cwnd 1, the SYN outstanding).
        assert_eq!(drain_app(&mut s, t(1)), []);
        // SYN ACKed: window 2: 1000 B, then the record's last 500 B with the push mark.
        s.handle_packet(t(100), &ack_packet(0, t(100)), &mut NullSink);
        assert_eq!(
            drain_app(&mut s, t(100)),
            [(1, 1000, false), (2, 500, true)]
        );
        // ACK of 1: cwnd 3, room for 1000 B more of the second record (not all of it: no push).
        s.handle_packet(t(200), &ack_packet(1, t(200)), &mut NullSink);
        assert_eq!(
            drain_app(&mut s, t(200)),
            [(3, 1000, false), (4, 500, false)]
        );
        assert_eq!(s.free_space(), 1000);
        // The rest of the record (500 B) is accepted but waits for the window (2, 3, 4 are
        // outstanding with cwnd 3); the ACK of 4 lets it go, with the push mark.
        assert_eq!(s.write(t(250), 500, true), 500);
        assert_eq!(drain_app(&mut s, t(250)), []);
        s.handle_packet(t(300), &ack_packet(4, t(300)), &mut NullSink);
        assert_eq!(drain_app(&mut s, t(300)), [(5, 500, true)]);
        // Everything ACKed: the buffer is empty, nothing more to send, the transfer complete.
        s.handle_packet(t(350), &ack_packet(5, t(350)), &mut NullSink);
        assert_eq!(drain_app(&mut s, t(350)), []);
        let b = s.send_buffer().unwrap();
        assert_eq!((b.written(), b.acked(), b.unacked()), (3500, 3500, 0));
        assert!(s.is_complete());
        // Idle, then a new record: sent at once, the retransmission timer armed again.
        assert_eq!(s.write(t(1000), 100, true), 100);
        assert_eq!(drain_app(&mut s, t(1000)), [(6, 100, true)]);
        assert!(s.poll_timeout().is_some());
        // It is lost: the timeout resends the same 100 B, the same push mark.
        let due = s.poll_timeout().unwrap();
        s.handle_timeout(due, &mut NullSink);
        assert_eq!(drain_app(&mut s, due), [(6, 100, true)]);
    }

    #[test]
    fn a_sender_without_a_send_buffer_takes_no_writes() {
        let (mut s, sent) = started(|_| {});
        assert_eq!(sent.len(), 2);
        assert_eq!((s.write(t(1), 100, true), s.free_space()), (0, 0));
        assert!(s.send_buffer().is_none());
    }

    #[test]
    fn binomial_control_halves_first_then_applies_its_decrease() {
        use crate::tcp::{Binomial, Control};
        // IIAD in congestion avoidance (ssthresh 2): the first loss halves as ns-2's
        // first_decrease_ does, the next subtracts beta packets whatever the window.
        let (mut s, _) = started(|c| {
            c.initial_window = 8;
            c.initial_ssthresh = Some(2);
            c.control = Control::Binomial(Binomial::IIAD);
            c.window = 1000;
            c.limited_transmit = false;
        });
        assert_eq!(ack(&mut s, 0, t(100)), vec![8]);
        // Congestion avoidance with k = 1 grows by alpha / cwnd^2 per ACK.
        let w = s.cwnd();
        assert!(w > 8.0 && (w - 8.0) < 1.0 / 64.0 + 1e-9, "{w}");
        three_dupacks(&mut s, 0, t(110));
        assert!(s.in_fast_recovery());
        assert!(
            (s.cwnd() - w / 2.0).abs() < 1e-9,
            "first decrease halves: {}",
            s.cwnd()
        );
        // Leave recovery, then lose again: cwnd drops by beta = 2/3 of a packet.
        assert!(!ack(&mut s, 8, t(200)).is_empty());
        let before = s.cwnd();
        let last = s.max_seq();
        ack(&mut s, 9, t(210));
        let w2 = s.cwnd();
        three_dupacks(&mut s, 9, t(220));
        let win = w2;
        assert!(
            before > 1.0 && (s.cwnd() - (win - 2.0 / 3.0)).abs() < 1e-9,
            "{} vs {win}",
            s.cwnd()
        );
        assert_eq!(s.ssthresh(), (win - 2.0 / 3.0).floor() as u32);
        assert!(last >= 9);
    }

    #[test]
    fn before_start_nothing_sent_and_start_is_next_timeout() {
        let ctx = FlowCtx {
            start: t(1000),
            ..ctx()
        };
        let mut s = TcpSender::new(&ctx, TcpConfig::default());
        assert_eq!(s.poll_timeout(), Some(t(1000)));
        s.handle_timeout(t(500), &mut NullSink);
        s.handle_packet(t(600), &ack_packet(0, t(600)), &mut NullSink);
        assert!(s.poll_transmit(t(600)).is_none());
        assert_eq!(s.poll_timeout(), Some(t(1000)));
        assert_eq!(s.stats().packets_sent, 0);
        s.handle_timeout(t(1000), &mut NullSink);
        assert_eq!(drain(&mut s, t(1000)), vec![0]);
    }

    #[test]
    fn syn_start_sends_only_syn_then_initial_window() {
        let mut s = TcpSender::new(&ctx(), TcpConfig::default());
        s.handle_timeout(Instant::ZERO, &mut NullSink);
        let syn = s
            .poll_transmit(Instant::ZERO)
            .expect("the SYN leaves at the start");
        assert!(s.poll_transmit(Instant::ZERO).is_none());
        let h = syn.tcp().expect("TCP header");
        assert_eq!((h.seq, h.flags.syn, h.is_ack), (0, true, false));
        assert_eq!((syn.size.as_bytes(), syn.payload), (40, 0));
        assert_eq!(syn.direction, Direction::Forward);
        assert_eq!(s.cwnd(), 1.0);
        // SYN ACKed: cwnd = IW = 2, two full data packets.
        s.handle_packet(t(100), &ack_packet(0, t(100)), &mut NullSink);
        assert_eq!(s.cwnd(), 2.0);
        let p1 = s.poll_transmit(t(100)).expect("first data packet");
        let p2 = s.poll_transmit(t(100)).expect("second data packet");
        assert!(s.poll_transmit(t(100)).is_none());
        assert_eq!(p1.tcp().map(|h| (h.seq, h.flags.syn)), Some((1, false)));
        assert_eq!(p2.tcp().map(|h| h.seq), Some(2));
        assert_eq!((p1.size.as_bytes(), p1.payload), (1040, 1000));
        assert_eq!(p1.sent_at, t(100));
    }

    #[test]
    fn slow_start_each_new_ack_adds_one_packet() {
        let (mut s, sent) = started(|_| {});
        assert_eq!(sent, vec![0, 1]);
        assert_eq!(s.cwnd(), 2.0);
        assert_eq!(ack(&mut s, 0, t(100)), vec![2, 3]);
        assert_eq!(s.cwnd(), 3.0);
        // A cumulative ACK of two packets still adds one (per ACK, not per packet).
        assert_eq!(ack(&mut s, 2, t(200)), vec![4, 5, 6]);
        assert_eq!(s.cwnd(), 4.0);
    }

    #[test]
    fn congestion_avoidance_new_ack_adds_inverse_cwnd() {
        let (mut s, _) = started(|c| c.initial_ssthresh = Some(2));
        assert_eq!(s.cwnd(), 2.0);
        ack(&mut s, 0, t(100));
        assert_eq!(s.cwnd(), 2.5);
        ack(&mut s, 1, t(110));
        assert!((s.cwnd() - (2.5 + 1.0 / 2.5)).abs() < 1e-12);
        // The usable window is the integer part.
        assert_eq!(s.window(), 2);
    }

    #[test]
    fn window_limited_by_advertised_window() {
        let (mut s, sent) = started(|c| {
            c.window = 4;
            c.initial_window = 10;
            c.initial_ssthresh = Some(100);
        });
        assert_eq!(sent, vec![0, 1, 2, 3]);
        for a in 0..20 {
            ack(&mut s, a, t(10 * a as u64 + 10));
            assert!(s.next_seq() - 1 - s.highest_ack() <= 4);
        }
        assert_eq!(s.next_seq(), 24);
        assert!(s.cwnd() > 20.0);
        assert_eq!(s.window(), 4);
    }

    #[test]
    fn cwnd_capped_by_max_cwnd() {
        let (mut s, _) = started(|c| {
            c.max_cwnd = Some(5);
            c.window = 100;
            c.initial_ssthresh = Some(100);
        });
        for a in 0..10 {
            ack(&mut s, a, t(10 * a as u64 + 10));
        }
        assert_eq!(s.cwnd(), 5.0);
        assert_eq!(s.next_seq() - 1 - s.highest_ack(), 5);
    }

    /// Loses packet 2 of 0..=7: ACKs 0 and 1 arrive, then dup-ACKs of 1.
    fn lose_packet_two(s: &mut TcpSender) -> Vec<Vec<i64>> {
        let mut out = vec![ack(s, 0, t(100)), ack(s, 1, t(101))];
        assert_eq!(s.cwnd(), 10.0);
        for i in 0..3 {
            out.push(ack(s, 1, t(102 + i)));
        }
        out
    }

    #[test]
    fn third_dupack_fast_retransmit_halves_window() {
        for variant in [TcpVariant::Reno, TcpVariant::NewReno] {
            let mut s = eight_in_flight(variant);
            let out = lose_packet_two(&mut s);
            assert_eq!(out[0], vec![8, 9]);
            assert_eq!(out[1], vec![10, 11]);
            // Limited transmit: one new packet on each of the first two dup-ACKs.
            assert_eq!(out[2], vec![12]);
            assert_eq!(out[3], vec![13]);
            // Third dup-ACK: retransmit 2; win = 10 -> ssthresh 5, cwnd 5, dupwnd 3.
            assert_eq!(out[4], vec![2]);
            assert_eq!(s.ssthresh(), 5);
            assert_eq!(s.cwnd(), 5.0);
            assert_eq!(s.dupwnd(), 3);
            assert_eq!(s.recover(), 13);
            assert!(s.in_fast_recovery());
            assert_eq!(s.fast_retransmits(), 1);
            assert_eq!(s.stats().retransmits, 1);
        }
    }

    #[test]
    fn fast_retransmit_fractional_window_ssthresh_floored() {
        let (mut s, _) = started(|c| {
            c.initial_window = 9;
            c.initial_ssthresh = Some(2);
        });
        ack(&mut s, 0, t(100)); // cwnd 9 + 1/9
        assert!((s.cwnd() - (9.0 + 1.0 / 9.0)).abs() < 1e-12);
        let mut sink = VecSink::default();
        for i in 0..3 {
            s.handle_packet(t(101 + i), &ack_packet(0, t(101 + i)), &mut sink);
        }
        let win = 9.0 + 1.0 / 9.0;
        assert_eq!(s.ssthresh(), 4);
        assert!((s.cwnd() - win / 2.0).abs() < 1e-12);
        let fr = sink
            .0
            .iter()
            .position(|(_, m)| *m == FAST_RETRANSMIT.event());
        let fr = fr.expect("fast retransmit recorded");
        // the window before the cut, recorded just before the event
        assert_eq!(sink.0[fr - 1], (t(103), LOSS_WINDOW.at(win)));
        assert!(sink.0.iter().any(|(_, m)| *m == SSTHRESH.at(4.0)));
    }

    #[test]
    fn dupacks_without_limited_transmit_send_nothing() {
        let (mut s, _) = started(|c| {
            c.initial_window = 8;
            c.limited_transmit = false;
        });
        ack(&mut s, 0, t(100));
        ack(&mut s, 1, t(101));
        assert!(ack(&mut s, 1, t(102)).is_empty());
        assert!(ack(&mut s, 1, t(103)).is_empty());
        assert_eq!(ack(&mut s, 1, t(104)), vec![2]);
    }

    #[test]
    fn recovery_further_dupacks_inflate_window() {
        let mut s = eight_in_flight(TcpVariant::Reno);
        lose_packet_two(&mut s);
        // window = int(5) + 3 = 8 <= 1 + 8: nothing new until dupwnd grows past the flight.
        let mut sent = Vec::new();
        for i in 0..6 {
            sent.extend(ack(&mut s, 1, t(110 + i)));
        }
        assert_eq!(s.dupwnd(), 9);
        // highest_ack 1 + window 14 = 15 >= t_seqno: packets 14 and 15 are sent.
        assert_eq!(sent, vec![14, 15]);
    }

    #[test]
    fn reno_partial_ack_exits_recovery() {
        let mut s = eight_in_flight(TcpVariant::Reno);
        lose_packet_two(&mut s);
        // Packets 2 and 5 were lost: the retransmission of 2 brings a partial ACK of 4.
        let out = ack(&mut s, 4, t(200));
        assert!(!s.in_fast_recovery());
        assert_eq!(s.last_cwnd_action(), CwndAction::Exited);
        assert_eq!(s.dupwnd(), 0);
        // Deflated to ssthresh, then + 1/cwnd: no retransmission of 5, only new data if allowed.
        assert!((s.cwnd() - 5.2).abs() < 1e-12);
        assert!(!out.contains(&5));
        // Three more dup-ACKs for 4 do not trigger a second fast retransmit (bugFix).
        for i in 0..3 {
            let out = ack(&mut s, 4, t(210 + i));
            assert!(!out.contains(&5));
        }
        assert_eq!(s.fast_retransmits(), 1);
    }

    #[test]
    fn newreno_partial_ack_retransmits_next_hole_and_stays() {
        let mut s = eight_in_flight(TcpVariant::NewReno);
        lose_packet_two(&mut s);
        let rtx_before = s.poll_timeout();
        let out = ack(&mut s, 4, t(200));
        assert_eq!(out, vec![5]);
        assert!(s.in_fast_recovery());
        // deflate = 3 = dupwnd: cwnd -= 0, dupwnd = 1.
        assert_eq!(s.cwnd(), 5.0);
        assert_eq!(s.dupwnd(), 1);
        assert_eq!(s.dupacks(), 3);
        // The first partial ACK restarts the retransmission timer.
        assert_eq!(s.poll_timeout(), Some(t(200) + s.rto()));
        assert_ne!(s.poll_timeout(), rtx_before);
        // A second partial ACK retransmits the next hole without restarting the timer.
        let out = ack(&mut s, 6, t(300));
        assert_eq!(out, vec![7]);
        assert_eq!(s.poll_timeout(), Some(t(200) + s.rto()));
        // deflate 2 > dupwnd 1: cwnd -= 1.
        assert_eq!(s.cwnd(), 4.0);
        // The full ACK (>= recover = 13) ends recovery.
        ack(&mut s, 13, t(400));
        assert!(!s.in_fast_recovery());
        assert_eq!(s.dupwnd(), 0);
        assert_eq!(s.dupacks(), 0);
        assert_eq!(s.fast_retransmits(), 1);
        assert_eq!(s.timeouts(), 0);
    }

    /// Window 10, ten packets in flight, packets 2 and 8 lost: eight dup-ACKs of 1 (fast
    /// retransmit at the third), then the retransmitted 2 brings the partial ACK 7.
    fn two_losses_then_partial_ack(variant: TcpVariant) -> (TcpSender, Vec<i64>) {
        let (mut s, sent) = started(|c| {
            c.variant = variant;
            c.window = 10;
            c.initial_window = 10;
            c.initial_ssthresh = Some(100);
        });
        assert_eq!(sent.len(), 10);
        assert_eq!(ack(&mut s, 0, t(100)), vec![10]);
        assert_eq!(ack(&mut s, 1, t(101)), vec![11]);
        let mut during = Vec::new();
        for i in 0..8 {
            during.extend(ack(&mut s, 1, t(102 + i)));
        }
        assert_eq!(during, vec![2]);
        assert_eq!(s.recover(), 11);
        assert_eq!(s.dupwnd(), 8);
        let out = ack(&mut s, 7, t(200));
        (s, out)
    }

    #[test]
    fn newreno_recovery_partial_ack_burst_limited_to_two() {
        let (s, out) = two_losses_then_partial_ack(TcpVariant::NewReno);
        // deflate 6 < dupwnd 8: dupwnd = 8 - 5 = 3; window min(5 + 3, 10) = 8 beyond 7.
        assert_eq!(s.dupwnd(), 3);
        assert_eq!(s.highest_ack() + i64::from(s.window()), 15);
        // Retransmit 8, then only two new packets although 12..=15 fit in the window.
        assert_eq!(out, vec![8, 12, 13]);
        assert!(s.in_fast_recovery());
    }

    #[test]
    fn reno_partial_ack_deflates_window_and_waits() {
        let (s, out) = two_losses_then_partial_ack(TcpVariant::Reno);
        assert!(!s.in_fast_recovery());
        // Recovery left: window back to int(5 + 1/5) = 5 beyond 7, only packet 12 fits.
        assert_eq!(out, vec![12]);
    }

    #[test]
    fn timeout_collapses_window_and_goes_back_n() {
        let mut s = eight_in_flight(TcpVariant::NewReno);
        let mut m = VecSink::default();
        let rto = s.rto();
        assert_eq!(rto, Duration::from_secs(3));
        let due = s.poll_timeout().expect("the retransmission timer runs");
        assert_eq!(due, Instant::ZERO + rto);
        let window = s.cwnd();
        s.handle_timeout(due, &mut m);
        let timeout =
            m.0.iter()
                .position(|r| *r == (due, TIMEOUT.event()))
                .unwrap();
        assert_eq!(m.0[timeout - 1], (due, LOSS_WINDOW.at(window)));
        assert_eq!(drain(&mut s, due), vec![0]);
        assert_eq!(s.cwnd(), 1.0);
        assert_eq!(s.ssthresh(), 4);
        assert_eq!(s.timeouts(), 1);
        assert_eq!(s.next_seq(), 1);
        assert_eq!(s.last_cwnd_action(), CwndAction::Timeout);
        assert!(m.0.contains(&(due, TIMEOUT.event())));
        assert!(m.0.contains(&(due, CWND.at(1.0))));
        assert!(m.0.contains(&(due, RTO.secs(Duration::from_secs(6)))));
        // Backoff doubling: 6 s, then 12 s.
        let due2 = s.poll_timeout().expect("re-armed");
        assert_eq!(due2, due + Duration::from_secs(6));
        s.handle_timeout(due2, &mut NullSink);
        assert_eq!(drain(&mut s, due2), vec![0]);
        assert_eq!(s.poll_timeout(), Some(due2 + Duration::from_secs(12)));
        assert_eq!(s.ssthresh(), 2);
        assert_eq!(s.stats().retransmits, 2);
        // First packet lost: the initial window drops to 1.
        assert_eq!(s.initial_window(), 1.0);
        // Go-back-N: the ACK of everything up to 3 lets 4 and 5 out (cwnd 2).
        let out = ack(&mut s, 3, due2 + Duration::from_millis(100));
        assert_eq!(out, vec![4, 5]);
    }

    #[test]
    fn timeout_retransmission_is_not_timed_karn() {
        let mut s = eight_in_flight(TcpVariant::Reno);
        let due = s.poll_timeout().expect("armed");
        s.handle_timeout(due, &mut NullSink);
        drain(&mut s, due);
        let mut m = VecSink::default();
        s.handle_packet(due + Duration::from_millis(50), &ack_packet(0, due), &mut m);
        assert!(!m.0.iter().any(|(_, x)| x.is(&RTT)));
        // The backoff stays until a timed packet is acknowledged.
        assert_eq!(s.rtt().backoff(), 2);
    }

    #[test]
    fn new_ack_of_timed_packet_samples_rtt_and_reports() {
        let (mut s, _) = started(|_| {});
        let mut m = VecSink::default();
        s.handle_packet(t(100), &ack_packet(0, t(100)), &mut m);
        assert!(m.0.contains(&(t(100), RTT.secs(Duration::from_millis(100)))));
        assert!(m.0.iter().any(|(_, x)| x.is(&SRTT)));
        assert!(m.0.contains(&(t(100), CWND.at(3.0))));
        assert!(s.srtt() >= Duration::from_millis(90) && s.srtt() <= Duration::from_millis(100));
        // 10 ticks (or 11 with the clock phase): rto = srtt + 4·rttvar = 3 srtt.
        assert!(s.rto() >= Duration::from_millis(270) && s.rto() <= Duration::from_millis(330));
    }

    #[test]
    fn all_data_acked_cancels_timer_and_completes() {
        let (mut s, sent) = started(|c| c.packets = Some(3));
        assert_eq!(sent, vec![0, 1]);
        assert_eq!(ack(&mut s, 0, t(100)), vec![2]);
        assert!(!s.is_complete());
        assert!(ack(&mut s, 2, t(200)).is_empty());
        assert!(s.is_complete());
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn syn_finite_transfer_counts_data_packets_after_syn() {
        let cfg = TcpConfig {
            packets: Some(2),
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(&ctx(), cfg);
        s.handle_timeout(Instant::ZERO, &mut NullSink);
        assert_eq!(drain(&mut s, Instant::ZERO), vec![0]);
        assert_eq!(ack(&mut s, 0, t(100)), vec![1, 2]);
        assert!(ack(&mut s, 2, t(200)).is_empty());
        assert!(s.is_complete());
    }

    #[test]
    fn stop_no_new_data_but_retransmissions_continue() {
        let ctx = FlowCtx {
            stop: Some(t(50)),
            ..ctx()
        };
        let cfg = TcpConfig {
            syn: false,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(&ctx, cfg);
        s.handle_timeout(Instant::ZERO, &mut NullSink);
        let sent = drain(&mut s, Instant::ZERO);
        assert_eq!(sent, vec![0, 1]);
        // After the stop an ACK opens the window but no new packet leaves.
        assert!(ack(&mut s, 0, t(100)).is_empty());
        assert!(!s.is_complete());
        // Packet 1 is still retransmitted on timeout.
        let due = s.poll_timeout().expect("packet 1 outstanding");
        s.handle_timeout(due, &mut NullSink);
        assert_eq!(drain(&mut s, due), vec![1]);
        assert!(ack(&mut s, 1, due + Duration::from_millis(100)).is_empty());
        assert!(s.is_complete());
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn stop_before_start_never_sends() {
        let ctx = FlowCtx {
            start: t(100),
            stop: Some(t(100)),
            ..ctx()
        };
        let mut s = TcpSender::new(&ctx, TcpConfig::default());
        assert_eq!(s.poll_timeout(), None);
        s.handle_timeout(t(100), &mut NullSink);
        assert!(s.poll_transmit(t(100)).is_none());
    }

    #[test]
    fn max_burst_limits_packets_per_ack() {
        let (mut s, sent) = started(|c| {
            c.initial_window = 10;
            c.max_burst = 3;
        });
        assert_eq!(sent, vec![0, 1, 2]);
        // The ACK of 0 could release 1 + 10 packets but only 3 leave.
        assert_eq!(ack(&mut s, 0, t(100)), vec![3, 4, 5]);
    }

    #[test]
    fn newreno_first_data_packet_lost_fast_retransmit_allowed() {
        let mut s = TcpSender::new(
            &ctx(),
            TcpConfig {
                initial_window: 4,
                ..TcpConfig::default()
            },
        );
        s.handle_timeout(Instant::ZERO, &mut NullSink);
        drain(&mut s, Instant::ZERO);
        assert_eq!(ack(&mut s, 0, t(100)), vec![1, 2, 3, 4]);
        // Packet 1 lost: dup-ACKs of 0 (highest_ack == 0 <= recover == 0).
        ack(&mut s, 0, t(200));
        ack(&mut s, 0, t(201));
        assert_eq!(ack(&mut s, 0, t(202)), vec![1]);
        assert_eq!(s.fast_retransmits(), 1);
    }

    #[test]
    fn stale_and_foreign_acks_ignored() {
        let (mut s, _) = started(|c| c.initial_window = 4);
        ack(&mut s, 2, t(100));
        let before = (s.cwnd(), s.dupacks(), s.next_seq());
        assert!(ack(&mut s, 1, t(101)).is_empty());
        let mut other = ack_packet(2, t(102));
        other.flow = FlowId(9);
        s.handle_packet(t(102), &other, &mut NullSink);
        let mut beyond = ack_packet(1000, t(103));
        beyond.direction = Direction::Reverse;
        s.handle_packet(t(103), &beyond, &mut NullSink);
        assert_eq!((s.cwnd(), s.dupacks(), s.next_seq()), before);
    }

    #[test]
    fn spurious_timeout_call_does_nothing() {
        let (mut s, _) = started(|_| {});
        let due = s.poll_timeout().expect("armed");
        s.handle_timeout(due - Duration::from_nanos(1), &mut NullSink);
        assert!(s.poll_transmit(due).is_none());
        assert_eq!(s.timeouts(), 0);
        assert_eq!(s.poll_timeout(), Some(due));
    }
}
