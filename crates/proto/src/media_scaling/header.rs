//! The media-scaling applications' headers (MM_APP, MPEG_APP; paper 001), their layout on the
//! wire, and what they tell the drivers. A scale report states no loss (it says which scale the
//! sender is to use), so it claims nothing an echo must prove; its echo covers no further than
//! the highest sequence number it reports.

use fairstream_core::{Duration, Instant};
use fairstream_media::FrameType;

use crate::header::HeaderKind;
use crate::wire::{
    FieldCodec, Micros, Reader, U8, U16, U32, U32Of, Width, WireError, Writer, wire_fields,
};

/// A media-scaling data packet (MM_APP, MPEG_APP; paper 001): the packet's number, the
/// sender's timestamp and RTT estimate (the receiver's timeout and increase rules need the RTT),
/// the scale it was sent at, and which piece of which frame it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MediaData {
    /// Sequence number, from 0, one per packet (frames split into packets use one each).
    pub seq: u64,
    /// When the sender emitted it (its clock).
    pub timestamp: Instant,
    /// The sender's smoothed RTT (zero before it has one).
    pub rtt: Duration,
    /// Frame number, from 0, one per frame sent or skipped (MM_APP: one frame per packet).
    pub frame: u64,
    /// This packet's piece of the frame, from 0.
    pub fragment: u16,
    /// Packets the frame was split into (at least 1).
    pub fragments: u16,
    /// The scale the sender was at.
    pub scale: u8,
    /// The frame's picture type (`None` for MM_APP's untyped frames).
    pub kind: Option<FrameType>,
}

/// A media-scaling receiver's report: the scale the sender is to use, numbered so that the
/// sender keeps only the newest, and an echo for the sender's RTT samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MediaFeedback {
    /// The scale the receiver decided.
    pub scale: u8,
    /// Report number, from 0, one per report.
    pub number: u32,
    /// Timestamp of the newest data packet received (the sender's clock).
    pub t_echo: Instant,
    /// Time between receiving that packet and sending this report.
    pub t_delay: Duration,
    /// Highest sequence number received so far.
    pub highest_seq: u64,
}

wire_fields! {
    MediaData as Data, check fragment_in_range {
        seq: U32Of,
        timestamp: Micros,
        rtt: Micros,
        frame: U32Of,
        fragment: U16,
        fragments: U16,
        scale: U8,
        kind: FrameTypeCode,
    }
}

wire_fields! {
    MediaFeedback as Feedback {
        scale: U8,
        pad 3,
        number: U32,
        t_echo: Micros,
        t_delay: Micros,
        highest_seq: U32Of,
    }
}

/// A packet's piece of its frame must be one of the frame's pieces.
fn fragment_in_range(d: &MediaData) -> Result<(), WireError> {
    if d.fragments == 0 || d.fragment >= d.fragments {
        return Err(WireError::FieldOutOfRange("fragment"));
    }
    Ok(())
}

/// A frame's picture type in one byte: 0 for none (MM_APP's untyped frames), 1 I, 2 P, 3 B.
struct FrameTypeCode;

impl Width for FrameTypeCode {
    const WIDTH: u64 = 1;
}

impl FieldCodec<Option<FrameType>> for FrameTypeCode {
    fn put(v: &Option<FrameType>, w: &mut Writer<'_>, _: &'static str) -> Result<(), WireError> {
        w.u8(match v {
            None => 0,
            Some(FrameType::I) => 1,
            Some(FrameType::P) => 2,
            Some(FrameType::B) => 3,
        })
    }
    fn get(r: &mut Reader<'_>) -> Result<Option<FrameType>, WireError> {
        match r.u8()? {
            0 => Ok(None),
            1 => Ok(Some(FrameType::I)),
            2 => Ok(Some(FrameType::P)),
            3 => Ok(Some(FrameType::B)),
            _ => Err(WireError::FieldOutOfRange("frame type")),
        }
    }
}

impl HeaderKind for MediaData {
    const WHAT: &'static str = "media data";

    fn trace_seq(&self) -> i64 {
        crate::header::trace_number(self.seq)
    }

    fn data_seq(&self) -> Option<(u8, u64)> {
        Some((0, self.seq))
    }
}

impl HeaderKind for MediaFeedback {
    const WHAT: &'static str = "media scale report";

    /// The highest sequence number the report covers.
    fn trace_seq(&self) -> i64 {
        crate::header::trace_number(self.highest_seq)
    }

    /// It states a scale, not a loss: it claims nothing its echo must prove.
    fn feedback_claim(&self) -> Option<(u8, bool)> {
        Some((0, false))
    }

    fn report_top(&self) -> Option<u64> {
        Some(self.highest_seq)
    }
}
