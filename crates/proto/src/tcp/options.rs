//! TCP options in the packet-numbered model: SACK blocks (RFC 2018) and timestamps (RFC 7323),
//! and the bytes they take on the wire.
//!
//! ns-2's one-way TCP numbers packets, not bytes, so a SACK block here is a range of packet
//! numbers above the cumulative ACK, and the sender's scoreboard ([`super::scoreboard`]) keeps
//! one entry per packet. What goes on the wire is what a byte-numbered TCP with the same segments
//! would send: a packet is one segment, a block of packets one SACK block, and a capture writes
//! each block as the byte range its packets cover (`wire::transport`).
//!
//! Option space is counted as Linux lays it out: timestamps take 12 bytes (two NOPs and the
//! 10-byte option) on every segment once negotiated; SACK blocks take 4 bytes (two NOPs, kind and
//! length) plus 8 per block, on ACKs only. The 40 bytes of option space hold 4 blocks without
//! timestamps and 3 with them.

use fairstream_core::Instant;

use crate::IP_TCP_HEADER;

/// Bytes the timestamps option takes on every segment (NOP, NOP, kind 8, length 10, TSval,
/// TSecr), as Linux aligns it.
pub const TIMESTAMPS_LEN: u64 = 12;

/// Bytes of IP and TCP header on every segment: the fixed 40 and, once negotiated, timestamps.
pub const fn header_len(timestamps: bool) -> u64 {
    IP_TCP_HEADER + if timestamps { TIMESTAMPS_LEN } else { 0 }
}

/// Bytes of TCP option space (60-byte header less the 20 fixed bytes).
pub const OPTION_SPACE: u64 = 40;

/// Bytes `n` SACK blocks take (NOP, NOP, kind 5, length, 8 bytes per block); 0 for none.
pub const fn sack_len(n: usize) -> u64 {
    if n == 0 { 0 } else { 4 + 8 * n as u64 }
}

/// The most SACK blocks an ACK carries: 4, or 3 beside timestamps (RFC 2018 §3).
pub const fn max_sack_blocks(timestamps: bool) -> usize {
    if timestamps { 3 } else { SackBlocks::MAX }
}

/// The timestamp clock: microseconds since the start of the run in TCP's wrapping 32-bit space
/// (RFC 7323 leaves the unit to the sender; Linux uses milliseconds, or microseconds with
/// `tcp_usec_ts`).
pub fn ts_value(now: Instant) -> u32 {
    (now.as_nanos() / 1_000) as u32
}

/// Up to four SACK blocks of an ACK, the first the block holding the packet that triggered the
/// ACK, the rest the most recently reported other blocks (RFC 2018 §4).
///
/// A block is stored relative to the ACK it rides on: its first packet's distance from the packet
/// after the cumulative ACK and its length in packets, each a `u32` (length 0 marks the end of
/// the list). Kept compact so that a TCP header stays within the size of the largest other header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SackBlocks {
    blocks: [[u32; 2]; Self::MAX],
}

impl SackBlocks {
    /// The most blocks a list holds.
    pub const MAX: usize = 4;

    /// No blocks.
    pub const NONE: Self = Self {
        blocks: [[0; 2]; Self::MAX],
    };

    /// How many blocks the list holds.
    pub fn len(&self) -> usize {
        self.blocks.iter().take_while(|b| b[1] != 0).count()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.blocks[0][1] == 0
    }

    /// Appends the block of packets `[start, end)` to the list of an ACK of `ack`; false (and
    /// nothing added) when the list is full, the block is empty or does not lie above `ack + 1`
    /// within the `u32` range the encoding holds.
    pub fn push(&mut self, ack: i64, start: i64, end: i64) -> bool {
        let n = self.len();
        let base = ack.saturating_add(1);
        let (Ok(off), Ok(len)) = (
            u32::try_from(start.saturating_sub(base)),
            u32::try_from(end.saturating_sub(start)),
        ) else {
            return false;
        };
        if n == Self::MAX || len == 0 || start < base {
            return false;
        }
        self.blocks[n] = [off, len];
        true
    }

    /// The blocks as packet ranges `[start, end)` for an ACK of `ack`, in order.
    pub fn iter(&self, ack: i64) -> impl Iterator<Item = (i64, i64)> + '_ {
        let base = ack.saturating_add(1);
        self.blocks
            .iter()
            .take_while(|b| b[1] != 0)
            .map(move |&[off, len]| {
                let start = base.saturating_add(i64::from(off));
                (start, start.saturating_add(i64::from(len)))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_bytes_are_linuxs_layout() {
        assert_eq!(sack_len(0), 0);
        assert_eq!(sack_len(1), 12);
        assert_eq!(sack_len(4), 36);
        // Four blocks fit beside nothing, three beside timestamps.
        assert!(sack_len(max_sack_blocks(false)) <= OPTION_SPACE);
        assert!(TIMESTAMPS_LEN + sack_len(max_sack_blocks(true)) <= OPTION_SPACE);
        assert!(TIMESTAMPS_LEN + sack_len(max_sack_blocks(true) + 1) > OPTION_SPACE);
    }

    #[test]
    fn blocks_round_trip_relative_to_the_ack() {
        let mut b = SackBlocks::NONE;
        assert!(b.is_empty());
        assert!(b.push(9, 12, 15));
        assert!(b.push(9, 20, 21));
        assert!(!b.push(9, 10, 10), "empty block");
        assert!(!b.push(9, 9, 12), "below the ACK");
        assert_eq!(b.iter(9).collect::<Vec<_>>(), [(12, 15), (20, 21)]);
        assert!(b.push(9, 30, 31) && b.push(9, 40, 41));
        assert!(!b.push(9, 50, 51), "full");
        assert_eq!(b.len(), 4);
        // Out of the encoding's range.
        let mut c = SackBlocks::NONE;
        assert!(!c.push(-1, 1 << 40, (1 << 40) + 1));
        assert!(c.is_empty());
    }

    #[test]
    fn timestamps_wrap_at_32_bits_of_microseconds() {
        assert_eq!(ts_value(Instant::from_nanos(1_500_000)), 1500);
        let t = Instant::from_nanos((u64::from(u32::MAX) + 11) * 1_000);
        assert_eq!(ts_value(t), 10);
    }
}
