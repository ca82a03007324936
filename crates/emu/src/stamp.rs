//! Kernel stamps on the emulation's clock: the kernel stamps packets on `CLOCK_REALTIME`
//! (`SO_TIMESTAMPNS`, nanoseconds since the epoch); the emulation runs on the process's
//! monotonic [`Clock`]. [`RealTimeOffset`] is the two clocks' offset measured at one instant,
//! and [`KernelClock`] keeps it fresh, for the CBR receiver (when a datagram reached its host)
//! and the veth forwarder (when a packet left its host).

use fairstream_core::{Duration, Instant};
use fairstream_rt::clock::Clock;

/// How often the receiver measures the real-time clock against the emulation's again (a step of
/// the real-time clock, NTP's, shows in the stamps for at most this long).
pub(crate) const OFFSET_REFRESH: Duration = Duration::from_millis(100);

/// The real-time clock (the kernel's receive stamps: nanoseconds since the epoch) against the
/// emulation's monotonic `Clock`, as measured at one instant.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RealTimeOffset {
    /// The real-time clock's reading at `measured_at`.
    pub(crate) real: u64,
    /// When it was measured, on the emulation's clock.
    pub(crate) measured_at: Instant,
}

impl RealTimeOffset {
    /// Reads the real-time clock on either side of the monotonic one, again if the thread was
    /// interrupted between the reads (a preemption there would move every stamp by its length),
    /// and keeps the closest pair.
    pub(crate) fn measure(clock: &Clock) -> Self {
        let real_now = || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        };
        let mut best = (
            u64::MAX,
            Self {
                real: 0,
                measured_at: Instant::ZERO,
            },
        );
        for _ in 0..8 {
            let r0 = real_now();
            let measured_at = clock.now();
            let r1 = real_now();
            let spread = r1.saturating_sub(r0);
            if spread < best.0 {
                best = (
                    spread,
                    Self {
                        real: r0 + spread / 2,
                        measured_at,
                    },
                );
            }
            if spread <= 2_000 {
                break;
            }
        }
        best.1
    }

    /// The instant on the emulation's clock of `real`, a real-time stamp.
    pub(crate) fn to_clock(self, real: u64) -> Instant {
        Instant::from_nanos(
            self.measured_at
                .as_nanos()
                .saturating_sub(self.real.saturating_sub(real))
                .saturating_add(real.saturating_sub(self.real)),
        )
    }
}

/// Kernel stamps moved onto the emulation's clock, with the offset measured again every
/// [`OFFSET_REFRESH`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct KernelClock {
    clock: Clock,
    offset: RealTimeOffset,
}

impl KernelClock {
    /// Measures the offset now.
    pub(crate) fn new(clock: &Clock) -> Self {
        Self {
            clock: *clock,
            offset: RealTimeOffset::measure(clock),
        }
    }

    /// The instant on the emulation's clock of the kernel stamp `real`, `now` being the
    /// emulation's clock read after the stamp was taken.
    #[inline]
    pub(crate) fn instant_of(&mut self, real: u64, now: Instant) -> Instant {
        if now.saturating_since(self.offset.measured_at) > OFFSET_REFRESH {
            self.offset = RealTimeOffset::measure(&self.clock);
        }
        self.offset.to_clock(real)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsFd;

    #[test]
    fn a_kernel_receive_stamp_falls_between_the_send_and_the_receive() {
        let clock = Clock::start();
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        crate::sys::set_rx_timestamps(rx.as_fd()).unwrap();
        let mut buf = [0u8; 64];
        // Measured before every stamp, as the receiver keeps it, and measured after each.
        let earlier = RealTimeOffset::measure(&clock);
        for _ in 0..200 {
            let before = clock.now();
            tx.send_to(b"stamp me", rx.local_addr().unwrap()).unwrap();
            let (n, stamp) = crate::sys::recv_stamped(rx.as_fd(), &mut buf).unwrap();
            let after = clock.now();
            assert_eq!(&buf[..n], b"stamp me");
            let stamp = stamp.expect("a kernel receive stamp");
            for offset in [earlier, RealTimeOffset::measure(&clock)] {
                let at = offset.to_clock(stamp);
                assert!(
                    before <= at && at <= after,
                    "stamped at {at:?}, sent at {before:?}, received by {after:?} ({offset:?})"
                );
            }
        }
    }
}
