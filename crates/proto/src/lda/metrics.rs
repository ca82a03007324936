//! The metrics a loss discrimination algorithm records (TFRC Wireless's receiver, VTP's sender).

use crate::metric::MetricKind;

/// Packets classed as congestion losses in one loss episode.
pub static CONGESTION_LOSS: MetricKind = MetricKind::new(
    "congestion_loss",
    "packets",
    "packets a loss discrimination algorithm classed as congestion losses in one loss episode",
);

/// Packets classed as wireless losses in one loss episode.
pub static WIRELESS_LOSS: MetricKind = MetricKind::new(
    "wireless_loss",
    "packets",
    "packets a loss discrimination algorithm classed as wireless losses in one loss episode",
);
