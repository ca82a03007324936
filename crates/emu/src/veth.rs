//! A host's veth pair: the host's end of the emulated network, read and written by the
//! emulator with an `AF_PACKET` socket on the far end.
//!
//! The host's end (`fse0`) is in the host's namespace, with the host's address and the route to
//! the emulated prefix; it needs no ARP (`arp off`: the kernel addresses every frame to the
//! device itself, and the emulator, which reads whatever arrives, does not look). The far end
//! (`fsh<i>`) is in the emulator's own namespace ([`Switch`]), where a datagram `AF_PACKET`
//! socket bound to it reads the host's IP packets, each with the kernel's stamp of when it
//! crossed the pair (taken in the sender's own `sendto`; `stamp` moves it onto the emulation's
//! clock), and writes the packets the host receives, addressed to its end's hardware address.
//!
//! A queue must see wire-size packets: the host's end checksums in software (transmit checksum
//! offload off, which takes segmentation offload with it, so the kernel cuts TCP's
//! super-packets to the MTU before they cross), and the far end merges nothing (GRO off).

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use crate::device::{HOST_DEVICE, configure_host_here};
use crate::netns::{self, Namespace};
use crate::{EmuError, sys};

/// The receive buffer of each far end's socket: room for the packets that arrive while the
/// forwarder sleeps (about 1 700 full-size packets).
const RCVBUF: usize = 4 << 20;

/// The emulator's own namespace, which holds the far end of every host's veth pair.
#[derive(Debug)]
pub struct Switch {
    ns: Namespace,
}

impl Switch {
    /// A new namespace for the far ends, IPv6 off (no router solicitations).
    pub fn create() -> Result<Self, EmuError> {
        let ns = Namespace::create("emulator")?;
        ns.run(|| {
            netns::disable_ipv6_here();
            netns::ip_batch_here("emulator", "link set lo up\n")
        })?;
        Ok(Self { ns })
    }
}

/// The hardware address of host `i`'s end (`side` 0) or of its far end (`side` 1): locally
/// administered, unicast.
fn mac(i: usize, side: u8) -> [u8; 6] {
    let [.., hi, lo] = (i as u32).to_be_bytes();
    [0x02, 0x66, 0x73, side, hi, lo]
}

fn mac_text(m: [u8; 6]) -> String {
    m.map(|b| format!("{b:02x}")).join(":")
}

/// A host's veth pair, as the emulator sees it: the far end's socket.
#[derive(Debug)]
pub struct Veth {
    sock: OwnedFd,
    ifindex: u32,
    host_mac: [u8; 6],
}

impl Veth {
    /// Creates host `index`'s pair: its end in `ns` with `addr` and the route to the emulated
    /// prefix, the far end in `switch`, and the socket on it.
    pub fn create(
        ns: &Namespace,
        switch: &Switch,
        index: usize,
        addr: std::net::Ipv4Addr,
        mtu: u32,
    ) -> Result<Self, EmuError> {
        let label = ns.label.clone();
        let far = format!("fsh{index}");
        let (host_mac, far_mac) = (mac(index, 0), mac(index, 1));
        let switch_path = switch.ns.path();
        ns.run(|| {
            configure_host_here(
                &label,
                &format!(
                    "link add {HOST_DEVICE} mtu {mtu} address {} type veth peer name {far} \
                     mtu {mtu} address {} netns {switch_path}\n\
                     link set {HOST_DEVICE} arp off up\n",
                    mac_text(host_mac),
                    mac_text(far_mac),
                ),
                addr,
            )?;
            sys::ethtool_set(HOST_DEVICE, sys::ETHTOOL_STXCSUM, 0).map_err(|e| {
                EmuError::setup(format!("turn checksum offload off on `{label}`'s veth"), e)
            })
        })?;
        let (sock, ifindex) = switch.ns.run(|| {
            netns::ip_batch_here("emulator", &format!("link set {far} up\n"))?;
            let step = |what: &str| format!("{what} `{label}`'s veth");
            // Not every kernel lets GRO be set on a veth; without it, GRO is off already.
            let _ = sys::ethtool_set(&far, sys::ETHTOOL_SGRO, 0);
            let ifindex = sys::if_index(&far).map_err(|e| EmuError::setup(step("find"), e))?;
            let sock = sys::packet_socket(ifindex).map_err(|e| EmuError::setup(step("open"), e))?;
            sys::set_rcvbuf_force(sock.as_fd(), RCVBUF)
                .map_err(|e| EmuError::setup(step("size the socket of"), e))?;
            sys::set_rx_timestamps(sock.as_fd())
                .map_err(|e| EmuError::setup(step("stamp the socket of"), e))?;
            Ok((sock, ifindex))
        })?;
        Ok(Self {
            sock,
            ifindex,
            host_mac,
        })
    }

    /// Reads one packet into `buf`: its length and the kernel's stamp of its crossing
    /// (`CLOCK_REALTIME` nanoseconds); `None` when none waits.
    #[inline]
    pub fn read(&self, buf: &mut [u8]) -> io::Result<Option<(usize, Option<u64>)>> {
        match sys::recv_stamped(self.sock.as_fd(), buf) {
            Ok(r) => Ok(Some(r)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes one packet to the host; false when the kernel refused it.
    #[inline]
    pub fn write(&self, packet: &[u8]) -> bool {
        sys::packet_send(self.sock.as_fd(), packet, self.ifindex, self.host_mac).is_ok()
    }

    /// Packets the kernel dropped since the last call because the socket's buffer was full
    /// (the forwarder fell behind): lost outside the link model.
    pub fn drops(&self) -> u64 {
        sys::packet_drops(self.sock.as_fd()).unwrap_or(0)
    }

    /// The descriptor, to wait on.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.sock.as_fd()
    }
}
