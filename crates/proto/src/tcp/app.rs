//! The TCP application interface: a bounded send buffer the sending application writes bytes
//! into, and the cutting of those bytes into ns-2's packet-numbered segments.
//!
//! ns-2's one-way TCP numbers packets, not bytes, and by default sends from an application that
//! always has data (an FTP source) or a fixed count of packets. With a send buffer
//! ([`TcpConfig::send_buffer`](super::TcpConfig::send_buffer)) the sender sends only what the
//! application wrote:
//!
//! - [`SendBuffer::write`] accepts as many bytes as the buffer has room for (bytes written and
//!   not yet acknowledged count against its capacity) and returns how many; a write whose bytes
//!   are all accepted may end a *record* (`push`: a frame, a message), as a TCP PSH would;
//! - new segments are cut from the bytes written, each at most one full segment's payload and
//!   never across a record's end; the segment that ends a record carries the push mark
//!   ([`TcpFlags::push`](crate::tcp::TcpFlags::push)); a segment is cut when it is first sent (no
//!   Nagle: a partial segment leaves when the window allows) and keeps its bytes when resent;
//! - an acknowledged segment's bytes leave the buffer.
//!
//! The receiving side is the sink's in-order delivery: [`TcpSink::delivered_bytes`] and
//! [`TcpSink::records_delivered`](super::TcpSink::records_delivered) (records whose last byte was
//! delivered in order), so that an application can tell when a whole frame has arrived.
//!
//! [`TcpSink::delivered_bytes`]: super::TcpSink::delivered_bytes

use std::collections::VecDeque;

use fairstream_core::DataSize;

/// A bounded send buffer and the segments cut from it.
#[derive(Clone, Debug)]
pub struct SendBuffer {
    capacity: u64,
    /// Payload of a full segment.
    payload: u64,
    /// Bytes written so far.
    written: u64,
    /// Bytes acknowledged so far (the start of the oldest unacknowledged segment).
    acked: u64,
    /// Bytes cut into segments so far.
    cut: u64,
    /// Ends of records written and not yet cut, oldest first.
    marks: VecDeque<u64>,
    /// The segments cut and not yet acknowledged, from packet number `base`: (end, push).
    segments: VecDeque<(u64, bool)>,
    base: i64,
}

impl SendBuffer {
    /// Records and segments its queues hold room for when built.
    pub const QUEUE_CAPACITY: usize = 64;

    /// A buffer of `capacity` bytes whose first segment is packet `first_seq`, cutting segments
    /// of at most `payload` bytes (at least 1).
    pub fn new(capacity: DataSize, payload: u64, first_seq: i64) -> Self {
        Self {
            capacity: capacity.as_bytes(),
            payload: payload.max(1),
            written: 0,
            acked: 0,
            cut: 0,
            marks: VecDeque::with_capacity(Self::QUEUE_CAPACITY),
            segments: VecDeque::with_capacity(Self::QUEUE_CAPACITY),
            base: first_seq,
        }
    }

    /// Room for more bytes.
    pub fn free(&self) -> u64 {
        self.capacity.saturating_sub(self.written - self.acked)
    }

    /// Bytes written and not yet acknowledged.
    pub fn unacked(&self) -> u64 {
        self.written - self.acked
    }

    /// Bytes written and not yet cut into segments (never sent).
    pub fn unsent(&self) -> u64 {
        self.written - self.cut
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Bytes acknowledged so far.
    pub fn acked(&self) -> u64 {
        self.acked
    }

    /// Writes up to `bytes`; returns how many were accepted. When all were (and at least one),
    /// `push` ends a record with the last of them.
    pub fn write(&mut self, bytes: u64, push: bool) -> u64 {
        let n = bytes.min(self.free());
        self.written += n;
        if push && n == bytes && n > 0 {
            self.marks.push_back(self.written);
        }
        n
    }

    /// Cuts the next new segment (packet `base + segments cut and unacknowledged`): its payload
    /// and whether it ends a record; `None` when nothing is unsent.
    pub fn cut(&mut self) -> Option<(u64, bool)> {
        if self.unsent() == 0 {
            return None;
        }
        let start = self.cut;
        let mut end = (start + self.payload).min(self.written);
        let mut push = false;
        if let Some(&m) = self.marks.front()
            && m <= end
        {
            end = m;
            push = true;
            self.marks.pop_front();
        }
        self.cut = end;
        self.segments.push_back((end, push));
        Some((end - start, push))
    }

    /// Packet `seq`, already cut and not yet acknowledged: its payload and push mark.
    pub fn segment(&self, seq: i64) -> Option<(u64, bool)> {
        let i = usize::try_from(seq - self.base).ok()?;
        let &(end, push) = self.segments.get(i)?;
        let start = if i == 0 {
            self.acked
        } else {
            self.segments[i - 1].0
        };
        Some((end - start, push))
    }

    /// Packets up to `ack` are acknowledged: their bytes leave the buffer.
    pub fn ack(&mut self, ack: i64) {
        while self.base <= ack {
            let Some((end, _)) = self.segments.pop_front() else {
                break;
            };
            self.acked = end;
            self.base += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_fill_the_buffer_and_segments_end_at_records() {
        // 4000 B buffer, 1000 B segments, first data packet 1 (after the SYN).
        let mut b = SendBuffer::new(DataSize::bytes(4000), 1000, 1);
        // A 2500 B frame and a 300 B frame, both records; then a 2000 B frame: 1200 B fit.
        assert_eq!(b.write(2500, true), 2500);
        assert_eq!(b.write(300, true), 300);
        assert_eq!(b.write(2000, true), 1200);
        assert_eq!((b.free(), b.unacked(), b.unsent()), (0, 4000, 4000));
        // Segments: 1000, 1000, 500 (end of record 1, push), 300 (record 2, push), 1000, 200
        // (no push: the frame is not all written).
        let cuts: Vec<_> = std::iter::from_fn(|| b.cut()).collect();
        assert_eq!(
            cuts,
            [
                (1000, false),
                (1000, false),
                (500, true),
                (300, true),
                (1000, false),
                (200, false)
            ]
        );
        // Resending packet 3 gives the same bytes; packet 7 is not cut yet.
        assert_eq!(b.segment(3), Some((500, true)));
        assert_eq!(b.segment(7), None);
        // ACK of packets 1..=3 frees the first record's 2500 B; the rest of the frame fits.
        b.ack(3);
        assert_eq!((b.acked(), b.free()), (2500, 2500));
        assert_eq!(b.segment(3), None);
        assert_eq!(b.segment(4), Some((300, true)));
        assert_eq!(b.write(800, true), 800);
        assert_eq!(b.cut(), Some((800, true)));
        assert_eq!(b.cut(), None);
        b.ack(100);
        assert_eq!((b.acked(), b.written(), b.unacked()), (4800, 4800, 0));
    }
}
