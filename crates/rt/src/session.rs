//! What a real endpoint needs beyond its protocol: random connection ids and tokens, the
//! filter that lets only the peer's datagrams through (and counts the rest), and the circuit
//! breaker (RFC 8083) that stops a sender whose feedback has stopped or reports persistent heavy
//! loss.

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::net::SocketAddr;

use fairstream_core::{Duration, Instant};

/// A number no one else can guess: std's `RandomState` keys come from the OS's random source.
pub fn random_u64() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0x6673);
    h.finish()
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StopReason {
    /// It ran its duration.
    Finished,
    /// The user stopped it (Ctrl-C).
    Interrupted,
    /// The circuit breaker: no feedback for this long.
    NoFeedback(Duration),
    /// The circuit breaker: every report for this long said at least half the packets were lost.
    PersistentLoss(Duration),
    /// The receiver's sender fell silent for this long.
    PeerSilent(Duration),
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Finished => write!(f, "finished"),
            Self::Interrupted => write!(f, "interrupted"),
            Self::NoFeedback(d) => write!(
                f,
                "circuit breaker: no feedback for {:.1} s",
                d.as_secs_f64()
            ),
            Self::PersistentLoss(d) => write!(
                f,
                "circuit breaker: loss of half the packets or more for {:.1} s",
                d.as_secs_f64()
            ),
            Self::PeerSilent(d) => write!(f, "the sender fell silent for {:.1} s", d.as_secs_f64()),
        }
    }
}

/// Lets through datagrams of one peer's connection; counts the rest.
#[derive(Clone, Copy, Debug)]
pub struct PeerFilter {
    /// The peer's address.
    pub peer: SocketAddr,
    /// The connection id.
    pub conn_id: u32,
    /// Datagrams ignored: another address or connection id.
    pub ignored: u64,
}

impl PeerFilter {
    /// A filter for `peer`'s connection `conn_id`.
    pub fn new(peer: SocketAddr, conn_id: u32) -> Self {
        Self {
            peer,
            conn_id,
            ignored: 0,
        }
    }

    /// Whether a datagram from `from` of connection `conn_id` is the peer's (counts it if not).
    pub fn admit(&mut self, from: SocketAddr, conn_id: u32) -> bool {
        let ok = from == self.peer && conn_id == self.conn_id;
        self.ignored += u64::from(!ok);
        ok
    }
}

/// RFC 8083's circuit breaker, for a sender.
#[derive(Clone, Copy, Debug)]
pub struct CircuitBreaker {
    /// Silence (no feedback) that trips it, at least.
    pub min_silence: Duration,
    /// Silence that trips it in RTTs, when that is longer than `min_silence`.
    pub silence_rtts: u32,
    /// How long every report must say ≥ 50 % loss to trip it.
    pub heavy_loss_for: Duration,
    last_feedback: Instant,
    heavy_since: Option<Instant>,
    rtt: Duration,
}

impl CircuitBreaker {
    /// A breaker armed at `now`: 3 s (or 10 RTTs) without feedback, or 5 s of ≥ 50 % loss.
    pub fn new(now: Instant) -> Self {
        Self {
            min_silence: Duration::from_secs(3),
            silence_rtts: 10,
            heavy_loss_for: Duration::from_secs(5),
            last_feedback: now,
            heavy_since: None,
            rtt: Duration::ZERO,
        }
    }

    /// Notes a feedback report at `now` stating `loss`, the RTT being `rtt`.
    pub fn feedback(&mut self, now: Instant, loss: Option<f64>, rtt: Duration) {
        self.last_feedback = now;
        self.rtt = rtt.max(self.rtt / 2);
        match loss {
            Some(l) if l >= 0.5 => {
                self.heavy_since.get_or_insert(now);
            }
            Some(_) => self.heavy_since = None,
            None => {}
        }
    }

    /// Whether it trips at `now`, and why.
    pub fn check(&self, now: Instant) -> Option<StopReason> {
        let limit = self
            .min_silence
            .max(self.rtt * u64::from(self.silence_rtts));
        let silent = now.saturating_since(self.last_feedback);
        if silent >= limit {
            return Some(StopReason::NoFeedback(silent));
        }
        let heavy = now.saturating_since(self.heavy_since?);
        (heavy >= self.heavy_loss_for).then_some(StopReason::PersistentLoss(heavy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_admits_only_the_peers_connection() {
        let peer: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let other: SocketAddr = "127.0.0.1:5001".parse().unwrap();
        let mut f = PeerFilter::new(peer, 7);
        assert!(f.admit(peer, 7));
        assert!(!f.admit(other, 7));
        assert!(!f.admit(peer, 8));
        assert_eq!(f.ignored, 2);
    }

    #[test]
    fn the_breaker_trips_on_silence_and_on_persistent_heavy_loss() {
        let t = |ms| Instant::ZERO + Duration::from_millis(ms);
        let mut b = CircuitBreaker::new(t(0));
        assert_eq!(b.check(t(2_999)), None);
        assert_eq!(
            b.check(t(3_000)),
            Some(StopReason::NoFeedback(Duration::from_secs(3)))
        );
        // A long RTT stretches the silence allowed.
        b.feedback(t(3_000), Some(0.0), Duration::from_millis(500));
        assert_eq!(b.check(t(7_999)), None);
        assert!(b.check(t(8_000)).is_some());
        let mut b = CircuitBreaker::new(t(0));
        for ms in (0..=5_000).step_by(100) {
            b.feedback(t(ms), Some(0.6), Duration::from_millis(10));
        }
        assert_eq!(
            b.check(t(5_000)),
            Some(StopReason::PersistentLoss(Duration::from_secs(5)))
        );
        b.feedback(t(5_100), Some(0.1), Duration::from_millis(10));
        assert_eq!(b.check(t(5_100)), None);
    }

    #[test]
    fn random_numbers_differ() {
        assert_ne!(random_u64(), random_u64());
    }
}
