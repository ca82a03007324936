//! The UDP socket as the driver wants it: non-blocking, with large kernel buffers (socket2),
//! and a receive batch that drains whatever the kernel holds.

use std::net::{SocketAddr, UdpSocket};

use fairstream_core::{DataSize, FlowId, Instant};
use fairstream_proto::{Direction, Header, IP_UDP_HEADER, Packet};
use socket2::{Domain, Protocol, Socket, Type};

use crate::RtError;

/// Kernel buffer size asked for on both directions.
const BUFFER_BYTES: usize = 4 << 20;

/// A non-blocking UDP socket bound to `addr`.
pub(crate) fn bind(addr: SocketAddr) -> Result<UdpSocket, RtError> {
    let bind_err = |source| RtError::Bind { addr, source };
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))
        .map_err(bind_err)?;
    // Larger buffers where the OS allows; the defaults still work.
    let _ = s.set_recv_buffer_size(BUFFER_BYTES);
    let _ = s.set_send_buffer_size(BUFFER_BYTES);
    s.bind(&addr.into()).map_err(bind_err)?;
    s.set_nonblocking(true).map_err(bind_err)?;
    Ok(s.into())
}

/// Receives every datagram waiting (at most `max`), calling `f` for each; returns how many.
pub(crate) fn drain(
    sock: &UdpSocket,
    buf: &mut [u8],
    max: usize,
    mut f: impl FnMut(&[u8], SocketAddr),
) -> Result<usize, RtError> {
    for n in 0..max {
        match sock.recv_from(buf) {
            Ok((len, from)) => f(&buf[..len], from),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(n),
            // A previous datagram's ICMP unreachable: the peer is not (yet) listening.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(max)
}

/// The packet an endpoint is fed for a datagram of `len` bytes that arrived at `now` carrying
/// `header` and `payload` bytes of data: its size counted as the simulator counts it (the
/// datagram and its IPv4 and UDP headers).
pub(crate) fn arrived(
    now: Instant,
    len: usize,
    payload: usize,
    direction: Direction,
    header: Header,
) -> Packet {
    Packet {
        flow: FlowId(0),
        direction,
        size: DataSize::bytes(len as u64 + IP_UDP_HEADER),
        payload: payload as u32,
        sent_at: now,
        header,
    }
}
