//! Where a host's packets leave and enter it: a TUN device ([`crate::tun`]) or a veth pair read
//! with `AF_PACKET` ([`crate::veth`]), chosen per emulation ([`DeviceKind`]), behind one
//! [`Device`] the forwarder reads and writes.
//!
//! What tells them apart is when a packet counts as sent: a TUN device gives no receive stamp,
//! so a packet enters its first link when the forwarder reads it, and the forwarder must wake
//! for every packet; a veth's packets carry the kernel's stamp of their crossing, so they enter
//! it at that instant however late they are read, and the forwarder reads them in batches
//! (docs/VALIDATION.md, "The emulator's links", has the measurements behind the default).

use std::io;
use std::os::fd::BorrowedFd;

use crate::EmuError;
use crate::netns::Namespace;
use crate::tun::Tun;
use crate::veth::{Switch, Veth};

/// The kind of device every host of an emulation gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceKind {
    /// A TUN device per host: no kernel stamp; the forwarder wakes for each packet.
    Tun,
    /// A veth pair per host, read with `AF_PACKET` in the emulator's own namespace: each
    /// packet stamped by the kernel as it left its host (the default).
    #[default]
    Veth,
}

impl DeviceKind {
    /// Every kind, by name.
    pub const ALL: [(&'static str, Self); 2] = [("veth", Self::Veth), ("tun", Self::Tun)];

    /// The kind named `name` (`"veth"`, `"tun"`).
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, k)| k)
            .ok_or_else(|| format!("no device kind `{name}`: expected \"veth\" or \"tun\""))
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("?", |(n, _)| n)
    }
}

/// What the hosts' devices of one emulation share: the emulator's namespace of the veth pairs'
/// far ends, when they are veth pairs.
#[derive(Debug)]
pub struct Devices {
    switch: Option<Switch>,
    kind: DeviceKind,
}

impl Devices {
    /// Prepares hosts' devices of `kind`.
    pub fn new(kind: DeviceKind) -> Result<Self, EmuError> {
        Ok(Self {
            switch: match kind {
                DeviceKind::Veth => Some(Switch::create()?),
                DeviceKind::Tun => None,
            },
            kind,
        })
    }

    /// The kind.
    pub fn kind(&self) -> DeviceKind {
        self.kind
    }

    /// Host `index`'s device, in its namespace `ns`, with address `addr`.
    pub fn create(
        &self,
        ns: &Namespace,
        index: usize,
        addr: std::net::Ipv4Addr,
        mtu: u32,
    ) -> Result<Device, EmuError> {
        Ok(match &self.switch {
            Some(switch) => Device::Veth(Veth::create(ns, switch, index, addr, mtu)?),
            None => Device::Tun(Tun::create(ns, addr, mtu)?),
        })
    }
}

/// One host's device, as the forwarder uses it.
#[derive(Debug)]
pub enum Device {
    /// A TUN device.
    Tun(Tun),
    /// A veth pair's far end.
    Veth(Veth),
}

impl Device {
    /// Reads one packet into `buf`: its length and, where the device has one, the kernel's stamp
    /// of when it left its host (`CLOCK_REALTIME` nanoseconds); `None` when none waits.
    #[inline]
    pub fn read(&self, buf: &mut [u8]) -> io::Result<Option<(usize, Option<u64>)>> {
        match self {
            Self::Tun(t) => Ok(t.read(buf)?.map(|n| (n, None))),
            Self::Veth(v) => v.read(buf),
        }
    }

    /// Writes one packet to the host; false when the device refused it.
    #[inline]
    pub fn write(&self, packet: &[u8]) -> bool {
        match self {
            Self::Tun(t) => t.write(packet),
            Self::Veth(v) => v.write(packet),
        }
    }

    /// Whether its packets carry the kernel's stamp of when they left the host.
    pub fn stamped(&self) -> bool {
        matches!(self, Self::Veth(_))
    }

    /// Packets the kernel dropped on the way to the emulator since the last call (a veth's
    /// socket buffer full); a TUN device's host is held back instead, and loses none here.
    pub fn drops(&self) -> u64 {
        match self {
            Self::Tun(_) => 0,
            Self::Veth(v) => v.drops(),
        }
    }

    /// The descriptor, to wait on.
    pub fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Self::Tun(t) => t.fd(),
            Self::Veth(v) => v.fd(),
        }
    }
}
