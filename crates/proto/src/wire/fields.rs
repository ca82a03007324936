//! Each header's typed fields on the wire: one [`WireFields`] implementation per header type,
//! its layout the one its `WIRE_LEN` documents.

use fairstream_media::FrameType;

use super::cursor::{Reader, Writer};
use super::{PacketType, WireError};
use crate::{
    LossRate, MediaData, MediaFeedback, StreamReport, TfrcData, TfrcFeedback, VtpData, VtpFeedback,
};

/// A header type's fields on the wire.
pub(super) trait WireFields: Sized {
    /// Its packet type number.
    const TYPE: PacketType;
    /// Writes the fields, or names the one the format cannot carry.
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError>;
    /// Reads the fields, or says why they mean nothing.
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError>;
}

impl WireFields for TfrcData {
    const TYPE: PacketType = PacketType::TfrcData;
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32_of(self.seq, "seq")?;
        w.instant(self.timestamp, "timestamp")?;
        w.duration(self.rtt, "rtt")?;
        w.u8(self.conn)?;
        w.u8((self.round % 256) as u8)?; // the round number travels mod 256
        w.zeros::<2>()
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let (seq, timestamp, rtt) = (r.u32()?, r.instant()?, r.duration()?);
        let (conn, round) = (r.u8()?, r.u8()?);
        r.skip::<2>()?;
        Ok(Self {
            conn,
            seq: u64::from(seq),
            timestamp,
            rtt,
            round: u32::from(round),
        })
    }
}

impl WireFields for TfrcFeedback {
    const TYPE: PacketType = PacketType::TfrcFeedback;
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8(self.conn)?;
        w.zeros::<3>()?;
        w.instant(self.t_recvdata, "t_recvdata")?;
        w.duration(self.t_delay, "t_delay")?;
        w.rate(self.x_recv, "x_recv")?;
        w.u32(self.p.raw())
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let conn = r.u8()?;
        r.skip::<3>()?;
        Ok(Self {
            conn,
            t_recvdata: r.instant()?,
            t_delay: r.duration()?,
            x_recv: r.rate()?,
            p: LossRate::from_raw(r.u32()?),
        })
    }
}

impl WireFields for VtpData {
    const TYPE: PacketType = PacketType::VtpData;
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32_of(self.seq, "seq")?;
        w.instant(self.timestamp, "timestamp")?;
        w.duration(self.rtt, "rtt")
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self {
            seq: u64::from(r.u32()?),
            timestamp: r.instant()?,
            rtt: r.duration()?,
        })
    }
}

impl WireFields for VtpFeedback {
    const TYPE: PacketType = PacketType::VtpFeedback;
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.instant(self.t_echo, "t_echo")?;
        w.duration(self.t_delay, "t_delay")?;
        w.rate(self.achieved_rate, "achieved_rate")?;
        w.u32_of(self.highest_seq, "highest_seq")?;
        w.u16_of(self.lost, "lost")?;
        w.u16_of(self.received, "received")
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self {
            t_echo: r.instant()?,
            t_delay: r.duration()?,
            achieved_rate: r.rate()?,
            highest_seq: u64::from(r.u32()?),
            lost: u32::from(r.u16()?),
            received: u32::from(r.u16()?),
        })
    }
}

/// A frame type's number on the wire (0: none, MM_APP's untyped frames).
fn frame_type_code(kind: Option<FrameType>) -> u8 {
    match kind {
        None => 0,
        Some(FrameType::I) => 1,
        Some(FrameType::P) => 2,
        Some(FrameType::B) => 3,
    }
}

impl WireFields for MediaData {
    const TYPE: PacketType = PacketType::MediaData;
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        if self.fragments == 0 || self.fragment >= self.fragments {
            return Err(WireError::FieldOutOfRange("fragment"));
        }
        w.u32_of(self.seq, "seq")?;
        w.instant(self.timestamp, "timestamp")?;
        w.duration(self.rtt, "rtt")?;
        w.u32_of(self.frame, "frame")?;
        w.u16(self.fragment)?;
        w.u16(self.fragments)?;
        w.u8(self.scale)?;
        w.u8(frame_type_code(self.kind))
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let (seq, timestamp, rtt, frame) = (r.u32()?, r.instant()?, r.duration()?, r.u32()?);
        let (fragment, fragments, scale) = (r.u16()?, r.u16()?, r.u8()?);
        let kind = match r.u8()? {
            0 => None,
            1 => Some(FrameType::I),
            2 => Some(FrameType::P),
            3 => Some(FrameType::B),
            _ => return Err(WireError::FieldOutOfRange("frame type")),
        };
        if fragments == 0 || fragment >= fragments {
            return Err(WireError::FieldOutOfRange("fragment"));
        }
        Ok(Self {
            seq: u64::from(seq),
            timestamp,
            rtt,
            frame: u64::from(frame),
            fragment,
            fragments,
            scale,
            kind,
        })
    }
}

impl WireFields for MediaFeedback {
    const TYPE: PacketType = PacketType::MediaFeedback;
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8(self.scale)?;
        w.zeros::<3>()?;
        w.u32(self.number)?;
        w.instant(self.t_echo, "t_echo")?;
        w.duration(self.t_delay, "t_delay")?;
        w.u32_of(self.highest_seq, "highest_seq")
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let scale = r.u8()?;
        r.skip::<3>()?;
        Ok(Self {
            scale,
            number: r.u32()?,
            t_echo: r.instant()?,
            t_delay: r.duration()?,
            highest_seq: u64::from(r.u32()?),
        })
    }
}

impl WireFields for StreamReport {
    const TYPE: PacketType = PacketType::StreamReport;
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.number)?;
        w.instant(self.t_echo, "t_echo")?;
        w.duration(self.t_delay, "t_delay")?;
        w.u32_of(self.highest_seq, "highest_seq")?;
        w.u16_of(self.received, "received")?;
        w.u16_of(self.lost, "lost")?;
        w.rate(self.receive_rate, "receive_rate")?;
        w.duration(self.buffered, "buffered")
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self {
            number: r.u32()?,
            t_echo: r.instant()?,
            t_delay: r.duration()?,
            highest_seq: u64::from(r.u32()?),
            received: u32::from(r.u16()?),
            lost: u32::from(r.u16()?),
            receive_rate: r.rate()?,
            buffered: r.duration()?,
        })
    }
}
