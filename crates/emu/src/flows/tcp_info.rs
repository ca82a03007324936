//! The fields of Linux's `struct tcp_info` (`include/uapi/linux/tcp.h`) the emulator records,
//! read from the bytes `getsockopt(TCP_INFO)` filled, at their offsets in that struct. A field
//! the kernel did not fill (an older kernel's shorter struct) reads as `None`.

use std::os::fd::AsFd;

use fairstream_core::Duration;

/// A sample of a TCP socket's state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpInfo {
    /// Congestion window, segments.
    pub cwnd: u32,
    /// Slow-start threshold, segments (`u32::MAX`-like values when infinite).
    pub ssthresh: u32,
    /// Smoothed RTT.
    pub srtt: Duration,
    /// RTT variation.
    pub rttvar: Duration,
    /// Retransmission timeout.
    pub rto: Duration,
    /// The MSS the socket sends.
    pub snd_mss: u32,
    /// Segments retransmitted over the connection's life.
    pub total_retrans: u32,
    /// Pacing rate, bytes per second.
    pub pacing_rate: Option<u64>,
    /// Bytes acknowledged.
    pub bytes_acked: Option<u64>,
    /// Bytes written by the application not yet sent (the socket's unsent bytes).
    pub notsent_bytes: Option<u32>,
    /// Least RTT seen.
    pub min_rtt: Option<Duration>,
    /// Delivery rate, bytes per second.
    pub delivery_rate: Option<u64>,
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .map(|x| u32::from_ne_bytes([x[0], x[1], x[2], x[3]]))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at + 8).map(|x| {
        let mut a = [0u8; 8];
        a.copy_from_slice(x);
        u64::from_ne_bytes(a)
    })
}

impl TcpInfo {
    /// Parses the first `b.len()` bytes of a `struct tcp_info`; `None` if shorter than its
    /// fields up to `tcpi_total_retrans` (every kernel since 2.6 fills them).
    pub fn parse(b: &[u8]) -> Option<Self> {
        let us = |v: u32| Duration::from_micros(u64::from(v));
        Some(Self {
            rto: us(u32_at(b, 8)?),
            snd_mss: u32_at(b, 16)?,
            srtt: us(u32_at(b, 68)?),
            rttvar: us(u32_at(b, 72)?),
            ssthresh: u32_at(b, 76)?,
            cwnd: u32_at(b, 80)?,
            total_retrans: u32_at(b, 100)?,
            pacing_rate: u64_at(b, 104),
            bytes_acked: u64_at(b, 120),
            notsent_bytes: u32_at(b, 144),
            min_rtt: u32_at(b, 148).map(us),
            delivery_rate: u64_at(b, 160),
        })
    }

    /// Samples the socket `fd`.
    pub fn of(fd: impl AsFd) -> std::io::Result<Self> {
        let mut buf = [0u8; 256];
        let n = crate::sys::tcp_info(fd.as_fd(), &mut buf)?;
        Self::parse(&buf[..n]).ok_or_else(|| std::io::Error::other("a short tcp_info"))
    }
}
