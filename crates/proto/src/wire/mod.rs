//! How packets look on the wire: the transport headers a capture writes ([`transport`]) and
//! the fairstream datagram format the real-time driver sends ([`codec`]).
//!
//! A fairstream datagram is a [`FrameHeader`] (magic, version, packet type, connection id)
//! followed by the header's typed fields in network byte order, exactly `WIRE_LEN` bytes for
//! each header type, then the data packet's payload or the feedback report's [`Echo`]. The
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
