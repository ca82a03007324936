//! Metrics that several protocols record (the RTT family, a rate-based sender's rates, a media
//! flow's frames), declared once here; a protocol's own metrics are declared in its folder
//! (`tcp::metrics`, `surestream::metrics`, …). The schema, the sink endpoints record into and
//! the RTT sample the drivers' summaries read are `fairstream_records::metric`'s.

pub use fairstream_records::metric::{
    Fold, Metric, MetricKind, MetricSink, NullSink, RTT, Summary, VecSink,
};
use fairstream_records::{Column, ColumnKind};

/// The smoothed round-trip time.
pub static SRTT: MetricKind = MetricKind::new("srtt", "seconds", "the smoothed round-trip time");

/// The rate a rate-based sender allows itself.
pub static RATE: MetricKind = MetricKind::new(
    "rate",
    "bit/s",
    "the sending rate a rate-based sender allows itself (TFRC, MULTFRC: of segments, headers excluded; MULTFRC: its connections' sum)",
);

/// The receive rate a sender was last told of.
pub static RECEIVE_RATE: MetricKind = MetricKind::new(
    "x_recv",
    "bit/s",
    "the receive rate in the last report the sender took",
);

/// A media sender heard no report for its feedback timeout.
pub static FEEDBACK_TIMEOUT: MetricKind = MetricKind::new(
    "feedback_timeout",
    "1 per event",
    "a media sender heard no report for its feedback timeout",
);

/// Frames a media sender has sent so far.
pub static FRAMES_SENT: MetricKind = MetricKind::new(
    "frames_sent",
    "frames",
    "frames the sender has sent so far (wholly or in part), at each frame",
)
.summarised(&FRAMES_SENT_LAST);
static FRAMES_SENT_LAST: Summary = Summary {
    column: Column::new(
        "frames_sent",
        ColumnKind::Count,
        "frames",
        "frames the server sent (wholly or in part)",
    ),
    fold: Fold::Last,
};

/// Frames a media player (or receiver) received whole so far.
pub static FRAMES_DELIVERED: MetricKind = MetricKind::new(
    "frames_delivered",
    "frames",
    "frames the player received whole so far (late ones included)",
)
.summarised(&FRAMES_DELIVERED_LAST);
static FRAMES_DELIVERED_LAST: Summary = Summary {
    column: Column::new(
        "frames_delivered",
        ColumnKind::Count,
        "frames",
        "frames the player received whole (late ones included)",
    ),
    fold: Fold::Last,
};

/// The summary of a media flow's encoded level (the streamer's level, MM_APP's and MPEG_APP's
/// scale): its changes after the first.
pub static LEVEL_CHANGES: Summary = Summary {
    column: Column::new(
        "level_changes",
        ColumnKind::Count,
        "changes",
        "changes of the encoded level (MM_APP, MPEG_APP: of the scale) after the first",
    ),
    fold: Fold::ChangesAfterFirst,
};

/// VTP's Achieved Rate, as the sender last heard it.
pub static ACHIEVED_RATE: MetricKind = MetricKind::new(
    "achieved_rate",
    "bit/s",
    "VTP's Achieved Rate in the last report",
);

/// Whether VTP's Spike detector is in its spike (congestion) state.
pub static SPIKE: MetricKind = MetricKind::new(
    "spike",
    "1 or 0",
    "1 while VTP's Spike detector is in the spike (congestion) state, else 0",
);

/// VTP's wireless loss fraction estimate e.
pub static WIRELESS_LOSS_ESTIMATE: MetricKind = MetricKind::new(
    "wireless_loss_estimate",
    "fraction",
    "e, VTP's filtered fraction of wireless losses",
);
