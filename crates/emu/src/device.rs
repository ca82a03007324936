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
use std::net::Ipv4Addr;
use std::os::fd::BorrowedFd;

use crate::EmuError;
use crate::netns::{self, Namespace};
use crate::tun::Tun;
use crate::veth::{Switch, Veth};

/// The name of the device in every host's namespace (a TUN device, or the host's end of a veth
/// pair).
pub const HOST_DEVICE: &str = "fse0";

/// The prefix every emulated host's address is in (`10.241.0.0/16`, inside the hosts'
/// namespaces only: the emulator never touches the host's own addresses or routes).
pub const PREFIX: [u8; 2] = [10, 241];

/// The address of emulated host number `i`.
pub fn host_addr(i: usize) -> Ipv4Addr {
    let n = i as u32 + 1;
    Ipv4Addr::new(PREFIX[0], PREFIX[1], (n >> 8) as u8, n as u8)
}

/// Sets up the calling thread's namespace as host `label` with address `addr` on
/// [`HOST_DEVICE`]: IPv6 off, then `device` (the `ip` commands that make the device and bring it
/// up), the loopback up, the address, and the route of the emulated prefix into the device.
pub(crate) fn configure_host_here(
    label: &str,
    device: &str,
    addr: Ipv4Addr,
) -> Result<(), EmuError> {
    netns::disable_ipv6_here();
    let [a, b] = PREFIX;
    netns::ip_batch_here(
        label,
        &format!(
            "{device}link set lo up\n\
             addr add {addr}/32 dev {HOST_DEVICE}\n\
             route add {a}.{b}.0.0/16 dev {HOST_DEVICE} src {addr}\n"
        ),
    )
}

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
    /// Every kind, the default first.
    pub const ALL: [Self; 2] = [Self::Veth, Self::Tun];

    /// The kind named `name` (one of [`DeviceKind::ALL`]'s names).
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                let names: Vec<String> = Self::ALL
                    .iter()
                    .map(|k| format!("\"{}\"", k.name()))
                    .collect();
                format!("no device kind `{name}`: expected {}", names.join(" or "))
            })
    }

    /// Its name, as [`DeviceKind::parse`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Veth => "veth",
            Self::Tun => "tun",
        }
    }
}

/// What the hosts' devices of one emulation share: the emulator's namespace of the veth pairs'
/// far ends, when they are veth pairs.
#[derive(Debug)]
pub struct DeviceSetup {
    switch: Option<Switch>,
    kind: DeviceKind,
}

impl DeviceSetup {
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
        addr: Ipv4Addr,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_read_back_by_its_name_and_the_default_comes_first() {
        for k in DeviceKind::ALL {
            assert_eq!(DeviceKind::parse(k.name()), Ok(k));
        }
        assert_eq!(DeviceKind::ALL[0], DeviceKind::default());
        let err = DeviceKind::parse("tap").unwrap_err();
        assert!(err.contains("\"veth\" or \"tun\""), "{err}");
    }
}
