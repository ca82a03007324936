//! The SACK sender's scoreboard (RFC 6675 §3–4) in packet numbers: one entry per packet sent
//! and not yet cumulatively acknowledged, with whether it was SACKed, is deemed lost, was
//! retransmitted, and what the delivery-rate estimator ([`super::rate`]) recorded when it left.
//!
//! ns-2's TCP numbers packets, so RFC 6675's octet ranges become packet ranges: a "segment" is a
//! packet, `HighACK` the cumulative ACK, `HighData` the highest packet sent, and `IsLost(s)`
//! holds when at least `DupThresh` = 3 packets above `s` were SACKed (both of the RFC's tests,
//! three discontiguous SACKed sequences or more than two segments' worth of SACKed bytes, say
//! that for whole packets). `IsLost` is monotone, so the lost packets are every unSACKed one
//! below the third-highest SACKed packet, and the scoreboard marks them as that boundary moves.
//!
//! `pipe` (RFC 6675 `SetPipe`) is kept as counters, as Linux keeps its `packets_in_flight`:
//! outstanding − SACKed − lost + retransmitted (a retransmitted packet counts again unless SACKed;
//! a lost one that was retransmitted counts once). This is the RFC's sum: every unSACKed packet
//! at or below `HighRxt` was retransmitted by rules (1) or (3) of `NextSeg`, and the rescue
//! retransmission of rule (4), which does not move `HighRxt`, is not counted, as in the RFC.
//!
//! The entries live in a ring indexed by packet number modulo a power-of-two capacity that grows
//! to the largest flight and never shrinks, so a sender in steady state allocates nothing.

use std::collections::VecDeque;

use fairstream_core::{Duration, Instant};

/// `DupThresh` (RFC 6675 §2, RFC 5681): SACKed packets above one that make it lost.
pub const DUP_THRESH: usize = 3;

/// What the rate estimator records of a packet when it leaves (draft-cheng-iccrg-delivery-rate-
/// estimation §3.2; Linux `tcp_rate_skb_sent`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendState {
    /// When it was (last) sent.
    pub sent_at: Instant,
    /// Packets the connection had delivered then.
    pub delivered: u64,
    /// When the connection's delivered count last moved, then.
    pub delivered_at: Instant,
    /// The send time of the packet most recently delivered, then (the start of its send
    /// interval).
    pub first_sent_at: Instant,
    /// Whether the sender was application-limited then.
    pub app_limited: bool,
}

const SACKED: u8 = 1;
const LOST: u8 = 2;
const RETRANS: u8 = 4;

/// The rest of a packet's [`SendState`], kept only for delivery-rate samples (BBR).
#[derive(Clone, Copy, Debug, Default)]
struct RateRecord {
    delivered: u64,
    delivered_at: Instant,
    first_sent_at: Instant,
    app_limited: bool,
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    flags: u8,
    /// When it was (last) sent.
    sent_at: Instant,
}

/// A packet newly delivered by an ACK (cumulatively or by a SACK block), for RTT sampling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// Its packet number.
    pub seq: i64,
    /// When it was last sent.
    pub sent_at: Instant,
    /// Whether it had been retransmitted (its RTT is then ambiguous, Karn).
    pub retransmitted: bool,
}

/// What one ACK changed on the scoreboard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckUpdate {
    /// Packets delivered for the first time (cumulatively acknowledged without having been
    /// SACKed, or SACKed now).
    pub delivered: u32,
    /// Of them, SACKed now.
    pub sacked: u32,
    /// The most recently sent of them (the rate sample's packet, Linux's choice).
    pub newest: Option<Delivered>,
    /// The most recently sent of them that was never retransmitted (an unambiguous RTT; Linux's
    /// `ca_rtt`, what the window control and BBR see).
    pub newest_clean: Option<Delivered>,
    /// The earliest sent of them that was never retransmitted (Linux's `seq_rtt`, what the RTO
    /// estimator sees: it includes the receiver's delayed-ACK wait).
    pub oldest_clean: Option<Delivered>,
    /// What was recorded when the newest was sent (with rate samples only).
    pub newest_send: Option<SendState>,
}

impl AckUpdate {
    #[inline]
    fn take(&mut self, seq: i64, slot: &Slot, rate: Option<&RateRecord>) {
        self.delivered += 1;
        let d = Delivered {
            seq,
            sent_at: slot.sent_at,
            retransmitted: slot.flags & RETRANS != 0,
        };
        let newer =
            |o: &Option<Delivered>| o.is_none_or(|x| (d.sent_at, d.seq) >= (x.sent_at, x.seq));
        if newer(&self.newest) {
            self.newest = Some(d);
            if let Some(r) = rate {
                self.newest_send = Some(SendState {
                    sent_at: d.sent_at,
                    delivered: r.delivered,
                    delivered_at: r.delivered_at,
                    first_sent_at: r.first_sent_at,
                    app_limited: r.app_limited,
                });
            }
        }
        if !d.retransmitted {
            if newer(&self.newest_clean) {
                self.newest_clean = Some(d);
            }
            if self.oldest_clean.is_none_or(|x| d.sent_at < x.sent_at) {
                self.oldest_clean = Some(d);
            }
        }
    }
}

/// What `NextSeg` (RFC 6675 §4) says to send next, besides new data (rule 2), which is the
/// sender's to decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextSeg {
    /// Rule (1): the first lost packet above `HighRxt`.
    Lost(i64),
    /// Rule (3): the first unSACKed packet above `HighRxt` below the highest SACKed one.
    Unsacked(i64),
    /// Rule (4): the rescue retransmission, the highest unSACKed packet.
    Rescue(i64),
}

/// The scoreboard of packets `[base, top]`: sent, not cumulatively acknowledged.
#[derive(Clone, Debug)]
pub struct Scoreboard {
    slots: Vec<Slot>,
    /// Rate records, parallel to `slots`, when rate samples are kept (empty otherwise).
    rates: Vec<RateRecord>,
    with_rates: bool,
    /// First packet not cumulatively acknowledged (`HighACK + 1`).
    base: i64,
    /// Highest packet sent (`HighData`); `base - 1` when nothing is outstanding.
    top: i64,
    sacked_out: u64,
    lost_out: u64,
    retrans_out: u64,
    /// The three highest SACKed packets, highest first (−1: none).
    sacked_top: [i64; DUP_THRESH],
    /// Packets below this were checked for loss.
    lost_mark: i64,
    /// Where the search for a lost or unSACKed packet above `HighRxt` resumes.
    cursor: i64,
    /// Ranges of packets known to be SACKed whole (the blocks of recent ACKs; empty as (0, 0)).
    sacked_ranges: [(i64, i64); 4],
    sacked_ranges_next: usize,
    /// Retransmitted packets in the order they were retransmitted (entries of packets since
    /// acknowledged, SACKed or deemed lost again are dropped as they come to the front).
    retransmissions: VecDeque<i64>,
}

impl Default for Scoreboard {
    fn default() -> Self {
        Self::new(0)
    }
}

impl Scoreboard {
    /// Bytes an entry takes (memory estimates).
    pub const ENTRY_BYTES: usize = size_of::<Slot>();
    /// Bytes a rate record takes besides its entry (BBR).
    pub const RATE_BYTES: usize = size_of::<RateRecord>();

    /// An empty scoreboard whose first packet will be `base`.
    pub fn new(base: i64) -> Self {
        Self {
            slots: Vec::new(),
            rates: Vec::new(),
            with_rates: false,
            base,
            top: base - 1,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            sacked_top: [-1; DUP_THRESH],
            lost_mark: base,
            cursor: base,
            sacked_ranges: [(0, 0); 4],
            sacked_ranges_next: 0,
            retransmissions: VecDeque::new(),
        }
    }

    /// An empty scoreboard that also keeps what delivery-rate samples need of each packet.
    pub fn with_rate_samples(base: i64) -> Self {
        Self {
            with_rates: true,
            ..Self::new(base)
        }
    }

    #[inline]
    fn rate_of(&self, i: usize) -> Option<&RateRecord> {
        self.rates.get(i)
    }

    #[inline]
    fn idx(&self, seq: i64) -> usize {
        (seq as u64 & (self.slots.len() as u64 - 1)) as usize
    }

    #[inline]
    fn slot(&self, seq: i64) -> &Slot {
        &self.slots[self.idx(seq)]
    }

    #[inline]
    fn slot_mut(&mut self, seq: i64) -> &mut Slot {
        let i = self.idx(seq);
        &mut self.slots[i]
    }

    /// The first packet not cumulatively acknowledged.
    pub fn base(&self) -> i64 {
        self.base
    }

    /// The highest packet sent.
    pub fn top(&self) -> i64 {
        self.top
    }

    /// Packets outstanding (sent, not cumulatively acknowledged).
    pub fn outstanding(&self) -> u64 {
        (self.top - self.base + 1).max(0) as u64
    }

    /// SACKed packets above the cumulative ACK.
    pub fn sacked(&self) -> u64 {
        self.sacked_out
    }

    /// Packets deemed lost and not SACKed since.
    pub fn lost(&self) -> u64 {
        self.lost_out
    }

    /// Retransmitted packets not SACKed or acknowledged since (rescues excluded).
    pub fn retransmitted(&self) -> u64 {
        self.retrans_out
    }

    /// RFC 6675's `pipe`: packets the sender deems in the network.
    pub fn pipe(&self) -> u64 {
        (self.outstanding() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// The highest SACKed packet (−1: none above the cumulative ACK).
    pub fn highest_sacked(&self) -> i64 {
        if self.sacked_top[0] >= self.base {
            self.sacked_top[0]
        } else {
            -1
        }
    }

    /// Whether packet `seq` (outstanding) was SACKed.
    pub fn is_sacked(&self, seq: i64) -> bool {
        self.contains(seq) && self.slot(seq).flags & SACKED != 0
    }

    /// RFC 6675 `IsLost(seq)`: at least three packets above it were SACKed (or it was marked
    /// lost by a timeout).
    pub fn is_lost(&self, seq: i64) -> bool {
        self.contains(seq) && self.slot(seq).flags & (SACKED | LOST) == LOST
    }

    /// Whether packet `seq` was retransmitted since it was last deemed lost.
    pub fn is_retransmitted(&self, seq: i64) -> bool {
        self.contains(seq) && self.slot(seq).flags & RETRANS != 0
    }

    fn contains(&self, seq: i64) -> bool {
        seq >= self.base && seq <= self.top && !self.slots.is_empty()
    }

    /// When `seq` (outstanding) was last sent.
    pub fn sent_at(&self, seq: i64) -> Option<Instant> {
        self.contains(seq).then(|| self.slot(seq).sent_at)
    }

    fn store(&mut self, seq: i64, send: &SendState) {
        let i = self.idx(seq);
        self.slots[i].sent_at = send.sent_at;
        if self.with_rates {
            self.rates[i] = RateRecord {
                delivered: send.delivered,
                delivered_at: send.delivered_at,
                first_sent_at: send.first_sent_at,
                app_limited: send.app_limited,
            };
        }
    }

    /// Packet `seq` left: a new one (`seq == top + 1`), or a retransmission of an outstanding
    /// one (`rescue`: rule (4)'s, not counted in `pipe`). Anything else is ignored.
    pub fn sent(&mut self, seq: i64, send: SendState, rescue: bool) {
        if seq == self.top + 1 {
            self.reserve(seq);
            self.top = seq;
            self.slot_mut(seq).flags = 0;
            self.store(seq, &send);
        } else if self.contains(seq) {
            self.store(seq, &send);
            let slot = self.slot_mut(seq);
            if !rescue && slot.flags & (RETRANS | SACKED) == 0 {
                slot.flags |= RETRANS;
                self.retrans_out += 1;
                self.retransmissions.push_back(seq);
            }
        }
    }

    /// Makes room for `seq = top + 1`, moving the outstanding entries.
    fn reserve(&mut self, seq: i64) {
        let need = (seq - self.base + 1) as u64;
        if need <= self.slots.len() as u64 {
            return;
        }
        let len = usize::try_from(need.next_power_of_two())
            .unwrap_or(usize::MAX)
            .max(64)
            .max(2 * self.slots.len());
        let mut slots = vec![Slot::default(); len];
        let mut rates = vec![RateRecord::default(); if self.with_rates { len } else { 0 }];
        for s in self.base..=self.top {
            let to = (s as u64 & (len as u64 - 1)) as usize;
            let from = self.idx(s);
            slots[to] = self.slots[from];
            if self.with_rates {
                rates[to] = self.rates[from];
            }
        }
        self.slots = slots;
        self.rates = rates;
    }

    /// The cumulative ACK reached `ack` (every packet up to it delivered): their entries go.
    pub fn ack_to(&mut self, ack: i64, update: &mut AckUpdate) {
        let end = ack.min(self.top);
        while self.base <= end {
            let s = self.base;
            let i = self.idx(s);
            let slot = self.slots[i];
            if slot.flags & SACKED != 0 {
                self.sacked_out -= 1;
            } else {
                if slot.flags & LOST != 0 {
                    self.lost_out -= 1;
                }
                if slot.flags & RETRANS != 0 {
                    self.retrans_out -= 1;
                }
                update.take(s, &slot, self.rate_of(i));
            }
            self.base += 1;
        }
        self.lost_mark = self.lost_mark.max(self.base);
        self.cursor = self.cursor.max(self.base);
    }

    /// A SACK block `[start, end)` arrived: its outstanding packets are SACKed.
    pub fn sack(&mut self, start: i64, end: i64, update: &mut AckUpdate) {
        if self.slots.is_empty() {
            return;
        }
        let from = start.max(self.base);
        let to = end.min(self.top + 1);
        if from >= to {
            return;
        }
        // A receiver reports its runs again and again as they grow: skip the largest range
        // within this block known to be SACKed whole already.
        let known = self
            .sacked_ranges
            .iter()
            .map(|&(s, e)| (s.max(from), e.min(to)))
            .filter(|&(s, e)| s < e)
            .max_by_key(|&(s, e)| e - s);
        match known {
            Some((s, e)) => {
                self.sack_range(from, s, update);
                self.sack_range(e, to, update);
            }
            None => self.sack_range(from, to, update),
        }
        // Now all of [from, to) is SACKed: remember it, dropping ranges it covers.
        let r = &mut self.sacked_ranges;
        let slot = r
            .iter()
            .position(|&(s, e)| s >= from && e <= to)
            .or_else(|| r.iter().position(|&(s, e)| e <= self.base || s >= e))
            .unwrap_or(self.sacked_ranges_next % r.len());
        r[slot] = (from, to);
        for (k, range) in r.iter_mut().enumerate() {
            if k != slot && range.0 >= from && range.1 <= to {
                *range = (0, 0);
            }
        }
        self.sacked_ranges_next = self.sacked_ranges_next.wrapping_add(1);
    }

    /// SACKs the outstanding packets of `[from, to)` not SACKed yet.
    fn sack_range(&mut self, from: i64, to: i64, update: &mut AckUpdate) {
        for s in from..to {
            let i = self.idx(s);
            let slot = self.slots[i];
            if slot.flags & SACKED != 0 {
                continue;
            }
            if slot.flags & LOST != 0 {
                self.lost_out -= 1;
            }
            if slot.flags & RETRANS != 0 {
                self.retrans_out -= 1;
            }
            self.slots[i].flags |= SACKED;
            self.sacked_out += 1;
            update.take(s, &slot, self.rate_of(i));
            update.sacked += 1;
            self.note_sacked(s);
        }
    }

    fn note_sacked(&mut self, s: i64) {
        let top = &mut self.sacked_top;
        if s > top[DUP_THRESH - 1] {
            top[DUP_THRESH - 1] = s;
            top.sort_unstable_by(|a, b| b.cmp(a));
        }
    }

    /// Marks lost every unSACKed packet that `IsLost` now names (three SACKed above it); returns
    /// how many were newly marked.
    pub fn mark_lost(&mut self) -> u64 {
        let bound = self.sacked_top[DUP_THRESH - 1];
        self.mark_lost_below(bound)
    }

    /// Marks lost every outstanding unSACKed packet below `bound`; returns how many.
    fn mark_lost_below(&mut self, bound: i64) -> u64 {
        let mut n = 0;
        let bound = bound.min(self.top + 1);
        while self.lost_mark < bound {
            let s = self.lost_mark;
            let slot = self.slot_mut(s);
            if slot.flags & (SACKED | LOST) == 0 {
                slot.flags |= LOST;
                n += 1;
            }
            self.lost_mark += 1;
        }
        self.lost_out += n;
        n
    }

    /// Marks `seq` (the first unacknowledged packet, on entering recovery) lost if it is not.
    pub fn mark_head_lost(&mut self) -> bool {
        let s = self.base;
        if !self.contains(s) || self.slot(s).flags & (SACKED | LOST) != 0 {
            return false;
        }
        self.slot_mut(s).flags |= LOST;
        self.lost_out += 1;
        true
    }

    /// Retransmissions lost again: a retransmission is lost when a packet sent more than `reo`
    /// after it has been delivered (the newest packet this ACK delivered was sent at
    /// `delivered_sent_at`), as Linux's RACK decides (RFC 8985 §6.2; RFC 6675 alone leaves a lost
    /// retransmission to the timeout). Such packets are retransmittable again by rule (1); returns
    /// the lowest of them, so that the sender can take `HighRxt` back below it.
    pub fn lost_retransmissions(
        &mut self,
        delivered_sent_at: Instant,
        reo: Duration,
    ) -> Option<i64> {
        let mut lowest: Option<i64> = None;
        while let Some(&seq) = self.retransmissions.front() {
            if !self.contains(seq) || self.slot(seq).flags & (RETRANS | SACKED) != RETRANS {
                self.retransmissions.pop_front();
                continue;
            }
            if self.slot(seq).sent_at.saturating_add(reo) >= delivered_sent_at {
                break;
            }
            self.retransmissions.pop_front();
            self.slot_mut(seq).flags &= !RETRANS;
            self.retrans_out -= 1;
            lowest = Some(lowest.map_or(seq, |l| l.min(seq)));
        }
        if let Some(l) = lowest {
            self.cursor = self.cursor.min(l);
        }
        lowest
    }

    /// A retransmission timeout: every outstanding unSACKed packet is lost and none counts as
    /// retransmitted any more (Linux `tcp_timeout_mark_lost`; RFC 6675 §5.1 keeps the SACK
    /// information); the search for packets to resend starts again at the base.
    pub fn timeout(&mut self) {
        for s in self.base..=self.top {
            let slot = self.slot_mut(s);
            slot.flags &= !RETRANS;
            if slot.flags & SACKED == 0 {
                slot.flags |= LOST;
            }
        }
        self.retrans_out = 0;
        self.retransmissions.clear();
        self.lost_out = self.outstanding() - self.sacked_out;
        self.lost_mark = self.top + 1;
        self.cursor = self.base;
    }

    /// RFC 6675 `NextSeg` rules (1), (3) and (4) for `HighRxt = high_rxt`, rule (3) only when
    /// `rule3` (new data, rule (2), goes before it: the caller asks with `rule3` when it has
    /// none), rule (4) when `rescue` (the caller's `RescueRxt` test passed).
    pub fn next_seg(&mut self, high_rxt: i64, rule3: bool, rescue: bool) -> Option<NextSeg> {
        if self.slots.is_empty() || self.top < self.base {
            return None;
        }
        let from = (high_rxt + 1).max(self.base);
        if self.cursor < from {
            self.cursor = from;
        }
        // Rule (1): lost packets lie below `lost_mark`; the cursor only skips SACKed packets or
        // packets already retransmitted, which stay so.
        while self.cursor < self.lost_mark {
            let f = self.slot(self.cursor).flags;
            if f & (SACKED | LOST | RETRANS) == LOST {
                return Some(NextSeg::Lost(self.cursor));
            }
            self.cursor += 1;
        }
        let high_sacked = self.highest_sacked();
        if rule3 {
            let mut s = from;
            while s < high_sacked {
                if self.slot(s).flags & (SACKED | RETRANS) == 0 {
                    return Some(NextSeg::Unsacked(s));
                }
                s += 1;
            }
        }
        if rescue {
            let mut s = self.top;
            while s >= self.base {
                if self.slot(s).flags & SACKED == 0 {
                    return Some(NextSeg::Rescue(s));
                }
                s -= 1;
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(sb: &mut Scoreboard, seqs: std::ops::RangeInclusive<i64>) {
        for s in seqs {
            sb.sent(s, SendState::default(), false);
        }
    }

    /// Packets 1..=10 outstanding; 2, 4 and 5 lost in the network, the rest SACKed as they come.
    fn step_plan() -> Scoreboard {
        let mut sb = Scoreboard::new(1);
        sent(&mut sb, 1..=10);
        let mut u = AckUpdate::default();
        // ACK of 1 (cumulative), then SACKs of 3, then 6, 7.
        sb.ack_to(1, &mut u);
        sb.sack(3, 4, &mut u);
        sb.sack(6, 8, &mut u);
        assert_eq!((u.delivered, u.sacked), (4, 3));
        sb
    }

    #[test]
    fn pipe_and_is_lost_on_a_scoreboard_computed_by_hand() {
        let mut sb = step_plan();
        // Outstanding 2..=10 (9), SACKed 3, 6, 7. Third-highest SACKed = 3: packets below 3 with
        // three SACKed above are lost: only 2. pipe = 9 − 3 SACKed − 1 lost = 5 (4, 5, 8, 9, 10).
        assert_eq!(sb.mark_lost(), 1);
        assert!(sb.is_lost(2) && !sb.is_lost(4) && !sb.is_lost(5));
        assert_eq!((sb.outstanding(), sb.sacked(), sb.lost()), (9, 3, 1));
        assert_eq!(sb.pipe(), 5);
        assert_eq!(sb.highest_sacked(), 7);
        // SACK of 8: 4 and 5 now have 6, 7, 8 above them: lost. pipe = 9 − 4 − 3 = 2 (9, 10).
        let mut u = AckUpdate::default();
        sb.sack(8, 9, &mut u);
        assert_eq!(sb.mark_lost(), 2);
        assert_eq!(sb.pipe(), 2);
        // NextSeg with HighRxt = 1: rule (1) gives 2; once it is retransmitted (HighRxt = 2,
        // pipe + 1: the retransmission counts), 4, then 5.
        assert_eq!(sb.next_seg(1, false, false), Some(NextSeg::Lost(2)));
        sb.sent(2, SendState::default(), false);
        assert_eq!(sb.pipe(), 3);
        assert_eq!(sb.next_seg(2, false, false), Some(NextSeg::Lost(4)));
        sb.sent(4, SendState::default(), false);
        assert_eq!(sb.next_seg(4, false, false), Some(NextSeg::Lost(5)));
        sb.sent(5, SendState::default(), false);
        assert_eq!(sb.pipe(), 5);
        // No lost packet left: rule (1) fails; rule (3) finds no unSACKed packet below the highest
        // SACKed (8) that was not retransmitted; rule (4) rescues the highest unSACKed, 10.
        assert_eq!(sb.next_seg(5, false, false), None);
        assert_eq!(sb.next_seg(5, true, false), None);
        assert_eq!(sb.next_seg(5, true, true), Some(NextSeg::Rescue(10)));
        // A rescue is not counted in pipe (HighRxt does not move).
        sb.sent(10, SendState::default(), true);
        assert_eq!(sb.pipe(), 5);
        // The retransmitted 2 arrives: cumulative ACK 3 (3 was SACKed): pipe drops by the
        // retransmission and the original (one lost, one retransmitted): 4.
        let mut u = AckUpdate::default();
        sb.ack_to(3, &mut u);
        assert_eq!(u.delivered, 1, "only 2 is new; 3 was SACKed before");
        assert!(u.newest.unwrap().retransmitted && u.newest_clean.is_none());
        assert_eq!(
            (sb.outstanding(), sb.sacked(), sb.lost(), sb.retransmitted()),
            (7, 3, 2, 2)
        );
        assert_eq!(sb.pipe(), 4);
    }

    #[test]
    fn rule_three_sends_unsacked_packets_not_yet_deemed_lost() {
        let mut sb = Scoreboard::new(0);
        sent(&mut sb, 0..=5);
        let mut u = AckUpdate::default();
        // 0 and 1 missing, 2 and 4 SACKed: only two SACKed above 0 and 1, nothing is lost.
        sb.sack(2, 3, &mut u);
        sb.sack(4, 5, &mut u);
        assert_eq!(sb.mark_lost(), 0);
        assert_eq!(sb.pipe(), 4);
        assert_eq!(sb.next_seg(-1, false, false), None);
        assert_eq!(sb.next_seg(-1, true, false), Some(NextSeg::Unsacked(0)));
        sb.sent(0, SendState::default(), false);
        // 0 counts twice now (not lost, retransmitted): pipe 5.
        assert_eq!(sb.pipe(), 5);
        assert_eq!(sb.next_seg(0, true, false), Some(NextSeg::Unsacked(1)));
        sb.sent(1, SendState::default(), false);
        assert_eq!(sb.next_seg(1, true, false), Some(NextSeg::Unsacked(3)));
    }

    #[test]
    fn a_timeout_marks_every_unsacked_packet_lost_and_resends_in_order() {
        let mut sb = step_plan();
        sb.mark_lost();
        sb.sent(2, SendState::default(), false);
        sb.timeout();
        // Outstanding 2..=10, SACKed 3, 6, 7: the six others are lost, none retransmitted.
        assert_eq!((sb.lost(), sb.retransmitted(), sb.pipe()), (6, 0, 0));
        let mut order = Vec::new();
        let mut high = 1;
        while let Some(NextSeg::Lost(s)) = sb.next_seg(high, false, false) {
            order.push(s);
            sb.sent(s, SendState::default(), false);
            high = s;
        }
        assert_eq!(order, [2, 4, 5, 8, 9, 10]);
        assert_eq!(sb.pipe(), 6);
    }

    #[test]
    fn a_lost_retransmission_is_found_when_later_packets_arrive() {
        let ms = |n: u64| Instant::from_nanos(n * 1_000_000);
        let at = |n: u64| SendState {
            sent_at: ms(n),
            ..SendState::default()
        };
        let mut sb = Scoreboard::new(0);
        for s in 0..=9 {
            sb.sent(s, at(s as u64), false);
        }
        let mut u = AckUpdate::default();
        sb.sack(1, 10, &mut u);
        sb.mark_lost();
        assert!(sb.is_lost(0));
        // 0 is retransmitted at 100 ms, 10 and 11 sent after it.
        sb.sent(0, at(100), false);
        sb.sent(10, at(101), false);
        sb.sent(11, at(130), false);
        assert_eq!((sb.retransmitted(), sb.pipe()), (1, 3));
        // 10 (sent 1 ms after the retransmission) arrives: within a 5 ms reordering window.
        let mut u = AckUpdate::default();
        sb.sack(10, 11, &mut u);
        let newest = u.newest.unwrap().sent_at;
        assert_eq!(
            sb.lost_retransmissions(newest, Duration::from_millis(5)),
            None
        );
        // 11, sent 30 ms after it: the retransmission of 0 was lost too.
        let mut u = AckUpdate::default();
        sb.sack(11, 12, &mut u);
        let newest = u.newest.unwrap().sent_at;
        assert_eq!(
            sb.lost_retransmissions(newest, Duration::from_millis(5)),
            Some(0)
        );
        assert!(sb.is_lost(0) && !sb.is_retransmitted(0));
        assert_eq!((sb.retransmitted(), sb.pipe()), (0, 0));
        assert_eq!(sb.next_seg(-1, false, false), Some(NextSeg::Lost(0)));
    }

    #[test]
    fn blocks_reported_again_sack_only_what_is_new() {
        let mut sb = Scoreboard::new(0);
        sent(&mut sb, 0..=40);
        // The receiver's run [5, 10) grows to [5, 20) one packet at a time; a second run
        // [25, 30) appears, then an ACK reports the first run whole with a gap in what the
        // sender saw (an ACK was lost): every packet is SACKed once, none twice.
        let mut total = 0;
        for end in 10..=20 {
            let mut u = AckUpdate::default();
            sb.sack(5, end, &mut u);
            if end > 10 {
                assert_eq!(u.sacked, 1, "end {end}");
            }
            total += u.sacked;
        }
        let mut u = AckUpdate::default();
        sb.sack(25, 30, &mut u);
        sb.sack(5, 24, &mut u);
        assert_eq!(u.sacked, 5 + 4);
        total += u.sacked;
        assert_eq!(u64::from(total), sb.sacked());
        assert_eq!(sb.sacked(), 15 + 4 + 5);
        // Blocks below the cumulative ACK or beyond what was sent change nothing.
        sb.ack_to(7, &mut AckUpdate::default());
        let mut u = AckUpdate::default();
        sb.sack(0, 8, &mut u);
        sb.sack(41, 50, &mut u);
        assert_eq!(u.sacked, 0);
    }

    #[test]
    fn the_ring_grows_and_keeps_entries() {
        let mut sb = Scoreboard::new(0);
        sent(&mut sb, 0..=63);
        let mut u = AckUpdate::default();
        sb.sack(40, 41, &mut u);
        sent(&mut sb, 64..=300);
        assert!(sb.is_sacked(40) && !sb.is_sacked(41));
        sb.ack_to(299, &mut u);
        assert_eq!((sb.outstanding(), sb.sacked(), sb.pipe()), (1, 0, 1));
        // An ACK beyond what was sent moves nothing further.
        sb.ack_to(10_000, &mut u);
        assert_eq!((sb.base(), sb.outstanding()), (301, 0));
    }
}
