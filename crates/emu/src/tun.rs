//! A host's TUN device: the host's end of the emulated network. The kernel hands the emulator
//! every IP packet the host routes into it (whole packets of at most the device's MTU: a TUN
//! device without `IFF_VNET_HDR` offers no segmentation offload, so a queue sees wire-size
//! packets) and delivers every packet written to it as if it had come in on a wire.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;

use crate::device::{HOST_DEVICE, configure_host_here};
use crate::netns::Namespace;
use crate::{EmuError, sys};

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
            sys::tun_set_iff(file.as_fd(), HOST_DEVICE, false)
                .map_err(|e| EmuError::setup(format!("create the TUN device of `{label}`"), e))?;
            configure_host_here(
                &label,
                &format!("link set {HOST_DEVICE} mtu {mtu} up\n"),
                addr,
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
