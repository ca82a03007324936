//! BBR version 1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR: Congestion-Based
//! Congestion Control", ACM Queue 14(5), 2016; Linux `net/ipv4/tcp_bbr.c`), in packets.
//!
//! BBR models the path by two numbers: the bottleneck bandwidth, the largest delivery rate of
//! the last 10 rounds ([`MaxFilter`] over rate samples, [`super::rate`]), and the round-trip
//! propagation time, the smallest RTT of the last 10 s. It paces at a gain times the bandwidth and
//! caps what is in flight at a gain times their product (plus Linux's quantization budget and
//! ACK-aggregation allowance), moving through its modes:
//!
//! - **Startup**: gains 2/ln 2 ≈ 2.885 until the bandwidth grew less than 25 % in 3 rounds;
//! - **Drain**: pacing gain 1/2.885 until what is in flight is down to one bandwidth-delay product;
//! - **ProbeBW**: pacing gains cycling 5/4, 3/4, 1, 1, 1, 1, 1, 1, one phase per min RTT, from a
//!   random phase other than 3/4; cwnd gain 2;
//! - **ProbeRTT**: when the min RTT is 10 s old, at most 4 packets in flight for 200 ms and a
//!   round, then back.
//!
//! In loss recovery the window follows packet conservation for a round, and is restored when
//! recovery ends (`bbr_set_cwnd_to_recover_or_restore`). Not modelled: the long-term bandwidth
//! sampling that detects token-bucket policers (`lt_bw`), and the earliest-departure-time
//! correction of in-flight counts (there is no lookahead in the simulator's pacer).

use fairstream_core::{Duration, Instant};

use super::filter::MaxFilter;
use super::rate::RateSample;

/// ProbeBW's pacing gains, one per phase.
pub const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];

/// BBR's parameters (Linux `tcp_bbr.c` values; the paper gives the same).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrParams {
    /// Startup's gains (Linux `bbr_high_gain`: 2885/1000 + 1/256).
    pub high_gain: f64,
    /// ProbeBW's cwnd gain.
    pub cwnd_gain: f64,
    /// Rounds the bandwidth filter spans.
    pub bw_rounds: u64,
    /// How long a min RTT sample stays valid.
    pub min_rtt_window: Duration,
    /// How long ProbeRTT holds the window at its minimum.
    pub probe_rtt_time: Duration,
    /// The least window, packets (also ProbeRTT's).
    pub min_cwnd: f64,
    /// Pacing below the estimated bandwidth by this fraction (Linux `bbr_pacing_margin_percent`).
    pub pacing_margin: f64,
}

impl Default for BbrParams {
    fn default() -> Self {
        Self {
            high_gain: 2.885 + 1.0 / 256.0,
            cwnd_gain: 2.0,
            bw_rounds: 10,
            min_rtt_window: Duration::from_secs(10),
            probe_rtt_time: Duration::from_millis(200),
            min_cwnd: 4.0,
            pacing_margin: 0.01,
        }
    }
}

/// Bandwidth growth below this factor in a round counts towards a full pipe.
const FULL_BW_THRESH: f64 = 1.25;
/// Rounds without such growth that end Startup.
const FULL_BW_COUNT: u32 = 3;
/// Rounds the ACK-aggregation estimate spans (Linux `bbr_extra_acked_win_rtts`).
const EXTRA_ACKED_ROUNDS: u32 = 5;
/// The ACK-aggregation allowance is at most this much time at the bandwidth.
const EXTRA_ACKED_MAX: Duration = Duration::from_millis(100);
/// Pacing rates below this (bytes/s) leave one segment per "TSO burst", else two
/// (Linux `bbr_min_tso_rate`: 1.2 Mbit/s).
const MIN_TSO_RATE: f64 = 1.2e6 / 8.0;

/// BBR's modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Exponential growth to find the bandwidth.
    Startup,
    /// Draining the queue Startup built.
    Drain,
    /// Cycling the pacing gain around 1.
    ProbeBw,
    /// Probing the propagation delay with a minimal window.
    ProbeRtt,
}

impl Mode {
    /// A number for metric records: 0 Startup, 1 Drain, 2 ProbeBW, 3 ProbeRTT.
    pub fn code(self) -> u8 {
        match self {
            Self::Startup => 0,
            Self::Drain => 1,
            Self::ProbeBw => 2,
            Self::ProbeRtt => 3,
        }
    }
}

/// The sender's loss state, as BBR sees it (Linux `icsk_ca_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LossState {
    /// No loss being repaired.
    Open,
    /// Fast recovery.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

/// What BBR needs of the sender on an ACK.
#[derive(Clone, Copy, Debug)]
pub struct BbrAck<'a> {
    /// When it arrived.
    pub now: Instant,
    /// Its rate sample.
    pub rs: &'a RateSample,
    /// Packets delivered so far.
    pub delivered: u64,
    /// Packets in flight after it (RFC 6675 pipe).
    pub in_flight: u64,
    /// The window in force.
    pub cwnd: f64,
    /// The loss state after it.
    pub state: LossState,
    /// Size of a full packet on the wire, bytes (for the TSO-segment goal).
    pub packet_bytes: f64,
}

/// What BBR decided on an ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrOutput {
    /// The window, packets.
    pub cwnd: f64,
    /// The pacing rate, packets/s.
    pub pacing_rate: f64,
    /// Whether the sender is to mark itself application-limited (ProbeRTT).
    pub app_limited: bool,
    /// ssthresh to set, when BBR sets it (on entering Drain).
    pub ssthresh: Option<f64>,
}

/// BBR's state.
#[derive(Clone, Debug)]
pub struct Bbr {
    p: BbrParams,
    mode: Mode,
    bw: MaxFilter,
    min_rtt: Option<Duration>,
    min_rtt_stamp: Instant,
    probe_rtt_done: Option<Instant>,
    probe_rtt_round_done: bool,
    rounds: u64,
    next_round_delivered: u64,
    round_start: bool,
    full_bw: f64,
    full_bw_count: u32,
    full_bw_reached: bool,
    cycle_idx: usize,
    cycle_stamp: Instant,
    pacing_gain: f64,
    cwnd_gain: f64,
    packet_conservation: bool,
    prior_cwnd: f64,
    prev_state: LossState,
    idle_restart: bool,
    has_seen_rtt: bool,
    pacing_rate: f64,
    extra_acked: [f64; 2],
    extra_acked_idx: usize,
    extra_acked_rounds: u32,
    ack_epoch_start: Instant,
    ack_epoch_acked: f64,
    initial_cwnd: f64,
    /// SplitMix64 state for ProbeBW's random first phase.
    rng: u64,
}

impl Bbr {
    /// BBR at `now` for a sender with initial window `initial_cwnd`; `seed` draws ProbeBW's
    /// starting phases.
    pub fn new(p: BbrParams, now: Instant, initial_cwnd: f64, seed: u64) -> Self {
        let mut b = Self {
            p,
            mode: Mode::Startup,
            bw: MaxFilter::default(),
            min_rtt: None,
            min_rtt_stamp: now,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            rounds: 0,
            next_round_delivered: 0,
            round_start: false,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: now,
            pacing_gain: p.high_gain,
            cwnd_gain: p.high_gain,
            packet_conservation: false,
            prior_cwnd: 0.0,
            prev_state: LossState::Open,
            idle_restart: false,
            has_seen_rtt: false,
            pacing_rate: 0.0,
            extra_acked: [0.0; 2],
            extra_acked_idx: 0,
            extra_acked_rounds: 0,
            ack_epoch_start: now,
            ack_epoch_acked: 0.0,
            initial_cwnd,
            rng: seed,
        };
        b.init_pacing_rate(initial_cwnd, None);
        b
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The bottleneck bandwidth estimate, packets/s.
    pub fn bandwidth(&self) -> f64 {
        self.bw.get()
    }

    /// The propagation-delay estimate.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// The pacing rate, packets/s.
    pub fn pacing_rate(&self) -> f64 {
        self.pacing_rate
    }

    /// The pacing and cwnd gains in force.
    pub fn gains(&self) -> (f64, f64) {
        (self.pacing_gain, self.cwnd_gain)
    }

    /// Whether Startup found the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// The ProbeBW phase (0 is the 5/4 probe).
    pub fn cycle_index(&self) -> usize {
        self.cycle_idx
    }

    /// Rounds counted so far.
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    fn next_random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The pacing rate from the window and the smoothed RTT before a bandwidth sample
    /// (Linux `bbr_init_pacing_rate_from_rtt`: 1 ms without an RTT).
    fn init_pacing_rate(&mut self, cwnd: f64, srtt: Option<Duration>) {
        let rtt = match srtt {
            Some(r) if !r.is_zero() => {
                self.has_seen_rtt = true;
                r
            }
            _ => Duration::from_millis(1),
        };
        let bw = cwnd / rtt.as_secs_f64();
        self.pacing_rate = bw * self.p.high_gain * (1.0 - self.p.pacing_margin);
    }

    /// Linux's TSO burst goal at the current pacing rate, packets: a millisecond's worth
    /// (`sk_pacing_shift` 10), at least 1 below 1.2 Mbit/s and 2 above.
    fn tso_segs_goal(&self, packet_bytes: f64) -> f64 {
        let rate_bytes = self.pacing_rate * packet_bytes;
        let min = if rate_bytes < MIN_TSO_RATE { 1.0 } else { 2.0 };
        ((rate_bytes / 1024.0 / packet_bytes).floor()).clamp(min, 127.0)
    }

    /// `bbr_bdp`: gain × bandwidth × min RTT, rounded up (the initial window before an RTT).
    fn bdp(&self, bw: f64, gain: f64) -> f64 {
        match self.min_rtt {
            None => self.initial_cwnd,
            Some(rtt) => (bw * rtt.as_secs_f64() * gain).ceil(),
        }
    }

    /// `bbr_quantization_budget`: three TSO bursts more, rounded up to even, two more in the
    /// 5/4 phase.
    fn quantization_budget(&self, cwnd: f64, packet_bytes: f64) -> f64 {
        let mut w = cwnd + 3.0 * self.tso_segs_goal(packet_bytes);
        w = 2.0 * (w / 2.0).ceil();
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            w += 2.0;
        }
        w
    }

    /// `bbr_inflight`: the window for `gain` at bandwidth `bw`.
    fn inflight(&self, bw: f64, gain: f64, packet_bytes: f64) -> f64 {
        self.quantization_budget(self.bdp(bw, gain), packet_bytes)
    }

    /// Processes an ACK (Linux `bbr_main`).
    pub fn on_ack(&mut self, a: &BbrAck<'_>) -> BbrOutput {
        let mut out = BbrOutput {
            cwnd: a.cwnd,
            pacing_rate: self.pacing_rate,
            app_limited: false,
            ssthresh: None,
        };
        self.update_bw(a);
        self.update_ack_aggregation(a);
        self.update_cycle_phase(a);
        self.check_full_bw_reached(a.rs);
        self.check_drain(a, &mut out);
        self.update_min_rtt(a, &mut out);
        self.update_gains();
        let bw = self.bw.get();
        self.set_pacing_rate(bw, a.cwnd, a.rs.rtt);
        out.cwnd = self.set_cwnd(a, out.cwnd, bw);
        out.pacing_rate = self.pacing_rate;
        out
    }

    fn update_bw(&mut self, a: &BbrAck<'_>) {
        self.round_start = false;
        let rs = a.rs;
        if !rs.valid || rs.interval.is_zero() {
            return;
        }
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = a.delivered;
            self.rounds += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let bw = rs.rate();
        if !rs.is_app_limited || bw >= self.bw.get() {
            self.bw.update(self.p.bw_rounds, self.rounds, bw);
        }
    }

    fn update_ack_aggregation(&mut self, a: &BbrAck<'_>) {
        let rs = a.rs;
        if rs.acked_sacked == 0 || !rs.valid {
            return;
        }
        if self.round_start {
            self.extra_acked_rounds = (self.extra_acked_rounds + 1).min(31);
            if self.extra_acked_rounds >= EXTRA_ACKED_ROUNDS {
                self.extra_acked_rounds = 0;
                self.extra_acked_idx ^= 1;
                self.extra_acked[self.extra_acked_idx] = 0.0;
            }
        }
        let epoch = a.now.saturating_since(self.ack_epoch_start).as_secs_f64();
        let mut expected = self.bw.get() * epoch;
        let acked = f64::from(rs.acked_sacked);
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + acked >= f64::from(1 << 20) {
            self.ack_epoch_acked = 0.0;
            self.ack_epoch_start = a.now;
            expected = 0.0;
        }
        self.ack_epoch_acked += acked;
        let extra = (self.ack_epoch_acked - expected).min(a.cwnd);
        if extra > self.extra_acked[self.extra_acked_idx] {
            self.extra_acked[self.extra_acked_idx] = extra;
        }
    }

    fn ack_aggregation_cwnd(&self) -> f64 {
        if !self.full_bw_reached {
            return 0.0;
        }
        let max = self.bw.get() * EXTRA_ACKED_MAX.as_secs_f64();
        self.extra_acked[0].max(self.extra_acked[1]).min(max)
    }

    fn update_cycle_phase(&mut self, a: &BbrAck<'_>) {
        if self.mode != Mode::ProbeBw || !self.is_next_cycle_phase(a) {
            return;
        }
        self.advance_cycle_phase(a.now);
    }

    fn advance_cycle_phase(&mut self, now: Instant) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN_CYCLE.len();
        self.cycle_stamp = now;
    }

    fn is_next_cycle_phase(&self, a: &BbrAck<'_>) -> bool {
        let full_length = self
            .min_rtt
            .is_some_and(|m| a.now.saturating_since(self.cycle_stamp) > m);
        let gain = self.pacing_gain;
        if gain == 1.0 {
            return full_length;
        }
        let inflight = a.rs.prior_in_flight as f64;
        let bw = self.bw.get();
        if gain > 1.0 {
            full_length && (a.rs.losses > 0 || inflight >= self.inflight(bw, gain, a.packet_bytes))
        } else {
            full_length || inflight <= self.inflight(bw, 1.0, a.packet_bytes)
        }
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw = self.bw.get();
        if bw >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count >= FULL_BW_COUNT;
    }

    fn check_drain(&mut self, a: &BbrAck<'_>, out: &mut BbrOutput) {
        let bw = self.bw.get();
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            out.ssthresh = Some(self.inflight(bw, 1.0, a.packet_bytes));
        }
        if self.mode == Mode::Drain && a.in_flight as f64 <= self.inflight(bw, 1.0, a.packet_bytes)
        {
            self.enter_probe_bw(a.now);
        }
    }

    /// ProbeBW from a random phase other than the 3/4 one (Linux `bbr_reset_probe_bw_mode`).
    fn enter_probe_bw(&mut self, now: Instant) {
        self.mode = Mode::ProbeBw;
        let r = (self.next_random() % 7) as usize;
        self.cycle_idx = PACING_GAIN_CYCLE.len() - 1 - r;
        self.advance_cycle_phase(now);
    }

    fn reset_mode(&mut self, now: Instant) {
        if self.full_bw_reached {
            self.enter_probe_bw(now);
        } else {
            self.mode = Mode::Startup;
        }
    }

    fn save_cwnd(&mut self, cwnd: f64) {
        if self.prev_state < LossState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    fn update_min_rtt(&mut self, a: &BbrAck<'_>, out: &mut BbrOutput) {
        let expired = a.now > self.min_rtt_stamp.saturating_add(self.p.min_rtt_window);
        if let Some(rtt) = a.rs.rtt
            && (self.min_rtt.is_none_or(|m| rtt < m) || expired)
        {
            self.min_rtt = Some(rtt);
            self.min_rtt_stamp = a.now;
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(a.cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            out.app_limited = true;
            match self.probe_rtt_done {
                None if a.in_flight as f64 <= self.p.min_cwnd => {
                    self.probe_rtt_done = Some(a.now.saturating_add(self.p.probe_rtt_time));
                    self.probe_rtt_round_done = false;
                    self.next_round_delivered = a.delivered;
                }
                Some(done) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done && a.now > done {
                        self.min_rtt_stamp = a.now;
                        out.cwnd = out.cwnd.max(self.prior_cwnd);
                        self.reset_mode(a.now);
                    }
                }
                None => {}
            }
        }
        if a.rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        let (pacing, cwnd) = match self.mode {
            Mode::Startup => (self.p.high_gain, self.p.high_gain),
            Mode::Drain => (1.0 / self.p.high_gain, self.p.high_gain),
            Mode::ProbeBw => (PACING_GAIN_CYCLE[self.cycle_idx], self.p.cwnd_gain),
            Mode::ProbeRtt => (1.0, 1.0),
        };
        self.pacing_gain = pacing;
        self.cwnd_gain = cwnd;
    }

    fn set_pacing_rate(&mut self, bw: f64, cwnd: f64, rtt: Option<Duration>) {
        let rate = bw * self.pacing_gain * (1.0 - self.p.pacing_margin);
        if !self.has_seen_rtt && rtt.is_some() {
            self.init_pacing_rate(cwnd, rtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    fn set_cwnd(&mut self, a: &BbrAck<'_>, cwnd: f64, bw: f64) -> f64 {
        let acked = f64::from(a.rs.acked_sacked);
        let mut w = cwnd;
        if acked > 0.0 && !self.recover_or_restore(a, &mut w) {
            let target = self.quantization_budget(
                self.bdp(bw, self.cwnd_gain) + self.ack_aggregation_cwnd(),
                a.packet_bytes,
            );
            if self.full_bw_reached {
                w = (w + acked).min(target);
            } else if w < target || (a.delivered as f64) < self.initial_cwnd {
                w += acked;
            }
            w = w.max(self.p.min_cwnd);
        }
        if self.mode == Mode::ProbeRtt {
            w = w.min(self.p.min_cwnd);
        }
        w
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation for the first round of a
    /// recovery, the old window back when it ends; true while conserving.
    fn recover_or_restore(&mut self, a: &BbrAck<'_>, w: &mut f64) -> bool {
        let acked = f64::from(a.rs.acked_sacked);
        let in_flight = a.in_flight as f64;
        let (prev, state) = (self.prev_state, a.state);
        if a.rs.losses > 0 {
            *w = (*w - f64::from(a.rs.losses)).max(1.0);
        }
        if state == LossState::Recovery && prev != LossState::Recovery {
            self.packet_conservation = true;
            self.next_round_delivered = a.delivered;
            *w = in_flight + acked;
        } else if prev >= LossState::Recovery && state < LossState::Recovery {
            *w = w.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_state = state;
        if self.packet_conservation {
            *w = w.max(in_flight + acked);
            return true;
        }
        false
    }

    /// The sender enters fast recovery or a timeout with window `cwnd` (Linux `bbr_ssthresh`
    /// and `bbr_set_state`): the window is saved to be restored; a timeout also restarts the
    /// full-pipe test and starts a round.
    pub fn on_congestion(&mut self, cwnd: f64, state: LossState) {
        self.save_cwnd(cwnd);
        if state == LossState::Loss {
            self.prev_state = LossState::Loss;
            self.full_bw = 0.0;
            self.round_start = true;
        }
    }

    /// Transmission starts again after the sender was idle and application-limited (Linux
    /// `bbr_cwnd_event(CA_EVENT_TX_START)`).
    pub fn on_restart_from_idle(&mut self, now: Instant) {
        self.idle_restart = true;
        self.ack_epoch_start = now;
        self.ack_epoch_acked = 0.0;
        if self.mode == Mode::ProbeBw {
            self.pacing_rate = self.bw.get() * (1.0 - self.p.pacing_margin);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Instant {
        Instant::from_nanos(n * 1_000_000)
    }

    /// A valid sample of `rate` packets/s over 100 ms starting a round when `round`.
    fn sample(rate: f64, prior_delivered: u64, rtt_ms: u64) -> RateSample {
        RateSample {
            delivered: (rate * 0.1) as u64,
            interval: Duration::from_millis(100),
            prior_delivered,
            is_app_limited: false,
            acked_sacked: 1,
            losses: 0,
            prior_in_flight: 10,
            rtt: Some(Duration::from_millis(rtt_ms)),
            valid: true,
        }
    }

    fn ack<'a>(
        now: Instant,
        rs: &'a RateSample,
        delivered: u64,
        in_flight: u64,
        cwnd: f64,
    ) -> BbrAck<'a> {
        BbrAck {
            now,
            rs,
            delivered,
            in_flight,
            cwnd,
            state: LossState::Open,
            packet_bytes: 1500.0,
        }
    }

    #[test]
    fn startup_leaves_after_three_rounds_without_growth_then_drains_to_probe_bw() {
        let mut b = Bbr::new(BbrParams::default(), ms(0), 10.0, 1);
        assert_eq!(
            (b.mode(), b.gains()),
            (Mode::Startup, (b.p.high_gain, b.p.high_gain))
        );
        // Initial pacing rate: 10 packets per 1 ms × 2.889 × 0.99.
        assert!((b.pacing_rate() - 10_000.0 * b.p.high_gain * 0.99).abs() < 1e-6);
        // Rounds 1–3 double the bandwidth: 100, 200, 400 packets/s; then three flat rounds.
        let mut delivered = 0;
        let mut now = 0;
        let mut cwnd = 10.0;
        for (k, rate) in [100.0, 200.0, 400.0, 400.0, 400.0, 400.0]
            .into_iter()
            .enumerate()
        {
            now += 100;
            let rs = sample(rate, delivered, 100);
            delivered += 40;
            let out = b.on_ack(&ack(ms(now), &rs, delivered, 60, cwnd));
            cwnd = out.cwnd;
            assert_eq!(b.rounds(), k as u64 + 1);
            let left = k == 5;
            assert_eq!(b.full_bw_reached(), left, "round {}", k + 1);
            if left {
                // Drain: ssthresh = inflight(400/s × 100 ms = 40, gain 1) + 3 × 2 TSO = 46.
                assert_eq!(b.mode(), Mode::Drain);
                assert_eq!(out.ssthresh, Some(46.0));
                assert!((b.gains().0 - 1.0 / b.p.high_gain).abs() < 1e-12);
            }
        }
        // In flight falls to one BDP (46 with the budget): ProbeBW, not in the 3/4 phase.
        let rs = sample(400.0, delivered, 100);
        b.on_ack(&ack(ms(now + 10), &rs, delivered + 1, 46, cwnd));
        assert_eq!(b.mode(), Mode::ProbeBw);
        assert_ne!(b.cycle_index(), 1);
        assert_eq!(b.gains(), (PACING_GAIN_CYCLE[b.cycle_index()], 2.0));
        // ProbeBW window: 2 × 40 + 6 (+2 in the 5/4 phase) and a little for ACK aggregation,
        // grown to by one packet per ACK.
        let target = if b.cycle_index() == 0 { 92.0 } else { 90.0 };
        let mut w = 80.0;
        for i in 0..10 {
            let rs = sample(400.0, delivered, 100);
            w = b
                .on_ack(&ack(ms(now + 11 + i), &rs, delivered + 2, 40, w))
                .cwnd;
        }
        assert!(w <= target && w >= 86.0, "{w}");
        // Pacing at the phase's gain × 400 × 0.99.
        assert!((b.pacing_rate() - PACING_GAIN_CYCLE[b.cycle_index()] * 400.0 * 0.99).abs() < 1e-9);
    }

    #[test]
    fn probe_bw_phases_advance_each_min_rtt() {
        let mut b = Bbr::new(BbrParams::default(), ms(0), 10.0, 3);
        b.full_bw_reached = true;
        b.bw.reset(0, 1000.0);
        b.min_rtt = Some(Duration::from_millis(50));
        b.enter_probe_bw(ms(0));
        b.update_gains();
        let start = b.cycle_index();
        // Phases of gain 1 advance after one min RTT (50 ms) whatever is in flight.
        let rs = RateSample {
            prior_in_flight: 50,
            ..sample(1000.0, 0, 50)
        };
        let mut now = 0;
        let mut seen = vec![start];
        for _ in 0..16 {
            now += 51;
            b.on_ack(&ack(ms(now), &rs, 10, 50, 100.0));
            seen.push(b.cycle_index());
        }
        // With 50 in flight (= BDP 50, below the 5/4 target 62 + 6 + 2), the 5/4 phase waits
        // (no loss, not enough in flight), so the cycle stops at phase 0.
        assert!(seen.contains(&0));
        assert_eq!(*seen.last().unwrap(), 0);
        // The 5/4 phase ends after a min RTT once in flight reaches its target
        // (⌈62.5⌉ + 6 = 69, rounded to 70, + 2 = 72) or a loss occurs.
        let lossy = RateSample { losses: 1, ..rs };
        b.on_ack(&ack(ms(now + 51), &lossy, 10, 50, 100.0));
        assert_eq!(b.cycle_index(), 1);
        // The 3/4 phase ends at once when in flight is down to the BDP.
        b.on_ack(&ack(ms(now + 52), &rs, 10, 50, 100.0));
        assert_eq!(b.cycle_index(), 2);
    }

    #[test]
    fn probe_rtt_after_ten_seconds_holds_four_packets_for_200_ms_and_a_round() {
        let mut b = Bbr::new(BbrParams::default(), ms(0), 10.0, 5);
        let rs = sample(1000.0, 0, 40);
        b.on_ack(&ack(ms(1), &rs, 100, 40, 100.0));
        assert_eq!(b.min_rtt(), Some(Duration::from_millis(40)));
        b.full_bw_reached = true;
        b.enter_probe_bw(ms(1));
        // 10 s later, RTT samples above 40 ms: the estimate expired: ProbeRTT, window 4.
        let rs = sample(1000.0, 100, 60);
        let out = b.on_ack(&ack(ms(10_002), &rs, 200, 60, 100.0));
        assert_eq!(b.mode(), Mode::ProbeRtt);
        assert_eq!(out.cwnd, 4.0);
        assert!(out.app_limited);
        // In flight down to 4: the 200 ms clock starts; a round later and past it, back to
        // ProbeBW with the window restored.
        let rs = RateSample {
            prior_delivered: 100,
            ..sample(1000.0, 100, 45)
        };
        b.on_ack(&ack(ms(10_100), &rs, 300, 4, 4.0));
        assert_eq!(b.mode(), Mode::ProbeRtt);
        let rs = RateSample {
            prior_delivered: 300,
            ..sample(1000.0, 300, 45)
        };
        b.on_ack(&ack(ms(10_200), &rs, 310, 4, 4.0));
        assert_eq!(b.mode(), Mode::ProbeRtt, "200 ms not yet over");
        let out = b.on_ack(&ack(ms(10_301), &rs, 320, 4, 4.0));
        assert_eq!(b.mode(), Mode::ProbeBw);
        // The window before ProbeRTT (100) comes back, capped by ProbeBW's target:
        // 2 × 1000/s × 45 ms = 90, plus the quantization budget and aggregation allowance.
        assert!(out.cwnd >= 96.0 && out.cwnd <= 100.0, "{}", out.cwnd);
    }

    #[test]
    fn recovery_conserves_packets_then_restores_the_window() {
        let mut b = Bbr::new(BbrParams::default(), ms(0), 10.0, 7);
        b.full_bw_reached = true;
        b.bw.reset(0, 1000.0);
        b.min_rtt = Some(Duration::from_millis(50));
        b.enter_probe_bw(ms(0));
        b.on_congestion(120.0, LossState::Recovery);
        let rs = RateSample {
            losses: 3,
            acked_sacked: 2,
            ..sample(1000.0, 0, 50)
        };
        let a = BbrAck {
            state: LossState::Recovery,
            ..ack(ms(10), &rs, 10, 90, 120.0)
        };
        // Entering recovery: in flight + acked = 92.
        assert_eq!(b.on_ack(&a).cwnd, 92.0);
        let a = BbrAck {
            state: LossState::Open,
            ..ack(ms(20), &rs, 12, 80, 92.0)
        };
        // Leaving: max(92 − 3 losses, 120 saved) = 120, then at most the ProbeBW target:
        // 2 × 1000/s × 50 ms = 100, + 2 of ACK aggregation, + 6: 108 (+2 in the 5/4 phase).
        let w = b.on_ack(&a).cwnd;
        let target = if b.cycle_index() == 0 { 110.0 } else { 108.0 };
        assert_eq!(w, target);
    }
}
