//! A host's TUN device: the host's end of the emulated network. The kernel hands the emulator
//! every IP packet the host routes into it (whole packets of at most the device's MTU: a TUN
//! device without `IFF_VNET_HDR` offers no segmentation offload, so a queue sees wire-size
//! packets) and delivers every packet written to it as if it had come in on a wire.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;

use crate::netns::{self, Namespace};
use crate::{EmuError, sys};

/// The name of the TUN device in every host's namespace.
pub const DEVICE: &str = "fse0";

/// The prefix every emulated host's address is in (`10.241.0.0/16`, inside the hosts'
/// namespaces only: the emulator never touches the host's own addresses or routes).
pub const PREFIX: [u8; 2] = [10, 241];

/// The address of emulated host number `i`.
pub fn host_addr(i: usize) -> std::net::Ipv4Addr {
    let n = i as u32 + 1;
    std::net::Ipv4Addr::new(PREFIX[0], PREFIX[1], (n >> 8) as u8, n as u8)
}

/// A TUN device, open non-blocking.
#[derive(Debug)]
pub struct Tun {
    file: File,
}

impl Tun {
    /// Creates the device in `ns`, gives it `addr` and routes the emulated prefix into it, with
    /// the loopback up and IPv6 off (no router solicitations through the emulator).
    pub fn create(ns: &Namespace, addr: std::net::Ipv4Addr, mtu: u32) -> Result<Self, EmuError> {
        let label = ns.label.clone();
        ns.run(move || {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open("/dev/net/tun")
                .map_err(|e| EmuError::setup("open /dev/net/tun", e))?;
            sys::tun_set_iff(file.as_fd(), DEVICE, false)
                .map_err(|e| EmuError::setup(format!("create the TUN device of `{label}`"), e))?;
            for key in [
                "net.ipv6.conf.all.disable_ipv6",
                "net.ipv6.conf.default.disable_ipv6",
            ] {
                // Absent where IPv6 is not built in: nothing to turn off then.
                let _ = netns::write_sysctl_here(key, "1");
            }
            let [a, b] = PREFIX;
            netns::ip_batch_here(
                &label,
                &format!(
                    "link set lo up\n\
                     link set {DEVICE} mtu {mtu} up\n\
                     addr add {addr}/32 dev {DEVICE}\n\
                     route add {a}.{b}.0.0/16 dev {DEVICE} src {addr}\n"
                ),
            )?;
            Ok(Self { file })
        })
    }

    /// Reads one packet into `buf`; `None` when none waits.
    #[inline]
    pub fn read(&self, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
        match (&self.file).read(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes one packet (delivers it to the host); false when the device refused it (its host
    /// is gone, or the packet is malformed): counted, never fatal.
    #[inline]
    pub fn write(&self, packet: &[u8]) -> bool {
        (&self.file).write(packet).is_ok()
    }

    /// The descriptor, to wait on.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}
