//! The fairstream datagram: a [`FrameHeader`], the header's fields, the data payload; and the
//! [`encode`]/[`decode`] pair over it.

use super::WireError;
use super::cursor::{Reader, Writer};
use super::fields::{WireHeader, WireRole};
use super::handshake::{ACK_LEN, HELLO_LEN, Handshake};
use crate::Header;

/// The two bytes every fairstream datagram starts with (`"FS"`).
pub const MAGIC: u16 = 0x4653;
/// The wire format's version this build speaks.
pub const VERSION: u8 = 1;
/// Bytes of the [`FrameHeader`]: magic 2, version 1, packet type 1, connection id 4.
pub const FRAME_HEADER_LEN: usize = 8;

/// Generates [`PacketType`] (one per header with a wire encoding, numbered as the protocol
/// list says, and the handshake's two) and the codec's dispatch over the headers.
macro_rules! wire_types {
    ($( $(#[$pdoc:meta])* $proto:ident($config:ty) $(real_time $rt:literal)? {
        endpoints { $( $(#[$edoc:meta])* $ep:ident($ety:ty) ),+ $(,)? }
        headers { $( $(#[$hdoc:meta])* $hv:ident($hty:ty) ),* $(,)? }
        wire { $( $(#[$wdoc:meta])* $wv:ident($wty:ty) = $num:literal ),* $(,)? }
    } )+) => {
        /// The packet types of the fairstream format: one per header type with a wire encoding
        /// (the protocol list's `wire` entries; TFRC Wireless and MULTFRC speak TFRC's), and the
        /// handshake's two.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum PacketType {
            $( $(
                #[doc = concat!("A `", stringify!($wv), "` header.")]
                $wv = $num,
            )* )+
            /// A sender's [`Handshake::Hello`].
            Hello = 16,
            /// A receiver's [`Handshake::Ack`].
            HelloAck = 17,
        }

        impl PacketType {
            /// Every packet type, in the list's order, the handshake's last.
            pub const ALL: [Self; [$( $( stringify!($wv), )* )+ "Hello", "HelloAck"].len()] =
                [$( $( Self::$wv, )* )+ Self::Hello, Self::HelloAck];

            /// Bytes of the type's fields (its header's `WIRE_LEN`, from its layout).
            pub const fn fields_len(self) -> usize {
                match self {
                    $( $( Self::$wv => <$wty as WireHeader>::WIRE_LEN as usize, )* )+
                    Self::Hello => HELLO_LEN,
                    Self::HelloAck => ACK_LEN,
                }
            }

            /// Whether packets of this type carry a payload after their fields (data packets do;
            /// feedback reports end with their [`Echo`]).
            pub const fn carries_payload(self) -> bool {
                match self {
                    $( $( Self::$wv => matches!(<$wty as WireHeader>::ROLE, WireRole::Data), )* )+
                    Self::Hello | Self::HelloAck => false,
                }
            }

            /// Whether packets of this type are feedback reports, which end with an [`Echo`].
            pub const fn is_feedback(self) -> bool {
                match self {
                    $( $( Self::$wv => matches!(<$wty as WireHeader>::ROLE, WireRole::Feedback), )* )+
                    Self::Hello | Self::HelloAck => false,
                }
            }
        }

        /// The packet type of `header`, or why it has none.
        fn packet_type(header: &Header) -> Result<PacketType, WireError> {
            match header {
                $( $( Header::$wv(_) => Ok(PacketType::$wv), )* )+
                other => Err(WireError::NotEncodable(other.what())),
            }
        }

        /// Writes `header`'s fields.
        fn write_fields(header: &Header, w: &mut Writer<'_>) -> Result<(), WireError> {
            match header {
                $( $( Header::$wv(h) => h.write_fields(w), )* )+
                other => Err(WireError::NotEncodable(other.what())),
            }
        }

        /// Reads the fields of a datagram of type `t`.
        fn read_fields(t: PacketType, r: &mut Reader<'_>) -> Result<Body, WireError> {
            Ok(match t {
                $( $(
                    PacketType::$wv => Body::Packet(Header::$wv(<$wty as WireHeader>::read_fields(r)?)),
                )* )+
                PacketType::Hello => Body::Handshake(Handshake::read_hello(r)?),
                PacketType::HelloAck => Body::Handshake(Handshake::read_ack(r)?),
            })
        }
    };
}

crate::protocols::protocol_list!(wire_types);

impl PacketType {
    /// The type a number on the wire names.
    pub fn from_u8(v: u8) -> Result<Self, WireError> {
        Self::ALL
            .into_iter()
            .find(|t| *t as u8 == v)
            .ok_or(WireError::UnknownType(v))
    }

    /// Whether `rest` bytes may follow the type's fields: any payload after a data packet's,
    /// exactly an [`Echo`] after a feedback report's, nothing after a handshake's.
    pub const fn allows_trailer(self, rest: usize) -> bool {
        if self.carries_payload() {
            true
        } else if self.is_feedback() {
            rest == ECHO_LEN
        } else {
            rest == 0
        }
    }

    /// Bytes after the type's fields in a packet carrying `payload` bytes of data: the payload
    /// (data packets), the [`Echo`] (feedback reports), nothing (handshakes); `None` when the
    /// type carries no payload and `payload` is not zero.
    pub const fn trailer_len(self, payload: usize) -> Option<usize> {
        if self.carries_payload() {
            Some(payload)
        } else if payload != 0 {
            None
        } else if self.is_feedback() {
            Some(ECHO_LEN)
        } else {
            Some(0)
        }
    }
}

/// What every datagram starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// The packet type.
    pub packet_type: PacketType,
    /// The connection the datagram belongs to (chosen by the sender at random).
    pub conn_id: u32,
}

impl FrameHeader {
    /// Reads and checks the frame header at the front of `buf`.
    pub fn decode(buf: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(buf);
        Self::read(&mut r)
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let magic = r.u16()?;
        if magic != MAGIC {
            return Err(WireError::BadMagic(magic));
        }
        let version = r.u8()?;
        if version != VERSION {
            return Err(WireError::UnknownVersion(version));
        }
        let packet_type = PacketType::from_u8(r.u8()?)?;
        Ok(Self {
            packet_type,
            conn_id: r.u32()?,
        })
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u16(MAGIC)?;
        w.u8(VERSION)?;
        w.u8(self.packet_type as u8)?;
        w.u32(self.conn_id)
    }
}

/// What a datagram carries after its frame header.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Body {
    /// A protocol packet's header.
    Packet(Header),
    /// A handshake message.
    Handshake(Handshake),
}

/// A decoded datagram: borrowed from the input, nothing allocated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame<'a> {
    /// The connection id it carries.
    pub conn_id: u32,
    /// The protocol header or handshake message.
    pub body: Body,
    /// What follows the fields: a data packet's payload, a feedback report's [`Echo`] (read
    /// it with [`Echo::read`]), nothing after a handshake.
    pub trailer: &'a [u8],
}

impl Frame<'_> {
    /// Bytes of data payload the datagram carries (zero for feedback and handshakes).
    pub fn payload_len(&self) -> usize {
        match self.body {
            Body::Packet(h) if packet_type(&h).is_ok_and(PacketType::carries_payload) => {
                self.trailer.len()
            }
            _ => 0,
        }
    }
}

/// Bytes of the echo every feedback report ends with.
pub const ECHO_LEN: usize = 12;

/// What a receiver's feedback proves: the wrapping sum of the nonces of the data packets it
/// received with sequence numbers from `from_seq` to `highest_seq` (of the report's
/// sub-connection). It can only know the nonces of packets it received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Echo {
    /// First sequence number the sum covers (one past the previous report's `highest_seq`).
    pub from_seq: u32,
    /// Highest data sequence number received.
    pub highest_seq: u32,
    /// Wrapping sum of the nonces received in `from_seq..=highest_seq`.
    pub nonce_sum: u32,
}

impl Echo {
    /// Writes the echo into `out` (at least [`ECHO_LEN`] bytes).
    pub fn write(&self, out: &mut [u8]) -> Result<(), WireError> {
        let mut w = Writer::new(out);
        w.u32(self.from_seq)?;
        w.u32(self.highest_seq)?;
        w.u32(self.nonce_sum)
    }

    /// The echo a feedback frame's trailer carries, if it carries one.
    pub fn read(trailer: &[u8]) -> Option<Self> {
        let mut r = Reader::new(trailer);
        let e = Self {
            from_seq: r.u32().ok()?,
            highest_seq: r.u32().ok()?,
            nonce_sum: r.u32().ok()?,
        };
        (r.remaining() == 0).then_some(e)
    }
}

/// Bytes `header` takes encoded with `payload` bytes of data after it (a feedback report's
/// [`Echo`] included, its `payload` zero), or why it cannot be. With IPv4 and UDP this is the
/// size the simulator charges ([`crate::udp_headers`], [`crate::udp_feedback_size`]).
pub fn encoded_len(header: &Header, payload: u32) -> Result<usize, WireError> {
    let t = packet_type(header)?;
    let trailer = t
        .trailer_len(payload as usize)
        .ok_or(WireError::FieldOutOfRange("payload"))?;
    Ok(FRAME_HEADER_LEN + t.fields_len() + trailer)
}

/// Writes `header` of connection `conn_id` and `payload` zero bytes of data after it into
/// `out` (a feedback report: a zero [`Echo`], for the caller to [`Echo::write`] over the last
/// [`ECHO_LEN`] bytes); returns the datagram's length. Fails (writing a prefix at most) when
/// `out` is too short or a field does not fit its width.
pub fn encode(
    conn_id: u32,
    header: &Header,
    payload: u32,
    out: &mut [u8],
) -> Result<usize, WireError> {
    let len = encoded_len(header, payload)?;
    if out.len() < len {
        return Err(WireError::Short {
            needed: len,
            got: out.len(),
        });
    }
    let mut w = Writer::new(&mut out[..len]);
    let packet_type = packet_type(header)?;
    FrameHeader {
        packet_type,
        conn_id,
    }
    .write(&mut w)?;
    write_fields(header, &mut w)?;
    let written = w.len();
    out[written..len].fill(0);
    Ok(len)
}

/// Writes handshake message `h` of connection `conn_id` into `out`; returns its length.
pub fn encode_handshake(conn_id: u32, h: &Handshake, out: &mut [u8]) -> Result<usize, WireError> {
    let packet_type = match h {
        Handshake::Hello { .. } => PacketType::Hello,
        Handshake::Ack { .. } => PacketType::HelloAck,
    };
    let mut w = Writer::new(out);
    FrameHeader {
        packet_type,
        conn_id,
    }
    .write(&mut w)?;
    h.write(&mut w)?;
    Ok(w.len())
}

/// Reads one datagram. Never panics, reads nothing past `buf`, allocates nothing.
pub fn decode(buf: &[u8]) -> Result<Frame<'_>, WireError> {
    let mut r = Reader::new(buf);
    let fh = FrameHeader::read(&mut r)?;
    let body = read_fields(fh.packet_type, &mut r)?;
    let rest = r.remaining();
    if !fh.packet_type.allows_trailer(rest) {
        // Only data packets have no fixed length, so `trailer_len(0)` is the type's trailer.
        let trailer = fh.packet_type.trailer_len(0).unwrap_or(0);
        let expected = FRAME_HEADER_LEN + fh.packet_type.fields_len() + trailer;
        return Err(if buf.len() < expected {
            WireError::Short {
                needed: expected,
                got: buf.len(),
            }
        } else {
            WireError::BadLength {
                expected,
                got: buf.len(),
            }
        });
    }
    Ok(Frame {
        conn_id: fh.conn_id,
        body,
        trailer: &buf[buf.len() - rest..],
    })
}

/// The property the fuzz targets and the test suite's replay check on any bytes: decoding
/// returns (never panics), and a datagram that decodes encodes back to the same bytes' frame.
/// Panics when the property fails.
pub fn check_decode_property(data: &[u8]) {
    let Ok(frame) = decode(data) else { return };
    let mut buf = [0u8; 65_536];
    let out = buf
        .get_mut(..data.len())
        .expect("a UDP datagram fits 64 KiB");
    let n = match &frame.body {
        Body::Packet(h) => encode(frame.conn_id, h, frame.payload_len() as u32, out),
        Body::Handshake(h) => encode_handshake(frame.conn_id, h, out),
    }
    .expect("a decoded frame encodes");
    assert_eq!(n, data.len(), "re-encoded length");
    let again = decode(&out[..n]).expect("an encoded frame decodes");
    assert_eq!((again.conn_id, again.body), (frame.conn_id, frame.body));
}

#[cfg(test)]
#[path = "codec_tests.rs"]
mod tests;
