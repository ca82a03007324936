//! A header's fields on the wire, declared once as a layout (the [`wire_fields!`] macro, used
//! beside the header in its protocol's folder): the order, width and encoding of each field, from
//! which the header's `write`, its `read` and its size ([`WireHeader::WIRE_LEN`]) all follow, so
//! the size cannot drift from the layout.
//!
//! Each field names a codec: [`U8`], [`U16`], [`U32`] (the field's own width), [`U32Of`] and
//! [`U16Of`] (a wider integer narrowed, out of range an error naming the field), [`U8Mod`] (a
//! counter that travels mod 256), [`Micros`] (a time of the sender's clock or a duration, in
//! microseconds), [`BytesPerSec`] (a rate); a protocol adds the codecs of its own types beside
//! them (TFRC's loss event rate, a media frame's type). `pad N` is N zero bytes.

use fairstream_core::{Bitrate, Duration, Instant};

use super::WireError;
use super::cursor::{Reader, Writer};

/// What a datagram carries after a header's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WireRole {
    /// A data packet: its payload (whose first bytes carry the nonce).
    Data,
    /// A feedback report: the [`super::Echo`] that proves its claim.
    Feedback,
}

/// A header with a fairstream wire encoding (implemented by [`wire_fields!`]).
pub(crate) trait WireHeader: Sized {
    /// What follows its fields.
    const ROLE: WireRole;
    /// Bytes of its fields: the sum of its layout's widths.
    const WIRE_LEN: u64;
    /// Writes the fields, or names the one the format cannot carry.
    fn write_fields(&self, w: &mut Writer<'_>) -> Result<(), WireError>;
    /// Reads the fields, or says why they mean nothing.
    fn read_fields(r: &mut Reader<'_>) -> Result<Self, WireError>;
}

/// The bytes a field's codec takes on the wire.
pub(crate) trait Width {
    /// Bytes.
    const WIDTH: u64;
}

/// How a value of type `T` goes on the wire.
pub(crate) trait FieldCodec<T>: Width {
    /// Writes `v` (the field `name`), or says it does not fit.
    fn put(v: &T, w: &mut Writer<'_>, name: &'static str) -> Result<(), WireError>;
    /// Reads a value.
    fn get(r: &mut Reader<'_>) -> Result<T, WireError>;
}

/// One byte.
pub(crate) struct U8;
/// Two bytes, big-endian.
pub(crate) struct U16;
/// Four bytes, big-endian.
pub(crate) struct U32;
/// A `u64` in four bytes (out of range: an error naming the field).
pub(crate) struct U32Of;
/// A `u32` in two bytes (out of range: an error naming the field).
pub(crate) struct U16Of;
/// A `u32` counter in one byte, mod 256.
pub(crate) struct U8Mod;
/// A time of the sender's clock, or a duration, in whole microseconds in four bytes (up to
/// 71 minutes).
pub(crate) struct Micros;
/// A rate in whole bytes per second in four bytes (up to 34 Gbit/s).
pub(crate) struct BytesPerSec;

macro_rules! width {
    ($($codec:ty = $n:literal),+) => {
        $( impl Width for $codec { const WIDTH: u64 = $n; } )+
    };
}
width!(
    U8 = 1,
    U16 = 2,
    U32 = 4,
    U32Of = 4,
    U16Of = 2,
    U8Mod = 1,
    Micros = 4,
    BytesPerSec = 4
);

impl FieldCodec<u8> for U8 {
    fn put(v: &u8, w: &mut Writer<'_>, _: &'static str) -> Result<(), WireError> {
        w.u8(*v)
    }
    fn get(r: &mut Reader<'_>) -> Result<u8, WireError> {
        r.u8()
    }
}

impl FieldCodec<u16> for U16 {
    fn put(v: &u16, w: &mut Writer<'_>, _: &'static str) -> Result<(), WireError> {
        w.u16(*v)
    }
    fn get(r: &mut Reader<'_>) -> Result<u16, WireError> {
        r.u16()
    }
}

impl FieldCodec<u32> for U32 {
    fn put(v: &u32, w: &mut Writer<'_>, _: &'static str) -> Result<(), WireError> {
        w.u32(*v)
    }
    fn get(r: &mut Reader<'_>) -> Result<u32, WireError> {
        r.u32()
    }
}

impl FieldCodec<u64> for U32Of {
    fn put(v: &u64, w: &mut Writer<'_>, name: &'static str) -> Result<(), WireError> {
        w.u32_of(*v, name)
    }
    fn get(r: &mut Reader<'_>) -> Result<u64, WireError> {
        Ok(u64::from(r.u32()?))
    }
}

impl FieldCodec<u32> for U16Of {
    fn put(v: &u32, w: &mut Writer<'_>, name: &'static str) -> Result<(), WireError> {
        w.u16_of(*v, name)
    }
    fn get(r: &mut Reader<'_>) -> Result<u32, WireError> {
        Ok(u32::from(r.u16()?))
    }
}

impl FieldCodec<u32> for U8Mod {
    fn put(v: &u32, w: &mut Writer<'_>, _: &'static str) -> Result<(), WireError> {
        w.u8((*v % 256) as u8)
    }
    fn get(r: &mut Reader<'_>) -> Result<u32, WireError> {
        Ok(u32::from(r.u8()?))
    }
}

impl FieldCodec<Instant> for Micros {
    fn put(v: &Instant, w: &mut Writer<'_>, name: &'static str) -> Result<(), WireError> {
        w.instant(*v, name)
    }
    fn get(r: &mut Reader<'_>) -> Result<Instant, WireError> {
        r.instant()
    }
}

impl FieldCodec<Duration> for Micros {
    fn put(v: &Duration, w: &mut Writer<'_>, name: &'static str) -> Result<(), WireError> {
        w.duration(*v, name)
    }
    fn get(r: &mut Reader<'_>) -> Result<Duration, WireError> {
        r.duration()
    }
}

impl FieldCodec<Bitrate> for BytesPerSec {
    fn put(v: &Bitrate, w: &mut Writer<'_>, name: &'static str) -> Result<(), WireError> {
        w.rate(*v, name)
    }
    fn get(r: &mut Reader<'_>) -> Result<Bitrate, WireError> {
        r.rate()
    }
}

/// Declares a header's layout on the wire and implements [`WireHeader`] from it:
///
/// ```ignore
/// wire_fields! {
///     SomeData as Data {
///         seq: U32Of,
///         timestamp: Micros,
///         conn: U8,
///         pad 2,
///     }
/// }
/// ```
///
/// Fields are written and read in the order given, each with its codec; `pad N` is N zero bytes
/// (skipped on reading); `WIRE_LEN` is the sum of the widths. `as Data` or `as Feedback` says
/// what follows the fields. An optional `check path` after the role names a
/// `fn(&Self) -> Result<(), WireError>` run before writing and after reading (a field that
/// depends on another).
macro_rules! wire_fields {
    ($t:ident as $role:ident $(, check $check:path)? { $($body:tt)* }) => {
        $crate::wire::wire_fields!(@munch [$t $role ($($check)?)] [] []; $($body)*);
    };
    // Each entry becomes `(pad N)` or `(field name Codec)`; the fields' names are kept apart.
    (@munch $hdr:tt [$($e:tt)*] [$($f:ident)*]; pad $n:literal, $($rest:tt)*) => {
        $crate::wire::wire_fields!(@munch $hdr [$($e)* (pad $n)] [$($f)*]; $($rest)*);
    };
    (@munch $hdr:tt [$($e:tt)*] [$($f:ident)*]; $field:ident : $codec:ty, $($rest:tt)*) => {
        $crate::wire::wire_fields!(@munch $hdr [$($e)* (field $field $codec)] [$($f)* $field];
            $($rest)*);
    };
    (@munch [$t:ident $role:ident ($($check:path)?)] [$($e:tt)*] [$($f:ident)*]; ) => {
        impl $t {
            /// Bytes of its fields on the wire, the sum of its layout's widths.
            pub const WIRE_LEN: u64 = <Self as $crate::wire::WireHeader>::WIRE_LEN;
        }

        impl $crate::wire::WireHeader for $t {
            const ROLE: $crate::wire::WireRole = $crate::wire::WireRole::$role;
            const WIRE_LEN: u64 = 0 $( + $crate::wire::wire_fields!(@width $e) )*;
            fn write_fields(
                &self,
                w: &mut $crate::wire::Writer<'_>,
            ) -> Result<(), $crate::wire::WireError> {
                $( $check(self)?; )?
                $( $crate::wire::wire_fields! { @write self w $e } )*
                Ok(())
            }
            fn read_fields(
                r: &mut $crate::wire::Reader<'_>,
            ) -> Result<Self, $crate::wire::WireError> {
                $( $crate::wire::wire_fields! { @read r $e } )*
                let out = Self { $($f),* };
                $( $check(&out)?; )?
                Ok(out)
            }
        }
    };
    (@width (pad $n:literal)) => { $n };
    (@width (field $field:ident $codec:ty)) => { <$codec as $crate::wire::Width>::WIDTH };
    (@write $s:ident $w:ident (pad $n:literal)) => { $w.zeros::<$n>()?; };
    (@write $s:ident $w:ident (field $field:ident $codec:ty)) => {
        <$codec as $crate::wire::FieldCodec<_>>::put(&$s.$field, $w, stringify!($field))?;
    };
    (@read $r:ident (pad $n:literal)) => { $r.skip::<$n>()?; };
    (@read $r:ident (field $field:ident $codec:ty)) => {
        let $field = <$codec as $crate::wire::FieldCodec<_>>::get($r)?;
    };
}
pub(crate) use wire_fields;
