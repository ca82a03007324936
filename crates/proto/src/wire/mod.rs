//! How packets look on the wire: the transport headers a capture writes ([`transport`]) and
//! the fairstream datagram format the real-time driver sends ([`codec`]).
//!
//! A fairstream datagram is a [`FrameHeader`] (magic, version, packet type, connection id)
//! followed by the header's typed fields in network byte order, exactly `WIRE_LEN` bytes for
//! each header type (the sum of the widths of the layout each header declares beside itself with
//! `wire_fields!`), then the data packet's payload or the feedback report's [`Echo`]. The packet
//! types and the codec's dispatch follow from the protocol list (`crate::protocols`). The
//! simulator charges each packet exactly this plus IPv4 and UDP ([`crate::udp_headers`],
//! [`crate::udp_feedback_size`]). [`decode`] never panics, never reads past its input and
//! allocates nothing: every malformed datagram is a typed [`WireError`].

mod codec;
mod cursor;
mod error;
mod fields;
mod handshake;
mod transport;

pub use codec::{
    Body, ECHO_LEN, Echo, FRAME_HEADER_LEN, Frame, FrameHeader, MAGIC, PacketType, VERSION,
    check_decode_property, decode, encode, encode_handshake, encoded_len,
};
pub use error::WireError;
pub use handshake::{ACK_LEN, AckStatus, HELLO_LEN, Handshake};
pub use transport::{MAX_TRANSPORT_HEADER, TransportContext};

pub(crate) use cursor::{Reader, Writer};
pub(crate) use fields::{
    BytesPerSec, FieldCodec, Micros, U8, U8Mod, U16, U16Of, U32, U32Of, Width, WireHeader,
    WireRole, wire_fields,
};
pub(crate) use transport::emit_udp;
