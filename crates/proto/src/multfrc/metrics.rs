//! The metrics MULTFRC's sender records of its own (its connections' are TFRC's).

use crate::metric::MetricKind;

/// The real-valued connection target n.
pub static CONNECTION_TARGET: MetricKind = MetricKind::new(
    "n",
    "connections",
    "MULTFRC's real-valued target n, once per update period",
);

/// The connections open.
pub static CONNECTIONS: MetricKind = MetricKind::new(
    "connections",
    "connections",
    "the connections MULTFRC has open (round(n)), once per update period",
);

/// What MULTFRC's endpoints record.
pub static METRICS: &[&MetricKind] = &[&CONNECTION_TARGET, &CONNECTIONS];
