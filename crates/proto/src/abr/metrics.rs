//! The metrics an ABR virtual circuit's ends record (the carried protocol's endpoints record
//! their own).

use crate::metric::MetricKind;

/// The allowed cell rate.
pub static ACR: MetricKind = MetricKind::new(
    "acr",
    "bit/s",
    "each end's allowed cell rate (cells of 53 bytes), at each change seen when a cell arrives or a timer fires",
);

/// The explicit rate a backward RM cell brought back.
pub static EXPLICIT_RATE: MetricKind = MetricKind::new(
    "er",
    "bit/s",
    "the explicit rate each backward RM cell brought back",
);

/// PDUs the source buffer had no room for so far.
pub static SOURCE_DISCARDS: MetricKind = MetricKind::new(
    "source_discards",
    "packets",
    "packets the VC's source buffer had no room for so far",
);

/// What the VC ends record.
pub static METRICS: &[&MetricKind] = &[&ACR, &EXPLICIT_RATE, &SOURCE_DISCARDS];
