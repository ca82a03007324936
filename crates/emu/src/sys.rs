//! The system calls the emulator needs that no safe wrapper offers, each in one small
//! audited function (this is the only module of the workspace that allows `unsafe`):
//!
//! - [`unshare_net`]: `unshare(CLONE_NEWNET)`, a new network namespace for the calling thread
//!   (rustix marks `unshare` unsafe for `CLONE_FILES`, which is never passed here);
//! - [`tun_set_iff`]: the `TUNSETIFF` ioctl that turns an open `/dev/net/tun` into a named TUN
//!   device (no crate wraps it without pulling in an async runtime);
//! - [`tcp_info`]: `getsockopt(TCP_INFO)` into a byte buffer, read field by field at the
//!   offsets of Linux's `struct tcp_info` (`include/uapi/linux/tcp.h`), so the buffer's layout
//!   is never assumed by a Rust type;
//! - [`set_realtime`]: `sched_setscheduler(0, SCHED_FIFO)` for the forwarder's thread, so that
//!   other work on the machine (compilers, the flows' own threads) delays it less;
//! - [`set_rx_timestamps`], [`recv_stamped`]: `SO_TIMESTAMPNS` and `recvmsg` with its control
//!   message, the kernel's receive stamp of each datagram (neither std, socket2 nor rustix reads
//!   it), so that a receiver measures when a packet arrived, not when its thread woke.
//!
//! - [`packet_socket`], [`packet_send`], [`packet_drops`]: a layer-3 (`SOCK_DGRAM`) `AF_PACKET`
//!   socket bound to one device, a write to a given hardware address through it, and the
//!   packets the kernel dropped because its receive buffer was full (`PACKET_STATISTICS`);
//! - [`set_rcvbuf_force`]: `SO_RCVBUFFORCE`, a receive buffer above `rmem_max`;
//! - [`if_index`]: a device's index in the calling thread's namespace;
//! - [`ethtool_set`]: the legacy `SIOCETHTOOL` set commands (one `u32` each, through a socket of
//!   the calling thread's namespace), with which a veth is told to checksum in software (no
//!   `ethtool` binary needed).
//!
//! Each call passes only pointers to buffers it owns, of the length it states, to a syscall that
//! writes at most that many bytes; none keeps a pointer after it returns.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// Moves the calling thread into a new, empty network namespace.
pub(crate) fn unshare_net() -> io::Result<()> {
    // SAFETY: unshare with CLONE_NEWNET changes only the calling thread's network namespace;
    // it touches no memory of the process and no file descriptor.
    let r = unsafe { libc::unshare(libc::CLONE_NEWNET) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Makes the open `/dev/net/tun` `fd` the TUN device `name` (layer 3, no packet information
/// header); with `multi_queue`, one queue of a multi-queue device.
pub(crate) fn tun_set_iff(fd: BorrowedFd<'_>, name: &str, multi_queue: bool) -> io::Result<()> {
    // struct ifreq: a 16-byte name, then a union whose first member here is `short ifr_flags`;
    // 40 bytes in all on every Linux ABI.
    let mut ifreq = [0u8; 40];
    ifreq[..libc::IFNAMSIZ].copy_from_slice(&ifreq_name(name)?);
    let mut flags = (libc::IFF_TUN | libc::IFF_NO_PI) as i16;
    if multi_queue {
        flags |= libc::IFF_MULTI_QUEUE as i16;
    }
    ifreq[16..18].copy_from_slice(&flags.to_ne_bytes());
    // SAFETY: TUNSETIFF reads and writes a struct ifreq (40 bytes) at the pointer, which
    // points at `ifreq`, a live 40-byte buffer owned here; fd is a valid open descriptor.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, ifreq.as_mut_ptr()) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The kernel's `struct tcp_info` of a TCP socket, as bytes; the number of bytes the kernel
/// filled (older kernels fill fewer fields).
pub(crate) fn tcp_info(fd: BorrowedFd<'_>, buf: &mut [u8; 256]) -> io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes (256, the buffer's length) at the pointer,
    // which points at `buf`, and writes the length it filled into `len`, a live local.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok((len as usize).min(buf.len()))
    }
}

/// Puts the calling thread under `SCHED_FIFO` at `priority` (1 to 99).
pub(crate) fn set_realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: sched_setscheduler reads one struct sched_param at the pointer, which points at
    // `param`, a live local; pid 0 is the calling thread.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Asks the kernel to stamp each datagram `fd` receives with the instant it arrived
/// (`SO_TIMESTAMPNS`: `CLOCK_REALTIME`, taken as the packet enters the receiving host's stack),
/// read back by [`recv_stamped`].
pub(crate) fn set_rx_timestamps(fd: BorrowedFd<'_>) -> io::Result<()> {
    set_int_option(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)
}

/// Sets the socket option `name` of `level` on `fd` to the int `value`.
fn set_int_option(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: setsockopt reads one c_int at the pointer, which points at `value`, a live local,
    // and the length passed is that of a c_int.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&raw const value).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Receives one datagram from `fd` into `buf`: its length and the kernel's receive stamp
/// (`CLOCK_REALTIME`, nanoseconds since the epoch), if the socket asked for one
/// ([`set_rx_timestamps`]).
pub(crate) fn recv_stamped(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<(usize, Option<u64>)> {
    // Room for one `cmsghdr` and a `timespec`, aligned as a `cmsghdr` must be.
    let mut control = [0u64; 8];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: an all-zero msghdr is a valid value (null pointers, zero lengths).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &raw mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of_val(&control) as _;
    // SAFETY: recvmsg writes at most `iov_len` bytes into `buf` (through `iov`) and at most
    // `msg_controllen` bytes into `control`, both live buffers owned here, and updates `msg`, a
    // live local; no pointer is kept after it returns.
    let n = unsafe { libc::recvmsg(fd.as_raw_fd(), &raw mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut stamp = None;
    // SAFETY: the CMSG_* macros walk the control buffer the kernel filled, within
    // `msg_controllen`; a control message of type SCM_TIMESTAMPNS carries one `timespec`, read
    // unaligned from its data.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&raw const msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                stamp = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(&raw const msg, c);
        }
    }
    Ok((n as usize, stamp))
}

/// A new socket (`SOCK_CLOEXEC` added to `ty`) in the calling thread's namespace.
fn socket(
    domain: libc::c_int,
    ty: libc::c_int,
    protocol: libc::c_int,
) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: socket takes no pointer; a non-negative result is a new descriptor owned by no
    // one else, handed to an OwnedFd at once.
    let fd = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, protocol) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is the valid descriptor just created, owned by nothing else.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// A datagram (layer-3) `AF_PACKET` socket for IPv4 bound to device `ifindex`: it reads the IP
/// packets that arrive on that device (not those sent from it: a socket bound to one protocol
/// is not a tap of outgoing packets) and writes IP packets out of it.
pub(crate) fn packet_socket(ifindex: u32) -> io::Result<std::os::fd::OwnedFd> {
    let protocol = (libc::ETH_P_IP as u16).to_be();
    let owned = socket(
        libc::AF_PACKET,
        libc::SOCK_DGRAM | libc::SOCK_NONBLOCK,
        i32::from(protocol),
    )?;
    let addr = link_addr(ifindex, [0; 6], protocol);
    // SAFETY: bind reads a sockaddr_ll of the length passed at the pointer, which points at
    // `addr`, a live local; the descriptor is the socket just made.
    let r = unsafe {
        libc::bind(
            owned.as_raw_fd(),
            (&raw const addr).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(owned)
}

fn link_addr(ifindex: u32, mac: [u8; 6], protocol: u16) -> libc::sockaddr_ll {
    let mut sll_addr = [0u8; 8];
    sll_addr[..6].copy_from_slice(&mac);
    libc::sockaddr_ll {
        sll_family: libc::AF_PACKET as u16,
        sll_protocol: protocol,
        sll_ifindex: ifindex as i32,
        sll_hatype: 0,
        sll_pkttype: 0,
        sll_halen: 6,
        sll_addr,
    }
}

/// Writes the IPv4 packet `packet` out of the device `ifindex` that the `AF_PACKET` socket `fd`
/// is bound to, to the hardware address `mac` (the kernel adds the Ethernet header).
pub(crate) fn packet_send(
    fd: BorrowedFd<'_>,
    packet: &[u8],
    ifindex: u32,
    mac: [u8; 6],
) -> io::Result<usize> {
    let addr = link_addr(ifindex, mac, (libc::ETH_P_IP as u16).to_be());
    // SAFETY: sendto reads `packet.len()` bytes from `packet` and a sockaddr_ll of the length
    // passed from `addr`, both live for the call.
    let n = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            packet.as_ptr().cast(),
            packet.len(),
            0,
            (&raw const addr).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// The packets the `AF_PACKET` socket `fd` dropped since the last call (its receive buffer was
/// full): `PACKET_STATISTICS`, which the kernel resets on each read.
pub(crate) fn packet_drops(fd: BorrowedFd<'_>) -> io::Result<u64> {
    // struct tpacket_stats { unsigned int tp_packets; unsigned int tp_drops; }
    let mut stats = [0u32; 2];
    let mut len = size_of_val(&stats) as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` (8) bytes at the pointer, which points at `stats`,
    // a live 8-byte buffer, and writes the length filled into `len`, a live local.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            PACKET_STATISTICS,
            stats.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(u64::from(stats[1]))
    }
}

/// `PACKET_STATISTICS` (`include/uapi/linux/if_packet.h`).
const PACKET_STATISTICS: libc::c_int = 6;

/// Sets the receive buffer of `fd` to `bytes`, above `net.core.rmem_max` (needs
/// `CAP_NET_ADMIN`).
pub(crate) fn set_rcvbuf_force(fd: BorrowedFd<'_>, bytes: usize) -> io::Result<()> {
    let v = bytes.min(i32::MAX as usize) as libc::c_int;
    set_int_option(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, v)
}

/// The index of device `name` in the calling thread's network namespace.
pub(crate) fn if_index(name: &str) -> io::Result<u32> {
    let c = std::ffi::CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a device name"))?;
    // SAFETY: if_nametoindex reads the NUL-terminated string at the pointer, `c`, live for the
    // call.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(i)
    }
}

/// `ETHTOOL_STXCSUM`: transmit checksum offload on (1) or off (0).
pub(crate) const ETHTOOL_STXCSUM: u32 = 0x17;
/// `ETHTOOL_SGRO`: generic receive offload on (1) or off (0).
pub(crate) const ETHTOOL_SGRO: u32 = 0x2c;

/// The name field of a `struct ifreq` holding `name`: at most 15 bytes and a NUL.
fn ifreq_name(name: &str) -> io::Result<[u8; libc::IFNAMSIZ]> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() >= libc::IFNAMSIZ || bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{name}` is no interface name"),
        ));
    }
    let mut field = [0u8; libc::IFNAMSIZ];
    field[..bytes.len()].copy_from_slice(bytes);
    Ok(field)
}

/// Runs the legacy ethtool set command `cmd` with `value` on device `name` of the calling
/// thread's namespace (through a socket opened there for the call).
pub(crate) fn ethtool_set(name: &str, cmd: u32, value: u32) -> io::Result<()> {
    let name_field = ifreq_name(name)?;
    let sock = socket(libc::AF_INET, libc::SOCK_DGRAM, 0)?;
    // struct ethtool_value { __u32 cmd; __u32 data; }
    let mut command = [cmd, value];
    // struct ifreq: a 16-byte name, then a union whose member here is `void *ifr_data`; 40
    // bytes in all, the pointer 8-aligned at offset 16 (u64 elements keep it aligned).
    let mut ifreq = [0u64; 5];
    ifreq[0] = u64::from_ne_bytes(name_field[..8].try_into().unwrap_or_default());
    ifreq[1] = u64::from_ne_bytes(name_field[8..].try_into().unwrap_or_default());
    ifreq[2] = command.as_mut_ptr() as usize as u64;
    // SAFETY: SIOCETHTOOL reads the struct ifreq at the pointer (`ifreq`, a live 40-byte
    // buffer) and reads and writes the 8-byte struct ethtool_value its data pointer names
    // (`command`, live until after the call); the socket is a valid open descriptor.
    let r = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCETHTOOL, ifreq.as_mut_ptr()) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
