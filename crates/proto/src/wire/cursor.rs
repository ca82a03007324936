//! Bounds-checked big-endian reading and writing of fixed-width fields, and the unit
//! conversions the fields share (times in microseconds, rates in bytes per second).

use fairstream_core::{Bitrate, Duration, Instant};

use super::WireError;

/// Reads fields off the front of a datagram; every read checks the length first.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// The next `N` bytes, or [`WireError::Short`].
    fn take<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let end = self.pos.saturating_add(N);
        let bytes = self.buf.get(self.pos..end).ok_or(WireError::Short {
            needed: end,
            got: self.buf.len(),
        })?;
        self.pos = end;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take::<1>()?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, WireError> {
        Ok(u16::from_be_bytes(self.take()?))
    }
    pub(crate) fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_be_bytes(self.take()?))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_be_bytes(self.take()?))
    }
    pub(crate) fn skip<const N: usize>(&mut self) -> Result<(), WireError> {
        self.take::<N>().map(|_| ())
    }
    /// A time of the sender's clock, in microseconds.
    pub(crate) fn instant(&mut self) -> Result<Instant, WireError> {
        Ok(Instant::from_nanos(u64::from(self.u32()?) * 1_000))
    }
    /// A duration, in microseconds.
    pub(crate) fn duration(&mut self) -> Result<Duration, WireError> {
        Ok(Duration::from_micros(u64::from(self.u32()?)))
    }
    /// A rate, in bytes per second.
    pub(crate) fn rate(&mut self) -> Result<Bitrate, WireError> {
        Ok(Bitrate::bps(u64::from(self.u32()?) * 8))
    }
}

/// Writes fields into an output buffer; every write checks the room first.
pub(crate) struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Bytes written so far.
    pub(crate) fn len(&self) -> usize {
        self.pos
    }

    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<(), WireError> {
        let end = self.pos + bytes.len();
        let got = self.buf.len();
        let out = self
            .buf
            .get_mut(self.pos..end)
            .ok_or(WireError::Short { needed: end, got })?;
        out.copy_from_slice(bytes);
        self.pos = end;
        Ok(())
    }
    pub(crate) fn u8(&mut self, v: u8) -> Result<(), WireError> {
        self.put(&[v])
    }
    pub(crate) fn u16(&mut self, v: u16) -> Result<(), WireError> {
        self.put(&v.to_be_bytes())
    }
    pub(crate) fn u32(&mut self, v: u32) -> Result<(), WireError> {
        self.put(&v.to_be_bytes())
    }
    /// `v` as a 32-bit field, or [`WireError::FieldOutOfRange`] naming `field`.
    pub(crate) fn u32_of(&mut self, v: u64, field: &'static str) -> Result<(), WireError> {
        self.u32(u32::try_from(v).map_err(|_| WireError::FieldOutOfRange(field))?)
    }
    /// `v` as a 16-bit field, or [`WireError::FieldOutOfRange`] naming `field`.
    pub(crate) fn u16_of(&mut self, v: u32, field: &'static str) -> Result<(), WireError> {
        self.u16(u16::try_from(v).map_err(|_| WireError::FieldOutOfRange(field))?)
    }
    pub(crate) fn zeros<const N: usize>(&mut self) -> Result<(), WireError> {
        self.put(&[0u8; N])
    }
    /// A time of the sender's clock in whole microseconds (up to 71 minutes).
    pub(crate) fn instant(&mut self, t: Instant, field: &'static str) -> Result<(), WireError> {
        self.u32_of(t.as_nanos() / 1_000, field)
    }
    /// A duration in whole microseconds (up to 71 minutes).
    pub(crate) fn duration(&mut self, d: Duration, field: &'static str) -> Result<(), WireError> {
        self.u32_of(d.as_nanos() / 1_000, field)
    }
    /// A rate in whole bytes per second (up to 34 Gbit/s).
    pub(crate) fn rate(&mut self, r: Bitrate, field: &'static str) -> Result<(), WireError> {
        self.u32_of(r.as_bps() / 8, field)
    }
}
