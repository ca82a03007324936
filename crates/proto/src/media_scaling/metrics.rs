//! The metrics MM_APP's and MPEG_APP's endpoints record of their own (frames and the RTT family
//! are `crate::metric`'s, shared with the streamer).

use crate::metric::{LEVEL_CHANGES, MetricKind};

/// The scale the sender uses.
pub static SCALE: MetricKind = MetricKind::new(
    "scale",
    "scale (0 to 4)",
    "the scale a media-scaling sender uses, at its start and at each change",
)
.summarised(&LEVEL_CHANGES);

/// The scale the receiver decided.
pub static RECEIVER_SCALE: MetricKind = MetricKind::new(
    "receiver_scale",
    "scale (0 to 4)",
    "the scale a media-scaling receiver decided, at each change",
);

/// The receiver heard nothing for its timeout TOI.
pub static SCALE_TIMEOUT: MetricKind = MetricKind::new(
    "scale_timeout",
    "1 per event",
    "a media-scaling receiver heard nothing for its timeout TOI",
);

/// What the media-scaling endpoints record.
pub static METRICS: &[&MetricKind] = crate::player::with_playout_metrics![
    &crate::metric::FRAMES_SENT;
    &SCALE,
    &RECEIVER_SCALE,
    &SCALE_TIMEOUT,
    &crate::metric::FEEDBACK_TIMEOUT,
    &crate::metric::RTT,
    &crate::metric::SRTT,
];
