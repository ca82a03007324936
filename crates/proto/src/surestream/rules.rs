//! The servers' level rules as step functions of what each server can observe: the UDP server
//! the player's reports (loss, silence), the TCP server only how far its writes lag behind the
//! schedule. One level step at a time, as SureStream's scale changes appear in paper 000's
//! Fig. 18.

use fairstream_core::{Duration, Instant};

use super::config::{TcpRule, UdpRule};

/// The UDP server's level: down one level on a report with loss above `loss_down` (at most
/// once per `down_hold`) or on `feedback_timeout` without reports; up one level on a loss-free
/// report `up_hold · 2^f` after the last change, where f counts the failed probes so far (a
/// step down less than `up_hold` after a step up), at most 4: a level that did not fit is
/// tried again less and less often.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UdpLevels {
    rule: UdpRule,
    level: usize,
    top: usize,
    /// The last change (or the start).
    since: Instant,
    /// The last step up.
    last_up: Option<Instant>,
    /// Failed probes (capped at [`MAX_BACKOFF`]).
    failures: u32,
}

/// Most doublings of the UDP rule's `up_hold` after failed probes.
pub const MAX_BACKOFF: u32 = 4;

impl UdpLevels {
    /// Levels `0..=top`, starting at `level` at `now`.
    pub fn new(rule: UdpRule, level: usize, top: usize, now: Instant) -> Self {
        Self {
            rule,
            level: level.min(top),
            top,
            since: now,
            last_up: None,
            failures: 0,
        }
    }

    /// The level now.
    pub fn level(&self) -> usize {
        self.level
    }

    /// Failed probes so far (at most [`MAX_BACKOFF`] counted).
    pub fn failures(&self) -> u32 {
        self.failures
    }

    fn step(&mut self, now: Instant, level: usize) -> Option<usize> {
        if level == self.level {
            return None;
        }
        if level > self.level {
            self.last_up = Some(now);
        } else if self
            .last_up
            .is_some_and(|t| now.saturating_since(t) < self.rule.up_hold)
        {
            self.failures = (self.failures + 1).min(MAX_BACKOFF);
            self.last_up = None;
        }
        self.level = level;
        self.since = now;
        Some(level)
    }

    /// A report of `received` and `lost` packets at `now`; the new level if it changed.
    pub fn on_report(&mut self, now: Instant, received: u32, lost: u32) -> Option<usize> {
        let total = u64::from(received) + u64::from(lost);
        if total == 0 {
            return None;
        }
        let p = f64::from(lost) / total as f64;
        let held = now.saturating_since(self.since);
        if p > self.rule.loss_down {
            if held >= self.rule.down_hold {
                return self.step(now, self.level.saturating_sub(1));
            }
            return None;
        }
        let hold = self.rule.up_hold * (1u64 << self.failures);
        if lost == 0 && held >= hold && self.level < self.top {
            return self.step(now, self.level + 1);
        }
        None
    }

    /// No report for the feedback timeout: one level down.
    pub fn on_silence(&mut self, now: Instant) -> Option<usize> {
        self.step(now, self.level.saturating_sub(1))
    }
}

/// The TCP server's level: down one level when the oldest frame not yet written was due
/// `lag_down` ago or more (at most once per `lag_down`); up one level after `up_hold` without a
/// change and without any lag.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpLevels {
    rule: TcpRule,
    level: usize,
    top: usize,
    since: Instant,
    /// The last time a write lagged.
    behind: Instant,
}

impl TcpLevels {
    /// Levels `0..=top`, starting at `level` at `now`.
    pub fn new(rule: TcpRule, level: usize, top: usize, now: Instant) -> Self {
        Self {
            rule,
            level: level.min(top),
            top,
            since: now,
            behind: now,
        }
    }

    /// The level now.
    pub fn level(&self) -> usize {
        self.level
    }

    /// The writes lag `lag` behind the schedule at `now` (zero: caught up); the new level if
    /// it changed.
    pub fn on_lag(&mut self, now: Instant, lag: Duration) -> Option<usize> {
        if !lag.is_zero() {
            self.behind = now;
        }
        let held = now.saturating_since(self.since);
        let new = if lag >= self.rule.lag_down && held >= self.rule.lag_down {
            self.level.saturating_sub(1)
        } else if held >= self.rule.up_hold
            && now.saturating_since(self.behind) >= self.rule.up_hold
            && self.level < self.top
        {
            self.level + 1
        } else {
            return None;
        };
        (new != self.level).then(|| {
            self.level = new;
            self.since = now;
            new
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn udp_steps_down_on_loss_once_per_hold_and_up_after_a_clean_hold() {
        let rule = UdpRule {
            down_hold: Duration::from_secs(1),
            ..UdpRule::default()
        };
        let mut u = UdpLevels::new(rule, 4, 4, t(0));
        // Loss 10 % at 0.5 s: within down_hold (1 s) of the start, no change yet.
        assert_eq!(u.on_report(t(500), 90, 10), None);
        assert_eq!(u.on_report(t(1000), 90, 10), Some(3));
        assert_eq!(u.on_report(t(1500), 90, 10), None);
        assert_eq!(u.on_report(t(2000), 90, 10), Some(2));
        // 2 % is not above loss_down: no step down; but not loss-free: no step up either.
        assert_eq!(u.on_report(t(3000), 98, 2), None);
        // An empty report says nothing.
        assert_eq!(u.on_report(t(3500), 0, 0), None);
        // Loss-free until 10 s after the last change (2 s): up at 12 s, not before.
        assert_eq!(u.on_report(t(11_999), 100, 0), None);
        assert_eq!(u.on_report(t(12_000), 100, 0), Some(3));
        // Silence: down at once, however recent the last change; 0.1 s after a step up, a
        // failed probe: the next step up waits 20 s.
        assert_eq!(u.on_silence(t(12_100)), Some(2));
        assert_eq!(u.failures(), 1);
        assert_eq!(u.on_report(t(32_099), 100, 0), None);
        assert_eq!(u.on_report(t(32_100), 100, 0), Some(3));
        // A step down long after the step up is no failed probe.
        assert_eq!(u.on_report(t(50_000), 50, 50), Some(2));
        assert_eq!(u.failures(), 1);
        // Never below 0 nor above the top.
        let mut low = UdpLevels::new(UdpRule::default(), 0, 1, t(0));
        assert_eq!(low.on_silence(t(1)), None);
        assert_eq!(low.on_report(t(5000), 50, 50), None);
        assert_eq!(low.on_report(t(20_000), 100, 0), Some(1));
        assert_eq!(low.on_report(t(40_000), 100, 0), None);
        assert_eq!(low.level(), 1);
    }

    #[test]
    fn tcp_steps_down_on_lag_and_up_only_after_keeping_up() {
        let mut l = TcpLevels::new(TcpRule::default(), 4, 4, t(0));
        // A lag under lag_down (2 s) changes nothing.
        assert_eq!(l.on_lag(t(1000), Duration::from_millis(1999)), None);
        // 2 s behind at 2 s: down; still 3 s behind at 3 s: held (1 s since the change).
        assert_eq!(l.on_lag(t(2000), Duration::from_secs(2)), Some(3));
        assert_eq!(l.on_lag(t(3000), Duration::from_secs(3)), None);
        assert_eq!(l.on_lag(t(4000), Duration::from_secs(4)), Some(2));
        // Caught up from 5 s: up only once 10 s have passed without lag (the last at 4.9 s).
        assert_eq!(l.on_lag(t(4900), Duration::from_millis(1)), None);
        assert_eq!(l.on_lag(t(14_000), Duration::ZERO), None);
        assert_eq!(l.on_lag(t(14_900), Duration::ZERO), Some(3));
        assert_eq!(l.level(), 3);
    }
}
