//! The handshake datagrams of the real-time driver: a sender's `Hello` (which protocol, and a
//! random token) and the receiver's `Ack` echoing the token, which proves to the sender that the
//! receiver sits at the address it sends to before anything is sent at rate. A `Hello` is padded
//! so that the `Ack` it draws is never larger (no amplification).

use super::WireError;
use super::cursor::{Reader, Writer};

/// Bytes of a `Hello`'s fields (protocol 1, reserved 3, token 8, padding 36).
pub const HELLO_LEN: usize = 48;
/// Bytes of an `Ack`'s fields (status 1, reserved 3, token 8).
pub const ACK_LEN: usize = 12;

/// What a receiver answers to a `Hello`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum AckStatus {
    /// It runs the protocol's receiver for this connection.
    Accepted = 0,
    /// It does not speak the protocol asked for.
    UnknownProtocol = 1,
    /// It serves another connection already.
    Busy = 2,
    /// It got a datagram of another wire version (answered in its own version).
    VersionMismatch = 3,
}

/// A handshake datagram's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handshake {
    /// Sender → receiver: open a connection running `protocol`; echo `token`.
    Hello {
        /// The protocol's number (the driver's list).
        protocol: u8,
        /// A random number the receiver must echo.
        token: u64,
    },
    /// Receiver → sender: the `Hello`'s token and the receiver's answer.
    Ack {
        /// The answer.
        status: AckStatus,
        /// The token of the `Hello` answered.
        token: u64,
    },
}

impl Handshake {
    pub(super) fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        match *self {
            Self::Hello { protocol, token } => {
                w.u8(protocol)?;
                w.zeros::<3>()?;
                w.put(&token.to_be_bytes())?;
                w.zeros::<36>()
            }
            Self::Ack { status, token } => {
                w.u8(status as u8)?;
                w.zeros::<3>()?;
                w.put(&token.to_be_bytes())
            }
        }
    }

    pub(super) fn read_hello(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let protocol = r.u8()?;
        r.skip::<3>()?;
        let token = r.u64()?;
        r.skip::<36>()?;
        Ok(Self::Hello { protocol, token })
    }

    pub(super) fn read_ack(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let status = match r.u8()? {
            0 => AckStatus::Accepted,
            1 => AckStatus::UnknownProtocol,
            2 => AckStatus::Busy,
            3 => AckStatus::VersionMismatch,
            _ => return Err(WireError::FieldOutOfRange("ack status")),
        };
        r.skip::<3>()?;
        Ok(Self::Ack {
            status,
            token: r.u64()?,
        })
    }
}
