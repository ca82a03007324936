//! The metrics only RAP's endpoints record (the RTT family and the rate are shared:
//! `crate::metric`).

use crate::MetricKind;

/// A RAP sender cut its rate.
pub static BACKOFF: MetricKind = MetricKind::new(
    "rap_backoff",
    "1 per event",
    "a RAP sender cut its rate on a loss (once per loss cluster)",
);
