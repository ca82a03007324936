//! The emulator (`emu`): a scenario run in real time, with real packets, through the
//! simulator's own links.
//!
//! Each scenario host a flow starts or ends at is a network namespace of its own with a device
//! into the emulator: a veth pair whose far end the emulator reads with `AF_PACKET` (the
//! default; each packet stamped by the kernel as it leaves its host) or a TUN device. The
//! hosts' packets come out of their devices into the emulator, cross the scenario's links
//! (routers stay inside the emulator) and go into the destination host's device when the link
//! model says they arrive. The links are the `fairstream-net` elements the
//! simulator runs (every queue discipline but ERICA, the loss models, capacity schedules), on
//! logical time, so that a late wake-up delays no packet behind it; each packet's intended and
//! actual hand-over are compared ([`forward`], `emu.json`). The flows are the protocols' own
//! endpoints through the real-time driver (`fairstream-rt`), the scenario's CBR source, or the
//! kernel's TCP (`protocol = "linux-tcp"`, [`flows::linux_tcp`]).
//!
//! - [`plan`]: what to emulate, from a checked scenario;
//! - [`netns`]: namespaces held by descriptor only;
//! - [`device`], [`veth`], [`tun`]: the hosts' devices, either kind behind one type;
//! - `stamp`: the kernel's packet stamps on the emulation's clock;
//! - [`link`], [`forward`]: an emulated link and the forwarder (sans-IO [`forward::Core`] and
//!   its I/O loop);
//! - [`flows`]: the flows' ends; [`record`]: the results (and the run record types, in one place);
//! - [`run`]: one emulation from set-up to teardown ([`emulate`], [`preflight`]);
//! - `sys`: the system calls without a safe wrapper (the only `unsafe` of the workspace).
//!
//! Nothing outlives the emulation: namespaces exist only while their descriptors are held, so
//! the kernel removes them, with their devices and sysctls, however the process ends; nothing is
//! created in the host's own namespace, whose routes and addresses are never touched.

pub mod device;
pub mod error;
pub mod flows;
pub mod forward;
pub mod link;
pub mod netns;
pub mod plan;
pub mod record;
pub mod run;
mod stamp;
mod sys;
pub mod tun;
pub mod veth;

pub use device::DeviceKind;
pub use error::EmuError;
pub use forward::EmuLive;
pub use run::{EmuOptions, EmuReport, emulate, emulate_with, preflight, preflight_with};
