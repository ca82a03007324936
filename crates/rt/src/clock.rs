//! The driver's clock: the OS monotonic clock read as the project's [`Instant`] (nanoseconds
//! since the driver started). Nothing inside the endpoints ever sees `std::time`.

use fairstream_core::Instant;

/// The monotonic clock from an origin taken when the driver starts.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: std::time::Instant,
}

impl Clock {
    /// A clock whose zero is now.
    pub fn start() -> Self {
        Self {
            origin: std::time::Instant::now(),
        }
    }

    /// The time now.
    pub fn now(&self) -> Instant {
        Instant::from_nanos(self.origin.elapsed().as_nanos() as u64)
    }

    /// The OS instant of `t`.
    pub fn to_std(&self, t: Instant) -> std::time::Instant {
        self.origin + std::time::Duration::from_nanos(t.as_nanos())
    }
}
