//! What a media player records of its playout ([`fairstream_media::Playout`]): the streamer's
//! players and the media-scaling receivers (MM_APP, MPEG_APP) record the same statistics, so the
//! flow summary's media columns read the same for all of them. The playout's metrics are
//! declared here, once, and listed by each of those protocols.

use fairstream_core::Instant;
use fairstream_media::Playout;

use crate::MetricSink;
use crate::metric::{FRAMES_DELIVERED, Fold, MetricKind, Summary};
use fairstream_records::{Column, ColumnKind};

/// A protocol's metric list (`FlowProtocol::METRICS`) with what a player records in it, in one
/// order: `with_playout_metrics![&FIRST; &A, &B]` lists `FIRST`, then the frames delivered and
/// the playout's metrics, then `A` and `B`.
macro_rules! with_playout_metrics {
    ($first:expr; $($m:expr),* $(,)?) => {
        &[
            $first,
            &$crate::metric::FRAMES_DELIVERED,
            &$crate::player::FRAMES_DECODABLE,
            &$crate::player::FRAMES_LATE,
            &$crate::player::STALLS,
            &$crate::player::STALL_TIME,
            &$crate::player::STARTUP_DELAY,
            &$crate::player::JITTER,
            &$crate::player::BUFFERED,
            $($m,)*
        ]
    };
}
pub(crate) use with_playout_metrics;

/// Records a player's playout statistics at `now` (the player advanced to `now`).
pub(crate) fn record_playout(p: &Playout, now: Instant, metrics: &mut dyn MetricSink) {
    let s = p.stats(now);
    metrics.record(now, FRAMES_DELIVERED.count(s.delivered));
    metrics.record(now, FRAMES_DECODABLE.count(s.decodable));
    metrics.record(now, FRAMES_LATE.count(s.late));
    metrics.record(now, STALLS.count(s.stalls));
    metrics.record(now, STALL_TIME.secs(s.stall_time));
    if let Some(d) = s.startup_delay {
        metrics.record(now, STARTUP_DELAY.secs(d));
    }
    metrics.record(now, JITTER.secs(s.jitter));
    metrics.record(now, BUFFERED.secs(s.buffered));
}

/// A `Last` summary column `name` of `kind` in `unit`, meaning `meaning`.
const fn last(
    name: &'static str,
    kind: ColumnKind,
    unit: &'static str,
    meaning: &'static str,
) -> Summary {
    Summary {
        column: Column::new(name, kind, unit, meaning),
        fold: Fold::Last,
    }
}

/// Frames decodable at their playout turn.
pub(crate) static FRAMES_DECODABLE: MetricKind = MetricKind::new(
    "frames_decodable",
    "frames",
    "the player's frames so far that were there at their playout turn with their references (I/P/B rules)",
)
.summarised(&FRAMES_DECODABLE_LAST);
static FRAMES_DECODABLE_LAST: Summary = last(
    "frames_decodable",
    ColumnKind::Count,
    "frames",
    "frames there at their playout turn whose references were there too",
);

/// Frames that arrived after their playout turn.
pub(crate) static FRAMES_LATE: MetricKind = MetricKind::new(
    "frames_late",
    "frames",
    "the player's frames so far that arrived after their playout turn",
)
.summarised(&FRAMES_LATE_LAST);
static FRAMES_LATE_LAST: Summary = last(
    "frames_late",
    ColumnKind::Count,
    "frames",
    "frames received after their playout turn",
);

/// Playout stalls so far.
pub(crate) static STALLS: MetricKind =
    MetricKind::new("stalls", "stalls", "the player's playout stalls so far")
        .summarised(&STALLS_LAST);
static STALLS_LAST: Summary = last(
    "stalls",
    ColumnKind::Count,
    "stalls",
    "playout stalls (the buffer ran empty)",
);

/// Time stalled so far.
pub(crate) static STALL_TIME: MetricKind = MetricKind::new(
    "stall_time",
    "seconds",
    "the seconds the player's playout has been stalled so far (the stall in progress included)",
)
.summarised(&STALL_TIME_LAST);
static STALL_TIME_LAST: Summary = last(
    "stall_time_s",
    ColumnKind::Real,
    "seconds",
    "the seconds the stalls lasted, the one in progress at the last record included",
);

/// From the player's start to its first frame played.
pub(crate) static STARTUP_DELAY: MetricKind = MetricKind::new(
    "startup_delay",
    "seconds",
    "seconds from the player's start to its first frame played (recorded once it plays)",
)
.summarised(&STARTUP_DELAY_LAST);
static STARTUP_DELAY_LAST: Summary = last(
    "startup_delay_s",
    ColumnKind::Real,
    "seconds",
    "from the flow's start to its first frame played (null if it never played)",
);

/// The player's RFC 3550 inter-arrival jitter of frames.
pub(crate) static JITTER: MetricKind = MetricKind::new(
    "jitter",
    "seconds",
    "the player's RFC 3550 inter-arrival jitter of frames, a frame's media time as its timestamp",
)
.summarised(&JITTER_LAST);
static JITTER_LAST: Summary = last(
    "jitter_s",
    ColumnKind::Real,
    "seconds",
    "the RFC 3550 inter-arrival jitter of frames, a frame's media time as its timestamp",
);

/// Media the player holds ahead of its playout point.
pub(crate) static BUFFERED: MetricKind = MetricKind::new(
    "buffered",
    "seconds",
    "seconds of media the player holds ahead of its playout point",
);
