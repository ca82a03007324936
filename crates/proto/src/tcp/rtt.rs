//! The tick-based RTT estimator and retransmission timeout of ns-2 (`TcpAgent::rtt_update`,
//! `rtt_timeout`, `rtt_backoff`; PROTOCOLS.md §1.4).
//!
//! ns-2 emulates a coarse BSD clock: every sample is rounded to whole ticks (`tcpTick_`) with
//! a per-connection phase `boot_time ~ U(0, tick)`, and the smoothed RTT and its mean
//! deviation are kept as fixed-point tick counts (`srtt8` = 8·srtt, `rttvar4` = 4·rttvar). The
//! RTO is `srtt + 4·rttvar` ticks, clamped below by the minimum RTO *before* the exponential
//! backoff is applied (RFC 2988 semantics), clamped above by the maximum RTO and never below
//! two ticks.

use fairstream_core::{Duration, Instant, RngStream};

use super::TcpConfig;

/// Fractional bits of `srtt8` (ns-2 `T_SRTT_BITS`).
const T_SRTT_BITS: u32 = 3;
/// Fractional bits of `rttvar4` (ns-2 `T_RTTVAR_BITS`).
const T_RTTVAR_BITS: u32 = 2;
/// The RTO is `srtt + 2^RTTVAR_EXP · rttvar` (ns-2 `rttvar_exp_`).
const RTTVAR_EXP: u32 = 2;
/// ns-2 `rttvar_init_` (seconds): the deviation before the first sample. The first sample
/// re-seeds it, so it is only visible through [`RttEstimator::rttvar`] before any sample.
const RTTVAR_INIT_SECS: u64 = 12;
/// The backoff multiplier always doubles below this value (ns-2 hard-codes 64).
const BACKOFF_FREE_LIMIT: u64 = 64;
/// Past this multiplier the backoff stops doubling (ns-2 has no such bound: it keeps doubling
/// while the RTO is below the maximum, which only matters for a zero minimum and initial RTO;
/// the bound keeps the multiplier from overflowing).
const BACKOFF_HARD_LIMIT: u64 = 1 << 40;
/// After this many doublings' worth of backoff the smoothed RTT is forgotten.
const BACKOFF_FORGET_SRTT: u64 = 8;

/// ns-2's RTT estimator and RTO computation, in ticks of a coarse clock.
///
/// Laid out in the order written (`repr(C)`): what [`Self::rto`] and [`Self::srtt`] read, on
/// every ACK, comes first and fits one cache line.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct RttEstimator {
    /// Clock granularity in nanoseconds (at least 1).
    tick: u64,
    /// 8 × smoothed RTT, ticks; 0 = no estimate (the next sample seeds it).
    srtt8: i64,
    /// Un-backed-off, un-clamped RTO (`t_rtxcur_`).
    rtxcur: Duration,
    /// Exponential backoff multiplier: 1, 2, 4, …
    backoff: u64,
    min_rto: Duration,
    max_rto: Duration,
    /// 4 × RTT mean deviation, ticks.
    rttvar4: i64,
    /// The last sample, ticks (0 before any).
    last_sample: i64,
    /// Phase of the emulated clock, nanoseconds in `[0, tick)`.
    boot_time: u64,
}

impl RttEstimator {
    /// An estimator with the given clock `tick` (a zero tick is taken as 1 ns), RTO bounds,
    /// RTO before the first sample, and clock phase `boot_time` (reduced modulo the tick).
    pub fn new(
        tick: Duration,
        min_rto: Duration,
        max_rto: Duration,
        initial_rto: Duration,
        boot_time: Duration,
    ) -> Self {
        let tick = tick.as_nanos().max(1);
        let rttvar_ticks = (RTTVAR_INIT_SECS * 1_000_000_000 / tick).min(i64::MAX as u64 >> 8);
        Self {
            tick,
            boot_time: boot_time.as_nanos() % tick,
            srtt8: 0,
            rttvar4: (rttvar_ticks as i64) << T_RTTVAR_BITS,
            last_sample: 0,
            rtxcur: initial_rto,
            backoff: 1,
            min_rto,
            max_rto,
        }
    }

    /// The estimator of a sender with `config`, drawing the clock phase `boot_time ~ U(0, tick)`
    /// from `rng` (one draw, as ns-2's `TcpAgent::reset`).
    pub fn from_config(config: &TcpConfig, rng: &mut RngStream) -> Self {
        let tick = config.tick.as_nanos().max(1);
        // uniform() < 1, so the product is < tick; the cast truncates towards zero.
        let boot = (rng.uniform() * tick as f64) as u64;
        Self::new(
            config.tick,
            config.min_rto,
            config.max_rto,
            config.initial_rto,
            Duration::from_nanos(boot),
        )
    }

    /// Feeds the round-trip time `rtt` of a packet whose ACK arrived at `now`
    /// (ns-2 `rtt_update`): the sample is measured on the emulated tick clock, then folded
    /// into srtt (gain 1/8) and rttvar (gain 1/4), and the RTO recomputed.
    pub fn update(&mut self, now: Instant, rtt: Duration) {
        let tau = rtt.as_nanos();
        // Phase of the send time on the emulated clock: a sample that straddles more tick
        // boundaries counts more ticks.
        let send_time = now
            .as_nanos()
            .saturating_sub(tau)
            .saturating_add(self.boot_time);
        let tickoff = send_time % self.tick;
        let m = i64::try_from(tau.saturating_add(tickoff) / self.tick)
            .unwrap_or(i64::MAX >> 8)
            .clamp(1, i64::MAX >> 8);
        self.update_ticks(m);
    }

    /// Folds a sample of `m` ticks into srtt (gain 1/8) and rttvar (gain 1/4) and recomputes
    /// the RTO estimate, in ns-2's integer arithmetic: shared by TCP and by ns-2's TFRC (which
    /// rounds its samples to ticks itself). `m` is taken as at least 1.
    pub fn update_ticks(&mut self, m: i64) {
        let m = m.clamp(1, i64::MAX >> 8);
        self.last_sample = m;
        if self.srtt8 != 0 {
            let mut delta = m - (self.srtt8 >> T_SRTT_BITS);
            self.srtt8 += delta;
            if self.srtt8 <= 0 {
                self.srtt8 = 1;
            }
            delta = delta.abs() - (self.rttvar4 >> T_RTTVAR_BITS);
            self.rttvar4 += delta;
            if self.rttvar4 <= 0 {
                self.rttvar4 = 1;
            }
        } else {
            self.srtt8 = m << T_SRTT_BITS;
            self.rttvar4 = m << (T_RTTVAR_BITS - 1);
        }
        let ticks = ((self.rttvar4 << (RTTVAR_EXP + T_SRTT_BITS - T_RTTVAR_BITS)) + self.srtt8)
            >> T_SRTT_BITS;
        // ticks >= 1: srtt8 >= 1 and rttvar4 >= 1 give at least (8 + 1) >> 3.
        self.rtxcur = Duration::from_nanos(self.tick.saturating_mul(ticks.max(0) as u64));
    }

    /// The retransmission timeout now in force (ns-2 `rtt_timeout` with `rfc2988_`): the
    /// estimate clamped below by the minimum RTO, times the backoff, clamped above by the
    /// maximum RTO, and never less than two ticks.
    pub fn rto(&self) -> Duration {
        let base = if self.rtxcur < self.min_rto {
            self.min_rto
        } else {
            self.rtxcur
        };
        let t = base.saturating_mul(self.backoff).min(self.max_rto);
        t.max(Duration::from_nanos(self.tick.saturating_mul(2)))
    }

    /// Doubles the backoff after a retransmission timeout (ns-2 `rtt_backoff`): always below
    /// 64, beyond that while the RTO is still below the maximum. Once the backoff exceeds 8,
    /// the smoothed RTT is forgotten (moved into the deviation) so the next sample re-seeds it.
    pub fn backoff_timer(&mut self) {
        if self.backoff < BACKOFF_FREE_LIMIT
            || (self.rto() < self.max_rto && self.backoff < BACKOFF_HARD_LIMIT)
        {
            self.backoff <<= 1;
        }
        if self.backoff > BACKOFF_FORGET_SRTT {
            self.rttvar4 += self.srtt8 >> T_SRTT_BITS;
            self.srtt8 = 0;
        }
    }

    /// Ends the backoff (a new ACK acknowledged a timed packet).
    pub fn reset_backoff(&mut self) {
        self.backoff = 1;
    }

    /// The backoff multiplier: 1, 2, 4, …
    pub fn backoff(&self) -> u64 {
        self.backoff
    }

    /// Smoothed RTT, truncated to whole ticks (zero before the first sample or after the
    /// estimate was forgotten by a long backoff).
    pub fn srtt(&self) -> Duration {
        Duration::from_nanos(self.tick.saturating_mul((self.srtt8 >> T_SRTT_BITS) as u64))
    }

    /// RTT mean deviation (rttvar), in quarter ticks.
    pub fn rttvar(&self) -> Duration {
        Duration::from_nanos(self.tick.saturating_mul(self.rttvar4 as u64) / (1 << T_RTTVAR_BITS))
    }

    /// 8 × smoothed RTT in ticks (ns-2 `t_srtt_`); 0 when there is no estimate.
    pub fn srtt8(&self) -> i64 {
        self.srtt8
    }

    /// 4 × RTT mean deviation in ticks (ns-2 `t_rttvar_`).
    pub fn rttvar4(&self) -> i64 {
        self.rttvar4
    }

    /// The last sample in ticks (ns-2 `t_rtt_`), at least 1 once a sample was taken; 0 before.
    pub fn last_sample_ticks(&self) -> i64 {
        self.last_sample
    }

    /// The RTO estimate before clamping and backoff (ns-2 `t_rtxcur_`): `srtt + 4·rttvar`
    /// ticks, or the initial RTO before the first sample.
    pub fn rtxcur(&self) -> Duration {
        self.rtxcur
    }

    /// The clock granularity.
    pub fn tick(&self) -> Duration {
        Duration::from_nanos(self.tick)
    }

    /// The phase of the emulated clock, in `[0, tick)`.
    pub fn boot_time(&self) -> Duration {
        Duration::from_nanos(self.boot_time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`RttEstimator::rto`] and [`RttEstimator::srtt`] read, on every ACK, lies in the
    /// estimator's first 48 bytes (one cache line where the sender places it).
    #[test]
    fn what_rto_and_srtt_read_leads_the_estimator() {
        use std::mem::{offset_of, size_of};
        let ends = [
            offset_of!(RttEstimator, tick) + size_of::<u64>(),
            offset_of!(RttEstimator, srtt8) + size_of::<i64>(),
            offset_of!(RttEstimator, rtxcur) + size_of::<Duration>(),
            offset_of!(RttEstimator, backoff) + size_of::<u64>(),
            offset_of!(RttEstimator, min_rto) + size_of::<Duration>(),
            offset_of!(RttEstimator, max_rto) + size_of::<Duration>(),
        ];
        assert_eq!(ends.into_iter().max(), Some(48));
    }

    const MS: u64 = 1_000_000;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    fn at_ms(x: u64) -> Instant {
        Instant::from_nanos(x * MS)
    }

    /// ns-2 defaults: 10 ms tick, 200 ms min RTO, 60 s max RTO, 3 s initial RTO.
    fn est(boot: Duration) -> RttEstimator {
        RttEstimator::new(
            ms(10),
            ms(200),
            Duration::from_secs(60),
            Duration::from_secs(3),
            boot,
        )
    }

    #[test]
    fn fresh_estimator_initial_rto_in_force() {
        let e = est(Duration::ZERO);
        assert_eq!(e.rto(), Duration::from_secs(3));
        assert_eq!(e.srtt(), Duration::ZERO);
        assert_eq!(e.backoff(), 1);
    }

    #[test]
    fn known_samples_rto_follows_tick_arithmetic() {
        let mut e = est(Duration::ZERO);
        // Sent at 0 (tick phase 0), 105 ms: floor(10.5) = 10 ticks; srtt = 10, rttvar = 5.
        e.update(at_ms(105), ms(105));
        assert_eq!(e.last_sample_ticks(), 10);
        assert_eq!((e.srtt8(), e.rttvar4()), (80, 20));
        // rtxcur = ((20 << 3) + 80) >> 3 = 30 ticks.
        assert_eq!(e.rtxcur(), ms(300));
        assert_eq!(e.rto(), ms(300));
        assert_eq!(e.srtt(), ms(100));
        // Sent at 1003 ms (3 ms into a tick), 95 ms: floor((95 + 3) / 10) = 9 ticks.
        e.update(at_ms(1098), ms(95));
        assert_eq!(e.last_sample_ticks(), 9);
        // delta = 9 - 10 = -1: srtt8 = 79; |delta| - (20 >> 2) = -4: rttvar4 = 16.
        assert_eq!((e.srtt8(), e.rttvar4()), (79, 16));
        // ((16 << 3) + 79) >> 3 = 207 >> 3 = 25 ticks.
        assert_eq!(e.rto(), ms(250));
        // Sent at 2008 ms (8 ms into a tick), 95 ms: floor((95 + 8) / 10) = 10 ticks.
        e.update(at_ms(2103), ms(95));
        assert_eq!(e.last_sample_ticks(), 10);
        // delta = 10 - 9 = 1: srtt8 = 80; 1 - 4 = -3: rttvar4 = 13; (104 + 80) >> 3 = 23.
        assert_eq!((e.srtt8(), e.rttvar4()), (80, 13));
        assert_eq!(e.rto(), ms(230));
    }

    #[test]
    fn boot_time_shifts_tick_phase_of_samples() {
        // The same 95 ms sample counts 9 or 10 ticks depending on the clock phase.
        let mut a = est(Duration::ZERO);
        a.update(at_ms(95), ms(95));
        assert_eq!(a.last_sample_ticks(), 9);
        let mut b = est(ms(6));
        b.update(at_ms(95), ms(95));
        assert_eq!(b.last_sample_ticks(), 10);
    }

    #[test]
    fn tiny_sample_counts_one_tick() {
        let mut e = est(Duration::ZERO);
        e.update(at_ms(1), Duration::from_micros(10));
        assert_eq!(e.last_sample_ticks(), 1);
    }

    #[test]
    fn short_rtt_rto_clamped_to_min_rto() {
        let mut e = est(Duration::ZERO);
        e.update(at_ms(10), ms(10));
        // srtt = 1 tick, rttvar4 = 2: ((2 << 3) + 8) >> 3 = 3 ticks = 30 ms < 200 ms.
        assert_eq!(e.rtxcur(), ms(30));
        assert_eq!(e.rto(), ms(200));
    }

    #[test]
    fn backoff_applies_after_min_rto_clamp() {
        let mut e = est(Duration::ZERO);
        e.update(at_ms(10), ms(10));
        e.backoff_timer();
        // RFC 2988: max(rtxcur, minrto) * backoff = 400 ms, not max(60 ms, 200 ms).
        assert_eq!(e.rto(), ms(400));
        e.backoff_timer();
        assert_eq!(e.rto(), ms(800));
        e.reset_backoff();
        assert_eq!(e.rto(), ms(200));
    }

    #[test]
    fn zero_min_rto_floor_is_two_ticks() {
        let mut e = RttEstimator::new(
            ms(10),
            Duration::ZERO,
            Duration::from_secs(60),
            ms(5),
            Duration::ZERO,
        );
        assert_eq!(e.rto(), ms(20));
        e.update(at_ms(10), ms(10));
        assert_eq!(e.rto(), ms(30));
    }

    #[test]
    fn repeated_backoff_capped_at_max_rto() {
        let mut e = est(Duration::ZERO);
        for _ in 0..20 {
            e.backoff_timer();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        // 3 s × 64 ≥ 60 s: the doubling stops at 64.
        assert_eq!(e.backoff(), 64);
    }

    #[test]
    fn backoff_beyond_eight_forgets_srtt_and_next_sample_reseeds() {
        let mut e = est(Duration::ZERO);
        e.update(at_ms(105), ms(105));
        e.backoff_timer(); // 2
        e.backoff_timer(); // 4
        e.backoff_timer(); // 8
        assert_eq!(e.srtt8(), 80);
        e.backoff_timer(); // 16: srtt folded into rttvar
        assert_eq!(e.srtt8(), 0);
        assert_eq!(e.rttvar4(), 20 + 10);
        e.reset_backoff();
        e.update(at_ms(5050), ms(50));
        assert_eq!((e.srtt8(), e.rttvar4()), (40, 10));
        assert_eq!(e.rto(), ms(200)); // (80 + 40) >> 3 = 15 ticks < min RTO
    }

    #[test]
    fn from_config_boot_time_within_one_tick() {
        let cfg = TcpConfig::default();
        let mut rng = RngStream::from_seed(3);
        for _ in 0..100 {
            let e = RttEstimator::from_config(&cfg, &mut rng);
            assert!(e.boot_time() < cfg.tick);
        }
    }
}
