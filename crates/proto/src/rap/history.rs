//! The sender's transmission history and RAP's two loss detections (ns-2's `TransHistory`).
//!
//! Every packet sent is remembered with its departure time until an ACK says it arrived, the
//! ACKs say it was lost, or its loss timeout passes:
//!
//! - **ACK-based**: a packet at or below the ACK's `last_recv` arrived if it lies above the last
//!   hole (`seq > last_miss`) or is `prev_recv`; otherwise it was lost once `last_recv` is three
//!   or more above it (as TCP's three duplicate ACKs);
//! - **timer-based**: a packet sent at `t` is lost when `t + timeout ≤ now`.
//!
//! After a backoff every packet already sent is *inactive*: its loss belongs to the cluster
//! just answered and triggers no further backoff (it still counts as lost). Entries are kept in
//! sequence (so departure) order; the inactive ones are those below a watermark, so a backoff
//! costs nothing.

use std::collections::VecDeque;

use fairstream_core::{Duration, Instant};

use super::RapAck;

/// What a detection found among the packets it settled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Losses {
    /// Lost packets sent before the last backoff (no new congestion signal).
    pub(super) inactive: u64,
    /// Lost packets sent since: a new congestion signal if any.
    pub(super) active: u64,
}

impl Losses {
    pub(super) fn total(self) -> u64 {
        self.inactive + self.active
    }

    /// Counts packet `seq` lost, inactive if below `active_from`.
    fn count(&mut self, seq: u64, active_from: u64) {
        if seq < active_from {
            self.inactive += 1;
        } else {
            self.active += 1;
        }
    }
}

/// Packets sent and not yet settled, oldest first.
#[derive(Clone, Debug, Default)]
pub(super) struct History {
    sent: VecDeque<(u64, Instant)>,
    /// Packets below this sequence number are inactive.
    active_from: u64,
}

impl History {
    /// Remembers packet `seq` (higher than any before) sent at `at`.
    pub(super) fn push(&mut self, seq: u64, at: Instant) {
        self.sent.push_back((seq, at));
    }

    /// Packets remembered.
    pub(super) fn len(&self) -> usize {
        self.sent.len()
    }

    /// Forgets packet `seq`, acknowledged, and returns when it was sent (`None`: already
    /// settled, or never sent).
    pub(super) fn take(&mut self, seq: u64) -> Option<Instant> {
        let i = self.sent.binary_search_by_key(&seq, |e| e.0).ok()?;
        self.sent.remove(i).map(|e| e.1)
    }

    /// Marks every packet sent so far inactive (a backoff answered their losses).
    pub(super) fn deactivate(&mut self, next_seq: u64) {
        self.active_from = next_seq;
    }

    /// The ACK-based detection: settles the packets `ack` reports. Only the packets at or
    /// below its `last_recv` are looked at, a prefix found by binary search: settled ones leave,
    /// the few that wait (at most two, one or two below `last_recv`) go back to the front in
    /// order, so an ACK costs what it settles, not what is in flight.
    pub(super) fn on_ack(&mut self, ack: &RapAck) -> Losses {
        let mut out = Losses::default();
        let reported = self.sent.partition_point(|&(seq, _)| seq <= ack.last_recv);
        let mut waiting = 0;
        for _ in 0..reported {
            let Some((seq, at)) = self.sent.pop_front() else {
                break;
            };
            if seq > ack.last_miss || seq == ack.prev_recv {
                continue; // arrived
            }
            if ack.last_recv - seq >= 3 {
                out.count(seq, self.active_from);
                continue;
            }
            self.sent.push_back((seq, at));
            waiting += 1;
        }
        self.sent.rotate_right(waiting);
        out
    }

    /// The timer-based detection: settles the packets sent at or before `now − timeout`.
    pub(super) fn on_timer(&mut self, now: Instant, timeout: Duration) -> Losses {
        let mut out = Losses::default();
        while let Some(&(seq, at)) = self.sent.front() {
            if at.saturating_add(timeout) > now {
                break;
            }
            self.sent.pop_front();
            out.count(seq, self.active_from);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(seq: u64, last_recv: u64, last_miss: u64, prev_recv: u64) -> RapAck {
        RapAck {
            seq,
            last_recv,
            last_miss,
            prev_recv,
        }
    }

    fn sent(n: u64) -> History {
        let mut h = History::default();
        for s in 1..=n {
            h.push(s, Instant::from_nanos(s * 1_000_000));
        }
        h
    }

    #[test]
    fn a_hole_three_below_the_highest_is_a_loss_and_one_nearer_waits() {
        // Packets below the last hole that no ACK took are lost too: take those that arrived.
        let mut h = sent(8);
        // 1–3 arrived, 4–5 missing, 6–8 arrived.
        for s in [1, 2, 3, 6, 7] {
            assert!(h.take(s).is_some());
        }
        assert_eq!(h.take(8), Some(Instant::from_nanos(8_000_000)));
        let l = h.on_ack(&ack(8, 8, 5, 3));
        assert_eq!(
            l,
            Losses {
                inactive: 0,
                active: 2
            }
        );
        assert_eq!(h.len(), 0, "everything up to 8 is settled");
        let mut h = sent(8);
        // Only 7 and 8 above the hole at 6: 6 is two below the highest, not yet lost.
        for s in [1, 2, 3, 4, 5, 7, 8] {
            assert!(h.take(s).is_some());
        }
        let l = h.on_ack(&ack(8, 8, 6, 5));
        assert_eq!(l, Losses::default());
        assert_eq!(h.len(), 1, "packet 6 waits");
    }

    #[test]
    fn losses_of_packets_sent_before_a_backoff_are_inactive() {
        let mut h = sent(10);
        assert!(h.take(1).is_some());
        h.deactivate(6);
        let l = h.on_ack(&ack(10, 10, 7, 2));
        assert_eq!(
            l,
            Losses {
                inactive: 3,
                active: 2
            }
        );
        assert_eq!(l.total(), 5);
    }

    /// The detection as first written: every packet remembered looked at, in order.
    fn on_ack_by_scanning_all(h: &mut History, ack: &RapAck) -> Losses {
        let mut out = Losses::default();
        let active_from = h.active_from;
        h.sent.retain(|&(seq, _)| {
            if seq > ack.last_recv {
                return true;
            }
            if seq > ack.last_miss || seq == ack.prev_recv {
                return false;
            }
            if ack.last_recv - seq >= 3 {
                out.count(seq, active_from);
                return false;
            }
            true
        });
        out
    }

    #[test]
    fn settling_a_prefix_agrees_with_scanning_every_packet() {
        let mut rng = fairstream_core::RngStream::derive(7, "rap-history", 0);
        for _ in 0..300 {
            let (mut fast, mut slow) = (History::default(), History::default());
            let mut next = 1u64;
            for _ in 0..60 {
                for _ in 0..(rng.uniform() * 6.0) as u64 {
                    let at = Instant::from_nanos(next * 1000);
                    fast.push(next, at);
                    slow.push(next, at);
                    next += 1;
                }
                if rng.uniform() < 0.1 {
                    fast.deactivate(next);
                    slow.deactivate(next);
                }
                // A plausible ACK: last_miss < last_recv < next, prev_recv below last_miss.
                let last_recv = 1 + (rng.uniform() * (next - 1) as f64) as u64;
                if last_recv < 2 || last_recv >= next {
                    continue;
                }
                let last_miss = (rng.uniform() * last_recv as f64) as u64;
                let prev_recv = (rng.uniform() * last_miss.max(1) as f64) as u64;
                let a = ack(last_recv, last_recv, last_miss, prev_recv);
                if rng.uniform() < 0.5 {
                    assert_eq!(fast.take(a.seq), slow.take(a.seq));
                }
                assert_eq!(fast.on_ack(&a), on_ack_by_scanning_all(&mut slow, &a));
                assert_eq!(fast.sent, slow.sent);
            }
        }
    }

    #[test]
    fn the_timer_settles_the_oldest_packets_only() {
        let mut h = sent(5);
        let l = h.on_timer(Instant::from_nanos(3_500_000), Duration::from_millis(1));
        assert_eq!(l.active, 2, "packets sent at 1 and 2 ms");
        assert_eq!(h.len(), 3);
        assert_eq!(h.take(1), None, "already settled");
    }
}
