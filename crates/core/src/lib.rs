//! Shared vocabulary of fairstream: simulated time, typed units and rate schedules,
//! identifiers, seeded random streams, time-weighted counts, a ring buffer's rewinding pop, and
//! the name a misspelt one probably meant.
//!
//! Nothing here reads a clock or the operating system's entropy: [`Instant`] is an integer
//! count of nanoseconds since the start of a run, and every random stream is derived from
//! a master seed and the identity of the component that uses it ([`RngStream::derive`]), so
//! a run is a pure function of its scenario and seed.
//!
//! ```
//! use fairstream_core::{Bitrate, DataSize, Duration};
//! let rate: Bitrate = "11Mbps".parse().unwrap();
//! let size = DataSize::bytes(1000);
//! assert_eq!(rate.transmit_time(size), Duration::from_nanos(727_273));
//! assert_eq!("35ms".parse::<Duration>().unwrap(), Duration::from_millis(35));
//! ```

mod ids;
mod occupancy;
mod parse;
mod ring;
mod rng;
mod schedule;
mod suggest;
mod time;
mod units;

pub use ids::{FlowId, LinkId, NodeId};
pub use occupancy::Occupancy;
pub use parse::{UnitError, escape_controls};
pub use ring::pop_front_rewinding;
pub use rng::{RngStream, SplitMix64};
pub use schedule::RateSchedule;
pub use suggest::{closest, did_you_mean};
pub use time::{Duration, Instant};
pub use units::{Bitrate, DataSize, Probability};
