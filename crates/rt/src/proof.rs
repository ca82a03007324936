//! Feedback that must prove what it claims. Every data packet carries a random nonce (the first
//! four bytes of its payload); every feedback report carries an [`Echo`]: the sum of the nonces
//! of the packets received in a range of sequence numbers, each report's range starting one past
//! the previous one's (a gap or an overlap is taken as a wrong echo, so no packet can be left out
//! of every range). A report that claims no loss must echo the sum of every nonce sent in its
//! range, which a receiver that missed a packet cannot know. A wrong echo is taken as heavy loss
//! (the report's `Header::forge_loss`): the sender's rate goes to its minimum, and if the lies persist the circuit
//! breaker stops it. A report lost on the way back leaves a gap too: the next report that claims
//! no loss is then taken as a lie, once, the price of not letting a receiver skip a range.
//!
//! What a header is (a data packet and its sequence number, a report and what it claims, how far
//! its echo reaches, how it states the heaviest loss) each protocol's header says itself
//! (`fairstream_proto::header::HeaderKind`, through `Header::data_seq`, `feedback_claim`,
//! `echo_lag`, `report_top`, `forge_loss`): nothing here names a protocol.

use fairstream_proto::wire::Echo;

/// Bytes of a data packet's payload that carry its nonce: the nonce costs no bytes on the
/// wire beyond the payload the simulator charges.
pub const NONCE_LEN: usize = 4;

/// Writes `nonce` into the front of a data packet's `payload` and returns the nonce the packet
/// carries: `nonce`, or 0 when the payload is shorter than [`NONCE_LEN`] (such a packet
/// proves nothing, but counts as zero on both sides so that the sums still agree).
pub fn write_nonce(payload: &mut [u8], nonce: u32) -> u32 {
    match payload.get_mut(..NONCE_LEN) {
        Some(front) => {
            front.copy_from_slice(&nonce.to_be_bytes());
            nonce
        }
        None => 0,
    }
}

/// The nonce a data packet's `payload` carries ([`write_nonce`]).
pub fn read_nonce(payload: &[u8]) -> u32 {
    payload
        .get(..NONCE_LEN)
        .map_or(0, |n| u32::from_be_bytes([n[0], n[1], n[2], n[3]]))
}

/// Sequence numbers a sender remembers nonces for, per sub-connection.
const RING: u64 = 1 << 16;

/// A sender's record of the nonces it sent: prefix sums per sub-connection, in a ring.
#[derive(Debug, Default)]
pub struct NonceLedger {
    conns: Vec<Option<Box<Prefix>>>,
}

#[derive(Debug)]
struct Prefix {
    sums: Vec<u32>,
    next: u64,
    /// Where the next report's range must start: one past the previous report's range.
    expected_from: u64,
}

impl NonceLedger {
    /// Notes that data packet `seq` of `conn` went out with `nonce`.
    pub fn sent(&mut self, conn: u8, seq: u64, nonce: u32) {
        let i = usize::from(conn);
        if self.conns.len() <= i {
            self.conns.resize_with(i + 1, || None);
        }
        let p = self.conns[i].get_or_insert_with(|| {
            Box::new(Prefix {
                sums: vec![0; RING as usize],
                next: 0,
                expected_from: 0,
            })
        });
        let before = if seq == 0 {
            0
        } else {
            p.sums[((seq - 1) % RING) as usize]
        };
        p.sums[(seq % RING) as usize] = before.wrapping_add(nonce);
        p.next = seq + 1;
    }

    /// Whether `echo` on a report about `conn` is what the packets sent add up to (what a
    /// report that claims no loss must prove); `None` when it cannot be told (the range is older
    /// than the ring). Called for every report in the order they arrive: a range must start one
    /// past the previous report's (a gap would skip packets the receiver missed, an overlap
    /// would count some twice) and reach within [`FRESH`] packets of the newest sent; an empty
    /// one proves nothing and is taken only at the start, before [`FRESH`] packets have gone.
    /// After any report whose range covers packets sent, the next range must start past it.
    pub fn verify(&mut self, conn: u8, echo: &Echo) -> Option<bool> {
        let p = self.conns.get_mut(usize::from(conn))?.as_mut()?;
        let (from, high) = (u64::from(echo.from_seq), u64::from(echo.highest_seq));
        let contiguous = from == p.expected_from;
        if echo.highest_seq.wrapping_add(1) == echo.from_seq {
            return Some(contiguous && echo.nonce_sum == 0 && from == 0 && p.next <= FRESH);
        }
        if high >= p.next || from > high {
            return Some(false); // packets never sent, or a reversed range
        }
        p.expected_from = high + 1;
        if !contiguous || high + FRESH < p.next {
            return Some(false); // a gap or an overlap with the previous range, or a stale one
        }
        if p.next - from > RING {
            return None;
        }
        let at = |s: u64| p.sums[(s % RING) as usize];
        let expected = at(high).wrapping_sub(if from == 0 { 0 } else { at(from - 1) });
        Some(echo.nonce_sum == expected)
    }
}

/// How far behind the newest packet sent a report's range may end (packets in flight).
pub const FRESH: u64 = 1024;

/// Received nonces a receiver keeps per sub-connection before they are summed.
const WINDOW: usize = 256;

/// A receiver's nonces of one sub-connection, for the echo of its next report.
#[derive(Debug)]
struct Window {
    /// `(seq, nonce)` of recent packets by `seq % WINDOW`; `u64::MAX`: empty.
    slots: Box<[(u64, u32); WINDOW]>,
    /// Sum of nonces pushed out of `slots` before they were reported.
    spill: u32,
    highest: Option<u64>,
    /// Highest sequence number covered by a report so far.
    reported: Option<u64>,
}

impl Default for Window {
    fn default() -> Self {
        Self {
            slots: Box::new([(u64::MAX, 0); WINDOW]),
            spill: 0,
            highest: None,
            reported: None,
        }
    }
}

/// A receiver's nonces, per sub-connection, for the echo of its reports.
#[derive(Debug, Default)]
pub struct NonceSums {
    conns: Vec<Option<Window>>,
}

impl NonceSums {
    fn window(&mut self, conn: u8) -> &mut Window {
        let i = usize::from(conn);
        if self.conns.len() <= i {
            self.conns.resize_with(i + 1, || None);
        }
        self.conns[i].get_or_insert_with(Window::default)
    }

    /// Notes data packet `seq` of `conn` received with `nonce`.
    pub fn received(&mut self, conn: u8, seq: u64, nonce: u32) {
        let w = self.window(conn);
        if w.reported.is_some_and(|r| seq <= r) {
            return; // late: its range was reported already
        }
        let slot = &mut w.slots[(seq % WINDOW as u64) as usize];
        if slot.0 == seq {
            return; // a duplicate
        }
        if slot.0 != u64::MAX {
            w.spill = w.spill.wrapping_add(slot.1);
        }
        *slot = (seq, nonce);
        w.highest = Some(w.highest.map_or(seq, |h| h.max(seq)));
    }

    /// The echo for a report about `conn`: the nonces received from one past the previous
    /// report's range up to `lag` (the report's `Header::echo_lag`) below the highest received,
    /// and no further than `cap` (its `Header::report_top`).
    pub fn echo(&mut self, conn: u8, lag: u64, cap: Option<u64>) -> Echo {
        let w = self.window(conn);
        let from = w.reported.map_or(0, |r| r + 1);
        let top = w
            .highest
            .and_then(|h| h.checked_sub(lag))
            .map(|t| cap.map_or(t, |c| t.min(c)));
        let Some(top) = top.filter(|&t| t >= from) else {
            return Echo {
                from_seq: from as u32,
                highest_seq: from.wrapping_sub(1) as u32,
                nonce_sum: 0,
            };
        };
        let mut sum = w.spill;
        for slot in w.slots.iter_mut() {
            if slot.0 != u64::MAX && slot.0 >= from && slot.0 <= top {
                sum = sum.wrapping_add(slot.1);
                *slot = (u64::MAX, 0);
            }
        }
        w.spill = 0;
        w.reported = Some(top);
        Echo {
            from_seq: from as u32,
            highest_seq: top as u32,
            nonce_sum: sum,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairstream_core::Bitrate;
    use fairstream_proto::Header;
    use fairstream_proto::tfrc::LossRate;

    /// A data packet's nonce, made up.
    fn nonce(seq: u64) -> u32 {
        (seq as u32).wrapping_mul(0x9e37_79b9) ^ 0x5bd1
    }

    #[test]
    fn an_honest_echo_verifies_and_one_that_hides_a_loss_does_not() {
        let (mut ledger, mut liars_ledger) = (NonceLedger::default(), NonceLedger::default());
        let (mut honest, mut liar) = (NonceSums::default(), NonceSums::default());
        for seq in 0..100u64 {
            ledger.sent(0, seq, nonce(seq));
            liars_ledger.sent(0, seq, nonce(seq));
            honest.received(0, seq, nonce(seq));
            if seq != 57 {
                liar.received(0, seq, nonce(seq)); // packet 57 was lost on the way
            }
        }
        assert_eq!(ledger.verify(0, &honest.echo(0, 3, None)), Some(true));
        assert_eq!(liars_ledger.verify(0, &liar.echo(0, 3, None)), Some(false));
        // The next range starts after the last report's, and leaves out the newest three:
        // one of them missing may be only late.
        for seq in 100..120u64 {
            ledger.sent(0, seq, 7);
            if seq != 118 {
                honest.received(0, seq, 7);
            }
        }
        let e = honest.echo(0, 3, None);
        assert_eq!((e.from_seq, e.highest_seq), (97, 116));
        assert_eq!(ledger.verify(0, &e), Some(true));
        // Claiming packets never sent is a lie too.
        let ahead = Echo {
            from_seq: 117,
            highest_seq: 500,
            nonce_sum: 0,
        };
        assert_eq!(ledger.verify(0, &ahead), Some(false));
    }

    #[test]
    fn ranges_must_follow_on_from_the_previous_report() {
        let mut ledger = NonceLedger::default();
        for seq in 0..60u64 {
            ledger.sent(0, seq, nonce(seq));
        }
        let range = |from: u64, high: u64| Echo {
            from_seq: from as u32,
            highest_seq: high as u32,
            nonce_sum: (from..=high).fold(0u32, |s, q| s.wrapping_add(nonce(q))),
        };
        assert_eq!(ledger.verify(0, &range(0, 9)), Some(true));
        // The right sum over a range that skips 10..=14: the receiver could hide a loss there.
        assert_eq!(ledger.verify(0, &range(15, 19)), Some(false));
        // The next range follows the last one seen, gap or not.
        assert_eq!(ledger.verify(0, &range(20, 29)), Some(true));
        // A range that counts 25..=29 again (a replayed or made-up report) is a lie too.
        assert_eq!(ledger.verify(0, &range(25, 34)), Some(false));
        assert_eq!(ledger.verify(0, &range(35, 39)), Some(true));
        // A duplicate of the last report overlaps it.
        assert_eq!(ledger.verify(0, &range(35, 39)), Some(false));
        // An empty range proves nothing once packets have gone, even where it would follow on.
        let empty = Echo {
            from_seq: 40,
            highest_seq: 39,
            nonce_sum: 0,
        };
        assert_eq!(ledger.verify(0, &empty), Some(false));
        // Each sub-connection keeps its own ranges.
        ledger.sent(1, 0, 5);
        assert_eq!(ledger.verify(1, &range(0, 0)), Some(false)); // nonce(0) ≠ 5
        assert_eq!(ledger.verify(0, &range(40, 49)), Some(true));
    }

    #[test]
    fn a_forged_report_states_heavy_loss() {
        let mut h = Header::TfrcFeedback(fairstream_proto::tfrc::TfrcFeedback {
            conn: 0,
            t_recvdata: fairstream_core::Instant::ZERO,
            t_delay: fairstream_core::Duration::ZERO,
            x_recv: Bitrate::mbps(100),
            p: LossRate::ZERO,
        });
        h.forge_loss();
        assert_eq!(h.feedback_claim(), Some((0, false)));
        assert_eq!(h.reported_loss(), Some(1.0));
        let mut r = Header::StreamReport(fairstream_proto::surestream::StreamReport {
            number: 3,
            t_echo: fairstream_core::Instant::ZERO,
            t_delay: fairstream_core::Duration::ZERO,
            highest_seq: 99,
            received: 40,
            lost: 0,
            receive_rate: Bitrate::mbps(2),
            buffered: fairstream_core::Duration::from_secs(4),
        });
        assert_eq!(r.feedback_claim(), Some((0, true)));
        r.forge_loss();
        assert_eq!(r.feedback_claim(), Some((0, false)));
        assert_eq!(r.reported_loss(), Some(0.5));
    }
}
