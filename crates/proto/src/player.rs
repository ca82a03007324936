//! What a media player records of its playout ([`fairstream_media::Playout`]): the streamer's
//! players and the media-scaling receivers (MM_APP, MPEG_APP) record the same statistics, so the
//! flow summary's media columns read the same for all of them.

use fairstream_core::Instant;
use fairstream_media::Playout;

use crate::{Metric, MetricSink};

/// Records a player's playout statistics at `now` (the player advanced to `now`).
pub(crate) fn record_playout(p: &Playout, now: Instant, metrics: &mut dyn MetricSink) {
    let s = p.stats(now);
    metrics.record(now, Metric::FramesDelivered(s.delivered));
    metrics.record(now, Metric::FramesDecodable(s.decodable));
    metrics.record(now, Metric::FramesLate(s.late));
    metrics.record(now, Metric::Stalls(s.stalls));
    metrics.record(now, Metric::StallTime(s.stall_time));
    if let Some(d) = s.startup_delay {
        metrics.record(now, Metric::StartupDelay(d));
    }
    metrics.record(now, Metric::Jitter(s.jitter));
    metrics.record(now, Metric::Buffered(s.buffered));
}
