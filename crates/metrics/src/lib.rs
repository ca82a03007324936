//! Pure metric functions over recorded numbers: no state, no I/O.
//!
//! - [`throughput`]: mean and interval throughput, normalised throughput, loss rate;
//! - [`fairness`]: Jain's fairness index;
//! - [`cubic_model`]: RFC 9438's response function, and a Monte Carlo of its rules under
//!   random loss;
//! - [`tcp_model`]: the Mathis et al. (1997) and Padhye-Firoiu-Towsley-Kurose (1998) TCP
//!   throughput models (PROTOCOLS.md §1.7).
//!
//! ```
//! use fairstream_metrics::{fairness::jain, tcp_model::mathis};
//! assert_eq!(jain(&[1.0, 1.0, 1.0]), 1.0);
//! // 1460-byte segments, 100 ms RTT, 1 % loss: about 178 kB/s.
//! let x = mathis(1460.0, 0.1, 0.01, false);
//! assert!((x - 178_800.0).abs() < 500.0, "{x}");
//! ```

pub mod cubic_model;
pub mod fairness;
pub mod tcp_model;
pub mod throughput;
