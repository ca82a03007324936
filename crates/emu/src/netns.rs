//! Network namespaces, one per emulated host, held by file descriptor only.
//!
//! A namespace is made on a short-lived thread (`unshare(CLONE_NEWNET)`), which opens its
//! `/proc/thread-self/ns/net` and exits; the [`Namespace`] keeps that descriptor and nothing
//! else: no name under `/run/netns`, no bind mount. The kernel frees a namespace, with every
//! device, address, route and sysctl in it, when the last descriptor, socket and thread that
//! refer to it are gone, so no way the emulator's process can end (an error, Ctrl-C, SIGTERM,
//! SIGKILL, a crash) leaves one behind. Work inside a namespace is done by a thread that
//! enters it ([`Namespace::run`]); a command started from that thread runs inside too.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Command, Stdio};

use rustix::thread::{LinkNameSpaceType, move_into_link_name_space};

use crate::EmuError;
use crate::sys;

/// A network namespace, alive while this value (or a socket or thread in it) is.
#[derive(Debug)]
pub struct Namespace {
    fd: OwnedFd,
    /// What it is for, in messages (the scenario host's name).
    pub label: String,
}

impl Namespace {
    /// A new, empty namespace (only a loopback device, down).
    pub fn create(label: &str) -> Result<Self, EmuError> {
        let made = std::thread::spawn(|| -> std::io::Result<OwnedFd> {
            sys::unshare_net()?;
            Ok(File::open("/proc/thread-self/ns/net")?.into())
        })
        .join()
        .map_err(|_| EmuError::setup("create a network namespace", "the thread panicked"))?;
        let fd = made.map_err(|e| EmuError::setup("create a network namespace", e))?;
        Ok(Self {
            fd,
            label: label.to_string(),
        })
    }

    /// A path naming the namespace to other processes while this value lives (for `ip`'s
    /// `netns` argument): the descriptor under `/proc`, no name in `/run/netns`.
    pub fn path(&self) -> String {
        use std::os::fd::AsRawFd;
        format!("/proc/{}/fd/{}", std::process::id(), self.fd.as_raw_fd())
    }

    /// Moves the calling thread into the namespace (for good: use a thread of its own).
    pub fn enter(&self) -> std::io::Result<()> {
        move_into_link_name_space(self.fd.as_fd(), Some(LinkNameSpaceType::Network))
            .map_err(std::io::Error::from)
    }

    /// Runs `f` on a thread inside the namespace and returns what it returns.
    pub fn run<T: Send>(
        &self,
        f: impl FnOnce() -> Result<T, EmuError> + Send,
    ) -> Result<T, EmuError> {
        std::thread::scope(|s| {
            s.spawn(|| {
                self.enter().map_err(|e| {
                    EmuError::setup(format!("enter the namespace of `{}`", self.label), e)
                })?;
                f()
            })
            .join()
            .unwrap_or_else(|_| {
                Err(EmuError::setup(
                    format!("work in the namespace of `{}`", self.label),
                    "the thread panicked",
                ))
            })
        })
    }

    /// Runs `ip -batch -` inside the namespace with `commands`, one per line.
    pub fn ip_batch(&self, commands: &str) -> Result<(), EmuError> {
        let label = self.label.clone();
        self.run(move || ip_batch_here(&label, commands))
    }

    /// Sets the sysctl `key` (dotted, e.g. `net.ipv4.tcp_sack`) of the namespace to `value`.
    pub fn sysctl(&self, key: &str, value: &str) -> Result<(), EmuError> {
        self.run(|| write_sysctl_here(key, value))
    }

    /// Reads the sysctl `key` of the namespace.
    pub fn read_sysctl(&self, key: &str) -> Result<String, EmuError> {
        self.run(|| {
            let path = sysctl_path(key);
            std::fs::read_to_string(&path)
                .map(|s| s.trim().to_string())
                .map_err(|e| EmuError::setup(format!("read {key}"), e))
        })
    }
}

fn sysctl_path(key: &str) -> String {
    format!("/proc/sys/{}", key.replace('.', "/"))
}

/// Writes a sysctl of the calling thread's namespace.
pub(crate) fn write_sysctl_here(key: &str, value: &str) -> Result<(), EmuError> {
    std::fs::write(sysctl_path(key), value)
        .map_err(|e| EmuError::setup(format!("set {key} = {value} in a host's namespace"), e))
}

/// Turns IPv6 off in the calling thread's namespace, for the devices there and those made
/// later (no router solicitations or duplicate-address probes through the emulator). Where IPv6
/// is not built in, there is nothing to turn off.
pub(crate) fn disable_ipv6_here() {
    for key in [
        "net.ipv6.conf.all.disable_ipv6",
        "net.ipv6.conf.default.disable_ipv6",
    ] {
        let _ = write_sysctl_here(key, "1");
    }
}

/// Runs `ip -batch -` in the calling thread's namespace.
pub(crate) fn ip_batch_here(label: &str, commands: &str) -> Result<(), EmuError> {
    let step = || format!("configure the namespace of `{label}` with `ip`");
    let mut child = Command::new("ip")
        .args(["-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| EmuError::setup(step(), e))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(commands.as_bytes())
            .map_err(|e| EmuError::setup(step(), e))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| EmuError::setup(step(), e))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(EmuError::setup(
            step(),
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ))
    }
}
