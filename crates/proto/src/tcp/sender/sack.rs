//! The SACK variant of the sender: RFC 6675 loss recovery on the scoreboard
//! ([`crate::tcp::scoreboard`]), the window during recovery by RFC 6675 (`cwnd = ssthresh`) or
//! by PRR (RFC 6937 with the slow-start reduction bound), and BBR's hook on every ACK.
//!
//! Sending is by `pipe`: while `cwnd − pipe ≥ 1` the next packet is `NextSeg`'s (rule 1, a lost
//! packet; rule 2, new data; in recovery rule 3, an unSACKed packet below the highest SACKed one,
//! and rule 4, one rescue retransmission per recovery). Outside recovery SACKed packets leave
//! the pipe too, as Linux counts `packets_in_flight`, which generalizes limited transmit.
//!
//! Recovery begins on the third duplicate ACK (one that SACKs new data without moving the
//! cumulative ACK) or as soon as the first unacknowledged packet `IsLost`, and ends when the
//! cumulative ACK reaches the recovery point (the highest packet sent when it began). A timeout
//! deems every unSACKed packet lost, keeps the SACK information (RFC 6675 §5.1), restarts from one
//! packet and resends the lost ones in order before new data; no new recovery begins before the
//! recovery point of the timeout is acknowledged. Beyond RFC 6675, a retransmission is deemed
//! lost again when a packet sent a quarter of the smallest RTT after it is delivered (RACK's
//! rule, RFC 8985, as Linux does), and is resent without waiting for the timeout. Not modelled:
//! the rest of RACK-TLP (time-based loss of first transmissions, tail-loss probes), D-SACK and
//! undoing a spurious reduction, F-RTO.

use fairstream_core::{Bitrate, Duration, Instant};

use super::{CwndAction, NUM_DUPACKS, TcpSender, Timer};
use crate::MetricSink;
use crate::tcp::TcpSegment;
use crate::tcp::bbr::{BbrAck, LossState};
use crate::tcp::metrics::{FAST_RETRANSMIT, LOSS_WINDOW, TIMEOUT};
use crate::tcp::scoreboard::{AckUpdate, NextSeg};

/// What the next transmission is.
enum Next {
    /// New data.
    New,
    /// A retransmission by `NextSeg` rule (1) or (3).
    Retransmit(i64),
    /// The rescue retransmission, rule (4).
    Rescue(i64),
}

impl TcpSender {
    /// Processes an ACK (cumulative ACK and SACK blocks) under RFC 6675.
    pub(super) fn on_ack_sack(
        &mut self,
        now: Instant,
        seg: &TcpSegment,
        metrics: &mut dyn MetricSink,
    ) {
        let a = seg.ack;
        if a < self.highest_ack {
            // An ACK older than one already processed (reordered): nothing in it is news enough.
            return;
        }
        let prior_in_flight = self.sb.pipe();
        let advanced = a > self.highest_ack;
        let mut up = AckUpdate::default();
        if advanced {
            self.sb.ack_to(a, &mut up);
        }
        for (start, end) in seg.sack.iter(a) {
            self.sb.sack(start, end, &mut up);
        }
        let mut losses = self.sb.mark_lost();
        // Retransmissions lost again (RACK's rule, as Linux): resendable by NextSeg rule (1).
        if self.sb.retransmitted() > 0
            && let Some(newest) = up.newest
        {
            let reo = self.min_rtt.map_or(Duration::ZERO, |m| m / 4);
            if let Some(lowest) = self.sb.lost_retransmissions(newest.sent_at, reo) {
                self.rec.high_rxt = self.rec.high_rxt.min(lowest - 1);
                losses += 1;
            }
        }
        if advanced {
            self.cumulative_ack(a);
            if a < self.maxseq {
                self.set_rtx_timer(now);
            } else {
                self.timers[Timer::Rtx as usize] = None;
            }
        } else if up.sacked > 0 {
            // RFC 6675's duplicate ACK: SACKs new data without moving the cumulative ACK.
            self.dupacks += 1;
        }
        // RTT: the RTO estimator gets the oldest never-retransmitted packet delivered (Linux's
        // seq_rtt), else the timestamp echo of an ACK of new data; the control the newest.
        let since = |d: Option<crate::tcp::scoreboard::Delivered>| {
            d.map(|d| now.saturating_since(d.sent_at))
        };
        let rto_sample = since(up.oldest_clean).or_else(|| {
            if self.config.timestamps && advanced {
                self.ts_rtt(now)
            } else {
                None
            }
        });
        if let Some(r) = rto_sample {
            self.rtt_sample(now, r, metrics);
        }
        self.ack_rtt = since(up.newest_clean).or(rto_sample);

        if self.rec.state != LossState::Open && a >= self.recover && advanced {
            self.exit_recovery();
        }
        let mut entered = false;
        if self.rec.state == LossState::Open
            && self.highest_ack < self.maxseq
            && (self.dupacks >= NUM_DUPACKS || self.sb.is_lost(self.highest_ack + 1))
        {
            self.enter_recovery(now, metrics);
            entered = true;
        }
        if self.bbr.is_none() {
            if advanced && !entered && self.rec.state != LossState::Recovery {
                self.opencwnd(now, up.delivered);
            }
            if self.rec.state == LossState::Recovery {
                self.recovery_window(up.delivered);
            }
        }
        if let Some(b) = self.bbr.as_deref_mut() {
            let rs = self.rate.on_ack(
                now,
                &up,
                self.min_rtt,
                u32::try_from(losses).unwrap_or(u32::MAX),
                prior_in_flight,
            );
            let out = b.on_ack(&BbrAck {
                now,
                rs: &rs,
                delivered: self.rate.delivered(),
                in_flight: self.sb.pipe(),
                cwnd: self.cwnd,
                state: self.rec.state,
                packet_bytes: self.config.packet_size.as_bytes() as f64,
            });
            self.cwnd = out.cwnd;
            if let Some(max) = self.config.max_cwnd
                && max > 0
            {
                self.cwnd = self.cwnd.min(f64::from(max));
            }
            if let Some(ss) = out.ssthresh {
                self.ssthresh = (ss as i64).max(2);
            }
            let bits = self.config.packet_size.as_bits() as f64;
            self.pacer
                .set_rate(Some(Bitrate::from_bps_f64(out.pacing_rate * bits)));
            if out.app_limited {
                self.rate.set_app_limited(self.sb.pipe());
            }
        }
        if advanced && a == 0 && self.config.syn {
            // The SYN is acknowledged: the initial window.
            self.cwnd = self.iw;
        }
        self.send_sack(now);
    }

    /// Enters fast recovery (RFC 6675 §5 step 4): the recovery point, the control's reduction
    /// (or BBR's saved window), and the first unacknowledged packet retransmitted at once.
    fn enter_recovery(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.recover = self.maxseq;
        self.rec.state = LossState::Recovery;
        self.last_cwnd_action = CwndAction::DupAck;
        self.fast_retransmits += 1;
        metrics.record(now, LOSS_WINDOW.at(self.cwnd));
        metrics.record(now, FAST_RETRANSMIT.event());
        self.sb.mark_head_lost();
        self.rec.prr_delivered = 0;
        self.rec.prr_out = 0;
        self.rec.recover_fs = self.sb.outstanding().max(1);
        match self.bbr.as_deref_mut() {
            Some(b) => b.on_congestion(self.cwnd, LossState::Recovery),
            None => {
                self.reduce();
                if !self.config.prr {
                    // RFC 6675: cwnd = ssthresh for the whole recovery.
                    self.cwnd = self.ssthresh as f64;
                }
            }
        }
        self.set_rtx_timer(now);
        let first = self.highest_ack + 1;
        self.rec.high_rxt = first;
        self.rec.rescue_rxt = Some(first);
        self.output(now, first);
        self.rec.prr_out += 1;
    }

    /// Leaves recovery (the recovery point is acknowledged): the window is ssthresh (RFC 6675
    /// and RFC 6937); BBR restores its own.
    fn exit_recovery(&mut self) {
        let was = self.rec.state;
        self.rec.state = LossState::Open;
        if was == LossState::Recovery {
            self.last_cwnd_action = CwndAction::Exited;
            if self.bbr.is_none() {
                self.cwnd = self.ssthresh as f64;
            }
        }
    }

    /// The window during recovery after an ACK that delivered `delivered` packets: PRR's
    /// (RFC 6937 §3, slow-start reduction bound), or RFC 6675's ssthresh.
    fn recovery_window(&mut self, delivered: u32) {
        if !self.config.prr {
            self.cwnd = self.ssthresh as f64;
            return;
        }
        let r = &mut self.rec;
        r.prr_delivered += u64::from(delivered);
        let pipe = self.sb.pipe() as i64;
        let ssthresh = self.ssthresh;
        let (prr_delivered, prr_out) = (r.prr_delivered as i64, r.prr_out as i64);
        let sndcnt = if pipe > ssthresh {
            // Proportional: ⌈prr_delivered · ssthresh / RecoverFS⌉ − prr_out.
            let fs = r.recover_fs as i64;
            (prr_delivered * ssthresh + fs - 1) / fs - prr_out
        } else {
            let limit = (prr_delivered - prr_out).max(i64::from(delivered)) + 1;
            (ssthresh - pipe).min(limit)
        };
        self.cwnd = (pipe + sndcnt.max(0)) as f64;
    }

    /// Sends while `cwnd − pipe ≥ 1`, what `NextSeg` says (RFC 6675 §5 step C).
    pub(super) fn send_sack(&mut self, now: Instant) {
        self.update_pacing();
        let max_burst = self.config.max_burst;
        let mut n = 0u32;
        loop {
            if max_burst != 0 && n == max_burst {
                break;
            }
            // cwnd − pipe ≥ 1 packet (cwnd ≥ 1, so the cast is its whole packets).
            if self.sb.pipe() >= self.cwnd as u64 {
                break;
            }
            let Some(next) = self.next_seg() else {
                if self.t_seqno >= self.curseq && self.bbr.is_some() {
                    // Nothing to send with room in the window: application-limited.
                    self.rate.set_app_limited(self.sb.pipe());
                }
                break;
            };
            if self.paced_out(now) {
                break;
            }
            match next {
                Next::New => {
                    self.output(now, self.t_seqno);
                    self.t_seqno += 1;
                }
                Next::Retransmit(s) => {
                    self.output(now, s);
                    self.rec.high_rxt = self.rec.high_rxt.max(s);
                }
                Next::Rescue(s) => {
                    self.output_with(now, s, true);
                    self.rec.rescue_rxt = Some(self.recover);
                }
            }
            if self.rec.state == LossState::Recovery {
                self.rec.prr_out += 1;
            }
            n += 1;
        }
    }

    /// RFC 6675 `NextSeg`: a lost packet, new data, then (in recovery) an unSACKed packet below
    /// the highest SACKed one or the rescue retransmission.
    fn next_seg(&mut self) -> Option<Next> {
        if self.sb.lost() > 0
            && let Some(NextSeg::Lost(s)) = self.sb.next_seg(self.rec.high_rxt, false, false)
        {
            return Some(Next::Retransmit(s));
        }
        if self.t_seqno < self.curseq && self.t_seqno <= self.highest_ack + self.wnd {
            return Some(Next::New);
        }
        if self.rec.state != LossState::Recovery {
            return None;
        }
        let rescue = self.rec.rescue_rxt.is_none_or(|r| self.highest_ack > r);
        match self.sb.next_seg(self.rec.high_rxt, true, rescue)? {
            NextSeg::Lost(s) | NextSeg::Unsacked(s) => Some(Next::Retransmit(s)),
            NextSeg::Rescue(s) => Some(Next::Rescue(s)),
        }
    }

    /// The retransmission timer fired with SACK: every unSACKed packet is lost, the window one
    /// packet, the lost packets resent in order (RFC 6675 §5.1; Linux `tcp_enter_loss`).
    pub(super) fn on_rtx_timeout_sack(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.timeouts += 1;
        metrics.record(now, LOSS_WINDOW.at(self.cwnd));
        metrics.record(now, TIMEOUT.event());
        self.dupacks = 0;
        if self.highest_ack == self.maxseq {
            // Nothing outstanding: restart from one packet, keep ssthresh, no backoff.
            self.cwnd = 1.0;
            self.set_rtx_timer(now);
            self.last_cwnd_action = CwndAction::Timeout;
            self.send_sack(now);
            return;
        }
        if self.highest_ack == -1 {
            self.iw = 1.0;
        }
        let win = self.cwnd.max(1.0).min(self.wnd as f64);
        match self.bbr.as_deref_mut() {
            Some(b) => b.on_congestion(self.cwnd, LossState::Loss),
            None => self.ssthresh = self.timeout_ssthresh(win),
        }
        self.first_decrease = false;
        self.cwnd = 1.0;
        self.rtt.backoff_timer();
        self.set_rtx_timer(now);
        self.recover = self.maxseq;
        self.rec.state = LossState::Loss;
        self.rec.high_rxt = self.highest_ack;
        self.rec.rescue_rxt = None;
        self.sb.timeout();
        self.last_cwnd_action = CwndAction::Timeout;
        self.send_sack(now);
    }
}
