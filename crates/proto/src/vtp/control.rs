//! VTP's rate control (PROTOCOLS.md §5.3; Yang, Gerla, Sanadidi 2004, Sections 3.1 and 4.2):
//! the state behind [`VtpSender`](super::VtpSender)'s rate R, apart from pacing and report
//! checking.
//!
//! Where the paper is explicit and PROTOCOLS.md says otherwise, this follows the paper:
//!
//! - **RTT_prev** in `R' = (R + s/RTT)/(2 − RTT_prev/RTT)` is, as in the paper's eq. 7, "the
//!   round-trip time during the previous round": the smoothed RTT when the previous increase
//!   was made (or the hold ended), not the smoothed RTT before the last report's update
//!   (PROTOCOLS.md). With one report per RTT the two coincide; when reports come more often,
//!   the per-report value would make `RTT_prev/RTT` the change of the EWMA over one report
//!   rather than over one round.
//!
//! Points PROTOCOLS.md leaves open, as interpreted here:
//!
//! - `RTT_prev/RTT` is clamped to `[1 − b, 1]` ([`VtpConfig::rtt_ratio_bound`], b = 0.5): the
//!   denominator `2 − RTT_prev/RTT` then stays in `[1, 1 + b]`. Eq. 7 is derived for an RTT
//!   that grows round by round, and the paper notes that R' "is lower than what would be
//!   derived from the conventional linear rate increase by 1 packet/RTT": when the RTT falls
//!   (a queue draining after a cut) the unclamped formula would grow by several packets per
//!   RTT (and divide by zero when the RTT halves), so R' never exceeds `R + s/RTT`.
//! - τ uses the smoothed RTT at the time of the cut (the paper writes `RTT = RTT_max`: at a
//!   congestion loss the queue is full, and the smoothed RTT is then near its largest).
//! - A congestion loss cuts again only if the report covers a packet sent after the last cut
//!   (`highest_seq ≥` the first sequence number sent after it): losses of packets sent before
//!   the cut belong to the congestion episode already answered, as NewReno's `recover` point.
//!   A report with a congestion loss never triggers an increase.
//! - The hold ends on a timer, exactly τ after the cut (not at the next report after τ).
//! - A hold started by silence ends with `R = AR·(1 + e)` only if a report arrived during it;
//!   otherwise the reduced rate is kept, so a stale AR from before the silence cannot undo
//!   the cut.
//! - After the rate rule, R is clamped to `[min rate, max_rate]`; the min rate is one packet
//!   per smoothed RTT (the initial RTT guess before any sample), at least 1 bit/s and at most
//!   `max_rate`. So AR = 0 gives one packet per RTT.

use super::VtpFeedback;
use crate::lda::metrics::{CONGESTION_LOSS, WIRELESS_LOSS};
use crate::metric::{ACHIEVED_RATE, RATE, RTT, SPIKE, SRTT, WIRELESS_LOSS_ESTIMATE};
use fairstream_core::{Bitrate, Duration, Instant};

use super::VtpConfig;
use super::config::{FLOOR_RATE, Params};
use crate::MetricSink;
use crate::lda::SpikeDetector;

/// The rate control's mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VtpMode {
    /// Probing: the equivalent-window increase at most once per RTT.
    Increase,
    /// Holding a reduced rate until the instant given.
    Hold {
        /// When the hold ends.
        until: Instant,
    },
}

/// Rate, RTT, Spike and e state of a sender.
#[derive(Clone, Debug)]
pub(super) struct Control {
    /// R, bytes/s (always finite and within the limits).
    rate: f64,
    reported_rate: Option<Bitrate>,
    /// Smoothed RTT, seconds.
    srtt: Option<f64>,
    /// RTT_prev: the smoothed RTT when the current round began.
    round_rtt: Option<f64>,
    spike: SpikeDetector,
    e: f64,
    /// Last Achieved Rate heard, bytes/s.
    ar: Option<f64>,
    mode: VtpMode,
    /// End the hold with `R = AR·(1 + e)` (false while a silence hold has had no report).
    resume_at_ar: bool,
    last_increase: Instant,
    /// The first sequence number sent after the last cut.
    cut_seq: u64,
    e_loss_free: bool,
    congestion_cuts: u64,
    silence_cuts: u64,
}

impl Control {
    pub(super) fn new(p: &Params, config: &VtpConfig, start: Instant) -> Self {
        let mut c = Self {
            rate: p.initial_rate,
            reported_rate: None,
            srtt: None,
            round_rtt: None,
            spike: SpikeDetector::new(config.spike),
            e: 0.0,
            ar: None,
            mode: VtpMode::Increase,
            resume_at_ar: false,
            last_increase: start,
            cut_seq: 0,
            e_loss_free: config.e_loss_free_periods,
            congestion_cuts: 0,
            silence_cuts: 0,
        };
        c.rate = c.clamp(p.initial_rate, p);
        c
    }

    pub(super) fn rate(&self) -> f64 {
        self.rate
    }
    pub(super) fn srtt(&self) -> Option<f64> {
        self.srtt
    }
    pub(super) fn rtt_prev(&self) -> Option<f64> {
        self.round_rtt
    }
    pub(super) fn e(&self) -> f64 {
        self.e
    }
    pub(super) fn in_spike(&self) -> bool {
        self.spike.in_spike()
    }
    pub(super) fn ar(&self) -> Option<f64> {
        self.ar
    }
    pub(super) fn mode(&self) -> VtpMode {
        self.mode
    }
    pub(super) fn hold_until(&self) -> Option<Instant> {
        match self.mode {
            VtpMode::Hold { until } => Some(until),
            VtpMode::Increase => None,
        }
    }
    pub(super) fn congestion_cuts(&self) -> u64 {
        self.congestion_cuts
    }
    pub(super) fn silence_cuts(&self) -> u64 {
        self.silence_cuts
    }

    /// The RTT in force, seconds: smoothed, or the initial guess before any sample.
    fn rtt(&self, p: &Params) -> f64 {
        self.srtt.unwrap_or(p.initial_rtt)
    }

    /// The rate floor, bytes/s: one packet per RTT, at least 1 bit/s, at most the ceiling.
    pub(super) fn min_rate(&self, p: &Params) -> f64 {
        (p.min_rate_packets * p.size_f / self.rtt(p))
            .max(FLOOR_RATE)
            .min(p.max_rate)
    }

    fn clamp(&self, r: f64, p: &Params) -> f64 {
        let min = self.min_rate(p);
        if r.is_nan() {
            min
        } else {
            r.clamp(min, p.max_rate)
        }
    }

    /// Time between two data packets at R (at least 1 ns).
    pub(super) fn gap(&self, p: &Params) -> Duration {
        Duration::from_secs_f64(p.size_f / self.rate).max(Duration::from_nanos(1))
    }

    /// The receiver's sampling period as the sender expects it: its RTT (the initial
    /// period before any sample), and at least the minimum number of packet times.
    pub(super) fn sampling_period(&self, p: &Params) -> Duration {
        let t = self
            .srtt
            .map_or(p.initial_period, Duration::from_secs_f64)
            .max(Duration::from_nanos(1));
        t.max(self.gap(p).saturating_mul(u64::from(p.min_period_packets)))
    }

    /// τ = RTT/(2(1 − γ)).
    fn tau(&self, p: &Params) -> Duration {
        Duration::from_secs_f64(self.rtt(p) / (2.0 * (1.0 - p.gamma)))
    }

    /// Records R if it changed since last recorded.
    pub(super) fn record_rate(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        let r = Bitrate::from_bps_f64(self.rate * 8.0);
        if self.reported_rate != Some(r) {
            self.reported_rate = Some(r);
            metrics.record(now, RATE.bps(r));
        }
    }

    fn set_rate(&mut self, now: Instant, r: f64, p: &Params, metrics: &mut dyn MetricSink) {
        self.rate = self.clamp(r, p);
        self.record_rate(now, metrics);
    }

    /// The first packet left at `now`: the first round starts.
    pub(super) fn start_rounds(&mut self, now: Instant) {
        self.last_increase = now;
    }

    /// Ends the hold if it is due at `now`: `R = AR·(1 + e)`, INCREASE.
    pub(super) fn end_hold_if_due(&mut self, now: Instant, p: &Params, m: &mut dyn MetricSink) {
        let VtpMode::Hold { until } = self.mode else {
            return;
        };
        if now < until {
            return;
        }
        if self.resume_at_ar
            && let Some(ar) = self.ar
        {
            self.set_rate(now, ar * (1.0 + self.e), p, m);
        }
        self.mode = VtpMode::Increase;
        self.last_increase = now;
        self.round_rtt = self.srtt;
    }

    /// No report for too long: `R = γ·R`, HOLD.
    pub(super) fn silence(
        &mut self,
        now: Instant,
        next_seq: u64,
        p: &Params,
        m: &mut dyn MetricSink,
    ) {
        self.set_rate(now, p.gamma * self.rate, p, m);
        self.mode = VtpMode::Hold {
            until: now.saturating_add(self.tau(p)),
        };
        self.resume_at_ar = false;
        self.cut_seq = next_seq;
        self.silence_cuts += 1;
    }

    /// A congestion loss: `R = γ·AR·(1 + e)`, HOLD for τ.
    fn cut(&mut self, now: Instant, next_seq: u64, p: &Params, m: &mut dyn MetricSink) {
        let ar = self.ar.unwrap_or(self.rate);
        self.set_rate(now, p.gamma * ar * (1.0 + self.e), p, m);
        self.mode = VtpMode::Hold {
            until: now.saturating_add(self.tau(p)),
        };
        self.resume_at_ar = p.resume_at_achieved_rate;
        self.cut_seq = next_seq;
        self.congestion_cuts += 1;
    }

    /// The equivalent-window increase (paper eq. 7) `R' = (R + s/RTT)/(2 − RTT_prev/RTT)`.
    fn increase(&mut self, now: Instant, p: &Params, m: &mut dyn MetricSink) {
        let Some(rtt) = self.srtt else {
            return;
        };
        let prev = self.round_rtt.unwrap_or(rtt);
        let b = p.rtt_ratio_bound;
        let ratio = (prev / rtt).clamp(1.0 - b, 1.0);
        self.set_rate(now, (self.rate + p.size_f / rtt) / (2.0 - ratio), p, m);
        self.round_rtt = Some(rtt);
        self.last_increase = now;
    }

    /// A plausible report, with its RTT sample if positive; `next_seq` is the first sequence
    /// number not sent yet.
    pub(super) fn on_report(
        &mut self,
        now: Instant,
        fb: &VtpFeedback,
        sample: Option<Duration>,
        next_seq: u64,
        p: &Params,
        m: &mut dyn MetricSink,
    ) {
        if let Some(s) = sample {
            m.record(now, RTT.secs(s));
            let x = s.as_secs_f64();
            let srtt = self.srtt.map_or(x, |r| r + p.rtt_gain * (x - r));
            self.srtt = Some(srtt);
            self.round_rtt.get_or_insert(srtt);
            m.record(now, SRTT.secs(Duration::from_secs_f64(srtt)));
            let in_spike = self.spike.observe(x);
            m.record(now, SPIKE.flag(in_spike));
        }
        self.ar = Some(fb.achieved_rate.as_bytes_per_sec());
        m.record(now, ACHIEVED_RATE.bps(fb.achieved_rate));
        if matches!(self.mode, VtpMode::Hold { .. }) && p.resume_at_achieved_rate {
            self.resume_at_ar = true;
        }

        let total = u64::from(fb.lost) + u64::from(fb.received);
        let in_spike = self.spike.in_spike();
        let mut congestion = false;
        if fb.lost > 0 && in_spike {
            congestion = true;
            m.record(now, CONGESTION_LOSS.count(u64::from(fb.lost)));
            if fb.highest_seq >= self.cut_seq {
                self.cut(now, next_seq, p, m);
            }
        } else if !in_spike && total > 0 && (fb.lost > 0 || self.e_loss_free) {
            if fb.lost > 0 {
                m.record(now, WIRELESS_LOSS.count(u64::from(fb.lost)));
            }
            let frac = fb.lost as f64 / total as f64;
            let e = ((1.0 - p.e_gain) * self.e + p.e_gain * frac).clamp(0.0, p.e_max);
            if e != self.e {
                self.e = e;
                m.record(now, WIRELESS_LOSS_ESTIMATE.at(e));
            }
        }
        if !congestion
            && self.mode == VtpMode::Increase
            && self
                .srtt
                .is_some_and(|rtt| now.saturating_since(self.last_increase).as_secs_f64() >= rtt)
        {
            self.increase(now, p, m);
        }
        // The floor follows the RTT.
        self.set_rate(now, self.rate, p, m);
    }
}
