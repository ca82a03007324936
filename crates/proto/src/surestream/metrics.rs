//! The metrics the streamer's server records of its own: the level it sends, summarised in the
//! flow summary as docs/results.md says (the player's playout is `crate::player`'s; frames, the
//! RTT family and the receive rate are `crate::metric`'s).

use crate::metric::{Fold, LEVEL_CHANGES, MetricKind, Summary};
use fairstream_records::{Column, ColumnKind};

/// The encoded level the server sends.
pub static LEVEL: MetricKind = MetricKind::new(
    "level",
    "level (0: the lowest)",
    "the encoded level the server sends, at its start and at each change",
)
.summarised(&LEVEL_CHANGES);

/// That level's nominal rate.
pub static ENCODED_RATE: MetricKind = MetricKind::new(
    "encoded_rate",
    "bit/s",
    "the nominal rate of the level the server sends, at its start and at each change",
)
.summarised(&MEAN_ENCODED_RATE);
static MEAN_ENCODED_RATE: Summary = Summary {
    column: Column::new(
        "mean_encoded_rate_bps",
        ColumnKind::Real,
        "bit/s",
        "the time-weighted mean of the level's nominal rate, from its first record to the flow's stop or the end of the run",
    ),
    fold: Fold::TimeMean,
};

/// What the streamer's endpoints record (over TCP, its TCP sender's too).
pub static METRICS: &[&MetricKind] = crate::player::with_playout_metrics![
    &crate::metric::FRAMES_SENT;
    &LEVEL,
    &ENCODED_RATE,
    &crate::metric::FEEDBACK_TIMEOUT,
    &crate::metric::RECEIVE_RATE,
    &crate::metric::RTT,
    &crate::metric::SRTT,
];
