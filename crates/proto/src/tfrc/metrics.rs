//! The metrics TFRC's endpoints record of their own (the rates and the RTT family are
//! `crate::metric`'s; the loss discrimination algorithm's are `crate::lda::metrics`).

use crate::metric::MetricKind;

/// The rate the throughput equation allows (X_Bps).
pub static X_EQUATION: MetricKind = MetricKind::new(
    "x_equation",
    "bit/s",
    "the rate TFRC's throughput equation allows",
);

/// The loss event rate p.
pub static LOSS_EVENT_RATE: MetricKind =
    MetricKind::new("p", "fraction", "the loss event rate in the last report");

/// What the TFRC endpoints record (TFRC Wireless and MULTFRC too).
pub static METRICS: &[&MetricKind] = &[
    &crate::metric::RTT,
    &crate::metric::SRTT,
    &crate::metric::RATE,
    &crate::metric::RECEIVE_RATE,
    &X_EQUATION,
    &LOSS_EVENT_RATE,
    &crate::lda::metrics::CONGESTION_LOSS,
    &crate::lda::metrics::WIRELESS_LOSS,
];
